//! The engine held in memory, for a program that builds the same project
//! again and again (`basepress serve`).
//!
//! A [`Session`] keeps what the last build loaded, analysed, checked and
//! rendered. When the changed files are pages of the last build read again
//! at the same place (same language, docs version and URL; their body or
//! front matter changed), a rebuild runs the per-page steps of the same
//! stages on what the edit reaches: it reads those pages again, analyses
//! them (and their untranslated copies), runs the page checks again on
//! them and on the pages that link into them with an anchor, renders the
//! pages that show them (the page, its untranslated copies and its
//! translations, whose language switcher lists its headings), and makes
//! the search bundle of a docs version in a language again only when the
//! words of its sections changed (on first request). After a front matter edit (a
//! title, weight or description), the pages of the same version and
//! language whose template input outside their own Markdown (their
//! *frame*: sidebar, pager, breadcrumbs…) changed are rendered too, and
//! the search bundle of that version and language is made again. Anything else (a new or
//! removed file, a page that moved, an asset, a base, a template,
//! site.yaml, the image data) runs every stage again, with the render
//! cache.
//!
//! Both paths give the same files and the same findings as a build of the
//! same inputs (`tests/integration/incremental.rs` holds them to that).
//! With [`Options::preview`](super::Options::preview), a project whose
//! checks found errors is rendered too, by either path: what a writer
//! previews while a link is still broken.

use super::{load_and_check, Checked, Options, Outcome, Timings};
use crate::analyze::{anchors, links::Target, Analysis};
use crate::check::{self, Tools};
use crate::diagnostics::Diagnostic;
use crate::load;
use crate::model::document::{Document, Headings};
use crate::model::packed::{self, Packed};
use crate::model::site::Page;
use crate::render::{self, highlight::Highlighter, OutFile, PageCache, Renderer};
use bytes::Bytes;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// What one site path holds: a file's bytes, a page's bytes packed, or
/// (at the search folder of a docs version in a language, below
/// [`SEARCH_DIR`]) that whole search bundle, made when first asked for
/// (only a reader who searches needs it).
#[derive(Clone)]
pub enum Body {
    Ready(Bytes),
    Packed(Packed),
    Search(Arc<LazySearch>),
}

/// The folder of the search bundles: a rebuild gives the bundle of a docs
/// version in a language under its folder below this one, replacing every
/// file there.
pub const SEARCH_DIR: &str = crate::model::layout::SEARCH_DIR;

impl Body {
    /// A rendered file as kept in memory: packed when the renderer packed
    /// it.
    pub fn of(file: OutFile) -> Body {
        match file.packed {
            Some(p) => Body::Packed(p),
            None => Body::Ready(file.bytes),
        }
    }

    /// The bytes of a file (unpacked: a new buffer each time); a search
    /// bundle has none of its own (see [`LazySearch::files`]).
    pub fn bytes(&self) -> Bytes {
        match self {
            Body::Ready(b) => b.clone(),
            Body::Packed(p) => p.unpack(),
            Body::Search(_) => Bytes::new(),
        }
    }

    /// Whether the bytes are there without more work.
    pub fn is_ready(&self) -> bool {
        match self {
            Body::Ready(_) | Body::Packed(_) => true,
            Body::Search(s) => s.is_ready(),
        }
    }

    /// Whether both hold the same bytes (a search bundle never does: it
    /// is made again from what changed).
    pub fn same(&self, other: &Body) -> bool {
        match (self, other) {
            (Body::Ready(a), Body::Ready(b)) => packed::same_bytes(a, b),
            (Body::Packed(a), Body::Packed(b)) => a.same(b),
            (Body::Ready(a), Body::Packed(p)) | (Body::Packed(p), Body::Ready(a)) => {
                p.len() == a.len() && p.unpack() == a
            }
            _ => false,
        }
    }
}

/// The search bundle of a docs version in one language, made on first use
/// from the documents of a build, which it keeps.
pub struct LazySearch {
    /// Its folder (`/search/next/es/`).
    pub dir: String,
    lang: String,
    /// Title, URL and document of each page, in the order a build indexes
    /// them.
    pages: Vec<(String, String, Arc<Document>)>,
    files: OnceLock<BTreeMap<String, Bytes>>,
}

