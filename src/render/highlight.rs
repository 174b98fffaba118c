//! Code highlighting at build time.
//!
//! The output is plain `<span class="hl-…">` markup, styled by
//! `/assets/syntax.css` for light and dark schemes: no script and no theme
//! colours in the HTML. Only a handful of classes are emitted (comments,
//! strings, numbers, keywords, keys…): a span opens where the class of the
//! text changes, and closes before every newline so that each line of a
//! block stands alone.
//!
//! Two engines share that output:
//!
//! - **tree-sitter** for the languages these docs are made of: YAML (every
//!   manifest and overlay), shell (every install step) and JSON. Its
//!   parsers are generated C, 5 to 7 times faster than the regular
//!   expressions of TextMate grammars on our pages, which matters when a
//!   site has thousands of pages with a dozen blocks each.
//! - **syntect**, with its default grammars, for every other language.
//!
//! A [`Highlighter`] sets its grammars up when the first block needs them
//! and keeps them for as long as it lives: a build makes one, the preview
//! server keeps one.

use std::sync::{Mutex, OnceLock};
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;
use tree_sitter_highlight::{HighlightConfiguration, HighlightEvent};

/// syntect's scope prefixes and the class of text inside them, most
/// specific first: the innermost scope of a token that matches one decides
/// its class.
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

/// tree-sitter's capture names and their classes. A capture takes the
/// entry that shares the most leading parts with it (`string.special.key`
/// is a key, `string.special` a string); `None` leaves its text to the
/// enclosing capture.
const CAPTURES: &[(&str, Option<&str>)] = &[
    ("comment", Some("hl-comment")),
    ("string", Some("hl-string")),
    ("string.special.key", Some("hl-key")),
    ("property", Some("hl-key")),
    ("number", Some("hl-number")),
    ("boolean", Some("hl-constant")),
    ("constant", Some("hl-constant")),
    ("escape", Some("hl-constant")),
    ("keyword", Some("hl-keyword")),
    ("function", Some("hl-function")),
    ("variable", Some("hl-variable")),
    ("type", Some("hl-type")),
    ("label", Some("hl-type")),
    ("attribute", Some("hl-type")),
    ("embedded", None),
    ("operator", None),
    ("punctuation", None),
];

/// Languages that are shown as they are, without loading any grammar.
const PLAIN: &[&str] = &["", "text", "txt", "plain", "plaintext", "none", "output"];

/// The tree-sitter languages, by the words people write after the fence.
#[derive(Clone, Copy)]
enum Native {
    Yaml,
    Shell,
    Json,
}

fn native(lang: &str) -> Option<Native> {
    match lang {
        "yaml" | "yml" => Some(Native::Yaml),
        "bash" | "sh" | "shell" | "console" | "shell-session" | "zsh" => Some(Native::Shell),
        "json" => Some(Native::Json),
        _ => None,
    }
}

/// The tree-sitter grammars with their highlight queries.
struct Natives {
    yaml: HighlightConfiguration,
    shell: HighlightConfiguration,
    json: HighlightConfiguration,
}

fn natives() -> Option<Natives> {
    let names: Vec<&str> = CAPTURES.iter().map(|(name, _)| *name).collect();
    let config = |language: tree_sitter::Language, name: &str, query: &str| {
        let mut c = HighlightConfiguration::new(language, name, query, "", "").ok()?;
        c.configure(&names);
        Some(c)
    };
    Some(Natives {
        yaml: config(
            tree_sitter_yaml::LANGUAGE.into(),
            "yaml",
            tree_sitter_yaml::HIGHLIGHTS_QUERY,
        )?,
        shell: config(
            tree_sitter_bash::LANGUAGE.into(),
            "bash",
            tree_sitter_bash::HIGHLIGHT_QUERY,
        )?,
        json: config(
            tree_sitter_json::LANGUAGE.into(),
            "json",
            tree_sitter_json::HIGHLIGHTS_QUERY,
        )?,
    })
}

struct Grammars {
    syntaxes: SyntaxSet,
    classes: Vec<(Scope, &'static str)>,
}

fn grammars() -> Grammars {
    Grammars {
        syntaxes: SyntaxSet::load_defaults_newlines(),
        classes: CLASSES
            .iter()
            .filter_map(|(s, c)| Scope::new(s).ok().map(|s| (s, *c)))
            .collect(),
    }
}

/// Highlights code blocks; shared by the threads of a build.
#[derive(Default)]
pub struct Highlighter {
    natives: OnceLock<Option<Natives>>,
    grammars: OnceLock<Grammars>,
    /// tree-sitter highlighters (a parser and its buffers each) not in use
    /// by a thread right now, reused from block to block.
    idle: Mutex<Vec<TsHighlighter>>,
}

type TsHighlighter = tree_sitter_highlight::Highlighter;

impl Highlighter {
    /// Highlighted HTML for `code` (the inside of `<code>`), or `None` when
    /// the language is unknown or its grammar fails on the text: the
    /// caller then shows it escaped, as plain text.
    pub fn highlight(&self, lang: &str, code: &str) -> Option<String> {
        let lang = lang.to_ascii_lowercase();
        if PLAIN.contains(&lang.as_str()) {
            return None;
        }
        match native(&lang) {
            Some(n) => self.highlight_native(n, code),
            None => {
                let g = self.grammars.get_or_init(grammars);
                let syntax = g
                    .syntaxes
                    .find_syntax_by_token(&lang)
                    .filter(|s| s.name != "Plain Text")?;
                highlight_with(g, syntax, code)
            }
        }
    }

