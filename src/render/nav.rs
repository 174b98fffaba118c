//! The sidebar of one language: its pages as a tree that follows the
//! content folders, each level ordered by `weight`, then title. The same
//! tree, read depth first, is the reading order of the previous and next
//! links.

use crate::model::site::Page;
use serde::Serialize;
use std::collections::BTreeMap;

/// Up to this many pages in a language, every folder of the sidebar lists
/// its pages (closed unless it holds the current page). Above it, only the
/// folders on the way to the current page do, so that a page's HTML does
/// not grow with the size of the whole site.
pub const FULL_TREE_PAGES: usize = 300;

/// In a large site, a folder lists at most this many of its entries: those
/// around the one leading to the current page, with an ellipsis for the
/// others. A folder of thousands of pages would otherwise put all of them
/// into each of its pages, and cost grow with the square of its size.
pub const FOLDER_WINDOW: usize = 40;

/// The title of the line standing for the entries a folder leaves out.
pub const ELLIPSIS: &str = "…";

/// The content tree of one language.
pub struct Tree<'a> {
    entries: Vec<Entry<'a>>,
    pages: usize,
}

enum Entry<'a> {
    Page(&'a Page),
    Folder(Folder<'a>),
}

/// A content folder: its `index.md`, when it has one, stands for it.
struct Folder<'a> {
    /// Its path below the language folder, with a final `/` (`guides/`).
    path: String,
    name: String,
    index: Option<&'a Page>,
    entries: Vec<Entry<'a>>,
}

/// One line of the sidebar, as templates receive it.
#[derive(Serialize, Clone, Hash)]
pub struct NavNode<'a> {
    pub title: &'a str,
    /// The page's URL; for a folder, that of its `index.md` (none when it
    /// has no index page).
    pub url: Option<&'a str>,
    pub weight: Option<i64>,
    /// This is the page being rendered.
    pub current: bool,
    /// A folder that holds the page being rendered (or is it).
    pub open: bool,
    /// Whether this is a folder.
    pub folder: bool,
    /// A folder's pages and folders; empty for a page, and for a closed
    /// folder of a large site.
    pub children: Vec<NavNode<'a>>,
}

/// Folders, while the tree is assembled.
#[derive(Default)]
struct Draft<'a> {
    index: Option<&'a Page>,
    pages: Vec<&'a Page>,
    folders: BTreeMap<String, Draft<'a>>,
}

impl<'a> Tree<'a> {
    /// The tree of `pages`, all of one language.
    pub fn new(pages: impl IntoIterator<Item = &'a Page>) -> Self {
        let mut root = Draft::default();
        let mut count = 0;
        for page in pages {
            count += 1;
            let mut draft = &mut root;
            let mut parts: Vec<&str> = page.rel.split('/').collect();
            let file = parts.pop().unwrap_or_default();
            let nested = !parts.is_empty();
            for part in parts {
                draft = draft.folders.entry(part.to_string()).or_default();
            }
            if file == "index.md" && nested {
                draft.index = Some(page);
            } else {
                draft.pages.push(page);
            }
        }
        Tree {
            entries: finish(root, ""),
            pages: count,
        }
    }

    /// Every page, depth first: a folder's index page before its pages.
    pub fn reading_order(&self) -> Vec<&'a Page> {
        let mut out = Vec::with_capacity(self.pages);
        flatten(&self.entries, &mut out);
        out
    }

    /// The sidebar as seen from `current` (none: from a page that is not
    /// in the tree, such as the versions page).
    pub fn for_page(&self, current: Option<&Page>) -> Vec<NavNode<'_>> {
        let full = self.pages <= FULL_TREE_PAGES;
        let at = current.map(|p| (p.rel.as_str(), p.url.as_str()));
        nodes(&self.entries, at, full)
    }
}

/// Sorts a folder's entries and turns its subfolders into entries.
fn finish<'a>(draft: Draft<'a>, path: &str) -> Vec<Entry<'a>> {
    let mut entries: Vec<Entry<'a>> = draft.pages.into_iter().map(Entry::Page).collect();
    for (name, sub) in draft.folders {
        let sub_path = format!("{path}{name}/");
        let index = sub.index;
        entries.push(Entry::Folder(Folder {
            entries: finish(sub, &sub_path),
            path: sub_path,
            name,
            index,
        }));
    }
    entries.sort_by_cached_key(|e| {
        let (home, weight, chunks, title, path) = sort_key(e);
        (home, weight, chunks, title.to_string(), path.to_string())
    });
    entries
}

