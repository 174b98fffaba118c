//! A page's Markdown to HTML, from the [`Document`] its analysis made:
//! headings get the ids the analysis gave them (and an anchor link named
//! by the heading), code blocks are highlighted, links point where they
//! are published, GitHub's alerts (`> [!NOTE]`) become callouts with a
//! translated label, and consecutive code blocks with a `tab=NAME`
//! attribute become one set of tabs.
//!
//! A set of tabs is, without the script, every panel one after the
//! other, each under its name:
//!
//! ```html
//! <div class="tabs">
//! <div class="tab-panel" data-tab="GKE"><p class="tab-label">GKE</p><pre class="code">…</pre></div>
//! <div class="tab-panel" data-tab="EKS"><p class="tab-label">EKS</p><pre class="code">…</pre></div>
//! </div>
//! ```
//!
//! The script makes a tab list of the names and shows one panel, the one
//! the reader chose last on any page when it is there.

use super::escape::escape;
use super::highlight::Highlight;
use crate::analyze::markdown::options;
use crate::model::document::{CodeBlock, Document};
use crate::model::i18n::Strings;
use pulldown_cmark::{BlockQuoteKind, CowStr, Event, Tag, TagEnd};

/// The interface-strings key of a callout's label, and its class.
fn callout(kind: BlockQuoteKind) -> &'static str {
    match kind {
        BlockQuoteKind::Note => "note",
        BlockQuoteKind::Tip => "tip",
        BlockQuoteKind::Important => "important",
        BlockQuoteKind::Warning => "warning",
        BlockQuoteKind::Caution => "caution",
    }
}

