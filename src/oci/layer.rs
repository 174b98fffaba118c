//! Reading one layer: its bytes are hashed as they arrive, decompressed,
//! hashed again (the uncompressed digest, `diff_id`) and walked as a tar
//! stream, in one pass with bounded memory. What comes out is the list of
//! changes the layer makes; [`apply`] applies them to the filesystem.

use super::fs::{base_name, parent, Entry, FileSystem, Kind};
use super::spec::Compression;
use super::tar::{io_error, EntryType, Header, Stream, TarReader};
use super::Error;
use sha2::{Digest, Sha256};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::{self, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};

/// Files whose contents are kept (everything else is metadata only).
pub const KEPT_FILES: &[&str] = &["/etc/passwd", "/etc/group"];
/// The largest kept file.
pub const MAX_KEPT_BYTES: u64 = 1 << 20;

/// The longest `#!` line the kernel reads (`BINPRM_BUF_SIZE`).
const SHEBANG_MAX: u64 = 256;

/// What is read of an executable: its `#!` line, or the ELF header and
/// program headers with the loader's path (within the first pages of
/// every common linker's output).
const HEAD_MAX: u64 = 4096;

/// The `#!` line of a file that starts `head`, without the `#!` and the
/// new line, when it has one, as much of it as the kernel reads.
pub fn shebang(head: &[u8]) -> Option<String> {
    let head = &head[..head.len().min(SHEBANG_MAX as usize)];
    let line = head.strip_prefix(b"#!")?;
    let end = line.iter().position(|&b| b == b'\n').unwrap_or(line.len());
    // Only spaces and tabs separate: a carriage return (a script saved
    // with CRLF) is part of the interpreter's name, and the kernel finds
    // no `/bin/sh\r`.
    Some(
        String::from_utf8_lossy(&line[..end])
            .trim_matches([' ', '\t'])
            .to_string(),
    )
}

/// Bounds on what reading an image may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Uncompressed bytes of all layers of one platform together.
    pub max_uncompressed_bytes: u64,
    /// Tar entries of all layers of one platform together.
    pub max_entries: u64,
    /// Uncompressed bytes per compressed byte a layer may reach, once it
    /// is past [`Limits::ratio_floor`] uncompressed bytes.
    pub max_ratio: u64,
    /// Below this many uncompressed bytes, a layer's ratio is not checked.
    pub ratio_floor: u64,
    /// Layers of one manifest.
    pub max_layers: usize,
    /// Platforms of one index.
    pub max_platforms: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_uncompressed_bytes: 32 << 30,
            max_entries: 2_000_000,
            max_ratio: 200,
            ratio_floor: 256 << 20,
            max_layers: 256,
            max_platforms: 64,
        }
    }
}

/// What all layers of one platform have used of the limits, shared by the
/// threads that read them.
#[derive(Debug)]
pub struct Budget {
    limits: Limits,
    bytes: AtomicU64,
    entries: AtomicU64,
}

impl Budget {
    pub fn new(limits: Limits) -> Self {
        Budget {
            limits,
            bytes: AtomicU64::new(0),
            entries: AtomicU64::new(0),
        }
    }

    fn add_bytes(&self, n: u64) -> Result<(), Error> {
        let total = self.bytes.fetch_add(n, Ordering::Relaxed) + n;
        if total > self.limits.max_uncompressed_bytes {
            return Err(Error::too_large(format!(
                "the layers expand to more than {} uncompressed bytes (a decompression bomb?)",
                self.limits.max_uncompressed_bytes
            )));
        }
        Ok(())
    }

    fn add_entry(&self) -> Result<(), Error> {
        let total = self.entries.fetch_add(1, Ordering::Relaxed) + 1;
        if total > self.limits.max_entries {
            return Err(Error::too_large(format!(
                "the layers hold more than {} tar entries",
                self.limits.max_entries
            )));
        }
        Ok(())
    }
}

