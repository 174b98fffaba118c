//! What a project's templates get wrong without failing: Tera renders
//! them, and the mistake only shows (or does not) on the published pages.
//!
//! - an override that no rendered template uses (`templates/pages.html`,
//!   `templates/footer.html` for `partials/footer.html`) changes nothing;
//! - a template that extends another renders only the blocks its parent
//!   has: a block the parent lacks (`{% block boddy %}`) and text
//!   outside any block are dropped;
//! - HTML that basepress made (`page.content`, `nav_html`, the `_html`
//!   values) printed without `| safe` is escaped, and readers see its tags.

use super::cycles;
use crate::diagnostics::{closest, rule, Diagnostic, Location};
use crate::model::site::{Site, TemplateFile};
use tera::ast::{ExprVal, Node};
use tera::Tera;

/// The templates basepress renders by name; every other template is used
/// only through them.
pub const RENDERED: &[&str] = &["page.html", "versions.html", "404.html", "redirect.html"];

/// The findings of the project's templates, compiled into `tera`.
pub fn lint(site: &Site, tera: &Tera) -> Vec<Diagnostic> {
    let used = cycles::reachable(tera, RENDERED);
    let mut out = Vec::new();
    for t in &site.templates {
        if !used.contains(&t.name) {
            out.push(unused(t));
            continue;
        }
        let Ok(compiled) = tera.get_template(&t.name) else {
            continue;
        };
        if let Some(parent) = &compiled.parent {
            out.extend(unrendered(tera, t, parent, &compiled.ast));
        }
        let mut escaped = Vec::new();
        escaped_html(&compiled.ast, &mut escaped);
        escaped.dedup();
        out.extend(escaped.into_iter().map(|id| {
            let shown = id.split('[').next().unwrap_or(&id);
            let d = Diagnostic::new(
                rule::TEMPLATE_HTML_ESCAPED,
                format!(
                    "`{{{{ {id} }}}}` prints HTML without `| safe`, so the page shows its tags as text (`&lt;p&gt;…`)"
                ),
            )
            .help(format!(
                "write `{{{{ {id} | safe }}}}`: basepress made this HTML and escaped what it holds"
            ));
            locate(d, t, super::first_use(&t.text, shown))
        }));
    }
    out
}

/// A project template no rendered template reaches.
fn unused(t: &TemplateFile) -> Diagnostic {
    let defaults = super::DEFAULTS.iter().map(|(name, _)| *name);
    let base = |name: &str| name.rsplit('/').next().unwrap_or(name).to_string();
    let meant = defaults
        .clone()
        .find(|d| base(d) == base(&t.name))
        .or_else(|| closest(&t.name, defaults.clone()));
    let default = super::DEFAULTS.iter().any(|(name, _)| *name == t.name);
    let help = match meant {
        // `macros.html`: the default templates do not use it.
        Some(_) if default => format!(
            "no default template uses `{0}`: import it from a template that is used, as in {{% import \"{0}\" as m %}}",
            t.name
        ),
        Some(d) => format!(
            "to override the default `{d}`, move the file to `templates/{d}`; to use it as a part, include it from a template that is used: {{% include \"{}\" %}}",
            t.name
        ),
        None => format!(
            "override a default by its name ({}), or include it from one: {{% include \"{}\" %}}",
            super::DEFAULTS
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", "),
            t.name
        ),
    };
    Diagnostic::new(
        rule::TEMPLATE_UNUSED,
        format!(
            "`{}` is used by no page: basepress renders {} by name, and none of them extends, includes or imports it, so it changes nothing",
            t.name,
            RENDERED.join(", ")
        ),
    )
    .help(help)
    .in_file(&t.source)
}

