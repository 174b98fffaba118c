//! The docs against the bases and the image data: the release a page
//! documents exists, its YAML examples parse, and the environment keys it
//! mentions are ones that release reads.

use super::Context;
use crate::diagnostics::{rule, Diagnostic, Location};
use crate::model::site::{Page, Site};
use crate::yaml;
use semver::Version;

/// The release a page documents: its `base`, else its docs version's (for
/// a project without versions, the latest base).
pub fn documented_version<'a>(site: &'a Site, page: &'a Page) -> Option<&'a Version> {
    page.base.as_ref().or_else(|| {
        site.versions
            .get(page.version)
            .and_then(|v| v.release.as_ref())
    })
}

/// The release page `i` documents exists, its YAML examples parse and the
/// environment keys it names are read by that release.
pub fn check_page(ctx: &Context, i: usize) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let site = ctx.site;
    let (Some(page), Some(doc)) = (site.pages.get(i), ctx.analysis.docs.get(i)) else {
        return out;
    };
    if let Some(v) = &page.base {
        let refused = site.refused.bases.contains(v);
        if !refused && !site.bases.iter().any(|b| &b.version == v) {
            let published: Vec<_> = site.bases.iter().map(|b| b.folder()).collect();
            out.push(
                Diagnostic::new(
                    rule::DOC_BASE_UNKNOWN,
                    format!("the page documents v{v}, which has no published base"),
                )
                .at(Location::line(&page.source, page.base_line.unwrap_or(1)))
                .help(format!("published bases: {}", published.join(", "))),
            );
        }
    }
    for block in doc.code_blocks.iter().filter(|b| b.is_yaml()) {
        if let Err(e) = yaml::documents(&block.code) {
            let line = block.line + e.line.unwrap_or(1) - 1;
            out.push(
                Diagnostic::new(rule::DOC_YAML_INVALID, e.message).at(Location::at(
                    &page.source,
                    line,
                    e.column.unwrap_or(1) + block.indent,
                )),
            );
        }
    }
    if let Some(version) = documented_version(site, page) {
        // Environment keys named in the page's text or code, with the
        // prefixes the image data declares (`RUNNER_`), must be read by
        // the documented release, and versions it names must be releases.
        for (text, at) in page_texts(page) {
            let text = without_comments(text);
            if !site.images.env_prefixes.is_empty() {
                env_mentions_in(site, page, version, &text, at, &mut out);
            }
            let whole = (text.as_ref(), at, 0);
            pinned_versions(site, page, version, whole, Pins::NoRelease, &mut out);
        }
        // An overlay's image pin is `image-pin-mismatch`'s.
        for block in doc.code_blocks.iter().filter(|b| b.attr("file").is_none()) {
            let at = (block.line, block.indent + 1);
            let text = without_comments(&block.code);
            let block_text = (text.as_ref(), at, block.indent);
            pinned_versions(
                site,
                page,
                version,
                block_text,
                Pins::OtherRelease,
                &mut out,
            );
        }
    }
    out
}

/// The body, and the title and description, which the page shows too
/// (its `<h1>`, its `<title>`): each with where its text starts.
fn page_texts(page: &Page) -> Vec<(&str, (usize, usize))> {
    let mut texts = vec![(page.body.as_str(), (page.body_line, 1))];
    texts.push((page.title.as_str(), page.values_at.title));
    if let (Some(d), Some(at)) = (page.description.as_deref(), page.values_at.description) {
        texts.push((d, at));
    }
    texts
}

/// Which pinned versions [`pinned_versions`] reports.
#[derive(Clone, Copy, PartialEq)]
enum Pins {
    /// Versions that are no release, anywhere in the page.
    NoRelease,
    /// Other releases than the page's, in the code a reader copies (a
    /// table of releases or a link to the previous base is no mistake).
    OtherRelease,
}

