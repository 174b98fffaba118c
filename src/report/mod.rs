//! Findings as people and programs read them: text in the style of rustc
//! (with the offending line quoted), one JSON document, GitHub Actions
//! workflow commands, and the formats CI systems already read: SARIF 2.1.0
//! for code scanning ([`sarif`]) and JUnit XML for test reports
//! ([`junit`]). Every format carries the same findings in the same order.
//! What a finding carries from the inputs (a value, a line of a file) is
//! cut and its control characters escaped here, before it reaches a
//! terminal or a log.

pub mod junit;
pub mod sarif;

use crate::diagnostics::{exit_code, Class, Diagnostic, Location, Severity};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Output formats for findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people, in the style of rustc and cargo.
    Text,
    /// One JSON document, for scripts (schema in README.md).
    Json,
    /// GitHub Actions workflow commands (`::error file=…`).
    Github,
    /// SARIF 2.1.0, for code scanning (GitHub, GitLab, Azure DevOps).
    Sarif,
    /// JUnit XML, for CI test reports (GitLab, Jenkins).
    Junit,
}

/// The longest a quoted value (between backticks or double quotes) may be
/// in a printed message, in characters.
const QUOTE_MAX: usize = 80;
/// The longest a line of a printed message may be, in characters: room
/// for the longest message's words and a few values cut to [`QUOTE_MAX`]
/// (a missing command's names its container, command, image, platform,
/// the reason and the digest), not for a whole input line.
const LINE_MAX: usize = 640;
/// The longest a line of a printed remedy may be: remedies list names
/// (every variable a page can use), not lines of a file.
const HELP_LINE_MAX: usize = 2_000;
/// The most lines a printed message may have.
const LINES_MAX: usize = 24;

/// A message as printed: values quoted in it cut to [`QUOTE_MAX`], each
/// line to [`LINE_MAX`], and at most [`LINES_MAX`] lines. Messages embed
/// values from the inputs (a key, a line of an env file, a YAML error's
/// value); this is where none of them can echo a whole file.
pub fn cut_message(message: &str) -> String {
    cut_lines(message, LINE_MAX)
}

/// [`cut_message`] for a remedy, whose lines may be longer.
pub fn cut_help(help: &str) -> String {
    cut_lines(help, HELP_LINE_MAX)
}

fn cut_lines(message: &str, line_max: usize) -> String {
    let mut lines = message.lines();
    let mut out = Vec::new();
    for line in lines.by_ref().take(LINES_MAX) {
        out.push(cut_line(line, line_max));
    }
    if lines.next().is_some() {
        out.push("…".to_string());
    }
    out.join("\n")
}

fn cut_line(line: &str, line_max: usize) -> String {
    let mut out = String::with_capacity(line.len().min(line_max * 4));
    let mut quote: Option<(char, usize)> = None;
    let mut chars = 0;
    for c in line.chars() {
        match quote {
            Some((q, n)) if c != q => {
                if n == QUOTE_MAX {
                    out.push('…');
                    chars += 1;
                }
                quote = Some((q, n + 1));
                if n >= QUOTE_MAX {
                    continue;
                }
            }
            Some(_) => quote = None,
            None if c == '`' || c == '"' => quote = Some((c, 0)),
            None => {}
        }
        if chars == line_max {
            out.push('…');
            return out;
        }
        out.push(c);
        chars += 1;
    }
    out
}

/// `text` with every control character (C0 but tab, DEL, C1) and every
/// bidirectional override escaped as `\u{..}`, so nothing from an input
/// can move the cursor, recolor or rewrite a terminal, or reorder what it
/// shows.
pub fn escape_controls(text: &str) -> String {
    escape_from(text, 0).0
}

