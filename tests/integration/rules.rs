//! A failing fixture for every base rule: each starts from the repository's
//! real v1.29.0 base and breaks one thing, and the test asserts the rule id
//! and where the finding points.

use crate::support::*;

/// A project with the repository's site.yaml and image data, and the real
/// v1.29.0 base published as `version`.
struct Agent {
    project: Project,
    dir: String,
}

impl Agent {
    fn new(version: &str) -> Agent {
        let project = Project::empty();
        for f in ["site.yaml", "image-releases.yaml"] {
            project.copy_from_repo(f, f);
        }
        for lang in ["es", "pt", "en"] {
            project.write(
                &format!("content/{lang}/index.md"),
                "---\ntitle: Inicio\n---\n# Inicio\n",
            );
        }
        let dir = format!("bases/{version}");
        project.copy_from_repo("bases/v1.29.0", &dir);
        Agent { project, dir }
    }

    /// Replaces `from` (which must be there) by `to` in a file of the base.
    fn edit(&self, file: &str, from: &str, to: &str) -> &Self {
        let path = format!("{}/{file}", self.dir);
        let text = std::fs::read_to_string(self.project.path(&path)).unwrap();
        assert!(text.contains(from), "`{from}` is not in {path}");
        self.project.write(&path, &text.replacen(from, to, 1));
        self
    }

    fn add(&self, file: &str, text: &str) -> &Self {
        self.project.write(&format!("{}/{file}", self.dir), text);
        self
    }

    /// The 1-based line of the first line of `file` containing `needle`.
    fn line_of(&self, file: &str, needle: &str) -> u64 {
        let text =
            std::fs::read_to_string(self.project.path(&format!("{}/{file}", self.dir))).unwrap();
        text.lines()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("`{needle}` not in {file}")) as u64
            + 1
    }

    /// The findings of `rule`, asserting the run exits 1.
    fn findings(&self, rule: &str) -> Vec<serde_json::Value> {
        let (code, report) = self.project.check_json();
        let found: Vec<_> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == rule)
            .cloned()
            .collect();
        assert!(!found.is_empty(), "no `{rule}` finding in {report:#}");
        assert_eq!(code, 1, "{report:#}");
        found
    }

    /// The one finding of `rule`, asserting its file and line.
    fn finding_at(&self, rule: &str, file: &str, line: u64) -> serde_json::Value {
        let found = self.findings(rule);
        let f = found
            .iter()
            .find(|f| f["location"]["line"] == line)
            .unwrap_or_else(|| panic!("no `{rule}` at {file}:{line} in {found:#?}"));
        assert_eq!(f["location"]["file"], format!("{}/{file}", self.dir));
        f.clone()
    }
}

fn message(f: &serde_json::Value) -> &str {
    f["message"].as_str().unwrap()
}

#[test]
fn the_real_base_passes_every_rule() {
    let a = Agent::new("v1.29.0");
    let (code, report) = a.project.check_json();
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(
        report["findings"].as_array().unwrap().len(),
        0,
        "{report:#}"
    );
}

#[test]
fn a_v1_28_0_base_whose_probes_call_whystack_health_is_refused() {
    // The real-world case: the 1.29.0 base published for 1.28.0, an image
    // that has no whystack-health.
    let a = Agent::new("v1.28.0");
    let live = a.line_of("statefulset.yaml", "command: [whystack-health, live]");
    let f = a.finding_at("probe-command-missing", "statefulset.yaml", live);
    let m = message(&f);
    assert!(m.contains("whystack-health"), "{m}");
    assert!(m.contains("v1.28.0"), "{m}");
    assert!(m.contains("from 1.29.0"), "{m}");
    let ready = a.line_of("statefulset.yaml", "command: [whystack-health, ready]");
    a.finding_at("probe-command-missing", "statefulset.yaml", ready);

    // And `build` writes nothing.
    let o = a.project.build();
    assert_eq!(o.status.code(), Some(1));
    assert!(!a.project.out().exists());
}

#[test]
fn command_args_invalid() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "[whystack-health, live]",
        "[whystack-health, alive]",
    );
    let line = a.line_of("statefulset.yaml", "alive");
    let f = a.finding_at("command-args-invalid", "statefulset.yaml", line);
    assert!(f["remedy"]
        .as_str()
        .unwrap()
        .contains("whystack-health live"));
}

#[test]
fn liveness_uses_readiness() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "[whystack-health, live]",
        "[whystack-health, ready]",
    );
    let line = a.line_of("statefulset.yaml", "livenessProbe") + 2;
    a.finding_at("liveness-uses-readiness", "statefulset.yaml", line);
}

#[test]
fn lifecycle_hook_commands_are_checked_too() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "          livenessProbe:",
        "          lifecycle:\n            preStop:\n              exec:\n                command: [drain-now]\n          livenessProbe:",
    );
    let line = a.line_of("statefulset.yaml", "[drain-now]");
    let f = a.finding_at("probe-command-missing", "statefulset.yaml", line);
    assert!(message(&f).contains("the image data gives it to no release"));
}

/// A command of a script written as a literal block is reported on its
/// own line, with the column its line starts at.
#[test]
fn a_script_command_is_reported_on_its_line() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "          livenessProbe:",
        "          lifecycle:\n            preStop:\n              exec:\n                command:\n                  - sh\n                  - -c\n                  - |\n                    set -e\n                    [ -d /tmp ] && \\\n                      echo ok\n                    drain-now --fast\n          livenessProbe:",
    );
    let line = a.line_of("statefulset.yaml", "drain-now --fast");
    let f = a.finding_at("probe-command-missing", "statefulset.yaml", line);
    assert_eq!(f["location"]["column"], 21, "{f:#}");
}

/// The base with one more resource, `extra.yaml`.
fn with_extra(a: &Agent, yaml: &str) {
    a.add("extra.yaml", yaml);
    a.edit(
        "kustomization.yaml",
        "resources:\n",
        "resources:\n  - extra.yaml\n",
    );
}

