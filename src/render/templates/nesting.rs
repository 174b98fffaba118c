//! How deep a template's text nests, measured before the template engine
//! parses it: its parser descends once per nested tag (`{% if %}` inside
//! `{% for %}` …), per nested bracket and per operator of an expression,
//! and 20,000 nested `{% if %}` (or `1 + 1 + …` 20,000 times) overflowed
//! the stack of `basepress check`. And how many times its loops over
//! literal ranges run, which the engine would run to the end however
//! long it takes.

/// The deepest nesting of block tags, and of brackets in one expression,
/// accepted.
pub const MAX_NESTING: usize = 64;

/// The most operators one expression may chain (`a + b + …`, `x and y
/// and …`).
pub const MAX_OPERATORS: usize = 256;

/// The most steps loops over literal ranges may make, nested ones
/// multiplied (`range(end=1000)` in `range(end=1000)` is 1,000,000).
pub const MAX_STEPS: u64 = 1_000_000;

/// Tags that open a block closed by `end<tag>`.
const BLOCKS: &[&str] = &["if", "for", "block", "macro", "filter", "raw"];

/// What of `text` passes a limit, when something does: what, in words,
/// and the 1-based line where it is passed.
pub fn too_deep(text: &str) -> Option<(String, usize)> {
    let mut tags = 0usize;
    // The steps of each open block: a loop over a literal range's, 1 for
    // the others.
    let mut steps: Vec<u64> = Vec::new();
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
                    return Some((format!("nests tags more than {MAX_NESTING} deep"), line));
                }
                steps.push(if word == "for" { range_steps(inner) } else { 1 });
                let total = steps.iter().fold(1u64, |a, s| a.saturating_mul(*s));
                if total > MAX_STEPS {
                    return Some((
                        format!("loops over ranges {total} times, more than {MAX_STEPS}"),
                        line,
                    ));
                }
            } else if word
                .strip_prefix("end")
                .is_some_and(|w| BLOCKS.contains(&w))
            {
                tags = tags.saturating_sub(1);
                steps.pop();
            }
        }
        let at = line + inner.matches('\n').count();
        if close != "#}" && brackets(inner) > MAX_NESTING {
            return Some((format!("nests brackets more than {MAX_NESTING} deep"), at));
        }
        if close != "#}" && operators(inner) > MAX_OPERATORS {
            return Some((
                format!("chains more than {MAX_OPERATORS} operators in one expression"),
                at,
            ));
        }
        line += inner.matches('\n').count();
        rest = &rest[inner_start + len + close.len()..];
    }
    None
}

/// How many times a `for` tag's loop runs when it loops over a literal
/// range (`range(end=10)`, `range(start=2, end=10, step_by=2)`); 1 for
/// any other.
fn range_steps(tag: &str) -> u64 {
    let Some(args) = tag.split("range(").nth(1).and_then(|a| a.split(')').next()) else {
        return 1;
    };
    let arg = |name: &str| {
        args.split(',').find_map(|a| {
            let (k, v) = a.split_once('=')?;
            (k.trim() == name).then(|| v.trim().parse::<i64>().ok())?
        })
    };
    let (start, step) = (
        arg("start").unwrap_or(0),
        arg("step_by").unwrap_or(1).max(1),
    );
    match arg("end") {
        Some(end) => u64::try_from(end.saturating_sub(start).max(0) / step).unwrap_or(u64::MAX),
        None => 1,
    }
}

/// How many operators an expression chains, outside quotes: each run of
/// operator characters (`+`, `==`, `|`…) and each `and`, `or`, `not`,
/// `in`.
fn operators(expr: &str) -> usize {
    let mut count = 0usize;
    let mut quote: Option<char> = None;
    let mut in_operator = false;
    let mut word = String::new();
    let end_word = |word: &mut String, count: &mut usize| {
        if matches!(word.as_str(), "and" | "or" | "not" | "in") {
            *count += 1;
        }
        word.clear();
    };
    for c in expr.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => continue,
            (None, '"' | '\'' | '`') => quote = Some(c),
            _ => {}
        }
        let operator = quote.is_none() && "+-*/%~=!<>|".contains(c);
        if operator && !in_operator {
            count += 1;
        }
        in_operator = operator;
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            end_word(&mut word, &mut count);
        }
    }
    end_word(&mut word, &mut count);
    count
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
            too_deep(&ifs(MAX_NESTING + 1)).map(|p| p.1),
            Some(MAX_NESTING + 1)
        );
        let parens = |n: usize| format!("x\n{{{{ {}1{} }}}}", "(".repeat(n), ")".repeat(n));
        assert_eq!(too_deep(&parens(MAX_NESTING)), None);
        assert_eq!(too_deep(&parens(MAX_NESTING + 1)).map(|p| p.1), Some(2));
        // Siblings do not nest; quoted brackets and comments do not count.
        assert_eq!(too_deep(&"{% if a %}{% endif %}".repeat(1000)), None);
        assert_eq!(
            too_deep(&format!("{{{{ \"{}\" }}}}", "(".repeat(500))),
            None
        );
        assert_eq!(too_deep(&format!("{{# {} #}}", "(".repeat(500))), None);
    }

    #[test]
    fn long_expressions_and_long_loops_are_measured() {
        let chain = |n: usize, op: &str| format!("x\n{{{{ 1{} }}}}", format!(" {op} 1").repeat(n));
        assert_eq!(too_deep(&chain(MAX_OPERATORS, "+")), None);
        assert_eq!(
            too_deep(&chain(MAX_OPERATORS + 1, "+")).map(|p| p.1),
            Some(2)
        );
        assert!(too_deep(&chain(20_000, "and")).is_some());
        assert_eq!(
            too_deep(&format!("{{{{ \"{}\" }}}}", "+".repeat(5000))),
            None
        );
        let loops = |a: u64, b: u64| {
            format!("{{% for i in range(end={a}) %}}{{% for j in range(start=0, end={b}) %}}x{{% endfor %}}{{% endfor %}}")
        };
        assert_eq!(too_deep(&loops(1000, 1000)), None);
        assert!(too_deep(&loops(100_000, 100_000)).is_some());
        assert!(too_deep("{% for i in range(end=30000000) %}x{% endfor %}").is_some());
        // Loops over the site's data are as long as the site.
        assert_eq!(
            too_deep("{% for p in pages %}{% for q in pages %}{% endfor %}{% endfor %}"),
            None
        );
    }

    /// What the limit allows parses on a thread with a small stack (the
    /// preview server rebuilds on one).
    #[test]
    fn the_deepest_accepted_template_parses_on_a_small_stack() {
        let n = MAX_NESTING;
        let text = "{% for x in y %}{% if a %}".repeat(n / 2)
            + &format!("{{{{ {}1{} }}}}", "(".repeat(n), ")".repeat(n))
            + &format!("{{{{ 1{} }}}}", " + 1 and true".repeat(MAX_OPERATORS / 2))
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
