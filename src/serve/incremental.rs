//! Rebuilding after a change, doing again only what the change reaches.
//!
//! A [`Session`] keeps what the last full build loaded, checked and
//! rendered. When the watcher reports that only the bodies of existing
//! pages changed (their front matter, and so their title, place, weight,
//! base and description, are the same), it takes the fast path: it reads
//! those pages again, renders their Markdown, checks them again, checks
//! again the links of the pages that link into them, renders the pages
//! that show them (the page, its untranslated copies and its translations,
//! whose language switcher lists its headings), and makes the search index
//! of a language again only when the words of its sections changed (on
//! first request). Anything else (a new or removed file, front matter, an
//! asset, a base, a template, site.yaml, the image data) is a full build.
//!
//! The fast path gives the same files and the same findings as a full
//! build of the same inputs (`tests/integration/incremental.rs` holds it
//! to that).

use crate::check::{self, PageFindings, PageMemo};
use crate::diagnostics::Diagnostic;
use crate::load;
use crate::pipeline::{Outcome, Summary};
use crate::render::{self, links::LinkIndex, links::Target, markdown::Document, OutFile};
use crate::site::{Page, Site};
use bytes::Bytes;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// The bytes of one file of the site: ready, or made when first asked for
/// (a search index after a page edit: only a reader who searches needs it).
#[derive(Clone)]
pub enum Body {
    Ready(Bytes),
    Search(Arc<LazySearch>),
}

impl Body {
    /// The bytes, made now when they were not yet.
    pub fn bytes(&self) -> Bytes {
        match self {
            Body::Ready(b) => b.clone(),
            Body::Search(s) => s.bytes(),
        }
    }

    /// Whether [`Body::bytes`] returns at once.
    pub fn is_ready(&self) -> bool {
        match self {
            Body::Ready(_) => true,
            Body::Search(s) => s.bytes.get().is_some(),
        }
    }
}

/// A language's search index, made on first use from the documents of a
/// build, which it keeps.
pub struct LazySearch {
    prefix: String,
    lang: String,
    /// Title, URL and document of each page, in reading order.
    pages: Vec<(String, String, Arc<Document>)>,
    bytes: OnceLock<Bytes>,
}

impl LazySearch {
    fn bytes(&self) -> Bytes {
        self.bytes
            .get_or_init(|| {
                let entries: Vec<render::search::Entry> = self
                    .pages
                    .iter()
                    .map(|(title, url, doc)| render::search::Entry { title, url, doc })
                    .collect();
                Bytes::from(render::search::index_of(&self.prefix, &self.lang, &entries))
            })
            .clone()
    }
}

/// How a rebuild went.
pub struct Rebuild {
    pub outcome: Outcome,
    pub output: Output,
    /// Whether it took the fast path.
    pub fast: bool,
    /// Pages rendered through their template (a full build: those not
    /// taken from the cache).
    pub rendered: usize,
}

/// What a rebuild gives to serve.
pub enum Output {
    /// It found errors (see the outcome): nothing to serve.
    Failed,
    /// Every file of the site.
    Full(Vec<OutFile>),
    /// The files that may have changed since the last good build (a
    /// fast-path rebuild neither adds nor removes files).
    Changed(Vec<(String, Body)>),
}

/// What a project's builds keep for the next one.
pub struct Session {
    root: PathBuf,
    /// Pages and documents of earlier full builds, by content.
    cache: render::PageCache,
    state: Option<State>,
}

