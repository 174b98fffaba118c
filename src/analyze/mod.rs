//! Stage 2: what the loaded project means. Every page's Markdown is read
//! into a [`Document`] (after its `{{ variables }}` are replaced), every
//! path the site will publish is claimed (two inputs at one path are a
//! finding), links are resolved against those paths ([`links`]), and the
//! page graph records which pages link into which, so that a change to one
//! page can be followed to the pages it reaches.
//!
//! The whole-site functions are loops over the per-page ones, which the
//! preview server calls alone after a page edit: one code path.

pub mod anchors;
pub mod bases;
pub mod fingerprint;
pub mod images;
pub mod links;
pub mod markdown;
pub mod signatures;

use crate::diagnostics::{rule, Diagnostic};
use crate::model::document::Document;
use crate::model::layout;
use crate::model::site::{Page, Site};
use crate::model::variables::{uses_variables, Span, Variables};
use links::{LinkIndex, Target};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A project and what the analysis found in it.
pub struct Analysis {
    pub site: Site,
    /// Every published path and page, to resolve links against.
    pub index: LinkIndex,
    /// Each page's document, in `site.pages` order.
    pub docs: Vec<Arc<Document>>,
    /// Findings about the site as a whole: inputs that collide on a
    /// path, the bases' signatures, the bases Kustomize would refuse.
    pub site_findings: Vec<Diagnostic>,
    /// By base, in `site.bases` order: the objects `kubectl kustomize`
    /// builds from it, or `None` when it would refuse the base.
    pub built: Vec<Option<crate::kustomize::Build>>,
    /// By base, in `site.bases` order: the image of its release, when an
    /// image source is set and the image could be read
    /// ([`images::open_all`], which the engine runs after [`analyze`]).
    /// Empty without a source.
    pub images: Vec<Option<Arc<crate::oci::Image>>>,
    /// The image source the images were read from, if any.
    pub image_source: Option<String>,
    /// By page: its unknown variables (an untranslated copy repeats its
    /// original's, at the original's place).
    pub problems: Vec<Vec<Diagnostic>>,
    pub graph: Graph,
    /// By docs version: whether its output is reused from the previous
    /// build (see [`fingerprint`]). Its pages have no document (but those
    /// that other pages link into with an anchor), and no check or render
    /// stage looks at them.
    pub reused: Vec<bool>,
}

/// How the pages hang together.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    /// Source file (relative to the root) → the pages made from it: the
    /// original first, then its untranslated copies.
    pub by_source: HashMap<PathBuf, Vec<usize>>,
    /// Docs version and path below `content/<lang>/` → the pages at it, in
    /// every language.
    pub by_rel: HashMap<(usize, String), Vec<usize>>,
    /// By page: the pages its links point into with an anchor (whose
    /// findings depend on those pages' headings).
    pub outbound: Vec<Vec<usize>>,
    /// By page: the pages whose links point into it with an anchor.
    pub inbound: Vec<BTreeSet<usize>>,
}

/// What changed when some pages' bodies were replaced.
#[derive(Debug, Clone, Default)]
pub struct Changed {
    /// The pages whose documents were made again: each edited original
    /// and its untranslated copies.
    pub pages: Vec<usize>,
    /// The pages whose page checks must run again: the edited originals
    /// and every page linking into a changed one with an anchor.
    pub recheck: BTreeSet<usize>,
}

/// Analyses a loaded project; `signer` signs the bases not released yet.
pub fn analyze(site: Site, signer: Option<&crate::signing::Signer>) -> Analysis {
    analyze_reusing(site, signer, Vec::new())
}

