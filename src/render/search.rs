//! The search index of each language, `/LANG/search-index.json`, which
//! `/assets/site.js` queries in the reader's browser.
//!
//! Each heading opens a section (the text before a page's first heading is
//! a section of its own, found under the page's title). The index lists the
//! pages, the sections, every distinct word once, sorted, and for each word
//! the sections it appears in:
//!
//! ```json
//! {"version": 1,
//!  "pages": [["Instalación", "/es/installation/"]],
//!  "sections": [[0, "", ""], [0, "Descargar la base", "descargar-la-base"]],
//!  "words": ["base", "descargar"],
//!  "postings": [[1], [1]]}
//! ```
//!
//! A section is `[page, heading title, anchor]`; a posting list holds
//! section numbers, each written as the gap from the previous one, which
//! keeps the numbers short. Words are folded the way the script folds a
//! query: accents and other marks removed, lowercase, split at anything
//! that is not a letter or a digit, so `audiência` and `audiencia` meet.
//!
//! The most common words of Spanish, Portuguese and English (`de`, `the`)
//! are in nearly every section and would take a third of the index; they
//! are left out, and listed under `"stop"` so the script ignores them in a
//! query too.

use super::OutFile;
use crate::model::document::Document;
use crate::model::layout;
use crate::model::site::{Page, Site};
use rayon::prelude::*;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Words shorter than this are left out: they match too much to help.
const MIN_WORD: usize = 2;
/// Longer "words" are hashes and digests, which nobody types.
const MAX_WORD: usize = 32;

/// Site path of a language's index in a docs version (none: the latest).
pub fn index_path(lang: &str, version: Option<&str>) -> String {
    layout::search_index_path(lang, version)
}

/// Words too common to help a search, by language, folded.
fn stop_words(lang: &str) -> &'static [&'static str] {
    match lang.split('-').next().unwrap_or(lang) {
        "es" => &[
            "al", "como", "con", "cual", "cuando", "de", "del", "donde", "el", "en", "entre", "es",
            "esa", "ese", "eso", "esta", "este", "esto", "ha", "hay", "la", "las", "le", "les",
            "lo", "los", "mas", "me", "mi", "muy", "ni", "no", "nos", "para", "pero", "por", "que",
            "se", "si", "sin", "sobre", "son", "su", "sus", "te", "tu", "un", "una", "unas", "uno",
            "unos", "ya",
        ],
        "pt" => &[
            "ao", "aos", "as", "com", "como", "da", "das", "de", "do", "dos", "ela", "ele", "em",
            "entre", "essa", "esse", "esta", "este", "isso", "isto", "ja", "lhe", "mais", "mas",
            "me", "na", "nao", "nas", "nem", "no", "nos", "num", "numa", "os", "ou", "para",
            "pela", "pelo", "por", "que", "sao", "se", "sem", "seu", "seus", "so", "sua", "suas",
            "te", "tem", "um", "uma", "voce",
        ],
        "en" => &[
            "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from",
            "has", "have", "if", "in", "into", "is", "it", "its", "of", "on", "or", "so", "than",
            "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "was",
            "were", "what", "when", "which", "who", "will", "with", "you", "your",
        ],
        _ => &[],
    }
}

#[derive(Serialize)]
struct Index<'a> {
    version: u32,
    /// Words left out of the index, which a query ignores.
    stop: &'static [&'static str],
    /// `[title, url]`, the URL with the site's prefix.
    pages: Vec<(&'a str, String)>,
    /// `[page, heading title, anchor]`.
    sections: Vec<(usize, &'a str, &'a str)>,
    words: Vec<&'a str>,
    /// For each word, the gaps between the sections it is in.
    postings: Vec<Vec<usize>>,
}

