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
    // Where each value is, by JSON pointer (`/languages/1/code`): a value
    // written twice (a language listed twice) is found where it is wrong,
    // not where its text first appears.
    let positions = yaml::first_positions(text);
    let fail_at = |pointer: &str, needle: &str, msg: String| {
        let loc = positions
            .get(pointer)
            .filter(|_| !pointer.is_empty())
            .or_else(|| yaml::locate_scalar(text, needle))
            .map(|(l, c)| Location::at(FILE_NAME, l, c))
            .unwrap_or_else(|| Location::file(FILE_NAME));
        Diagnostic::new(rule::CONFIG_INVALID, msg).at(loc)
    };
    let fail = |needle: &str, msg: String| fail_at("", needle, msg);
    if config.languages.is_empty() {
        return Err(fail_at(
            "/languages",
            "languages",
            "`languages` is empty: list at least one".into(),
        ));
    }
    let mut seen = std::collections::BTreeMap::new();
    for (i, lang) in config.languages.iter().enumerate() {
        let at = format!("/languages/{i}/code");
        let ok = !lang.code.is_empty()
            && lang
                .code
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !lang.code.starts_with('-');
        if !ok {
            return Err(fail_at(
                &at,
                &lang.code,
                format!(
                    "language code `{}` is not a plain language tag (letters, digits, `-`)",
                    lang.code
                ),
            ));
        }
        // Its name is what the language switcher shows.
        if lang.name.trim().is_empty() {
            return Err(fail_at(
                &format!("/languages/{i}/name"),
                &lang.code,
                format!("language `{}` has an empty `name`: the language switcher would show nothing for it", lang.code),
            )
            .help("write the language's name in that language (`Português`, `English`)"));
        }
        // A language's pages live in `/<code>/`, beside the folders only
        // basepress writes.
        let reserved = ["kubernetes", "search", "sitemaps", "assets"];
        if reserved.iter().any(|r| r.eq_ignore_ascii_case(&lang.code)) {
            return Err(fail_at(
                &at,
                &lang.code,
                format!(
                    "language code `{}` names a folder of the site that basepress writes itself (`/{}/`)",
                    lang.code,
                    lang.code.to_ascii_lowercase()
                ),
            )
            .help("use the language's own tag (`en`, `pt-BR`)"));
        }
        // Language tags ignore case: `pt-BR` and `pt-br` are one language.
        if let Some(first) = seen.insert(lang.code.to_ascii_lowercase(), i) {
            return Err(fail_at(
                &at,
                &lang.code,
                format!(
                    "language `{}` is listed twice (also as entry {} of `languages`)",
                    lang.code,
                    first + 1
                ),
            )
            .help("list each language once; to show a language under two names, pick one"));
        }
    }
    // Every canonical link, sitemap entry and alternate language link
    // starts with it: without a scheme it would be a relative path.
    let url = &config.base_url;
    let parsed = url::Url::parse(url).ok().filter(|u| {
        matches!(u.scheme(), "http" | "https")
            && u.host_str().is_some_and(|h| !h.is_empty())
            && u.query().is_none()
            && u.fragment().is_none()
            && u.username().is_empty()
            && u.password().is_none()
    });
    if parsed.is_none() || url.contains(char::is_whitespace) {
        return Err(fail_at(
            "/base_url",
            url,
            format!("base_url `{url}` is not the http(s) URL the site is published at"),
        )
        .help("write the scheme and host, and the path when the site is below one: `https://docs.example.com` or `https://example.com/docs`"));
    }
    if let Some(url) = &config.edit_url {
        let ok = (url.starts_with("https://") || url.starts_with("http://"))
            && !url.contains(char::is_whitespace);
        if !ok {
            return Err(fail_at(
                "/edit_url",
                url,
                format!("edit_url `{url}` is not an http(s) URL (e.g. https://github.com/org/repo/edit/main/)"),
            ));
        }
    }
    if config.language(&config.default_language).is_none() {
        let d = fail_at(
            "/default_language",
            &config.default_language,
            format!(
                "default_language `{}` is not one of `languages`",
                config.default_language
            ),
        );
        let listed = config
            .languages
            .iter()
            .find(|l| l.code.eq_ignore_ascii_case(&config.default_language));
        return Err(match listed {
            Some(l) => d.help(format!(
                "write it `{}`, as `languages` does: a language is one code, spelled the same everywhere (its content folder too)",
                l.code
            )),
            None => d,
        });
    }
    for (i, e) in config.exceptions.iter().enumerate() {
        let fail =
            |needle: &str, msg: String| fail_at(&format!("/exceptions/{i}/rule"), needle, msg);
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
        return Err(fail_at(
            "/image/releases",
            &releases.to_string_lossy(),
            format!(
                "`image.releases` is `{}`, which is not a path inside the project",
                releases.display()
            ),
        )
        .help("name the image data file relative to the project folder, without `..` (e.g. `image-releases.yaml`)"));
    }
    // A layout or an archive named in site.yaml is an input of the
    // project like the others: inside it.
    if let Some(source) = config.image.source.as_deref() {
        let path = match crate::oci::parse_source(source) {
            Ok(crate::oci::SourceRef::Layout { dir, .. }) => Some(dir),
            Ok(crate::oci::SourceRef::Archive { file, .. }) => Some(file),
            _ => None,
        };
        if let Some(path) = path.filter(|p| !crate::input::stays_inside(p)) {
            return Err(fail_at(
                "/image/source",
                source,
                format!(
                    "`image.source` names `{}`, which is not a path inside the project",
                    path.display()
                ),
            )
            .help("keep the image layout or archive in the project and name it relative to it, without `..` (e.g. `oci:images/agent`); an image elsewhere is given with `--image`"));
        }
    }
    let name = &config.image.name;
    if name.is_empty() || name.contains([':', '@', '/']) {
        return Err(fail_at(
            "/image/name",
            name,
            format!("image name `{name}` must be a bare name, without registry, tag or digest"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A finding about one value of site.yaml is where that value is
    /// written, even when its text appears earlier.
    #[test]
    fn findings_are_at_the_value_they_are_about() {
        let dir = tempfile::tempdir().unwrap();
        let at = |yaml: &str| {
            std::fs::write(dir.path().join(FILE_NAME), yaml).unwrap();
            let d = load(dir.path()).unwrap_err();
            let l = d.location.clone().unwrap();
            (d.message.clone(), l.line, d.remedy().to_string())
        };
        let head = "title: en
base_url: https://x.example
";
        let image = "image:
  name: app
  releases: image-releases.yaml
";
        let (m, line, help) = at(&format!(
            "{head}default_language: en
languages:
  - code: en
    name: English
  - code: EN
    name: Again
{image}"
        ));
        assert!(m.contains("listed twice (also as entry 1"), "{m}");
        assert_eq!(line, Some(7));
        assert!(help.contains("list each language once"), "{help}");
        let (m, line, help) = at(&format!(
            "{head}default_language: es
languages:
  - code: en
    name: es
  - code: ES
    name: Spanish
{image}"
        ));
        assert!(m.contains("default_language `es`"), "{m}");
        assert_eq!(line, Some(3));
        assert!(help.contains("write it `ES`"), "{help}");
    }

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

    /// Every absolute link of the site starts with `base_url`: one that is
    /// no http(s) URL is refused where it is written.
    #[test]
    fn base_url_is_an_http_url() {
        let dir = tempfile::tempdir().unwrap();
        let repo =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/site.yaml")).unwrap();
        let line = repo
            .lines()
            .position(|l| l.starts_with("base_url:"))
            .unwrap()
            + 1;
        for wrong in [
            "docs.whystack.ai",
            "\"\"",
            "not a url",
            "\"javascript:alert(1)\"",
            "ftp://docs.example.com",
            "https://",
            "https://docs.example.com/?lang=en",
            "https://docs.example.com/#top",
            "https://user:pw@docs.example.com",
            "\"https://docs.example.com/a b\"",
        ] {
            let yaml = repo.replace(
                "base_url: https://docs.whystack.ai",
                &format!("base_url: {wrong}"),
            );
            std::fs::write(dir.path().join(FILE_NAME), yaml).unwrap();
            let d = load(dir.path()).unwrap_err();
            assert_eq!(d.rule.id, "config-invalid", "{wrong}");
            assert!(d.message.contains("base_url"), "{wrong}: {}", d.message);
            assert_eq!(
                d.location.as_ref().and_then(|l| l.line),
                Some(line),
                "{wrong}"
            );
        }
        for right in ["http://localhost:1313", "https://example.com/docs/"] {
            let yaml = repo.replace(
                "base_url: https://docs.whystack.ai",
                &format!("base_url: {right}"),
            );
            std::fs::write(dir.path().join(FILE_NAME), yaml).unwrap();
            assert!(load(dir.path()).is_ok(), "{right}");
        }
    }
}