/// [`analyze`], leaving out the pages of the docs versions marked in
/// `reused` (by version index): a build reuses their previous output.
pub fn analyze_reusing(
    mut site: Site,
    signer: Option<&crate::signing::Signer>,
    mut reused: Vec<bool>,
) -> Analysis {
    reused.resize(site.versions.len().max(1), false);
    let skipped = |p: &Page| reused.get(p.version).copied().unwrap_or(false);
    expand_front_matter(&mut site);
    let mut site_findings = signatures::attach(&mut site, signer);
    let (paths, conflicts) = published_paths(&site);
    site_findings.extend(conflicts);
    let (built, refused) = bases::build_all(&site.bases);
    site_findings.extend(refused);
    let index = LinkIndex::new(&site, paths);
    let mut graph = Graph::places(&site);
    // An untranslated copy has its original's document: only originals
    // are read.
    let read: Vec<Option<(Arc<Document>, Vec<Diagnostic>)>> = site
        .pages
        .par_iter()
        .map(|p| {
            (p.fallback_from.is_none() && !skipped(p)).then(|| {
                let (doc, problems) = page(&site, p);
                (Arc::new(doc), problems)
            })
        })
        .collect();
    let mut docs: Vec<Arc<Document>> = Vec::with_capacity(read.len());
    let mut problems = Vec::with_capacity(read.len());
    for (i, r) in read.into_iter().enumerate() {
        let (doc, found) = match r {
            Some(r) => r,
            None => {
                let original = graph.original(&site, i);
                let doc = docs.get(original).cloned().unwrap_or_default();
                (doc, Vec::new())
            }
        };
        docs.push(doc);
        problems.push(found);
    }
    graph.link(&site, &index, &docs);
    // The pages of reused versions that analysed pages link into with an
    // anchor: their headings are needed after all.
    let wanted: BTreeSet<usize> = graph
        .outbound
        .iter()
        .enumerate()
        .filter(|(i, _)| site.pages.get(*i).is_some_and(|p| !skipped(p)))
        .flat_map(|(_, to)| to.iter().copied())
        .map(|t| graph.original(&site, t))
        .filter(|&t| site.pages.get(t).is_some_and(skipped))
        .collect();
    for t in wanted {
        let (doc, _) = page(&site, &site.pages[t]);
        let doc = Arc::new(doc);
        for &copy in graph
            .by_source
            .get(&site.pages[t].source)
            .into_iter()
            .flatten()
        {
            docs[copy] = doc.clone();
        }
    }
    Analysis {
        site,
        index,
        docs,
        site_findings,
        built,
        images: Vec::new(),
        image_source: None,
        problems,
        graph,
        reused,
    }
}

impl Analysis {
    /// Whether page `i` belongs to a docs version whose output is reused.
    pub fn is_reused(&self, i: usize) -> bool {
        self.site
            .pages
            .get(i)
            .and_then(|p| self.reused.get(p.version))
            .copied()
            .unwrap_or(false)
    }
}

impl Analysis {
    /// Every finding of the analysis.
    pub fn findings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.site_findings
            .iter()
            .chain(self.problems.iter().flatten())
    }

    /// Puts pages read again in place of theirs (`(page, new)`, originals
    /// only, each at the same place: see [`Page::same_place`]), with their
    /// untranslated copies, and analyses again what they reach.
    pub fn replace_pages(&mut self, edits: &[(usize, Page)]) -> Changed {
        let mut changed = Changed::default();
        for (original, new) in edits {
            let Some(source) = self.site.pages.get(*original).map(|p| p.source.clone()) else {
                continue;
            };
            changed.recheck.insert(*original);
            for &j in self.graph.by_source.get(&source).into_iter().flatten() {
                if let Some(p) = self.site.pages.get_mut(j) {
                    p.take_contents(new);
                    changed.pages.push(j);
                }
            }
        }
        let redone: Vec<(usize, Document, Vec<Diagnostic>)> = changed
            .recheck
            .par_iter()
            .map(|&i| {
                let (doc, problems) = page(&self.site, &self.site.pages[i]);
                (i, doc, problems)
            })
            .collect();
        for (i, doc, problems) in redone {
            let doc = Arc::new(doc);
            self.problems[i] = problems;
            let source = &self.site.pages[i].source;
            for &j in self.graph.by_source.get(source).into_iter().flatten() {
                self.docs[j] = Arc::clone(&doc);
            }
        }
        for &i in &changed.recheck {
            self.graph
                .relink(i, targets(&self.site, &self.index, i, &self.docs[i]));
        }
        for &j in &changed.pages {
            changed
                .recheck
                .extend(self.graph.inbound.get(j).into_iter().flatten().copied());
        }
        // Its translations, whose code is held to an original's.
        let places: Vec<(usize, String)> = changed
            .pages
            .iter()
            .filter_map(|&j| self.site.pages.get(j))
            .map(|p| (p.version, p.rel.clone()))
            .collect();
        for place in places {
            let at = self.graph.by_rel.get(&place).into_iter().flatten();
            let originals = at.filter(|&&k| {
                self.site
                    .pages
                    .get(k)
                    .is_some_and(|p| p.fallback_from.is_none())
            });
            changed.recheck.extend(originals.copied());
        }
        changed
    }
}

