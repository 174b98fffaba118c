//! The docs against the bases and the image data: variables, YAML
//! examples, environment keys, the release a page documents, translations.

use crate::support::*;

/// A project with the repository's site.yaml, image data and bases, and
/// one Spanish page with `body` (after its front matter `front`).
fn agent_docs(front: &str, body: &str) -> Project {
    let p = Project::empty();
    for f in [
        "site.yaml",
        "image-releases.yaml",
        "bases/v1.29.0",
        "bases/v1.30.0",
    ] {
        p.copy_from_repo(f, f);
    }
    p.write(
        "content/es/index.md",
        &format!("---\ntitle: Inicio\n{front}---\n{body}"),
    );
    for lang in ["pt", "en"] {
        p.write(
            &format!("content/{lang}/index.md"),
            "---\ntitle: Home\n---\n",
        );
    }
    p
}

fn only(p: &Project, rule: &str) -> serde_json::Value {
    let (code, report) = p.check_json();
    let found: Vec<_> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .cloned()
        .collect();
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(code, 1, "{report:#}");
    found[0].clone()
}

#[test]
fn variables_follow_the_release() {
    let p = agent_docs(
        "",
        "```sh\nVERSION={{ latest }}\ndocker pull {{ image.name }}:{{ image.tag }} # uid {{ image.uid }}\n```\n\nDrain: {{ env.RUNNER_DRAIN_TIMEOUT_MS }} ms. All: {{ versions }}.\n",
    );
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Code blocks are highlighted: compare the text, without the markup.
    let html = text(&std::fs::read_to_string(p.out().join("es/index.html")).unwrap());
    assert!(html.contains("VERSION=1.30.0"), "{html}");
    assert!(
        html.contains("docker pull whystack-agent:1.30.0 # uid 1000"),
        "{html}"
    );
    assert!(
        html.contains("Drain: 120000 ms. All: 1.29.0, 1.30.0."),
        "{html}"
    );

    // A page that documents an older base gets that release's facts.
    let p = agent_docs(
        "base: v1.29.0\n",
        "Tag {{ image.tag }}, newest {{ latest }}.\n",
    );
    assert_eq!(p.build().status.code(), Some(0));
    let html = std::fs::read_to_string(p.out().join("es/index.html")).unwrap();
    assert!(html.contains("Tag 1.29.0, newest 1.30.0."), "{html}");
}

#[test]
fn unknown_variable_has_file_and_line() {
    let p = agent_docs("", "Intro.\n\n```sh\nVERSION={{ lastest }}\n```\n");
    let f = only(&p, "doc-variable-unknown");
    assert_eq!(f["location"]["file"], "content/es/index.md");
    assert_eq!(f["location"]["line"], 7);
    assert_eq!(f["location"]["column"], 9);
    assert!(f["remedy"].as_str().unwrap().contains("latest"));
}

#[test]
fn yaml_examples_must_parse_and_errors_point_at_the_doc_line() {
    let p = agent_docs("", "Intro.\n\n```yaml\na: 1\nb: [2\nc: 3\n```\n");
    let f = only(&p, "doc-yaml-invalid");
    assert_eq!(f["location"]["file"], "content/es/index.md");
    let line = f["location"]["line"].as_u64().unwrap();
    assert!((7..=9).contains(&line), "{f:#}");
}

#[test]
fn env_keys_in_prose_must_be_read_by_the_documented_release() {
    let p = agent_docs("", "Set `RUNNER_SECRET_STORE_MOD=aws` first.\n");
    let f = only(&p, "doc-env-key-unknown");
    assert_eq!(f["location"]["line"], 4);
    assert_eq!(f["location"]["column"], 6);
    assert!(f["message"]
        .as_str()
        .unwrap()
        .contains("RUNNER_SECRET_STORE_MODE"));

    // RUNNER_LOG_FORMAT exists from 1.30.0: fine on the latest, not on
    // 1.29.0 (named as its folder is, or as its tag).
    let p = agent_docs("", "`RUNNER_LOG_FORMAT=json`\n");
    assert_eq!(p.check_json().0, 0);
    for base in ["base: v1.29.0\n", "base: 1.29.0\n"] {
        let p = agent_docs(base, "`RUNNER_LOG_FORMAT=json`\n");
        let f = only(&p, "doc-env-key-unknown");
        assert!(f["message"].as_str().unwrap().contains(">=1.30.0"), "{f:#}");
    }
    let p = agent_docs("base: latest\n", "Text.\n");
    let (code, report) = p.check_json();
    assert_eq!(code, 2, "{report:#}");
    let f = &findings_of(&report, "front-matter-invalid")[0];
    assert!(
        f["remedy"].as_str().unwrap().contains("base: v1.30.0"),
        "{f:#}"
    );

    // The front matter's title and description are shown too.
    let p = agent_docs("description: Tune RUNNER_SECRET_STORE_MOD now\n", "Body.\n");
    let f = only(&p, "doc-env-key-unknown");
    assert_eq!(
        (&f["location"]["line"], &f["location"]["column"]),
        (&serde_json::json!(3), &serde_json::json!(19)),
        "{f:#}"
    );
    p.write(
        "content/es/index.md",
        "---\ntitle: Afinar RUNNER_SECRET_STORE_MOD\n---\nBody.\n",
    );
    let f = only(&p, "doc-env-key-unknown");
    assert_eq!(f["location"]["line"], 2, "{f:#}");

    // In a variable, the key is the variable's finding alone.
    let p = agent_docs("", "Drain: {{ env.RUNNER_DRAIN_TIMEOUT_MX }} ms.\n");
    let (_, report) = p.check_json();
    assert_eq!(
        findings_of(&report, "doc-variable-unknown").len(),
        1,
        "{report:#}"
    );
    assert!(
        findings_of(&report, "doc-env-key-unknown").is_empty(),
        "{report:#}"
    );
}

/// A key is the whole word; a pattern, a comment no reader sees and the
/// CI system's own `RUNNER_` variables are no keys of the image.
#[test]
fn env_key_mentions_are_whole_words_a_reader_sees() {
    let p = agent_docs("", "See `RUNNER_DRAIN_TIMEOUT_MSx`.\n");
    let f = only(&p, "doc-env-key-unknown");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("`RUNNER_DRAIN_TIMEOUT_MSx`"),
        "{f:#}"
    );
    for body in [
        "The `RUNNER_SECRET_STORE_*` keys choose the store.\n",
        "<!-- TODO: document RUNNER_NEW_KEY\nand RUNNER_OTHER -->\nText.\n",
        "```sh\ncd \"$RUNNER_TEMP\" && echo \"$RUNNER_OS\"\n```\n",
        // The shell's brace form: each key it expands to is read.
        "The `RUNNER_LEARNED_{FLUSH_INTERVAL_MS,STORE_PATH}` keys.\n",
    ] {
        let p = agent_docs("", body);
        let (code, report) = p.check_json();
        assert_eq!(code, 0, "{body}: {report:#}");
    }
    // Markdown's escaped underscores are the key's, found at its column.
    let p = agent_docs("", "Set RUNNER\\_HEALTH\\_DIR and RUNNER\\_HEALT\\_DIR.\n");
    let f = only(&p, "doc-env-key-unknown");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("`RUNNER_HEALT_DIR`"),
        "{f:#}"
    );
    assert_eq!(f["location"]["column"], 29, "{f:#}");
    // One it expands to that no release reads is named whole.
    let p = agent_docs(
        "",
        "The `RUNNER_LEARNED_{FLUSH_INTERVAL_MS,STORE_PAHT}` keys.\n",
    );
    let f = only(&p, "doc-env-key-unknown");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("`RUNNER_LEARNED_STORE_PAHT`"),
        "{f:#}"
    );
    // Several on one line, after letters of two bytes: each at its column.
    let p = agent_docs("", "Ça `RUNNER_NOPE_A` é `RUNNER_NOPE_B`.\n");
    let (_, report) = p.check_json();
    let columns: Vec<u64> = findings_of(&report, "doc-env-key-unknown")
        .iter()
        .map(|f| f["location"]["column"].as_u64().unwrap())
        .collect();
    assert_eq!(columns, [5, 23], "{report:#}");
    // A pattern no key matches is still reported.
    let p = agent_docs("", "The `RUNNER_NOTHING_*` keys.\n");
    only(&p, "doc-env-key-unknown");
}

#[test]
fn a_page_documents_a_published_base() {
    let p = agent_docs("base: v1.28.0\n", "Old.\n");
    let f = only(&p, "doc-base-unknown");
    assert_eq!(f["location"]["line"], 3);
}

