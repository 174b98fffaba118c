//! The site's search: one index per docs version and language, in the
//! folder [`layout::search_bundle_dir`] gives it (`/search/1.29/es/`),
//! which `/assets/site.js` queries in the reader's browser.
//!
//! An index is cut so that a query loads only what it needs:
//!
//! - `index.json`: the number of pages, the first word of each shard and
//!   the language's stop words (a few hundred bytes to a few KB);
//! - `s/N.json`: shard N, a run of the sorted words, each
//!   `[word, stem, postings]` (`[word, postings]` when the word is its own
//!   stem), cut at about [`SHARD_BYTES`];
//! - `p/N.json`: page N, for the results shown: its title, URL and each
//!   section's heading, anchor and text (the start of it, for excerpts).
//!
//! Words are folded as the script folds a query (accents removed,
//! lowercase) and split at anything but letters and digits; a word is
//! stemmed as written (before folding: the stemmers' rules have accents,
//! Portuguese `-ção`) with the Snowball stemmer of the page's language (Spanish,
//! Portuguese, English and a dozen more; other languages are not stemmed).
//! The browser needs no stemmer of its own: the script looks a query word
//! up among the indexed words to learn its stem (or, for a word the pages
//! never use, takes the longest indexed stem it starts with), then finds
//! the words of that stem and of every longer stem that begins with it
//! (`drenar`: `dren`, which finds `drena` and `drenaje`, stem `drenaj`).
//! Letters and digits joined by `.`, `_` or `-` are also kept
//! whole, unstemmed (`1.29.0`, `runner_drain_timeout_ms`, `kube-system`;
//! `v1.29.0` also as `1.29.0`), so that a version or a key is found
//! exactly.
//!
//! A posting list holds, for each page the word is on (as the gap from the
//! previous page), the number of its sections with the word, then each
//! such section as `8 × (gap from the page's previous such section) +
//! flags`: 1 when the word is in the section's heading, 2 when it is in
//! the page's title (given to the first section), 4 when it is in the
//! section's text. It is written as a string of base64url digits, five
//! bits of a number per digit (see [`write_postings`]): half the bytes of
//! a JSON list of the same numbers. Together with shards of about
//! [`SHARD_BYTES`], this keeps the first query of two words (index, the
//! shards of both words, and ten pages for the results) under 300 KB at
//! 10,000 pages, before compression.
//!
//! A bundle depends on nothing but its pages, so a build that reuses a docs
//! version (see `engine::cache`) takes its bundles' folder with its pages,
//! and `basepress serve` makes a version's bundles again from the
//! documents it keeps.

use super::OutFile;
use crate::model::document::Document;
use crate::model::layout;
use crate::model::site::{Page, Site};
use pagefind_stem::{Algorithm, Stemmer};
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The format of the index files, which the script checks.
pub const FORMAT: u32 = 2;
/// Words shorter than this are left out: they match too much to help.
const MIN_WORD: usize = 2;
/// Longer "words" are hashes and digests, which nobody types.
const MAX_WORD: usize = 32;
/// Longer joined runs are URLs and paths, which nobody types whole.
const MAX_JOINED: usize = 64;
/// The size a shard is cut at (its last entry may take it past).
pub const SHARD_BYTES: usize = 16 * 1024;
/// A posting's flag: the word is in the section's heading.
const IN_HEADING: u32 = 1;
/// A posting's flag: the word is in the page's title.
const IN_TITLE: u32 = 2;
/// A posting's flag: the word is in the section's text.
const IN_TEXT: u32 = 4;
/// The text of a section kept for excerpts, in bytes.
const EXCERPT_TEXT: usize = 1500;

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

/// Words too common to help a search, by language, folded.
fn stop_words(lang: &str) -> &'static [&'static str] {
    match primary(lang) {
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
        "fr" => &[
            "au", "aux", "avec", "ce", "ces", "dans", "de", "des", "du", "elle", "elles", "en",
            "est", "et", "eux", "il", "ils", "je", "la", "le", "les", "leur", "leurs", "lui", "ma",
            "mais", "me", "mes", "moi", "mon", "ne", "nos", "notre", "nous", "on", "ou", "par",
            "pas", "pour", "que", "qui", "sa", "se", "ses", "son", "sont", "sur", "ta", "te",
            "tes", "toi", "ton", "tu", "un", "une", "vos", "votre", "vous",
        ],
        _ => &[],
    }
}

