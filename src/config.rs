//! `site.yaml`: the few settings of a docs project.

use crate::diagnostics::{rule, Diagnostic, Location};
use crate::yaml;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "site.yaml";

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The site's title, shown in the header and in page titles.
    pub title: String,
    /// Where the site is served, e.g. `https://docs.example.com`; its path
    /// (if any) prefixes every URL of the site.
    pub base_url: String,
    /// The language `/` sends readers to; must be one of `languages`.
    pub default_language: String,
    /// Languages in the order the switcher shows them.
    pub languages: Vec<Language>,
    /// The product image that the bases deploy.
    pub image: ImageConfig,
    /// Whether a page of the default language missing in another language
    /// is a warning (`optional`, the default) or an error (`required`).
    #[serde(default)]
    pub translations: Translations,
    /// Rules downgraded or silenced, each with a reason.
    #[serde(default)]
    pub exceptions: Vec<Exception>,
    /// Who signs the releases (`identity`, `namespace`, `public_key`);
    /// releases are unsigned without it.
    #[serde(default)]
    pub signing: Option<crate::signing::SigningConfig>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Translations {
    #[default]
    Optional,
    Required,
}

/// A rule downgraded or silenced, for some bases or all of them.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Exception {
    /// The rule id (`basepress rules` lists them).
    pub rule: String,
    /// Base folders it applies to (`v1.29.0`); every finding of the rule
    /// when empty.
    #[serde(default)]
    pub bases: Vec<String>,
    /// `warning` to report without failing, `off` to drop the finding.
    pub severity: ExceptionSeverity,
    /// Why: shown with every finding it downgrades. Required.
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExceptionSeverity {
    Warning,
    Off,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Language {
    /// Language code, used in URLs and `lang` attributes (`es`, `pt-BR`).
    pub code: String,
    /// Its name in its own language, for the switcher.
    pub name: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ImageConfig {
    /// The image name the bases use, without registry or tag.
    pub name: String,
    /// The image release data file, relative to the project root.
    pub releases: PathBuf,
}

impl Config {
    /// URL path prefix taken from `base_url` (`""` for a site at the root
    /// of its host), without a trailing slash.
    pub fn path_prefix(&self) -> String {
        let rest = self
            .base_url
            .split_once("://")
            .map(|(_, r)| r)
            .unwrap_or(&self.base_url);
        let path = rest.find('/').map(|i| &rest[i..]).unwrap_or("");
        path.trim_end_matches('/').to_string()
    }

    pub fn language(&self, code: &str) -> Option<&Language> {
        self.languages.iter().find(|l| l.code == code)
    }
}

/// Reads and validates `ROOT/site.yaml`.
pub fn load(root: &Path) -> Result<Config, Diagnostic> {
    let path = root.join(FILE_NAME);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        Diagnostic::new(
            rule::CONFIG_INVALID,
            format!("cannot read {FILE_NAME}: {e}"),
        )
        .in_file(FILE_NAME)
        .help(format!(
            "run basepress in a docs project (a folder with {FILE_NAME}), or pass --root DIR"
        ))
    })?;
    let config: Config = yaml::from_str(&text).map_err(|e| {
        let loc = match (e.line, e.column) {
            (Some(l), Some(c)) => Location::at(FILE_NAME, l, c),
            _ => Location::file(FILE_NAME),
        };
        Diagnostic::new(rule::CONFIG_INVALID, e.message).at(loc)
    })?;
    validate(&config, &text)?;
    Ok(config)
}

fn validate(config: &Config, text: &str) -> Result<(), Diagnostic> {
    let fail = |needle: &str, msg: String| {
        let loc = yaml::locate_scalar(text, needle)
            .map(|(l, c)| Location::at(FILE_NAME, l, c))
            .unwrap_or_else(|| Location::file(FILE_NAME));
        Diagnostic::new(rule::CONFIG_INVALID, msg).at(loc)
    };
    if config.languages.is_empty() {
        return Err(fail(
            "languages",
            "`languages` is empty: list at least one".into(),
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for lang in &config.languages {
        let ok = !lang.code.is_empty()
            && lang
                .code
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !lang.code.starts_with('-');
        if !ok {
            return Err(fail(
                &lang.code,
                format!(
                    "language code `{}` is not a plain language tag (letters, digits, `-`)",
                    lang.code
                ),
            ));
        }
        if !seen.insert(lang.code.as_str()) {
            return Err(fail(
                &lang.code,
                format!("language `{}` is listed twice", lang.code),
            ));
        }
    }
    if config.language(&config.default_language).is_none() {
        return Err(fail(
            &config.default_language,
            format!(
                "default_language `{}` is not one of `languages`",
                config.default_language
            ),
        ));
    }
    for e in &config.exceptions {
        match crate::diagnostics::rule::by_id(&e.rule) {
            None => {
                return Err(fail(
                    &e.rule,
                    format!(
                        "exception names `{}`, which is not a rule (see `basepress rules`)",
                        e.rule
                    ),
                ))
            }
            Some(r) if r.class == crate::diagnostics::Class::Input => {
                return Err(fail(
                    &e.rule,
                    format!(
                        "`{}` is about unreadable input and cannot be excepted",
                        e.rule
                    ),
                ))
            }
            Some(_) => {}
        }
        if e.reason.trim().is_empty() {
            return Err(fail(
                &e.rule,
                format!("the exception for `{}` needs a `reason`", e.rule),
            ));
        }
    }
    if let Some(signing) = &config.signing {
        crate::signing::validate_config(signing).map_err(|(needle, msg)| fail(&needle, msg))?;
    }
    let name = &config.image.name;
    if name.is_empty() || name.contains([':', '@', '/']) {
        return Err(fail(
            name,
            format!("image name `{name}` must be a bare name, without registry, tag or digest"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(base_url: &str) -> Config {
        Config {
            title: "t".into(),
            base_url: base_url.into(),
            default_language: "es".into(),
            languages: vec![],
            image: ImageConfig {
                name: "x".into(),
                releases: "r.yaml".into(),
            },
            exceptions: vec![],
            translations: Translations::Optional,
            signing: None,
        }
    }

    #[test]
    fn path_prefix_comes_from_base_url() {
        assert_eq!(config("https://docs.example.com").path_prefix(), "");
        assert_eq!(config("https://docs.example.com/").path_prefix(), "");
        assert_eq!(
            config("https://x.org/agent/docs/").path_prefix(),
            "/agent/docs"
        );
    }
}
