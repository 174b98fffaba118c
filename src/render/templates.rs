//! Tera templates: the defaults compiled into the binary, overridden by
//! name by the files of the project's `templates/` folder.

mod cycles;
mod lint;
mod nesting;

pub use lint::{lint, RENDERED};

use crate::diagnostics::{rule, Diagnostic};
use crate::model::site::Site;
use std::collections::HashMap;
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
    // A build reads its inputs alone: the environment would make the same
    // inputs give other pages (which the build cache would not see), and
    // would publish whatever it holds.
    tera.register_function("get_env", |_: &HashMap<String, tera::Value>| {
        Err(tera::Error::msg(
            "`get_env` is not available: pages are made from the project's files alone; put the value in site.yaml or the page's front matter",
        ))
    });
    tera.register_function("range", range);
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
            let d = Diagnostic::new(rule::TEMPLATE_INVALID, format!("`{name}` {what}"))
                .help("split the template into macros or included templates, and loop over the site's data rather than long ranges");
            Some(match site.templates.iter().find(|t| &t.name == name) {
                Some(t) => d.at(crate::diagnostics::Location::line(&t.source, line)),
                None => d,
            })
        })
        .collect();
    if !deep.is_empty() {
        return Err(deep);
    }
    tera.add_raw_templates(all)
        .map_err(|e| vec![finding(site, &e)])?;
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
    let missing: Vec<Diagnostic> = cycles::missing_includes(&tera)
        .into_iter()
        .map(|(template, name)| {
            let d = Diagnostic::new(
                rule::TEMPLATE_INVALID,
                format!("`{template}` includes `{name}`, and there is no such template"),
            )
            .help("name a template of templates/ or a default one (`partials/footer.html`), or write `{% include \"…\" ignore missing %}`");
            match site.templates.iter().find(|t| t.name == template) {
                Some(t) => match first_use(&t.text, &name) {
                    Some((line, column)) => {
                        d.at(crate::diagnostics::Location::at(&t.source, line, column))
                    }
                    None => d.in_file(&t.source),
                },
                None => d,
            }
        })
        .collect();
    if !missing.is_empty() {
        return Err(missing);
    }
    Ok(tera)
}

/// The most numbers `range` gives, as many as loops over literal ranges
/// may make ([`nesting::MAX_STEPS`]): Tera holds them all at once.
pub const RANGE_LIMIT: usize = 1_000_000;

/// Tera's `range(end, start=0, step_by=1)`, refusing a step of 0 (a loop
/// without end) and more than [`RANGE_LIMIT`] numbers.
fn range(args: &HashMap<String, tera::Value>) -> tera::Result<tera::Value> {
    let number = |name: &str, default: Option<usize>| -> tera::Result<usize> {
        match args.get(name) {
            Some(v) => v
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| {
                    tera::Error::msg(format!(
                        "Function `range` received {name}={v} but `{name}` can only be a number"
                    ))
                }),
            None => default.ok_or_else(|| {
                tera::Error::msg(format!(
                    "Function `range` was called without a `{name}` argument"
                ))
            }),
        }
    };
    let (start, end, step) = (
        number("start", Some(0))?,
        number("end", None)?,
        number("step_by", Some(1))?,
    );
    if start > end {
        return Err(tera::Error::msg(
            "Function `range` was called with a `start` argument greater than the `end` one",
        ));
    }
    if step == 0 {
        return Err(tera::Error::msg(
            "Function `range` was called with `step_by=0`, which never ends",
        ));
    }
    let count = (end - start).div_ceil(step);
    if count > RANGE_LIMIT {
        return Err(tera::Error::msg(format!(
            "Function `range` would give {count} numbers, more than the {RANGE_LIMIT} a template may loop over"
        )));
    }
    Ok((start..end).step_by(step).collect::<Vec<usize>>().into())
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
    causes(e).join(": ")
}

/// The messages of `e` and of each error under it, outermost first.
fn causes(e: &tera::Error) -> Vec<String> {
    let mut messages = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        messages.push(s.to_string());
        cur = s.source();
    }
    messages
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
        let d = finding(site, &e);
        match (&d.location, site.templates.iter().find(|t| t.name == name)) {
            (None, Some(t)) => d.in_file(&t.source),
            _ => d,
        }
    })
}

