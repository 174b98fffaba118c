//! The download contract: `/kubernetes/vX.Y.Z/base/` with the base's files,
//! `SHA256SUMS` and `files.txt`, plus `versions.txt` and `versions.json`.

use super::OutFile;
use crate::model::layout::{self, base_path, files_txt, sha256sums, ALLOWED_SIGNERS, SIGNATURE};
use crate::model::site::Site;
use serde::Serialize;

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
    /// The image the base was checked against, when the checks read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_checked: Option<ImageChecked>,
}

/// The image a version was checked against: pin it by this digest.
#[derive(Serialize)]
pub struct ImageChecked {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Platform (`linux/amd64`) → its manifest digest.
    pub platforms: std::collections::BTreeMap<String, String>,
}

#[derive(Serialize)]
pub struct FileEntry {
    pub name: String,
    pub sha256: String,
    pub size: usize,
}

/// What the site says about the published versions.
pub fn versions(site: &Site) -> VersionsJson<'_> {
    let latest = site.latest_base();
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
                image_checked: b.image.as_ref().map(|i| ImageChecked {
                    digest: i.digest.clone(),
                    platforms: i.platforms.iter().cloned().collect(),
                }),
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
        .and_then(|s| crate::signing::allowed_signers(s).ok())
    {
        out.push(OutFile::new(ALLOWED_SIGNERS, allowed));
    }
    let txt: String = site
        .bases
        .iter()
        .map(|b| format!("{}\n", b.folder()))
        .collect();
    out.push(OutFile::new(layout::VERSIONS_TXT, txt));
    let mut json = serde_json::to_string_pretty(&versions(site)).unwrap_or_default();
    json.push('\n');
    out.push(OutFile::new(layout::VERSIONS_JSON, json));
    out
}
