//! The site's search: a Pagefind bundle at `/pagefind/`, which
//! `/assets/site.js` queries in the reader's browser through the bundle's
//! own `pagefind.js`.
//!
//! Pagefind (used here as a library) splits the index by language, stems
//! each language's words with its Snowball stemmer (Spanish, Portuguese,
//! English), cuts the index into chunks the browser loads only for the
//! words a query needs, and stores each page's text as a fragment from
//! which the browser makes excerpts with the matched words marked. Every
//! file of the bundle is named by its content, except `pagefind.js`, its
//! worker, the per-language WebAssembly and `pagefind-entry.json`.
//!
//! The pages are not given to Pagefind as their rendered HTML (with the
//! navigation, table of contents and footer around them) but as a small
//! document made from their analysed Markdown: the title, then each
//! section's heading (with its anchor, so that a result opens the page at
//! the matching heading) and text. That is all the index needs, it parses
//! quickly, and it lets `basepress serve` make the bundle again from the
//! documents it keeps.
//!
//! Each page carries a `version` filter, its docs version's id (`1.29`,
//! `next`; [`DEFAULT_VERSION`] for a site without docs versions); the
//! script filters results to the version of the page the reader is on. Languages need no filter:
//! the script loads only the index of the page's language.

use super::escape::escape_into;
use super::OutFile;
use crate::model::document::Document;
use crate::model::layout;
use crate::model::site::{Page, Site};
use std::collections::BTreeMap;

/// The `version` filter of a page outside any docs version.
pub const DEFAULT_VERSION: &str = "current";

/// Files of Pagefind's bundle the site does not use: its own search
/// interfaces (the site has one) and the term highlighter.
const UNUSED: &[&str] = &[
    "pagefind-ui.js",
    "pagefind-ui.css",
    "pagefind-modular-ui.js",
    "pagefind-modular-ui.css",
    "pagefind-component-ui.js",
    "pagefind-component-ui.css",
    "pagefind-highlight.js",
];

/// What the index reads of one page.
#[derive(Clone, Copy)]
pub struct Entry<'a> {
    pub title: &'a str,
    /// Its URL, without the site's prefix.
    pub url: &'a str,
    /// Its language code (the index it goes into).
    pub lang: &'a str,
    /// Its docs version ([`DEFAULT_VERSION`] outside versioned docs).
    pub version: &'a str,
    pub doc: &'a Document,
}

/// The document Pagefind indexes for one page: its language, title,
/// version filter and each section under its heading.
pub fn page_html(e: &Entry) -> String {
    let mut out = String::with_capacity(
        256 + e
            .doc
            .sections
            .iter()
            .map(|s| s.text.len() + 64)
            .sum::<usize>(),
    );
    out.push_str("<html lang=\"");
    escape_into(&mut out, e.lang);
    out.push_str("\"><head><title>");
    escape_into(&mut out, e.title);
    out.push_str("</title></head><body><main data-pagefind-body data-pagefind-filter=\"version:");
    escape_into(&mut out, e.version);
    out.push_str("\"><h1 data-pagefind-meta=\"title\">");
    escape_into(&mut out, e.title);
    out.push_str("</h1>\n");
    for section in &e.doc.sections {
        if let Some(h) = section.heading.and_then(|h| e.doc.headings.get(h)) {
            // The page's own level-1 title is the <h1> above.
            if !(h.level == 1 && h.title == e.title) {
                let level = h.level.clamp(2, 6);
                out.push_str(&format!("<h{level} id=\""));
                escape_into(&mut out, &h.id);
                out.push_str("\">");
                escape_into(&mut out, &h.title);
                out.push_str(&format!("</h{level}>\n"));
            }
        }
        if !section.text.trim().is_empty() {
            out.push_str("<p>");
            escape_into(&mut out, &section.text);
            out.push_str("</p>\n");
        }
    }
    out.push_str("</main></body></html>");
    out
}

