//! `basepress check` against the real images of the releases: fixture
//! images written by the test (an OCI layout with 1.28.0 without
//! whystack-health, 1.29.0 with it, and a 1.30.0 index whose arm64 image
//! lacks it), read from the layout and from a docker-registry on loopback.

use crate::support::*;
use basepress::oci::fixture;
use serde_json::Value;

/// A project with the repository's site.yaml and image data, the real
/// base `from` published as `version`, and the fixture images at
/// `images/agent`.
fn project(version: &str, from: &str) -> (Project, fixture::AgentLayout) {
    let p = Project::empty();
    for f in ["site.yaml", "image-releases.yaml"] {
        p.copy_from_repo(f, f);
    }
    for lang in ["es", "pt", "en"] {
        p.write(
            &format!("content/{lang}/index.md"),
            "---\ntitle: Inicio\n---\n# Inicio\n",
        );
    }
    p.copy_from_repo(&format!("bases/{from}"), &format!("bases/{version}"));
    let layout = fixture::agent_layout(&p.path("images/agent")).unwrap();
    (p, layout)
}

/// Runs `check` (JSON report) with `--image image`, if given, and an
/// image cache of its own; the exit code, the report and stderr.
fn check(p: &Project, image: Option<&str>) -> (i32, Value, String) {
    let cache = tempfile::tempdir().unwrap();
    let root = p.root().display().to_string();
    let mut cmd = basepress();
    cmd.args(["check", "--root", &root, "--format", "json"]);
    if let Some(i) = image {
        cmd.args(["--image", i]);
    }
    let o = cmd.env("XDG_CACHE_HOME", cache.path()).output().unwrap();
    let report: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code().unwrap_or(-1), report, stderr(&o))
}

fn message(f: &Value) -> &str {
    f["message"].as_str().unwrap_or_default()
}

/// The fixture layout as a source on the command line (where a relative
/// path is taken from the working folder).
fn layout_source(p: &Project) -> String {
    format!("oci:{}", p.path("images/agent").display())
}

/// The 1-based line of `needle` in a project file.
fn line_of(p: &Project, file: &str, needle: &str) -> u64 {
    let text = std::fs::read_to_string(p.path(file)).unwrap();
    text.lines().position(|l| l.contains(needle)).unwrap() as u64 + 1
}

#[test]
fn a_base_probing_with_a_command_its_image_lacks_fails() {
    let (p, _) = project("v1.28.0", "v1.29.0");
    // The source from site.yaml, relative to the project.
    let site = std::fs::read_to_string(p.path("site.yaml")).unwrap();
    p.write(
        "site.yaml",
        &site.replacen(
            "  releases: image-releases.yaml\n",
            "  releases: image-releases.yaml\n  source: oci:images/agent\n",
            1,
        ),
    );
    let (code, report, _) = check(&p, None);
    assert_eq!(code, 1, "{report:#}");
    let found = findings_of(&report, "probe-command-missing");
    let live = line_of(
        &p,
        "bases/v1.28.0/statefulset.yaml",
        "[whystack-health, live]",
    );
    let f = found
        .iter()
        .find(|f| f["location"]["line"] == live)
        .unwrap_or_else(|| panic!("{report:#}"));
    let m = message(f);
    // Whole, to the digest at its end.
    for part in ["whystack-health", "1.28.0", "linux/amd64", "(image sha256:"] {
        assert!(m.contains(part), "{m}");
    }
    assert!(!m.contains('…'), "{m}");
    assert!(f["remedy"].as_str().unwrap().contains("1.29.0"), "{f:#}");
}

