//! The JSON documents of an image (descriptors, manifests, indexes and the
//! config), the media types basepress reads, and their validation.
//!
//! Only the fields basepress uses are declared; unknown fields are
//! allowed, as the OCI image spec requires of readers.

use super::Error;
use serde::Deserialize;
use std::collections::BTreeMap;

pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const OCI_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
pub const DOCKER_CONFIG: &str = "application/vnd.docker.container.image.v1+json";

/// Media types a registry is asked for when a tag is resolved.
pub const MANIFEST_TYPES: &[&str] = &[OCI_INDEX, OCI_MANIFEST, DOCKER_LIST, DOCKER_MANIFEST];

/// The largest manifest, index or index.json read (registries refuse
/// manifests above 4 MiB).
pub const MAX_MANIFEST_BYTES: u64 = 4 << 20;
/// The largest config blob read.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// How a layer's tar stream is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// The compression a layer media type names, or `None` for a media type
    /// that is not a layer basepress reads.
    pub fn of_layer(media_type: &str) -> Option<Compression> {
        match media_type {
            "application/vnd.oci.image.layer.v1.tar"
            | "application/vnd.oci.image.layer.nondistributable.v1.tar"
            | "application/vnd.docker.image.rootfs.diff.tar" => Some(Compression::None),
            "application/vnd.oci.image.layer.v1.tar+gzip"
            | "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip"
            | "application/vnd.docker.image.rootfs.diff.tar.gzip"
            | "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip" => {
                Some(Compression::Gzip)
            }
            "application/vnd.oci.image.layer.v1.tar+zstd"
            | "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd"
            // containerd's and BuildKit's zstd layers of Docker manifests.
            | "application/vnd.docker.image.rootfs.diff.tar.zstd" => {
                Some(Compression::Zstd)
            }
            _ => None,
        }
    }

    /// The compression the first bytes of a stream show (for docker-archive
    /// layers, which carry no media type).
    pub fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "tar",
            Compression::Gzip => "tar+gzip",
            Compression::Zstd => "tar+zstd",
        }
    }
}

/// A content descriptor: what a blob is, its digest and its size.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    #[serde(default)]
    pub media_type: String,
    pub digest: String,
    pub size: i64,
    #[serde(default)]
    pub platform: Option<PlatformSpec>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

impl Descriptor {
    /// Checks the digest is `sha256:` and 64 lowercase hex digits (the only
    /// algorithm basepress verifies) and the size is not negative. A digest
    /// also names a file in a layout, so nothing else may pass.
    pub fn validate(&self) -> Result<(), Error> {
        validate_digest(&self.digest)?;
        if self.size < 0 {
            return Err(Error::corrupt(format!(
                "descriptor of {} has a negative size ({})",
                self.digest, self.size
            )));
        }
        Ok(())
    }

    pub fn size(&self) -> u64 {
        self.size.max(0) as u64
    }

    /// The hex part of the digest.
    pub fn hex(&self) -> &str {
        self.digest.strip_prefix("sha256:").unwrap_or(&self.digest)
    }

    pub fn is_index(&self) -> bool {
        self.media_type == OCI_INDEX || self.media_type == DOCKER_LIST
    }

    pub fn is_manifest(&self) -> bool {
        self.media_type == OCI_MANIFEST || self.media_type == DOCKER_MANIFEST
    }
}

/// Checks that `digest` is a SHA-256 digest in canonical form.
pub fn validate_digest(digest: &str) -> Result<(), Error> {
    let Some((algorithm, hex)) = digest.split_once(':') else {
        return Err(Error::corrupt(format!(
            "`{digest}` is not a digest (expected `sha256:` and 64 hex digits)"
        )));
    };
    if algorithm != "sha256" {
        return Err(Error::unsupported(format!(
            "digest `{digest}` uses the algorithm `{algorithm}`; basepress verifies sha256 only"
        )));
    }
    if hex.len() != 64
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(Error::corrupt(format!(
            "`{digest}` is not a digest (expected `sha256:` and 64 lowercase hex digits)"
        )));
    }
    Ok(())
}

