//! Where things are published: the site paths of pages, generated pages
//! and indexes, and the download contract of the bases
//! (`/kubernetes/vX.Y.Z/base/` with the base's files, `SHA256SUMS` and
//! `files.txt`). Every stage that needs a path asks here.

use crate::model::site::{Base, Page, Site};

/// The page `/` redirects from.
pub const ROOT_PATH: &str = "/index.html";
/// The page a static host serves for a missing file.
pub const NOT_FOUND_PATH: &str = "/404.html";
pub const SITEMAP_PATH: &str = "/sitemap.xml";
pub const ROBOTS_PATH: &str = "/robots.txt";
/// The list of published versions, one folder name per line.
pub const VERSIONS_TXT: &str = "/kubernetes/versions.txt";
/// The published versions with their files, as JSON.
pub const VERSIONS_JSON: &str = "/kubernetes/versions.json";

/// The file every base folder publishes its kustomization as.
pub const KUSTOMIZATION: &str = "kustomization.yaml";

/// The assets every site gets unless `static/` has a file at the same
/// path: the stylesheet, the colours of highlighted code and the script.
pub const DEFAULT_ASSETS: &[&str] = &["/assets/style.css", "/assets/syntax.css", "/assets/site.js"];

/// The file a page is written to.
pub fn page_file(page: &Page) -> String {
    format!("{}index.html", page.url)
}

/// Site path of a language's versions page, without the prefix.
pub fn versions_page_url(lang: &str) -> String {
    format!("/{lang}/versions/")
}

/// The file a language's versions page is written to.
pub fn versions_file(lang: &str) -> String {
    format!("{}index.html", versions_page_url(lang))
}

/// Site path of a language's search index.
pub fn search_index_path(lang: &str) -> String {
    format!("/{lang}/search-index.json")
}

/// Site path of a base's folder: `/kubernetes/v1.29.0/base/`.
pub fn base_path(base: &Base) -> String {
    format!("/kubernetes/{}/base/", base.folder())
}

/// `SHA256SUMS` in the format `sha256sum -c` reads: every published file of
/// the base, sorted by name.
pub fn sha256sums(base: &Base) -> String {
    base.files
        .iter()
        .map(|f| format!("{}  {}\n", f.sha256, f.name))
        .collect()
}

/// `files.txt`: the names the download loop fetches, one per line, sorted.
pub fn files_txt(base: &Base) -> String {
    let mut names: Vec<&str> = base.files.iter().map(|f| f.name.as_str()).collect();
    names.push("SHA256SUMS");
    names.sort_unstable();
    names.iter().map(|n| format!("{n}\n")).collect()
}

/// Every path below `/kubernetes/`.
pub fn kubernetes_paths(site: &Site) -> Vec<String> {
    let mut out = Vec::new();
    for base in &site.bases {
        let dir = base_path(base);
        for f in &base.files {
            out.push(format!("{dir}{}", f.name));
        }
        out.push(format!("{dir}SHA256SUMS"));
        out.push(format!("{dir}files.txt"));
    }
    out.push(VERSIONS_TXT.into());
    out.push(VERSIONS_JSON.into());
    out
}

/// The default assets and `robots.txt` that the project does not replace
/// with a file of its own under `static/`.
pub fn generated_assets(site: &Site) -> impl Iterator<Item = &'static str> + '_ {
    DEFAULT_ASSETS
        .iter()
        .copied()
        .chain([ROBOTS_PATH])
        .filter(|path| !site.assets.iter().any(|a| a.url == *path))
}
