//! JUnit XML, for CI systems that show test reports (GitLab, Jenkins,
//! Azure DevOps): `testsuites` / `testsuite` per check / `testcase` per
//! subject (a base or a page) / `failure` carrying the findings.
//!
//! The renderer takes plain [`Case`]s, so whatever knows which check ran
//! on what can hand them over; [`cases`] builds them from findings alone
//! (one case per rule and subject that has findings).

use super::{cut_help, cut_message, file_of, repository_prefix};
use crate::diagnostics::{exit_code, Diagnostic, Severity};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Component, Path};

/// One check run on one subject, with what it found there.
#[derive(Debug, Clone)]
pub struct Case<'a> {
    /// The check: a rule id, or the name of a group of rules.
    pub check: &'a str,
    /// What it ran on: a base folder (`bases/v1.30.0`), a page's source
    /// file, or `project` for the project as a whole.
    pub subject: String,
    pub findings: Vec<&'a Diagnostic>,
}

/// The subject of a finding: the base folder for a file of a base, the
/// file otherwise, `project` without a location.
pub fn subject(d: &Diagnostic) -> String {
    let Some(loc) = &d.location else {
        return "project".to_string();
    };
    let parts: Vec<String> = loc
        .file
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    match parts.as_slice() {
        [] => "project".to_string(),
        [bases, version, ..] if bases == "bases" => format!("bases/{version}"),
        _ => parts.join("/"),
    }
}

/// Cases from findings alone: one per rule and subject, in the order the
/// findings come. Without findings, one passing case says that every
/// check passed.
pub fn cases(diagnostics: &[Diagnostic]) -> Vec<Case<'_>> {
    let mut grouped: BTreeMap<(&str, String), Vec<&Diagnostic>> = BTreeMap::new();
    for d in diagnostics {
        grouped.entry((d.rule.id, subject(d))).or_default().push(d);
    }
    if grouped.is_empty() {
        return vec![Case {
            check: "basepress",
            subject: "project".to_string(),
            findings: Vec::new(),
        }];
    }
    grouped
        .into_iter()
        .map(|((check, subject), findings)| Case {
            check,
            subject,
            findings,
        })
        .collect()
}

/// Renders cases as a JUnit XML report. A case with an error fails, with
/// every finding in the failure's text; a case with only warnings passes,
/// with them in its `system-out`. `all` is every finding of the run, for
/// the totals the report carries as properties; `root` is the project.
pub fn render(cases: &[Case], all: &[Diagnostic], root: &Path) -> String {
    let prefix = repository_prefix(root);
    let mut suites: BTreeMap<&str, TestSuite> = BTreeMap::new();
    for case in cases {
        let suite = suites
            .entry(case.check)
            .or_insert_with(|| TestSuite::new(case.check));
        let errors: Vec<&&Diagnostic> = case.findings.iter().filter(|d| d.is_error()).collect();
        let text: String = case
            .findings
            .iter()
            .map(|d| finding_text(d, root, &prefix))
            .collect();
        let status = match errors.first() {
            Some(first) => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                let message = cut_message(&first.message);
                let message = if errors.len() == 1 {
                    message
                } else {
                    format!("{message} (and {} more)", errors.len() - 1)
                };
                s.set_message(message);
                s.set_type(first.rule.id);
                s.set_description(text.clone());
                s
            }
            None => TestCaseStatus::success(),
        };
        let mut tc = TestCase::new(case.subject.as_str(), status);
        tc.set_classname(case.check);
        if let Some(file) = case
            .findings
            .iter()
            .find_map(|d| d.location.as_ref().and_then(|l| file_of(root, &prefix, l)))
        {
            tc.extra.insert("file".into(), file.into());
        }
        if errors.is_empty() && !case.findings.is_empty() {
            tc.set_system_out(text);
        }
        suite.add_test_case(tc);
    }
    let errors = all.iter().filter(|d| d.is_error()).count();
    let warnings = all.len() - errors;
    let code = exit_code(all);
    let mut report = Report::new("basepress");
    for (_, mut suite) in suites {
        suite.add_property(("basepress.errors", errors.to_string().as_str()));
        suite.add_property(("basepress.warnings", warnings.to_string().as_str()));
        suite.add_property(("basepress.exit_code", code.to_string().as_str()));
        report.add_test_suite(suite);
    }
    report.to_string().unwrap_or_default()
}

/// A finding as the text format prints it, without the source excerpt.
fn finding_text(d: &Diagnostic, root: &Path, prefix: &Path) -> String {
    let word = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut out = format!("{word}[{}]: {}\n", d.rule.id, cut_message(&d.message));
    if let Some(loc) = &d.location {
        let mut place =
            file_of(root, prefix, loc).unwrap_or_else(|| loc.file.display().to_string());
        if let Some(line) = loc.line {
            let _ = write!(place, ":{line}");
            if let Some(col) = loc.column {
                let _ = write!(place, ":{col}");
            }
        }
        let _ = writeln!(out, "  --> {place}");
    }
    let _ = writeln!(out, "  = help: {}", cut_help(d.remedy()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::{rule, Location};

    #[test]
    fn subjects_are_bases_pages_or_the_project() {
        let d = |loc: Option<Location>| {
            let d = Diagnostic::new(rule::LINK_BROKEN, "x");
            match loc {
                Some(l) => d.at(l),
                None => d,
            }
        };
        assert_eq!(
            subject(&d(Some(Location::line(
                "bases/v1.30.0/statefulset.yaml",
                3
            )))),
            "bases/v1.30.0"
        );
        assert_eq!(
            subject(&d(Some(Location::file("bases/v1.30.0")))),
            "bases/v1.30.0"
        );
        assert_eq!(
            subject(&d(Some(Location::at("content/es/a.md", 1, 1)))),
            "content/es/a.md"
        );
        assert_eq!(subject(&d(None)), "project");
    }

    #[test]
    fn errors_fail_their_case_and_warnings_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let all = vec![
            Diagnostic::new(rule::LINK_BROKEN, "first <broken> & bad").at(Location::at(
                "content/es/a.md",
                3,
                2,
            )),
            Diagnostic::new(rule::LINK_BROKEN, "second").at(Location::at("content/es/a.md", 5, 1)),
            Diagnostic::new(rule::TRANSLATION_MISSING, "no pt page").in_file("content/es/a.md"),
        ];
        let xml = render(&cases(&all), &all, dir.path());
        assert!(
            xml.contains(
                r#"<testsuites name="basepress" tests="2" skipped="0" failures="1" errors="0">"#
            ),
            "{xml}"
        );
        assert!(xml.contains(r#"<testcase name="content/es/a.md" classname="link-broken" file="content/es/a.md">"#), "{xml}");
        assert!(xml.contains(r#"<failure message="first &lt;broken&gt; &amp; bad (and 1 more)" type="link-broken">"#), "{xml}");
        assert!(xml.contains("  --&gt; content/es/a.md:5:1"), "{xml}");
        assert!(
            xml.contains("<system-out>warning[translation-missing]: no pt page"),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<property name="basepress.exit_code" value="1"/>"#),
            "{xml}"
        );
    }

    #[test]
    fn no_findings_is_one_passing_case() {
        let xml = render(&cases(&[]), &[], Path::new("."));
        assert!(
            xml.contains(r#"tests="1" skipped="0" failures="0""#),
            "{xml}"
        );
    }
}