/// What a template extending `parent` has that is never rendered: a block
/// at its top the parent (or the parent's parents) lacks, and text
/// outside its blocks.
fn unrendered(tera: &Tera, t: &TemplateFile, parent: &str, ast: &[Node]) -> Vec<Diagnostic> {
    let Ok(p) = tera.get_template(parent) else {
        return Vec::new();
    };
    let mut known: Vec<&str> = p.blocks.keys().map(String::as_str).collect();
    for ancestor in &p.parents {
        if let Ok(a) = tera.get_template(ancestor) {
            known.extend(a.blocks.keys().map(String::as_str));
        }
    }
    known.sort_unstable();
    known.dedup();
    let mut out = Vec::new();
    for node in ast {
        match node {
            Node::Block(_, block, _) if !known.contains(&block.name.as_str()) => {
                let help = match closest(&block.name, known.iter().copied()) {
                    Some(near) => format!(
                        "did you mean `{near}`? The blocks of `{parent}` are: {}",
                        known.join(", ")
                    ),
                    None => format!("the blocks of `{parent}` are: {}", known.join(", ")),
                };
                let d = Diagnostic::new(
                    rule::TEMPLATE_CONTENT_UNRENDERED,
                    format!(
                        "`{}` extends `{parent}` and fills block `{}`, which `{parent}` does not have, so what it holds is never rendered",
                        t.name, block.name
                    ),
                )
                .help(help);
                out.push(locate(d, t, block_tag(&t.text, &block.name)));
            }
            Node::Text(text) if !text.trim().is_empty() => {
                let first = text.trim();
                let d = Diagnostic::new(
                    rule::TEMPLATE_CONTENT_UNRENDERED,
                    format!(
                        "`{}` extends `{parent}` and has text outside its blocks (`{}`), which is never rendered",
                        t.name,
                        first.chars().take(40).collect::<String>()
                    ),
                )
                .help(format!(
                    "move it into one of the blocks of `{parent}` ({})",
                    known.join(", ")
                ));
                out.push(locate(d, t, text_position(&t.text, first)));
            }
            Node::VariableBlock(..)
            | Node::Include(..)
            | Node::Forloop(..)
            | Node::If(..)
            | Node::FilterSection(..) => {
                let d = Diagnostic::new(
                    rule::TEMPLATE_CONTENT_UNRENDERED,
                    format!(
                        "`{}` extends `{parent}` and has a tag outside its blocks, which is never rendered",
                        t.name
                    ),
                )
                .help(format!(
                    "move it into one of the blocks of `{parent}` ({})",
                    known.join(", ")
                ));
                out.push(d.in_file(&t.source));
            }
            _ => {}
        }
    }
    out
}

/// The values of `nodes` that hold HTML and are printed escaped, in
/// order: `page.content`, and any name whose last part ends in `_html`
/// (`nav_html`, `v.verifying_html[lang.code]`), printed without `safe`.
fn escaped_html(nodes: &[Node], out: &mut Vec<String>) {
    for node in nodes {
        match node {
            Node::VariableBlock(_, expr) => {
                if let ExprVal::Ident(id) = &expr.val {
                    let safe = expr.filters.iter().any(|f| f.name == "safe");
                    if holds_html(id) && !safe {
                        out.push(id.clone());
                    }
                }
            }
            // Everything inside `{% filter safe %}` is printed as it is.
            Node::FilterSection(_, section, _) if section.filter.name != "safe" => {
                escaped_html(&section.body, out)
            }
            Node::Block(_, block, _) => escaped_html(&block.body, out),
            Node::MacroDefinition(_, def, _) => escaped_html(&def.body, out),
            Node::Forloop(_, f, _) => {
                escaped_html(&f.body, out);
                if let Some(empty) = &f.empty_body {
                    escaped_html(empty, out);
                }
            }
            Node::If(i, _) => {
                for (_, _, body) in &i.conditions {
                    escaped_html(body, out);
                }
                if let Some((_, body)) = &i.otherwise {
                    escaped_html(body, out);
                }
            }
            _ => {}
        }
    }
}

/// Whether the context value `id` names is HTML basepress made.
fn holds_html(id: &str) -> bool {
    let path = id.split('[').next().unwrap_or(id);
    let last = path.rsplit('.').next().unwrap_or(path);
    path == "page.content" || last.ends_with("_html")
}

fn locate(d: Diagnostic, t: &TemplateFile, at: Option<(usize, usize)>) -> Diagnostic {
    match at {
        Some((line, column)) => d.at(Location::at(&t.source, line, column)),
        None => d.in_file(&t.source),
    }
}

/// The line and column of the first `{% block NAME %}` tag of `text`.
fn block_tag(text: &str, name: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(open) = text[from..].find("{%").map(|i| from + i) {
        let end = text[open..].find("%}").map_or(text.len(), |i| open + i);
        let inside = text[open + 2..end].trim_matches(|c: char| c == '-' || c.is_whitespace());
        let mut words = inside.split_whitespace();
        if words.next() == Some("block") && words.next() == Some(name) {
            return Some(position(text, open));
        }
        from = end.max(open + 2);
    }
    None
}

/// The line and column of the first `needle` in `text` outside tags.
fn text_position(text: &str, needle: &str) -> Option<(usize, usize)> {
    text.find(needle).map(|at| position(text, at))
}