impl LazySearch {
    /// The bundle of docs version `v` in `lang`, from its pages in
    /// reading order (`orders`) as `analysis` holds them now.
    fn new(
        analysis: &Analysis,
        orders: &BTreeMap<(usize, String), Vec<usize>>,
        v: usize,
        lang: &str,
    ) -> Self {
        let site = &analysis.site;
        let pages = orders
            .get(&(v, lang.to_string()))
            .into_iter()
            .flatten()
            .map(|&i| {
                let p = &site.pages[i];
                (
                    p.title.clone(),
                    p.url.clone(),
                    Arc::clone(&analysis.docs[i]),
                )
            })
            .collect();
        LazySearch {
            dir: crate::model::layout::search_bundle_dir(site, v, lang),
            lang: lang.to_string(),
            pages,
            files: OnceLock::new(),
        }
    }

    /// The files of the bundle by site path (`/search/next/es/index.json`),
    /// made now when they were not yet.
    pub fn files(&self) -> &BTreeMap<String, Bytes> {
        self.files.get_or_init(|| {
            let entries: Vec<render::search::Entry> = self
                .pages
                .iter()
                .map(|(title, url, doc)| render::search::Entry {
                    title,
                    url,
                    lang: &self.lang,
                    doc,
                })
                .collect();
            render::search::bundle(&self.dir, &entries)
                .into_iter()
                .map(|f| (f.path, f.bytes))
                .collect()
        })
    }

    pub fn is_ready(&self) -> bool {
        self.files.get().is_some()
    }

    /// Whether `other` makes the same bundle: the same folder, and the
    /// same title, URL, headings and sections of each page, in the same
    /// order (all a bundle reads).
    pub fn same_input(&self, other: &LazySearch) -> bool {
        self.dir == other.dir
            && self.pages.len() == other.pages.len()
            && self.pages.iter().zip(&other.pages).all(|(a, b)| {
                a.0 == b.0
                    && a.1 == b.1
                    && (Arc::ptr_eq(&a.2, &b.2)
                        || (a.2.headings == b.2.headings && a.2.sections == b.2.sections))
            })
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
    /// Nothing to serve: it found errors (see the outcome) and is no
    /// preview, or they leave nothing to render (see [`super::renders`]).
    Failed,
    /// Every file of the site, by site path (a search bundle by its
    /// folder).
    Full(Vec<(String, Body)>),
    /// The files that may have changed since the last rendered build (a
    /// fast-path rebuild neither adds nor removes files).
    Changed(Vec<(String, Body)>),
}

/// What watches a full build as it renders (`basepress serve` during its
/// first build, answering requests with the pages rendered so far).
pub trait Watch: Sync {
    /// A file the build rendered, at its site path (its checks all
    /// passed; the build may still fail on what it finds in the rendered
    /// files).
    fn rendered(&self, path: &str, body: &Body);
    /// The next page a reader waits for, by file (`/es/install/index.html`):
    /// rendered before the others.
    fn wanted(&self) -> Option<String>;
}

/// What a project's builds keep for the next one.
pub struct Session {
    root: PathBuf,
    options: Options,
    tools: Tools,
    highlighter: Highlighter,
    /// Pages of earlier full builds, by their template input.
    cache: PageCache,
    state: Option<State>,
}

/// The last build's checked project and its files.
struct State {
    checked: Checked,
    /// Each docs version's and language's pages in reading order.
    orders: BTreeMap<(usize, String), Vec<usize>>,
    /// The files of the last rendered build of this state, when there is one.
    files: Option<Files>,
}

struct Files {
    by_path: HashMap<String, Body>,
    /// Pages whose documents changed while the build failed: rendered
    /// again when it passes.
    stale_pages: BTreeSet<usize>,
    /// Pages that may show a page whose front matter changed since they
    /// were rendered: rendered again when their frame changed.
    stale_neighbours: BTreeSet<usize>,
    /// Whether the versions pages, which show the latest version's
    /// sidebar, must be rendered again.
    stale_versions_pages: bool,
    /// The search bundles (by docs version and language) that must be
    /// made again, for the same reason.
    stale_search: BTreeSet<(usize, String)>,
}

impl Session {
    pub fn new(root: impl Into<PathBuf>, options: Options) -> Self {
        Session {
            root: root.into(),
            options,
            tools: Tools::default(),
            highlighter: Highlighter::default(),
            cache: PageCache::default(),
            state: None,
        }
    }