#[test]
fn every_platform_of_an_index_is_checked() {
    let (p, _) = project("v1.30.0", "v1.30.0");
    let (code, report, _) = check(&p, Some(&layout_source(&p)));
    assert_eq!(code, 1, "{report:#}");
    let found = findings_of(&report, "probe-command-missing");
    assert!(!found.is_empty(), "{report:#}");
    assert!(
        found.iter().all(|f| message(f).contains("linux/arm64/v8")),
        "only arm64 lacks it: {report:#}"
    );
    // The data file says 1.30.0 has it: the arm64 image contradicts it.
    let m = findings_of(&report, "image-data-mismatch");
    assert!(
        m.iter()
            .any(|f| message(f).contains("whystack-health") && message(f).contains("arm64")),
        "{report:#}"
    );
}

#[test]
fn the_data_file_cannot_claim_a_command_the_image_lacks() {
    let (p, _) = project("v1.28.0", "v1.29.0");
    let data = std::fs::read_to_string(p.path("image-releases.yaml")).unwrap();
    let claimed = data.replacen(
        "  - name: whystack-health\n    versions: \">=1.29.0\"",
        "  - name: whystack-health\n    versions: \">=1.28.0\"",
        1,
    );
    assert_ne!(claimed, data);
    p.write("image-releases.yaml", &claimed);
    let (code, report, _) = check(&p, Some(&layout_source(&p)));
    assert_eq!(code, 1, "{report:#}");
    let f = findings_of(&report, "image-data-mismatch");
    let f = f
        .iter()
        .find(|f| message(f).contains("whystack-health"))
        .unwrap_or_else(|| panic!("{report:#}"));
    assert!(message(f).contains("1.28.0"), "{f:#}");
    assert_eq!(f["location"]["file"], "image-releases.yaml");
}

#[test]
fn a_matching_image_passes_and_its_digest_is_recorded() {
    let (p, layout) = project("v1.29.0", "v1.29.0");
    p.write(
        "content/es/index.md",
        "---\ntitle: Inicio\nbase: v1.29.0\n---\n# Inicio\n\n`whystack-agent@{{ image.digest }}`\n",
    );
    let (code, report, _) = check(&p, Some(&layout_source(&p)));
    assert_eq!(code, 0, "{report:#}");

    // Without a source: the data file alone, and a note that says so.
    p.write("content/es/index.md", "---\ntitle: Inicio\n---\n# Inicio\n");
    let (code, report, err) = check(&p, None);
    assert_eq!(code, 0, "{report:#}");
    let o = basepress()
        .args(["check", "--root", &p.root().display().to_string()])
        .output()
        .unwrap();
    assert!(
        stderr(&o).contains("images themselves were not checked"),
        "{err}"
    );

    // `build` records the digest in versions.json and shows it on pages.
    p.write(
        "content/es/index.md",
        "---\ntitle: Inicio\nbase: v1.29.0\n---\n# Inicio\n\nPin `whystack-agent@{{ image.digest }}`.\n",
    );
    let cache = tempfile::tempdir().unwrap();
    let out = p.root().join("site");
    let o = basepress()
        .args([
            "build",
            "--root",
            &p.root().display().to_string(),
            "--image",
            &layout_source(&p),
        ])
        .env("XDG_CACHE_HOME", cache.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let versions: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("kubernetes/versions.json")).unwrap(),
    )
    .unwrap();
    let v = versions["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["version"] == "v1.29.0")
        .unwrap();
    let digest = &layout.v1_29.manifest.digest;
    assert_eq!(v["image_checked"]["digest"], *digest, "{v:#}");
    assert_eq!(
        v["image_checked"]["platforms"]["linux/amd64"], *digest,
        "{v:#}"
    );
    let html = std::fs::read_to_string(out.join("es/index.html")).unwrap();
    assert!(html.contains(digest.as_str()), "{html}");
}

#[test]
fn a_missing_tag_is_an_input_error() {
    // Base 1.27.0 has no image in the layout.
    let (p, _) = project("v1.27.0", "v1.29.0");
    let (code, report, _) = check(&p, Some(&layout_source(&p)));
    assert_eq!(code, 2, "{report:#}");
    let f = findings_of(&report, "image-unavailable");
    assert!(message(f[0]).contains("v1.27.0"), "{report:#}");
}

