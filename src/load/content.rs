//! Pages and assets under `content/<lang>/` (and the `content/<lang>/` of
//! every frozen docs version), and files under `static/`.

use super::{read_input, relative, slash_path, unreadable, walk_files};
use crate::diagnostics::{rule, Diagnostic, Location};
use crate::model::config::Config;
use crate::model::layout;
use crate::model::site::{Asset, DocsVersion, Page, ValuesAt};
use crate::yaml;
use rayon::prelude::*;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The keys a page's front matter may have.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FrontMatter {
    title: String,
    #[serde(default)]
    weight: Option<i64>,
    #[serde(default)]
    description: Option<String>,
    /// The base release the page documents, as its folder name (`v1.29.0`).
    #[serde(default)]
    base: Option<String>,
}

/// The keys of [`FrontMatter`].
const FRONT_MATTER_KEYS: [&str; 4] = ["title", "weight", "description", "base"];

/// The finding for front matter `front` (of page `source`) that does not
/// parse as one, in words a writer knows what to do with: every unknown
/// key at once, with the key it was probably meant to be; a tab; a `: `
/// inside a value; a weight that is not a whole number.
fn front_matter_error(e: yaml::Error, front: &str, source: &Path) -> Diagnostic {
    let at = |line: usize, column: usize| Location::at(source, line, column);
    let loc = match (e.line, e.column) {
        (Some(l), Some(c)) => at(l, c),
        _ => Location::line(source, 1),
    };
    let d = |message: String, help: String| {
        Diagnostic::new(rule::FRONT_MATTER_INVALID, message)
            .at(loc.clone())
            .help(help)
    };
    let m = e.message.as_str();
    if m.contains("unknown field") {
        // Every key that is not one, so that one run names them all.
        let keys: Vec<String> = yaml::from_str::<serde_json::Map<String, serde_json::Value>>(front)
            .map(|map| map.keys().cloned().collect())
            .unwrap_or_default();
        // The line of a top-level key in the file (the front matter starts
        // on line 2).
        let key_line = |k: &str| {
            front
                .lines()
                .position(|l| {
                    l.strip_prefix(k)
                        .is_some_and(|r| r.trim_start().starts_with(':'))
                })
                .map(|i| i + 2)
        };
        let unknown: Vec<String> = keys
            .iter()
            .filter(|k| !FRONT_MATTER_KEYS.contains(&k.as_str()))
            .map(|k| {
                let line = key_line(k).map_or(String::new(), |l| format!(" (line {l})"));
                match crate::diagnostics::closest(k, FRONT_MATTER_KEYS.into_iter()) {
                    Some(near) => format!("`{k}`{line}, did you mean `{near}`?"),
                    None => format!("`{k}`{line}"),
                }
            })
            .collect();
        let first = keys
            .iter()
            .find(|k| !FRONT_MATTER_KEYS.contains(&k.as_str()))
            .and_then(|k| key_line(k));
        let mut found = d(
            format!(
                "unknown front matter key{}: {}",
                if unknown.len() > 1 { "s" } else { "" },
                unknown.join("; ")
            ),
            "a page's front matter has `title` (required), `weight`, `description` and `base`; remove the others (Hugo's `date`, `tags` or `draft` mean nothing here)".into(),
        );
        if let Some(line) = first.filter(|_| !unknown.is_empty()) {
            found = found.at(at(line, 1));
        }
        if !unknown.is_empty() {
            return found;
        }
    }
    if m.contains("tab") {
        return d(
            "a tab indents this line, and YAML indents with spaces only".into(),
            "replace the tab with spaces".into(),
        );
    }
    if m.contains("mapping values are not allowed") {
        return d(
            "a value holds `: `, which YAML reads as a new key".into(),
            "put the value in quotes: `title: \"Install: the agent\"`".into(),
        );
    }
    if m.contains("expected i64") || m.contains("expected an integer") {
        return d(
            format!("`weight` is a whole number ({m})"),
            "write the weight as digits: `weight: 10`".into(),
        );
    }
    if m.contains("missing field `title`") {
        return d(
            "the front matter has no `title`".into(),
            "add a line `title: …` between the `---` lines: every page has a title".into(),
        );
    }
    if m.contains("duplicate") {
        return d(
            e.message.clone(),
            "keep one of the two: YAML takes a key once".into(),
        );
    }
    if m.contains("invalid type") {
        return d(
            e.message.clone(),
            "write the value as text, in quotes when it starts with `[`, `{`, `&`, `*`, `!`, `|`, `>`, `%` or `@`: `title: \"[beta] Install\"`".into(),
        );
    }
    // The front matter is there (a missing one is said elsewhere): the
    // rule's remedy, about starting one, would not help.
    d(
        e.message.clone(),
        "fix the YAML at this line: the front matter is `key: value` lines between the two `---` lines".into(),
    )
}

