//! The site's search: one Pagefind bundle per docs version and language,
//! in the folder [`layout::search_bundle_dir`] gives it
//! (`/pagefind/1.29/es/`), which `/assets/site.js` queries in the reader's
//! browser through the bundle's own `pagefind.js`.
//!
//! Pagefind (used here as a library) stems each language's words with its Snowball stemmer (Spanish,
//! Portuguese, English), cuts the index into chunks the browser loads only
//! for the words a query needs, and stores each page's text as a fragment
//! from which the browser makes excerpts with the matched words marked.
//! Every file of a bundle is named by its content, except `pagefind.js`,
//! its worker, the per-language WebAssembly and `pagefind-entry.json`.
//!
//! The pages are not given to Pagefind as their rendered HTML (with the
//! navigation, table of contents and footer around them) but as a small
//! document made from their analysed Markdown: the title, then each
//! section's heading (with its anchor, so that a result opens the page at
//! the matching heading) and text. That is all the index needs, it parses
//! quickly, and it lets `basepress serve` make a bundle again from the
//! documents it keeps.
//!
//! A bundle holds the pages of one docs version in one language, so
//! results are those of the reader's version and language without a
//! filter. A version's bundles depend on nothing but that version's pages:
//! a build that reuses a version (see `engine::cache`) takes its bundles'
//! folder with its pages, and an edit of one version indexes that version
//! again, alone. Bundles are made in parallel; one bundle per language
//! rather than one per version with every language measured smaller in
//! peak memory and faster on the 10,000-page corpus (README, Benchmarks).

use super::escape::escape_into;
use super::OutFile;
use crate::model::document::Document;
use crate::model::layout;
use crate::model::site::{Page, Site};
use rayon::prelude::*;
use std::collections::BTreeMap;

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
    pub doc: &'a Document,
}

/// The document Pagefind indexes for one page: its language, title and
/// each section under its heading.
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
    out.push_str("</title></head><body><main data-pagefind-body><h1 data-pagefind-meta=\"title\">");
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
/// as they are and the script adds the prefix), as files below `dir`
/// (`/pagefind/1.29/`), sorted by path. No pages, no bundle.
pub fn bundle(dir: &str, entries: &[Entry]) -> Result<Vec<OutFile>, String> {
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let docs: Vec<(String, String)> = entries
        .iter()
        .map(|e| (e.url.to_string(), page_html(e)))
        .collect();
    // Pagefind's interface is asynchronous (it runs on Tokio), on a
    // runtime of this thread's own. A caller already inside a Tokio
    // runtime (serve) cannot start one within it: there it runs on a
    // thread of its own. (Not always: Pagefind works on Rayon's threads,
    // and a Rayon thread waiting for a plain thread that waits for Rayon
    // would wait for ever.)
    let run = || -> Result<Vec<(String, Vec<u8>)>, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .map_err(|e| format!("cannot start the search indexer: {e}"))?;
        runtime.block_on(index(docs))
    };
    let files = if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|scope| {
            scope
                .spawn(run)
                .join()
                .unwrap_or_else(|_| Err("the search indexer failed unexpectedly".to_string()))
        })?
    } else {
        run()?
    };
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
        .map(|(name, bytes)| OutFile::new(format!("{dir}{name}"), bytes))
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

/// The entries of `pages` (one docs version's pages in one language, in
/// reading order).
fn entries<'a>(pages: &'a [(&'a Page, &'a Document)]) -> Vec<Entry<'a>> {
    pages
        .iter()
        .map(|(p, d)| Entry {
            title: &p.title,
            url: &p.url,
            lang: &p.lang,
            doc: d,
        })
        .collect()
}

/// The bundles of `orders` (each docs version's and language's pages, in
/// reading order), made in parallel: every file of each, below its
/// [`layout::search_bundle_dir`], sorted by path.
pub fn files(
    site: &Site,
    orders: &BTreeMap<(usize, &str), Vec<(&Page, &Document)>>,
) -> Result<Vec<OutFile>, String> {
    let work: Vec<(String, Vec<Entry>)> = orders
        .iter()
        .map(|((v, lang), pages)| (layout::search_bundle_dir(site, *v, lang), entries(pages)))
        .collect();
    let bundles: Vec<Result<Vec<OutFile>, String>> = work
        .par_iter()
        .map(|(dir, entries)| bundle(dir, entries))
        .collect();
    let mut out = Vec::new();
    for b in bundles {
        out.extend(b?);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
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
    fn page_documents_carry_language_and_anchors() {
        let d = doc(&[
            ("", "", "Intro <b>"),
            ("Drenar", "drenar", "RUNNER_DRAIN_TIMEOUT_MS"),
        ]);
        let html = page_html(&Entry {
            title: "Parada",
            url: "/es/stop/",
            lang: "es",
            doc: &d,
        });
        assert!(html.starts_with("<html lang=\"es\">"), "{html}");
        assert!(!html.contains("data-pagefind-filter"), "{html}");
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
                doc: &a,
            },
            Entry {
                title: "Drain",
                url: "/en/drain/",
                lang: "en",
                doc: &b,
            },
        ];
        let one = bundle("/pagefind/", &entries).unwrap();
        let two = bundle("/pagefind/", &entries).unwrap();
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
        assert!(bundle("/pagefind/", &[]).unwrap().is_empty());
        let elsewhere = bundle("/pagefind/1.29/", &entries).unwrap();
        assert!(elsewhere
            .iter()
            .all(|f| f.path.starts_with("/pagefind/1.29/")));
        assert_eq!(elsewhere.len(), one.len());
    }
}
