//! Reading the image release data file into [`ImageReleases`].

use crate::diagnostics::{rule, Diagnostic, Location};
use crate::model::images::ImageReleases;
use crate::yaml;
use std::path::Path;

/// Reads the image release data file named in site.yaml.
pub fn load(root: &Path, rel: &Path, image_name: &str) -> Result<ImageReleases, Diagnostic> {
    let text = std::fs::read_to_string(root.join(rel)).map_err(|e| {
        Diagnostic::new(
            rule::IMAGE_DATA_INVALID,
            format!("cannot read the image release data: {e}"),
        )
        .in_file(rel)
        .help("create the file, or point `image.releases` in site.yaml at it")
    })?;
    let data: ImageReleases = yaml::from_str(&text).map_err(|e| {
        let loc = match (e.line, e.column) {
            (Some(l), Some(c)) => Location::at(rel, l, c),
            _ => Location::file(rel),
        };
        Diagnostic::new(rule::IMAGE_DATA_INVALID, e.message).at(loc)
    })?;
    let fail = |needle: &str, msg: String| {
        let loc = yaml::locate_scalar(&text, needle)
            .map(|(l, c)| Location::at(rel, l, c))
            .unwrap_or_else(|| Location::file(rel));
        Diagnostic::new(rule::IMAGE_DATA_INVALID, msg).at(loc)
    };
    if data.name != image_name {
        return Err(fail(
            &data.name,
            format!(
                "the data describes image `{}`, but site.yaml names `{image_name}`",
                data.name
            ),
        ));
    }
    if data.releases.windows(2).any(|w| w[0] >= w[1]) {
        return Err(fail(
            "releases",
            "`releases` must list each version once, in ascending order".into(),
        ));
    }
    let mut keys = std::collections::BTreeSet::new();
    for e in &data.env {
        if !keys.insert((e.key.as_str(), e.versions.to_string())) {
            return Err(fail(
                &e.key,
                format!("environment key `{}` is described twice", e.key),
            ));
        }
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use semver::Version;

    #[test]
    fn the_bundled_data_file_parses() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let d = load(root, Path::new("image-releases.yaml"), "whystack-agent").unwrap();
        let v: Version = "1.29.0".parse().unwrap();
        assert_eq!(d.first_release_with_command("whystack-health"), Some(&v));
    }
}
