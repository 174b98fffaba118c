//! Findings: every problem basepress reports is a [`Diagnostic`] raised by a
//! named [`Rule`], so people and scripts can rely on stable ids.

use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// What a rule is about, which decides the exit code of an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// The input cannot be read or parsed: exit code 2.
    Input,
    /// The input was read, and a check found it wrong: exit code 1.
    Check,
}

/// A named check with a stable id, a one-line description and a remedy.
#[derive(Debug, Serialize)]
pub struct Rule {
    pub id: &'static str,
    pub class: Class,
    pub severity: Severity,
    pub description: &'static str,
    pub remedy: &'static str,
}

macro_rules! rules {
    ($( $konst:ident = $id:literal, $class:ident, $sev:ident, $desc:literal, $remedy:literal; )*) => {
        $( pub const $konst: &Rule = &Rule {
            id: $id, class: Class::$class, severity: Severity::$sev,
            description: $desc, remedy: $remedy,
        }; )*
        /// Every rule basepress knows, in the order `basepress rules` lists them.
        pub const ALL: &[&Rule] = &[$($konst),*];
    };
}

/// The rule catalogue.
pub mod rule {
    use super::{Class, Rule, Severity};

    rules! {
        IO_UNREADABLE = "io-unreadable", Input, Error,
            "A file or folder that the build needs cannot be read.",
            "Check that the path exists and is readable, then run again.";
        CONFIG_INVALID = "config-invalid", Input, Error,
            "site.yaml is missing, is not valid YAML, or has a wrong or unknown key.",
            "Fix site.yaml as the message says; README.md lists every key it accepts.";
        FRONT_MATTER_INVALID = "front-matter-invalid", Input, Error,
            "A page's YAML front matter is missing, malformed, or has a wrong or unknown key.",
            "Start the page with a `---` line, then `title: ...` (and optionally `weight` and `description`), then `---`.";
        IMAGE_DATA_INVALID = "image-data-invalid", Input, Error,
            "The image release data file is not valid YAML or does not follow its schema.",
            "Fix the file as the message says; README.md describes its schema.";
        KUSTOMIZATION_INVALID = "kustomization-invalid", Input, Error,
            "A base's kustomization.yaml is missing, not valid YAML, or has a field Kustomize does not know.",
            "Fix kustomization.yaml; `kubectl kustomize bases/vX.Y.Z` shows what Kustomize makes of it.";
        TEMPLATE_INVALID = "template-invalid", Input, Error,
            "A template does not parse or fails to render.",
            "Fix the template named in the message; README.md lists the variables each template receives.";
        OUTPUT_UNSAFE = "output-unsafe", Input, Error,
            "The output folder exists and was not written by basepress, so replacing it could destroy work.",
            "Pick another --out folder, or empty this one if its content is disposable.";
        CONTENT_LAYOUT = "content-layout", Check, Error,
            "The content folder has a file or folder basepress cannot place on the site.",
            "Put pages under content/<lang>/ for a language listed in site.yaml, as .md files.";
        OUTPUT_CONFLICT = "output-conflict", Check, Error,
            "Two inputs would be written to the same path on the site.",
            "Rename one of the two files named in the message.";
        BASE_VERSION_INVALID = "base-version-invalid", Check, Error,
            "A folder under bases/ is not named vX.Y.Z with a valid semantic version.",
            "Rename the folder to the release it ships with, e.g. bases/v1.30.0.";
        BASE_VERSION_DUPLICATE = "base-version-duplicate", Check, Error,
            "Two base folders name the same release.",
            "Keep one folder per release and delete the other.";
        BASE_IMAGE_RELEASE_MISSING = "base-image-release-missing", Check, Error,
            "A base has no image release of the same version in the image data.",
            "Add the release to the image data file, with what its image contains, or remove the base.";
        BASE_REFERENCE_MISSING = "base-reference-missing", Check, Error,
            "The kustomization references a file that is not in the base folder.",
            "Add the file to the base folder, or remove the reference from kustomization.yaml.";
        BASE_REFERENCE_OUTSIDE = "base-reference-outside", Check, Error,
            "The kustomization references something outside its own folder (a URL, an absolute path, `..`, a subfolder or another kustomization): installers only get the files that files.txt lists.",
            "Copy what the base needs into its folder as a plain file and reference it by file name.";
        BASE_FILE_NAME_UNSAFE = "base-file-name-unsafe", Check, Error,
            "A published file name would break the installers' shell download loop.",
            "Use only letters, digits, `.`, `_` and `-`, not starting with `.` or `-`.";
        BASE_SYMLINK = "base-symlink", Check, Error,
            "A file in a base folder is a symbolic link, whose target could change or leave the repository.",
            "Replace the link with a copy of the file.";
        BASE_UNREFERENCED_FILE = "base-unreferenced-file", Check, Warning,
            "A file in a base folder is not referenced by its kustomization, so it is not published.",
            "Reference it from kustomization.yaml if the base needs it; otherwise delete it (it may hold a secret).";
        LINK_BROKEN = "link-broken", Check, Error,
            "A link in a page points to a page or file that the site does not have.",
            "Point the link at an existing page (by its .md source path or its URL) or published file.";
        ANCHOR_MISSING = "anchor-missing", Check, Error,
            "A link names an anchor that the target page has no heading for.",
            "Use the id of an existing heading: `basepress check` prints the ones the page has.";
    }

