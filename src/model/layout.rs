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
/// With docs versions: the folder of one sitemap a version
/// ([`version_sitemap`]) and of [`SITE_SITEMAP_PATH`].
pub const SITEMAPS_DIR: &str = "/sitemaps/";
/// With docs versions: the sitemap of the pages of no version (the
/// versions pages).
pub const SITE_SITEMAP_PATH: &str = "/sitemaps/site.xml";
pub const ROBOTS_PATH: &str = "/robots.txt";
/// The folder of the download contract: the bases and their indexes.
pub const KUBERNETES_DIR: &str = "/kubernetes/";
/// The list of published versions, one folder name per line.
pub const VERSIONS_TXT: &str = "/kubernetes/versions.txt";
/// The published versions with their files, as JSON.
pub const VERSIONS_JSON: &str = "/kubernetes/versions.json";

/// The file every base folder publishes its kustomization as.
pub const KUSTOMIZATION: &str = "kustomization.yaml";

/// The assets every site gets unless `static/` has a file at the same
/// path: the stylesheet, the colours of highlighted code and the script.
pub const DEFAULT_ASSETS: &[&str] = &[
    "/assets/style.css",
    "/assets/syntax.css",
    "/assets/site.js",
    "/assets/favicon.svg",
];

/// The files docs version `v` publishes on its own: its pages (nothing
/// when it is not published). Its search bundle, whose files are named by
/// their content, is the folder [`version_folders`] gives.
pub fn version_files(site: &Site, v: usize) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let Some(version) = site.versions.get(v) else {
        // A project without versions: every page is the one version's.
        if v == 0 && site.versions.is_empty() {
            out.extend(site.pages.iter().map(page_file));
        }
        return out;
    };
    if !version.published {
        return out;
    }
    out.extend(site.pages.iter().filter(|p| p.version == v).map(page_file));
    out.extend(version_sitemap(site, v));
    out
}

/// Where a site with docs versions lists the pages of version `v` for
/// search engines (`/sitemaps/1.29.xml`), listed in turn by the sitemap
/// index at [`SITEMAP_PATH`]; none without versions (the one sitemap
/// lists every page) or when `v` is not published.
pub fn version_sitemap(site: &Site, v: usize) -> Option<String> {
    let version = site.versions.get(v).filter(|_| site.versions.len() > 1)?;
    (version.published && indexed(site, v)).then(|| format!("{SITEMAPS_DIR}{}.xml", version.id))
}

/// Whether search engines are told not to index the pages of docs
/// version `v`: next's always, an older one's with `noindex_older`.
pub fn noindex(site: &Site, v: usize) -> bool {
    use crate::model::site::VersionKind;
    match site.versions.get(v).map(|d| d.kind) {
        None | Some(VersionKind::Latest) => false,
        Some(VersionKind::Next) => true,
        Some(VersionKind::Older) => site
            .config
            .versions
            .as_ref()
            .is_some_and(|c| c.noindex_older),
    }
}

/// Whether docs version `v` has a page search engines should index: one
/// of its own (not an untranslated copy), in a version not marked
/// `noindex`, that the latest version has no page of its language and
/// path for (its canonical is its own). A sitemap without one would list
/// no URL, which the sitemap schema does not allow.
fn indexed(site: &Site, v: usize) -> bool {
    use crate::model::site::VersionKind;
    if noindex(site, v) {
        return false;
    }
    let latest = site
        .versions
        .iter()
        .position(|d| d.kind == VersionKind::Latest);
    let own = |p: &&Page| p.fallback_from.is_none();
    if latest == Some(v) {
        return site.pages.iter().filter(own).any(|p| p.version == v);
    }
    let in_latest: std::collections::HashSet<(&str, &str)> = site
        .pages
        .iter()
        .filter(own)
        .filter(|p| Some(p.version) == latest)
        .map(|p| (p.lang.as_str(), p.rel.as_str()))
        .collect();
    site.pages
        .iter()
        .filter(own)
        .filter(|p| p.version == v)
        .any(|p| !in_latest.contains(&(p.lang.as_str(), p.rel.as_str())))
}

/// The folders whose every file docs version `v` publishes on its own:
/// its search bundle (none when it is not published).
pub fn version_folders(site: &Site, v: usize) -> Vec<String> {
    let published = match site.versions.get(v) {
        Some(version) => version.published,
        None => v == 0,
    };
    if published {
        vec![search_dir(site, v)]
    } else {
        Vec::new()
    }
}

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

/// The ids the default `versions.html` gives the versions page besides
/// those of every page's frame: each base's heading (`v1.30.0`) and its
/// download heading (`v1.30.0-download`). Links into the page are checked
/// against them.
pub fn versions_page_ids(site: &Site) -> Vec<String> {
    site.bases
        .iter()
        .flat_map(|b| [b.folder(), format!("{}-download", b.folder())])
        .collect()
}

/// The language whose versions page is at site path `path` (`/en/versions/`
/// or `/en/versions/index.html`).
pub fn versions_page_language<'a>(site: &'a Site, path: &str) -> Option<&'a str> {
    let file = match path.ends_with('/') {
        true => format!("{path}index.html"),
        false => path.to_string(),
    };
    site.config
        .languages
        .iter()
        .map(|l| l.code.as_str())
        .find(|code| versions_file(code) == file)
}

