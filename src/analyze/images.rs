//! The image of each base's release, when the project says where images
//! are (`image.source` in site.yaml, or `--image`): opened once per base
//! version, every platform of it, through [`crate::oci::open`] and its
//! digest cache. The checks then read the image itself, not only the
//! image release data.

use crate::diagnostics::Diagnostic;
use crate::model::site::{ImageRecord, Site};
use crate::oci::{self, Image, SourceRef};
use rayon::prelude::*;
use std::path::Path;
use std::sync::Arc;

/// Where images are and how to read them.
#[derive(Debug, Clone, Default)]
pub struct ImageOptions {
    /// A source given on the command line (`--image`); it overrides
    /// site.yaml's `image.source`.
    pub source: Option<String>,
    /// Cache folder, credentials, timeouts and bounds.
    pub oci: oci::Options,
}

/// The images of the bases, by base in `site.bases` order (`None` where
/// no source is set or the image could not be read), the source read
/// (`None` without one) and the findings of images that could not be
/// read.
#[derive(Debug, Clone, Default)]
pub struct Opened {
    pub images: Vec<Option<Arc<Image>>>,
    pub source: Option<String>,
    pub findings: Vec<Diagnostic>,
}

/// A path of a source relative to `root` (site.yaml's are; the command
/// line makes its own absolute).
fn rooted(source: SourceRef, root: &Path) -> SourceRef {
    match source {
        SourceRef::Layout { dir, tag } => SourceRef::Layout {
            dir: root.join(dir),
            tag,
        },
        SourceRef::Archive { file, reference } => SourceRef::Archive {
            file: root.join(file),
            reference,
        },
        other => other,
    }
}

/// Opens the image of every base from `source` (site.yaml's `image.source`
/// unless `options.source` overrides it); the tag is each base's version
/// without the `v`, unless the source names one.
pub fn open_all(site: &Site, options: &ImageOptions) -> Opened {
    let bases = &site.bases;
    let configured = site.config.image.source.as_deref();
    let Some(given) = options.source.as_deref().or(configured) else {
        return Opened {
            images: vec![None; bases.len()],
            ..Opened::default()
        };
    };
    let source = match oci::parse_source(given) {
        Ok(s) => rooted(s, &site.root),
        Err(e) => {
            let d = if options.source.is_some() {
                e.context("--image").diagnostic()
            } else {
                e.context("image.source").diagnostic().in_file("site.yaml")
            };
            return Opened {
                images: vec![None; bases.len()],
                source: Some(given.to_string()),
                findings: vec![d],
            };
        }
    };
    let results: Vec<Result<Image, Diagnostic>> = bases
        .par_iter()
        .map(|base| {
            let tag = base.version.to_string();
            oci::open(&source, Some(&tag), &options.oci).map_err(|e| {
                e.context(format!("the image of base {}", base.folder()))
                    .diagnostic()
                    .in_file(&base.dir)
            })
        })
        .collect();
    let mut opened = Opened {
        source: Some(given.to_string()),
        ..Opened::default()
    };
    for r in results {
        match r {
            Ok(image) => opened.images.push(Some(Arc::new(image))),
            Err(d) => {
                opened.images.push(None);
                opened.findings.push(d);
            }
        }
    }
    opened
}

/// What versions.json records of an image.
pub fn record(image: &Image) -> ImageRecord {
    ImageRecord {
        digest: image.digest.clone(),
        platforms: image
            .platforms
            .iter()
            .map(|p| {
                let digest = p.manifest_digest.as_ref().unwrap_or(&p.config_digest);
                (p.name(), digest.clone())
            })
            .collect(),
    }
}

/// Records on each base of `site` the image it is checked against.
pub fn attach(site: &mut Site, opened: &Opened) {
    for (base, image) in site.bases.iter_mut().zip(&opened.images) {
        base.image = image.as_deref().map(record);
    }
}
