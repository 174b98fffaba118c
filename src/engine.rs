//! The one engine every command drives:
//!
//! - `check` = load → analyze → check;
//! - `build` = check → render → write (only when no error was found);
//! - `release` = check → lock the base;
//! - `serve` = the same stages held in memory by a [`session::Session`],
//!   which after a page edit runs the per-page steps of the same stages on
//!   the pages the edit reaches, and otherwise runs them all again.
//!
//! Settings that come from outside the project (the source date, the site
//! to compare against) arrive as [`Options`]; no stage reads the
//! environment.

pub mod cache;
pub mod session;

use crate::analyze::{self, Analysis};
use crate::check::{self, Findings, Tools};
use crate::diagnostics::{self, rule, Diagnostic, Location, Rule};
use crate::load;
use crate::model::layout;
use crate::model::site::Site;
use crate::render::{self, highlight::Highlighter, OutFile, PageCache, Renderer};
use crate::write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Settings of a run beyond the project itself.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A previously deployed site folder whose versions must be published
    /// unchanged.
    pub against: Option<PathBuf>,
    /// `SOURCE_DATE_EPOCH`, as the command line found it: the date of the
    /// sitemap's entries.
    pub source_date_epoch: Option<String>,
    /// The release signing key, when the pipeline gives one: it signs the
    /// versions not released yet, and `release` stores their signature.
    pub signer: Option<crate::signing::Signer>,
    /// Where the images of the releases are (`--image`, overriding
    /// site.yaml's `image.source`), and how to read them.
    pub image: crate::analyze::images::ImageOptions,
    /// Names this basepress binary (its version, and something that
    /// changes when it is rebuilt): with it, `build` reuses the output of
    /// the docs versions that did not change since the build that wrote
    /// the output folder (see [`cache`]); without it, every build renders
    /// everything.
    pub build_id: Option<String>,
    /// Where each template render is noted while it runs, for a watchdog
    /// to end a run whose render never ends (see [`render::watch`]).
    pub watch: Option<std::sync::Arc<render::watch::Watch>>,
    /// Whether a project whose checks found errors is rendered all the
    /// same, for `serve` to show its pages with the findings (see
    /// [`renders`]). `build` and `release` never do.
    pub preview: bool,
}

/// Whether a checked project with these findings is rendered: when none is
/// an error, or, for a preview, when every error is a check's finding
/// (exit code 1: a broken link, a base calling a missing command), which
/// leaves the whole site to show. Input errors (exit code 2) leave pages
/// out or wrong, and nothing renders a project that holds a credential (a
/// preview can be served to a network).
pub fn renders(options: &Options, diagnostics: &[Diagnostic]) -> bool {
    let mut errors = diagnostics.iter().filter(|d| d.is_error()).peekable();
    errors.peek().is_none()
        || (options.preview
            && errors.all(|d| {
                d.rule.class == diagnostics::Class::Check
                    && !SECRET_RULES.iter().any(|r| r.id == d.rule.id)
            }))
}

/// The findings of a credential in what would be published: a page or
/// file (`credential-leak`) or a base (`secret-in-base`).
const SECRET_RULES: &[&Rule] = &[rule::CREDENTIAL_LEAK, rule::SECRET_IN_BASE];

