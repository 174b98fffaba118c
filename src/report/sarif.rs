//! SARIF 2.1.0, the format of GitHub code scanning, GitLab and Azure
//! DevOps.
//!
//! The run's tool lists every rule basepress has as a
//! `reportingDescriptor` (so `ruleIndex` is the rule's place in
//! `basepress rules`); each finding is a `result` with its rule id, level,
//! message, location relative to the repository root, and a partial
//! fingerprint that survives edits elsewhere in the file.

use super::{cut_help, cut_message, file_of, line_text, repository_prefix};
use crate::diagnostics::Location;
use crate::diagnostics::{exit_code, rule, Diagnostic, Severity};
use serde_json::json;
use serde_sarif::sarif;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The `uriBaseId` every artifact path is relative to: the root of the
/// repository (code scanning resolves it to the checkout).
pub const SRCROOT: &str = "SRCROOT";

/// The schema the log names: the OASIS standard's.
pub const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/os/schemas/sarif-schema-2.1.0.json";

/// The file every project has (`load::config::FILE_NAME`, a stage above
/// this one), where a result about no file of the repository is shown.
pub const PROJECT_FILE: &str = "site.yaml";

/// The key of basepress's fingerprint in `partialFingerprints`; the `/v1`
/// changes if the way it is computed ever does.
pub const FINGERPRINT_KEY: &str = "basepress/v1";

/// Renders findings as one SARIF 2.1.0 log. `root` is the project, used to
/// make paths relative to its repository and to read the offending lines
/// for fingerprints.
pub fn render(diagnostics: &[Diagnostic], root: &Path) -> String {
    let prefix = repository_prefix(root);
    let index: HashMap<&str, usize> = rule::ALL
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id, i))
        .collect();
    let rules: Vec<sarif::ReportingDescriptor> = rule::ALL.iter().map(|r| descriptor(r)).collect();

    let fallback = file_of(root, &prefix, &Location::file(PROJECT_FILE))
        .unwrap_or_else(|| PROJECT_FILE.to_string());
    let mut seen: HashMap<String, usize> = HashMap::new();
    let results: Vec<sarif::Result> = diagnostics
        .iter()
        .map(|d| {
            let file = d.location.as_ref().and_then(|l| file_of(root, &prefix, l));
            let key = fingerprint_input(d, root, file.as_deref());
            let n = seen.entry(key.clone()).or_insert(0);
            *n += 1;
            let fingerprint = fingerprint(&key, *n);
            result(
                d,
                file,
                &fallback,
                index.get(d.rule.id).copied(),
                fingerprint,
            )
        })
        .collect();

    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let code = exit_code(diagnostics);
    let mut counts = BTreeMap::new();
    counts.insert("errors".to_string(), json!(errors));
    counts.insert("warnings".to_string(), json!(diagnostics.len() - errors));
    counts.insert("exitCode".to_string(), json!(code));

    let driver = sarif::ToolComponent::builder()
        .name("basepress")
        .version(env!("CARGO_PKG_VERSION"))
        .semantic_version(env!("CARGO_PKG_VERSION"))
        .rules(rules)
        .build();
    let invocation = sarif::Invocation::builder()
        .execution_successful(code != 2)
        .exit_code(i64::from(code))
        .build();
    let run = sarif::Run::builder()
        .tool(sarif::Tool::builder().driver(driver).build())
        .invocations(vec![invocation])
        .column_kind(json!("unicodeCodePoints"))
        .results(results)
        .properties(
            sarif::PropertyBag::builder()
                .additional_properties(counts)
                .build(),
        )
        .build();
    let log = sarif::Sarif::builder()
        .schema(SCHEMA)
        .version(json!("2.1.0"))
        .runs(vec![run])
        .build();
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_default();
    s.push('\n');
    s
}

fn level(severity: Severity) -> sarif::ResultLevel {
    match severity {
        Severity::Error => sarif::ResultLevel::Error,
        Severity::Warning => sarif::ResultLevel::Warning,
    }
}