/// A ReplicaSet or ReplicationController runs pods like a Deployment
/// (and a PodTemplate describes them):
/// their commands are checked against the image, and a mount of a volume
/// the pod lacks is refused as the API server refuses it.
#[test]
fn every_kind_that_runs_pods_is_checked() {
    for (api, kind) in [("apps/v1", "ReplicaSet"), ("v1", "ReplicationController")] {
        let a = Agent::new("v1.29.0");
        with_extra(
            &a,
            &format!("apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: extra\nspec:\n  replicas: 1\n  selector:\n    app: extra\n  template:\n    metadata:\n      labels:\n        app: extra\n    spec:\n      containers:\n        - name: tool\n          image: whystack-agent\n          command: [drain-now]\n          volumeMounts:\n            - name: scratch\n              mountPath: /scratch\n"),
        );
        let f = a.finding_at(
            "probe-command-missing",
            "extra.yaml",
            a.line_of("extra.yaml", "[drain-now]"),
        );
        assert!(message(&f).contains("drain-now"), "{kind}");
        let f = a.finding_at(
            "manifest-value-invalid",
            "extra.yaml",
            a.line_of("extra.yaml", "- name: scratch"),
        );
        assert!(message(&f).contains("`scratch`"), "{kind}");
    }
    // A PodTemplate runs no pods itself, but what uses it runs its spec.
    let a = Agent::new("v1.29.0");
    with_extra(
        &a,
        "apiVersion: v1\nkind: PodTemplate\nmetadata:\n  name: extra\ntemplate:\n  metadata:\n    labels:\n      app: extra\n  spec:\n    containers:\n      - name: tool\n        image: whystack-agent\n        command: [sh, -c, \"drain-now\"]\n",
    );
    let f = a.finding_at(
        "probe-command-missing",
        "extra.yaml",
        a.line_of("extra.yaml", "drain-now"),
    );
    assert!(message(&f).contains("drain-now"), "PodTemplate");
}

/// Without the image read, a program a volume holds is the volume's to
/// have (a ConfigMap's key, with its mode), and one called by a path is
/// the data's command only where that path finds it.
#[test]
fn a_program_from_a_volume_is_the_volumes_and_a_path_is_where_it_is() {
    let agent = |mode: &str, probe: &str| {
        let a = Agent::new("v1.29.0");
        a.add("probe.sh", "#!/bin/sh\nexec whystack-health ready\n");
        a.edit(
            "kustomization.yaml",
            "configMapGenerator:\n",
            "configMapGenerator:\n  - name: probe\n    files: [probe.sh]\n",
        );
        a.edit(
            "statefulset.yaml",
            "            - name: tmp\n              mountPath: /tmp\n",
            "            - name: tmp\n              mountPath: /tmp\n            - name: scripts\n              mountPath: /scripts\n",
        );
        a.edit(
            "statefulset.yaml",
            "      volumes:\n",
            &format!("      volumes:\n        - name: scripts\n          configMap: {{name: probe{mode}}}\n"),
        );
        a.edit(
            "statefulset.yaml",
            "command: [whystack-health, ready]",
            &format!("command: [{probe}]"),
        );
        a
    };
    let clean = |a: &Agent| {
        let (code, report) = a.project.check_json();
        assert_eq!(code, 0, "{report:#}");
    };
    clean(&agent(", defaultMode: 0755", "/scripts/probe.sh"));
    let a = agent("", "/scripts/probe.sh");
    let f = &a.findings("probe-command-missing")[0];
    assert!(
        message(f).contains("mode 0644, which lets no one run it"),
        "{f:#}"
    );
    let a = agent(", defaultMode: 0755", "/scripts/nope.sh");
    let f = &a.findings("probe-command-missing")[0];
    assert!(message(f).contains("/scripts/nope.sh"), "{f:#}");
    // `whystack-health` is on PATH, not in /opt.
    let a = agent(", defaultMode: 0755", "/opt/whystack-health, ready");
    let f = &a.findings("probe-command-missing")[0];
    assert!(message(f).contains("/opt/whystack-health"), "{f:#}");
    clean(&agent(
        ", defaultMode: 0755",
        "/usr/local/bin/whystack-health, ready",
    ));
    // A key mounted alone (`subPath`), or through a projected volume, is
    // the same file, with the same mode.
    let mounted = |mount: &str, volume: &str, probe: &str| {
        let a = agent("", probe);
        a.edit(
            "statefulset.yaml",
            "            - name: scripts\n              mountPath: /scripts\n",
            &format!("            - name: scripts\n{mount}"),
        );
        a.edit(
            "statefulset.yaml",
            "          configMap: {name: probe}\n",
            &format!("{volume}\n"),
        );
        a
    };
    let sub_path = "              mountPath: /opt/probe.sh\n              subPath: probe.sh\n";
    let whole = "              mountPath: /scripts\n";
    let projected = |mode: &str| {
        format!("          projected: {{{mode}sources: [{{configMap: {{name: probe}}}}]}}")
    };
    for (mount, volume, probe) in [
        (
            sub_path,
            "          configMap: {name: probe}".to_string(),
            "/opt/probe.sh",
        ),
        (whole, projected(""), "/scripts/probe.sh"),
    ] {
        let a = mounted(mount, &volume, probe);
        let f = &a.findings("probe-command-missing")[0];
        assert!(
            message(f).contains("mode 0644, which lets no one run it"),
            "{volume}: {f:#}"
        );
    }
    clean(&mounted(
        sub_path,
        "          configMap: {name: probe, defaultMode: 0755}",
        "/opt/probe.sh",
    ));
    clean(&mounted(
        whole,
        &projected("defaultMode: 0755, "),
        "/scripts/probe.sh",
    ));
    // Its script is read: what it runs must be in the image.
    let a = mounted(
        whole,
        &projected("defaultMode: 0755, "),
        "/scripts/probe.sh",
    );
    a.add("probe.sh", "#!/bin/sh\nexec drain-now\n");
    let f = &a.findings("probe-command-missing")[0];
    assert!(message(f).contains("drain-now"), "{f:#}");
}

