//! The docs against the bases and the image data: variables, YAML
//! examples, environment keys, the release a page documents, translations.

use crate::support::*;

/// A project with the repository's site.yaml, image data and bases, and
/// one Spanish page with `body` (after its front matter `front`).
fn agent_docs(front: &str, body: &str) -> Project {
    let p = Project::empty();
    for f in ["site.yaml", "image-releases.yaml"] {
        p.write(f, &std::fs::read_to_string(repo().join(f)).unwrap());
    }
    for v in ["v1.29.0", "v1.30.0"] {
        for e in std::fs::read_dir(repo().join("bases").join(v)).unwrap() {
            let e = e.unwrap();
            p.write(
                &format!("bases/{v}/{}", e.file_name().to_string_lossy()),
                &std::fs::read_to_string(e.path()).unwrap(),
            );
        }
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
    let html = std::fs::read_to_string(p.out().join("es/index.html")).unwrap();
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

    // RUNNER_LOG_FORMAT exists from 1.30.0: fine on the latest, not on 1.29.0.
    let p = agent_docs("", "`RUNNER_LOG_FORMAT=json`\n");
    assert_eq!(p.check_json().0, 0);
    let p = agent_docs("base: v1.29.0\n", "`RUNNER_LOG_FORMAT=json`\n");
    let f = only(&p, "doc-env-key-unknown");
    assert!(f["message"].as_str().unwrap().contains(">=1.30.0"), "{f:#}");
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

    let site = std::fs::read_to_string(p.path("site.yaml")).unwrap();
    p.write("site.yaml", &format!("{site}translations: required\n"));
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["findings"][0]["severity"], "error");
}