/// The last build's site, documents and findings, and its files.
struct State {
    site: Site,
    docs: Vec<Arc<Document>>,
    /// Every path the site publishes, to resolve links against.
    paths: BTreeSet<String>,
    tera: Option<tera::Tera>,
    /// Findings about the project as a whole, before exceptions: loading,
    /// output conflicts and the site-wide checks.
    site_findings: Vec<Diagnostic>,
    /// Template errors, which exceptions do not apply to.
    template_errors: Vec<Diagnostic>,
    /// By page: unknown variables (an original's include those of its
    /// untranslated copies) and the findings of the checks.
    pages: Vec<PageState>,
    /// By page: the pages whose links point into it with an anchor.
    inbound: Vec<BTreeSet<usize>>,
    /// By page: the pages its links point into with an anchor.
    outbound: Vec<Vec<usize>>,
    memo: PageMemo,
    /// Source file (relative to the root) → the pages made from it: the
    /// original first, then its untranslated copies.
    by_source: HashMap<PathBuf, Vec<usize>>,
    /// Path below `content/<lang>/` → the pages at it, in every language.
    by_rel: HashMap<String, Vec<usize>>,
    /// Each language's pages in reading order.
    orders: BTreeMap<String, Vec<usize>>,
    /// The files of the last good build of this state, when there is one.
    files: Option<Files>,
}

#[derive(Default)]
struct PageState {
    variables: Vec<Diagnostic>,
    checks: PageFindings,
}

struct Files {
    by_path: HashMap<String, Body>,
    /// Pages whose documents changed while the build failed: rendered
    /// again when it passes.
    stale_pages: BTreeSet<usize>,
    /// Languages whose search index must be made again, for the same reason.
    stale_languages: BTreeSet<String>,
}

