//! A small, deterministic builder of image layers and OCI image layouts,
//! for tests and benchmarks: the same calls give the same bytes (mtime 0,
//! fixed compression levels, sorted JSON), so digests are stable.
//!
//! [`agent_layout`] writes images of the whystack agent as DOMAIN.md
//! describes them: user `node` (uid 1000, HOME /home/node), the entrypoint
//! `apps/runner/docker-entrypoint.sh` in `/app`, no ports; 1.28.0 without
//! `whystack-health`, 1.29.0 with it in /usr/local/bin, and 1.30.0 as a
//! multi-platform index whose arm64 image lacks it.

use super::spec::{OCI_CONFIG, OCI_INDEX, OCI_MANIFEST};
/// Tar entry types, for [`Layer::raw`].
pub use ::tar::EntryType;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// How a layer is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    pub fn media_type(self) -> &'static str {
        match self {
            Compression::None => "application/vnd.oci.image.layer.v1.tar",
            Compression::Gzip => "application/vnd.oci.image.layer.v1.tar+gzip",
            Compression::Zstd => "application/vnd.oci.image.layer.v1.tar+zstd",
        }
    }
}

/// A writer that hashes and counts what goes through it.
pub struct Hashed<W> {
    inner: W,
    hasher: Sha256,
    count: u64,
}

impl<W> Hashed<W> {
    pub fn new(inner: W) -> Self {
        Hashed {
            inner,
            hasher: Sha256::new(),
            count: 0,
        }
    }

    /// The digest (`sha256:…`) and size of what was written.
    pub fn finish(self) -> (String, u64, W) {
        (
            format!("sha256:{:x}", self.hasher.finalize()),
            self.count,
            self.inner,
        )
    }
}

impl<W: Write> Write for Hashed<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

enum Encoder<W: Write> {
    Plain(Hashed<W>),
    Gzip(flate2::write::GzEncoder<Hashed<W>>),
    Zstd(zstd::stream::write::Encoder<'static, Hashed<W>>),
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Encoder::Plain(w) => w.write(buf),
            Encoder::Gzip(w) => w.write(buf),
            Encoder::Zstd(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Encoder::Plain(w) => w.flush(),
            Encoder::Gzip(w) => w.flush(),
            Encoder::Zstd(w) => w.flush(),
        }
    }
}

/// A finished layer: its digests, size and media type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerBlob {
    /// The digest of the blob as stored.
    pub digest: String,
    pub size: u64,
    /// The digest of the uncompressed tar stream.
    pub diff_id: String,
    pub media_type: String,
}

/// Writes a layer as a stream: entries go straight through the tar
/// builder and the compressor into `W`, hashed on the way.
pub struct LayerWriter<W: Write> {
    tar: tar::Builder<Hashed<Encoder<W>>>,
    compression: Compression,
}

impl<W: Write> LayerWriter<W> {
    pub fn new(out: W, compression: Compression) -> io::Result<Self> {
        let raw = Hashed::new(out);
        let enc = match compression {
            Compression::None => Encoder::Plain(raw),
            Compression::Gzip => Encoder::Gzip(flate2::write::GzEncoder::new(
                raw,
                flate2::Compression::new(6),
            )),
            Compression::Zstd => Encoder::Zstd(zstd::stream::write::Encoder::new(raw, 3)?),
        };
        let mut tar = tar::Builder::new(Hashed::new(enc));
        tar.mode(tar::HeaderMode::Deterministic);
        Ok(LayerWriter { tar, compression })
    }

    fn header(kind: tar::EntryType, mode: u32, uid: u64, gid: u64, size: u64) -> tar::Header {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_mode(mode);
        h.set_uid(uid);
        h.set_gid(gid);
        h.set_size(size);
        h.set_mtime(0);
        h
    }

    pub fn dir(&mut self, path: &str, mode: u32, uid: u64, gid: u64) -> io::Result<()> {
        let mut h = Self::header(tar::EntryType::Directory, mode, uid, gid, 0);
        let p = format!("{}/", path.trim_end_matches('/'));
        self.tar.append_data(&mut h, p, io::empty())
    }

    pub fn file(
        &mut self,
        path: &str,
        mode: u32,
        uid: u64,
        gid: u64,
        data: &[u8],
    ) -> io::Result<()> {
        let mut h = Self::header(tar::EntryType::Regular, mode, uid, gid, data.len() as u64);
        self.tar.append_data(&mut h, path, data)
    }

