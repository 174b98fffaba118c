//! The versions page of each language, `/LANG/versions/`: every published
//! base with its files, their sha256, the image it goes with and the
//! download snippet for exactly that version. The build writes it from the
//! bases; it is not a Markdown page.

use super::highlight::Highlighter;
use super::html::code_block_html;
use crate::model::config::SigningConfig;
use crate::model::document::CodeBlock;
use crate::model::i18n::Strings;
use crate::model::layout::base_path;
use crate::model::site::{Base, Site};
use serde::Serialize;
use std::collections::BTreeMap;

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
    /// The verifying loop of the installation page for this version, by
    /// language code (its comment and last line in that language): it
    /// downloads the base, checks the signature when the version is
    /// signed, then `files.txt`, then every file.
    pub verifying: BTreeMap<String, String>,
    /// The same, as highlighted code blocks.
    pub verifying_html: BTreeMap<String, String>,
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
    newest_first(site)
        .map(|(b, latest)| version(site, b, latest, highlighter))
        .collect()
}

/// Every published base, newest first, with whether it is the latest: the
/// header's version picker needs no more (none of [`list`]'s highlighted
/// snippets, which every page would otherwise wait for).
pub fn newest_first(site: &Site) -> impl Iterator<Item = (&Base, bool)> {
    let latest = site.latest_base();
    site.bases
        .iter()
        .rev()
        .map(move |b| (b, Some(&b.version) == latest))
}

fn version(site: &Site, base: &Base, latest: bool, highlighter: &Highlighter) -> Version {
    let url = format!("{}{}", site.config.path_prefix(), base_path(base));
    let snippet = snippet(&site.config.base_url, &base.image_tag());
    let signing = site
        .config
        .signing
        .as_ref()
        .filter(|_| base.signature.is_some());
    let verifying: BTreeMap<String, String> = site
        .config
        .languages
        .iter()
        .map(|l| {
            let strings = site.strings.get(&l.code).cloned().unwrap_or_default();
            let text = verifying(&site.config.base_url, &base.image_tag(), signing, &strings);
            (l.code.clone(), text)
        })
        .collect();
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
        verifying_html: verifying
            .iter()
            .map(|(lang, text)| (lang.clone(), shell_block(text, highlighter)))
            .collect(),
        verifying,
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
        indent: 0,
    };
    code_block_html(&block, highlighter.into())
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

/// The installation page's verifying loop for `tag` against the site at
/// `base_url`: the signature check only when `signing` is given (the
/// version is published signed). `strings` give the comment on the
/// version line and the last line's text, in the reader's language.
pub fn verifying(
    base_url: &str,
    tag: &str,
    signing: Option<&SigningConfig>,
    strings: &Strings,
) -> String {
    let site = base_url.trim_end_matches('/');
    let comment = one_line(strings.get("snippet_tag"));
    let ok = double_quoted(&one_line(strings.get("snippet_verified")))
        .replace("{version}", "v${VERSION#v}");
    let mut out = format!(
        "VERSION={tag}   # {comment}\n\
         SITE=\"{}\"\n\
         (\n  \
         set -eu\n  \
         BASE=\"$SITE/kubernetes/v${{VERSION#v}}/base\"\n  \
         rm -rf base && mkdir base\n",
        double_quoted(site)
    );
    match signing {
        Some(s) => out.push_str(&format!(
            "  curl -fsSL -o allowed_signers \"$SITE/kubernetes/allowed_signers\"\n  \
             for f in files.txt SHA256SUMS SHA256SUMS.sig; do\n    \
             curl -fsSL -o \"base/$f\" \"$BASE/$f\"\n  \
             done\n  \
             ssh-keygen -Y verify -f allowed_signers -I {} \\\n    \
             -n \"{}/v${{VERSION#v}}\" -s base/SHA256SUMS.sig < base/SHA256SUMS\n",
            sh_word(&s.identity),
            double_quoted(&s.namespace)
        )),
        None => out.push_str(
            "  for f in files.txt SHA256SUMS; do\n    \
             curl -fsSL -o \"base/$f\" \"$BASE/$f\"\n  \
             done\n",
        ),
    }
    out.push_str(&format!(
        "  (cd base && sha256sum -c --ignore-missing SHA256SUMS)\n  \
         while read -r f; do\n    \
         [ -e \"base/$f\" ] || curl -fsSL -o \"base/$f\" \"$BASE/$f\"\n  \
         done < base/files.txt\n  \
         (cd base && sha256sum -c SHA256SUMS)\n  \
         echo \"{ok}\"\n\
         )\n"
    ));
    out
}

/// A string on one line: line breaks become spaces.
fn one_line(s: &str) -> String {
    s.split(['\n', '\r']).collect::<Vec<_>>().join(" ")
}

/// A word for POSIX sh: as it is when it holds only characters the shell
/// leaves alone, single-quoted otherwise.
fn sh_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Text for the inside of a double-quoted sh string: `"`, `$`, `` ` ``
/// and `\` escaped.
fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '"' | '$' | '`' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::model::i18n::Strings;

    fn strings(tag: &str, verified: &str) -> Strings {
        Strings(
            [("snippet_tag", tag), ("snippet_verified", verified)]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn the_verifying_loop_checks_the_signature_only_when_signed() {
        let signing = crate::model::config::SigningConfig {
            identity: "releases@example.com".into(),
            namespace: "agent".into(),
            public_key: String::new(),
        };
        let en = strings(
            "the image tag, with or without the \"v\"",
            "OK: base/ holds {version} as released",
        );
        let signed = super::verifying("https://docs.example.com/", "1.30.0", Some(&signing), &en);
        assert!(signed.starts_with(
            "VERSION=1.30.0   # the image tag, with or without the \"v\"\nSITE=\"https://docs.example.com\"\n(\n  set -eu\n"
        ), "{signed}");
        assert!(signed.contains(
            "  ssh-keygen -Y verify -f allowed_signers -I releases@example.com \\\n    -n \"agent/v${VERSION#v}\" -s base/SHA256SUMS.sig < base/SHA256SUMS\n"
        ), "{signed}");
        assert!(
            signed.ends_with("  echo \"OK: base/ holds v${VERSION#v} as released\"\n)\n"),
            "{signed}"
        );
        let unsigned = super::verifying("https://docs.example.com", "1.30.0", None, &en);
        assert!(!unsigned.contains("ssh-keygen") && !unsigned.contains("allowed_signers"));
        assert!(
            unsigned.contains("for f in files.txt SHA256SUMS; do\n"),
            "{unsigned}"
        );
        // The reader's words cannot break out of the comment or the echo.
        let hostile = strings("a\nrm -rf /", "$(id) `id` \"q\" {version}");
        let s = super::verifying("https://d.example", "1.0.0", None, &hostile);
        assert!(s.starts_with("VERSION=1.0.0   # a rm -rf /\n"), "{s}");
        assert!(
            s.contains("echo \"\\$(id) \\`id\\` \\\"q\\\" v${VERSION#v}\"\n"),
            "{s}"
        );
        assert_eq!(super::sh_word("a b'c"), "'a b'\\''c'");
    }

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