impl Session {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Session {
            root: root.into(),
            cache: render::PageCache::default(),
            state: None,
        }
    }

    /// How many pages the last full build took from the cache.
    pub fn cache_hits(&self) -> usize {
        self.cache.hits
    }

    /// Every file of the last good build (bytes made now where they were
    /// not yet), sorted by path; `None` when no build has passed since the
    /// last full build.
    pub fn files(&self) -> Option<Vec<OutFile>> {
        let files = self.state.as_ref()?.files.as_ref()?;
        let mut out: Vec<OutFile> = files
            .by_path
            .iter()
            .map(|(path, body)| OutFile::new(path.clone(), body.bytes()))
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Some(out)
    }

    /// Builds again. `changed` lists the input files whose bytes changed
    /// (or that appeared or went away) since the last call; `None` when
    /// that is not known, which builds everything again.
    pub fn rebuild(&mut self, changed: Option<&[PathBuf]>) -> Rebuild {
        if let Some(paths) = changed {
            if let Some(r) = self.fast(paths) {
                return r;
            }
        }
        self.full()
    }

    /// Loads, checks and renders everything, as [`crate::pipeline`] does,
    /// keeping what the fast path needs.
    fn full(&mut self) -> Rebuild {
        self.state = None;
        let loaded = load::load(&self.root);
        let mut site_findings = loaded.diagnostics;
        let Some(mut site) = loaded.site else {
            return failed(site_findings, false);
        };
        site_findings.extend(crate::signing::attach(&mut site, None));
        let (paths, conflicts) = render::published_paths(&site);
        site_findings.extend(conflicts);
        let index = LinkIndex::new(&site, &paths);
        let (docs, problems) = render::documents_cached(&site, &index, Some(&mut self.cache));
        let mut memo = PageMemo::default();
        let findings = check::run_split_with(&site, &docs, &index, &mut memo);
        let (tera, template_errors) = match render::templates::engine(&site) {
            Ok(t) => (Some(t), Vec::new()),
            Err(errors) => (None, errors),
        };

        let mut by_source: HashMap<PathBuf, Vec<usize>> = HashMap::new();
        let mut by_rel: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, p) in site.pages.iter().enumerate() {
            // Originals come before their copies in `site.pages`.
            by_source.entry(p.source.clone()).or_default().push(i);
            by_rel.entry(p.rel.clone()).or_default().push(i);
        }
        let mut pages: Vec<PageState> = findings
            .pages
            .into_iter()
            .map(|checks| PageState {
                variables: Vec::new(),
                checks,
            })
            .collect();
        pages.resize_with(site.pages.len(), PageState::default);
        for d in problems {
            let original = d
                .location
                .as_ref()
                .and_then(|l| by_source.get(&l.file))
                .and_then(|group| group.first().copied());
            match original.and_then(|i| pages.get_mut(i)) {
                Some(p) => p.variables.push(d),
                None => site_findings.push(d),
            }
        }
        let outbound: Vec<Vec<usize>> = site
            .pages
            .par_iter()
            .zip(&docs)
            .map(|(page, doc)| anchored_targets(&index, page, doc))
            .collect();
        let mut inbound = vec![BTreeSet::new(); site.pages.len()];
        for (from, targets) in outbound.iter().enumerate() {
            for &t in targets {
                if let Some(set) = inbound.get_mut(t) {
                    set.insert(from);
                }
            }
        }
        let orders = render::reading_orders(&site);
        drop(index);

        let mut state = State {
            docs: Vec::new(),
            paths,
            tera,
            site_findings,
            template_errors,
            pages,
            inbound,
            outbound,
            memo,
            by_source,
            by_rel,
            orders,
            files: None,
            site,
        };
        let mut diagnostics = state.diagnostics();
        let files = if diagnostics.iter().any(Diagnostic::is_error) {
            None
        } else {
            state.render_all(&docs, &mut self.cache, &mut diagnostics)
        };
        state.docs = docs.into_iter().map(Arc::new).collect();
        let rebuild = match files {
            Some(files) => {
                let summary = state.summary(files.len());
                state.files = Some(Files {
                    by_path: files
                        .iter()
                        .map(|f| (f.path.clone(), Body::Ready(f.bytes.clone())))
                        .collect(),
                    stale_pages: BTreeSet::new(),
                    stale_languages: BTreeSet::new(),
                });
                Rebuild {
                    outcome: outcome(diagnostics, Some(summary)),
                    output: Output::Full(files),
                    fast: false,
                    rendered: state.site.pages.len().saturating_sub(self.cache.hits),
                }
            }
            None => failed(diagnostics, false),
        };
        self.state = Some(state);
        rebuild
    }

    /// The fast path, when every changed file is the body of a page of
    /// the last build; `None` when a full build is needed.
    fn fast(&mut self, changed: &[PathBuf]) -> Option<Rebuild> {
        let state = self.state.as_mut()?;
        state.files.as_ref()?;
        // Every check first, so that nothing changes unless all pass.
        let mut edits: Vec<(usize, String)> = Vec::new();
        for path in changed {
            // A page of the last build (its source is below content/).
            let source = path.strip_prefix(&self.root).ok()?;
            let &original = state.by_source.get(source)?.first()?;
            let old = state.site.pages.get(original)?;
            if old.fallback_from.is_some() {
                return None;
            }
            // A symbolic link is not followed: a full build reports it.
            if !std::fs::symlink_metadata(path).ok()?.file_type().is_file() {
                return None;
            }
            let new = load::page(&self.root, &old.lang, path).ok()?;
            if !same_place(old, &new) {
                return None;
            }
            if new.body != old.body && !edits.iter().any(|(i, _)| *i == original) {
                edits.push((original, new.body));
            }
        }
        let rebuild = state.apply(&edits);
        Some(rebuild)
    }
}