/// What a layer's bytes must hash to.
#[derive(Debug, Clone, Default)]
pub struct Expect {
    /// The digest and size of the blob as stored (the descriptor's).
    pub blob: Option<(String, u64)>,
    /// The digest of the uncompressed tar stream (the config's diff_id).
    pub diff_id: Option<String>,
}

/// One change a layer makes, in the order of its tar stream.
#[derive(Debug, Clone)]
pub enum Change {
    /// A new or replaced path (with the content of a kept file).
    Add {
        path: String,
        entry: Entry,
        content: Option<Vec<u8>>,
    },
    /// A hard link to `target`, a path of this layer or a lower one.
    HardLink { path: String, target: String },
    /// `.wh.NAME`: `path` and everything below it are removed from the
    /// layers below.
    Whiteout(String),
    /// `.wh..wh..opq`: the folder's children from the layers below are
    /// removed.
    Opaque(String),
}

/// Reads the layer `raw` (its bytes as stored), returning its changes
/// once its digests were verified. `what` names the layer in errors.
pub fn read_layer(
    raw: impl Read,
    compression: Option<Compression>,
    expect: &Expect,
    budget: &Budget,
    what: &str,
) -> Result<Vec<Change>, Error> {
    let compressed = Cell::new(0u64);
    let mut blob = Hashing::new(raw, &compressed, expect.blob.as_ref().map(|b| b.1));
    let result = decode(&mut blob, compression, expect, budget, &compressed);
    // Whatever happened, a blob whose bytes do not match its digest is
    // reported as such: it explains a corrupt stream best.
    let drained = io::copy(&mut blob, &mut io::sink());
    if let Err(e) = drained {
        return Err(io_error(e, "the blob").context(what));
    }
    if let Some((digest, size)) = &expect.blob {
        if blob.count != *size {
            return Err(Error::corrupt(format!(
                "{what}: the blob is {} bytes, its descriptor says {size}",
                blob.count
            )));
        }
        let got = format!("sha256:{:x}", blob.hasher.clone().finalize());
        if got != *digest {
            return Err(Error::corrupt(format!(
                "{what}: its bytes hash to {got}, not to the digest {digest} of its descriptor"
            )));
        }
    }
    result.map_err(|e| e.context(what))
}

fn decode<R: Read>(
    blob: &mut Hashing<'_, R>,
    compression: Option<Compression>,
    expect: &Expect,
    budget: &Budget,
    compressed: &Cell<u64>,
) -> Result<Vec<Change>, Error> {
    let mut buffered = BufReader::with_capacity(256 << 10, blob);
    let compression = match compression {
        Some(c) => c,
        None => {
            use std::io::BufRead;
            let head = buffered.fill_buf().map_err(|e| io_error(e, "the layer"))?;
            Compression::sniff(head)
        }
    };
    let decoder: Box<dyn Read + '_> = match compression {
        Compression::None => Box::new(buffered),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(buffered)),
        Compression::Zstd => Box::new(
            zstd::stream::read::Decoder::with_buffer(buffered)
                .map_err(|e| Error::corrupt(format!("the zstd stream cannot be opened: {e}")))?,
        ),
    };
    let uncompressed = Cell::new(0u64);
    let mut plain = Budgeted {
        inner: decoder,
        budget,
        hasher: Sha256::new(),
        count: &uncompressed,
        compressed,
    };
    let changes = walk(&mut plain, budget, compression)?;
    // The tar stream ended: read what follows (zero padding), so that the
    // decompressor checks its trailer and the digest covers every byte.
    io::copy(&mut plain, &mut io::sink())
        .map_err(|e| io_error(e, &format!("the {} stream", compression.name())))?;
    if let Some(diff_id) = &expect.diff_id {
        let got = format!("sha256:{:x}", plain.hasher.finalize());
        if got != *diff_id {
            return Err(Error::corrupt(format!(
                "the uncompressed layer hashes to {got}, not to {diff_id} as the config's rootfs.diff_ids says"
            )));
        }
    }
    Ok(changes)
}

