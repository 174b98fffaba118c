//! A docs project as loaded: its settings, pages, assets, bases, image
//! data, templates, interface strings and released versions.

use crate::model::config::Config;
use crate::model::i18n::Strings;
use crate::model::images::ImageReleases;
use crate::model::lock::Lock;
use semver::Version;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Everything a build knows about a docs project.
#[derive(Debug)]
pub struct Site {
    pub root: PathBuf,
    pub config: Config,
    /// The docs versions, newest first: the next release's (`content/`),
    /// when there are frozen ones, then each frozen release line's
    /// (`versions/<line>/content/`). A project without frozen versions has
    /// one, `content/`, published as the latest.
    pub versions: Vec<DocsVersion>,
    /// The release lines `basepress release` froze the docs of
    /// (`versions/versions.lock`), as `(major, minor)`, each with its line
    /// in the lock.
    pub frozen: std::collections::BTreeMap<(u64, u64), usize>,
    /// Pages in a stable order: by docs version, by language (as listed in
    /// site.yaml), then by source path; untranslated copies last.
    pub pages: Vec<Page>,
    /// Files copied as they are: non-Markdown files under `content/<lang>/`
    /// and everything under `static/`.
    pub assets: Vec<Asset>,
    /// Bases in ascending version order.
    pub bases: Vec<Base>,
    /// Inputs that are there and were refused as they were read: their
    /// own findings say why, and nothing that needs them reports them
    /// missing too.
    pub refused: Refused,
    pub images: ImageReleases,
    /// Template overrides from `ROOT/templates/`, by name.
    pub templates: Vec<TemplateFile>,
    /// The interface strings of each language of `config.languages`.
    pub strings: BTreeMap<String, Strings>,
    /// The released versions (`bases/published.lock`).
    pub lock: Lock,
    /// A site deployed earlier whose versions must be published again
    /// unchanged (`--against DIR`).
    pub deployed: Option<Deployed>,
    /// The release signatures stored in `bases/signatures/`, by version.
    pub signatures: BTreeMap<Version, StoredSignature>,
}

/// Inputs that are there and were refused as they were read (see
/// [`Site::refused`]).
#[derive(Debug, Clone, Default)]
pub struct Refused {
    /// Releases whose base folder is in `bases/` (a symbolic link, a
    /// kustomization that does not parse).
    pub bases: std::collections::BTreeSet<Version>,
    /// Release lines whose docs folder is in `versions/` (a symbolic
    /// link, a folder that cannot be read), as `(major, minor)`.
    pub docs_lines: std::collections::BTreeSet<(u64, u64)>,
    /// `versions/` itself.
    pub docs_folder: bool,
    /// Every file or folder refused as it was read, relative to the root.
    pub paths: Vec<PathBuf>,
}

impl Refused {
    /// Whether `path` (relative to the root) is a refused file or folder,
    /// or below one: what is there is not known.
    pub fn covers(&self, path: &std::path::Path) -> bool {
        self.paths.iter().any(|p| path.starts_with(p))
    }
}

/// A signature `basepress release` stored for a version.
#[derive(Debug, Clone)]
pub struct StoredSignature {
    /// Relative to the root (`bases/signatures/v1.30.0.sig`).
    pub path: PathBuf,
    /// The armored SSHSIG.
    pub text: String,
    /// The file is there and was refused as it was read (not UTF-8, a
    /// link, too large…): its finding is reported, and nothing else is
    /// said of it (it is not missing).
    pub refused: bool,
}

/// The base folders of a site deployed earlier: by folder name
/// (`v1.29.0`), every file and its bytes.
#[derive(Debug, Clone, Default)]
pub struct Deployed {
    /// The folder given, for messages.
    pub dir: PathBuf,
    pub bases: BTreeMap<String, BTreeMap<String, Vec<u8>>>,
}

