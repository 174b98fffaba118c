//! Stage 3: turn a checked [`Site`] into the files of the published site.
//!
//! Rendering happens in two steps so the checks can run in between:
//! [`documents`] turns every page's Markdown into HTML and collects its
//! headings, links and code blocks; [`site`] puts the documents into
//! templates and adds the base downloads.

pub mod kubernetes;
pub mod links;
pub mod markdown;
pub mod templates;
pub mod variables;

use crate::diagnostics::{rule, Diagnostic, Location};
use crate::site::{Page, Site};
use bytes::Bytes;
use links::LinkIndex;
use markdown::{Document, Heading};
use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};
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
    for fixed in ["/index.html", "/404.html"] {
        claim(fixed.to_string(), "basepress".into(), &mut diagnostics);
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
    let style_overridden = site.assets.iter().any(|a| a.url == STYLE_PATH);
    if !style_overridden {
        claim(STYLE_PATH.to_string(), "basepress".into(), &mut diagnostics);
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

const STYLE_PATH: &str = "/assets/style.css";

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

/// Words the default templates show, per language.
#[derive(Serialize, Clone, Copy)]
struct Strings {
    skip: &'static str,
    navigation: &'static str,
    on_this_page: &'static str,
    languages: &'static str,
    pager: &'static str,
    not_found: &'static str,
    untranslated: &'static str,
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
        },
        "pt" => Strings {
            skip: "Pular para o conteúdo",
            navigation: "Navegação",
            on_this_page: "Nesta página",
            languages: "Idiomas",
            pager: "Páginas anterior e seguinte",
            not_found: "Esta página não existe. Ir para o início",
            untranslated: "Esta página ainda não foi traduzida: ela aparece no idioma original.",
        },
        _ => Strings {
            skip: "Skip to content",
            navigation: "Navigation",
            on_this_page: "On this page",
            languages: "Languages",
            pager: "Previous and next pages",
            not_found: "This page does not exist. Go to the start",
            untranslated: "This page is not translated yet: it is shown in its original language.",
        },
    }
}

#[derive(Serialize)]
struct SiteContext<'a> {
    title: &'a str,
    base_url: String,
    prefix: String,
    default_language: &'a str,
    languages: Vec<LanguageContext<'a>>,
}

#[derive(Serialize)]
struct LanguageContext<'a> {
    code: &'a str,
    name: &'a str,
    not_found: &'static str,
}

#[derive(Serialize)]
struct PageContext<'a> {
    title: &'a str,
    description: Option<&'a str>,
    url: &'a str,
    source: String,
    content: &'a str,
    toc: &'a [Heading],
    /// For an untranslated copy: the language of its content.
    fallback_from: Option<&'a str>,
    translations: Vec<Translation<'a>>,
    previous: Option<NavItem<'a>>,
    next: Option<NavItem<'a>>,
}

#[derive(Serialize)]
struct Translation<'a> {
    code: &'a str,
    name: &'a str,
    url: &'a str,
}

#[derive(Serialize, Clone)]
struct NavItem<'a> {
    title: &'a str,
    url: &'a str,
    weight: Option<i64>,
    current: bool,
}

/// Pages of one language in reading order: by weight, then title.
fn reading_order<'a>(site: &'a Site, lang: &str) -> Vec<&'a Page> {
    let mut pages: Vec<&Page> = site.pages.iter().filter(|p| p.lang == lang).collect();
    pages.sort_by(|a, b| {
        (a.weight.unwrap_or(i64::MAX), &a.title, &a.rel).cmp(&(
            b.weight.unwrap_or(i64::MAX),
            &b.title,
            &b.rel,
        ))
    });
    pages
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

/// Renders the whole site: pages through templates, the redirect at `/`,
/// the 404 page, the stylesheet, assets and the base downloads.
pub fn site(
    site: &Site,
    docs: &[Document],
    tera: &tera::Tera,
) -> Result<Vec<OutFile>, Vec<Diagnostic>> {
    render_site(site, docs, tera, None)
}

/// [`site`], reusing the pages of `cache` whose input did not change, and
/// leaving in it the pages of this build.
pub fn site_cached(
    site: &Site,
    docs: &[Document],
    tera: &tera::Tera,
    cache: &mut PageCache,
) -> Result<Vec<OutFile>, Vec<Diagnostic>> {
    render_site(site, docs, tera, Some(cache))
}