/// The rules the stages raise themselves, outside the checks of
/// [`check::CHECKS`]: reading inputs, analysing them, rendering, writing
/// and releasing.
pub const STAGE_RULES: &[(&str, &[&Rule])] = &[
    (
        "load",
        &[
            rule::IO_UNREADABLE,
            rule::CONFIG_INVALID,
            rule::FRONT_MATTER_INVALID,
            rule::IMAGE_DATA_INVALID,
            rule::KUSTOMIZATION_INVALID,
            rule::I18N_INVALID,
            rule::CONTENT_LAYOUT,
            rule::BASE_VERSION_INVALID,
            rule::BASE_VERSION_DUPLICATE,
            rule::BASE_REFERENCE_MISSING,
            rule::BASE_REFERENCE_OUTSIDE,
            rule::BASE_FILE_NAME_UNSAFE,
            rule::BASE_SYMLINK,
            rule::BASE_UNREFERENCED_FILE,
            rule::MANIFEST_YAML_INVALID,
            rule::TRANSLATION_MISSING,
            rule::LOCK_INVALID,
            rule::INPUT_SYMLINK,
            rule::INPUT_TOO_LARGE,
            rule::INPUT_NOT_A_FILE,
            rule::NAME_CASE_CONFLICT,
            rule::SIGNATURE_INVALID,
        ],
    ),
    (
        "analyze",
        &[
            rule::OUTPUT_CONFLICT,
            rule::NAME_CASE_CONFLICT,
            rule::DOC_VARIABLE_UNKNOWN,
            rule::SIGNING_KEY_INVALID,
            rule::SIGNATURE_MISSING,
            rule::SIGNATURE_INVALID,
            rule::VERSION_UNSIGNED,
        ],
    ),
    (
        // The Kustomize build of each base and of each overlay a page shows.
        "kustomize",
        crate::kustomize::RULES,
    ),
    (
        "render",
        &[
            rule::TEMPLATE_INVALID,
            rule::TEMPLATE_RECURSION,
            rule::RENDER_TIMEOUT,
            rule::RENDER_MEMORY,
            rule::TEMPLATE_UNUSED,
            rule::TEMPLATE_CONTENT_UNRENDERED,
            rule::TEMPLATE_HTML_ESCAPED,
            rule::SOURCE_DATE_INVALID,
        ],
    ),
    ("write", &[rule::OUTPUT_UNSAFE, rule::IO_UNREADABLE]),
    (
        "release",
        &[rule::RELEASE_VERSION_UNKNOWN, rule::SIGNING_KEY_INVALID],
    ),
    (
        // `basepress init` and `basepress new-release` (src/scaffold/).
        "scaffold",
        &[rule::INIT_INVALID, rule::NEW_RELEASE_INVALID],
    ),
    (
        "image",
        &[
            rule::IMAGE_SOURCE_INVALID,
            rule::IMAGE_UNAVAILABLE,
            rule::IMAGE_CORRUPT,
            rule::IMAGE_UNSUPPORTED,
            rule::IMAGE_TOO_LARGE,
            rule::IMAGE_SYMLINK_LOOP,
        ],
    ),
    (
        "verify",
        &[
            rule::SITE_UNREACHABLE,
            rule::PUBLISHED_FILE_MISSING,
            rule::PUBLISHED_FILE_UNLISTED,
            rule::PUBLISHED_CHECKSUM_MISMATCH,
            rule::PUBLISHED_SIGNATURE_INVALID,
            rule::BASE_FILE_NAME_UNSAFE,
        ],
    ),
    (
        // `basepress deploy`: the target, the store, the site folder, and
        // what the bucket already holds.
        "deploy",
        &[
            rule::DEPLOY_TARGET_INVALID,
            rule::STORE_CONFIG_INVALID,
            rule::STORE_UNREACHABLE,
            rule::DEPLOY_SITE_INVALID,
            rule::DEPLOY_CONFLICT,
            rule::DEPLOY_TOO_MANY_DELETES,
            rule::RELEASED_VERSION_CHANGED,
            rule::RELEASED_VERSION_MISSING,
        ],
    ),
];

/// What a run found and did.
pub struct Outcome {
    /// Findings in a stable order.
    pub diagnostics: Vec<Diagnostic>,
    /// What was published, when the run wrote a site.
    pub written: Option<Summary>,
    /// Translation coverage per language, when the site could be read.
    pub coverage: Vec<Coverage>,
    /// Links to other hosts, with where each first appears (`check`).
    pub external_links: Vec<(String, Location)>,
    /// How long each stage took.
    pub timings: Timings,
    /// Sentences for people that are no finding (the command line prints
    /// them after the findings of a text report).
    pub notes: Vec<String>,
}

impl Outcome {
    pub fn exit_code(&self) -> u8 {
        diagnostics::exit_code(&self.diagnostics)
    }

    /// The outcome of a run that found `diagnostics` (sorted here, without
    /// repeats) and wrote nothing.
    pub fn of(diagnostics: Vec<Diagnostic>) -> Self {
        Outcome::new(check::finish(None, diagnostics), Timings::default())
    }

    fn new(diagnostics: Vec<Diagnostic>, timings: Timings) -> Self {
        Outcome {
            diagnostics,
            written: None,
            coverage: Vec::new(),
            external_links: Vec::new(),
            timings,
            notes: Vec::new(),
        }
    }
}

/// How long each stage of a run took, in the order they ran.
#[derive(Debug, Clone, Default)]
pub struct Timings {
    pub stages: Vec<(&'static str, Duration)>,
    since: Option<Instant>,
}

impl Timings {
    pub fn start() -> Self {
        Timings {
            stages: Vec::new(),
            since: Some(Instant::now()),
        }
    }

