//! Reading the image release data file into [`ImageReleases`].

use crate::diagnostics::{rule, Diagnostic, Location};
use crate::model::images::{holds_for, ImageReleases};
use crate::yaml;
use semver::{Version, VersionReq};
use std::path::Path;

pub fn load(root: &Path, rel: &Path, image_name: &str) -> Result<ImageReleases, Diagnostic> {
    // A path that is no file (a folder, a link) is the path's fault: the
    // remedy is in site.yaml.
    let read = crate::input::read_optional(root, &root.join(rel)).map_err(|d| {
        d.help(format!(
            "`image.releases` in site.yaml names `{}`: point it at the image release data file (`image-releases.yaml`)",
            rel.display()
        ))
    });
    let bytes = read?.ok_or_else(|| {
        Diagnostic::new(
            rule::IMAGE_DATA_INVALID,
            "cannot read the image release data: there is no such file",
        )
        .in_file(rel)
        .help("create the file, or point `image.releases` in site.yaml at it")
    })?;
    let text = crate::input::utf8(bytes, rel, rule::IMAGE_DATA_INVALID)?;
    let data: ImageReleases = yaml::from_str(&text).map_err(|e| {
        let loc = match (e.line, e.column) {
            (Some(l), Some(c)) => Location::at(rel, l, c),
            _ => Location::file(rel),
        };
        Diagnostic::new(rule::IMAGE_DATA_INVALID, e.message).at(loc)
    })?;
    // Where each value is, by JSON pointer (`/env/3/key`): a fact written
    // twice is found where the second is, not where its text first appears.
    let positions = yaml::first_positions(&text);
    let fail = |pointer: &str, msg: String| {
        let loc = positions
            .nearest(pointer)
            .map(|(l, c)| Location::at(rel, l, c))
            .unwrap_or_else(|| Location::file(rel));
        Diagnostic::new(rule::IMAGE_DATA_INVALID, msg).at(loc)
    };
    if data.name != image_name {
        return Err(fail(
            "/name",
            format!(
                "the data describes image `{}`, but site.yaml names `{image_name}`",
                data.name
            ),
        ));
    }
    if data.releases.windows(2).any(|w| w[0] >= w[1]) {
        let at = data
            .releases
            .windows(2)
            .position(|w| w[0] >= w[1])
            .map_or(0, |i| i + 1);
        return Err(fail(
            &format!("/releases/{at}"),
            "`releases` must list each version once, in ascending order".into(),
        ));
    }
    // Kubernetes takes user and group ids from 0 to 2^31 - 1: a check's
    // advice (`set runAsUser: -5`) would be refused.
    for (i, u) in data.user.iter().enumerate() {
        for (field, id) in [("uid", u.uid), ("gid", u.gid)] {
            if !(0..=i64::from(i32::MAX)).contains(&id) {
                return Err(fail(
                    &format!("/user/{i}/{field}"),
                    format!("`{field}` is {id}: an id of the image's user is from 0 to 2147483647"),
                ));
            }
        }
    }
    let mut keys = std::collections::BTreeMap::new();
    for (i, e) in data.env.iter().enumerate() {
        if let Some(first) = keys.insert((e.key.as_str(), e.versions.to_string()), i) {
            return Err(fail(
                &format!("/env/{i}/key"),
                format!(
                    "environment key `{}` is described twice (also as entry {} of `env`)",
                    e.key,
                    first + 1
                ),
            ));
        }
    }
    if let Some((what, v, first, second, at)) = contradiction(&data) {
        return Err(fail(
            &at,
            format!(
                "two `{what}` facts hold for release {v} (`{first}` and `{second}`): the data contradicts itself"
            ),
        )
        .help("narrow the `versions` of one fact so that one fact of each kind holds for each release"));
    }
    Ok(data)
}

/// The first release for which two facts of one kind hold: the kind, the
/// release, both facts' `versions`, and where the second's `versions` is
/// (a JSON pointer).
fn contradiction(
    data: &ImageReleases,
) -> Option<(String, &Version, &VersionReq, &VersionReq, String)> {
    type Facts<'a> = Vec<(String, &'a VersionReq)>;
    fn facts<'a>(list: &str, reqs: Vec<&'a VersionReq>) -> Vec<(String, &'a VersionReq)> {
        reqs.into_iter()
            .enumerate()
            .map(|(i, r)| (format!("/{list}/{i}/versions"), r))
            .collect()
    }
    let mut kinds: Vec<(String, Facts<'_>)> = vec![
        (
            "user".into(),
            facts("user", data.user.iter().map(|f| &f.versions).collect()),
        ),
        (
            "ports".into(),
            facts("ports", data.ports.iter().map(|f| &f.versions).collect()),
        ),
        (
            "process".into(),
            facts(
                "process",
                data.process.iter().map(|f| &f.versions).collect(),
            ),
        ),
    ];
    let mut by_name: std::collections::BTreeMap<String, Facts<'_>> = Default::default();
    for (i, c) in data.commands.iter().enumerate() {
        by_name
            .entry(format!("commands` `{}", c.name))
            .or_default()
            .push((format!("/commands/{i}/versions"), &c.versions));
    }
    for (i, e) in data.env.iter().enumerate() {
        by_name
            .entry(format!("env` `{}", e.key))
            .or_default()
            .push((format!("/env/{i}/versions"), &e.versions));
    }
    kinds.extend(by_name);
    for v in &data.releases {
        for (what, reqs) in &kinds {
            let mut holding = reqs.iter().filter(|(_, r)| holds_for(r, v));
            if let (Some(first), Some(second)) = (holding.next(), holding.next()) {
                return Some((what.clone(), v, first.1, second.1, second.0.clone()));
            }
        }
    }
    None
}