/// A call in a block scalar that starts with a blank line is found at its
/// own line.
#[test]
fn a_call_after_a_blank_first_line_is_found_at_its_line() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "command: [whystack-health, ready]",
        "command:\n                - sh\n                - -c\n                - |\n\n                  echo start\n                  curl -f http://x/",
    );
    let f = a.finding_at(
        "probe-command-missing",
        "statefulset.yaml",
        a.line_of("statefulset.yaml", "curl -f"),
    );
    assert_eq!(f["location"]["column"], 19, "{f:#}");
}

#[test]
fn probe_needs_port() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "          readinessProbe:\n            exec:\n              command: [whystack-health, ready]",
        "          readinessProbe:\n            httpGet:\n              path: /healthz\n              port: 8080",
    );
    let line = a.line_of("statefulset.yaml", "httpGet");
    a.finding_at("probe-needs-port", "statefulset.yaml", line);
    // A lifecycle hook that calls a port fails the same way.
    for (hook, handler) in [
        ("postStart", "httpGet: {path: /started, port: 8080}"),
        ("preStop", "tcpSocket: {port: 9000}"),
    ] {
        let a = Agent::new("v1.29.0");
        a.edit(
            "statefulset.yaml",
            "          readinessProbe:\n",
            &format!("          lifecycle:\n            {hook}:\n              {handler}\n          readinessProbe:\n"),
        );
        let line = a.line_of("statefulset.yaml", handler);
        let f = a.finding_at("probe-needs-port", "statefulset.yaml", line);
        assert!(message(&f).contains(&format!("the {hook} hook")), "{f:#}");
    }
}

/// What a probe's script writes must land on a writable file system.
#[test]
fn script_write_read_only() {
    let probe = |script: &str| {
        let a = Agent::new("v1.29.0");
        a.edit(
            "statefulset.yaml",
            "command: [whystack-health, live]",
            &format!("command: [sh, -c, \"{script}\"]"),
        );
        a
    };
    for script in [
        "whystack-health live > /app/last-probe.log",
        "whystack-health live | tee -a /app/last-probe.log",
        "touch /app/last-probe.log && whystack-health live",
    ] {
        let a = probe(script);
        let line = a.line_of("statefulset.yaml", "last-probe.log");
        let f = a.finding_at("script-write-read-only", "statefulset.yaml", line);
        assert!(
            message(&f).contains("/app/last-probe.log"),
            "{script}: {f:#}"
        );
    }
    // Into the emptyDir at /tmp, to the kernel's files, to a descriptor.
    for fine in [
        "whystack-health live >> /tmp/probe.log 2>&1",
        "whystack-health live > /dev/null",
        "cd /tmp && whystack-health live > probe.log",
        "whystack-health live 2>&1 >&2",
    ] {
        let (code, report) = probe(fine).project.check_json();
        assert_eq!(code, 0, "{fine}: {report:#}");
    }
}

#[test]
fn working_dir_invalid() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "          livenessProbe:\n",
        "          workingDir: app\n          livenessProbe:\n",
    );
    let line = a.line_of("statefulset.yaml", "workingDir: app");
    let f = a.finding_at("working-dir-invalid", "statefulset.yaml", line);
    assert!(f["remedy"].as_str().unwrap().contains("/app"), "{f:#}");
}

#[test]
fn termination_grace_too_short() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "terminationGracePeriodSeconds: 150",
        "terminationGracePeriodSeconds: 100",
    );
    let line = a.line_of("statefulset.yaml", "terminationGracePeriodSeconds");
    let f = a.finding_at("termination-grace-too-short", "statefulset.yaml", line);
    assert!(message(&f).contains("120000"), "{f:#}");

    // Missing: the Kubernetes default of 30 s applies.
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "      terminationGracePeriodSeconds: 150\n",
        "",
    );
    let f = a.findings("termination-grace-too-short");
    assert!(message(&f[0]).contains("30"), "{f:#?}");

    // A longer drain in the base's ConfigMap needs a longer grace.
    let a = Agent::new("v1.29.0");
    a.edit(
        "config.env",
        "RUNNER_DRAIN_TIMEOUT_MS=120000",
        "RUNNER_DRAIN_TIMEOUT_MS=300000",
    );
    let line = a.line_of("statefulset.yaml", "terminationGracePeriodSeconds");
    let f = a.finding_at("termination-grace-too-short", "statefulset.yaml", line);
    assert!(message(&f).contains("as configured"), "{f:#}");
}

#[test]
fn health_dir_not_writable() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "            - name: tmp\n              mountPath: /tmp\n",
        "",
    );
    let line = a.line_of("statefulset.yaml", "readOnlyRootFilesystem");
    a.finding_at("health-dir-not-writable", "statefulset.yaml", line);

    // A read-only mount does not count either.
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "              mountPath: /tmp\n",
        "              mountPath: /tmp\n              readOnly: true\n",
    );
    a.finding_at("health-dir-not-writable", "statefulset.yaml", line);
}

#[test]
fn security_context_user_and_non_root() {
    let a = Agent::new("v1.29.0");
    a.edit("statefulset.yaml", "runAsUser: 1000", "runAsUser: 0");
    a.edit("statefulset.yaml", "fsGroup: 1000", "fsGroup: 2000");
    let f = a.finding_at(
        "security-user-mismatch",
        "statefulset.yaml",
        a.line_of("statefulset.yaml", "runAsUser"),
    );
    assert!(message(&f).contains("1000"));
    a.finding_at(
        "security-user-mismatch",
        "statefulset.yaml",
        a.line_of("statefulset.yaml", "fsGroup"),
    );

    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "runAsNonRoot: true",
        "runAsNonRoot: false",
    );
    a.finding_at(
        "run-as-non-root-missing",
        "statefulset.yaml",
        a.line_of("statefulset.yaml", "runAsNonRoot"),
    );
}

#[test]
fn replicas_not_one() {
    let a = Agent::new("v1.29.0");
    a.edit("statefulset.yaml", "replicas: 1", "replicas: 3");
    a.finding_at(
        "replicas-not-one",
        "statefulset.yaml",
        a.line_of("statefulset.yaml", "replicas"),
    );
}

