//! Reading `site.yaml` into a [`Config`].

use crate::diagnostics::{rule, Diagnostic, Location};
use crate::model::config::Config;
pub use crate::model::config::FILE_NAME;
use crate::yaml;
use std::path::Path;

/// Reads and validates `ROOT/site.yaml`.
pub fn load(root: &Path) -> Result<Config, Diagnostic> {
    let path = root.join(FILE_NAME);
    let bytes = crate::input::read_optional(root, &path)?.ok_or_else(|| {
        Diagnostic::new(
            rule::CONFIG_INVALID,
            format!("cannot read {FILE_NAME}: there is no such file"),
        )
        .in_file(FILE_NAME)
        .help(format!(
            "run basepress in a docs project (a folder with {FILE_NAME}), or pass --root DIR"
        ))
    })?;
    let text = crate::input::utf8(bytes, Path::new(FILE_NAME), rule::CONFIG_INVALID)?;
    let mut config: Config = yaml::from_str(&text).map_err(|e| {
        let loc = match (e.line, e.column) {
            (Some(l), Some(c)) => Location::at(FILE_NAME, l, c),
            _ => Location::file(FILE_NAME),
        };
        Diagnostic::new(rule::CONFIG_INVALID, e.message).at(loc)
    })?;
    validate(&config, &text)?;
    // `https://docs.example.com/` and `…/docs/` name the same site: without
    // the slash, `{{ site.base_url }}/kubernetes/…` never gets a `//`, which
    // object storage reads as another key.
    let trimmed = config.base_url.trim_end_matches('/').len();
    config.base_url.truncate(trimmed);
    // A page's source path is appended to `edit_url`: it names a folder.
    if let Some(url) = config.edit_url.as_mut().filter(|u| !u.ends_with('/')) {
        url.push('/');
    }
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
    if let Some(url) = &config.edit_url {
        let ok = (url.starts_with("https://") || url.starts_with("http://"))
            && !url.contains(char::is_whitespace);
        if !ok {
            return Err(fail(
                url,
                format!("edit_url `{url}` is not an http(s) URL (e.g. https://github.com/org/repo/edit/main/)"),
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
    let releases = &config.image.releases;
    if !crate::input::stays_inside(releases) {
        return Err(fail(
            &releases.to_string_lossy(),
            format!(
                "`image.releases` is `{}`, which is not a path inside the project",
                releases.display()
            ),
        )
        .help("name the image data file relative to the project folder, without `..` (e.g. `image-releases.yaml`)"));
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

    #[test]
    fn base_url_loses_its_trailing_slashes() {
        let dir = tempfile::tempdir().unwrap();
        for (written, read) in [
            ("https://docs.example.com/", "https://docs.example.com"),
            (
                "https://docs.example.com/docs//",
                "https://docs.example.com/docs",
            ),
            ("https://docs.example.com", "https://docs.example.com"),
        ] {
            let repo =
                std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/site.yaml")).unwrap();
            let yaml = repo.replace(
                "base_url: https://docs.whystack.ai",
                &format!("base_url: {written}"),
            );
            std::fs::write(dir.path().join(FILE_NAME), yaml).unwrap();
            assert_eq!(load(dir.path()).unwrap().base_url, read);
        }
        let repo =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/site.yaml")).unwrap();
        let yaml = format!("{repo}\nedit_url: https://github.com/o/r/edit/main\n");
        std::fs::write(dir.path().join(FILE_NAME), yaml).unwrap();
        let edit = load(dir.path()).unwrap().edit_url;
        assert_eq!(edit.as_deref(), Some("https://github.com/o/r/edit/main/"));
    }
}
