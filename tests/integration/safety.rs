//! Publishing safety: released versions are immutable, credentials never
//! leave, and a killed build never leaves a half-written site.

use crate::support::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn release(p: &Project, version: &str) -> std::process::Output {
    run(&["release", version, "--root", &p.root().to_string_lossy()])
}

fn rules(p: &Project) -> (i32, Vec<(String, String)>) {
    let (code, report) = p.check_json();
    let found = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (code, found)
}

#[test]
fn a_released_version_is_immutable() {
    let p = Project::new();
    let o = release(&p, "v1.1.0");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lock = std::fs::read_to_string(p.path("bases/published.lock")).unwrap();
    assert_eq!(
        lock.lines().filter(|l| l.starts_with("v1.1.0 ")).count(),
        3,
        "{lock}"
    );
    assert_eq!(rules(&p), (0, vec![]));

    // Releasing again changes nothing.
    assert_eq!(release(&p, "v1.1.0").status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(p.path("bases/published.lock")).unwrap(),
        lock
    );

    // Changing, adding or removing a file of a released version fails, naming each file.
    p.write("bases/v1.1.0/config.env", "MODE=b\n");
    p.write(
        "bases/v1.1.0/extra.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    );
    p.write(
        "bases/v1.1.0/kustomization.yaml",
        &KUSTOMIZATION.replace("  - deployment.yaml", "  - deployment.yaml\n  - extra.yaml"),
    );
    let (code, found) = rules(&p);
    assert_eq!(code, 1);
    let changed: Vec<_> = found
        .iter()
        .filter(|(r, _)| r == "released-version-changed")
        .map(|(_, m)| m.as_str())
        .collect();
    assert_eq!(changed.len(), 3, "{found:?}");
    for name in ["config.env", "extra.yaml", "kustomization.yaml"] {
        assert!(
            changed.iter().any(|m| m.contains(name)),
            "{name}: {changed:?}"
        );
    }
    assert_eq!(p.build().status.code(), Some(1));
    assert!(!p.out().exists());
}

#[test]
fn a_released_version_never_disappears() {
    let p = Project::new();
    assert_eq!(release(&p, "v1.1.0").status.code(), Some(0));
    std::fs::remove_dir_all(p.path("bases/v1.1.0")).unwrap();
    p.write(
        "content/en/install.md",
        "---\ntitle: Install\n---\n# Install\n\n## Steps\n",
    );
    let (code, found) = rules(&p);
    assert_eq!(code, 1);
    assert!(
        found
            .iter()
            .any(|(r, m)| r == "released-version-missing" && m.contains("v1.1.0")),
        "{found:?}"
    );
}

#[test]
fn unreleased_versions_are_reported_once_a_project_releases() {
    let p = Project::new();
    assert_eq!(
        rules(&p),
        (0, vec![]),
        "no lock, no release workflow: nothing to say"
    );
    assert_eq!(release(&p, "v1.1.0").status.code(), Some(0));
    for n in ["kustomization.yaml", "deployment.yaml", "config.env"] {
        let text = std::fs::read_to_string(p.path(&format!("bases/v1.1.0/{n}"))).unwrap();
        p.write(&format!("bases/v1.0.0/{n}"), &text);
    }
    let (code, found) = rules(&p);
    assert_eq!(code, 0);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "version-unreleased");
}

#[test]
fn a_version_with_errors_cannot_be_released() {
    let p = Project::new();
    p.remove("bases/v1.1.0/config.env");
    let o = release(&p, "v1.1.0");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing was released"));
    assert!(!p.path("bases/published.lock").exists());
    // A version without a base is a usage error.
    assert_eq!(release(&p, "v7.0.0").status.code(), Some(2));
}