/// Front matters parsed in one load, by their text: the frozen docs
/// versions are mostly copies of each other, so fifty versions of a page
/// usually share one front matter, parsed once (a YAML parser costs far
/// more than looking its text up).
#[derive(Default)]
pub(super) struct Parsed(std::sync::Mutex<std::collections::HashMap<String, FrontMatter>>);

impl Parsed {
    /// The front matter `text` means, parsing it the first time.
    fn front_matter(&self, text: &str) -> Result<FrontMatter, yaml::Error> {
        if let Some(fm) = self.0.lock().ok().and_then(|m| m.get(text).cloned()) {
            return Ok(fm);
        }
        let fm: FrontMatter = yaml::from_str(text)?;
        if let Ok(mut m) = self.0.lock() {
            m.insert(text.to_string(), fm.clone());
        }
        Ok(fm)
    }
}

/// The pages and assets of every docs version, and the files of `static/`.
pub fn load(
    root: &Path,
    config: &Config,
    versions: &[DocsVersion],
    diagnostics: &mut Vec<Diagnostic>,
) -> (Vec<Page>, Vec<Asset>) {
    // Versions load in parallel (their folder walks are serial kernel
    // work), each with its own findings, put together in version order.
    let parsed = Parsed::default();
    let loaded: Vec<(Vec<Page>, Vec<Asset>, Vec<Diagnostic>)> = versions
        .par_iter()
        .enumerate()
        .map(|(i, version)| {
            let mut found = Vec::new();
            let (p, a) = load_version(root, config, i, version, &parsed, &mut found);
            (p, a, found)
        })
        .collect();
    let mut pages = Vec::new();
    let mut assets = Vec::new();
    for (p, a, found) in loaded {
        pages.extend(p);
        assets.extend(a);
        diagnostics.extend(found);
    }
    load_static(root, &mut assets, diagnostics);
    (pages, assets)
}

