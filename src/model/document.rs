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
    pub headings: Vec<Heading>,
    pub links: Vec<Link>,
    pub code_blocks: Vec<CodeBlock>,
    /// Always at least one: the text before the first heading.
    pub sections: Vec<Section>,
}
