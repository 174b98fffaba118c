//! Facts of a platform's image, cached by digest. A digest names the same
//! bytes forever, so cached facts never go stale; a cache file that cannot
//! be read or parsed is ignored and written again.

use super::Platform;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Bumped whenever what is cached changes meaning (3: the ELF facts of
/// executables).
const FORMAT: u32 = 3;

/// What identifies a platform's facts.
pub enum Key {
    /// The manifest digest (layouts and registries).
    Manifest(String),
    /// The config digest (docker-archives, which have no manifest; the
    /// config lists the digest of every layer).
    Config(String),
}

impl Key {
    fn file(&self, dir: &Path) -> Option<PathBuf> {
        let (kind, digest) = match self {
            Key::Manifest(d) => ("manifest", d),
            Key::Config(d) => ("config", d),
        };
        let hex = digest.strip_prefix("sha256:")?;
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(
            dir.join(format!("oci-v{FORMAT}"))
                .join(format!("{kind}-{hex}.json")),
        )
    }
}

#[derive(Serialize)]
struct Written<'a> {
    format: u32,
    platform: &'a Platform,
}

#[derive(Deserialize)]
struct Read {
    format: u32,
    platform: Platform,
}

/// The cached facts for `key`, if any.
pub fn load(dir: Option<&Path>, key: &Key) -> Option<Platform> {
    let path = key.file(dir?)?;
    let bytes = std::fs::read(path).ok()?;
    let r: Read = serde_json::from_slice(&bytes).ok()?;
    if r.format != FORMAT {
        return None;
    }
    let mut p = r.platform;
    p.cached = true;
    Some(p)
}

/// Caches `platform` under `key`, atomically (a temporary file renamed
/// into place). A failure only costs the next run the work again, so it is
/// not an error.
pub fn store(dir: Option<&Path>, key: &Key, platform: &Platform) {
    let Some(path) = dir.and_then(|d| key.file(d)) else {
        return;
    };
    let Some(parent) = path.parent() else { return };
    if std::fs::create_dir_all(parent).is_err() {
        return;
    }
    let Ok(bytes) = serde_json::to_vec(&Written {
        format: FORMAT,
        platform,
    }) else {
        return;
    };
    let Ok(mut tmp) = tempfile::NamedTempFile::new_in(parent) else {
        return;
    };
    if tmp.write_all(&bytes).is_ok() {
        let _ = tmp.persist(&path);
    }
}
