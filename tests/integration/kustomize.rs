//! basepress's Kustomize build against the real `kubectl kustomize`: a
//! hand-written corpus (tests/kustomize/*.case), randomly generated bases
//! and overlays (seeded, shrinking), and provenance of built fields.
//!
//! A case file holds the files of a build, each after a `#### PATH` line.
//! Header lines before the first file set what is expected:
//! `#### build: DIR` (the folder to build, default the root),
//! `#### error: RULE` (kubectl fails, and basepress with RULE),
//! `#### stricter: RULE` (kubectl builds it, basepress refuses with RULE).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use basepress::kustomize::{self, MemFiles, SourceFile};
use serde_json::Value;

use crate::support::{have, repo};

/// One build to compare.
#[derive(Debug, Clone, Default)]
pub struct Case {
    pub name: String,
    pub files: BTreeMap<String, Vec<u8>>,
    pub dir: String,
    pub error: Option<String>,
    pub stricter: Option<String>,
}

fn parse_case(name: &str, text: &str) -> Case {
    let mut case = Case {
        name: name.to_string(),
        ..Case::default()
    };
    let mut current: Option<String> = None;
    for line in text.split_inclusive('\n') {
        if let Some(head) = line.strip_prefix("#### ") {
            let head = head.trim_end();
            if let Some(dir) = head.strip_prefix("build: ") {
                case.dir = dir.to_string();
            } else if let Some(rule) = head.strip_prefix("error: ") {
                case.error = Some(rule.to_string());
            } else if let Some(rule) = head.strip_prefix("stricter: ") {
                case.stricter = Some(rule.to_string());
            } else {
                case.files.insert(head.to_string(), Vec::new());
                current = Some(head.to_string());
            }
            continue;
        }
        if let Some(f) = current.as_ref().and_then(|c| case.files.get_mut(c)) {
            f.extend_from_slice(line.as_bytes());
        }
    }
    // Escapes for bytes a text file cannot show: a BOM, CR line ends, and
    // bytes that are not UTF-8.
    for bytes in case.files.values_mut() {
        let marker = b"<INVALID-UTF8>";
        if let Some(i) = bytes.windows(marker.len()).position(|w| w == marker) {
            bytes.splice(i..i + marker.len(), [0xff, 0xfe, 0x00, 0x80]);
        }
        let Ok(text) = String::from_utf8(bytes.clone()) else {
            continue;
        };
        if text.contains("<BOM>") || text.contains("<CRLF>") {
            let t = text.replace("<BOM>", "\u{feff}").replace("<CRLF>\n", "\r\n");
            *bytes = t.into_bytes();
        }
    }
    case
}

/// What a build gave: the objects, or an error (rule id, or kubectl's
/// message).
type Outcome = Result<Vec<Value>, String>;

fn mem_files(case: &Case) -> MemFiles {
    let mut files = MemFiles::new();
    for (path, bytes) in &case.files {
        files.insert(path, SourceFile::new(bytes.clone(), path.as_str()));
    }
    files
}

fn basepress(case: &Case) -> Outcome {
    match kustomize::build(&mem_files(case), &case.dir) {
        Ok(b) => Ok(b.objects.into_iter().map(|o| o.value).collect()),
        Err(errors) => Err(errors
            .iter()
            .map(|e| format!("{}: {} ({})", e.rule.id, e.message, e.location.file.display()))
            .collect::<Vec<_>>()
            .join("; ")),
    }
}

fn kubectl(case: &Case, scratch: &Path) -> Outcome {
    let root = scratch.join(format!("{}-{}", std::process::id(), case.name.replace('/', "_")));
    let _ = std::fs::remove_dir_all(&root);
    for (path, bytes) in &case.files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
    }
    std::fs::create_dir_all(root.join(&case.dir)).unwrap();
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(root.join(&case.dir))
        .output()
        .expect("kubectl runs");
    let _ = std::fs::remove_dir_all(&root);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut docs = Vec::new();
    for de in serde_yaml::Deserializer::from_str(&text) {
        let v: Value = serde::Deserialize::deserialize(de).unwrap();
        if !v.is_null() {
            docs.push(v);
        }
    }
    Ok(docs)
}

