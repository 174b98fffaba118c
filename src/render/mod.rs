//! Stage 4: turn a checked project into the files of the published site.
//!
//! A [`Renderer`] holds what every page shares (the navigation of each
//! language, the header's versions, the site's context) and renders pages
//! one by one: the page's Markdown to HTML ([`html`], from the document
//! its analysis made) and into the `page.html` template. [`Renderer::site_into`]
//! renders everything (pages, the versions pages, the redirect at `/`,
//! the 404 page, the search indexes, the sitemap, the default assets, the
//! project's assets and the base downloads); the preview server renders
//! the pages an edit reaches with [`Renderer::pages`], the same function.

pub mod escape;
pub mod highlight;
pub mod html;
pub mod kubernetes;
pub mod nav;
pub mod search;
pub mod sitemap;
pub mod templates;
pub mod versions;
pub mod watch;

use crate::analyze::Analysis;
use crate::diagnostics::Diagnostic;
use crate::model::document::{Document, Heading};
use crate::model::i18n::Strings;
use crate::model::layout;
use crate::model::packed::Packed;
use crate::model::site::{Page, Site, VersionKind};
use bytes::Bytes;
use highlight::{Highlight, Highlighter, Repeats};
use nav::{NavNode, Tree};
use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};

/// Names the next page a reader is waiting for (by file), if any.
pub type Wanted<'a> = dyn Fn() -> Option<String> + Sync + 'a;

/// One file of the output, at a site path (`/es/install/index.html`).
/// The bytes are shared, so a page kept between builds is not copied.
#[derive(Debug, Clone)]
pub struct OutFile {
    pub path: String,
    pub bytes: Bytes,
    /// The same bytes packed, when a [`PageCache`] keeps them (a page
    /// rendered for `basepress serve`): what it keeps in memory.
    pub packed: Option<Packed>,
}

impl OutFile {
    pub fn new(path: impl Into<String>, bytes: impl Into<Bytes>) -> Self {
        OutFile {
            path: path.into(),
            bytes: bytes.into(),
            packed: None,
        }
    }
}

/// Pages rendered by earlier builds, kept by `basepress serve` so that a
/// rebuild renders again only the pages whose template input changed.
///
/// A page is found by a SHA-256 of everything its template receives (the
/// site, language, words, navigation and page contexts, as JSON, with the
/// Markdown and what its links are resolved against in place of its
/// HTML) and of the project's template overrides; templates cannot read
/// anything else (Tera's clock and random functions are not compiled in),
/// so a page with the same digest renders to the same bytes.
#[derive(Default)]
pub struct PageCache {
    pages: HashMap<[u8; 32], Packed>,
    /// How many pages the last build took from the cache.
    pub hits: usize,
    /// The frame each page was last rendered with.
    pub frames: Frames,
}

/// The digest of everything a page's template receives but the page's
/// own Markdown: its place in the navigation, its neighbours, its
/// breadcrumbs, translations and versions, its front matter and the
/// site's settings and words. Another page's front matter reaches a page
/// only through it.
pub type Frame = [u8; 32];

/// By page (index in `site.pages`): the frame it was last rendered with,
/// so that after a front matter edit only the pages whose frame changed
/// are rendered again ([`Renderer::pages_changed`]).
pub type Frames = Vec<Option<Frame>>;

/// Collects what `Hash` writes, for SHA-256 to hash in one pass (many
/// small updates cost more than the hashing). Frames live in one process
/// (the preview server's memory), so that `Hash` output may change
/// between Rust releases does not matter.
struct FrameHasher(Vec<u8>);

impl FrameHasher {
    fn frame(&self) -> Frame {
        Sha256::digest(&self.0).into()
    }
}

impl std::hash::Hasher for FrameHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    fn finish(&self) -> u64 {
        let frame = self.frame();
        u64::from_le_bytes(std::array::from_fn(|i| frame[i]))
    }
}

/// The pages [`Renderer::pages_changed`] rendered again, and the frame
/// each was rendered with (`(page, frame)`).
#[derive(Default)]
pub struct Rerendered {
    pub files: Vec<OutFile>,
    pub frames: Vec<(usize, Frame)>,
}

/// One page rendered: its file and, with a cache, its frame, its cache
/// key and whether it came from the cache.
struct RenderedPage {
    file: OutFile,
    frame: Option<Frame>,
    key: Option<[u8; 32]>,
    hit: bool,
}

#[derive(Serialize, Hash)]
struct SiteContext<'a> {
    title: &'a str,
    /// Scheme and host of `base_url`, without the prefix.
    base_url: String,
    prefix: String,
    default_language: &'a str,
    languages: Vec<LanguageContext<'a>>,
    /// Published versions, newest first, for the header's picker.
    versions: Vec<VersionLink>,
}

#[derive(Serialize, Hash)]
struct LanguageContext<'a> {
    code: &'a str,
    name: &'a str,
    not_found: &'a str,
    /// The strings the 404 page's script puts in the page when the URL
    /// asked for this language: the page is rendered once, in the default.
    strings_404: [(&'static str, &'a str); 6],
    /// `rtl` or `ltr`: how the language is written.
    dir: &'static str,
}

#[derive(Serialize, Hash)]
struct VersionLink {
    version: String,
    image_tag: String,
    latest: bool,
}

/// The most headings a page's table of contents lists: beyond that it
/// helps no reader, and a page of a million headings would hold a
/// million entries in every template's context.
pub const TOC_LIMIT: usize = 300;