/// The pages (with the untranslated copies) and assets of one docs version.
fn load_version(
    root: &Path,
    config: &Config,
    index: usize,
    version: &DocsVersion,
    parsed: &Parsed,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Vec<Page>, Vec<Asset>) {
    let content = root.join(&version.dir);
    let segment = version.segment();
    let mut sources: Vec<(String, PathBuf)> = Vec::new();
    let mut assets = Vec::new();

    if let Err(d) = crate::input::dir_state(root, &content) {
        diagnostics.push(d);
        return (Vec::new(), Vec::new());
    }
    match std::fs::read_dir(&content) {
        Ok(entries) => {
            let mut names: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
            names.sort();
            for path in names {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if name.starts_with('.') {
                    continue;
                }
                if !path.is_dir() || config.language(&name).is_none() {
                    let known: Vec<_> = config.languages.iter().map(|l| l.code.as_str()).collect();
                    diagnostics.push(
                        Diagnostic::new(
                            rule::CONTENT_LAYOUT,
                            format!(
                                "`{}` is not a folder of a language listed in site.yaml ({})",
                                relative(root, &path).display(),
                                known.join(", ")
                            ),
                        )
                        .in_file(relative(root, &path))
                        .help(format!(
                            "move it under {}/<lang>/, or add the language to site.yaml",
                            version.dir.display()
                        )),
                    );
                }
            }
        }
        Err(e) => {
            diagnostics.push(
                unreadable(root, &content, &e)
                    .help("create content/<lang>/index.md for each language in site.yaml"),
            );
            return (Vec::new(), Vec::new());
        }
    }

    // What the walk refused in each language (the folder, a link, a
    // folder too deep): what is below it is there, and not reported
    // untranslated.
    let mut refused: Vec<(String, String)> = Vec::new();
    for lang in &config.languages {
        let dir = content.join(&lang.code);
        let before = diagnostics.len();
        let files = walk_files(root, &dir, diagnostics);
        let dir_rel = relative(root, &dir);
        for d in &diagnostics[before..] {
            if let Some(below) = d
                .location
                .as_ref()
                .and_then(|l| l.file.strip_prefix(&dir_rel).ok())
            {
                refused.push((lang.code.clone(), slash_path(below)));
            }
        }
        for (path, rel) in files {
            if let Some(bad) = rel.split('/').find(|s| !is_url_safe(s)) {
                diagnostics.push(
                    Diagnostic::new(
                        rule::CONTENT_LAYOUT,
                        format!("`{bad}` cannot be part of a URL"),
                    )
                    .in_file(relative(root, &path))
                    .help("name content files and folders with ASCII letters (no accents), digits, `.`, `_` and `-` only: `instalacion.md`, not `instalación.md`"),
                );
                continue;
            }
            if rel == "_index.md" || rel.ends_with("/_index.md") {
                // Hugo's section page: here a folder's `index.md` stands
                // for it, and `_index.md` would be a page at `…/_index/`.
                let index = format!("{}index.md", rel.trim_end_matches("_index.md"));
                diagnostics.push(
                    Diagnostic::new(
                        rule::CONTENT_LAYOUT,
                        format!("`{rel}` would be published as a page of its own at `…/_index/`"),
                    )
                    .in_file(relative(root, &path))
                    .help(format!("rename it to `{index}`: a folder's index.md is its page and its title in the navigation")),
                );
                continue;
            }
            if let Some(page) = markdown_misnamed(&rel) {
                // Read as a file to publish, it would reach readers as raw
                // Markdown: the page its writer meant would be missing.
                let help = match dir.join(&page).exists() {
                    true => format!("`{page}` exists too: keep one page, merging the text of this file into `{page}`, and remove this one"),
                    false => format!("rename it to `{page}`; to publish the Markdown file itself for download, put it under static/"),
                };
                diagnostics.push(
                    Diagnostic::new(
                        rule::CONTENT_LAYOUT,
                        format!("`{rel}` is Markdown by its extension, and basepress reads pages only from `.md` files: it would be published as a raw file"),
                    )
                    .in_file(relative(root, &path))
                    .help(help),
                );
                continue;
            }
            if rel.ends_with(".md") {
                sources.push((lang.code.clone(), path));
            } else {
                match read_input(root, &path) {
                    Ok(bytes) => assets.push(Asset {
                        source: relative(root, &path),
                        url: format!("{}{rel}", layout::home_url(&lang.code, segment)),
                        bytes,
                    }),
                    Err(d) => diagnostics.push(d),
                }
            }
        }
    }

    // The root is opened once for every page read below it.
    let opened = crate::input::Root::open(root);
    let results: Vec<Result<Page, Diagnostic>> = sources
        .par_iter()
        .map(|(lang, path)| load_page(&opened, index, version, lang, path, parsed))
        .collect();
    let mut pages = Vec::with_capacity(results.len());
    let mut failed = std::collections::HashSet::new();
    for ((lang, path), r) in sources.iter().zip(results) {
        match r {
            Ok(p) => pages.push(p),
            Err(d) => {
                // A page whose front matter is wrong stands in with its
                // body, so that the checks of the other pages go on (links
                // into it resolve); the error still stops the build.
                if d.rule.id == rule::FRONT_MATTER_INVALID.id {
                    pages.extend(stand_in(&opened, index, version, lang, path));
                }
                diagnostics.push(d);
                failed.insert(failed_source(&content, lang, path));
            }
        }
    }
    pages.extend(fallbacks(
        config,
        version,
        &pages,
        (&failed, &refused),
        diagnostics,
    ));
    (pages, assets)
}

