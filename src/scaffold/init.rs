//! `basepress init [DIR] [--languages es,pt,en]`: a minimal project that
//! passes every check, so `basepress build` publishes it at once.

use super::create_file;
use crate::diagnostics::{rule, Diagnostic};
use std::path::{Path, PathBuf};

/// The language of a project when `--languages` is not given.
pub const DEFAULT_LANGUAGE: &str = "en";

/// The release the new project's image data and base start at.
const FIRST_RELEASE: &str = "1.0.0";

const IMAGE_DATA: &str = include_str!("files/image-releases.yaml");
const BASE: &[(&str, &str)] = &[
    (
        "kustomization.yaml",
        include_str!("files/base/kustomization.yaml"),
    ),
    ("namespace.yaml", include_str!("files/base/namespace.yaml")),
    (
        "deployment.yaml",
        include_str!("files/base/deployment.yaml"),
    ),
    ("config.env", include_str!("files/base/config.env")),
];

/// The start page, by language; other languages get the English one.
const INDEX: &[(&str, &str)] = &[
    ("en", include_str!("files/index.en.md")),
    ("es", include_str!("files/index.es.md")),
    ("pt", include_str!("files/index.pt.md")),
];

/// What the language switcher calls a language, for common codes; any
/// other is named by its code until site.yaml says otherwise.
const NAMES: &[(&str, &str)] = &[
    ("ca", "Català"),
    ("da", "Dansk"),
    ("de", "Deutsch"),
    ("en", "English"),
    ("es", "Español"),
    ("fi", "Suomi"),
    ("fr", "Français"),
    ("it", "Italiano"),
    ("ja", "日本語"),
    ("ko", "한국어"),
    ("nl", "Nederlands"),
    ("no", "Norsk"),
    ("pl", "Polski"),
    ("pt", "Português"),
    ("sv", "Svenska"),
    ("tr", "Türkçe"),
    ("uk", "Українська"),
    ("zh", "中文"),
];

/// What `init` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// The project folder.
    pub dir: PathBuf,
    /// The default language (the first one given).
    pub default_language: String,
    /// Every file written, relative to `dir`, in the order written.
    pub files: Vec<PathBuf>,
    /// Languages without built-in interface strings, which got an English
    /// `i18n/<lang>.yaml` to translate.
    pub strings_to_translate: Vec<String>,
}

/// Writes a new project into `dir`, which must not exist or be empty (a
/// lone `.git` is allowed), with `languages` (the first is the default).
pub fn init(dir: &Path, languages: &[String]) -> Result<Created, Diagnostic> {
    let languages = check_languages(languages)?;
    check_folder(dir)?;
    let default = languages[0].clone();
    let mut files: Vec<(PathBuf, String)> = vec![
        (PathBuf::from("site.yaml"), site_yaml(&languages)),
        (PathBuf::from("image-releases.yaml"), IMAGE_DATA.to_string()),
        (
            PathBuf::from(".gitignore"),
            // The output, and what a build keeps beside it (the spare it
            // recycles, its staging folder while it runs).
            "/site/\n/.site.basepress-*/\n".to_string(),
        ),
    ];
    let base = Path::new("bases").join(format!("v{FIRST_RELEASE}"));
    for (name, text) in BASE {
        files.push((base.join(name), text.to_string()));
    }
    let mut strings_to_translate = Vec::new();
    for lang in &languages {
        let primary = lang.split('-').next().unwrap_or(lang);
        let index = INDEX
            .iter()
            .find(|(code, _)| *code == primary)
            .map_or(INDEX[0].1, |(_, text)| *text);
        files.push((
            Path::new("content").join(lang).join("index.md"),
            index.replace("{{LANG}}", lang),
        ));
        if crate::load::i18n::built_in_source(lang).is_none() {
            let english = crate::load::i18n::built_in_source(DEFAULT_LANGUAGE).unwrap_or_default();
            files.push((
                Path::new(crate::load::i18n::DIR).join(format!("{lang}.yaml")),
                strings_file(lang, english),
            ));
            strings_to_translate.push(lang.clone());
        }
    }
    let mut written = Vec::with_capacity(files.len());
    for (rel, text) in files {
        create_file(rule::INIT_INVALID, &dir.join(&rel), text.as_bytes())?;
        written.push(rel);
    }
    Ok(Created {
        dir: dir.to_path_buf(),
        default_language: default,
        files: written,
        strings_to_translate,
    })
}

