//! Which heading an anchor names. Ids are folded (`Cópia de segurança` →
//! `copia-de-seguranca`), but docs written for GitHub or Hugo link to the
//! same heading keeping its accents (`#cópia-de-segurança`), and some tools
//! percent-encode them (`#c%C3%B3pia-de-seguran%C3%A7a`): each of those
//! forms names the heading whose id it folds to. So does the id GitHub
//! and Hugo give a heading, which drops punctuation where ids here put a
//! `-` (`#1300` for `## 1.30.0`).

use super::links::{LinkIndex, Target};
use crate::model::document::{Document, Heading, Headings};
use crate::model::site::Page;

/// The heading of `headings` that `anchor` names: the one with exactly that
/// id, else the one whose id is the anchor percent-decoded, else the one
/// whose id is the anchor folded as ids are, else the one GitHub and Hugo
/// would give the anchor as id (`#1300` for `## 1.30.0`).
pub fn find<'a>(headings: &'a Headings, anchor: &str) -> Option<&'a Heading> {
    find_exact(headings, anchor).or_else(|| {
        let decoded = decode(anchor);
        headings
            .with_id(&fold(&decoded))
            .or_else(|| headings.with_github_id(&decoded))
    })
}

/// The heading a browser finds for `anchor` as it is published: its id
/// as written, or percent-decoded; nothing folded.
pub fn find_exact<'a>(headings: &'a Headings, anchor: &str) -> Option<&'a Heading> {
    if let Some(h) = headings.with_id(anchor) {
        return Some(h);
    }
    let decoded = decode(anchor);
    (decoded != anchor)
        .then(|| headings.with_id(&decoded))
        .flatten()
}

/// Whether `anchor` names an element of `doc` a browser finds without a
/// heading: the top of the page (an empty anchor, `#`), or an id raw HTML
/// gives (`<a id="old-name">`), as written or percent-decoded.
pub fn names_other_than_a_heading(doc: &Document, anchor: &str) -> bool {
    let has = |id: &str| {
        doc.html_ids
            .binary_search_by(|x| x.as_str().cmp(id))
            .is_ok()
    };
    anchor.is_empty() || has(anchor) || has(&decode(anchor))
}

/// `anchor` folded the way heading ids are made from text: accents and
/// case removed, runs of other characters turned into one `-`.
pub fn fold(anchor: &str) -> String {
    // Not `markdown::slugify`, which names an empty heading `section`: an
    // empty anchor names nothing.
    slug::slugify(anchor)
}

/// `anchor` with `%XX` escapes decoded, when they make UTF-8; as written
/// otherwise.
pub fn decode(anchor: &str) -> String {
    if !anchor.contains('%') {
        return anchor.to_string();
    }
    percent_encoding::percent_decode_str(anchor)
        .decode_utf8()
        .map_or_else(|_| anchor.to_string(), |s| s.into_owned())
}

/// The id to publish for a link's anchor: the id of the heading it names
/// when that differs from what was written (so the browser finds it),
/// else `None`.
pub fn published_id<'a>(headings: &'a Headings, anchor: &str) -> Option<&'a str> {
    find(headings, anchor)
        .filter(|h| h.id != anchor)
        .map(|h| h.id.as_str())
}

/// The destination to publish for a link of page `from` (see
/// [`LinkIndex::rewrite`]), with its anchor replaced by the id of the
/// heading it names when it was written another way.
pub fn rewrite_link(
    index: &LinkIndex,
    docs: &[std::sync::Arc<Document>],
    from: &Page,
    dest: &str,
) -> String {
    let out = index.rewrite(from, dest);
    if !dest.contains('#') {
        return out;
    }
    let Target::Internal {
        anchor: Some(anchor),
        page: Some(target),
        ..
    } = index.resolve(from, dest)
    else {
        return out;
    };
    match docs
        .get(target)
        .filter(|d| !names_other_than_a_heading(d, &anchor))
        .and_then(|d| published_id(&d.headings, &anchor))
    {
        Some(id) => match out.rsplit_once('#') {
            Some((head, _)) => format!("{head}#{id}"),
            None => out,
        },
        None => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headings(ids: &[&str]) -> Headings {
        ids.iter()
            .map(|id| Heading {
                level: 2,
                id: id.to_string(),
                title: id.to_string(),
            })
            .collect::<Vec<_>>()
            .into()
    }

    #[test]
    fn accents_and_percent_escapes_name_the_folded_id() {
        let h = headings(&["copia-de-seguranca", "My_Id", "paso-2"]);
        let id = |a: &str| find(&h, a).map(|h| h.id.as_str());
        assert_eq!(id("copia-de-seguranca"), Some("copia-de-seguranca"));
        assert_eq!(id("cópia-de-segurança"), Some("copia-de-seguranca"));
        assert_eq!(
            id("c%C3%B3pia-de-seguran%C3%A7a"),
            Some("copia-de-seguranca")
        );
        assert_eq!(id("Cópia-De-Segurança"), Some("copia-de-seguranca"));
        // Explicit ids match as written.
        assert_eq!(id("My_Id"), Some("My_Id"));
        assert_eq!(id("paso-2"), Some("paso-2"));
        assert_eq!(id("copia"), None);
        assert_eq!(id("%FF%FE"), None);
        assert_eq!(
            published_id(&h, "cópia-de-segurança"),
            Some("copia-de-seguranca")
        );
        assert_eq!(published_id(&h, "copia-de-seguranca"), None);
        // GitHub's and Hugo's ids: punctuation dropped, not made `-`.
        let h = Headings::new(
            ["1.30.0", "`--flag=x`", "🚀 Launch", "1.30.0"]
                .iter()
                .map(|t| Heading {
                    level: 2,
                    id: crate::analyze::markdown::slugify(t),
                    title: t.replace('`', ""),
                })
                .collect(),
        );
        let id = |a: &str| find(&h, a).map(|h| h.id.as_str());
        assert_eq!(id("1300"), Some("1-30-0"));
        assert_eq!(id("--flagx"), Some("flag-x"));
        assert_eq!(id("-launch"), Some("rocket-launch"));
        assert_eq!(id("1300-1"), Some("1-30-0"));
        assert_eq!(
            find(&h, "1300-1").map(|x| x as *const _),
            Some(&h[3] as *const _)
        );
    }

    proptest::proptest! {
        /// The indexed lookup finds what a scan of the headings in page
        /// order finds, for anchors as written, escaped or folded.
        #[test]
        fn lookup_equals_a_scan(
            ids in proptest::collection::vec("[a-cA-C_é-]{0,4}", 0..24),
            anchor in "[a-cA-C_é%-]{0,5}",
        ) {
            let h = headings(&ids.iter().map(String::as_str).collect::<Vec<_>>());
            let scan = |id: &str| h.iter().find(|x| x.id == id);
            let decoded = decode(&anchor);
            let exact = scan(&anchor).or_else(|| scan(&decoded));
            // GitHub's ids, repeats numbered in page order.
            let mut github: Vec<String> = Vec::new();
            for x in h.iter() {
                let base = crate::model::document::github_id(&x.title);
                let free = |id: &String| !github.contains(id);
                let id = std::iter::once(base.clone())
                    .chain((1..).map(|n| format!("{base}-{n}")))
                    .find(free)
                    .unwrap();
                github.push(id);
            }
            let by_github = github.iter().position(|g| *g == decoded).map(|i| &h[i]);
            let expected = exact.or_else(|| scan(&fold(&decoded))).or(by_github);
            proptest::prop_assert_eq!(find_exact(&h, &anchor), exact);
            proptest::prop_assert_eq!(find(&h, &anchor), expected);
        }
    }
}