impl State {
    /// Every finding, as a full build reports them.
    fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut all = self.site_findings.clone();
        for p in &self.pages {
            all.extend(p.variables.iter().cloned());
            all.extend(p.checks.links.iter().cloned());
            all.extend(p.checks.own.iter().cloned());
        }
        let mut all = check::apply_exceptions(&self.site.config, all);
        all.extend(self.template_errors.iter().cloned());
        all
    }

    fn summary(&self, files: usize) -> Summary {
        Summary {
            pages: self.site.pages.len(),
            languages: self.site.config.languages.len(),
            versions: self.site.bases.iter().map(|b| b.folder()).collect(),
            files,
        }
    }

    /// Renders the whole site, as `pipeline::render_site` does once the
    /// checks pass; render errors go to `diagnostics`.
    fn render_all(
        &self,
        docs: &[Document],
        cache: &mut render::PageCache,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Option<Vec<OutFile>> {
        let tera = self.tera.as_ref()?;
        let lastmod = match render::sitemap::source_date_from_env() {
            Ok(date) => date,
            Err(d) => {
                diagnostics.push(d);
                return None;
            }
        };
        match render::site(&self.site, docs, tera, lastmod.as_deref(), Some(cache)) {
            Ok(files) => Some(files),
            Err(errors) => {
                diagnostics.extend(errors);
                None
            }
        }
    }

    /// Puts the new bodies of pages in place (`(page, body)`, originals
    /// only) and does again what they reach.
    fn apply(&mut self, edits: &[(usize, String)]) -> Rebuild {
        // The pages that change: each original and its untranslated copies.
        let mut affected: Vec<usize> = Vec::new();
        for (original, body) in edits {
            let Some(source) = self.site.pages.get(*original).map(|p| p.source.clone()) else {
                continue;
            };
            for &j in self.by_source.get(&source).map_or(&[][..], Vec::as_slice) {
                if let Some(p) = self.site.pages.get_mut(j) {
                    p.body.clone_from(body);
                    affected.push(j);
                }
            }
        }
        let index = LinkIndex::new(&self.site, &self.paths);
        let rendered: Vec<(usize, Document, Vec<Diagnostic>)> = affected
            .par_iter()
            .map(|&j| {
                let (doc, problems) = render::document(&self.site, &index, &self.site.pages[j]);
                (j, doc, problems)
            })
            .collect();

        // Search indexes: only where the words of a section changed.
        let mut languages: BTreeSet<String> = BTreeSet::new();
        for (j, doc, _) in &rendered {
            let page = &self.site.pages[*j];
            let before = render::search::page_sections(&page.lang, &page.title, &self.docs[*j]);
            let after = render::search::page_sections(&page.lang, &page.title, doc);
            if before != after {
                languages.insert(page.lang.clone());
            }
        }
        // Unknown variables, kept with the original.
        for (original, _) in edits {
            if let Some(p) = self.pages.get_mut(*original) {
                p.variables.clear();
            }
        }
        for (j, doc, problems) in rendered {
            let original = self
                .by_source
                .get(&self.site.pages[j].source)
                .and_then(|g| g.first().copied())
                .unwrap_or(j);
            if let Some(p) = self.pages.get_mut(original) {
                p.variables.extend(problems);
            }
            self.docs[j] = Arc::new(doc);
        }

        // Links out of the edited pages, and into every changed page.
        for (original, _) in edits {
            let i = *original;
            for t in std::mem::take(&mut self.outbound[i]) {
                if let Some(set) = self.inbound.get_mut(t) {
                    set.remove(&i);
                }
            }
            let targets = anchored_targets(&index, &self.site.pages[i], &self.docs[i]);
            for &t in &targets {
                if let Some(set) = self.inbound.get_mut(t) {
                    set.insert(i);
                }
            }
            self.outbound[i] = targets;
        }
        let mut linking: BTreeSet<usize> = edits.iter().map(|(i, _)| *i).collect();
        for &j in &affected {
            linking.extend(self.inbound.get(j).into_iter().flatten().copied());
        }
        let links: Vec<(usize, Vec<Diagnostic>)> = linking
            .par_iter()
            .map(|&q| (q, check::page_links(&self.site, &self.docs, &index, q)))
            .collect();
        for (q, found) in links {
            self.pages[q].checks.links = found;
        }
        for (original, _) in edits {
            let i = *original;
            let own = check::page_own(
                &self.site,
                &self.site.pages[i],
                &self.docs[i],
                &mut self.memo,
            );
            self.pages[i].checks.own = own;
        }
        drop(index);

        // The pages that show a changed document: at the same path in
        // every language (translations list each other's headings).
        let mut show: BTreeSet<usize> = BTreeSet::new();
        for &j in &affected {
            let rel = &self.site.pages[j].rel;
            show.extend(self.by_rel.get(rel).into_iter().flatten().copied());
        }
        let diagnostics = self.diagnostics();
        let summary = self.summary(self.files.as_ref().map_or(0, |f| f.by_path.len()));
        let Some(files) = self.files.as_mut() else {
            return failed(diagnostics, true);
        };
        files.stale_pages.extend(show);
        files.stale_languages.extend(languages);
        if diagnostics.iter().any(Diagnostic::is_error) {
            return failed(diagnostics, true);
        }
        let which: Vec<usize> = files.stale_pages.iter().copied().collect();
        let Some(tera) = self.tera.as_ref() else {
            return failed(diagnostics, true);
        };
        let pages = match render::pages(&self.site, &self.docs, tera, &which) {
            Ok(p) => p,
            Err(errors) => {
                let mut diagnostics = diagnostics;
                diagnostics.extend(errors);
                return failed(diagnostics, true);
            }
        };
        let mut changed: Vec<(String, Body)> = pages
            .into_iter()
            .map(|f| (f.path, Body::Ready(f.bytes)))
            .collect();
        let prefix = self.site.config.path_prefix();
        for lang in &files.stale_languages {
            let order = self.orders.get(lang).map_or(&[][..], Vec::as_slice);
            let pages = order
                .iter()
                .map(|&i| {
                    let p = &self.site.pages[i];
                    (p.title.clone(), p.url.clone(), Arc::clone(&self.docs[i]))
                })
                .collect();
            let lazy = LazySearch {
                prefix: prefix.clone(),
                lang: lang.clone(),
                pages,
                bytes: OnceLock::new(),
            };
            changed.push((
                render::search::index_path(lang),
                Body::Search(Arc::new(lazy)),
            ));
        }
        for (path, body) in &changed {
            files.by_path.insert(path.clone(), body.clone());
        }
        let rendered = which.len();
        files.stale_pages.clear();
        files.stale_languages.clear();
        Rebuild {
            outcome: outcome(diagnostics, Some(summary)),
            output: Output::Changed(changed),
            fast: true,
            rendered,
        }
    }
}