/// The bundle for `entries` (URLs without the prefix; results carry them
/// as they are and the script adds the prefix), as files below
/// [`layout::SEARCH_DIR`], sorted by path. A site without pages has no bundle.
pub fn bundle(entries: &[Entry]) -> Result<Vec<OutFile>, String> {
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let docs: Vec<(String, String)> = entries
        .iter()
        .map(|e| (e.url.to_string(), page_html(e)))
        .collect();
    // Pagefind's interface is asynchronous (it runs on Tokio). It runs on a
    // thread of its own, so that a caller already inside a Tokio runtime
    // (serve) does not start one within another.
    let files = std::thread::scope(|scope| {
        scope
            .spawn(|| -> Result<Vec<(String, Vec<u8>)>, String> {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .map_err(|e| format!("cannot start the search indexer: {e}"))?;
                runtime.block_on(index(docs))
            })
            .join()
            .unwrap_or_else(|_| Err("the search indexer failed unexpectedly".to_string()))
    })?;
    // The WebAssembly of each language indexed (by its stemmer's name, or
    // `unknown` for a language without one); Pagefind writes them all.
    let wasm: Vec<String> = files
        .iter()
        .find(|(name, _)| name == "pagefind-entry.json")
        .and_then(|(_, bytes)| serde_json::from_slice::<serde_json::Value>(bytes).ok())
        .and_then(|entry| {
            let languages = entry.get("languages")?.as_object()?.clone();
            Some(
                languages
                    .values()
                    .filter_map(|l| Some(format!("wasm.{}.pagefind", l.get("wasm")?.as_str()?)))
                    .collect(),
            )
        })
        .unwrap_or_default();
    let used = |name: &str| {
        !UNUSED.contains(&name) && (!name.starts_with("wasm.") || wasm.iter().any(|w| w == name))
    };
    let mut out: Vec<OutFile> = files
        .into_iter()
        .filter(|(name, _)| used(name))
        .map(|(name, bytes)| OutFile::new(format!("{}{name}", layout::SEARCH_DIR), bytes))
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Runs Pagefind on `(url, html)` documents; its files by path within the
/// bundle (`/`-separated).
async fn index(docs: Vec<(String, String)>) -> Result<Vec<(String, Vec<u8>)>, String> {
    use pagefind::api::PagefindIndex;
    use pagefind::options::PagefindServiceConfig;
    let config = PagefindServiceConfig::builder()
        .keep_index_url(false)
        .write_playground(false)
        .build();
    let mut index = PagefindIndex::new(Some(config)).map_err(|e| e.to_string())?;
    for (url, html) in docs {
        index
            .add_html_file(None, Some(url.clone()), html)
            .await
            .map_err(|e| format!("{url}: {e}"))?;
    }
    let files = index.get_files().await.map_err(|e| e.to_string())?;
    Ok(files
        .into_iter()
        .map(|f| {
            let name = f
                .filename
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            (name, f.contents)
        })
        .collect())
}

/// The `version` filter of a page of docs version `version` (an index in
/// `site.versions`).
pub fn version_of(site: &Site, version: usize) -> &str {
    site.versions
        .get(version)
        .map_or(DEFAULT_VERSION, |v| v.id.as_str())
}

/// The entries of the pages of every docs version and language, in
/// reading order.
pub fn entries<'a>(
    site: &'a Site,
    orders: &BTreeMap<(usize, &str), Vec<(&'a Page, &'a Document)>>,
) -> Vec<Entry<'a>> {
    orders
        .iter()
        .flat_map(|((version, _), pages)| {
            pages.iter().map(move |(p, d)| Entry {
                title: &p.title,
                url: &p.url,
                lang: &p.lang,
                version: version_of(site, *version),
                doc: d,
            })
        })
        .collect()
}

/// The bundle of the site's pages (`orders`: each docs version's and
/// language's pages, published versions only).
pub fn files(
    site: &Site,
    orders: &BTreeMap<(usize, &str), Vec<(&Page, &Document)>>,
) -> Result<Vec<OutFile>, String> {
    bundle(&entries(site, orders))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::document::{Heading, Section};

    fn doc(sections: &[(&str, &str, &str)]) -> Document {
        let mut d = Document::default();
        for (i, (title, id, text)) in sections.iter().enumerate() {
            let heading = (!title.is_empty()).then(|| {
                d.headings.push(Heading {
                    level: 2,
                    id: id.to_string(),
                    title: title.to_string(),
                });
                d.headings.len() - 1
            });
            let _ = i;
            d.sections.push(Section {
                heading,
                text: text.to_string(),
            });
        }
        d
    }

    #[test]
    fn page_documents_carry_language_version_and_anchors() {
        let d = doc(&[
            ("", "", "Intro <b>"),
            ("Drenar", "drenar", "RUNNER_DRAIN_TIMEOUT_MS"),
        ]);
        let html = page_html(&Entry {
            title: "Parada",
            url: "/es/stop/",
            lang: "es",
            version: "1.29",
            doc: &d,
        });
        assert!(html.starts_with("<html lang=\"es\">"), "{html}");
        assert!(
            html.contains("data-pagefind-filter=\"version:1.29\""),
            "{html}"
        );
        assert!(html.contains("<h2 id=\"drenar\">Drenar</h2>"), "{html}");
        assert!(html.contains("Intro &lt;b&gt;"), "{html}");
    }

    #[test]
    fn the_bundle_is_the_same_for_the_same_pages() {
        let a = doc(&[
            ("", "", "Cómo drenar el agente"),
            ("Identidad", "identidad", "1.29.0"),
        ]);
        let b = doc(&[
            ("", "", "Draining the agent"),
            ("Identity", "identity", "RUNNER_DRAIN_TIMEOUT_MS"),
        ]);
        let entries = [
            Entry {
                title: "Drenar",
                url: "/es/drain/",
                lang: "es",
                version: DEFAULT_VERSION,
                doc: &a,
            },
            Entry {
                title: "Drain",
                url: "/en/drain/",
                lang: "en",
                version: DEFAULT_VERSION,
                doc: &b,
            },
        ];
        let one = bundle(&entries).unwrap();
        let two = bundle(&entries).unwrap();
        let paths: Vec<&str> = one.iter().map(|f| f.path.as_str()).collect();
        assert!(paths.contains(&"/pagefind/pagefind.js"), "{paths:?}");
        assert!(
            paths.contains(&"/pagefind/pagefind-entry.json"),
            "{paths:?}"
        );
        assert!(
            paths.iter().any(|p| p.starts_with("/pagefind/fragment/")),
            "{paths:?}"
        );
        assert!(!paths.contains(&"/pagefind/pagefind-ui.js"), "{paths:?}");
        assert_eq!(one.len(), two.len());
        for (x, y) in one.iter().zip(&two) {
            assert_eq!(x.path, y.path);
            assert!(x.bytes == y.bytes, "{} differs between two runs", x.path);
        }
        assert!(bundle(&[]).unwrap().is_empty());
    }
}
