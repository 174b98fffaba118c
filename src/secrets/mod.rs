//! A secret scanner: finds credentials in bytes, by rules kept as data
//! ([`RULES_YAML`], in the style of gitleaks' rule set).
//!
//! A [`Scanner`] is compiled once and shared (it is `Send + Sync`). A scan
//! makes one keyword pass over the bytes (Aho-Corasick, ASCII
//! case-insensitive), then runs only the rules whose keywords occur; each
//! match must pass its rule's value tests (entropy, character classes,
//! names and placeholders) to become a [`Finding`]. Bytes need not be
//! UTF-8: rules run on bytes, so a key in a Latin-1 file is found. A
//! finding carries where it is and a redacted form of what matched, never
//! the secret itself.
//!
//! ```
//! let scanner = basepress::secrets::Scanner::new();
//! let text = format!("RUNNER_BOOTSTRAP_TOKEN=wst_{}", "9f8a7b6c5d4e3f2a1b0c");
//! let found = scanner.scan(text.as_bytes());
//! assert_eq!(found[0].rule.id, "generic-secret");
//! assert!(!found[0].redacted.contains("9f8a7b"));
//! assert!(scanner.scan(b"RUNNER_BOOTSTRAP_TOKEN=<token>").is_empty());
//! ```

mod markup;
mod values;

use aho_corasick::AhoCorasick;
use base64::Engine as _;
use regex::bytes::{Regex, RegexBuilder};
use regex_automata::util::captures::Captures;
use regex_automata::{meta, Input};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The rules basepress ships, as data.
pub const RULES_YAML: &str = include_str!("rules.yaml");

/// The most findings one scan reports: past that, the file is plainly not
/// publishable, and the rest would only cost time.
pub const MAX_FINDINGS: usize = 1000;

/// A rule as written in the rules file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleData {
    /// Stable, kebab-case: names the rule in findings.
    pub id: String,
    /// What the rule finds, for people.
    pub description: String,
    pub regex: String,
    #[serde(default)]
    pub secret_group: usize,
    #[serde(default)]
    pub key_group: Option<usize>,
    #[serde(default)]
    pub keywords: Vec<String>,
    /// Joined, a text the rule must find.
    pub example: Vec<String>,
    /// Joined each, texts the rule must leave alone.
    #[serde(default)]
    pub not_examples: Vec<Vec<String>>,
    #[serde(default)]
    pub entropy: Option<f64>,
    #[serde(default)]
    pub min_len: Option<usize>,
    #[serde(default)]
    pub min_classes: Option<u8>,
    #[serde(default)]
    pub skip_names: bool,
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub allow_key: Vec<String>,
    #[serde(default)]
    pub decode: Option<Decode>,
    #[serde(default)]
    pub decoded_contains: Option<String>,
    #[serde(default)]
    pub rescan: bool,
    /// Where the regex runs: near the rule's anchors only, not over the
    /// whole file.
    #[serde(default)]
    pub window: Option<WindowData>,
}

/// Where a rule's matches can lie, as the rules file says it: every match
/// starts on the line where one of its anchors starts (or right after the
/// line break before it) and ends on the line where that anchor ends, or
/// `lines_after` lines below, or on an indented line that follows them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowData {
    /// A regex that every match holds (found left to right without
    /// overlaps); without one, the anchors are the rule's keywords.
    #[serde(default)]
    pub anchor: Option<String>,
    #[serde(default)]
    pub lines_after: usize,
}

/// How a rule's secret is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decode {
    Base64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    rules: Vec<RuleData>,
}

/// A rules file that cannot be used, and why.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("the rules file is not valid: {0}")]
    Syntax(String),
    #[error("rule {rule}: {what}")]
    Rule { rule: String, what: String },
}

