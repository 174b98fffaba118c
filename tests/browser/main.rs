//! The repository's site in a real browser: headless Chromium, driven
//! through chromedriver with fantoccini, against the built site served on
//! loopback. Each test starts its own chromedriver and browser.
//!
//! These tests skip (with a message) where Chromium or chromedriver is
//! missing, and fail instead when CI=true.

mod harness;
mod reading;

use harness::{have_browser, server, site, with_browser, Browser};
use serde_json::Value;
use std::sync::Arc;

const DESKTOP: (u32, u32) = (1280, 900);
const PHONE: (u32, u32) = (390, 844);

/// `document.documentElement.lang`.
async fn html_lang(b: &Browser) -> String {
    b.js("return document.documentElement.lang;")
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The path and fragment of the current URL.
async fn location(b: &Browser) -> (String, String) {
    let url = b.client.current_url().await.expect("a URL");
    (
        url.path().to_string(),
        url.fragment().unwrap_or("").to_string(),
    )
}

/// Whether the element with `id` is a heading whose top is in the window.
async fn heading_in_view(b: &Browser, id: &str) -> bool {
    let script = format!(
        "const h = document.getElementById({id:?});
         if (!h || !/^H[1-6]$/.test(h.tagName)) return false;
         const top = h.getBoundingClientRect().top;
         return top >= 0 && top < window.innerHeight;"
    );
    b.js(&script).await == Value::Bool(true)
}

#[test]
fn the_language_switcher_keeps_the_page_and_the_section() {
    if !have_browser() {
        return;
    }
    with_browser(DESKTOP.0, DESKTOP.1, |b: Arc<Browser>| async move {
        b.goto("/es/installation/#descargar-la-base").await;
        assert_eq!(html_lang(&b).await, "es");
        assert!(heading_in_view(&b, "descargar-la-base").await);

        b.click(".languages a[hreflang='pt']").await;
        b.until(
            "the Portuguese page",
            "return document.documentElement.lang === 'pt';",
        )
        .await;
        assert_eq!(
            location(&b).await,
            ("/pt/installation/".into(), "baixar-a-base".into())
        );
        assert!(heading_in_view(&b, "baixar-a-base").await);
        let current = b
            .js("return document.querySelector('.sidebar a[aria-current]').getAttribute('href');")
            .await;
        assert_eq!(current, "/pt/installation/");

        // From the top of a page, the other language opens at its top.
        b.goto("/pt/shutdown/").await;
        b.click(".languages a[hreflang='en']").await;
        b.until(
            "the English page",
            "return document.documentElement.lang === 'en';",
        )
        .await;
        assert_eq!(location(&b).await, ("/en/shutdown/".into(), String::new()));
    });
}

/// Types `query` in the search box of `page`, follows the first result and
/// returns where it landed.
async fn search_and_follow(b: &Browser, page: &str, query: &str) -> (String, String) {
    b.goto(page).await;
    let input = b
        .client
        .find(fantoccini::Locator::Css("#search-input"))
        .await
        .expect("the search box");
    input.click().await.expect("focus the search box");
    input.send_keys(query).await.expect("type a query");
    b.until(
        &format!("results for {query:?}"),
        "return !!document.querySelector('#search-results:not([hidden]) a');",
    )
    .await;
    let href = b
        .js("return document.querySelector('#search-results a').getAttribute('href');")
        .await;
    let href = href.as_str().unwrap_or_default().to_string();
    assert!(
        href.contains('#'),
        "{query}: the result {href} names no heading"
    );
    b.click("#search-results a").await;
    let (path, _) = href.split_once('#').unwrap_or((&href, ""));
    let want = path.to_string();
    b.until(
        &format!("the page of {href}"),
        &format!("return location.pathname === {want:?} && document.readyState === 'complete';"),
    )
    .await;
    location(b).await
}

#[test]
fn search_finds_a_word_and_lands_on_its_heading() {
    if !have_browser() {
        return;
    }
    with_browser(DESKTOP.0, DESKTOP.1, |b: Arc<Browser>| async move {
        for (page, query, section_has) in [
            ("/en/installation/", "drain", "drain"),
            ("/es/installation/", "drenaje", "drenaje"),
            ("/es/", "audiência", "audiencia"),
            ("/pt/", "audiencia", "audiência"),
        ] {
            let (path, fragment) = search_and_follow(&b, page, query).await;
            let lang = &page[1..3];
            assert!(path.starts_with(&format!("/{lang}/")), "{query}: {path}");
            assert!(!fragment.is_empty(), "{query}: no fragment");
            assert!(
                heading_in_view(&b, &fragment).await,
                "{query}: #{fragment} is not a heading in view on {path}"
            );
            // The section under that heading has the word.
            let script = format!(
                "const h = document.getElementById({fragment:?});
                 let text = h.textContent, n = h.nextElementSibling;
                 while (n && !/^H[1-6]$/.test(n.tagName)) {{ text += ' ' + n.textContent; n = n.nextElementSibling; }}
                 return text.toLowerCase();"
            );
            let text = b.js(&script).await;
            let text = text.as_str().unwrap_or_default();
            assert!(
                text.contains(section_has),
                "{query}: section #{fragment} of {path} lacks {section_has:?}"
            );
        }
    });
}

#[test]
fn the_copy_button_copies_exactly_the_code() {
    if !have_browser() {
        return;
    }
    with_browser(DESKTOP.0, DESKTOP.1, |b: Arc<Browser>| async move {
        b.goto("/es/installation/").await;
        let blocks = b
            .js("return document.querySelectorAll('pre.code').length;")
            .await;
        let buttons = b
            .js("return document.querySelectorAll('.code-block > button.copy').length;")
            .await;
        assert_eq!(blocks, buttons, "one copy button per code block");

        b.click(".code-block button.copy").await;
        b.until(
            "the copied text",
            "return document.querySelector('.code-block button.copy').hasAttribute('data-copied');",
        )
        .await;
        let copied = b
            .js("return document.querySelector('.code-block button.copy').getAttribute('data-copied');")
            .await;
        let code = b
            .js("return document.querySelector('.code-block pre.code code').textContent;")
            .await;
        assert_eq!(copied, code);
        let copied = copied.as_str().unwrap_or_default();
        assert!(
            copied.starts_with("VERSION=1.30.0   # the image tag"),
            "{copied}"
        );
        assert!(
            copied.ends_with("do curl -fsSL -o \"base/$f\" \"$BASE/$f\"; done\n"),
            "{copied}"
        );
        assert!(
            !copied.contains('<') && !copied.contains("&amp;"),
            "{copied}"
        );
        b.until(
            "the button to say so",
            "return document.querySelector('.code-block button.copy').textContent === 'Copiado';",
        )
        .await;
    });
}

#[test]
fn the_versions_page_lists_every_version_and_its_files_resolve() {
    if !have_browser() {
        return;
    }
    let published =
        std::fs::read_to_string(site().join("kubernetes/versions.txt")).expect("versions.txt");
    let mut expected: Vec<String> = published.lines().map(str::to_string).collect();
    expected.reverse();
    with_browser(DESKTOP.0, DESKTOP.1, move |b: Arc<Browser>| async move {
        b.goto("/es/versions/").await;
        // (the page may still be loading when goto returns on a busy machine)
        b.until(
            "the versions page to be there",
            "return document.querySelectorAll('section.version h2').length > 0;",
        )
        .await;
        let listed = b
            .js("return [...document.querySelectorAll('section.version h2')].map(h => h.id);")
            .await;
        assert_eq!(listed, serde_json::json!(expected), "newest first");
        let latest = b
            .js("return document.querySelector('section.version.latest h2').id;")
            .await;
        assert_eq!(latest, serde_json::json!(expected[0]));

        // Every file link answers 200, fetched by the page itself.
        let statuses = b
            .js_async(
                "const done = arguments[0];
                 const links = [...document.querySelectorAll('section.version table.files a')];
                 Promise.all(links.map(a => fetch(a.href).then(r => [a.getAttribute('href'), r.status])))
                   .then(done, e => done(String(e)));",
            )
            .await;
        let statuses = statuses.as_array().expect("a list of statuses").clone();
        for v in &expected {
            for f in ["files.txt", "SHA256SUMS", "kustomization.yaml"] {
                let href = format!("/kubernetes/{v}/base/{f}");
                assert!(
                    statuses.iter().any(|s| s[0] == href.as_str()),
                    "{href} is not linked"
                );
            }
        }
        for s in &statuses {
            assert_eq!(s[1], 200, "{s}");
        }
    });
}

#[test]
fn screenshots_at_desktop_and_phone_widths() {
    if !have_browser() {
        return;
    }
    with_browser(DESKTOP.0, DESKTOP.1, |b: Arc<Browser>| async move {
        b.goto("/es/installation/").await;
        let width = b.js("return window.innerWidth;").await;
        assert_eq!(width, DESKTOP.0);
        let sidebar = b
            .js("return getComputedStyle(document.getElementById('sidebar')).display;")
            .await;
        assert_ne!(sidebar, "none", "the sidebar shows on a desktop");
        b.screenshot("installation-desktop").await;
        b.goto("/es/versions/").await;
        b.screenshot("versions-desktop").await;
    });
    with_browser(PHONE.0, PHONE.1, |b: Arc<Browser>| async move {
        b.goto("/es/installation/").await;
        let width = b.js("return window.innerWidth;").await;
        assert_eq!(width, PHONE.0);
        let overflow = b
            .js("return document.documentElement.scrollWidth - window.innerWidth;")
            .await;
        assert_eq!(overflow, 0, "the page scrolls sideways on a phone");
        let hidden = b
            .js("return getComputedStyle(document.getElementById('sidebar')).display;")
            .await;
        assert_eq!(hidden, "none", "the navigation folds into the menu");
        b.screenshot("installation-phone").await;

        b.click("button.menu").await;
        let shown = b
            .js("return getComputedStyle(document.getElementById('sidebar')).display;")
            .await;
        assert_ne!(shown, "none", "the menu button opens the navigation");
        let expanded = b
            .js("return document.querySelector('button.menu').getAttribute('aria-expanded');")
            .await;
        assert_eq!(expanded, "true");
        b.screenshot("installation-phone-menu").await;
    });
}

#[test]
fn the_404_page_works_at_any_depth() {
    if !have_browser() {
        return;
    }
    with_browser(DESKTOP.0, DESKTOP.1, |b: Arc<Browser>| async move {
        b.goto("/pt/no/such/page/here/").await;
        let styled = b
            .js("return getComputedStyle(document.querySelector('header.top')).position;")
            .await;
        assert_eq!(styled, "sticky", "the stylesheet loads from a deep URL");
        let first = b
            .js("return document.querySelector('.not-found li').getAttribute('lang');")
            .await;
        assert_eq!(first, "pt", "the language of the URL comes first");
        let index = b
            .js("return document.querySelector('form.search').getAttribute('data-language');")
            .await;
        assert_eq!(index, "pt", "the search looks in that language's index");
        let home = b
            .js("return document.querySelector('a.brand').getAttribute('href');")
            .await;
        assert_eq!(home, "/pt/", "the header leads to that language's start");
        // The page speaks the URL's language: to screen readers, in its
        // search and in its links to the versions.
        assert_eq!(html_lang(&b).await, "pt");
        let placeholder = b
            .js("return document.querySelector('#search-input').getAttribute('placeholder');")
            .await;
        assert_eq!(placeholder, "Pesquisar…");
        let results = b
            .js("return document.querySelector('form.search').getAttribute('data-results');")
            .await;
        assert_eq!(results, "resultados");
        let versions = b
            .js("return document.querySelector('footer a').getAttribute('href');")
            .await;
        assert_eq!(versions, "/pt/versions/");
        b.click(".not-found li[lang='pt'] a").await;
        b.until(
            "the Portuguese start page",
            "return location.pathname === '/pt/';",
        )
        .await;
        assert_eq!(html_lang(&b).await, "pt");
        // A missing URL of an older docs version searches that version
        // (once the page's script has run: the page before it may still
        // be leaving).
        b.goto("/es/1.29/no/such/page/").await;
        b.until(
            "the 404 page of /es/1.29/",
            "return location.pathname === '/es/1.29/no/such/page/' && document.readyState === 'complete';",
        )
        .await;
        let bundle = b
            .js("return document.querySelector('form.search').getAttribute('data-bundle');")
            .await;
        assert_eq!(bundle, "/search/1.29/", "the search looks in that version");
    });
}

#[test]
fn no_request_leaves_loopback() {
    if !have_browser() {
        return;
    }
    with_browser(DESKTOP.0, DESKTOP.1, |b: Arc<Browser>| async move {
        let mut urls = Vec::new();
        for page in ["/", "/es/installation/", "/en/versions/", "/pt/nowhere/"] {
            b.goto(page).await;
            b.until("the page", "return document.readyState === 'complete';")
                .await;
            urls.extend(b.requested_urls().await);
        }
        // The search index is fetched on first use.
        let input = b
            .client
            .find(fantoccini::Locator::Css("#search-input"))
            .await
            .expect("the search box");
        input.send_keys("base").await.expect("type");
        b.until(
            "results",
            "return !!document.querySelector('#search-results:not([hidden]) li');",
        )
        .await;
        urls.extend(b.requested_urls().await);

        let base = format!("{}/", server().url);
        for needed in [
            "assets/style.css",
            "assets/site.js",
            "assets/syntax.css",
            // The search index of the page's docs version (the latest)
            // and language (the last page is a Portuguese 404).
            "search/1.30/pt/index.json",
        ] {
            assert!(
                urls.iter().any(|u| u == &format!("{base}{needed}")),
                "{needed} was not requested: {urls:#?}"
            );
        }
        let elsewhere: Vec<&String> = urls.iter().filter(|u| !u.starts_with(&base)).collect();
        assert!(
            elsewhere.is_empty(),
            "requests off loopback: {elsewhere:#?}"
        );
    });
}

#[test]
fn docs_versions_picker_banner_canonical_and_search() {
    if !have_browser() {
        return;
    }
    with_browser(DESKTOP.0, DESKTOP.1, |b: Arc<Browser>| async move {
        // The picker goes to the same page in the other version.
        b.goto("/es/installation/#descargar-la-base").await;
        assert_eq!(
            b.js("return !!document.querySelector('.version-banner');")
                .await,
            Value::Bool(false),
            "the latest has no banner"
        );
        b.click("details.versions summary").await;
        b.click("details.versions a[href='/es/1.29/installation/']")
            .await;
        b.until(
            "the 1.29 page",
            "return location.pathname === '/es/1.29/installation/' && document.readyState === 'complete';",
        )
        .await;
        // An old version says so, links the latest page and names it canonical.
        let banner = b
            .js("const p = document.querySelector('.version-banner'); return p ? [p.textContent, p.querySelector('a').getAttribute('href')] : null;")
            .await;
        assert!(
            banner[0].as_str().unwrap_or_default().contains("1.29"),
            "{banner}"
        );
        assert_eq!(banner[1], "/es/installation/", "{banner}");
        let canonical = b
            .js("return document.querySelector('link[rel=canonical]').href;")
            .await;
        assert!(
            canonical
                .as_str()
                .unwrap_or_default()
                .ends_with("/es/installation/"),
            "{canonical}"
        );
        // The language switcher stays in 1.29.
        b.click(".languages a[hreflang='pt']").await;
        b.until(
            "the Portuguese 1.29 page",
            "return location.pathname === '/pt/1.29/installation/';",
        )
        .await;

        // A page 1.28 does not have: the picker leads to 1.28's home, and says so.
        b.goto("/es/multiple-agents/").await;
        let entry = b
            .js("const a = [...document.querySelectorAll('details.versions a')].find(a => a.textContent.startsWith('1.28')); return a ? [a.getAttribute('href'), !!a.querySelector('.missing')] : null;")
            .await;
        assert_eq!(entry, serde_json::json!(["/es/1.28/", true]));

        // Next is unreleased and out of search engines.
        b.goto("/es/next/installation/").await;
        let next = b
            .js("return [!!document.querySelector('.version-banner'), document.querySelector('meta[name=robots]')?.content || ''];")
            .await;
        assert_eq!(next[0], Value::Bool(true), "{next}");
        assert!(
            next[1].as_str().unwrap_or_default().contains("noindex"),
            "{next}"
        );

        // Search stays in the reader's version.
        let (path, _) = search_and_follow(&b, "/es/1.29/installation/", "drenaje").await;
        assert!(path.starts_with("/es/1.29/"), "{path}");
        let bundle = b
            .js("return document.querySelector('form.search').getAttribute('data-bundle');")
            .await;
        assert_eq!(bundle.as_str(), Some("/search/1.29/"), "{bundle}");
    });
}
