//! Stage 3: turn a checked [`Site`] into the files of the published site.
//!
//! Rendering happens in two steps so the checks can run in between:
//! [`documents`] turns every page's Markdown into HTML and collects its
//! headings, links, code blocks and text; [`site`] puts the documents into
//! templates and adds what the build generates: the versions pages, the
//! search indexes, the sitemap, the default assets and the base downloads.

pub mod highlight;
pub mod kubernetes;
pub mod links;
pub mod markdown;
pub mod nav;
pub mod search;
pub mod sitemap;
pub mod templates;
pub mod variables;
pub mod versions;

use crate::diagnostics::{rule, Diagnostic, Location};
use crate::site::{Page, Site};
use bytes::Bytes;
use links::LinkIndex;
use markdown::{Document, Heading};
use nav::Tree;
use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One file of the output, at a site path (`/es/install/index.html`).
/// The bytes are shared, so a page kept between builds is not copied.
#[derive(Debug, Clone)]
pub struct OutFile {
    pub path: String,
    pub bytes: Bytes,
}

impl OutFile {
    pub fn new(path: impl Into<String>, bytes: impl Into<Bytes>) -> Self {
        OutFile {
            path: path.into(),
            bytes: bytes.into(),
        }
    }
}

/// The file a page is written to.
pub fn page_file(page: &Page) -> String {
    format!("{}index.html", page.url)
}

/// The file a language's versions page is written to.
fn versions_file(lang: &str) -> String {
    format!("{}index.html", versions::page_url(lang))
}

/// Files the build generates that a project can replace with its own, at
/// the same path under `static/`.
fn replaceable(site: &Site) -> impl Iterator<Item = &'static str> + '_ {
    templates::ASSETS
        .iter()
        .map(|(path, _)| *path)
        .chain([sitemap::ROBOTS_PATH])
        .filter(|path| !site.assets.iter().any(|a| a.url == *path))
}

/// Every path the build writes, checked for collisions between inputs.
pub fn published_paths(site: &Site) -> (BTreeSet<String>, Vec<Diagnostic>) {
    let mut owners: BTreeMap<String, String> = BTreeMap::new();
    let mut diagnostics = Vec::new();
    let mut claim = |path: String, owner: String, diagnostics: &mut Vec<Diagnostic>| {
        if let Some(first) = owners.get(&path) {
            diagnostics.push(Diagnostic::new(
                rule::OUTPUT_CONFLICT,
                format!("`{first}` and `{owner}` would both be published at `{path}`"),
            ));
        } else {
            owners.insert(path, owner);
        }
    };
    for fixed in ["/index.html", "/404.html", sitemap::SITEMAP_PATH] {
        claim(fixed.to_string(), "basepress".into(), &mut diagnostics);
    }
    for l in &site.config.languages {
        let owner = || format!("basepress (the {} versions page)", l.code);
        claim(versions_file(&l.code), owner(), &mut diagnostics);
        let owner = format!("basepress (the {} search index)", l.code);
        claim(search::index_path(&l.code), owner, &mut diagnostics);
    }
    for p in &site.pages {
        claim(
            page_file(p),
            p.source.display().to_string(),
            &mut diagnostics,
        );
    }
    for p in kubernetes::paths(site) {
        claim(p, "the bases".into(), &mut diagnostics);
    }
    for path in replaceable(site) {
        claim(path.to_string(), "basepress".into(), &mut diagnostics);
    }
    for a in &site.assets {
        claim(
            a.url.clone(),
            a.source.display().to_string(),
            &mut diagnostics,
        );
    }
    (owners.into_keys().collect(), diagnostics)
}

/// Renders every page's Markdown, in parallel, in `site.pages` order,
/// after replacing its `{{ variables }}`; unknown variables are findings.
pub fn documents(site: &Site, index: &LinkIndex) -> (Vec<Document>, Vec<Diagnostic>) {
    documents_cached(site, index, None)
}

