//! Reading a page's Markdown into a [`Document`]: its headings with their
//! ids, its links with where they are, its fenced code blocks and the text
//! of each section. The HTML is written later, by the render stage, from
//! the same Markdown and this document (see `render::html`).

use crate::model::document::{
    CodeBlock, Document, Heading, Headings, Link, RepeatedId, Section, UndefinedReference,
};
use pulldown_cmark::{
    BrokenLink, CodeBlockKind, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd,
};
use std::collections::{HashMap, HashSet};

/// The Markdown extensions pages may use; rendering parses with the same.
pub fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_GFM
}

/// Turns heading text into an id: lowercase ASCII words joined by `-`,
/// accents removed (`Terminación` → `terminacion`).
pub fn slugify(text: &str) -> String {
    let s = slug::slugify(text);
    if s.is_empty() {
        "section".to_string()
    } else {
        s
    }
}

/// The ids the default templates give elements of every page: a
/// heading's generated id never takes one (`## Main` is `main-1`).
pub const TEMPLATE_IDS: &[&str] = &[
    "main",
    "sidebar",
    "search-hint",
    "search-input",
    "search-results",
    "search-status",
];

/// The ids of a page's headings, unique: explicit ones (`{#id}`) as
/// written, generated ones from the heading's text with `-1`, `-2`… added
/// to the ones already taken.
struct Ids {
    used: HashSet<String>,
    /// For each generated base id, the next suffix worth trying: every
    /// smaller one is taken already, and taken ids are never released, so
    /// a page of many identical headings costs linear time.
    next: HashMap<String, usize>,
}

impl Ids {
    fn new(explicit: HashSet<String>) -> Self {
        Ids {
            used: explicit,
            next: HashMap::new(),
        }
    }

    fn unique(&mut self, base: String) -> String {
        if self.used.insert(base.clone()) {
            return base;
        }
        let n = self.next.entry(base.clone()).or_insert(1);
        loop {
            let id = format!("{base}-{n}");
            *n += 1;
            if self.used.insert(id.clone()) {
                return id;
            }
        }
    }
}

/// The first word of a fence's info string and its `key=value` words.
pub fn info_words(kind: &CodeBlockKind) -> (String, Vec<(String, String)>) {
    let info = match kind {
        CodeBlockKind::Fenced(info) => info.as_ref(),
        CodeBlockKind::Indented => "",
    };
    let mut words = info.split_whitespace().peekable();
    // Languages are named in any case (```YAML): one spelling for all. A
    // first word with `=` is an attribute: the block names no language.
    let lang = words
        .next_if(|w| !w.contains('='))
        .unwrap_or("")
        .to_ascii_lowercase();
    let attrs = words
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches(['"', '\'']).to_string()))
        .collect();
    (lang, attrs)
}

/// What is being read when an event comes.
enum Inside {
    Text,
    /// A heading: its level, explicit id (and where the heading starts)
    /// and text so far.
    Heading(HeadingLevel, Option<(String, (usize, usize))>, String),
    /// A code block being read.
    Code {
        lang: String,
        attrs: Vec<(String, String)>,
        code: String,
        /// Where it starts: its line, and the characters before its lines.
        at: (usize, usize),
        /// Whether its text has started.
        started: bool,
        /// An indented block (no fence).
        indented: bool,
    },
}

