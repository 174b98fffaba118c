//! The code a translated page shows is the code of the page in the
//! default language: a translation that drops a line of a command (the
//! signature check of the download) or changes a value gives its readers
//! other instructions. Only the words around the code are translated:
//! comments and `<placeholders>` may differ.

use super::Context;
use crate::diagnostics::{rule, Diagnostic, Location};
use crate::model::document::CodeBlock;

/// A page in another language than the default, against the page at the
/// same place in the default language (when both show code).
pub fn check_page(ctx: &Context, i: usize) -> Vec<Diagnostic> {
    let site = ctx.site;
    let (Some(page), Some(doc)) = (site.pages.get(i), ctx.analysis.docs.get(i)) else {
        return Vec::new();
    };
    let default = site.config.default_language.as_str();
    if page.lang == default || page.fallback_from.is_some() {
        return Vec::new();
    }
    let original = ctx
        .analysis
        .graph
        .by_rel
        .get(&(page.version, page.rel.clone()))
        .into_iter()
        .flatten()
        .copied()
        .find(|&j| {
            site.pages
                .get(j)
                .is_some_and(|p| p.lang == default && p.fallback_from.is_none())
        });
    let Some((original, theirs)) =
        original.and_then(|j| Some((site.pages.get(j)?, ctx.analysis.docs.get(j)?)))
    else {
        return Vec::new();
    };
    let (ours, theirs) = (&doc.code_blocks, &theirs.code_blocks);
    // A translation that shows no code yet is a stub, not a drift.
    if ours.is_empty() || theirs.is_empty() {
        return Vec::new();
    }
    let at_block = |b: &CodeBlock| Location::at(&page.source, b.line.saturating_sub(1).max(1), 1);
    let help = format!(
        "show the same code as {} (translate only its comments and `<placeholders>`), or change both",
        original.source.display()
    );
    if ours.len() != theirs.len() {
        let at = ours
            .get(theirs.len())
            .or(ours.last())
            .map_or_else(|| Location::file(&page.source), at_block);
        return vec![Diagnostic::new(
            rule::DOC_TRANSLATION_CODE_DIFFERS,
            format!(
                "this page shows {} code blocks and its {default} original {} shows {}: a reader of one language gets other steps",
                ours.len(),
                original.source.display(),
                theirs.len()
            ),
        )
        .at(at)
        .help(help)];
    }
    let mut out = Vec::new();
    for (n, (a, b)) in ours.iter().zip(theirs).enumerate() {
        let (mine, orig) = (lines(a), lines(b));
        if a.lang == b.lang && a.attrs == b.attrs && mine == orig {
            continue;
        }
        let differs = mine
            .iter()
            .zip(&orig)
            .position(|(x, y)| x.1 != y.1)
            .unwrap_or(mine.len().min(orig.len()));
        let (at, why) = match (mine.get(differs), orig.get(differs)) {
            (Some((row, line)), Some((_, want))) => (
                Location::at(&page.source, a.line + row, 1 + a.indent),
                format!("`{}` where it has `{}`", clip(line), clip(want)),
            ),
            (Some((row, line)), None) => (
                Location::at(&page.source, a.line + row, 1 + a.indent),
                format!("`{}`, which it does not have", clip(line)),
            ),
            (None, Some((_, want))) => (at_block(a), format!("no `{}`, which it has", clip(want))),
            // The same lines: the language or the info string differs.
            (None, None) => (
                at_block(a),
                format!("`{}` where it has `{}`", info(a), info(b)),
            ),
        };
        out.push(
            Diagnostic::new(
                rule::DOC_TRANSLATION_CODE_DIFFERS,
                format!(
                    "code block {} differs from the same block of its {default} original {} (line {}): {why}",
                    n + 1,
                    original.source.display(),
                    b.line
                ),
            )
            .at(at)
            .help(help.clone()),
        );
    }
    out
}

/// A block's lines as compared: each with its row in the block, without
/// comments, `<placeholders>` and trailing blanks, blank lines left out.
fn lines(block: &CodeBlock) -> Vec<(usize, String)> {
    block
        .code
        .lines()
        .enumerate()
        .filter_map(|(row, line)| {
            let line = placeholders(without_comment(line));
            let line = line.trim_end();
            (!line.is_empty()).then(|| (row, line.to_string()))
        })
        .collect()
}

/// The line without a comment: from a `#` (or `//`) that starts it or
/// follows a blank, outside quotes.
fn without_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut before = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') if before.is_whitespace() => return &line[..i],
            (None, '/') if before.is_whitespace() && line[i..].starts_with("//") => {
                return &line[..i]
            }
            _ => {}
        }
        before = c;
    }
    line
}

/// The line with each `<placeholder>` as `<>`: the reader fills it in, in
/// any language.
fn placeholders(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('<') {
        let Some(close) = rest[open..].find('>').map(|c| open + c) else {
            break;
        };
        let inner = &rest[open + 1..close];
        let word = !inner.is_empty()
            && !inner.starts_with(['<', ' ', '/', '!', '='])
            && !inner.contains(['<', '\n']);
        out.push_str(&rest[..open]);
        out.push_str(if word { "<>" } else { &rest[open..=close] });
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

fn info(b: &CodeBlock) -> String {
    let mut words = vec![b.lang.clone()];
    words.extend(b.attrs.iter().map(|(k, v)| format!("{k}={v}")));
    words.join(" ").trim().to_string()
}

fn clip(line: &str) -> String {
    let line = line.trim();
    match line.chars().count() > 60 {
        true => format!("{}…", line.chars().take(60).collect::<String>()),
        false => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(code: &str) -> CodeBlock {
        CodeBlock {
            lang: "sh".into(),
            attrs: Vec::new(),
            code: code.into(),
            line: 1,
            indent: 0,
        }
    }

    /// Comments, placeholders and blank lines are the translator's; every
    /// other character is the command's.
    #[test]
    fn only_comments_and_placeholders_may_differ() {
        let same = |a: &str, b: &str| {
            lines(&block(a))
                .iter()
                .map(|l| l.1.clone())
                .eq(lines(&block(b)).iter().map(|l| l.1.clone()))
        };
        assert!(same(
            "VERSION=1.30.0   # the image tag\n\ncurl -O \"$BASE/x\"  # download\n",
            "VERSION=1.30.0   # el tag de la imagen\ncurl -O \"$BASE/x\"\n"
        ));
        assert!(same("TOKEN=<your-token> # set it", "TOKEN=<tu-token>"));
        assert!(same("echo \"a # b\"", "echo \"a # b\" # comment"));
        assert!(same(
            "open https://x.org/#anchor",
            "open https://x.org/#anchor"
        ));
        assert!(!same("echo \"a # b\"", "echo \"a # c\""));
        assert!(!same("curl -f x", "curl x"));
        assert!(!same("a && b", "a"));
        // Not placeholders: redirections and comparisons.
        assert!(!same("cmd < in > out", "cmd < other > out"));
    }
}
