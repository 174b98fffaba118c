//! Nothing that looks like a real credential is published: not in a base
//! file, not in a page, not in an asset.

use super::Context;
use crate::diagnostics::{rule, Diagnostic, Location};
use crate::model::site::Base;
use regex::{Regex, RegexSet};
use std::path::Path;

/// Kinds of credentials, each with the pattern that finds it.
///
/// Credentials are ASCII, so word boundaries are ASCII ones (`\b` below
/// is `(?-u:\b)`): unlike Unicode boundaries, they keep the regex engine
/// on its fast automata for text in any language.
const PATTERNS: &[(&str, &str)] = &[
    ("an AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("a private key", r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----"),
    ("a GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    ("a Slack token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    (
        "a bearer token",
        r"(?i)\bbearer\s+[A-Za-z0-9\-._~+/]{20,}=*",
    ),
    (
        "a secret value",
        r#"(?i)\b[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|PRIVATE_KEY)\b["']?\s*[=:]\s*["']?([^\s"'`,;)]+)"#,
    ),
];

/// The patterns, compiled once for a run.
pub struct Patterns {
    /// All patterns at once: one pass tells which of them match a text.
    any: RegexSet,
    each: Vec<(&'static str, Regex)>,
}

impl Patterns {
    pub fn new() -> Self {
        let ascii = |re: &str| re.replace(r"\b", r"(?-u:\b)");
        let each: Vec<(&'static str, Regex)> = PATTERNS
            .iter()
            .filter_map(|(what, re)| Regex::new(&ascii(re)).ok().map(|r| (*what, r)))
            .collect();
        let any = RegexSet::new(each.iter().map(|(_, re)| re.as_str()))
            .unwrap_or_else(|_| RegexSet::empty());
        Patterns { any, each }
    }
}

/// Whether a value is a placeholder a doc may show (`<token>`, `$TOKEN`,
/// `${TOKEN}`, `...`, `changeme`), or a reference rather than a value.
fn is_placeholder(value: &str) -> bool {
    let v = value.trim_matches(|c| c == '"' || c == '\'');
    let lower = v.to_ascii_lowercase();
    v.is_empty()
        || v.starts_with('<')
        || v.starts_with('$')
        || v.starts_with('{')
        || v.starts_with('[')
        || v.starts_with('*')
        || v.chars().all(|c| matches!(c, '.' | 'x' | 'X' | '*' | '-' | '_'))
        || ["changeme", "redacted", "example", "placeholder", "your-", "none", "null", "true", "false"]
            .iter()
            .any(|p| lower.starts_with(p))
        // Names of keys and files, not values: `secretKeyRef:`, `token: path`.
        || v.ends_with(':')
        || !v.chars().any(|c| c.is_ascii_digit()) && v.len() < 24
}

/// The credentials in `text`: (1-based line, column, what it looks like).
fn find(p: &Patterns, text: &str) -> Vec<(usize, usize, &'static str)> {
    let mut out = Vec::new();
    // A pattern that matches nowhere in the text matches no line of it:
    // one fast pass over the whole text spares most files the line by line
    // search with captures.
    let candidates: Vec<&(&'static str, Regex)> = p
        .any
        .matches(text)
        .into_iter()
        .filter_map(|i| p.each.get(i))
        .collect();
    if candidates.is_empty() {
        return out;
    }
    for (i, line) in text.lines().enumerate() {
        // One finding per line is enough to point at it.
        'line: for (what, re) in candidates.iter().copied() {
            for caps in re.captures_iter(line) {
                let (Some(whole), value) = (caps.get(0), caps.get(1)) else {
                    continue;
                };
                if let Some(v) = value {
                    if is_placeholder(v.as_str()) {
                        continue;
                    }
                }
                out.push((i + 1, line[..whole.start()].chars().count() + 1, *what));
                break 'line;
            }
        }
    }
    out
}

fn report(p: &Patterns, file: &Path, text: &str, out: &mut Vec<Diagnostic>) {
    for (line, column, what) in find(p, text) {
        out.push(
            Diagnostic::new(
                rule::CREDENTIAL_LEAK,
                format!("this looks like {what}, and the file is published"),
            )
            .at(Location::at(file, line, column)),
        );
    }
}

/// The published files of a base.
pub fn base(ctx: &Context, base: &Base) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for f in &base.files {
        if let Ok(text) = std::str::from_utf8(&f.bytes) {
            report(
                &ctx.tools.credentials,
                &base.dir.join(&f.name),
                text,
                &mut out,
            );
        }
    }
    out
}

/// The text of page `i`.
pub fn page(ctx: &Context, i: usize) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(page) = ctx.site.pages.get(i) else {
        return out;
    };
    report(&ctx.tools.credentials, &page.source, &page.body, &mut out);
    for d in &mut out {
        if let Some(l) = d.location.as_mut() {
            l.line = l.line.map(|n| n + page.body_line - 1);
        }
    }
    out
}

/// The project's assets.
pub fn assets(ctx: &Context) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for a in &ctx.site.assets {
        if let Ok(text) = std::str::from_utf8(&a.bytes) {
            report(&ctx.tools.credentials, &a.source, text, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Patterns;

    fn find(text: &str) -> Vec<(usize, usize, &'static str)> {
        super::find(&Patterns::new(), text)
    }

    #[test]
    fn finds_real_looking_credentials() {
        let hits = |s: &str| find(s).len();
        assert_eq!(hits("aws_access_key_id = AKIAIOSFODNN7EXAMPLE"), 1);
        assert_eq!(hits("-----BEGIN RSA PRIVATE KEY-----"), 1);
        assert_eq!(hits("-----BEGIN OPENSSH PRIVATE KEY-----"), 1);
        assert_eq!(hits("RUNNER_BOOTSTRAP_TOKEN=wst_9f8a7b6c5d4e3f2a1b0c"), 1);
        assert_eq!(
            hits("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0"),
            1
        );
        assert_eq!(hits("token: ghp_0123456789abcdefghijABCDEFGHIJ012345"), 1);
    }

    #[test]
    fn every_pattern_compiles_and_finds_next_to_other_scripts() {
        assert_eq!(Patterns::new().each.len(), super::PATTERNS.len());
        // ASCII word boundaries still hold next to non-ASCII text.
        assert_eq!(find("clave: AKIAIOSFODNN7EXAMPLE ñ").len(), 1);
        assert_eq!(find("éAKIAIOSFODNN7EXAMPLE").len(), 1);
        assert_eq!(find("xAKIAIOSFODNN7EXAMPLE").len(), 0);
    }

    #[test]
    fn leaves_placeholders_and_references_alone() {
        for ok in [
            "RUNNER_BOOTSTRAP_TOKEN=<token>",
            "RUNNER_BOOTSTRAP_TOKEN=",
            "RUNNER_BOOTSTRAP_TOKEN=${TOKEN}",
            "RUNNER_BOOTSTRAP_TOKEN=$TOKEN",
            "- serviceAccountToken:",
            "RUNNER_ATTESTATION_MODE=bootstrap-token",
            "the token is single use",
            "secretRef: whystack-agent-env",
            "SECRET=changeme",
            "expirationSeconds: 3600",
        ] {
            assert_eq!(find(ok), vec![], "{ok}");
        }
    }
}
