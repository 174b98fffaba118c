//! What writers moving docs from other tools meet: anchors written the way
//! GitHub and Hugo write them, every bad front matter in one run, and
//! suggestions for broken links and unknown variables.

use crate::support::Project;

/// The findings of `check --format json` as (rule, file, help).
fn findings(p: &Project) -> (i32, Vec<(String, String, String)>) {
    let (code, report) = p.check_json();
    let list = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or_default().to_string(),
                f["location"]["file"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                format!(
                    "{} {}",
                    f["message"].as_str().unwrap_or_default(),
                    f["remedy"].as_str().unwrap_or_default()
                ),
            )
        })
        .collect();
    (code, list)
}

#[test]
fn anchors_with_accents_or_percent_escapes_resolve_to_the_folded_id() {
    let p = Project::new();
    p.write(
        "content/es/install.md",
        "---\ntitle: Instalar\n---\n# Instalar\n\n## Pasos\n\n## Cópia de segurança\n\n\
         Ver [arriba](#cópia-de-segurança), [codificado](#c%C3%B3pia-de-seguran%C3%A7a), \
         [plegado](#copia-de-seguranca) y [desde inicio](index.md#inicio).\n",
    );
    p.write(
        "content/es/index.md",
        "---\ntitle: Inicio\n---\n# Inicio\n\n[Copia](install.md#Cópia-de-Segurança)\n",
    );
    let (code, found) = findings(&p);
    assert_eq!(code, 0, "{found:?}");
    assert!(found.iter().all(|f| f.0 != "anchor-missing"), "{found:?}");

    // The published links name the heading's real id, so browsers find it.
    let o = p.build();
    assert!(o.status.success(), "{}", crate::support::stderr(&o));
    let html = std::fs::read_to_string(p.out().join("es/install/index.html")).unwrap();
    assert!(html.contains("id=\"copia-de-seguranca\""), "{html}");
    assert!(html.contains("href=\"#copia-de-seguranca\""), "{html}");
    assert!(!html.contains("href=\"#cópia"), "{html}");
    assert!(!html.contains("href=\"#c%C3%B3pia"), "{html}");
    let index = std::fs::read_to_string(p.out().join("es/index.html")).unwrap();
    assert!(
        index.contains("href=\"/es/install/#copia-de-seguranca\""),
        "{index}"
    );

    // A real miss still fails, and suggests the nearest id.
    p.write(
        "content/es/index.md",
        "---\ntitle: Inicio\n---\n# Inicio\n\n[Copia](install.md#copia-de-segurnca)\n",
    );
    let (code, found) = findings(&p);
    assert_eq!(code, 1);
    let miss = found.iter().find(|f| f.0 == "anchor-missing").unwrap();
    assert!(
        miss.2.contains("did you mean `copia-de-seguranca`?"),
        "{miss:?}"
    );
}

#[test]
fn every_bad_front_matter_is_reported_and_not_as_untranslated() {
    let p = Project::new();
    p.write("content/en/a.md", "---\ntitle: A\n---\n# A\n");
    p.write("content/en/b.md", "---\ntitle: B\n---\n# B\n");
    // Typos in two Spanish pages, one error each, and a third page in
    // English with no front matter at all.
    p.write("content/es/a.md", "---\ntitel: A\n---\n# A\n");
    p.write("content/es/b.md", "---\ntitle: B\nwieght: 2\n---\n# B\n");
    p.write("content/en/c.md", "# C\n");
    let (code, found) = findings(&p);
    assert_eq!(code, 2, "{found:?}");
    let bad: Vec<&str> = found
        .iter()
        .filter(|f| f.0 == "front-matter-invalid")
        .map(|f| f.1.as_str())
        .collect();
    assert_eq!(
        bad,
        ["content/en/c.md", "content/es/a.md", "content/es/b.md"],
        "{found:?}"
    );
    let untranslated: Vec<_> = found
        .iter()
        .filter(|f| f.0 == "translation-missing")
        .collect();
    assert!(untranslated.is_empty(), "{untranslated:?}");
}

#[test]
fn broken_links_and_unknown_variables_suggest_the_nearest() {
    let p = Project::new();
    p.write(
        "content/en/guide/drain.md",
        "---\ntitle: Drain\n---\n# Drain\n",
    );
    p.write(
        "content/en/index.md",
        "---\ntitle: Home\nweight: 1\n---\n# Home\n\n\
         [a](instal.md) [b](/en/instll/) [c](guide/drian.md) [d](drain.md) \
         [e](nothing-like-it.md)\n\nVersion {{ lastest }}.\n",
    );
    let (code, found) = findings(&p);
    assert_eq!(code, 1, "{found:?}");
    let helps: Vec<&str> = found
        .iter()
        .filter(|f| f.0 == "link-broken")
        .map(|f| f.2.as_str())
        .collect();
    assert_eq!(helps.len(), 5, "{found:?}");
    assert!(
        helps[0].contains("did you mean `install.md`?"),
        "{}",
        helps[0]
    );
    assert!(
        helps[1].contains("did you mean `/en/install/`?"),
        "{}",
        helps[1]
    );
    assert!(
        helps[2].contains("did you mean `guide/drain.md`?"),
        "{}",
        helps[2]
    );
    assert!(
        helps[3].contains("did you mean `guide/drain.md`?"),
        "{}",
        helps[3]
    );
    assert!(!helps[4].contains("did you mean"), "{}", helps[4]);
    let var = found
        .iter()
        .find(|f| f.0 == "doc-variable-unknown")
        .unwrap();
    assert!(var.2.contains("did you mean `{{ latest }}`?"), "{var:?}");
}