impl Graph {
    /// Where each page is, without its links.
    fn places(site: &Site) -> Self {
        let mut graph = Graph::default();
        for (i, p) in site.pages.iter().enumerate() {
            // Originals come before their copies in `site.pages`.
            graph.by_source.entry(p.source.clone()).or_default().push(i);
            graph
                .by_rel
                .entry((p.version, p.rel.clone()))
                .or_default()
                .push(i);
        }
        graph
    }

    /// Adds every page's links.
    fn link(&mut self, site: &Site, index: &LinkIndex, docs: &[Arc<Document>]) {
        self.outbound = site
            .pages
            .par_iter()
            .enumerate()
            .zip(docs)
            .map(|((i, _), doc)| targets(site, index, i, doc))
            .collect();
        self.inbound = vec![BTreeSet::new(); site.pages.len()];
        for (from, to) in self.outbound.iter().enumerate() {
            for &t in to {
                if let Some(set) = self.inbound.get_mut(t) {
                    set.insert(from);
                }
            }
        }
    }

    /// The original of page `i`: the first page made from its source.
    pub fn original(&self, site: &Site, i: usize) -> usize {
        site.pages
            .get(i)
            .and_then(|p| self.by_source.get(&p.source))
            .and_then(|g| g.first().copied())
            .unwrap_or(i)
    }

    /// Gives page `i` new outbound links.
    fn relink(&mut self, i: usize, to: Vec<usize>) {
        for t in std::mem::take(&mut self.outbound[i]) {
            if let Some(set) = self.inbound.get_mut(t) {
                set.remove(&i);
            }
        }
        for &t in &to {
            if let Some(set) = self.inbound.get_mut(t) {
                set.insert(i);
            }
        }
        self.outbound[i] = to;
    }
}

