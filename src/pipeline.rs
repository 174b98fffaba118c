//! The stages wired together: load → check → render → write.

use crate::check;
use crate::diagnostics::{self, Diagnostic};
use crate::load;
use crate::render::{self, links::LinkIndex, markdown::Document, OutFile};
use crate::site::Site;
use crate::write;
use std::path::Path;

/// What a run found and did.
pub struct Outcome {
    /// Findings in a stable order.
    pub diagnostics: Vec<Diagnostic>,
    /// What was published, when the run wrote a site.
    pub written: Option<Summary>,
    /// Translation coverage per language, when the site could be read.
    pub coverage: Vec<Coverage>,
    /// Links to other hosts, with where each first appears (`check`).
    pub external_links: Vec<(String, crate::diagnostics::Location)>,
    /// How long each stage took.
    pub timings: Timings,
}

/// How long each stage of a run took, in the order they ran.
#[derive(Debug, Clone, Default)]
pub struct Timings {
    pub stages: Vec<(&'static str, std::time::Duration)>,
    since: Option<std::time::Instant>,
}

impl Timings {
    fn start() -> Self {
        Timings {
            stages: Vec::new(),
            since: Some(std::time::Instant::now()),
        }
    }

    /// Ends `stage` now; the next one starts.
    fn lap(&mut self, stage: &'static str) {
        let now = std::time::Instant::now();
        if let Some(since) = self.since.replace(now) {
            self.stages.push((stage, now - since));
        }
    }
}

impl std::fmt::Display for Timings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .stages
            .iter()
            .map(|(stage, d)| format!("{stage} {:.3} s", d.as_secs_f64()))
            .collect();
        f.write_str(&parts.join(", "))
    }
}

/// How much of the default language's pages one language translates.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Coverage {
    pub language: String,
    pub translated: usize,
    pub total: usize,
    /// Source paths (below content/<default>/) without a translation.
    pub missing: Vec<String>,
}

fn coverage(site: &Site) -> Vec<Coverage> {
    let default = &site.config.default_language;
    let total = site.pages.iter().filter(|p| &p.lang == default).count();
    site.config
        .languages
        .iter()
        .map(|l| {
            let missing: Vec<String> = site
                .pages
                .iter()
                .filter(|p| p.lang == l.code && p.fallback_from.is_some())
                .map(|p| p.rel.clone())
                .collect();
            Coverage {
                language: l.code.clone(),
                translated: total - missing.len(),
                total,
                missing,
            }
        })
        .collect()
}

/// A one-line account of a written site.
#[derive(Debug, Clone)]
pub struct Summary {
    pub pages: usize,
    pub languages: usize,
    pub versions: Vec<String>,
    pub files: usize,
}

impl Outcome {
    pub fn exit_code(&self) -> u8 {
        diagnostics::exit_code(&self.diagnostics)
    }

    /// An outcome with these findings, sorted and without duplicates.
    pub(crate) fn new(mut diagnostics: Vec<Diagnostic>, written: Option<Summary>) -> Self {
        diagnostics::sort(&mut diagnostics);
        diagnostics::dedup(&mut diagnostics);
        Outcome {
            diagnostics,
            written,
            coverage: Vec::new(),
            external_links: Vec::new(),
            timings: Timings::default(),
        }
    }
}

/// Settings of a run beyond the project itself.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A previously deployed site folder whose versions must be published
    /// unchanged.
    pub against: Option<std::path::PathBuf>,
    /// The release key: signs the versions not released yet.
    pub signer: Option<crate::signing::Signer>,
}

/// Loads and checks the project at `root`; writes nothing.
pub fn check(root: &Path) -> Outcome {
    check_with(root, &Options::default())
}

/// [`check`] with options.
pub fn check_with(root: &Path, options: &Options) -> Outcome {
    let mut timings = Timings::start();
    let (analyzed, mut diagnostics) = analyze(root, options.signer.as_ref(), None, &mut timings);
    if let (Some(dir), Some(a)) = (&options.against, &analyzed) {
        diagnostics.extend(crate::lock::check_against(dir, &a.site.bases));
    }
    let mut outcome = Outcome::new(diagnostics, None);
    if let Some(a) = analyzed {
        outcome.coverage = coverage(&a.site);
        outcome.external_links = external_links(&a.site, &a.docs);
    }
    outcome.timings = timings;
    outcome
}

