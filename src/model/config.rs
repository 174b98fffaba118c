//! The settings of a docs project, as `site.yaml` gives them.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The settings file, at the project root.
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
    pub signing: Option<SigningConfig>,
    /// Where a page's source can be edited: a URL the page's path in the
    /// project (`content/es/install.md`) is appended to, e.g.
    /// `https://github.com/org/repo/edit/main/`. Pages show no edit link
    /// without it.
    #[serde(default)]
    pub edit_url: Option<String>,
    /// Versioned docs: present, `basepress release` freezes `content/` as
    /// the docs of the release's line.
    #[serde(default)]
    pub versions: Option<VersionsConfig>,
}

/// `signing:` in site.yaml: who signs the releases, and with which key.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SigningConfig {
    /// The signer's identity (`releases@example.com`): the principal of
    /// the `allowed_signers` line, which installers pass to `-I`.
    pub identity: String,
    /// The namespace prefix: version vX.Y.Z is signed in
    /// `NAMESPACE/vX.Y.Z`, which installers pass to `-n`.
    pub namespace: String,
    /// The public key, as in a `.pub` file (`ssh-ed25519 AAAA… comment`).
    pub public_key: String,
}

impl SigningConfig {
    /// The namespace signatures of `version` are made in.
    pub fn namespace_for(&self, version: &semver::Version) -> String {
        format!("{}/v{version}", self.namespace)
    }
}

/// How versioned docs are published.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct VersionsConfig {
    /// Publish the docs of the coming release at `/<lang>/next/`.
    #[serde(default = "yes")]
    pub next: bool,
    /// Keep the older versions out of search engines (`noindex`).
    #[serde(default)]
    pub noindex_older: bool,
}

fn yes() -> bool {
    true
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
    /// Where each release's image is (`oci:images/whystack-agent`,
    /// `registry://host/repo`), its tag being the base's version; the
    /// checks then read the image itself. `check --image` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
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
                source: None,
            },
            exceptions: vec![],
            translations: Translations::Optional,
            signing: None,
            edit_url: None,
            versions: None,
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
