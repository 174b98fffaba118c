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
use crate::site::Site;

/// Runs every check.
pub fn run(site: &Site, docs: &[Document], index: &LinkIndex) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    out.extend(image_releases(site));
    if !site.lock.versions.is_empty() {
        out.extend(crate::lock::check(&site.lock, &site.bases));
    }
    for base in &site.bases {
        out.extend(manifests::check(base));
        out.extend(pods::check(site, base));
    }
    out.extend(links::check(site, docs, index));
    out.extend(docs::check(site, docs));
    out.extend(overlays::check(site, docs));
    out.extend(leaks::check(site));
    out
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