/// Where an entry sorts: the home page (the language folder's
/// `index.md`) first; then by weight (none last), by title as people read
/// it (case and accents aside, numbers by value: `A 2` before `A 10`,
/// `Índice` among the I), by title as written, and by source path.
fn sort_key<'e>(e: &'e Entry) -> (bool, i64, Vec<Chunk>, &'e str, &'e str) {
    let (home, weight, title, path) = match e {
        Entry::Page(p) => (
            p.rel == "index.md",
            p.weight,
            p.title.as_str(),
            p.rel.as_str(),
        ),
        Entry::Folder(f) => match f.index {
            Some(p) => (false, p.weight, p.title.as_str(), f.path.as_str()),
            None => (false, None, f.name.as_str(), f.path.as_str()),
        },
    };
    (
        !home,
        weight.unwrap_or(i64::MAX),
        chunks(title),
        title,
        path,
    )
}

/// A piece of a title, for sorting: a run of digits by its value (its
/// length first, so any number of digits compares), or folded text.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Chunk {
    Number(usize, String),
    Text(String),
}

fn chunks(title: &str) -> Vec<Chunk> {
    let folded = deunicode::deunicode(title).to_lowercase();
    let mut out = Vec::new();
    let mut rest = folded.as_str();
    while let Some(c) = rest.chars().next() {
        let digits = c.is_ascii_digit();
        let end = rest
            .find(|x: char| x.is_ascii_digit() != digits)
            .unwrap_or(rest.len());
        let (run, tail) = rest.split_at(end);
        out.push(if digits {
            let value = run.trim_start_matches('0');
            Chunk::Number(value.len(), value.to_string())
        } else {
            Chunk::Text(run.to_string())
        });
        rest = tail;
    }
    out
}

fn flatten<'a>(entries: &[Entry<'a>], out: &mut Vec<&'a Page>) {
    for e in entries {
        match e {
            Entry::Page(p) => out.push(p),
            Entry::Folder(f) => {
                out.extend(f.index);
                flatten(&f.entries, out);
            }
        }
    }
}

