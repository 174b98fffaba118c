//! The released versions, as `bases/published.lock` records them: every
//! released base file and its SHA-256.
//!
//! Installers pin a version and download it again months later, so a
//! released version must never change: the lock records what was released,
//! and every build compares the bases with it. A version enters the lock
//! only through `basepress release`, after every check passed.

use semver::Version;
use std::collections::BTreeMap;

/// Where the lock is, relative to the project root.
pub const FILE: &str = "bases/published.lock";

const HEADER: &str = "# Released bases: version, file, SHA-256. A released version is immutable:\n\
# installers pin it. `basepress release vX.Y.Z` adds one; do not edit by hand.\n";

/// Released versions and their files' SHA-256, by file name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lock {
    pub versions: BTreeMap<Version, BTreeMap<String, String>>,
}

impl Lock {
    /// Records a version as released with its files' names and SHA-256.
    pub fn add<'a>(&mut self, version: &Version, files: impl Iterator<Item = (&'a str, &'a str)>) {
        self.versions.insert(
            version.clone(),
            files
                .map(|(name, sha)| (name.to_string(), sha.to_string()))
                .collect(),
        );
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
}