    /// Ends `stage` now; the next one starts.
    pub fn lap(&mut self, stage: &'static str) {
        let now = Instant::now();
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

/// A one-line account of a written site.
#[derive(Debug, Clone)]
pub struct Summary {
    pub pages: usize,
    pub languages: usize,
    pub versions: Vec<String>,
    pub files: usize,
}

/// A project loaded, analysed and checked: what `check` reports, what
/// `build` renders, what `release` locks and what the preview server
/// keeps between rebuilds.
pub struct Checked {
    pub analysis: Analysis,
    pub findings: Findings,
    /// What loading found without stopping (untranslated pages, files a
    /// base does not reference…), and what the compiled templates show
    /// (see [`render::templates::lint`]).
    pub loaded: Vec<Diagnostic>,
    /// The compiled templates, or why they do not compile.
    pub templates: Result<tera::Tera, Vec<Diagnostic>>,
    /// The pages standing in for pages whose front matter could not be
    /// read (see [`load::Loaded::stand_ins`]): findings in them are left
    /// out but that one.
    pub stand_ins: Vec<PathBuf>,
    /// What is reused of the previous build (nothing, but for `build`).
    pub plan: cache::Plan,
}

impl Checked {
    pub fn site(&self) -> &Site {
        &self.analysis.site
    }

    /// Every finding of every stage so far, with the exceptions of
    /// site.yaml applied, sorted, without repeats.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut all: Vec<Diagnostic> = self.loaded.clone();
        all.extend(self.analysis.findings().cloned());
        all.extend(self.findings.all().cloned());
        if let Err(errors) = &self.templates {
            all.extend(errors.iter().cloned());
        }
        // The reused versions' findings are the recorded ones, which had
        // the exceptions applied already.
        all.retain(|d| !self.plan.covers(self.site(), d));
        if !self.stand_ins.is_empty() {
            all.retain(|d| {
                d.rule.id == rule::FRONT_MATTER_INVALID.id
                    || !d
                        .location
                        .as_ref()
                        .is_some_and(|l| self.stand_ins.contains(&l.file))
            });
        }
        let mut all = check::finish(Some(&self.site().config), all);
        if !self.plan.findings.is_empty() {
            all.extend(self.plan.findings.iter().cloned());
            all = check::finish(None, all);
        }
        all
    }

    /// What a written site holds.
    pub fn summary(&self, files: usize) -> Summary {
        let site = self.site();
        Summary {
            pages: site.pages.len(),
            languages: site.config.languages.len(),
            versions: site.bases.iter().map(|b| b.folder()).collect(),
            files,
        }
    }

    /// Translation coverage per language.
    pub fn coverage(&self) -> Vec<Coverage> {
        let site = self.site();
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

    /// What a person should know of the run that is no finding: that the
    /// bases were checked against the image data alone.
    pub fn notes(&self) -> Vec<String> {
        let a = &self.analysis;
        if a.image_source.is_some() || a.site.bases.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "note: the images themselves were not checked, only what {} says of them; set `image.source` in site.yaml or pass `--image SOURCE`",
            a.site.config.image.releases.display()
        )]
    }