/// `pt-BR` → `pt`.
fn primary(lang: &str) -> &str {
    lang.split(['-', '_']).next().unwrap_or(lang)
}

/// The Snowball stemmer of a language, if it has one.
fn stemmer(lang: &str) -> Option<Stemmer> {
    let algorithm = match primary(lang).to_ascii_lowercase().as_str() {
        "en" => Algorithm::English,
        "es" => Algorithm::Spanish,
        "pt" => Algorithm::Portuguese,
        "fr" => Algorithm::French,
        "de" => Algorithm::German,
        "it" => Algorithm::Italian,
        "nl" => Algorithm::Dutch,
        "da" => Algorithm::Danish,
        "sv" => Algorithm::Swedish,
        "no" | "nb" | "nn" => Algorithm::Norwegian,
        "fi" => Algorithm::Finnish,
        "ro" => Algorithm::Romanian,
        "ru" => Algorithm::Russian,
        "tr" => Algorithm::Turkish,
        "hu" => Algorithm::Hungarian,
        "ca" => Algorithm::Catalan,
        _ => return None,
    };
    Some(Stemmer::create(algorithm))
}

/// Text folded for the index: lowercase, accents and other marks
/// removed, every other character written in ASCII.
pub fn fold(text: &str) -> Cow<'_, str> {
    fold_with(text, |_, _| {})
}

/// [`fold`], telling `seen` each character that is not ASCII and what it
/// became.
fn fold_with(text: &str, mut seen: impl FnMut(char, &str)) -> Cow<'_, str> {
    if text.is_ascii() {
        match text.bytes().any(|b| b.is_ascii_uppercase()) {
            true => Cow::Owned(text.to_ascii_lowercase()),
            false => Cow::Borrowed(text),
        }
    } else {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            match c {
                c if c.is_ascii() => out.push(c.to_ascii_lowercase()),
                c => {
                    let at = out.len();
                    match deunicode::deunicode_char(c) {
                        Some(ascii) => out.extend(ascii.chars().map(|c| c.to_ascii_lowercase())),
                        None => out.push(' '),
                    }
                    seen(c, &out[at..]);
                }
            }
        }
        Cow::Owned(out)
    }
}

/// The characters of `texts` the search script must fold as the index
/// does, and how: the `fold` map of a bundle of those texts.
pub fn fold_map<'t>(texts: impl IntoIterator<Item = &'t str>) -> BTreeMap<char, String> {
    let mut seen = foldhash::HashSet::default();
    let mut map = BTreeMap::new();
    for t in texts {
        fold_with(t, |c, ascii| note_fold(&mut seen, &mut map, c, ascii));
    }
    map
}

/// Records in `map` how the index folds `c` (into `ascii`), the first
/// time it is `seen`, when the script would fold it otherwise.
fn note_fold(
    seen: &mut foldhash::HashSet<char>,
    map: &mut BTreeMap<char, String>,
    c: char,
    ascii: &str,
) {
    if seen.insert(c) && script_fold(c) != ascii {
        map.insert(c, ascii.to_string());
    }
}

/// What the search script makes of `c` before it applies the bundle's
/// `fold` map: `c.normalize("NFD")` without the combining accents
/// (U+0300 to U+036F), in lowercase.
fn script_fold(c: char) -> String {
    use unicode_normalization::UnicodeNormalization;
    std::iter::once(c)
        .nfd()
        .filter(|m| !('\u{300}'..='\u{36f}').contains(m))
        .flat_map(char::to_lowercase)
        .collect()
}