fn is_unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// [`escape_controls`], also giving where column `column` (1-based, in
/// characters) lands in the escaped text.
fn escape_from(text: &str, column: usize) -> (String, usize) {
    if !text.chars().any(is_unsafe_char) {
        return (text.to_string(), column);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut col = column;
    for (i, c) in text.chars().enumerate() {
        if is_unsafe_char(c) {
            let escaped = format!("\\u{{{:x}}}", c as u32);
            if i + 1 < column {
                col += escaped.chars().count() - 1;
            }
            out.push_str(&escaped);
        } else {
            out.push(c);
        }
    }
    (out, col)
}

/// Renders findings for people. `root` is where the files named in
/// locations live, to quote the offending line. Messages are cut
/// ([`cut_message`]) and control characters escaped
/// ([`escape_controls`]).
pub fn render_text(diagnostics: &[Diagnostic], root: &Path, color: bool) -> String {
    let paint = |code: &str, s: &str| {
        if color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    let mut out = String::new();
    // Each file is read once, and shows its lines for its first findings
    // only: thousands of findings in one file stay linear to print.
    let mut sources: HashMap<PathBuf, Option<Source>> = HashMap::new();
    let mut shown: HashMap<PathBuf, usize> = HashMap::new();
    // A line that holds a credential is never printed whole, whichever
    // finding shows it: a CI log is read by more people than the repository.
    let secret_lines: std::collections::HashSet<(&Path, usize)> = diagnostics
        .iter()
        .filter(|d| d.rule.id == crate::diagnostics::rule::CREDENTIAL_LEAK.id)
        .filter_map(|d| d.location.as_ref())
        .filter_map(|l| Some((l.file.as_path(), l.line?)))
        .collect();
    let scanner = std::sync::OnceLock::new();
    for d in diagnostics {
        let (word, code) = match d.severity {
            Severity::Error => ("error", "1;31"),
            Severity::Warning => ("warning", "1;33"),
        };
        let head = format!("{word}[{}]", d.rule.id);
        let message = escape_controls(&cut_message(&d.message));
        let _ = writeln!(
            out,
            "{}{}",
            paint(code, &head),
            paint("1", &format!(": {message}"))
        );
        if let Some(loc) = &d.location {
            let mut place = escape_controls(&loc.file.to_string_lossy());
            if let Some(line) = loc.line {
                let _ = write!(place, ":{line}");
                if let Some(col) = loc.column {
                    let _ = write!(place, ":{col}");
                }
            }
            let _ = writeln!(out, "  {} {place}", paint("1;34", "-->"));
            let count = shown.entry(loc.file.clone()).or_default();
            *count += 1;
            let source = match loc.line {
                Some(_) if *count <= SNIPPETS_PER_FILE => sources
                    .entry(loc.file.clone())
                    .or_insert_with(|| Source::read(&root.join(&loc.file)))
                    .as_ref(),
                _ => None,
            };
            if let Some(text) = loc.line.and_then(|n| source.and_then(|s| s.line(n))) {
                let text = match loc.line {
                    Some(n) if secret_lines.contains(&(loc.file.as_path(), n)) => {
                        redact(scanner.get_or_init(crate::secrets::Scanner::new), &text)
                    }
                    _ => text,
                };
                let n = loc.line.unwrap_or(0).to_string();
                let pad = " ".repeat(n.len());
                let (text, col) = excerpt(&text, loc.column.unwrap_or(1));
                let (text, col) = escape_from(&text, col);
                let _ = writeln!(out, "  {pad} {}", paint("1;34", "|"));
                let _ = writeln!(out, "  {} {} {text}", paint("1;34", &n), paint("1;34", "|"));
                if loc.column.is_some() {
                    let caret = " ".repeat(col.saturating_sub(1)) + "^";
                    let _ = writeln!(
                        out,
                        "  {pad} {} {}",
                        paint("1;34", "|"),
                        paint(code, &caret)
                    );
                }
            }
        }
        let _ = writeln!(out, "  = help: {}", escape_controls(&cut_help(d.remedy())));
        out.push('\n');
    }
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    if !diagnostics.is_empty() {
        let _ = writeln!(out, "{errors} error(s), {warnings} warning(s)");
    }
    out
}

/// `line` with each credential the scanner finds in it replaced by its
/// redacted form (`ghp_...(40 chars)`); a line where it finds none (the
/// credential spans lines), or one it cannot cut where a match is, is
/// hidden whole.
fn redact(scanner: &crate::secrets::Scanner, line: &str) -> String {
    const HIDDEN: &str = "(hidden: the line holds a credential)";
    let found = scanner.scan(line.as_bytes());
    if found.is_empty() {
        return HIDDEN.to_string();
    }
    let mut out = String::with_capacity(line.len());
    let mut at = 0;
    for f in found {
        let Some(before) = line.get(at..f.offset) else {
            return HIDDEN.to_string();
        };
        out.push_str(before);
        out.push_str(&f.redacted);
        at = f.offset + f.len;
    }
    out.push_str(line.get(at..).unwrap_or_default());
    out
}

/// At most 100 characters of a long line around `column`, and the
/// column within them.
fn excerpt(line: &str, column: usize) -> (String, usize) {
    const WIDTH: usize = 100;
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= WIDTH {
        return (line.to_string(), column);
    }
    let start = column.saturating_sub(WIDTH / 2).min(chars.len() - WIDTH);
    let mut text: String = chars[start..start + WIDTH].iter().collect();
    let mut col = column - start;
    if start > 0 {
        text.insert(0, '…');
        col += 1;
    }
    if start + WIDTH < chars.len() {
        text.push('…');
    }
    (text, col)
}

/// How many findings of one file show the source line they point at; the
/// others show their location only.
const SNIPPETS_PER_FILE: usize = 50;

/// A file findings point into, read as inputs are (never a FIFO, at most
/// the input size limit), with where each line starts.
struct Source {
    text: String,
    starts: Vec<usize>,
}

impl Source {
    fn read(path: &Path) -> Option<Source> {
        let bytes = crate::input::read_file(path).ok()?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Some(Source { text, starts })
    }

    /// Line `line` (1-based), without its line ending.
    fn line(&self, line: usize) -> Option<String> {
        let start = *self.starts.get(line.checked_sub(1)?)?;
        let end = self.starts.get(line).map_or(self.text.len(), |e| e - 1);
        let l = self.text.get(start..end.max(start))?;
        Some(l.trim_end().to_string())
    }
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    rule: &'static str,
    severity: Severity,
    class: Class,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    location: Option<&'a Location>,
    remedy: &'a str,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    version: u32,
    errors: usize,
    warnings: usize,
    exit_code: u8,
    findings: Vec<JsonDiagnostic<'a>>,
    /// What a command adds beside the findings (`coverage`, `external`,
    /// `deploy`), each under its own key.
    #[serde(flatten)]
    extra: serde_json::Map<String, serde_json::Value>,
}

/// Renders findings as one JSON document (schema version 1). Messages are
/// cut as for people; paths that are not UTF-8 are written lossily, and
/// the characters [`escape_controls`] escapes are `\u` escapes.
pub fn render_json(diagnostics: &[Diagnostic]) -> String {
    render_json_with(diagnostics, serde_json::Map::new())
}

/// [`render_json`] with more of the command's output in the same
/// document, under the keys of `extra` (which never replace the
/// findings' own keys).
pub fn render_json_with(
    diagnostics: &[Diagnostic],
    mut extra: serde_json::Map<String, serde_json::Value>,
) -> String {
    for own in ["version", "errors", "warnings", "exit_code", "findings"] {
        extra.remove(own);
    }
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let messages: Vec<(String, String)> = diagnostics
        .iter()
        .map(|d| (cut_message(&d.message), cut_help(d.remedy())))
        .collect();
    let report = JsonReport {
        version: 1,
        errors,
        warnings: diagnostics.len() - errors,
        exit_code: exit_code(diagnostics),
        findings: diagnostics
            .iter()
            .zip(&messages)
            .map(|(d, (message, remedy))| JsonDiagnostic {
                rule: d.rule.id,
                severity: d.severity,
                class: d.rule.class,
                message,
                location: d.location.as_ref(),
                remedy,
            })
            .collect(),
        extra,
    };
    let json = match serde_json::to_string_pretty(&report) {
        Ok(json) => json,
        // Not expected (every field serializes): still a valid document
        // that says so, never an empty one.
        Err(e) => serde_json::json!({
            "version": 1,
            "errors": errors,
            "warnings": diagnostics.len() - errors,
            "exit_code": exit_code(diagnostics),
            "findings": [],
            "failure": format!("the findings could not be written: {e}"),
        })
        .to_string(),
    };
    let mut s = String::with_capacity(json.len() + 1);
    for c in json.chars() {
        // serde_json escapes C0 characters in strings and writes newlines
        // between fields; the others can only be in strings, where `\u`
        // is valid.
        if c != '\n' && is_unsafe_char(c) {
            let _ = write!(s, "\\u{:04x}", c as u32);
        } else {
            s.push(c);
        }
    }
    s.push('\n');
    s
}

/// Renders findings as GitHub Actions workflow commands. An annotation
/// names a file relative to the repository root (as SARIF does), and
/// never a folder, which GitHub cannot show one on: a finding about a
/// folder names it in its message instead.
pub fn render_github(diagnostics: &[Diagnostic], root: &Path) -> String {
    fn escape_data(s: &str) -> String {
        let s = s
            .replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A");
        escape_controls(&s)
    }
    fn escape_prop(s: &str) -> String {
        escape_data(s).replace(':', "%3A").replace(',', "%2C")
    }
    let prefix = repository_prefix(root);
    let mut out = String::new();
    for d in diagnostics {
        let kind = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut props = vec![format!("title={}", escape_prop(d.rule.id))];
        let mut place = String::new();
        if let Some(loc) = &d.location {
            match file_of(root, &prefix, loc) {
                Some(file) => {
                    props.push(format!("file={}", escape_prop(&file)));
                    if let Some(l) = loc.line {
                        props.push(format!("line={l}"));
                    }
                    if let Some(c) = loc.column {
                        props.push(format!("col={c}"));
                    }
                }
                None if !loc.file.as_os_str().is_empty() => {
                    place = format!("{}: ", loc.file.to_string_lossy());
                }
                None => {}
            }
        }
        let _ = writeln!(
            out,
            "::{kind} {}::{}",
            props.join(","),
            escape_data(&format!(
                "{place}{} ({})",
                cut_message(&d.message),
                cut_help(d.remedy())
            ))
        );
    }
    out
}

/// The file a location names, in `/` form relative to `prefix`-joined
/// project root, or `None` when the location names a folder: CI systems
/// show an annotation on a file, and one on a folder goes nowhere.
pub(crate) fn file_of(root: &Path, prefix: &Path, location: &Location) -> Option<String> {
    if location.file.as_os_str().is_empty() || root.join(&location.file).is_dir() {
        return None;
    }
    // A file outside the project (`verify --allowed-signers /tmp/x`,
    // `../keys/x`) is no file of the repository: none, rather than a
    // path that names another one.
    let inside = match location.file.strip_prefix(root) {
        Ok(rel) => rel,
        Err(_) if location.file.is_absolute() => return None,
        Err(_) => &location.file,
    };
    let mut parts = Vec::new();
    for c in prefix.join(inside).components() {
        match c {
            std::path::Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            std::path::Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// Where the project at `root` sits inside its git repository (`docs`
/// for a project in `REPO/docs`, empty at the top), so that paths in a
/// report are relative to the repository root as code scanning expects.
/// Empty when `root` is not inside a repository.
pub(crate) fn repository_prefix(root: &Path) -> PathBuf {
    let Ok(root) = root.canonicalize() else {
        return PathBuf::new();
    };
    for dir in root.ancestors() {
        if dir.join(".git").exists() {
            return root
                .strip_prefix(dir)
                .map(Path::to_path_buf)
                .unwrap_or_default();
        }
    }
    PathBuf::new()
}

/// The text of line `line` (1-based) of `file`, trimmed; empty when it
/// cannot be read.
pub(crate) fn line_text(root: &Path, file: &Path, line: usize) -> String {
    let Some(index) = line.checked_sub(1) else {
        return String::new();
    };
    let Ok(bytes) = crate::input::read_file(&root.join(file)) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    text.lines()
        .nth(index)
        .map(|l| l.trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::rule;

    #[test]
    fn many_findings_in_one_huge_line_print_in_linear_time() {
        let dir = tempfile::tempdir().unwrap();
        let line = "{{ x }} ".repeat(200_000);
        std::fs::write(dir.path().join("a.md"), format!("first\n{line}\nlast\n")).unwrap();
        let found: Vec<Diagnostic> = (0..20_000)
            .map(|i| {
                Diagnostic::new(rule::DOC_VARIABLE_UNKNOWN, "unknown").at(Location::at(
                    "a.md",
                    2,
                    1 + 8 * i,
                ))
            })
            .collect();
        let start = std::time::Instant::now();
        let text = render_text(&found, dir.path(), false);
        // Quadratic work (reading the file, or walking the line, for
        // each finding) takes minutes here.
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
        assert_eq!(text.matches("error[doc-variable-unknown]").count(), 20_000);
        assert!(text.contains("{{ x }}"));
        // The first findings show the line, cut; the others their place.
        assert_eq!(text.matches(" 2 | ").count(), SNIPPETS_PER_FILE);
        assert!(text.lines().all(|l| l.len() < 400));
        assert!(text.ends_with("20000 error(s), 0 warning(s)\n"));
    }

    #[test]
    fn lines_are_found_by_number() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "one\r\ntwo\n\nfour").unwrap();
        let s = Source::read(&dir.path().join("a")).unwrap();
        assert_eq!(s.line(1).as_deref(), Some("one"));
        assert_eq!(s.line(2).as_deref(), Some("two"));
        assert_eq!(s.line(3).as_deref(), Some(""));
        assert_eq!(s.line(4).as_deref(), Some("four"));
        assert_eq!(s.line(5), None);
        assert_eq!(s.line(0), None);
    }

    #[test]
    fn long_lines_are_cut_around_the_column() {
        let line = "a".repeat(300);
        let (text, col) = excerpt(&line, 200);
        assert_eq!(text.chars().count(), 102);
        assert_eq!(text.chars().nth(col - 1), Some('a'));
        assert_eq!(col, 51);
        assert_eq!(excerpt("short", 3), ("short".to_string(), 3));
    }

    #[test]
    fn long_values_in_messages_are_cut() {
        let secret = "s3cr3t".repeat(10_000);
        let m = cut_message(&format!("`{secret}` is not a KEY=value line"));
        assert!(m.chars().count() < QUOTE_MAX + 40, "{}", m.len());
        assert!(m.ends_with("…` is not a KEY=value line"), "{m}");
        let m = cut_message(&format!(
            "invalid type: string \"{secret}\", expected a map"
        ));
        assert!(m.ends_with("…\", expected a map"), "{m}");
        let m = cut_message(&"word ".repeat(10_000));
        assert_eq!(m.chars().count(), LINE_MAX + 1);
        let m = cut_message(&"line\n".repeat(1000));
        assert_eq!(m.lines().count(), LINES_MAX + 1);
        let short = "`a` and `b` differ";
        assert_eq!(cut_message(short), short);
    }

    #[test]
    fn control_characters_never_reach_a_terminal() {
        assert_eq!(
            escape_controls("a\x1b[31mb\u{202e}c\td"),
            "a\\u{1b}[31mb\\u{202e}c\td"
        );
        let d = Diagnostic::new(rule::LINK_BROKEN, "bad \x1b]0;title\x07 name\r").at(Location::at(
            "content/en/a\x1b[2J.md",
            1,
            1,
        ));
        let text = render_text(std::slice::from_ref(&d), Path::new("/nonexistent"), false);
        assert!(
            !text.contains('\x1b') && !text.contains('\x07') && !text.contains('\r'),
            "{text:?}"
        );
        let json = render_json(std::slice::from_ref(&d));
        assert!(!json.contains('\x1b'));
        let gh = render_github(&[d], Path::new("/nonexistent"));
        assert!(!gh.contains('\x1b') && !gh.contains('\x07'), "{gh:?}");
        // The caret still points at the column after escapes before it.
        let (line, col) = escape_from("\x1bab", 3);
        assert_eq!(line.chars().nth(col - 1), Some('b'));
    }

    #[cfg(unix)]
    #[test]
    fn a_path_that_is_not_utf8_is_written_lossily() {
        use std::os::unix::ffi::OsStrExt;
        let file = std::ffi::OsStr::from_bytes(b"content/en/caf\xe9.md");
        let d = Diagnostic::new(rule::CONTENT_LAYOUT, "x").in_file(file);
        let v: serde_json::Value = serde_json::from_str(&render_json(&[d])).unwrap();
        assert_eq!(
            v["findings"][0]["location"]["file"],
            "content/en/caf\u{fffd}.md"
        );
    }

    #[test]
    fn github_format_escapes_properties() {
        let d = Diagnostic::new(rule::LINK_BROKEN, "bad, really\nbad").at(Location::at(
            "content/es/a,b.md",
            3,
            4,
        ));
        let s = render_github(&[d], Path::new("/nonexistent"));
        assert_eq!(
            s,
            "::error title=link-broken,file=content/es/a%2Cb.md,line=3,col=4::bad, really%0Abad (Point the link at an existing page (by its .md source path or its URL) or published file.)\n"
        );
    }

    #[test]
    fn github_annotations_never_point_at_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join("docs/bases/v1")).unwrap();
        std::fs::write(dir.path().join("docs/bases/v1/kustomization.yaml"), "a\n").unwrap();
        let root = dir.path().join("docs");
        let folder = Diagnostic::new(rule::BASE_VERSION_INVALID, "bad name").in_file("bases/v1");
        let file = Diagnostic::new(rule::BASE_VERSION_INVALID, "bad name")
            .at(Location::line("bases/v1/kustomization.yaml", 1));
        let s = render_github(&[folder, file], &root);
        let lines: Vec<&str> = s.lines().collect();
        assert!(
            lines[0].starts_with("::error title=base-version-invalid::bases/v1: bad name ("),
            "{s}"
        );
        // Files are named from the repository root, as in SARIF.
        assert!(
            lines[1].starts_with(
                "::error title=base-version-invalid,file=docs/bases/v1/kustomization.yaml,line=1::bad name ("
            ),
            "{s}"
        );
    }

    #[test]
    fn a_line_with_a_credential_is_printed_redacted_under_every_finding() {
        let dir = tempfile::tempdir().unwrap();
        let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        std::fs::write(
            dir.path().join("config.env"),
            format!("A=1\nAPP_TOKEN={token}\n"),
        )
        .unwrap();
        let at = |col| Location::at("config.env", 2, col);
        let d = [
            Diagnostic::new(rule::ENV_KEY_UNKNOWN, "`APP_TOKEN` is not read").at(at(1)),
            Diagnostic::new(rule::CREDENTIAL_LEAK, "a token: ghp_...(40 chars)").at(at(11)),
        ];
        let text = render_text(&d, dir.path(), false);
        assert!(!text.contains(token), "{text}");
        assert_eq!(
            text.matches("APP_TOKEN=ghp_...(40 chars)").count(),
            2,
            "{text}"
        );
        // Without a credential finding, the line is shown as it is.
        let text = render_text(&d[..1], dir.path(), false);
        assert!(text.contains(token), "{text}");
    }

    #[test]
    fn folders_are_not_files_and_paths_use_slashes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bases/v1.0.0")).unwrap();
        std::fs::write(
            dir.path().join("bases/v1.0.0/kustomization.yaml"),
            "a\n  b  \n",
        )
        .unwrap();
        let folder = Location::file("bases/v1.0.0");
        assert_eq!(file_of(dir.path(), Path::new(""), &folder), None);
        let file = Location::line("bases/v1.0.0/kustomization.yaml", 2);
        assert_eq!(
            file_of(dir.path(), Path::new("docs"), &file).as_deref(),
            Some("docs/bases/v1.0.0/kustomization.yaml")
        );
        assert_eq!(line_text(dir.path(), &file.file, 2), "b");
        for outside in ["/tmp/keys/allowed_signers", "../keys/allowed_signers"] {
            assert_eq!(
                file_of(dir.path(), Path::new(""), &Location::file(outside)),
                None
            );
        }
        let absolute = Location::file(dir.path().join("site.yaml"));
        assert_eq!(
            file_of(dir.path(), Path::new("docs"), &absolute).as_deref(),
            Some("docs/site.yaml")
        );
        assert_eq!(line_text(dir.path(), &file.file, 9), "");
    }

    #[test]
    fn the_prefix_is_the_project_inside_its_repository() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join("docs/site")).unwrap();
        assert_eq!(
            repository_prefix(&dir.path().join("docs/site")),
            Path::new("docs/site")
        );
        assert_eq!(repository_prefix(dir.path()), Path::new(""));
    }
}