#[test]
fn env_key_unknown_suggests_the_closest_key() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "config.env",
        "RUNNER_SECRET_STORE_MODE=env",
        "RUNNER_SECRET_STORE_MOD=env",
    );
    let f = a.finding_at("env-key-unknown", "config.env", 2);
    assert!(
        message(&f).contains("did you mean `RUNNER_SECRET_STORE_MODE`"),
        "{f:#}"
    );

    // A key of a later release.
    let a = Agent::new("v1.29.0");
    a.edit(
        "config.env",
        "RUNNER_SECRET_STORE_MODE=env",
        "RUNNER_SECRET_STORE_MODE=env\nRUNNER_LOG_FORMAT=json",
    );
    let f = a.finding_at("env-key-unknown", "config.env", 3);
    assert!(message(&f).contains(">=1.30.0"), "{f:#}");

    // Env entries too, but not helpers that other entries refer to.
    let a = Agent::new("v1.29.0");
    a.edit("statefulset.yaml", "            - name: POD_UID\n", "            - name: RUNNER_INSTANCE\n              value: x\n            - name: POD_UID\n");
    // The first match is the entry added above, before RUNNER_INSTANCE_ID.
    let line = a.line_of("statefulset.yaml", "name: RUNNER_INSTANCE");
    let found = a.findings("env-key-unknown");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["location"]["line"], line);
}

#[test]
fn env_value_invalid() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "config.env",
        "RUNNER_SECRET_STORE_MODE=env",
        "RUNNER_SECRET_STORE_MODE=s3",
    );
    let f = a.finding_at("env-value-invalid", "config.env", 2);
    assert!(f["remedy"].as_str().unwrap().contains("`vault`"));
}

#[test]
fn env_requirements() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "config.env",
        "RUNNER_ATTESTATION_MODE=bootstrap-token",
        "RUNNER_ATTESTATION_MODE=aws-sts",
    );
    let f = a.finding_at("env-requirement-missing", "config.env", 1);
    assert!(message(&f).contains("AWS_REGION"), "{f:#}");
    assert!(f["remedy"]
        .as_str()
        .unwrap()
        .contains("requires AWS_REGION"));

    // With the region it passes.
    a.edit(
        "config.env",
        "RUNNER_ATTESTATION_MODE=aws-sts",
        "RUNNER_ATTESTATION_MODE=aws-sts\nAWS_REGION=us-east-1",
    );
    let (code, report) = a.project.check_json();
    assert_eq!(code, 0, "{report:#}");

    // gke-oidc without the projected token volume.
    let a = Agent::new("v1.29.0");
    a.edit(
        "config.env",
        "RUNNER_ATTESTATION_MODE=bootstrap-token",
        "RUNNER_ATTESTATION_MODE=gke-oidc",
    );
    let f = a.finding_at("env-requirement-missing", "config.env", 1);
    assert!(
        message(&f).contains("/var/run/secrets/tokens/gke-oidc"),
        "{f:#}"
    );

    // The Secret store in aws mode needs its region.
    let a = Agent::new("v1.29.0");
    a.edit(
        "config.env",
        "RUNNER_SECRET_STORE_MODE=env",
        "RUNNER_SECRET_STORE_MODE=aws",
    );
    let f = a.finding_at("env-requirement-missing", "config.env", 2);
    assert!(
        message(&f).contains("RUNNER_SECRETS_MANAGER_REGION"),
        "{f:#}"
    );
}

#[test]
fn gke_oidc_with_the_wrong_audience() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "config.env",
        "RUNNER_ATTESTATION_MODE=bootstrap-token",
        "RUNNER_ATTESTATION_MODE=gke-oidc",
    );
    a.edit(
        "statefulset.yaml",
        "            - name: tmp\n              mountPath: /tmp\n",
        "            - name: tmp\n              mountPath: /tmp\n            - name: token\n              mountPath: /var/run/secrets/tokens/gke-oidc\n              readOnly: true\n",
    );
    a.edit(
        "statefulset.yaml",
        "        - name: tmp\n          emptyDir: {}\n",
        "        - name: tmp\n          emptyDir: {}\n        - name: token\n          projected:\n            sources:\n              - serviceAccountToken:\n                  path: token\n                  audience: rootpilot-enroll\n",
    );
    let f = a.finding_at("env-requirement-missing", "config.env", 1);
    assert!(
        message(&f).contains("`whystack-enroll`, not `rootpilot-enroll`"),
        "{f:#}"
    );

    a.edit(
        "statefulset.yaml",
        "audience: rootpilot-enroll",
        "audience: whystack-enroll",
    );
    let (code, report) = a.project.check_json();
    assert_eq!(code, 0, "{report:#}");
}

#[test]
fn env_value_not_implemented() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "config.env",
        "RUNNER_ATTESTATION_MODE=bootstrap-token",
        "RUNNER_ATTESTATION_MODE=eks-oidc",
    );
    let f = a.finding_at("env-value-not-implemented", "config.env", 1);
    assert!(message(&f).contains("not implemented"));
}

#[test]
fn learned_store_on_identity_volume() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "config.env",
        "RUNNER_LEARNED_STORE_PATH=:memory:",
        "RUNNER_LEARNED_STORE_PATH=/var/lib/whystack/identity/learned.db",
    );
    a.finding_at("learned-store-on-identity-volume", "config.env", 7);
}

#[test]
fn image_not_bare() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "image: whystack-agent",
        "image: registry.example.com/whystack-agent:1.29.0",
    );
    a.finding_at(
        "image-not-bare",
        "statefulset.yaml",
        a.line_of("statefulset.yaml", "image:"),
    );
}

#[test]
fn storage_class_set() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "        accessModes: [ReadWriteOnce]",
        "        storageClassName: gp3\n        accessModes: [ReadWriteOnce]",
    );
    a.finding_at(
        "storage-class-set",
        "statefulset.yaml",
        a.line_of("statefulset.yaml", "storageClassName"),
    );
}