fn render_site<'a>(
    site: &'a Site,
    docs: &[Document],
    tera: &tera::Tera,
    cache: Option<&mut PageCache>,
) -> Result<Vec<OutFile>, Vec<Diagnostic>> {
    let base_url = site.config.base_url.trim_end_matches('/').to_string();
    let site_ctx = SiteContext {
        title: &site.config.title,
        base_url: base_url
            .strip_suffix(&site.config.path_prefix())
            .unwrap_or(&base_url)
            .to_string(),
        prefix: site.config.path_prefix(),
        default_language: &site.config.default_language,
        languages: site
            .config
            .languages
            .iter()
            .map(|l| LanguageContext {
                code: &l.code,
                name: &l.name,
                not_found: strings(&l.code).not_found,
            })
            .collect(),
    };
    let orders: BTreeMap<&str, Vec<&Page>> = site
        .config
        .languages
        .iter()
        .map(|l| (l.code.as_str(), reading_order(site, &l.code)))
        .collect();
    // What every page of a language shares, hashed once per language.
    let digests: Option<BTreeMap<&str, Sha256>> = cache.as_ref().map(|_| {
        let mut templates = Sha256::new();
        for t in &site.templates {
            let _ = serde_json::to_writer(&mut templates, &(&t.name, &t.text));
        }
        let templates = templates.finalize();
        orders
            .iter()
            .map(|(code, order)| {
                let nav: Vec<NavItem> = order.iter().map(|p| nav_item(p, "")).collect();
                let mut h = Sha256::new();
                h.update(templates);
                let shared = (&site_ctx, language(site, code), strings(code), nav);
                let _ = serde_json::to_writer(&mut h, &shared);
                (*code, h)
            })
            .collect()
    });
    let cached = cache.as_deref().map(|c| &c.pages);
    // Where each page stands in its language's reading order, and each
    // page by language and source path, for the translations.
    let positions: HashMap<&str, usize> = orders
        .values()
        .flat_map(|order| order.iter().enumerate().map(|(i, p)| (p.url.as_str(), i)))
        .collect();
    let by_source: HashMap<(&str, &str), &Page> = site
        .pages
        .iter()
        .map(|p| ((p.lang.as_str(), p.rel.as_str()), p))
        .collect();

    type Rendered = (OutFile, Option<[u8; 32]>, bool);
    let rendered: Vec<Result<Rendered, Diagnostic>> = site
        .pages
        .par_iter()
        .zip(docs.par_iter())
        .map(|(page, doc)| {
            let order = &orders[page.lang.as_str()];
            let pos = positions.get(page.url.as_str()).copied();
            let item = |p: &&'a Page| nav_item(p, &page.url);
            let previous = pos.and_then(|i| i.checked_sub(1)).map(|i| item(&order[i]));
            let next = pos.and_then(|i| order.get(i + 1)).map(item);
            let translations = site
                .config
                .languages
                .iter()
                .filter_map(|l| {
                    by_source
                        .get(&(l.code.as_str(), page.rel.as_str()))
                        .map(|p| Translation {
                            code: &l.code,
                            name: &l.name,
                            url: &p.url,
                        })
                })
                .collect();
            let page_ctx = PageContext {
                title: &page.title,
                description: page.description.as_deref(),
                url: &page.url,
                source: page.source.display().to_string(),
                content: &doc.html,
                toc: &doc.headings,
                fallback_from: page.fallback_from.as_deref(),
                translations,
                previous,
                next,
            };
            // `nav` is the language's, but for `current`, which follows
            // from `page.url`.
            let key: Option<[u8; 32]> = digests.as_ref().map(|d| {
                let mut h = d[page.lang.as_str()].clone();
                let _ = serde_json::to_writer(&mut h, &page_ctx);
                h.finalize().into()
            });
            if let Some(bytes) = key.and_then(|k| cached?.get(&k)) {
                return Ok((OutFile::new(page_file(page), bytes.clone()), key, true));
            }
            let nav: Vec<NavItem> = order.iter().map(item).collect();
            let mut ctx = tera::Context::new();
            ctx.insert("site", &site_ctx);
            ctx.insert("lang", &language(site, &page.lang));
            ctx.insert("t", &strings(&page.lang));
            ctx.insert("page", &page_ctx);
            ctx.insert("nav", &nav);
            let html = templates::render(tera, site, "page.html", &ctx)
                .map_err(|d| d.help(format!("while rendering {}", page.source.display())))?;
            Ok((OutFile::new(page_file(page), html), key, false))
        })
        .collect();

    let mut files = Vec::with_capacity(rendered.len() + 16);
    let mut errors = Vec::new();
    let mut kept = HashMap::new();
    let mut hits = 0;
    for r in rendered {
        match r {
            Ok((f, key, hit)) => {
                if let Some(k) = key {
                    kept.insert(k, f.bytes.clone());
                }
                hits += usize::from(hit);
                files.push(f);
            }
            Err(d) => errors.push(d),
        }
    }
    if let Some(c) = cache {
        c.pages = kept;
        c.hits = hits;
    }

    let default_lang = &site.config.default_language;
    let mut ctx = tera::Context::new();
    ctx.insert("site", &site_ctx);
    ctx.insert("lang", &language(site, default_lang));
    ctx.insert("t", &strings(default_lang));
    ctx.insert("target", &format!("/{default_lang}/"));
    for (name, path) in [("redirect.html", "/index.html"), ("404.html", "/404.html")] {
        match templates::render(tera, site, name, &ctx) {
            Ok(html) => files.push(OutFile::new(path, html)),
            Err(d) => errors.push(d),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }

    if !site.assets.iter().any(|a| a.url == STYLE_PATH) {
        files.push(OutFile::new(STYLE_PATH, templates::STYLE_CSS));
    }
    for a in &site.assets {
        files.push(OutFile::new(a.url.clone(), a.bytes.clone()));
    }
    files.extend(kubernetes::files(site));
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

fn nav_item<'a>(p: &'a Page, current: &str) -> NavItem<'a> {
    NavItem {
        title: &p.title,
        url: &p.url,
        weight: p.weight,
        current: p.url == current,
    }
}

fn language<'a>(site: &'a Site, code: &str) -> LanguageContext<'a> {
    let l = site.config.language(code);
    LanguageContext {
        code: l.map_or("", |l| l.code.as_str()),
        name: l.map_or("", |l| l.name.as_str()),
        not_found: strings(code).not_found,
    }
}
