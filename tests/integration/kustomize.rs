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
            let t = text
                .replace("<BOM>", "\u{feff}")
                .replace("<CRLF>\n", "\r\n");
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
            .map(|e| {
                format!(
                    "{}: {} ({})",
                    e.rule.id,
                    e.message,
                    e.location.file.display()
                )
            })
            .collect::<Vec<_>>()
            .join("; ")),
    }
}

fn kubectl(case: &Case, scratch: &Path) -> Outcome {
    let root = scratch.join(format!(
        "{}-{}",
        std::process::id(),
        case.name.replace('/', "_")
    ));
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

/// kubectl runs at once: each spends much of its time starting up.
const THREADS: usize = 12;

/// Compares cases on a few threads; returns the failures.
fn compare_all(cases: &[Case]) -> Vec<String> {
    let scratch = tempfile::tempdir().unwrap();
    let next = AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..THREADS {
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
    assert!(
        failures.is_empty(),
        "{} of {} cases disagree:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

/// A file in UTF-16 with its byte-order mark (what PowerShell's `>`
/// writes): `kubectl kustomize` reads it; basepress refuses it, and says
/// how to save it (deliberately stricter: the corpus holds text only).
#[test]
fn utf16_files_are_refused_with_how_to_save_them() {
    let utf16 = |text: &str| -> Vec<u8> {
        let mut bytes = vec![0xFF, 0xFE];
        bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        bytes
    };
    let resource = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";
    let kustomization = "resources: [r.yaml]\n";
    for (name, files, rule) in [
        (
            "resource",
            [
                ("kustomization.yaml", kustomization.as_bytes().to_vec()),
                ("r.yaml", utf16(resource)),
            ],
            "manifest-yaml-invalid",
        ),
        (
            "kustomization",
            [
                ("kustomization.yaml", utf16(kustomization)),
                ("r.yaml", resource.as_bytes().to_vec()),
            ],
            "kustomization-invalid",
        ),
    ] {
        let case = Case {
            name: format!("utf16-{name}"),
            files: files.into_iter().map(|(p, b)| (p.to_string(), b)).collect(),
            ..Case::default()
        };
        let Err(message) = basepress(&case) else {
            panic!("{name}: a UTF-16 file was built");
        };
        assert!(
            message.starts_with(rule) && message.contains("UTF-16") && message.contains("UTF-8"),
            "{name}: {message}"
        );
        if have("kubectl") {
            let scratch = tempfile::tempdir().unwrap();
            assert!(
                kubectl(&case, scratch.path()).is_ok(),
                "{name}: kubectl refuses it too"
            );
        }
    }
}

/// The repository's bases, built as `kubectl kustomize bases/vX.Y.Z`.
#[test]
fn repository_bases_match_kubectl() {
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(repo().join("bases")).unwrap() {
        let path = entry.unwrap().path();
        // Base folders only (not bases/signatures/).
        let is_base = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix('v'))
            .is_some_and(|v| semver::Version::parse(v).is_ok());
        if !path.is_dir() || !is_base {
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
        assert!(
            basepress(case).is_ok(),
            "{}: {:?}",
            case.name,
            basepress(case).err()
        );
    }
    if !have("kubectl") {
        return;
    }
    let failures = compare_all(&cases);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Random but valid bases and overlays.
mod generated {
    use super::*;
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    /// A workload of the base.
    #[derive(Debug, Clone)]
    struct Workload {
        kind: &'static str,
        name: &'static str,
        image: &'static str,
        replicas: Option<u8>,
        env_from_cm: bool,
        env_from_secret: bool,
        volume_cm: bool,
        labels: bool,
    }

    #[derive(Debug, Clone)]
    struct Generator {
        secret: bool,
        name: &'static str,
        literals: Vec<(&'static str, String)>,
        env_file: Vec<(&'static str, String)>,
        no_hash: bool,
        labels: bool,
    }

    /// An `images:` entry: name, newName, newTag, digest.
    type ImageEntry = (
        &'static str,
        Option<&'static str>,
        Option<&'static str>,
        Option<&'static str>,
    );

    /// An overlay: its transforms, generators merged into the base's (by
    /// index, with literals), and whether it adds a generator of its own.
    type Overlay = (Transforms, Vec<(usize, Vec<(&'static str, String)>)>, bool);

    /// Fields of a kustomization that transform what it builds.
    #[derive(Debug, Clone, Default)]
    struct Transforms {
        namespace: Option<&'static str>,
        prefix: Option<&'static str>,
        suffix: Option<&'static str>,
        common_labels: Vec<(&'static str, &'static str)>,
        labels: Option<(&'static str, bool, bool)>,
        annotations: Vec<(&'static str, String)>,
        image: Option<ImageEntry>,
        replicas: Option<(usize, u8)>,
        smp: Option<(usize, u8)>,
        json: Option<(usize, u8)>,
        legacy_json: bool,
        inline: bool,
        /// A replacement from a workload's name into workloads of its kind.
        replacement: Option<(usize, u8)>,
    }

    #[derive(Debug, Clone)]
    struct Spec {
        workloads: Vec<Workload>,
        services: bool,
        generators: Vec<Generator>,
        base: Transforms,
        overlay: Option<Overlay>,
    }

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z0-9]{0,6}",
            Just("with space".to_string()),
            Just("a=b".to_string()),
            Just("<&>".to_string()),
            Just("'quoted'".to_string()),
            Just("12".to_string()),
        ]
    }

    fn key() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["A", "B", "RUNNER_LOG", "x.y", "key-1", "Z_9"])
    }

    fn pairs() -> impl Strategy<Value = Vec<(&'static str, String)>> {
        prop::collection::btree_map(key(), value(), 0..4).prop_map(|m| m.into_iter().collect())
    }

    fn workload() -> impl Strategy<Value = Workload> {
        (
            prop::sample::select(vec![
                "Deployment",
                "StatefulSet",
                "DaemonSet",
                "Job",
                "CronJob",
                "Pod",
            ]),
            prop::sample::select(vec!["web", "agent", "db"]),
            prop::sample::select(vec![
                "nginx",
                "nginx:1.25",
                "app@sha256:abc",
                "reg.io:5000/app:2",
                "whystack-agent",
            ]),
            prop::option::of(0u8..4),
            any::<(bool, bool, bool, bool)>(),
        )
            .prop_map(|(kind, name, image, replicas, (a, b, c, d))| Workload {
                kind,
                name,
                image,
                replicas,
                env_from_cm: a,
                env_from_secret: b,
                volume_cm: c,
                labels: d,
            })
    }

    fn generator() -> impl Strategy<Value = Generator> {
        (
            any::<bool>(),
            prop::sample::select(vec!["cfg", "env", "settings"]),
            pairs(),
            pairs(),
            any::<(bool, bool)>(),
        )
            .prop_map(
                |(secret, name, literals, env_file, (no_hash, labels))| Generator {
                    secret,
                    name,
                    literals,
                    env_file,
                    no_hash,
                    labels,
                },
            )
    }

    fn transforms() -> impl Strategy<Value = Transforms> {
        let image = prop::option::of((
            prop::sample::select(vec!["nginx", "app", "whystack-agent", "reg.io:5000/app"]),
            prop::option::of(prop::sample::select(vec!["mirror.io/nginx", "x/app"])),
            prop::option::of(prop::sample::select(vec!["v2", "3.0"])),
            prop::option::of(prop::sample::select(vec!["sha256:1234"])),
        ));
        (
            (
                prop::option::of(prop::sample::select(vec!["team", "prod"])),
                prop::option::of(prop::sample::select(vec!["p-", "x-"])),
                prop::option::of(prop::sample::select(vec!["-s", "-v1"])),
                prop::collection::vec(
                    (
                        prop::sample::select(vec!["app", "tier", "env"]),
                        prop::sample::select(vec!["a", "b"]),
                    ),
                    0..2,
                ),
                prop::option::of((
                    prop::sample::select(vec!["team", "owner"]),
                    any::<bool>(),
                    any::<bool>(),
                )),
            ),
            (
                prop::collection::vec(
                    (prop::sample::select(vec!["note", "example.com/x"]), value()),
                    0..2,
                ),
                image,
                prop::option::of((0usize..4, 0u8..4)),
                prop::option::of((0usize..4, 0u8..4)),
                prop::option::of((0usize..4, 0u8..3)),
                any::<(bool, bool)>(),
                prop::option::of((0usize..4, 0u8..4)),
            ),
        )
            .prop_map(
                |(
                    (namespace, prefix, suffix, mut common_labels, labels),
                    (annotations, image, replicas, smp, json, (legacy_json, inline), replacement),
                )| {
                    common_labels.dedup_by_key(|(k, _)| *k);
                    let labels =
                        labels.filter(|(k, _, _)| !common_labels.iter().any(|(c, _)| c == k));
                    let mut annotations = annotations;
                    annotations.dedup_by_key(|(k, _)| *k);
                    Transforms {
                        namespace,
                        prefix,
                        suffix,
                        common_labels,
                        labels,
                        annotations,
                        image,
                        replicas,
                        smp,
                        json,
                        legacy_json,
                        inline,
                        replacement,
                    }
                },
            )
    }

    fn spec() -> impl Strategy<Value = Spec> {
        (
            prop::collection::vec(workload(), 1..4),
            any::<bool>(),
            prop::collection::vec(generator(), 0..3),
            transforms(),
            prop::option::of((
                transforms(),
                prop::collection::vec((0usize..3, pairs()), 0..2),
                any::<bool>(),
            )),
        )
            .prop_map(|(mut workloads, services, mut generators, base, overlay)| {
                // Ids must be unique: one workload per name, one generator per name.
                let mut seen = Vec::new();
                workloads.retain(|w| {
                    let new = !seen.contains(&w.name);
                    seen.push(w.name);
                    new
                });
                let mut gseen = Vec::new();
                generators.retain(|g| {
                    let new = !gseen.contains(&g.name);
                    gseen.push(g.name);
                    new
                });
                Spec {
                    workloads,
                    services,
                    generators,
                    base,
                    overlay,
                }
            })
    }

    fn api(kind: &str) -> &'static str {
        match kind {
            "Pod" | "Service" | "ConfigMap" => "v1",
            "Job" | "CronJob" => "batch/v1",
            _ => "apps/v1",
        }
    }

    fn quote(s: &str) -> String {
        serde_json::to_string(s).unwrap()
    }

    fn pod_spec(w: &Workload, cm: Option<&str>, secret: Option<&str>, indent: usize) -> String {
        let pad = " ".repeat(indent);
        let mut s = format!(
            "{pad}containers:\n{pad}  - name: main\n{pad}    image: {}\n",
            w.image
        );
        let mut env_from = Vec::new();
        if let (true, Some(cm)) = (w.env_from_cm, cm) {
            env_from.push(format!("{{configMapRef: {{name: {cm}}}}}"));
        }
        if let (true, Some(sec)) = (w.env_from_secret, secret) {
            env_from.push(format!("{{secretRef: {{name: {sec}}}}}"));
        }
        if !env_from.is_empty() {
            s += &format!("{pad}    envFrom: [{}]\n", env_from.join(", "));
        }
        if let (true, Some(cm)) = (w.volume_cm, cm) {
            s += &format!(
                "{pad}volumes:\n{pad}  - name: conf\n{pad}    configMap: {{name: {cm}}}\n"
            );
        }
        if w.kind == "Job" || w.kind == "CronJob" {
            s += &format!("{pad}restartPolicy: Never\n");
        }
        s
    }

    fn workload_yaml(w: &Workload, cm: Option<&str>, secret: Option<&str>) -> String {
        let labels = if w.labels {
            format!("\n  labels: {{app: {}}}", w.name)
        } else {
            String::new()
        };
        let head = format!(
            "apiVersion: {}\nkind: {}\nmetadata:\n  name: {}{labels}\n",
            api(w.kind),
            w.kind,
            w.name
        );
        let replicas = w
            .replicas
            .map(|r| format!("  replicas: {r}\n"))
            .unwrap_or_default();
        match w.kind {
            "Pod" => format!("{head}spec:\n{}", pod_spec(w, cm, secret, 2)),
            "CronJob" => format!(
                "{head}spec:\n  schedule: \"@daily\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n{}",
                pod_spec(w, cm, secret, 10)
            ),
            "Job" => format!("{head}spec:\n  template:\n    spec:\n{}", pod_spec(w, cm, secret, 6)),
            _ => format!(
                "{head}spec:\n{replicas}  selector:\n    matchLabels: {{app: {n}}}\n  template:\n    metadata:\n      labels: {{app: {n}}}\n    spec:\n{}",
                pod_spec(w, cm, secret, 6),
                n = w.name
            ),
        }
    }

    fn kustomization(
        t: &Transforms,
        spec: &Spec,
        resources: &[String],
        files: &mut BTreeMap<String, Vec<u8>>,
        dir: &str,
    ) -> String {
        let mut k = format!(
            "resources:\n{}",
            resources
                .iter()
                .map(|r| format!("  - {r}\n"))
                .collect::<String>()
        );
        if let Some(ns) = t.namespace {
            k += &format!("namespace: {ns}\n");
        }
        if let Some(p) = t.prefix {
            k += &format!("namePrefix: {p}\n");
        }
        if let Some(s) = t.suffix {
            k += &format!("nameSuffix: {s}\n");
        }
        if !t.common_labels.is_empty() {
            k += "commonLabels:\n";
            for (a, b) in &t.common_labels {
                k += &format!("  {a}: {b}\n");
            }
        }
        if let Some((key, sel, tmpl)) = t.labels {
            k += &format!("labels:\n  - pairs: {{{key}: yes-label}}\n    includeSelectors: {sel}\n    includeTemplates: {tmpl}\n");
        }
        if !t.annotations.is_empty() {
            k += "commonAnnotations:\n";
            for (a, b) in &t.annotations {
                k += &format!("  {a}: {}\n", quote(b));
            }
        }
        if let Some((name, new_name, tag, digest)) = t.image {
            k += &format!("images:\n  - name: {name}\n");
            if let Some(n) = new_name {
                k += &format!("    newName: {n}\n");
            }
            if let Some(t) = tag {
                k += &format!("    newTag: {}\n", quote(t));
            }
            if let Some(d) = digest {
                k += &format!("    digest: {d}\n");
            }
        }
        let workload = |i: usize| &spec.workloads[i % spec.workloads.len()];
        if let Some((i, count)) = t.replicas {
            let w = workload(i);
            if matches!(w.kind, "Deployment" | "StatefulSet") {
                k += &format!("replicas:\n  - name: {}\n    count: {count}\n", w.name);
            }
        }
        let mut patches = Vec::new();
        if let Some((i, variant)) = t.smp {
            let w = workload(i);
            let body = match (w.kind, variant) {
                ("Pod", _) => "spec:\n  terminationGracePeriodSeconds: 150\n".to_string(),
                ("CronJob", _) => "spec:\n  suspend: true\n".to_string(),
                (_, 0) => "spec:\n  template:\n    spec:\n      containers:\n        - name: main\n          env: [{name: PATCHED, value: \"1\"}]\n".to_string(),
                (_, 1) => "spec:\n  template:\n    spec:\n      containers:\n        - name: side\n          image: busybox\n".to_string(),
                (_, 2) => "metadata:\n  annotations: {patched: \"yes\"}\n".to_string(),
                _ => "spec:\n  template:\n    metadata:\n      labels: {extra: \"1\"}\n".to_string(),
            };
            let patch = format!(
                "apiVersion: {}\nkind: {}\nmetadata:\n  name: {}\n{body}",
                api(w.kind),
                w.kind,
                w.name
            );
            let patch = fix_metadata(&patch);
            if t.inline {
                let indented: String = patch.lines().map(|l| format!("      {l}\n")).collect();
                patches.push(format!("  - patch: |-\n{indented}"));
            } else {
                let name = format!("smp-{}.yaml", w.name);
                files.insert(format!("{dir}{name}"), patch.into_bytes());
                patches.push(format!("  - path: {name}\n"));
            }
        }
        if let (Some((i, variant)), false) = (t.json, t.legacy_json) {
            let w = workload(i);
            let op = json_op(variant);
            patches.push(format!(
                "  - target: {{kind: {}, name: \"{}.*\"}}\n    patch: '{op}'\n",
                w.kind,
                &w.name[..2]
            ));
        }
        if !patches.is_empty() {
            k += &format!("patches:\n{}", patches.concat());
        }
        if let Some((i, variant)) = t.replacement {
            let w = workload(i);
            let (field, options, reject) = match variant {
                0 => ("metadata.annotations.copied", "create: true", String::new()),
                1 => (
                    "metadata.annotations.part",
                    "create: true, delimiter: \"-\", index: 0",
                    String::new(),
                ),
                2 => (
                    "metadata.labels.copied",
                    "create: true",
                    format!("        reject: [{{name: {}}}]\n", w.name),
                ),
                _ => (
                    "metadata.annotations.split",
                    "create: true, delimiter: \"/\", index: 5",
                    String::new(),
                ),
            };
            k += &format!(
                "replacements:\n  - source: {{kind: {kind}, name: {name}}}\n    targets:\n      - select: {{kind: {kind}}}\n{reject}        fieldPaths: [{field}]\n        options: {{{options}}}\n",
                kind = w.kind,
                name = w.name
            );
        }
        if let (Some((i, variant)), true) = (t.json, t.legacy_json) {
            let w = workload(i);
            k += &format!(
                "patchesJson6902:\n  - target: {{version: {}, kind: {}, name: {}}}\n    patch: '{}'\n",
                api(w.kind).rsplit('/').next().unwrap(),
                w.kind,
                w.name,
                json_op(variant)
            );
        }
        k
    }

    fn fix_metadata(s: &str) -> String {
        // A patch with both `metadata:` lines merges them into one.
        let mut out = String::new();
        let mut seen = false;
        for line in s.lines() {
            if line == "metadata:" {
                if seen {
                    continue;
                }
                seen = true;
            }
            out += line;
            out.push('\n');
        }
        out
    }

    fn json_op(variant: u8) -> String {
        match variant {
            0 => r#"[{"op": "add", "path": "/metadata/annotations", "value": {"json": "added"}}]"#.into(),
            1 => r#"[{"op": "add", "path": "/metadata/labels/jsonlabel", "value": "x"}]"#.replace("/metadata/labels/jsonlabel", "/metadata/finalizers").replace("\"x\"", "[\"a\"]"),
            _ => r#"[{"op": "replace", "path": "/kind", "value": "KEEP"}, {"op": "test", "path": "/kind", "value": "KEEP"}, {"op": "replace", "path": "/kind", "value": "KIND"}]"#.into(),
        }
    }

    fn render(spec: &Spec, name: &str) -> Case {
        let mut files = BTreeMap::new();
        let cm = spec.generators.iter().find(|g| !g.secret).map(|g| g.name);
        let secret = spec.generators.iter().find(|g| g.secret).map(|g| g.name);
        let mut docs: Vec<String> = spec
            .workloads
            .iter()
            .map(|w| workload_yaml(w, cm, secret))
            .collect();
        if spec.services {
            for w in &spec.workloads {
                docs.push(format!("apiVersion: v1\nkind: Service\nmetadata:\n  name: {}\nspec:\n  selector: {{app: {}}}\n  ports: [{{port: 80}}]\n", w.name, w.name));
            }
        }
        files.insert(
            "base/resources.yaml".to_string(),
            docs.join("---\n").into_bytes(),
        );
        let mut k = kustomization(
            &spec.base,
            spec,
            &["resources.yaml".to_string()],
            &mut files,
            "base/",
        );
        k += &generators(&spec.generators, &mut files, "base/", None);
        files.insert("base/kustomization.yaml".into(), k.into_bytes());
        let mut dir = "base".to_string();
        if let Some((t, merges, own_cm)) = &spec.overlay {
            let mut k = kustomization(t, spec, &["../base".to_string()], &mut files, "overlay/");
            let mut gens: Vec<Generator> = Vec::new();
            for (i, pairs) in merges {
                if let Some(g) = spec.generators.get(*i) {
                    if gens.iter().any(|x| x.name == g.name) {
                        continue;
                    }
                    gens.push(Generator {
                        literals: pairs.clone(),
                        env_file: Vec::new(),
                        ..g.clone()
                    });
                }
            }
            let mut merged = generators(&gens, &mut files, "overlay/", Some("merge"));
            if *own_cm {
                let own = Generator {
                    secret: false,
                    name: "overlay-own",
                    literals: vec![("OWN", "1".into())],
                    env_file: Vec::new(),
                    no_hash: false,
                    labels: false,
                };
                let extra = generators(&[own], &mut files, "overlay/", None);
                merged = join_generators(&merged, &extra);
            }
            if t.inline && !merged.is_empty() {
                // The overlay's generators from a component instead: they
                // run after its own resources, before its transformers.
                let component = format!(
                    "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n{merged}"
                );
                files.insert(
                    "components/gen/kustomization.yaml".into(),
                    component.into_bytes(),
                );
                k += "components:\n  - ../components/gen\n";
            } else {
                k += &merged;
            }
            files.insert("overlay/kustomization.yaml".into(), k.into_bytes());
            dir = "overlay".into();
        }
        Case {
            name: name.to_string(),
            files,
            dir,
            error: None,
            stricter: None,
        }
    }

    /// Joins two rendered generator sections, which may both open the
    /// same top-level key.
    fn join_generators(a: &str, b: &str) -> String {
        let mut cm = Vec::new();
        let mut sec = Vec::new();
        for part in [a, b] {
            let mut current: Option<&mut Vec<String>> = None;
            for line in part.lines() {
                match line {
                    "configMapGenerator:" => current = Some(&mut cm),
                    "secretGenerator:" => current = Some(&mut sec),
                    l => {
                        if let Some(c) = current.as_deref_mut() {
                            c.push(l.to_string());
                        }
                    }
                }
            }
        }
        let mut out = String::new();
        if !cm.is_empty() {
            out += &format!("configMapGenerator:\n{}\n", cm.join("\n"));
        }
        if !sec.is_empty() {
            out += &format!("secretGenerator:\n{}\n", sec.join("\n"));
        }
        out
    }

    fn generators(
        gens: &[Generator],
        files: &mut BTreeMap<String, Vec<u8>>,
        dir: &str,
        behavior: Option<&str>,
    ) -> String {
        let mut cm = String::new();
        let mut sec = String::new();
        for g in gens {
            let mut s = format!("  - name: {}\n", g.name);
            if let Some(b) = behavior {
                s += &format!("    behavior: {b}\n");
            }
            let keys_env: Vec<&str> = g.env_file.iter().map(|(k, _)| *k).collect();
            let literals: Vec<_> = g
                .literals
                .iter()
                .filter(|(k, _)| !keys_env.contains(k))
                .collect();
            if !literals.is_empty() {
                s += "    literals:\n";
                for (k, v) in literals {
                    s += &format!("      - {}\n", quote(&format!("{k}={v}")));
                }
            }
            if !g.env_file.is_empty() {
                let name = format!("{}.env", g.name);
                let text: String = g
                    .env_file
                    .iter()
                    .map(|(k, v)| format!("{k}={v}\n"))
                    .collect();
                files.insert(format!("{dir}{name}"), text.into_bytes());
                s += &format!("    envs: [{name}]\n");
            }
            if g.no_hash || g.labels {
                s += "    options:\n";
                if g.no_hash {
                    s += "      disableNameSuffixHash: true\n";
                }
                if g.labels {
                    s += "      labels: {generated: \"true\"}\n";
                }
            }
            if g.secret {
                sec += &s;
            } else {
                cm += &s;
            }
        }
        let mut out = String::new();
        if !cm.is_empty() {
            out += &format!("configMapGenerator:\n{cm}");
        }
        if !sec.is_empty() {
            out += &format!("secretGenerator:\n{sec}");
        }
        out
    }

    fn count() -> usize {
        if crate::support::required() {
            500
        } else {
            120
        }
    }

    /// Whether basepress and kubectl agree on a generated case: the same
    /// objects, or both refusing it.
    fn agrees(case: &Case, scratch: &Path) -> Result<(), String> {
        let ours = basepress(case);
        let theirs = kubectl(case, scratch);
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) if a == b => Ok(()),
            (Err(e), Ok(_)) if e.starts_with("kustomize-patch-target-unmatched") => Ok(()),
            (Err(_), Err(_)) => Ok(()),
            _ => Err(format!(
                "basepress: {}\nkubectl: {}",
                serde_json::to_string_pretty(&ours).unwrap(),
                serde_json::to_string_pretty(&theirs).unwrap()
            )),
        }
    }

    #[test]
    fn generated_builds_match_kubectl() {
        if !have("kubectl") {
            return;
        }
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::from_seed(RngAlgorithm::ChaCha, &[13; 32]),
        );
        let strategy = spec();
        let mut trees = Vec::new();
        for _ in 0..count() {
            trees.push(strategy.new_tree(&mut runner).unwrap());
        }
        let cases: Vec<Case> = trees
            .iter()
            .enumerate()
            .map(|(i, t)| render(&t.current(), &format!("gen-{i}")))
            .collect();
        let scratch = tempfile::tempdir().unwrap();
        let next = AtomicUsize::new(0);
        let failing = std::sync::Mutex::new(Vec::new());
        let agreed = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..THREADS {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    match agrees(case, scratch.path()) {
                        Ok(()) => {
                            agreed.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => failing.lock().unwrap().push(i),
                    }
                });
            }
        });
        let mut failing = failing.into_inner().unwrap();
        failing.sort();
        let Some(&first) = failing.first() else {
            eprintln!("{} generated cases agree with kubectl", agreed.into_inner());
            return;
        };
        // Shrink the first failing case to a smallest one that still fails.
        let mut tree = trees.swap_remove(first);
        let mut last = render(&tree.current(), "shrunk");
        let mut why = agrees(&last, scratch.path()).err().unwrap_or_default();
        for _ in 0..200 {
            if !tree.simplify() {
                break;
            }
            let candidate = render(&tree.current(), "shrunk");
            match agrees(&candidate, scratch.path()) {
                Err(w) => {
                    last = candidate;
                    why = w;
                }
                Ok(()) => {
                    if !tree.complicate() {
                        break;
                    }
                }
            }
        }
        let files: String = last
            .files
            .iter()
            .map(|(p, b)| format!("#### {p}\n{}", String::from_utf8_lossy(b)))
            .collect();
        panic!(
            "{} of {} generated cases disagree with kubectl; the first, shrunk (build {}):\n{files}\n{why}",
            failing.len(),
            cases.len(),
            last.dir
        );
    }
}

