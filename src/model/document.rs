//! What the analysis of a page's Markdown gives the later stages: its
//! headings (for the table of contents and anchors), links (for the link
//! check), code blocks (for the example checks) and text (for search).

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Heading {
    pub level: u8,
    pub id: String,
    pub title: String,
}

/// A page's headings in the order they appear, with their ids indexed so
/// that finding the heading of an anchor takes logarithmic time (a page of
/// thousands of headings and links to them stays linear to check).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headings {
    list: Vec<Heading>,
    /// Indexes into `list`, sorted by id (equal ids in page order).
    by_id: Vec<u32>,
}

impl Headings {
    pub fn new(list: Vec<Heading>) -> Headings {
        let mut by_id: Vec<u32> = (0..list.len() as u32).collect();
        by_id.sort_by(|&a, &b| list[a as usize].id.cmp(&list[b as usize].id));
        Headings { list, by_id }
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
    pub links: Vec<Link>,
    pub code_blocks: Vec<CodeBlock>,
    /// Always at least one: the text before the first heading.
    pub sections: Vec<Section>,
}
