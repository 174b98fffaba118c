//! The versions page of each language, `/LANG/versions/`: every published
//! base with its files, their sha256, the image it goes with and the
//! download snippet for exactly that version. The build writes it from the
//! bases; it is not a Markdown page.

use super::highlight::Highlighter;
use super::html::code_block_html;
use crate::model::document::CodeBlock;
use crate::model::layout::base_path;
use crate::model::site::{Base, Site};
use serde::Serialize;

/// One published version, as `versions.html` receives it.
#[derive(Serialize)]
pub struct Version {
    /// Folder name and anchor on the page: `v1.30.0`.
    pub version: String,
    /// The image tag of the same release: `1.30.0`.
    pub image_tag: String,
    /// The image it needs: `whystack-agent:1.30.0`.
    pub image: String,
    pub latest: bool,
    /// The base's folder, with the prefix: `/kubernetes/v1.30.0/base/`.
    pub url: String,
    pub files: Vec<File>,
    /// The installers' download loop for this version, as text.
    pub snippet: String,
    /// The same, as a highlighted code block.
    pub snippet_html: String,
    /// The check of the downloaded files against `SHA256SUMS`, as a
    /// highlighted code block.
    pub verify_html: String,
}

/// One published file of a base.
#[derive(Serialize)]
pub struct File {
    pub name: String,
    pub url: String,
    pub sha256: String,
    pub size: usize,
}

/// Every published base, newest first: the header's version picker and the
/// versions page show them in this order.
pub fn list(site: &Site, highlighter: &Highlighter) -> Vec<Version> {
    let latest = crate::model::images::latest(site.bases.iter().map(|b| &b.version));
    let mut out: Vec<Version> = site
        .bases
        .iter()
        .map(|b| version(site, b, Some(&b.version) == latest, highlighter))
        .collect();
    out.reverse();
    out
}

fn version(site: &Site, base: &Base, latest: bool, highlighter: &Highlighter) -> Version {
    let url = format!("{}{}", site.config.path_prefix(), base_path(base));
    let snippet = snippet(&site.config.base_url, &base.image_tag());
    Version {
        version: base.folder(),
        image_tag: base.image_tag(),
        image: format!("{}:{}", site.config.image.name, base.image_tag()),
        latest,
        files: base
            .files
            .iter()
            .map(|f| File {
                name: f.name.clone(),
                url: format!("{url}{}", f.name),
                sha256: f.sha256.clone(),
                size: f.bytes.len(),
            })
            .collect(),
        url,
        snippet_html: shell_block(&snippet, highlighter),
        verify_html: shell_block(VERIFY, highlighter),
        snippet,
    }
}

/// The check of a downloaded base, run beside its `base/` folder.
const VERIFY: &str = "(cd base && sha256sum -c SHA256SUMS)\n";

/// A shell code block, as pages show them.
fn shell_block(code: &str, highlighter: &Highlighter) -> String {
    let block = CodeBlock {
        lang: "sh".into(),
        attrs: Vec::new(),
        code: code.to_string(),
        line: 1,
    };
    code_block_html(&block, highlighter)
}

/// The download loop of the docs, for `tag`, against the site at `base_url`.
pub fn snippet(base_url: &str, tag: &str) -> String {
    let site = base_url.trim_end_matches('/');
    format!(
        "VERSION={tag}   # the image tag, with or without the \"v\"\n\
         BASE=\"{site}/kubernetes/v${{VERSION#v}}/base\"\n\
         mkdir -p base\n\
         FILES=$(curl -fsSL \"$BASE/files.txt\") &&\n  \
         for f in $FILES; do curl -fsSL -o \"base/$f\" \"$BASE/$f\"; done\n"
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_snippet_is_the_documented_loop() {
        assert_eq!(
            super::snippet("https://docs.example.com/", "1.30.0"),
            "VERSION=1.30.0   # the image tag, with or without the \"v\"\n\
             BASE=\"https://docs.example.com/kubernetes/v${VERSION#v}/base\"\n\
             mkdir -p base\n\
             FILES=$(curl -fsSL \"$BASE/files.txt\") &&\n  \
             for f in $FILES; do curl -fsSL -o \"base/$f\" \"$BASE/$f\"; done\n"
        );
    }
}