    pub fn symlink(&mut self, path: &str, target: &str) -> io::Result<()> {
        let mut h = Self::header(tar::EntryType::Symlink, 0o777, 0, 0, 0);
        self.tar.append_link(&mut h, path, target)
    }

    pub fn hardlink(&mut self, path: &str, target: &str) -> io::Result<()> {
        let mut h = Self::header(tar::EntryType::Link, 0o644, 0, 0, 0);
        self.tar.append_link(&mut h, path, target)
    }

    /// An entry written as given, name bytes included, without the checks
    /// of the tar builder (for hostile layers: `..`, odd whiteouts).
    pub fn raw(
        &mut self,
        name: &[u8],
        kind: tar::EntryType,
        mode: u32,
        data: &[u8],
    ) -> io::Result<()> {
        let mut h = Self::header(kind, mode, 0, 0, data.len() as u64);
        let n = name.len().min(100);
        h.as_old_mut().name = [0; 100];
        h.as_old_mut().name[..n].copy_from_slice(&name[..n]);
        h.set_cksum();
        self.tar.append(&h, data)
    }

    /// Ends the tar stream and the compression.
    pub fn finish(self) -> io::Result<(LayerBlob, W)> {
        let plain = self.tar.into_inner()?;
        let (diff_id, _, enc) = plain.finish();
        let raw = match enc {
            Encoder::Plain(w) => w,
            Encoder::Gzip(w) => w.finish()?,
            Encoder::Zstd(w) => w.finish()?,
        };
        let (digest, size, out) = raw.finish();
        Ok((
            LayerBlob {
                digest,
                size,
                diff_id,
                media_type: self.compression.media_type().to_string(),
            },
            out,
        ))
    }
}

#[derive(Debug, Clone)]
enum Op {
    Dir(String, u32, u64, u64),
    File(String, u32, u64, u64, Vec<u8>),
    Symlink(String, String),
    HardLink(String, String),
    Raw(Vec<u8>, tar::EntryType, u32, Vec<u8>),
}

/// A layer described in memory, entry by entry.
#[derive(Debug, Clone)]
pub struct Layer {
    pub compression: Compression,
    ops: Vec<Op>,
}

impl Layer {
    pub fn new(compression: Compression) -> Self {
        Layer {
            compression,
            ops: Vec::new(),
        }
    }

    /// A folder owned by root.
    pub fn dir(self, path: &str, mode: u32) -> Self {
        self.dir_owned(path, mode, 0, 0)
    }

    pub fn dir_owned(mut self, path: &str, mode: u32, uid: u64, gid: u64) -> Self {
        self.ops.push(Op::Dir(path.into(), mode, uid, gid));
        self
    }

    /// A regular file owned by root.
    pub fn file(self, path: &str, mode: u32, data: &[u8]) -> Self {
        self.file_owned(path, mode, 0, 0, data)
    }

    pub fn file_owned(mut self, path: &str, mode: u32, uid: u64, gid: u64, data: &[u8]) -> Self {
        self.ops
            .push(Op::File(path.into(), mode, uid, gid, data.to_vec()));
        self
    }

    pub fn symlink(mut self, path: &str, target: &str) -> Self {
        self.ops.push(Op::Symlink(path.into(), target.into()));
        self
    }

    pub fn hardlink(mut self, path: &str, target: &str) -> Self {
        self.ops.push(Op::HardLink(path.into(), target.into()));
        self
    }

    /// Removes `path` of the layers below (`.wh.NAME` beside it).
    pub fn whiteout(self, path: &str) -> Self {
        let (dir, name) = match path.rsplit_once('/') {
            Some((d, n)) => (format!("{d}/"), n),
            None => (String::new(), path),
        };
        self.file(&format!("{dir}.wh.{name}"), 0o644, b"")
    }

    /// Hides what the layers below have in folder `dir`.
    pub fn opaque(self, dir: &str) -> Self {
        self.file(
            &format!("{}/.wh..wh..opq", dir.trim_end_matches('/')),
            0o644,
            b"",
        )
    }

    /// An entry with raw name bytes (see [`LayerWriter::raw`]).
    pub fn raw(mut self, name: &[u8], kind: tar::EntryType, mode: u32, data: &[u8]) -> Self {
        self.ops
            .push(Op::Raw(name.to_vec(), kind, mode, data.to_vec()));
        self
    }