/// Reads `body`, whose first line is line `first_line` of its file.
pub fn analyze(body: &str, first_line: usize) -> Document {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(body.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    // Columns count characters, as editors and rustc do, not bytes. Events
    // come in source order, mostly: the characters are counted on from the
    // last offset of the same line, so a long line of many links costs
    // its length once.
    let last = std::cell::Cell::new((usize::MAX, 0, 0));
    let position = |offset: usize| {
        let idx = line_starts.partition_point(|&s| s <= offset) - 1;
        let (last_line, last_offset, last_column) = last.get();
        let (from, counted) = if last_line == idx && last_offset <= offset {
            (last_offset, last_column)
        } else {
            (line_starts[idx], 0)
        };
        let column = counted
            + body
                .get(from..offset)
                .map_or(offset - from, |t| t.chars().count());
        last.set((idx, offset, column));
        (first_line + idx, column + 1)
    };
    // Generated ids avoid every explicit one, even of a later heading: they
    // are given once the whole page is read.
    let mut explicit: Vec<Option<(String, (usize, usize))>> = Vec::new();
    let mut headings: Vec<Heading> = Vec::new();
    let mut doc = Document {
        sections: vec![Section::default()],
        ..Document::default()
    };
    let mut inside = Inside::Text;
    // Whether the next text starts a block (written on a line of its own,
    // so that text of two blocks never reads as one line).
    let mut block = true;
    // The HTML block being read: its text, and where each of its pieces
    // starts in it and in the body (a block inside a list or quote comes
    // in pieces, one a line, without the container's marks).
    let mut html = String::new();
    let mut pieces: Vec<(usize, usize)> = Vec::new();
    let raw_links = |text: &str, pieces: &[(usize, usize)], doc: &mut Document| {
        let (links, ids) = html_links(text);
        doc.html_ids.extend(ids);
        for (at, dest) in links {
            let k = pieces.partition_point(|&(start, _)| start <= at).max(1) - 1;
            let (start, from) = pieces.get(k).copied().unwrap_or_default();
            let (line, column) = position(from + (at - start));
            doc.links.push(Link {
                dest,
                line,
                column,
                raw_html: true,
            });
        }
    };
    // Reference links whose label is not defined: `[text][label]` and
    // `[text][]` are meant as links (`[text]` alone is often just text).
    let undefined = std::cell::RefCell::new(Vec::new());
    let note_undefined = |link: BrokenLink<'_>| {
        let meant = matches!(link.link_type, LinkType::Reference | LinkType::Collapsed);
        // `a[i][j]`, `m[0][1]`: brackets right after a word index it.
        let indexing = body[..link.span.start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || matches!(c, ']' | ')' | '_'));
        if meant && !indexing && !link.reference.starts_with('^') {
            undefined
                .borrow_mut()
                .push((link.span.start, link.reference.to_string()));
        }
        None
    };
    let parser = Parser::new_with_broken_link_callback(body, options(), Some(note_undefined));
    for (event, range) in parser.into_offset_iter() {
        match &event {
            Event::Html(t) => {
                pieces.push((html.len(), range.start));
                html.push_str(t);
            }
            Event::InlineHtml(t) => raw_links(t, &[(0, range.start)], &mut doc),
            Event::End(TagEnd::HtmlBlock) => {
                raw_links(&html, &pieces, &mut doc);
                html.clear();
                pieces.clear();
            }
            _ => {}
        }
        match (&mut inside, event) {
            (Inside::Text, Event::Start(Tag::Heading { level, id, .. })) => {
                let id = id.map(|i| (i.to_string(), position(range.start)));
                inside = Inside::Heading(level, id, String::new());
            }
            (Inside::Heading(level, id, title), Event::End(TagEnd::Heading(_))) => {
                doc.sections.push(Section {
                    heading: Some(headings.len()),
                    text: String::new(),
                });
                explicit.push(id.take());
                headings.push(Heading {
                    level: heading_level(*level),
                    // The slug of the text, until ids are given below.
                    id: slugify(title),
                    title: title.trim().to_string(),
                });
                inside = Inside::Text;
            }
            (Inside::Heading(_, _, title), Event::Text(t) | Event::Code(t)) => {
                title.push_str(&t);
            }
            (Inside::Text, Event::Start(Tag::CodeBlock(kind))) => {
                let (lang, attrs) = info_words(&kind);
                let (line, column) = position(range.start);
                inside = Inside::Code {
                    lang,
                    attrs,
                    code: String::new(),
                    at: (line, column - 1),
                    started: false,
                    indented: matches!(kind, CodeBlockKind::Indented),
                };
            }
            (
                Inside::Code {
                    code,
                    at,
                    started,
                    indented,
                    ..
                },
                Event::Text(t),
            ) => {
                if !*started {
                    // The code starts on the line its first text does. A
                    // fenced block's lines start where its fence does, after
                    // the marks of the list items and quotes it is in; an
                    // indented block's, where its first text does.
                    let (line, column) = position(range.start);
                    *at = (line, if *indented { column - 1 } else { at.1 });
                    *started = true;
                }
                code.push_str(&t);
            }
            (
                Inside::Code {
                    lang,
                    attrs,
                    code,
                    at,
                    started,
                    ..
                },
                Event::End(TagEnd::CodeBlock),
            ) => {
                let code_block = CodeBlock {
                    lang: std::mem::take(lang),
                    attrs: std::mem::take(attrs),
                    code: std::mem::take(code),
                    // An empty block: the line after its fence.
                    line: if *started { at.0 } else { at.0 + 1 },
                    indent: at.1,
                };
                // A block of its own, and what follows starts another.
                block = true;
                add_text(&mut doc, &code_block.code, &mut block);
                doc.code_blocks.push(code_block);
                block = true;
                inside = Inside::Text;
            }
            (Inside::Code { .. }, _) => {}
            // A footnote's definition is published with its label as id.
            (_, Event::Start(Tag::FootnoteDefinition(label))) => {
                doc.html_ids.push(label.to_string());
            }
            (_, Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. })) => {
                let (line, column) = position(range.start);
                doc.links.push(Link {
                    dest: dest_url.to_string(),
                    line,
                    column,
                    raw_html: false,
                });
            }
            (Inside::Text, Event::Text(t) | Event::Code(t)) => add_text(&mut doc, &t, &mut block),
            (Inside::Text, Event::SoftBreak | Event::HardBreak | Event::InlineHtml(_)) => {
                add_text(&mut doc, " ", &mut block)
            }
            (
                Inside::Text,
                Event::End(
                    TagEnd::Paragraph
                    | TagEnd::Item
                    | TagEnd::TableCell
                    | TagEnd::BlockQuote(_)
                    | TagEnd::HtmlBlock
                    | TagEnd::FootnoteDefinition,
                ),
            ) => block = true,
            _ => {}
        }
    }
    for (at, label) in undefined.take() {
        let (line, column) = position(at);
        doc.undefined_references.push(UndefinedReference {
            label,
            line,
            column,
        });
    }
    // An explicit id must be the page's only element with it: not a
    // heading's before, an element of every page's template (`main`), raw
    // HTML's (`<a id="x">`) or a footnote's, where links to it would land.
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (id, (line, column)) in explicit.iter().flatten() {
        let given_by = match first.get(id.as_str()) {
            Some(&first_line) => Some(format!("the heading on line {first_line}")),
            None if TEMPLATE_IDS.contains(&id.as_str()) => {
                Some("an element the default templates put on every page".to_string())
            }
            None if doc.html_ids.contains(id) => {
                Some("an element of the page's HTML or a footnote".to_string())
            }
            None => {
                first.insert(id, *line);
                None
            }
        };
        if let Some(given_by) = given_by {
            doc.repeated_ids.push(RepeatedId {
                id: id.clone(),
                line: *line,
                column: *column,
                given_by,
            });
        }
    }
    // Generated ids avoid the ids the page has already: explicit ones,
    // raw HTML's, footnotes', and the default templates'.
    let mut taken: HashSet<String> = first.into_keys().map(str::to_string).collect();
    taken.extend(doc.html_ids.iter().cloned());
    taken.extend(TEMPLATE_IDS.iter().map(|id| id.to_string()));
    let mut ids = Ids::new(taken);
    for (h, id) in headings.iter_mut().zip(explicit) {
        h.id = match id {
            Some((id, _)) => id,
            None => ids.unique(std::mem::take(&mut h.id)),
        };
    }
    doc.headings = Headings::new(headings);
    doc.html_ids.sort_unstable();
    doc.html_ids.dedup();
    // Documents stay in memory until the site is written: no spare capacity.
    for s in &mut doc.sections {
        s.text.shrink_to_fit();
    }
    doc
}

