//! Every internal link and anchor resolves.

use super::Context;
use crate::analyze::anchors;
use crate::analyze::links::{is_relative_url, Target};
use crate::diagnostics::{rule, Diagnostic, Location};
use crate::model::document::{Heading, Link};
use crate::model::layout;
use crate::model::site::{Page, Site};

/// The links of page `i` resolve, and so do their anchors: this reads its
/// document and the headings of the pages it links to with an anchor.
///
/// A link relative to the page's URL (`../x/#y`) leads elsewhere from each
/// untranslated copy of the page, published under another language: when
/// it holds from the page, it is checked from every copy too.
pub fn check_page(ctx: &Context, i: usize) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let (site, docs, index) = (ctx.site, &ctx.analysis.docs, &ctx.analysis.index);
    let (Some(page), Some(doc)) = (site.pages.get(i), docs.get(i)) else {
        return out;
    };
    for r in &doc.repeated_ids {
        out.push(
            Diagnostic::new(
                rule::HEADING_ID_REPEATED,
                format!(
                    "the heading id `{}` is given already by {}: links to #{} land there, never on this heading",
                    r.id, r.given_by, r.id
                ),
            )
            .at(Location::at(&page.source, r.line, r.column))
            .help(format!(
                "give this heading another id (`{{#{}-2}}`, say), or remove its `{{#{}}}`",
                r.id, r.id
            )),
        );
    }
    for r in &doc.undefined_references {
        out.push(
            Diagnostic::new(
                rule::LINK_REFERENCE_UNDEFINED,
                format!(
                    "the reference link `[{}]` has no definition in the page, so it is published as plain text, brackets and all",
                    r.label
                ),
            )
            .at(Location::at(&page.source, r.line, r.column))
            .help(format!(
                "define it on a line of its own (`[{}]: install.md`), or write the link inline (`[text](install.md)`)",
                r.label
            )),
        );
    }
    let copies = index.copies_of(site, page);
    let mut suggested = 0;
    for link in &doc.links {
        let before = out.len();
        check_link(ctx, page, page, link, &mut suggested, &mut out);
        if out.len() > before || !is_relative_url(&link.dest) {
            continue;
        }
        for copy in &copies {
            let before = out.len();
            check_link(ctx, page, copy, link, &mut suggested, &mut out);
            for d in &mut out[before..] {
                d.message = format!(
                    "{} (in the untranslated copy published at {})",
                    d.message, copy.url
                );
            }
        }
    }
    code_urls(ctx, page, doc, &mut out);
    out
}

/// The full URLs of the site itself in the page's code blocks (`curl -O
/// https://docs.example.com/kubernetes/v1.30.0/base/files.txt`): what a
/// reader copies must be there once published, as a link's target must.
/// A URL built from a shell variable (`…/v${VERSION}/base`) is the
/// reader's to fill.
fn code_urls(
    ctx: &Context,
    page: &Page,
    doc: &crate::model::document::Document,
    out: &mut Vec<Diagnostic>,
) {
    let index = &ctx.analysis.index;
    for block in &doc.code_blocks {
        if !block.code.contains("//") {
            continue;
        }
        for (row, line) in block.code.lines().enumerate() {
            let mut from = 0;
            while let Some(found) = line[from..].find("//") {
                let slashes = from + found;
                from = slashes + 2;
                // Back to the scheme (`https:`), if any; forward to the end
                // of the URL.
                let start = line[..slashes]
                    .strip_suffix(':')
                    .map(|head| {
                        head.trim_end_matches(|c: char| {
                            c.is_ascii_alphanumeric() || "+-.".contains(c)
                        })
                        .len()
                    })
                    .unwrap_or(slashes);
                let len = line[slashes..]
                    .find(|c: char| c.is_whitespace() || "\"'<>`()[]{}|\\^".contains(c))
                    .unwrap_or(line.len() - slashes);
                let end = slashes + len;
                from = from.max(end);
                let url = line[start..end].trim_end_matches(['.', ',', ';', ':', '!', '?']);
                // A URL a shell variable completes (`…/v${VERSION#v}/base`)
                // is the reader's; what is written of it before the
                // variable must still be inside the site.
                let built = line[end..].starts_with(['{', '$']) || url.contains('$');
                let written = url.split('$').next().unwrap_or(url);
                let Some(path) = index.own_path(written) else {
                    continue;
                };
                let outside = index.outside_base_path(&path).then(|| {
                    "the site is below its base URL's path, which the URL lacks".to_string()
                });
                let broken = match built {
                    true => outside,
                    false => match index.resolve(page, &path) {
                        Target::Broken(why) => Some(why),
                        _ => outside,
                    },
                };
                if let Some(why) = broken {
                    let column = line[..start].chars().count() + 1 + block.indent;
                    out.push(
                        Diagnostic::new(
                            rule::LINK_BROKEN,
                            format!("`{}`, in a code block a reader copies, goes nowhere: {why}", if built { format!("{written}…") } else { url.to_string() }),
                        )
                        .at(Location::at(&page.source, block.line + row, column))
                        .help("write the URL of a published file or page (`{{ version }}` for the release the page documents)"),
                    );
                }
            }
        }
    }
}

