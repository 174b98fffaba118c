//! What the analysis of a page's Markdown gives the later stages: its
//! headings (for the table of contents and anchors), links (for the link
//! check), code blocks (for the example checks) and text (for search).

use serde::Serialize;
use std::sync::OnceLock;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Heading {
    pub level: u8,
    pub id: String,
    pub title: String,
}

/// A page's headings in the order they appear, with their ids indexed so
/// that finding the heading of an anchor takes logarithmic time (a page of
/// thousands of headings and links to them stays linear to check).
#[derive(Debug, Clone, Default)]
pub struct Headings {
    list: Vec<Heading>,
    /// Indexes into `list`, sorted by id (equal ids in page order).
    by_id: Vec<u32>,
    /// The ids GitHub and Hugo give the headings, with the index of each,
    /// sorted: made the first time an anchor is looked up among them.
    by_github_id: OnceLock<Vec<(String, u32)>>,
}

impl Headings {
    pub fn new(list: Vec<Heading>) -> Headings {
        let mut by_id: Vec<u32> = (0..list.len() as u32).collect();
        by_id.sort_by(|&a, &b| list[a as usize].id.cmp(&list[b as usize].id));
        Headings {
            list,
            by_id,
            by_github_id: OnceLock::new(),
        }
    }

    /// The heading GitHub (and Hugo, by default) would give the id `id`:
    /// its text in lowercase, without punctuation, spaces made `-`, and
    /// `-1`, `-2`… added to repeats (`## 1.30.0` is `1300`).
    pub fn with_github_id(&self, id: &str) -> Option<&Heading> {
        let index = self.by_github_id.get_or_init(|| {
            // As GitHub's slugger numbers repeats: from the count of the
            // text's id so far, skipping ids taken.
            let mut taken: std::collections::HashMap<String, usize> = Default::default();
            let mut index: Vec<(String, u32)> = Vec::with_capacity(self.list.len());
            for (i, h) in self.list.iter().enumerate() {
                let base = github_id(&h.title);
                let mut id = base.clone();
                while taken.contains_key(&id) {
                    let n = taken.entry(base.clone()).or_insert(0);
                    *n += 1;
                    id = format!("{base}-{n}");
                }
                taken.insert(id.clone(), 0);
                index.push((id, i as u32));
            }
            // Stable: of equal ids, the first heading comes first.
            index.sort_by(|a, b| a.0.cmp(&b.0));
            index
        });
        let at = index.partition_point(|(g, _)| g.as_str() < id);
        let (g, i) = index.get(at)?;
        (g == id).then(|| &self.list[*i as usize])
    }

    /// The first heading whose id is `id`.
    pub fn with_id(&self, id: &str) -> Option<&Heading> {
        let at = self
            .by_id
            .partition_point(|&i| self.list[i as usize].id.as_str() < id);
        let h = &self.list[*self.by_id.get(at)? as usize];
        (h.id == id).then_some(h)
    }
}

/// The id GitHub gives a heading of text `title` (before it adds a
/// suffix to a repeat): letters, digits, `-` and `_` kept, in lowercase,
/// spaces made `-`, everything else dropped.
pub fn github_id(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    for c in title.trim().chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            out.push(c);
        } else if c == ' ' {
            out.push('-');
        }
    }
    out
}

impl PartialEq for Headings {
    fn eq(&self, other: &Headings) -> bool {
        self.list == other.list
    }
}

impl Eq for Headings {}

impl std::ops::Deref for Headings {
    type Target = [Heading];
    fn deref(&self) -> &[Heading] {
        &self.list
    }
}

impl From<Vec<Heading>> for Headings {
    fn from(list: Vec<Heading>) -> Headings {
        Headings::new(list)
    }
}

/// A link as written in the source, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub dest: String,
    /// 1-based line in the page's source file.
    pub line: usize,
    pub column: usize,
    /// Written in raw HTML (`<a href>`, `<img src>`): published as written,
    /// where a Markdown link's source path becomes the page's URL.
    pub raw_html: bool,
}

/// A reference link (`[text][label]`) whose label is defined nowhere in
/// its page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndefinedReference {
    pub label: String,
    /// Where the link starts (1-based line and column).
    pub line: usize,
    pub column: usize,
}

/// A heading's explicit id that an earlier heading of the same page has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatedId {
    pub id: String,
    /// Where the repeating heading starts (1-based line and column).
    pub line: usize,
    pub column: usize,
    /// What has the id already: the heading on line N, an element of
    /// the default templates or of the page's HTML, a footnote.
    pub given_by: String,
}

/// A fenced code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeBlock {
    /// First word of the info string, in lowercase (`yaml`).
    pub lang: String,
    /// `key=value` words after it (`file=kustomization.yaml`).
    pub attrs: Vec<(String, String)>,
    pub code: String,
    /// 1-based line of the first line of code in the source file.
    pub line: usize,
    /// Characters before the code on each of its lines in the source file:
    /// the indentation of a list item, a quote's `> ` (0 at the margin).
    pub indent: usize,
}

impl CodeBlock {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the block is YAML: by its language, or by the name of the
    /// file it shows (`file=patch.yaml`).
    pub fn is_yaml(&self) -> bool {
        let named = self.attr("file").is_some_and(|f| {
            let f = f.to_ascii_lowercase();
            f.ends_with(".yaml") || f.ends_with(".yml")
        });
        named || self.lang == "yaml" || self.lang == "yml"
    }
}

/// The text of a page between two headings, for the search index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Section {
    /// Index in [`Document::headings`] of the heading that opens it; `None`
    /// for the text before the first heading.
    pub heading: Option<usize>,
    /// Its text as written (prose, inline code and code blocks), each block
    /// (paragraph, list item, table cell, code block) on lines of its own.
    pub text: String,
}

/// A page's Markdown, analysed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Document {
    /// The Markdown after `{{ variables }}` were replaced, when that changed
    /// it (the page's own body otherwise): what is rendered.
    pub expanded: Option<String>,
    pub headings: Headings,
    /// The ids raw HTML gives its elements (`<a id="old-name">`, and the
    /// `name` of an `<a>`) and its footnotes have, sorted: anchors as
    /// exact as a heading's id.
    pub html_ids: Vec<String>,
    /// Explicit heading ids (`{#id}`) that an earlier heading of the page
    /// has already: a link to them always lands on the first.
    pub repeated_ids: Vec<RepeatedId>,
    pub links: Vec<Link>,
    /// Reference links whose label no definition gives (`[text][label]`,
    /// `[text][]`): Markdown publishes them as their text, brackets and all.
    pub undefined_references: Vec<UndefinedReference>,
    pub code_blocks: Vec<CodeBlock>,
    /// Always at least one: the text before the first heading.
    pub sections: Vec<Section>,
}
