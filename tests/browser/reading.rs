//! What readers use besides the pages' text: search with stemming, exact
//! keys and excerpts; the theme button; tabs; the search shortcut; the
//! header on a phone; and an accessibility audit with axe-core of every
//! page template at desktop and phone widths.

use crate::harness::{have_browser, required, with_browser, Browser};
use crate::{DESKTOP, PHONE};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Types `query` in the search box of `page` and returns the results:
/// `[href, page title, heading, excerpt HTML]` each.
async fn search(b: &Browser, page: &str, query: &str) -> Vec<Value> {
    b.goto(page).await;
    b.until(
        "the script",
        "return !document.querySelector('form.search').hidden;",
    )
    .await;
    let set = format!(
        "const i = document.getElementById('search-input');
         i.focus(); i.value = {query:?}; i.dispatchEvent(new Event('input'));
         return true;"
    );
    b.js(&set).await;
    b.until(
        &format!("results for {query:?}"),
        "return !document.getElementById('search-results').hidden;",
    )
    .await;
    let v = b
        .js(
            "return Array.from(document.querySelectorAll('#search-results a')).map(a => [
               a.getAttribute('href'),
               (a.querySelector('.result-page') || {}).textContent || '',
               a.querySelector('.result-heading').textContent,
               a.querySelector('.result-excerpt').innerHTML]);",
        )
        .await;
    v.as_array().cloned().unwrap_or_default()
}

#[test]
fn search_stems_each_language_and_finds_keys_exactly() {
    if !have_browser() {
        return;
    }
    with_browser(DESKTOP.0, DESKTOP.1, |b: Arc<Browser>| async move {
        // Each query, the page a result must lead to, a word of its excerpt.
        for (page, query, lands, marked) in [
            ("/es/", "drenar", "/es/shutdown/", "dren"),
            ("/pt/", "drenar", "/pt/shutdown/", "dren"),
            ("/en/", "draining", "/en/shutdown/", "drain"),
            ("/es/", "identidades", "/es/identity-storage/", "identidad"),
            (
                "/en/",
                "RUNNER_DRAIN_TIMEOUT_MS",
                "/en/shutdown/",
                "runner_drain_timeout_ms",
            ),
            ("/en/", "1.29.0", "/en/", "1.29.0"),
        ] {
            let results = search(&b, page, query).await;
            assert!(!results.is_empty(), "{query}: no results");
            let lang = &page[..4];
            for r in &results {
                let href = r[0].as_str().unwrap_or_default();
                assert!(href.starts_with(lang), "{query}: {href} is not in {lang}");
            }
            let hit = results
                .iter()
                .find(|r| r[0].as_str().unwrap_or_default().starts_with(lands));
            let Some(hit) = hit else {
                panic!("{query}: no result on {lands}: {results:#?}");
            };
            let excerpt = hit[3].as_str().unwrap_or_default().to_lowercase();
            assert!(
                excerpt.contains("<mark>") && excerpt.contains(marked),
                "{query}: excerpt {excerpt:?} marks nothing like {marked:?}"
            );
        }
        // A result opens its page at the heading that matched.
        let results = search(&b, "/en/", "terminationGracePeriodSeconds").await;
        let href = results[0][0].as_str().unwrap_or_default().to_string();
        let (path, id) = href.split_once('#').expect("a result names its heading");
        b.click("#search-results a").await;
        b.until(
            "the result's page",
            &format!("return location.pathname === {path:?};"),
        )
        .await;
        let script = format!("return /^H[1-6]$/.test(document.getElementById({id:?}).tagName);");
        assert_eq!(b.js(&script).await, Value::Bool(true), "{href}");
    });
}

#[test]
fn the_shortcut_theme_and_tabs_work_and_are_remembered() {
    if !have_browser() {
        return;
    }
    with_browser(DESKTOP.0, DESKTOP.1, |b: Arc<Browser>| async move {
        b.goto("/en/next/attestation/").await;
        b.until(
            "the script",
            "return !document.querySelector('form.search').hidden;",
        )
        .await;
        // "/" focuses the search box.
        b.js("document.body.dispatchEvent(new KeyboardEvent('keydown', {key: '/', bubbles: true})); return true;")
            .await;
        let focused = b.js("return document.activeElement.id;").await;
        assert_eq!(focused, "search-input");

        // The theme: system, light, dark, kept across pages.
        let theme = "return document.documentElement.getAttribute('data-theme');";
        assert_eq!(b.js(theme).await, Value::Null);
        b.click("button.theme").await;
        assert_eq!(b.js(theme).await, "light");
        b.click("button.theme").await;
        assert_eq!(b.js(theme).await, "dark");
        let bg = "return getComputedStyle(document.body).backgroundColor;";
        assert_eq!(b.js(bg).await, "rgb(13, 17, 23)");

        // Tabs: one panel shown, the choice kept on the next page.
        let shown = "return Array.from(document.querySelectorAll('.tabs .tab-panel'))
                      .filter(p => !p.hidden).map(p => p.dataset.tab);";
        let first: Vec<Value> = b.js(shown).await.as_array().cloned().unwrap_or_default();
        assert_eq!(first.len(), 1, "{first:?}");
        assert_eq!(first[0], "bash");
        b.click(".tab-list button:nth-child(2)").await;
        assert_eq!(b.js(shown).await, serde_json::json!(["PowerShell"]));

        b.goto("/es/next/attestation/").await;
        b.until(
            "the script",
            "return !document.querySelector('form.search').hidden;",
        )
        .await;
        assert_eq!(b.js(theme).await, "dark");
        assert_eq!(b.js(shown).await, serde_json::json!(["PowerShell"]));
        let selected = b
            .js("return document.querySelector('.tab-list [aria-selected=true]').textContent;")
            .await;
        assert_eq!(selected, "PowerShell");
    });
}