#[test]
fn secrets_in_the_base() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "config.env",
        "RUNNER_SECRET_STORE_MODE=env",
        "RUNNER_SECRET_STORE_MODE=env\nRUNNER_BOOTSTRAP_TOKEN=wst_live_0123456789",
    );
    a.finding_at("secret-in-base", "config.env", 3);

    // Referred to by the container's arguments too: a key the image reads
    // is checked whether or not another value refers to it.
    a.edit(
        "statefulset.yaml",
        "          image: whystack-agent\n",
        "          image: whystack-agent\n          args: [\"--token=$(RUNNER_BOOTSTRAP_TOKEN)\"]\n",
    );
    a.finding_at("secret-in-base", "config.env", 3);

    let a = Agent::new("v1.29.0");
    a.add("secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: whystack-agent-env\nstringData:\n  RUNNER_BOOTSTRAP_TOKEN: abc\n");
    a.edit(
        "kustomization.yaml",
        "  - networkpolicy.yaml",
        "  - networkpolicy.yaml\n  - secret.yaml",
    );
    a.finding_at("secret-in-base", "secret.yaml", 5);

    let a = Agent::new("v1.29.0");
    a.edit(
        "kustomization.yaml",
        "configMapGenerator:",
        "secretGenerator:\n  - name: whystack-agent-env\n    literals:\n      - RUNNER_BOOTSTRAP_TOKEN=abc\nconfigMapGenerator:",
    );
    a.finding_at(
        "secret-in-base",
        "kustomization.yaml",
        a.line_of("kustomization.yaml", "name: whystack-agent-env"),
    );
}

#[test]
fn manifest_unknown_field_and_wrong_type() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "          image: whystack-agent",
        "          image: whystack-agent\n          llamas: true",
    );
    let f = a.finding_at(
        "manifest-unknown-field",
        "statefulset.yaml",
        a.line_of("statefulset.yaml", "llamas"),
    );
    assert!(
        message(&f).contains("spec.template.spec.containers[agent].llamas"),
        "{f:#}"
    );
    assert_eq!(f["location"]["column"], 11);

    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "periodSeconds: 20",
        "periodSeconds: often",
    );
    let f = a.finding_at(
        "manifest-type-invalid",
        "statefulset.yaml",
        a.line_of("statefulset.yaml", "often"),
    );
    assert!(
        message(&f).contains("containers[agent].livenessProbe.periodSeconds"),
        "{f:#}"
    );

    let a = Agent::new("v1.29.0");
    a.add(
        "thing.yaml",
        "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t\n",
    );
    a.edit(
        "kustomization.yaml",
        "  - networkpolicy.yaml",
        "  - networkpolicy.yaml\n  - thing.yaml",
    );
    let (code, report) = a.project.check_json();
    assert_eq!(code, 0, "a warning does not fail: {report:#}");
    assert_eq!(report["findings"][0]["rule"], "manifest-kind-unchecked");
    assert_eq!(report["findings"][0]["severity"], "warning");
}

#[test]
fn exceptions_in_site_yaml_downgrade_or_silence_a_rule() {
    let a = Agent::new("v1.29.0");
    a.edit("statefulset.yaml", "replicas: 1", "replicas: 2");
    let site = std::fs::read_to_string(a.project.path("site.yaml")).unwrap();
    a.project.write(
        "site.yaml",
        &format!("{site}exceptions:\n  - rule: replicas-not-one\n    bases: [v1.29.0]\n    severity: warning\n    reason: two replicas for a load test\n"),
    );
    let (code, report) = a.project.check_json();
    assert_eq!(code, 0, "{report:#}");
    let f = &report["findings"][0];
    assert_eq!(f["severity"], "warning");
    assert!(message(f).contains("two replicas for a load test"));

    a.project.write(
        "site.yaml",
        &format!("{site}exceptions:\n  - rule: replicas-not-one\n    severity: off\n    reason: two replicas for a load test\n"),
    );
    let (code, report) = a.project.check_json();
    assert_eq!(code, 0);
    assert!(report["findings"].as_array().unwrap().is_empty());

    // Another base is not covered.
    a.project.write(
        "site.yaml",
        &format!("{site}exceptions:\n  - rule: replicas-not-one\n    bases: [v9.9.9]\n    severity: off\n    reason: not this one\n"),
    );
    a.findings("replicas-not-one");

    // A reason is required, and the rule must exist.
    for bad in [
        "exceptions:\n  - rule: replicas-not-one\n    severity: off\n    reason: ' '\n",
        "exceptions:\n  - rule: replicas-not-two\n    severity: off\n    reason: x\n",
    ] {
        a.project.write("site.yaml", &format!("{site}{bad}"));
        let (code, report) = a.project.check_json();
        assert_eq!(code, 2, "{report:#}");
        assert_eq!(report["findings"][0]["rule"], "config-invalid");
    }
}

#[test]
fn two_folders_for_one_release() {
    let a = Agent::new("v1.29.0");
    a.project.copy_from_repo("bases/v1.29.0", "bases/v1.29.00");
    let f = a.findings("base-version-duplicate");
    assert_eq!(
        f[0]["location"]["file"], "bases/v1.29.00/kustomization.yaml",
        "{f:#?}"
    );
    assert!(message(&f[0]).contains("bases/v1.29.0"), "{f:#?}");
}

// What Kustomize builds, not the files: the base's own kustomization can
// change what is deployed, and the rules see its result.

#[test]
fn the_bases_own_kustomization_is_built_before_the_checks() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "kustomization.yaml",
        "configMapGenerator:",
        "replicas:\n  - name: whystack-agent\n    count: 2\nconfigMapGenerator:",
    );
    let line = a.line_of("kustomization.yaml", "count: 2");
    a.finding_at("replicas-not-one", "kustomization.yaml", line);

    // An inline JSON 6902 patch that swaps the liveness probe for readiness.
    let a = Agent::new("v1.29.0");
    a.edit(
        "kustomization.yaml",
        "configMapGenerator:",
        "patches:\n  - target: {kind: StatefulSet}\n    patch: |-\n      - op: replace\n        path: /spec/template/spec/containers/0/livenessProbe/exec/command/1\n        value: ready\nconfigMapGenerator:",
    );
    let f = a.findings("liveness-uses-readiness");
    assert_eq!(
        f[0]["location"]["file"],
        format!("{}/kustomization.yaml", a.dir),
        "{f:#?}"
    );
}

