//! Every internal link and anchor resolves.

use crate::diagnostics::{rule, Diagnostic, Location};
use crate::render::links::{LinkIndex, Target};
use crate::render::markdown::Document;
use crate::site::Site;

pub fn check(site: &Site, docs: &[Document], index: &LinkIndex) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (page, doc) in site.pages.iter().zip(docs) {
        // An untranslated copy has the links of its original, checked there.
        if page.fallback_from.is_some() {
            continue;
        }
        for link in &doc.links {
            let at = Location::at(&page.source, link.line, link.column);
            match index.resolve(page, &link.dest) {
                Target::External => {}
                Target::Broken(why) => out.push(
                    Diagnostic::new(
                        rule::LINK_BROKEN,
                        format!("link to `{}` goes nowhere: {why}", link.dest),
                    )
                    .at(at),
                ),
                Target::Internal {
                    anchor: Some(anchor),
                    page: Some(target),
                    ..
                } => {
                    let headings = &docs[target].headings;
                    if !headings.iter().any(|h| h.id == anchor) {
                        let known: Vec<_> = headings.iter().map(|h| h.id.as_str()).collect();
                        out.push(
                            Diagnostic::new(
                                rule::ANCHOR_MISSING,
                                format!(
                                    "`{}` has no heading with id `{anchor}`",
                                    site.pages[target].source.display()
                                ),
                            )
                            .at(at)
                            .help(format!("use one of: {}", known.join(", "))),
                        );
                    }
                }
                Target::Internal { .. } => {}
            }
        }
    }
    out
}