    /// The settings of every build of this session.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The source of each page of the last build (an untranslated copy's
    /// is its original's), by the page's file (`/es/install/index.html`).
    pub fn page_sources(&self) -> Vec<(String, PathBuf)> {
        let Some(state) = &self.state else {
            return Vec::new();
        };
        state
            .checked
            .site()
            .pages
            .iter()
            .map(|p| (crate::model::layout::page_file(p), p.source.clone()))
            .collect()
    }

    /// How many pages the last full build took from the cache.
    pub fn cache_hits(&self) -> usize {
        self.cache.hits
    }

    /// Every file of the last rendered build (bytes made now where they were
    /// not yet), sorted by path; `None` when no build has rendered since the
    /// last full build.
    pub fn files(&self) -> Option<Vec<OutFile>> {
        let files = self.state.as_ref()?.files.as_ref()?;
        let mut out: Vec<OutFile> = Vec::with_capacity(files.by_path.len());
        for (path, body) in &files.by_path {
            match body {
                Body::Ready(_) | Body::Packed(_) => {
                    out.push(OutFile::new(path.clone(), body.bytes()))
                }
                Body::Search(s) => out.extend(
                    s.files()
                        .iter()
                        .map(|(p, b)| OutFile::new(p.clone(), b.clone())),
                ),
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Some(out)
    }

    /// What the last rendered build holds at each site path, as kept in
    /// memory; `None` as for [`Session::files`].
    pub fn bodies(&self) -> Option<Vec<(String, Body)>> {
        let files = self.state.as_ref()?.files.as_ref()?;
        Some(
            files
                .by_path
                .iter()
                .map(|(p, b)| (p.clone(), b.clone()))
                .collect(),
        )
    }

    /// Builds again. `changed` lists the input files whose bytes changed
    /// (or that appeared or went away) since the last call; `None` when
    /// that is not known, which builds everything again.
    pub fn rebuild(&mut self, changed: Option<&[PathBuf]>) -> Rebuild {
        self.rebuild_watched(changed, None)
    }

    /// [`Session::rebuild`], giving a full build's files to `watch` as
    /// they are rendered (once every check passed), before it ends, and
    /// rendering first the pages it asks for: what `basepress serve`
    /// answers with during its first build.
    pub fn rebuild_watched(
        &mut self,
        changed: Option<&[PathBuf]>,
        watch: Option<&dyn Watch>,
    ) -> Rebuild {
        if let Some(paths) = changed {
            if let Some(r) = self.fast(paths) {
                return r;
            }
        }
        self.full(watch)
    }

    /// Runs every stage, as a build does, keeping what the fast path needs.
    fn full(&mut self, watch: Option<&dyn Watch>) -> Rebuild {
        self.state = None;
        let mut timings = Timings::start();
        let checked = match load_and_check(&self.root, &self.options, &self.tools, &mut timings) {
            Ok(c) => c,
            Err(diagnostics) => return failed(diagnostics, false),
        };
        let orders = render::reading_orders(checked.site());
        let mut diagnostics = checked.diagnostics();
        let mut files = None;
        if super::renders(&self.options, &diagnostics) {
            // A preview of a project with errors is shown once complete,
            // with its findings: not page by page as it renders.
            let watch = watch.filter(|_| !diagnostics.iter().any(Diagnostic::is_error));
            let rendered = std::sync::Mutex::new(Vec::new());
            let wanted = watch.map(|w| move || w.wanted());
            // With a cache, pages come packed and the search bundles are
            // left out: each is made on first request.
            let result = super::render(
                &checked,
                &self.options,
                &self.highlighter,
                &self.tools,
                Some(&mut self.cache),
                &|f| {
                    let path = f.path.clone();
                    let body = Body::of(f);
                    if let Some(watch) = watch {
                        watch.rendered(&path, &body);
                    }
                    if let Ok(mut all) = rendered.lock() {
                        all.push((path, body));
                    }
                },
                wanted.as_ref().map(|w| w as &render::Wanted<'_>),
            );
            match result {
                Ok((_, warnings)) => {
                    let mut all = rendered.into_inner().unwrap_or_default();
                    let analysis = &checked.analysis;
                    for (v, lang) in orders
                        .keys()
                        .filter(|(v, _)| analysis.site.version_published(*v))
                    {
                        let search = LazySearch::new(analysis, &orders, *v, lang);
                        all.push((search.dir.clone(), Body::Search(Arc::new(search))));
                    }
                    all.sort_by(|a, b| a.0.cmp(&b.0));
                    files = Some(all);
                    if !warnings.is_empty() {
                        diagnostics.extend(warnings);
                        diagnostics = check::finish(None, diagnostics);
                    }
                }
                Err(errors) => {
                    diagnostics.extend(errors);
                    diagnostics = check::finish(None, diagnostics);
                }
            }
        }
        let mut state = State {
            checked,
            orders,
            files: None,
        };
        let rebuild = match files {
            Some(files) => {
                let summary = state.checked.summary(files.len());
                state.files = Some(Files {
                    by_path: files.iter().cloned().collect(),
                    stale_pages: BTreeSet::new(),
                    stale_neighbours: BTreeSet::new(),
                    stale_versions_pages: false,
                    stale_search: BTreeSet::new(),
                });
                let pages = state.checked.site().pages.len();
                let mut outcome = Outcome::new(diagnostics, timings);
                outcome.written = Some(summary);
                Rebuild {
                    outcome,
                    output: Output::Full(files),
                    fast: false,
                    rendered: pages.saturating_sub(self.cache.hits),
                }
            }
            None => failed(diagnostics, false),
        };
        self.state = Some(state);
        rebuild
    }

    /// The fast path, when every changed file is a page of the last build
    /// read again at the same place (its body or front matter changed, not
    /// its language, version or URL); `None` when every stage must run
    /// again.
    fn fast(&mut self, changed: &[PathBuf]) -> Option<Rebuild> {
        let state = self.state.as_mut()?;
        state.files.as_ref()?;
        let analysis = &state.checked.analysis;
        // Every condition first, so that nothing changes unless all hold.
        let mut edits: Vec<(usize, Page)> = Vec::new();
        for path in changed {
            // A page of the last build (its source is below content/).
            let source = path.strip_prefix(&self.root).ok()?;
            let &original = analysis.graph.by_source.get(source)?.first()?;
            let old = analysis.site.pages.get(original)?;
            if old.fallback_from.is_some() {
                return None;
            }
            // A symbolic link is not followed: a full build reports it.
            if !std::fs::symlink_metadata(path).ok()?.file_type().is_file() {
                return None;
            }
            let mut new =
                load::page(&self.root, &analysis.site, old.version, &old.lang, path).ok()?;
            crate::analyze::expand_page_front_matter(&analysis.site, &mut new);
            if !old.same_place(&new) {
                return None;
            }
            let differs = new.body != old.body || !old.same_front_matter(&new);
            if differs && !edits.iter().any(|(i, _)| *i == original) {
                edits.push((original, new));
            }
        }
        let rebuild = state.apply(
            &edits,
            &mut self.cache.frames,
            &self.options,
            &self.tools,
            &self.highlighter,
        );
        Some(rebuild)
    }
}

impl State {
    /// Puts pages read again in place (`(page, new)`, originals only, at
    /// their place) and runs again the per-page steps of every stage on
    /// what they reach. `frames` holds the frame each page was last
    /// rendered with.
    fn apply(
        &mut self,
        edits: &[(usize, Page)],
        frames: &mut render::Frames,
        options: &Options,
        tools: &Tools,
        highlighter: &Highlighter,
    ) -> Rebuild {
        let checked = &mut self.checked;
        let before: Vec<(usize, Arc<Document>)> = edits
            .iter()
            .filter_map(|(i, _)| Some((*i, Arc::clone(checked.analysis.docs.get(*i)?))))
            .collect();
        // The originals whose front matter changed: other pages show their
        // title, weight and place (sidebars, pagers, breadcrumbs, search).
        let fronts: Vec<PathBuf> = edits
            .iter()
            .filter(|(i, new)| {
                let old = checked.analysis.site.pages.get(*i);
                old.is_some_and(|old| !old.same_front_matter(new))
            })
            .map(|(_, new)| new.source.clone())
            .collect();
        let changed = checked.analysis.replace_pages(edits);
        check::rerun_pages(
            &checked.analysis,
            tools,
            &mut checked.findings,
            &changed.recheck,
        );
        let analysis = &checked.analysis;
        let site = &analysis.site;
        if !fronts.is_empty() {
            self.orders = render::reading_orders(site);
        }

        // A search bundle (of a docs version in a language): when the text
        // of a section of one of its pages changed (copies included), or a
        // page's title or place.
        let mut search_changed: BTreeSet<(usize, String)> = before
            .iter()
            .filter(|(i, old)| {
                let new = &analysis.docs[*i];
                old.sections != new.sections || old.headings != new.headings
            })
            .filter_map(|(i, _)| analysis.graph.by_source.get(&site.pages.get(*i)?.source))
            .flatten()
            .filter_map(|&j| site.pages.get(j))
            .map(|p| (p.version, p.lang.clone()))
            .collect();
        // The pages whose front matter changed, copies included, and the
        // pages that may show them: those of the same docs version and
        // language (rendered again when their frame changed).
        let moved: Vec<usize> = fronts
            .iter()
            .flat_map(|source| analysis.graph.by_source.get(source).into_iter().flatten())
            .copied()
            .collect();
        let trees: BTreeSet<(usize, &str)> = moved
            .iter()
            .filter_map(|&j| site.pages.get(j))
            .map(|p| (p.version, p.lang.as_str()))
            .collect();
        search_changed.extend(trees.iter().map(|(v, lang)| (*v, lang.to_string())));
        let neighbours = site
            .pages
            .iter()
            .enumerate()
            .filter(|(_, p)| trees.contains(&(p.version, p.lang.as_str())))
            .map(|(i, _)| i);
        // The pages that show a changed document: at the same path in
        // every language (translations list each other's headings).
        let mut show: BTreeSet<usize> = BTreeSet::new();
        for &j in &changed.pages {
            let p = &site.pages[j];
            let key = (p.version, p.rel.clone());
            show.extend(
                analysis
                    .graph
                    .by_rel
                    .get(&key)
                    .into_iter()
                    .flatten()
                    .copied(),
            );
        }
        // A link into a page with an anchor publishes the id of the heading
        // it names: the pages with such a link that now names another id.
        for (i, old) in &before {
            let new = &analysis.docs[*i];
            if old.headings == new.headings {
                continue;
            }
            let source = &site.pages[*i].source;
            for &t in analysis.graph.by_source.get(source).into_iter().flatten() {
                for &j in analysis.graph.inbound.get(t).into_iter().flatten() {
                    if names_another_id(analysis, j, t, &old.headings, &new.headings) {
                        // The page, and its untranslated copies in the
                        // other languages, which publish its links.
                        let copies = site
                            .pages
                            .get(j)
                            .and_then(|p| analysis.graph.by_source.get(&p.source));
                        show.insert(j);
                        show.extend(copies.into_iter().flatten().copied());
                    }
                }
            }
        }
        let diagnostics = checked.diagnostics();
        let summary = checked.summary(self.files.as_ref().map_or(0, |f| f.by_path.len()));
        let Some(files) = self.files.as_mut() else {
            return failed(diagnostics, true);
        };
        files.stale_pages.extend(show);
        files.stale_neighbours.extend(neighbours);
        files.stale_search.extend(search_changed);
        files.stale_versions_pages |= !fronts.is_empty();
        if !super::renders(options, &diagnostics) {
            return failed(diagnostics, true);
        }
        let (Ok(tera), Ok(lastmod)) = (checked.templates.as_ref(), super::lastmod(options)) else {
            return failed(diagnostics, true);
        };
        let renderer = Renderer::new(analysis, tera, highlighter, lastmod.as_deref())
            .watched(options.watch.as_deref());
        let render::Rerendered {
            files: mut pages,
            frames: new_frames,
        } = match renderer.pages_changed(&files.stale_pages, &files.stale_neighbours, frames) {
            Ok(p) => p,
            Err(errors) => {
                let mut diagnostics = diagnostics;
                diagnostics.extend(errors);
                return failed(check::finish(None, diagnostics), true);
            }
        };
        let rendered = pages.len();
        // The versions pages show the latest version's sidebar.
        if files.stale_versions_pages {
            match renderer.versions_pages() {
                Ok(p) => pages.extend(p),
                Err(errors) => {
                    let mut diagnostics = diagnostics;
                    diagnostics.extend(errors);
                    return failed(check::finish(None, diagnostics), true);
                }
            }
        }
        // The rendered pages are scanned as a build scans them (the source
        // of each page, for the findings, only when there are some).
        let leaking = pages
            .iter()
            .any(|f| !tools.credentials.scan_file(&f.path, &f.bytes).is_empty());
        let leaks: Vec<Diagnostic> = match leaking {
            false => Vec::new(),
            true => {
                let sources = super::output_sources(site);
                pages
                    .iter()
                    .flat_map(|f| super::scan_output(tools, &sources, f))
                    .collect()
            }
        };
        let mut diagnostics = diagnostics;
        if !leaks.is_empty() {
            let leaks = check::finish(Some(&site.config), leaks);
            let stop = leaks.iter().any(Diagnostic::is_error);
            diagnostics.extend(leaks);
            diagnostics = check::finish(None, diagnostics);
            if stop {
                return failed(diagnostics, true);
            }
        }
        // Pages (the first `rendered` files) are kept packed, as a full
        // build keeps them.
        let mut changed: Vec<(String, Body)> = pages
            .into_iter()
            .enumerate()
            .map(|(n, f)| match n < rendered {
                true => (f.path, Body::Packed(Packed::new(&f.bytes))),
                false => (f.path.clone(), Body::of(f)),
            })
            .collect();
        for (v, lang) in files
            .stale_search
            .iter()
            .filter(|(v, _)| site.version_published(*v))
        {
            let lazy = LazySearch::new(analysis, &self.orders, *v, lang);
            files.by_path.retain(|path, _| !path.starts_with(&lazy.dir));
            changed.push((lazy.dir.clone(), Body::Search(Arc::new(lazy))));
        }
        for (path, body) in &changed {
            files.by_path.insert(path.clone(), body.clone());
        }
        // The frames go with the files: after a failed rebuild, the pages
        // it rendered are still stale.
        frames.resize(site.pages.len(), None);
        for (i, frame) in new_frames {
            if let Some(slot) = frames.get_mut(i) {
                *slot = Some(frame);
            }
        }
        files.stale_pages.clear();
        files.stale_neighbours.clear();
        files.stale_search.clear();
        files.stale_versions_pages = false;
        let mut outcome = Outcome::new(diagnostics, Timings::default());
        outcome.written = Some(summary);
        Rebuild {
            outcome,
            output: Output::Changed(changed),
            fast: true,
            rendered,
        }
    }
}

/// Whether a link of page `from` with an anchor into page `target` names
/// a heading whose published id is not the same among the `new` headings
/// of `target` as among its `old` ones.
fn names_another_id(
    analysis: &Analysis,
    from: usize,
    target: usize,
    old: &Headings,
    new: &Headings,
) -> bool {
    let (Some(page), Some(doc)) = (analysis.site.pages.get(from), analysis.docs.get(from)) else {
        return false;
    };
    doc.links
        .iter()
        .any(|l| match analysis.index.resolve(page, &l.dest) {
            Target::Internal {
                anchor: Some(a),
                page: Some(p),
                ..
            } if p == target => anchors::published_id(old, &a) != anchors::published_id(new, &a),
            _ => false,
        })
}

/// A rebuild that found errors.
fn failed(diagnostics: Vec<Diagnostic>, fast: bool) -> Rebuild {
    Rebuild {
        outcome: Outcome::new(diagnostics, Timings::default()),
        output: Output::Failed,
        fast,
        rendered: 0,
    }
}
