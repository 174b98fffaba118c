//! The one error type of image reading: a message with the rule it breaks.

use crate::diagnostics::{rule, Diagnostic, Rule};
use std::fmt;

/// Why an image could not be read. Every error names a rule of
/// [`crate::diagnostics::rule`], so scripts can tell a registry that
/// refused credentials from a blob whose bytes do not match its digest.
#[derive(Debug, Clone)]
pub struct Error {
    pub rule: &'static Rule,
    pub message: String,
    /// A remedy specific to this error; the rule's own otherwise.
    pub help: Option<String>,
}

impl Error {
    pub fn new(rule: &'static Rule, message: impl Into<String>) -> Self {
        Error {
            rule,
            message: message.into(),
            help: None,
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// The source string does not name an image basepress can read.
    pub fn source(message: impl Into<String>) -> Self {
        Error::new(rule::IMAGE_SOURCE_INVALID, message)
    }

    /// The image, its tag or one of its blobs cannot be had.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Error::new(rule::IMAGE_UNAVAILABLE, message)
    }

    /// The bytes of the image are wrong: a digest mismatch, broken JSON,
    /// a truncated layer, an entry that climbs out of the root.
    pub fn corrupt(message: impl Into<String>) -> Self {
        Error::new(rule::IMAGE_CORRUPT, message)
    }

    /// A media type or format basepress does not read.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Error::new(rule::IMAGE_UNSUPPORTED, message)
    }

    /// A bound on sizes or counts was crossed (a decompression bomb).
    pub fn too_large(message: impl Into<String>) -> Self {
        Error::new(rule::IMAGE_TOO_LARGE, message)
    }

    /// Prefixes the message with where the error happened.
    pub fn context(mut self, what: impl fmt::Display) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }

    /// The error as a finding, for the report of `check` or `image inspect`.
    pub fn diagnostic(&self) -> Diagnostic {
        let d = Diagnostic::new(self.rule, self.message.clone());
        match &self.help {
            Some(h) => d.help(h.clone()),
            None => d,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.message, self.rule.id)
    }
}

impl std::error::Error for Error {}
