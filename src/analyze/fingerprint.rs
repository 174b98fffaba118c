//! What the output of each docs version depends on, as one digest per
//! version, so that a build can reuse the pages and search indexes of a
//! version whose digest is the previous build's.
//!
//! A version's pages and findings depend on its own pages (all of their
//! text and front matter), and on what every version shares: the
//! settings, templates, interface strings, image data, bases and their
//! lock, the assets' URLs, and where every page of every version is (the
//! picker, canonical links and link checks look across versions). Pages
//! of other versions are in a version's digest only by place, so editing
//! a page of next leaves every frozen version's digest as it was.

use crate::diagnostics::Diagnostic;
use crate::model::site::{Page, Site};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

/// One digest per docs version (in `site.versions` order; one for a
/// project without versions). `context` names what else the output
/// depends on: the basepress binary and the run's options.
///
/// `loaded` are the findings of loading: a page that failed to load is
/// not in `site.pages`, but its finding is in its version's digest.
pub fn fingerprints(site: &Site, context: &str, loaded: &[Diagnostic]) -> Vec<[u8; 32]> {
    let mut shared = Sha256::new();
    put(&mut shared, "context", context);
    put(&mut shared, "config", &format!("{:?}", site.config));
    put(&mut shared, "versions", &format!("{:?}", site.versions));
    put(&mut shared, "frozen", &format!("{:?}", site.frozen));
    put(&mut shared, "images", &format!("{:?}", site.images));
    // A base is its files (what it parses into is made from them).
    for b in &site.bases {
        put(
            &mut shared,
            "base",
            &format!("{}\u{0}{}", b.version, b.dir.display()),
        );
        // The image it was checked against: `{{ image.digest }}` shows it.
        put(&mut shared, "base image", &format!("{:?}", b.image));
        for f in &b.files {
            put(
                &mut shared,
                "base file",
                &format!("{}\u{0}{}", f.name, f.sha256),
            );
        }
    }
    put(&mut shared, "lock", &format!("{:?}", site.lock));
    put(&mut shared, "signatures", &format!("{:?}", site.signatures));
    put(&mut shared, "deployed", &format!("{:?}", site.deployed));
    put(&mut shared, "templates", &format!("{:?}", site.templates));
    put(&mut shared, "strings", &format!("{:?}", site.strings));
    for a in &site.assets {
        put(&mut shared, "asset", &a.url);
    }
    for p in &site.pages {
        put(&mut shared, "place", &place(p));
    }
    let count = site.versions.len().max(1);
    let version_of = |d: &Diagnostic| site.version_of_file(&d.location.as_ref()?.file);
    let finding = |d: &Diagnostic| format!("{}\u{0}{}\u{0}{:?}", d.rule.id, d.message, d.location);
    for d in loaded.iter().filter(|d| version_of(d).is_none()) {
        put(&mut shared, "finding", &finding(d));
    }
    (0..count)
        .into_par_iter()
        .map(|v| {
            let mut h = shared.clone();
            for p in site.pages.iter().filter(|p| p.version == v) {
                put(&mut h, "page", &front(p));
                put(&mut h, "body", &p.body);
            }
            for d in loaded.iter().filter(|d| version_of(d) == Some(v)) {
                put(&mut h, "finding", &finding(d));
            }
            h.finalize().into()
        })
        .collect()
}

/// Adds a field, length-prefixed so two fields never run into each other.
fn put(h: &mut Sha256, label: &str, text: &str) {
    h.update((label.len() as u64).to_le_bytes());
    h.update(label.as_bytes());
    h.update((text.len() as u64).to_le_bytes());
    h.update(text.as_bytes());
}

/// Where a page is: what other versions' pages see of it.
fn place(p: &Page) -> String {
    format!(
        "{}\u{0}{}\u{0}{}\u{0}{}\u{0}{}\u{0}{:?}",
        p.version,
        p.lang,
        p.rel,
        p.source.display(),
        p.url,
        p.fallback_from
    )
}

/// Everything of a page but its body.
fn front(p: &Page) -> String {
    format!(
        "{}\u{0}{:?}\u{0}{:?}\u{0}{:?}\u{0}{:?}\u{0}{}\u{0}{}",
        p.title,
        p.weight,
        p.description,
        p.base,
        p.base_line,
        p.body_line,
        place(p)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::site::{DocsVersion, VersionKind};
    use std::path::PathBuf;

    fn page(version: usize, rel: &str, body: &str) -> Page {
        Page {
            version,
            lang: "en".into(),
            rel: rel.into(),
            source: PathBuf::from(format!("v{version}/{rel}")),
            url: format!("/en/{version}/{rel}/"),
            title: "T".into(),
            weight: None,
            description: None,
            base: None,
            base_line: None,
            fallback_from: None,
            body: body.into(),
            body_line: 4,
            values_at: Default::default(),
        }
    }

    fn site() -> Site {
        let mut site = Site::empty();
        for (id, kind) in [("next", VersionKind::Next), ("1.0", VersionKind::Latest)] {
            site.versions.push(DocsVersion {
                id: id.into(),
                kind,
                dir: PathBuf::from(id),
                release: None,
                published: true,
            });
        }
        site.pages = vec![page(0, "a.md", "one"), page(1, "a.md", "one")];
        site
    }

    #[test]
    fn a_body_edit_changes_its_version_only() {
        let before = fingerprints(&site(), "x", &[]);
        let mut edited = site();
        edited.pages[0].body.push_str(" more");
        let after = fingerprints(&edited, "x", &[]);
        assert_ne!(before[0], after[0]);
        assert_eq!(before[1], after[1]);
        // A title too.
        let mut edited = site();
        edited.pages[1].title = "U".into();
        let after = fingerprints(&edited, "x", &[]);
        assert_eq!(before[0], after[0]);
        assert_ne!(before[1], after[1]);
    }

    #[test]
    fn a_page_that_failed_to_load_changes_its_version() {
        let before = fingerprints(&site(), "x", &[]);
        let failed = Diagnostic::new(crate::diagnostics::rule::FRONT_MATTER_INVALID, "bad")
            .in_file("next/b.md");
        let after = fingerprints(&site(), "x", &[failed]);
        assert_ne!(before[0], after[0]);
        assert_eq!(before[1], after[1]);
    }

    #[test]
    fn shared_inputs_and_places_change_every_version() {
        let before = fingerprints(&site(), "x", &[]);
        let other = fingerprints(&site(), "y", &[]);
        assert!(before.iter().zip(&other).all(|(a, b)| a != b));
        let mut added = site();
        added.pages.push(page(0, "b.md", ""));
        let after = fingerprints(&added, "x", &[]);
        assert!(before.iter().zip(&after).all(|(a, b)| a != b));
        let mut templated = site();
        templated.templates.push(crate::model::site::TemplateFile {
            name: "page.html".into(),
            source: PathBuf::from("templates/page.html"),
            text: String::new(),
        });
        let after = fingerprints(&templated, "x", &[]);
        assert!(before.iter().zip(&after).all(|(a, b)| a != b));
    }
}