    /// Every link to another host, once, with the first place it appears.
    /// They are not checked (no network): this is the list to check by hand.
    /// A full URL of the site itself is checked like a path, so it is not
    /// in the list.
    pub fn external_links(&self) -> Vec<(String, Location)> {
        let site = self.site();
        let index = &self.analysis.index;
        let mut seen = std::collections::BTreeMap::new();
        for (page, doc) in site.pages.iter().zip(&self.analysis.docs) {
            if page.fallback_from.is_some() {
                continue;
            }
            for link in doc.links.iter().filter(|l| {
                analyze::links::is_external(&l.dest) && index.own_path(&l.dest).is_none()
            }) {
                seen.entry(link.dest.clone())
                    .or_insert_with(|| Location::at(&page.source, link.line, link.column));
            }
        }
        seen.into_iter().collect()
    }
}

/// Load, analyze and check: the stages every command runs. `Err` holds
/// the findings of a project that could not be read.
pub fn load_and_check(
    root: &Path,
    options: &Options,
    tools: &Tools,
    timings: &mut Timings,
) -> Result<Checked, Vec<Diagnostic>> {
    load_and_check_reusing(root, options, tools, timings, |_, _| cache::Plan::default())
}

/// [`load_and_check`], reusing what `plan` decides for the loaded site.
fn load_and_check_reusing(
    root: &Path,
    options: &Options,
    tools: &Tools,
    timings: &mut Timings,
    plan: impl FnOnce(&Site, &[Diagnostic]) -> cache::Plan,
) -> Result<Checked, Vec<Diagnostic>> {
    let load_options = load::Options {
        against: options.against.clone(),
    };
    let loaded = load::load(root, &load_options);
    let loaded_stand_ins = loaded.stand_ins;
    timings.lap("load");
    let Some(site) = loaded.site else {
        return Err(check::finish(None, loaded.diagnostics));
    };
    let mut site = site;
    let opened = analyze::images::open_all(&site, &options.image);
    analyze::images::attach(&mut site, &opened);
    let plan = plan(&site, &loaded.diagnostics);
    if !plan.reused.is_empty() {
        timings.lap("fingerprint");
    }
    let mut analysis = analyze::analyze_reusing(site, options.signer.as_ref(), plan.reused.clone());
    analysis.images = opened.images;
    analysis.image_source = opened.source;
    analysis.site_findings.extend(opened.findings);
    timings.lap("analyze");
    let findings = check::run(&analysis, tools);
    timings.lap("check");
    let templates = render::templates::engine(&analysis.site);
    let mut loaded = loaded.diagnostics;
    if let Ok(tera) = &templates {
        loaded.extend(render::templates::lint(&analysis.site, tera));
    }
    timings.lap("templates");
    Ok(Checked {
        analysis,
        findings,
        loaded,
        templates,
        stand_ins: loaded_stand_ins,
        plan,
    })
}

/// The date of the sitemap's entries, from `SOURCE_DATE_EPOCH`.
fn lastmod(options: &Options) -> Result<Option<String>, Diagnostic> {
    render::sitemap::source_date(options.source_date_epoch.as_deref())
}

/// Renders a checked project that has no error: each file goes to `emit`
/// (see [`Renderer::site_into`]) once the credential scanner has read it,
/// so that what templates and variables put in pages is scanned too.
/// `Ok` holds the count of files and the warnings the scan leaves (a leak
/// that site.yaml's exceptions allow); `Err` the findings that stopped it.
pub fn render(
    checked: &Checked,
    options: &Options,
    highlighter: &Highlighter,
    tools: &Tools,
    cache: Option<&mut PageCache>,
    emit: &(dyn Fn(OutFile) + Sync),
    wanted: Option<&crate::render::Wanted<'_>>,
) -> Result<(usize, Vec<Diagnostic>), Vec<Diagnostic>> {
    let tera = checked.templates.as_ref().map_err(Clone::clone)?;
    let lastmod = lastmod(options).map_err(|d| vec![d])?;
    let renderer = Renderer::new(&checked.analysis, tera, highlighter, lastmod.as_deref())
        .watched(options.watch.as_deref());
    let sources = output_sources(checked.site());
    let leaks = std::sync::Mutex::new(Vec::new());
    let scanned = |f: OutFile| {
        let found = scan_output(tools, &sources, &f);
        if !found.is_empty() {
            if let Ok(mut leaks) = leaks.lock() {
                leaks.extend(found);
            }
        }
        emit(f);
    };
    let count = renderer.site_into(cache, &scanned, wanted)?;
    let leaks = check::finish(
        Some(&checked.site().config),
        leaks.into_inner().unwrap_or_default(),
    );
    if leaks.iter().any(Diagnostic::is_error) {
        return Err(leaks);
    }
    Ok((count, leaks))
}

/// What rendering a few files finds that the checks cannot see: a template
/// that fails for every page, or puts a credential in it (see
/// [`Renderer::probe`]).
fn probe(checked: &Checked, options: &Options, tools: &Tools) -> Vec<Diagnostic> {
    let Ok(tera) = &checked.templates else {
        return Vec::new();
    };
    let lastmod = match lastmod(options) {
        Ok(l) => l,
        Err(d) => return vec![d],
    };
    let highlighter = Highlighter::default();
    let renderer = Renderer::new(&checked.analysis, tera, &highlighter, lastmod.as_deref())
        .watched(options.watch.as_deref());
    match renderer.probe() {
        Err(findings) => findings,
        Ok(files) => {
            let sources = output_sources(checked.site());
            files
                .iter()
                .flat_map(|f| scan_output(tools, &sources, f))
                .collect()
        }
    }
}

/// Links the files of the reused docs versions that the recycled spare
/// does not hold already from the previous output into `staging`; returns
/// how many files the reused versions have.
fn reuse(checked: &Checked, staging: &write::Staging) -> usize {
    use rayon::prelude::*;
    let plan = &checked.plan;
    if let Some(previous) = plan.previous() {
        let files = plan.files_to_link(checked.site());
        staging.make_folders(files.iter().map(|(f, _)| f.as_str()));
        files
            .par_iter()
            .for_each(|(f, stamp)| staging.reuse(previous, f, *stamp));
    }
    plan.reused_files().count()
}

/// The source of each rendered page, by the file it is written to: a
/// leak found in a page is reported at its source.
pub(crate) fn output_sources(site: &Site) -> std::collections::HashMap<String, PathBuf> {
    site.pages
        .iter()
        .map(|p| (layout::page_file(p), p.source.clone()))
        .collect()
}

/// The credentials the scanner finds in a rendered file.
pub(crate) fn scan_output(
    tools: &Tools,
    sources: &std::collections::HashMap<String, PathBuf>,
    file: &OutFile,
) -> Vec<Diagnostic> {
    let found = tools.credentials.scan_file(&file.path, &file.bytes);
    if found.is_empty() {
        return Vec::new();
    }
    let (at, what) = match sources.get(&file.path) {
        Some(source) => (
            Location::file(source),
            format!("the page rendered at {}", file.path),
        ),
        None => (
            Location::file(file.path.trim_start_matches('/')),
            format!("the published file {}", file.path),
        ),
    };
    found
        .into_iter()
        .map(|f| {
            Diagnostic::new(
                rule::CREDENTIAL_LEAK,
                format!(
                    "{}, in {what} (line {}): a template, the front matter or a variable put it there",
                    f.message(),
                    f.line
                ),
            )
            .at(at.clone())
        })
        .collect()
}

/// Loads and checks the project at `root`; writes nothing.
pub fn check(root: &Path, options: &Options) -> Outcome {
    let mut timings = Timings::start();
    let tools = Tools::default();
    let checked = load_and_check(root, options, &tools, &mut timings);
    match checked {
        Err(diagnostics) => Outcome::new(diagnostics, timings),
        Ok(checked) => {
            let mut diagnostics = checked.diagnostics();
            if !diagnostics.iter().any(Diagnostic::is_error) {
                diagnostics = check::finish(
                    Some(&checked.site().config),
                    diagnostics
                        .into_iter()
                        .chain(probe(&checked, options, &tools))
                        .collect(),
                );
                timings.lap("probe");
            }
            let mut outcome = Outcome::new(diagnostics, timings);
            outcome.coverage = checked.coverage();
            outcome.external_links = checked.external_links();
            outcome.notes = checked.notes();
            outcome
        }
    }
}

/// Where a rendered site goes.
enum Target<'a> {
    /// Kept in memory and returned, sorted by path.
    Memory,
    /// Written into this folder, replacing it once complete.
    Disk(&'a Path),
}

/// Loads, checks, renders and, only when no error was found, replaces
/// `out` with the new site.
///
/// Pages are written as they are rendered, into a folder beside `out`
/// that replaces it at the end: the build never holds the whole site in
/// memory, and a failed build leaves `out` as it was.
pub fn build(root: &Path, out: &Path, options: &Options) -> Outcome {
    run(root, options, Target::Disk(out)).1
}

/// Loads, checks and renders the project at `root` in memory, writing
/// nothing: the site's files when no error was found, and the outcome
/// (with `written` describing the files, as if written).
pub fn render_site(root: &Path, options: &Options) -> (Option<Vec<OutFile>>, Outcome) {
    run(root, options, Target::Memory)
}

fn run(root: &Path, options: &Options, target: Target) -> (Option<Vec<OutFile>>, Outcome) {
    let mut timings = Timings::start();
    let tools = Tools::default();
    // Never an output where the build reads its input.
    if let Target::Disk(out) = target {
        if let Some(clash) = crate::load::input_holding(root, out) {
            let place = match clash {
                crate::load::Holding::Project(project) => {
                    format!(
                        "the output {} holds the project {}",
                        out.display(),
                        project.display()
                    )
                }
                crate::load::Holding::Input(input) => {
                    format!("the output {} is inside {}", out.display(), input.display())
                }
            };
            let d = Diagnostic::new(
                rule::OUTPUT_UNSAFE,
                format!(
                    "{place}, which the build reads: the site would replace \
                     input or be read as input by the next build"
                ),
            )
            .help("pass an --out outside content/, bases/, templates/, static/, i18n/ and versions/, such as ROOT/site");
            return (None, Outcome::new(vec![d], timings));
        }
    }
    // A build takes the output's lock first: the previous output it may
    // reuse files of stays as it is until this build replaces it.
    let staging = match target {
        Target::Memory => None,
        Target::Disk(out) => match write::Staging::new(out, options.build_id.is_some()) {
            Ok(s) => Some(s),
            Err(d) => return (None, Outcome::new(vec![d], timings)),
        },
    };
    // The previous output's record and the spare (its record, a walk of
    // its files) are read while the project loads: the plan needs them
    // only after loading.
    let previous = match (&target, &options.build_id) {
        (Target::Disk(out), Some(_)) => {
            let out = out.to_path_buf();
            Some(std::thread::spawn(move || {
                (write::read_previous(&out), write::survey_spare(&out))
            }))
        }
        _ => None,
    };
    let plan = |site: &Site, loaded: &[Diagnostic]| match (previous, &options.build_id) {
        (Some(walk), Some(id)) => {
            let context = format!(
                "{id}\n{:?}\n{:?}",
                options.source_date_epoch, options.against
            );
            let (previous, spare) = walk.join().unwrap_or((None, None));
            cache::plan(site, loaded, &context, previous, spare)
        }
        _ => cache::Plan::default(),
    };
    let mut checked = match load_and_check_reusing(root, options, &tools, &mut timings, plan) {
        Ok(c) => c,
        Err(diagnostics) => return (None, Outcome::new(diagnostics, timings)),
    };
    let mut diagnostics = checked.diagnostics();
    if diagnostics.iter().any(Diagnostic::is_error) {
        return (None, Outcome::new(diagnostics, timings));
    }
    let highlighter = Highlighter::default();
    let rendered = match target {
        Target::Memory => {
            let files = std::sync::Mutex::new(Vec::new());
            let keep = |f: OutFile| {
                if let Ok(mut files) = files.lock() {
                    files.push(f);
                }
            };
            render(&checked, options, &highlighter, &tools, None, &keep, None).map(
                |(count, warnings)| {
                    timings.lap("render");
                    let mut files = files.into_inner().unwrap_or_default();
                    files.sort_by(|a, b| a.path.cmp(&b.path));
                    (count, warnings, Some(files))
                },
            )
        }
        Target::Disk(_) => {
            let Some(mut staging) = staging else {
                return (None, Outcome::new(diagnostics, timings));
            };
            // The checks passed: the spare becomes this site.
            if checked.plan.recycle(&mut staging) {
                timings.lap("recycle");
            }
            let checked = &checked;
            let written = std::sync::Mutex::new(Vec::new());
            let put = |f: OutFile| {
                staging.put(&f.path, &f.bytes);
                if let Ok(mut w) = written.lock() {
                    w.push(f.path);
                }
            };
            render(checked, options, &highlighter, &tools, None, &put, None).and_then(
                |(count, warnings)| {
                    timings.lap("render and write");
                    let reused = reuse(checked, &staging);
                    if !checked.plan.reused.is_empty() {
                        timings.lap("reuse");
                    }
                    if options.build_id.is_some() {
                        let mut all = diagnostics.clone();
                        all.extend(warnings.iter().cloned());
                        let written = written.into_inner().unwrap_or_default();
                        let record = checked.plan.record(
                            &checked.analysis,
                            &written,
                            &all,
                            |f| staging.stamp(f),
                            staging.copied(),
                        );
                        let json = serde_json::to_vec(&record).unwrap_or_default();
                        staging.put(crate::model::cache::RECORD_PATH, &json);
                    }
                    staging.finish().map_err(|d| vec![d])?;
                    timings.lap("swap");
                    Ok((count + reused, warnings, None))
                },
            )
        }
    };
    match rendered {
        Ok((count, warnings, files)) => {
            if !warnings.is_empty() {
                diagnostics.extend(warnings);
                diagnostics = check::finish(None, diagnostics);
            }
            let mut outcome = Outcome::new(diagnostics, timings);
            outcome.written = Some(checked.summary(count));
            outcome.notes = checked.notes();
            (files, outcome)
        }
        Err(errors) => {
            // Template and output errors: exceptions do not apply to them.
            diagnostics.extend(errors);
            let diagnostics = check::finish(None, diagnostics);
            (None, Outcome::new(diagnostics, timings))
        }
    }
}

/// Adds the base of `version` (`v1.30.0` or `1.30.0`) to
/// bases/published.lock, only when every check passes. `Ok` carries what
/// happened, for people.
pub fn release(root: &Path, version: &str, options: &Options) -> Result<Outcome, Box<Outcome>> {
    let mut timings = Timings::start();
    let fail = |d: Vec<Diagnostic>| Box::new(Outcome::new(d, Timings::default()));
    // One release at a time: the lock is read, checked and written under it.
    let _lock =
        write::lock_exclusive(&root.join(crate::model::lock::FILE)).map_err(|d| fail(vec![d]))?;
    let checked = load_and_check(root, options, &Tools::default(), &mut timings).map_err(fail)?;
    let mut diagnostics = checked.diagnostics();
    let site = checked.site();
    let wanted = semver::Version::parse(version.trim_start_matches('v')).ok();
    let base = wanted
        .as_ref()
        .and_then(|v| site.bases.iter().find(|b| &b.version == v));
    // The docs are frozen by release line when the project versions them.
    let versioned = site.config.versions.is_some() || site.versions.len() > 1;
    let docs_only = wanted
        .as_ref()
        .filter(|v| base.is_none() && versioned && site.images.has_release(v));
    if base.is_none() && docs_only.is_none() {
        // A base folder that did not load has findings of its own.
        let folder = format!("bases/v{}", version.trim_start_matches('v'));
        let in_folder = |d: &Diagnostic| {
            d.location
                .as_ref()
                .is_some_and(|l| l.file.starts_with(&folder))
        };
        if diagnostics.iter().any(|d| d.is_error() && in_folder(d)) {
            return Err(fail(diagnostics));
        }
        let published: Vec<_> = site.bases.iter().map(|b| b.folder()).collect();
        diagnostics.push(
            Diagnostic::new(
                rule::RELEASE_VERSION_UNKNOWN,
                format!("there is no base {version} to release"),
            )
            .help(format!("bases: {}", published.join(", "))),
        );
        return Err(fail(diagnostics));
    }
    // Releasing is the point where the version must be final: no error
    // stops it but the missing signature of the version released, which
    // releasing is how to add (another version's stays an error), and no
    // warning about its base but its own `version-unreleased`: whatever
    // is in its folder is published unchanged for good.
    let own_signature = |d: &Diagnostic| {
        let stored = base.map(|b| layout::stored_signature(&b.version));
        d.rule.id == rule::SIGNATURE_MISSING.id
            && d.location.as_ref().map(|l| &l.file) == stored.as_ref()
    };
    let in_base = |d: &Diagnostic| {
        let file = d.location.as_ref().map(|l| &l.file);
        file.zip(base).is_some_and(|(f, b)| f.starts_with(&b.dir))
    };
    // What releasing itself settles: the version is recorded (and signed,
    // which `release_base` asks the key for).
    let resolved = |d: &Diagnostic| {
        own_signature(d)
            || ([rule::VERSION_UNRELEASED.id, rule::VERSION_UNSIGNED.id].contains(&d.rule.id)
                && in_base(d))
    };
    diagnostics.retain(|d| !resolved(d));
    // A warning that the base publishes a file nothing uses would be
    // frozen with it: an error here.
    for d in diagnostics.iter_mut() {
        if !d.is_error() && in_base(d) && RELEASE_REFUSES.contains(&d.rule.id) {
            d.severity = crate::diagnostics::Severity::Error;
            d.message
                .push_str(" (a released version keeps it for good, so release refuses it)");
        }
    }
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Err(fail(diagnostics));
    }
    // The docs are frozen first and the lock written last: a release that
    // fails on the way leaves the project as it was (what the freeze wrote
    // is taken back), so "nothing was released" is true.
    let mut said = Vec::new();
    let mut frozen = Frozen::default();
    if let (true, Some(v)) = (versioned, wanted.as_ref()) {
        let (told, undo) = freeze_docs(root, site, v).map_err(|d| fail(vec![d]))?;
        said.push(told);
        frozen = undo;
    }
    if let Some(base) = base {
        match release_base(root, site, base, options) {
            Ok(told) => said.push(told),
            Err(d) => {
                frozen.undo(root);
                return Err(fail(vec![d]));
            }
        }
    }
    let mut outcome = Outcome::new(diagnostics, timings);
    outcome.notes.push(said.join("; "));
    Ok(outcome)
}