/// [`documents`], taking from `cache` the pages whose Markdown (after
/// variables) and place in the site did not change, and leaving in it the
/// documents of this build.
pub fn documents_cached(
    site: &Site,
    index: &LinkIndex,
    mut cache: Option<&mut PageCache>,
) -> (Vec<Document>, Vec<Diagnostic>) {
    // Links are resolved against every page and published path: a change
    // there renders every page again.
    let links = cache.as_ref().map(|_| index.fingerprint());
    let cached = cache.as_deref().map(|c| &c.documents);
    type Rendered = (Document, Vec<Diagnostic>, Option<[u8; 32]>, bool);
    let results: Vec<Rendered> = site
        .pages
        .par_iter()
        .map(|page| {
            let (body, diagnostics) = expand(site, page);
            let key: Option<[u8; 32]> = links.map(|links| {
                let mut h = Sha256::new();
                h.update(links);
                let place = (&page.url, &page.rel, &page.lang, &page.fallback_from);
                let _ = serde_json::to_writer(&mut h, &(place, page.body_line, &body));
                h.finalize().into()
            });
            if let Some(doc) = key.and_then(|k| cached?.get(&k)) {
                return (doc.clone(), diagnostics, key, true);
            }
            let doc = markdown::render(&body, page.body_line, &|d| index.rewrite(page, d));
            (doc, diagnostics, key, false)
        })
        .collect();
    let mut docs = Vec::with_capacity(results.len());
    let mut diagnostics = Vec::new();
    let mut kept = HashMap::new();
    let mut hits = 0;
    let mut previous = cache
        .as_deref_mut()
        .map(|c| std::mem::take(&mut c.documents))
        .unwrap_or_default();
    for (d, mut problems, key, hit) in results {
        if let Some(k) = key {
            let reused = if hit { previous.remove(&k) } else { None };
            kept.insert(k, reused.unwrap_or_else(|| d.clone()));
        }
        hits += usize::from(hit);
        docs.push(d);
        diagnostics.append(&mut problems);
    }
    if let Some(c) = cache {
        c.documents = kept;
        c.markdown_hits = hits;
    }
    (docs, diagnostics)
}

/// A page's Markdown with its `{{ variables }}` replaced, and a finding for
/// each unknown one.
fn expand(site: &Site, page: &Page) -> (String, Vec<Diagnostic>) {
    let vars = variables::Variables::for_page(site, page);
    let (body, problems) = match vars.expand(&page.body) {
        Ok(b) => (b, Vec::new()),
        Err(p) => (page.body.clone(), p),
    };
    let diagnostics = problems
        .into_iter()
        .map(|p| {
            let names: Vec<_> = vars.names().collect();
            Diagnostic::new(rule::DOC_VARIABLE_UNKNOWN, p.message)
                .at(Location::at(
                    &page.source,
                    page.body_line + p.line - 1,
                    p.column,
                ))
                .help(format!("pages can use: {}", names.join(", ")))
        })
        .collect();
    (body, diagnostics)
}

/// The document of one page, as [`documents`] renders it.
pub fn document(site: &Site, index: &LinkIndex, page: &Page) -> (Document, Vec<Diagnostic>) {
    let (body, diagnostics) = expand(site, page);
    let doc = markdown::render(&body, page.body_line, &|d| index.rewrite(page, d));
    (doc, diagnostics)
}

/// Pages rendered by earlier builds, kept by `basepress serve` so that a
/// rebuild renders again only the pages whose template input changed.
///
/// A page is found by a SHA-256 of everything its template receives (the
/// site, language, words, navigation and page contexts, as JSON) and of
/// the project's template overrides; templates cannot read anything else
/// (Tera's clock and random functions are not compiled in), so a page with
/// the same digest renders to the same bytes.
///
/// It also keeps each page's rendered Markdown, by a SHA-256 of its text
/// (after variables), its place in the site and everything its links are
/// resolved against.
#[derive(Default)]
pub struct PageCache {
    pages: HashMap<[u8; 32], Bytes>,
    documents: HashMap<[u8; 32], Document>,
    /// How many pages the last build took from the cache.
    pub hits: usize,
    /// How many pages' Markdown the last build took from the cache.
    pub markdown_hits: usize,
}