/// What folded text is cut into.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Token<'a> {
    /// A run of letters and digits, stemmed.
    Word(&'a str),
    /// Runs joined by `.`, `_` or `-`, kept whole.
    Joined(&'a str),
}

fn joiner(b: u8) -> bool {
    matches!(b, b'.' | b'_' | b'-')
}

/// The tokens of folded (ASCII) text, in order: each run of letters and
/// digits as a [`Token::Word`] (those of a usable length), and after the
/// runs of a joined group the group as a [`Token::Joined`] (and without
/// its leading `v` when a digit follows it).
pub fn tokens<'a>(folded: &'a str, mut emit: impl FnMut(Token<'a>)) {
    let bytes = folded.as_bytes();
    let n = bytes.len();
    let mut i = 0;
    while i < n {
        while i < n && !bytes[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let start = i;
        let mut joined = false;
        let mut run = i;
        while i < n {
            if bytes[i].is_ascii_alphanumeric() {
                i += 1;
            } else if joiner(bytes[i]) && i + 1 < n && bytes[i + 1].is_ascii_alphanumeric() {
                word(&folded[run..i], &mut emit);
                joined = true;
                i += 1;
                run = i;
            } else {
                break;
            }
        }
        if run < i {
            word(&folded[run..i], &mut emit);
        }
        if joined && i - start <= MAX_JOINED {
            let group = &folded[start..i];
            emit(Token::Joined(group));
            let b = group.as_bytes();
            if b[0] == b'v' && b[1].is_ascii_digit() {
                emit(Token::Joined(&group[1..]));
            }
        }
    }
}

fn word<'a>(w: &'a str, emit: &mut impl FnMut(Token<'a>)) {
    if (MIN_WORD..=MAX_WORD).contains(&w.len()) {
        emit(Token::Word(w));
    }
}

/// One indexed word: its stem and posting list.
struct Postings {
    stem: String,
    /// Where the word is: `(page, section × 8 + flags)`, in order, each
    /// section once. All but the last are kept as LEB128 numbers, the gap
    /// from the previous page then the section and flags: a bundle holds
    /// millions, and this takes a third of the memory of a list of pairs.
    earlier: Vec<u8>,
    /// The page of the last pair in `earlier`.
    earlier_page: u32,
    /// The last pair, whose flags may still grow.
    last: (u32, u32),
}

impl Postings {
    fn new(stem: String, at: (u32, u32)) -> Self {
        Postings {
            stem,
            earlier: Vec::new(),
            earlier_page: 0,
            last: at,
        }
    }

    /// Notes the word at `at`: the flags add up within a section.
    fn note(&mut self, at: (u32, u32)) {
        let last = &mut self.last;
        if last.0 == at.0 && last.1 / 8 == at.1 / 8 {
            last.1 |= at.1;
            return;
        }
        let (page, value) = std::mem::replace(last, at);
        leb128(&mut self.earlier, page - self.earlier_page);
        leb128(&mut self.earlier, value);
        self.earlier_page = page;
    }

    /// Every pair, in order, into `out` (cleared first).
    fn pairs(&self, out: &mut Vec<(u32, u32)>) {
        out.clear();
        let mut bytes = self.earlier.as_slice();
        let mut page = 0;
        while !bytes.is_empty() {
            page += read_leb128(&mut bytes);
            out.push((page, read_leb128(&mut bytes)));
        }
        out.push(self.last);
    }
}

fn leb128(out: &mut Vec<u8>, mut n: u32) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// The number at the start of `bytes` (written by [`leb128`]), moving past it.
fn read_leb128(bytes: &mut &[u8]) -> u32 {
    let mut n = 0;
    let mut shift = 0;
    while let Some((&b, rest)) = bytes.split_first() {
        *bytes = rest;
        n |= u32::from(b & 0x7f) << shift;
        shift += 7;
        if b < 0x80 {
            break;
        }
    }
    n
}

/// The words of one bundle and what they point to.
struct Words {
    stop: &'static [&'static str],
    stemmer: Option<Stemmer>,
    by_word: foldhash::HashMap<String, Postings>,
    /// Every character that is not ASCII seen in the text, and, for those
    /// the script folds otherwise than the index (`ß` → `ss`), the index's
    /// fold: the script applies it to a query first, so that both agree
    /// on every character the bundle has.
    seen: foldhash::HashSet<char>,
    fold: BTreeMap<char, String>,
}

impl Words {
    /// No words yet, for pages in `lang`.
    fn new(lang: &str) -> Words {
        Words {
            stop: stop_words(lang),
            stemmer: stemmer(lang),
            by_word: Default::default(),
            seen: Default::default(),
            fold: BTreeMap::new(),
        }
    }

    fn add(&mut self, page: u32, section: u32, flags: u32, text: &str) {
        let Self {
            stop,
            stemmer,
            by_word,
            seen,
            fold: fold_map,
        } = self;
        let folded = fold_with(text, |c, ascii| note_fold(seen, fold_map, c, ascii));
        // Where the text is, in the original, up to a place of the folded
        // one: moved forward only, when a new word is stemmed.
        let mut cursor = (0usize, 0usize);
        let ascii = text.is_ascii();
        tokens(&folded, |t| {
            let (w, stemmed) = match t {
                Token::Word(w) => (w, true),
                Token::Joined(w) => (w, false),
            };
            let at = (page, section * 8 + flags);
            // A stop word is never indexed, so a word found is not one:
            // only a word not seen yet is looked up in the (sorted) list.
            if let Some(p) = by_word.get_mut(w) {
                p.note(at);
                return;
            }
            if stemmed && stop.binary_search(&w).is_ok() {
                return;
            }
            // A word's stem is worked out once, when it is first seen, from
            // the word as written: the stemmers' rules have accents
            // (Portuguese `-ção`), which folding removes.
            let stem = match (stemmed, stemmer.as_ref()) {
                (true, Some(s)) if !ascii => {
                    let at = w.as_ptr() as usize - folded.as_ptr() as usize;
                    match written(text, &mut cursor, at, at + w.len()) {
                        Some(word) if word != w => {
                            fold_with(&s.stem(&word.to_lowercase()), |_, _| {}).into_owned()
                        }
                        _ => s.stem(w).into_owned(),
                    }
                }
                (true, Some(s)) => s.stem(w).into_owned(),
                _ => w.to_string(),
            };
            by_word.insert(w.to_string(), Postings::new(stem, at));
        });
    }
}

/// The part of `text` that folds into bytes `start..end` of its folded
/// form, found by moving `cursor` (a place in `text` and the matching
/// place in the folded text) forward; `None` when those bytes start or end
/// inside one character's folding.
fn written<'t>(
    text: &'t str,
    cursor: &mut (usize, usize),
    start: usize,
    end: usize,
) -> Option<&'t str> {
    let mut to = |target: usize| {
        while cursor.1 < target {
            let c = text[cursor.0..].chars().next()?;
            cursor.0 += c.len_utf8();
            cursor.1 += match c {
                c if c.is_ascii() => 1,
                c => deunicode::deunicode_char(c).map_or(1, str::len),
            };
        }
        (cursor.1 == target).then_some(cursor.0)
    };
    let from = to(start)?;
    let until = to(end)?;
    text.get(from..until)
}