    /// Highlights `code` with a tree-sitter grammar.
    fn highlight_native(&self, language: Native, code: &str) -> Option<String> {
        let n = self.natives.get_or_init(natives).as_ref()?;
        let config = match language {
            Native::Yaml => &n.yaml,
            Native::Shell => &n.shell,
            Native::Json => &n.json,
        };
        let mut h = self
            .idle
            .lock()
            .ok()
            .and_then(|mut idle| idle.pop())
            .unwrap_or_default();
        let html = highlight_events(&mut h, config, language, code);
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(h);
        }
        html
    }
}

fn highlight_events(
    h: &mut TsHighlighter,
    config: &HighlightConfiguration,
    language: Native,
    code: &str,
) -> Option<String> {
    let events = h
        .highlight(config, code.as_bytes(), None, None, |_| None)
        .ok()?;
    let mut out = Html::new(code.len());
    // The captures open around the text, innermost last.
    let mut open: Vec<Option<&'static str>> = Vec::new();
    for event in events {
        match event.ok()? {
            HighlightEvent::HighlightStart(h) => {
                open.push(class(language, h.0));
            }
            HighlightEvent::HighlightEnd => {
                open.pop();
            }
            HighlightEvent::Source { start, end } => {
                let class = open.iter().rev().find_map(|c| *c);
                out.text(class, code.get(start..end)?);
            }
        }
    }
    Some(out.finish())
}

/// The class of a tree-sitter capture, by its index in [`CAPTURES`].
fn class(language: Native, capture: usize) -> Option<&'static str> {
    let (name, class) = CAPTURES.get(capture)?;
    match (language, *name) {
        // The shell grammar captures variable names as properties.
        (Native::Shell, "property") => Some("hl-variable"),
        _ => *class,
    }
}

/// Highlights `code` with a syntect grammar.
fn highlight_with(g: &Grammars, syntax: &SyntaxReference, code: &str) -> Option<String> {
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut out = Html::new(code.len());
    for line in LinesWithEndings::from(code) {
        let ops = state.parse_line(line, &g.syntaxes).ok()?;
        let mut at = 0;
        for (i, op) in ops {
            if i > at {
                out.text(class_of(&stack, &g.classes), &line[at..i]);
                at = i;
            }
            stack.apply(&op).ok()?;
        }
        if at < line.len() {
            out.text(class_of(&stack, &g.classes), &line[at..]);
        }
    }
    Some(out.finish())
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

/// Highlighted HTML being written: a span opens only where the class of
/// the text changes, and closes before every newline.
struct Html {
    html: String,
    open: Option<&'static str>,
}

impl Html {
    fn new(len: usize) -> Self {
        Html {
            html: String::with_capacity(len * 2),
            open: None,
        }
    }

    /// Appends `text` with class `class`.
    fn text(&mut self, class: Option<&'static str>, text: &str) {
        for piece in text.split_inclusive('\n') {
            let (line, newline) = match piece.strip_suffix('\n') {
                Some(line) => (line, true),
                None => (piece, false),
            };
            if !line.is_empty() && self.open != class {
                self.close();
                if let Some(c) = class {
                    self.html.push_str("<span class=\"");
                    self.html.push_str(c);
                    self.html.push_str("\">");
                }
                self.open = class;
            }
            super::escape::escape_into(&mut self.html, line);
            if newline {
                self.close();
                self.html.push('\n');
            }
        }
    }

    fn close(&mut self) {
        if self.open.take().is_some() {
            self.html.push_str("</span>");
        }
    }

    fn finish(mut self) -> String {
        self.close();
        self.html
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn highlight(lang: &str, code: &str) -> Option<String> {
        Highlighter::default().highlight(lang, code)
    }

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

    /// Every line of the output opens and closes its own spans.
    fn lines_stand_alone(html: &str) {
        for line in html.lines() {
            assert_eq!(
                line.matches("<span").count(),
                line.matches("</span>").count(),
                "{line:?} in {html}"
            );
        }
    }

    #[test]
    fn text_spanning_lines_is_closed_and_reopened_on_each() {
        let yaml = "data:\n  script: |\n    echo one\n    echo two\n# one\n# two\n";
        let html = highlight("yaml", yaml).expect("yaml is known");
        lines_stand_alone(&html);
        assert_eq!(text(&html), yaml);
        assert!(
            html.contains("<span class=\"hl-string\">    echo two</span>\n"),
            "{html}"
        );
        let sh = "echo \"a\nb\" # done\ncat <<EOF\n$HOME\nEOF\n";
        let html = highlight("sh", sh).expect("sh is known");
        lines_stand_alone(&html);
        assert_eq!(text(&html), sh);
    }

    #[test]
    fn shell_commands_variables_and_strings_get_classes() {
        let html = highlight("bash", "kubectl apply -k \"$DIR\" # go\n").expect("known");
        assert!(
            html.contains("<span class=\"hl-function\">kubectl</span>"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"hl-variable\">DIR</span>"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"hl-comment\"># go</span>"),
            "{html}"
        );
    }

    #[test]
    fn other_languages_come_from_the_textmate_grammars() {
        for (lang, code) in [
            ("python", "def f():\n    return \"x\"  # note\n"),
            ("go", "package main // x\nfunc main() {}\n"),
            ("rust", "fn main() { let x = 1; }\n"),
        ] {
            let html = highlight(lang, code).unwrap_or_else(|| panic!("{lang} is known"));
            assert!(html.contains("<span class=\"hl-"), "{lang}: {html}");
            assert_eq!(text(&html), code, "{lang}");
            lines_stand_alone(&html);
        }
    }
}
