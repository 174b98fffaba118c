//! A docker-archive: the tarball `docker save` and skopeo's
//! `docker-archive:` transport write. `manifest.json` lists each image's
//! config file, tags (`RepoTags`) and layer files; recent Docker puts an
//! OCI layout in the same tarball, whose blobs `manifest.json` names too.
//!
//! The archive is indexed by seeking from header to header, and each layer
//! is read in place. A docker-archive has no manifest, so what identifies
//! the image is its config digest (the image id), and each layer is
//! verified against the config's `rootfs.diff_ids` as it is decompressed.

use super::cache;
use super::layer::{normalize, Expect};
use super::spec::{self, Descriptor, MAX_CONFIG_BYTES, MAX_MANIFEST_BYTES};
use super::tar::{EntryType, Seekable, TarReader};
use super::{build_platform, Error, Image, LayerJob, Options, SourceRef, Store};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The most members an archive may have.
const MAX_MEMBERS: usize = 100_000;

struct Member {
    offset: u64,
    size: u64,
    kind: EntryType,
    link: String,
}

struct Archive {
    path: PathBuf,
    members: BTreeMap<String, Member>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ImageEntry {
    config: String,
    #[serde(default)]
    repo_tags: Option<Vec<String>>,
    layers: Vec<String>,
}

impl Archive {
    fn index(path: &Path) -> Result<Archive, Error> {
        let file = crate::input::open_regular(path).map_err(|e| {
            Error::unavailable(format!(
                "the archive {} cannot be opened: {e}",
                path.display()
            ))
        })?;
        let what = format!("the archive {}", path.display());
        let input = Seekable::new(file)
            .map_err(|e| Error::unavailable(format!("{what} cannot be read: {e}")))?;
        let mut head = [0u8; 2];
        let mut probe = crate::input::open_regular(path)
            .map_err(|e| Error::unavailable(format!("{what} cannot be read: {e}")))?;
        if probe.read_exact(&mut head).is_ok() && head == [0x1f, 0x8b] {
            return Err(Error::unsupported(format!(
                "{what} is compressed with gzip; basepress reads docker-archives as `docker save` writes them"
            ))
            .with_help("decompress it first (`gunzip -k FILE`), or copy it with skopeo to an oci: layout"));
        }
        let mut tar = TarReader::new(input);
        let mut members = BTreeMap::new();
        while let Some(h) = tar.next_entry().map_err(|e| e.context(&what))? {
            if members.len() >= MAX_MEMBERS {
                return Err(Error::too_large(format!(
                    "{what} has more than {MAX_MEMBERS} members"
                )));
            }
            let name = normalize(&h.path).map_err(|e| e.context(&what))?;
            members.insert(
                name.trim_start_matches('/').to_string(),
                Member {
                    offset: h.data_offset,
                    size: h.stored,
                    kind: h.kind,
                    link: String::from_utf8_lossy(&h.link).into_owned(),
                },
            );
        }
        Ok(Archive {
            path: path.to_path_buf(),
            members,
        })
    }

    /// The member `name`, through the links older `docker save` writes
    /// for layers shared between images.
    fn member(&self, name: &str) -> Result<(&str, &Member), Error> {
        let mut name = normalize(name.as_bytes())?
            .trim_start_matches('/')
            .to_string();
        for _ in 0..8 {
            let Some((key, m)) = self.members.get_key_value(&name) else {
                return Err(Error::corrupt(format!(
                    "the archive {} has no member `{name}`, which manifest.json names",
                    self.path.display()
                )));
            };
            match m.kind {
                EntryType::File => return Ok((key.as_str(), m)),
                EntryType::Symlink | EntryType::HardLink => {
                    let base = if m.kind == EntryType::Symlink {
                        match name.rfind('/') {
                            Some(i) => format!("{}/{}", &name[..i], m.link),
                            None => m.link.clone(),
                        }
                    } else {
                        m.link.clone()
                    };
                    name = normalize(base.as_bytes())?
                        .trim_start_matches('/')
                        .to_string();
                }
                _ => {
                    return Err(Error::corrupt(format!(
                        "the archive member `{name}` is not a file"
                    )))
                }
            }
        }
        Err(Error::corrupt(format!(
            "the archive member `{name}` is a chain of links"
        )))
    }