/// Whether a fact for `req` holds for release `v`, comparing versions by
/// semver precedence, pre-releases included (the `semver` crate's own
/// `matches` never lets `>=1.29.0` match `1.31.0-rc.1`, as Cargo wants for
/// dependencies; a fact about 1.29.0 and later holds for that release
/// candidate). Ranges (`^`, `~`, `*`, partial versions) end before the
/// pre-releases of the release that ends them: `~1.30` is `>=1.30.0,
/// <1.31.0-0`.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::images::tests::DATA;

    #[test]
    fn contradictory_facts_are_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let data = DATA.replace(
            "user: [{versions: \"*\", name: node, uid: 1000, gid: 1000}]",
            "user:\n  - {versions: \"*\", name: node, uid: 1000, gid: 1000}\n  - {versions: \">=1.1.0\", name: root, uid: 0, gid: 0}",
        );
        assert_ne!(data, DATA);
        std::fs::write(dir.path().join("images.yaml"), &data).unwrap();
        let e = load(dir.path(), Path::new("images.yaml"), "agent").unwrap_err();
        assert_eq!(e.rule.id, "image-data-invalid");
        assert!(
            e.message
                .contains("two `user` facts hold for release 1.1.0"),
            "{}",
            e.message
        );
        let line =
            |data: &str, needle: &str| data.lines().position(|l| l.contains(needle)).map(|i| i + 1);
        let at = |e: &Diagnostic| e.location.as_ref().and_then(|l| l.line);
        // At the second fact, though its text `*`… appears before.
        assert_eq!(at(&e), line(&data, "name: root"));
        let data = DATA.replace(
            "  - {name: health, versions: \">=1.1.0\", args: [[live], [ready]]}",
            "  - {name: health, versions: \">=1.1.0\", args: [[live], [ready]]}\n  - {name: health, versions: \"^1\", args: any}",
        );
        std::fs::write(dir.path().join("images.yaml"), &data).unwrap();
        let e = load(dir.path(), Path::new("images.yaml"), "agent").unwrap_err();
        assert!(e.message.contains("`commands` `health`"), "{}", e.message);
        assert_eq!(at(&e), line(&data, "versions: \"^1\""));
        // An environment key described twice: at the second, named by the
        // first.
        let data = DATA.replace(
            "env:\n",
            "env:\n  - key: MODE\n    versions: \"*\"\n    values: [{value: a}]\n",
        );
        std::fs::write(dir.path().join("images.yaml"), &data).unwrap();
        let e = load(dir.path(), Path::new("images.yaml"), "agent").unwrap_err();
        assert!(
            e.message.contains("described twice (also as entry 1"),
            "{}",
            e.message
        );
        let second = data
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("key: MODE"))
            .nth(1);
        assert_eq!(at(&e), second.map(|(i, _)| i + 1));
        std::fs::write(dir.path().join("images.yaml"), DATA).unwrap();
        assert!(load(dir.path(), Path::new("images.yaml"), "agent").is_ok());
    }

    #[test]
    fn a_user_id_kubernetes_refuses_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        for (from, to) in [("uid: 1000", "uid: -5"), ("gid: 1000", "gid: 2147483648")] {
            let data = DATA.replacen(from, to, 1);
            assert_ne!(data, DATA);
            std::fs::write(dir.path().join("images.yaml"), &data).unwrap();
            let e = load(dir.path(), Path::new("images.yaml"), "agent").unwrap_err();
            assert_eq!(e.rule.id, "image-data-invalid");
            assert!(e.message.contains("from 0 to 2147483647"), "{}", e.message);
            let line = data.lines().position(|l| l.contains(to)).map(|i| i + 1);
            assert_eq!(e.location.as_ref().and_then(|l| l.line), line);
        }
    }

    #[test]
    fn the_bundled_data_file_parses() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let d = load(root, Path::new("image-releases.yaml"), "whystack-agent").unwrap();
        let v: Version = "1.29.0".parse().unwrap();
        assert_eq!(d.first_release_with_command("whystack-health"), Some(&v));
    }
}