/// A Tera error as a finding, in the project's template it is about when
/// that can be told: the last template the error names (the innermost,
/// for an error while including or extending), else the template that
/// uses the name the message quotes (`nope` of "Variable `nope` not
/// found", `f` of "Filter 'f' not found"). The line and column are Tera's
/// for a syntax error, else those of the first tag that uses that name.
/// A located finding says the innermost cause alone, so that one mistake
/// rendered on every page is one finding.
fn finding(site: &Site, e: &tera::Error) -> Diagnostic {
    let chain = error_chain(e);
    let innermost = innermost_cause(e);
    let named = site
        .templates
        .iter()
        .filter_map(|t| Some((chain.rfind(&format!("'{}'", t.name))?, t)))
        .max_by_key(|(at, _)| *at)
        .map(|(_, t)| t);
    let names: Vec<&str> = quoted_names(&innermost)
        .into_iter()
        .filter(|n| !site.templates.iter().any(|t| t.name == *n))
        .collect();
    // The name the message quotes, else the expression it repeats
    // (`9223372036854775807 + 1 results in an out of bounds i64`).
    let used = |t: &crate::model::site::TemplateFile| {
        names
            .iter()
            .find_map(|n| first_use(&t.text, n))
            .or_else(|| echoed_tag(&t.text, &innermost))
    };
    let located = match named {
        Some(t) => Some((t, syntax_position(&chain).or_else(|| used(t)))),
        None => site
            .templates
            .iter()
            .find_map(|t| Some((t, Some(used(t)?)))),
    };
    match located {
        None => Diagnostic::new(rule::TEMPLATE_INVALID, chain),
        Some((t, None)) => Diagnostic::new(rule::TEMPLATE_INVALID, chain).in_file(&t.source),
        Some((t, Some((line, column)))) => Diagnostic::new(rule::TEMPLATE_INVALID, innermost)
            .at(crate::diagnostics::Location::at(&t.source, line, column)),
    }
}

/// The last error of `e`'s chain. A syntax error is said as the template
/// it is in and what was expected, without Tera's drawing of the line.
fn innermost_cause(e: &tera::Error) -> String {
    let mut messages = causes(e);
    let last = messages.pop().unwrap_or_default();
    match messages.last() {
        Some(outer) if outer.starts_with("Failed to parse") => {
            let expected: Vec<&str> = last
                .lines()
                .filter_map(|l| l.trim_start().strip_prefix("= "))
                .collect();
            match expected.is_empty() {
                true => format!("{outer}: {last}"),
                false => format!("{outer}: {}", expected.join("; ")),
            }
        }
        _ => last,
    }
}

/// The line and column of a syntax error (` --> 3:5`).
fn syntax_position(message: &str) -> Option<(usize, usize)> {
    let rest = &message[message.find(" --> ")? + 5..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit() && c != ':')
        .unwrap_or(rest.len());
    let (line, column) = rest[..end].split_once(':')?;
    Some((line.parse().ok()?, column.parse().ok()?))
}

/// The names a message quotes, in backticks or single quotes.
fn quoted_names(message: &str) -> Vec<&str> {
    ['`', '\'']
        .into_iter()
        .flat_map(|q| message.split(q).skip(1).step_by(2))
        .filter(|n| !n.is_empty() && !n.contains(char::is_whitespace))
        .collect()
}

/// The 1-based line and column of the first tag of `text` whose
/// expression (`{{ a + 1 }}`: `a + 1`, at least three characters) the
/// error message repeats.
fn echoed_tag(text: &str, message: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(open) = text[from..].find("{{").map(|i| from + i) {
        let end = text[open..].find("}}").map_or(text.len(), |i| open + i);
        let inner = text[open + 2..end].trim_matches(|c: char| c.is_whitespace() || c == '-');
        if inner.len() >= 3 && message.contains(inner) {
            let at = open + text[open..end].find(inner).unwrap_or(0);
            let line = text[..at].matches('\n').count() + 1;
            let column = text[..at].rsplit('\n').next().unwrap_or("").chars().count() + 1;
            return Some((line, column));
        }
        from = end.max(open + 2);
    }
    None
}

/// The 1-based line and column of the first use of `name` as a whole
/// word inside a tag (`{{ … }}`, `{% … %}`) of `text`.
fn first_use(text: &str, name: &str) -> Option<(usize, usize)> {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut from = 0;
    while let Some(open) = text[from..].find(['{']).map(|i| from + i) {
        let close = match text.get(open..open + 2) {
            Some("{{") => "}}",
            Some("{%") => "%}",
            _ => {
                from = open + 1;
                continue;
            }
        };
        let end = text[open..].find(close).map_or(text.len(), |i| open + i);
        let tag = &text[open..end];
        let hit = tag.match_indices(name).find(|(i, _)| {
            !word(tag[..*i].chars().next_back()) && !word(tag[i + name.len()..].chars().next())
        });
        if let Some((i, _)) = hit {
            let at = open + i;
            let line = text[..at].matches('\n').count() + 1;
            // Columns count characters, as editors do.
            let column = text[..at].rsplit('\n').next().unwrap_or("").chars().count() + 1;
            return Some((line, column));
        }
        from = end.max(open + 2);
    }
    None
}

#[cfg(test)]
mod tests {
    /// An error that repeats the expression it failed on (Tera's
    /// arithmetic, from an included template it does not name) is found
    /// at the tag that holds it.
    #[test]
    fn an_error_is_found_at_the_expression_it_repeats() {
        let text = "<footer>\n  {{ page.title }} {{- 9223372036854775807 + 1 -}}\n</footer>\n";
        let message = "9223372036854775807 + 1 results in an out of bounds i64";
        assert_eq!(super::echoed_tag(text, message), Some((2, 24)));
        assert_eq!(super::echoed_tag(text, "Tried to divide by zero"), None);
        // Too short to tell apart from words of the message.
        assert_eq!(super::echoed_tag("{{ a }}", "a value"), None);
    }

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
