//! `basepress new-release vX.Y.Z`: the starting point of the next release.
//!
//! It copies the published files of the newest base before the new
//! version (the newest base, for the usual next release; `v1.29.0` for a
//! `v1.29.1` after `v1.30.0`) into `bases/vX.Y.Z/`, and adds the version
//! to `releases:` in the image data file, in order. It leaves every fact's
//! `versions` range as it is: a range such as `">=1.29.0"` already covers
//! the new release, and one that held for the copied release but not for
//! the new one (`"~1.30"`, `"=1.30.0"`) is listed as a step left, since
//! only the writer knows whether the new image still has that fact.

use super::create_file;
use crate::diagnostics::{rule, Diagnostic, Location};
use crate::model::images::{holds_for, ImageReleases};
use semver::Version;
use std::path::{Path, PathBuf};

/// What `new-release` prepared, and what is left to do.
#[derive(Debug, Clone)]
pub struct NewRelease {
    pub version: Version,
    /// The base it was copied from.
    pub from: Version,
    /// The new base folder, relative to the root (`bases/v1.31.0`).
    pub dir: PathBuf,
    /// The files copied into it, by name.
    pub copied: Vec<String>,
    /// Files of the old folder left behind: nothing references them, so
    /// they were not published either.
    pub left_behind: Vec<String>,
    /// The image data file, relative to the root.
    pub data_file: PathBuf,
    /// Whether the version was added to its `releases:` (false: it was
    /// listed already).
    pub data_updated: bool,
    /// Facts of the image data that held for the copied release and do not
    /// hold for the new one: `kind name (versions)`.
    pub uncovered: Vec<String>,
    /// Lines of the copied files that name the old version (`file:line`).
    pub mentions: Vec<String>,
    /// Whether site.yaml configures signing.
    pub signs: bool,
    /// The frozen docs of the new version's release line
    /// (`versions/1.29/content`), when the line has them already (a patch
    /// release): `basepress release` freezes nothing then.
    pub frozen_docs: Option<PathBuf>,
    /// Whether the project keeps docs per release line (`versions:` in
    /// site.yaml, or a `versions/` folder), so that a release freezes
    /// `content/`.
    pub versioned: bool,
}

impl NewRelease {
    /// What was done and the steps left, for the terminal.
    pub fn summary(&self) -> String {
        let v = &self.version;
        let mut s = format!(
            "prepared v{v} from v{}:\n  {}/: {}\n",
            self.from,
            self.dir.display(),
            self.copied.join(", ")
        );
        if self.data_updated {
            s.push_str(&format!(
                "  {}: {v} added to `releases:`\n",
                self.data_file.display()
            ));
        } else {
            s.push_str(&format!(
                "  {}: `releases:` already lists {v}\n",
                self.data_file.display()
            ));
        }
        if !self.left_behind.is_empty() {
            s.push_str(&format!(
                "  not copied (nothing references them): {}\n",
                self.left_behind.join(", ")
            ));
        }
        s.push_str("\nsteps left:\n");
        let mut n = 0;
        let mut step = |text: String| {
            n += 1;
            s.push_str(&format!("  {n}. {text}\n"));
        };
        let mut edit = format!(
            "edit {}/ for what changed in {v}, and {} for what the new image contains",
            self.dir.display(),
            self.data_file.display()
        );
        if !self.mentions.is_empty() {
            edit.push_str(&format!(
                "; these lines still name {}: {}",
                self.from,
                self.mentions.join(", ")
            ));
        }
        step(edit);
        if !self.uncovered.is_empty() {
            step(format!(
                "these facts held for {} and do not hold for {v}: {}; widen their `versions` if the new image still has them",
                self.from,
                self.uncovered.join(", ")
            ));
        }
        match &self.frozen_docs {
            Some(frozen) => step(format!(
                "the docs of {}.{} are frozen in {}/: fix what {v} changes there (content/ is the next line's)",
                v.major,
                v.minor,
                frozen.display()
            )),
            None => step(format!(
                "document the release under content/ (pages with `base: v{}` still show the old base)",
                self.from
            )),
        }
        step("basepress check   (or basepress serve, to read the site as you edit)".into());
        step(format!(
            "basepress release v{v}{}   (records the base in bases/published.lock, after which its files never change{})",
            if self.signs {
                " --signing-key FILE"
            } else {
                ""
            },
            match (&self.frozen_docs, self.versioned) {
                (None, true) => format!(", and freezes content/ as the docs of {}.{}", v.major, v.minor),
                _ => String::new(),
            }
        ));
        s
    }
}