/// The entrypoint runs its arguments (the image data says so): a
/// container's `args` without a `command` go through it, and what they
/// name must be in the image.
#[test]
fn the_arguments_the_entrypoint_runs_are_checked() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "          livenessProbe:\n",
        "          args: [nodee, apps/runner/dist/index.js]\n          livenessProbe:\n",
    );
    let line = a.line_of("statefulset.yaml", "args: [nodee");
    let f = a.finding_at("probe-command-missing", "statefulset.yaml", line);
    assert!(message(&f).contains("`nodee`"), "{f:#}");
    // The image's own command through it is fine.
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "          livenessProbe:\n",
        "          args: [node, apps/runner/dist/index.js]\n          livenessProbe:\n",
    );
    let (code, report) = a.project.check_json();
    assert_eq!(code, 0, "{report:#}");
}

/// A probe script that a ConfigMap mounts is read as the probe runs it:
/// its commands are checked against the image data, at their lines.
#[test]
fn a_script_a_volume_holds_is_read_where_a_probe_runs_it() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "kustomization.yaml",
        "  - networkpolicy.yaml\n",
        "  - networkpolicy.yaml\n  - probe.yaml\n",
    )
    .add(
        "probe.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  live.sh: |\n    #!/bin/sh\n    set -e\n    whystack-nope \"$1\"\n",
    )
    .edit(
        "statefulset.yaml",
        "command: [whystack-health, live]",
        "command: [sh, /opt/probe/live.sh, live]",
    )
    .edit(
        "statefulset.yaml",
        "          volumeMounts:\n",
        "          volumeMounts:\n            - name: probe\n              mountPath: /opt/probe\n",
    )
    .edit(
        "statefulset.yaml",
        "      volumes:\n",
        "      volumes:\n        - name: probe\n          configMap: {name: probe}\n",
    );
    let line = a.line_of("probe.yaml", "whystack-nope");
    let f = a.finding_at("probe-command-missing", "probe.yaml", line);
    assert!(
        message(&f).contains("in /opt/probe/live.sh, line 3, which the livenessProbe runs"),
        "{f:#}"
    );
    // Read, so not named as a file basepress cannot read.
    let (_, report) = a.project.check_json();
    assert!(
        findings_of(&report, "shell-script-dynamic").is_empty(),
        "{report:#}"
    );
}

#[test]
fn commands_behind_a_shell_are_checked() {
    // `sh -c` in a base for an image without whystack-health.
    let a = Agent::new("v1.28.0");
    a.edit(
        "statefulset.yaml",
        "command: [whystack-health, live]",
        "command: [sh, -c, \"whystack-health live\"]",
    );
    let line = a.line_of("statefulset.yaml", "sh, -c");
    let f = a.finding_at("probe-command-missing", "statefulset.yaml", line);
    assert!(message(&f).contains("whystack-health"), "{f:#}");

    // `exec` behind a shell, a readiness check as liveness.
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "command: [whystack-health, live]",
        "command: [/bin/sh, -c, \"test -d /tmp && exec whystack-health ready\"]",
    );
    let line = a.line_of("statefulset.yaml", "/bin/sh");
    a.finding_at("liveness-uses-readiness", "statefulset.yaml", line);

    // Through variables: the script's own, and the container's `env`.
    for (command, env) in [
        ("[sh, -c, \"W=ready; whystack-health $W\"]", ""),
        (
            "[sh, -c, \"whystack-health $CHECK\"]",
            "{name: CHECK, value: ready}",
        ),
    ] {
        let a = Agent::new("v1.29.0");
        a.edit(
            "statefulset.yaml",
            "command: [whystack-health, live]",
            &format!("command: {command}"),
        );
        if !env.is_empty() {
            a.edit(
                "statefulset.yaml",
                "env:\n",
                &format!("env:\n            - {env}\n"),
            );
        }
        let line = a.line_of("statefulset.yaml", "command: [sh");
        a.finding_at("liveness-uses-readiness", "statefulset.yaml", line);
    }

    // Shell options before the script, each taking a word of its own
    // (`-o NAME`, `-euo NAME`, bash's `-O SHOPT`): the script is still
    // the shell's, and still checked.
    for shell in [
        "sh, -o, errexit, -c",
        "bash, -euo, pipefail, -c",
        "bash, -O, extglob, -c",
        "sh, -co, errexit",
    ] {
        let a = Agent::new("v1.28.0");
        a.edit(
            "statefulset.yaml",
            "command: [whystack-health, live]",
            &format!("command: [{shell}, \"whystack-health live\"]"),
        );
        let line = a.line_of("statefulset.yaml", shell);
        a.finding_at("probe-command-missing", "statefulset.yaml", line);
    }
}

#[test]
fn shell_script_dynamic() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "command: [whystack-health, live]",
        "command: [sh, -c, \"$HEALTH live\"]",
    );
    let line = a.line_of("statefulset.yaml", "$HEALTH");
    let found = a.project.check_json().1;
    let f = found["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "shell-script-dynamic")
        .unwrap_or_else(|| panic!("{found:#}"))
        .clone();
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["location"]["line"], line);
    assert!(message(&f).contains("$HEALTH live"), "{f:#}");
}

#[test]
fn manifest_required_field_missing() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "        accessModes: [ReadWriteOnce]\n",
        "",
    );
    let line = a.line_of("statefulset.yaml", "volumeClaimTemplates");
    let f = a.findings("manifest-required-field-missing");
    assert!(message(&f[0]).contains("accessModes"), "{f:#?}");
    assert_eq!(
        f[0]["location"]["file"],
        format!("{}/statefulset.yaml", a.dir)
    );
    assert!(f[0]["location"]["line"].as_u64().unwrap() >= line, "{f:#?}");

    // A container list emptied by a patch of the base.
    let a = Agent::new("v1.29.0");
    a.edit(
        "kustomization.yaml",
        "configMapGenerator:",
        "patches:\n  - target: {kind: StatefulSet}\n    patch: |-\n      - op: replace\n        path: /spec/template/spec/containers\n        value: []\nconfigMapGenerator:",
    );
    let f = a.findings("manifest-required-field-missing");
    assert!(message(&f[0]).contains("containers"), "{f:#?}");
}

