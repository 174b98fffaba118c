//! `basepress build` on good projects: what it writes, and that it writes
//! the same bytes every time.

use crate::support::*;
use basepress::model::site::sha256_hex;

#[test]
fn the_repository_builds_into_a_complete_site() {
    let (_keep, site) = built_repo_site();
    for lang in ["es", "pt", "en"] {
        for page in [
            "",
            "installation/",
            "attestation/",
            "health-probes/",
            "shutdown/",
        ] {
            let f = site.join(format!("{lang}/{page}index.html"));
            let html = std::fs::read_to_string(&f)
                .unwrap_or_else(|e| panic!("{} missing: {e}", f.display()));
            assert!(
                html.contains(&format!("<html lang=\"{lang}\">")),
                "{}",
                f.display()
            );
        }
    }
    let root = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(
        root.contains("url=/es/"),
        "the root sends readers to the default language"
    );
    let versions = std::fs::read_to_string(site.join("kubernetes/versions.txt")).unwrap();
    assert_eq!(versions, "v1.29.0\nv1.30.0\n");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site.join("kubernetes/versions.json")).unwrap())
            .unwrap();
    assert_eq!(json["latest"], "v1.30.0");
    assert_eq!(json["versions"][0]["image_tag"], "1.29.0");
    assert_eq!(json["versions"][1]["latest"], true);
    assert_eq!(json["versions"][0]["latest"], false);
}

#[test]
fn a_base_publishes_exactly_what_its_kustomization_references() {
    let p = Project::new();
    p.write(
        "bases/v1.1.0/agent.env",
        "RUNNER_BOOTSTRAP_TOKEN=real-looking\n",
    );
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("warning[base-unreferenced-file]"), "{err}");
    assert!(err.contains("agent.env"), "{err}");

    let dir = p.out().join("kubernetes/v1.1.0/base");
    let files_txt = std::fs::read_to_string(dir.join("files.txt")).unwrap();
    assert_eq!(
        files_txt,
        "SHA256SUMS\nconfig.env\ndeployment.yaml\nfiles.txt\nkustomization.yaml\n"
    );
    assert!(
        !dir.join("agent.env").exists(),
        "an unreferenced file was published"
    );

    // SHA256SUMS vouches for every file, files.txt included.
    let sums = std::fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    let mut expected = String::new();
    for name in [
        "config.env",
        "deployment.yaml",
        "files.txt",
        "kustomization.yaml",
    ] {
        let bytes = match name {
            "files.txt" => files_txt.clone().into_bytes(),
            _ => std::fs::read(p.path(&format!("bases/v1.1.0/{name}"))).unwrap(),
        };
        assert_eq!(std::fs::read(dir.join(name)).unwrap(), bytes);
        expected.push_str(&format!("{}  {name}\n", sha256_hex(&bytes)));
    }
    assert_eq!(sums, expected);
}

#[test]
fn two_builds_of_the_same_input_are_byte_identical() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    for out in [&a, &b] {
        build_ok(&repo(), &out.path().join("site"));
    }
    let ta = tree(&a.path().join("site"));
    let tb = tree(&b.path().join("site"));
    assert!(ta.len() > 30, "suspiciously few files: {}", ta.len());
    assert_eq!(ta.keys().collect::<Vec<_>>(), tb.keys().collect::<Vec<_>>());
    for (k, v) in &ta {
        assert!(tb[k] == *v, "{k} differs between two builds");
    }
}