fn descriptor(r: &crate::diagnostics::Rule) -> sarif::ReportingDescriptor {
    let text = |t: &str| sarif::MultiformatMessageString::builder().text(t).build();
    let level = match r.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let class = match r.class {
        crate::diagnostics::Class::Input => "input",
        crate::diagnostics::Class::Check => "check",
    };
    sarif::ReportingDescriptor::builder()
        .id(r.id)
        .name(r.id)
        .short_description(text(first_sentence(r.description)))
        .full_description(text(r.description))
        .help(text(r.remedy))
        .default_configuration(
            sarif::ReportingConfiguration::builder()
                .level(json!(level))
                .build(),
        )
        .properties(
            sarif::PropertyBag::builder()
                .tags(vec![class.to_string()])
                .build(),
        )
        .build()
}

/// The description up to the end of its first sentence.
fn first_sentence(text: &str) -> &str {
    match text.find(". ").or_else(|| text.find(": ")) {
        Some(i) => &text[..=i],
        None => text,
    }
}

fn result(
    d: &Diagnostic,
    file: Option<String>,
    fallback: &str,
    rule_index: Option<usize>,
    fingerprint: String,
) -> sarif::Result {
    // Code scanning refuses a log whose result has no location: a finding
    // on a folder, on no file or on one outside the repository is shown on
    // the project's site.yaml, its place said in the message.
    let mut text = match (&file, &d.location) {
        (None, Some(l)) if !l.file.as_os_str().is_empty() => {
            format!("{}: {}", l.file.to_string_lossy(), cut_message(&d.message))
        }
        _ => cut_message(&d.message),
    };
    if let Some(help) = &d.help {
        text.push_str("\nhelp: ");
        text.push_str(&cut_help(help));
    }
    let at_file = file.is_some();
    let locations: Vec<sarif::Location> = Some(file.unwrap_or_else(|| fallback.to_string()))
        .map(|uri| {
            let artifact = sarif::ArtifactLocation::builder()
                .uri(uri)
                .uri_base_id(SRCROOT)
                .build();
            let region = d.location.as_ref().filter(|_| at_file).and_then(|l| {
                let line = i64::try_from(l.line?).ok()?;
                Some(match l.column.and_then(|c| i64::try_from(c).ok()) {
                    Some(col) => sarif::Region::builder()
                        .start_line(line)
                        .start_column(col)
                        .build(),
                    None => sarif::Region::builder().start_line(line).build(),
                })
            });
            let physical = match region {
                Some(region) => sarif::PhysicalLocation::builder()
                    .artifact_location(artifact)
                    .region(region)
                    .build(),
                None => sarif::PhysicalLocation::builder()
                    .artifact_location(artifact)
                    .build(),
            };
            sarif::Location::builder()
                .physical_location(physical)
                .build()
        })
        .into_iter()
        .collect();
    let mut fingerprints = BTreeMap::new();
    fingerprints.insert(FINGERPRINT_KEY.to_string(), fingerprint);
    let builder = sarif::Result::builder()
        .rule_id(d.rule.id)
        .level(level(d.severity))
        .message(sarif::Message::builder().text(text).build())
        .locations(locations)
        .partial_fingerprints(fingerprints);
    match rule_index.and_then(|i| i64::try_from(i).ok()) {
        Some(i) => builder.rule_index(i).build(),
        None => builder.build(),
    }
}

/// What identifies a finding across edits that do not touch it: its rule,
/// its file and the text of its line (not the line number, which moves
/// when lines are added above). A finding without a line is identified
/// by its message.
fn fingerprint_input(d: &Diagnostic, root: &Path, file: Option<&str>) -> String {
    let text = match &d.location {
        Some(l) => match l.line {
            Some(n) => line_text(root, &l.file, n),
            None => d.message.clone(),
        },
        None => d.message.clone(),
    };
    format!("{}\0{}\0{}", d.rule.id, file.unwrap_or(""), text)
}