#[cfg(test)]
impl Site {
    /// A site with nothing in it, for tests.
    pub(crate) fn empty() -> Site {
        let config: Config = crate::yaml::from_str(
            "title: t\nbase_url: https://x.org\ndefault_language: en\nlanguages: [{code: en, name: English}]\nimage: {name: a, releases: r.yaml}\n",
        )
        .expect("a valid config");
        let images = crate::yaml::from_str("name: a\nreleases: []\n").expect("valid image data");
        Site {
            root: PathBuf::new(),
            config,
            pages: Vec::new(),
            assets: Vec::new(),
            bases: Vec::new(),
            refused: Refused::default(),
            images,
            templates: Vec::new(),
            versions: Vec::new(),
            frozen: Default::default(),
            strings: BTreeMap::new(),
            lock: Lock::default(),
            deployed: None,
            signatures: BTreeMap::new(),
        }
    }
}

/// Where a docs version stands among the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VersionKind {
    /// The docs of the coming release (`content/`, when frozen versions
    /// exist), at `/<lang>/next/…`.
    Next,
    /// The newest frozen release line (or `content/` of a project without
    /// versions), at `/<lang>/…`.
    Latest,
    /// An older release line, at `/<lang>/<line>/…`.
    Older,
}

/// The docs of one release line (`1.29`), or of the coming release.
#[derive(Debug, Clone)]
pub struct DocsVersion {
    /// `1.29`, or `next`.
    pub id: String,
    pub kind: VersionKind,
    /// The folder of its pages, relative to the root (`content`,
    /// `versions/1.29/content`).
    pub dir: PathBuf,
    /// The release its pages document unless their front matter says
    /// otherwise: the newest base of its line (for next: the newest base),
    /// else the newest image release of its line; none without either.
    pub release: Option<Version>,
    /// Whether its pages are published (next may be kept unpublished).
    pub published: bool,
}

impl Site {
    /// The version installers are pointed at (`{{ latest }}`, the latest
    /// mark of versions.json and of the version picker): the newest
    /// released base once bases/published.lock records any, so a base
    /// `new-release` only prepared, whose files may still change, is not
    /// advertised; the newest base otherwise.
    pub fn latest_base(&self) -> Option<&semver::Version> {
        let all = || self.bases.iter().map(|b| &b.version);
        let released = all().filter(|v| self.lock.versions.contains_key(*v));
        super::images::latest(released).or_else(|| super::images::latest(all()))
    }

    /// Whether docs version `v` is published (a project without docs
    /// versions publishes its one version).
    pub fn version_published(&self, v: usize) -> bool {
        self.versions.get(v).is_none_or(|v| v.published)
    }

    /// The docs version whose folder holds `file` (relative to the root):
    /// an index in `versions`, or 0 for `content/` of a project without
    /// versions.
    pub fn version_of_file(&self, file: &std::path::Path) -> Option<usize> {
        if self.versions.is_empty() {
            return file.starts_with("content").then_some(0);
        }
        self.versions.iter().position(|v| file.starts_with(&v.dir))
    }
}

impl DocsVersion {
    /// The URL segment after the language: none for the latest.
    pub fn segment(&self) -> Option<&str> {
        match self.kind {
            VersionKind::Latest => None,
            _ => Some(&self.id),
        }
    }
}

/// One Markdown page in one language.
#[derive(Debug, Clone)]
pub struct Page {
    /// Its docs version: an index in `Site::versions`.
    pub version: usize,
    pub lang: String,
    /// Path below `content/<lang>/`, with `/` separators (`kubernetes/install.md`).
    pub rel: String,
    /// Path of the source file relative to the root, for findings.
    pub source: PathBuf,
    /// Site URL path, without the base URL's prefix (`/es/kubernetes/install/`).
    pub url: String,
    pub title: String,
    pub weight: Option<i64>,
    pub description: Option<String>,
    /// The release the page documents (front matter `base`); the latest
    /// published one when absent.
    pub base: Option<Version>,
    /// Line of `base:` in the front matter, for findings.
    pub base_line: Option<usize>,
    /// For an untranslated page: the default language, whose page is shown
    /// here (with a notice) because `lang` has no translation of it.
    pub fallback_from: Option<String>,
    /// Markdown after the front matter.
    pub body: String,
    /// Line of the source file where `body` starts (1-based).
    pub body_line: usize,
    /// Where the values of `title` and `description` start in the source
    /// file (line and column, 1-based), for findings about them.
    pub values_at: ValuesAt,
}

