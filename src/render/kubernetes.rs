//! The download contract: `/kubernetes/vX.Y.Z/base/` with the base's files,
//! `SHA256SUMS` and `files.txt`, plus `versions.txt` and `versions.json`.

use super::OutFile;
use crate::site::{Base, Site};
use serde::Serialize;

/// Site path of a base's folder: `/kubernetes/v1.29.0/base/`.
pub fn base_path(base: &Base) -> String {
    format!("/kubernetes/{}/base/", base.folder())
}

/// The detached signature of `SHA256SUMS`, beside it in the base folder.
pub const SIGNATURE: &str = "SHA256SUMS.sig";

/// Site path of the file that says whose signatures to trust.
pub const ALLOWED_SIGNERS: &str = "/kubernetes/allowed_signers";

/// `SHA256SUMS` in the format `sha256sum -c` reads: every published file
/// of the base and `files.txt`, sorted by name. (It cannot cover itself,
/// and the signature that covers it is checked with `ssh-keygen`.)
pub fn sha256sums(base: &Base) -> String {
    sha256sums_for(base, base.signature.is_some())
}

/// [`sha256sums`] of the base published with (`signed`) or without a
/// signature, which decides what `files.txt` lists.
pub fn sha256sums_for(base: &Base, signed: bool) -> String {
    let index = crate::site::sha256_hex(files_txt_for(base, signed).as_bytes());
    let mut lines: Vec<(&str, &str)> = base
        .files
        .iter()
        .map(|f| (f.name.as_str(), f.sha256.as_str()))
        .collect();
    lines.push(("files.txt", &index));
    lines.sort_unstable();
    lines
        .iter()
        .map(|(name, sha)| format!("{sha}  {name}\n"))
        .collect()
}

/// `files.txt`: the names the download loop fetches, one per line, sorted:
/// the base's files, `SHA256SUMS`, its signature when signed, and
/// `files.txt` itself (so that `sha256sum -c` finds every file it names
/// after the loop).
pub fn files_txt(base: &Base) -> String {
    files_txt_for(base, base.signature.is_some())
}

/// [`files_txt`] of the base published with (`signed`) or without a
/// signature.
pub fn files_txt_for(base: &Base, signed: bool) -> String {
    let mut names: Vec<&str> = base.files.iter().map(|f| f.name.as_str()).collect();
    names.push("SHA256SUMS");
    names.push("files.txt");
    if signed {
        names.push(SIGNATURE);
    }
    names.sort_unstable();
    names.iter().map(|n| format!("{n}\n")).collect()
}

#[derive(Serialize)]
pub struct VersionsJson<'a> {
    pub image: &'a str,
    pub latest: Option<String>,
    pub versions: Vec<VersionEntry>,
}

#[derive(Serialize)]
pub struct VersionEntry {
    /// Folder name: `v1.29.0`.
    pub version: String,
    /// Image tag of the same release: `1.29.0`.
    pub image_tag: String,
    pub latest: bool,
    pub path: String,
    pub files: Vec<FileEntry>,
}

#[derive(Serialize)]
pub struct FileEntry {
    pub name: String,
    pub sha256: String,
    pub size: usize,
}

/// What the site says about the published versions.
pub fn versions(site: &Site) -> VersionsJson<'_> {
    let latest = site.bases.iter().map(|b| &b.version).max();
    VersionsJson {
        image: &site.config.image.name,
        latest: latest.map(|v| format!("v{v}")),
        versions: site
            .bases
            .iter()
            .map(|b| VersionEntry {
                version: b.folder(),
                image_tag: b.image_tag(),
                latest: Some(&b.version) == latest,
                path: format!("{}{}", site.config.path_prefix(), base_path(b)),
                files: b
                    .files
                    .iter()
                    .map(|f| FileEntry {
                        name: f.name.clone(),
                        sha256: f.sha256.clone(),
                        size: f.bytes.len(),
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// Every file under `/kubernetes/`.
pub fn files(site: &Site) -> Vec<OutFile> {
    let mut out = Vec::new();
    for base in &site.bases {
        let dir = base_path(base);
        for f in &base.files {
            out.push(OutFile::new(format!("{dir}{}", f.name), f.bytes.clone()));
        }
        out.push(OutFile::new(format!("{dir}SHA256SUMS"), sha256sums(base)));
        out.push(OutFile::new(format!("{dir}files.txt"), files_txt(base)));
        if let Some(sig) = &base.signature {
            out.push(OutFile::new(format!("{dir}{SIGNATURE}"), sig.clone()));
        }
    }
    if let Some(allowed) = site
        .config
        .signing
        .as_ref()
        .and_then(|s| s.allowed_signers().ok())
    {
        out.push(OutFile::new(ALLOWED_SIGNERS, allowed));
    }
    let txt: String = site
        .bases
        .iter()
        .map(|b| format!("{}\n", b.folder()))
        .collect();
    out.push(OutFile::new("/kubernetes/versions.txt", txt));
    let mut json = serde_json::to_string_pretty(&versions(site)).unwrap_or_default();
    json.push('\n');
    out.push(OutFile::new("/kubernetes/versions.json", json));
    out
}

/// The paths [`files`] writes, without computing their content.
pub fn paths(site: &Site) -> Vec<String> {
    let mut out = Vec::new();
    for base in &site.bases {
        let dir = base_path(base);
        for f in &base.files {
            out.push(format!("{dir}{}", f.name));
        }
        out.push(format!("{dir}SHA256SUMS"));
        out.push(format!("{dir}files.txt"));
        if base.signature.is_some() {
            out.push(format!("{dir}{SIGNATURE}"));
        }
    }
    if site.config.signing.is_some() {
        out.push(ALLOWED_SIGNERS.into());
    }
    out.push("/kubernetes/versions.txt".into());
    out.push("/kubernetes/versions.json".into());
    out
}