fn walk(
    plain: &mut impl Read,
    budget: &Budget,
    compression: Compression,
) -> Result<Vec<Change>, Error> {
    let mut tar = TarReader::new(Stream(plain));
    let mut changes = Vec::new();
    let stream = format!("the {} stream", compression.name());
    loop {
        let header = match tar.next_entry() {
            Ok(Some(h)) => h,
            Ok(None) => break,
            Err(e) => return Err(e.context(&stream)),
        };
        budget.add_entry()?;
        let change = change_of(&header)?;
        let change = match change {
            Change::Add {
                path,
                entry,
                content: None,
            } if entry.kind == Kind::File && KEPT_FILES.contains(&path.as_str()) => {
                let content = tar.read_data(MAX_KEPT_BYTES)?;
                Change::Add {
                    path,
                    entry,
                    content,
                }
            }
            // An executable file: the kernel reads its first line when it
            // is a script (`#!INTERPRETER [ARG]`, at most 256 bytes), and
            // its headers when it is an ELF program.
            Change::Add {
                path,
                mut entry,
                content: None,
            } if entry.kind == Kind::File && entry.any_exec() => {
                let head = tar.read_head(HEAD_MAX)?;
                entry.shebang = shebang(&head);
                entry.elf = super::fs::Elf::of(&head);
                Change::Add {
                    path,
                    entry,
                    content: None,
                }
            }
            other => other,
        };
        changes.push(change);
    }
    Ok(changes)
}

/// The AUFS metadata folders and file at the root of a layer.
const AUFS_METADATA: [&str; 3] = ["/.wh..wh.aufs", "/.wh..wh.plnk", "/.wh..wh.orph"];

fn is_aufs_metadata(path: &str) -> bool {
    AUFS_METADATA
        .iter()
        .any(|m| path == *m || path.strip_prefix(m).is_some_and(|r| r.starts_with('/')))
}

/// The change one tar entry makes, its name checked and normalised.
fn change_of(h: &Header) -> Result<Change, Error> {
    let path = normalize(&h.path)?;
    let name = base_name(&path);
    let shown = String::from_utf8_lossy(&h.path);
    // AUFS metadata at the root (`/.wh..wh.aufs`, and the folders
    // `/.wh..wh.plnk/` and `/.wh..wh.orph/`), which old Docker versions
    // exported with their layers, is no whiteout: it is read as plain
    // entries, so that hard links to `plnk` resolve, and dropped once the
    // layer is applied, as moby's unpacker does.
    if is_aufs_metadata(&path) {
        return plain_change(h, path);
    }
    if let Some(rest) = name.strip_prefix(".wh.") {
        let malformed = |why: &str| {
            Error::corrupt(format!("malformed whiteout `{shown}`: {why}"))
                .with_help("a whiteout is an empty regular file named `.wh.NAME` (or `.wh..wh..opq` for an opaque folder), as the OCI image spec defines")
        };
        if h.kind != EntryType::File {
            return Err(malformed("it is not a regular file"));
        }
        if h.size != 0 {
            return Err(malformed("it is not empty"));
        }
        if path == "/" || name == ".wh." {
            return Err(malformed("it names no file"));
        }
        if rest == ".wh..opq" {
            return Ok(Change::Opaque(parent(&path).to_string()));
        }
        if rest.starts_with(".wh.") {
            return Err(malformed(
                "`.wh..wh.` is reserved for `.wh..wh..opq` (aufs metadata is not part of an OCI layer)",
            ));
        }
        if rest == "." || rest == ".." {
            return Err(malformed("it names `.` or `..`"));
        }
        let dir = parent(&path);
        let target = if dir == "/" {
            format!("/{rest}")
        } else {
            format!("{dir}/{rest}")
        };
        return Ok(Change::Whiteout(target));
    }
    if let Some(bad) = path
        .split('/')
        .rev()
        .skip(1)
        .find(|c| c.starts_with(".wh."))
    {
        return Err(Error::corrupt(format!(
            "malformed whiteout `{shown}`: the whiteout `{bad}` is used as a folder"
        )));
    }
    plain_change(h, path)
}

