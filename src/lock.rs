//! `bases/published.lock`: every released base file and its SHA-256.
//!
//! Installers pin a version and download it again months later, so a
//! released version must never change: the lock records what was released,
//! and every build compares the bases with it. A version enters the lock
//! only through `basepress release`, after every check passed.

use crate::diagnostics::{rule, Diagnostic, Location};
use crate::site::Base;
use semver::Version;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const FILE: &str = "bases/published.lock";

const HEADER: &str = "# Released bases: version, file, SHA-256. A released version is immutable:\n\
# installers pin it. `basepress release vX.Y.Z` adds one; do not edit by hand.\n";

/// Released versions and their files' SHA-256, by file name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lock {
    pub versions: BTreeMap<Version, BTreeMap<String, String>>,
}

impl Lock {
    /// Reads the lock of the project at `root`; an absent file is an empty
    /// lock.
    pub fn load(root: &Path) -> Result<Lock, Diagnostic> {
        let text = match std::fs::read_to_string(root.join(FILE)) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lock::default()),
            Err(e) => {
                return Err(
                    Diagnostic::new(rule::IO_UNREADABLE, format!("cannot read: {e}")).in_file(FILE),
                )
            }
        };
        Lock::parse(&text)
    }

    pub fn parse(text: &str) -> Result<Lock, Diagnostic> {
        let mut lock = Lock::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: &str| {
                Diagnostic::new(rule::LOCK_INVALID, format!("{why}: `{line}`"))
                    .at(Location::line(FILE, i + 1))
            };
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [version, file, sha] = fields[..] else {
                return Err(bad("a line must hold a version, a file name and a SHA-256"));
            };
            let version = version
                .strip_prefix('v')
                .and_then(|v| Version::parse(v).ok())
                .ok_or_else(|| bad("not a version like v1.30.0"))?;
            if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad("not a SHA-256 in hex"));
            }
            lock.versions
                .entry(version)
                .or_default()
                .insert(file.to_string(), sha.to_ascii_lowercase());
        }
        Ok(lock)
    }

    /// The lock as text: sorted by version, then file name.
    pub fn render(&self) -> String {
        let mut out = String::from(HEADER);
        for (v, files) in &self.versions {
            for (name, sha) in files {
                out.push_str(&format!("v{v} {name} {sha}\n"));
            }
        }
        out
    }

    /// Records `base` as released.
    pub fn add(&mut self, base: &Base) {
        self.versions.insert(
            base.version.clone(),
            base.files
                .iter()
                .map(|f| (f.name.clone(), f.sha256.clone()))
                .collect(),
        );
    }

    /// Writes the lock atomically (a temporary file renamed over it).
    pub fn save(&self, root: &Path) -> std::io::Result<()> {
        let path = root.join(FILE);
        let tmp: PathBuf = path.with_extension("lock.tmp");
        std::fs::write(&tmp, self.render())?;
        std::fs::rename(&tmp, &path)
    }

    /// What differs between the released files of `version` and `base`:
    /// one message per changed, added or removed file.
    pub fn differences(&self, version: &Version, base: &Base) -> Vec<String> {
        let Some(locked) = self.versions.get(version) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        // The signature is recorded with the release and checked by
        // `signing::attach`; it is not a file of the base.
        let signature = crate::render::kubernetes::SIGNATURE;
        for (name, sha) in locked.iter().filter(|(n, _)| n.as_str() != signature) {
            match base.file(name) {
                None => out.push(format!("`{name}` was released and is no longer published")),
                Some(f) if &f.sha256 != sha => out.push(format!(
                    "`{name}` changed since it was released (sha256 {} → {})",
                    &sha[..12],
                    &f.sha256[..12]
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
}

/// Findings about released versions: changed, or gone.
pub fn check(lock: &Lock, bases: &[Base]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for version in lock.versions.keys() {
        let Some(base) = bases.iter().find(|b| &b.version == version) else {
            out.push(
                Diagnostic::new(
                    rule::RELEASED_VERSION_MISSING,
                    format!("v{version} was released, and its base is gone from bases/"),
                )
                .in_file(FILE),
            );
            continue;
        };
        for diff in lock.differences(version, base) {
            out.push(
                Diagnostic::new(
                    rule::RELEASED_VERSION_CHANGED,
                    format!("v{version} is released and immutable, but {diff}"),
                )
                .in_file(base.dir.clone()),
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
            .in_file(base.dir.clone())
            .help(format!(
                "run `basepress release {}` once it is final",
                base.folder()
            )),
        );
    }
    out
}

/// Compares the bases with a previously deployed site folder: a version
/// deployed there must be published here, with the same bytes.
pub fn check_against(deployed: &Path, bases: &[Base]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let dir = deployed.join("kubernetes");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return vec![Diagnostic::new(
            rule::IO_UNREADABLE,
            format!(
                "cannot read {}: not a site basepress deployed",
                dir.display()
            ),
        )
        .help("pass --against the folder of the deployed site (the one holding kubernetes/)")];
    };
    let mut folders: Vec<_> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().join("base").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    for folder in folders {
        let here = bases.iter().find(|b| b.folder() == folder);
        let deployed_dir = dir.join(&folder).join("base");
        let Some(base) = here else {
            out.push(
                Diagnostic::new(
                    rule::RELEASED_VERSION_MISSING,
                    format!(
                        "{folder} is deployed at {}, and this build does not publish it",
                        deployed.display()
                    ),
                )
                .help("restore bases/".to_string() + &folder + ": installers may have pinned it"),
            );
            continue;
        };
        let mut ours: BTreeMap<String, Vec<u8>> = base
            .files
            .iter()
            .map(|f| (f.name.clone(), f.bytes.clone()))
            .collect();
        ours.insert(
            "SHA256SUMS".into(),
            crate::render::kubernetes::sha256sums(base).into_bytes(),
        );
        ours.insert(
            "files.txt".into(),
            crate::render::kubernetes::files_txt(base).into_bytes(),
        );
        if let Some(sig) = &base.signature {
            ours.insert(
                crate::render::kubernetes::SIGNATURE.into(),
                sig.clone().into_bytes(),
            );
        }
        let mut theirs: Vec<_> = std::fs::read_dir(&deployed_dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        theirs.sort();
        for name in &theirs {
            let bytes = std::fs::read(deployed_dir.join(name)).unwrap_or_default();
            let problem = match ours.get(name) {
                None => Some(format!("`{name}` is deployed and no longer published")),
                Some(b) if *b != bytes => Some(format!("`{name}` differs from the deployed one")),
                Some(_) => None,
            };
            if let Some(p) = problem {
                out.push(
                    Diagnostic::new(
                        rule::RELEASED_VERSION_CHANGED,
                        format!("{folder} is deployed, but {p}"),
                    )
                    .in_file(base.dir.clone()),
                );
            }
        }
        for name in ours.keys().filter(|n| !theirs.contains(n)) {
            out.push(
                Diagnostic::new(
                    rule::RELEASED_VERSION_CHANGED,
                    format!("{folder} is deployed, but `{name}` was added since"),
                )
                .in_file(base.dir.clone()),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_render_round_trip_and_errors() {
        let sha = "a".repeat(64);
        let text = format!("# c\nv1.30.0 b.yaml {sha}\nv1.29.0 a.yaml {sha}\n");
        let lock = Lock::parse(&text).unwrap();
        assert_eq!(lock.versions.len(), 2);
        let rendered = lock.render();
        assert!(rendered.ends_with(&format!("v1.29.0 a.yaml {sha}\nv1.30.0 b.yaml {sha}\n")));
        assert_eq!(Lock::parse(&rendered).unwrap(), lock);

        let e = Lock::parse("v1.29.0 a.yaml nothex\n").unwrap_err();
        assert_eq!(e.rule.id, "lock-invalid");
        assert_eq!(e.location.unwrap().line, Some(1));
        assert!(Lock::parse("1.29.0 a.yaml x y\n").is_err());
    }
}
