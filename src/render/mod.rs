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
use links::LinkIndex;
use markdown::{Document, Heading};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

/// One file of the output, at a site path (`/es/install/index.html`).
#[derive(Debug, Clone)]
pub struct OutFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

impl OutFile {
    pub fn new(path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
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
    let results: Vec<(Document, Vec<Diagnostic>)> = site
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
            let doc = markdown::render(&body, page.body_line, &|d| index.rewrite(page, d));
            (doc, diagnostics)
        })
        .collect();
    let mut docs = Vec::with_capacity(results.len());
    let mut diagnostics = Vec::new();
    for (d, mut problems) in results {
        docs.push(d);
        diagnostics.append(&mut problems);
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

/// Renders the whole site: pages through templates, the redirect at `/`,
/// the 404 page, the stylesheet, assets and the base downloads.
pub fn site(
    site: &Site,
    docs: &[Document],
    tera: &tera::Tera,
) -> Result<Vec<OutFile>, Vec<Diagnostic>> {
    let files = Mutex::new(Vec::new());
    site_into(site, docs, tera, &|f| {
        if let Ok(mut files) = files.lock() {
            files.push(f);
        }
    })?;
    let mut files = files.into_inner().unwrap_or_default();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// Renders the whole site like [`site`], handing each file to `sink` as
/// soon as it is rendered, so that the pages need not all be held in
/// memory. On an error, files already handed over are to be discarded.
/// Returns how many files were handed over.
pub fn site_into<'a>(
    site: &'a Site,
    docs: &[Document],
    tera: &tera::Tera,
    sink: &(dyn Fn(OutFile) + Sync),
) -> Result<usize, Vec<Diagnostic>> {
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
    // Lookups that would otherwise scan every page for every page.
    let mut positions: HashMap<&str, usize> = HashMap::new();
    for order in orders.values() {
        for (i, p) in order.iter().enumerate() {
            positions.entry(p.url.as_str()).or_insert(i);
        }
    }
    let mut by_source: HashMap<(&str, &str), &Page> = HashMap::new();
    for p in &site.pages {
        by_source.entry((&p.lang, &p.rel)).or_insert(p);
    }

    // `nav` is the same for every page of a language but for the item
    // marked current: it becomes a template value once per language (and
    // thread), which each page's context borrows and gives back.
    let navs: BTreeMap<&str, tera::Value> = orders
        .iter()
        .map(|(&lang, order)| {
            let items: Vec<NavItem> = order.iter().map(|p| nav_item(p, "")).collect();
            (lang, tera::to_value(items).expect("nav items serialize"))
        })
        .collect();
    let spare_navs: BTreeMap<&str, Mutex<Vec<tera::Value>>> =
        navs.keys().map(|&l| (l, Mutex::new(Vec::new()))).collect();

    let rendered: Vec<Result<(), Diagnostic>> = site
        .pages
        .par_iter()
        .zip(docs.par_iter())
        .map(|(page, doc)| {
            let lang = page.lang.as_str();
            let order = &orders[lang];
            let pos = positions
                .get(page.url.as_str())
                .copied()
                .filter(|&i| order[i].url == page.url);
            let item = |p: &&'a Page| nav_item(p, &page.url);
            let spare = spare_navs[lang].lock().map(|mut v| v.pop());
            let mut nav = spare.ok().flatten().unwrap_or_else(|| navs[lang].clone());
            set_current(&mut nav, pos, true);
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
            let mut ctx = tera::Context::new();
            ctx.insert("site", &site_ctx);
            ctx.insert("lang", &language(site, &page.lang));
            ctx.insert("t", &strings(&page.lang));
            ctx.insert("page", &page_ctx);
            let mut borrowed = tera::Map::new();
            borrowed.insert("nav".to_string(), nav);
            ctx.extend(tera::Context::from_value(borrowed.into()).expect("an object"));
            let html = templates::render(tera, site, "page.html", &ctx);
            if let Some(mut nav) = ctx.remove("nav") {
                set_current(&mut nav, pos, false);
                if let Ok(mut spare) = spare_navs[lang].lock() {
                    spare.push(nav);
                }
            }
            let html =
                html.map_err(|d| d.help(format!("while rendering {}", page.source.display())))?;
            sink(OutFile::new(page_file(page), html));
            Ok(())
        })
        .collect();

    let mut count = 0;
    let mut errors = Vec::new();
    for r in rendered {
        match r {
            Ok(()) => count += 1,
            Err(d) => errors.push(d),
        }
    }

    let default_lang = &site.config.default_language;
    let mut ctx = tera::Context::new();
    ctx.insert("site", &site_ctx);
    ctx.insert("lang", &language(site, default_lang));
    ctx.insert("t", &strings(default_lang));
    ctx.insert("target", &format!("/{default_lang}/"));
    for (name, path) in [("redirect.html", "/index.html"), ("404.html", "/404.html")] {
        match templates::render(tera, site, name, &ctx) {
            Ok(html) => {
                sink(OutFile::new(path, html));
                count += 1;
            }
            Err(d) => errors.push(d),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }

    let mut rest = Vec::new();
    if !site.assets.iter().any(|a| a.url == STYLE_PATH) {
        rest.push(OutFile::new(STYLE_PATH, templates::STYLE_CSS));
    }
    for a in &site.assets {
        rest.push(OutFile::new(a.url.clone(), a.bytes.clone()));
    }
    rest.extend(kubernetes::files(site));
    count += rest.len();
    rest.into_iter().for_each(sink);
    Ok(count)
}

/// Marks the nav item at `pos` as the current page, or unmarks it.
fn set_current(nav: &mut tera::Value, pos: Option<usize>, current: bool) {
    if let Some(item) = pos.and_then(|i| nav.get_mut(i)) {
        item["current"] = tera::Value::Bool(current);
    }
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