/// The fingerprint of the `n`th finding (1-based) with the same input:
/// identical lines in one file get distinct, stable fingerprints.
fn fingerprint(input: &str, n: usize) -> String {
    let hex: String = {
        use sha2::{Digest, Sha256};
        Sha256::digest(format!("{input}\0{n}").as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    hex[..32].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Location;

    fn project(lines: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("content/es")).unwrap();
        std::fs::write(dir.path().join("content/es/a.md"), lines).unwrap();
        dir
    }

    fn fingerprints(log: &str) -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(log).unwrap();
        v["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r["partialFingerprints"][FINGERPRINT_KEY]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn results_carry_rule_level_location_and_counts() {
        let dir = project("# A\n\n[x](nowhere.md)\n");
        let d = Diagnostic::new(rule::LINK_BROKEN, "no page `nowhere.md`").at(Location::at(
            "content/es/a.md",
            3,
            2,
        ));
        let w = Diagnostic::new(rule::VERSION_UNRELEASED, "v1 is not released")
            .in_file("content")
            .help("run it");
        let log = render(&[d, w], dir.path());
        let v: serde_json::Value = serde_json::from_str(&log).unwrap();
        assert_eq!(v["version"], "2.1.0");
        let run = &v["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(rules.len(), rule::ALL.len());
        let r0 = &run["results"][0];
        assert_eq!(r0["ruleId"], "link-broken");
        assert_eq!(
            rules[r0["ruleIndex"].as_u64().unwrap() as usize]["id"],
            "link-broken"
        );
        assert_eq!(r0["level"], "error");
        let loc = &r0["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "content/es/a.md");
        assert_eq!(loc["artifactLocation"]["uriBaseId"], SRCROOT);
        assert_eq!(loc["region"]["startLine"], 3);
        assert_eq!(loc["region"]["startColumn"], 2);
        // A folder is not an artifact a viewer can open, and code scanning
        // refuses a result without a location: site.yaml, the folder named.
        let r1 = &run["results"][1];
        assert_eq!(r1["level"], "warning");
        let loc = &r1["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "site.yaml");
        assert!(loc.get("region").is_none());
        assert!(r1["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with("content: v1 is not released"));
        assert!(r1["message"]["text"]
            .as_str()
            .unwrap()
            .ends_with("help: run it"));
        assert_eq!(run["properties"]["errors"], 1);
        assert_eq!(run["properties"]["warnings"], 1);
        assert_eq!(run["invocations"][0]["exitCode"], 1);
    }

    #[test]
    fn fingerprints_survive_lines_added_above_and_tell_twins_apart() {
        let finding = |line| {
            Diagnostic::new(rule::LINK_BROKEN, format!("broken at {line}")).at(Location::at(
                "content/es/a.md",
                line,
                1,
            ))
        };
        let before = project("[x](a.md)\n[x](a.md)\n[y](b.md)\n");
        let one = fingerprints(&render(
            &[finding(1), finding(2), finding(3)],
            before.path(),
        ));
        assert_eq!(one.len(), 3);
        assert_ne!(one[0], one[1], "twin lines need distinct fingerprints");
        assert_ne!(one[1], one[2]);

        let after = project("# new heading\n\nintro\n[x](a.md)\n[x](a.md)\n[y](b.md)\n");
        let two = fingerprints(&render(&[finding(4), finding(5), finding(6)], after.path()));
        assert_eq!(
            one, two,
            "an edit above the findings changed their fingerprints"
        );
    }

    #[test]
    fn messages_are_cut_as_in_every_format() {
        let dir = project("x\n");
        let long = "a".repeat(3_000);
        let d = Diagnostic::new(rule::LINK_BROKEN, format!("link to `{long}` goes nowhere"))
            .at(Location::at("content/es/a.md", 1, 1))
            .help(format!("write `{long}`"));
        let sarif = render(std::slice::from_ref(&d), dir.path());
        let v: serde_json::Value = serde_json::from_str(&sarif).unwrap();
        let text = v["runs"][0]["results"][0]["message"]["text"]
            .as_str()
            .unwrap();
        assert!(text.chars().count() < 400, "{}", text.len());
        let cases = super::super::junit::cases(std::slice::from_ref(&d));
        let junit = super::super::junit::render(&cases, std::slice::from_ref(&d), dir.path());
        assert!(junit.len() < 2_000, "{}", junit.len());
    }

    #[test]
    fn short_descriptions_are_the_first_sentence() {
        assert_eq!(first_sentence("One. Two."), "One.");
        assert_eq!(first_sentence("Only one."), "Only one.");
    }
}