#[test]
fn the_phone_header_stays_on_top() {
    if !have_browser() {
        return;
    }
    with_browser(PHONE.0, PHONE.1, |b: Arc<Browser>| async move {
        b.goto("/en/shutdown/").await;
        b.js("window.scrollTo(0, 1500); return true;").await;
        let top = b
            .js("return document.querySelector('header.top').getBoundingClientRect().top;")
            .await;
        assert_eq!(top.as_f64(), Some(0.0), "the header scrolled away");
    });
}

/// axe-core's script, from `tests/browser/node_modules` (`npm ci` there);
/// `None` (after saying why) where it is not installed, outside CI.
fn axe_source() -> Option<String> {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/browser/node_modules/axe-core/axe.min.js");
    match std::fs::read_to_string(&path) {
        Ok(s) => Some(s),
        Err(e) if required() => {
            panic!("axe-core is required when CI=true: {}: {e}", path.display())
        }
        Err(e) => {
            eprintln!(
                "skipping: {}: {e} (run `npm ci` in tests/browser)",
                path.display()
            );
            None
        }
    }
}

/// One page of each template, and a page with callouts, tabs and tables.
const AUDITED: &[&str] = &[
    "/es/",
    "/es/installation/",
    "/en/next/attestation/",
    "/pt/next/shutdown/",
    "/en/versions/",
    "/pt/no/such/page/",
];

async fn audit(b: &Browser, axe: &str, width: &str) -> Vec<String> {
    let mut found = Vec::new();
    for page in AUDITED {
        for dark in [false, true] {
            b.goto(page).await;
            let theme = if dark { "dark" } else { "light" };
            b.js(&format!(
                "document.documentElement.setAttribute('data-theme', '{theme}'); return true;"
            ))
            .await;
            b.js(&format!("{axe}\nreturn true;")).await;
            let run = "const done = arguments[0];
                axe.run(document, { resultTypes: ['violations'] }).then(r => done(
                  r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
                   .map(v => v.impact + ' ' + v.id + ': ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', '))
                )).catch(e => done(['axe failed: ' + e]));";
            let v = b.js_async(run).await;
            for item in v.as_array().into_iter().flatten() {
                found.push(format!(
                    "{page} ({width}, {theme}): {}",
                    item.as_str().unwrap_or_default()
                ));
            }
        }
    }
    found
}

#[test]
fn axe_finds_nothing_serious_on_any_template() {
    if !have_browser() {
        return;
    }
    let Some(axe) = axe_source() else {
        return;
    };
    for (w, h, name) in [
        (DESKTOP.0, DESKTOP.1, "desktop"),
        (PHONE.0, PHONE.1, "phone"),
    ] {
        let axe = axe.clone();
        with_browser(w, h, move |b: Arc<Browser>| async move {
            let found = audit(&b, &axe, name).await;
            assert!(found.is_empty(), "axe-core:\n{}", found.join("\n"));
        });
    }
}

/// `basepress serve` on a free loopback port, for the repository; stopped
/// when dropped.
struct Serve {
    child: std::process::Child,
    url: String,
}

impl Serve {
    fn start() -> Serve {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_basepress"))
            .args(["serve", "--root", env!("CARGO_MANIFEST_DIR"), "--port"])
            .arg(port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("basepress serve starts");
        let serve = Serve {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "serve did not listen");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        serve
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A reader going from page to page under `basepress serve` waits for
/// none: the pages left (kept by the browser for going back) hold no
/// connection to the server's reload events, so the seventh page does not
/// wait a minute for one of the six a browser allows to a host.
#[test]
fn serve_pages_load_one_after_another() {
    if !have_browser() {
        return;
    }
    let serve = Serve::start();
    let base = serve.url.clone();
    with_browser(DESKTOP.0, DESKTOP.1, |b: Arc<Browser>| async move {
        let pages = [
            "/en/",
            "/es/",
            "/pt/",
            "/en/installation/",
            "/en/health-probes/",
            "/en/egress/",
            "/en/secrets/",
            "/en/shutdown/",
            "/en/attestation/",
            "/en/container/",
            "/en/configuration/",
            "/es/installation/",
        ];
        for page in pages {
            let started = std::time::Instant::now();
            b.goto_url(&format!("{base}{page}")).await;
            let took = started.elapsed();
            assert!(
                took < std::time::Duration::from_secs(10),
                "{page} took {took:?}"
            );
            let title = b.js("return document.title").await;
            assert!(
                title.as_str().is_some_and(|t| !t.is_empty()),
                "{page}: {title}"
            );
        }
    });
    drop(serve);
}

/// Without the site's script (blocked, or failing to load), a phone still
/// has the navigation: the sidebar shows, and no menu button that does
/// nothing.
#[test]
fn without_its_script_a_phone_keeps_the_navigation() {
    if !have_browser() {
        return;
    }
    with_browser(PHONE.0, PHONE.1, |b: Arc<Browser>| async move {
        b.goto("/en/installation/").await;
        let shown = |css: &str| {
            format!("var e = document.querySelector('{css}'); return !!e && getComputedStyle(e).display !== 'none';")
        };
        // With the script: the menu button, and the sidebar behind it.
        assert_eq!(b.js(&shown("button.menu")).await, Value::Bool(true));
        assert_eq!(b.js(&shown(".sidebar")).await, Value::Bool(false));
        b.block(&["*site.js"]).await;
        b.goto("/en/installation/").await;
        assert_eq!(b.js(&shown(".sidebar")).await, Value::Bool(true));
        assert_eq!(b.js(&shown("button.menu")).await, Value::Bool(false));
    });
}
