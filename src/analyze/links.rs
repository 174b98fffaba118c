//! Where a link in a page goes, given every page and file the site has.

use crate::model::site::{Page, Site};
use std::collections::{BTreeSet, HashMap};

/// The result of resolving one link destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Another host, or a scheme such as `mailto:`: left alone.
    External,
    /// A path on this site (without the base URL's prefix).
    Internal {
        path: String,
        anchor: Option<String>,
        /// Index of the page in `Site::pages`, when it is one.
        page: Option<usize>,
    },
    /// Points nowhere the site has; the reason says why.
    Broken(String),
    /// Into a folder whose input was refused (a base that could not be
    /// read): what the site will have there is not known.
    Unknown,
    /// A page source (`x.md`) that the linking page's docs version does
    /// not have, and these other versions do (their ids).
    OtherVersion {
        source: String,
        versions: Vec<String>,
    },
}

/// Every page and published path of a site, to resolve links against.
#[derive(Debug, Clone)]
pub struct LinkIndex {
    /// The base URL's path (`/docs`, or empty).
    prefix: String,
    /// The base URL's host: a full URL to it is a link into the site.
    host: Option<String>,
    /// Each page's URL, in `Site::pages` order.
    urls: Vec<String>,
    /// Docs version → language → path below `content/<lang>/` → page.
    by_source: Vec<HashMap<String, HashMap<String, usize>>>,
    /// The id of each docs version, for messages.
    version_ids: Vec<String>,
    /// Published pages by URL.
    by_url: HashMap<String, usize>,
    paths: BTreeSet<String>,
    /// Folders of refused inputs ([`Target::Unknown`]).
    unknown: Vec<String>,
}

impl LinkIndex {
    /// `paths` are all the files the build publishes, as site paths.
    pub fn new(site: &Site, paths: BTreeSet<String>) -> Self {
        let mut by_source = vec![HashMap::new(); site.versions.len().max(1)];
        let mut by_url = HashMap::with_capacity(site.pages.len());
        for (i, p) in site.pages.iter().enumerate() {
            if let Some(version) = by_source.get_mut(p.version) {
                version
                    .entry(p.lang.clone())
                    .or_insert_with(HashMap::new)
                    .insert(p.rel.clone(), i);
            }
            if site.version_published(p.version) {
                by_url.insert(p.url.clone(), i);
            }
        }
        LinkIndex {
            prefix: site.config.path_prefix(),
            host: url::Url::parse(&site.config.base_url)
                .ok()
                .and_then(|u| u.host_str().map(str::to_string)),
            urls: site.pages.iter().map(|p| p.url.clone()).collect(),
            by_source,
            version_ids: site.versions.iter().map(|v| v.id.clone()).collect(),
            by_url,
            paths,
            unknown: site
                .refused
                .bases
                .iter()
                .map(crate::model::layout::release_base_path)
                .collect(),
        }
    }

    /// Every path the site publishes.
    pub fn paths(&self) -> &BTreeSet<String> {
        &self.paths
    }