/// The platform an index entry is for.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
pub struct PlatformSpec {
    #[serde(default)]
    pub architecture: String,
    #[serde(default)]
    pub os: String,
    #[serde(default)]
    pub variant: Option<String>,
}

/// An image manifest (OCI or Docker v2 schema 2).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub schema_version: i64,
    #[serde(default)]
    pub media_type: Option<String>,
    pub config: Descriptor,
    #[serde(default)]
    pub layers: Vec<Descriptor>,
}

/// An image index (OCI) or manifest list (Docker).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Index {
    pub schema_version: i64,
    #[serde(default)]
    pub media_type: Option<String>,
    pub manifests: Vec<Descriptor>,
}

/// A manifest or an index, told apart by media type.
#[derive(Debug, Clone)]
pub enum Document {
    Manifest(Manifest),
    Index(Index),
}

/// Parses a manifest or an index. `media_type` is the one the descriptor
/// or the registry gave (empty when unknown); the document's own
/// `mediaType` must not contradict it.
pub fn parse_document(bytes: &[u8], media_type: &str, what: &str) -> Result<Document, Error> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Probe {
        #[serde(default)]
        schema_version: Option<i64>,
        #[serde(default)]
        media_type: Option<String>,
        #[serde(default)]
        manifests: Option<serde_json::Value>,
        #[serde(default)]
        config: Option<serde_json::Value>,
    }
    let probe: Probe = serde_json::from_slice(bytes)
        .map_err(|e| Error::corrupt(format!("{what} is not valid JSON: {e}")))?;
    if probe.schema_version != Some(2) {
        return Err(Error::unsupported(format!(
            "{what} has schemaVersion {}; basepress reads schema version 2 (OCI and Docker v2 schema 2)",
            probe
                .schema_version
                .map_or("(none)".to_string(), |v| v.to_string())
        )));
    }
    let own = probe.media_type.as_deref().unwrap_or("");
    if !media_type.is_empty() && !own.is_empty() && own != media_type {
        return Err(Error::corrupt(format!(
            "{what} says its media type is `{own}`, but it was referenced as `{media_type}`"
        )));
    }
    let kind = if !media_type.is_empty() {
        media_type
    } else {
        own
    };
    let is_index = match kind {
        OCI_INDEX | DOCKER_LIST => true,
        OCI_MANIFEST | DOCKER_MANIFEST => false,
        // An OCI document may leave mediaType out: its fields tell.
        "" if probe.manifests.is_some() && probe.config.is_none() => true,
        "" if probe.config.is_some() => false,
        other => {
            return Err(Error::unsupported(format!(
                "{what} has the unknown media type `{other}`"
            ))
            .with_help(
                "basepress reads OCI and Docker v2 image manifests and indexes; convert the image with `skopeo copy --format oci`",
            ))
        }
    };
    let doc = if is_index {
        let index: Index = serde_json::from_slice(bytes)
            .map_err(|e| Error::corrupt(format!("{what} is not a valid image index: {e}")))?;
        for d in &index.manifests {
            d.validate().map_err(|e| e.context(what))?;
        }
        Document::Index(index)
    } else {
        let m: Manifest = serde_json::from_slice(bytes)
            .map_err(|e| Error::corrupt(format!("{what} is not a valid image manifest: {e}")))?;
        m.config.validate().map_err(|e| e.context(what))?;
        if !m.config.media_type.is_empty()
            && m.config.media_type != OCI_CONFIG
            && m.config.media_type != DOCKER_CONFIG
        {
            return Err(Error::unsupported(format!(
                "{what} has a config of the unknown media type `{}`: it is not a container image (an artifact, a Helm chart?)",
                m.config.media_type
            )));
        }
        for l in &m.layers {
            l.validate().map_err(|e| e.context(what))?;
            if Compression::of_layer(&l.media_type).is_none() {
                return Err(Error::unsupported(format!(
                    "{what}: layer {} has the unknown media type `{}`",
                    l.digest, l.media_type
                ))
                .with_help(
                    "basepress reads tar layers, plain, gzip or zstd (application/vnd.oci.image.layer.v1.tar[+gzip|+zstd])",
                ));
            }
        }
        Document::Manifest(m)
    };
    Ok(doc)
}