fn position(text: &str, at: usize) -> (usize, usize) {
    let line = text[..at].matches('\n').count() + 1;
    let column = text[..at].chars().rev().take_while(|&c| c != '\n').count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::site::Site;

    fn site(files: &[(&str, &str)]) -> Site {
        Site {
            templates: files
                .iter()
                .map(|(name, text)| TemplateFile {
                    name: name.to_string(),
                    source: format!("templates/{name}").into(),
                    text: text.to_string(),
                })
                .collect(),
            ..Site::empty()
        }
    }

    fn findings(files: &[(&str, &str)]) -> Vec<Diagnostic> {
        let site = site(files);
        let tera = super::super::engine(&site).expect("the templates compile");
        lint(&site, &tera)
    }

    fn said(d: &[Diagnostic]) -> Vec<(String, String)> {
        d.iter()
            .map(|d| {
                let at = d.location.as_ref().map_or(String::new(), |l| {
                    format!(
                        "{}:{}:{}",
                        l.file.display(),
                        l.line.unwrap_or(0),
                        l.column.unwrap_or(0)
                    )
                });
                (d.rule.id.to_string(), at)
            })
            .collect()
    }

    #[test]
    fn the_defaults_are_all_used_and_clean() {
        let tera = super::super::engine(&Site::empty()).expect("the defaults compile");
        let used = cycles::reachable(&tera, RENDERED);
        // `macros.html` is for projects to import: the sidebar is drawn
        // without it.
        let (imported, rest): (Vec<_>, Vec<_>) = super::super::DEFAULTS
            .iter()
            .copied()
            .partition(|(name, _)| *name == "macros.html");
        for (name, _) in &rest {
            assert!(
                used.contains(*name),
                "{name} is used by no rendered template"
            );
        }
        // The defaults, given as overrides, raise nothing.
        assert!(findings(&rest).is_empty(), "{:?}", findings(&rest));
        let found = findings(&imported);
        assert_eq!(
            said(&found),
            [(
                "template-unused".to_string(),
                "templates/macros.html:0:0".to_string()
            )]
        );
        assert!(found[0]
            .remedy()
            .contains("{% import \"macros.html\" as m %}"));
        let mut both = imported.clone();
        both.push((
            "page.html",
            "{% import \"macros.html\" as m %}{{ m::nav(items=nav, prefix=site.prefix) }}",
        ));
        assert!(findings(&both).is_empty(), "{:?}", findings(&both));
    }

    #[test]
    fn an_override_nothing_uses_is_found_with_the_name_it_meant() {
        let found = findings(&[
            ("pages.html", "{% extends \"base.html\" %}"),
            ("footer.html", "<footer>x</footer>"),
            ("partials/banner.html", "<p>banner</p>"),
            ("partials/used.html", "<p>used</p>"),
            ("404.html", "{% include \"partials/used.html\" %}"),
        ]);
        assert_eq!(
            said(&found),
            [
                (
                    "template-unused".to_string(),
                    "templates/pages.html:0:0".to_string()
                ),
                (
                    "template-unused".to_string(),
                    "templates/footer.html:0:0".to_string()
                ),
                (
                    "template-unused".to_string(),
                    "templates/partials/banner.html:0:0".to_string()
                ),
            ]
        );
        assert!(
            found[0].remedy().contains("templates/page.html"),
            "{}",
            found[0].remedy()
        );
        assert!(found[1].remedy().contains("templates/partials/footer.html"));
        assert!(found[2]
            .remedy()
            .contains("{% include \"partials/banner.html\" %}"));
    }

    #[test]
    fn a_block_the_parent_lacks_and_text_outside_blocks_are_found() {
        let page = "{% extends \"base.html\" %}\n<p>lost</p>\n{% block boddy %}\n{% block inner %}x{% endblock inner %}\n{% endblock boddy %}\n{% block title %}T{% endblock title %}\n";
        let found = findings(&[("page.html", page)]);
        assert_eq!(
            said(&found),
            [
                (
                    "template-content-unrendered".to_string(),
                    "templates/page.html:2:1".to_string()
                ),
                (
                    "template-content-unrendered".to_string(),
                    "templates/page.html:3:1".to_string()
                ),
            ]
        );
        assert!(
            found[1].message.contains("block `boddy`"),
            "{}",
            found[1].message
        );
        assert!(
            found[1].remedy().contains("did you mean `body`?"),
            "{}",
            found[1].remedy()
        );
    }

    #[test]
    fn html_printed_without_safe_is_found_where_it_is_printed() {
        let page = "{% extends \"base.html\" %}\n{% block body %}\n  {% if page.title %}{{ page.content }}{% endif %}\n{{ nav_html | safe }}{% filter safe %}{{ nav_html }}{% endfilter %}\n{{ page.title }}{{ page.content | safe }}\n{% endblock body %}\n";
        let found = findings(&[("page.html", page)]);
        assert_eq!(
            said(&found),
            [(
                "template-html-escaped".to_string(),
                "templates/page.html:3:25".to_string()
            )]
        );
        let versions = "{% extends \"base.html\" %}{% block body %}{% for v in versions %}{{ v.verify_html }}{% endfor %}{% endblock body %}";
        let found = findings(&[("versions.html", versions)]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].message.contains("v.verify_html"),
            "{}",
            found[0].message
        );
    }
}