    /// A SHA-256 of everything [`LinkIndex::resolve`] reads besides the
    /// linking page and the destination: the base URL's path, every page's
    /// language, source path and URL, and every published path.
    pub fn fingerprint(&self) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        let mut pages: Vec<(usize, &str, &str, &str)> = self
            .by_source
            .iter()
            .enumerate()
            .flat_map(|(v, langs)| {
                langs.iter().flat_map(move |(lang, pages)| {
                    pages.iter().map(move |(rel, &i)| {
                        (v, lang.as_str(), rel.as_str(), self.urls[i].as_str())
                    })
                })
            })
            .collect();
        pages.sort_unstable();
        let mut h = Sha256::new();
        let all = (&self.prefix, &self.host, pages, &self.paths, &self.unknown);
        let _ = serde_json::to_writer(&mut h, &all);
        h.finalize().into()
    }

    /// Where `dest` leads from the page's URL, as a browser reads it.
    fn resolve_url(&self, from: &Page, dest: &str) -> Target {
        if dest.is_empty() {
            return Target::Broken("the link has no destination".into());
        }
        if is_external(dest) {
            return Target::External;
        }
        let (rest, anchor) = match dest.split_once('#') {
            Some((p, a)) => (p, Some(a.to_string())),
            None => (dest, None),
        };
        let path = rest.split('?').next().unwrap_or(rest);
        // A server reads the path percent-decoded (`shut%64own` is
        // `shutdown`, `a%20b.png` is `a b.png`).
        let decoded = percent_encoding::percent_decode_str(path).decode_utf8();
        let path = match &decoded {
            Ok(d) if !d.contains(['#', '?']) => d.as_ref(),
            _ => path,
        };
        if path.is_empty() {
            // The page itself, published or not (an unpublished next has
            // no URLs in the index, but its anchors are still checked).
            let page = self.by_url.get(&from.url).copied().or_else(|| {
                self.by_source
                    .get(from.version)
                    .and_then(|v| v.get(&from.lang))
                    .and_then(|pages| pages.get(&from.rel))
                    .copied()
            });
            return Target::Internal {
                path: from.url.clone(),
                anchor,
                page,
            };
        }
        if path.ends_with(".md") {
            return self.resolve_source(from, path, anchor);
        }
        let absolute = if path.starts_with('/') {
            self.below_prefix(path).unwrap_or(path).to_string()
        } else {
            format!("{}{}", from.url, path)
        };
        let Some(normal) = normalize(&absolute) else {
            return Target::Broken(format!("`{path}` leaves the site root"));
        };
        let keep_slash = absolute.ends_with('/') && !normal.ends_with('/');
        let normal = if keep_slash {
            format!("{normal}/")
        } else {
            normal
        };
        if let Some(&i) = self.by_url.get(normal.as_str()) {
            return self.page_target(i, anchor);
        }
        if let Some(dir) = normal.strip_suffix("index.html") {
            if let Some(&i) = self.by_url.get(dir) {
                return self.page_target(i, anchor);
            }
        }
        if let Some(&i) = self.by_url.get(format!("{normal}/").as_str()) {
            return self.page_target(i, anchor);
        }
        let file = if normal.ends_with('/') {
            format!("{normal}index.html")
        } else {
            normal.clone()
        };
        if self.paths.contains(&file) {
            return Target::Internal {
                path: normal,
                anchor,
                page: None,
            };
        }
        if self
            .unknown
            .iter()
            .any(|dir| normal.starts_with(dir.as_str()))
        {
            return Target::Unknown;
        }
        Target::Broken(format!("the site has nothing at `{normal}`"))
    }

    /// Where `dest` leads: a URL relative to the page's own is read as a
    /// browser reads it, and when that reaches nothing, as the page's
    /// source reads it (`diagram.png` beside `content/en/guide.md`, which
    /// is published at `/en/guide/`; or an image of an untranslated page,
    /// beside its original), as a `.md` link is.
    pub fn resolve(&self, from: &Page, dest: &str) -> Target {
        let target = self.resolve_url(from, dest);
        if !matches!(target, Target::Broken(_)) || !is_relative_url(dest) {
            return target;
        }
        match self.beside_source(from, dest) {
            Some(path) => {
                let anchor = dest.split_once('#').map(|(_, a)| a.to_string());
                Target::Internal {
                    path,
                    anchor,
                    page: None,
                }
            }
            None => target,
        }
    }

    /// The published file that relative link `dest` names beside the
    /// source of page `from` (of its original, for an untranslated copy),
    /// when the site has it.
    fn beside_source(&self, from: &Page, dest: &str) -> Option<String> {
        let path = dest.split(['#', '?']).next().unwrap_or(dest);
        let lang = from.fallback_from.as_deref().unwrap_or(&from.lang);
        let original = *self
            .by_source
            .get(from.version)?
            .get(lang)?
            .get(&from.rel)?;
        let url = self.urls.get(original)?;
        let name = from.rel.rsplit('/').next().unwrap_or(&from.rel);
        let folder = if name == "index.md" {
            url.as_str()
        } else {
            url.trim_end_matches('/').rsplit_once('/')?.0
        };
        let found = normalize(&format!("{}/{path}", folder.trim_end_matches('/')))?;
        self.paths.contains(&found).then_some(found)
    }

    fn resolve_source(&self, from: &Page, path: &str, anchor: Option<String>) -> Target {
        let dir = match from.rel.rfind('/') {
            Some(i) => &from.rel[..i],
            None => "",
        };
        // An untranslated page links like its original, so its anchors hold.
        let lang = from.fallback_from.as_deref().unwrap_or(&from.lang);
        let joined = match path.strip_prefix('/') {
            // From the content folder (`/en/install.md`, or as the
            // repository has it, `/content/en/install.md`); without a
            // language, the page's own (`/install.md`).
            Some(rooted) => {
                let rooted = rooted.strip_prefix("content/").unwrap_or(rooted);
                let first = rooted.split('/').next().unwrap_or_default();
                let is_lang = self.by_source.iter().any(|v| v.contains_key(first));
                if is_lang && rooted.contains('/') {
                    format!("/{rooted}")
                } else {
                    format!("/{lang}/{rooted}")
                }
            }
            None => format!("/{lang}/{dir}/{path}"),
        };
        let Some(normal) = normalize(&joined) else {
            return Target::Broken(format!("`{path}` leaves the content folder"));
        };
        let normal = normal.trim_start_matches('/');
        let (lang, rel) = normal.split_once('/').unwrap_or((normal, ""));
        let find = |v: &HashMap<String, HashMap<String, usize>>| {
            v.get(lang).and_then(|pages| pages.get(rel)).copied()
        };
        if let Some(i) = self.by_source.get(from.version).and_then(find) {
            return self.page_target(i, anchor);
        }
        let elsewhere: Vec<String> = self
            .by_source
            .iter()
            .zip(&self.version_ids)
            .filter(|(v, _)| find(v).is_some())
            .map(|(_, id)| id.clone())
            .collect();
        if elsewhere.is_empty() {
            Target::Broken(format!("there is no page content/{lang}/{rel}"))
        } else {
            Target::OtherVersion {
                source: format!("{lang}/{rel}"),
                versions: elsewhere,
            }
        }
    }

    /// The untranslated copies of `page` published in other languages
    /// (pages whose `fallback_from` is its language).
    pub fn copies_of<'s>(&'s self, site: &'s Site, page: &'s Page) -> Vec<&'s Page> {
        let langs = self.by_source.get(page.version);
        langs
            .into_iter()
            .flat_map(|langs| langs.iter())
            .filter(|(lang, _)| **lang != page.lang)
            .filter_map(|(_, pages)| site.pages.get(*pages.get(&page.rel)?))
            .filter(|c| c.fallback_from.as_deref() == Some(page.lang.as_str()))
            .collect()
    }

    fn page_target(&self, i: usize, anchor: Option<String>) -> Target {
        Target::Internal {
            path: self.urls.get(i).cloned().unwrap_or_default(),
            anchor,
            page: Some(i),
        }
    }

    /// For a link published as written (raw HTML, which is not rewritten),
    /// the destination to write instead when `dest` only resolves the way
    /// a Markdown link is read: a source path (`install.md`), or a
    /// site-absolute path without the base URL's path prefix.
    pub fn as_written(&self, from: &Page, dest: &str) -> Option<String> {
        let path = dest.split(['#', '?']).next().unwrap_or(dest);
        let unprefixed =
            !self.prefix.is_empty() && path.starts_with('/') && self.below_prefix(path).is_none();
        if path.ends_with(".md") || unprefixed {
            return Some(self.rewrite(from, dest)).filter(|w| w != dest);
        }
        self.beside_source_url(from, dest)
    }

    /// For relative link `dest`, when it reaches nothing from the page's
    /// URL but a file beside the page's source: that file's site path, with
    /// the link's query and anchor, as published.
    fn beside_source_url(&self, from: &Page, dest: &str) -> Option<String> {
        if !is_relative_url(dest) || !matches!(self.resolve_url(from, dest), Target::Broken(_)) {
            return None;
        }
        let path = self.beside_source(from, dest)?;
        let tail = dest.find(['?', '#']).map_or("", |i| &dest[i..]);
        Some(format!("{}{path}{tail}", self.prefix))
    }

    /// For a full URL of the site itself (`https://docs.example.com/en/`,
    /// http, https or protocol-relative), its site-absolute path and
    /// anchor, as published:
    /// such a link is checked like a path of the site.
    pub fn own_path(&self, dest: &str) -> Option<String> {
        let host = self.host.as_deref()?;
        // A protocol-relative `//host/path` is the site's own URL too.
        let url = match dest.strip_prefix("//") {
            Some(rest) => url::Url::parse(&format!("https://{rest}")).ok()?,
            None => url::Url::parse(dest).ok()?,
        };
        if !matches!(url.scheme(), "http" | "https") || url.host_str() != Some(host) {
            return None;
        }
        let mut path = url.path().to_string();
        if let Some(query) = url.query() {
            path.push('?');
            path.push_str(query);
        }
        if let Some(anchor) = url.fragment() {
            path.push('#');
            path.push_str(anchor);
        }
        Some(path)
    }

    /// Whether a path of one of the site's full URLs lies outside the site:
    /// its base URL has a path (`https://docs.example.com/docs`) and the
    /// path does not start with it. A full URL is used as written.
    pub fn outside_base_path(&self, path: &str) -> bool {
        let path = path.split(['#', '?']).next().unwrap_or(path);
        !self.prefix.is_empty() && self.below_prefix(path).is_none()
    }

    /// A site-absolute path without the base URL's path prefix, when it
    /// starts with it (`/docs/en/` → `/en/` under `/docs`; the prefix
    /// alone, `/docs`, is the site's root).
    fn below_prefix<'p>(&self, path: &'p str) -> Option<&'p str> {
        let rest = path.strip_prefix(self.prefix.as_str())?;
        match (self.prefix.is_empty(), rest) {
            (true, _) => None,
            (false, "") => Some("/"),
            (false, rest) if rest.starts_with('/') => Some(rest),
            _ => None,
        }
    }

    /// The destination to publish for a link: source paths become URLs,
    /// site-absolute paths get the base URL's prefix.
    pub fn rewrite(&self, from: &Page, dest: &str) -> String {
        let relative = !dest.starts_with('/') && !dest.contains(".md");
        if relative {
            return self
                .beside_source_url(from, dest)
                .unwrap_or_else(|| dest.to_string());
        }
        match self.resolve(from, dest) {
            Target::Internal { path, anchor, .. } => {
                let mut s = format!("{}{path}", self.prefix);
                // The query is not checked, and goes on as written.
                s.push_str(query_of(dest));
                if let Some(a) = anchor {
                    s.push('#');
                    s.push_str(&a);
                }
                s
            }
            _ => dest.to_string(),
        }
    }
}