/// The nodes of `entries`; `at` is the current page's source path and URL.
fn nodes<'t>(entries: &'t [Entry<'_>], at: Option<(&str, &str)>, full: bool) -> Vec<NavNode<'t>> {
    let is_current = |p: &Page| at.is_some_and(|(_, url)| p.url == url);
    let holds = |f: &Folder| at.is_some_and(|(rel, _)| rel.starts_with(&f.path));
    let on_path = |e: &Entry| match e {
        Entry::Page(p) => is_current(p),
        // Its index page is below its path too.
        Entry::Folder(f) => holds(f),
    };
    let shown = if full {
        0..entries.len()
    } else {
        window(entries.len(), entries.iter().position(on_path))
    };
    let ellipsis = || NavNode {
        title: ELLIPSIS,
        url: None,
        weight: None,
        current: false,
        open: false,
        folder: false,
        children: Vec::new(),
    };
    let mut out = Vec::with_capacity(shown.len() + 2);
    if shown.start > 0 {
        out.push(ellipsis());
    }
    out.extend(entries[shown.clone()].iter().map(|e| match e {
        Entry::Page(p) => NavNode {
            title: &p.title,
            url: Some(&p.url),
            weight: p.weight,
            current: is_current(p),
            open: false,
            folder: false,
            children: Vec::new(),
        },
        Entry::Folder(f) => {
            let open = holds(f);
            NavNode {
                title: f.index.map_or(f.name.as_str(), |p| p.title.as_str()),
                url: f.index.map(|p| p.url.as_str()),
                weight: f.index.and_then(|p| p.weight),
                current: f.index.is_some_and(is_current),
                open,
                folder: true,
                children: if open || full {
                    nodes(&f.entries, at, full)
                } else {
                    Vec::new()
                },
            }
        }
    }));
    if shown.end < entries.len() {
        out.push(ellipsis());
    }
    out
}

/// The [`FOLDER_WINDOW`] entries of `len` shown around the one at
/// `center` (the first ones without it).
fn window(len: usize, center: Option<usize>) -> std::ops::Range<usize> {
    if len <= FOLDER_WINDOW {
        return 0..len;
    }
    let start = center
        .map_or(0, |c| c.saturating_sub(FOLDER_WINDOW / 2))
        .min(len - FOLDER_WINDOW);
    start..start + FOLDER_WINDOW
}

/// The sidebar's HTML: nested lists, folders as disclosure widgets, the
/// current page marked. The same markup as the `nav` macro of the default
/// `macros.html`, written without the template engine: at 2,500 pages a
/// language the macro took an eighth of a build, and more on sites small
/// enough to list every page.
pub fn html(items: &[NavNode], prefix: &str) -> String {
    let mut out = String::with_capacity(items.len() * 96);
    list(&mut out, items, prefix);
    out
}

fn list(out: &mut String, items: &[NavNode], prefix: &str) {
    use super::escape::escape_into;
    let link = |out: &mut String, item: &NavNode, url: &str| {
        out.push_str("<a href=\"");
        escape_into(out, prefix);
        escape_into(out, url);
        out.push('"');
        if item.current {
            out.push_str(" aria-current=\"page\"");
        }
        out.push('>');
        escape_into(out, item.title);
        out.push_str("</a>");
    };
    let span = |out: &mut String, item: &NavNode| {
        out.push_str("<span>");
        escape_into(out, item.title);
        out.push_str("</span>");
    };
    out.push_str("<ul>\n");
    for item in items {
        if item.folder && !item.children.is_empty() {
            out.push_str("<li class=\"folder\"><details");
            if item.open {
                out.push_str(" open");
            }
            out.push_str("><summary>");
            match item.url {
                Some(url) => link(out, item, url),
                None => span(out, item),
            }
            out.push_str("</summary>\n");
            list(out, &item.children, prefix);
            out.push_str("</details></li>\n");
        } else {
            out.push_str("<li>");
            match item.url {
                Some(url) => link(out, item, url),
                None => span(out, item),
            }
            out.push_str("</li>\n");
        }
    }
    out.push_str("</ul>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(rel: &str, title: &str, weight: Option<i64>) -> Page {
        let url = format!(
            "/en/{}",
            rel.trim_end_matches("index.md").replace(".md", "/")
        );
        Page {
            version: 0,
            lang: "en".into(),
            rel: rel.into(),
            source: format!("content/en/{rel}").into(),
            url,
            title: title.into(),
            weight,
            description: None,
            base: None,
            base_line: None,
            fallback_from: None,
            body: String::new(),
            body_line: 1,
            values_at: Default::default(),
        }
    }

    fn titles(nodes: &[NavNode]) -> Vec<String> {
        nodes
            .iter()
            .map(|n| {
                if n.children.is_empty() {
                    n.title.to_string()
                } else {
                    format!("{}[{}]", n.title, titles(&n.children).join(" "))
                }
            })
            .collect()
    }

    fn sample() -> Vec<Page> {
        vec![
            page("index.md", "Home", Some(1)),
            page("install.md", "Install", Some(10)),
            page("faq.md", "FAQ", None),
            page("guides/index.md", "Guides", Some(5)),
            page("guides/b.md", "Beta", None),
            page("guides/a.md", "Alpha", None),
            page("guides/deep/x.md", "X", Some(1)),
            page("zz/only.md", "Only", None),
        ]
    }

    #[test]
    fn folders_nest_and_each_level_sorts_by_weight_then_title() {
        let pages = sample();
        let tree = Tree::new(&pages);
        let nav = tree.for_page(Some(&pages[1]));
        assert_eq!(
            titles(&nav),
            [
                "Home",
                "Guides[Alpha Beta deep[X]]",
                "Install",
                "FAQ",
                "zz[Only]"
            ]
        );
        let order: Vec<_> = tree
            .reading_order()
            .iter()
            .map(|p| p.title.as_str())
            .collect();
        assert_eq!(
            order,
            ["Home", "Guides", "Alpha", "Beta", "X", "Install", "FAQ", "Only"]
        );
    }

    #[test]
    fn the_home_page_comes_first_and_titles_sort_as_people_read_them() {
        let pages = vec![
            page("z.md", "Zeta", None),
            page("a10.md", "A 10", None),
            page("index.md", "Home", None),
            page("a2.md", "A 2", None),
            page("i.md", "Índice", None),
            page("lower.md", "alfa", None),
            page("w.md", "Weighted", Some(1)),
            page("j.md", "Jota", None),
        ];
        let tree = Tree::new(&pages);
        assert_eq!(
            titles(&tree.for_page(None)),
            ["Home", "Weighted", "A 2", "A 10", "alfa", "Índice", "Jota", "Zeta"]
        );
    }

    #[test]
    fn the_folders_holding_the_current_page_are_open() {
        let pages = sample();
        let tree = Tree::new(&pages);
        let nav = tree.for_page(Some(&pages[6]));
        let guides = &nav[1];
        assert!(guides.folder && guides.open && !guides.current);
        assert_eq!(guides.url, Some("/en/guides/"));
        let deep = &guides.children[2];
        assert!(deep.open && deep.url.is_none());
        assert!(deep.children[0].current);
        assert!(!nav[4].open, "zz does not hold the page");
    }

    #[test]
    fn a_large_site_lists_only_the_folders_on_the_current_path() {
        let mut pages = vec![
            page("a/index.md", "A", Some(1)),
            page("b/index.md", "B", Some(2)),
        ];
        for i in 0..FULL_TREE_PAGES {
            pages.push(page(&format!("a/p{i:03}.md"), &format!("P{i:03}"), None));
            pages.push(page(&format!("b/q{i:03}.md"), &format!("Q{i:03}"), None));
        }
        let tree = Tree::new(&pages);
        let nav = tree.for_page(Some(&pages[2]));
        // The first page of a: the first entries of a, then an ellipsis.
        let a = &nav[0].children;
        assert_eq!(a.len(), FOLDER_WINDOW + 1);
        assert!(a[0].current);
        assert_eq!(a[FOLDER_WINDOW].title, ELLIPSIS);
        assert!(nav[1].children.is_empty());
        assert_eq!(nav[1].url, Some("/en/b/"));
    }

    #[test]
    fn a_large_folder_lists_a_window_around_the_current_page() {
        let count = 4_000;
        let pages: Vec<Page> = (0..count)
            .map(|i| page(&format!("big/p{i:04}.md"), &format!("P{i:04}"), None))
            .collect();
        let tree = Tree::new(&pages);
        for at in [0, 1, 19, 20, 21, 1_234, count - 21, count - 1] {
            let nav = tree.for_page(Some(&pages[at]));
            let big = &nav[0].children;
            // At most the window and an ellipsis on each side, whatever
            // the folder's size; the current page always among them, in order.
            assert!(big.len() <= FOLDER_WINDOW + 2, "{at}: {}", big.len());
            let listed: Vec<&str> = big.iter().map(|n| n.title).collect();
            let current: Vec<_> = big.iter().filter(|n| n.current).collect();
            assert_eq!(current.len(), 1, "{at}");
            assert_eq!(current[0].title, pages[at].title);
            assert_eq!(
                listed.first() == Some(&ELLIPSIS),
                at > FOLDER_WINDOW / 2,
                "{at}"
            );
            assert_eq!(
                listed.last() == Some(&ELLIPSIS),
                at < count - FOLDER_WINDOW / 2,
                "{at}"
            );
            let titles: Vec<&&str> = listed.iter().filter(|t| **t != ELLIPSIS).collect();
            assert!(titles.windows(2).all(|w| w[0] < w[1]), "{at}");
            assert_eq!(html(&nav, ""), with_macro(&nav, ""));
        }
        // Without a current page: the first entries.
        let nav = tree.for_page(None);
        assert_eq!(nav.len(), 1);
    }

    /// The sidebar as the default `macros.html` draws it with Tera.
    fn with_macro(nav: &[NavNode], prefix: &str) -> String {
        let mut tera = tera::Tera::default();
        tera.autoescape_on(vec![".html"]);
        tera.set_escape_fn(crate::render::escape::escape);
        let macros = crate::render::templates::DEFAULTS
            .iter()
            .find(|(name, _)| *name == "macros.html")
            .map(|(_, text)| *text)
            .unwrap();
        tera.add_raw_templates(vec![
            ("macros.html", macros),
            (
                "t.html",
                "{% import \"macros.html\" as m %}{{ m::nav(items=nav, prefix=prefix) }}",
            ),
        ])
        .unwrap();
        let mut ctx = tera::Context::new();
        ctx.insert("nav", nav);
        ctx.insert("prefix", prefix);
        tera.render("t.html", &ctx).unwrap()
    }

    #[test]
    fn the_sidebar_html_is_what_the_nav_macro_draws() {
        let mut pages = sample();
        pages.push(page("guides/q.md", "Quotes \"&\" <tags>", Some(2)));
        let tree = Tree::new(&pages);
        for current in [None, Some(&pages[1]), Some(&pages[6]), Some(&pages[7])] {
            let nav = tree.for_page(current);
            for prefix in ["", "/docs"] {
                assert_eq!(html(&nav, prefix), with_macro(&nav, prefix));
            }
        }
        // A large site: closed folders without their pages.
        let many: Vec<Page> = (0..FULL_TREE_PAGES + 5)
            .map(|i| page(&format!("s{}/p{i}.md", i % 7), &format!("P{i}"), None))
            .collect();
        let tree = Tree::new(&many);
        let nav = tree.for_page(Some(&many[3]));
        assert!(nav.iter().any(|n| n.folder && n.children.is_empty()));
        assert_eq!(html(&nav, "/x"), with_macro(&nav, "/x"));
    }
}
