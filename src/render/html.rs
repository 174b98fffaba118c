//! A page's Markdown to HTML, from the [`Document`] its analysis made:
//! headings get the ids the analysis gave them (and an anchor link), code
//! blocks are highlighted, links point where they are published.

use super::escape::escape;
use super::highlight::Highlighter;
use crate::analyze::markdown::options;
use crate::model::document::{CodeBlock, Document};
use pulldown_cmark::{CowStr, Event, Tag, TagEnd};

/// The HTML of `markdown`, the text `doc` was analysed from. `rewrite`
/// maps each link destination to the one to publish.
pub fn body(
    markdown: &str,
    doc: &Document,
    highlighter: &Highlighter,
    rewrite: &dyn Fn(&str) -> String,
) -> String {
    let mut headings = doc.headings.iter();
    let mut blocks = doc.code_blocks.iter();
    let mut in_code = false;
    let mut anchor: Option<String> = None;
    let events = pulldown_cmark::Parser::new_ext(markdown, options()).filter_map(|event| {
        if in_code {
            if matches!(event, Event::End(TagEnd::CodeBlock)) {
                in_code = false;
            }
            return None;
        }
        Some(match event {
            Event::Start(Tag::Heading {
                level,
                classes,
                attrs,
                ..
            }) => {
                let id = headings.next().map(|h| h.id.clone()).unwrap_or_default();
                anchor = Some(format!(
                    "<a class=\"anchor\" href=\"#{id}\" aria-label=\"#\"></a>"
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
                return Some(Event::Html(CowStr::from(format!(
                    "{}</{}>\n",
                    anchor.take().unwrap_or_default(),
                    level
                ))));
            }
            Event::Start(Tag::CodeBlock(_)) => {
                in_code = true;
                let html = blocks
                    .next()
                    .map(|b| code_block_html(b, highlighter))
                    .unwrap_or_default();
                Event::Html(CowStr::from(html))
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
        })
    });
    let mut html = String::with_capacity(markdown.len() * 2);
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

/// HTML of a code block, highlighted when its language is one the
/// highlighter knows. The language and file name ride along as data
/// attributes for the page's script and styles.
pub fn code_block_html(block: &CodeBlock, highlighter: &Highlighter) -> String {
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
    match highlighter.highlight(&block.lang, &block.code) {
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
        super::body(body, doc, &Highlighter::default(), rewrite)
    }

    #[test]
    fn headings_get_their_ids_and_an_anchor() {
        let h = html("# Instalación\n\n## Paso 1\n\n## Paso 1\n");
        assert!(
            h.contains("<h1 id=\"instalacion\">Instalación<a class=\"anchor\" href=\"#instalacion\" aria-label=\"#\"></a></h1>"),
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
    }

    #[test]
    fn extensions_are_on() {
        let h = html("| a |\n|---|\n| b |\n\n~~x~~\n\n- [x] done\n\nnote[^1]\n\n[^1]: f\n");
        assert!(h.contains("<table>"));
        assert!(h.contains("<del>x</del>"));
        assert!(h.contains("type=\"checkbox\""));
        assert!(h.contains("footnote"));
    }
}