/// Folds text into the words a query is matched against.
pub fn words(text: &str) -> impl Iterator<Item = Cow<'_, str>> + '_ {
    runs(text).flat_map(|w| {
        if w.is_ascii() {
            // Letters and digits only: folding would only lowercase it,
            // and most words are lowercase already.
            let keep = (MIN_WORD..=MAX_WORD).contains(&w.len());
            let word = match w.bytes().any(|b| b.is_ascii_uppercase()) {
                true => Cow::Owned(w.to_ascii_lowercase()),
                false => Cow::Borrowed(w),
            };
            return Folded::One(keep.then_some(word));
        }
        let words: Vec<Cow<str>> = deunicode::deunicode(w)
            .to_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| (MIN_WORD..=MAX_WORD).contains(&w.len()))
            .map(|w| Cow::Owned(w.to_string()))
            .collect();
        Folded::Many(words.into_iter())
    })
}

/// The runs of letters and digits of `text` (what splitting it at every
/// other character leaves), reading ASCII byte by byte.
fn runs(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut at = 0;
    // The length of the character at `at` when it is a letter or a digit.
    let word_char = move |at: usize| -> Result<usize, usize> {
        match bytes[at] {
            b if b.is_ascii() && b.is_ascii_alphanumeric() => Ok(1),
            b if b.is_ascii() => Err(1),
            _ => match text[at..].chars().next() {
                Some(c) if c.is_alphanumeric() => Ok(c.len_utf8()),
                Some(c) => Err(c.len_utf8()),
                None => Err(1),
            },
        }
    };
    std::iter::from_fn(move || {
        while at < bytes.len() {
            match word_char(at) {
                Ok(_) => break,
                Err(n) => at += n,
            }
        }
        let start = at;
        while at < bytes.len() {
            match word_char(at) {
                Ok(n) => at += n,
                Err(_) => break,
            }
        }
        (at > start).then(|| &text[start..at])
    })
}

/// The words one word of text folds into.
enum Folded<'a> {
    One(Option<Cow<'a, str>>),
    Many(std::vec::IntoIter<Cow<'a, str>>),
}

impl<'a> Iterator for Folded<'a> {
    type Item = Cow<'a, str>;

    fn next(&mut self) -> Option<Cow<'a, str>> {
        match self {
            Folded::One(w) => w.take(),
            Folded::Many(ws) => ws.next(),
        }
    }
}

/// The index of language `lang`: `pages` in reading order, each with its
/// rendered document.
pub fn index(site: &Site, lang: &str, pages: &[(&Page, &Document)]) -> String {
    let pages: Vec<Entry> = pages
        .iter()
        .map(|(p, d)| Entry {
            title: &p.title,
            url: &p.url,
            doc: d,
        })
        .collect();
    index_of(&site.config.path_prefix(), lang, &pages)
}

/// What the index reads of one page.
#[derive(Clone, Copy)]
pub struct Entry<'a> {
    pub title: &'a str,
    /// Its URL, without the site's prefix.
    pub url: &'a str,
    pub doc: &'a Document,
}

/// What the index holds of one page: each section's heading title and
/// anchor (empty before the first heading) and its distinct words, folded,
/// sorted, without the language's stop words; sections without words are
/// left out.
pub fn page_sections<'a>(
    lang: &str,
    page_title: &'a str,
    doc: &'a Document,
) -> Vec<(&'a str, &'a str, Vec<Cow<'a, str>>)> {
    let mut sections = section_words(stop_words(lang), page_title, doc);
    for (_, _, words) in &mut sections {
        words.sort_unstable();
        words.dedup();
    }
    sections
}

/// [`page_sections`] with each section's words in the order of the text,
/// repeats included.
fn section_words<'a>(
    stop: &[&str],
    page_title: &'a str,
    doc: &'a Document,
) -> Vec<(&'a str, &'a str, Vec<Cow<'a, str>>)> {
    let mut out = Vec::new();
    for section in &doc.sections {
        let (title, anchor) = match section.heading.and_then(|h| doc.headings.get(h)) {
            Some(h) => (h.title.as_str(), h.id.as_str()),
            None => ("", ""),
        };
        let heading_words = if title.is_empty() { page_title } else { title };
        let words: Vec<Cow<str>> = words(heading_words)
            .chain(words(&section.text))
            .filter(|w| !stop.contains(&w.as_ref()))
            .collect();
        if !words.is_empty() {
            out.push((title, anchor, words));
        }
    }
    out
}