/// The name a `tab=` attribute gives its panel (`_` stands for a space,
/// since the info string is split at spaces).
fn tab_name(block: &CodeBlock) -> Option<String> {
    let name = block.attr("tab")?.replace('_', " ");
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// The HTML of `markdown`, the text `doc` was analysed from. `rewrite`
/// maps each link destination to the one to publish; `strings` are the
/// page language's interface strings (the callouts' labels).
pub fn body(
    markdown: &str,
    doc: &Document,
    highlight: Highlight<'_>,
    strings: &Strings,
    rewrite: &dyn Fn(&str) -> String,
) -> String {
    let mut headings = doc.headings.iter();
    let mut blocks = doc.code_blocks.iter();
    let mut in_code = false;
    let mut in_tabs = false;
    let mut anchor: Option<String> = None;
    // A task's checkbox is named by its text: both in one `<label>`, from
    // the marker to the end of the item's first line of text.
    let mut in_task = false;
    let parser = pulldown_cmark::Parser::new_ext(markdown, options());
    let events = parser.flat_map(|event| {
        if in_code {
            if matches!(event, Event::End(TagEnd::CodeBlock)) {
                in_code = false;
            }
            return Vec::new();
        }
        let mut out = Vec::with_capacity(2);
        let ends_task = match &event {
            Event::End(TagEnd::Paragraph | TagEnd::Item) => true,
            Event::Start(tag) => !matches!(
                tag,
                Tag::Emphasis
                    | Tag::Strong
                    | Tag::Strikethrough
                    | Tag::Link { .. }
                    | Tag::Image { .. }
                    | Tag::Superscript
                    | Tag::Subscript
            ),
            _ => false,
        };
        if in_task && ends_task {
            in_task = false;
            out.push(Event::Html(CowStr::from("</label>")));
        }
        if let Event::TaskListMarker(done) = event {
            in_task = true;
            let checked = if done { " checked" } else { "" };
            out.push(Event::Html(CowStr::from(format!(
                "<label class=\"task\"><input type=\"checkbox\" disabled{checked}> "
            ))));
            return out;
        }
        if let Event::Start(Tag::CodeBlock(_)) = event {
            in_code = true;
            let Some(block) = blocks.next() else {
                return out;
            };
            let code = code_block_html(block, highlight);
            let html = match tab_name(block) {
                Some(name) => {
                    let open = if in_tabs { "" } else { "<div class=\"tabs\">\n" };
                    in_tabs = true;
                    let name = escape(&name);
                    format!(
                        "{open}<div class=\"tab-panel\" data-tab=\"{name}\"><p class=\"tab-label\">{name}</p>{code}</div>\n"
                    )
                }
                None if in_tabs => {
                    in_tabs = false;
                    format!("</div>\n{code}")
                }
                None => code,
            };
            out.push(Event::Html(CowStr::from(html)));
            return out;
        }
        if in_tabs {
            in_tabs = false;
            out.push(Event::Html(CowStr::from("</div>\n")));
        }
        out.push(match event {
            Event::Start(Tag::BlockQuote(Some(kind))) => {
                let key = callout(kind);
                let label = escape(strings.get(key));
                Event::Html(CowStr::from(format!(
                    "<div class=\"callout callout-{key}\" role=\"note\"><p class=\"callout-label\">{label}</p>\n"
                )))
            }
            Event::End(TagEnd::BlockQuote(Some(_))) => Event::Html(CowStr::from("</div>\n")),
            Event::Start(Tag::Heading {
                level,
                classes,
                attrs,
                ..
            }) => {
                let id = headings.next().map(|h| h.id.clone()).unwrap_or_default();
                // Named by the heading it is in: its `#` is decoration.
                anchor = Some(format!(
                    "<a class=\"anchor\" href=\"#{id}\" aria-labelledby=\"{id}\"><span aria-hidden=\"true\">#</span></a>"
                ));
                Event::Start(Tag::Heading {
                    level,
                    id: Some(CowStr::from(id)),
                    classes,
                    attrs,
                })
            }
            Event::End(TagEnd::Heading(level)) => {
                // The anchor goes inside the heading, after its text.
                Event::Html(CowStr::from(format!(
                    "{}</{}>\n",
                    anchor.take().unwrap_or_default(),
                    level
                )))
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => Event::Start(Tag::Link {
                link_type,
                dest_url: CowStr::from(rewrite(&dest_url)),
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
                dest_url: CowStr::from(rewrite(&dest_url)),
                title,
                id,
            }),
            other => other,
        });
        out
    });
    let mut html = String::with_capacity(markdown.len() * 2);
    pulldown_cmark::html::push_html(&mut html, events);
    if in_tabs {
        html.push_str("</div>\n");
    }
    html
}

/// HTML of a code block, highlighted when its language is one the
/// highlighter knows. The language and file name ride along as data
/// attributes for the page's script and styles.
pub fn code_block_html(block: &CodeBlock, highlight: Highlight<'_>) -> String {
    let mut html = String::from("<pre class=\"code\"");
    if !block.lang.is_empty() {
        html.push_str(&format!(" data-lang=\"{}\"", escape(&block.lang)));
    }
    // Each `key=value` word of the info string (`file=`, `title=`, …) but
    // `tab=` as a `data-` attribute; a key that is no attribute name is
    // left out.
    let mut seen = Vec::new();
    for (key, value) in &block.attrs {
        let name = key.to_ascii_lowercase();
        let valid = !name.is_empty()
            && name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        // `tab=` makes the block a tab panel, which carries the name.
        if !valid || matches!(name.as_str(), "lang" | "tab") || seen.contains(&name) {
            continue;
        }
        html.push_str(&format!(" data-{name}=\"{}\"", escape(value)));
        seen.push(name);
    }
    // Focusable, so that a reader without a mouse can scroll a long line.
    html.push_str(" tabindex=\"0\"><code");
    if !block.lang.is_empty() {
        html.push_str(&format!(" class=\"language-{}\"", escape(&block.lang)));
    }
    html.push('>');
    match highlight.block(&block.lang, &block.code) {
        Some(highlighted) => html.push_str(&highlighted),
        None => html.push_str(&escape(&block.code)),
    }
    html.push_str("</code></pre>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::markdown::analyze;

    fn html(body: &str) -> String {
        let doc = analyze(body, 1);
        body_html(body, &doc)
    }

    fn body_html(body: &str, doc: &Document) -> String {
        body_with(body, doc, &|d| d.to_string())
    }

    fn body_with(body: &str, doc: &Document, rewrite: &dyn Fn(&str) -> String) -> String {
        let mut strings = Strings::default();
        strings.0.insert("warning".into(), "Atención".into());
        let highlighter = super::super::highlight::Highlighter::default();
        super::body(body, doc, (&highlighter).into(), &strings, rewrite)
    }

    #[test]
    fn headings_get_their_ids_and_an_anchor() {
        let h = html("# Instalación\n\n## Paso 1\n\n## Paso 1\n");
        assert!(
            h.contains("<h1 id=\"instalacion\">Instalación<a class=\"anchor\" href=\"#instalacion\" aria-labelledby=\"instalacion\"><span aria-hidden=\"true\">#</span></a></h1>"),
            "{h}"
        );
        assert!(h.contains("<h2 id=\"paso-1-1\">"), "{h}");
    }

    #[test]
    fn links_are_rewritten() {
        let body = "see [x](a.md#b) and ![i](/z.png)\n";
        let doc = analyze(body, 1);
        let h = body_with(body, &doc, &|d| format!("/es/{d}"));
        assert!(h.contains("href=\"/es/a.md#b\""), "{h}");
        assert!(h.contains("src=\"/es//z.png\""), "{h}");
    }

    #[test]
    fn code_blocks_are_escaped_and_carry_their_file() {
        let h = html("text\n\n```yaml file=kustomization.yaml\na: <b>\n```\n");
        assert!(h.contains("data-file=\"kustomization.yaml\""), "{h}");
        assert!(h.contains("&lt;b&gt;"), "{h}");
        assert!(!h.contains("<b>"), "{h}");
        let h = html("```yaml title=deploy.yaml hl=3 on\"x=\"1 Title=again\na: 1\n```\n");
        assert!(
            h.contains(" data-title=\"deploy.yaml\" data-hl=\"3\""),
            "{h}"
        );
        assert!(!h.contains("on\""), "{h}");
        assert_eq!(h.matches("data-title").count(), 1, "{h}");
    }

    #[test]
    fn alerts_become_callouts_with_their_label() {
        let h = html("> [!WARNING]\n> Drena **antes**.\n\n> cita\n");
        assert!(
            h.contains("<div class=\"callout callout-warning\" role=\"note\"><p class=\"callout-label\">Atención</p>"),
            "{h}"
        );
        assert!(h.contains("<strong>antes</strong>"), "{h}");
        assert!(!h.contains("[!WARNING]"), "{h}");
        assert!(
            h.contains("<blockquote>\n<p>cita</p>\n</blockquote>"),
            "{h}"
        );
    }

    #[test]
    fn consecutive_tab_blocks_make_one_set() {
        let body = "Pick:\n\n```bash tab=GKE\ngcloud\n```\n\n```bash tab=EKS file=x.yaml\naws\n```\n\nAfter.\n\n```bash tab=Cloud_Shell\nls\n```\n";
        let h = html(body);
        assert_eq!(h.matches("<div class=\"tabs\">").count(), 2, "{h}");
        let first = &h[h.find("<div class=\"tabs\">").unwrap()..h.find("<p>After.").unwrap()];
        assert_eq!(
            first.matches("data-tab=").count(),
            2,
            "only the panels: {first}"
        );
        assert!(
            first.contains("data-tab=\"GKE\"") && first.contains("data-tab=\"EKS\""),
            "{h}"
        );
        assert_eq!(
            first.matches("<div").count(),
            first.matches("</div>").count(),
            "{first}"
        );
        assert!(h.contains("data-tab=\"Cloud Shell\""), "{h}");
        assert_eq!(
            h.matches("<div").count(),
            h.matches("</div>").count(),
            "{h}"
        );
        // The blocks stay code blocks of the document, checked as before.
        let doc = analyze(body, 1);
        assert_eq!(doc.code_blocks.len(), 3);
        assert_eq!(doc.code_blocks[1].attr("file"), Some("x.yaml"));
    }

    #[test]
    fn extensions_are_on() {
        let h = html("| a |\n|---|\n| b |\n\n~~x~~\n\n- [x] done\n\nnote[^1]\n\n[^1]: f\n");
        assert!(h.contains("<table>"));
        assert!(h.contains("<del>x</del>"));
        assert!(h.contains("type=\"checkbox\""));
        assert!(h.contains("footnote"));
    }

    /// A task's checkbox is named by the task's text: both in one label
    /// (tight and loose lists, text with inline markup, a nested list).
    #[test]
    fn a_task_is_the_label_of_its_checkbox() {
        let h = html("- [x] done *now*\n- [ ] to do\n  - sub\n");
        assert!(
            h.contains("<li><label class=\"task\"><input type=\"checkbox\" disabled checked> done <em>now</em></label></li>"),
            "{h}"
        );
        assert!(
            h.contains(
                "<label class=\"task\"><input type=\"checkbox\" disabled> to do</label>\n<ul>"
            ),
            "{h}"
        );
        let loose = html("- [ ] one\n\n- [x] two\n");
        assert!(
            loose.contains(
                "<p><label class=\"task\"><input type=\"checkbox\" disabled> one</label></p>"
            ),
            "{loose}"
        );
        assert_eq!(
            loose.matches("<label").count(),
            loose.matches("</label>").count()
        );
    }
}
