//! Released versions stay published byte for byte: against the lock
//! (`bases/published.lock`) and, with `--against`, against a site deployed
//! earlier. Every base also needs an image release of its version.

use super::{Context, Subject};
use crate::diagnostics::{rule, Diagnostic};
use crate::model::layout;
use crate::model::lock::{Lock, FILE};
use crate::model::site::{Base, Deployed, Site};
use semver::Version;
use std::collections::BTreeMap;

/// Every base ships with an image release of the same version.
pub fn image_release(ctx: &Context, subject: &Subject) -> Vec<Diagnostic> {
    let base = subject.base;
    if ctx.site.images.has_release(&base.version) {
        return Vec::new();
    }
    vec![Diagnostic::new(
        rule::BASE_IMAGE_RELEASE_MISSING,
        format!(
            "base {} has no image release {} in {}",
            base.folder(),
            base.version,
            ctx.site.config.image.releases.display()
        ),
    )
    .in_file(base.dir.join(layout::KUSTOMIZATION))]
}

/// The lock and the deployed site against the bases.
pub fn check(ctx: &Context) -> Vec<Diagnostic> {
    let site = ctx.site;
    let mut out = if site.lock.versions.is_empty() {
        Vec::new()
    } else {
        against_lock(site)
    };
    if let Some(deployed) = &site.deployed {
        out.extend(against_deployed(deployed, &site.bases));
    }
    out.extend(docs_versions(site));
    out.extend(removed_pages(site));
    out
}

/// The pages of the latest docs version that next does not have: their
/// stable URLs go away when next is released.
fn removed_pages(site: &Site) -> Vec<Diagnostic> {
    use crate::model::site::VersionKind;
    let index = |kind| site.versions.iter().position(|v| v.kind == kind);
    let (Some(latest), Some(next)) = (index(VersionKind::Latest), index(VersionKind::Next)) else {
        return Vec::new();
    };
    let next_dir = &site.versions[next].dir;
    // An untranslated copy in next keeps the URL answering too.
    let in_next: std::collections::HashSet<(&str, &str)> = site
        .pages
        .iter()
        .filter(|p| p.version == next)
        .map(|p| (p.lang.as_str(), p.rel.as_str()))
        .collect();
    site.pages
        .iter()
        .filter(|p| p.version == latest && p.fallback_from.is_none())
        .filter(|p| !in_next.contains(&(p.lang.as_str(), p.rel.as_str())))
        // A page in a refused folder of next is there, unread.
        .filter(|p| {
            site.refused.paths.is_empty()
                || !site.refused.covers(&next_dir.join(&p.lang).join(&p.rel))
        })
        .map(|p| {
            Diagnostic::new(
                rule::VERSION_PAGE_REMOVED,
                format!(
                    "{} is not in content/ (next): once next is released, {} answers 404",
                    p.source.display(),
                    p.url
                ),
            )
            .in_file(&p.source)
        })
        .collect()
}

/// A frozen docs version stays: recorded lines keep their folder, and a
/// folder not recorded is said to be so.
fn docs_versions(site: &Site) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let lock = crate::load::versions::LOCK;
    let present: Vec<(u64, u64)> = site
        .versions
        .iter()
        .filter_map(|v| crate::load::versions::parse_line(&v.id))
        .collect();
    let refused = &site.refused;
    for ((major, minor), lock_line) in &site.frozen {
        let line = (*major, *minor);
        if !present.contains(&line) && !refused.docs_folder && !refused.docs_lines.contains(&line) {
            out.push(
                Diagnostic::new(
                    rule::DOCS_VERSION_MISSING,
                    format!("the docs of {major}.{minor} were released, and versions/{major}.{minor}/ is gone"),
                )
                .at(crate::diagnostics::Location::line(lock, *lock_line)),
            );
        }
    }
    for v in &site.versions {
        let Some(line) = crate::load::versions::parse_line(&v.id) else {
            continue;
        };
        if !site.frozen.contains_key(&line) {
            out.push(
                Diagnostic::new(
                    rule::DOCS_VERSION_UNRELEASED,
                    format!("the docs of {} are not recorded in {lock}", v.id),
                )
                .in_file(version_file(site, &v.dir))
                .help(format!(
                    "release it: `basepress release v{}.0` (or its newest patch release)",
                    v.id
                )),
            );
        }
    }
    out
}

/// A file of the docs version in `dir` to point at: its start page in the
/// default language, else its first page, else the folder.
fn version_file(site: &Site, dir: &std::path::Path) -> std::path::PathBuf {
    let start = dir.join(&site.config.default_language).join("index.md");
    let mut pages = site
        .pages
        .iter()
        .map(|p| &p.source)
        .filter(|s| s.starts_with(dir));
    if site.pages.iter().any(|p| p.source == start) {
        return start;
    }
    pages.next().cloned().unwrap_or_else(|| dir.to_path_buf())
}

