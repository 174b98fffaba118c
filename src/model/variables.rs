//! Values that follow the release, for pages: `{{ latest }}`,
//! `{{ image.name }}`, `{{ env.RUNNER_DRAIN_TIMEOUT_MS }}`… are replaced in
//! the Markdown (code blocks included) before it is rendered, and in the
//! title and description of its front matter when it is loaded, so a
//! download snippet always shows the newest published version.

use crate::diagnostics::{rule, Diagnostic, Location};
use crate::model::site::{Page, Site};
use semver::Version;
use std::collections::BTreeMap;

/// Whether `text` uses `{{ variables }}` (or a template tag, which pages
/// cannot use): the only texts [`Variables::expand`] changes or refuses.
pub fn uses_variables(text: &str) -> bool {
    text.contains("{{") || text.contains("{%")
}

/// The variables a page can use, by name.
#[derive(Debug, Clone, Default)]
pub struct Variables(BTreeMap<String, String>);

/// An unknown variable or a malformed `{{ … }}`, at a 1-based line and
/// column of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Why a variable pages can use has no value on a page, for those whose
/// value depends on what the page documents or on what is published.
fn unset(name: &str, has_version: bool) -> Option<&'static str> {
    match name {
        "version" | "image.tag" | "image.digest" | "image.user" | "image.uid" | "image.gid"
        | "image.home"
            if !has_version =>
        {
            Some(
            "it follows the release the page documents, and this page documents none that the image data has (its version has no published base, and its docs version no `release`)",
            )
        }
        "latest" => Some("it is the newest published base, and no base is published"),
        "docs_version" => Some("the page is in no docs version"),
        _ => None,
    }
}