/// The destinations of the URL attributes of the tags in a piece of raw
/// HTML (`href`, `src`, `poster`, and each URL of a `srcset`), each with
/// the offset of its value, and the ids the tags give (`id`, and `name` on
/// an `<a>`). Comments are skipped; `&amp;` in a value is read as `&`; an
/// empty value (the page itself, in HTML) is left out.
fn html_links(html: &str) -> (Vec<(usize, String)>, Vec<String>) {
    let b = html.as_bytes();
    let space = |c: u8| c.is_ascii_whitespace();
    let mut out = Vec::new();
    let mut ids = Vec::new();
    let mut i = 0;
    while let Some(lt) = memchr::memchr(b'<', &b[i..]) {
        let mut j = i + lt + 1;
        if b[j..].starts_with(b"!--") {
            i = memchr::memmem::find(&b[j..], b"-->").map_or(b.len(), |e| j + e + 3);
            continue;
        }
        if !b.get(j).is_some_and(u8::is_ascii_alphabetic) {
            i = j;
            continue;
        }
        let tag_start = j;
        while j < b.len() && !space(b[j]) && b[j] != b'>' && b[j] != b'/' {
            j += 1;
        }
        let tag_name = &html[tag_start..j];
        let anchor_tag = tag_name.eq_ignore_ascii_case("a");
        // The text of these is no markup: `<a href>` in a script's string
        // is no link.
        let raw_text = ["script", "style", "textarea", "title"]
            .iter()
            .find(|t| tag_name.eq_ignore_ascii_case(t));
        // Attributes, up to the end of the tag.
        loop {
            while j < b.len() && (space(b[j]) || b[j] == b'/') {
                j += 1;
            }
            if j >= b.len() || b[j] == b'>' {
                break;
            }
            let name_start = j;
            while j < b.len() && !space(b[j]) && !matches!(b[j], b'=' | b'>' | b'/') {
                j += 1;
            }
            let name = &html[name_start..j];
            while j < b.len() && space(b[j]) {
                j += 1;
            }
            if b.get(j) != Some(&b'=') {
                continue;
            }
            j += 1;
            while j < b.len() && space(b[j]) {
                j += 1;
            }
            // The value, and where reading goes on after it.
            let (start, end, next) = match b.get(j) {
                Some(&q) if q == b'"' || q == b'\'' => {
                    let end = memchr::memchr(q, &b[j + 1..]).map_or(b.len(), |e| j + 1 + e);
                    (j + 1, end, (end + 1).min(b.len()))
                }
                _ => {
                    let end = b[j..]
                        .iter()
                        .position(|&c| space(c) || c == b'>')
                        .map_or(b.len(), |e| j + e);
                    (j, end, end)
                }
            };
            j = next;
            let value = &html[start..end];
            let is = |attr: &str| name.eq_ignore_ascii_case(attr);
            if is("href") || is("src") || is("poster") {
                if !value.trim().is_empty() {
                    out.push((start, decode_entities(value.trim())));
                }
            } else if is("srcset") && !value.contains("data:") {
                // `URL [descriptor], URL [descriptor]…`
                let mut at = 0;
                for candidate in value.split(',') {
                    let lead = candidate.len() - candidate.trim_start().len();
                    if let Some(url) = candidate.split_whitespace().next() {
                        out.push((start + at + lead, decode_entities(url)));
                    }
                    at += candidate.len() + 1;
                }
            } else if (is("id") || (anchor_tag && is("name"))) && !value.is_empty() {
                ids.push(decode_entities(value));
            }
        }
        i = j;
        if let Some(name) = raw_text {
            // To its end tag (`</script`, in any case), or the text's end.
            let closes = |at: &usize| {
                b[at + 1..].starts_with(b"/")
                    && b.get(at + 2..at + 2 + name.len())
                        .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()))
            };
            i = memchr::memchr_iter(b'<', &b[j..])
                .map(|e| j + e)
                .find(closes)
                .unwrap_or(b.len());
        }
    }
    (out, ids)
}