#[test]
fn an_image_from_a_registry_on_loopback() {
    if !crate::oci::tools() {
        return;
    }
    let (p, _) = project("v1.28.0", "v1.29.0");
    let registry = crate::oci::Registry::start(None);
    registry.push(&p.path("images/agent"), "1.28.0", None);
    let (code, report, _) = check(&p, Some(&registry.url("whystack-agent")));
    assert_eq!(code, 1, "{report:#}");
    let found = findings_of(&report, "probe-command-missing");
    assert!(
        found
            .iter()
            .any(|f| message(f).contains("whystack-health") && message(f).contains("linux/amd64")),
        "{report:#}"
    );
}

/// Commands are looked up as the runtime runs them: in the container's
/// own environment (`PATH`, `$(VAR)` references) and working folder, and
/// without a `command`, the image's Entrypoint and Cmd run.
#[test]
fn commands_are_looked_up_as_the_container_runs_them() {
    let (p, _) = project("v1.29.0", "v1.29.0");
    let sts = "bases/v1.29.0/statefulset.yaml";
    let original = std::fs::read_to_string(p.path(sts)).unwrap();
    let missing = |env: &str, probe: &str, more: &str| {
        let text = original
            .replacen(
                "            - name: RUNNER_INSTANCE_ID",
                &format!("{env}            - name: RUNNER_INSTANCE_ID"),
                1,
            )
            .replacen("command: [whystack-health, live]", probe, 1)
            .replacen(
                "          livenessProbe:",
                &format!("{more}          livenessProbe:"),
                1,
            );
        p.write(sts, &text);
        let (code, report, err) = check(&p, Some(&layout_source(&p)));
        assert!(code == 0 || code == 1, "{err}");
        findings_of(&report, "probe-command-missing")
            .into_iter()
            .map(|f| message(f).to_string())
            .collect::<Vec<_>>()
    };
    let live = "command: [whystack-health, live]";
    assert_eq!(missing("", live, ""), Vec::<String>::new());
    // The container's PATH, not the image's.
    let found = missing(
        "            - {name: PATH, value: /usr/bin:/bin}\n",
        live,
        "",
    );
    // (both probes call it, and the entrypoint runs `node`, which is in
    // /usr/local/bin)
    assert!(
        found.len() == 3 && found.iter().all(|f| f.contains("PATH (/usr/bin:/bin)")),
        "{found:?}"
    );
    assert!(found.iter().any(|f| f.contains("runs `node`")), "{found:?}");
    // `$(PATH)` names no variable of the container (the image's PATH is not
    // the kubelet's to expand, and the optional Secret carries none): the
    // PATH is the text as written.
    let found = missing(
        "            - {name: PATH, value: '/opt/tools:$(PATH)'}\n",
        live,
        "",
    );
    assert!(
        found.len() == 3 && found.iter().all(|f| f.contains("/opt/tools:$(PATH)")),
        "{found:?}"
    );
    let found = missing(
        "            - {name: PATH, value: '/opt/tools:/usr/local/bin'}\n",
        "command: [/usr/local/bin/whystack-health, live]",
        "",
    );
    assert_eq!(found, Vec::<String>::new());
    // A probe names the container's literal variables as the kubelet
    // expands them.
    let found = missing(
        "            - {name: HEALTH, value: whystack-health}\n",
        "command: [$(HEALTH), live]",
        "",
    );
    assert_eq!(found, Vec::<String>::new());
    let found = missing(
        "            - {name: HEALTH, value: whystack-healthz}\n",
        "command: [$(HEALTH), live]",
        "",
    );
    assert!(
        found.len() == 1 && found[0].contains("`whystack-healthz`"),
        "{found:?}"
    );
    // Without a command the image's entrypoint runs, from the working
    // folder: the container's own, when it sets one.
    let found = missing("", live, "          workingDir: /tmp\n");
    assert!(
        found.len() == 1 && found[0].contains("`apps/runner/docker-entrypoint.sh`"),
        "{found:?}"
    );
    // (/tmp is an emptyDir: nothing is there when the container starts)
    assert!(
        found[0].contains("empty when the container starts"),
        "{found:?}"
    );
    // Arguments without a command go to the image's entrypoint, which
    // runs them (the image data says so): what they name must be there.
    let found = missing("", live, "          args: [missing-tool]\n");
    assert!(
        found.len() == 1 && found[0].contains("`missing-tool`"),
        "{found:?}"
    );
    let found = missing(
        "",
        live,
        "          args: [node, apps/runner/dist/index.js]\n",
    );
    assert_eq!(found, Vec::<String>::new());
    // After a `cd` or a `PATH` only known when the script runs, a relative
    // path or a name not found may be there: no finding. An absolute path
    // is still looked up, and so is a name once PATH is known again.
    for script in [
        "cd \"$APP_DIR\" && ./health.sh",
        "cd ~/app; sh check.sh",
        "PATH=$HOME/bin:$PATH; their-tool",
        "~/bin/health live",
    ] {
        let probe = format!("command: [sh, -c, '{script}']");
        assert_eq!(missing("", &probe, ""), Vec::<String>::new(), "{script}");
    }
    // A file a script sources by its path must be there to read.
    let found = missing(
        "",
        "command: [sh, -c, '. /app/nope.sh; whystack-health live']",
        "",
    );
    assert!(
        found.len() == 1 && found[0].contains("/app/nope.sh"),
        "{found:?}"
    );
    // A program the script asks for first is allowed to be absent.
    assert_eq!(
        missing(
            "",
            "command: [sh, -c, 'command -v curl >/dev/null || exit 0; curl -s x']",
            ""
        ),
        Vec::<String>::new()
    );
    // The image's sh is dash: a bash builtin there is not found.
    let found = missing(
        "",
        "command: [sh, -c, '[[ -d /tmp ]] && whystack-health live']",
        "",
    );
    assert!(
        found.len() == 1 && found[0].contains("is dash"),
        "{found:?}"
    );
    assert_eq!(
        missing(
            "",
            "command: [sh, -c, '[ -d /tmp ] && whystack-health live']",
            ""
        ),
        Vec::<String>::new()
    );
    // So is bash's `-o pipefail`, which dash refuses before anything runs.
    let found = missing(
        "",
        "command: [sh, -c, 'set -euo pipefail; whystack-health live']",
        "",
    );
    assert!(
        found.len() == 1 && found[0].contains("is dash"),
        "{found:?}"
    );
    // A guard that exits with a failure plans for nothing; the common
    // PATH idiom keeps the image's PATH; nothing runs after `exec`.
    let found = missing(
        "",
        "command: [sh, -c, 'command -v curl >/dev/null || exit 1; curl -s x']",
        "",
    );
    assert!(found.len() == 1 && found[0].contains("`curl`"), "{found:?}");
    for script in [
        "PATH=\"/opt/tools/bin${PATH:+:$PATH}\"; whystack-health live",
        "exec whystack-health live\nnosuch-tool --fallback",
    ] {
        let probe = format!("command: [sh, -c, {script:?}]");
        assert_eq!(missing("", &probe, ""), Vec::<String>::new(), "{script}");
    }
    // A PATH from a Secret is only known when the pod runs too.
    let from_secret =
        "            - {name: PATH, valueFrom: {secretKeyRef: {name: paths, key: path}}}\n";
    assert_eq!(
        missing(from_secret, "command: [their-tool]", ""),
        Vec::<String>::new()
    );
    let found = missing(from_secret, "command: [/opt/nothing/here]", "");
    assert!(found.len() == 1, "{found:?}");
    let probe =
        "command: [sh, -c, 'cd \"$APP_DIR\"; /opt/nothing/here; PATH=/usr/bin; their-tool']";
    let found = missing("", probe, "");
    assert!(
        found.len() == 2
            && found[0].contains("`/opt/nothing/here`")
            && found[1].contains("`their-tool`"),
        "{found:?}"
    );
}