impl Variables {
    /// The variables of `page`: the site's, and the image facts of the
    /// release the page documents.
    pub fn for_page(site: &Site, page: &Page) -> Variables {
        let mut v = BTreeMap::new();
        let latest = site.latest_base();
        if let Some(l) = latest {
            v.insert("latest".into(), l.to_string());
        }
        let all: Vec<String> = site.bases.iter().map(|b| b.version.to_string()).collect();
        v.insert("versions".into(), all.join(", "));
        v.insert("site.base_url".into(), site.config.base_url.clone());
        v.insert("site.title".into(), site.config.title.clone());
        v.insert("image.name".into(), site.images.name.clone());
        let documented: Option<Version> = page.base.clone().or_else(|| {
            site.versions
                .get(page.version)
                .and_then(|v| v.release.clone())
        });
        if let Some(v_docs) = site.versions.get(page.version) {
            v.insert("docs_version".into(), v_docs.id.clone());
        }
        if let Some(version) = documented {
            v.insert("version".into(), version.to_string());
            v.insert("image.tag".into(), version.to_string());
            // The digest of the image the checks read, to pin exactly it.
            let checked = site.bases.iter().find(|b| b.version == version);
            if let Some(record) = checked.and_then(|b| b.image.as_ref()) {
                let digest = record
                    .digest
                    .clone()
                    .or_else(|| record.platforms.first().map(|p| p.1.clone()));
                if let Some(d) = digest {
                    v.insert("image.digest".into(), d);
                }
            }
            if let Some(u) = site.images.user_at(&version) {
                v.insert("image.user".into(), u.name.clone());
                v.insert("image.uid".into(), u.uid.to_string());
                v.insert("image.gid".into(), u.gid.to_string());
                if let Some(h) = &u.home {
                    v.insert("image.home".into(), h.clone());
                }
            }
            for e in site.images.env_at(&version) {
                if let Some(d) = &e.default {
                    v.insert(format!("env.{}", e.key), d.clone());
                }
            }
        }
        Variables(v)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// Replaces every `{{ name }}` in `text`. `{{ "{{" }}` writes a literal
    /// `{{`.
    pub fn expand(&self, text: &str) -> Result<String, Vec<Problem>> {
        self.expand_with_spans(text).map(|(out, _)| out)
    }

    /// [`Variables::expand`], with where it replaced each `{{ variable }}`,
    /// in order, so that a column of the expanded text maps back to the
    /// one written.
    pub fn expand_with_spans(&self, text: &str) -> Result<(String, Vec<Span>), Vec<Problem>> {
        let (out, spans, problems) = self.expand_partly(text);
        match problems.is_empty() {
            true => Ok((out, spans)),
            false => Err(problems),
        }
    }

    /// [`Variables::expand_with_spans`] that goes on past a problem: the
    /// known variables replaced, an unknown one left as written, and the
    /// problems.
    pub fn expand_partly(&self, text: &str) -> (String, Vec<Span>, Vec<Problem>) {
        let mut spans = Vec::new();
        if !uses_variables(text) {
            return (text.to_string(), spans, Vec::new());
        }
        let mut out = String::with_capacity(text.len());
        let mut problems = Vec::new();
        for (i, line) in text.split_inclusive('\n').enumerate() {
            let mut rest = line;
            let mut col = 1;
            if let Some(p) = line.find("{%") {
                problems.push(Problem {
                    line: i + 1,
                    column: line[..p].chars().count() + 1,
                    message: "template tags (`{% … %}`) are not available in pages; only `{{ variable }}` is".into(),
                });
            }
            while let Some(start) = rest.find("{{") {
                out.push_str(&rest[..start]);
                let at = col + rest[..start].chars().count();
                let after = &rest[start + 2..];
                let Some(end) = after.find("}}") else {
                    problems.push(Problem {
                        line: i + 1,
                        column: at,
                        message: "`{{` is not closed by `}}` on the same line".into(),
                    });
                    out.push_str(&rest[start..]);
                    rest = "";
                    break;
                };
                let inner = after[..end].trim();
                let written = 2 + after[..end].chars().count() + 2;
                match self.value(inner) {
                    Some(value) => {
                        out.push_str(value);
                        spans.push(Span {
                            line: i + 1,
                            column: at,
                            written,
                            value: value.chars().count(),
                        });
                    }
                    None => {
                        out.push_str(&rest[start..start + 2 + end + 2]);
                        let mut message = format!("`{inner}` is not a variable pages can use");
                        if inner == "image.digest" && self.0.contains_key("version") {
                            // Known only from the image itself.
                            message.push_str(": the digest is known once the image is read, so set `image.source` in site.yaml (or pass `--image SOURCE`)");
                        } else if let Some(why) = unset(inner, self.0.contains_key("version")) {
                            message = format!("`{inner}` has no value on this page: {why}");
                        } else if let Some(near) = self.nearest(inner) {
                            message.push_str(&format!(": did you mean `{{{{ {near} }}}}`?"));
                        }
                        problems.push(Problem {
                            line: i + 1,
                            column: at,
                            message,
                        });
                    }
                }
                col = at + written;
                rest = &after[end + 2..];
            }
            out.push_str(rest);
        }
        (out, spans, problems)
    }

    /// A `doc-variable-unknown` finding for each problem of a text that
    /// starts at `at` (line and column) in `file`.
    pub fn findings(
        &self,
        problems: Vec<Problem>,
        file: &std::path::Path,
        at: (usize, usize),
    ) -> Vec<Diagnostic> {
        let names: Vec<&str> = self.names().collect();
        problems
            .into_iter()
            .map(|p| {
                // The text's first line starts at `at`'s column.
                let column = if p.line == 1 {
                    at.1 + p.column - 1
                } else {
                    p.column
                };
                Diagnostic::new(rule::DOC_VARIABLE_UNKNOWN, p.message)
                    .at(Location::at(file, at.0 + p.line - 1, column))
                    .help(format!(
                        "pages can use: {}; to show `{{{{` as written (a GitHub Actions `${{{{ secrets.X }}}}`), write `{{{{ \"{{{{\" }}}}`",
                        names.join(", ")
                    ))
            })
            .collect()
    }

    /// The variable whose name is nearest to `name`, for a typo.
    fn nearest(&self, name: &str) -> Option<&str> {
        crate::diagnostics::closest(name, self.names())
    }

    fn value<'a>(&'a self, inner: &'a str) -> Option<&'a str> {
        for q in ['"', '\''] {
            if let Some(s) = inner.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
                return Some(s);
            }
        }
        self.0.get(inner).map(String::as_str)
    }
}