/// Findings about released versions: changed, or gone; and bases not
/// released yet.
fn against_lock(site: &Site) -> Vec<Diagnostic> {
    let (lock, bases) = (&site.lock, &site.bases);
    let mut out = Vec::new();
    for version in lock.versions.keys() {
        let Some(base) = bases.iter().find(|b| &b.version == version) else {
            // A base that is there and was refused has its own finding.
            if site.refused.bases.contains(version) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    rule::RELEASED_VERSION_MISSING,
                    format!("v{version} was released, and its base is gone from bases/"),
                )
                .in_file(FILE),
            );
            continue;
        };
        for diff in differences(lock, version, base) {
            out.push(
                Diagnostic::new(
                    rule::RELEASED_VERSION_CHANGED,
                    format!("v{version} is released and immutable, but {diff}"),
                )
                .in_file(base.dir.join(layout::KUSTOMIZATION)),
            );
        }
    }
    for base in bases
        .iter()
        .filter(|b| !lock.versions.contains_key(&b.version))
    {
        out.push(
            Diagnostic::new(
                rule::VERSION_UNRELEASED,
                format!(
                    "{} is published but not released yet: its files may still change",
                    base.folder()
                ),
            )
            .in_file(base.dir.join(layout::KUSTOMIZATION))
            .help(format!(
                "run `basepress release {}` once it is final",
                base.folder()
            )),
        );
    }
    out
}

/// What differs between the released files of `version` and `base`:
/// one message per changed, added or removed file.
fn differences(lock: &Lock, version: &Version, base: &Base) -> Vec<String> {
    let Some(locked) = lock.versions.get(version) else {
        return Vec::new();
    };
    let short = |sha: &str| sha.get(..12).unwrap_or(sha).to_string();
    let mut out = Vec::new();
    // The signature is recorded in the lock, and checked with the key.
    for (name, sha) in locked.iter().filter(|(n, _)| *n != layout::SIGNATURE) {
        match base.file(name) {
            None => out.push(format!("`{name}` was released and is no longer published")),
            Some(f) if &f.sha256 != sha => out.push(format!(
                "`{name}` changed since it was released (sha256 {} → {})",
                short(sha),
                short(&f.sha256)
            )),
            Some(_) => {}
        }
    }
    for f in &base.files {
        if !locked.contains_key(&f.name) {
            out.push(format!("`{}` was added after the release", f.name));
        }
    }
    out
}

/// A version deployed earlier must be published here, with the same bytes.
fn against_deployed(deployed: &Deployed, bases: &[Base]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (folder, theirs) in &deployed.bases {
        let Some(base) = bases.iter().find(|b| &b.folder() == folder) else {
            out.push(
                Diagnostic::new(
                    rule::RELEASED_VERSION_MISSING,
                    format!(
                        "{folder} is deployed at {}, and this build does not publish it",
                        deployed.dir.display()
                    ),
                )
                .help(format!(
                    "restore bases/{folder}: installers may have pinned it"
                )),
            );
            continue;
        };
        let at = base.dir.join(layout::KUSTOMIZATION);
        let mut ours: BTreeMap<String, Vec<u8>> = base
            .files
            .iter()
            .map(|f| (f.name.clone(), f.bytes.clone()))
            .collect();
        // A version deployed unsigned takes its signature once signing is
        // set (`basepress release` signs it): published with it, or as
        // deployed.
        let as_deployed_unsigned = base.signature.is_some()
            && !theirs.contains_key(layout::SIGNATURE)
            && theirs.get("SHA256SUMS") == Some(&layout::sha256sums_for(base, false).into_bytes())
            && theirs.get("files.txt") == Some(&layout::files_txt_for(base, false).into_bytes());
        let signed = base.signature.is_some() && !as_deployed_unsigned;
        ours.insert(
            "SHA256SUMS".into(),
            layout::sha256sums_for(base, signed).into_bytes(),
        );
        ours.insert(
            "files.txt".into(),
            layout::files_txt_for(base, signed).into_bytes(),
        );
        if let Some(sig) = base.signature.as_ref().filter(|_| signed) {
            ours.insert(layout::SIGNATURE.into(), sig.clone().into_bytes());
        }
        for (name, bytes) in theirs {
            let problem = match ours.get(name) {
                None => Some(format!("`{name}` is deployed and no longer published")),
                Some(b) if b != bytes => Some(format!("`{name}` differs from the deployed one")),
                Some(_) => None,
            };
            if let Some(p) = problem {
                out.push(
                    Diagnostic::new(
                        rule::RELEASED_VERSION_CHANGED,
                        format!("{folder} is deployed, but {p}"),
                    )
                    .in_file(&at),
                );
            }
        }
        for name in ours.keys().filter(|n| !theirs.contains_key(*n)) {
            out.push(
                Diagnostic::new(
                    rule::RELEASED_VERSION_CHANGED,
                    format!("{folder} is deployed, but `{name}` was added since"),
                )
                .in_file(&at),
            );
        }
    }
    out
}
