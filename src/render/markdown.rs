//! Markdown to HTML, collecting what later stages need: headings (for the
//! table of contents and anchors), links (for the link check) and code
//! blocks (for the example checks).

use pulldown_cmark::{CodeBlockKind, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde::Serialize;
use std::collections::HashSet;

#[derive(Debug, Clone, Serialize)]
pub struct Heading {
    pub level: u8,
    pub id: String,
    pub title: String,
}

/// A link as written in the source, with where it is.
#[derive(Debug, Clone)]
pub struct Link {
    pub dest: String,
    /// 1-based line in the page's source file.
    pub line: usize,
    pub column: usize,
}

/// A fenced code block.
#[derive(Debug, Clone)]
pub struct CodeBlock {
    /// First word of the info string (`yaml`).
    pub lang: String,
    /// `key=value` words after it (`file=kustomization.yaml`).
    pub attrs: Vec<(String, String)>,
    pub code: String,
    /// 1-based line of the first line of code in the source file.
    pub line: usize,
}

impl CodeBlock {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The text of a page between two headings, for the search index.
#[derive(Debug, Clone, Default)]
pub struct Section {
    /// Index in [`Document::headings`] of the heading that opens it; `None`
    /// for the text before the first heading.
    pub heading: Option<usize>,
    /// Its words as written (prose, inline code and code blocks), separated
    /// by spaces.
    pub text: String,
}

#[derive(Debug, Clone, Default)]
pub struct Document {
    pub html: String,
    pub headings: Vec<Heading>,
    pub links: Vec<Link>,
    pub code_blocks: Vec<CodeBlock>,
    /// Always at least one: the text before the first heading.
    pub sections: Vec<Section>,
}

impl Document {
    /// Adds text to the section being read.
    fn add_text(&mut self, text: &str) {
        if self.sections.is_empty() {
            self.sections.push(Section::default());
        }
        if let Some(s) = self.sections.last_mut() {
            if !s.text.is_empty() {
                s.text.push(' ');
            }
            s.text.push_str(text);
        }
    }
}

pub fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
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

/// Renders `body`, whose first line is line `first_line` of its file.
/// `rewrite` maps each link destination to the one to publish.
pub fn render(body: &str, first_line: usize, rewrite: &dyn Fn(&str) -> String) -> Document {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(body.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let position = |offset: usize| {
        let idx = line_starts.partition_point(|&s| s <= offset) - 1;
        (first_line + idx, offset - line_starts[idx] + 1)
    };

    let mut doc = Document {
        sections: vec![Section::default()],
        ..Document::default()
    };
    let mut events: Vec<Event> = Vec::new();
    let mut used_ids: HashSet<String> = HashSet::new();
    // Explicit ids (`{#id}`) are reserved first so generated ones avoid them.
    let parser = Parser::new_ext(body, options()).into_offset_iter();
    let all: Vec<(Event, std::ops::Range<usize>)> = parser.collect();
    for (e, _) in &all {
        if let Event::Start(Tag::Heading { id: Some(id), .. }) = e {
            used_ids.insert(id.to_string());
        }
    }

    let mut i = 0;
    while i < all.len() {
        let (event, range) = &all[i];
        match event {
            Event::Start(Tag::Heading {
                level,
                id,
                classes,
                attrs,
            }) => {
                let end = (i + 1..all.len())
                    .find(|&j| matches!(all[j].0, Event::End(TagEnd::Heading(_))))
                    .unwrap_or(all.len());
                let title: String = all[i + 1..end]
                    .iter()
                    .filter_map(|(e, _)| match e {
                        Event::Text(t) | Event::Code(t) => Some(t.as_ref()),
                        _ => None,
                    })
                    .collect();
                let id = match id {
                    Some(id) => id.to_string(),
                    None => unique(&slugify(&title), &mut used_ids),
                };
                doc.sections.push(Section {
                    heading: Some(doc.headings.len()),
                    text: String::new(),
                });
                doc.headings.push(Heading {
                    level: heading_level(*level),
                    id: id.clone(),
                    title: title.trim().to_string(),
                });
                events.push(Event::Start(Tag::Heading {
                    level: *level,
                    id: Some(CowStr::from(id.clone())),
                    classes: classes.clone(),
                    attrs: attrs.clone(),
                }));
                for (e, r) in &all[i + 1..end] {
                    events.push(map_event(e.clone(), r, &mut doc, &position, rewrite));
                }
                events.push(Event::Html(CowStr::from(format!(
                    "<a class=\"anchor\" href=\"#{id}\" aria-label=\"#\"></a>"
                ))));
                if end < all.len() {
                    events.push(all[end].0.clone());
                }
                i = end + 1;
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                let end = (i + 1..all.len())
                    .find(|&j| matches!(all[j].0, Event::End(TagEnd::CodeBlock)))
                    .unwrap_or(all.len());
                let code: String = all[i + 1..end]
                    .iter()
                    .filter_map(|(e, _)| match e {
                        Event::Text(t) => Some(t.as_ref()),
                        _ => None,
                    })
                    .collect();
                let info = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                let mut words = info.split_whitespace();
                let lang = words.next().unwrap_or("").to_string();
                let attrs: Vec<(String, String)> = words
                    .filter_map(|w| w.split_once('='))
                    .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
                    .collect();
                let code_start = all
                    .get(i + 1)
                    .filter(|_| i + 1 < end)
                    .map_or(range.start, |(_, r)| r.start);
                let (mut line, _) = position(code_start);
                if i + 1 >= end {
                    line += 1;
                }
                let block = CodeBlock {
                    lang,
                    attrs,
                    code,
                    line,
                };
                events.push(Event::Html(CowStr::from(code_block_html(&block))));
                doc.add_text(&block.code);
                doc.code_blocks.push(block);
                i = end + 1;
            }
            _ => {
                if let Event::Text(t) | Event::Code(t) = event {
                    doc.add_text(t);
                }
                events.push(map_event(
                    event.clone(),
                    range,
                    &mut doc,
                    &position,
                    rewrite,
                ));
                i += 1;
            }
        }
    }
    doc.html.reserve(body.len() * 2);
    pulldown_cmark::html::push_html(&mut doc.html, events.into_iter());
    // Every page's document stays in memory until the site is written:
    // no spare capacity.
    doc.html.shrink_to_fit();
    for s in &mut doc.sections {
        s.text.shrink_to_fit();
    }
    doc
}

fn map_event<'a>(
    event: Event<'a>,
    range: &std::ops::Range<usize>,
    doc: &mut Document,
    position: &dyn Fn(usize) -> (usize, usize),
    rewrite: &dyn Fn(&str) -> String,
) -> Event<'a> {
    // Links and images: record where they point, publish the rewritten URL.
    let mut follow = |dest: &CowStr| {
        let (line, column) = position(range.start);
        doc.links.push(Link {
            dest: dest.to_string(),
            line,
            column,
        });
        CowStr::from(rewrite(dest))
    };
    match event {
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: follow(&dest_url),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Image {
            link_type,
            dest_url: follow(&dest_url),
            title,
            id,
        }),
        other => other,
    }
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

fn unique(base: &str, used: &mut HashSet<String>) -> String {
    let mut id = base.to_string();
    let mut n = 1;
    while used.contains(&id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    used.insert(id.clone());
    id
}

/// HTML of a code block, highlighted when its language is one
/// [`super::highlight`] knows. The language and file name ride along as data attributes for the
/// page's script and styles.
pub fn code_block_html(block: &CodeBlock) -> String {
    let mut html = String::from("<pre class=\"code\"");
    if !block.lang.is_empty() {
        html.push_str(&format!(" data-lang=\"{}\"", escape(&block.lang)));
    }
    if let Some(file) = block.attr("file") {
        html.push_str(&format!(" data-file=\"{}\"", escape(file)));
    }
    html.push_str("><code");
    if !block.lang.is_empty() {
        html.push_str(&format!(" class=\"language-{}\"", escape(&block.lang)));
    }
    html.push('>');
    match super::highlight::highlight(&block.lang, &block.code) {
        Some(highlighted) => html.push_str(&highlighted),
        None => html.push_str(&escape(&block.code)),
    }
    html.push_str("</code></pre>\n");
    html
}

pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    escape_into(&mut out, s);
    out
}

/// Appends `s` to `out`, escaped for HTML text and attribute values.
pub fn escape_into(out: &mut String, s: &str) {
    let mut rest = s;
    while let Some(i) = rest.find(['&', '<', '>', '"', '\'']) {
        out.push_str(&rest[..i]);
        out.push_str(match rest.as_bytes()[i] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            _ => "&#39;",
        });
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(body: &str) -> Document {
        render(body, 1, &|d| d.to_string())
    }

    #[test]
    fn heading_ids_are_slugs_and_unique() {
        let d = plain("# Instalación\n\n## Paso 1\n\n## Paso 1\n\n## Otra {#paso-1-1}\n");
        let ids: Vec<_> = d.headings.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["instalacion", "paso-1", "paso-1-2", "paso-1-1"]);
        assert!(d
            .html
            .contains("<h1 id=\"instalacion\">Instalación<a class=\"anchor\""));
    }

    #[test]
    fn links_keep_their_source_line_and_are_rewritten() {
        let d = render("intro\n\nsee [x](a.md#b) and\n[y](/z)\n", 10, &|d| {
            format!("/es/{d}")
        });
        assert_eq!(d.links.len(), 2);
        assert_eq!((d.links[0].line, d.links[0].column), (12, 5));
        assert_eq!(d.links[1].line, 13);
        assert!(d.html.contains("href=\"/es/a.md#b\""));
    }

    #[test]
    fn code_blocks_carry_info_attributes_and_lines() {
        let d = plain("text\n\n```yaml file=kustomization.yaml\na: <b>\n```\n");
        let b = &d.code_blocks[0];
        assert_eq!(b.lang, "yaml");
        assert_eq!(b.attr("file"), Some("kustomization.yaml"));
        assert_eq!(b.code, "a: <b>\n");
        assert_eq!(b.line, 4);
        assert!(d.html.contains("data-file=\"kustomization.yaml\""));
        assert!(d.html.contains("&lt;b&gt;"), "{}", d.html);
        assert!(!d.html.contains("<b>"), "{}", d.html);
    }

    #[test]
    fn sections_hold_the_text_under_each_heading() {
        let d = plain("Intro `code`.\n\n## Drain\n\nThe *drain* waits.\n\n```sh\nkill -TERM 1\n```\n\n## Next\n");
        let texts: Vec<_> = d
            .sections
            .iter()
            .map(|s| (s.heading, s.text.as_str()))
            .collect();
        assert_eq!(
            texts,
            [
                (None, "Intro  code ."),
                (Some(0), "The  drain  waits. kill -TERM 1\n"),
                (Some(1), ""),
            ]
        );
    }

    #[test]
    fn extensions_are_on() {
        let d = plain("| a |\n|---|\n| b |\n\n~~x~~\n\n- [x] done\n\nnote[^1]\n\n[^1]: f\n");
        assert!(d.html.contains("<table>"));
        assert!(d.html.contains("<del>x</del>"));
        assert!(d.html.contains("type=\"checkbox\""));
        assert!(d.html.contains("footnote"));
    }
}
