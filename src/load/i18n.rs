//! The interface strings of each language: the built-in ones (Spanish,
//! Portuguese, English) under the project's `i18n/<lang>.yaml`, which may
//! change some of them or give all of them for another language.

use super::{read_input, relative, walk_files};
use crate::diagnostics::{rule, Diagnostic, Location};
use crate::model::config::Config;
use crate::model::i18n::{Strings, KEYS};
use crate::yaml;
use std::collections::BTreeMap;
use std::path::Path;

/// The folder of a project's interface strings.
pub const DIR: &str = "i18n";

/// The built-in strings, by language code.
const BUILT_IN: &[(&str, &str)] = &[
    ("es", include_str!("i18n/es.yaml")),
    ("pt", include_str!("i18n/pt.yaml")),
    ("en", include_str!("i18n/en.yaml")),
];

/// The built-in strings of `lang` (`pt-BR` takes Portuguese's), if any.
fn built_in(lang: &str) -> Option<BTreeMap<String, String>> {
    let base = lang.split('-').next().unwrap_or(lang);
    let (_, text) = BUILT_IN
        .iter()
        .find(|(code, _)| code.eq_ignore_ascii_case(base))?;
    yaml::from_str(text).ok()
}

/// The text of the built-in strings file of `lang` (`pt-BR` takes
/// Portuguese's), when basepress has one: `basepress init` starts a
/// language without built-in strings from the English file.
pub fn built_in_source(lang: &str) -> Option<&'static str> {
    let base = lang.split('-').next().unwrap_or(lang);
    BUILT_IN
        .iter()
        .find(|(code, _)| code.eq_ignore_ascii_case(base))
        .map(|(_, text)| *text)
}