/// Every link to another host, once, with the first place it appears.
/// They are not checked (no network): this is the list to check by hand.
fn external_links(site: &Site, docs: &[Document]) -> Vec<(String, crate::diagnostics::Location)> {
    let mut seen = std::collections::BTreeMap::new();
    for (page, doc) in site.pages.iter().zip(docs) {
        if page.fallback_from.is_some() {
            continue;
        }
        for link in doc
            .links
            .iter()
            .filter(|l| render::links::is_external(&l.dest))
        {
            seen.entry(link.dest.clone()).or_insert_with(|| {
                crate::diagnostics::Location::at(&page.source, link.line, link.column)
            });
        }
    }
    seen.into_iter().collect()
}

/// Loads, checks, renders and, only when no error was found, replaces
/// `out` with the new site.
pub fn build(root: &Path, out: &Path) -> Outcome {
    build_with(root, out, &Options::default())
}

/// [`build`] with options.
///
/// Pages are written as they are rendered, into a folder beside `out`
/// that replaces it at the end: the build never holds the whole site in
/// memory, and a failed build leaves `out` as it was.
pub fn build_with(root: &Path, out: &Path, options: &Options) -> Outcome {
    render_with(root, options, None, Target::Disk(out)).1
}

/// Loads, checks and renders the project at `root` in memory, writing
/// nothing: the site's files when no error was found, and the outcome
/// (with `written` describing the files, as if written).
pub fn render_site(root: &Path) -> (Option<Vec<OutFile>>, Outcome) {
    render_with(root, &Options::default(), None, Target::Memory)
}

/// [`render_site`] for a program that renders the same project again and
/// again (`basepress serve`): pages whose template input did not change
/// since the last call come from `cache`.
pub fn render_site_cached(
    root: &Path,
    cache: &mut render::PageCache,
) -> (Option<Vec<OutFile>>, Outcome) {
    render_with(root, &Options::default(), Some(cache), Target::Memory)
}

/// Where the rendered site goes.
enum Target<'a> {
    /// Kept in memory and returned, sorted by path.
    Memory,
    /// Written into this folder, replacing it once complete.
    Disk(&'a Path),
}

fn render_with(
    root: &Path,
    options: &Options,
    cache: Option<&mut render::PageCache>,
    target: Target,
) -> (Option<Vec<OutFile>>, Outcome) {
    let mut timings = Timings::start();
    let (files, mut outcome) = render_stages(root, options, cache, target, &mut timings);
    outcome.timings = timings;
    (files, outcome)
}

fn render_stages(
    root: &Path,
    options: &Options,
    mut cache: Option<&mut render::PageCache>,
    target: Target,
    timings: &mut Timings,
) -> (Option<Vec<OutFile>>, Outcome) {
    let (analyzed, mut diagnostics) =
        analyze(root, options.signer.as_ref(), cache.as_deref_mut(), timings);
    if let (Some(dir), Some(a)) = (&options.against, &analyzed) {
        diagnostics.extend(crate::lock::check_against(dir, &a.site.bases));
    }
    let Some(Analyzed { site, docs, tera }) = analyzed else {
        return (None, Outcome::new(diagnostics, None));
    };
    if diagnostics.iter().any(Diagnostic::is_error) {
        return (None, Outcome::new(diagnostics, None));
    }
    let Some(tera) = tera else {
        return (None, Outcome::new(diagnostics, None));
    };
    let lastmod = match render::sitemap::source_date_from_env() {
        Ok(date) => date,
        Err(d) => {
            diagnostics.push(d);
            return (None, Outcome::new(diagnostics, None));
        }
    };
    let lastmod = lastmod.as_deref();
    let rendered = match target {
        Target::Memory => {
            let files = render::site(&site, &docs, &tera, lastmod, cache);
            timings.lap("render");
            files.map(|files| (files.len(), Some(files)))
        }
        Target::Disk(out) => write::Staging::new(out)
            .map_err(|d| vec![d])
            .and_then(|staging| {
                let put = |f: OutFile| staging.put(&f.path, &f.bytes);
                let count = render::site_into(&site, &docs, &tera, lastmod, cache, &put)?;
                timings.lap("render and write");
                staging.finish().map_err(|d| vec![d])?;
                timings.lap("swap");
                Ok((count, None))
            }),
    };
    let (count, files) = match rendered {
        Ok(r) => r,
        Err(errors) => {
            diagnostics.extend(errors);
            return (None, Outcome::new(diagnostics, None));
        }
    };
    let summary = Summary {
        pages: site.pages.len(),
        languages: site.config.languages.len(),
        versions: site.bases.iter().map(|b| b.folder()).collect(),
        files: count,
    };
    (files, Outcome::new(diagnostics, Some(summary)))
}