#[test]
fn a_failed_build_leaves_the_previous_site_untouched() {
    let p = Project::new();
    assert_eq!(p.build().status.code(), Some(0));
    let before = tree(&p.out());

    // A check finding (exit 1) and an unreadable input (exit 2).
    p.write(
        "content/en/install.md",
        "---\ntitle: Install\n---\n[x](nowhere.md)\n",
    );
    let o = p.build();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing was written"));
    assert_eq!(tree(&p.out()), before);

    p.write(
        "content/en/install.md",
        "---\ntitle: Install\nlayout: wide\n---\n",
    );
    assert_eq!(p.build().status.code(), Some(2));
    assert_eq!(tree(&p.out()), before);

    let leftovers: Vec<_> = std::fs::read_dir(p.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("basepress"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "temporary folders left: {leftovers:?}"
    );
}

#[test]
fn check_writes_nothing() {
    let p = Project::new();
    let o = run(&["check", "--root", &p.root().to_string_lossy()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!p.out().exists());
}

#[test]
fn timings_name_every_stage_in_order() {
    let p = Project::new();
    let root = p.root().to_string_lossy().into_owned();
    let out = p.out().to_string_lossy().into_owned();
    let stages = |o: &std::process::Output| -> Vec<String> {
        let err = stderr(o);
        let line = err
            .lines()
            .find_map(|l| l.strip_prefix("timings: "))
            .unwrap_or_else(|| panic!("no timings line in {err}"))
            .to_string();
        line.split(", ")
            .map(|part| {
                let (stage, secs) = part
                    .rsplit_once(' ')
                    .and_then(|(l, _)| l.rsplit_once(' '))
                    .unwrap();
                assert!(secs.parse::<f64>().is_ok_and(|s| s >= 0.0), "{part}");
                stage.to_string()
            })
            .collect()
    };
    let o = run(&["build", "--root", &root, "--out", &out, "--timings"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let analyze = ["load", "analyze", "check", "templates"];
    // A build also fingerprints the docs versions and reuses the
    // unchanged ones.
    let expected = [
        "load",
        "fingerprint",
        "analyze",
        "check",
        "templates",
        "render and write",
        "reuse",
        "swap",
    ];
    assert_eq!(stages(&o), expected);
    // Check renders a few pages too, to try the templates.
    let o = run(&["check", "--root", &root, "--timings"]);
    assert_eq!(stages(&o), [&analyze[..], &["probe"]].concat());
    // Without the flag, no timings.
    let o = run(&["check", "--root", &root]);
    assert!(!stderr(&o).contains("timings:"));
}

#[test]
fn help_version_and_usage_errors() {
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help = String::from_utf8_lossy(&o.stdout);
    for cmd in ["build", "check", "rules"] {
        assert!(help.contains(cmd), "{help}");
    }
    let o = run(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("basepress "));
    assert_eq!(run(&["publish"]).status.code(), Some(2));
    assert_eq!(run(&["build", "--format", "xml"]).status.code(), Some(2));
    // Numbers out of range are usage errors, not a crash (101) or a
    // request that times out at once.
    for timeout in ["0", "86401", "18446744073709551615"] {
        for cmd in [
            &["verify", "http://127.0.0.1:9/"][..],
            &["deploy", "s3://bucket/prefix"][..],
        ] {
            let o = run(&[cmd, &["--timeout", timeout]].concat());
            assert_eq!(
                o.status.code(),
                Some(2),
                "{cmd:?} {timeout}: {}",
                stderr(&o)
            );
            assert!(stderr(&o).contains("--timeout"), "{}", stderr(&o));
        }
    }
}

#[test]
fn rules_lists_every_rule() {
    let o = run(&["rules", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<_> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), basepress::diagnostics::rule::ALL.len());
    assert!(ids.contains(&"base-reference-missing".to_string()));
    // A report format has no findings to show here: a usage error, not
    // text printed where SARIF was asked for.
    assert_eq!(run(&["rules", "--format", "sarif"]).status.code(), Some(2));
    for r in v.as_array().unwrap() {
        assert!(!r["description"].as_str().unwrap().is_empty());
        assert!(!r["remedy"].as_str().unwrap().is_empty());
    }
}

#[test]
fn readme_documents_every_rule() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    for r in basepress::diagnostics::rule::ALL {
        assert!(
            readme.contains(&format!("| `{}` |", r.id)),
            "README.md does not list rule `{}`",
            r.id
        );
    }
}