/// Words the default templates and the site's script show, per language.
#[derive(Serialize, Clone, Copy)]
struct Strings {
    skip: &'static str,
    navigation: &'static str,
    on_this_page: &'static str,
    languages: &'static str,
    pager: &'static str,
    not_found: &'static str,
    untranslated: &'static str,
    menu: &'static str,
    search: &'static str,
    search_placeholder: &'static str,
    no_results: &'static str,
    results: &'static str,
    copy: &'static str,
    copied: &'static str,
    version: &'static str,
    versions: &'static str,
    versions_intro: &'static str,
    latest: &'static str,
    image_tag: &'static str,
    image: &'static str,
    files: &'static str,
    file: &'static str,
    download: &'static str,
    verify: &'static str,
    all_versions: &'static str,
}

fn strings(lang: &str) -> Strings {
    match lang.split('-').next().unwrap_or(lang) {
        "es" => Strings {
            skip: "Saltar al contenido",
            navigation: "Navegación",
            on_this_page: "En esta página",
            languages: "Idiomas",
            pager: "Páginas anterior y siguiente",
            not_found: "Esta página no existe. Ir al inicio",
            untranslated:
                "Esta página todavía no está traducida: se muestra en su idioma original.",
            menu: "Menú",
            search: "Buscar",
            search_placeholder: "Buscar…",
            no_results: "Sin resultados",
            results: "resultados",
            copy: "Copiar",
            copied: "Copiado",
            version: "Versión",
            versions: "Versiones publicadas",
            versions_intro: "Cada versión publicada de la base de Kustomize, con sus archivos, la suma SHA-256 de cada uno y la imagen que necesita: la del mismo release. Una versión publicada no cambia nunca, así que puedes fijarla.",
            latest: "más reciente",
            image_tag: "Tag de la imagen",
            image: "Imagen",
            files: "Archivos",
            file: "Archivo",
            download: "Descarga",
            verify: "Después, comprueba cada archivo con sus sumas:",
            all_versions: "Todas las versiones",
        },
        "pt" => Strings {
            skip: "Pular para o conteúdo",
            navigation: "Navegação",
            on_this_page: "Nesta página",
            languages: "Idiomas",
            pager: "Páginas anterior e seguinte",
            not_found: "Esta página não existe. Ir para o início",
            untranslated: "Esta página ainda não foi traduzida: ela aparece no idioma original.",
            menu: "Menu",
            search: "Pesquisar",
            search_placeholder: "Pesquisar…",
            no_results: "Nenhum resultado",
            results: "resultados",
            copy: "Copiar",
            copied: "Copiado",
            version: "Versão",
            versions: "Versões publicadas",
            versions_intro: "Cada versão publicada da base do Kustomize, com os arquivos, a soma SHA-256 de cada um e a imagem de que ela precisa: a do mesmo release. Uma versão publicada nunca muda, então você pode fixá-la.",
            latest: "mais recente",
            image_tag: "Tag da imagem",
            image: "Imagem",
            files: "Arquivos",
            file: "Arquivo",
            download: "Download",
            verify: "Depois, confira cada arquivo com as somas:",
            all_versions: "Todas as versões",
        },
        _ => Strings {
            skip: "Skip to content",
            navigation: "Navigation",
            on_this_page: "On this page",
            languages: "Languages",
            pager: "Previous and next pages",
            not_found: "This page does not exist. Go to the start",
            untranslated: "This page is not translated yet: it is shown in its original language.",
            menu: "Menu",
            search: "Search",
            search_placeholder: "Search…",
            no_results: "No results",
            results: "results",
            copy: "Copy",
            copied: "Copied",
            version: "Version",
            versions: "Published versions",
            versions_intro: "Every published version of the Kustomize base, with its files, the SHA-256 sum of each and the image it needs: the one of the same release. A published version never changes, so you can pin it.",
            latest: "latest",
            image_tag: "Image tag",
            image: "Image",
            files: "Files",
            file: "File",
            download: "Download",
            verify: "Then check every file against its sum:",
            all_versions: "All versions",
        },
    }
}

#[derive(Serialize)]
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

#[derive(Serialize)]
struct LanguageContext<'a> {
    code: &'a str,
    name: &'a str,
    not_found: &'static str,
}

#[derive(Serialize)]
struct VersionLink {
    version: String,
    image_tag: String,
    latest: bool,
}

#[derive(Serialize)]
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
}