/// Whether a page read again has everything but its body as before: its
/// front matter, its place and the line its body starts at.
fn same_place(old: &Page, new: &Page) -> bool {
    old.lang == new.lang
        && old.rel == new.rel
        && old.source == new.source
        && old.url == new.url
        && old.title == new.title
        && old.weight == new.weight
        && old.description == new.description
        && old.base == new.base
        && old.base_line == new.base_line
        && old.body_line == new.body_line
        && old.fallback_from == new.fallback_from
}

/// The pages a page's links point into with an anchor (whose findings
/// depend on those pages' headings).
fn anchored_targets(index: &LinkIndex, page: &Page, doc: &Document) -> Vec<usize> {
    if page.fallback_from.is_some() {
        return Vec::new();
    }
    let mut out: Vec<usize> = doc
        .links
        .iter()
        .filter_map(|l| match index.resolve(page, &l.dest) {
            Target::Internal {
                anchor: Some(_),
                page: Some(t),
                ..
            } => Some(t),
            _ => None,
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A rebuild that found errors.
fn failed(diagnostics: Vec<Diagnostic>, fast: bool) -> Rebuild {
    Rebuild {
        outcome: outcome(diagnostics, None),
        output: Output::Failed,
        fast,
        rendered: 0,
    }
}

/// The outcome of a build with these findings, sorted as `pipeline` sorts
/// them.
fn outcome(diagnostics: Vec<Diagnostic>, written: Option<Summary>) -> Outcome {
    Outcome::new(diagnostics, written)
}