    /// Looks a rule up by its id.
    pub fn by_id(id: &str) -> Option<&'static Rule> {
        ALL.iter().copied().find(|r| r.id == id)
    }
}

/// Where a finding is: a file relative to the project root, and a 1-based
/// line and column when known.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Location {
    pub file: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

impl Location {
    pub fn file(file: impl Into<PathBuf>) -> Self {
        Location {
            file: file.into(),
            line: None,
            column: None,
        }
    }

    pub fn at(file: impl Into<PathBuf>, line: usize, column: usize) -> Self {
        Location {
            file: file.into(),
            line: Some(line),
            column: Some(column),
        }
    }

    pub fn line(file: impl Into<PathBuf>, line: usize) -> Self {
        Location {
            file: file.into(),
            line: Some(line),
            column: None,
        }
    }
}

/// One finding.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub rule: &'static Rule,
    pub severity: Severity,
    pub message: String,
    pub location: Option<Location>,
    /// A remedy specific to this finding; the rule's own remedy otherwise.
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn new(rule: &'static Rule, message: impl Into<String>) -> Self {
        Diagnostic {
            rule,
            severity: rule.severity,
            message: message.into(),
            location: None,
            help: None,
        }
    }

    pub fn at(mut self, location: Location) -> Self {
        self.location = Some(location);
        self
    }

    pub fn in_file(self, file: impl Into<PathBuf>) -> Self {
        self.at(Location::file(file))
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    pub fn remedy(&self) -> &str {
        self.help.as_deref().unwrap_or(self.rule.remedy)
    }

    fn sort_key(&self) -> (Option<&Location>, &'static str, &str) {
        (self.location.as_ref(), self.rule.id, &self.message)
    }
}

/// Puts findings in a stable order: by file, line, column, then rule.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
}

/// The exit code a list of findings calls for: 0 without errors, 2 when an
/// input could not be read, 1 when checks found errors.
pub fn exit_code(diagnostics: &[Diagnostic]) -> u8 {
    let errors = diagnostics.iter().filter(|d| d.is_error());
    let mut code = 0;
    for d in errors {
        match d.rule.class {
            Class::Input => return 2,
            Class::Check => code = 1,
        }
    }
    code
}

/// Output formats for findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people, in the style of rustc and cargo.
    Text,
    /// One JSON document, for scripts (schema in README.md).
    Json,
    /// GitHub Actions workflow commands (`::error file=…`).
    Github,
}

