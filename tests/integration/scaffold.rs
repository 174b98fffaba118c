//! `basepress init` writes a project that builds at once; `basepress
//! new-release` prepares the next release from the newest one before it.

use crate::support::{check_json_at, copy_repo, run, stderr};
use std::path::Path;

fn init(dir: &Path, languages: Option<&str>) -> std::process::Output {
    let mut args = vec!["init".to_string(), dir.to_string_lossy().into_owned()];
    if let Some(l) = languages {
        args.push("--languages".into());
        args.push(l.into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&args)
}

/// `check --format json` of a project: exit code and report.
fn check(root: &Path) -> (i32, serde_json::Value) {
    let (code, report) = check_json_at(root);
    (code.unwrap_or(-1), report)
}

#[test]
fn init_writes_a_project_that_builds_with_no_finding() {
    let tmp = tempfile::tempdir().unwrap();
    for (languages, codes) in [
        (None, vec!["en"]),
        (Some("es,pt,en"), vec!["es", "pt", "en"]),
        (Some("de"), vec!["de"]),
    ] {
        let dir = tmp.path().join(codes.join("-"));
        let o = init(&dir, languages);
        assert!(o.status.success(), "{languages:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("basepress serve"), "{}", stderr(&o));

        let (code, report) = check(&dir);
        assert_eq!(code, 0, "{languages:?}: {report}");
        assert_eq!(report["errors"], 0, "{report}");
        assert_eq!(report["warnings"], 0, "{report}");

        let o = run(&["build", "--root", &dir.to_string_lossy()]);
        assert!(o.status.success(), "{languages:?}: {}", stderr(&o));
        let site = dir.join("site");
        for code in &codes {
            let page = std::fs::read_to_string(site.join(code).join("index.html")).unwrap();
            assert!(page.contains("Example app"), "{code}");
            // The download snippet shows the release.
            assert!(
                crate::support::text(&page).contains("VERSION=1.0.0"),
                "{code}"
            );
        }
        let files = std::fs::read_to_string(site.join("kubernetes/v1.0.0/base/files.txt")).unwrap();
        assert!(files.contains("deployment.yaml"), "{files}");
    }
    // A language basepress has no strings for gets English ones to translate.
    let strings = std::fs::read_to_string(tmp.path().join("de/i18n/de.yaml")).unwrap();
    assert!(strings.contains("skip: \"Skip to content\""), "{strings}");
    // A strings file written before basepress added a string still builds:
    // the new string is shown in English, with a warning to translate it.
    let older: String = strings
        .lines()
        .filter(|l| !l.starts_with("to_latest_home:"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(tmp.path().join("de/i18n/de.yaml"), older).unwrap();
    let root = tmp.path().join("de").to_string_lossy().into_owned();
    let o = run(&["check", "--root", &root]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning[strings-invalid]"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("`to_latest_home`"), "{}", stderr(&o));
    let site_yaml = std::fs::read_to_string(tmp.path().join("es-pt-en/site.yaml")).unwrap();
    assert!(site_yaml.contains("default_language: es"), "{site_yaml}");
    assert!(site_yaml.contains("name: Português"), "{site_yaml}");
    assert!(!tmp.path().join("es-pt-en/i18n").exists());
}

#[test]
fn init_refuses_a_folder_that_is_not_empty() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.md"), "mine").unwrap();
    let o = init(tmp.path(), None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("error[init-invalid]"), "{err}");
    assert!(err.contains("`notes.md`"), "{err}");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("notes.md")).unwrap(),
        "mine"
    );

    let o = init(&tmp.path().join("new"), Some("en,../x"));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is not a language code"),
        "{}",
        stderr(&o)
    );
    assert!(!tmp.path().join("new").exists());
}

#[test]
fn new_release_copies_the_newest_base_and_lists_the_release() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("docs");
    assert!(init(&dir, None).status.success());
    let root = dir.to_string_lossy().into_owned();
    // A fact whose range ends before the new release is named as a step.
    let data = dir.join("image-releases.yaml");
    let text = std::fs::read_to_string(&data).unwrap();
    std::fs::write(
        &data,
        text.replace(
            "  - name: example-app\n    versions: \"*\"",
            "  - name: example-app\n    versions: \"~1.0\"",
        ),
    )
    .unwrap();
    let o = run(&["release", "v1.0.0", "--root", &root]);
    assert!(o.status.success(), "{}", stderr(&o));

    let o = run(&["new-release", "v1.1.0", "--root", &root]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stderr(&o);
    assert!(out.contains("command `example-app` (~1.0)"), "{out}");
    assert!(out.contains("basepress release v1.1.0"), "{out}");
    for f in [
        "kustomization.yaml",
        "deployment.yaml",
        "namespace.yaml",
        "config.env",
    ] {
        assert_eq!(
            std::fs::read(dir.join("bases/v1.1.0").join(f)).unwrap(),
            std::fs::read(dir.join("bases/v1.0.0").join(f)).unwrap(),
            "{f}"
        );
    }
    let text = std::fs::read_to_string(&data).unwrap();
    assert!(text.contains("releases: [1.0.0, 1.1.0]\n"), "{text}");

    // The new base is checked like any: here the narrowed command is
    // gone from 1.1.0, so a base whose container runs it would fail;
    // this one runs none, and the new version is only unreleased.
    let (code, report) = check(&dir);
    assert_eq!(code, 0, "{report}");
    let rules: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["rule"].as_str())
        .collect();
    assert_eq!(rules, ["version-unreleased"], "{report}");

    // An existing version is refused, and nothing changes.
    let before = std::fs::read_to_string(&data).unwrap();
    let o = run(&["new-release", "v1.1.0", "--root", &root]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("error[new-release-invalid]"),
        "{}",
        stderr(&o)
    );
    let o = run(&["new-release", "1.2", "--root", &root]);
    assert_eq!(o.status.code(), Some(2));
    // Build metadata names no base folder that `check` would accept.
    let o = run(&["new-release", "v1.2.0+b", "--root", &root]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("build metadata"), "{}", stderr(&o));
    assert!(!dir.join("bases/v1.2.0+b").exists());
    assert_eq!(std::fs::read_to_string(&data).unwrap(), before);
}