/// Where front matter values start in their page's source file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ValuesAt {
    pub title: (usize, usize),
    pub description: Option<(usize, usize)>,
}

impl Page {
    /// Whether `other` is this page at the same place: the same source in
    /// the same docs version and language, at the same URL, translated or
    /// not alike. Its front matter and body may differ.
    pub fn same_place(&self, other: &Page) -> bool {
        self.version == other.version
            && self.lang == other.lang
            && self.rel == other.rel
            && self.source == other.source
            && self.url == other.url
            && self.fallback_from == other.fallback_from
    }

    /// Whether `other` has this page's front matter (and its body starts
    /// on the same line).
    pub fn same_front_matter(&self, other: &Page) -> bool {
        self.title == other.title
            && self.weight == other.weight
            && self.description == other.description
            && self.base == other.base
            && self.base_line == other.base_line
            && self.body_line == other.body_line
    }

    /// Takes the front matter and body of `new`, the same source read
    /// again, keeping its own place (an untranslated copy keeps its
    /// language and URL).
    pub fn take_contents(&mut self, new: &Page) {
        self.title.clone_from(&new.title);
        self.weight = new.weight;
        self.description.clone_from(&new.description);
        self.base.clone_from(&new.base);
        self.base_line = new.base_line;
        self.body.clone_from(&new.body);
        self.body_line = new.body_line;
        self.values_at = new.values_at;
    }
}

/// A file published as it is.
#[derive(Debug, Clone)]
pub struct Asset {
    pub source: PathBuf,
    /// Site path, without the prefix (`/es/diagram.svg`).
    pub url: String,
    pub bytes: Vec<u8>,
}

/// One release's Kustomize base, as it will be published.
#[derive(Debug, Clone)]
pub struct Base {
    pub version: Version,
    /// Folder relative to the root (`bases/v1.29.0`).
    pub dir: PathBuf,
    /// The published files (kustomization.yaml and every file it
    /// references), sorted by name.
    pub files: Vec<BaseFile>,
    /// The armored SSH signature of its `SHA256SUMS`, when it is published
    /// signed (set by [`crate::signing::attach`]).
    pub signature: Option<String>,
    /// The image of its release that the checks read, when an image
    /// source is set (set by [`crate::analyze::images::attach`]).
    pub image: Option<ImageRecord>,
}

/// Which image a base was checked against: what versions.json records
/// and `{{ image.digest }}` shows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImageRecord {
    /// The digest the tag named (an index, or the one manifest); `None`
    /// for a docker-archive, which has no manifest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Each platform (`linux/arm64/v8`) with its manifest digest (or, in
    /// a docker-archive, its config digest).
    pub platforms: Vec<(String, String)>,
}

impl Base {
    /// Folder name on the site: the version with a `v`.
    pub fn folder(&self) -> String {
        format!("v{}", self.version)
    }

    /// The image tag of the same release: the version without a `v`.
    pub fn image_tag(&self) -> String {
        self.version.to_string()
    }

    pub fn file(&self, name: &str) -> Option<&BaseFile> {
        self.files.iter().find(|f| f.name == name)
    }
}

#[derive(Debug, Clone)]
pub struct BaseFile {
    pub name: String,
    pub bytes: Vec<u8>,
    /// Lowercase hex SHA-256 of `bytes`.
    pub sha256: String,
}

#[derive(Debug, Clone)]
pub struct TemplateFile {
    /// Name Tera knows it by: its path below `templates/`.
    pub name: String,
    pub source: PathBuf,
    pub text: String,
}

/// Lowercase hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        use std::fmt::Write;
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn sha256_of_empty_input() {
        assert_eq!(
            super::sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