#[derive(Serialize, Hash)]
struct PageContext<'a> {
    title: &'a str,
    description: Option<&'a str>,
    url: &'a str,
    /// The URL search engines should index: the page's own, or for an
    /// untranslated copy, that of its original.
    canonical: &'a str,
    source: String,
    content: &'a str,
    /// Whether the content has a level-1 heading (else the template
    /// shows the title as one).
    title_in_content: bool,
    toc: &'a [Heading],
    /// For an untranslated copy: the language of its content.
    fallback_from: Option<&'a str>,
    translations: Vec<Translation<'a>>,
    previous: Option<Neighbour<'a>>,
    next: Option<Neighbour<'a>>,
    /// The pages above this one: the language's home, then the index
    /// page of each folder it is in (empty for the home page).
    breadcrumbs: Vec<Neighbour<'a>>,
    /// Where to edit the page's source, from site.yaml's `edit_url`.
    edit_url: Option<String>,
    /// The page's docs version, when the site has several.
    version: Option<VersionContext<'a>>,
    /// Every published docs version, for the picker (empty without
    /// versions).
    docs_versions: Vec<VersionChoice>,
}

/// The docs version of a page, as templates see it.
#[derive(Serialize, Clone, Hash)]
struct VersionContext<'a> {
    id: &'a str,
    /// What the picker shows: `1.30`, or the word for the next release.
    label: String,
    kind: VersionKind,
    /// Keep it out of search engines.
    noindex: bool,
    /// For an older version or next: what the banner says, and where the
    /// same page (or the start page) of the latest version is.
    banner: Option<String>,
    banner_link: Option<String>,
    latest_url: Option<String>,
}

/// One docs version in the picker of a page.
#[derive(Serialize, Hash)]
struct VersionChoice {
    label: String,
    url: String,
    current: bool,
    latest: bool,
    next: bool,
    /// When the page is not in that version: what the picker says of its
    /// start page, which `url` leads to.
    missing: Option<String>,
}

#[derive(Serialize, Hash)]
struct Translation<'a> {
    code: &'a str,
    name: &'a str,
    url: &'a str,
    /// An untranslated copy: not announced as an alternate.
    fallback: bool,
    /// The language has no such page: `url` is its start page.
    missing: bool,
    /// Its heading ids, in the order of this page's headings, when both
    /// pages have the same headings (so the switcher can keep the reader's
    /// section); empty otherwise.
    anchors: Vec<&'a str>,
}

#[derive(Serialize, Clone, Hash)]
struct Neighbour<'a> {
    title: &'a str,
    url: &'a str,
}

/// Renders the pages and files of one analysed project.
pub struct Renderer<'a> {
    site: &'a Site,
    analysis: &'a Analysis,
    tera: &'a tera::Tera,
    highlighter: &'a Highlighter,
    /// The date of the sitemap's entries (from `SOURCE_DATE_EPOCH`).
    lastmod: Option<&'a str>,
    context: SiteContext<'a>,
    /// Per docs version and language: the content tree and its reading
    /// order.
    trees: BTreeMap<(usize, &'a str), (Tree<'a>, Vec<&'a Page>)>,
    /// Page and document by docs version, language and source path.
    by_source: foldhash::HashMap<(usize, &'a str, &'a str), (&'a Page, &'a Document)>,
    /// The latest docs version.
    latest: usize,
    /// Whether a template of the project reads the navigation as data
    /// (`nav`): the default ones read its HTML (`nav_html`) only.
    nav_data: bool,
    no_strings: Strings,
    /// The link index's digest, part of every cached page's key: computed
    /// once per renderer (it hashes every page's place and path).
    index_digest: std::sync::OnceLock<[u8; 32]>,
    /// The code blocks a render of the whole site highlights more than
    /// once: set by [`Renderer::site_into`], for its own pages.
    repeats: std::sync::OnceLock<Repeats>,
    /// Where each template render is noted while it runs (see
    /// [`watch`]).
    watch: Option<&'a watch::Watch>,
}

impl<'a> Renderer<'a> {
    pub fn new(
        analysis: &'a Analysis,
        tera: &'a tera::Tera,
        highlighter: &'a Highlighter,
        lastmod: Option<&'a str>,
    ) -> Self {
        let site = &analysis.site;
        let base_url = site.config.base_url.trim_end_matches('/');
        let context = SiteContext {
            title: &site.config.title,
            base_url: base_url
                .strip_suffix(&site.config.path_prefix())
                .unwrap_or(base_url)
                .to_string(),
            prefix: site.config.path_prefix(),
            default_language: &site.config.default_language,
            languages: site
                .config
                .languages
                .iter()
                .map(|l| language(site, &l.code))
                .collect(),
            versions: versions::newest_first(site)
                .map(|(b, latest)| VersionLink {
                    version: b.folder(),
                    image_tag: b.image_tag(),
                    latest,
                })
                .collect(),
        };
        let trees = trees(site)
            .into_iter()
            .map(|(key, tree)| {
                let order = tree.reading_order();
                (key, (tree, order))
            })
            .collect();
        let by_source = site
            .pages
            .iter()
            .zip(&analysis.docs)
            .map(|(p, d)| {
                (
                    (p.version, p.lang.as_str(), p.rel.as_str()),
                    (p, d.as_ref()),
                )
            })
            .collect();
        let latest = site
            .versions
            .iter()
            .position(|v| v.kind == VersionKind::Latest)
            .unwrap_or(0);
        Renderer {
            site,
            analysis,
            tera,
            highlighter,
            lastmod,
            context,
            trees,
            by_source,
            latest,
            nav_data: templates::project_reads(site, "nav"),
            no_strings: Strings::default(),
            index_digest: std::sync::OnceLock::new(),
            repeats: std::sync::OnceLock::new(),
            watch: None,
        }
    }