/// The pages a page's links point into with an anchor, from the page and
/// (for a link relative to its URL) from its untranslated copies, whose
/// links the page's check reads too.
fn targets(site: &Site, index: &LinkIndex, i: usize, doc: &Document) -> Vec<usize> {
    let Some(page) = site.pages.get(i).filter(|p| p.fallback_from.is_none()) else {
        return Vec::new();
    };
    let copies = index.copies_of(site, page);
    let mut out: Vec<usize> = doc
        .links
        .iter()
        .flat_map(|l| {
            let from_copies = if links::is_relative_url(&l.dest) {
                &copies[..]
            } else {
                &[]
            };
            std::iter::once(page)
                .chain(from_copies.iter().copied())
                .filter_map(|from| match index.resolve(from, &l.dest) {
                    Target::Internal {
                        anchor: Some(_),
                        page: Some(t),
                        ..
                    } => Some(t),
                    _ => None,
                })
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// One page's document, and a finding for each unknown variable: the step
/// [`analyze`] takes for every page.
pub fn page(site: &Site, page: &Page) -> (Document, Vec<Diagnostic>) {
    let (expanded, problems) = expand(site, page);
    let (text, spans, complete) = match expanded {
        Expanded::Same => (None, Vec::new(), true),
        Expanded::Whole(text, spans) => (Some(text), spans, true),
        Expanded::Partly(text, spans) => (Some(text), spans, false),
    };
    let mut doc = markdown::analyze(text.as_deref().unwrap_or(&page.body), page.body_line);
    // Values are shorter or longer than `{{ name }}`: a column after one
    // on its line is moved back to where it is written.
    written_columns(&mut doc, &spans, page.body_line);
    if !complete {
        // With an unknown `{{ … }}` left in it, the body is not what would
        // be published: a reference whose definition holds a variable
        // reads as undefined, an example holding it is no example. The
        // unknown variable is the finding to fix first; the examples
        // without one are still checked (an overlay only if all of its
        // files are).
        doc.undefined_references.clear();
        let held = |b: &crate::model::document::CodeBlock| b.code.contains("{{");
        let overlay_held = doc
            .code_blocks
            .iter()
            .any(|b| held(b) && b.attr("file").is_some());
        doc.code_blocks
            .retain(|b| !(held(b) || overlay_held && b.attr("file").is_some()));
    }
    doc.expanded = text.filter(|_| complete);
    (doc, problems)
}

/// A page body after its `{{ variables }}` were replaced.
enum Expanded {
    /// It has none, or they change nothing.
    Same,
    /// Every one replaced, and where.
    Whole(String, Vec<Span>),
    /// The known ones replaced; an unknown one left as written.
    Partly(String, Vec<Span>),
}

/// Moves the columns the analysis of the expanded body found back to the
/// columns of the body as written, line by line (a value never holds a
/// line break, so lines are the same).
fn written_columns(doc: &mut Document, spans: &[Span], body_line: usize) {
    if spans.is_empty() {
        return;
    }
    let on = |line: usize| -> Vec<Span> {
        spans
            .iter()
            .filter(|s| s.line + body_line - 1 == line)
            .copied()
            .collect()
    };
    let fix = |line: usize, column: &mut usize| {
        let here = on(line);
        if !here.is_empty() {
            *column = Span::column_written(&here, *column);
        }
    };
    for l in &mut doc.links {
        fix(l.line, &mut l.column);
    }
    for r in &mut doc.undefined_references {
        fix(r.line, &mut r.column);
    }
    for r in &mut doc.repeated_ids {
        fix(r.line, &mut r.column);
    }
}

/// A page's Markdown with its `{{ variables }}` replaced (and where), when
/// it has any, and a finding for each unknown one, in its body or in its
/// title and description (which [`expand_front_matter`] leaves as written
/// when they have one).
fn expand(site: &Site, page: &Page) -> (Expanded, Vec<Diagnostic>) {
    let title = Some(page.title.as_str()).filter(|t| uses_variables(t));
    let description = page.description.as_deref().filter(|d| uses_variables(d));
    if !uses_variables(&page.body) && title.is_none() && description.is_none() {
        return (Expanded::Same, Vec::new());
    }
    let vars = Variables::for_page(site, page);
    let mut findings = Vec::new();
    let fields = [
        (title, page.values_at.title),
        (description, page.values_at.description.unwrap_or((2, 1))),
    ];
    for (text, at) in fields {
        if let Some(Err(problems)) = text.map(|t| vars.expand(t)) {
            findings.extend(vars.findings(problems, &page.source, at));
        }
    }
    let (body, spans, problems) = vars.expand_partly(&page.body);
    let expanded = if !problems.is_empty() {
        findings.extend(vars.findings(problems, &page.source, (page.body_line, 1)));
        Expanded::Partly(body, spans)
    } else if body == page.body {
        Expanded::Same
    } else {
        Expanded::Whole(body, spans)
    };
    (expanded, findings)
}

/// Replaces the `{{ variables }}` in every page's title and description,
/// as in its body, so that every place that shows them shows the values.
/// A text with an unknown one stays as written, for [`page`] to report.
pub fn expand_front_matter(site: &mut Site) {
    let expanded: Vec<(usize, (String, Option<String>))> = site
        .pages
        .par_iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, front_matter_values(site, p)?)))
        .collect();
    for (i, (title, description)) in expanded {
        site.pages[i].title = title;
        site.pages[i].description = description;
    }
}

/// [`expand_front_matter`] for one page read again, not yet in `site`.
pub fn expand_page_front_matter(site: &Site, page: &mut Page) {
    if let Some((title, description)) = front_matter_values(site, page) {
        page.title = title;
        page.description = description;
    }
}

/// The title and description of `page` with their variables replaced,
/// each where all of them are known; `None` when neither has any.
fn front_matter_values(site: &Site, page: &Page) -> Option<(String, Option<String>)> {
    if !uses_variables(&page.title) && !page.description.as_deref().is_some_and(uses_variables) {
        return None;
    }
    let vars = Variables::for_page(site, page);
    let expand = |text: &str| vars.expand(text).unwrap_or_else(|_| text.to_string());
    Some((expand(&page.title), page.description.as_deref().map(expand)))
}