fn json_str(out: &mut String, s: &str) {
    // A string always serialises.
    out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()));
}

/// The 64 digits of a posting string: base64url's, which JSON and URLs
/// carry as they are.
const DIGITS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// `n` as a variable-length number: five bits per digit, low bits first,
/// a digit of the upper half ([`DIGITS`] 32 to 63) when more follow.
fn write_number(out: &mut String, mut n: u32) {
    loop {
        let low = (n & 31) as usize;
        n >>= 5;
        if n == 0 {
            out.push(char::from(DIGITS[low]));
            return;
        }
        out.push(char::from(DIGITS[32 + low]));
    }
}

/// The posting string of `at`: for each page, the gap from the previous
/// page, the number of its sections with the word, then each such section
/// as `8 × (gap from the previous section of the page) + flags`, every
/// number written by [`write_number`], as a JSON string.
fn write_postings(out: &mut String, at: &[(u32, u32)]) {
    out.push('"');
    let mut previous = 0;
    let mut i = 0;
    while i < at.len() {
        let page = at[i].0;
        let end = i + at[i..].iter().take_while(|a| a.0 == page).count();
        write_number(out, page - previous);
        write_number(out, (end - i) as u32);
        let mut section = 0;
        for a in &at[i..end] {
            write_number(out, ((a.1 / 8 - section) << 3) | (a.1 & 7));
            section = a.1 / 8;
        }
        previous = page;
        i = end;
    }
    out.push('"');
}

/// The start of `text`, at most `max` bytes, cut at a space when there is
/// one near the end.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind(' ') {
        Some(space) if space > max / 2 => &text[..space],
        _ => &text[..end],
    }
}