    /// The renderer, noting each template render in `watch` while it
    /// runs.
    pub fn watched(mut self, watch: Option<&'a watch::Watch>) -> Self {
        self.watch = watch;
        self
    }

    /// Renders template `name` for the file `what`, under watch.
    fn render_template(
        &self,
        name: &str,
        ctx: &tera::Context,
        what: &str,
    ) -> Result<String, Diagnostic> {
        let _running = self.watch.map(|w| w.enter(format_args!("{what} ({name})")));
        templates::render(self.tera, self.site, name, ctx).map_err(|d| while_rendering(d, what))
    }

    /// The language's home and the index page of each folder above
    /// `page`, those that exist, from the top.
    fn breadcrumbs(&self, page: &Page) -> Vec<Neighbour<'a>> {
        if page.rel == "index.md" {
            return Vec::new();
        }
        let parts: Vec<&str> = page.rel.split('/').collect();
        let folders = match page.rel.ends_with("/index.md") {
            true => parts.len().saturating_sub(2),
            false => parts.len().saturating_sub(1),
        };
        std::iter::once("index.md".to_string())
            .chain((1..=folders).map(|i| format!("{}/index.md", parts[..i].join("/"))))
            .filter_map(|rel| {
                let (p, _) =
                    self.by_source
                        .get(&(page.version, page.lang.as_str(), rel.as_str()))?;
                Some(Neighbour {
                    title: &p.title,
                    url: &p.url,
                })
            })
            .collect()
    }

    fn strings(&self, lang: &str) -> &Strings {
        // Loading gives every language of the site its strings.
        self.site.strings.get(lang).unwrap_or(&self.no_strings)
    }

    /// A template context with the variables every template receives,
    /// for a page of docs version `version` in `lang`.
    fn context(&self, lang: &str, version: usize) -> tera::Context {
        let mut ctx = tera::Context::new();
        ctx.insert("site", &self.context);
        ctx.insert("lang", &language(self.site, lang));
        ctx.insert("t", self.strings(lang));
        ctx.insert("search_bundle", &layout::search_dir(self.site, version));
        ctx
    }

    /// The page's docs version and the picker's choices, when the site has
    /// several published versions.
    fn versions_of(&self, page: &'a Page) -> (Option<VersionContext<'a>>, Vec<VersionChoice>) {
        let site = self.site;
        let published: Vec<usize> = (0..site.versions.len())
            .filter(|&v| site.versions[v].published)
            .collect();
        let Some(own) = site.versions.get(page.version) else {
            return (None, Vec::new());
        };
        if published.len() < 2 {
            return (None, Vec::new());
        }
        let t = self.strings(&page.lang);
        let label = |v: usize| {
            let version = &site.versions[v];
            match version.kind {
                VersionKind::Next => t.get("next").to_string(),
                _ => version.id.clone(),
            }
        };
        let same = |v: usize| {
            self.by_source
                .get(&(v, page.lang.as_str(), page.rel.as_str()))
                .map(|(p, _)| p.url.clone())
        };
        let home =
            |v: usize| crate::model::layout::home_url(&page.lang, site.versions[v].segment());
        let latest = &site.versions[self.latest];
        let latest_page = same(self.latest);
        // The banner's link says where it leads: this page in the latest
        // version, or (when the latest has no such page) its start page.
        let to_latest = if latest_page.is_some() {
            "to_latest"
        } else {
            "to_latest_home"
        };
        let latest_url = latest_page.unwrap_or_else(|| home(self.latest));
        let (banner, banner_link) = match own.kind {
            VersionKind::Latest => (None, None),
            VersionKind::Older => (
                Some(t.get("older_notice").replace("{version}", &own.id)),
                Some(t.get(to_latest).replace("{latest}", &latest.id)),
            ),
            VersionKind::Next => (
                Some(t.get("next_notice").to_string()),
                Some(t.get(to_latest).replace("{latest}", &latest.id)),
            ),
        };
        let noindex = self.noindex(page.version);
        let context = VersionContext {
            id: &own.id,
            label: label(page.version),
            kind: own.kind,
            noindex,
            banner,
            banner_link,
            latest_url: (own.kind != VersionKind::Latest).then_some(latest_url),
        };
        let choices = published
            .iter()
            .map(|&v| {
                let found = same(v);
                VersionChoice {
                    label: label(v),
                    missing: found
                        .is_none()
                        .then(|| t.get("not_in_version").replace("{version}", &label(v))),
                    url: found.unwrap_or_else(|| home(v)),
                    current: v == page.version,
                    latest: site.versions[v].kind == VersionKind::Latest,
                    next: site.versions[v].kind == VersionKind::Next,
                }
            })
            .collect();
        (Some(context), choices)
    }

    /// The page in every language that has it, with the heading ids that
    /// match `doc`'s headings.
    fn translations(&self, page: &Page, doc: &Document) -> Vec<Translation<'a>> {
        let levels = |d: &Document| d.headings.iter().map(|h| h.level).collect::<Vec<_>>();
        self.site
            .config
            .languages
            .iter()
            .filter_map(|l| {
                let key = (page.version, l.code.as_str(), page.rel.as_str());
                let Some((p, d)) = self.by_source.get(&key) else {
                    // A page only some languages have (not one of the
                    // default language, which every language shows): the
                    // others' start page, marked.
                    let home = (page.version, l.code.as_str(), "index.md");
                    let (home, _) = self.by_source.get(&home)?;
                    return Some(Translation {
                        code: &l.code,
                        name: &l.name,
                        url: &home.url,
                        fallback: false,
                        missing: true,
                        anchors: Vec::new(),
                    });
                };
                let anchors = if p.lang != page.lang && levels(d) == levels(doc) {
                    d.headings.iter().map(|h| h.id.as_str()).collect()
                } else {
                    Vec::new()
                };
                Some(Translation {
                    code: &l.code,
                    name: &l.name,
                    url: &p.url,
                    fallback: p.fallback_from.is_some(),
                    missing: false,
                    anchors,
                })
            })
            .collect()
    }

    /// Whether search engines are told not to index the pages of docs
    /// version `v`: next always, older versions when site.yaml says so.
    fn noindex(&self, v: usize) -> bool {
        layout::noindex(self.site, v)
    }

    /// The URL search engines should index for a page: for an untranslated
    /// copy, that of its original; for a page of an older version or of
    /// next, that of the same page in the latest version when it has it
    /// (translated); else the page's own.
    fn canonical(&self, page: &'a Page) -> &'a str {
        let original = page
            .fallback_from
            .as_deref()
            .and_then(|from| self.by_source.get(&(page.version, from, page.rel.as_str())))
            .map(|(p, _)| *p)
            .unwrap_or(page);
        if original.version == self.latest {
            return original.url.as_str();
        }
        self.by_source
            .get(&(self.latest, original.lang.as_str(), original.rel.as_str()))
            .filter(|(p, _)| p.fallback_from.is_none())
            .map_or(original.url.as_str(), |(p, _)| p.url.as_str())
    }

    /// The HTML of a page's Markdown.
    pub fn page_html(&self, page: &Page, doc: &Document) -> String {
        let markdown = doc.expanded.as_deref().unwrap_or(&page.body);
        let index = &self.analysis.index;
        let strings = self.strings(&page.lang);
        let docs = &self.analysis.docs;
        let highlight = Highlight {
            highlighter: self.highlighter,
            repeats: self.repeats.get(),
        };
        html::body(markdown, doc, highlight, strings, &|d| {
            crate::analyze::anchors::rewrite_link(index, docs, page, d)
        })
    }

    /// What a page's template receives besides its HTML: the page context
    /// (with an empty `content`) and the sidebar.
    fn page_input<'s>(
        &'s self,
        page: &'s Page,
        doc: &'s Document,
    ) -> Result<(PageContext<'s>, Vec<NavNode<'s>>), Diagnostic> {
        let Some((tree, order)) = self.trees.get(&(page.version, page.lang.as_str())) else {
            return Err(Diagnostic::new(
                crate::diagnostics::rule::TEMPLATE_INVALID,
                format!("{} is in no navigation tree", page.source.display()),
            ));
        };
        let pos = order.iter().position(|p| std::ptr::eq(*p, page));
        let (version, docs_versions) = self.versions_of(page);
        let neighbour = |p: &&'a Page| Neighbour {
            title: &p.title,
            url: &p.url,
        };
        let page_ctx = PageContext {
            title: &page.title,
            description: page.description.as_deref(),
            url: &page.url,
            canonical: self.canonical(page),
            source: page.source.display().to_string(),
            content: "",
            title_in_content: doc.headings.iter().any(|h| h.level == 1),
            toc: &doc.headings[..doc.headings.len().min(TOC_LIMIT)],
            fallback_from: page.fallback_from.as_deref(),
            translations: self.translations(page, doc),
            previous: pos
                .and_then(|i| i.checked_sub(1))
                .map(|i| neighbour(&order[i])),
            next: pos.and_then(|i| order.get(i + 1)).map(neighbour),
            breadcrumbs: self.breadcrumbs(page),
            edit_url: self.site.config.edit_url.as_ref().map(|base| {
                let source = page.source.to_string_lossy().replace('\\', "/");
                format!("{base}{}", source.replace(' ', "%20"))
            }),
            version,
            docs_versions,
        };
        Ok((page_ctx, tree.for_page(Some(page))))
    }

    /// The digest of everything a page's template receives but the
    /// page's own Markdown (see [`Frames`]).
    fn frame_of(&self, page: &Page, page_ctx: &PageContext, nav: &[NavNode]) -> Frame {
        let mut h = FrameHasher(Vec::with_capacity(16 * 1024));
        let all = (
            &self.context,
            language(self.site, &page.lang),
            self.strings(&page.lang),
            page_ctx,
            nav,
        );
        // The structure hashed as it is (every field of what the template
        // gets as JSON): writing the JSON out first took most of the time
        // of a title edit in serve.
        std::hash::Hash::hash(&all, &mut h);
        h.frame()
    }

    /// Renders one page; with `cache`, a page whose template input hashes
    /// to a digest of an earlier build is taken from it. Returns the file,
    /// its frame and digest (with a cache) and whether it came from the
    /// cache.
    fn render_page(
        &self,
        i: usize,
        cache: Option<(&Sha256, &HashMap<[u8; 32], Packed>)>,
    ) -> Result<RenderedPage, Diagnostic> {
        let (page, doc) = (&self.site.pages[i], self.analysis.docs[i].as_ref());
        let (page_ctx, nav) = self.page_input(page, doc)?;
        self.render_input(i, page_ctx, nav, cache)
    }

    /// [`Renderer::render_page`] with the page's input already made.
    fn render_input(
        &self,
        i: usize,
        page_ctx: PageContext<'_>,
        nav: Vec<NavNode<'_>>,
        cache: Option<(&Sha256, &HashMap<[u8; 32], Packed>)>,
    ) -> Result<RenderedPage, Diagnostic> {
        let (page, doc) = (&self.site.pages[i], self.analysis.docs[i].as_ref());
        let frame = cache.map(|_| self.frame_of(page, &page_ctx, &nav));
        let key: Option<[u8; 32]> = cache.zip(frame).map(|((templates, _), frame)| {
            let mut h = templates.clone();
            h.update(
                self.index_digest
                    .get_or_init(|| self.analysis.index.fingerprint()),
            );
            h.update(frame);
            // The content is what the HTML is made from: the Markdown, the
            // page's place, what its links resolve against and the
            // headings of the pages they name with an anchor (a link
            // publishes the id of the heading it names).
            let anchored: Vec<&[Heading]> = self
                .analysis
                .graph
                .outbound
                .get(i)
                .into_iter()
                .flatten()
                .filter_map(|&j| Some(&self.analysis.docs.get(j)?.headings[..]))
                .collect();
            let content = (
                doc.expanded.as_deref().unwrap_or(&page.body),
                (&page.lang, &page.rel, &page.fallback_from),
                anchored,
            );
            let _ = serde_json::to_writer(&mut h, &content);
            h.finalize().into()
        });
        if let Some(packed) = key.and_then(|k| cache?.1.get(&k)) {
            let mut file = OutFile::new(layout::page_file(page), packed.unpack());
            file.packed = Some(packed.clone());
            return Ok(RenderedPage {
                file,
                frame,
                key,
                hit: true,
            });
        }
        let content = self.page_html(page, doc);
        // Moved, so that its borrows may be as short as the HTML's.
        let mut page_ctx = page_ctx;
        page_ctx.content = &content;
        let mut ctx = self.context(&page.lang, page.version);
        ctx.insert("page", &page_ctx);
        ctx.insert("nav_html", &nav::html(&nav, &self.context.prefix));
        if self.nav_data {
            ctx.insert("nav", &nav);
        }
        let html = self.render_template("page.html", &ctx, &page.source.display().to_string())?;
        Ok(RenderedPage {
            file: OutFile::new(layout::page_file(page), html),
            frame,
            key,
            hit: false,
        })
    }

    /// The versions page of `lang`.
    fn render_versions(&self, lang: &str) -> Result<OutFile, Diagnostic> {
        let t = self.strings(lang);
        let urls: Vec<(&str, &str, String)> = self
            .site
            .config
            .languages
            .iter()
            .map(|l| {
                (
                    l.code.as_str(),
                    l.name.as_str(),
                    layout::versions_page_url(&l.code),
                )
            })
            .collect();
        let url = layout::versions_page_url(lang);
        let page_ctx = PageContext {
            title: t.get("versions"),
            // What search engines show of it: the page's own introduction.
            description: Some(t.get("versions_intro")),
            url: &url,
            canonical: &url,
            source: String::new(),
            content: "",
            title_in_content: false,
            toc: &[],
            fallback_from: None,
            translations: urls
                .iter()
                .map(|(code, name, url)| Translation {
                    code,
                    name,
                    url,
                    fallback: false,
                    missing: false,
                    anchors: Vec::new(),
                })
                .collect(),
            previous: None,
            next: None,
            breadcrumbs: Vec::new(),
            edit_url: None,
            version: None,
            docs_versions: Vec::new(),
        };
        let Some((tree, _)) = self.trees.get(&(self.latest, lang)) else {
            return Err(Diagnostic::new(
                crate::diagnostics::rule::TEMPLATE_INVALID,
                format!("the language `{lang}` has no pages"),
            ));
        };
        let mut ctx = self.context(lang, self.latest);
        ctx.insert("page", &page_ctx);
        let nav = tree.for_page(None);
        ctx.insert("nav_html", &nav::html(&nav, &self.context.prefix));
        if self.nav_data {
            ctx.insert("nav", &nav);
        }
        ctx.insert("versions", &versions::list(self.site, self.highlighter));
        let file = layout::versions_file(lang);
        let html = self.render_template("versions.html", &ctx, &file)?;
        Ok(OutFile::new(file, html))
    }

    /// Every page of the sitemap: the translated pages and the versions
    /// pages, each with its alternates.
    /// The sitemap; with docs versions, the index of one sitemap a
    /// version and one of the versions pages, with the sitemaps of the
    /// versions this build renders (the others are reused).
    fn sitemaps(&self) -> Vec<OutFile> {
        let site = self.site;
        let versions = 0..site.versions.len();
        if versions.len() < 2 {
            let entries = self.sitemap_entries(|_| true, true);
            let xml = sitemap::sitemap(&entries, self.lastmod);
            return vec![OutFile::new(layout::SITEMAP_PATH, xml)];
        }
        let origin = site.config.base_url.trim_end_matches('/');
        let mut locs = Vec::new();
        let mut files = Vec::new();
        for v in versions {
            let Some(path) = layout::version_sitemap(site, v) else {
                continue;
            };
            locs.push(format!("{origin}{path}"));
            if self.renders(v) {
                let entries = self.sitemap_entries(|p| p == v, false);
                files.push(OutFile::new(path, sitemap::sitemap(&entries, self.lastmod)));
            }
        }
        let entries = self.sitemap_entries(|_| false, true);
        let xml = sitemap::sitemap(&entries, self.lastmod);
        files.push(OutFile::new(layout::SITE_SITEMAP_PATH, xml));
        locs.push(format!("{origin}{}", layout::SITE_SITEMAP_PATH));
        let xml = sitemap::index(&locs, self.lastmod);
        files.push(OutFile::new(layout::SITEMAP_PATH, xml));
        files
    }

    /// The sitemap entries of the published pages of the versions
    /// `versions` holds for, and with `site_pages` of the versions pages.
    fn sitemap_entries(
        &self,
        versions: impl Fn(usize) -> bool,
        site_pages: bool,
    ) -> Vec<sitemap::Entry> {
        let origin = self.site.config.base_url.trim_end_matches('/');
        let default = self.site.config.default_language.as_str();
        let group = |urls: Vec<(&str, String)>| -> Vec<sitemap::Entry> {
            let mut alternates: Vec<(String, String)> = urls
                .iter()
                .map(|(lang, url)| (lang.to_string(), format!("{origin}{url}")))
                .collect();
            if let Some((_, url)) = urls.iter().find(|(lang, _)| *lang == default) {
                alternates.push(("x-default".into(), format!("{origin}{url}")));
            }
            urls.iter()
                .map(|(_, url)| sitemap::Entry {
                    loc: format!("{origin}{url}"),
                    alternates: alternates.clone(),
                })
                .collect()
        };
        let mut entries = Vec::new();
        let mut rels: Vec<(usize, &str)> = self
            .site
            .pages
            .iter()
            .filter(|p| self.published(p) && versions(p.version) && !self.noindex(p.version))
            .map(|p| (p.version, p.rel.as_str()))
            .collect();
        rels.sort_unstable();
        rels.dedup();
        for (version, rel) in rels {
            let urls = self
                .site
                .config
                .languages
                .iter()
                .filter_map(|l| self.by_source.get(&(version, l.code.as_str(), rel)))
                // A sitemap lists what search engines should index: no
                // untranslated copy, no page whose canonical is another
                // (the same page in the latest version), none of a version
                // marked noindex.
                .filter(|(p, _)| p.fallback_from.is_none() && self.canonical(p) == p.url)
                .map(|(p, _)| (p.lang.as_str(), p.url.clone()))
                .collect();
            entries.extend(group(urls));
        }
        if site_pages {
            let urls = self
                .site
                .config
                .languages
                .iter()
                .map(|l| (l.code.as_str(), layout::versions_page_url(&l.code)))
                .collect();
            entries.extend(group(urls));
        }
        entries
    }

    /// Whether a page is published (its docs version is).
    fn published(&self, page: &Page) -> bool {
        self.site.version_published(page.version)
    }

    /// Whether the files of docs version `v` are rendered: published, and
    /// not reused from the previous build.
    fn renders(&self, v: usize) -> bool {
        self.site.version_published(v) && !self.analysis.reused.get(v).copied().unwrap_or(false)
    }

    /// Renders the pages `which` (indexes in `site.pages`) through
    /// templates, as [`Renderer::site_into`] renders them, and the pages
    /// of `candidates` whose frame is not the one `frames` holds for them.
    /// `frames` is left as it is: the caller records the new frames once
    /// it keeps the files.
    pub fn pages_changed(
        &self,
        which: &std::collections::BTreeSet<usize>,
        candidates: &std::collections::BTreeSet<usize>,
        frames: &Frames,
    ) -> Result<Rerendered, Vec<Diagnostic>> {
        let site = self.site;
        let docs = &self.analysis.docs;
        let all: Vec<usize> = which.union(candidates).copied().collect();
        type One = Result<Option<(usize, Frame, OutFile)>, Diagnostic>;
        let rendered: Vec<One> = all
            .par_iter()
            .filter_map(|&i| Some((i, site.pages.get(i)?, docs.get(i)?.as_ref())))
            .filter(|(_, page, _)| self.published(page))
            .map(|(i, page, doc)| {
                let (page_ctx, nav) = self.page_input(page, doc)?;
                let frame = self.frame_of(page, &page_ctx, &nav);
                if !which.contains(&i) && frames.get(i).copied().flatten() == Some(frame) {
                    return Ok(None);
                }
                let r = self.render_input(i, page_ctx, nav, None)?;
                Ok(Some((i, frame, r.file)))
            })
            .collect();
        let mut out = Rerendered::default();
        let mut errors = Vec::new();
        for r in rendered {
            match r {
                Ok(Some((i, frame, file))) => {
                    out.frames.push((i, frame));
                    out.files.push(file);
                }
                Ok(None) => {}
                Err(d) => errors.push(d),
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }

    /// The versions page of every language.
    pub fn versions_pages(&self) -> Result<Vec<OutFile>, Vec<Diagnostic>> {
        let (files, errors): (Vec<_>, Vec<_>) = self
            .site
            .config
            .languages
            .iter()
            .map(|l| self.render_versions(&l.code))
            .partition(Result::is_ok);
        if errors.is_empty() {
            Ok(files.into_iter().flatten().collect())
        } else {
            Err(errors.into_iter().filter_map(Result::err).collect())
        }
    }

    /// Renders the whole site into memory, sorted by path: see
    /// [`Renderer::site_into`].
    pub fn site(&self, cache: Option<&mut PageCache>) -> Result<Vec<OutFile>, Vec<Diagnostic>> {
        let files = std::sync::Mutex::new(Vec::new());
        self.site_into(
            cache,
            &|f| {
                if let Ok(mut files) = files.lock() {
                    files.push(f);
                }
            },
            None,
        )?;
        let mut files = files.into_inner().unwrap_or_default();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }

    /// Renders the whole site: pages through templates, the versions
    /// pages, the redirect at `/`, the 404 page, the search indexes, the
    /// sitemap, the default assets, the project's assets and the base
    /// downloads.
    ///
    /// Every file goes to `emit` as soon as it is rendered, from several
    /// threads and in no set order, so that a build can write pages while
    /// others render and need not hold the whole site in memory. On an
    /// error some files may have been emitted already: the caller discards
    /// them. Returns how many files were emitted.
    ///
    /// With `cache` (`basepress serve`), pages whose template input did not
    /// change since the last build come from it, and it keeps this build's
    /// (packed, see [`OutFile::packed`]); the search bundles are left out
    /// then: the caller makes them when a reader first searches
    /// ([`search::files_into`] is what makes them here).
    /// With `wanted` (`basepress serve` during its first build), the pages
    /// it names (by file, `/es/install/index.html`) are rendered before
    /// the others, as soon as it names them.
    pub fn site_into(
        &self,
        mut cache: Option<&mut PageCache>,
        emit: &(dyn Fn(OutFile) + Sync),
        wanted: Option<&Wanted<'_>>,
    ) -> Result<usize, Vec<Diagnostic>> {
        let site = self.site;
        let search_later = cache.is_some();
        // The project's templates are part of every page's digest.
        let templates = cache.as_ref().map(|_| {
            let mut h = Sha256::new();
            for t in &site.templates {
                let _ = serde_json::to_writer(&mut h, &(&t.name, &t.text));
            }
            h
        });
        let previous = cache
            .as_deref_mut()
            .map(|c| std::mem::take(&mut c.pages))
            .unwrap_or_default();
        let lookup = templates.as_ref().map(|t| (t, &previous));
        // Per page: its index, frame and cache entry (digest and bytes),
        // with a cache, whether it came from the cache, or its error.
        // A page the cache keeps goes out packed: the cache and the caller
        // share what is held in memory.
        type Rendered =
            Result<(usize, Option<Frame>, Option<([u8; 32], Packed)>, bool), Diagnostic>;
        let render_one = |i: usize| -> Rendered {
            let mut r = self.render_page(i, lookup)?;
            let kept = r.key.map(|k| {
                let file = &mut r.file;
                let packed = file.packed.get_or_insert_with(|| Packed::new(&file.bytes));
                (k, packed.clone())
            });
            emit(r.file);
            Ok((i, r.frame, kept, r.hit))
        };
        // Each page is rendered once: by its turn, or earlier when wanted.
        let claimed: Vec<std::sync::atomic::AtomicBool> =
            site.pages.iter().map(|_| Default::default()).collect();
        let claim = |i: usize| !claimed[i].swap(true, std::sync::atomic::Ordering::SeqCst);
        let by_file: HashMap<String, usize> = match wanted {
            Some(_) => site
                .pages
                .iter()
                .enumerate()
                .filter(|(_, p)| self.renders(p.version))
                .map(|(i, p)| (layout::page_file(p), i))
                .collect(),
            None => HashMap::new(),
        };
        let rendered = || {
            (0..site.pages.len().min(self.analysis.docs.len()))
                .filter(|&i| self.renders(site.pages[i].version))
        };
        self.repeats.get_or_init(|| {
            Repeats::of(rendered().flat_map(|i| {
                let blocks = &self.analysis.docs[i].code_blocks;
                blocks.iter().map(|b| (b.lang.as_str(), b.code.as_str()))
            }))
        });
        let early: std::sync::Mutex<Vec<Rendered>> = Default::default();
        let pages: Vec<Rendered> = rendered()
            .collect::<Vec<_>>()
            .into_par_iter()
            .filter_map(|i| {
                while let Some(file) = wanted.and_then(|w| w()) {
                    if let Some(&j) = by_file.get(&file) {
                        if claim(j) {
                            let r = render_one(j);
                            if let Ok(mut early) = early.lock() {
                                early.push(r);
                            }
                        }
                    }
                }
                claim(i).then(|| render_one(i))
            })
            .collect();
        let early = early.into_inner().unwrap_or_default();
        let pages = pages.into_iter().chain(early);
        let mut kept = HashMap::new();
        let mut frames: Frames = Vec::new();
        if cache.is_some() {
            frames.resize(site.pages.len(), None);
        }
        let mut hits = 0;
        let mut errors = Vec::new();
        let mut count = 0;
        for r in pages {
            match r {
                Ok((i, frame, entry, hit)) => {
                    if let Some(slot) = frames.get_mut(i) {
                        *slot = frame;
                    }
                    kept.extend(entry);
                    hits += usize::from(hit);
                    count += 1;
                }
                Err(d) => errors.push(d),
            }
        }
        if let Some(c) = cache {
            c.pages = kept;
            c.hits = hits;
            c.frames = frames;
        }
        for r in self.template_files() {
            match r {
                Ok(f) => {
                    emit(f);
                    count += 1;
                }
                Err(d) => errors.push(d),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }

        let by_language: BTreeMap<(usize, &str), Vec<(&Page, &Document)>> = self
            .trees
            .iter()
            .filter(|((v, _), _)| self.renders(*v) && !search_later)
            .map(|(key, (_, order))| {
                let pages = order
                    .iter()
                    .filter_map(|p| {
                        self.by_source
                            .get(&(p.version, p.lang.as_str(), p.rel.as_str()))
                    })
                    .copied()
                    .collect();
                (*key, pages)
            })
            .collect();
        // Each search index goes out as soon as it is made: together they
        // are the largest part of the output. The sitemap (every page of
        // every version) and the other site-wide files are made and
        // scanned meanwhile.
        let (searched, others) = rayon::join(
            || search::files_into(site, &by_language, emit),
            || self.site_wide_into(emit),
        );
        Ok(count + searched + others)
    }

    /// The files made from a template without a page: the versions page of
    /// each language, the redirect at the root and the 404 page.
    fn template_files(&self) -> Vec<Result<OutFile, Diagnostic>> {
        let site = self.site;
        let mut out: Vec<Result<OutFile, Diagnostic>> = Vec::new();
        for l in &site.config.languages {
            out.push(self.render_versions(&l.code));
        }
        let default_lang = &site.config.default_language;
        let mut ctx = self.context(default_lang, self.latest);
        ctx.insert("target", &format!("/{default_lang}/"));
        // The docs versions below their own URL segment (`1.29`, `next`),
        // whose search bundle the 404 page uses for a URL in them.
        let below: Vec<&str> = site
            .versions
            .iter()
            .filter(|v| v.published)
            .filter_map(|v| v.segment())
            .collect();
        ctx.insert("search_versions", &below);
        for (name, path) in [
            ("redirect.html", layout::ROOT_PATH),
            ("404.html", layout::NOT_FOUND_PATH),
        ] {
            out.push(
                self.render_template(name, &ctx, path)
                    .map(|html| OutFile::new(path, html)),
            );
        }
        out
    }

    /// Renders, as a build would, the first page of each language and the
    /// files of [`Renderer::template_files`]: what `check` renders to find
    /// a template that fails, or adds a credential, on every page, without
    /// the time of a whole build. `Ok` holds the files, to be scanned.
    pub fn probe(&self) -> Result<Vec<OutFile>, Vec<Diagnostic>> {
        let site = self.site;
        let firsts = site.config.languages.iter().filter_map(|l| {
            (0..site.pages.len().min(self.analysis.docs.len()))
                .find(|&i| site.pages[i].lang == l.code && self.renders(site.pages[i].version))
        });
        let pages = firsts.map(|i| self.render_page(i, None).map(|r| r.file));
        let (files, errors): (Vec<_>, Vec<_>) =
            pages.chain(self.template_files()).partition(Result::is_ok);
        if errors.is_empty() {
            Ok(files.into_iter().flatten().collect())
        } else {
            Err(errors.into_iter().filter_map(Result::err).collect())
        }
    }

    /// The files that belong to no page or version: sitemap, robots.txt,
    /// built-in assets, the project's static files and the bases.
    fn site_wide_into(&self, emit: &(dyn Fn(OutFile) + Sync)) -> usize {
        let site = self.site;
        let mut files = self.sitemaps();
        for path in layout::generated_assets(site) {
            files.push(match path {
                layout::ROBOTS_PATH => OutFile::new(
                    path,
                    sitemap::robots(&format!(
                        "{}{}",
                        site.config.base_url.trim_end_matches('/'),
                        layout::SITEMAP_PATH
                    )),
                ),
                _ => OutFile::new(path, templates::asset(path).unwrap_or_default()),
            });
        }
        for a in &site.assets {
            files.push(OutFile::new(a.url.clone(), a.bytes.clone()));
        }
        files.extend(kubernetes::files(site));
        let count = files.len();
        files.into_iter().for_each(emit);
        count
    }
}

/// The content tree of each docs version and language.
fn trees(site: &Site) -> BTreeMap<(usize, &str), Tree<'_>> {
    let mut out = BTreeMap::new();
    for v in 0..site.versions.len().max(1) {
        for l in &site.config.languages {
            let pages = site
                .pages
                .iter()
                .filter(|p| p.version == v && p.lang == l.code);
            out.insert((v, l.code.as_str()), Tree::new(pages));
        }
    }
    out
}

/// The pages of each docs version and language, as indexes in
/// `site.pages`, in reading order (the order of the navigation and of the
/// search index).
pub fn reading_orders(site: &Site) -> BTreeMap<(usize, String), Vec<usize>> {
    let by_source: HashMap<(usize, &str, &str), usize> = site
        .pages
        .iter()
        .enumerate()
        .map(|(i, p)| ((p.version, p.lang.as_str(), p.rel.as_str()), i))
        .collect();
    trees(site)
        .into_iter()
        .map(|((v, lang), tree)| {
            let order = tree
                .reading_order()
                .into_iter()
                .filter_map(|p| {
                    by_source
                        .get(&(p.version, p.lang.as_str(), p.rel.as_str()))
                        .copied()
                })
                .collect();
            ((v, lang.to_string()), order)
        })
        .collect()
}

fn language<'a>(site: &'a Site, code: &str) -> LanguageContext<'a> {
    let l = site.config.language(code);
    LanguageContext {
        code: l.map_or("", |l| l.code.as_str()),
        name: l.map_or("", |l| l.name.as_str()),
        not_found: site.strings.get(code).map_or("", |s| s.get("not_found")),
        strings_404: [
            "skip",
            "search",
            "search_placeholder",
            "no_results",
            "results",
            "more_results",
        ]
        .map(|key| (key, site.strings.get(code).map_or("", |s| s.get(key)))),
        dir: direction(code),
    }
}

/// A template's finding, saying which output was being rendered (a
/// partial fails for every page that includes it, and for the 404 page).
fn while_rendering(d: Diagnostic, what: &str) -> Diagnostic {
    let help = match &d.help {
        Some(h) => format!("{h} (while rendering {what})"),
        None => format!("while rendering {what}"),
    };
    d.help(help)
}

/// The writing direction of language `code` (`ar`, `he-IL`): `rtl` for
/// the scripts written right to left, `ltr` otherwise.
fn direction(code: &str) -> &'static str {
    const RTL: [&str; 9] = ["ar", "he", "fa", "ur", "yi", "ps", "dv", "ckb", "sd"];
    let primary = code.split(['-', '_']).next().unwrap_or(code);
    if RTL.iter().any(|l| l.eq_ignore_ascii_case(primary)) {
        "rtl"
    } else {
        "ltr"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_written_right_to_left() {
        for code in ["ar", "he-IL", "fa", "ur_PK", "AR"] {
            assert_eq!(direction(code), "rtl", "{code}");
        }
        for code in ["es", "pt-BR", "en", "arn", "her"] {
            assert_eq!(direction(code), "ltr", "{code}");
        }
    }
}