/// An attribute value as a browser reads it: character references
/// (`&amp;`, `&#47;`, `&#x2F;`, and the other few a URL or id may hold)
/// replaced; anything else is left as written.
fn decode_entities(value: &str) -> String {
    if !value.contains('&') {
        return value.to_string();
    }
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let decoded = rest.find(';').filter(|&end| end <= 10).and_then(|end| {
            let name = &rest[1..end];
            let c = match name {
                "amp" => Some('&'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "lt" => Some('<'),
                "gt" => Some('>'),
                _ => {
                    let number = name.strip_prefix('#')?;
                    let code = match number.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => number.parse().ok()?,
                    };
                    char::from_u32(code)
                }
            }?;
            Some((c, end + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Adds text to the section being read: on a new line when it starts a
/// block (`block`, which it clears), else right after the text before.
fn add_text(doc: &mut Document, text: &str, block: &mut bool) {
    if let Some(s) = doc.sections.last_mut() {
        if *block && !s.text.is_empty() && !s.text.ends_with('\n') {
            s.text.push('\n');
        }
        s.text.push_str(text);
    }
    *block = false;
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_ids_are_slugs_and_unique() {
        let d = analyze(
            "# Instalación\n\n## Paso 1\n\n## Paso 1\n\n## Otra {#paso-1-1}\n",
            1,
        );
        let ids: Vec<_> = d.headings.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["instalacion", "paso-1", "paso-1-2", "paso-1-1"]);
    }

    #[test]
    fn reference_links_without_a_definition_are_recorded_where_they_start() {
        let d = analyze(
            "See [the guide][guia] and [Install][].\n\n- [x] done, [maybe] text\n\n![logo][img] [ok][def] [^1]\n`[code][span]` a[i][j] m[0][1]\n\n[def]: install.md\n",
            3,
        );
        let at: Vec<_> = d
            .undefined_references
            .iter()
            .map(|r| (r.label.as_str(), r.line, r.column))
            .collect();
        assert_eq!(at, [("guia", 3, 5), ("Install", 3, 27), ("img", 7, 1)]);
        assert_eq!(d.links.len(), 1, "the defined one is a link: {:?}", d.links);
    }

    #[test]
    fn a_repeated_explicit_id_is_recorded_where_its_heading_is() {
        let d = analyze(
            "## Uno {#x}\n\n- item\n\n  ## Dos {#x}\n\nSetext {#x}\n---\n\n## Tres {#y}\n",
            5,
        );
        let ids: Vec<_> = d.headings.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["x", "x", "x", "y"]);
        let at: Vec<_> = d
            .repeated_ids
            .iter()
            .map(|r| (r.id.as_str(), r.line, r.column, r.given_by.as_str()))
            .collect();
        let first = "the heading on line 5";
        assert_eq!(at, [("x", 9, 3, first), ("x", 11, 1, first)]);
        assert!(analyze("## A {#a}\n\n## A\n", 1).repeated_ids.is_empty());
        // An id an element of every page has, raw HTML's or a footnote's.
        let d = analyze(
            "## Uno {#main}\n\n<a id=\"old\"></a>\n\n## Dos {#old}\n\nx[^fn]\n\n## Tres {#fn}\n\n[^fn]: n\n",
            1,
        );
        let at: Vec<_> = d
            .repeated_ids
            .iter()
            .map(|r| (r.id.as_str(), r.line, r.given_by.as_str()))
            .collect();
        assert_eq!(
            at,
            [
                (
                    "main",
                    1,
                    "an element the default templates put on every page"
                ),
                ("old", 5, "an element of the page's HTML or a footnote"),
                ("fn", 9, "an element of the page's HTML or a footnote"),
            ]
        );
    }

    #[test]
    fn many_identical_headings_take_linear_time() {
        let body = "## Same\n\n".repeat(20_000);
        let d = analyze(&body, 1);
        assert_eq!(d.headings.len(), 20_000);
        assert_eq!(d.headings[19_999].id, "same-19999");
        let unique: HashSet<_> = d.headings.iter().map(|h| &h.id).collect();
        assert_eq!(unique.len(), 20_000);
    }

    #[test]
    fn generated_ids_skip_footnotes_raw_html_and_the_templates() {
        let doc = analyze(
            "## Notes\n\n## Main\n\n<a id=\"setup\"></a>\n\n## Setup\n\n## Search results\n\nx[^notes]\n\n[^notes]: n\n",
            1,
        );
        let ids: Vec<&str> = doc.headings.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["notes-1", "main-1", "setup-1", "search-results-1"]);
    }

    /// Every literal id of the default templates is in [`TEMPLATE_IDS`].
    #[test]
    fn template_ids_are_the_default_templates_ids() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/render/default");
        let mut found = Vec::new();
        for entry in walkdir::WalkDir::new(dir) {
            let entry = entry.unwrap();
            if !entry.file_type().is_file() {
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap();
            for part in text.split(" id=\"").skip(1) {
                let id = part.split('"').next().unwrap_or_default();
                if !id.contains("{{") {
                    found.push(id.to_string());
                }
            }
        }
        assert!(!found.is_empty());
        for id in found {
            assert!(TEMPLATE_IDS.contains(&id.as_str()), "{id}");
        }
    }

    #[test]
    fn generated_ids_skip_ones_taken_by_other_headings() {
        let d = analyze("## A 1\n\n## A\n\n## A\n\n## A\n", 1);
        let ids: Vec<_> = d.headings.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["a-1", "a", "a-2", "a-3"]);
    }

    #[test]
    fn links_keep_their_source_line() {
        let d = analyze("intro\n\nsee [x](a.md#b) and\n[y](/z)\n", 10);
        assert_eq!(d.links.len(), 2);
        assert_eq!((d.links[0].line, d.links[0].column), (12, 5));
        assert_eq!(d.links[1].line, 13);
        assert_eq!(d.links[0].dest, "a.md#b");
    }

    #[test]
    fn links_in_raw_html_are_links_too() {
        let body = "Intro <a href=\"a.md#b\">a</a> and <img src='/i/x.svg' alt=\"x\">.\n\n\
                    <div class=\"figure\">\n  <img\n    width=600\n    src=../i/y.svg>\n\
                    <!-- <a href=\"gone.md\"> -->\n  <a HREF=\"/q?a=1&amp;b=2\" href=\"\">q</a>\n</div>\n\n\
                    - item <a href=c.md>c</a>\n\n\
                    ```html\n<a href=\"in-code.md\">\n```\n";
        let d = analyze(body, 1);
        let got: Vec<_> = d
            .links
            .iter()
            .map(|l| (l.dest.as_str(), l.line, l.column, l.raw_html))
            .collect();
        assert_eq!(
            got,
            [
                ("a.md#b", 1, 16, true),
                ("/i/x.svg", 1, 44, true),
                ("../i/y.svg", 6, 9, true),
                ("/q?a=1&b=2", 8, 12, true),
                ("c.md", 11, 16, true),
            ]
        );
    }

    #[test]
    fn attribute_values_are_read_as_browsers_read_them() {
        assert_eq!(
            decode_entities("&#47;en&#x2F;a?x=1&amp;y=2"),
            "/en/a?x=1&y=2"
        );
        assert_eq!(
            decode_entities("a&b &unknown; &#xZZ; &"),
            "a&b &unknown; &#xZZ; &"
        );
        let (links, ids) = html_links("<a href=\"&#47;en&#47;m12&#47;\" id=\"x&amp;y\">");
        assert_eq!(links, [(9, "/en/m12/".to_string())]);
        assert_eq!(ids, ["x&y"]);
        // A script's or a style's text is no markup.
        let (links, _) = html_links(
            "<script>var s = '<a href=\"/gone/\">';</script><a href=\"/x/\"><STYLE>a[href=\"<img src=y>\"]{}</Style x><img src=\"z.png\">",
        );
        let dests: Vec<&str> = links.iter().map(|l| l.1.as_str()).collect();
        assert_eq!(dests, ["/x/", "z.png"]);
        let (links, _) = html_links("<script>no end <a href=\"/gone/\">");
        assert!(links.is_empty());
    }

    #[test]
    fn html_links_survive_any_text() {
        use proptest::prelude::*;
        proptest!(|(text in "[<>a-z =\"'/!-]{0,80}")| {
            for (at, dest) in html_links(&text).0 {
                prop_assert!(at <= text.len());
                prop_assert!(!dest.is_empty());
            }
        });
    }

    #[test]
    fn code_blocks_carry_info_attributes_and_lines() {
        let d = analyze(
            "text\n\n```yaml file=kustomization.yaml\na: <b>\n```\n\n```\n```\n",
            1,
        );
        let b = &d.code_blocks[0];
        assert_eq!(b.lang, "yaml");
        assert_eq!(b.attr("file"), Some("kustomization.yaml"));
        assert_eq!(b.code, "a: <b>\n");
        assert_eq!(b.line, 4);
        assert_eq!(d.code_blocks[1].line, 8);
    }

    #[test]
    fn sections_hold_the_text_under_each_heading() {
        let d = analyze("Intro `code`.\n\n## Drain\n\nThe *drain* waits.\n\n```sh\nkill -TERM 1\n```\n\n## Next\n\n| a | b |\n| --- | --- |\n| 1.29.0 | Adds `x` |\n\n- one\n- two\n", 1);
        let texts: Vec<_> = d
            .sections
            .iter()
            .map(|s| (s.heading, s.text.as_str()))
            .collect();
        assert_eq!(
            texts,
            [
                (None, "Intro code."),
                (Some(0), "The drain waits.\nkill -TERM 1\n"),
                (Some(1), "a\nb\n1.29.0\nAdds x\none\ntwo"),
            ]
        );
    }
}
