//! An OCI image layout folder: `oci-layout`, `index.json` and
//! `blobs/sha256/HEX`, as `skopeo copy … oci:DIR:TAG`, `buildah push` and
//! BuildKit's `type=oci` export write it.

use super::spec::{self, Descriptor, Document, MAX_MANIFEST_BYTES};
use super::{read_verified, Error, Store, Top};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The annotation that names a tag in `index.json`.
pub const REF_NAME: &str = "org.opencontainers.image.ref.name";

pub struct Layout {
    dir: PathBuf,
}

impl Layout {
    pub fn open(dir: &Path) -> Result<Self, Error> {
        let marker = dir.join("oci-layout");
        let text = std::fs::read(&marker).map_err(|e| {
            if dir.is_dir() {
                Error::unavailable(format!(
                    "{} is not an OCI image layout: {} cannot be read ({e})",
                    dir.display(),
                    marker.display()
                ))
            } else {
                Error::unavailable(format!(
                    "the image folder {} does not exist ({e})",
                    dir.display()
                ))
            }
        })?;
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Marker {
            image_layout_version: String,
        }
        let m: Marker = serde_json::from_slice(&text)
            .map_err(|e| Error::corrupt(format!("{} is not valid: {e}", marker.display())))?;
        if !m.image_layout_version.starts_with("1.") {
            return Err(Error::unsupported(format!(
                "{} has imageLayoutVersion {}; basepress reads 1.x",
                marker.display(),
                m.image_layout_version
            )));
        }
        Ok(Layout {
            dir: dir.to_path_buf(),
        })
    }

    fn blob_path(&self, digest: &str) -> Result<PathBuf, Error> {
        spec::validate_digest(digest)?;
        let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
        Ok(self.dir.join("blobs").join("sha256").join(hex))
    }

    /// The manifest or index that `tag` names in `index.json` (the only
    /// one, when no tag is asked for and there is one).
    pub fn resolve_tag(&self, tag: Option<&str>) -> Result<Top, Error> {
        let path = self.dir.join("index.json");
        let file = crate::input::open_regular(&path)
            .map_err(|e| Error::corrupt(format!("{} cannot be read: {e}", path.display())))?;
        let mut bytes = Vec::new();
        file.take(MAX_MANIFEST_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::corrupt(format!("{} cannot be read: {e}", path.display())))?;
        if bytes.len() as u64 > MAX_MANIFEST_BYTES {
            return Err(Error::too_large(format!(
                "{} is larger than {MAX_MANIFEST_BYTES} bytes",
                path.display()
            )));
        }
        let what = path.display().to_string();
        let Document::Index(index) = spec::parse_document(&bytes, spec::OCI_INDEX, &what)? else {
            return Err(Error::corrupt(format!("{what} is not an image index")));
        };
        let tags: Vec<&str> = index
            .manifests
            .iter()
            .filter_map(|d| d.annotations.get(REF_NAME).map(String::as_str))
            .collect();
        let found: Vec<&Descriptor> = match tag {
            Some(t) => index
                .manifests
                .iter()
                .filter(|d| {
                    d.annotations
                        .get(REF_NAME)
                        .is_some_and(|r| ref_matches(r, t))
                })
                .collect(),
            None => index.manifests.iter().collect(),
        };
        let listed = if tags.is_empty() {
            "it names no tag".to_string()
        } else {
            format!("its tags: {}", tags.join(", "))
        };
        let desc = match (found.as_slice(), tag) {
            ([d], _) => *d,
            ([], Some(t)) => {
                return Err(Error::unavailable(format!(
                    "the tag `{t}` is not in {} ({listed})",
                    self.dir.display()
                ))
                .with_help("copy the image of that version there (`skopeo copy SOURCE oci:DIR:TAG`), or name a tag it has"))
            }
            ([], None) => {
                return Err(Error::unavailable(format!(
                    "{} holds no image",
                    self.dir.display()
                )))
            }
            (_, Some(t)) => {
                return Err(Error::corrupt(format!(
                    "the tag `{t}` names {} different manifests in {}",
                    found.len(),
                    path.display()
                )))
            }
            (_, None) => {
                return Err(Error::unavailable(format!(
                    "{} holds {} images: name one with oci:DIR:TAG ({listed})",
                    self.dir.display(),
                    found.len()
                )))
            }
        };
        if !desc.is_index() && !desc.is_manifest() {
            return Err(Error::unsupported(format!(
                "{what}: `{}` names {} of the unknown media type `{}`",
                tag.unwrap_or("the image"),
                desc.digest,
                desc.media_type
            )));
        }
        let bytes = self.read_blob(desc, MAX_MANIFEST_BYTES)?;
        Ok(Top {
            tag: tag
                .map(str::to_string)
                .or_else(|| desc.annotations.get(REF_NAME).cloned()),
            media_type: desc.media_type.clone(),
            digest: desc.digest.clone(),
            bytes,
        })
    }
}

/// Whether a `ref.name` annotation names `tag`: skopeo writes the bare
/// tag, other tools a whole reference (`docker.io/library/x:1.0`).
fn ref_matches(name: &str, tag: &str) -> bool {
    name == tag
        || name
            .rsplit_once(':')
            .is_some_and(|(n, t)| t == tag && !t.contains('/') && !n.is_empty())
}

impl Store for Layout {
    fn read_blob(&self, desc: &Descriptor, limit: u64) -> Result<Vec<u8>, Error> {
        let path = self.blob_path(&desc.digest)?;
        let file = crate::input::open_regular(&path).map_err(|e| {
            Error::corrupt(format!(
                "the blob {} is missing from the layout ({}: {e})",
                desc.digest,
                path.display()
            ))
        })?;
        read_verified(file, desc, limit, &format!("the blob {}", desc.digest))
    }

    fn open_blob(&self, key: &str, _size: u64) -> Result<Box<dyn Read + Send + '_>, Error> {
        let path = self.blob_path(key)?;
        let file = crate::input::open_regular(&path).map_err(|e| {
            Error::corrupt(format!(
                "the blob {key} is missing from the layout ({}: {e})",
                path.display()
            ))
        })?;
        Ok(Box::new(file))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ref_names_match_bare_tags_and_whole_references() {
        assert!(super::ref_matches("1.29.0", "1.29.0"));
        assert!(super::ref_matches(
            "docker.io/library/agent:1.29.0",
            "1.29.0"
        ));
        assert!(!super::ref_matches("1.29.0", "1.29"));
        assert!(!super::ref_matches("localhost:5000/agent", "5000/agent"));
    }
}
