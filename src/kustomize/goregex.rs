//! Regular expressions as Kustomize reads them: Go's RE2 syntax, compiled
//! with the `regex` crate.
//!
//! The two dialects agree on most of the syntax; where they differ, the
//! pattern is rewritten to mean what Go makes of it: `\d`, `\w`, `\s` and
//! `\b` are ASCII in Go (Unicode in Rust), `\Q…\E` quotes text, `&&`, `--`
//! and `~~` in a class are the characters themselves (set operations in
//! Rust), and the `x` flag does not exist in Go.

use regex::Regex;

/// Compiles a Go regular expression (`pattern`, inserted into `template`
/// at `{}`, which must be Rust syntax already).
pub fn compile(template: &str, pattern: &str) -> Result<Regex, String> {
    let translated = translate(pattern)?;
    Regex::new(&template.replacen("{}", &translated, 1)).map_err(|e| e.to_string())
}

/// `pattern` in Rust's syntax, meaning what it means in Go.
fn translate(pattern: &str) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    // Inside a character class: how many characters since its `[` (a `]`
    // first, or after `^`, is a literal).
    let mut class: Option<usize> = None;
    while let Some(c) = chars.next() {
        match (c, class) {
            ('\\', _) => {
                let Some(e) = chars.next() else {
                    return Err("trailing backslash at end of expression".into());
                };
                let inside = class.is_some();
                let replacement = match (e, inside) {
                    ('d', false) => Some("[0-9]"),
                    ('D', false) => Some("[^0-9]"),
                    ('w', false) => Some("[0-9A-Za-z_]"),
                    ('W', false) => Some("[^0-9A-Za-z_]"),
                    ('s', false) => Some("[\\t\\n\\f\\r ]"),
                    ('S', false) => Some("[^\\t\\n\\f\\r ]"),
                    ('d', true) => Some("0-9"),
                    ('w', true) => Some("0-9A-Za-z_"),
                    ('s', true) => Some("\\t\\n\\f\\r "),
                    ('b', false) => Some("(?-u:\\b)"),
                    ('B', false) => Some("(?-u:\\B)"),
                    _ => None,
                };
                if let Some(r) = replacement {
                    out.push_str(r);
                } else if e == 'Q' && !inside {
                    // Literal text up to `\E` or the end.
                    let mut quoted = String::new();
                    while let Some(q) = chars.next() {
                        if q == '\\' && chars.peek() == Some(&'E') {
                            chars.next();
                            break;
                        }
                        quoted.push(q);
                    }
                    out.push_str(&regex::escape(&quoted));
                } else {
                    out.push('\\');
                    out.push(e);
                }
                if let Some(n) = class.as_mut() {
                    *n += 1;
                }
            }
            ('[', None) => {
                out.push('[');
                if chars.peek() == Some(&'^') {
                    chars.next();
                    out.push('^');
                }
                class = Some(0);
            }
            (']', Some(n)) if n > 0 => {
                out.push(']');
                class = None;
            }
            ('[', Some(n)) if chars.peek() == Some(&':') => {
                // `[:alpha:]`: the same in both.
                out.push('[');
                for p in chars.by_ref() {
                    out.push(p);
                    if p == ']' {
                        break;
                    }
                }
                class = Some(n + 1);
            }
            ('[' | '&' | '-' | '~', Some(n)) => {
                // Literal in Go; in Rust a nested class or a set operation
                // when doubled: escaped, except a `-` between two
                // characters, a range in both.
                let doubled = chars.peek() == Some(&c);
                if c == '[' || doubled {
                    out.push('\\');
                }
                out.push(c);
                class = Some(n + 1);
            }
            ('(', None) if chars.peek() == Some(&'?') => {
                out.push('(');
                let rest: String = chars
                    .clone()
                    .take_while(|&f| f != ')' && f != ':')
                    .collect();
                if rest.contains('x') {
                    return Err(format!(
                        "invalid or unsupported Perl syntax: `(?{}`: Go has no `x` flag",
                        rest.trim_start_matches('?')
                    ));
                }
            }
            (c, Some(n)) => {
                out.push(c);
                class = Some(n + 1);
            }
            (c, None) => out.push(c),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::compile;

    #[test]
    fn go_syntax_means_what_it_means_in_go() {
        let m = |p: &str, s: &str| compile("^(?:{})$", p).unwrap().is_match(s);
        // ASCII classes.
        assert!(m(r"caf\w", "cafe") && !m(r"caf\w", "café"));
        assert!(m(r"app-\d", "app-3") && !m(r"app-\d", "app-٣"));
        assert!(m(r"a\sb", "a b") && !m(r"a\sb", "a\u{a0}b"));
        assert!(m(r"[\w.]+", "a.b_c") && !m(r"[\w.]+", "é"));
        assert!(m(r"\W", "é"));
        // Set operations of Rust are characters in Go.
        assert!(m("x[a&&b]", "x&") && m("x[a&&b]", "xa") && !m("x[a&&b]", "xc"));
        assert!(m("[a-c]", "b") && !m("[a-c]", "-"));
        assert!(m("[]a]", "]") && m("[^]a]", "b"));
        assert!(m("[[:digit:]x]", "7") && m("[[:digit:]x]", "x"));
        assert!(m(r"\Qa.b\E+", "a.bb") && !m(r"\Qa.b\E", "axb"));
        assert!(compile("{}", "(?x) a b ").is_err());
        assert!(compile("{}", "(?i)abc").unwrap().is_match("ABC"));
        assert!(compile("{}", r"a\").is_err());
    }
}