/// A credential found.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding<'s> {
    /// The rule that found it.
    pub rule: &'s RuleData,
    /// For a base64 value that decodes to a credential
    /// (`base64-encoded-credential`), the rule that found the credential
    /// in the decoded bytes.
    pub decoded: Option<&'s RuleData>,
    /// Byte offset of the match in the scanned bytes.
    pub offset: usize,
    /// Length in bytes of the match.
    pub len: usize,
    /// 1-based line of the match.
    pub line: usize,
    /// 1-based column of the match, in characters (a byte that is not
    /// UTF-8 counts as one).
    pub column: usize,
    /// What matched, with the secret cut to its first characters and its
    /// length: `aws_secret_access_key: r8Jk...(40 chars)`. Printable ASCII
    /// only: safe to print on a terminal.
    pub redacted: String,
}

impl Finding<'_> {
    /// A one-line message: the rule's description and the redacted match.
    pub fn message(&self) -> String {
        match self.decoded {
            Some(inner) => format!(
                "{} ({}, found in the decoded value): {}",
                self.rule.description.trim_end_matches('.'),
                inner.id,
                self.redacted
            ),
            None => format!(
                "{}: {}",
                self.rule.description.trim_end_matches('.'),
                self.redacted
            ),
        }
    }
}

struct Rule {
    data: RuleData,
    regex: meta::Regex,
    allow: Vec<Regex>,
    allow_key: Vec<Regex>,
    window: Option<Window>,
}

/// A rule's window, compiled (see [`WindowData`]).
struct Window {
    /// `None`: the rule's keywords are its anchors.
    anchor: Option<Regex>,
    lines_after: usize,
}

/// The compiled rules. Build it once ([`Scanner::new`]) and share it.
pub struct Scanner {
    rules: Vec<Rule>,
    /// Every keyword of every rule.
    keywords: AhoCorasick,
    /// For each keyword, the rules it triggers.
    triggers: Vec<Vec<usize>>,
    /// Rules without keywords: they run on every input.
    always: Vec<usize>,
    /// By keyword: whether it anchors a rule's window, so that the
    /// keyword pass keeps where it occurs.
    windowed_words: Vec<bool>,
    base64: base64::engine::GeneralPurpose,
}

/// A match before positions are resolved.
struct Hit {
    rule: usize,
    decoded: Option<usize>,
    start: usize,
    end: usize,
    redacted: String,
}

impl Default for Scanner {
    fn default() -> Self {
        Self::new()
    }
}

impl Scanner {
    /// The scanner with the rules basepress ships ([`RULES_YAML`]).
    pub fn new() -> Scanner {
        // The shipped rules are data compiled into the binary, and a unit
        // test compiles them and runs every example: they cannot fail here.
        Scanner::from_yaml(RULES_YAML).expect("the shipped secret rules compile")
    }

    /// A scanner with the rules of a rules file (the format of
    /// [`RULES_YAML`]).
    pub fn from_yaml(text: &str) -> Result<Scanner, RulesError> {
        let file: RulesFile =
            crate::yaml::from_str(text).map_err(|e| RulesError::Syntax(e.to_string()))?;
        Scanner::from_rules(file.rules)
    }