/// Where built fields point: the resource line, the patch line (in a file
/// or inline in the kustomization, itself in a page at a line offset), the
/// JSON 6902 operation, the generator literal and the env file line.
mod provenance {
    use super::*;
    use basepress::diagnostics::Location;

    const BASE_KUSTOMIZATION: &str = "\
namespace: agents
resources:
  - sts.yaml
configMapGenerator:
  - name: config
    envs: [config.env]
    literals:
      - RUNNER_LOG=debug
patches:
  - patch: |-
      apiVersion: apps/v1
      kind: StatefulSet
      metadata:
        name: agent
      spec:
        template:
          spec:
            containers:
              - name: agent
                livenessProbe:
                  exec:
                    command: [whystack-health, ready]
  - target: {kind: StatefulSet}
    path: ops.yaml
";

    const STS: &str = "\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: agent
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: agent
          image: whystack-agent
          envFrom:
            - configMapRef:
                name: config
";

    const OPS: &str = "\
- op: add
  path: /spec/template/spec/terminationGracePeriodSeconds
  value: 30
";

    const ENV: &str =
        "# settings\nRUNNER_ATTESTATION_MODE=bootstrap-token\n\nRUNNER_DRAIN_TIMEOUT_MS=120000\n";

    fn files() -> MemFiles {
        let mut f = MemFiles::new();
        f.insert(
            "base/kustomization.yaml",
            SourceFile::new(BASE_KUSTOMIZATION, "bases/v1/kustomization.yaml"),
        );
        f.insert("base/sts.yaml", SourceFile::new(STS, "bases/v1/sts.yaml"));
        f.insert("base/ops.yaml", SourceFile::new(OPS, "bases/v1/ops.yaml"));
        f.insert(
            "base/config.env",
            SourceFile::new(ENV, "bases/v1/config.env"),
        );
        // An overlay shown in a page: its kustomization is a fenced block
        // whose first line is line 41 of the page.
        let overlay = "\
resources: [../base]
replicas:
  - name: agent
    count: 2
images:
  - name: whystack-agent
    newName: reg.example.com/whystack-agent
";
        let mut page = SourceFile::new(overlay, "content/en/install.md");
        page.line_offset = 40;
        f.insert("overlay/kustomization.yaml", page);
        f
    }