/// The query of a destination with its `?` (`?tab=gke` of
/// `q.md?tab=gke#setup`), or nothing.
fn query_of(dest: &str) -> &str {
    let before_anchor = dest.split('#').next().unwrap_or(dest);
    before_anchor.find('?').map_or("", |i| &before_anchor[i..])
}

/// Whether a destination is a URL relative to the page's own (`../x/`,
/// `img/a.svg`): the only kind that leads elsewhere from an untranslated
/// copy of a page than from its original.
pub fn is_relative_url(dest: &str) -> bool {
    let path = dest.split(['#', '?']).next().unwrap_or(dest);
    !path.is_empty() && !path.starts_with('/') && !path.ends_with(".md") && !is_external(dest)
}

/// Whether a destination leaves the site: a scheme (`https:`, `mailto:`)
/// or a protocol-relative `//host`.
pub fn is_external(dest: &str) -> bool {
    if dest.starts_with("//") {
        return true;
    }
    match dest.split_once(':') {
        Some((scheme, _)) => {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// The segments of a slash path with `.`, `..` and empty ones resolved;
/// `None` when `..` climbs above the start.
pub fn segments(path: &str) -> Option<Vec<&str>> {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts)
}

/// Resolves `.` and `..` in an absolute slash path; `None` when `..`
/// climbs above the root.
fn normalize(path: &str) -> Option<String> {
    let parts = segments(path)?;
    let mut out = String::from("/");
    out.push_str(&parts.join("/"));
    if path.ends_with('/') && out.len() > 1 {
        out.push('/');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_links() {
        assert!(is_external("https://x.org/a"));
        assert!(is_external("mailto:a@b"));
        assert!(is_external("//cdn.x"));
        assert!(!is_external("a.md#b:c"));
        assert!(!is_external("/kubernetes/v1.0.0/base/files.txt"));
        assert!(!is_external("#x"));
    }

    #[test]
    fn normalize_paths() {
        assert_eq!(normalize("/es/a/../b/").as_deref(), Some("/es/b/"));
        assert_eq!(normalize("/es/./a").as_deref(), Some("/es/a"));
        assert_eq!(normalize("/../x"), None);
        assert_eq!(normalize("/").as_deref(), Some("/"));
    }
}