/// The releases a page pins: a base folder of the site
/// (`/kubernetes/v1.29.0/`, as a path or below the site's URL) and the
/// image with a tag (`whystack-agent:1.29.0`, with or without a registry;
/// a variant such as `1.29.0-debug` is of release 1.29.0). Each must be a
/// release, and in code the release the page documents, which
/// `{{ version }}` writes.
fn pinned_versions(
    site: &Site,
    page: &Page,
    version: &semver::Version,
    (text, at, indent): (&str, (usize, usize), usize),
    pins: Pins,
    out: &mut Vec<Diagnostic>,
) {
    let image = format!("{}:", site.images.name);
    // The site's own URL before a path (`docs.example.com/kubernetes/…`).
    let base_url = site.config.base_url.as_str();
    let site_url = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest)
        .trim_end_matches('/');
    let forms: [(&str, bool); 2] = [("/kubernetes/v", false), (image.as_str(), true)];
    // Most texts pin nothing: one search over each, not one a line.
    let forms: Vec<(&str, bool)> = forms
        .into_iter()
        .filter(|(needle, _)| text.contains(needle))
        .collect();
    if forms.is_empty() {
        return;
    }
    for (i, line) in text.lines().enumerate() {
        // Where each pin is, and its release (none for a tag with a `v`).
        let mut found: Vec<(usize, usize, Option<semver::Version>)> = Vec::new();
        for &(needle, is_image) in &forms {
            let mut from = 0;
            while let Some(pos) = line[from..].find(needle) {
                let start = from + pos;
                from = start + needle.len();
                let before = &line[..start];
                let last = before.chars().next_back();
                let bounded = match is_image {
                    // The image's own name, not the end of another one's.
                    true => last.is_none_or(|c| !(c.is_ascii_alphanumeric() || "-_.".contains(c))),
                    // A path of this site, not of another (GitHub's
                    // `…/kubernetes/kubernetes/v1.29.0/`).
                    false => {
                        (!site_url.is_empty() && before.ends_with(site_url))
                            || last.is_none_or(|c| c.is_whitespace() || "\"'(=<[`".contains(c))
                            || ends_with_variable(before)
                    }
                };
                if !bounded {
                    continue;
                }
                let rest = &line[from..];
                let skipped = usize::from(is_image && rest.starts_with('v'));
                let rest = &rest[skipped..];
                let len = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || ".-+".contains(c)))
                    .unwrap_or(rest.len());
                let token = rest[..len].trim_end_matches('.');
                let Ok(pinned) = semver::Version::parse(token) else {
                    continue;
                };
                // An image's variant (`1.29.0-debug`) is of its release; a
                // base folder is the release's alone (`v1.29.0-rc.1` is none).
                let release = match is_image {
                    true => semver::Version::new(pinned.major, pinned.minor, pinned.patch),
                    false => pinned,
                };
                // The image's tags have no `v`: `:v1.30.0` is no tag of it.
                if skipped == 1 && pins == Pins::OtherRelease {
                    found.push((start, from + skipped + token.len(), None));
                    continue;
                }
                if &release == version {
                    continue;
                }
                let known = site.images.releases.contains(&release)
                    || site.bases.iter().any(|b| b.version == release);
                if known != (pins == Pins::OtherRelease) {
                    continue;
                }
                found.push((start, from + skipped + token.len(), Some(release)));
            }
        }
        // Columns counted once along the line.
        found.sort_by_key(|f| f.0);
        let (mut counted, mut chars) = (0usize, 0usize);
        for (start, end, release) in found {
            chars += line[counted..start].chars().count();
            counted = start;
            let shown = &line[start..end];
            let (why, help) = match (pins, release) {
                (_, None) => (
                    "the image's tags have no `v`, so a reader who copies it pulls a tag that is not there".to_string(),
                    format!("drop the `v`: `{}:{{{{ version }}}}`", site.images.name),
                ),
                (Pins::OtherRelease, Some(release)) => (
                    format!("a reader of the docs of {version} who copies it gets release {release}"),
                    PIN_HELP.to_string(),
                ),
                (Pins::NoRelease, Some(release)) => (
                    format!("{release} is no release of {}", site.images.name),
                    PIN_HELP.to_string(),
                ),
            };
            let column = chars + if i == 0 { at.1 } else { 1 + indent };
            out.push(
                Diagnostic::new(
                    rule::DOC_VERSION_MISMATCH,
                    format!("the page documents {version} and pins `{shown}`: {why}"),
                )
                .at(Location::at(&page.source, at.0 + i, column))
                .help(help),
            );
        }
    }
}

