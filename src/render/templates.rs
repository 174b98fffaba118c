//! Tera templates: the defaults compiled into the binary, overridden by
//! name by the files of the project's `templates/` folder.

mod cycles;
mod nesting;

use crate::diagnostics::{rule, Diagnostic};
use crate::model::site::Site;
use std::error::Error as _;
use tera::Tera;

/// The default templates, by name.
pub const DEFAULTS: &[(&str, &str)] = &[
    ("base.html", include_str!("default/base.html")),
    ("page.html", include_str!("default/page.html")),
    ("redirect.html", include_str!("default/redirect.html")),
    ("404.html", include_str!("default/404.html")),
    ("versions.html", include_str!("default/versions.html")),
    ("macros.html", include_str!("default/macros.html")),
    (
        "partials/footer.html",
        include_str!("default/partials/footer.html"),
    ),
];

/// The default asset published at `path` (one of
/// [`crate::model::layout::DEFAULT_ASSETS`]): the stylesheet, the colours
/// of highlighted code and the site's script. A file at the same path
/// under `static/` (`static/assets/style.css`) replaces one.
pub fn asset(path: &str) -> Option<&'static str> {
    match path {
        "/assets/style.css" => Some(include_str!("default/style.css")),
        "/assets/syntax.css" => Some(include_str!("default/syntax.css")),
        "/assets/site.js" => Some(include_str!("default/site.js")),
        "/assets/favicon.svg" => Some(include_str!("default/favicon.svg")),
        _ => None,
    }
}

/// Compiles the defaults and the project's overrides into one engine.
pub fn engine(site: &Site) -> Result<Tera, Vec<Diagnostic>> {
    let mut tera = Tera::default();
    tera.autoescape_on(vec![".html"]);
    // Tera's default also escapes `/`, which makes every URL unreadable.
    tera.set_escape_fn(super::escape::escape);
    let mut all: Vec<(String, String)> = DEFAULTS
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    for t in &site.templates {
        match all.iter_mut().find(|(n, _)| *n == t.name) {
            Some(slot) => slot.1 = t.text.clone(),
            None => all.push((t.name.clone(), t.text.clone())),
        }
    }
    // The engine's parser descends once per level: a deep template would
    // overflow the stack before it could say anything.
    let deep: Vec<Diagnostic> = all
        .iter()
        .filter_map(|(name, text)| {
            let (what, line) = nesting::too_deep(text)?;
            let d = Diagnostic::new(
                rule::TEMPLATE_INVALID,
                format!(
                    "`{name}` nests {what} more than {} deep",
                    nesting::MAX_NESTING
                ),
            )
            .help("split the template into macros or included templates");
            Some(match site.templates.iter().find(|t| &t.name == name) {
                Some(t) => d.at(crate::diagnostics::Location::line(&t.source, line)),
                None => d,
            })
        })
        .collect();
    if !deep.is_empty() {
        return Err(deep);
    }
    tera.add_raw_templates(all).map_err(|e| {
        let source = site
            .templates
            .iter()
            .find(|t| error_chain(&e).contains(&format!("'{}'", t.name)))
            .map(|t| t.source.clone());
        let d = Diagnostic::new(rule::TEMPLATE_INVALID, error_chain(&e));
        vec![match source {
            Some(s) => d.in_file(s),
            None => d,
        }]
    })?;
    // Before anything renders: endless recursion would overflow the stack.
    let circles: Vec<Diagnostic> = cycles::find(&tera)
        .into_iter()
        .map(|p| {
            let d = Diagnostic::new(rule::TEMPLATE_RECURSION, p.message);
            match site.templates.iter().find(|t| t.name == p.template) {
                Some(t) => d.in_file(&t.source),
                None => d,
            }
        })
        .collect();
    if !circles.is_empty() {
        return Err(circles);
    }
    Ok(tera)
}

/// Whether a template of the project may read the context variable
/// `name` (the default templates read only what they are given): a word
/// `name` that is not an HTML tag (`<nav>`), part of a longer name
/// (`nav_html`) or a macro call (`nav(`). A false yes only costs the time
/// to fill the variable in.
pub fn project_reads(site: &Site, name: &str) -> bool {
    site.templates.iter().any(|t| {
        t.text.match_indices(name).any(|(i, _)| {
            let before = t.text[..i].chars().next_back();
            let after = t.text[i + name.len()..].chars().next();
            let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            !word(before)
                && !matches!(before, Some('<' | '/'))
                && !word(after)
                && after != Some('(')
        })
    })
}

/// A Tera error with its causes, which hold the useful part.
pub fn error_chain(e: &tera::Error) -> String {
    let mut msg = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        cur = s.source();
    }
    msg
}

/// Renders `name`, turning a failure into a finding that names the
/// template's file when the project overrides it.
pub fn render(
    tera: &Tera,
    site: &Site,
    name: &str,
    context: &tera::Context,
) -> Result<String, Diagnostic> {
    tera.render(name, context).map_err(|e| {
        let d = Diagnostic::new(rule::TEMPLATE_INVALID, error_chain(&e));
        match site.templates.iter().find(|t| t.name == name) {
            Some(t) => d.in_file(&t.source),
            None => d,
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_of_a_variable_are_told_from_tags_and_longer_names() {
        let site = |text: &str| crate::model::site::Site {
            templates: vec![crate::model::site::TemplateFile {
                name: "page.html".into(),
                source: "templates/page.html".into(),
                text: text.into(),
            }],
            ..crate::model::site::Site::empty()
        };
        let reads = |text: &str| super::project_reads(&site(text), "nav");
        assert!(!reads("<nav class=\"x\">{{ nav_html | safe }}</nav>"));
        assert!(!reads("{{ macros::nav(items=x) }}"));
        assert!(reads("{% for n in nav %}{{ n.title }}{% endfor %}"));
        assert!(reads("{{ macros::nav(items=nav, prefix=p) }}"));
    }

    #[test]
    fn every_default_asset_has_content() {
        for path in crate::model::layout::DEFAULT_ASSETS {
            assert!(super::asset(path).is_some_and(|a| !a.is_empty()), "{path}");
        }
    }
}
