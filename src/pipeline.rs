//! The stages wired together: load → check → render → write.

use crate::check;
use crate::diagnostics::{self, Diagnostic};
use crate::load;
use crate::render::{self, links::LinkIndex, markdown::Document};
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

    fn new(mut diagnostics: Vec<Diagnostic>, written: Option<Summary>) -> Self {
        diagnostics::sort(&mut diagnostics);
        diagnostics::dedup(&mut diagnostics);
        Outcome {
            diagnostics,
            written,
            coverage: Vec::new(),
        }
    }
}

/// Loads and checks the project at `root`; writes nothing.
pub fn check(root: &Path) -> Outcome {
    let (analyzed, diagnostics) = analyze(root);
    let mut outcome = Outcome::new(diagnostics, None);
    if let Some(a) = analyzed {
        outcome.coverage = coverage(&a.site);
    }
    outcome
}

/// Loads, checks, renders and, only when no error was found, replaces
/// `out` with the new site.
pub fn build(root: &Path, out: &Path) -> Outcome {
    let (analyzed, mut diagnostics) = analyze(root);
    let Some(Analyzed { site, docs, tera }) = analyzed else {
        return Outcome::new(diagnostics, None);
    };
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Outcome::new(diagnostics, None);
    }
    let Some(tera) = tera else {
        return Outcome::new(diagnostics, None);
    };
    // Rendered files go straight into the staging folder beside `out`; a
    // render error drops it, so `out` only ever changes as a whole.
    let staging = write::Staging::new(out);
    let sink = |f: render::OutFile| {
        if let Ok(s) = &staging {
            s.put(&f.path, &f.bytes);
        }
    };
    let files = match render::site_into(&site, &docs, &tera, &sink) {
        Ok(n) => n,
        Err(errors) => {
            diagnostics.extend(errors);
            return Outcome::new(diagnostics, None);
        }
    };
    if let Err(d) = staging.and_then(write::Staging::finish) {
        diagnostics.push(d);
        return Outcome::new(diagnostics, None);
    }
    let summary = Summary {
        pages: site.pages.len(),
        languages: site.config.languages.len(),
        versions: site.bases.iter().map(|b| b.folder()).collect(),
        files,
    };
    Outcome::new(diagnostics, Some(summary))
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
fn analyze(root: &Path) -> (Option<Analyzed>, Vec<Diagnostic>) {
    let loaded = load::load(root);
    let mut diagnostics = loaded.diagnostics;
    let Some(site) = loaded.site else {
        return (None, diagnostics);
    };
    let (paths, conflicts) = render::published_paths(&site);
    diagnostics.extend(conflicts);
    let index = LinkIndex::new(&site, &paths);
    let (docs, problems) = render::documents(&site, &index);
    diagnostics.extend(problems);
    diagnostics.extend(check::run(&site, &docs, &index));
    let mut diagnostics = check::apply_exceptions(&site.config, diagnostics);
    let tera = match render::templates::engine(&site) {
        Ok(t) => Some(t),
        Err(errors) => {
            diagnostics.extend(errors);
            None
        }
    };
    drop(index);
    (Some(Analyzed { site, docs, tera }), diagnostics)
}