/// Warnings about the released base's own folder that `release` takes as
/// errors: what they point at would be published unchanged for good.
const RELEASE_REFUSES: &[&str] = &[rule::BASE_UNREFERENCED_FILE.id];

/// Records `base` in the lock, with its signature when the project signs.
fn release_base(
    root: &Path,
    site: &Site,
    base: &crate::model::site::Base,
    options: &Options,
) -> Result<String, Diagnostic> {
    let mut lock = site.lock.clone();
    let signs = site.config.signing.is_some();
    let signed = |lock: &crate::model::lock::Lock| {
        lock.versions
            .get(&base.version)
            .is_some_and(|files| files.contains_key(layout::SIGNATURE))
    };
    let already = lock.versions.contains_key(&base.version);
    if already && (!signs || signed(&lock)) {
        return Ok(format!(
            "{} is already released; nothing changed",
            base.folder()
        ));
    }
    if !already {
        let files = base
            .files
            .iter()
            .map(|f| (f.name.as_str(), f.sha256.as_str()));
        lock.add(&base.version, files);
    }
    let stored = release_signature(root, site, base, options.signer.as_ref(), &mut lock)?;
    write::save_lock(root, &lock)?;
    let signature = match &stored {
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
        crate::model::lock::FILE
    ))
}

/// What a freeze of the docs wrote, to take back if the release fails
/// after it: the folder it created, and the versions lock as it was.
#[derive(Default)]
struct Frozen {
    folder: Option<PathBuf>,
    /// The lock's bytes before (`None` when there was no lock file).
    lock: Option<Option<Vec<u8>>>,
}