#[test]
fn untranslated_pages_fall_back_with_a_notice() {
    let p = agent_docs("", "# Hola\n");
    p.write(
        "content/es/extra.md",
        "---\ntitle: Extra\n---\n# Extra\n\n[inicio](index.md#hola)\n",
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 0, "{report:#}");
    let warnings: Vec<_> = report["findings"].as_array().unwrap().iter().collect();
    assert_eq!(warnings.len(), 2, "one per missing language: {report:#}");
    assert!(warnings
        .iter()
        .all(|w| w["rule"] == "translation-missing" && w["severity"] == "warning"));

    assert_eq!(p.build().status.code(), Some(0));
    let html = std::fs::read_to_string(p.out().join("pt/extra/index.html")).unwrap();
    assert!(html.contains("<html lang=\"pt\">"));
    assert!(html.contains("class=\"notice\""));
    assert!(html.contains("<article lang=\"es\">"));
    assert!(
        html.contains("href=\"/es/#hola\""),
        "links keep their original target: {html}"
    );

    let o = run(&["check", "--coverage", "--root", &p.root().to_string_lossy()]);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("pt           1/2      extra.md"), "{table}");
    // The same table in the JSON report, beside the findings.
    let o = run(&[
        "check",
        "--coverage",
        "--format",
        "json",
        "--root",
        &p.root().to_string_lossy(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let pt = v["coverage"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["language"] == "pt")
        .cloned()
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(
        pt,
        serde_json::json!({"language": "pt", "translated": 1, "total": 2, "missing": ["extra.md"]})
    );
    assert_eq!(v["warnings"], 2, "{v:#}");

    let site = std::fs::read_to_string(p.path("site.yaml")).unwrap();
    p.write("site.yaml", &format!("{site}translations: required\n"));
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["findings"][0]["severity"], "error");
}

/// A page whose overlay is `kustomization` plus the patch `patch` (as
/// `file=patch.yaml`, when given).
fn overlay_page(kustomization: &str, patch: Option<&str>) -> Project {
    let mut body = String::from("Intro.\n\n");
    if let Some(p) = patch {
        body.push_str(&format!("```yaml file=patch.yaml\n{p}```\n\n"));
    }
    body.push_str(&format!(
        "```yaml file=kustomization.yaml\n{kustomization}```\n"
    ));
    agent_docs("", &body)
}

const OVERLAY: &str = "apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - base
images:
  - name: whystack-agent
    newName: registry.example.com/whystack-agent
    digest: sha256:0000000000000000000000000000000000000000000000000000000000000000
";

const PATCH_HEAD: &str = "apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: whystack-agent
spec:
  template:
    spec:
";

/// The line in the page of the first line of `text` holding `needle`.
fn page_line(p: &Project, needle: &str) -> u64 {
    let text = std::fs::read_to_string(p.path("content/es/index.md")).unwrap();
    text.lines().position(|l| l.contains(needle)).unwrap() as u64 + 1
}

#[test]
fn a_correct_overlay_passes() {
    let patch = format!(
        "{PATCH_HEAD}      containers:\n        - name: agent\n          env:\n            - name: AWS_REGION\n              value: us-east-1\n"
    );
    let k = format!(
        "{OVERLAY}patches:\n  - path: patch.yaml\nconfigMapGenerator:\n  - name: whystack-agent-config\n    behavior: merge\n    literals:\n      - RUNNER_ATTESTATION_MODE=aws-sts\n"
    );
    let p = overlay_page(&k, Some(&patch));
    let (code, report) = p.check_json();
    assert_eq!(code, 0, "{report:#}");
}

/// An unknown variable is the one finding: the examples without it are
/// still read with the known variables replaced, and one holding it is
/// not taken for invalid YAML.
#[test]
fn an_unknown_variable_leaves_the_other_examples_alone() {
    let k = OVERLAY.replace(
        "    digest: sha256:0000000000000000000000000000000000000000000000000000000000000000\n",
        "    newTag: {{ version }}\n",
    );
    let body = format!(
        "Download {{{{ lastest }}}}.\n\n```yaml file=kustomization.yaml\n{k}```\n\n```yaml\ntag: {{{{ lastest }}}}\n```\n"
    );
    let p = agent_docs("", &body);
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    let rules: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        ["doc-variable-unknown", "doc-variable-unknown"],
        "{report:#}"
    );
    // The overlay is still checked when it holds no unknown variable.
    let body = format!(
        "Download {{{{ lastest }}}}.\n\n```yaml file=kustomization.yaml\n{}```\n",
        k.replace("{{ version }}", "1.28.0")
    );
    let p = agent_docs("", &body);
    only(&p, "image-pin-mismatch");
}

/// Alternatives in tabs are overlays of their own, and `file=` on a
/// shell block only names the file to save.
#[test]
fn overlays_in_tabs_and_files_that_are_no_overlay() {
    let bad = OVERLAY.replace("name: whystack-agent\n", "name: whystack-agnet\n");
    let body = format!(
        "Intro.\n\n```yaml file=kustomization.yaml tab=GKE\n{OVERLAY}```\n\n```yaml file=kustomization.yaml tab=EKS\n{bad}```\n"
    );
    let p = agent_docs("", &body);
    let f = only(&p, "doc-image-unknown");
    assert_eq!(
        f["location"]["line"],
        page_line(&p, "whystack-agnet"),
        "{f:#}"
    );
    let p = agent_docs("", "Save it:\n\n```sh file=install.sh\ncurl -fsSL x\n```\n");
    let (code, report) = p.check_json();
    assert_eq!(code, 0, "{report:#}");
}

/// A page's example that Kustomize cannot read is the page's finding
/// (exit 1), once: not an input error of the project.
#[test]
fn an_overlay_kustomize_cannot_read_is_the_pages_finding() {
    let body = format!(
        "Intro.\n\n```yaml file=x.yaml\nmetadata:\n  name: [x\n```\n\n```yaml file=kustomization.yaml\n{OVERLAY}  - x.yaml\n```\n"
    );
    let body = body.replace(
        "resources:\n  - base\n",
        "resources:\n  - base\n  - x.yaml\n",
    );
    let p = agent_docs("", &body.replace("  - x.yaml\n```", "```"));
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    let rules: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["doc-yaml-invalid"], "{report:#}");
    let p = agent_docs(
        "",
        &format!("Intro.\n\n```yaml file=kustomization.yaml\n{OVERLAY}lllabels: {{}}\n```\n"),
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    let f = only(&p, "doc-overlay-invalid");
    assert_eq!(f["location"]["line"], page_line(&p, "lllabels"), "{f:#}");
}

/// `file=` names the file as a reader saves it: quoted, with `./`, or
/// under any name Kustomize reads as the kustomization.
#[test]
fn overlay_file_names_as_kustomize_reads_them() {
    let patch = format!(
        "{PATCH_HEAD}      containers:\n        - name: agnet\n          image: whystack-agent\n"
    );
    for (kustomization, patch_file) in [
        ("file='kustomization.yaml'", "file=patch.yaml"),
        ("file=./kustomization.yaml", "file=./patch.yaml"),
        ("file=kustomization.yml", "file=\"patch.yaml\""),
        ("file=Kustomization", "file=patch.yaml"),
    ] {
        let body = format!(
            "Intro.\n\n```yaml {patch_file}\n{patch}```\n\n```yaml {kustomization}\n{OVERLAY}patches:\n  - path: ./patch.yaml\n```\n"
        );
        let p = agent_docs("", &body);
        // Built and checked: the misspelled container is found.
        let f = only(&p, "doc-patch-unknown-name");
        assert_eq!(
            f["location"]["line"],
            page_line(&p, "name: agnet"),
            "{kustomization}"
        );
    }
}

#[test]
fn a_patch_for_a_misspelled_container() {
    let patch = format!("{PATCH_HEAD}      containers:\n        - name: agnet\n          env:\n            - name: AWS_REGION\n              value: us-east-1\n");
    let p = overlay_page(
        &format!("{OVERLAY}patches:\n  - path: patch.yaml\n"),
        Some(&patch),
    );
    let f = only(&p, "doc-patch-unknown-name");
    assert_eq!(f["location"]["file"], "content/es/index.md");
    assert_eq!(f["location"]["line"], page_line(&p, "name: agnet"));
    assert!(
        f["remedy"]
            .as_str()
            .unwrap()
            .contains("did you mean `agent`"),
        "{f:#}"
    );
}