/// Who puts a file at a site path: an input file, or basepress itself.
struct Owner {
    name: String,
    file: Option<PathBuf>,
}

impl Owner {
    fn file(path: &Path) -> Owner {
        Owner {
            name: path.display().to_string(),
            file: Some(path.to_path_buf()),
        }
    }

    fn basepress(what: &str) -> Owner {
        Owner {
            name: format!("basepress ({what})"),
            file: None,
        }
    }
}

/// The folders that only basepress writes to, with what it keeps there: a
/// file of `static/` below one would pass for part of it (a base no check
/// has seen, a search shard, a sitemap).
const RESERVED_DIRS: [(&str, &str); 3] = [
    (layout::SEARCH_DIR, "the search index"),
    (layout::KUBERNETES_DIR, "the bases' downloads"),
    (layout::SITEMAPS_DIR, "the sitemaps"),
];

/// Every path the build writes, and a finding for each path two inputs
/// would both be written to, or two that differ only in case.
pub fn published_paths(site: &Site) -> (BTreeSet<String>, Vec<Diagnostic>) {
    let mut owners: BTreeMap<String, Owner> = BTreeMap::new();
    let mut diagnostics = Vec::new();
    let mut claim = |path: String, owner: Owner, diagnostics: &mut Vec<Diagnostic>| {
        if let Some(first) = owners.get(&path) {
            let mut d = Diagnostic::new(
                rule::OUTPUT_CONFLICT,
                format!(
                    "`{}` and `{}` would both be published at `{path}`",
                    first.name, owner.name
                ),
            );
            if let Some(file) = owner.file.as_ref().or(first.file.as_ref()) {
                d = d.in_file(file);
            }
            diagnostics.push(d);
        } else {
            owners.insert(path, owner);
        }
    };
    for fixed in [
        layout::ROOT_PATH,
        layout::NOT_FOUND_PATH,
        layout::SITEMAP_PATH,
    ] {
        claim(
            fixed.to_string(),
            Owner::basepress("its own page"),
            &mut diagnostics,
        );
    }
    let sitemaps = (0..site.versions.len()).filter_map(|v| layout::version_sitemap(site, v));
    for path in sitemaps.chain((site.versions.len() > 1).then(|| layout::SITE_SITEMAP_PATH.into()))
    {
        claim(path, Owner::basepress("a sitemap"), &mut diagnostics);
    }
    let published_versions = (0..site.versions.len().max(1)).filter(|&v| site.version_published(v));
    let mut search_files = std::collections::BTreeSet::new();
    for v in published_versions {
        for l in &site.config.languages {
            let dir = layout::search_bundle_dir(site, v, &l.code);
            for name in layout::SEARCH_FIXED {
                search_files.insert(format!("{dir}{name}"));
            }
        }
    }
    for path in &search_files {
        claim(
            path.clone(),
            Owner::basepress("the search index"),
            &mut diagnostics,
        );
    }
    for l in &site.config.languages {
        let owner = Owner::basepress(&format!("the {} versions page", l.code));
        claim(layout::versions_file(&l.code), owner, &mut diagnostics);
    }
    let published = |p: &&Page| site.version_published(p.version);
    for p in site.pages.iter().filter(published) {
        claim(
            layout::page_file(p),
            Owner::file(&p.source),
            &mut diagnostics,
        );
    }
    for b in &site.bases {
        for f in &b.files {
            let file = b.dir.join(&f.name);
            // On a disk that ignores case, the download loop writes the
            // file and the index over each other.
            if let Some(index) = layout::BASE_INDEXES
                .iter()
                .find(|n| n.eq_ignore_ascii_case(&f.name))
            {
                diagnostics.push(
                    Diagnostic::new(
                        rule::OUTPUT_CONFLICT,
                        format!(
                            "`{}` is named like `{index}`, which basepress writes into every base folder",
                            f.name
                        ),
                    )
                    .in_file(&file)
                    .help("rename the file, and the kustomization's reference to it"),
                );
                continue;
            }
            let path = format!("{}{}", layout::base_path(b), f.name);
            claim(path, Owner::file(&file), &mut diagnostics);
        }
    }
    let base_files: BTreeSet<String> = site
        .bases
        .iter()
        .flat_map(|b| {
            b.files
                .iter()
                .map(move |f| format!("{}{}", layout::base_path(b), f.name))
        })
        .collect();
    for p in layout::kubernetes_paths(site) {
        if !base_files.contains(&p) {
            claim(
                p,
                Owner::basepress("the bases' downloads"),
                &mut diagnostics,
            );
        }
    }
    for path in layout::generated_assets(site) {
        claim(
            path.to_string(),
            Owner::basepress("an asset"),
            &mut diagnostics,
        );
    }
    for a in &site.assets {
        if let Some((dir, what)) = RESERVED_DIRS.iter().find(|(dir, _)| a.url.starts_with(dir)) {
            diagnostics.push(
                Diagnostic::new(
                    rule::OUTPUT_CONFLICT,
                    format!(
                        "`{}` would be published at `{}`, in `{dir}`, the folder of {what}, which only basepress writes",
                        a.source.display(),
                        a.url,
                    ),
                )
                .in_file(&a.source)
                .help("move it elsewhere in static/"),
            );
            continue;
        }
        claim(a.url.clone(), Owner::file(&a.source), &mut diagnostics);
    }
    diagnostics.extend(case_conflicts(&owners));
    diagnostics.extend(file_folder_conflicts(&owners));
    (owners.into_keys().collect(), diagnostics)
}

