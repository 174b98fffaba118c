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
use tera::ast::Node;
use tera::Tera;

/// The templates basepress renders by name; every other template is used
/// only through them.
pub const RENDERED: &[&str] = &["page.html", "versions.html", "404.html", "redirect.html"];

/// The findings of the project's templates, compiled into `tera`.
pub fn lint(site: &Site, tera: &Tera) -> Vec<Diagnostic> {
    let used = cycles::reachable(tera, RENDERED);
    let mut out = Vec::new();
    for t in &site.templates {
        let Ok(compiled) = tera.get_template(&t.name) else {
            continue;
        };
        if !used.contains(&t.name) {
            out.push(unused(t, !compiled.macros.is_empty()));
            continue;
        }
        let items = scan(&t.text);
        if let Some(parent) = &compiled.parent {
            out.extend(unrendered(tera, t, parent, &compiled.ast, &items));
        }
        // Tera escapes only what templates named `.html` print.
        if t.name.ends_with(".html") {
            out.extend(escaped_html(t, &items));
        }
    }
    out
}

/// A project template no rendered template reaches; `macros` when it
/// defines macros (used by `import`, not `include`).
fn unused(t: &TemplateFile, macros: bool) -> Diagnostic {
    let defaults = super::DEFAULTS.iter().map(|(name, _)| *name);
    let default = defaults.clone().any(|d| d == t.name);
    let base = |name: &str| name.rsplit('/').next().unwrap_or(name).to_string();
    let meant = defaults
        .clone()
        .find(|d| base(d) == base(&t.name))
        .or_else(|| closest(&t.name, defaults.clone()));
    let use_it = match macros {
        true => format!("{{% import \"{}\" as m %}}", t.name),
        false => format!("{{% include \"{}\" %}}", t.name),
    };
    let help = match meant {
        // The defaults that used it were replaced by templates that do not
        // (or, for `macros.html`, no default uses it).
        _ if default => format!(
            "no template in use extends, includes or imports `{}` any more: use it from one that is ({use_it}), or delete the file",
            t.name
        ),
        Some(d) => format!(
            "to override the default `{d}`, move the file to `templates/{d}`; to use it as a part, {use_it} from a template that is used"
        ),
        None => format!(
            "override a default by its name ({}), or use it from one: {use_it}",
            super::DEFAULTS
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
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
/// at its top the parent (or the parent's parents) lacks, and text or
/// tags outside its blocks (`ast` tells what Tera drops; `items` where).
fn unrendered(
    tera: &Tera,
    t: &TemplateFile,
    parent: &str,
    ast: &[Node],
    items: &[Item],
) -> Vec<Diagnostic> {
    let Ok(p) = tera.get_template(parent) else {
        return Vec::new();
    };
    // Every block of the parents, wherever it is (Tera's own list leaves
    // out blocks inside `if`, `for` and `filter`, which render all the
    // same).
    let mut known: Vec<String> = Vec::new();
    block_names(&p.ast, &mut known);
    for ancestor in &p.parents {
        if let Ok(a) = tera.get_template(ancestor) {
            block_names(&a.ast, &mut known);
        }
    }
    known.sort_unstable();
    known.dedup();
    let listed = known.join(", ");
    let mut out = Vec::new();
    for node in ast {
        if let Node::Block(_, block, _) = node {
            if known.contains(&block.name) {
                continue;
            }
            let near = closest(&block.name, known.iter().map(String::as_str));
            let help = match near {
                Some(near) => {
                    format!("did you mean `{near}`? The blocks of `{parent}` are: {listed}")
                }
                None => format!("the blocks of `{parent}` are: {listed}"),
            };
            let d = Diagnostic::new(
                rule::TEMPLATE_CONTENT_UNRENDERED,
                format!(
                    "`{}` extends `{parent}` and fills block `{}`, which `{parent}` does not have, so what it holds is never rendered",
                    t.name, block.name
                ),
            )
            .help(help);
            let at = items.iter().find(|i| {
                i.kind == Kind::Tag && i.depth == 0 && i.words().take(2).eq(["block", &block.name])
            });
            out.push(locate(d, t, at.map(|i| i.at)));
        }
    }
    let dropped = ast.iter().any(|node| match node {
        Node::Text(text) => !text.trim().is_empty(),
        Node::VariableBlock(..)
        | Node::Include(..)
        | Node::Forloop(..)
        | Node::If(..)
        | Node::FilterSection(..)
        | Node::Set(..)
        | Node::Raw(..) => true,
        _ => false,
    });
    if dropped {
        // The first text or tag outside blocks and macros, as written.
        let first = items.iter().find(|i| {
            i.depth == 0
                && match i.kind {
                    Kind::Text => !i.inner.trim().is_empty(),
                    Kind::Print => true,
                    Kind::Tag => !matches!(
                        i.words().next(),
                        Some("extends" | "import" | "block" | "endblock" | "macro" | "endmacro")
                    ),
                    Kind::Comment => false,
                }
        });
        let shown = first.map_or(String::new(), |i| {
            format!(
                " (`{}`)",
                i.source.trim().chars().take(40).collect::<String>()
            )
        });
        let d = Diagnostic::new(
            rule::TEMPLATE_CONTENT_UNRENDERED,
            format!(
                "`{}` extends `{parent}` and has text or tags outside its blocks{shown}, which are never rendered (a `set` there sets nothing the blocks see)",
                t.name
            ),
        )
        .help(format!("move them into one of the blocks of `{parent}` ({listed})"));
        out.push(locate(d, t, first.map(Item::content_at)));
    }
    out.sort_by_key(|d| d.location.as_ref().and_then(|l| l.line));
    out
}

/// The names of the blocks anywhere in `nodes`.
fn block_names(nodes: &[Node], out: &mut Vec<String>) {
    for node in nodes {
        match node {
            Node::Block(_, b, _) => {
                out.push(b.name.clone());
                block_names(&b.body, out);
            }
            Node::FilterSection(_, f, _) => block_names(&f.body, out),
            Node::Forloop(_, f, _) => {
                block_names(&f.body, out);
                if let Some(empty) = &f.empty_body {
                    block_names(empty, out);
                }
            }
            Node::If(i, _) => {
                for (_, _, body) in &i.conditions {
                    block_names(body, out);
                }
                if let Some((_, body)) = &i.otherwise {
                    block_names(body, out);
                }
            }
            _ => {}
        }
    }
}

/// Filters after which HTML is text, a number or escaped on purpose: its
/// tags are gone or meant to show.
const MAKE_TEXT: &[&str] = &[
    "striptags",
    "length",
    "wordcount",
    "escape",
    "escape_xml",
    "json_encode",
    "urlencode",
    "urlencode_strict",
    "as_str",
];

/// Each print (`{{ … }}`) of HTML that basepress made (`page.content`,
/// and any value whose last name ends in `_html`) that Tera escapes: its
/// last filter is not `safe` (as Tera decides; `{% filter safe %}` around
/// it does not help), and no filter before made it text.
fn escaped_html(t: &TemplateFile, items: &[Item]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for item in items.iter().filter(|i| i.kind == Kind::Print) {
        let Some((value, filters)) = print_parts(item.inner) else {
            continue;
        };
        if !holds_html(value)
            || filters.last() == Some(&"safe")
            || filters.iter().any(|f| MAKE_TEXT.contains(f))
        {
            continue;
        }
        let d = Diagnostic::new(
            rule::TEMPLATE_HTML_ESCAPED,
            format!(
                "`{}` prints HTML without `| safe` last, so the page shows its tags as text (`&lt;p&gt;…`)",
                item.source.trim()
            ),
        )
        .help(format!(
            "end it with `| safe` (`{{{{ {} | safe }}}}`): basepress made this HTML and escaped what it holds",
            item.inner.trim()
        ));
        out.push(locate(d, t, Some(item.at)));
    }
    out
}

/// Whether the context value `id` names is HTML basepress made.
fn holds_html(id: &str) -> bool {
    let path = id.split('[').next().unwrap_or(id);
    let last = path.rsplit('.').next().unwrap_or(path);
    path == "page.content" || last.ends_with("_html")
}

/// The value a print's expression starts with (`v.verifying_html[lang.code]`)
/// and the names of its filters in order, when it is a value and filters
/// only (`None` for `a ~ b`, a function call, a literal…).
fn print_parts(expr: &str) -> Option<(&str, Vec<&str>)> {
    let expr = expr.trim();
    let mut depth = 0usize;
    let mut end = expr.len();
    for (i, c) in expr.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.checked_sub(1)?,
            c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == '.') => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let value = &expr[..end];
    let rest = expr[end..].trim_start();
    if value.is_empty() || !(rest.is_empty() || rest.starts_with('|')) {
        return None;
    }
    let filters = split_top_level(rest, '|')
        .into_iter()
        .skip(1)
        .map(|f| {
            let f = f.trim_start();
            let n = f
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(f.len());
            &f[..n]
        })
        .collect();
    Some((value, filters))
}

/// `text` cut at each `sep` outside quotes and brackets.
fn split_top_level(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut from) = (0usize, None, 0);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'' | '`') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth = depth.saturating_sub(1),
            (None, c) if c == sep && depth == 0 => {
                parts.push(&text[from..i]);
                from = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[from..]);
    parts
}