    /// A scanner with `rules`, in order of precedence.
    pub fn from_rules(rules: Vec<RuleData>) -> Result<Scanner, RulesError> {
        let bad = |rule: &RuleData, what: String| RulesError::Rule {
            rule: rule.id.clone(),
            what,
        };
        let compile = |rule: &RuleData, re: &str| {
            RegexBuilder::new(re)
                .unicode(false)
                .size_limit(32 << 20)
                .build()
                .map_err(|e| bad(rule, format!("the regex {re:?} does not compile: {e}")))
        };
        let mut compiled = Vec::with_capacity(rules.len());
        let mut words: Vec<String> = Vec::new();
        let mut triggers: Vec<Vec<usize>> = Vec::new();
        let mut always = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (i, data) in rules.into_iter().enumerate() {
            if !seen.insert(data.id.clone()) {
                return Err(bad(&data, "the id is used twice".into()));
            }
            let regex = meta::Regex::builder()
                .syntax(
                    regex_automata::util::syntax::Config::new()
                        .unicode(false)
                        .utf8(false),
                )
                .configure(
                    meta::Regex::config()
                        .utf8_empty(false)
                        .nfa_size_limit(Some(32 << 20)),
                )
                .build(&data.regex)
                .map_err(|e| {
                    bad(
                        &data,
                        format!("the regex {:?} does not compile: {e}", data.regex),
                    )
                })?;
            let groups = regex.captures_len();
            for g in std::iter::once(data.secret_group).chain(data.key_group) {
                if g >= groups {
                    return Err(bad(&data, format!("the regex has no group {g}")));
                }
            }
            if data.example.is_empty() {
                return Err(bad(&data, "a rule needs an example".into()));
            }
            if data.rescan && data.decode.is_none() {
                return Err(bad(&data, "rescan needs decode".into()));
            }
            let allow = data
                .allow
                .iter()
                .map(|re| compile(&data, re))
                .collect::<Result<_, _>>()?;
            let allow_key = data
                .allow_key
                .iter()
                .map(|re| compile(&data, re))
                .collect::<Result<_, _>>()?;
            let window = match &data.window {
                None => None,
                Some(w) => {
                    if w.anchor.is_none() && data.keywords.is_empty() {
                        return Err(bad(&data, "a window needs an anchor or keywords".into()));
                    }
                    Some(Window {
                        anchor: w.anchor.as_ref().map(|a| compile(&data, a)).transpose()?,
                        lines_after: w.lines_after,
                    })
                }
            };
            if data.keywords.is_empty() {
                always.push(i);
            }
            for k in &data.keywords {
                let k = k.to_ascii_lowercase();
                if k.is_empty() {
                    return Err(bad(&data, "an empty keyword".into()));
                }
                match words.iter().position(|w| *w == k) {
                    Some(at) => triggers[at].push(i),
                    None => {
                        words.push(k);
                        triggers.push(vec![i]);
                    }
                }
            }
            compiled.push(Rule {
                data,
                regex,
                allow,
                allow_key,
                window,
            });
        }
        let keywords = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&words)
            .map_err(|e| RulesError::Syntax(format!("the keywords do not compile: {e}")))?;
        let base64 = base64::engine::GeneralPurpose::new(
            &base64::alphabet::STANDARD,
            base64::engine::GeneralPurposeConfig::new()
                .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
                .with_decode_allow_trailing_bits(true),
        );
        let windowed_words = triggers
            .iter()
            .map(|rules| {
                rules.iter().any(|&r| {
                    compiled[r]
                        .window
                        .as_ref()
                        .is_some_and(|w| w.anchor.is_none())
                })
            })
            .collect();
        Ok(Scanner {
            rules: compiled,
            keywords,
            windowed_words,
            triggers,
            always,
            base64,
        })
    }

    /// The rules, in order of precedence.
    pub fn rules(&self) -> impl Iterator<Item = &RuleData> {
        self.rules.iter().map(|r| &r.data)
    }

    /// The credentials in `bytes`, in order of position.
    pub fn scan(&self, bytes: &[u8]) -> Vec<Finding<'_>> {
        let mut hits = Vec::new();
        self.collect(bytes, true, &mut hits);
        self.resolve(bytes, hits)
    }

    /// The credentials in an HTML or XML file: in the text a browser
    /// shows, where highlighting spans and character references (`&quot;`)
    /// no longer split what a rule reads, and in its tags (attributes,
    /// comments). Positions are in the file.
    pub fn scan_html(&self, bytes: &[u8]) -> Vec<Finding<'_>> {
        let Some(views) = markup::views(bytes) else {
            return self.scan(bytes);
        };
        let mut hits = Vec::new();
        for view in [&views.text, &views.tags] {
            let mut found = Vec::new();
            self.collect(&view.bytes, true, &mut found);
            for mut h in found {
                let start = view.origin(h.start, bytes.len());
                // The end is just past the match's last byte.
                let end = match h.end.checked_sub(1) {
                    Some(last) => view.origin(last, bytes.len()) + 1,
                    None => start,
                };
                h.start = start;
                h.end = end.max(start);
                hits.push(h);
            }
        }
        self.resolve(bytes, hits)
    }

    /// [`Scanner::scan_html`] for files whose name ends in `.html`,
    /// `.htm`, `.xml` or `.svg`, [`Scanner::scan`] for the others.
    pub fn scan_file(&self, name: &str, bytes: &[u8]) -> Vec<Finding<'_>> {
        let lower = name.to_ascii_lowercase();
        if [".html", ".htm", ".xml", ".svg"]
            .iter()
            .any(|e| lower.ends_with(e))
        {
            self.scan_html(bytes)
        } else {
            self.scan(bytes)
        }
    }

    /// The keyword pass: which rules may match `bytes` (those whose
    /// keywords occur in it, and those without keywords) and, when a
    /// rule's window is anchored on keywords, where each keyword occurs.
    fn triggered(&self, bytes: &[u8]) -> Triggered {
        let mut on = vec![false; self.rules.len()];
        for &i in &self.always {
            on[i] = true;
        }
        let mut keywords = Vec::new();
        let recording = self.windowed_words.contains(&true);
        let mut left = self.triggers.len();
        let mut word_seen = vec![false; self.triggers.len()];
        for m in self.keywords.find_overlapping_iter(bytes) {
            let w = m.pattern().as_usize();
            if self.windowed_words[w] {
                keywords.push((w, m.start(), m.end()));
            }
            if !word_seen[w] {
                word_seen[w] = true;
                for &r in &self.triggers[w] {
                    on[r] = true;
                }
                left -= 1;
                if left == 0 && !recording {
                    break;
                }
            }
        }
        Triggered { on, keywords }
    }

    /// The matches of every triggered rule that pass its tests. `outer`:
    /// whether base64 values are decoded and scanned again (not inside a
    /// decoded value: one level only).
    fn collect(&self, bytes: &[u8], outer: bool, out: &mut Vec<Hit>) {
        let triggered = self.triggered(bytes);
        for (i, rule) in self.rules.iter().enumerate() {
            if !triggered.on[i] || (rule.data.rescan && !outer) {
                continue;
            }
            let spans: Vec<(usize, usize)> = match &rule.window {
                None => vec![(0, bytes.len())],
                Some(window) => {
                    let anchors: Vec<(usize, usize)> = match &window.anchor {
                        Some(anchor) => anchor
                            .find_iter(bytes)
                            .map(|m| (m.start(), m.end()))
                            .collect(),
                        None => triggered
                            .keywords
                            .iter()
                            .filter(|(w, _, _)| self.triggers[*w].contains(&i))
                            .map(|&(_, start, end)| (start, end))
                            .collect(),
                    };
                    regions(bytes, anchors, window.lines_after)
                }
            };
            let mut caps = rule.regex.create_captures();
            for (start, end) in spans {
                let mut at = start;
                while at < end {
                    rule.regex
                        .search_captures(&Input::new(bytes).span(at..end), &mut caps);
                    let Some(m) = caps.get_match() else {
                        break;
                    };
                    if out.len() >= MAX_FINDINGS * 4 {
                        return;
                    }
                    if let Some(hit) = self.check(i, bytes, &caps) {
                        out.push(hit);
                    }
                    at = if m.is_empty() { m.end() + 1 } else { m.end() };
                }
            }
        }
    }

    /// A match of rule `i`, when its value passes the rule's tests.
    fn check(&self, i: usize, bytes: &[u8], caps: &Captures) -> Option<Hit> {
        let rule = &self.rules[i];
        let d = &rule.data;
        let whole = caps.get_group(0)?;
        let secret = caps.get_group(d.secret_group)?;
        let value = &bytes[secret.range()];
        if values::is_placeholder(value) {
            return None;
        }
        if d.min_len.is_some_and(|n| value.len() < n) {
            return None;
        }
        if d.entropy.is_some_and(|e| values::entropy(value) < e) {
            return None;
        }
        if d.min_classes.is_some_and(|n| values::classes(value) < n) {
            return None;
        }
        if d.skip_names && values::reads_as_name(value) {
            return None;
        }
        if rule.allow.iter().any(|re| re.is_match(value)) {
            return None;
        }
        if let Some(key) = d.key_group.and_then(|g| caps.get_group(g)) {
            if rule
                .allow_key
                .iter()
                .any(|re| re.is_match(&bytes[key.range()]))
            {
                return None;
            }
        }
        let mut decoded_by = None;
        if d.decode == Some(Decode::Base64) {
            let decoded = self.decode_base64(value)?;
            if let Some(needle) = &d.decoded_contains {
                memchr::memmem::find(&decoded, needle.as_bytes())?;
            }
            if d.rescan {
                let mut inner = Vec::new();
                self.collect(&decoded, false, &mut inner);
                let first = inner.iter().min_by_key(|h| (h.rule, h.start))?;
                decoded_by = Some(first.rule);
            }
        }
        // A finding starts where the match shows something: the leading
        // delimiter some rules match is left out.
        let start = match d.key_group.and_then(|g| caps.get_group(g)) {
            Some(key) => key.start,
            None => whole.start + leading_delimiters(&bytes[whole.range()]),
        }
        .min(secret.start);
        Some(Hit {
            rule: i,
            decoded: decoded_by,
            start,
            end: whole.end.max(secret.end),
            redacted: redact(&bytes[start..secret.start], value),
        })
    }

    /// The bytes a base64 value stands for (padding optional; a value cut
    /// in the middle, as in a block scalar's first line, decodes as far as
    /// it goes).
    fn decode_base64(&self, value: &[u8]) -> Option<Vec<u8>> {
        // A value wrapped in lines decodes as one, as Kubernetes reads it.
        let joined: Vec<u8>;
        let value = if value.iter().any(u8::is_ascii_whitespace) {
            joined = value
                .iter()
                .copied()
                .filter(|b| !b.is_ascii_whitespace())
                .collect();
            &joined[..]
        } else {
            value
        };
        let trimmed: &[u8] = {
            let end = value.iter().rposition(|&b| b != b'=').map_or(0, |p| p + 1);
            &value[..end]
        };
        // All of it: matches do not overlap, so what a file's values
        // decode to is at most three quarters of the file, scanned once.
        let usable = trimmed.len() - trimmed.len() % 4;
        let tail = &trimmed[usable..];
        let mut decoded = self.base64.decode(&trimmed[..usable]).ok()?;
        // Two or three characters left over still carry one or two bytes.
        if tail.len() >= 2 {
            if let Ok(more) = self.base64.decode(tail) {
                decoded.extend(more);
            }
        }
        Some(decoded)
    }

    /// Findings with lines and columns, overlaps resolved: where two
    /// rules found the same bytes, the earlier rule names the finding.
    fn resolve<'s>(&'s self, bytes: &[u8], mut hits: Vec<Hit>) -> Vec<Finding<'s>> {
        hits.sort_by_key(|h| (h.rule, h.start, h.end));
        // Kept spans, by start.
        let mut kept: BTreeMap<usize, Hit> = BTreeMap::new();
        for h in hits {
            let overlaps_before = kept
                .range(..=h.start)
                .next_back()
                .is_some_and(|(_, k)| k.end > h.start);
            let overlaps_after = kept
                .range(h.start..)
                .next()
                .is_some_and(|(&s, _)| s < h.end.max(h.start + 1));
            if !overlaps_before && !overlaps_after {
                kept.insert(h.start, h);
            }
        }
        let mut out = Vec::with_capacity(kept.len().min(MAX_FINDINGS));
        let mut line = 1;
        let mut line_start = 0;
        let mut counted = 0;
        for (_, h) in kept.into_iter().take(MAX_FINDINGS) {
            let start = h.start.min(bytes.len());
            for (k, &b) in bytes[counted..start].iter().enumerate() {
                if b == b'\n' {
                    line += 1;
                    line_start = counted + k + 1;
                }
            }
            counted = start;
            let column = 1 + bytes[line_start..start]
                .iter()
                .filter(|&&b| b & 0xC0 != 0x80)
                .count();
            out.push(Finding {
                rule: &self.rules[h.rule].data,
                decoded: h.decoded.map(|r| &self.rules[r].data),
                offset: h.start,
                len: h.end - h.start,
                line,
                column,
                redacted: h.redacted,
            });
        }
        out
    }
}