impl Frozen {
    fn undo(self, root: &Path) {
        use crate::load::versions::LOCK;
        if let Some(folder) = self.folder {
            let _ = std::fs::remove_dir_all(root.join(folder));
        }
        match self.lock {
            Some(Some(bytes)) => {
                let _ = write::replace_file(&root.join(LOCK), &bytes);
            }
            Some(None) => {
                let _ = std::fs::remove_file(root.join(LOCK));
            }
            None => {}
        }
    }
}

/// Freezes the docs of the release line of `version`: copies `content/`
/// to `versions/<line>/content/` when that folder does not exist yet (a
/// patch release shares its line's docs), and records the line in
/// `versions/versions.lock`. With what it said, what it wrote.
fn freeze_docs(
    root: &Path,
    site: &Site,
    version: &semver::Version,
) -> Result<(String, Frozen), Diagnostic> {
    use crate::load::versions::{line_of, render_lock, DIR, LOCK};
    let line = line_of(version);
    let id = format!("{}.{}", line.0, line.1);
    let folder = Path::new(DIR).join(&id).join("content");
    let exists = site.versions.iter().any(|v| v.dir == folder);
    let mut copied = 0;
    let mut created = None;
    if !exists {
        let next = site
            .versions
            .iter()
            .find(|v| v.dir == Path::new("content"))
            .map(|v| v.dir.clone())
            .unwrap_or_else(|| PathBuf::from("content"));
        // The outermost folder the copy made (`versions/1.31`, or
        // `versions` on the first freeze) is what an undo removes.
        let (files, made) = write::copy_tree(root, &next, &folder)?;
        copied = files;
        created = Some(made);
    }
    let mut undo = Frozen {
        folder: created,
        lock: None,
    };
    let recorded = site.frozen.contains_key(&line);
    if !recorded {
        let mut lines: std::collections::BTreeSet<_> = site.frozen.keys().copied().collect();
        lines.insert(line);
        let before = match std::fs::read(root.join(LOCK)) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                undo.undo(root);
                return Err(
                    Diagnostic::new(rule::IO_UNREADABLE, format!("cannot read: {e}")).in_file(LOCK),
                );
            }
        };
        if let Err(e) = write::replace_file(&root.join(LOCK), render_lock(&lines).as_bytes()) {
            undo.undo(root);
            return Err(
                Diagnostic::new(rule::IO_UNREADABLE, format!("cannot write: {e}")).in_file(LOCK),
            );
        }
        undo.lock = Some(before);
    }
    let told = match (exists, recorded) {
        (false, _) => format!(
            "froze the docs of {id}: {copied} files copied from content/ to {}",
            folder.display()
        ),
        (true, false) => format!("recorded the docs of {id} in {LOCK}"),
        (true, true) => format!("the docs of {id} are already frozen"),
    };
    Ok((told, undo))
}