/// Adds the base of `version` (`v1.30.0` or `1.30.0`) to
/// bases/published.lock, only when every check passes. `Ok` carries what
/// happened, for people.
pub fn release(root: &Path, version: &str) -> Result<String, Box<Outcome>> {
    release_with(root, version, None)
}

/// [`release`] with the release key, which a project with `signing` in
/// site.yaml needs: the version's signature is stored with the release.
pub fn release_with(
    root: &Path,
    version: &str,
    signer: Option<&crate::signing::Signer>,
) -> Result<String, Box<Outcome>> {
    let (analyzed, diagnostics) = analyze(root, signer, None, &mut Timings::default());
    let fail = |mut d: Vec<Diagnostic>, extra: Option<Diagnostic>| {
        d.extend(extra);
        Box::new(Outcome::new(d, None))
    };
    let Some(Analyzed { site, .. }) = analyzed else {
        return Err(fail(diagnostics, None));
    };
    let wanted = semver::Version::parse(version.trim_start_matches('v'));
    let Some(base) = wanted
        .ok()
        .and_then(|v| site.bases.iter().find(|b| b.version == v))
    else {
        let published: Vec<_> = site.bases.iter().map(|b| b.folder()).collect();
        let d = Diagnostic::new(
            diagnostics::rule::RELEASED_VERSION_MISSING,
            format!("there is no base {version} to release"),
        )
        .help(format!("bases: {}", published.join(", ")));
        return Err(fail(diagnostics, Some(d)));
    };
    // Releasing is the point where the version must be final: its own
    // `version-unreleased` warning is the only finding allowed, besides
    // missing signatures, which releasing is how to add.
    let blocking: Vec<Diagnostic> = diagnostics
        .iter()
        .filter(|d| d.is_error() && d.rule.id != diagnostics::rule::SIGNATURE_MISSING.id)
        .cloned()
        .collect();
    if !blocking.is_empty() {
        return Err(fail(diagnostics, None));
    }
    let mut lock = site.lock.clone();
    let signs = site.config.signing.is_some();
    let already = lock.versions.contains_key(&base.version);
    if already && (!signs || crate::signing::is_recorded(&lock, &base.version)) {
        return Ok(format!(
            "{} is already released; nothing changed",
            base.folder()
        ));
    }
    if !already {
        lock.add(base);
    }
    let signed = crate::signing::release(root, &site, base, signer, &mut lock)
        .map_err(|d| fail(Vec::new(), Some(d)))?;
    lock.save(root).map_err(|e| {
        fail(
            Vec::new(),
            Some(Diagnostic::new(
                diagnostics::rule::IO_UNREADABLE,
                format!("cannot write {}: {e}", crate::lock::FILE),
            )),
        )
    })?;
    let signature = match &signed {
        Some(path) => format!(", signature stored in {}", path.display()),
        None if signs => ", signature recorded".to_string(),
        None => String::new(),
    };
    if already {
        return Ok(format!(
            "{} was already released; its signature is now part of the release{signature}",
            base.folder()
        ));
    }
    Ok(format!(
        "released {}: {} files recorded in {}{signature}",
        base.folder(),
        base.files.len(),
        crate::lock::FILE
    ))
}

/// What loading and checking produce for the render stage.
struct Analyzed {
    site: Site,
    docs: Vec<Document>,
    /// The compiled templates, when they compile.
    tera: Option<tera::Tera>,
}

/// Load and check: the site, its rendered documents and its templates when
/// it could be read, and every finding.
fn analyze(
    root: &Path,
    signer: Option<&crate::signing::Signer>,
    cache: Option<&mut render::PageCache>,
    timings: &mut Timings,
) -> (Option<Analyzed>, Vec<Diagnostic>) {
    let loaded = load::load(root);
    timings.lap("load");
    let mut diagnostics = loaded.diagnostics;
    let Some(mut site) = loaded.site else {
        return (None, diagnostics);
    };
    diagnostics.extend(crate::signing::attach(&mut site, signer));
    let (paths, conflicts) = render::published_paths(&site);
    diagnostics.extend(conflicts);
    let index = LinkIndex::new(&site, &paths);
    let (docs, problems) = render::documents_cached(&site, &index, cache);
    timings.lap("markdown");
    diagnostics.extend(problems);
    diagnostics.extend(check::run(&site, &docs, &index));
    let mut diagnostics = check::apply_exceptions(&site.config, diagnostics);
    timings.lap("check");
    let tera = match render::templates::engine(&site) {
        Ok(t) => Some(t),
        Err(errors) => {
            diagnostics.extend(errors);
            None
        }
    };
    timings.lap("templates");
    drop(index);
    (Some(Analyzed { site, docs, tera }), diagnostics)
}