    fn at(file: &str, line: usize, column: usize) -> Location {
        Location::at(file, line, column)
    }

    fn object<'a>(b: &'a kustomize::Build, kind: &str) -> &'a kustomize::Object {
        b.objects.iter().find(|o| o.kind() == kind).unwrap()
    }

    #[test]
    fn fields_point_where_they_were_set() {
        let build = kustomize::build(&files(), "base").unwrap();
        let sts = object(&build, "StatefulSet");
        let c = "/spec/template/spec/containers/0";
        // From the resource file.
        assert_eq!(
            sts.locate(&format!("{c}/image")),
            at("bases/v1/sts.yaml", 11, 11)
        );
        assert_eq!(sts.locate("/spec/replicas"), at("bases/v1/sts.yaml", 6, 3));
        // From the inline patch: the line of the patch in the kustomization.
        assert_eq!(
            sts.locate(&format!("{c}/livenessProbe/exec/command/1")),
            at("bases/v1/kustomization.yaml", 22, 48)
        );
        assert_eq!(
            sts.locate(&format!("{c}/livenessProbe")),
            at("bases/v1/kustomization.yaml", 20, 17)
        );
        // From the JSON 6902 operation in ops.yaml.
        assert_eq!(
            sts.locate("/spec/template/spec/terminationGracePeriodSeconds"),
            at("bases/v1/ops.yaml", 3, 3)
        );
        // The namespace transformer's line; a node below a located one.
        assert_eq!(
            sts.locate("/metadata/namespace"),
            at("bases/v1/kustomization.yaml", 1, 1)
        );
        assert_eq!(
            sts.locate(&format!("{c}/envFrom/0/configMapRef/name/deeper")),
            at("bases/v1/sts.yaml", 14, 17)
        );
        let cm = object(&build, "ConfigMap");
        assert!(cm.name().starts_with("config-"), "{}", cm.name());
        assert_eq!(
            sts.value
                .pointer(&format!("{c}/envFrom/0/configMapRef/name"))
                .unwrap(),
            cm.name()
        );
        // Generator literal and env file lines.
        assert_eq!(
            cm.locate("/data/RUNNER_LOG"),
            at("bases/v1/kustomization.yaml", 8, 9)
        );
        assert_eq!(
            cm.locate("/data/RUNNER_ATTESTATION_MODE"),
            at("bases/v1/config.env", 2, 1)
        );
        assert_eq!(
            cm.locate("/data/RUNNER_DRAIN_TIMEOUT_MS"),
            at("bases/v1/config.env", 4, 1)
        );
    }

    #[test]
    fn overlay_fields_point_at_the_page() {
        let build = kustomize::build(&files(), "overlay").unwrap();
        let sts = object(&build, "StatefulSet");
        assert_eq!(sts.value["spec"]["replicas"], 2);
        assert_eq!(
            sts.locate("/spec/replicas"),
            at("content/en/install.md", 44, 5)
        );
        assert_eq!(
            sts.locate("/spec/template/spec/containers/0/image"),
            at("content/en/install.md", 46, 5)
        );
        // What the overlay leaves alone still points at the base.
        assert_eq!(
            sts.locate("/spec/template/spec/containers/0/envFrom"),
            at("bases/v1/sts.yaml", 12, 11)
        );
        // The container's name is set by the base's patch too, which wins.
        assert_eq!(
            sts.locate("/spec/template/spec/containers/0/name"),
            at("bases/v1/kustomization.yaml", 19, 17)
        );
    }

    #[test]
    fn errors_point_at_their_cause() {
        let mut f = files();
        let bad = "resources: [../base]\npatches:\n  - target: {kind: Deployment}\n    patch: '[{\"op\": \"add\", \"path\": \"/x\", \"value\": 1}]'\n";
        let mut page = SourceFile::new(bad, "content/en/x.md");
        page.line_offset = 10;
        f.insert("overlay/kustomization.yaml", page);
        let errors = kustomize::build(&f, "overlay").unwrap_err();
        assert_eq!(errors[0].rule.id, "kustomize-patch-target-unmatched");
        assert_eq!(errors[0].location, at("content/en/x.md", 13, 5));
        let mut f = files();
        f.insert(
            "base/config.env",
            SourceFile::new("OK=1\nBAD KEY=x\n", "bases/v1/config.env"),
        );
        let errors = kustomize::build(&f, "base").unwrap_err();
        assert_eq!(errors[0].rule.id, "kustomize-generator-key-invalid");
        assert_eq!(errors[0].location, at("bases/v1/config.env", 2, 1));
        // A byte that is not UTF-8 is pointed at.
        let mut f = files();
        f.insert(
            "base/sts.yaml",
            SourceFile::new(
                b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \xff\n".to_vec(),
                "bases/v1/sts.yaml",
            ),
        );
        let errors = kustomize::build(&f, "base").unwrap_err();
        assert_eq!(
            errors[0].location,
            at("bases/v1/sts.yaml", 4, 9),
            "{}",
            errors[0].message
        );
        // A patch that cannot merge names the object it was merged into.
        let mut f = files();
        let bad = "resources: [../base]\npatches:\n  - patch: |\n      apiVersion: apps/v1\n      kind: StatefulSet\n      metadata: {name: agent}\n      spec:\n        template:\n          spec:\n            containers: {name: agent}\n";
        f.insert(
            "overlay/kustomization.yaml",
            SourceFile::new(bad, "content/en/x.md"),
        );
        let errors = kustomize::build(&f, "overlay").unwrap_err();
        assert_eq!(errors[0].rule.id, "kustomize-patch-invalid");
        assert!(
            errors[0].message.contains("StatefulSet") && errors[0].message.contains("agent"),
            "{}",
            errors[0].message
        );
    }

    /// Building the repository's bases and a few dozen overlays of them
    /// stays fast (here in a debug build, on a shared machine: the bound
    /// only catches a blow-up; `cargo run --release --example
    /// kustomize_build` measures it).
    #[test]
    fn builds_are_fast() {
        let mut files = MemFiles::new();
        let mut overlays = Vec::new();
        for version in ["v1.29.0", "v1.30.0"] {
            let dir = repo().join("bases").join(version);
            for entry in std::fs::read_dir(&dir).unwrap() {
                let p = entry.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                files.insert(
                    &format!("{version}/{name}"),
                    SourceFile::new(std::fs::read(&p).unwrap(), p.clone()),
                );
            }
            for i in 0..20 {
                let k = format!(
                    "resources: [../{version}]\nimages:\n  - name: whystack-agent\n    newName: r.io/whystack-agent\n    digest: sha256:{i:064}\nconfigMapGenerator:\n  - name: whystack-agent-config\n    behavior: merge\n    literals: [RUNNER_LOG=debug]\npatches:\n  - patch: |-\n      apiVersion: apps/v1\n      kind: StatefulSet\n      metadata: {{name: whystack-agent}}\n      spec:\n        template:\n          spec:\n            terminationGracePeriodSeconds: 150\n"
                );
                let dir = format!("overlay-{version}-{i}");
                files.insert(
                    &format!("{dir}/kustomization.yaml"),
                    SourceFile::new(k, "page.md"),
                );
                overlays.push(dir);
            }
        }
        // This thread's CPU time, not the wall clock: the other tests that
        // run meanwhile on CI's two cores once made 0.3 s of work take 5 s.
        let cpu = || {
            let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
            std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
        };
        let start = cpu();
        let mut objects = 0;
        let mut cache = kustomize::Cache::default();
        for dir in ["v1.29.0", "v1.30.0"]
            .iter()
            .map(|s| s.to_string())
            .chain(overlays.clone())
        {
            let built = kustomize::build_with(&files, &dir, &mut cache).unwrap();
            // The cache gives what a fresh build gives.
            assert_eq!(
                built.objects.iter().map(|o| &o.value).collect::<Vec<_>>(),
                kustomize::build(&files, &dir)
                    .unwrap()
                    .objects
                    .iter()
                    .map(|o| &o.value)
                    .collect::<Vec<_>>()
            );
            objects += built.objects.len();
        }
        let took = cpu() - start;
        eprintln!(
            "built 2 bases and {} overlays ({objects} objects) in {took:?} of CPU",
            overlays.len()
        );
        assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    }
}