/// A JSON 6902 operation that cannot be applied is reported at that
/// operation, inline or in a patch file, not at the `patches` entry.
#[test]
fn a_failing_json_operation_is_reported_where_it_is() {
    let a = Agent::new("v1.29.0");
    a.add(
        "p.yaml",
        "- op: add\n  path: /spec/replicas\n  value: 1\n- op: replace\n  path: /spec/template/spec/containers/5/image\n  value: x\n",
    );
    a.edit(
        "kustomization.yaml",
        "configMapGenerator:",
        "patches:\n  - target: {kind: StatefulSet}\n    path: p.yaml\n  - target: {kind: StatefulSet}\n    patch: |-\n      - op: remove\n        path: /spec/nothing/here\nconfigMapGenerator:",
    );
    let line = a.line_of("p.yaml", "op: replace");
    let f = a.finding_at("kustomize-patch-invalid", "p.yaml", line);
    assert!(message(&f).contains("operation 1"), "{f:#}");
    let a = Agent::new("v1.29.0");
    a.edit(
        "kustomization.yaml",
        "configMapGenerator:",
        "patches:\n  - target: {kind: StatefulSet}\n    patch: |-\n      - op: add\n        path: /spec/replicas\n        value: 1\n      - op: remove\n        path: /spec/nothing/here\nconfigMapGenerator:",
    );
    let line = a.line_of("kustomization.yaml", "op: remove");
    a.finding_at("kustomize-patch-invalid", "kustomization.yaml", line);
}

/// Names the API server wants unique in a pod: a JSON patch that appends
/// a container or a volume under a name the base uses makes a second one.
#[test]
fn repeated_container_and_volume_names_are_invalid() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "kustomization.yaml",
        "configMapGenerator:",
        "patches:\n  - target: {kind: StatefulSet}\n    patch: |-\n      - op: add\n        path: /spec/template/spec/containers/-\n        value: {name: agent, image: busybox}\n      - op: add\n        path: /spec/template/spec/volumes/-\n        value: {name: tmp, emptyDir: {}}\nconfigMapGenerator:",
    );
    let f = a.findings("manifest-value-invalid");
    let messages: Vec<&str> = f.iter().map(message).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("two containers of the pod are named `agent`")),
        "{messages:#?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("two volumes of the pod are named `tmp`")),
        "{messages:#?}"
    );
}

#[test]
fn an_init_container_of_the_image_that_prepares_a_file_is_not_the_agent() {
    // It runs only the shell (and its builtins), not the agent: the
    // agent's environment rules do not apply to it.
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "      containers:\n",
        "      initContainers:\n        - name: prepare\n          image: whystack-agent\n          command: [sh, -c, \"umask 077; : > /tmp/ready\"]\n          securityContext:\n            allowPrivilegeEscalation: false\n            capabilities: {drop: [ALL]}\n      containers:\n",
    );
    let (code, report) = a.project.check_json();
    assert_eq!(code, 0, "{report:#}");

    // But what it runs must be in the image.
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "      containers:\n",
        "      initContainers:\n        - name: prepare\n          image: whystack-agent\n          command: [sh, -c, \"prepare-disk /tmp/x\"]\n      containers:\n",
    );
    let line = a.line_of("statefulset.yaml", "prepare-disk");
    a.finding_at("probe-command-missing", "statefulset.yaml", line);
}

#[test]
fn an_invalid_drain_timeout_does_not_switch_the_grace_check_off() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "config.env",
        "RUNNER_DRAIN_TIMEOUT_MS=120000",
        "RUNNER_DRAIN_TIMEOUT_MS=2m",
    );
    a.edit(
        "statefulset.yaml",
        "terminationGracePeriodSeconds: 150",
        "terminationGracePeriodSeconds: 60",
    );
    a.finding_at("env-value-invalid", "config.env", 5);
    let line = a.line_of("statefulset.yaml", "terminationGracePeriodSeconds");
    let f = a.finding_at("termination-grace-too-short", "statefulset.yaml", line);
    assert!(message(&f).contains("image default"), "{f:#}");
}

#[test]
fn a_key_the_image_reads_is_checked_when_another_value_refers_to_it() {
    let a = Agent::new("v1.29.0");
    a.edit(
        "config.env",
        "RUNNER_DRAIN_TIMEOUT_MS=120000",
        "RUNNER_DRAIN_TIMEOUT_MS=2m",
    );
    a.edit(
        "statefulset.yaml",
        "          image: whystack-agent\n",
        "          image: whystack-agent\n          args: [\"--drain=$(RUNNER_DRAIN_TIMEOUT_MS)\"]\n",
    );
    a.finding_at("env-value-invalid", "config.env", 5);
}

#[test]
fn env_from_with_a_prefix_is_resolved() {
    // A second ConfigMap read with `prefix: RUNNER_`: its key
    // DRAIN_TIMEOUT_MS reaches the container as RUNNER_DRAIN_TIMEOUT_MS,
    // after (so over) the base's own.
    let a = Agent::new("v1.29.0");
    a.add("drain.env", "DRAIN_TIMEOUT_MS=300000\n");
    a.edit(
        "kustomization.yaml",
        "      - config.env",
        "      - config.env\n  - name: whystack-agent-drain\n    envs:\n      - drain.env",
    );
    a.edit(
        "statefulset.yaml",
        "            - secretRef:\n",
        "            - configMapRef:\n                name: whystack-agent-drain\n              prefix: RUNNER_\n            - secretRef:\n",
    );
    let line = a.line_of("statefulset.yaml", "terminationGracePeriodSeconds");
    let f = a.finding_at("termination-grace-too-short", "statefulset.yaml", line);
    assert!(message(&f).contains("300000"), "{f:#}");
}