    /// The layer's blob (compressed as asked) and its digests.
    pub fn build(&self) -> io::Result<(LayerBlob, Vec<u8>)> {
        let mut w = LayerWriter::new(Vec::new(), self.compression)?;
        for op in &self.ops {
            match op {
                Op::Dir(p, m, u, g) => w.dir(p, *m, *u, *g)?,
                Op::File(p, m, u, g, d) => w.file(p, *m, *u, *g, d)?,
                Op::Symlink(p, t) => w.symlink(p, t)?,
                Op::HardLink(p, t) => w.hardlink(p, t)?,
                Op::Raw(n, k, m, d) => w.raw(n, *k, *m, d)?,
            }
        }
        w.finish()
    }
}

/// What goes in an image config.
#[derive(Debug, Clone, Default)]
pub struct ConfigSpec {
    pub user: String,
    pub env: Vec<String>,
    pub entrypoint: Vec<String>,
    pub cmd: Vec<String>,
    pub working_dir: String,
    pub exposed_ports: Vec<String>,
    pub labels: Vec<(String, String)>,
}

/// An image of one platform.
#[derive(Debug, Clone)]
pub struct ImageSpec {
    pub os: String,
    pub architecture: String,
    pub variant: Option<String>,
    pub config: ConfigSpec,
    pub layers: Vec<Layer>,
}

/// A blob written to a layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobRef {
    pub digest: String,
    pub size: u64,
    pub media_type: String,
}

impl BlobRef {
    fn descriptor(&self) -> Value {
        json!({"mediaType": self.media_type, "digest": self.digest, "size": self.size})
    }

    /// The blob's hex digest.
    pub fn hex(&self) -> &str {
        self.digest.trim_start_matches("sha256:")
    }
}

/// An image written to a layout: its manifest, config and layers.
#[derive(Debug, Clone)]
pub struct BuiltImage {
    pub manifest: BlobRef,
    pub config: BlobRef,
    pub layers: Vec<LayerBlob>,
    pub os: String,
    pub architecture: String,
    pub variant: Option<String>,
}

/// Writes an OCI image layout folder.
pub struct LayoutWriter {
    dir: PathBuf,
    tags: Vec<(String, BlobRef)>,
}

