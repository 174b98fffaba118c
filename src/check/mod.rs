//! Stage 2: checks that what the site publishes is true.
//!
//! Each check reads the loaded [`Site`] (and, for the docs, the rendered
//! documents) and returns findings; nothing here writes or changes anything.

mod docs;
mod leaks;
mod links;
mod manifests;
mod overlays;
mod pods;

use crate::config::{Config, ExceptionSeverity};
use crate::diagnostics::{rule, Diagnostic, Severity};
use crate::render::links::LinkIndex;
use crate::render::markdown::Document;
use crate::site::{Page, Site};
use std::borrow::Borrow;
use std::collections::HashMap;
use std::path::Path;

/// Runs every check.
pub fn run(site: &Site, docs: &[Document], index: &LinkIndex) -> Vec<Diagnostic> {
    run_split(site, docs, index).into_vec()
}

/// The findings of every check, split by what they are about, so that a
/// program that checks the same project again and again (`basepress
/// serve`) can check one page again without checking the others.
pub struct Findings {
    /// About the project as a whole: the bases, the image data, the assets.
    pub site: Vec<Diagnostic>,
    /// By page, in `site.pages` order (an untranslated copy has none: its
    /// original has them).
    pub pages: Vec<PageFindings>,
}

/// The findings about one page.
#[derive(Debug, Clone, Default)]
pub struct PageFindings {
    /// Its links and anchors, which also read the headings of the pages
    /// it links to.
    pub links: Vec<Diagnostic>,
    /// The rest, which read only the page, the bases and the image data:
    /// its examples, overlays, environment keys and credentials.
    pub own: Vec<Diagnostic>,
}

impl Findings {
    pub fn into_vec(self) -> Vec<Diagnostic> {
        let mut out = self.site;
        for p in self.pages {
            out.extend(p.links);
            out.extend(p.own);
        }
        out
    }
}

/// What the checks of one page share with those of the others, kept
/// while the bases and the image data stay the same.
#[derive(Default)]
pub struct PageMemo {
    overlays: overlays::Known,
}

/// [`run`], its findings split by what they are about.
pub fn run_split<D: Borrow<Document>>(site: &Site, docs: &[D], index: &LinkIndex) -> Findings {
    run_split_with(site, docs, index, &mut PageMemo::default())
}

/// [`run_split`], keeping in `memo` what later page checks can reuse.
pub fn run_split_with<D: Borrow<Document>>(
    site: &Site,
    docs: &[D],
    index: &LinkIndex,
    memo: &mut PageMemo,
) -> Findings {
    let mut out = Vec::new();
    out.extend(image_releases(site));
    if !site.lock.versions.is_empty() {
        out.extend(crate::lock::check(&site.lock, &site.bases));
    }
    for base in &site.bases {
        out.extend(manifests::check(base));
        out.extend(pods::check(site, base));
    }
    let mut pages = Vec::with_capacity(site.pages.len());
    for (i, (page, doc)) in site.pages.iter().zip(docs).enumerate() {
        pages.push(PageFindings {
            links: links::check_page(site, docs, index, i),
            own: page_checks(site, page, doc.borrow(), memo),
        });
    }
    // The credential scan reads bases, pages and assets at once: what it
    // finds in a page's source goes to that page.
    let by_source: HashMap<&Path, usize> = site
        .pages
        .iter()
        .enumerate()
        .filter(|(_, p)| p.fallback_from.is_none())
        .map(|(i, p)| (p.source.as_path(), i))
        .collect();
    for d in leaks::check(site) {
        let page = d
            .location
            .as_ref()
            .and_then(|l| by_source.get(l.file.as_path()))
            .and_then(|&i| pages.get_mut(i));
        match page {
            Some(p) => p.own.push(d),
            None => out.push(d),
        }
    }
    Findings { site: out, pages }
}

/// The checks of one page that read only it, the bases and the image
/// data (every check but its links'), without the credential scan.
fn page_checks(site: &Site, page: &Page, doc: &Document, memo: &mut PageMemo) -> Vec<Diagnostic> {
    let mut out = docs::check_page(site, page, doc);
    out.extend(overlays::check_page(site, page, doc, &mut memo.overlays));
    out
}

/// [`PageFindings::own`] of one page, checked again after its text
/// changed; `memo` must come from a run on the same bases and image data.
pub fn page_own(site: &Site, page: &Page, doc: &Document, memo: &mut PageMemo) -> Vec<Diagnostic> {
    let mut out = page_checks(site, page, doc, memo);
    if page.fallback_from.is_some() {
        return out;
    }
    // The credential scan of this page alone: a project of one page.
    let alone = Site {
        root: site.root.clone(),
        config: site.config.clone(),
        pages: vec![page.clone()],
        assets: Vec::new(),
        bases: Vec::new(),
        images: site.images.clone(),
        templates: Vec::new(),
        lock: crate::lock::Lock::default(),
    };
    out.extend(
        leaks::check(&alone)
            .into_iter()
            .filter(|d| d.location.as_ref().is_some_and(|l| l.file == page.source)),
    );
    out
}

/// [`PageFindings::links`] of page `i`, checked again.
pub fn page_links<D: Borrow<Document>>(
    site: &Site,
    docs: &[D],
    index: &LinkIndex,
    i: usize,
) -> Vec<Diagnostic> {
    links::check_page(site, docs, index, i)
}

/// The key closest to `key` among `known`, to suggest for a typo.
pub fn closest_key<'a>(key: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    known
        .map(|k| (strsim::levenshtein(key, k), k))
        .filter(|(d, k)| *d <= 3.max(k.len() / 5))
        .min()
        .map(|(_, k)| k)
}

/// Applies the `exceptions` of site.yaml: a matching finding becomes a
/// warning that carries the reason, or is dropped.
pub fn apply_exceptions(config: &Config, diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diagnostics
        .into_iter()
        .filter_map(|mut d| {
            let file = d.location.as_ref().map(|l| l.file.clone());
            let in_base = |folder: &str| {
                file.as_ref()
                    .is_some_and(|f| f.starts_with(std::path::Path::new("bases").join(folder)))
            };
            let exception = config.exceptions.iter().find(|e| {
                e.rule == d.rule.id && (e.bases.is_empty() || e.bases.iter().any(|b| in_base(b)))
            });
            match exception {
                None => Some(d),
                Some(e) if e.severity == ExceptionSeverity::Off => None,
                Some(e) => {
                    d.severity = Severity::Warning;
                    d.message =
                        format!("{} (allowed in site.yaml: {})", d.message, e.reason.trim());
                    Some(d)
                }
            }
        })
        .collect()
}

/// Every base ships with an image release of the same version.
fn image_releases(site: &Site) -> Vec<Diagnostic> {
    site.bases
        .iter()
        .filter(|b| !site.images.has_release(&b.version))
        .map(|b| {
            Diagnostic::new(
                rule::BASE_IMAGE_RELEASE_MISSING,
                format!(
                    "base {} has no image release {} in {}",
                    b.folder(),
                    b.version,
                    site.config.image.releases.display()
                ),
            )
            .in_file(&b.dir)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn closest_key_suggests_typos_only() {
        let keys = [
            "RUNNER_SECRET_STORE_MODE",
            "RUNNER_HEALTH_DIR",
            "AWS_REGION",
        ];
        assert_eq!(
            super::closest_key("RUNNER_SECRET_STORE_MOD", keys.into_iter()),
            Some("RUNNER_SECRET_STORE_MODE")
        );
        assert_eq!(super::closest_key("SOMETHING_ELSE", keys.into_iter()), None);
    }
}