/// A volume lies where the runtime mounts it: through the image's links
/// (one mounted at `/bin`, a link to `usr/bin`, covers `/usr/bin`), and
/// over what the image's links lead into (`/bin/sh` is `/usr/bin/sh`).
#[test]
fn a_volume_covers_the_paths_the_images_links_lead_to() {
    let (p, _) = project("v1.29.0", "v1.29.0");
    let dir = "bases/v1.29.0";
    p.write(&format!("{dir}/notes.txt"), "notes\n");
    let k = std::fs::read_to_string(p.path(&format!("{dir}/kustomization.yaml"))).unwrap();
    p.write(
        &format!("{dir}/kustomization.yaml"),
        &k.replacen(
            "configMapGenerator:\n",
            "configMapGenerator:\n  - name: notes\n    files: [notes.txt]\n",
            1,
        ),
    );
    let sts = format!("{dir}/statefulset.yaml");
    let original = std::fs::read_to_string(p.path(&sts)).unwrap();
    let missing = |at: &str, probe: &str| {
        let text = original
            .replacen("command: [whystack-health, live]", probe, 1)
            .replacen(
                "            - name: tmp\n              mountPath: /tmp\n",
                &format!("            - name: tmp\n              mountPath: /tmp\n            - name: notes\n              mountPath: {at}\n"),
                1,
            )
            .replacen(
                "      volumes:\n",
                "      volumes:\n        - name: notes\n          configMap: {name: notes}\n",
                1,
            );
        p.write(&sts, &text);
        let (code, report, err) = check(&p, Some(&layout_source(&p)));
        assert!(code == 0 || code == 1, "{err}");
        findings_of(&report, "probe-command-missing")
            .into_iter()
            .map(|f| message(f).to_string())
            .collect::<Vec<_>>()
    };
    for (at, probe) in [
        ("/bin", "command: [sh, -c, 'whystack-health live']"),
        ("/usr/bin", "command: [/bin/sh, -c, 'whystack-health live']"),
    ] {
        let found = missing(at, probe);
        assert!(
            found
                .iter()
                .any(|f| f.contains("`sh`") || f.contains("`/bin/sh`")),
            "{at}: {found:?}"
        );
    }
    // Elsewhere, nothing it covers is run.
    assert_eq!(
        missing("/opt/notes", "command: [sh, -c, 'whystack-health live']"),
        Vec::<String>::new()
    );
}

