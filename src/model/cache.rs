//! The record a build leaves in its output folder of what each docs
//! version's files were made from, so that the next build into the same
//! folder can reuse the files of a version that did not change instead of
//! rendering them again.

use crate::diagnostics::{rule, Diagnostic, Location, Severity};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Where the record lives, below the output folder.
pub const RECORD_PATH: &str = ".basepress-cache.json";

/// The version of the record's format; another one is not read.
pub const FORMAT: u32 = 2;

/// A file's size and modification time (nanoseconds since the epoch) as
/// the build that recorded it found them: a file is reused only while it
/// still has them, so that one truncated or edited since is made again.
pub type Stamp = [u64; 2];

/// The whole record.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BuildRecord {
    pub format: u32,
    /// By docs version id (`next`, `1.29`, `latest`).
    pub versions: BTreeMap<String, VersionRecord>,
}

/// What one docs version's output was made from, and what it is.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct VersionRecord {
    /// Its fingerprint, in hex (see `analyze::fingerprint`).
    pub digest: String,
    /// The site paths of the files it published.
    pub files: Vec<String>,
    /// The stamp of each of `files`, in the same order.
    pub stamps: Vec<Stamp>,
    /// The findings located in its pages, as the build reported them.
    pub findings: Vec<Finding>,
    /// The other docs versions its pages link into with an anchor: it is
    /// reused only when they are too (their headings decide its findings).
    pub links_into: Vec<String>,
}

/// A finding, as stored.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    pub rule: String,
    pub warning: bool,
    pub message: String,
    pub file: Option<PathBuf>,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub help: Option<String>,
}

impl Finding {
    pub fn of(d: &Diagnostic) -> Finding {
        Finding {
            rule: d.rule.id.to_string(),
            warning: d.severity == Severity::Warning,
            message: d.message.clone(),
            file: d.location.as_ref().map(|l| l.file.clone()),
            line: d.location.as_ref().and_then(|l| l.line),
            column: d.location.as_ref().and_then(|l| l.column),
            help: d.help.clone(),
        }
    }

    /// The finding again; none for a rule this basepress does not have.
    pub fn diagnostic(&self) -> Option<Diagnostic> {
        let rule = rule::by_id(&self.rule)?;
        let mut d = Diagnostic::new(rule, self.message.clone());
        d.severity = if self.warning {
            Severity::Warning
        } else {
            Severity::Error
        };
        d.help = self.help.clone();
        d.location = self.file.as_ref().map(|file| Location {
            file: file.clone(),
            line: self.line,
            column: self.column,
        });
        Some(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_comes_back_as_it_was() {
        let mut d = Diagnostic::new(rule::LINK_BROKEN, "no such page")
            .at(Location::at("content/es/a.md", 3, 7))
            .help("fix it");
        d.severity = Severity::Warning;
        let back = Finding::of(&d).diagnostic().expect("a known rule");
        assert_eq!(back.rule.id, d.rule.id);
        assert_eq!(back.severity, d.severity);
        assert_eq!(back.message, d.message);
        assert_eq!(back.location, d.location);
        assert_eq!(back.help, d.help);
        let unknown = Finding {
            rule: "no-such-rule".into(),
            ..Finding::of(&d)
        };
        assert!(unknown.diagnostic().is_none());
    }
}