/// Two `new-release` runs at once each add their version: one waits for
/// the other instead of writing the data file it read before the other
/// changed it.
#[test]
fn new_releases_at_once_both_land() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("docs");
    assert!(init(&dir, None).status.success());
    let root = dir.to_string_lossy().into_owned();
    for _ in 0..3 {
        let data = std::fs::read_to_string(dir.join("image-releases.yaml")).unwrap();
        let n = std::fs::read_dir(dir.join("bases")).unwrap().count();
        let versions = [format!("v1.{n}.0"), format!("v1.{}.0", n + 1)];
        let runs: Vec<_> = versions
            .iter()
            .map(|v| {
                crate::support::basepress()
                    .args(["new-release", v, "--root", &root])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut r in runs {
            assert!(r.wait().unwrap().success());
        }
        let after = std::fs::read_to_string(dir.join("image-releases.yaml")).unwrap();
        for v in &versions {
            let v = v.trim_start_matches('v');
            assert!(
                after.contains(v),
                "{v} lost from the data: {after}\n(before: {data})"
            );
        }
    }
}

#[test]
fn new_release_of_this_repository_checks() {
    let repo = copy_repo();
    let root = repo.path().to_string_lossy().into_owned();
    // The image tag's spelling (no `v`) names the same release.
    let o = run(&["new-release", "1.31.0", "--root", &root]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stderr(&o);
    assert!(out.contains("prepared v1.31.0 from v1.30.0"), "{out}");
    // The kustomization's comment names the old release.
    assert!(out.contains("bases/v1.31.0/kustomization.yaml:1"), "{out}");
    let data = std::fs::read_to_string(repo.path().join("image-releases.yaml")).unwrap();
    assert!(
        data.contains("releases: [1.27.0, 1.28.0, 1.29.0, 1.30.0, 1.31.0]"),
        "{data}"
    );
    let (code, report) = check(repo.path());
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
}