#[test]
fn a_patch_for_a_resource_the_base_lacks() {
    let patch = PATCH_HEAD.replace("name: whystack-agent", "name: whystack-agnet")
        + "      terminationGracePeriodSeconds: 200\n";
    let p = overlay_page(
        &format!("{OVERLAY}patches:\n  - path: patch.yaml\n"),
        Some(&patch),
    );
    // Kustomize refuses it; the finding points at the patch on the page.
    let f = only(&p, "kustomize-patch-no-target");
    assert_eq!(f["location"]["file"], "content/es/index.md");
    let patch_at = page_line(&p, "apiVersion: apps/v1");
    let line = f["location"]["line"].as_u64().unwrap();
    assert!(
        (patch_at..=page_line(&p, "name: whystack-agnet")).contains(&line),
        "{f:#}"
    );
    assert!(
        f["remedy"].as_str().unwrap().contains("whystack-agent"),
        "{f:#}"
    );
}

#[test]
fn a_patch_with_a_field_the_pod_spec_lacks() {
    let patch =
        format!("{PATCH_HEAD}      containers:\n        - name: agent\n          llamas: true\n");
    let p = overlay_page(
        &format!("{OVERLAY}patches:\n  - path: patch.yaml\n"),
        Some(&patch),
    );
    let f = only(&p, "manifest-unknown-field");
    assert_eq!(f["location"]["file"], "content/es/index.md");
    assert_eq!(f["location"]["line"], page_line(&p, "llamas"));
    assert!(f["message"]
        .as_str()
        .unwrap()
        .contains("containers[agent].llamas"));
}

/// A misspelled `resources:` is named as such, where it is written.
#[test]
fn a_misspelled_resources_field_is_named() {
    let k = OVERLAY.replace("resources:\n", "resourcez:\n");
    let p = overlay_page(&k, None);
    let f = only(&p, "doc-overlay-invalid");
    assert_eq!(f["location"]["line"], page_line(&p, "resourcez:"));
    assert!(
        f["remedy"]
            .as_str()
            .unwrap()
            .contains("did you mean `resources`"),
        "{f:#}"
    );
}

#[test]
fn a_patch_the_page_does_not_show() {
    let p = overlay_page(
        &format!("{OVERLAY}patches:\n  - path: patch-missing.yaml\n"),
        None,
    );
    let f = only(&p, "kustomize-file-missing");
    assert_eq!(f["location"]["file"], "content/es/index.md");
    assert_eq!(f["location"]["line"], page_line(&p, "patch-missing.yaml"));
}

#[test]
fn generator_merges_follow_the_image_rules() {
    let gen = |body: &str| {
        format!("{OVERLAY}configMapGenerator:\n  - name: whystack-agent-config\n    behavior: merge\n    literals:\n{body}")
    };

    let p = overlay_page(&gen("      - RUNNER_ATTESTATION_MODE=aws-sts\n"), None);
    let f = only(&p, "env-requirement-missing");
    assert_eq!(f["location"]["line"], page_line(&p, "=aws-sts"));
    assert!(f["message"].as_str().unwrap().contains("AWS_REGION"));

    let p = overlay_page(
        &gen("      - RUNNER_ATTESTATION_MODE=aws-sts\n      - AWS_REGION=us-east-1\n"),
        None,
    );
    assert_eq!(p.check_json().0, 0);

    let p = overlay_page(&gen("      - RUNNER_ATTESTATION_MODE=eks-oidc\n"), None);
    only(&p, "env-value-not-implemented");

    let p = overlay_page(&gen("      - RUNNER_SECRET_STORE_MOD=aws\n"), None);
    let f = only(&p, "env-key-unknown");
    assert_eq!(
        f["location"]["line"],
        page_line(&p, "RUNNER_SECRET_STORE_MOD=")
    );

    // The drain grows past the grace period: reported at the overlay.
    let p = overlay_page(&gen("      - RUNNER_DRAIN_TIMEOUT_MS=300000\n"), None);
    let f = only(&p, "termination-grace-too-short");
    assert_eq!(f["location"]["file"], "content/es/index.md");
}

#[test]
fn a_merge_into_a_generator_the_base_lacks() {
    let k = format!("{OVERLAY}configMapGenerator:\n  - name: whystack-config\n    behavior: merge\n    literals:\n      - RUNNER_LOG_FORMAT=text\n");
    let p = overlay_page(&k, None);
    let f = only(&p, "kustomize-generator-base-missing");
    assert_eq!(f["location"]["file"], "content/es/index.md");
    assert_eq!(
        f["location"]["line"],
        page_line(&p, "name: whystack-config")
    );
}

#[test]
fn images_must_name_the_image_of_the_base() {
    let k = OVERLAY.replace("  - name: whystack-agent\n", "  - name: whystack\n");
    let p = overlay_page(&k, None);
    let f = only(&p, "doc-image-unknown");
    assert_eq!(f["location"]["line"], page_line(&p, "- name: whystack"));
}

/// A container the patch adds whole is a mistake when it runs the image
/// of a base container whose name it nearly has: a typo that makes a
/// second agent. A sidecar of another image is meant.
#[test]
fn a_misspelled_container_with_an_image_is_still_a_misspelling() {
    let k = format!("{OVERLAY}patches:\n  - path: patch.yaml\n");
    let patch = |name: &str, image: &str| {
        format!("{PATCH_HEAD}      containers:\n        - name: {name}\n          image: {image}\n")
    };
    let p = overlay_page(
        &k,
        Some(&patch(
            "agnet",
            "registry.example.com/whystack-agent:1.30.0",
        )),
    );
    let f = only(&p, "doc-patch-unknown-name");
    assert_eq!(f["location"]["line"], page_line(&p, "name: agnet"));
    assert!(f["message"]
        .as_str()
        .unwrap()
        .contains("a second container"));
    let p = overlay_page(&k, Some(&patch("agent2", "envoyproxy/envoy:v1.30")));
    let (_, report) = p.check_json();
    assert!(
        findings_of(&report, "doc-patch-unknown-name").is_empty(),
        "{report:#}"
    );
}

/// A YAML example outside any overlay that shows an object of the base
/// (its kind and name) is read as the patch a reader would make of it:
/// its containers and volumes must be the base's, unless it adds a whole
/// one. Objects the base does not have are left alone.
#[test]
fn an_excerpt_of_a_base_object_names_what_the_base_has() {
    let page = |containers: &str, name: &str| {
        let head = PATCH_HEAD.replace("name: whystack-agent", name);
        agent_docs(
            "",
            &format!("Intro.\n\n```yaml\n{head}      containers:\n{containers}```\n"),
        )
    };
    let typo = "        - name: agnet\n          env:\n            - name: RUNNER_LOG_FORMAT\n              value: text\n";
    let p = page(typo, "name: whystack-agent");
    let f = only(&p, "doc-patch-unknown-name");
    assert_eq!(f["location"]["line"], page_line(&p, "name: agnet"));
    assert!(
        f["message"].as_str().unwrap().contains("the example shows"),
        "{f:#}"
    );
    let passes = |p: &Project| {
        let (_, report) = p.check_json();
        assert!(
            findings_of(&report, "doc-patch-unknown-name").is_empty(),
            "{report:#}"
        );
    };
    // The base's own container, a sidecar added whole, another object.
    passes(&page(
        &typo.replace("agnet", "agent"),
        "name: whystack-agent",
    ));
    passes(&page(
        "        - name: proxy\n          image: envoyproxy/envoy:v1.30\n",
        "name: whystack-agent",
    ));
    passes(&page(typo, "name: another-app"));
}

/// An overlay whose patch breaks the Pod Security level of the base's
/// namespace is reported at the page: admission would refuse its pods.
#[test]
fn an_overlay_that_admission_refuses_is_reported_at_the_page() {
    let patch = format!(
        "{PATCH_HEAD}      containers:\n        - name: agent\n          securityContext:\n            capabilities:\n              add: [NET_ADMIN]\n"
    );
    let k = format!("{OVERLAY}patches:\n  - path: patch.yaml\n");
    let p = overlay_page(&k, Some(&patch));
    let f = only(&p, "pod-security-refused");
    assert!(
        f["message"].as_str().unwrap().contains("NET_ADMIN"),
        "{f:#}"
    );
    assert_eq!(f["location"]["file"], "content/es/index.md");
}