/// The image config: what the runtime does with the image.
#[derive(Debug, Clone, Deserialize)]
pub struct ConfigFile {
    #[serde(default)]
    pub architecture: String,
    #[serde(default)]
    pub os: String,
    #[serde(default)]
    pub variant: Option<String>,
    #[serde(default)]
    pub config: Option<RunConfig>,
    #[serde(default)]
    pub rootfs: Option<RootFs>,
}

/// The `config` object of an image config. Docker writes `null` for empty
/// lists and maps, hence the options.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RunConfig {
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub env: Option<Vec<String>>,
    #[serde(default)]
    pub entrypoint: Option<Vec<String>>,
    #[serde(default)]
    pub cmd: Option<Vec<String>>,
    #[serde(default)]
    pub working_dir: Option<String>,
    #[serde(default)]
    pub exposed_ports: Option<BTreeMap<String, serde_json::Value>>,
    #[serde(default)]
    pub labels: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RootFs {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub diff_ids: Vec<String>,
}

/// Parses a config blob and checks its `rootfs` lists one uncompressed
/// digest per layer.
pub fn parse_config(bytes: &[u8], layers: usize, what: &str) -> Result<ConfigFile, Error> {
    let c: ConfigFile = serde_json::from_slice(bytes)
        .map_err(|e| Error::corrupt(format!("{what} is not a valid image config: {e}")))?;
    let diff_ids = c.rootfs.as_ref().map_or(&[][..], |r| &r.diff_ids[..]);
    if diff_ids.len() != layers {
        return Err(Error::corrupt(format!(
            "{what} lists {} layer digest(s) in rootfs.diff_ids, but the manifest has {layers} layer(s)",
            diff_ids.len()
        )));
    }
    for d in diff_ids {
        validate_digest(d).map_err(|e| e.context(format!("{what} rootfs.diff_ids")))?;
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn digests_must_be_canonical_sha256() {
        assert!(validate_digest(D).is_ok());
        assert!(validate_digest("sha256:../../etc/passwd").is_err());
        assert!(validate_digest(&D.to_uppercase().replace("SHA256", "sha256")).is_err());
        let e = validate_digest(&D.replace("sha256", "sha512")).unwrap_err();
        assert_eq!(e.rule.id, "image-unsupported");
    }

    #[test]
    fn unknown_media_types_are_unsupported() {
        let m = format!(
            r#"{{"schemaVersion":2,"mediaType":"{OCI_MANIFEST}","config":{{"mediaType":"{OCI_CONFIG}","digest":"{D}","size":2}},"layers":[{{"mediaType":"application/x-tar+lz4","digest":"{D}","size":0}}]}}"#
        );
        let e = parse_document(m.as_bytes(), OCI_MANIFEST, "manifest").unwrap_err();
        assert_eq!(e.rule.id, "image-unsupported");
        assert!(e.message.contains("application/x-tar+lz4"), "{e}");
        let e = parse_document(br#"{"schemaVersion":2,"mediaType":"text/plain"}"#, "", "m")
            .unwrap_err();
        assert_eq!(e.rule.id, "image-unsupported");
        let e = parse_document(br#"{"schemaVersion":1}"#, "", "m").unwrap_err();
        assert!(e.message.contains("schemaVersion 1"), "{e}");
        let e = parse_document(m.as_bytes(), OCI_INDEX, "m").unwrap_err();
        assert_eq!(e.rule.id, "image-corrupt");
    }

    #[test]
    fn documents_without_media_type_are_told_apart_by_their_fields() {
        let idx = format!(
            r#"{{"schemaVersion":2,"manifests":[{{"mediaType":"{OCI_MANIFEST}","digest":"{D}","size":3}}]}}"#
        );
        assert!(matches!(
            parse_document(idx.as_bytes(), "", "i").unwrap(),
            Document::Index(_)
        ));
    }
}