/// What the keyword pass found (see [`Scanner::triggered`]).
struct Triggered {
    /// By rule: whether it may match.
    on: Vec<bool>,
    /// Each keyword occurrence, as (keyword, start, end), when some rule's
    /// window is anchored on keywords.
    keywords: Vec<(usize, usize, usize)>,
}

/// The parts of `bytes` a windowed rule's regex searches, in order and
/// apart: around each anchor (start, end), from the line break before the
/// anchor's line to the end of the line where it ends, `lines_after`
/// lines more and the indented lines that follow (see [`WindowData`]).
/// A part may be larger than that (never smaller): a match lies whole in
/// one part, and a search from a part's start finds what a search of the
/// whole file finds there.
fn regions(
    bytes: &[u8],
    mut anchors: Vec<(usize, usize)>,
    lines_after: usize,
) -> Vec<(usize, usize)> {
    // Just past the line break that ends the line holding `i`.
    let past_line =
        |i: usize| memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n + 1);
    anchors.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::new();
    // The end of the latest anchor's line, and of its part.
    let mut latest = (0, 0);
    for (start, end) in anchors {
        let covered = out.last().map_or(0, |r| r.1).min(start);
        // The line break before the anchor's line: searched back to the
        // part so far only, which a line that starts earlier joins.
        let from = memchr::memrchr(b'\n', &bytes[covered..start])
            .map_or(covered.saturating_sub(1), |n| covered + n);
        let last = end.saturating_sub(1).max(start);
        if last >= latest.0 {
            let line_end = past_line(last);
            let mut to = line_end;
            for _ in 0..lines_after {
                if to < bytes.len() {
                    to = past_line(to);
                }
            }
            // The indented lines the previous anchor's part walked over
            // need no second walk (a block of such lines would cost the
            // square of its length).
            to = to.max(latest.1);
            while to < bytes.len() && matches!(bytes[to], b' ' | b'\t') {
                to = past_line(to);
            }
            latest = (line_end, to);
        }
        match out.last_mut() {
            Some(r) if from <= r.1 => r.1 = r.1.max(latest.1),
            _ => out.push((from, latest.1)),
        }
    }
    out
}