/// With the image read, a command the data gives only to a later release
/// is still called as the data says (its arguments, liveness against
/// readiness); and a command the data gives to this release, not found
/// where the base calls it, is not told to wait for another release.
/// A probe's script from a ConfigMap volume is the ConfigMap's file, with
/// the volume's mode and the `#!` line the key holds; a volume whose
/// files are only known when the pod runs decides nothing.
#[test]
fn scripts_mounted_from_a_volume_are_the_volumes_files() {
    let (p, _) = project("v1.29.0", "v1.29.0");
    let dir = "bases/v1.29.0";
    p.write(
        &format!("{dir}/check.sh"),
        "#!/bin/sh\nexec whystack-health live\n",
    );
    p.write(&format!("{dir}/other.sh"), "#!/bin/nosuch-shell\nexit 0\n");
    // Saved with CRLF: the kernel looks for `/bin/sh\r`.
    p.write(&format!("{dir}/crlf.sh"), "#!/bin/sh\r\nexit 0\r\n");
    let k = std::fs::read_to_string(p.path(&format!("{dir}/kustomization.yaml"))).unwrap();
    p.write(
        &format!("{dir}/kustomization.yaml"),
        &k.replacen(
            "configMapGenerator:\n",
            "configMapGenerator:\n  - name: probe-scripts\n    files: [check.sh, other.sh, crlf.sh]\n",
            1,
        ),
    );
    let sts = format!("{dir}/statefulset.yaml");
    let original = std::cell::RefCell::new(std::fs::read_to_string(p.path(&sts)).unwrap());
    let missing = |volume: &str, probe: &str| {
        let text = original
            .borrow()
            .replacen("command: [whystack-health, live]", probe, 1)
            .replacen(
                "            - name: tmp\n              mountPath: /tmp\n",
                "            - name: tmp\n              mountPath: /tmp\n            - name: probe\n              mountPath: /opt/probe\n",
                1,
            )
            .replacen(
                "      volumes:\n",
                &format!("      volumes:\n        - name: probe\n          {volume}\n"),
                1,
            );
        p.write(&sts, &text);
        let (code, report, err) = check(&p, Some(&layout_source(&p)));
        assert!(code == 0 || code == 1, "{err}");
        findings_of(&report, "probe-command-missing")
            .into_iter()
            .map(|f| message(f).to_string())
            .collect::<Vec<_>>()
    };
    let executable = "configMap: {name: probe-scripts, defaultMode: 0755}";
    assert_eq!(
        missing(executable, "command: [/opt/probe/check.sh]"),
        Vec::<String>::new()
    );
    assert_eq!(
        missing(
            "configMap: {name: probe-scripts}",
            "command: [sh, /opt/probe/check.sh]"
        ),
        Vec::<String>::new()
    );
    let found = missing(
        "configMap: {name: probe-scripts}",
        "command: [/opt/probe/check.sh]",
    );
    assert!(
        found.len() == 1 && found[0].contains("may not be executed"),
        "{found:?}"
    );
    let found = missing(executable, "command: [/opt/probe/nope.sh]");
    assert!(
        found.len() == 1 && found[0].contains("has no such key"),
        "{found:?}"
    );
    let found = missing(executable, "command: [/opt/probe/other.sh]");
    assert!(
        found.len() == 1 && found[0].contains("nosuch-shell"),
        "{found:?}"
    );
    let found = missing(executable, "command: [/opt/probe/crlf.sh]");
    assert!(
        found.len() == 1 && found[0].contains("/bin/sh\r`"),
        "{found:?}"
    );
    // Executable but not readable by the agent's user: its interpreter
    // cannot read it. (With `fsGroup`, the kubelet lets the group read.)
    let fs_group = original.borrow().clone();
    original.replace(fs_group.replacen("        fsGroup: 1000\n", "", 1));
    assert_ne!(*original.borrow(), fs_group);
    let found = missing(
        "configMap: {name: probe-scripts, defaultMode: 0711}",
        "command: [/opt/probe/check.sh]",
    );
    assert!(found.len() == 1 && found[0].contains("read"), "{found:?}");
    assert_eq!(
        missing("emptyDir: {}", "command: [/opt/probe/hc, live]"),
        Vec::<String>::new()
    );
}