/// A `{{ variable }}` that [`Variables::expand`] replaces: where it is
/// written, and how long it is written and replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub line: usize,
    pub column: usize,
    pub written: usize,
    pub value: usize,
}

impl Span {
    /// The column written of `column` of the expanded line, given the
    /// spans of that line in order: inside a value, the variable's start.
    pub fn column_written(spans: &[Span], column: usize) -> usize {
        let mut shift: isize = 0;
        for s in spans {
            let start = (s.column as isize + shift) as usize;
            if column < start {
                break;
            }
            if column < start + s.value {
                return s.column;
            }
            shift += s.value as isize - s.written as isize;
        }
        (column as isize - shift).max(1) as usize
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn written_columns_skip_back_over_values() {
        let spans = [
            Span {
                line: 1,
                column: 5,
                written: 11,
                value: 3,
            },
            Span {
                line: 1,
                column: 20,
                written: 15,
                value: 30,
            },
        ];
        // Before the first, inside it, between, inside the second, after.
        assert_eq!(Span::column_written(&spans, 2), 2);
        assert_eq!(Span::column_written(&spans, 6), 5);
        assert_eq!(Span::column_written(&spans, 8), 16);
        assert_eq!(Span::column_written(&spans, 12), 20);
        assert_eq!(Span::column_written(&spans, 42), 35);
    }

    use super::*;

    fn vars() -> Variables {
        let mut m = BTreeMap::new();
        m.insert("latest".to_string(), "1.30.0".to_string());
        m.insert("image.name".to_string(), "agent".to_string());
        Variables(m)
    }

    #[test]
    fn expands_known_variables_and_literals() {
        let v = vars();
        assert_eq!(
            v.expand("VERSION={{ latest }} {{image.name}}:{{latest}}\n{{ \"{{\" }} x }}\n")
                .unwrap(),
            "VERSION=1.30.0 agent:1.30.0\n{{ x }}\n"
        );
        assert_eq!(v.expand("no variables").unwrap(), "no variables");
    }

    #[test]
    fn the_digest_without_an_image_says_how_to_have_it() {
        let mut v = vars();
        v.0.insert("version".into(), "1.30.0".into());
        let e = v.expand("{{ image.digest }}").unwrap_err();
        assert!(e[0].message.contains("`image.source`"), "{}", e[0].message);
    }

    /// A variable of the release on a page that documents none has no
    /// value there: said so, not taken for a misspelling.
    #[test]
    fn a_variable_of_no_release_says_why_it_has_no_value() {
        for name in ["version", "image.tag", "image.digest"] {
            let e = vars().expand(&format!("{{{{ {name} }}}}")).unwrap_err();
            let m = &e[0].message;
            assert!(
                m.contains("has no value on this page") && !m.contains("did you mean"),
                "{m}"
            );
        }
    }

    #[test]
    fn unknown_and_unclosed_have_positions() {
        let e = vars()
            .expand("a\nb {{ lastest }} c {{ latest\n")
            .unwrap_err();
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].line, e[0].column), (2, 3));
        assert!(e[0].message.contains("lastest"));
        assert!(
            e[0].message.contains("did you mean `{{ latest }}`?"),
            "{}",
            e[0].message
        );
        assert_eq!((e[1].line, e[1].column), (2, 19));
        let e = vars().expand("{% if x %}\n").unwrap_err();
        assert_eq!(e[0].line, 1);
    }
}