/// Site paths one input publishes as a file and another needs as a folder
/// (`static/en/next/secrets` and the page at `/en/next/secrets/`): no disk
/// holds both, and the build would fail as it writes them.
fn file_folder_conflicts(owners: &BTreeMap<String, Owner>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (path, owner) in owners {
        let folder = format!("{path}/");
        let Some((inner, other)) = owners.range(folder.clone()..).next() else {
            continue;
        };
        if !inner.starts_with(&folder) {
            continue;
        }
        let mut d = Diagnostic::new(
            rule::OUTPUT_CONFLICT,
            format!(
                "`{}` would be published as the file `{path}`, and `{}` needs `{path}` to be a folder (for `{inner}`)",
                owner.name, other.name
            ),
        )
        .help("rename one of the two");
        if let Some(file) = owner.file.as_ref().or(other.file.as_ref()) {
            d = d.in_file(file);
        }
        out.push(d);
    }
    out
}

/// Site paths that differ only in case, which one disk of most readers and
/// hosts (macOS, Windows, many object stores) cannot hold both of: one
/// overwrites the other. Every folder on the way counts (`/en/Guide/` and
/// `/en/guide.png` clash on `guide`), and so do the files basepress writes
/// (`static/Index.html` against the home page).
fn case_conflicts(owners: &BTreeMap<String, Owner>) -> Vec<Diagnostic> {
    let mut seen: HashMap<String, (&str, &Owner)> = HashMap::new();
    let mut reported = BTreeSet::new();
    let mut out = Vec::new();
    for (path, owner) in owners {
        let mut end = 0;
        for (i, _) in path.match_indices('/').skip(1).chain([(path.len(), "")]) {
            end = end.max(i);
            let prefix = &path[..end];
            let folded = prefix.to_lowercase();
            match seen.get(&folded) {
                None => {
                    seen.insert(folded, (prefix, owner));
                }
                Some((other, other_owner)) if *other != prefix => {
                    if reported.insert(folded) {
                        let mut d = Diagnostic::new(
                            rule::NAME_CASE_CONFLICT,
                            format!(
                                "`{prefix}` (from {}) and `{other}` (from {}) differ only in case: \
                                 on a disk that ignores case one replaces the other",
                                owner.name, other_owner.name
                            ),
                        );
                        if let Some(file) = owner.file.as_ref().or(other_owner.file.as_ref()) {
                            d = d.in_file(file);
                        }
                        out.push(d);
                    }
                    break;
                }
                Some(_) => {}
            }
        }
    }
    out
}