const PIN_HELP: &str =
    "write `{{ version }}` for the release the page documents, or name the version in prose";

/// Whether `text` ends with a shell variable (`$SITE`, `${SITE}`), which a
/// script puts the site's URL in before a path (`"$SITE/kubernetes/…"`).
fn ends_with_variable(text: &str) -> bool {
    let text = text.strip_suffix('}').unwrap_or(text);
    let name = text.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
    name.len() < text.len() && (name.ends_with('$') || name.ends_with("${"))
}

/// GitHub Actions' own variables, which share the `RUNNER_` prefix of
/// many agents' keys: a CI example that names them names no key of the
/// image.
const CI_VARIABLES: &[&str] = &[
    "RUNNER_ARCH",
    "RUNNER_DEBUG",
    "RUNNER_ENVIRONMENT",
    "RUNNER_NAME",
    "RUNNER_OS",
    "RUNNER_PERFLOG",
    "RUNNER_TEMP",
    "RUNNER_TOOL_CACHE",
    "RUNNER_TRACKING_ID",
    "RUNNER_WORKSPACE",
];

/// `text` with its HTML comments (`<!-- … -->`, which no reader sees)
/// blanked, one space per character, so lines and columns stay.
fn without_comments(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("<!--") {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("<!--") {
        out.push_str(&rest[..open]);
        let comment = &rest[open..];
        let len = comment.find("-->").map_or(comment.len(), |e| e + 3);
        out.extend(
            comment[..len]
                .chars()
                .map(|c| if c == '\n' { '\n' } else { ' ' }),
        );
        rest = &comment[len..];
    }
    out.push_str(rest);
    out.into()
}

/// The environment keys of `text` (starting at line and column `at` of
/// the page's source) that the documented release does not read.
fn env_mentions_in(
    site: &Site,
    page: &Page,
    version: &semver::Version,
    text: &str,
    at: (usize, usize),
    out: &mut Vec<Diagnostic>,
) {
    let prefixes = &site.images.env_prefixes;
    let word = |c: char| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_';
    for (i, written_line) in text.lines().enumerate() {
        // `RUNNER\_HEALTH\_DIR`: Markdown's escaped underscores are the
        // key's; each removed backslash is counted back into the column.
        let (line, escapes) = unescape_underscores(written_line);
        let line = line.as_ref();
        let mut from = 0;
        // Characters before `counted` (a byte offset), counted once as
        // the scan moves right: a column per match would be quadratic.
        let (mut counted, mut chars) = (0usize, 0usize);
        while from < line.len() {
            let rest = &line[from..];
            // The nearest place a prefix starts: a substring search each,
            // not a test at every character.
            let Some(pos) = prefixes.iter().filter_map(|x| rest.find(x.as_str())).min() else {
                break;
            };
            let start = from + pos;
            // The whole word: `RUNNER_X_MSx` is a misspelled key too.
            let end = line[start..]
                .find(|c: char| !(word(c) || c.is_ascii_alphanumeric()))
                .map_or(line.len(), |e| start + e);
            let written = &line[start..end];
            // `RUNNER_LEARNED_{FLUSH_INTERVAL_MS,STORE_PATH}`: the shell's
            // brace form names each key it expands to.
            let braced = line[end..].strip_prefix('{').and_then(|rest| {
                let close = rest.find('}')?;
                let after = &rest[close + 1..];
                let tail = &after[..after.find(|c: char| !word(c)).unwrap_or(after.len())];
                let keys: Vec<String> = rest[..close]
                    .split(',')
                    .map(|alt| format!("{written}{alt}{tail}"))
                    .collect();
                keys.iter()
                    .all(|k| k.chars().all(word))
                    .then_some((keys, close + 2 + tail.len()))
            });
            let (token, end): (std::borrow::Cow<str>, usize) = match braced {
                Some((keys, len)) => {
                    let unknown = keys
                        .into_iter()
                        .find(|k| site.images.env_fact(version, k).is_none());
                    match unknown {
                        Some(k) => (k.into(), end + len),
                        None => {
                            from = end + len;
                            continue;
                        }
                    }
                }
                None => (written.into(), end),
            };
            let token = token.as_ref();
            let bounded = line[..start]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
            from = end.max(start + 1);
            // `{{ env.KEY }}`: the variable's own check names an unknown key.
            let variable = line[..start]
                .strip_suffix("env.")
                .is_some_and(|before| before.trim_end().ends_with("{{"));
            if !bounded || variable || prefixes.iter().any(|p| p == token) {
                continue;
            }
            if site.images.env_fact(version, token).is_some() || CI_VARIABLES.contains(&token) {
                continue;
            }
            // `RUNNER_LEARNED_*`: the keys that start so.
            // (not `**RUNNER_X**`, a key in bold)
            let pattern = line[end..].starts_with('*') && !line[..start].ends_with('*');
            if pattern
                && site
                    .images
                    .env_at(version)
                    .any(|e| e.key.starts_with(token))
            {
                continue;
            }
            let other = site.images.env.iter().find(|e| e.key == token);
            let why = match other {
                Some(e) => format!("only releases `{}` read it", e.versions),
                None => match crate::diagnostics::closest(
                    token,
                    site.images.env_at(version).map(|e| e.key.as_str()),
                ) {
                    Some(k) => format!("did you mean `{k}`?"),
                    None => "no release of the image reads it".into(),
                },
            };
            out.push(
                Diagnostic::new(
                    rule::DOC_ENV_KEY_UNKNOWN,
                    format!(
                        "`{token}` is not read by {}:{version}: {why}",
                        site.images.name
                    ),
                )
                .at(Location::at(
                    &page.source,
                    at.0 + i,
                    {
                        chars += line[counted..start].chars().count();
                        counted = start;
                        let removed = escapes.iter().filter(|&&e| e < start).count();
                        chars + removed + if i == 0 { at.1 } else { 1 }
                    },
                ))
                .help(format!(
                    "fix the key's spelling, document the release that reads it (front matter `base`), or, for a key the release really reads, add it to `env:` in {}",
                    site.config.image.releases.display()
                )),
            );
        }
    }
}

/// `line` with each `\_` (Markdown's escaped underscore) as `_`, and the
/// byte offsets in the result where a backslash was removed.
fn unescape_underscores(line: &str) -> (std::borrow::Cow<'_, str>, Vec<usize>) {
    if !line.contains("\\_") {
        return (line.into(), Vec::new());
    }
    let mut out = String::with_capacity(line.len());
    let mut removed = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("\\_") {
        out.push_str(&rest[..at]);
        removed.push(out.len());
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
    (out.into(), removed)
}

/// Every published docs version has a start page (`index.md`) in the
/// default language: the site's root, the version picker and the language
/// switcher lead there, and the other languages fall back to it.
pub fn start_pages(ctx: &Context) -> Vec<Diagnostic> {
    let site = ctx.site;
    let lang = &site.config.default_language;
    let mut out = Vec::new();
    for (v, version) in site.versions.iter().enumerate() {
        if !site.version_published(v) {
            continue;
        }
        let has = site
            .pages
            .iter()
            .any(|p| p.version == v && &p.lang == lang && p.rel == "index.md");
        if !has {
            let file = version.dir.join(lang).join("index.md");
            out.push(
                Diagnostic::new(
                    rule::START_PAGE_MISSING,
                    format!(
                        "docs version `{}` has no start page in its default language ({}): the site's root and the links to this version lead to a page that is not there",
                        version.id,
                        file.display()
                    ),
                )
                .in_file(&file),
            );
        }
    }
    out
}
