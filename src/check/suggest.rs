//! What a broken link probably meant: the nearest existing page, by path,
//! in the linking page's language.
//!
//! A suggestion costs one pass over the pages, comparing file names for
//! equality and measuring the edit distance only to the target's siblings
//! (the pages of the same folder), so a site whose every link broke (docs
//! moved from another tool) still checks in linear time per link.

use crate::diagnostics::closest;
use crate::model::site::{Page, Site};

/// The most suggestions one page gets; its other broken links get none.
pub const MAX_PER_PAGE: usize = 32;

/// The page `dest` (a link of `from`) most likely meant, as the link to
/// write: a source path (`installation.md`) for a source link, a URL
/// otherwise. `None` when no page is close.
pub fn nearest_page(site: &Site, from: &Page, dest: &str) -> Option<String> {
    let path = dest.split(['#', '?']).next().unwrap_or(dest);
    if path.is_empty() {
        return None;
    }
    let lang = from.fallback_from.as_deref().unwrap_or(&from.lang);
    if path.ends_with(".md") {
        let dir = from.rel.rsplit_once('/').map_or("", |(d, _)| d);
        let joined = normalize(&format!("{lang}/{dir}/{path}"))?;
        let (lang, rel) = joined.split_once('/')?;
        let pages = site
            .pages
            .iter()
            .filter(|p| p.version == from.version && p.lang == lang && p.fallback_from.is_none());
        let found = nearest(pages.map(|p| p.rel.as_str()), rel)?;
        return Some(relative_to(dir, lang, from_lang(from), found));
    }
    // A URL: `/es/instalacion/`, `../other/`.
    let prefix = site.config.path_prefix();
    let absolute = match path.strip_prefix('/') {
        Some(p) => {
            let p = format!("/{p}");
            match p.strip_prefix(prefix.as_str()) {
                Some(s) if !prefix.is_empty() && s.starts_with('/') => s.to_string(),
                _ => p,
            }
        }
        None => format!("{}{path}", from.url),
    };
    let wanted = normalize(&absolute)?;
    let wanted = wanted.trim_end_matches('/');
    let url_lang = wanted.split('/').next().unwrap_or_default();
    let pages = site.pages.iter().filter(|p| p.lang == url_lang);
    let found = nearest(
        pages.map(|p| p.url.trim_matches('/')),
        wanted.trim_end_matches("/index.html"),
    )?;
    Some(format!("{prefix}/{found}/"))
}

fn from_lang(from: &Page) -> &str {
    from.fallback_from.as_deref().unwrap_or(&from.lang)
}

/// The candidate nearest to `wanted` (both `/`-separated paths): one of
/// its folder whose last segment is a near typo of the wanted one, else
/// one anywhere with the same last segment (a page that moved).
fn nearest<'a>(candidates: impl Iterator<Item = &'a str>, wanted: &str) -> Option<&'a str> {
    let (dir, name) = wanted.rsplit_once('/').unwrap_or(("", wanted));
    let mut siblings = Vec::new();
    let mut moved: Option<&str> = None;
    for c in candidates {
        let (c_dir, c_name) = c.rsplit_once('/').unwrap_or(("", c));
        if c_dir == dir {
            siblings.push(c);
        } else if c_name == name && moved.is_none_or(|m| c < m) {
            moved = Some(c);
        }
    }
    siblings.sort_unstable();
    let names = siblings
        .iter()
        .map(|s| s.rsplit_once('/').map_or(*s, |(_, n)| n));
    if let Some(best) = closest(name, names) {
        return siblings
            .iter()
            .copied()
            .find(|s| s.rsplit_once('/').map_or(*s, |(_, n)| n) == best);
    }
    moved
}

/// A source link from a page in folder `dir` of `from_lang` to `rel` of
/// `lang`.
fn relative_to(dir: &str, lang: &str, from_lang: &str, rel: &str) -> String {
    let ups = if dir.is_empty() {
        0
    } else {
        dir.split('/').count()
    };
    if lang == from_lang {
        if let Some(rest) = rel.strip_prefix(dir).and_then(|r| r.strip_prefix('/')) {
            if !dir.is_empty() {
                return rest.to_string();
            }
        }
        if dir.is_empty() {
            return rel.to_string();
        }
        return format!("{}{rel}", "../".repeat(ups));
    }
    format!("{}../{lang}/{rel}", "../".repeat(ups))
}

/// `path` without `.`, `..` and empty segments, no leading `/`; `None`
/// when `..` climbs above the start.
fn normalize(path: &str) -> Option<String> {
    crate::analyze::links::segments(path).map(|parts| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_is_a_sibling_typo_or_a_moved_page() {
        let pages = [
            "index.md",
            "installation.md",
            "k8s/drain.md",
            "guide/shutdown.md",
        ];
        let n = |w: &str| nearest(pages.iter().copied(), w);
        assert_eq!(n("instalation.md"), Some("installation.md"));
        assert_eq!(n("k8s/drian.md"), Some("k8s/drain.md"));
        assert_eq!(n("k8s/shutdown.md"), Some("guide/shutdown.md"));
        assert_eq!(n("k8s/unrelated.md"), None);
    }

    #[test]
    fn suggestions_are_links_from_the_page() {
        assert_eq!(
            relative_to("", "es", "es", "installation.md"),
            "installation.md"
        );
        assert_eq!(relative_to("k8s", "es", "es", "k8s/drain.md"), "drain.md");
        assert_eq!(relative_to("k8s", "es", "es", "index.md"), "../index.md");
        assert_eq!(relative_to("", "pt", "es", "index.md"), "../pt/index.md");
        assert_eq!(relative_to("a/b", "pt", "es", "x.md"), "../../../pt/x.md");
    }
}