#[derive(Serialize)]
struct Translation<'a> {
    code: &'a str,
    name: &'a str,
    url: &'a str,
    /// An untranslated copy: not announced as an alternate.
    fallback: bool,
    /// Its heading ids, in the order of this page's headings, when both
    /// pages have the same headings (so the switcher can keep the reader's
    /// section); empty otherwise.
    anchors: Vec<&'a str>,
}

#[derive(Serialize, Clone)]
struct Neighbour<'a> {
    title: &'a str,
    url: &'a str,
}

/// What every rendered page of a site shares.
struct Shared<'a> {
    site: &'a Site,
    context: SiteContext<'a>,
    /// Per language: the content tree and its reading order.
    trees: BTreeMap<&'a str, (Tree<'a>, Vec<&'a Page>)>,
    /// Page and document by language and source path.
    by_source: HashMap<(&'a str, &'a str), (&'a Page, &'a Document)>,
}

impl<'a> Shared<'a> {
    fn new(site: &'a Site, docs: impl IntoIterator<Item = &'a Document>) -> Self {
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
            versions: versions::list(site)
                .into_iter()
                .map(|v| VersionLink {
                    version: v.version,
                    image_tag: v.image_tag,
                    latest: v.latest,
                })
                .collect(),
        };
        let trees = site
            .config
            .languages
            .iter()
            .map(|l| {
                let tree = Tree::new(site.pages.iter().filter(|p| p.lang == l.code));
                let order = tree.reading_order();
                (l.code.as_str(), (tree, order))
            })
            .collect();
        let by_source = site
            .pages
            .iter()
            .zip(docs)
            .map(|(p, d)| ((p.lang.as_str(), p.rel.as_str()), (p, d)))
            .collect();
        Shared {
            site,
            context,
            trees,
            by_source,
        }
    }

    /// A template context with the variables every template receives.
    fn context(&self, lang: &str) -> tera::Context {
        let mut ctx = tera::Context::new();
        ctx.insert("site", &self.context);
        ctx.insert("lang", &language(self.site, lang));
        ctx.insert("t", &strings(lang));
        ctx
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
                let (p, d) = self.by_source.get(&(l.code.as_str(), page.rel.as_str()))?;
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
                    anchors,
                })
            })
            .collect()
    }

    /// URL of the original of an untranslated copy, else the page's own.
    fn canonical(&self, page: &'a Page) -> &'a str {
        page.fallback_from
            .as_deref()
            .and_then(|from| self.by_source.get(&(from, page.rel.as_str())))
            .map_or(page.url.as_str(), |(p, _)| p.url.as_str())
    }

    /// Renders one page; with `cache`, a page whose template input hashes
    /// to a digest of an earlier build is taken from it. Returns the file,
    /// its digest (with a cache) and whether it came from the cache.
    fn render_page(
        &self,
        page: &'a Page,
        doc: &'a Document,
        tera: &tera::Tera,
        cache: Option<(&Sha256, &HashMap<[u8; 32], Bytes>)>,
    ) -> Result<(OutFile, Option<[u8; 32]>, bool), Diagnostic> {
        let (tree, order) = &self.trees[page.lang.as_str()];
        let pos = order.iter().position(|p| std::ptr::eq(*p, page));
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
            content: &doc.html,
            title_in_content: doc.headings.iter().any(|h| h.level == 1),
            toc: &doc.headings,
            fallback_from: page.fallback_from.as_deref(),
            translations: self.translations(page, doc),
            previous: pos
                .and_then(|i| i.checked_sub(1))
                .map(|i| neighbour(&order[i])),
            next: pos.and_then(|i| order.get(i + 1)).map(neighbour),
        };
        let nav = tree.for_page(Some(page));
        let key: Option<[u8; 32]> = cache.map(|(templates, _)| {
            let mut h = templates.clone();
            let all = (
                &self.context,
                language(self.site, &page.lang),
                strings(&page.lang),
                &page_ctx,
                &nav,
            );
            let _ = serde_json::to_writer(&mut h, &all);
            h.finalize().into()
        });
        if let Some(bytes) = key.and_then(|k| cache?.1.get(&k)) {
            return Ok((OutFile::new(page_file(page), bytes.clone()), key, true));
        }
        let mut ctx = self.context(&page.lang);
        ctx.insert("page", &page_ctx);
        ctx.insert("nav_html", &nav::html(&nav, &self.context.prefix));
        ctx.insert("nav", &nav);
        let html = templates::render(tera, self.site, "page.html", &ctx)
            .map_err(|d| d.help(format!("while rendering {}", page.source.display())))?;
        Ok((OutFile::new(page_file(page), html), key, false))
    }

    /// The versions page of `lang`.
    fn render_versions(&self, lang: &str, tera: &tera::Tera) -> Result<OutFile, Diagnostic> {
        let t = strings(lang);
        let urls: Vec<(&str, &str, String)> = self
            .site
            .config
            .languages
            .iter()
            .map(|l| {
                (
                    l.code.as_str(),
                    l.name.as_str(),
                    versions::page_url(&l.code),
                )
            })
            .collect();
        let url = versions::page_url(lang);
        let page_ctx = PageContext {
            title: t.versions,
            description: None,
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
                    anchors: Vec::new(),
                })
                .collect(),
            previous: None,
            next: None,
        };
        let (tree, _) = &self.trees[lang];
        let mut ctx = self.context(lang);
        ctx.insert("page", &page_ctx);
        let nav = tree.for_page(None);
        ctx.insert("nav_html", &nav::html(&nav, &self.context.prefix));
        ctx.insert("nav", &nav);
        ctx.insert("versions", &versions::list(self.site));
        let html = templates::render(tera, self.site, "versions.html", &ctx)?;
        Ok(OutFile::new(versions_file(lang), html))
    }

    /// Every page of the sitemap: the translated pages and the versions
    /// pages, each with its alternates.
    fn sitemap_entries(&self) -> Vec<sitemap::Entry> {
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
        let mut rels: Vec<&str> = self.site.pages.iter().map(|p| p.rel.as_str()).collect();
        rels.sort_unstable();
        rels.dedup();
        for rel in rels {
            let urls = self
                .site
                .config
                .languages
                .iter()
                .filter_map(|l| self.by_source.get(&(l.code.as_str(), rel)))
                .filter(|(p, _)| p.fallback_from.is_none())
                .map(|(p, _)| (p.lang.as_str(), p.url.clone()))
                .collect();
            entries.extend(group(urls));
        }
        let urls = self
            .site
            .config
            .languages
            .iter()
            .map(|l| (l.code.as_str(), versions::page_url(&l.code)))
            .collect();
        entries.extend(group(urls));
        entries
    }
}