/// Link `link` of `page`'s document, as published on `from` (the page, or
/// an untranslated copy of it).
fn check_link(
    ctx: &Context,
    page: &Page,
    from: &Page,
    link: &Link,
    suggested: &mut usize,
    out: &mut Vec<Diagnostic>,
) {
    let (site, docs, index) = (ctx.site, &ctx.analysis.docs, &ctx.analysis.index);
    let at = Location::at(&page.source, link.line, link.column);
    // A full URL of the site is a link into it, published as written.
    let own = index.own_path(&link.dest);
    let dest = own.as_deref().unwrap_or(&link.dest);
    let as_written = link.raw_html || own.is_some();
    let target = index.resolve(from, dest);
    let written = match &target {
        Target::Broken(_) => None,
        _ if as_written => index.as_written(from, dest),
        _ => None,
    };
    if let Some(url) = written {
        let (why, help) = if own.is_some() {
            (
                "a full URL is published as written, and the site's pages are below its base URL's path",
                format!("write the site's URL with `{url}`, or a Markdown link to the page"),
            )
        } else {
            (
                "raw HTML is published as written, and only a Markdown link's destination becomes the page's URL",
                format!("write `{url}`, or make it a Markdown link"),
            )
        };
        out.push(
            Diagnostic::new(
                rule::LINK_BROKEN,
                format!("link to `{}` goes nowhere once published: {why}", link.dest),
            )
            .at(at)
            .help(help),
        );
        return;
    }
    match target {
        Target::External | Target::Unknown => {}
        Target::Broken(why) => {
            let mut d = Diagnostic::new(
                rule::LINK_BROKEN,
                format!("link to `{}` goes nowhere: {why}", link.dest),
            )
            .at(at);
            if *suggested < super::suggest::MAX_PER_PAGE {
                *suggested += 1;
                if let Some(near) = super::suggest::nearest_page(site, from, dest) {
                    d = d.help(format!("did you mean `{near}`?"));
                }
            }
            out.push(d);
        }
        Target::Internal {
            path,
            anchor: Some(anchor),
            page: None,
        } => {
            if anchor.is_empty() {
                return;
            }
            if let Some(d) = versions_anchor(site, &path, &anchor) {
                out.push(d.at(at));
            }
        }
        Target::Internal {
            anchor: Some(anchor),
            page: Some(target),
            ..
        } => {
            let Some(target_doc) = docs.get(target) else {
                return;
            };
            if anchors::names_other_than_a_heading(target_doc, &anchor) {
                return;
            }
            let headings = &target_doc.headings;
            if as_written && anchors::find_exact(headings, &anchor).is_none() {
                // Raw HTML and full URLs are published as written: only
                // a Markdown link's anchor is rewritten to the heading's id.
                if let Some(h) = anchors::find(headings, &anchor) {
                    out.push(
                        Diagnostic::new(
                            rule::ANCHOR_MISSING,
                            format!(
                                "`{}` has no heading with id `{anchor}` as written: the link is published as written, and browsers match ids exactly",
                                site.pages[target].source.display()
                            ),
                        )
                        .at(at)
                        .help(format!("write `#{}`, or make it a Markdown link", h.id)),
                    );
                    return;
                }
            }
            if anchors::find(headings, &anchor).is_none() {
                let mut d = Diagnostic::new(
                    rule::ANCHOR_MISSING,
                    format!(
                        "`{}` has no heading with id `{anchor}`",
                        site.pages[target].source.display()
                    ),
                )
                .at(at);
                // Each suggestion compares the anchor with every id.
                if *suggested < super::suggest::MAX_PER_PAGE {
                    *suggested += 1;
                    d = d.help(anchor_help(headings, &anchor));
                }
                out.push(d);
            }
        }
        Target::OtherVersion { source, versions } => {
            let own = site
                .versions
                .get(from.version)
                .map_or("this", |v| v.id.as_str());
            out.push(
                Diagnostic::new(
                    rule::LINK_OTHER_VERSION,
                    format!(
                        "link to `{}` goes nowhere in the docs of {own}: content/{source} is a page of {} only",
                        link.dest,
                        versions.join(", ")
                    ),
                )
                .at(at),
            );
        }
        Target::Internal { .. } => {}
    }
}

/// How many ids a finding lists when no heading is near the anchor.
const LISTED_IDS: usize = 12;

/// What to write instead of `anchor`, which names none of `headings`: the
/// nearest id, else the page's first ids.
fn anchor_help(headings: &[Heading], anchor: &str) -> String {
    let known = headings.iter().map(|h| h.id.as_str());
    let folded = anchors::fold(&anchors::decode(anchor));
    if let Some(near) = crate::diagnostics::closest(&folded, known.clone()) {
        return format!("did you mean `{near}`?");
    }
    let listed: Vec<_> = known.take(LISTED_IDS).collect();
    match headings.len() {
        0 => "the page has no heading: link to the page without an anchor".into(),
        n if n > LISTED_IDS => format!("use one of: {}, … ({n} in all)", listed.join(", ")),
        _ => format!("use one of: {}", listed.join(", ")),
    }
}

/// A finding for `anchor` into the versions page at `path` when the page
/// has no such id. Only the default template's ids are known before
/// rendering: with a `versions.html` of the project, nothing is said.
fn versions_anchor(site: &Site, path: &str, anchor: &str) -> Option<Diagnostic> {
    layout::versions_page_language(site, path)?;
    if site.templates.iter().any(|t| t.name == "versions.html") {
        return None;
    }
    let ids = layout::versions_page_ids(site);
    let decoded = anchors::decode(anchor);
    if ids.contains(&decoded) {
        return None;
    }
    let help = match crate::diagnostics::closest(&decoded, ids.iter().map(String::as_str)) {
        Some(near) => format!("did you mean `{near}`?"),
        None => format!(
            "the page has an id for each version, such as `{}`",
            ids.first().map_or("v1.0.0", String::as_str)
        ),
    };
    Some(
        Diagnostic::new(
            rule::ANCHOR_MISSING,
            format!(
                "the versions page `{path}` has no id `{anchor}`: it has one per published base"
            ),
        )
        .help(help),
    )
}