/// The change of an entry that is no whiteout: `path` added (or, for a
/// hard link, linked).
fn plain_change(h: &Header, path: String) -> Result<Change, Error> {
    let shown = String::from_utf8_lossy(&h.path);
    let id = |n: u64, what: &str| {
        u32::try_from(n).map_err(|_| {
            Error::corrupt(format!(
                "tar entry `{shown}` has the {what} {n}, above 2^32-1"
            ))
        })
    };
    let (uid, gid) = (id(h.uid, "uid")?, id(h.gid, "gid")?);
    let kind = match h.kind {
        EntryType::HardLink => {
            let target = normalize(&h.link).map_err(|e| e.context("hard link target"))?;
            return Ok(Change::HardLink { path, target });
        }
        EntryType::File => Kind::File,
        EntryType::Dir => Kind::Dir,
        EntryType::Symlink => Kind::Symlink,
        EntryType::Char => Kind::Char,
        EntryType::Block => Kind::Block,
        EntryType::Fifo => Kind::Fifo,
    };
    let entry = Entry {
        kind,
        mode: h.mode,
        uid,
        gid,
        size: if kind == Kind::File { h.size } else { 0 },
        link: (kind == Kind::Symlink).then(|| String::from_utf8_lossy(&h.link).into_owned()),
        shebang: None,
        elf: None,
    };
    Ok(Change::Add {
        path,
        entry,
        content: None,
    })
}

/// A tar name as an absolute path: a leading `/` or `./` is relative to
/// the root (as container runtimes read it), `.` and empty components go,
/// and `..` goes up, but never above the root.
pub fn normalize(raw: &[u8]) -> Result<String, Error> {
    let name = String::from_utf8_lossy(raw);
    let mut parts: Vec<&str> = Vec::new();
    for c in name.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(Error::corrupt(format!(
                        "tar entry `{name}` climbs out of the image root with `..`"
                    ))
                    .with_help("a layer must only name paths inside the image; this one was crafted or broken"));
                }
            }
            c => parts.push(c),
        }
    }
    if parts.is_empty() {
        return Ok("/".to_string());
    }
    let mut out = String::with_capacity(name.len() + 1);
    for p in parts {
        out.push('/');
        out.push_str(p);
    }
    Ok(out)
}