/// Makes sure a released base has its stored signature, signing it with
/// `signer` when it has none, and records the signature's SHA-256 in
/// `lock`. Returns the file written, if any; nothing for a project that
/// does not sign.
fn release_signature(
    root: &Path,
    site: &Site,
    base: &crate::model::site::Base,
    signer: Option<&crate::signing::Signer>,
    lock: &mut crate::model::lock::Lock,
) -> Result<Option<PathBuf>, Diagnostic> {
    let Some(config) = &site.config.signing else {
        return Ok(None);
    };
    let (text, written) = match site.signatures.get(&base.version) {
        // The analysis verified it, or reported why not, which stops a
        // release.
        Some(stored) => (stored.text.clone(), None),
        None => {
            let Some(signer) = signer else {
                return Err(Diagnostic::new(
                    rule::SIGNING_KEY_INVALID,
                    format!(
                        "releasing {} needs the signing key: site.yaml configures `signing`",
                        base.folder()
                    ),
                )
                .help("pass --signing-key FILE or set BASEPRESS_SIGNING_KEY to the key's text"));
            };
            let sums = layout::sha256sums_for(base, true);
            let text = signer.sign(&config.namespace_for(&base.version), sums.as_bytes())?;
            let path = layout::stored_signature(&base.version);
            let full = root.join(&path);
            std::fs::create_dir_all(root.join(layout::SIGNATURES_DIR))
                .and_then(|()| write::replace_file(&full, text.as_bytes()))
                .map_err(|e| {
                    Diagnostic::new(rule::IO_UNREADABLE, format!("cannot write: {e}"))
                        .in_file(&path)
                })?;
            (text, Some(path))
        }
    };
    lock.versions
        .entry(base.version.clone())
        .or_default()
        .insert(
            layout::SIGNATURE.to_string(),
            crate::model::site::sha256_hex(text.as_bytes()),
        );
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every rule is raised by a check of the registry or by a stage, and
    /// by nothing else: the runner's debug assertion holds the checks to
    /// the rules they declare.
    #[test]
    fn every_rule_has_a_raiser() {
        let mut declared: BTreeSet<&str> = BTreeSet::new();
        for c in check::CHECKS {
            declared.extend(c.own_rules().map(|r| r.id));
            for id in c.reraises {
                assert!(check::CHECKS.iter().any(|o| o.id == *id), "{id}");
            }
        }
        for (_, rules) in STAGE_RULES {
            declared.extend(rules.iter().map(|r| r.id));
        }
        let all: BTreeSet<&str> = rule::ALL.iter().map(|r| r.id).collect();
        let unraised: Vec<_> = all.difference(&declared).collect();
        assert!(
            unraised.is_empty(),
            "rules no check or stage raises: {unraised:?}"
        );
        let unknown: Vec<_> = declared.difference(&all).collect();
        assert!(
            unknown.is_empty(),
            "declared rules not in the catalogue: {unknown:?}"
        );
    }
}