#[test]
fn a_byte_order_mark_and_crlf_line_ends_are_read_as_kustomize_reads_them() {
    let a = Agent::new("v1.29.0");
    for file in ["kustomization.yaml", "statefulset.yaml", "config.env"] {
        let path = a.project.path(&format!("{}/{file}", a.dir));
        let text = std::fs::read_to_string(&path).unwrap();
        let crlf = format!("\u{feff}{}", text.replace('\n', "\r\n"));
        std::fs::write(&path, crlf).unwrap();
    }
    let (code, report) = a.project.check_json();
    assert_eq!(code, 0, "{report:#}");
}

/// Every container of a pod runs as non-root, init containers too, and a
/// container's own `runAsNonRoot: false` wins over the pod's `true`.
#[test]
fn run_as_non_root_holds_for_every_container() {
    let init = "      initContainers:\n        - name: prepare\n          image: busybox\n          command: [sh, -c, \"mkdir -p /tmp/x\"]\n";
    // The pod's setting moved to the agent container only.
    let a = Agent::new("v1.29.0");
    a.edit("statefulset.yaml", "        runAsNonRoot: true\n", "")
        .edit(
            "statefulset.yaml",
            "            allowPrivilegeEscalation: false",
            "            runAsNonRoot: true\n            allowPrivilegeEscalation: false",
        )
        .edit(
            "statefulset.yaml",
            "      containers:\n",
            &format!("{init}      containers:\n"),
        );
    let f = a.finding_at(
        "run-as-non-root-missing",
        "statefulset.yaml",
        a.line_of("statefulset.yaml", "securityContext:"),
    );
    assert!(message(&f).contains("`prepare`"), "{f:#}");

    // The pod says true, a container says false.
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "            allowPrivilegeEscalation: false",
        "            runAsNonRoot: false\n            allowPrivilegeEscalation: false",
    );
    let f = a.finding_at(
        "run-as-non-root-missing",
        "statefulset.yaml",
        a.line_of("statefulset.yaml", "runAsNonRoot: false"),
    );
    assert!(message(&f).contains("`agent`"), "{f:#}");
}

/// A credential of the image given a value is published whichever
/// container carries it: an init container of the image, or of another.
#[test]
fn a_credential_in_any_container_is_in_the_base() {
    for (image, command) in [
        ("whystack-agent", "[whystack-health, live]"),
        ("busybox", "[sh, -c, \"true\"]"),
    ] {
        let a = Agent::new("v1.29.0");
        a.edit(
            "statefulset.yaml",
            "      containers:\n",
            &format!("      initContainers:\n        - name: enroll\n          image: {image}\n          command: {command}\n          env:\n            - name: RUNNER_BOOTSTRAP_TOKEN\n              value: bt9f8a7b6c5d4e3f2a1b0c\n      containers:\n"),
        );
        a.finding_at(
            "secret-in-base",
            "statefulset.yaml",
            a.line_of("statefulset.yaml", "name: RUNNER_BOOTSTRAP_TOKEN"),
        );
    }
}

/// A generic ephemeral volume's claim template is a volume claim: it must
/// not name a StorageClass, and it needs access modes and a size.
#[test]
fn an_ephemeral_volume_is_a_volume_claim() {
    let ephemeral = |spec: &str| {
        format!("        - name: tmp\n          ephemeral:\n            volumeClaimTemplate:\n              spec:\n{spec}")
    };
    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "        - name: tmp\n          emptyDir: {}\n",
        &ephemeral("                accessModes: [ReadWriteOnce]\n                storageClassName: fast-ssd\n                resources:\n                  requests:\n                    storage: 1Gi\n"),
    );
    let f = a.finding_at(
        "storage-class-set",
        "statefulset.yaml",
        a.line_of("statefulset.yaml", "storageClassName: fast-ssd"),
    );
    assert!(message(&f).contains("`tmp`"), "{f:#}");

    let a = Agent::new("v1.29.0");
    a.edit(
        "statefulset.yaml",
        "        - name: tmp\n          emptyDir: {}\n",
        &ephemeral("                resources: {}\n"),
    );
    let found = a.findings("manifest-required-field-missing");
    let messages: Vec<_> = found.iter().map(message).collect();
    assert!(
        messages.iter().any(|m| m.contains("access mode"))
            && messages.iter().any(|m| m.contains("storage request")),
        "{messages:#?}"
    );
}

/// A wrapper (`env`, `timeout`, `tini`, …) runs the command after its own
/// options: that command is checked like the container's own, and an
/// agent started through one is still the agent.
#[test]
fn commands_behind_a_wrapper_are_checked() {
    let with_env = |a: &Agent| {
        let path = a.project.path("image-releases.yaml");
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.replacen(
            "commands:\n",
            "commands:\n  - name: env\n    versions: \"*\"\n    description: coreutils env.\n    args: any\n",
            1,
        );
        std::fs::write(path, text).unwrap();
    };
    let a = Agent::new("v1.29.0");
    with_env(&a);
    a.edit(
        "statefulset.yaml",
        "command: [whystack-health, live]",
        "command: [env, -u, HOME, whystack-health, ready]",
    );
    let line = a.line_of("statefulset.yaml", "command: [env");
    a.finding_at("liveness-uses-readiness", "statefulset.yaml", line);

    let a = Agent::new("v1.29.0");
    with_env(&a);
    a.edit(
        "statefulset.yaml",
        "command: [whystack-health, live]",
        "command: [/usr/bin/env, sh, -c, \"whystack-healthz live\"]",
    );
    let line = a.line_of("statefulset.yaml", "whystack-healthz");
    a.finding_at("probe-command-missing", "statefulset.yaml", line);

    // The agent started through env is the agent: its grace period is
    // held to the drain timeout.
    let a = Agent::new("v1.29.0");
    with_env(&a);
    a.edit(
        "statefulset.yaml",
        "          image: whystack-agent\n",
        "          image: whystack-agent\n          command: [env, node, apps/runner/dist/main.js]\n",
    )
    .edit(
        "statefulset.yaml",
        "terminationGracePeriodSeconds: 150",
        "terminationGracePeriodSeconds: 30",
    );
    a.findings("termination-grace-too-short");
}