/// Prepares release `version` (`v1.31.0`) of the project at `root`.
pub fn new_release(root: &Path, version: &str) -> Result<NewRelease, Vec<Diagnostic>> {
    let fail = |m: String| vec![Diagnostic::new(rule::NEW_RELEASE_INVALID, m)];
    // `v1.31.0` as the base folder is named, or `1.31.0` as the image tag
    // is (as `release` takes it).
    let new = Version::parse(version.strip_prefix('v').unwrap_or(version))
        .ok()
        .ok_or_else(|| {
            vec![Diagnostic::new(
                rule::NEW_RELEASE_INVALID,
                format!("`{version}` is not a version like v1.31.0"),
            )
            .help("name the release as its base folder will be named: `basepress new-release v1.31.0`")]
        })?;
    if !new.build.is_empty() {
        return Err(vec![Diagnostic::new(
            rule::NEW_RELEASE_INVALID,
            format!(
                "`{version}` carries build metadata (`+{}`), which a release cannot: \
                 base folders and image tags are named by the version alone",
                new.build
            ),
        )
        .help(format!(
            "leave the metadata out: `basepress new-release v{}`",
            Version {
                build: semver::BuildMetadata::EMPTY,
                ..new.clone()
            }
        ))]);
    }
    // One writer of the image data and the bases at a time: two runs at
    // once would each add their version to the data file they read, and
    // one would be lost. `release` takes the same lock.
    let _lock =
        crate::write::lock_exclusive(&root.join(crate::model::lock::FILE)).map_err(|d| vec![d])?;
    let loaded = crate::load::load(root, &crate::load::Options::default());
    // A page standing in for one whose front matter is wrong is no project
    // to prepare a release of either.
    let unread = loaded
        .diagnostics
        .iter()
        .any(|d| d.is_error() && d.rule.class == crate::diagnostics::Class::Input);
    let Some(site) = loaded.site.filter(|_| !unread) else {
        let mut found: Vec<_> = loaded
            .diagnostics
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect();
        found.push(
            Diagnostic::new(
                rule::NEW_RELEASE_INVALID,
                format!("the project cannot be read, so v{new} was not prepared"),
            )
            .help("fix the findings above, then run basepress new-release again"),
        );
        return Err(found);
    };
    let dir = Path::new("bases").join(format!("v{new}"));
    if root.join(&dir).exists() || site.bases.iter().any(|b| b.version == new) {
        return Err(vec![Diagnostic::new(
            rule::NEW_RELEASE_INVALID,
            format!("v{new} exists already: {} is there", dir.display()),
        )
        .in_file(&dir)
        .help(
            "a release is prepared once; edit its folder, or name the next version",
        )]);
    }
    let from = site
        .bases
        .iter()
        .filter(|b| b.version < new)
        .max_by(|a, b| a.version.cmp(&b.version))
        .or_else(|| site.bases.iter().max_by(|a, b| a.version.cmp(&b.version)))
        .ok_or_else(|| {
            fail(format!(
                "there is no base under bases/ to start v{new} from"
            ))
        })?;

    // The image data, edited in memory and parsed again before anything
    // is written.
    let data_file = site.config.image.releases.clone();
    let data_path = root.join(&data_file);
    let text = crate::input::read(root, &data_path)
        .and_then(|b| crate::input::utf8(b, &data_file, rule::IMAGE_DATA_INVALID))
        .map_err(|d| vec![d])?;
    let listed = site.images.releases.contains(&new);
    let edited = if listed {
        None
    } else {
        let edited = add_release(&text, &new).ok_or_else(|| {
            vec![Diagnostic::new(
                rule::NEW_RELEASE_INVALID,
                format!(
                    "cannot find a `releases:` list to add {new} to (a `[…]` list on one line, or one `- X.Y.Z` item a line)"
                ),
            )
            .at(Location::file(&data_file))
            .help(format!("add {new} to `releases:` by hand and run basepress new-release again"))]
        })?;
        let parsed: Result<ImageReleases, _> = crate::yaml::from_str(&edited);
        match parsed {
            Ok(p) if p.releases.contains(&new) => Some(edited),
            _ => {
                return Err(vec![Diagnostic::new(
                    rule::NEW_RELEASE_INVALID,
                    format!("adding {new} to `releases:` would not leave valid image data"),
                )
                .at(Location::file(&data_file))
                .help(format!(
                    "add {new} to `releases:` by hand and run basepress new-release again"
                ))])
            }
        }
    };

    let uncovered = uncovered(&site.images, &from.version, &new);
    let old = from.version.to_string();
    let mut mentions = Vec::new();
    for f in &from.files {
        let text = String::from_utf8_lossy(&f.bytes);
        for (i, line) in text.lines().enumerate() {
            if line.contains(&old) {
                mentions.push(format!("{}:{}", dir.join(&f.name).display(), i + 1));
            }
        }
    }
    let line = Path::new("versions").join(format!("{}.{}", new.major, new.minor));
    let frozen_docs = Some(line.join("content")).filter(|c| root.join(c).is_dir());
    let copied: Vec<String> = from.files.iter().map(|f| f.name.clone()).collect();
    let left_behind = left_behind(root, &from.dir, &copied);

    // Writing: the folder first (never over an existing one), then the
    // data file through a temporary file renamed over it.
    std::fs::create_dir_all(root.join("bases"))
        .map_err(|e| fail(format!("cannot create bases/: {e}")))?;
    std::fs::create_dir(root.join(&dir))
        .map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
    let written = (|| {
        for f in &from.files {
            create_file(
                rule::NEW_RELEASE_INVALID,
                &root.join(&dir).join(&f.name),
                &f.bytes,
            )?;
        }
        if let Some(edited) = &edited {
            replace_file(&data_path, edited.as_bytes())?;
        }
        Ok(())
    })();
    // Nothing is written unless all is: the folder this run created goes.
    if let Err(d) = written {
        let _ = std::fs::remove_dir_all(root.join(&dir));
        return Err(vec![d]);
    }
    Ok(NewRelease {
        version: new,
        from: from.version.clone(),
        dir,
        copied,
        left_behind,
        data_file,
        data_updated: edited.is_some(),
        uncovered,
        mentions,
        signs: site.config.signing.is_some(),
        frozen_docs,
        versioned: site.config.versions.is_some() || root.join("versions").is_dir(),
    })
}