/// Renders the pages `which` (indexes in `site.pages`) through templates,
/// as [`site`] renders them.
pub fn pages<D: Borrow<Document> + Sync>(
    site: &Site,
    docs: &[D],
    tera: &tera::Tera,
    which: &[usize],
) -> Result<Vec<OutFile>, Vec<Diagnostic>> {
    let shared = Shared::new(site, docs.iter().map(Borrow::borrow));
    let (files, errors): (Vec<_>, Vec<_>) = which
        .par_iter()
        .filter_map(|&i| Some((site.pages.get(i)?, docs.get(i)?.borrow())))
        .map(|(page, doc)| shared.render_page(page, doc, tera, None).map(|(f, _, _)| f))
        .partition(Result::is_ok);
    if errors.is_empty() {
        Ok(files.into_iter().flatten().collect())
    } else {
        Err(errors.into_iter().filter_map(Result::err).collect())
    }
}

/// The pages of each language, as indexes in `site.pages`, in reading
/// order (the order of the navigation and of the search index).
pub fn reading_orders(site: &Site) -> BTreeMap<String, Vec<usize>> {
    let by_source: HashMap<(&str, &str), usize> = site
        .pages
        .iter()
        .enumerate()
        .map(|(i, p)| ((p.lang.as_str(), p.rel.as_str()), i))
        .collect();
    site.config
        .languages
        .iter()
        .map(|l| {
            let tree = Tree::new(site.pages.iter().filter(|p| p.lang == l.code));
            let order = tree
                .reading_order()
                .into_iter()
                .filter_map(|p| by_source.get(&(p.lang.as_str(), p.rel.as_str())).copied())
                .collect();
            (l.code.clone(), order)
        })
        .collect()
}

