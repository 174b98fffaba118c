//! Code highlighting at build time, with syntect's default grammars.
//!
//! The output is plain `<span class="hl-…">` markup, styled by
//! `/assets/syntax.css` for light and dark schemes: no script and no theme
//! colours in the HTML. Only a handful of classes are emitted (comments,
//! strings, numbers, keywords, keys…): a span opens where the class of the
//! text changes, not for every scope the grammar pushes, which keeps pages
//! small and the work per line low.
//!
//! The grammars are loaded once per process, on the first block that names
//! a language they know. Results are kept by language and code, so a block
//! that appears on many pages (the same example in every language) is
//! highlighted once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

/// Scope prefixes and the class of text inside them, most specific first:
/// the innermost scope of a token that matches one decides its class.
const CLASSES: &[(&str, &str)] = &[
    ("comment", "hl-comment"),
    ("punctuation.definition.comment", "hl-comment"),
    ("string", "hl-string"),
    ("constant.numeric", "hl-number"),
    ("constant.character.escape", "hl-constant"),
    ("constant.language", "hl-constant"),
    ("constant.other", "hl-constant"),
    ("support.constant", "hl-constant"),
    ("entity.name.tag", "hl-key"),
    ("entity.other.attribute-name", "hl-key"),
    ("meta.mapping.key", "hl-key"),
    ("support.type.property-name", "hl-key"),
    ("entity.name.function", "hl-function"),
    ("support.function", "hl-function"),
    ("variable.function", "hl-function"),
    ("keyword", "hl-keyword"),
    ("storage", "hl-keyword"),
    ("variable.parameter", "hl-variable"),
    ("variable.other", "hl-variable"),
    ("punctuation.definition.variable", "hl-variable"),
    ("entity.name", "hl-type"),
    ("support.type", "hl-type"),
];

/// Languages that are shown as they are, without loading the grammars.
const PLAIN: &[&str] = &["", "text", "txt", "plain", "plaintext", "none", "output"];

struct Grammars {
    syntaxes: SyntaxSet,
    classes: Vec<(Scope, &'static str)>,
}

fn grammars() -> &'static Grammars {
    static GRAMMARS: OnceLock<Grammars> = OnceLock::new();
    GRAMMARS.get_or_init(|| Grammars {
        syntaxes: SyntaxSet::load_defaults_newlines(),
        classes: CLASSES
            .iter()
            .filter_map(|(s, c)| Scope::new(s).ok().map(|s| (s, *c)))
            .collect(),
    })
}

/// Extra names for grammars whose own name or extensions do not cover
/// what people write after the fence.
fn alias(lang: &str) -> &str {
    match lang {
        "shell" | "console" | "shell-session" | "zsh" => "bash",
        "yml" => "yaml",
        "dockerfile" => "Dockerfile",
        other => other,
    }
}

/// The syntax for a fence's language word, when syntect knows it.
fn syntax(lang: &str) -> Option<&'static SyntaxReference> {
    let lang = lang.to_ascii_lowercase();
    if PLAIN.contains(&lang.as_str()) {
        return None;
    }
    let g = grammars();
    g.syntaxes
        .find_syntax_by_token(alias(&lang))
        .filter(|s| s.name != "Plain Text")
}

/// Blocks already highlighted, by language and code.
type Cache = Mutex<HashMap<(String, String), Option<Arc<str>>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Cache::default)
}

/// Highlighted HTML for `code` (the inside of `<code>`), or `None` when the
/// language is unknown or its grammar fails on the text: the caller then
/// shows it escaped, as plain text.
pub fn highlight(lang: &str, code: &str) -> Option<Arc<str>> {
    let syntax = syntax(lang)?;
    let key = (lang.to_string(), code.to_string());
    if let Some(done) = cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return done;
    }
    let html: Option<Arc<str>> = highlight_with(syntax, code).map(Arc::from);
    if let Ok(mut c) = cache().lock() {
        c.insert(key, html.clone());
    }
    html
}

