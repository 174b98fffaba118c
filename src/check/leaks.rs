//! Nothing that looks like a real credential is published: not in a base
//! file, not in a page, not in an asset or a template. The rules are the
//! scanner's ([`crate::secrets`], data in `src/secrets/rules.yaml`). A page
//! is scanned with its variables replaced; the rendered site is scanned
//! once more before it is written (`engine::render`), for what templates
//! put in pages.

use super::{Context, Subject};
use crate::diagnostics::{rule, Diagnostic, Location};
use crate::secrets::Scanner;
use std::path::Path;

/// A finding for each credential in `bytes`, the contents of `file`
/// whose first line is line `first_line` of it.
pub fn report(scanner: &Scanner, file: &Path, first_line: usize, bytes: &[u8]) -> Vec<Diagnostic> {
    let name = file.to_string_lossy();
    scanner
        .scan_file(&name, bytes)
        .into_iter()
        .map(|f| {
            Diagnostic::new(
                rule::CREDENTIAL_LEAK,
                format!("{}, and the file is published", f.message()),
            )
            .at(Location::at(file, f.line + first_line - 1, f.column))
        })
        .collect()
}

/// The published files of a base.
pub fn base(ctx: &Context, subject: &Subject) -> Vec<Diagnostic> {
    let base = subject.base;
    base.files
        .iter()
        .flat_map(|f| report(&ctx.tools.credentials, &base.dir.join(&f.name), 1, &f.bytes))
        .collect()
}

/// The text of page `i`, as published: with its `{{ variables }}`
/// replaced, so that a value the image data or the site gives them is
/// scanned by `check` too, not only in the rendered page.
pub fn page(ctx: &Context, i: usize) -> Vec<Diagnostic> {
    let Some(page) = ctx.site.pages.get(i) else {
        return Vec::new();
    };
    let text = ctx
        .analysis
        .docs
        .get(i)
        .and_then(|d| d.expanded.as_deref())
        .unwrap_or(&page.body);
    let mut out = report(
        &ctx.tools.credentials,
        &page.source,
        page.body_line,
        text.as_bytes(),
    );
    // The front matter's values are published too (title, description).
    let front = format!(
        "title: {}\ndescription: {}\n",
        page.title,
        page.description.as_deref().unwrap_or("")
    );
    out.extend(
        report(&ctx.tools.credentials, &page.source, 1, front.as_bytes())
            .into_iter()
            .map(|mut d| {
                if let Some(l) = d.location.as_mut() {
                    l.line = None;
                    l.column = None;
                }
                d
            }),
    );
    out
}

/// The project's assets and templates.
pub fn assets(ctx: &Context) -> Vec<Diagnostic> {
    let scanner = &ctx.tools.credentials;
    let mut out = Vec::new();
    for a in &ctx.site.assets {
        out.extend(report(scanner, &a.source, 1, &a.bytes));
    }
    for t in &ctx.site.templates {
        out.extend(report(scanner, &t.source, 1, t.text.as_bytes()));
    }
    out
}