/// Renders the whole site into memory, sorted by path: see [`site_into`].
pub fn site(
    site: &Site,
    docs: &[Document],
    tera: &tera::Tera,
    lastmod: Option<&str>,
    cache: Option<&mut PageCache>,
) -> Result<Vec<OutFile>, Vec<Diagnostic>> {
    let files = std::sync::Mutex::new(Vec::new());
    site_into(site, docs, tera, lastmod, cache, &|f| {
        if let Ok(mut files) = files.lock() {
            files.push(f);
        }
    })?;
    let mut files = files.into_inner().unwrap_or_default();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// Renders the whole site: pages through templates, the versions pages,
/// the redirect at `/`, the 404 page, the search indexes, the sitemap, the
/// default assets, the project's assets and the base downloads. `lastmod`
/// dates the sitemap's entries (from `SOURCE_DATE_EPOCH`).
///
/// Every file goes to `emit` as soon as it is rendered, from several
/// threads and in no set order, so that a build can write pages while
/// others render and need not hold the whole site in memory. On an error
/// some files may have been emitted already: the caller discards them.
/// Returns how many files were emitted.
///
/// With `cache` (`basepress serve`), pages whose template input did not
/// change since the last build come from it, and it keeps this build's.
pub fn site_into(
    site: &Site,
    docs: &[Document],
    tera: &tera::Tera,
    lastmod: Option<&str>,
    mut cache: Option<&mut PageCache>,
    emit: &(dyn Fn(OutFile) + Sync),
) -> Result<usize, Vec<Diagnostic>> {
    let shared = Shared::new(site, docs);
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
    // Per page: its cache entry (digest and bytes, with a cache), whether
    // it came from the cache, or its error.
    type Rendered = Result<(Option<([u8; 32], Bytes)>, bool), Diagnostic>;
    let pages: Vec<Rendered> = site
        .pages
        .par_iter()
        .zip(docs.par_iter())
        .map(|(page, doc)| {
            let (file, key, hit) = shared.render_page(page, doc, tera, lookup)?;
            let kept = key.map(|k| (k, file.bytes.clone()));
            emit(file);
            Ok((kept, hit))
        })
        .collect();
    let mut kept = HashMap::new();
    let mut hits = 0;
    let mut errors = Vec::new();
    let mut count = 0;
    for r in pages {
        match r {
            Ok((entry, hit)) => {
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
    }
    let mut others: Vec<Result<OutFile, Diagnostic>> = Vec::new();
    for l in &site.config.languages {
        others.push(shared.render_versions(&l.code, tera));
    }
    let default_lang = &site.config.default_language;
    let mut ctx = shared.context(default_lang);
    ctx.insert("target", &format!("/{default_lang}/"));
    for (name, path) in [("redirect.html", "/index.html"), ("404.html", "/404.html")] {
        others.push(templates::render(tera, site, name, &ctx).map(|html| OutFile::new(path, html)));
    }
    for r in others {
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

    let by_language: BTreeMap<&str, Vec<(&Page, &Document)>> = shared
        .trees
        .iter()
        .map(|(lang, (_, order))| {
            let pages = order
                .iter()
                .filter_map(|p| shared.by_source.get(&(p.lang.as_str(), p.rel.as_str())))
                .copied()
                .collect();
            (*lang, pages)
        })
        .collect();
    let mut files = search::files(site, &by_language);
    files.push(OutFile::new(
        sitemap::SITEMAP_PATH,
        sitemap::sitemap(&shared.sitemap_entries(), lastmod),
    ));
    for path in replaceable(site) {
        files.push(match path {
            sitemap::ROBOTS_PATH => OutFile::new(
                path,
                sitemap::robots(&format!(
                    "{}{}",
                    site.config.base_url.trim_end_matches('/'),
                    sitemap::SITEMAP_PATH
                )),
            ),
            _ => OutFile::new(path, templates::asset(path).unwrap_or_default()),
        });
    }
    for a in &site.assets {
        files.push(OutFile::new(a.url.clone(), a.bytes.clone()));
    }
    files.extend(kubernetes::files(site));
    count += files.len();
    files.into_iter().for_each(emit);
    Ok(count)
}

fn language<'a>(site: &'a Site, code: &str) -> LanguageContext<'a> {
    let l = site.config.language(code);
    LanguageContext {
        code: l.map_or("", |l| l.code.as_str()),
        name: l.map_or("", |l| l.name.as_str()),
        not_found: strings(code).not_found,
    }
}