#[test]
fn the_image_decides_what_exists_and_the_data_how_it_is_called() {
    let (p, _) = project("v1.29.0", "v1.29.0");
    let data = std::fs::read_to_string(p.path("image-releases.yaml")).unwrap();
    let later = data.replacen(
        "  - name: whystack-health\n    versions: \">=1.29.0\"",
        "  - name: whystack-health\n    versions: \">=1.30.0\"",
        1,
    );
    assert_ne!(later, data);
    p.write("image-releases.yaml", &later);
    let sts = "bases/v1.29.0/statefulset.yaml";
    let original = std::fs::read_to_string(p.path(sts)).unwrap();
    p.write(
        sts,
        &original.replacen(
            "command: [whystack-health, live]",
            "command: [whystack-health, ready]",
            1,
        ),
    );
    let (code, report, _) = check(&p, Some(&layout_source(&p)));
    assert_eq!(code, 1, "{report:#}");
    assert!(
        !findings_of(&report, "liveness-uses-readiness").is_empty(),
        "{report:#}"
    );
    assert!(
        findings_of(&report, "probe-command-missing").is_empty(),
        "{report:#}"
    );

    p.write("image-releases.yaml", &data);
    p.write(
        sts,
        &original.replacen(
            "command: [whystack-health, live]",
            "command: [/opt/nowhere/node, x]",
            1,
        ),
    );
    let (_, report, _) = check(&p, Some(&layout_source(&p)));
    let found = findings_of(&report, "probe-command-missing");
    let f = found
        .iter()
        .find(|f| message(f).contains("/opt/nowhere/node"))
        .unwrap_or_else(|| panic!("{report:#}"));
    let remedy = f["remedy"].as_str().unwrap_or_default();
    assert!(remedy.contains("gives `node` to 1.29.0"), "{remedy}");
    assert!(!remedy.contains("publish this base"), "{remedy}");
}

