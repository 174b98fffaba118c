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
    p.write("content/en/d.md", "---\ntitle: D\n# D\n");
    let (code, found) = findings(&p);
    assert_eq!(code, 2, "{found:?}");
    let bad: Vec<&str> = found
        .iter()
        .filter(|f| f.0 == "front-matter-invalid")
        .map(|f| f.1.as_str())
        .collect();
    assert_eq!(
        bad,
        [
            "content/en/c.md",
            "content/en/d.md",
            "content/es/a.md",
            "content/es/b.md"
        ],
        "{found:?}"
    );
    let unclosed = found.iter().find(|f| f.1 == "content/en/d.md").unwrap();
    assert!(
        unclosed.2.contains("is not closed by a `---` line"),
        "{unclosed:?}"
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

/// Anchors a browser finds that are not Markdown headings' ids: GitHub's
/// and Hugo's ids (punctuation dropped), ids raw HTML gives, and `#`
/// alone (the top of the page). Links from the content folder's root.
#[test]
fn anchors_of_other_tools_raw_html_ids_and_rooted_source_links_resolve() {
    let p = Project::new();
    p.write(
        "content/en/notes.md",
        "---\ntitle: Notes\n---\n# Notes\n\n## 1.30.0\n\n## `--flag=x`\n\n\
         <a id=\"legacy-anchor\"></a>\n\n## Step <span id=\"s2\">two</span>\n\n\
         <a name=\"old\"></a>\n\n\
         [v](#1300) [f](#--flagx) [l](#legacy-anchor) [s](#s2) [o](#old) [top](#) \
         [self](notes.md#) [es](/es/install.md#pasos) [en](/install.md#steps) \
         [repo](/content/en/install.md)\n",
    );
    let (code, found) = findings(&p);
    assert_eq!(code, 0, "{found:?}");
    let o = p.build();
    assert!(o.status.success(), "{}", crate::support::stderr(&o));
    let html = std::fs::read_to_string(p.out().join("en/notes/index.html")).unwrap();
    // Markdown links name the heading's real id; raw HTML ids as written.
    for href in [
        "#1-30-0",
        "#flag-x",
        "#legacy-anchor",
        "#s2",
        "#old",
        "/es/install/#pasos",
        "/en/install/#steps",
    ] {
        assert!(html.contains(&format!("href=\"{href}\"")), "{href}: {html}");
    }

    // Misses are still misses: an id no element has, a picture that is
    // not there in `srcset` or `poster`, and a rooted link to no page.
    p.write(
        "content/en/notes.md",
        "---\ntitle: Notes\n---\n# Notes\n\n<a id=\"legacy-anchor\"></a>\n\n\
         [l](#legacy-ancor) [g](/en/gone.md) [p](//docs.example.com/en/missing1/)\n\n\
         <img srcset=\"/en/a.png 1x, /en/b.png 2x\"> <video poster=\"/en/p.png\"></video>\n",
    );
    let (code, found) = findings(&p);
    assert_eq!(code, 1, "{found:?}");
    let rules: Vec<&str> = found.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        rules.iter().filter(|r| **r == "anchor-missing").count(),
        1,
        "{found:?}"
    );
    let broken: Vec<&String> = found
        .iter()
        .filter(|f| f.0 == "link-broken")
        .map(|f| &f.2)
        .collect();
    assert_eq!(broken.len(), 5, "{found:?}");
    for name in [
        "en/gone.md",
        "/en/a.png",
        "/en/b.png",
        "/en/p.png",
        "/en/missing1/",
    ] {
        assert!(broken.iter().any(|m| m.contains(name)), "{name}: {found:?}");
    }
}

/// Columns count characters, as editors do: an accent before a finding
/// does not move it. A code block in a list item or a quote is placed
/// with the marks before its lines.
#[test]
fn columns_count_characters_and_the_marks_before_a_code_block() {
    let p = Project::new();
    p.write(
        "content/es/notas.md",
        "---\ntitle: Notas\n---\n# Notas\n\nConfiguración rápida: [x](nope.md)\n\n\
         1. Aplicar:\n\n   ```yaml\n   a: 1\n   a: 2\n   ```\n\n\
         > ```yaml\n> b: 1\n> b: 2\n> ```\n",
    );
    let (_, report) = p.check_json();
    let at = |rule: &str| -> Vec<(u64, u64)> {
        crate::support::findings_of(&report, rule)
            .iter()
            .map(|f| {
                (
                    f["location"]["line"].as_u64().unwrap_or(0),
                    f["location"]["column"].as_u64().unwrap_or(0),
                )
            })
            .collect()
    };
    assert_eq!(at("link-broken"), [(6, 23)], "{report:#}");
    assert_eq!(at("doc-yaml-invalid"), [(12, 4), (17, 3)], "{report:#}");
}

/// `{{ variables }}` in the front matter's title and description are
/// replaced as in the body, everywhere the title shows (the page, the
/// sidebar of other pages); an unknown one is an error at its place.
#[test]
fn variables_in_the_title_and_description_are_replaced() {
    let p = Project::new();
    p.write(
        "content/en/install.md",
        "---\ntitle: Install {{ latest }}\nweight: 2\ndescription: \"Steps for {{ version }}.\"\n---\n# Install\n\n## Steps\n",
    );
    let o = p.build();
    assert!(o.status.success(), "{}", crate::support::stderr(&o));
    let page = std::fs::read_to_string(p.out().join("en/install/index.html")).unwrap();
    assert!(page.contains("<title>Install 1.1.0"), "{page}");
    assert!(page.contains("content=\"Steps for 1.1.0.\""), "{page}");
    let home = std::fs::read_to_string(p.out().join("en/index.html")).unwrap();
    assert!(home.contains("Install 1.1.0"), "{home}");
    for html in [&page, &home] {
        assert!(!html.contains("{{"), "{html}");
    }

    p.write(
        "content/en/install.md",
        "---\ntitle: Install\ndescription: Steps for {{ lastest }}.\n---\n# Install\n\n## Steps\n",
    );
    let (_, report) = p.check_json();
    let found = crate::support::findings_of(&report, "doc-variable-unknown");
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(found[0]["location"]["file"], "content/en/install.md");
    assert_eq!(found[0]["location"]["line"], 3, "{report:#}");
    assert_eq!(found[0]["location"]["column"], 24, "{report:#}");
}