/// For a content file with a Markdown extension other than `.md`
/// (`guide.markdown`, `guide.MD`, `guide.mdown`), the name it has as a
/// page.
fn markdown_misnamed(rel: &str) -> Option<String> {
    let (stem, ext) = rel.rsplit_once('.')?;
    let markdown = ["md", "markdown", "mdown", "mkd", "mkdn", "mdwn"];
    let known = markdown.iter().any(|m| ext.eq_ignore_ascii_case(m));
    (known && ext != "md" && !stem.is_empty() && !stem.ends_with('/')).then(|| format!("{stem}.md"))
}

/// The language and path below `<content>/<lang>/` (the docs version's
/// content folder) of a page that failed to load: it exists in that
/// language, so it is not reported untranslated there (its own finding
/// says what to fix).
fn failed_source(content: &Path, lang: &str, path: &Path) -> (String, String) {
    let below = path.strip_prefix(content.join(lang)).unwrap_or(path);
    (lang.to_string(), slash_path(below))
}

/// Pages by language and path below the language's folder.
type LangPaths = std::collections::HashSet<(String, String)>;

/// A copy of each default-language page for every language that lacks a
/// translation of it (and did not fail to load one, nor have it in a
/// refused folder), and a finding for each. `failed` are the language and
/// path of each page that failed to load, `refused` of each file or
/// folder the walk refused (`""` for the language's folder itself).
fn fallbacks(
    config: &Config,
    version: &DocsVersion,
    pages: &[Page],
    (failed, refused): (&LangPaths, &[(String, String)]),
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Page> {
    let is_refused = |lang: &str, rel: &str| {
        refused.iter().any(|(l, below)| {
            l == lang
                && (below.is_empty()
                    || rel == below
                    || rel
                        .strip_prefix(below.as_str())
                        .is_some_and(|r| r.starts_with('/')))
        })
    };
    let default = &config.default_language;
    let have: std::collections::HashSet<(&str, &str)> = pages
        .iter()
        .map(|p| (p.lang.as_str(), p.rel.as_str()))
        .collect();
    let mut out = Vec::new();
    for page in pages.iter().filter(|p| &p.lang == default) {
        for lang in config.languages.iter().filter(|l| &l.code != default) {
            if have.contains(&(lang.code.as_str(), page.rel.as_str()))
                || failed.contains(&(lang.code.clone(), page.rel.clone()))
                || is_refused(&lang.code, &page.rel)
            {
                continue;
            }
            let mut d = Diagnostic::new(
                rule::TRANSLATION_MISSING,
                format!(
                    "{} has no {} translation; readers of {} get this page with a notice",
                    page.source.display(),
                    lang.name,
                    layout::home_url(&lang.code, version.segment())
                ),
            )
            .in_file(&page.source);
            let translation = version.dir.join(&lang.code).join(&page.rel);
            let required = config.translations == crate::model::config::Translations::Required;
            d = d.help(if required {
                format!(
                    "write {}: site.yaml sets `translations: required`",
                    slash_path(&translation)
                )
            } else {
                format!(
                    "write {}, or set `translations: required` in site.yaml to make a missing translation an error",
                    slash_path(&translation)
                )
            });
            if required {
                d.severity = crate::diagnostics::Severity::Error;
            }
            diagnostics.push(d);
            let mut copy = page.clone();
            copy.url = layout::page_url(&lang.code, version.segment(), &page.rel);
            copy.lang = lang.code.clone();
            copy.fallback_from = Some(default.clone());
            out.push(copy);
        }
    }
    out
}

fn is_url_safe(segment: &str) -> bool {
    !segment.is_empty()
        && segment
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Reads one page of docs version `index` (`version`) in `lang`, below
/// the opened project root `root`.
pub(super) fn load_page(
    root: &crate::input::Root,
    index: usize,
    version: &DocsVersion,
    lang: &str,
    path: &Path,
    parsed: &Parsed,
) -> Result<Page, Diagnostic> {
    let source = relative(root.path(), path);
    let raw = root.read(path)?;
    let text = crate::input::utf8(raw, &source, rule::IO_UNREADABLE)?;
    let (front, body, body_line) = split_front_matter(&text).ok_or_else(|| {
        let opened = text
            .trim_start_matches('\u{feff}')
            .lines()
            .next()
            .is_some_and(|l| l.trim_end() == "---");
        let first = text
            .trim_start_matches('\u{feff}')
            .lines()
            .next()
            .unwrap_or("");
        let message = if opened {
            "the front matter that starts on line 1 is not closed by a `---` line"
        } else if first.trim_end() == "+++" {
            "the page has TOML front matter (`+++`), and basepress reads YAML front matter (`---`)"
        } else if first.trim().is_empty() && text.trim_start().starts_with("---") {
            "the front matter does not start on line 1: a blank line comes before its `---`"
        } else {
            "the page has no front matter (a `---` block at the top)"
        };
        Diagnostic::new(rule::FRONT_MATTER_INVALID, message).at(Location::line(&source, 1))
    })?;
    let fm = parsed
        .front_matter(front)
        .map_err(|e| front_matter_error(e.offset(1), front, &source))?;
    if fm.title.trim().is_empty() {
        return Err(
            Diagnostic::new(rule::FRONT_MATTER_INVALID, "`title` is empty").at(Location::line(
                &source,
                1 + yaml::locate_scalar(front, "title").map_or(1, |p| p.0),
            )),
        );
    }
    // Line in the file: the front matter starts on line 2.
    let base_line = front
        .lines()
        .position(|l| l.starts_with("base:"))
        .map(|i| i + 2);
    let base = match &fm.base {
        None => None,
        // The folder's name (`v1.30.0`), or the release as its image tag
        // writes it (`1.30.0`).
        Some(b) => Some(
            semver::Version::parse(b.strip_prefix('v').unwrap_or(b))
                .ok()
                .ok_or_else(|| {
                    Diagnostic::new(
                        rule::FRONT_MATTER_INVALID,
                        format!("`base: {b}` is not a base folder name like v1.30.0"),
                    )
                    .at(Location::line(&source, base_line.unwrap_or(1)))
                    .help("name the release the page documents as its base folder is named under bases/: `base: v1.30.0`")
                })?,
        ),
    };
    let rel = slash_path(
        path.strip_prefix(root.path().join(&version.dir).join(lang))
            .unwrap_or(path),
    );
    Ok(Page {
        version: index,
        base,
        base_line,
        fallback_from: None,
        lang: lang.to_string(),
        url: layout::page_url(lang, version.segment(), &rel),
        rel,
        source,
        title: fm.title,
        weight: fm.weight,
        description: fm.description,
        // CommonMark: U+0000 is read as U+FFFD, never written out.
        body: body.replace('\0', "\u{FFFD}"),
        body_line,
        values_at: ValuesAt {
            title: value_at(front, "title").unwrap_or((2, 1)),
            description: value_at(front, "description"),
        },
    })
}

/// The page at `path` whose front matter cannot be read, as it stands in
/// for the checks of other pages: its body (none when its front matter is
/// not closed), titled by its file name. `None` when it cannot be read.
fn stand_in(
    root: &crate::input::Root,
    index: usize,
    version: &DocsVersion,
    lang: &str,
    path: &Path,
) -> Option<Page> {
    let source = relative(root.path(), path);
    let text = crate::input::utf8(root.read(path).ok()?, &source, rule::IO_UNREADABLE).ok()?;
    // Front matter that is never closed: everything after its first line
    // (where its headings and links are, if the writer forgot the `---`).
    let unclosed = text
        .trim_start_matches('\u{feff}')
        .split_once('\n')
        .filter(|(first, _)| first.trim_end() == "---")
        .map(|(_, rest)| rest);
    let (body, body_line) = match (split_front_matter(&text), unclosed) {
        (Some((_, body, line)), _) => (body, line),
        (None, Some(rest)) => (rest, 2),
        (None, None) => (text.as_str(), 1),
    };
    let rel = slash_path(
        path.strip_prefix(root.path().join(&version.dir).join(lang))
            .unwrap_or(path),
    );
    let title = path
        .file_stem()
        .map_or_else(|| rel.clone(), |s| s.to_string_lossy().into_owned());
    Some(Page {
        version: index,
        base: None,
        base_line: None,
        fallback_from: None,
        lang: lang.to_string(),
        url: layout::page_url(lang, version.segment(), &rel),
        rel,
        source,
        title,
        weight: None,
        description: None,
        body: body.replace('\0', "\u{FFFD}"),
        body_line,
        values_at: ValuesAt::default(),
    })
}

/// Where the value of top-level `key` starts in the page's file, whose
/// front matter `front` starts on line 2: after the key, its spaces and an
/// opening quote.
fn value_at(front: &str, key: &str) -> Option<(usize, usize)> {
    front.lines().enumerate().find_map(|(i, line)| {
        let rest = line.strip_prefix(key)?.strip_prefix(':')?;
        let value = rest.trim_start_matches([' ', '\t']);
        let quoted = value.starts_with(['"', '\'']);
        let before = key.len() + 1 + (rest.len() - value.len()) + usize::from(quoted);
        Some((i + 2, line[..before].chars().count() + 1))
    })
}

/// Splits `---\n<yaml>\n---\n<body>`, returning the YAML, the body and the
/// 1-based line where the body starts.
fn split_front_matter(text: &str) -> Option<(&str, &str, usize)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for (i, line) in rest.split_inclusive('\n').enumerate() {
        if line.trim_end() == "---" {
            let front = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return Some((front, body, i + 3));
        }
        offset += line.len();
    }
    None
}

fn load_static(root: &Path, assets: &mut Vec<Asset>, diagnostics: &mut Vec<Diagnostic>) {
    for (path, rel) in walk_files(root, &root.join("static"), diagnostics) {
        // Published under its name: a name a URL cannot hold (a space, a
        // line break, a byte that is not UTF-8) would be unreachable, or
        // published under another name, and no object store takes it.
        let unsafe_char =
            |c: char| c.is_control() || matches!(c, ' ' | '?' | '#' | '%' | '\\' | '\u{fffd}');
        if let Some(bad) = rel.split('/').find(|s| s.contains(unsafe_char)) {
            diagnostics.push(
                Diagnostic::new(
                    rule::CONTENT_LAYOUT,
                    format!("`{}` cannot be part of a URL", bad.escape_debug()),
                )
                .in_file(relative(root, &path))
                .help(
                    "rename it without spaces, control characters, `?`, `#`, `%` or `\\`, as UTF-8",
                ),
            );
            continue;
        }
        match read_input(root, &path) {
            Ok(bytes) => assets.push(Asset {
                source: relative(root, &path),
                url: format!("/{rel}"),
                bytes,
            }),
            Err(d) => diagnostics.push(d),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_under_another_extension_is_told_its_page_name() {
        assert_eq!(
            markdown_misnamed("guide.markdown").as_deref(),
            Some("guide.md")
        );
        assert_eq!(
            markdown_misnamed("a/Guide.MD").as_deref(),
            Some("a/Guide.md")
        );
        assert_eq!(markdown_misnamed("x.mdown").as_deref(), Some("x.md"));
        for fine in [
            "guide.md",
            "logo.png",
            "README",
            "notes.txt",
            "a/.markdown",
            "md",
        ] {
            assert_eq!(markdown_misnamed(fine), None, "{fine}");
        }
    }

    #[test]
    fn urls_are_pretty() {
        use layout::page_url;
        assert_eq!(page_url("es", None, "index.md"), "/es/");
        assert_eq!(page_url("es", None, "install.md"), "/es/install/");
        assert_eq!(page_url("es", None, "k8s/index.md"), "/es/k8s/");
        assert_eq!(page_url("es", None, "k8s/drain.md"), "/es/k8s/drain/");
        assert_eq!(page_url("es", Some("1.29"), "index.md"), "/es/1.29/");
        assert_eq!(page_url("es", Some("next"), "a/b.md"), "/es/next/a/b/");
    }

    #[test]
    fn front_matter_split_reports_body_line() {
        let (fm, body, line) = split_front_matter("---\ntitle: A\n---\n# Hi\n").unwrap();
        assert_eq!(fm, "title: A\n");
        assert_eq!(body, "# Hi\n");
        assert_eq!(line, 4);
        assert!(split_front_matter("# no front matter").is_none());
        assert!(split_front_matter("---\ntitle: never closed\n").is_none());
    }
}