/// Applies one layer's changes over the layers below (`fs`), with the
/// contents of kept files alongside. Whiteouts and opaque folders apply
/// to the layers below only, so they go first; then the entries, in order.
pub fn apply(
    fs: &mut FileSystem,
    kept: &mut BTreeMap<String, Vec<u8>>,
    changes: Vec<Change>,
    what: &str,
) -> Result<(), Error> {
    for c in &changes {
        match c {
            Change::Whiteout(path) => {
                if let Some(p) = physical(fs, path) {
                    fs.remove_tree(&p);
                    kept.retain(|k, _| k != &p && !k.starts_with(&format!("{p}/")));
                }
            }
            Change::Opaque(dir) => {
                if let Some(p) = physical(fs, dir) {
                    if fs.get(&p).is_some_and(|e| e.kind == Kind::Dir) {
                        fs.remove_children(&p);
                        let prefix = if p == "/" {
                            "/".to_string()
                        } else {
                            format!("{p}/")
                        };
                        kept.retain(|k, _| !k.starts_with(&prefix));
                    }
                }
            }
            _ => {}
        }
    }
    for c in changes {
        match c {
            Change::Add {
                path,
                entry,
                content,
            } => {
                let p = place(fs, &path).map_err(|e| e.context(what))?;
                let replaced_dir = fs.get(&p).is_some_and(|e| e.kind == Kind::Dir);
                if replaced_dir && entry.kind != Kind::Dir {
                    fs.remove_children(&p);
                }
                if p == "/" && entry.kind != Kind::Dir {
                    return Err(Error::corrupt(format!(
                        "{what}: the root of the image is not a folder"
                    )));
                }
                match content {
                    Some(c) => {
                        kept.insert(p.clone(), c);
                    }
                    None => {
                        kept.remove(&p);
                    }
                }
                fs.insert(p, entry);
            }
            Change::HardLink { path, target } => {
                let t = physical(fs, &target).unwrap_or(target.clone());
                let Some(e) = fs.get(&t).cloned() else {
                    return Err(Error::corrupt(format!(
                        "{what}: hard link {path} points to {target}, which does not exist"
                    )));
                };
                if e.kind == Kind::Dir {
                    return Err(Error::corrupt(format!(
                        "{what}: hard link {path} points to the folder {target}"
                    )));
                }
                let p = place(fs, &path).map_err(|e| e.context(what))?;
                if fs.get(&p).is_some_and(|e| e.kind == Kind::Dir) {
                    fs.remove_children(&p);
                }
                match kept.get(&t).cloned() {
                    Some(c) => {
                        kept.insert(p.clone(), c);
                    }
                    None => {
                        kept.remove(&p);
                    }
                }
                fs.insert(p, e);
            }
            Change::Whiteout(_) | Change::Opaque(_) => {}
        }
    }
    for m in AUFS_METADATA {
        fs.remove_tree(m);
    }
    kept.retain(|k, _| !is_aufs_metadata(k));
    Ok(())
}

/// Where `path` is in `fs` when its parent folders are resolved through
/// links (the last component as it is): `None` when a parent is missing.
fn physical(fs: &FileSystem, path: &str) -> Option<String> {
    if path == "/" {
        return Some("/".to_string());
    }
    let dir = parent(path);
    if fs.get(dir).is_some_and(|e| e.kind == Kind::Dir) {
        return Some(path.to_string());
    }
    let d = fs.resolve(dir).ok()?;
    (d.entry.kind == Kind::Dir).then(|| join(d.path, base_name(path)))
}

/// Where a new entry at `path` goes: its parent folders are resolved
/// through links, as a runtime extracting the layer does, and missing ones
/// are created (mode 0755, owned by root).
fn place(fs: &mut FileSystem, path: &str) -> Result<String, Error> {
    if path == "/" {
        return Ok("/".to_string());
    }
    let dir = parent(path);
    if fs.get(dir).is_some_and(|e| e.kind == Kind::Dir) {
        return Ok(path.to_string());
    }
    // Walk down from the root, creating folders and following links.
    let mut cur = "/".to_string();
    for comp in dir.split('/').filter(|c| !c.is_empty()) {
        let next = join(&cur, comp);
        match fs.get(&next).map(|e| e.kind) {
            None => {
                fs.insert(next.clone(), Entry::dir(0o755));
                cur = next;
            }
            Some(Kind::Dir) => cur = next,
            Some(Kind::Symlink) => {
                let r = fs
                    .resolve(&next)
                    .map_err(|e| e.to_error(&format!("the folder of {path}")))?;
                if r.entry.kind != Kind::Dir {
                    return Err(Error::corrupt(format!(
                        "the folder of {path} is a link to {}, which is not a folder",
                        r.path
                    )));
                }
                cur = r.path.to_string();
            }
            Some(_) => {
                return Err(Error::corrupt(format!(
                    "{next} is not a folder, but the layer puts {path} in it"
                )))
            }
        }
    }
    Ok(join(&cur, base_name(path)))
}