/// How many bytes of delimiter (space, quotes, brackets) a match starts
/// with.
fn leading_delimiters(m: &[u8]) -> usize {
    m.iter()
        .take_while(|&&b| b.is_ascii_whitespace() || b"\"'{,`".contains(&b))
        .count()
}

/// The first line of `prefix` (made printable and cut) and the secret cut
/// to its first characters: `token: ghp_...(40 chars)`,
/// `-----BEGIN RSA PRIVATE KEY----- MIIE...(64 chars)`. A short secret
/// shows none of its characters.
fn redact(prefix: &[u8], secret: &[u8]) -> String {
    const PREFIX_MAX: usize = 48;
    // Lines between the key and the secret (a PEM's headers, a block
    // scalar's indentation) are left out.
    let line_end = [
        memchr::memchr(b'\n', prefix),
        memchr::memmem::find(prefix, b"\\n"),
    ]
    .into_iter()
    .flatten()
    .min();
    let line = line_end.map_or(prefix, |end| &prefix[..end]);
    let shown_prefix = &line[line.len().saturating_sub(PREFIX_MAX)..];
    let mut out = String::new();
    if shown_prefix.len() < line.len() {
        out.push_str("...");
    }
    out.push_str(&printable(shown_prefix));
    if line_end.is_some() && !out.ends_with(' ') {
        out.push(' ');
    }
    let shown = if secret.len() >= 16 { 4 } else { 0 };
    out.push_str(&printable(&secret[..shown]));
    out.push_str(&format!("...({} chars)", secret.len()));
    out
}

/// Printable ASCII: whitespace runs become one space, other bytes `?`.
fn printable(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut space = false;
    for &b in bytes {
        if b.is_ascii_whitespace() {
            if !space {
                out.push(' ');
            }
            space = true;
            continue;
        }
        space = false;
        out.push(if b.is_ascii_graphic() { b as char } else { '?' });
    }
    out
}

#[cfg(test)]
mod tests;