/// runAsNonRoot without runAsUser, over an image whose user is a name:
/// the kubelet cannot verify the user and never starts the container.
#[test]
fn run_as_non_root_needs_a_numeric_user() {
    let (p, _) = project("v1.29.0", "v1.29.0");
    let sts = "bases/v1.29.0/statefulset.yaml";
    let original = std::fs::read_to_string(p.path(sts)).unwrap();
    p.write(
        sts,
        &original
            .replacen("        runAsUser: 1000\n", "", 1)
            .replacen("        runAsGroup: 1000\n", "", 1),
    );
    let (code, report, err) = check(&p, Some(&layout_source(&p)));
    assert_eq!(code, 1, "{err}");
    let found = findings_of(&report, "image-user-refused");
    assert!(!found.is_empty(), "{report:#}");
    assert!(message(found[0]).contains("`node` is a name"), "{report:#}");
    assert_eq!(
        found[0]["location"]["line"].as_u64(),
        Some(line_of(&p, sts, "image: whystack-agent"))
    );
    // With the ids, it starts.
    p.write(sts, &original);
    let (_, report, _) = check(&p, Some(&layout_source(&p)));
    assert!(
        findings_of(&report, "image-user-refused").is_empty(),
        "{report:#}"
    );
}

/// With the image read, a digest an overlay pins must be one of that
/// release's image; a placeholder the reader fills in is no pin.
#[test]
fn an_overlay_pins_a_digest_of_its_release_or_a_placeholder() {
    let overlay = |digest: &str| {
        format!(
            "---\ntitle: Inicio\n---\n# Inicio\n\n```yaml file=kustomization.yaml\nresources:\n  - base\nimages:\n  - name: whystack-agent\n    newName: registry.example.com/whystack-agent\n    digest: {digest}\n```\n"
        )
    };
    let (p, _) = project("v1.29.0", "v1.29.0");
    for digest in [
        "sha256:<digest>",
        "sha256:${DIGEST}",
        "\"sha256:…\"",
        "sha256:0000000000000000000000000000000000000000000000000000000000000000",
    ] {
        p.write("content/es/index.md", &overlay(digest));
        let (_, report, _) = check(&p, Some(&layout_source(&p)));
        let found = findings_of(&report, "image-pin-mismatch");
        assert!(found.is_empty(), "{digest}: {report:#}");
    }
    let other = format!("sha256:{}", "ab".repeat(32));
    p.write("content/es/index.md", &overlay(&other));
    let (_, report, _) = check(&p, Some(&layout_source(&p)));
    let found = findings_of(&report, "image-pin-mismatch");
    assert!(
        found.len() == 1 && message(found[0]).contains("not of the 1.29.0 image"),
        "{report:#}"
    );
}
