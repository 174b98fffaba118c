//! How deep a template's text nests, measured before the template engine
//! parses it: its parser descends once per nested tag (`{% if %}` inside
//! `{% for %}` …) and per nested bracket in an expression, and 20,000
//! nested `{% if %}` overflowed the stack of `basepress check`.

/// The deepest nesting of block tags, and of brackets in one expression,
/// accepted.
pub const MAX_NESTING: usize = 64;

/// Tags that open a block closed by `end<tag>`.
const BLOCKS: &[&str] = &["if", "for", "block", "macro", "filter", "raw"];

/// How deep `text` nests, when deeper than [`MAX_NESTING`]: what nests
/// ("tags" or "brackets") and the 1-based line where the limit is passed.
pub fn too_deep(text: &str) -> Option<(&'static str, usize)> {
    let mut tags = 0usize;
    let mut line = 1;
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        line += rest[..open].matches('\n').count();
        let after = &rest[open + 1..];
        let close = match after.chars().next() {
            Some('{') => "}}",
            Some('%') => "%}",
            Some('#') => "#}",
            _ => {
                rest = after;
                continue;
            }
        };
        let inner_start = open + 2;
        let len = rest[inner_start..].find(close)?;
        let inner = &rest[inner_start..inner_start + len];
        if close == "%}" {
            let word = inner
                .trim_start_matches('-')
                .trim_start()
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .next()
                .unwrap_or("");
            if BLOCKS.contains(&word) {
                tags += 1;
                if tags > MAX_NESTING {
                    return Some(("tags", line));
                }
            } else if word
                .strip_prefix("end")
                .is_some_and(|w| BLOCKS.contains(&w))
            {
                tags = tags.saturating_sub(1);
            }
        }
        if close != "#}" && brackets(inner) > MAX_NESTING {
            return Some(("brackets", line + inner.matches('\n').count()));
        }
        line += inner.matches('\n').count();
        rest = &rest[inner_start + len + close.len()..];
    }
    None
}

/// The deepest nesting of `(` and `[` in an expression, outside quotes.
fn brackets(expr: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut quote: Option<char> = None;
    for c in expr.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'' | '`') => quote = Some(c),
            (None, '(' | '[') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (None, ')' | ']') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_tags_and_brackets_are_measured() {
        let ifs = |n: usize| "{% if a %}\n".repeat(n) + &"{% endif %}".repeat(n);
        assert_eq!(too_deep(&ifs(MAX_NESTING)), None);
        assert_eq!(
            too_deep(&ifs(MAX_NESTING + 1)),
            Some(("tags", MAX_NESTING + 1))
        );
        let parens = |n: usize| format!("x\n{{{{ {}1{} }}}}", "(".repeat(n), ")".repeat(n));
        assert_eq!(too_deep(&parens(MAX_NESTING)), None);
        assert_eq!(too_deep(&parens(MAX_NESTING + 1)), Some(("brackets", 2)));
        // Siblings do not nest; quoted brackets and comments do not count.
        assert_eq!(too_deep(&"{% if a %}{% endif %}".repeat(1000)), None);
        assert_eq!(
            too_deep(&format!("{{{{ \"{}\" }}}}", "(".repeat(500))),
            None
        );
        assert_eq!(too_deep(&format!("{{# {} #}}", "(".repeat(500))), None);
    }

    /// What the limit allows parses on a thread with a small stack (the
    /// preview server rebuilds on one).
    #[test]
    fn the_deepest_accepted_template_parses_on_a_small_stack() {
        let n = MAX_NESTING;
        let text = "{% for x in y %}{% if a %}".repeat(n / 2)
            + &format!("{{{{ {}1{} }}}}", "(".repeat(n), ")".repeat(n))
            + &"{% endif %}{% endfor %}".repeat(n / 2);
        assert_eq!(too_deep(&text), None);
        let parsed = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let mut tera = tera::Tera::default();
                tera.add_raw_template("t.html", &text).is_ok()
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(parsed);
    }
}