fn locate(d: Diagnostic, t: &TemplateFile, at: Option<(usize, usize)>) -> Diagnostic {
    match at {
        Some((line, column)) => d.at(Location::at(&t.source, line, column)),
        None => d.in_file(&t.source),
    }
}

/// What a piece of a template's text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    /// `{{ … }}`
    Print,
    /// `{% … %}`
    Tag,
    /// `{# … #}`
    Comment,
}

/// A piece of a template's text, where it starts (1-based line and
/// column, in characters), and how many blocks and macros it is inside.
#[derive(Debug, Clone)]
struct Item<'a> {
    kind: Kind,
    /// The whole piece as written.
    source: &'a str,
    /// Inside the delimiters and their `-`, for a print or tag.
    inner: &'a str,
    at: (usize, usize),
    depth: usize,
}

impl Item<'_> {
    fn words(&self) -> std::str::SplitWhitespace<'_> {
        self.inner.split_whitespace()
    }

    /// Where the piece's first character that is not white space is.
    fn content_at(&self) -> (usize, usize) {
        let blank = self.source.len() - self.source.trim_start().len();
        after(self.at, &self.source[..blank])
    }
}

/// The line and column (1-based, in characters) right after `piece`,
/// which starts at `at`.
fn after((mut line, mut column): (usize, usize), piece: &str) -> (usize, usize) {
    for c in piece.chars() {
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    (line, column)
}

/// The pieces of a template's text, in order: text, prints, tags and
/// comments (a tag's end is looked for outside its quoted strings; what
/// `{% raw %}` holds is text). Never fails: an unclosed piece runs to the
/// end.
fn scan(text: &str) -> Vec<Item<'_>> {
    let mut items = Vec::new();
    let mut at = (1, 1);
    let mut depth = 0usize;
    let mut raw = false;
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let opener = rest.get(..2);
        let (kind, len) = match opener {
            // What `{% raw %}` holds is text, to its `{% endraw %}`.
            _ if raw && !is_endraw(rest) => {
                let end = rest
                    .match_indices("{%")
                    .map(|(at, _)| at)
                    .find(|&at| at > 0 && is_endraw(&rest[at..]))
                    .unwrap_or(rest.len());
                (Kind::Text, end.max(1))
            }
            Some("{{") => (Kind::Print, closing(rest, "}}")),
            Some("{%") => (Kind::Tag, closing(rest, "%}")),
            Some("{#") => (Kind::Comment, rest.find("#}").map_or(rest.len(), |e| e + 2)),
            _ => {
                // Text up to the next opener.
                let first = rest.chars().next().map_or(1, char::len_utf8);
                let next = rest[first..].find(['{']).map_or(rest.len(), |n| n + first);
                (Kind::Text, next)
            }
        };
        let source = &rest[..len];
        let inner = match kind {
            Kind::Print | Kind::Tag => source
                .get(2..source.len().saturating_sub(2).max(2))
                .unwrap_or("")
                .trim_matches(|c: char| c == '-' || c.is_whitespace()),
            _ => source,
        };
        if kind == Kind::Tag {
            match inner.split_whitespace().next() {
                Some("raw") => raw = true,
                Some("endraw") => raw = false,
                Some("endblock" | "endmacro") => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        items.push(Item {
            kind,
            source,
            inner,
            at,
            depth,
        });
        if kind == Kind::Tag && matches!(inner.split_whitespace().next(), Some("block" | "macro")) {
            depth += 1;
        }
        at = after(at, source);
        i += len;
    }
    items
}

/// Whether `rest` starts with the tag `{% endraw %}` (with any `-`).
fn is_endraw(rest: &str) -> bool {
    rest.strip_prefix("{%").is_some_and(|r| {
        let r = r.trim_start_matches('-').trim_start();
        r.strip_prefix("endraw")
            .is_some_and(|r| r.trim_start().trim_start_matches('-').starts_with("%}"))
    })
}

/// The length of the piece that `rest` opens, up to and with `close`,
/// looked for outside quoted strings; all of `rest` when unclosed.
fn closing(rest: &str, close: &str) -> usize {
    let mut quote: Option<char> = None;
    for (i, c) in rest.char_indices().skip(2) {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if matches!(c, '"' | '\'' | '`') => quote = Some(c),
            None if rest[i..].starts_with(close) => return i + close.len(),
            None => {}
        }
    }
    rest.len()
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
        let page = "{% extends \"base.html\" %}\n{% import \"macros.html\" as m %}\n{% macro x() %}<p>in a macro</p>{% endmacro x %}\n<p>lost</p>\n{% block boddy %}\n{% block inner %}<p>lost</p>{% endblock inner %}\n{% endblock boddy %}\n{% block title %}T{% endblock title %}\n";
        let found = findings(&[("page.html", page)]);
        assert_eq!(
            said(&found),
            [
                (
                    "template-content-unrendered".to_string(),
                    "templates/page.html:4:1".to_string()
                ),
                (
                    "template-content-unrendered".to_string(),
                    "templates/page.html:5:1".to_string()
                ),
            ]
        );
        assert!(
            found[0].message.contains("(`<p>lost</p>`)"),
            "{}",
            found[0].message
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
        // A `set` outside blocks sets nothing the blocks see.
        let page = "{% extends \"base.html\" %}\n  {% set greeting = \"hi\" %}\n{% block body %}{{ greeting | default(value=\"x\") }}{% endblock body %}\n";
        let found = findings(&[("page.html", page)]);
        assert_eq!(
            said(&found),
            [(
                "template-content-unrendered".to_string(),
                "templates/page.html:2:3".to_string()
            )]
        );
        // `{%}` before a block tag (in a comment, raw text, a string) is no
        // tag: nothing breaks, and the block is found where it is.
        let page = "{% extends \"base.html\" %}\n{# a lone {%} #}{% raw %}{%}{% endraw %}\n{% block boddy %}{{ page.content | safe }}{% endblock boddy %}\n";
        let site = site(&[("page.html", page)]);
        let tera = super::super::engine(&site).expect("compiles");
        assert_eq!(
            said(&lint(&site, &tera)),
            [
                (
                    "template-content-unrendered".to_string(),
                    "templates/page.html:2:17".to_string()
                ),
                (
                    "template-content-unrendered".to_string(),
                    "templates/page.html:3:1".to_string()
                ),
            ]
        );
    }

    #[test]
    fn a_block_of_the_parent_inside_if_or_for_is_known() {
        let base = "<html><body>{% if page %}{% block sidebar %}s{% endblock sidebar %}{% endif %}{% filter upper %}{% block once %}{% endblock once %}{% endfilter %}{% block body %}{% endblock body %}</body></html>";
        let page = "{% extends \"base.html\" %}{% block sidebar %}S{% endblock sidebar %}{% block once %}O{% endblock once %}{% block body %}{{ page.content | safe }}{% endblock body %}";
        let found = findings(&[("base.html", base), ("page.html", page)]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn html_is_escaped_unless_safe_is_its_last_filter() {
        let page = "{% extends \"base.html\" %}\n{% block head %}<meta content=\"{{ page.content | striptags | truncate(length=20) }}\">{{ nav_html | length }}{% endblock head %}\n{% block body %}{% if page.content %}x{% endif %}\n  «é» {% filter safe %}{{ nav_html }}{% endfilter %}\n{{ page.content | safe | replace(from=\"a|b\", to=\"c\") }}\n{{ page.content | replace(from=\"a\", to=\"b\") | safe }}{{ page.title }}\n{{- page.content -}}\n{% raw %}{{ page.content }}{% endraw %}{# {{ nav_html }} #}\n{% endblock body %}\n";
        let found = findings(&[("page.html", page)]);
        assert_eq!(
            said(&found),
            [
                (
                    "template-html-escaped".to_string(),
                    "templates/page.html:4:24".to_string()
                ),
                (
                    "template-html-escaped".to_string(),
                    "templates/page.html:5:1".to_string()
                ),
                (
                    "template-html-escaped".to_string(),
                    "templates/page.html:7:1".to_string()
                ),
            ]
        );
        assert!(
            found[1].remedy().contains("| safe }}"),
            "{}",
            found[1].remedy()
        );
        let macros = "{% macro card(body_html) %}<div>{{ body_html }}</div>{% endmacro card %}";
        let page = "{% import \"macros.html\" as m %}{% extends \"base.html\" %}{% block body %}{{ m::card(body_html=page.content) }}{% endblock body %}";
        let found = findings(&[("macros.html", macros), ("page.html", page)]);
        assert_eq!(
            said(&found),
            [(
                "template-html-escaped".to_string(),
                "templates/macros.html:1:33".to_string()
            )]
        );
        let versions = "{% extends \"base.html\" %}{% block body %}{% for v in versions %}{{ v.verifying_html[lang.code] }}{% endfor %}{% endblock body %}";
        let found = findings(&[("versions.html", versions)]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].message.contains("v.verifying_html[lang.code]"),
            "{}",
            found[0].message
        );
    }

    proptest::proptest! {
        /// Any text scans without a panic into pieces that are the text,
        /// in order, each at the line and column where it starts.
        #[test]
        fn any_text_scans_into_its_pieces(text in "[{}%#\"'a é\n-]{0,40}") {
            let items = scan(&text);
            let joined: String = items.iter().map(|i| i.source).collect();
            proptest::prop_assert_eq!(&joined, &text);
            let mut before = String::new();
            for i in &items {
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
                proptest::prop_assert_eq!(i.at, (line, column));
                before.push_str(i.source);
            }
        }
    }

    #[test]
    fn an_unused_override_of_a_default_part_says_how_to_use_it() {
        let base = "<html><body>{% block body %}{% endblock body %}</body></html>";
        let found = findings(&[
            ("base.html", base),
            ("partials/footer.html", "<footer></footer>"),
        ]);
        assert_eq!(
            said(&found),
            [(
                "template-unused".to_string(),
                "templates/partials/footer.html:0:0".to_string()
            )]
        );
        assert!(
            found[0]
                .remedy()
                .contains("{% include \"partials/footer.html\" %}"),
            "{}",
            found[0].remedy()
        );
    }
}