impl LayoutWriter {
    pub fn create(dir: &Path) -> io::Result<Self> {
        std::fs::create_dir_all(dir.join("blobs").join("sha256"))?;
        std::fs::write(dir.join("oci-layout"), br#"{"imageLayoutVersion":"1.0.0"}"#)?;
        Ok(LayoutWriter {
            dir: dir.to_path_buf(),
            tags: Vec::new(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of blob `digest`.
    pub fn blob_path(&self, digest: &str) -> PathBuf {
        self.dir
            .join("blobs")
            .join("sha256")
            .join(digest.trim_start_matches("sha256:"))
    }

    /// Stores `bytes` as a blob.
    pub fn blob(&self, bytes: &[u8], media_type: &str) -> io::Result<BlobRef> {
        let digest = format!("sha256:{:x}", Sha256::digest(bytes));
        std::fs::write(self.blob_path(&digest), bytes)?;
        Ok(BlobRef {
            digest,
            size: bytes.len() as u64,
            media_type: media_type.to_string(),
        })
    }

    /// A file to stream a large blob into; [`LayoutWriter::commit`] moves
    /// it to its digest's name.
    pub fn blob_file(&self) -> io::Result<tempfile::NamedTempFile> {
        tempfile::NamedTempFile::new_in(self.dir.join("blobs"))
    }

    pub fn commit(&self, file: tempfile::NamedTempFile, digest: &str) -> io::Result<()> {
        file.persist(self.blob_path(digest))
            .map(|_| ())
            .map_err(|e| e.error)
    }

    /// Writes every layer, the config and the manifest of `spec`.
    pub fn image(&self, spec: &ImageSpec) -> io::Result<BuiltImage> {
        let mut layers = Vec::new();
        for l in &spec.layers {
            let (blob, bytes) = l.build()?;
            std::fs::write(self.blob_path(&blob.digest), bytes)?;
            layers.push(blob);
        }
        self.image_from_layers(spec, layers)
    }

    /// Writes the config and manifest of `spec` over layers already stored.
    pub fn image_from_layers(
        &self,
        spec: &ImageSpec,
        layers: Vec<LayerBlob>,
    ) -> io::Result<BuiltImage> {
        let c = &spec.config;
        let ports: serde_json::Map<String, Value> = c
            .exposed_ports
            .iter()
            .map(|p| (p.clone(), json!({})))
            .collect();
        let labels: serde_json::Map<String, Value> = c
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let mut run = json!({
            "User": c.user,
            "Env": c.env,
            "Entrypoint": c.entrypoint,
            "Cmd": c.cmd,
            "WorkingDir": c.working_dir,
            "Labels": labels,
        });
        if !ports.is_empty() {
            run["ExposedPorts"] = Value::Object(ports);
        }
        let mut config = json!({
            "architecture": spec.architecture,
            "os": spec.os,
            "config": run,
            "rootfs": {"type": "layers", "diff_ids": layers.iter().map(|l| l.diff_id.clone()).collect::<Vec<_>>()},
        });
        if let Some(v) = &spec.variant {
            config["variant"] = json!(v);
        }
        let config = self.blob(&to_bytes(&config)?, OCI_CONFIG)?;
        let manifest = json!({
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": config.descriptor(),
            "layers": layers.iter().map(|l| json!({"mediaType": l.media_type, "digest": l.digest, "size": l.size})).collect::<Vec<_>>(),
        });
        let manifest = self.blob(&to_bytes(&manifest)?, OCI_MANIFEST)?;
        Ok(BuiltImage {
            manifest,
            config,
            layers,
            os: spec.os.clone(),
            architecture: spec.architecture.clone(),
            variant: spec.variant.clone(),
        })
    }

    /// Writes an index of `images`, one entry per platform.
    pub fn index(&self, images: &[&BuiltImage]) -> io::Result<BlobRef> {
        let manifests: Vec<Value> = images
            .iter()
            .map(|i| {
                let mut d = i.manifest.descriptor();
                let mut p = json!({"architecture": i.architecture, "os": i.os});
                if let Some(v) = &i.variant {
                    p["variant"] = json!(v);
                }
                d["platform"] = p;
                d
            })
            .collect();
        let index = json!({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests});
        self.blob(&to_bytes(&index)?, OCI_INDEX)
    }

    /// Names `blob` (a manifest or an index) `tag` in index.json.
    pub fn tag(&mut self, tag: &str, blob: &BlobRef) {
        self.tags.push((tag.to_string(), blob.clone()));
    }

    /// Writes index.json.
    pub fn finish(&self) -> io::Result<()> {
        let manifests: Vec<Value> = self
            .tags
            .iter()
            .map(|(t, b)| {
                let mut d = b.descriptor();
                d["annotations"] = json!({ super::layout::REF_NAME: t });
                d
            })
            .collect();
        let index = json!({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests});
        std::fs::write(self.dir.join("index.json"), to_bytes(&index)?)
    }
}

fn to_bytes(v: &Value) -> io::Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(io::Error::other)
}

/// The whystack agent's `/etc/passwd`.
pub const PASSWD: &str = "root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n";
/// The whystack agent's `/etc/group`.
pub const GROUP: &str = "root:x:0:\nnode:x:1000:\n";
/// The `PATH` of the agent image.
pub const AGENT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// An image of the whystack agent at `version` for `architecture`, with
/// or without `/usr/local/bin/whystack-health`. Its three layers are
/// gzip (the base system), zstd (the Node.js runtime) and plain tar (the
/// agent), and show every case the reader must handle: `/bin ->
/// usr/bin`, a file without execute bits, a hard link, a whiteout, an
/// opaque folder.
pub fn agent_image(version: &str, health: bool, architecture: &str) -> ImageSpec {
    let base = Layer::new(Compression::Gzip)
        .dir("usr", 0o755)
        .dir("usr/bin", 0o755)
        .file(
            "usr/bin/dash",
            0o755,
            format!("dash for {architecture}").as_bytes(),
        )
        .symlink("usr/bin/sh", "dash")
        .file("usr/bin/env", 0o755, b"env")
        .file("usr/bin/README", 0o644, b"not a command")
        .symlink("bin", "usr/bin")
        .dir("usr/local", 0o755)
        .dir("usr/local/bin", 0o755)
        .dir("etc", 0o755)
        .file("etc/passwd", 0o644, PASSWD.as_bytes())
        .file("etc/group", 0o644, GROUP.as_bytes())
        .dir("tmp", 0o1777)
        .dir("home", 0o755)
        .dir_owned("home/node", 0o755, 1000, 1000)
        .dir("root", 0o700)
        .dir("opt/old", 0o755)
        .file("opt/old/cache.db", 0o644, b"stale")
        .dir("var/cache/apt", 0o755)
        .file("var/cache/apt/pkgcache.bin", 0o644, b"old cache");
    let runtime = Layer::new(Compression::Zstd)
        .file(
            "usr/local/bin/node",
            0o755,
            format!("node for {architecture}").as_bytes(),
        )
        .hardlink("usr/local/bin/nodejs", "usr/local/bin/node")
        .dir("usr/local/lib/node_modules/npm/bin", 0o755)
        .file(
            "usr/local/lib/node_modules/npm/bin/npm-cli.js",
            0o755,
            b"npm",
        )
        .symlink(
            "usr/local/bin/npm",
            "../lib/node_modules/npm/bin/npm-cli.js",
        )
        .whiteout("opt/old/cache.db")
        .dir("var/cache/apt", 0o755)
        .opaque("var/cache/apt")
        .file("var/cache/apt/srcpkgcache.bin", 0o644, b"new cache");
    let mut app = Layer::new(Compression::None)
        .dir_owned("app", 0o755, 1000, 1000)
        .dir_owned("app/apps/runner", 0o755, 1000, 1000)
        .file_owned(
            "app/apps/runner/docker-entrypoint.sh",
            0o755,
            1000,
            1000,
            b"#!/bin/sh\nexec \"$@\"\n",
        )
        .file_owned(
            "app/apps/runner/dist/index.js",
            0o644,
            1000,
            1000,
            format!("// whystack agent {version}\n").as_bytes(),
        );
    if health {
        app = app.file(
            "usr/local/bin/whystack-health",
            0o755,
            format!("whystack-health {version} {architecture}").as_bytes(),
        );
    }
    let mut env = vec![
        format!("PATH={AGENT_PATH}"),
        "NODE_VERSION=22.11.0".to_string(),
        "NODE_ENV=production".to_string(),
    ];
    if health {
        env.push("RUNNER_HEALTH_DIR=/tmp/whystack-health".to_string());
    }
    ImageSpec {
        os: "linux".into(),
        architecture: architecture.into(),
        variant: (architecture == "arm64").then(|| "v8".to_string()),
        config: ConfigSpec {
            user: "node".into(),
            env,
            entrypoint: vec!["apps/runner/docker-entrypoint.sh".into()],
            cmd: vec![
                "node".into(),
                "--import".into(),
                "@whystack/otel/register".into(),
                "apps/runner/dist/index.js".into(),
            ],
            working_dir: "/app".into(),
            exposed_ports: Vec::new(),
            labels: vec![
                (
                    "org.opencontainers.image.title".into(),
                    "whystack-agent".into(),
                ),
                ("org.opencontainers.image.version".into(), version.into()),
            ],
        },
        layers: vec![base, runtime, app],
    }
}

/// The agent layout's images.
#[derive(Debug, Clone)]
pub struct AgentLayout {
    /// 1.28.0, without whystack-health.
    pub v1_28: BuiltImage,
    /// 1.29.0, with it.
    pub v1_29: BuiltImage,
    /// 1.30.0 for amd64 (with it) and arm64 (without), and their index.
    pub v1_30_amd64: BuiltImage,
    pub v1_30_arm64: BuiltImage,
    pub v1_30_index: BlobRef,
}

/// Writes an OCI layout at `dir` with the agent's 1.28.0, 1.29.0 and
/// 1.30.0 (multi-platform) images, tagged by version.
pub fn agent_layout(dir: &Path) -> io::Result<AgentLayout> {
    let mut w = LayoutWriter::create(dir)?;
    let v1_28 = w.image(&agent_image("1.28.0", false, "amd64"))?;
    let v1_29 = w.image(&agent_image("1.29.0", true, "amd64"))?;
    let v1_30_amd64 = w.image(&agent_image("1.30.0", true, "amd64"))?;
    let v1_30_arm64 = w.image(&agent_image("1.30.0", false, "arm64"))?;
    let v1_30_index = w.index(&[&v1_30_amd64, &v1_30_arm64])?;
    w.tag("1.28.0", &v1_28.manifest);
    w.tag("1.29.0", &v1_29.manifest);
    w.tag("1.30.0", &v1_30_index);
    w.finish()?;
    Ok(AgentLayout {
        v1_28,
        v1_29,
        v1_30_amd64,
        v1_30_arm64,
        v1_30_index,
    })
}