/// The language codes, checked: plain tags, each once, at least one.
fn check_languages(languages: &[String]) -> Result<Vec<String>, Diagnostic> {
    let codes: Vec<String> = languages
        .iter()
        .flat_map(|l| l.split(','))
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect();
    if codes.is_empty() {
        return Err(
            Diagnostic::new(rule::INIT_INVALID, "`--languages` names no language")
                .help("list language codes separated by commas: `--languages es,pt,en`"),
        );
    }
    let mut seen = std::collections::BTreeSet::new();
    for code in &codes {
        let plain = code.len() <= 35
            && code.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !code.starts_with('-')
            && !code.ends_with('-');
        if !plain {
            return Err(Diagnostic::new(
                rule::INIT_INVALID,
                format!("`{code}` is not a language code"),
            )
            .help("use codes such as `en`, `de` or `pt-BR`: letters, digits and `-`"));
        }
        if !seen.insert(code.to_ascii_lowercase()) {
            return Err(Diagnostic::new(
                rule::INIT_INVALID,
                format!("language `{code}` is listed twice"),
            )
            .help("list each language once; the first is the default"));
        }
    }
    Ok(codes)
}

/// Refuses a folder with anything in it but `.git`, and a path that is
/// not a folder.
fn check_folder(dir: &Path) -> Result<(), Diagnostic> {
    let shown = dir.display();
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(Diagnostic::new(
                rule::INIT_INVALID,
                format!("cannot read {shown}: {e}"),
            ))
        }
        Ok(m) if !m.is_dir() => {
            return Err(Diagnostic::new(
                rule::INIT_INVALID,
                format!("{shown} exists and is not a folder"),
            )
            .help("name a new folder: `basepress init my-docs`"))
        }
        Ok(_) => {}
    }
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Diagnostic::new(rule::INIT_INVALID, format!("cannot read {shown}: {e}")))?;
    let mut found: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".git")
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    found.sort();
    let more = found.len().saturating_sub(5);
    found.truncate(5);
    let mut listed = found
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if more > 0 {
        listed.push_str(&format!(" and {more} more"));
    }
    Err(Diagnostic::new(
        rule::INIT_INVALID,
        format!(
            "{shown} is not empty ({listed}): init writes a new project only into an empty folder"
        ),
    )
    .help("name a new folder (`basepress init my-docs`), or empty this one first"))
}

fn site_yaml(languages: &[String]) -> String {
    let mut s = String::from(
        "# basepress settings; README.md (\"site.yaml\") lists every key.\n\
         title: Example app\n\
         # Where the site is served: its path, if any, prefixes every URL.\n\
         base_url: https://docs.example.com\n",
    );
    s.push_str(&format!("default_language: {}\n", languages[0]));
    s.push_str("# In the order the language switcher shows them.\nlanguages:\n");
    for code in languages {
        let primary = code.split('-').next().unwrap_or(code);
        let name = NAMES
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(primary))
            .map_or(code.as_str(), |(_, n)| *n);
        s.push_str(&format!(
            "  - code: {code}\n    name: {}\n",
            yaml_string(name)
        ));
    }
    s.push_str(
        "image:\n  \
         # The image the bases deploy, without registry or tag.\n  \
         name: example-app\n  \
         # What each release of the image contains: the checks read it.\n  \
         releases: image-releases.yaml\n",
    );
    s
}

/// A YAML scalar for a language name: plain when it is letters and spaces.
fn yaml_string(s: &str) -> String {
    if s.chars().all(|c| c.is_alphanumeric() || c == ' ') {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

/// The English strings as the start of `lang`'s, with a note to translate.
fn strings_file(lang: &str, english: &str) -> String {
    let body: String = english
        .lines()
        .skip_while(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    format!(
        "# Interface strings in `{lang}`: basepress has none built in for it, so\n\
         # these start as the English ones. Translate each value.\n{body}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_are_split_and_checked() {
        let got = check_languages(&["es, pt".into(), "en".into()]).unwrap();
        assert_eq!(got, ["es", "pt", "en"]);
        assert!(check_languages(&[]).is_err());
        assert!(check_languages(&["es,ES".into()]).is_err());
        assert!(check_languages(&["../x".into()]).is_err());
        assert!(check_languages(&["pt-BR".into()]).is_ok());
    }

    #[test]
    fn refuses_a_folder_with_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        assert!(check_folder(dir.path()).is_ok());
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        let d = check_folder(dir.path()).unwrap_err();
        assert_eq!(d.rule.id, "init-invalid");
        assert!(d.message.contains("`notes.txt`"), "{}", d.message);
        assert!(check_folder(&dir.path().join("notes.txt")).is_err());
        assert!(check_folder(&dir.path().join("new")).is_ok());
    }

    #[test]
    fn strings_of_a_new_language_start_from_english() {
        let text = strings_file("de", crate::load::i18n::built_in_source("en").unwrap());
        assert!(text.starts_with("# Interface strings in `de`"));
        assert!(text.contains("skip: \"Skip to content\""));
    }
}