/// Facts that hold for `from` and not for `new`.
fn uncovered(images: &ImageReleases, from: &Version, new: &Version) -> Vec<String> {
    let lost = |req: &semver::VersionReq| holds_for(req, from) && !holds_for(req, new);
    let mut out = Vec::new();
    for f in images.user.iter().filter(|f| lost(&f.versions)) {
        out.push(format!("user `{}` ({})", f.name, f.versions));
    }
    for f in images.ports.iter().filter(|f| lost(&f.versions)) {
        out.push(format!("ports ({})", f.versions));
    }
    for f in images.commands.iter().filter(|f| lost(&f.versions)) {
        out.push(format!("command `{}` ({})", f.name, f.versions));
    }
    for f in images.env.iter().filter(|f| lost(&f.versions)) {
        out.push(format!("env `{}` ({})", f.key, f.versions));
    }
    out
}

/// Regular files of the old base folder that were not published.
fn left_behind(root: &Path, dir: &Path, copied: &[String]) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root.join(dir))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.') && !copied.contains(n))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// `text` (image data) with `version` added to its `releases:` list, in
/// ascending order, keeping every other byte: a flow list on one line
/// (`releases: [1.0.0, 1.1.0]`) or a block list with one item a line.
/// `None` when the list has another form or holds something that is not
/// a version.
pub fn add_release(text: &str, version: &Version) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let at = lines.iter().position(|l| l.starts_with("releases:"))?;
    let line = lines[at];
    let value = line["releases:".len()..].trim_end_matches(['\n', '\r']);
    let (value, comment) = split_comment(value);
    let value = value.trim();
    let mut out = String::with_capacity(text.len() + 16);
    out.extend(lines[..at].iter().copied());
    if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
        let mut items: Vec<(Version, String)> = Vec::new();
        for item in inner.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            items.push((parse_item(item)?, item.to_string()));
        }
        let pos = items
            .iter()
            .position(|(v, _)| v > version)
            .unwrap_or(items.len());
        items.insert(pos, (version.clone(), version.to_string()));
        let joined: Vec<&str> = items.iter().map(|(_, s)| s.as_str()).collect();
        out.push_str(&format!("releases: [{}]", joined.join(", ")));
        if let Some(c) = comment {
            out.push_str(&format!(" {c}"));
        }
        out.push_str(if line.ends_with("\r\n") { "\r\n" } else { "\n" });
        out.extend(lines[at + 1..].iter().copied());
        return Some(out);
    }
    if !value.is_empty() {
        return None;
    }
    // A block list: the items are the `- X` lines right after.
    out.push_str(line);
    let mut rest = lines[at + 1..].iter().copied().peekable();
    let mut inserted = false;
    let mut indent = String::from("  ");
    while let Some(next) = rest.peek().copied() {
        let trimmed = next.trim_start();
        let Some(item) = trimmed.strip_prefix("- ") else {
            if trimmed.trim().is_empty() || trimmed.starts_with('#') {
                out.push_str(next);
                rest.next();
                continue;
            }
            break;
        };
        indent = next[..next.len() - trimmed.len()].to_string();
        let (item, _) = split_comment(item.trim_end_matches(['\n', '\r']));
        let v = parse_item(item.trim())?;
        if !inserted && &v > version {
            out.push_str(&format!("{indent}- {version}\n"));
            inserted = true;
        }
        out.push_str(next);
        rest.next();
    }
    if !inserted {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("{indent}- {version}\n"));
    }
    out.extend(rest);
    Some(out)
}