/// Renders findings for people. `root` is where the files named in
/// locations live, to quote the offending line.
pub fn render_text(diagnostics: &[Diagnostic], root: &Path, color: bool) -> String {
    let paint = |code: &str, s: &str| {
        if color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    let mut out = String::new();
    for d in diagnostics {
        let (word, code) = match d.severity {
            Severity::Error => ("error", "1;31"),
            Severity::Warning => ("warning", "1;33"),
        };
        let head = format!("{word}[{}]", d.rule.id);
        let _ = writeln!(
            out,
            "{}{}",
            paint(code, &head),
            paint("1", &format!(": {}", d.message))
        );
        if let Some(loc) = &d.location {
            let mut place = loc.file.display().to_string();
            if let Some(line) = loc.line {
                let _ = write!(place, ":{line}");
                if let Some(col) = loc.column {
                    let _ = write!(place, ":{col}");
                }
            }
            let _ = writeln!(out, "  {} {place}", paint("1;34", "-->"));
            if let Some(text) = loc.line.and_then(|n| source_line(&root.join(&loc.file), n)) {
                let n = loc.line.unwrap_or(0).to_string();
                let pad = " ".repeat(n.len());
                let _ = writeln!(out, "  {pad} {}", paint("1;34", "|"));
                let _ = writeln!(out, "  {} {} {text}", paint("1;34", &n), paint("1;34", "|"));
                if let Some(col) = loc.column {
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
        let _ = writeln!(out, "  = help: {}", d.remedy());
        out.push('\n');
    }
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    if !diagnostics.is_empty() {
        let _ = writeln!(out, "{errors} error(s), {warnings} warning(s)");
    }
    out
}

fn source_line(path: &Path, line: usize) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let l = text.lines().nth(line.checked_sub(1)?)?;
    Some(l.trim_end().to_string())
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
}

/// Renders findings as one JSON document (schema version 1).
pub fn render_json(diagnostics: &[Diagnostic]) -> String {
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let report = JsonReport {
        version: 1,
        errors,
        warnings: diagnostics.len() - errors,
        exit_code: exit_code(diagnostics),
        findings: diagnostics
            .iter()
            .map(|d| JsonDiagnostic {
                rule: d.rule.id,
                severity: d.severity,
                class: d.rule.class,
                message: &d.message,
                location: d.location.as_ref(),
                remedy: d.remedy(),
            })
            .collect(),
    };
    let mut s = serde_json::to_string_pretty(&report).unwrap_or_default();
    s.push('\n');
    s
}

/// Renders findings as GitHub Actions workflow commands.
pub fn render_github(diagnostics: &[Diagnostic]) -> String {
    fn escape_data(s: &str) -> String {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    }
    fn escape_prop(s: &str) -> String {
        escape_data(s).replace(':', "%3A").replace(',', "%2C")
    }
    let mut out = String::new();
    for d in diagnostics {
        let kind = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut props = vec![format!("title={}", escape_prop(d.rule.id))];
        if let Some(loc) = &d.location {
            props.push(format!(
                "file={}",
                escape_prop(&loc.file.display().to_string())
            ));
            if let Some(l) = loc.line {
                props.push(format!("line={l}"));
            }
            if let Some(c) = loc.column {
                props.push(format!("col={c}"));
            }
        }
        let _ = writeln!(
            out,
            "::{kind} {}::{}",
            props.join(","),
            escape_data(&format!("{} ({})", d.message, d.remedy()))
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_and_kebab_case() {
        let mut ids: Vec<_> = rule::ALL.iter().map(|r| r.id).collect();
        for id in &ids {
            assert!(
                id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{id}"
            );
        }
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(n, ids.len(), "duplicate rule id");
    }

    #[test]
    fn input_errors_win_over_check_errors() {
        let check = Diagnostic::new(rule::LINK_BROKEN, "x");
        let input = Diagnostic::new(rule::CONFIG_INVALID, "y");
        let warn = Diagnostic::new(rule::BASE_UNREFERENCED_FILE, "z");
        assert_eq!(exit_code(std::slice::from_ref(&warn)), 0);
        assert_eq!(exit_code(&[warn.clone(), check.clone()]), 1);
        assert_eq!(exit_code(&[check, input, warn]), 2);
    }

    #[test]
    fn github_format_escapes_properties() {
        let d = Diagnostic::new(rule::LINK_BROKEN, "bad, really\nbad").at(Location::at(
            "content/es/a,b.md",
            3,
            4,
        ));
        let s = render_github(&[d]);
        assert_eq!(
            s,
            "::error title=link-broken,file=content/es/a%2Cb.md,line=3,col=4::bad, really%0Abad (Point the link at an existing page (by its .md source path or its URL) or published file.)\n"
        );
    }
}