    fn read_member(&self, name: &str, limit: u64) -> Result<Vec<u8>, Error> {
        let (_, m) = self.member(name)?;
        if m.size > limit {
            return Err(Error::too_large(format!(
                "the archive member `{name}` is {} bytes, more than {limit}",
                m.size
            )));
        }
        let mut r = self.open(m)?;
        let mut bytes = Vec::with_capacity(m.size as usize);
        r.read_to_end(&mut bytes).map_err(|e| {
            Error::corrupt(format!("the archive member `{name}` cannot be read: {e}"))
        })?;
        if bytes.len() as u64 != m.size {
            return Err(Error::corrupt(format!(
                "the archive {} is truncated in `{name}`",
                self.path.display()
            )));
        }
        Ok(bytes)
    }

    fn open(&self, m: &Member) -> Result<impl Read + Send, Error> {
        let mut f = crate::input::open_regular(&self.path).map_err(|e| {
            Error::unavailable(format!(
                "the archive {} cannot be opened: {e}",
                self.path.display()
            ))
        })?;
        f.seek(SeekFrom::Start(m.offset)).map_err(|e| {
            Error::corrupt(format!(
                "the archive {} cannot be read: {e}",
                self.path.display()
            ))
        })?;
        Ok(f.take(m.size))
    }
}

impl Store for Archive {
    fn read_blob(&self, desc: &Descriptor, limit: u64) -> Result<Vec<u8>, Error> {
        let name = format!("blobs/sha256/{}", desc.hex());
        let bytes = self.read_member(&name, limit)?;
        super::read_verified(
            &bytes[..],
            desc,
            limit,
            &format!("the blob {}", desc.digest),
        )
    }

    fn open_blob(&self, key: &str, _size: u64) -> Result<Box<dyn Read + Send + '_>, Error> {
        let (_, m) = self.member(key)?;
        Ok(Box::new(self.open(m)?))
    }
}