/// Highlights `code` with `syntax`.
fn highlight_with(syntax: &SyntaxReference, code: &str) -> Option<String> {
    let g = grammars();
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut html = String::with_capacity(code.len() * 2);
    for line in LinesWithEndings::from(code) {
        let ops = state.parse_line(line, &g.syntaxes).ok()?;
        let mut open: Option<&str> = None;
        let mut at = 0;
        for (i, op) in ops {
            if i > at {
                emit(
                    &mut html,
                    &mut open,
                    class_of(&stack, &g.classes),
                    &line[at..i],
                );
                at = i;
            }
            stack.apply(&op).ok()?;
        }
        if at < line.len() {
            emit(
                &mut html,
                &mut open,
                class_of(&stack, &g.classes),
                &line[at..],
            );
        }
        if open.is_some() {
            close_before_newline(&mut html);
        }
    }
    Some(html)
}

/// The class of text under `stack`: that of its innermost classed scope.
fn class_of(stack: &ScopeStack, classes: &[(Scope, &'static str)]) -> Option<&'static str> {
    stack.as_slice().iter().rev().find_map(|scope| {
        classes
            .iter()
            .find(|(prefix, _)| prefix.is_prefix_of(*scope))
            .map(|(_, c)| *c)
    })
}

/// Appends `text` with class `class`, opening or closing a span only when
/// the class changes.
fn emit(
    html: &mut String,
    open: &mut Option<&'static str>,
    class: Option<&'static str>,
    text: &str,
) {
    if *open != class {
        if open.is_some() {
            html.push_str("</span>");
        }
        if let Some(c) = class {
            html.push_str("<span class=\"");
            html.push_str(c);
            html.push_str("\">");
        }
        *open = class;
    }
    html.push_str(&super::markdown::escape(text));
}

/// Closes the span open at the end of a line, before its newline, so every
/// line of the block stands alone.
fn close_before_newline(html: &mut String) {
    if html.ends_with('\n') {
        html.pop();
        html.push_str("</span>\n");
    } else {
        html.push_str("</span>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of some HTML: tags dropped, the five escapes undone.
    fn text(html: &str) -> String {
        let mut out = String::new();
        let mut in_tag = false;
        for c in html.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&")
    }

    #[test]
    fn yaml_keys_strings_and_comments_get_classes() {
        let code = "# a comment\nkind: StatefulSet\nreplicas: 1\nname: \"agent\"\n";
        let html = highlight("yaml", code).expect("yaml is known");
        assert!(
            html.contains("<span class=\"hl-comment\"># a comment</span>\n"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"hl-key\">kind</span>"),
            "{html}"
        );
        assert!(html.contains("hl-number\">1</span>"), "{html}");
        assert!(html.contains("hl-string"), "{html}");
        assert_eq!(text(&html), code);
    }

    #[test]
    fn shell_is_known_by_its_usual_names_and_text_is_kept_exactly() {
        let code = "VERSION=1.30.0   # the tag\nFILES=$(curl -fsSL \"$BASE/files.txt\") &&\n  for f in $FILES; do echo '<a>' & done\n";
        for lang in ["sh", "bash", "shell", "console"] {
            let html = highlight(lang, code).unwrap_or_else(|| panic!("{lang} is known"));
            assert!(html.contains("hl-"), "{lang}: {html}");
            assert_eq!(text(&html), code, "{lang}");
            assert!(!html.contains("<a>"), "text is escaped: {html}");
        }
    }

    #[test]
    fn unknown_and_plain_languages_are_not_highlighted() {
        for lang in ["", "text", "dotenv-x", "nonsense"] {
            assert!(highlight(lang, "a = 1\n").is_none(), "{lang}");
        }
    }

    #[test]
    fn a_block_without_a_final_newline_keeps_its_text() {
        let html = highlight("json", "{\"a\": [1, true]}").expect("json is known");
        assert_eq!(text(&html), "{\"a\": [1, true]}");
        assert_eq!(
            html.matches("<span").count(),
            html.matches("</span>").count()
        );
    }
}