/// The sections of a page, each as its heading title and anchor (empty
/// before the first heading) and its text.
fn page_sections<'a>(e: &Entry<'a>) -> Vec<(&'a str, &'a str, &'a str)> {
    let doc = e.doc;
    doc.sections
        .iter()
        .map(
            |section| match section.heading.and_then(|h| doc.headings.get(h)) {
                Some(h) => (h.title.as_str(), h.id.as_str(), section.text.as_str()),
                None => ("", "", section.text.as_str()),
            },
        )
        .collect()
}

/// The bundle of `entries` (one docs version's pages in one language, in
/// reading order; URLs without the prefix, which the script adds), as
/// files below `dir` (`/search/1.29/es/`), sorted by path. No pages, no
/// bundle.
pub fn bundle(dir: &str, entries: &[Entry]) -> Vec<OutFile> {
    let mut out = Vec::with_capacity(entries.len() + 8);
    bundle_into(dir, entries, &mut |f| out.push(f));
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// [`bundle`], each file given to `emit` as soon as it is made (a page's
/// file as soon as its words are indexed: together they are as large as
/// the pages' text, and need not wait for the shards).
fn bundle_into(dir: &str, entries: &[Entry], emit: &mut dyn FnMut(OutFile)) -> usize {
    let Some(lang) = entries.first().map(|e| e.lang) else {
        return 0;
    };
    let mut words = Words::new(lang);
    let mut count = 0;
    let mut fragment = String::new();
    for (p, e) in entries.iter().enumerate() {
        let page = page_sections(e);
        fragment.clear();
        fragment.push_str("{\"title\":");
        json_str(&mut fragment, e.title);
        fragment.push_str(",\"url\":");
        json_str(&mut fragment, e.url);
        fragment.push_str(",\"sections\":[");
        for (s, (title, anchor, text)) in page.iter().enumerate() {
            if s == 0 {
                words.add(p as u32, 0, IN_TITLE, e.title);
            }
            words.add(p as u32, s as u32, IN_HEADING, title);
            words.add(p as u32, s as u32, IN_TEXT, text);
            if s > 0 {
                fragment.push(',');
            }
            fragment.push('[');
            json_str(&mut fragment, title);
            fragment.push(',');
            json_str(&mut fragment, anchor);
            fragment.push(',');
            json_str(&mut fragment, cut(text, EXCERPT_TEXT));
            fragment.push(']');
        }
        fragment.push_str("]}\n");
        // A copy of its exact size: the buffer is used again.
        emit(OutFile::new(
            format!("{dir}p/{p}.json"),
            fragment.as_bytes().to_vec(),
        ));
        count += 1;
    }
    let mut sorted: Vec<(String, Postings)> = words.by_word.into_iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    // Each shard goes out when full, and each word's postings are freed
    // once written.
    let mut firsts: Vec<String> = Vec::new();
    let mut shard = String::new();
    let mut pairs = Vec::new();
    let mut emit_shard = |shard: &mut String, n: usize| {
        shard.push_str("]\n");
        emit(OutFile::new(
            format!("{dir}s/{n}.json"),
            shard.as_bytes().to_vec(),
        ));
        shard.clear();
    };
    for (word, postings) in sorted {
        if shard.len() >= SHARD_BYTES {
            emit_shard(&mut shard, firsts.len() - 1);
        }
        if shard.is_empty() {
            firsts.push(word.clone());
            shard.push('[');
        } else {
            shard.push(',');
        }
        shard.push('[');
        json_str(&mut shard, &word);
        if postings.stem != word {
            shard.push(',');
            json_str(&mut shard, &postings.stem);
        }
        shard.push(',');
        postings.pairs(&mut pairs);
        write_postings(&mut shard, &pairs);
        shard.push(']');
    }
    if !shard.is_empty() {
        emit_shard(&mut shard, firsts.len() - 1);
    }
    count += firsts.len();
    let meta = serde_json::json!({
        "format": FORMAT,
        "lang": lang,
        "pages": entries.len(),
        "shards": firsts,
        "stop": words.stop,
        "fold": words.fold,
    });
    emit(OutFile::new(
        format!("{dir}index.json"),
        format!("{meta}\n"),
    ));
    count += 1;
    count
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
/// reading order), made in parallel, each file below its bundle's
/// [`layout::search_bundle_dir`] given to `emit` as soon as its bundle is
/// made (in no set order). Returns how many files were emitted.
pub fn files_into(
    site: &Site,
    orders: &BTreeMap<(usize, &str), Vec<(&Page, &Document)>>,
    emit: &(dyn Fn(OutFile) + Sync),
) -> usize {
    let work: Vec<(String, Vec<Entry>)> = orders
        .iter()
        .map(|((v, lang), pages)| (layout::search_bundle_dir(site, *v, lang), entries(pages)))
        .collect();
    work.par_iter()
        .map(|(dir, entries)| bundle_into(dir, entries, &mut |f| emit(f)))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::document::{Heading, Section};

    proptest::proptest! {
        /// The packed posting list gives back, in order, the pairs a plain
        /// list would hold: one a section, its flags added up.
        #[test]
        fn packed_postings_keep_every_section_and_its_flags(
            steps in proptest::collection::vec((0u32..3, 0u32..3, 0u32..3), 1..300),
        ) {
            let (mut page, mut section) = (0u32, 0u32);
            let mut plain: Vec<(u32, u32)> = Vec::new();
            let mut packed: Option<Postings> = None;
            for (next_page, next_section, flag) in steps {
                if next_page > 0 {
                    page += next_page * 70;
                    section = 0;
                }
                section += next_section * 40;
                let at = (page, section * 8 + [IN_HEADING, IN_TITLE, IN_TEXT][flag as usize]);
                match plain.last_mut() {
                    Some(last) if last.0 == at.0 && last.1 / 8 == at.1 / 8 => last.1 |= at.1,
                    _ => plain.push(at),
                }
                match packed.as_mut() {
                    Some(p) => p.note(at),
                    None => packed = Some(Postings::new(String::new(), at)),
                }
            }
            let mut pairs = Vec::new();
            packed.expect("one step at least").pairs(&mut pairs);
            proptest::prop_assert_eq!(pairs, plain);
        }
    }

    fn all_tokens(text: &str) -> Vec<Token<'_>> {
        let mut out = Vec::new();
        tokens(text, |t| out.push(t));
        out
    }

    #[test]
    fn text_is_folded_and_cut_into_words_and_joined_runs() {
        let folded = fold("La audiência, `RUNNER_DRAIN_TIMEOUT_MS` y v1.30.0.\nFin-");
        assert_eq!(
            folded,
            "la audiencia, `runner_drain_timeout_ms` y v1.30.0.\nfin-"
        );
        use Token::*;
        assert_eq!(
            all_tokens(&folded),
            [
                Word("la"),
                Word("audiencia"),
                Word("runner"),
                Word("drain"),
                Word("timeout"),
                Word("ms"),
                Joined("runner_drain_timeout_ms"),
                Word("v1"),
                Word("30"),
                Joined("v1.30.0"),
                Joined("1.30.0"),
                Word("fin"),
            ]
        );
        assert_eq!(all_tokens("a..b -c- 1.x"), [Joined("1.x")]);
    }

    /// A word is stemmed as written, then folded: the stemmers' rules have
    /// accents (Portuguese `-ção`), so `atualização` and `atualizar` share
    /// a stem, as `actualización` and `actualizar` do.
    #[test]
    fn words_are_stemmed_before_they_are_folded() {
        let stem_of = |lang: &'static str, text: &str, word: &str| {
            let mut words = Words::new(lang);
            words.add(0, 0, IN_TEXT, text);
            words.by_word.get(word).map(|p| p.stem.clone())
        };
        for (lang, text, a, b) in [
            (
                "pt",
                "A atualização; ATUALIZAR já.",
                "atualizacao",
                "atualizar",
            ),
            (
                "pt",
                "Configuração e configurar",
                "configuracao",
                "configurar",
            ),
            (
                "es",
                "Actualización y actualizar",
                "actualizacion",
                "actualizar",
            ),
        ] {
            let (x, y) = (stem_of(lang, text, a), stem_of(lang, text, b));
            assert!(x.is_some() && x == y, "{lang} {a} {x:?} {b} {y:?}");
            assert!(x.as_deref().is_some_and(str::is_ascii), "{x:?}");
        }
        // Not one stem, but the noun's a start of the verb's, which a
        // query finds with it.
        let (noun, verb) = (
            stem_of("pt", "execução", "execucao").unwrap_or_default(),
            stem_of("pt", "executar", "executar").unwrap_or_default(),
        );
        assert!(noun.len() >= 3 && verb.starts_with(&noun), "{noun} {verb}");
        // A character that folds into several (`ß`, `æ`) keeps the others
        // in place.
        assert_eq!(
            stem_of("de", "Straße und Ærger: Strassen", "strassen"),
            stem_of("de", "Strassen", "strassen")
        );
    }

    #[test]
    fn stop_words_are_folded_and_sorted() {
        for lang in ["es", "pt", "en", "fr"] {
            let list = stop_words(lang);
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{lang}: not sorted");
            for w in list {
                assert_eq!(all_tokens(&fold(w)), [Token::Word(w)], "{lang}");
            }
        }
    }

    /// The numbers of a posting string, as the script reads them.
    fn decode(posting: &str) -> Vec<u32> {
        let (mut out, mut n, mut shift) = (Vec::new(), 0, 0);
        for b in posting.trim_matches('"').bytes() {
            let digit = DIGITS.iter().position(|&d| d == b).unwrap() as u32;
            n |= (digit & 31) << shift;
            shift += 5;
            if digit < 32 {
                out.push(n);
                (n, shift) = (0, 0);
            }
        }
        out
    }

    /// The postings that a posting string's numbers stand for.
    fn postings_of(numbers: &[u32]) -> Vec<(u32, u32)> {
        let (mut out, mut page, mut i) = (Vec::new(), 0, 0);
        while i < numbers.len() {
            page += numbers[i];
            let mut section = 0;
            for &v in &numbers[i + 2..i + 2 + numbers[i + 1] as usize] {
                section += v >> 3;
                out.push((page, section * 8 + (v & 7)));
            }
            i += 2 + numbers[i + 1] as usize;
        }
        out
    }

    #[test]
    fn postings_are_gaps_counts_and_sections() {
        let mut out = String::new();
        // Page 0: sections 0 (flag 1) and 0 (flag 4); page 3: section 0
        // (2); page 7: section 0 (0); page 40: sections 5 (4) and 9 (1).
        let at = [(0, 1), (0, 4), (3, 2), (7, 0), (40, 44), (40, 73)];
        write_postings(&mut out, &at);
        // 40 - 7 = 33 takes two digits: 1 + 32 ("h"), then 1 ("B").
        assert_eq!(out, "\"ACBEDBCEBAhBCsBhB\"");
        assert_eq!(decode(&out), [0, 2, 1, 4, 3, 1, 2, 4, 1, 0, 33, 2, 44, 33]);
    }

    fn doc(sections: &[(&str, &str, &str)]) -> Document {
        let mut d = Document::default();
        let mut headings = Vec::new();
        for (title, id, text) in sections {
            let heading = (!title.is_empty()).then(|| {
                headings.push(Heading {
                    level: 2,
                    id: id.to_string(),
                    title: title.to_string(),
                });
                headings.len() - 1
            });
            d.sections.push(Section {
                heading,
                text: text.to_string(),
            });
        }
        d.headings = headings.into();
        d
    }

    /// The file at `path` of a bundle, parsed.
    fn json_file(files: &[OutFile], path: &str) -> serde_json::Value {
        let file = files.iter().find(|f| f.path == path).expect(path);
        serde_json::from_slice(&file.bytes).unwrap()
    }

    fn shard_entries(files: &[OutFile]) -> Vec<serde_json::Value> {
        files
            .iter()
            .filter(|f| f.path.contains("/s/"))
            .flat_map(|f| {
                let v: serde_json::Value = serde_json::from_slice(&f.bytes).unwrap();
                v.as_array().unwrap().clone()
            })
            .collect()
    }

    #[test]
    fn words_are_stemmed_and_keys_kept_whole() {
        let a = doc(&[
            ("", "", "Cómo drenar el agente"),
            ("Drenaje", "drenaje", "RUNNER_DRAIN_TIMEOUT_MS vale 1.29.0"),
        ]);
        let entries = [Entry {
            title: "Parada",
            url: "/es/stop/",
            lang: "es",
            doc: &a,
        }];
        let files = bundle("/search/es/", &entries);
        let words = shard_entries(&files);
        let find = |w: &str| {
            words
                .iter()
                .find(|e| e[0] == w)
                .unwrap_or_else(|| panic!("{w} is not indexed: {words:?}"))
                .clone()
        };
        // Stemmed: the script matches a query's stem with every stem that
        // starts with it.
        assert_eq!(find("drenar")[1], "dren");
        assert_eq!(find("drenaje")[1], "drenaj");
        // In the heading of section 1: 8 × 1 + 1; in the text of section 0:
        // 4; in the title (section 0): 2.
        let numbers = |w: &str| decode(find(w)[2].as_str().unwrap());
        assert_eq!(numbers("drenaje"), [0, 1, 9]);
        assert_eq!(numbers("drenar"), [0, 1, 4]);
        assert_eq!(numbers("parada"), [0, 1, 2]);
        // Kept whole, its own stem.
        assert_eq!(find("runner_drain_timeout_ms").as_array().unwrap().len(), 2);
        assert_eq!(find("1.29.0").as_array().unwrap().len(), 2);
        assert!(words.iter().all(|e| e[0] != "el"), "a stop word is indexed");
        let meta = json_file(&files, "/search/es/index.json");
        assert_eq!(meta["pages"], 1);
        assert_eq!(meta["shards"].as_array().unwrap().len(), 1);
        let page = json_file(&files, "/search/es/p/0.json");
        assert_eq!(page["url"], "/es/stop/");
        assert_eq!(page["sections"][1][1], "drenaje");
    }

    #[test]
    fn a_large_index_is_cut_into_sorted_shards_and_is_the_same_each_time() {
        let text: String = (0..20_000).map(|i| format!("word{i} ")).collect();
        let d = doc(&[("", "", &text)]);
        let entries: Vec<Entry> = (0..3)
            .map(|_| Entry {
                title: "Page",
                url: "/en/page/",
                lang: "en",
                doc: &d,
            })
            .collect();
        let one = bundle("/search/en/", &entries);
        let two = bundle("/search/en/", &entries);
        assert!(
            one.len() == two.len()
                && one
                    .iter()
                    .zip(&two)
                    .all(|(a, b)| a.path == b.path && a.bytes == b.bytes)
        );
        let meta = json_file(&one, "/search/en/index.json");
        let firsts: Vec<&str> = meta["shards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(firsts.len() > 4, "{firsts:?}");
        assert!(firsts.windows(2).all(|w| w[0] < w[1]));
        for f in one.iter().filter(|f| f.path.contains("/s/")) {
            assert!(
                f.bytes.len() < SHARD_BYTES + 2048,
                "{} is {} bytes",
                f.path,
                f.bytes.len()
            );
        }
        // Each shard's words sort after its first word and before the next's.
        for (i, first) in firsts.iter().enumerate() {
            let v = json_file(&one, &format!("/search/en/s/{i}.json"));
            for e in v.as_array().unwrap() {
                let w = e[0].as_str().unwrap();
                assert!(w >= *first && firsts.get(i + 1).is_none_or(|next| w < *next));
            }
        }
        assert!(bundle("/search/en/", &[]).is_empty());
    }

    #[test]
    fn excerpt_text_is_cut_at_a_space() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("aaaa bbbb cccc", 11), "aaaa bbbb");
        assert_eq!(cut("ñññññ", 3), "ñ");
    }

    proptest::proptest! {
        #[test]
        fn a_posting_string_gives_back_its_postings(
            mut at in proptest::collection::vec((0u32..5000, 0u32..400 * 8), 0..60)
        ) {
            // Postings come by page, then section, a section once per page.
            at.sort_unstable();
            at.dedup_by_key(|a| (a.0, a.1 / 8));
            let mut out = String::new();
            write_postings(&mut out, &at);
            proptest::prop_assert!(out.bytes().all(|b| b == b'"' || DIGITS.contains(&b)));
            proptest::prop_assert_eq!(postings_of(&decode(&out)), at);
        }

        #[test]
        fn tokens_are_the_runs_and_joined_groups_of_any_text(text in "[a-z0-9 ._-]{0,40}") {
            let mut words = Vec::new();
            tokens(&text, |t| if let Token::Word(w) = t { words.push(w.to_string()) });
            let expected: Vec<String> = text
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| (MIN_WORD..=MAX_WORD).contains(&w.len()))
                .map(String::from)
                .collect();
            proptest::prop_assert_eq!(words, expected);
        }
    }
}
