//! Stage 2: checks that what the site publishes is true.
//!
//! Each check reads the loaded [`Site`] (and, for the docs, the rendered
//! documents) and returns findings; nothing here writes or changes anything.

mod links;

use crate::diagnostics::{rule, Diagnostic};
use crate::render::links::LinkIndex;
use crate::render::markdown::Document;
use crate::site::Site;

/// Runs every check.
pub fn run(site: &Site, docs: &[Document], index: &LinkIndex) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    out.extend(image_releases(site));
    out.extend(links::check(site, docs, index));
    out
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
