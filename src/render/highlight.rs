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
//! server keeps one. A render of a whole site also makes [`Repeats`]: a
//! block whose language and text occur on several pages (as the same
//! install step does in the docs of every version) is highlighted once.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
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

/// What highlights the blocks of a page: the highlighter and, in a render
/// of the whole site, the blocks that repeat.
#[derive(Clone, Copy)]
pub struct Highlight<'a> {
    pub highlighter: &'a Highlighter,
    pub repeats: Option<&'a Repeats>,
}

impl Highlight<'_> {
    /// [`Highlighter::highlight`], the HTML of a repeated block made once.
    pub fn block(&self, lang: &str, code: &str) -> Option<String> {
        match self.repeats {
            Some(repeats) => repeats.highlight(self.highlighter, lang, code),
            None => self.highlighter.highlight(lang, code),
        }
    }
}

impl<'a> From<&'a Highlighter> for Highlight<'a> {
    fn from(highlighter: &'a Highlighter) -> Self {
        Highlight {
            highlighter,
            repeats: None,
        }
    }
}

/// The code blocks that one render highlights more than once, by the
/// digest of their language and text. The first use highlights a block and
/// keeps its HTML; the last use takes it out. Memory holds only blocks that
/// repeat and have uses still to come, and nothing outlives the render.
#[derive(Default)]
pub struct Repeats {
    left: Mutex<HashMap<[u8; 32], Repeat>>,
}

struct Repeat {
    uses: usize,
    /// What [`Highlighter::highlight`] gave, once a use has made it.
    html: Option<Option<String>>,
}

impl Repeats {
    /// The blocks, each a language and its text, that occur more than once
    /// among `blocks` (every block the render will highlight).
    pub fn of<'b>(blocks: impl IntoIterator<Item = (&'b str, &'b str)>) -> Repeats {
        let mut uses: HashMap<[u8; 32], usize> = HashMap::new();
        for (lang, code) in blocks {
            *uses.entry(key(lang, code)).or_default() += 1;
        }
        let left = uses
            .into_iter()
            .filter(|&(_, n)| n > 1)
            .map(|(k, uses)| (k, Repeat { uses, html: None }))
            .collect();
        Repeats {
            left: Mutex::new(left),
        }
    }

    /// How many blocks are kept or still to come.
    pub fn len(&self) -> usize {
        self.left.lock().map_or(0, |l| l.len())
    }

    /// Whether no block repeats (or every repeat has been used).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `highlighter.highlight(lang, code)`, made once for a repeated block.
    /// Two threads at the first use of the same block may both make it:
    /// the output is the same.
    pub fn highlight(&self, highlighter: &Highlighter, lang: &str, code: &str) -> Option<String> {
        let k = key(lang, code);
        let Ok(mut left) = self.left.lock() else {
            return highlighter.highlight(lang, code);
        };
        let Some(repeat) = left.get_mut(&k) else {
            drop(left);
            return highlighter.highlight(lang, code);
        };
        let html = match &repeat.html {
            Some(html) => html.clone(),
            None => {
                drop(left);
                let html = highlighter.highlight(lang, code);
                left = match self.left.lock() {
                    Ok(again) => again,
                    Err(_) => return html,
                };
                match left.get_mut(&k) {
                    Some(repeat) => {
                        repeat.html.get_or_insert_with(|| html.clone());
                    }
                    None => return html,
                }
                html
            }
        };
        if let Some(repeat) = left.get_mut(&k) {
            repeat.uses = repeat.uses.saturating_sub(1);
            if repeat.uses == 0 {
                left.remove(&k);
            }
        }
        html
    }
}

/// A block's key: its language and text.
fn key(lang: &str, code: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update((lang.len() as u64).to_le_bytes());
    h.update(lang);
    h.update(code);
    h.finalize().into()
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        /// Any order of blocks, repeated or not, in known or unknown
        /// languages, gets what the highlighter alone gives, on several
        /// threads at once; every repeat is let go after its last use.
        #[test]
        fn repeats_give_what_the_highlighter_gives_and_keep_nothing_after(
            picks in proptest::collection::vec(0usize..6, 0..40),
        ) {
            const BLOCKS: [(&str, &str); 6] = [
                ("yaml", "kind: Deployment\nmetadata:\n  name: agent # x\n"),
                ("yaml", "kind: Service\n"),
                ("bash", "kubectl apply -k \"$DIR\"\n"),
                ("text", "plain <b>\n"),
                ("python", "def f():\n    return 1\n"),
                ("nosuchlanguage", "x < y\n"),
            ];
            let highlighter = Highlighter::default();
            let blocks: Vec<(&str, &str)> = picks.iter().map(|&i| BLOCKS[i]).collect();
            let repeats = Repeats::of(blocks.iter().copied());
            let distinct: std::collections::BTreeSet<usize> = picks.iter().copied().collect();
            proptest::prop_assert_eq!(repeats.len(), distinct.len() - picks_once(&picks));
            let with = Highlight { highlighter: &highlighter, repeats: Some(&repeats) };
            let (left, right) = blocks.split_at(blocks.len() / 2);
            let (a, b) = std::thread::scope(|s| {
                let run = |part: &[(&str, &str)]| -> Vec<Option<String>> {
                    part.iter().map(|(l, c)| with.block(l, c)).collect()
                };
                let a = s.spawn(move || run(left));
                let b = run(right);
                (a.join().expect("no panic"), b)
            });
            let alone: Vec<Option<String>> = blocks.iter().map(|(l, c)| highlighter.highlight(l, c)).collect();
            proptest::prop_assert_eq!([a, b].concat(), alone);
            proptest::prop_assert!(repeats.is_empty());
        }
    }

    /// How many of `picks` occur exactly once.
    fn picks_once(picks: &[usize]) -> usize {
        let mut n = std::collections::BTreeMap::new();
        for p in picks {
            *n.entry(p).or_insert(0) += 1;
        }
        n.values().filter(|&&c| c == 1).count()
    }
}
