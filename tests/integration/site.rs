//! What the build generates for readers besides the pages: the versions
//! pages, the search indexes, the sitemap, robots.txt, the 404 page, the
//! sidebar and the language links of every page.

use crate::support::*;

fn read(p: &Project, rel: &str) -> String {
    std::fs::read_to_string(p.out().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The test project with a second base and a few more pages.
fn project() -> Project {
    let p = Project::new();
    for f in ["kustomization.yaml", "deployment.yaml", "config.env"] {
        let text = std::fs::read_to_string(p.path(&format!("bases/v1.1.0/{f}"))).unwrap();
        p.write(&format!("bases/v1.0.0/{f}"), &text);
    }
    p.write(
        "content/es/install.md",
        "---\ntitle: Instalación\n---\n# Instalación\n\n## Pasos\n\nLa audiência del token.\n\n## Terminación\n\nEl drenaje espera.\n",
    );
    p.write(
        "content/en/guides/index.md",
        "---\ntitle: Guides\nweight: 2\n---\nAll the guides.\n",
    );
    p.write(
        "content/en/guides/drain.md",
        "---\ntitle: Drain\n---\n## Graceful drain\n\nThe agent drains its tasks.\n",
    );
    p
}

fn built() -> Project {
    let p = project();
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    p
}

/// The ids of an HTML page.
fn ids(html: &str) -> std::collections::BTreeSet<String> {
    html.split(" id=\"")
        .skip(1)
        .filter_map(|rest| Some(rest[..rest.find('"')?].to_string()))
        .collect()
}

/// Links into the versions page are checked against the ids the check
/// knows it has: exactly those the default template gives it beyond the
/// frame every page has.
#[test]
fn links_into_the_versions_page_are_checked_against_its_ids() {
    let p = built();
    let versions = ids(&read(&p, "en/versions/index.html"));
    let page = ids(&read(&p, "en/guides/drain/index.html"));
    let own: Vec<String> = versions.difference(&page).cloned().collect();
    assert_eq!(
        own,
        ["v1.0.0", "v1.0.0-download", "v1.1.0", "v1.1.0-download"],
        "the default versions.html and layout::versions_page_ids disagree"
    );
    for id in &own {
        p.write(
            "content/en/guides/drain.md",
            &format!("---\ntitle: Drain\n---\n## Graceful drain\n\n[v](/en/versions/#{id}) [v](../../versions/index.html#{id})\n"),
        );
        let (code, report) = p.check_json();
        assert_eq!(code, 0, "{id}: {report:#}");
    }
    p.write(
        "content/en/guides/drain.md",
        "---\ntitle: Drain\n---\n## Graceful drain\n\nSee [1.1](/en/versions/#v1.1.1).\n",
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    let found = findings_of(&report, "anchor-missing");
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(found[0]["location"]["line"], 6, "{report:#}");
    assert!(
        found[0]["remedy"].as_str().unwrap().contains("v1.1.0"),
        "{report:#}"
    );
    // A project's own versions.html may have other ids: not checked.
    p.write(
        "templates/versions.html",
        "{% extends \"base.html\" %}{% block body %}<h2 id=\"v1.1.1\">x</h2>{% endblock body %}",
    );
    let (code, report) = p.check_json();
    assert!(
        findings_of(&report, "anchor-missing").is_empty(),
        "{code} {report:#}"
    );
}

#[test]
fn each_language_has_a_versions_page_with_every_base() {
    let p = built();
    let es = read(&p, "es/versions/index.html");
    assert!(es.contains("<html lang=\"es\">"));
    assert!(es.contains("<h1>Versiones publicadas</h1>"), "{es}");
    let en = read(&p, "en/versions/index.html");
    assert!(en.contains("<h1>Published versions</h1>"));
    for (v, tag) in [("v1.0.0", "1.0.0"), ("v1.1.0", "1.1.0")] {
        assert!(es.contains(&format!("<h2 id=\"{v}\">")), "{v}: {es}");
        // Its anchor is named by the heading, as a page's are.
        assert!(
            es.contains(&format!(
                "<a class=\"anchor\" href=\"#{v}\" aria-labelledby=\"{v}\"><span aria-hidden=\"true\">#</span></a>"
            )),
            "{v}: {es}"
        );
        assert!(es.contains(&format!("<code>agent:{tag}</code>")), "{v}");
        for f in ["config.env", "deployment.yaml", "kustomization.yaml"] {
            let url = format!("/kubernetes/{v}/base/{f}");
            assert!(es.contains(&format!("<a href=\"{url}\">{f}</a>")), "{url}");
            let bytes = std::fs::read(p.out().join(url.trim_start_matches('/'))).unwrap();
            assert!(
                es.contains(&basepress::model::site::sha256_hex(&bytes)),
                "{url}"
            );
        }
        // The verifying loop, in the reader's language.
        let snippet = text(&es);
        assert!(
            snippet.contains(&format!(
                "VERSION={tag}   # el tag de la imagen, con o sin la \"v\""
            )),
            "{v}"
        );
        assert!(
            text(&en).contains(&format!("VERSION={tag}   # the image tag")),
            "{v}"
        );
    }
    assert!(text(&es).contains("SITE=\"https://docs.example.com\"\n(\n  set -eu\n  BASE=\"$SITE/kubernetes/v${VERSION#v}/base\""));
    assert!(text(&es).contains("echo \"OK: base/ tiene v${VERSION#v} tal como se publicó\""));
    // This project does not sign: no signature check.
    assert!(!es.contains("ssh-keygen"));
    // Newest first, and marked.
    let newest = es.find("<h2 id=\"v1.1.0\">").unwrap();
    assert!(newest < es.find("<h2 id=\"v1.0.0\">").unwrap());
    assert!(es[newest..]
        .starts_with("<h2 id=\"v1.1.0\">v1.1.0 <span class=\"badge\">más reciente</span>"));
    // The header's version picker links into the page.
    let page = read(&p, "en/install/index.html");
    assert!(page
        .contains("<a href=\"/en/versions/#v1.1.0\">v1.1.0 <span class=\"badge\">latest</span>"));
    assert!(page.contains("<a href=\"/en/versions/#v1.0.0\">v1.0.0</a>"));
}

#[test]
fn the_search_index_of_each_language_is_stemmed_cut_into_shards_and_has_its_pages() {
    let p = built();
    for lang in ["es", "en"] {
        let dir = format!("search/{lang}/");
        let meta: serde_json::Value =
            serde_json::from_str(&read(&p, &format!("{dir}index.json"))).unwrap();
        assert_eq!(meta["format"], 2, "{meta:#}");
        assert_eq!(meta["lang"], lang, "{meta:#}");
        let pages = meta["pages"].as_u64().unwrap();
        assert!(pages >= 2, "{meta:#}");
        for n in 0..pages {
            let page: serde_json::Value =
                serde_json::from_str(&read(&p, &format!("{dir}p/{n}.json"))).unwrap();
            let url = page["url"].as_str().unwrap();
            assert!(url.starts_with(&format!("/{lang}/")), "{url}");
        }
        assert!(!p.out().join(format!("{dir}p/{pages}.json")).exists());
        let shards = meta["shards"].as_array().unwrap();
        let mut stemmed = 0;
        for i in 0..shards.len() {
            let shard: serde_json::Value =
                serde_json::from_str(&read(&p, &format!("{dir}s/{i}.json"))).unwrap();
            let entries = shard.as_array().unwrap();
            // `[word, stem, postings]` when the stem is another word.
            stemmed += entries
                .iter()
                .filter(|e| e.as_array().unwrap().len() == 3)
                .count();
            // Postings are a string of base64url digits, never empty.
            for e in entries {
                let postings = e.as_array().unwrap().last().unwrap().as_str().unwrap();
                assert!(
                    !postings.is_empty()
                        && postings
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
                    "{e}"
                );
            }
        }
        assert!(stemmed > 0, "{lang}: no word was stemmed");
        assert!(!p
            .out()
            .join(format!("{dir}s/{}.json", shards.len()))
            .exists());
    }
    let js = read(&p, "assets/site.js");
    assert!(
        !js.contains("http://") && !js.contains("https://"),
        "the search asks no other host"
    );
    assert!(!p.out().join("es/search-index.json").exists());
    // The heading a result opens at is the page's anchor.
    let html = read(&p, "es/install/index.html");
    assert!(html.contains("id=\"terminacion\""));
    assert!(html.contains("data-bundle=\"/search/\""), "{html}");
    assert!(!html.contains("data-version"), "{html}");
}

#[test]
fn the_sitemap_lists_every_page_with_its_alternates() {
    let p = built();
    let xml = read(&p, "sitemap.xml");
    assert!(xml.contains("<loc>https://docs.example.com/en/install/</loc>"));
    assert!(xml.contains("<loc>https://docs.example.com/es/install/</loc>"));
    assert!(xml.contains("<loc>https://docs.example.com/en/guides/drain/</loc>"));
    assert!(xml.contains("<loc>https://docs.example.com/es/versions/</loc>"));
    assert!(xml.contains(
        "<xhtml:link rel=\"alternate\" hreflang=\"x-default\" href=\"https://docs.example.com/en/install/\"/>"
    ));
    // The Spanish copy of an untranslated page is not announced.
    assert!(
        !xml.contains("https://docs.example.com/es/guides/drain/"),
        "{xml}"
    );
    assert!(
        !xml.contains("lastmod"),
        "no date without SOURCE_DATE_EPOCH"
    );
    assert_eq!(
        read(&p, "robots.txt"),
        "User-agent: *\nAllow: /\n\nSitemap: https://docs.example.com/sitemap.xml\n"
    );
}

#[test]
fn dates_come_only_from_source_date_epoch() {
    let p = project();
    let root = p.root().to_string_lossy().into_owned();
    let o = basepress()
        .args(["build", "--root", &root])
        .env("SOURCE_DATE_EPOCH", "1717200000")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let xml = read(&p, "sitemap.xml");
    assert!(xml.contains("<lastmod>2024-06-01</lastmod>"), "{xml}");

    let o = basepress()
        .args(["build", "--root", &root])
        .env("SOURCE_DATE_EPOCH", "last tuesday")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("error[source-date-invalid]"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn every_page_names_its_translations_and_the_default() {
    let p = built();
    let en = read(&p, "en/install/index.html");
    for (lang, url) in [
        ("en", "/en/install/"),
        ("es", "/es/install/"),
        ("x-default", "/en/install/"),
    ] {
        assert!(
            en.contains(&format!(
                "<link rel=\"alternate\" hreflang=\"{lang}\" href=\"https://docs.example.com{url}\">"
            )),
            "{lang}: {en}"
        );
    }
    // The switcher maps headings only when both pages have the same ones.
    assert!(!en.contains("data-anchors"), "{en}");
    let drain = read(&p, "en/guides/drain/index.html");
    assert!(
        drain.contains("hreflang=\"es\" lang=\"es\" data-anchors=\"graceful-drain\""),
        "{drain}"
    );
    // An untranslated copy points at its original.
    let copy = read(&p, "es/guides/drain/index.html");
    assert!(copy
        .contains("<link rel=\"canonical\" href=\"https://docs.example.com/en/guides/drain/\">"));
    assert!(!copy.contains("hreflang=\"es\" href"), "{copy}");
    assert!(copy.contains(
        "<a href=\"/es/guides/drain/\" hreflang=\"es\" lang=\"es\" aria-current=\"page\">"
    ));
}

#[test]
fn the_sidebar_follows_the_folders() {
    let p = built();
    let html = read(&p, "en/guides/drain/index.html");
    let nav = &html[html.find("<nav id=\"sidebar\"").unwrap()..];
    let nav = &nav[..nav.find("</nav>").unwrap()];
    let home = nav.find(">Home</a>").unwrap();
    let guides = nav
        .find("<details open><summary><a href=\"/en/guides/\">Guides</a></summary>")
        .unwrap();
    let drain = nav
        .find("<a href=\"/en/guides/drain/\" aria-current=\"page\">Drain</a>")
        .unwrap();
    let install = nav.find(">Install</a>").unwrap();
    assert!(home < guides && guides < drain && drain < install, "{nav}");
    // Reading order follows the tree: Guides, then Drain, then Install.
    assert!(html.contains("rel=\"prev\" href=\"/en/guides/\""), "{html}");
    assert!(
        html.contains("rel=\"next\" href=\"/en/install/\""),
        "{html}"
    );
    // Pages without a level-1 heading get their title as one.
    assert!(html.contains("<h1>Drain</h1>"));
    let install = read(&p, "es/install/index.html");
    assert_eq!(install.matches("<h1").count(), 1, "{install}");
}

#[test]
fn generated_files_cannot_be_claimed_by_pages() {
    let p = project();
    p.write("content/es/versions.md", "---\ntitle: Versiones\n---\n");
    p.write("static/search/es/index.json", "{}");
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    let conflicts: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "output-conflict")
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(conflicts.len(), 2, "{report:#}");
    assert!(conflicts
        .iter()
        .any(|m| m.contains("/es/versions/index.html")));
    assert!(conflicts
        .iter()
        .any(|m| m.contains("/search/es/index.json")));

    // The folders only basepress writes, a base file named like an index
    // basepress writes, and paths that differ from a generated one only
    // in case: each refused, at the file.
    let p = project();
    for f in [
        "static/kubernetes/v9.9.9/base/files.txt",
        "static/kubernetes/v1.1.0/base/evil.yaml",
        "static/sitemaps/evil.xml",
        "static/Index.html",
        "static/kubernetes/Versions.txt",
    ] {
        p.write(f, "x\n");
    }
    p.write("bases/v1.1.0/Files.txt", "x\n");
    p.write(
        "bases/v1.1.0/kustomization.yaml",
        &format!("{KUSTOMIZATION}  - name: extra\n    files:\n      - Files.txt\n"),
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    let at = |rule: &str| -> Vec<String> {
        findings_of(&report, rule)
            .iter()
            .map(|f| f["location"]["file"].as_str().unwrap_or("-").to_string())
            .collect()
    };
    let mut conflicts = at("output-conflict");
    conflicts.sort();
    assert_eq!(
        conflicts,
        [
            "bases/v1.1.0/Files.txt",
            "static/kubernetes/Versions.txt",
            "static/kubernetes/v1.1.0/base/evil.yaml",
            "static/kubernetes/v9.9.9/base/files.txt",
            "static/sitemaps/evil.xml",
        ],
        "{report:#}"
    );
    assert_eq!(
        at("name-case-conflict"),
        ["static/Index.html"],
        "{report:#}"
    );

    // Links to generated pages resolve.
    let p = project();
    p.write(
        "content/en/install.md",
        "---\ntitle: Install\n---\n## Steps\n\nSee [versions](/en/versions/#v1.1.0) and [the sitemap](/sitemap.xml).\n",
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 0, "{report:#}");
}

#[test]
fn projects_replace_default_templates_and_assets() {
    let p = project();
    p.write(
        "templates/partials/footer.html",
        "<footer>© {{ site.title }} · {{ t.all_versions }}</footer>\n",
    );
    p.write("static/assets/style.css", "body { color: red }\n");
    p.write("static/robots.txt", "User-agent: *\nDisallow: /\n");
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read(&p, "assets/style.css"), "body { color: red }\n");
    for page in [
        "en/install/index.html",
        "es/versions/index.html",
        "404.html",
    ] {
        let html = read(&p, page);
        assert!(html.contains("<footer>© Test docs · "), "{page}: {html}");
    }
    assert_eq!(read(&p, "robots.txt"), "User-agent: *\nDisallow: /\n");
    assert!(read(&p, "assets/site.js").contains("index.json"));
    assert!(read(&p, "assets/syntax.css").contains(".hl-string"));
}

#[test]
fn a_site_below_a_path_prefixes_every_url() {
    let p = project();
    let site = SITE_YAML.replace("https://docs.example.com", "https://example.com/docs/");
    p.write("site.yaml", &site);
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = read(&p, "en/install/index.html");
    for needle in [
        "href=\"/docs/assets/style.css\"",
        "src=\"/docs/assets/site.js\"",
        "data-bundle=\"/docs/search/\"",
        "href=\"/docs/en/versions/#v1.1.0\"",
        "<link rel=\"canonical\" href=\"https://example.com/docs/en/install/\">",
    ] {
        assert!(html.contains(needle), "{needle}: {html}");
    }
    let not_found = read(&p, "404.html");
    assert!(not_found.contains("href=\"/docs/assets/style.css\""));
    assert!(not_found.contains("<a href=\"/docs/es/\">"));
    assert!(read(&p, "sitemap.xml").contains("<loc>https://example.com/docs/en/install/</loc>"));
    assert!(read(&p, "robots.txt").contains("Sitemap: https://example.com/docs/sitemap.xml"));
}

#[test]
fn pages_load_nothing_from_other_hosts() {
    let p = built();
    for (path, bytes) in tree(&p.out()) {
        if !(path.ends_with(".html") || path.ends_with(".css") || path.ends_with(".js")) {
            continue;
        }
        let text = String::from_utf8(bytes).unwrap();
        for attr in ["src=\"http", "src=\"//", "url(http", "url(//", "@import"] {
            assert!(!text.contains(attr), "{path} loads `{attr}`");
        }
        for line in text.lines().filter(|l| l.contains("rel=\"stylesheet\"")) {
            assert!(line.contains("href=\"/"), "{path}: {line}");
        }
    }
}

/// The script in the reader's browser folds and cuts a query the way the
/// index was made (render/search.rs), or a word the pages have would find
/// nothing: both sides run on the same texts, random ones from the
/// characters of Spanish, Portuguese and English docs, and must agree on
/// every word and joined run (`1.29.0`, `runner_drain_timeout_ms`).
#[test]
fn the_search_script_cuts_text_as_the_index_does() {
    if !have("node") {
        return;
    }
    use basepress::render::search::{fold, fold_map, tokens, Token};
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut texts: Vec<String> = [
        "La audiência, `RUNNER_DRAIN_TIMEOUT_MS` y v1.30.0.",
        "Terminación: 1.29.0-rc.1 kube-system a..b -c- v1-x",
        "whystack-agent:1.30.0 /kubernetes/v1.29.0/base/",
        // Letters NFD does not take apart, which the index transliterates.
        "Maßnahmen Œuvre Æther Øresund Łódź ǅ İstanbul ﬁle",
        "Установка агента Εγκατάσταση インストール 安装 التثبيت",
    ]
    .map(String::from)
    .to_vec();
    // One batch of generated texts (one run of the script), as
    // kustomize.rs does for kubectl.
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let strategy = "[aZ09 v._:/,;()`=ÁáéÉíóúüñÑçÇãõâêôàßœæøłЖжΩω日\n\t-]{0,40}";
    for _ in 0..2000 {
        texts.push(strategy.new_tree(&mut runner).unwrap().current());
    }
    let expected: Vec<Vec<String>> = texts
        .iter()
        .map(|t| {
            let folded = fold(t);
            let mut out = Vec::new();
            tokens(&folded, |tok| {
                out.push(match tok {
                    Token::Word(w) | Token::Joined(w) => w.to_string(),
                })
            });
            out
        })
        .collect();
    // The bundle's `fold` map: how the index folds what NFD alone does not.
    let map = fold_map(texts.iter().map(String::as_str));
    assert_eq!(map.get(&'ß').map(String::as_str), Some("ss"));
    assert!(!map.contains_key(&'á'), "NFD already folds it");
    let js = std::fs::read_to_string(repo().join("src/render/default/site.js")).unwrap();
    let start = js.find("  /* ---- Search ----").expect("the search part");
    let end = js.find("  function setUpSearch(form) {").expect("its end");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("texts.json"),
        serde_json::to_string(&serde_json::json!({"texts": texts, "fold": map})).unwrap(),
    )
    .unwrap();
    let script = format!(
        "var body = {{}};\n{}\nvar fs = require('fs');\n\
         var input = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));\n\
         process.stdout.write(JSON.stringify(input.texts.map(function (t) {{ return pieces(foldText(t, input.fold)); }})));\n",
        &js[start..end]
    );
    std::fs::write(dir.path().join("cut.js"), script).unwrap();
    let o = std::process::Command::new("node")
        .arg(dir.path().join("cut.js"))
        .arg(dir.path().join("texts.json"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let got: Vec<Vec<String>> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(got.len(), texts.len());
    for ((text, want), got) in texts.iter().zip(&expected).zip(&got) {
        assert_eq!(
            got, want,
            "{text:?}: the script and the index cut it differently"
        );
    }
}