/// A page pins its own release where a reader copies it, and only
/// releases anywhere: a table of releases or a link to an older base is no
/// mistake, a command that downloads another release's base is.
#[test]
fn pinned_versions_are_the_pages_release() {
    let findings = |body: &str| -> Vec<(String, u64, u64)> {
        let p = agent_docs("", body);
        let (_, report) = p.check_json();
        findings_of(&report, "doc-version-mismatch")
            .into_iter()
            .map(|f| {
                (
                    f["message"].as_str().unwrap().to_string(),
                    f["location"]["line"].as_u64().unwrap(),
                    f["location"]["column"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let ours = "Intro.\n\n```sh\ncurl -fsSL https://docs.example.com/kubernetes/v1.30.0/base/files.txt\n```\n\n| 1.29.0 | `whystack-agent:1.29.0` |\n| --- | --- |\n\nThe [older base](/kubernetes/v1.29.0/base/files.txt).\n";
    assert_eq!(findings(ours), []);
    let other = "Intro.\n\n- Download:\n\n   ```sh\n   BASE=/kubernetes/v1.30.0/base\n   OLD=/kubernetes/v1.29.0/base\n   ```\n";
    let found = findings(other);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].0.contains("gets release 1.29.0"), "{found:?}");
    let page = std::fs::read_to_string(agent_docs("", other).path("content/es/index.md")).unwrap();
    let line = page.lines().position(|l| l.contains("OLD=")).unwrap() as u64 + 1;
    assert_eq!((found[0].1, found[0].2), (line, 8));
    let none = findings("Use `whystack-agent:1.3.0` from now on.\n");
    assert_eq!(none.len(), 1, "{none:?}");
    assert!(none[0].0.contains("1.3.0 is no release"), "{none:?}");
    // Another site's path, a variant of the page's release, and a pin
    // that ends a sentence.
    let fine = "Intro.\n\n```sh\ncurl -O https://raw.githubusercontent.com/kubernetes/kubernetes/v1.2.3/x.yaml\ndocker pull whystack-agent:1.30.0-debug\n```\n\nRun whystack-agent:1.30.0.\n";
    assert_eq!(findings(fine), []);
    let ended = findings("Run whystack-agent:1.2.3.\n");
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert!(
        ended[0].0.contains("pins `whystack-agent:1.2.3`"),
        "{ended:?}"
    );
    // A tag with a `v` is no tag of the image; a base folder behind a
    // variable that holds the site's URL is the site's; a base folder is
    // a release's alone, with no pre-release.
    let code = "Intro.\n\n```sh\ndocker pull r.example.com/whystack-agent:v1.30.0\nBASE=\"$SITE/kubernetes/v1.29.0/base\"\nNEXT=\"${SITE}/kubernetes/v1.30.0-rc.1/base\"\n```\n\n```yaml\nimage: whystack-agent:v{{ version }}\n```\n";
    let found = findings(code);
    let says: Vec<&str> = found.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(found.len(), 4, "{found:?}");
    assert!(
        says[0].contains(":v1.30.0`: the image's tags have no `v`"),
        "{says:?}"
    );
    assert!(says[1].contains("gets release 1.29.0"), "{says:?}");
    assert!(says[2].contains("1.30.0-rc.1 is no release"), "{says:?}");
    assert!(says[3].contains("the image's tags have no `v`"), "{says:?}");
}

/// A link's path is read percent-decoded, as a server reads it.
#[test]
fn a_percent_encoded_link_resolves_as_a_server_reads_it() {
    let body = "[a](/kubernetes/v1.30.0/base/files%2Etxt) [b](/e%73/) [c](/es/nope%20x/)\n";
    let p = agent_docs("", body);
    let (_, report) = p.check_json();
    let found: Vec<&str> = findings_of(&report, "link-broken")
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(found.len(), 1, "{report:#}");
    assert!(found[0].contains("/es/nope x/"), "{found:?}");
}

/// The site's own URLs in code a reader copies must be there once
/// published, as a link's target must; one built from a shell variable
/// is the reader's to fill.
#[test]
fn the_sites_own_urls_in_code_blocks_resolve() {
    let body = "Intro.\n\n```sh\ncurl -fsSLO https://docs.whystack.ai/kubernetes/v{{ version }}/base/files.txt\nBASE=\"https://docs.whystack.ai/kubernetes/v${VERSION#v}/base\"\nopen https://docs.whystack.ai/es/ https://example.com/nope\nkubectl apply -k https://docs.whystack.ai/kubernetes/v1.30/base/\ncurl -O https://docs.whystack.ai/kubernetes/1.30.0/base/files.txt.\n   curl -O https://docs.whystack.ai/kubernetes/v{{ version }}/base/nope.yaml\n```\n";
    let p = agent_docs("", body);
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    let found: Vec<(String, u64, u64)> = findings_of(&report, "link-broken")
        .into_iter()
        .map(|f| {
            (
                f["message"].as_str().unwrap().to_string(),
                f["location"]["line"].as_u64().unwrap(),
                f["location"]["column"].as_u64().unwrap(),
            )
        })
        .collect();
    let line = page_line(&p, "kubectl apply -k https");
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!((found[0].1, found[0].2), (line, 18), "{found:?}");
    assert!(
        found[0].0.contains("`/kubernetes/v1.30/base/`"),
        "{found:?}"
    );
    assert_eq!((found[1].1, found[1].2), (line + 1, 9), "{found:?}");
    assert!(
        found[1].0.contains("/kubernetes/1.30.0/base/files.txt`,"),
        "{found:?}"
    );
    assert_eq!((found[2].1, found[2].2), (line + 2, 12), "{found:?}");
    assert!(found[2].0.contains("v1.30.0/base/nope.yaml"), "{found:?}");
}

/// Under a base URL with a path (`https://docs.whystack.ai/docs`), the
/// site's full URLs in code must carry it: one without it, also when a
/// shell variable completes it, points outside the site; the base URL
/// alone is the site's root.
#[test]
fn the_sites_own_urls_in_code_blocks_carry_the_base_path() {
    let body = "Intro.\n\n```sh\nSITE=\"https://docs.whystack.ai/docs\"\nBASE=\"https://docs.whystack.ai/docs/kubernetes/v${VERSION#v}/base\"\ncurl -O https://docs.whystack.ai/docs/kubernetes/v{{ version }}/base/files.txt\nBASE=\"https://docs.whystack.ai/kubernetes/v${VERSION#v}/base\"\ncurl -O https://docs.whystack.ai/kubernetes/v{{ version }}/base/files.txt\nSITE=\"https://docs.whystack.ai\"\n```\n";
    let p = agent_docs("", body);
    let site = std::fs::read_to_string(p.path("site.yaml")).unwrap();
    p.write(
        "site.yaml",
        &site.replacen(
            "base_url: https://docs.whystack.ai",
            "base_url: https://docs.whystack.ai/docs",
            1,
        ),
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    let lines: Vec<u64> = findings_of(&report, "link-broken")
        .into_iter()
        .map(|f| f["location"]["line"].as_u64().unwrap())
        .collect();
    let first = page_line(&p, "BASE=\"https://docs.whystack.ai/kubernetes");
    assert_eq!(lines, [first, first + 1, first + 2], "{report:#}");
}

/// On the docs of a release with a base, a whole object a page shows
/// that the base lacks is checked as a manifest of that release, and an
/// excerpt of one of the base's objects as the change it makes to it:
/// what the excerpt writes is held to every rule, what it leaves out is
/// the base's.
#[test]
fn manifests_and_excerpts_on_a_page_with_a_base_are_checked() {
    let secret = "```yaml\napiVersion: v1\nkind: Secret\nmetadata: {name: whystack-agent-env, namespace: whystack-agent}\nstrinData:\n  RUNNER_BOOTSTRAP_TOKEN: <token>\n```\n";
    let excerpt = |grace: u32, check: &str| {
        format!("```yaml\napiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: whystack-agent\n  namespace: whystack-agent\nspec:\n  template:\n    spec:\n      terminationGracePeriodSeconds: {grace}\n      containers:\n        - name: agent\n          livenessProbe:\n            exec:\n              command: [whystack-health, {check}]\n```\n")
    };
    let p = agent_docs("", &format!("Intro.\n\n{secret}\n{}", excerpt(30, "ready")));
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    for (rule, needle) in [
        ("manifest-unknown-field", "strinData:"),
        (
            "termination-grace-too-short",
            "terminationGracePeriodSeconds: 30",
        ),
        (
            "liveness-uses-readiness",
            "command: [whystack-health, ready]",
        ),
    ] {
        let found = findings_of(&report, rule);
        assert_eq!(found.len(), 1, "{rule}: {report:#}");
        assert_eq!(
            found[0]["location"]["line"],
            page_line(&p, needle),
            "{rule}"
        );
    }
    // An excerpt that writes what the base has is fine, whatever it
    // leaves out.
    let p = agent_docs("", &format!("Intro.\n\n{}", excerpt(150, "live")));
    let (code, report) = p.check_json();
    assert_eq!(code, 0, "{report:#}");
}

/// A translated page shows the code of its original in the default
/// language: a line dropped, a value changed or a block more is a
/// warning at the line; a translated comment or placeholder is not.
#[test]
fn a_translation_shows_the_code_of_its_original() {
    let original = "```sh\nVERSION=1.30.0   # the image tag\nTOKEN=<your-token>\ncurl -fsSLO \"$BASE/files.txt\"\nssh-keygen -Y verify -f allowed_signers -I releases@whystack.ai \\\n  -n whystack-agent/v1.30.0 -s SHA256SUMS.sig < SHA256SUMS\n```\n";
    let p = agent_docs("", &format!("Intro.\n\n{original}"));
    let translated = original
        .replace("# the image tag", "# a tag da imagem")
        .replace("<your-token>", "<seu-token>");
    p.write(
        "content/pt/index.md",
        &format!("---\ntitle: Início\n---\nIntro.\n\n{translated}"),
    );
    let dropped: String = original
        .lines()
        .filter(|l| !l.contains("ssh-keygen") && !l.contains("-n whystack-agent"))
        .map(|l| format!("{l}\n"))
        .collect();
    p.write(
        "content/en/index.md",
        &format!("---\ntitle: Home\n---\nIntro.\n\n{dropped}\n```sh\necho more\n```\n"),
    );
    let (_, report) = p.check_json();
    let found = findings_of(&report, "doc-translation-code-differs");
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(found[0]["location"]["file"], "content/en/index.md");
    assert_eq!(found[0]["severity"], "warning");
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("2 code blocks"),
        "{report:#}"
    );
    // The same count, a line dropped: found at the line that differs.
    p.write(
        "content/en/index.md",
        &format!("---\ntitle: Home\n---\nIntro.\n\n{dropped}"),
    );
    let (_, report) = p.check_json();
    let found = findings_of(&report, "doc-translation-code-differs");
    assert_eq!(found.len(), 1, "{report:#}");
    let message = found[0]["message"].as_str().unwrap();
    assert!(message.contains("no `ssh-keygen -Y verify"), "{message}");
}

/// An overlay that pins the image must pin the release its page
/// documents: a tag of another release, with a `v`, or of no release is
/// refused where the page sets it, whichever field sets it.
#[test]
fn an_overlay_pins_the_image_of_the_release_it_documents() {
    let with_tag = |tag: &str| {
        OVERLAY.replace(
            "    digest: sha256:0000000000000000000000000000000000000000000000000000000000000000\n",
            &format!("    newTag: \"{tag}\"\n"),
        )
    };
    assert_eq!(overlay_page(&with_tag("1.30.0"), None).check_json().0, 0);
    for (tag, says) in [
        ("v1.30.0", "have no `v`"),
        ("1.28.0", "another release"),
        ("9.9.9", "no release"),
    ] {
        let p = overlay_page(&with_tag(tag), None);
        let f = only(&p, "image-pin-mismatch");
        let message = f["message"].as_str().unwrap();
        assert!(message.contains(says), "{tag}: {message}");
        assert_eq!(f["location"]["file"], "content/es/index.md");
        // The remedy names the page's release, and the variable for it.
        let remedy = f["remedy"].as_str().unwrap();
        assert!(
            remedy.contains("newTag: 1.30.0") && remedy.contains("{{ version }}"),
            "{remedy}"
        );
    }
    // A patch that writes the image itself.
    let patch = format!(
        "{PATCH_HEAD}      containers:\n        - name: agent\n          image: registry.example.com/whystack-agent:1.29.0\n"
    );
    let k = format!("{OVERLAY}patches:\n  - path: patch.yaml\n");
    let p = overlay_page(&k, Some(&patch));
    let f = only(&p, "image-pin-mismatch");
    assert_eq!(f["location"]["line"], page_line(&p, "image: registry"));
}

/// A pod that refers to a ConfigMap, or a key of one, that the build does
/// not have does not start: the page's patch that does so is told where.
#[test]
fn references_to_a_missing_config_map_or_key() {
    let with_env = |env: &str| {
        let patch = format!("{PATCH_HEAD}      containers:\n        - name: agent\n{env}");
        overlay_page(
            &format!("{OVERLAY}patches:\n  - path: patch.yaml\n"),
            Some(&patch),
        )
    };
    let cases = [
        (
            "          env:\n            - name: X\n              valueFrom:\n                configMapKeyRef: {name: whystack-agent-config, key: DRAIN_TIMEOUT}\n",
            "key `DRAIN_TIMEOUT`",
        ),
        (
            "          env:\n            - name: X\n              valueFrom:\n                configMapKeyRef: {name: whystack-agent-settings, key: A}\n",
            "ConfigMap `whystack-agent-settings`",
        ),
        (
            "          envFrom:\n            - configMapRef: {name: whystack-agent-extra}\n",
            "ConfigMap `whystack-agent-extra`",
        ),
    ];
    for (env, says) in cases {
        let p = with_env(env);
        let f = only(&p, "configmap-reference-missing");
        assert!(f["message"].as_str().unwrap().contains(says), "{f:#}");
        assert_eq!(f["location"]["file"], "content/es/index.md", "{f:#}");
    }
    let p = with_env("          env:\n            - name: AWS_REGION\n              valueFrom:\n                configMapKeyRef: {name: whystack-agent-settings, key: A, optional: true}\n");
    let (code, report) = p.check_json();
    assert_eq!(code, 0, "{report:#}");
}

/// The kubectl commands a page shows look where the base puts its
/// objects, by their names.
#[test]
fn kubectl_commands_name_the_bases_namespace_objects_and_containers() {
    let block = |cmd: &str| format!("Intro.\n\n```sh\n{cmd}\n```\n");
    let findings = |cmd: &str| {
        let p = agent_docs("", &block(cmd));
        let (_, report) = p.check_json();
        findings_of(&report, "doc-command-mismatch")
            .into_iter()
            .map(|f| {
                (
                    f["severity"].as_str().unwrap().to_string(),
                    f["location"]["column"].as_u64().unwrap(),
                    f["message"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    for fine in [
        "kubectl -n whystack-agent logs whystack-agent-0 -c agent | grep x",
        "$ kubectl --namespace=whystack-agent rollout status statefulset/whystack-agent",
        "kubectl -n kube-system logs coredns-abc",
        "kubectl get nodes",
        // --follow and --previous take no value; a scaled StatefulSet's
        // pods; a namespace from a variable; a command on two lines.
        "kubectl logs -f -n whystack-agent whystack-agent-0",
        "kubectl logs -p -n whystack-agent whystack-agent-0 -c agent",
        "kubectl -n whystack-agent logs whystack-agent-2",
        "kubectl logs -n \"$NS\" whystack-agent-0",
        "kubectl logs whystack-agent-0 \\\n  -n whystack-agent -c agent",
        "kubectl -A get pods",
    ] {
        assert_eq!(findings(fine), [], "{fine}");
    }
    let got = findings("kubectl logs whystack-agent-0 -c agent");
    assert!(
        got.len() == 1 && got[0].0 == "warning" && got[0].2.contains("without a namespace"),
        "{got:?}"
    );
    let got = findings("kubectl -n whystack logs whystack-agent-0");
    assert!(
        got.len() == 1 && got[0].0 == "error" && got[0].1 == 12,
        "{got:?}"
    );
    let got = findings("kubectl -n whystack-agent logs whystack-agnet-0");
    assert!(
        got.len() == 1 && got[0].2.contains("did you mean `whystack-agent-0`"),
        "{got:?}"
    );
    let got = findings("kubectl -n whystack-agent exec whystack-agent-0 -c agnet -- true");
    assert!(
        got.len() == 1 && got[0].2.contains("did you mean `agent`"),
        "{got:?}"
    );
    let got = findings("kubectl -n whystack-agent get sts/whystack-agnet");
    assert!(
        got.len() == 1 && got[0].2.contains("`whystack-agent`"),
        "{got:?}"
    );
    // Every command of a line, behind what may come before `kubectl`,
    // and the containers of a workload's pods.
    for fine in [
        "kubectl -n=whystack-agent logs whystack-agent-0 -c=agent",
        // Another install's namespace, claims of further replicas, the
        // Secret the pods use where they run.
        "kubectl -n whystack-agent-b get pods",
        "kubectl -n whystack-agent get pvc identity-whystack-agent-3",
        "kubectl -n whystack-agent create secret generic whystack-agent-env --from-env-file=.env",
        "kubectl -n other create secret generic unrelated --from-literal=a=b",
        "kubectl -n whystack-agent get configmaps",
        "kubectl -n whystack-agent wait --for=condition=Ready pod -l app.kubernetes.io/name=whystack-agent",
        "kubectl -n whystack-agent get pods -l 'app.kubernetes.io/name in (whystack-agent)'",
        "kubectl -n whystack-agent get pods -l app.kubernetes.io/name,!debug",
        // Cleaning up what an older release made.
        "kubectl -n whystack-agent delete deployment whystack-agent",
        "kubectl -n whystack-agent delete configmap whystack-agent-config",
        // A label the StatefulSet's controller gives its pods.
        "kubectl -n whystack-agent get pods -l statefulset.kubernetes.io/pod-name=whystack-agent-0",
        // A generated ConfigMap's name is no Secret's.
        "kubectl -n whystack-agent describe secret whystack-agent-config",
        "kubectl apply -k . && kubectl apply -f https://example.com/crds.yaml",
        "kubectl -n whystack-agent scale statefulset/whystack-agent --replicas=1",
        "kubectl -n whystack-agent set image statefulset/whystack-agent agent=r.io/whystack-agent:1.30.0",
        "kubectl -n whystack-agent exec whystack-agent-0 -c agent -- whystack-health ready",
        "kubectl -n whystack-agent exec whystack-agent-0 -- sh -c 'whystack-health live && ls /tmp'",
        // A comment in a script, not root's prompt.
        "# Before 1.29:\n# kubectl -n rootpilot logs whystack-agent-0",
        "kubectl apply -k . && kubectl -n whystack-agent get sts/whystack-agent",
        "kubectl -n whystack-agent logs sts/whystack-agent -c agent",
        "kubectl -n whystack-agent logs whystack-agent-3 -c agent 2>&1 | tee log",
    ] {
        assert_eq!(findings(fine), [], "{fine}");
    }
    for (wrong, says) in [
        (
            "kubectl apply -k . && kubectl -n wrong rollout status statefulset/whystack-agent",
            "in namespace `wrong`",
        ),
        (
            "kubectl apply -k .; kubectl -n wrong get sts/whystack-agent",
            "in namespace `wrong`",
        ),
        (
            "KUBECONFIG=~/k kubectl -n wrong logs whystack-agent-0",
            "in namespace `wrong`",
        ),
        (
            "sudo -E kubectl -n wrong logs whystack-agent-0",
            "in namespace `wrong`",
        ),
        (
            "watch -n 2 kubectl -n wrong get pod whystack-agent-0",
            "in namespace `wrong`",
        ),
        (
            "kubectl\t-n wrong logs whystack-agent-0",
            "in namespace `wrong`",
        ),
        (
            "kubectl get statefulsets.apps/whystack-agent -n wrong",
            "in namespace `wrong`",
        ),
        (
            "kubectl -n whystack-agent logs statefulset/whystack-agent -c agnet",
            "did you mean `agent`",
        ),
        (
            "kubectl -n whystack-agent exec sts/whystack-agent -c agnet -- true",
            "did you mean `agent`",
        ),
        // Options as kubectl reads them: a global option's value is no
        // subcommand, and `-n=X` is X.
        (
            "kubectl --as admin -n wrong logs whystack-agent-0",
            "in namespace `wrong`",
        ),
        (
            "kubectl --request-timeout 30s -n wrong describe pod whystack-agent-0",
            "in namespace `wrong`",
        ),
        (
            "kubectl -n=wrong logs whystack-agent-0",
            "in namespace `wrong`",
        ),
        // A near miss of the base's namespace, whatever is looked for.
        (
            "kubectl get events -n whystack-agnet",
            "did you mean `whystack-agent`",
        ),
        (
            "kubectl -n whystack-agnet get pods",
            "did you mean `whystack-agent`",
        ),
        // The base's name for another kind, a generated name without its
        // hash, a claim of a pod that is not the StatefulSet's.
        (
            "kubectl -n whystack-agent rollout restart deployment/whystack-agent",
            "a StatefulSet",
        ),
        (
            "kubectl -n whystack-agent logs deploy/whystack-agent -c agent",
            "a StatefulSet",
        ),
        (
            "kubectl -n whystack-agent describe configmap whystack-agent-config",
            "after a hash of its content",
        ),
        (
            "kubectl -n whystack-agent delete pvc identity-whystack-agnet-0",
            "did you mean `identity-whystack-agent-0`",
        ),
        (
            "kubectl -n default delete pvc identity-whystack-agent-0",
            "in namespace `default`",
        ),
        // A Secret the pods use, made elsewhere or by another name.
        (
            "kubectl -n default create secret generic whystack-agent-env --from-literal=A=b",
            "in namespace `default`",
        ),
        (
            "kubectl -n whystack-agent create secret generic whystack-agent-envs --from-env-file=x",
            "did you mean `whystack-agent-env`",
        ),
        // What `kubectl exec` runs in the image, with the arguments the
        // image data gives it.
        (
            "kubectl -n whystack-agent exec whystack-agent-0 -c agent -- whystack-health readyz",
            "takes `live` or `ready`",
        ),
        (
            "kubectl -n whystack-agent exec whystack-agent-0 -- sh -c 'whystack-health'",
            "takes `live` or `ready`",
        ),
        // A label selector of pods in the base's namespace that picks none.
        (
            "kubectl -n whystack-agent get pods -l app=whystack-agent",
            "selects no pod of base v1.30.0: its pods have app.kubernetes.io/name=whystack-agent",
        ),
        (
            "kubectl -n whystack-agent logs -l app.kubernetes.io/name=whystack-agnet",
            "selects no pod",
        ),
        // Scaling the agent, and the containers `set` names.
        (
            "kubectl -n whystack-agent scale statefulset/whystack-agent --replicas=3",
            "single use",
        ),
        (
            "kubectl -n whystack-agent set image statefulset/whystack-agent agnet=r.io/whystack-agent:1.30.0",
            "did you mean `agent`",
        ),
        (
            "kubectl -n whystack-agent set env statefulset/whystack-agent -c agnet RUNNER_LOG=debug",
            "did you mean `agent`",
        ),
        // The site's base URLs, which kubectl cannot use as written.
        (
            "kubectl apply -k https://docs.whystack.ai/kubernetes/v1.30.0/base/",
            "cannot fetch a base over HTTP(S)",
        ),
        (
            "kubectl apply -f https://docs.whystack.ai/kubernetes/v1.30.0/base/statefulset.yaml",
            "unbuilt",
        ),
    ] {
        let got = findings(wrong);
        assert!(
            got.len() == 1 && got[0].0 == "error" && got[0].2.contains(says),
            "{wrong}: {got:?}"
        );
    }
    // A session (`#` is root's prompt), a fence without a language and an
    // indented block are code a reader copies too.
    for body in [
        "Intro.\n\n```console\n# kubectl -n wrong logs whystack-agent-0\n```\n",
        "Intro.\n\n```\nkubectl -n wrong logs whystack-agent-0\n```\n",
        "Intro.\n\n```text\nkubectl -n wrong logs whystack-agent-0\n```\n",
        "Intro.\n\n    kubectl -n wrong logs whystack-agent-0\n",
        "Intro.\n\n```shellsession\n$ kubectl -n wrong logs whystack-agent-0\n```\n",
    ] {
        let p = agent_docs("", body);
        let (_, report) = p.check_json();
        let found = findings_of(&report, "doc-command-mismatch");
        assert_eq!(found.len(), 1, "{body}: {report:#}");
    }
    // An overlay that adds labels gives the pods more than the base's.
    let k = format!("{OVERLAY}labels:\n  - pairs: {{team: agents}}\n    includeTemplates: true\n");
    let body = format!(
        "```yaml file=kustomization.yaml\n{k}```\n\n```sh\nkubectl -n whystack-agent get pods -l team=agents\n```\n"
    );
    let p = agent_docs("", &body);
    let (_, report) = p.check_json();
    assert_eq!(
        findings_of(&report, "doc-command-mismatch").len(),
        0,
        "{report:#}"
    );
    // A page whose overlay moves the base: its namespace and names.
    let k = format!("{OVERLAY}namespace: agent-b\nnamePrefix: b-\n");
    let body = format!(
        "```yaml file=kustomization.yaml\n{k}```\n\n```sh\nkubectl -n agent-b logs b-whystack-agent-0\nkubectl -n whystack-agent logs b-whystack-agent-0\nkubectl -n agent-b create secret generic whystack-agent-env-b --from-env-file=b.env\n```\n"
    );
    let p = agent_docs("", &body);
    let (_, report) = p.check_json();
    let found = findings_of(&report, "doc-command-mismatch");
    assert_eq!(found.len(), 1, "{report:#}");
    assert!(
        found[0]["message"].as_str().unwrap().contains("`agent-b`"),
        "{report:#}"
    );
    // Overlays in tabs: a command in a tab runs on its tab's overlay; one
    // in no tab is wrong only if it is wrong on each.
    let tabs = |ns: &str| {
        format!("```yaml file=kustomization.yaml tab={ns}\n{OVERLAY}namespace: agent-{ns}\n```\n\n")
    };
    let sh = |tab: &str, ns: &str| {
        format!("```sh{tab}\nkubectl -n agent-{ns} logs whystack-agent-0\n```\n\n")
    };
    let body = [
        tabs("a"),
        tabs("b"),
        sh(" tab=b", "b"),
        sh(" tab=a", "a"),
        sh("", "a"),
        sh("", "b"),
        sh(" tab=b", "a"),
        sh("", "c"),
    ]
    .concat();
    let p = agent_docs("", &body);
    let (_, report) = p.check_json();
    let found: Vec<String> = findings_of(&report, "doc-command-mismatch")
        .iter()
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(found.len(), 2, "{report:#}");
    assert!(
        found[0].contains("namespace `agent-a`") && found[0].contains("`agent-b`"),
        "{found:?}"
    );
    assert!(found[1].contains("namespace `agent-c`"), "{found:?}");
}

/// The signature check a page shows passes the identity and namespace the
/// releases are signed with (site.yaml's `signing`).
#[test]
fn a_signature_check_names_the_signer_and_namespace_of_the_releases() {
    let block = |cmd: &str| format!("Intro.\n\n```sh\n{cmd}\n```\n");
    let found = |cmd: &str| -> Vec<String> {
        let p = agent_docs("", &block(cmd));
        let (_, report) = p.check_json();
        findings_of(&report, "doc-command-mismatch")
            .iter()
            .map(|f| f["message"].as_str().unwrap().to_string())
            .collect()
    };
    let good = "ssh-keygen -Y verify -f allowed_signers -I releases@whystack.ai \\\n  -n \"whystack-agent/v${VERSION#v}\" -s base/SHA256SUMS.sig < base/SHA256SUMS";
    assert_eq!(found(good), Vec::<String>::new());
    assert_eq!(
        found(&good.replace("-I releases@whystack.ai", "-I \"$SIGNER\"")),
        Vec::<String>::new()
    );
    let wrong = found(&good.replace("releases@whystack.ai", "releases@whystack.io"));
    assert!(
        wrong.len() == 1 && wrong[0].contains("`-I releases@whystack.io`"),
        "{wrong:?}"
    );
    let wrong = found(&good.replace("whystack-agent/v", "whystack-agent-v"));
    assert!(
        wrong.len() == 1 && wrong[0].contains("signed in `whystack-agent/vX.Y.Z`"),
        "{wrong:?}"
    );
}

/// An overlay that renames the image's repository (a customer's mirror
/// under another name) still runs the product: its pin and its settings
/// are checked as they are under the product's own name.
#[test]
fn an_overlay_that_renames_the_image_still_runs_the_product() {
    for new_name in [
        "registry.example.com/team/whystack-agent",
        "registry.example.com/team/runner",
    ] {
        let k = OVERLAY
            .replace("registry.example.com/whystack-agent", new_name)
            .replace(
                "    digest: sha256:0000000000000000000000000000000000000000000000000000000000000000\n",
                "    newTag: \"1.29.0\"\n",
            );
        let p = overlay_page(&k, None);
        let f = only(&p, "image-pin-mismatch");
        assert!(
            f["message"].as_str().unwrap().contains("another release"),
            "{new_name}: {f:#}"
        );
    }
}

/// Every overlay the bundled docs show builds with `kubectl kustomize` on
/// the base it documents, and basepress's strategic merge gives the same
/// pod template as kubectl's.
#[test]
fn the_documented_overlays_build_with_kubectl_like_basepress_merges_them() {
    if !have("kubectl") {
        return;
    }
    let mut overlays = 0;
    for lang in ["es", "pt", "en"] {
        let dir = repo().join("content").join(lang);
        let mut pages: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        pages.sort();
        for page in pages {
            let text = std::fs::read_to_string(&page).unwrap();
            let doc = basepress::analyze::markdown::analyze(&text, 1);
            let files: Vec<_> = doc
                .code_blocks
                .iter()
                .filter(|b| b.attr("file").is_some())
                .collect();
            if !files
                .iter()
                .any(|b| b.attr("file") == Some("kustomization.yaml"))
            {
                continue;
            }
            let version = if text.contains("\nbase: v1.29.0\n") {
                "v1.29.0"
            } else {
                "v1.30.0"
            };
            let work = tempfile::tempdir().unwrap();
            let base_dir = work.path().join("base");
            std::fs::create_dir(&base_dir).unwrap();
            for e in std::fs::read_dir(repo().join("bases").join(version)).unwrap() {
                let e = e.unwrap();
                std::fs::copy(e.path(), base_dir.join(e.file_name())).unwrap();
            }
            for b in &files {
                std::fs::write(work.path().join(b.attr("file").unwrap()), &b.code).unwrap();
            }
            let out = std::process::Command::new("kubectl")
                .arg("kustomize")
                .arg(work.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{}: {}", page.display(), stderr(&out));
            overlays += 1;

            // The same StatefulSet through basepress's merge.
            let built: Vec<serde_json::Value> =
                basepress::yaml::documents(&String::from_utf8_lossy(&out.stdout)).unwrap();
            let Some(kubectl_sts) = built.iter().find(|d| d["kind"] == "StatefulSet") else {
                continue;
            };
            let mut ours: serde_json::Value = basepress::yaml::from_str(
                &std::fs::read_to_string(
                    repo().join("bases").join(version).join("statefulset.yaml"),
                )
                .unwrap(),
            )
            .unwrap();
            let k: serde_json::Value = basepress::yaml::from_str(
                &files
                    .iter()
                    .find(|b| b.attr("file") == Some("kustomization.yaml"))
                    .unwrap()
                    .code,
            )
            .unwrap();
            for p in k["patches"].as_array().into_iter().flatten() {
                let Some(path) = p["path"].as_str() else {
                    continue;
                };
                let patch: serde_json::Value = basepress::yaml::from_str(
                    &files
                        .iter()
                        .find(|b| b.attr("file") == Some(path))
                        .unwrap()
                        .code,
                )
                .unwrap();
                if patch["kind"] == "StatefulSet" {
                    ours = basepress::kustomize::smp::merge(&ours, &patch).unwrap();
                }
            }
            let pod = |v: &serde_json::Value| {
                // The `images:` transformer is not a merge: leave images out.
                let mut spec = v["spec"]["template"]["spec"].clone();
                for c in spec["containers"].as_array_mut().into_iter().flatten() {
                    c["image"] = serde_json::Value::Null;
                }
                // Kustomize renames generated ConfigMaps with a hash suffix.
                regex_free_unhash(&serde_json::to_string(&spec).unwrap())
            };
            assert_eq!(pod(kubectl_sts), pod(&ours), "{}", page.display());
        }
    }
    assert!(overlays >= 9, "only {overlays} overlays found in the docs");
}

/// Drops Kustomize's `-<10 chars>` hash suffix from `whystack-agent-config`.
fn regex_free_unhash(s: &str) -> String {
    let marker = "whystack-agent-config-";
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(marker) {
        out.push_str(&rest[..i + marker.len() - 1]);
        rest = &rest[i + marker.len()..];
        let hash_len = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .count();
        rest = &rest[hash_len..];
    }
    out.push_str(rest);
    out
}

#[test]
fn external_links_are_left_alone_and_listed_on_request() {
    let p = agent_docs(
        "",
        "See [Kustomize](https://kubectl.docs.kubernetes.io/) and\n[mail](mailto:a@b.c).\n\n[Own](https://docs.whystack.ai/es/) is the site itself.\n",
    );
    assert_eq!(p.check_json().0, 0, "external links are not checked");
    let o = run(&["check", "--external", "--root", &p.root().to_string_lossy()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        out,
        "https://kubectl.docs.kubernetes.io/  (content/es/index.md:4)\nmailto:a@b.c  (content/es/index.md:5)\n"
    );
    let o = run(&[
        "check",
        "--external",
        "--format",
        "json",
        "--root",
        &p.root().to_string_lossy(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["exit_code"], 0, "{v:#}");
    assert_eq!(
        v["external"][0]["url"],
        "https://kubectl.docs.kubernetes.io/"
    );
    let at = &v["external"][1]["location"];
    assert_eq!(
        (&at["file"], &at["line"]),
        (
            &serde_json::json!("content/es/index.md"),
            &serde_json::json!(5)
        ),
        "{v:#}"
    );
}

/// Languages are named in any case, and a block that shows a YAML file is
/// YAML whatever its language: each is checked as YAML, and an overlay
/// written so is built and checked.
#[test]
fn yaml_blocks_are_known_by_any_name() {
    let bad = "resources:\n  - base\n   namespace: x\n";
    for fence in ["YAML", "Yml", "text file=patch.yaml", "file=extra.yml"] {
        let p = agent_docs("", &format!("Intro.\n\n```{fence}\n{bad}```\n"));
        let f = only(&p, "doc-yaml-invalid");
        assert_eq!(
            f["location"]["line"],
            page_line(&p, "   namespace"),
            "{fence}"
        );
    }

    let gen = format!("{OVERLAY}configMapGenerator:\n  - name: whystack-agent-config\n    behavior: merge\n    literals:\n      - RUNNER_ATTESTATION_MODE=eks-oidc\n");
    let p = agent_docs(
        "",
        &format!("Intro.\n\n```YAML file=kustomization.yaml\n{gen}```\n"),
    );
    only(&p, "env-value-not-implemented");
}

/// An overlay whose kustomization.yaml holds nothing (a comment, a list)
/// is refused, as Kustomize refuses it, instead of going unchecked.
#[test]
fn an_empty_overlay_kustomization_is_refused() {
    for body in ["# to be written\n", "- base\n"] {
        let p = overlay_page(body, None);
        let f = only(&p, "doc-overlay-invalid");
        assert_eq!(
            f["location"]["line"],
            page_line(&p, body.trim_end()),
            "{body}"
        );
    }
}

/// A patch whose `target` picks its objects by kind alone, by a name
/// pattern or by labels is held to the names of the objects it picks.
#[test]
fn a_patch_is_checked_on_every_object_its_target_picks() {
    for target in [
        "{kind: StatefulSet}",
        "{kind: StatefulSet, name: \"whystack-.*\"}",
        "{labelSelector: \"app.kubernetes.io/name=whystack-agent\"}",
    ] {
        let k = format!(
            "{OVERLAY}patches:\n  - target: {target}\n    patch: |-\n      apiVersion: apps/v1\n      kind: StatefulSet\n      metadata:\n        name: any\n      spec:\n        template:\n          spec:\n            containers:\n              - name: agnet\n                resources:\n                  limits: {{memory: 1Gi}}\n"
        );
        let p = overlay_page(&k, None);
        let f = only(&p, "doc-patch-unknown-name");
        assert_eq!(
            f["location"]["line"],
            page_line(&p, "name: agnet"),
            "{target}"
        );
    }
}

#[test]
fn two_headings_with_one_explicit_id_are_refused_at_the_second() {
    let p = agent_docs(
        "",
        "## Instalar {#instalar}\n\nVer [abajo](#instalar).\n\n## Instalar de nuevo {#instalar}\n",
    );
    let f = only(&p, "heading-id-repeated");
    assert_eq!(f["location"]["file"], "content/es/index.md");
    assert_eq!(f["location"]["line"], 8);
    assert_eq!(f["location"]["column"], 1);
    assert!(f["message"].as_str().unwrap().contains("line 4"), "{f:#}");
    assert_eq!(p.build().status.code(), Some(1));
}

#[test]
fn a_relative_image_is_read_beside_the_page_source_when_its_url_misses() {
    let p = agent_docs("", "![logo](img/logo.png)\n");
    p.write("content/es/img/logo.png", "png");
    p.write(
        "content/es/guia.md",
        "---\ntitle: Guía\n---\n![logo](img/logo.png) and ![again](./img/logo.png?v=2#x)\n",
    );
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let img = |page: &str| {
        let html = std::fs::read_to_string(p.out().join(page)).unwrap();
        html.split("<img src=\"")
            .skip(1)
            .map(|s| s.split('"').next().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    // From the folder's index, the URL and the source agree: as written.
    assert_eq!(img("es/index.html"), ["img/logo.png"]);
    // `guia.md` is published at /es/guia/; its untranslated copies at
    // /pt/guia/ and /en/guia/: each reaches the image beside the source.
    for page in ["es/guia/index.html", "pt/guia/index.html"] {
        assert_eq!(
            img(page),
            ["/es/img/logo.png", "/es/img/logo.png?v=2#x"],
            "{page}"
        );
    }
    // So does the index page's untranslated copy, where pt has no image.
    p.remove("content/pt/index.md");
    assert_eq!(p.build().status.code(), Some(0));
    assert_eq!(img("pt/index.html"), ["/es/img/logo.png"]);

    // Raw HTML is published as written: told what to write instead.
    p.write(
        "content/es/guia.md",
        "---\ntitle: Guía\n---\n<img src=\"img/logo.png\" alt=\"logo\">\n",
    );
    let f = only(&p, "link-broken");
    assert_eq!(f["location"]["line"], 4);
    assert!(
        f["remedy"].as_str().unwrap().contains("`/es/img/logo.png`"),
        "{f:#}"
    );
}

#[test]
fn latest_is_the_newest_released_base_once_any_is_released() {
    let p = agent_docs("", "Newest: {{ latest }}.\n");
    let latest = |p: &Project| {
        let o = p.build();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let page = std::fs::read_to_string(p.out().join("es/index.html")).unwrap();
        let json = std::fs::read_to_string(p.out().join("kubernetes/versions.json")).unwrap();
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        let marked: Vec<_> = json["versions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["latest"] == true)
            .map(|v| v["version"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(marked, [json["latest"].as_str().unwrap()]);
        let newest = page.split("Newest: ").nth(1).unwrap().split('.').take(3);
        (newest.collect::<Vec<_>>().join("."), marked[0].clone())
    };
    // Nothing released yet: the newest base.
    assert_eq!(latest(&p), ("1.30.0".into(), "v1.30.0".into()));
    // v1.30.0 only prepared (its files may still change): not advertised.
    let lock = std::fs::read_to_string(repo().join("bases/published.lock")).unwrap();
    let only_129: String = lock
        .lines()
        .filter(|l| !l.starts_with("v1.30.0"))
        .map(|l| format!("{l}\n"))
        .collect();
    p.copy_from_repo(
        "bases/signatures/v1.29.0.sig",
        "bases/signatures/v1.29.0.sig",
    );
    p.write("bases/published.lock", &only_129);
    assert_eq!(latest(&p), ("1.29.0".into(), "v1.29.0".into()));
    p.copy_from_repo(
        "bases/signatures/v1.30.0.sig",
        "bases/signatures/v1.30.0.sig",
    );
    p.copy_from_repo("bases/published.lock", "bases/published.lock");
    assert_eq!(latest(&p), ("1.30.0".into(), "v1.30.0".into()));
}

#[test]
fn a_page_only_one_language_has_still_offers_the_others() {
    let p = agent_docs("", "Inicio.\n");
    p.write(
        "content/pt/so-pt.md",
        "---\ntitle: Só em português\n---\nTexto.\n",
    );
    let o = p.build();
    assert!(o.status.code() == Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(p.out().join("pt/so-pt/index.html")).unwrap();
    let switcher = html.split("class=\"languages\"").nth(1).unwrap_or_default();
    let switcher = switcher.split("</nav>").next().unwrap();
    for home in ["/es/", "/en/"] {
        let link = format!("href=\"{home}\"");
        let at = switcher
            .find(&link)
            .unwrap_or_else(|| panic!("{link}: {switcher}"));
        let tag = &switcher[at..switcher[at..].find('>').unwrap() + at];
        assert!(tag.contains("data-missing"), "{tag}");
    }
    assert!(switcher.contains("aria-current=\"page\""), "{switcher}");
    // Only the page itself is announced as an alternate.
    assert!(!html.contains("hreflang=\"es\" href=\"https://"), "{html}");
}

#[test]
fn a_reference_link_without_its_definition_is_refused_where_it_is() {
    let p = agent_docs(
        "",
        "Ver [la guía][guia] y [Instalar][].\n\n[instalar]: https://example.com/install\n",
    );
    let (code, report) = p.check_json();
    // A warning: the page is published, with the text as written.
    assert_eq!(code, 0, "{report:#}");
    let found = findings_of(&report, "link-reference-undefined");
    assert_eq!(found.len(), 1, "{report:#}");
    let f = found[0];
    assert_eq!(f["location"]["file"], "content/es/index.md");
    assert_eq!(f["location"]["line"], page_line(&p, "Ver [la guía]"));
    assert_eq!(f["location"]["column"], 5);
    assert!(f["message"].as_str().unwrap().contains("`[guia]`"), "{f:#}");
    // A definition that holds a variable is one once the variable is
    // known; while another is unknown, only that one is said.
    let p = agent_docs(
        "",
        "Get the [base][dl] for {{ lastest }}.\n\n[dl]: {{ site.base_url }}/kubernetes/\n",
    );
    let (_, report) = p.check_json();
    assert!(
        findings_of(&report, "link-reference-undefined").is_empty(),
        "{report:#}"
    );
    assert_eq!(
        findings_of(&report, "doc-variable-unknown").len(),
        1,
        "{report:#}"
    );
}