/// [`index`] from what it reads: the site's prefix and each page's title,
/// URL and document, in reading order.
pub fn index_of(prefix: &str, lang: &str, pages: &[Entry]) -> String {
    let stop = stop_words(lang);
    // The words of each page, in parallel.
    let per_page: Vec<_> = pages
        .par_iter()
        .map(|p| section_words(stop, p.title, p.doc))
        .collect();
    let mut sections = Vec::new();
    // Sections are numbered in order, so a word seen again in the same
    // section finds its number already at the end of its list.
    let mut postings: foldhash::HashMap<&str, Vec<usize>> = Default::default();
    for (i, page) in per_page.iter().enumerate() {
        for (title, anchor, words) in page {
            let s = sections.len();
            sections.push((i, *title, *anchor));
            for w in words {
                let list = postings.entry(w.as_ref()).or_default();
                if list.last() != Some(&s) {
                    list.push(s);
                }
            }
        }
    }
    let mut words: Vec<&str> = postings.keys().copied().collect();
    words.sort_unstable();
    let index = Index {
        version: 1,
        stop,
        pages: pages
            .iter()
            .map(|p| (p.title, format!("{prefix}{}", p.url)))
            .collect(),
        sections,
        postings: words
            .iter()
            .map(|w| postings.get(w).map(|l| gaps(l)).unwrap_or_default())
            .collect(),
        words,
    };
    let mut json = serde_json::to_string(&index).unwrap_or_default();
    json.push('\n');
    json
}

/// `[3, 5, 9]` → `[3, 2, 4]`.
fn gaps(sorted: &[usize]) -> Vec<usize> {
    let mut prev = 0;
    sorted
        .iter()
        .map(|&n| {
            let gap = n - prev;
            prev = n;
            gap
        })
        .collect()
}

/// One index per language and docs version of the site.
pub fn files(
    site: &Site,
    orders: &BTreeMap<(usize, &str), Vec<(&Page, &Document)>>,
) -> Vec<OutFile> {
    // One language at a time (each is built in parallel), so that only
    // one language's words are in memory.
    orders
        .iter()
        .map(|((version, lang), pages)| {
            let segment = site.versions.get(*version).and_then(|v| v.segment());
            OutFile::new(index_path(lang, segment), index(site, lang, pages))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_folded_split_and_filtered() {
        let w: Vec<String> =
            words("La audiência, `RUNNER_DRAIN_TIMEOUT_MS` y Terminación: a 1.30.0")
                .map(String::from)
                .collect();
        assert_eq!(
            w,
            [
                "la",
                "audiencia",
                "runner",
                "drain",
                "timeout",
                "ms",
                "terminacion",
                "30"
            ]
        );
    }

    #[test]
    fn stop_words_are_folded_and_sorted() {
        for lang in ["es", "pt", "en"] {
            let list = stop_words(lang);
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{lang}: not sorted");
            for w in list {
                assert_eq!(words(w).collect::<Vec<_>>(), [*w], "{lang}");
            }
        }
    }

    #[test]
    fn posting_lists_are_gaps() {
        assert_eq!(gaps(&[3, 5, 9]), [3, 2, 4]);
        assert_eq!(gaps(&[0]), [0]);
    }

    fn split_runs(text: &str) -> Vec<&str> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect()
    }

    #[test]
    fn runs_are_what_splitting_at_other_characters_leaves() {
        for text in [
            "",
            "   ",
            "a",
            "Terminación: audiência, ñandú 1.30.0!",
            "x\u{1F600}y  \u{300}z 中文 ٣٤",
            "RUNNER_DRAIN_TIMEOUT_MS=30000 --flag",
        ] {
            assert_eq!(runs(text).collect::<Vec<_>>(), split_runs(text), "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn runs_match_split_on_any_text(text in "\\PC*") {
            proptest::prop_assert_eq!(runs(&text).collect::<Vec<_>>(), split_runs(&text));
        }
    }
}