fn join(dir: &str, name: &str) -> String {
    if dir == "/" {
        format!("/{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// A reader that hashes and counts what passes through it, and refuses
/// to read past the size the descriptor gives.
struct Hashing<'a, R> {
    inner: R,
    hasher: Sha256,
    count: u64,
    shared: &'a Cell<u64>,
    limit: Option<u64>,
}

impl<'a, R> Hashing<'a, R> {
    fn new(inner: R, shared: &'a Cell<u64>, limit: Option<u64>) -> Self {
        Hashing {
            inner,
            hasher: Sha256::new(),
            count: 0,
            shared,
            limit,
        }
    }
}

impl<R: Read> Read for Hashing<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.count += n as u64;
        self.shared.set(self.count);
        if let Some(limit) = self.limit {
            if self.count > limit {
                return Err(io::Error::other(Error::corrupt(format!(
                    "the blob is longer than the {limit} bytes its descriptor gives"
                ))));
            }
        }
        Ok(n)
    }
}

/// The decompressed stream: hashed (for the diff_id), counted against the
/// budget, and checked for an expansion ratio no real layer has.
struct Budgeted<'a, R> {
    inner: R,
    budget: &'a Budget,
    hasher: Sha256,
    count: &'a Cell<u64>,
    compressed: &'a Cell<u64>,
}

impl<R: Read> Read for Budgeted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        let total = self.count.get() + n as u64;
        self.count.set(total);
        self.budget.add_bytes(n as u64).map_err(io::Error::other)?;
        let limits = &self.budget.limits;
        if total > limits.ratio_floor && total / self.compressed.get().max(1) > limits.max_ratio {
            return Err(io::Error::other(Error::too_large(format!(
                "the layer expands more than {}-fold ({} bytes from {} so far): a decompression bomb",
                limits.max_ratio,
                total,
                self.compressed.get()
            ))));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalised_and_may_not_climb_out() {
        assert_eq!(normalize(b"./usr/bin/").unwrap(), "/usr/bin");
        assert_eq!(normalize(b"/etc//passwd").unwrap(), "/etc/passwd");
        assert_eq!(normalize(b"a/../b").unwrap(), "/b");
        assert_eq!(normalize(b"./").unwrap(), "/");
        let e = normalize(b"../etc/passwd").unwrap_err();
        assert_eq!(e.rule.id, "image-corrupt");
        assert!(e.message.contains("climbs out"), "{e}");
        assert!(normalize(b"a/../../b").is_err());
    }

    proptest::proptest! {
        #[test]
        fn damaged_layers_are_errors_never_panics(
            pos in 0usize..4000,
            byte in proptest::prelude::any::<u8>(),
            cut in 0usize..4000,
            kind in 0u8..3,
        ) {
            use crate::oci::fixture::{Compression as C, Layer};
            let c = [C::None, C::Gzip, C::Zstd][kind as usize];
            let (blob, mut bytes) = Layer::new(c)
                .dir("usr/bin", 0o755)
                .file("usr/bin/a", 0o755, &[5u8; 700])
                .symlink("bin", "usr/bin")
                .whiteout("opt/x")
                .file("etc/passwd", 0o644, b"root:x:0:0::/root:/bin/sh\n")
                .build()
                .unwrap();
            let damaged = pos < bytes.len() || cut.max(1) < bytes.len();
            if pos < bytes.len() {
                bytes[pos] ^= byte | 1;
            }
            bytes.truncate(cut.max(1));
            let compression = Compression::of_layer(&blob.media_type);
            let budget = Budget::new(Limits::default());
            // Unverified, so that the stream itself meets the damage.
            let _ = read_layer(&bytes[..], compression, &Expect::default(), &budget, "layer");
            let verified = Expect { blob: Some((blob.digest.clone(), blob.size)), diff_id: Some(blob.diff_id.clone()) };
            let r = read_layer(&bytes[..], compression, &verified, &budget, "layer");
            proptest::prop_assert_eq!(r.is_err(), damaged);
        }
    }
}