/// The digest a member's name gives, for names that are digests
/// (`HEX.json`, `HEX.tar`, `blobs/sha256/HEX`).
fn digest_in_name(name: &str) -> Option<String> {
    let base = name.rsplit('/').next()?;
    let hex = base.split('.').next()?;
    let named =
        name.starts_with("blobs/sha256/") || base.ends_with(".json") || base.ends_with(".tar");
    (named
        && hex.len() == 64
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    .then(|| format!("sha256:{hex}"))
}

/// Whether a `RepoTags` entry (`name:tag`) answers `reference` (a tag, or
/// `name:tag`).
fn tag_matches(repo_tag: &str, reference: &str) -> bool {
    if repo_tag == reference {
        return true;
    }
    let tag_of = |s: &str| -> Option<String> {
        let (n, t) = s.rsplit_once(':')?;
        (!t.contains('/') && !n.is_empty()).then(|| t.to_string())
    };
    match reference.rsplit_once(':') {
        // name:tag given: the name may carry a registry the archive lacks.
        Some((name, tag)) if !tag.contains('/') => {
            tag_of(repo_tag).as_deref() == Some(tag)
                && repo_tag
                    .rsplit_once(':')
                    .is_some_and(|(n, _)| n == name || n.ends_with(&format!("/{name}")))
        }
        _ => tag_of(repo_tag).as_deref() == Some(reference),
    }
}

pub fn read(
    path: &Path,
    source: &SourceRef,
    tag: Option<&str>,
    opts: &Options,
) -> Result<Image, Error> {
    let archive = Archive::index(path)?;
    let what = format!("the archive {}", path.display());
    let manifest = archive
        .read_member("manifest.json", MAX_MANIFEST_BYTES)
        .map_err(|e| {
            if e.message.contains("has no member") {
                Error::corrupt(format!(
                    "{what} has no manifest.json: it is not a docker-archive"
                ))
            } else {
                e
            }
        })?;
    let entries: Vec<ImageEntry> = serde_json::from_slice(&manifest)
        .map_err(|e| Error::corrupt(format!("{what}: manifest.json is not valid: {e}")))?;
    let reference = match source {
        SourceRef::Archive {
            reference: Some(r), ..
        } => Some(r.as_str()),
        _ => tag,
    };
    let tags = || {
        let all: Vec<&str> = entries
            .iter()
            .flat_map(|e| e.repo_tags.iter().flatten().map(String::as_str))
            .collect();
        if all.is_empty() {
            "it has no tags".to_string()
        } else {
            format!("its tags: {}", all.join(", "))
        }
    };
    let chosen: Vec<&ImageEntry> = match reference {
        Some(r) => entries
            .iter()
            .filter(|e| e.repo_tags.iter().flatten().any(|t| tag_matches(t, r)))
            .collect(),
        None => entries.iter().collect(),
    };
    let entry = match (chosen.as_slice(), reference) {
        ([e], _) => *e,
        ([], Some(r)) => {
            return Err(Error::unavailable(format!(
                "the tag `{r}` is not in {what} ({})",
                tags()
            )))
        }
        ([], None) => return Err(Error::unavailable(format!("{what} holds no image"))),
        (many, _) => {
            return Err(Error::unavailable(format!(
            "{what} holds {} images for that name: name one with docker-archive:FILE:NAME:TAG ({})",
            many.len(),
            tags()
        )))
        }
    };
    let config_bytes = archive.read_member(&entry.config, MAX_CONFIG_BYTES)?;
    let config_digest = format!("sha256:{:x}", Sha256::digest(&config_bytes));
    if let Some(named) = digest_in_name(&entry.config) {
        if named != config_digest {
            return Err(Error::corrupt(format!(
                "{what}: the config `{}` hashes to {config_digest}, not to the digest its name gives",
                entry.config
            )));
        }
    }
    let cwhat = format!("{what}: the config {config_digest}");
    let config = spec::parse_config(&config_bytes, entry.layers.len(), &cwhat)?;
    if entry.layers.len() > opts.limits.max_layers {
        return Err(Error::too_large(format!(
            "{what}: the image has {} layers, more than {}",
            entry.layers.len(),
            opts.limits.max_layers
        )));
    }
    let key = cache::Key::Config(config_digest.clone());
    let platform = match cache::load(opts.cache_dir.as_deref(), &key) {
        Some(p) => p,
        None => {
            let diff_ids = config
                .rootfs
                .as_ref()
                .map(|r| r.diff_ids.clone())
                .unwrap_or_default();
            let mut jobs = Vec::new();
            for (i, (name, diff_id)) in entry.layers.iter().zip(diff_ids).enumerate() {
                let (member, m) = archive.member(name)?;
                jobs.push(LayerJob {
                    key: member.to_string(),
                    size: m.size,
                    compression: None,
                    expect: Expect {
                        blob: digest_in_name(member)
                            .filter(|_| member.starts_with("blobs/"))
                            .map(|d| (d, m.size)),
                        diff_id: Some(diff_id),
                    },
                    what: format!("{what}: layer {} ({name})", i + 1),
                });
            }
            let mut p = build_platform(&archive, &jobs, &config, opts)?;
            p.config_digest = config_digest.clone();
            cache::store(opts.cache_dir.as_deref(), &key, &p);
            p
        }
    };
    Ok(Image {
        source: source.without_tag(),
        tag: reference.map(|r| r.rsplit_once(':').map_or(r, |(_, t)| t).to_string()),
        digest: None,
        media_type: "docker-archive".to_string(),
        platforms: vec![platform],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_tags_match_tags_and_names() {
        assert!(tag_matches("whystack-agent:1.29.0", "1.29.0"));
        assert!(tag_matches(
            "whystack-agent:1.29.0",
            "whystack-agent:1.29.0"
        ));
        assert!(tag_matches(
            "docker.io/library/whystack-agent:1.29.0",
            "whystack-agent:1.29.0"
        ));
        assert!(!tag_matches("whystack-agent:1.29.0", "other:1.29.0"));
        assert!(!tag_matches("whystack-agent:1.29.0", "1.28.0"));
        assert!(!tag_matches("localhost:5000/agent", "5000/agent"));
    }

    #[test]
    fn digests_are_read_from_member_names() {
        let hex = "ab".repeat(32);
        assert_eq!(
            digest_in_name(&format!("{hex}.json")),
            Some(format!("sha256:{hex}"))
        );
        assert_eq!(
            digest_in_name(&format!("blobs/sha256/{hex}")),
            Some(format!("sha256:{hex}"))
        );
        assert_eq!(digest_in_name(&format!("{hex}/layer.tar")), None);
        assert_eq!(digest_in_name("manifest.json"), None);
    }
}