/// Every language's strings, complete; a finding for each unknown key,
/// each file that is not a language of the site and each language that
/// lacks strings.
pub fn load(
    root: &Path,
    config: &Config,
    diagnostics: &mut Vec<Diagnostic>,
) -> BTreeMap<String, Strings> {
    let mut project: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (path, name) in walk_files(root, &root.join(DIR), diagnostics) {
        let source = relative(root, &path);
        let Some(code) = name.strip_suffix(".yaml") else {
            diagnostics.push(
                Diagnostic::new(
                    rule::I18N_INVALID,
                    format!("`{name}` is not a strings file (`<lang>.yaml`)"),
                )
                .in_file(&source),
            );
            continue;
        };
        if config.language(code).is_none() {
            diagnostics.push(
                Diagnostic::new(
                    rule::I18N_INVALID,
                    format!("`{code}` is not a language listed in site.yaml"),
                )
                .in_file(&source)
                .help("name the file after a language code of site.yaml, or add the language"),
            );
            continue;
        }
        let text = match read_input(root, &path).map(String::from_utf8) {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => {
                // Where the first bad byte is, as for every other input.
                let bytes = e.as_bytes();
                diagnostics.push(crate::input::utf8_error(
                    bytes,
                    &e.utf8_error(),
                    &source,
                    rule::I18N_INVALID,
                ));
                continue;
            }
            Err(d) => {
                diagnostics.push(d);
                continue;
            }
        };
        match parse(&text, &source) {
            Ok((strings, unknown)) => {
                // The strings it gives count, unknown keys or not, so that
                // what it lacks is told as lacking from it.
                diagnostics.extend(unknown);
                project.insert(code.to_string(), strings);
            }
            Err(d) => diagnostics.push(d),
        }
    }

    let mut out = BTreeMap::new();
    for lang in &config.languages {
        let own = project.remove(&lang.code);
        let mut strings = built_in(&lang.code).unwrap_or_default();
        let has_own = own.is_some();
        strings.extend(own.unwrap_or_default());
        // Strings added after a project may have written its own file are
        // taken in English, with a warning, rather than failing a build
        // that passed before.
        let later: Vec<&str> = ADDED_LATER
            .iter()
            .copied()
            .filter(|k| has_own && !strings.contains_key(*k))
            .collect();
        if !later.is_empty() {
            let english = built_in("en").unwrap_or_default();
            for k in &later {
                if let Some(text) = english.get(*k) {
                    strings.insert(k.to_string(), text.clone());
                }
            }
            let mut d = Diagnostic::new(
                rule::I18N_INVALID,
                format!(
                    "{DIR}/{}.yaml lacks the interface strings {}, added in a later basepress: they are shown in English",
                    lang.code,
                    later.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ),
            )
            .in_file(format!("{DIR}/{}.yaml", lang.code))
            .help(format!("add `{}: …` in {}'s own words", later[0], lang.name));
            d.severity = crate::diagnostics::Severity::Warning;
            diagnostics.push(d);
        }
        let missing: Vec<&str> = KEYS
            .iter()
            .copied()
            .filter(|k| !strings.contains_key(*k))
            .collect();
        if !missing.is_empty() {
            let file = format!("{DIR}/{}.yaml", lang.code);
            let what = if has_own {
                format!("{file} lacks")
            } else {
                format!(
                    "basepress has no built-in strings for `{}`, and there is no {file} with",
                    lang.code
                )
            };
            diagnostics.push(
                Diagnostic::new(
                    rule::I18N_INVALID,
                    format!(
                        "{what} the interface strings {}",
                        missing
                            .iter()
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
                .in_file(file)
                .help(format!(
                    "add `{}: …` (and the others) in {}'s own words; `basepress init --languages {}` in an empty folder writes an i18n/{}.yaml with every string",
                    missing[0], lang.name, lang.code, lang.code
                )),
            );
        }
        out.insert(lang.code.clone(), Strings(strings));
    }
    out
}

/// Strings basepress added after projects could have written their own
/// strings files (stop 33): a file without them still builds.
const ADDED_LATER: &[&str] = &["not_in_language", "to_latest_home"];

/// A strings file: a mapping of known keys to text, and a finding for
/// each key that is no interface string (left out).
fn parse(
    text: &str,
    source: &Path,
) -> Result<(BTreeMap<String, String>, Vec<Diagnostic>), Diagnostic> {
    let at = |line: Option<usize>, column: Option<usize>| match (line, column) {
        (Some(l), Some(c)) => Location::at(source, l, c),
        _ => Location::file(source),
    };
    let strings: BTreeMap<String, String> = yaml::from_str(text).map_err(|e| {
        Diagnostic::new(rule::I18N_INVALID, e.message)
            .at(at(e.line, e.column))
            .help("write one `key: text` line per string")
    })?;
    let positions = yaml::documents_with_positions(text)
        .ok()
        .and_then(|d| d.into_iter().next())
        .map(|d| d.positions)
        .unwrap_or_default();
    let mut unknown = Vec::new();
    for key in strings.keys().filter(|k| !KEYS.contains(&k.as_str())) {
        let (l, c) = positions
            .get(&format!("/{}", yaml::pointer_segment(key)))
            .map_or((None, None), |(l, c)| (Some(l), Some(c)));
        let mut d = Diagnostic::new(
            rule::I18N_INVALID,
            format!("`{key}` is not an interface string"),
        )
        .at(at(l, c));
        if let Some(k) = crate::diagnostics::closest(key, KEYS.iter().copied()) {
            d = d.help(format!("did you mean `{k}`?"));
        }
        unknown.push(d);
    }
    let known = strings
        .into_iter()
        .filter(|(k, _)| KEYS.contains(&k.as_str()))
        .collect();
    Ok((known, unknown))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_languages_have_every_string() {
        for (code, _) in BUILT_IN {
            let s = built_in(code).expect("parses");
            for k in KEYS {
                assert!(s.contains_key(*k), "{code} lacks {k}");
            }
            assert_eq!(s.len(), KEYS.len(), "{code} has unknown keys");
        }
        assert!(built_in("pt-BR").is_some());
        assert!(built_in("de").is_none());
    }

    #[test]
    fn unknown_keys_are_located() {
        let (known, unknown) = parse("menu: Menü\nmenue: x\n", Path::new("i18n/de.yaml")).unwrap();
        assert_eq!(known.len(), 1, "the known keys are kept");
        let e = unknown.into_iter().next().unwrap();
        assert_eq!(e.rule.id, "strings-invalid");
        let loc = e.location.unwrap();
        assert_eq!((loc.line, loc.column), (Some(2), Some(1)));
        assert!(e.help.unwrap().contains("`menu`"));
    }
}
