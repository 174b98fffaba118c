//! The interface strings of the default templates and the site's script
//! (“Skip to content”, “Search…”), one set per language.
//!
//! They are data: built-in files for Spanish, Portuguese and English, and
//! `i18n/<lang>.yaml` in a project for any other language or to change
//! some of them. Loading makes sure every language has every string.

use serde::Serialize;
use std::collections::BTreeMap;

/// Every string a language must have, in the order the built-in files
/// list them.
pub const KEYS: &[&str] = &[
    "skip",
    "navigation",
    "on_this_page",
    "languages",
    "pager",
    "not_found",
    "untranslated",
    "menu",
    "search",
    "search_placeholder",
    "no_results",
    "results",
    "copy",
    "copied",
    "version",
    "versions",
    "versions_intro",
    "latest",
    "image_tag",
    "image",
    "files",
    "file",
    "download",
    "verify",
    "all_versions",
    "next",
    "unreleased",
    "older_notice",
    "next_notice",
    "to_latest",
    "to_latest_home",
    "not_in_version",
    "not_in_language",
    "snippet_tag",
    "snippet_verified",
    "note",
    "tip",
    "important",
    "warning",
    "caution",
    "more_results",
    "theme",
    "theme_auto",
    "theme_light",
    "theme_dark",
    "edit_page",
    "breadcrumbs",
    "search_shortcut",
];

/// One language's strings, by key; templates see them as `t.<key>`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Strings(pub BTreeMap<String, String>);

impl Strings {
    /// The string for `key` (every key of [`KEYS`] is there once loaded).
    pub fn get(&self, key: &str) -> &str {
        self.0.get(key).map_or("", String::as_str)
    }
}