/// The overlays the docs show (their `file=` blocks), built on the latest
/// base as a reader would, agree with kubectl, and their fields point at
/// the page's lines.
#[test]
fn documented_overlays_match_kubectl() {
    let root = repo();
    let mut versions: Vec<String> = std::fs::read_dir(root.join("bases"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.strip_prefix('v')
                .is_some_and(|v| semver::Version::parse(v).is_ok())
        })
        .collect();
    versions.sort_by_key(|v| semver::Version::parse(v.trim_start_matches('v')).unwrap());
    let latest = versions.last().unwrap().clone();
    let mut cases = Vec::new();
    let mut pages = Vec::new();
    for lang in std::fs::read_dir(root.join("content")).unwrap() {
        for page in std::fs::read_dir(lang.unwrap().path()).unwrap() {
            let path = page.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    for path in pages {
        let text = std::fs::read_to_string(&path).unwrap();
        let version = text
            .lines()
            .find_map(|l| l.strip_prefix("base: "))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| latest.clone());
        let mut case = Case {
            name: path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('/', "_"),
            dir: "overlay".into(),
            ..Case::default()
        };
        let mut block: Option<(String, usize, String)> = None;
        let mut memfiles = MemFiles::new();
        for (i, line) in text.lines().enumerate() {
            if let Some((name, start, body)) = block.as_mut() {
                if line.trim_start().starts_with("```") {
                    case.files
                        .insert(format!("overlay/{name}"), body.clone().into_bytes());
                    let rel = path.strip_prefix(&root).unwrap().to_path_buf();
                    let mut f = SourceFile::new(body.clone(), rel);
                    f.line_offset = *start;
                    memfiles.insert(&format!("overlay/{name}"), f);
                    block = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
                continue;
            }
            if let Some(name) = line
                .trim_start()
                .strip_prefix("```")
                .and_then(|l| l.split("file=").nth(1))
            {
                block = Some((name.trim().to_string(), i + 1, String::new()));
            }
        }
        if !case.files.contains_key("overlay/kustomization.yaml") {
            continue;
        }
        for entry in std::fs::read_dir(root.join("bases").join(&version)).unwrap() {
            let p = entry.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&p).unwrap();
            case.files
                .insert(format!("overlay/base/{name}"), bytes.clone());
            memfiles.insert(
                &format!("overlay/base/{name}"),
                SourceFile::new(bytes, p.strip_prefix(&root).unwrap()),
            );
        }
        // Fields the overlay sets point into the page.
        let built = kustomize::build(&memfiles, "overlay")
            .unwrap_or_else(|e| panic!("{}: {}", case.name, e[0]));
        let page = path.strip_prefix(&root).unwrap();
        let sts = built
            .objects
            .iter()
            .find(|o| o.kind() == "StatefulSet")
            .unwrap();
        let image = sts.locate("/spec/template/spec/containers/0/image");
        if text.contains("newName:") {
            assert_eq!(
                image.file, page,
                "{}: the image comes from the page's images entry",
                case.name
            );
        }
        cases.push(case);
    }
    assert!(
        cases.len() >= 10,
        "only {} documented overlays",
        cases.len()
    );
    if !have("kubectl") {
        return;
    }
    let failures = compare_all(&cases);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
