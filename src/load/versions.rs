//! The docs versions of a project: `content/` holds the docs of the coming
//! release, `versions/<line>/content/` the frozen docs of each release
//! line (`versions/1.29/content/es/…`), one per minor release, which its
//! patch releases share.
//!
//! `versions/versions.lock` records the lines `basepress release` froze:
//! their URLs are published, so a recorded line must stay.

use super::relative;
use crate::diagnostics::{rule, Diagnostic, Location};
use crate::model::images::{latest, ImageReleases};
use crate::model::site::{DocsVersion, VersionKind};
use semver::Version;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The folder of the frozen versions.
pub const DIR: &str = "versions";
/// The record of the frozen release lines.
pub const LOCK: &str = "versions/versions.lock";

const HEADER: &str = "# Docs versions frozen by `basepress release`, one release line a line.\n\
# Their URLs are published: a line never goes away. Do not edit by hand.\n";

/// A release line, `1.29`, as `(major, minor)`.
pub type Line = (u64, u64);

/// `1.29` → `(1, 29)`; only that spelling.
pub fn parse_line(s: &str) -> Option<Line> {
    let (major, minor) = s.split_once('.')?;
    let num = |n: &str| {
        (!n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
            && (n == "0" || !n.starts_with('0')))
        .then(|| n.parse().ok())
        .flatten()
    };
    Some((num(major)?, num(minor)?))
}

/// The release line of a version.
pub fn line_of(v: &Version) -> Line {
    (v.major, v.minor)
}

/// The lock's text for these lines.
pub fn render_lock(lines: &BTreeSet<Line>) -> String {
    let mut out = String::from(HEADER);
    for (major, minor) in lines {
        out.push_str(&format!("{major}.{minor}\n"));
    }
    out
}

/// The frozen lines, each with its 1-based line in the lock.
pub fn load_lock(root: &Path, diagnostics: &mut Vec<Diagnostic>) -> BTreeMap<Line, usize> {
    let mut out = BTreeMap::new();
    let bytes = match crate::input::read_optional(root, &root.join(LOCK)) {
        Ok(Some(b)) => b,
        Ok(None) => return out,
        Err(d) => {
            diagnostics.push(d);
            return out;
        }
    };
    let text = match crate::input::utf8(bytes, Path::new(LOCK), rule::LOCK_INVALID) {
        Ok(t) => t,
        Err(d) => {
            diagnostics.push(d);
            return out;
        }
    };
    for (i, line) in crate::input::text_lines(&text).enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        match parse_line(t) {
            Some(l) => {
                out.entry(l).or_insert(i + 1);
            }
            None => diagnostics.push(
                Diagnostic::new(
                    rule::LOCK_INVALID,
                    format!(
                        "`{}` is not a release line like 1.29",
                        crate::report::cut_message(t)
                    ),
                )
                .at(Location::line(LOCK, i + 1)),
            ),
        }
    }
    out
}

/// The frozen lines found under `versions/`, newest first, with their
/// content folders, and the lines whose folder is there and was refused
/// (None when `versions/` itself was); a finding for anything else there.
fn frozen(
    root: &Path,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Vec<(Line, PathBuf)>, Option<BTreeSet<Line>>) {
    let mut refused = BTreeSet::new();
    let dir = root.join(DIR);
    match crate::input::dir_state(root, &dir) {
        Ok(true) => {}
        Ok(false) => return (Vec::new(), Some(refused)),
        Err(d) => {
            diagnostics.push(d);
            return (Vec::new(), None);
        }
    }
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(e) => e.filter_map(Result::ok).map(|e| e.path()).collect(),
        Err(e) => {
            diagnostics.push(super::unreadable(root, &dir, &e));
            return (Vec::new(), None);
        }
    };
    entries.sort();
    let mut out = Vec::new();
    for path in entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') || relative(root, &path) == Path::new(LOCK) {
            continue;
        }
        let rel = relative(root, &path);
        let line = parse_line(&name);
        let content = path.join("content");
        match (line, crate::input::dir_state(root, &path)) {
            (line, Err(d)) => {
                refused.extend(line);
                diagnostics.push(d);
            }
            (Some(line), Ok(true)) => match crate::input::dir_state(root, &content) {
                Ok(true) => out.push((line, relative(root, &content))),
                Ok(false) => diagnostics.push(
                    Diagnostic::new(
                        rule::CONTENT_LAYOUT,
                        format!("the docs version `{name}` has no content/ folder"),
                    )
                    .in_file(&rel)
                    .help(format!("put its pages under {}/content/<lang>/", rel.display())),
                ),
                Err(d) => {
                    refused.insert(line);
                    diagnostics.push(d);
                }
            },
            _ => diagnostics.push(
                Diagnostic::new(
                    rule::CONTENT_LAYOUT,
                    format!(
                        "`{}` is not the folder of a release line (versions/MAJOR.MINOR, e.g. versions/1.29)",
                        rel.display()
                    ),
                )
                .in_file(&rel)
                .help("name docs version folders after a release line, as `basepress release` does"),
            ),
        }
    }
    out.sort_by_key(|e| std::cmp::Reverse(e.0));
    (out, Some(refused))
}

/// The release a docs version of `line` documents: the newest base of the
/// line, else the newest image release of it.
fn release_of(line: Line, bases: &[Version], images: Option<&ImageReleases>) -> Option<Version> {
    let in_line = |v: &&Version| line_of(v) == line;
    let base = latest(bases.iter().filter(in_line));
    let image = || latest(images?.releases.iter().filter(in_line));
    base.or_else(image).cloned()
}

/// Every docs version, newest first (`bases` are the releases with a base
/// folder), and the release lines whose folder was refused (None when
/// `versions/` itself was): next (when frozen versions exist),
/// then the frozen lines; a project without frozen versions has one, its
/// `content/`, published as the latest.
pub fn load(
    root: &Path,
    publish_next: bool,
    bases: &[Version],
    images: Option<&ImageReleases>,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Vec<DocsVersion>, Option<BTreeSet<Line>>) {
    let newest_base = latest(bases.iter()).cloned();
    let (frozen, refused) = frozen(root, diagnostics);
    if frozen.is_empty() {
        let latest = DocsVersion {
            id: "latest".into(),
            kind: VersionKind::Latest,
            dir: PathBuf::from("content"),
            release: newest_base,
            published: true,
        };
        return (vec![latest], refused);
    }
    let mut out = vec![DocsVersion {
        id: "next".into(),
        kind: VersionKind::Next,
        dir: PathBuf::from("content"),
        release: newest_base,
        published: publish_next,
    }];
    for (i, (line, dir)) in frozen.into_iter().enumerate() {
        out.push(DocsVersion {
            id: format!("{}.{}", line.0, line.1),
            kind: if i == 0 {
                VersionKind::Latest
            } else {
                VersionKind::Older
            },
            dir,
            release: release_of(line, bases, images),
            published: true,
        });
    }
    (out, refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_lines_are_major_dot_minor() {
        assert_eq!(parse_line("1.29"), Some((1, 29)));
        assert_eq!(parse_line("0.0"), Some((0, 0)));
        for bad in ["1.29.0", "v1.29", "1", "1.029", "a.b", "1.", ".1", "next"] {
            assert_eq!(parse_line(bad), None, "{bad}");
        }
        let lines: BTreeSet<Line> = [(1, 30), (1, 29)].into();
        assert!(render_lock(&lines).ends_with("1.29\n1.30\n"));
    }
}