/// Compares one case; None when both agree.
fn compare(case: &Case, scratch: &Path) -> Option<String> {
    let ours = basepress(case);
    let theirs = kubectl(case, scratch);
    let pretty = |v: &Outcome| match v {
        Ok(docs) => serde_json::to_string_pretty(docs).unwrap(),
        Err(e) => format!("error: {e}"),
    };
    let rule_of = |o: &Outcome| match o {
        Err(e) => e.split(':').next().unwrap_or_default().to_string(),
        Ok(_) => String::new(),
    };
    let problem = match (&ours, &theirs, &case.error, &case.stricter) {
        (Ok(a), Ok(b), None, None) if a == b => return None,
        (Err(_), Err(_), Some(want), _) if rule_of(&ours) == *want => return None,
        (Err(_), Ok(_), None, Some(want)) if rule_of(&ours) == *want => return None,
        (Err(_), Err(_), None, None) => "both fail, but the case expects a build",
        (Err(_), Err(_), Some(_), _) => "basepress fails with another rule",
        (_, Ok(_), None, Some(_)) => "basepress does not refuse it with the expected rule",
        (_, Err(_), None, Some(_)) => "kubectl refuses a case marked stricter",
        (Ok(_), Err(_), _, _) => "kubectl fails and basepress builds",
        (Err(_), Ok(_), _, _) => "basepress fails and kubectl builds",
        (Ok(_), Ok(_), Some(_), _) => "both build a case that expects an error",
        (Ok(_), Ok(_), _, _) => "the objects differ",
    };
    Some(format!(
        "{}: {problem}\n--- basepress:\n{}\n--- kubectl:\n{}",
        case.name,
        pretty(&ours),
        pretty(&theirs)
    ))
}

/// Compares cases on a few threads; returns the failures.
fn compare_all(cases: &[Case]) -> Vec<String> {
    let scratch = tempfile::tempdir().unwrap();
    let next = AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..6 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                if let Some(f) = compare(case, scratch.path()) {
                    failures.lock().unwrap().push((i, f));
                }
            });
        }
    });
    let mut f = failures.into_inner().unwrap();
    f.sort();
    f.into_iter().map(|(_, s)| s).collect()
}

fn corpus() -> Vec<Case> {
    let dir = repo().join("tests/kustomize");
    let mut cases = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "case"))
        .collect();
    paths.sort();
    for p in paths {
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        cases.push(parse_case(&name, &std::fs::read_to_string(&p).unwrap()));
    }
    cases
}

#[test]
fn corpus_matches_kubectl() {
    let cases = corpus();
    assert!(cases.len() >= 60, "the corpus has {} cases", cases.len());
    if !have("kubectl") {
        return;
    }
    let failures = compare_all(&cases);
    assert!(failures.is_empty(), "{} of {} cases disagree:\n\n{}", failures.len(), cases.len(), failures.join("\n\n"));
}

/// The repository's bases, built as `kubectl kustomize bases/vX.Y.Z`.
#[test]
fn repository_bases_match_kubectl() {
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(repo().join("bases")).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let mut case = Case {
            name: path.file_name().unwrap().to_string_lossy().into_owned(),
            ..Case::default()
        };
        for f in std::fs::read_dir(&path).unwrap() {
            let f = f.unwrap().path();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            case.files.insert(name, std::fs::read(&f).unwrap());
        }
        cases.push(case);
    }
    assert!(cases.len() >= 2);
    for case in &cases {
        assert!(basepress(case).is_ok(), "{}: {:?}", case.name, basepress(case).err());
    }
    if !have("kubectl") {
        return;
    }
    let failures = compare_all(&cases);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