/// A value and its trailing `# comment`, if any.
fn split_comment(s: &str) -> (&str, Option<&str>) {
    match s.find(" #") {
        Some(i) => (&s[..i], Some(s[i + 1..].trim())),
        None => (s, None),
    }
}

/// A version item, plain or quoted.
fn parse_item(item: &str) -> Option<Version> {
    let unquoted = item.trim_matches(|c| c == '"' || c == '\'');
    Version::parse(unquoted).ok()
}

/// Replaces `path` with `bytes` through a new temporary file beside it
/// (created exclusively, synced, then renamed over it).
fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), Diagnostic> {
    let failed = |e: &dyn std::fmt::Display| {
        Diagnostic::new(
            rule::NEW_RELEASE_INVALID,
            format!("cannot write {}: {e}", path.display()),
        )
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".basepress-new-release-")
        .tempfile_in(dir)
        .map_err(|e| failed(&e))?;
    std::io::Write::write_all(&mut tmp, bytes).map_err(|e| failed(&e))?;
    tmp.as_file().sync_all().map_err(|e| failed(&e))?;
    tmp.persist(path).map_err(|e| failed(&e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn adds_to_a_flow_list_in_order() {
        let text = "name: x\nreleases: [1.27.0, 1.28.0, \"1.30.0\"]  # all of them\nuser: []\n";
        assert_eq!(
            add_release(text, &v("1.31.0")).unwrap(),
            "name: x\nreleases: [1.27.0, 1.28.0, \"1.30.0\", 1.31.0] # all of them\nuser: []\n"
        );
        assert_eq!(
            add_release(text, &v("1.29.1")).unwrap(),
            "name: x\nreleases: [1.27.0, 1.28.0, 1.29.1, \"1.30.0\"] # all of them\nuser: []\n"
        );
    }

    #[test]
    fn adds_to_a_block_list_in_order() {
        let text = "releases:\n    - 1.0.0\n    # a comment\n    - 1.2.0\nuser: []\n";
        assert_eq!(
            add_release(text, &v("1.1.0")).unwrap(),
            "releases:\n    - 1.0.0\n    # a comment\n    - 1.1.0\n    - 1.2.0\nuser: []\n"
        );
        assert_eq!(
            add_release(text, &v("2.0.0")).unwrap(),
            "releases:\n    - 1.0.0\n    # a comment\n    - 1.2.0\n    - 2.0.0\nuser: []\n"
        );
        assert_eq!(
            add_release("releases:\n- 1.0.0", &v("1.0.1")).unwrap(),
            "releases:\n- 1.0.0\n- 1.0.1\n"
        );
    }

    #[test]
    fn leaves_other_forms_alone() {
        assert_eq!(add_release("name: x\n", &v("1.0.0")), None);
        assert_eq!(
            add_release("releases: [1.0.0,\n  1.1.0]\n", &v("1.2.0")),
            None
        );
        assert_eq!(add_release("releases: [latest]\n", &v("1.2.0")), None);
    }
}