#[test]
fn credentials_are_never_published() {
    // Made up of parts, so that no whole key is written in the repository.
    let key_id = format!("{}{}", "AKIA", "Q3M7XR2LPZ4VN8KD");
    let page = format!(
        "---\ntitle: Install\n---\n# Install\n\n## Steps\n\n```sh\nexport AWS_ACCESS_KEY_ID={key_id}\n```\n"
    );
    for (file, text, line) in [
        ("bases/v1.1.0/config.env", "MODE=a\nRUNNER_BOOTSTRAP_TOKEN=wst_4f9c2a7d1e8b6f3a0c5d\n", 2),
        ("content/en/install.md", page.as_str(), 9),
        ("static/key.pem", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n", 1),
    ] {
        let p = Project::new();
        p.write(file, text);
        let (code, report) = p.check_json();
        assert_eq!(code, 1, "{file}: {report:#}");
        let f = &report["findings"][0];
        assert_eq!(f["rule"], "credential-leak", "{report:#}");
        assert_eq!(f["location"]["file"], file);
        assert_eq!(f["location"]["line"], line);
    }
    // A credential a variable puts in a page: `check` finds it at the
    // line that uses the variable, before anything is rendered.
    let p = Project::new();
    p.write(
        "image-releases.yaml",
        &format!("{IMAGES_YAML}env:\n  - key: TELEMETRY_URL\n    versions: \"*\"\n    default: https://agent:Zq8vL2mN4pR7tX1k@telemetry.example.com/v1\n"),
    );
    p.write(
        "content/en/telemetry.md",
        "---\ntitle: T\n---\n# T\n\nIt sends to `{{ env.TELEMETRY_URL }}`.\n",
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    let found = findings_of(&report, "credential-leak");
    let f = found.first().unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(f["location"]["file"], "content/en/telemetry.md");
    assert_eq!(f["location"]["line"], 6);

    // A credential a template makes for every page (the template's text
    // holds none): `check` renders a page of each language and finds it.
    let p = Project::new();
    p.write(
        "templates/partials/footer.html",
        "<footer><!-- AWS_ACCESS_KEY_ID={{ \"AKIA\" ~ \"Q3M7XR2LPZ4VN8KD\" }} --></footer>\n",
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    assert!(
        !findings_of(&report, "credential-leak").is_empty(),
        "{report:#}"
    );

    // A placeholder is fine.
    let p = Project::new();
    p.write(
        "content/en/token.md",
        "---\ntitle: T\n---\n```sh\nRUNNER_BOOTSTRAP_TOKEN=<token>\n```\n",
    );
    assert_eq!(p.check_json().0, 0);
}

#[cfg(unix)]
#[test]
fn symlinks_and_huge_files_are_refused() {
    let p = Project::new();
    std::os::unix::fs::symlink("/etc/passwd", p.path("content/en/passwd.md")).unwrap();
    let (code, found) = rules(&p);
    assert_eq!(code, 1);
    assert!(found.iter().any(|(r, _)| r == "input-symlink"), "{found:?}");

    let p = Project::new();
    let big = format!("---\ntitle: Big\n---\n{}", "word ".repeat(1 << 20));
    p.write("content/en/big.md", &big);
    let (code, report) = p.check_json();
    assert_eq!(code, 2);
    assert_eq!(report["findings"][0]["rule"], "input-too-large");
    assert_eq!(
        report["findings"][0]["location"]["file"],
        "content/en/big.md"
    );
}

const PAGES: usize = 80;

/// A project big enough that a build takes a while to write.
fn big_project(marker: &str) -> Project {
    let p = Project::new();
    for i in 0..PAGES {
        p.write(
            &format!("content/en/p{i:03}.md"),
            &format!(
                "---\ntitle: Page {i}\n---\n# Page {i} {marker}\n\n{}\n",
                "Text of the page. ".repeat(3000)
            ),
        );
    }
    p
}

/// Deterministic pseudo-random numbers (xorshift), so a failure can be
/// replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

#[test]
fn killing_a_build_never_leaves_a_half_written_site() {
    let p = big_project("A");
    let out = p.out();
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let tree_a = tree(&out);
    let b = big_project("B");
    assert_eq!(b.build().status.code(), Some(0));
    let tree_b = tree(&b.out());
    assert_ne!(tree_a, tree_b);

    // Time one build, then kill builds at moments spread over that time,
    // alternating the input between A and B.
    let start = Instant::now();
    assert_eq!(p.build().status.code(), Some(0));
    let full = start.elapsed().as_micros() as u64;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut killed = 0;
    for round in 0..30 {
        let marker = if round % 2 == 0 { "B" } else { "A" };
        for i in 0..PAGES {
            p.write(
                &format!("content/en/p{i:03}.md"),
                &format!(
                    "---\ntitle: Page {i}\n---\n# Page {i} {marker}\n\n{}\n",
                    "Text of the page. ".repeat(3000)
                ),
            );
        }
        let mut child = basepress()
            .args(["build", "--root", &p.root().to_string_lossy()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(full * 12 / 10)));
        if child.try_wait().unwrap().is_none() {
            killed += 1;
        }
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let now = tree(&out);
        assert!(
            now == tree_a || now == tree_b,
            "round {round}: the site is neither the old nor the new one"
        );
    }
    assert!(
        killed >= 8,
        "only {killed} of 30 builds were killed mid-way"
    );

    // The next successful build leaves no temporary folder behind (the
    // spare is the site it replaced, kept for the next build).
    assert_eq!(p.build().status.code(), Some(0));
    let left: Vec<_> = std::fs::read_dir(p.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n != ".site.basepress-spare")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn against_a_deployed_site_every_version_stays_as_deployed() {
    let p = Project::new();
    let deployed = tempfile::tempdir().unwrap();
    let site = deployed.path().join("site");
    build_ok(p.root(), &site);
    let against = |extra: &[&str]| {
        let mut args = vec!["check", "--format", "json", "--root"];
        let root = p.root().to_string_lossy().into_owned();
        let site = site.to_string_lossy().into_owned();
        args.push(&root);
        args.extend(["--against", &site]);
        args.extend(extra);
        let o = run(&args);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (o.status.code().unwrap(), v)
    };
    assert_eq!(against(&[]).0, 0);

    p.write("bases/v1.1.0/config.env", "MODE=b\n");
    let (code, v) = against(&[]);
    assert_eq!(code, 1, "{v:#}");
    let msgs: Vec<_> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect();
    assert!(
        msgs.iter().any(|m| m.contains("`config.env` differs")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter().any(|m| m.contains("`SHA256SUMS` differs")),
        "{msgs:?}"
    );

    std::fs::remove_dir_all(p.path("bases/v1.1.0")).unwrap();
    p.write(
        "content/en/install.md",
        "---\ntitle: Install\n---\n# Install\n\n## Steps\n",
    );
    let (code, v) = against(&[]);
    assert_eq!(code, 1);
    assert_eq!(
        v["findings"][0]["rule"], "released-version-missing",
        "{v:#}"
    );

    // build --against refuses too, and writes nothing.
    let out = p.out();
    let o = run(&[
        "build",
        "--root",
        &p.root().to_string_lossy(),
        "--against",
        &site.to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!out.exists());
}

/// What the sources do not hold but the rendered site would (a value of
/// the image data, put in a page by a variable) is scanned before
/// anything is written.
#[test]
fn the_rendered_site_is_scanned_before_it_is_written() {
    let p = Project::new();
    let token = format!("{}{}", "ghp_", "Z8kq2Lx7Vw3Nc9Rt5Yp1Hm4Bd6Gf0Js2Ua8E");
    p.write(
        "image-releases.yaml",
        &format!(
            "{IMAGES_YAML}env_prefixes: [AGENT_]\nenv:\n  - key: AGENT_TOKEN_HINT\n    versions: \"*\"\n    default: {token}\n"
        ),
    );
    p.write(
        "content/en/token.md",
        "---\ntitle: Token\n---\n# Token\n\nThe default is {{ env.AGENT_TOKEN_HINT }}.\n",
    );
    let o = p.build();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("credential-leak"), "{err}");
    assert!(err.contains("content/en/token.md"), "{err}");
    assert!(!err.contains(&token), "the message shows the token: {err}");
    assert!(!p.out().exists(), "nothing is written");
}

#[test]
fn a_release_shows_its_warnings_and_refuses_one_about_its_own_base() {
    let p = Project::new();
    let root = p.root().to_string_lossy().to_string();
    // A stray file in the base would be published unchanged for good.
    p.write("bases/v1.1.0/agent.env", "RUNNER_LOG=debug\n");
    let o = run(&["release", "v1.1.0", "--root", &root, "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let found = findings_of(&report, "base-unreferenced-file");
    assert_eq!(found.len(), 1, "{report:#}");
    // The report says what the exit code does: an error refused it, and
    // what releasing settles (its own version-unreleased) is not said.
    assert_eq!(found[0]["severity"], "error", "{report:#}");
    assert_eq!(report["exit_code"], 1, "{report:#}");
    assert!(
        findings_of(&report, "version-unreleased").is_empty(),
        "{report:#}"
    );
    assert!(!p.path("bases/published.lock").exists());

    // Once it is gone the release goes ahead, and a pipeline asking for
    // SARIF gets a log, with the project's other warnings in it.
    p.remove("bases/v1.1.0/agent.env");
    p.write("content/en/extra.md", "---\ntitle: Extra\n---\n# Extra\n");
    let o = run(&["release", "v1.1.0", "--root", &root, "--format", "sarif"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let log: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    let ids: Vec<_> = results
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["translation-missing"]);
    assert!(stderr(&o).contains("released v1.1.0"), "{}", stderr(&o));
}

/// A pod template that breaks the Pod Security level its namespace
/// enforces is refused by admission: the install applies and no pod
/// runs. Each way of breaking it is one finding, at the field.
#[test]
fn pods_that_their_namespace_refuses_are_reported() {
    let p = copy_repo();
    let sts = p.path().join("bases/v1.30.0/statefulset.yaml");
    let original = std::fs::read_to_string(&sts).unwrap();
    let ns = p.path().join("bases/v1.30.0/namespace.yaml");
    let namespace = std::fs::read_to_string(&ns).unwrap();
    let refused = |text: &str| -> Vec<(String, u64)> {
        std::fs::write(&sts, text).unwrap();
        let (_, report) = check_json_at(p.path());
        findings_of(&report, "pod-security-refused")
            .into_iter()
            .map(|f| {
                (
                    f["message"].as_str().unwrap().to_string(),
                    f["location"]["line"].as_u64().unwrap_or(0),
                )
            })
            .collect()
    };
    let line_of = |text: &str, needle: &str| {
        text.lines().position(|l| l.contains(needle)).unwrap() as u64 + 1
    };
    assert_eq!(refused(&original), []);

    let escalates = original.replacen(
        "allowPrivilegeEscalation: false",
        "allowPrivilegeEscalation: true",
        1,
    );
    assert_ne!(escalates, original);
    let found = refused(&escalates);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].0.contains("`restricted`"), "{found:?}");
    assert!(found[0].0.contains("allowPrivilegeEscalation"), "{found:?}");
    assert_eq!(found[0].1, line_of(&escalates, "allowPrivilegeEscalation"));

    // AppArmor turned off on the template.
    let apparmor = original.replacen(
        "    metadata:\n      labels:\n",
        "    metadata:\n      annotations:\n        container.apparmor.security.beta.kubernetes.io/agent: unconfined\n      labels:\n",
        1,
    );
    assert_ne!(apparmor, original);
    let found = refused(&apparmor);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].0.contains("AppArmor"), "{found:?}");

    // A sidecar with no security context of its own, on the node's
    // network, adding a capability.
    let sidecar = original
        .replacen(
            "      containers:\n",
            "      hostNetwork: true\n      containers:\n        - name: proxy\n          image: envoyproxy/envoy:v1.30\n          securityContext:\n            capabilities:\n              add: [NET_ADMIN]\n",
            1,
        );
    let found = refused(&sidecar);
    let texts: Vec<&str> = found.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(found.len(), 4, "{texts:#?}");
    for part in [
        "hostNetwork: true",
        "adds capabilities NET_ADMIN",
        "container `proxy` does not drop all capabilities",
        "container `proxy` does not set allowPrivilegeEscalation: false",
    ] {
        assert!(texts.iter().any(|t| t.contains(part)), "{part}: {texts:#?}");
    }

    // Baseline lets the sidecar escalate and keep its capabilities, not
    // use the node's network or add NET_ADMIN; privileged enforces nothing.
    std::fs::write(
        &ns,
        namespace.replace("enforce: restricted", "enforce: baseline"),
    )
    .unwrap();
    let found = refused(&sidecar);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found.iter().all(|(m, _)| m.contains("`baseline`")),
        "{found:#?}"
    );
    std::fs::write(
        &ns,
        namespace.replace("enforce: restricted", "enforce: privileged"),
    )
    .unwrap();
    assert_eq!(refused(&sidecar), []);
}

/// A workload whose selector misses its own pods is refused by the API
/// server; a NetworkPolicy or Service that picks no pod of the build does
/// nothing for it (a warning).
#[test]
fn selectors_must_pick_the_pods_they_are_for() {
    let p = copy_repo();
    let base = p.path().join("bases/v1.30.0");
    let sts = base.join("statefulset.yaml");
    let original = std::fs::read_to_string(&sts).unwrap();
    let findings = |rule: &str| -> Vec<(String, String)> {
        let (_, report) = check_json_at(p.path());
        findings_of(&report, rule)
            .into_iter()
            .map(|f| {
                (
                    f["severity"].as_str().unwrap().to_string(),
                    f["location"]["file"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(findings("selector-matches-nothing"), []);
    // A policy for every pod of the namespace picks the agent's too.
    let np = base.join("networkpolicy.yaml");
    let policy = std::fs::read_to_string(&np).unwrap();
    let all_pods = policy.replacen(
        "  podSelector:\n    matchLabels:\n      app.kubernetes.io/name: whystack-agent\n",
        "  podSelector:\n    matchLabels: {}\n",
        1,
    );
    assert_ne!(all_pods, policy);
    std::fs::write(&np, &all_pods).unwrap();
    assert_eq!(findings("selector-matches-nothing"), []);
    std::fs::write(&np, &policy).unwrap();
    // The template's labels no longer what the StatefulSet and the
    // NetworkPolicy select.
    let relabelled = original.replacen(
        "      labels:\n        app.kubernetes.io/name: whystack-agent\n",
        "      labels:\n        app.kubernetes.io/name: agent\n",
        1,
    );
    assert_ne!(relabelled, original);
    std::fs::write(&sts, relabelled).unwrap();
    let invalid = findings("manifest-value-invalid");
    assert_eq!(
        invalid,
        [(
            "error".to_string(),
            "bases/v1.30.0/statefulset.yaml".to_string()
        )]
    );
    assert_eq!(
        findings("selector-matches-nothing"),
        [(
            "warning".to_string(),
            "bases/v1.30.0/networkpolicy.yaml".to_string()
        )]
    );
}