/// The folder of the search bundles, which nothing else may publish into.
pub const SEARCH_DIR: &str = "/search/";

/// The folder of the search bundles of docs version `v` (an index in
/// `site.versions`), one per language ([`search_bundle_dir`]):
/// `/search/1.29/`, `/search/next/`, or `/search/` for a site
/// without frozen docs versions. A version keeps its folder when a newer
/// release makes it an older one.
pub fn search_dir(site: &Site, v: usize) -> String {
    match site.versions.get(v) {
        Some(version) if site.versions.len() > 1 => format!("{SEARCH_DIR}{}/", version.id),
        _ => SEARCH_DIR.to_string(),
    }
}

/// The folder of the search bundle of docs version `v` in `lang`: the
/// index of its pages in that language and the script that reads it
/// (`/search/1.29/es/`).
pub fn search_bundle_dir(site: &Site, v: usize, lang: &str) -> String {
    format!("{}{lang}/", search_dir(site, v))
}

/// The file of a search bundle the script reads first, in its folder (the
/// others are numbered: `s/0.json`, `p/0.json`, see `render::search`).
pub const SEARCH_FIXED: &[&str] = &["index.json"];

/// The start page of a language in a docs version (none: the latest).
pub fn home_url(lang: &str, version: Option<&str>) -> String {
    match version {
        Some(v) => format!("/{lang}/{v}/"),
        None => format!("/{lang}/"),
    }
}

/// `/es/` for `index.md`, `/es/a/` for `a.md` and `a/index.md`, below the
/// version's segment when it has one (`/es/1.29/a/`).
pub fn page_url(lang: &str, version: Option<&str>, rel: &str) -> String {
    let stem = rel.strip_suffix(".md").unwrap_or(rel);
    let stem = if stem == "index" {
        ""
    } else {
        stem.strip_suffix("/index").unwrap_or(stem)
    };
    let home = home_url(lang, version);
    if stem.is_empty() {
        home
    } else {
        format!("{home}{stem}/")
    }
}

/// Site path of a base's folder: `/kubernetes/v1.29.0/base/`.
pub fn base_path(base: &Base) -> String {
    release_base_path(&base.version)
}

/// Site path of the base folder of release `version`.
pub fn release_base_path(version: &semver::Version) -> String {
    format!("/kubernetes/v{version}/base/")
}

/// The detached signature of `SHA256SUMS`, beside it in the base folder.
pub const SIGNATURE: &str = "SHA256SUMS.sig";
/// The files basepress writes into every base folder beside the base's
/// own: no base file may take one of these names (in any case).
pub const BASE_INDEXES: [&str; 3] = ["files.txt", "SHA256SUMS", SIGNATURE];

/// Where `basepress release` stores the signature of each version,
/// relative to the project root.
pub const SIGNATURES_DIR: &str = "bases/signatures";

/// The stored signature of `version`, relative to the root.
pub fn stored_signature(version: &semver::Version) -> std::path::PathBuf {
    std::path::Path::new(SIGNATURES_DIR).join(format!("v{version}.sig"))
}

/// Site path of the file that says whose signatures to trust.
pub const ALLOWED_SIGNERS: &str = "/kubernetes/allowed_signers";

/// `SHA256SUMS` in the format `sha256sum -c` reads: every published file
/// of the base and `files.txt`, sorted by name. (It cannot cover itself,
/// and the signature that covers it is checked with `ssh-keygen`.)
pub fn sha256sums(base: &Base) -> String {
    sha256sums_for(base, base.signature.is_some())
}

/// [`sha256sums`] of the base published with (`signed`) or without a
/// signature, which decides what `files.txt` lists.
pub fn sha256sums_for(base: &Base, signed: bool) -> String {
    let index = crate::model::site::sha256_hex(files_txt_for(base, signed).as_bytes());
    let mut lines: Vec<(&str, &str)> = base
        .files
        .iter()
        .map(|f| (f.name.as_str(), f.sha256.as_str()))
        .collect();
    lines.push(("files.txt", &index));
    lines.sort_unstable();
    lines
        .iter()
        .map(|(name, sha)| format!("{sha}  {name}\n"))
        .collect()
}

/// `files.txt`: the names the download loop fetches, one per line, sorted:
/// the base's files, `SHA256SUMS`, its signature when signed, and
/// `files.txt` itself (so that `sha256sum -c` finds every file it names
/// after the loop).
pub fn files_txt(base: &Base) -> String {
    files_txt_for(base, base.signature.is_some())
}

/// [`files_txt`] of the base published with (`signed`) or without a
/// signature.
pub fn files_txt_for(base: &Base, signed: bool) -> String {
    let mut names: Vec<&str> = base.files.iter().map(|f| f.name.as_str()).collect();
    names.push("SHA256SUMS");
    names.push("files.txt");
    if signed {
        names.push(SIGNATURE);
    }
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
        if base.signature.is_some() {
            out.push(format!("{dir}{SIGNATURE}"));
        }
    }
    if site.config.signing.is_some() {
        out.push(ALLOWED_SIGNERS.into());
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
