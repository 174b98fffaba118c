//! Images built by the fixture builder, read back: the merged filesystem,
//! the config and user, the queries, the cache, and every fault the reader
//! must turn into a clear error.

use super::fixture::{self, agent_image, Compression, EntryType, Layer, LayerBlob, LayoutWriter};
use super::*;
use std::path::Path;

fn layout_source(dir: &Path, tag: &str) -> SourceRef {
    parse_source(&format!("oci:{}:{tag}", dir.display())).unwrap()
}

fn open_tag(dir: &Path, tag: &str) -> Result<Image, Error> {
    open(&layout_source(dir, tag), None, &Options::default())
}

/// A layout at `dir` with one image of `layers` (the agent's config),
/// tagged `t`.
fn single(dir: &Path, layers: Vec<Layer>) -> fixture::BuiltImage {
    let mut spec = agent_image("1.0.0", false, "amd64");
    spec.layers = layers;
    let mut w = LayoutWriter::create(dir).unwrap();
    let img = w.image(&spec).unwrap();
    w.tag("t", &img.manifest);
    w.finish().unwrap();
    img
}

/// Like [`single`], but with layer blobs given as they are.
fn single_blobs(dir: &Path, blobs: Vec<(LayerBlob, Vec<u8>)>) -> fixture::BuiltImage {
    let spec = agent_image("1.0.0", false, "amd64");
    let mut w = LayoutWriter::create(dir).unwrap();
    let mut layers = Vec::new();
    for (b, bytes) in blobs {
        std::fs::write(w.blob_path(&b.digest), bytes).unwrap();
        layers.push(b);
    }
    let img = w.image_from_layers(&spec, layers).unwrap();
    w.tag("t", &img.manifest);
    w.finish().unwrap();
    img
}

fn base() -> Layer {
    Layer::new(Compression::Gzip)
        .dir("usr/bin", 0o755)
        .file("usr/bin/tool", 0o755, b"tool")
        .file("etc/passwd", 0o644, fixture::PASSWD.as_bytes())
}

fn err_of(dir: &Path) -> Error {
    open_tag(dir, "t").expect_err("the image must not read")
}

#[test]
fn the_agent_image_reads_as_its_layers_say() {
    let dir = tempfile::tempdir().unwrap();
    let built = fixture::agent_layout(dir.path()).unwrap();
    let img = open_tag(dir.path(), "1.29.0").unwrap();
    assert_eq!(
        img.digest.as_deref(),
        Some(built.v1_29.manifest.digest.as_str())
    );
    assert_eq!(img.tag.as_deref(), Some("1.29.0"));
    assert_eq!(img.platforms.len(), 1);
    let p = &img.platforms[0];
    assert_eq!(p.name(), "linux/amd64");
    assert_eq!(
        p.manifest_digest.as_deref(),
        Some(built.v1_29.manifest.digest.as_str())
    );
    assert_eq!(p.config_digest, built.v1_29.config.digest);
    assert!(!p.cached);
    // The config.
    assert_eq!(p.config.user, "node");
    assert_eq!(p.config.entrypoint, ["apps/runner/docker-entrypoint.sh"]);
    assert_eq!(p.config.cmd[0], "node");
    assert_eq!(p.config.cwd(), "/app");
    assert!(p.config.ports().is_empty());
    assert_eq!(p.config.version_label(), Some("1.29.0"));
    assert_eq!(p.config.path(), fixture::AGENT_PATH);
    assert_eq!(
        p.config.env_var("RUNNER_HEALTH_DIR"),
        Some("/tmp/whystack-health")
    );
    // The user, through /etc/passwd.
    let u = p.user.as_ref().unwrap();
    assert_eq!(u.name.as_deref(), Some("node"));
    assert_eq!((u.uid, u.gid, u.home.as_str()), (1000, 1000, "/home/node"));
    // Commands, through PATH and links.
    let h = p.find_command("whystack-health").unwrap();
    assert_eq!(h.path, "/usr/local/bin/whystack-health");
    assert!(can_execute(h.entry, 1000, &[1000]));
    assert!(p
        .may_execute("whystack-health", p.lookup(), 1000, &[1000])
        .is_ok());
    let sh = p.find_command("sh").unwrap();
    assert_eq!(
        (sh.path.as_str(), sh.target.as_str()),
        ("/usr/bin/sh", "/usr/bin/dash")
    );
    assert_eq!(p.find_command("/bin/sh").unwrap().target, "/usr/bin/dash");
    let npm = p.find_command("npm").unwrap();
    assert_eq!(npm.target, "/usr/local/lib/node_modules/npm/bin/npm-cli.js");
    // The entrypoint is relative to the working folder.
    let ep = p.find_command("apps/runner/docker-entrypoint.sh").unwrap();
    assert_eq!(ep.target, "/app/apps/runner/docker-entrypoint.sh");
    assert_eq!(ep.entry.uid, 1000);
    // A file without execute bits is found, and refused.
    assert!(matches!(
        p.may_execute("/usr/bin/README", p.lookup(), 1000, &[1000]),
        Err(CommandError::NotExecutable { .. })
    ));
    assert!(p.commands().iter().all(|(n, _)| n != "README"));
    // A hard link is a copy of its target's entry.
    let node = p.fs.get("/usr/local/bin/node").unwrap();
    assert_eq!(p.fs.get("/usr/local/bin/nodejs"), Some(node));
    // The whiteout removed the file below; the opaque folder hid the
    // old cache but kept the new one of its own layer.
    assert!(p.fs.get("/opt/old/cache.db").is_none());
    assert!(p.fs.get("/opt/old").is_some());
    assert!(p.fs.get("/var/cache/apt/pkgcache.bin").is_none());
    assert!(p.fs.get("/var/cache/apt/srcpkgcache.bin").is_some());
    // Folders the tar never named are there.
    assert_eq!(p.fs.get("/opt").map(|e| e.kind), Some(Kind::Dir));
    assert_eq!(p.fs.get("/tmp").map(|e| e.mode), Some(0o1777));
    // Nothing of the markers is left.
    assert!(p.fs.iter().all(|(path, _)| !path.contains(".wh.")));
    let names: Vec<String> = p.commands().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "dash",
            "env",
            "node",
            "nodejs",
            "npm",
            "sh",
            "whystack-health"
        ]
    );
}

#[test]
fn releases_and_platforms_differ_as_built() {
    let dir = tempfile::tempdir().unwrap();
    let built = fixture::agent_layout(dir.path()).unwrap();
    let old = open_tag(dir.path(), "1.28.0").unwrap();
    assert!(old.platforms[0].find_command("whystack-health").is_none());
    assert_eq!(
        old.platforms[0].may_execute("whystack-health", old.platforms[0].lookup(), 1000, &[1000]),
        Err(CommandError::NotFound)
    );
    let multi = open_tag(dir.path(), "1.30.0").unwrap();
    assert_eq!(
        multi.digest.as_deref(),
        Some(built.v1_30_index.digest.as_str())
    );
    assert_eq!(multi.media_type, spec::OCI_INDEX);
    let names: Vec<String> = multi.platforms.iter().map(Platform::name).collect();
    assert_eq!(names, ["linux/amd64", "linux/arm64/v8"]);
    assert_eq!(
        multi.platforms[1].manifest_digest.as_deref(),
        Some(built.v1_30_arm64.manifest.digest.as_str())
    );
    let lacking: Vec<String> = multi
        .lacking("whystack-health")
        .into_iter()
        .map(Platform::name)
        .collect();
    assert_eq!(lacking, ["linux/arm64/v8"]);
    assert!(!multi.has_command("whystack-health"));
    assert!(multi.has_command("node"));

    let mut images = BTreeMap::new();
    for v in ["1.28.0", "1.29.0", "1.30.0"] {
        images.insert(Version::parse(v).unwrap(), open_tag(dir.path(), v).unwrap());
    }
    let with: Vec<String> = versions_with_command(&images, "whystack-health")
        .into_iter()
        .map(Version::to_string)
        .collect();
    assert_eq!(with, ["1.29.0"]);
    let v = Version::parse("1.28.0").unwrap();
    assert_eq!(
        nearest_with_command(&images, &v, "whystack-health").map(Version::to_string),
        Some("1.29.0".into())
    );
    let v = Version::parse("1.30.0").unwrap();
    assert_eq!(
        nearest_with_command(&images, &v, "whystack-health").map(Version::to_string),
        Some("1.29.0".into())
    );
    assert_eq!(nearest_with_command(&images, &v, "missing"), None);
}

#[test]
fn tags_are_chosen_and_a_missing_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    fixture::agent_layout(dir.path()).unwrap();
    let src = parse_source(&format!("oci:{}", dir.path().display())).unwrap();
    // The version asked for is the tag when the source has none.
    let img = open(&src, Some("1.28.0"), &Options::default()).unwrap();
    assert_eq!(img.tag.as_deref(), Some("1.28.0"));
    let e = open(&src, Some("1.27.0"), &Options::default()).unwrap_err();
    assert_eq!(e.rule.id, "image-unavailable");
    assert!(e.message.contains("`1.27.0`"), "{e}");
    assert!(e.message.contains("1.28.0, 1.29.0, 1.30.0"), "{e}");
    let e = open(&src, None, &Options::default()).unwrap_err();
    assert!(e.message.contains("holds 3 images"), "{e}");
    let e = open_tag(&dir.path().join("nope"), "1.0.0").unwrap_err();
    assert_eq!(e.rule.id, "image-unavailable");
    assert!(e.message.contains("does not exist"), "{e}");
}

#[test]
fn facts_are_cached_by_digest() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let built = fixture::agent_layout(dir.path()).unwrap();
    let opts = Options {
        cache_dir: Some(cache.path().to_path_buf()),
        ..Options::default()
    };
    let src = layout_source(dir.path(), "1.30.0");
    let first = open(&src, None, &opts).unwrap();
    assert!(first.platforms.iter().all(|p| !p.cached));
    // The layers go: the second read must come from the cache alone.
    for l in built
        .v1_30_amd64
        .layers
        .iter()
        .chain(&built.v1_30_arm64.layers)
    {
        let _ = std::fs::remove_file(dir.path().join("blobs/sha256").join(&l.digest[7..]));
    }
    let start = std::time::Instant::now();
    let second = open(&src, None, &opts).unwrap();
    let took = start.elapsed();
    assert!(second.platforms.iter().all(|p| p.cached));
    for (a, b) in first.platforms.iter().zip(&second.platforms) {
        assert_eq!(a.fs, b.fs);
        assert_eq!(a.config, b.config);
        assert_eq!(a.user, b.user);
        assert_eq!(a.name(), b.name());
        assert_eq!(a.manifest_digest, b.manifest_digest);
    }
    assert!(took.as_millis() < 500, "a cached read took {took:?}");
    // Without the cache the missing layers are an error.
    let e = open(&src, None, &Options::default()).unwrap_err();
    assert_eq!(e.rule.id, "image-corrupt");
    assert!(e.message.contains("missing"), "{e}");
    // A damaged cache file is ignored, not trusted.
    for f in std::fs::read_dir(cache.path().join("oci-v3")).unwrap() {
        std::fs::write(f.unwrap().path(), b"{not json").unwrap();
    }
    let e = open(&src, None, &opts).unwrap_err();
    assert_eq!(e.rule.id, "image-corrupt");
}

#[test]
fn a_tampered_blob_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let img = single(dir.path(), vec![base()]);
    let path = dir
        .path()
        .join("blobs/sha256")
        .join(&img.layers[0].digest[7..]);
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    let e = err_of(dir.path());
    assert_eq!(e.rule.id, "image-corrupt");
    assert!(e.message.contains("not to the digest"), "{e}");
    assert!(e.message.contains("layer 1"), "{e}");
    // A tampered config, too.
    let dir = tempfile::tempdir().unwrap();
    let img = single(dir.path(), vec![base()]);
    let path = dir.path().join("blobs/sha256").join(img.config.hex());
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("node", "root");
    std::fs::write(&path, text).unwrap();
    let e = err_of(dir.path());
    assert!(e.message.contains("not to the digest"), "{e}");
}

#[test]
fn a_blob_of_the_wrong_size_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (mut blob, bytes) = base().build().unwrap();
    blob.size += 10;
    single_blobs(dir.path(), vec![(blob, bytes)]);
    let e = err_of(dir.path());
    assert_eq!(e.rule.id, "image-corrupt");
    assert!(e.message.contains("its descriptor says"), "{e}");
}

#[test]
fn a_wrong_diff_id_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (mut blob, bytes) = base().build().unwrap();
    blob.diff_id = format!("sha256:{}", "0".repeat(64));
    single_blobs(dir.path(), vec![(blob, bytes)]);
    let e = err_of(dir.path());
    assert_eq!(e.rule.id, "image-corrupt");
    assert!(e.message.contains("rootfs.diff_ids"), "{e}");
}

#[test]
fn an_unknown_media_type_is_unsupported() {
    let dir = tempfile::tempdir().unwrap();
    let (mut blob, bytes) = base().build().unwrap();
    blob.media_type = "application/vnd.example.layer.v1.tar+lz4".into();
    single_blobs(dir.path(), vec![(blob, bytes)]);
    let e = err_of(dir.path());
    assert_eq!(e.rule.id, "image-unsupported");
    assert!(e.message.contains("tar+lz4"), "{e}");
}

#[test]
fn a_truncated_layer_is_corrupt() {
    for c in [Compression::Gzip, Compression::Zstd, Compression::None] {
        let dir = tempfile::tempdir().unwrap();
        let layer =
            Layer::new(c)
                .dir("usr/bin", 0o755)
                .file("usr/bin/big", 0o755, &vec![7u8; 50_000]);
        let (blob, bytes) = layer.build().unwrap();
        // The descriptor matches the cut bytes: only the stream can tell.
        let cut = bytes[..bytes.len() / 2].to_vec();
        let digest = format!("sha256:{:x}", <sha2::Sha256 as sha2::Digest>::digest(&cut));
        let cut_blob = LayerBlob {
            digest,
            size: cut.len() as u64,
            ..blob
        };
        single_blobs(dir.path(), vec![(cut_blob, cut)]);
        let e = err_of(dir.path());
        assert_eq!(e.rule.id, "image-corrupt", "{c:?}: {e}");
        assert!(
            e.message.contains("truncated") || e.message.contains("corrupt"),
            "{c:?}: {e}"
        );
    }
}

#[test]
fn a_decompression_bomb_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let zeros = vec![0u8; 8 << 20];
    single(
        dir.path(),
        vec![Layer::new(Compression::Gzip).file("bomb", 0o644, &zeros)],
    );
    let src = layout_source(dir.path(), "t");
    // A bound on uncompressed bytes...
    let mut opts = Options::default();
    opts.limits.max_uncompressed_bytes = 1 << 20;
    let e = open(&src, None, &opts).unwrap_err();
    assert_eq!(e.rule.id, "image-too-large");
    assert!(e.message.contains("decompression bomb"), "{e}");
    // ...and on the expansion ratio, which stops it early with the default
    // byte bound.
    let mut opts = Options::default();
    opts.limits.ratio_floor = 1 << 20;
    let e = open(&src, None, &opts).unwrap_err();
    assert_eq!(e.rule.id, "image-too-large");
    assert!(e.message.contains("-fold"), "{e}");
    // ...and on entries.
    let mut opts = Options::default();
    opts.limits.max_entries = 0;
    let e = open(&src, None, &opts).unwrap_err();
    assert!(e.message.contains("tar entries"), "{e}");
    // The default limits let a real layer through.
    assert!(open(&src, None, &Options::default()).is_ok());
}

#[test]
fn an_entry_climbing_out_of_the_root_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let evil =
        Layer::new(Compression::Gzip).raw(b"usr/../../etc/evil", EntryType::Regular, 0o644, b"x");
    single(dir.path(), vec![base(), evil]);
    let e = err_of(dir.path());
    assert_eq!(e.rule.id, "image-corrupt");
    assert!(e.message.contains("climbs out of the image root"), "{e}");
    assert!(e.message.contains("layer 2"), "{e}");
    // A leading `/` or `./` is relative to the root, and fine.
    let dir = tempfile::tempdir().unwrap();
    let abs = Layer::new(Compression::None)
        .raw(b"/usr/bin/abs", EntryType::Regular, 0o755, b"x")
        .raw(b"./usr/bin/dot", EntryType::Regular, 0o755, b"x");
    single(dir.path(), vec![base(), abs]);
    let img = open_tag(dir.path(), "t").unwrap();
    let fs = &img.platforms[0].fs;
    assert!(fs.get("/usr/bin/abs").is_some() && fs.get("/usr/bin/dot").is_some());
}

#[test]
fn symlink_loops_resolve_to_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let loops = Layer::new(Compression::None)
        .symlink("usr/bin/a", "b")
        .symlink("usr/bin/b", "/usr/bin/a")
        .symlink("usr/local", "../usr/local");
    single(dir.path(), vec![base(), loops]);
    let img = open_tag(dir.path(), "t").unwrap();
    let p = &img.platforms[0];
    assert!(matches!(
        p.fs.resolve("/usr/bin/a"),
        Err(ResolveError::Loop { .. })
    ));
    assert!(matches!(
        p.fs.resolve("/usr/local/bin/x"),
        Err(ResolveError::Loop { .. })
    ));
    assert!(p.find_command("a").is_none());
    let e =
        p.fs.resolve("/usr/bin/a")
            .unwrap_err()
            .to_error("command a");
    assert_eq!(e.rule.id, "image-symlink-loop");
    // A layer that puts a file below a looping link cannot be applied.
    let dir = tempfile::tempdir().unwrap();
    let loops = Layer::new(Compression::None).symlink("lp", "lp");
    let below = Layer::new(Compression::None).file("lp/x", 0o644, b"x");
    single(dir.path(), vec![base(), loops, below]);
    assert_eq!(err_of(dir.path()).rule.id, "image-symlink-loop");
}

#[test]
fn malformed_whiteouts_are_refused() {
    let cases: Vec<(&str, Layer)> = vec![
        (
            "names no file",
            Layer::new(Compression::None).raw(b"usr/bin/.wh.", EntryType::Regular, 0o644, b""),
        ),
        (
            "reserved",
            Layer::new(Compression::None).raw(b"usr/.wh..wh.plnk", EntryType::Regular, 0o644, b""),
        ),
        (
            "not a regular file",
            Layer::new(Compression::None).dir("usr/.wh.bin", 0o755),
        ),
        (
            "not empty",
            Layer::new(Compression::None).raw(b"usr/.wh.bin", EntryType::Regular, 0o644, b"data"),
        ),
        (
            "`.` or `..`",
            Layer::new(Compression::None).raw(b"usr/.wh..", EntryType::Regular, 0o644, b""),
        ),
        (
            "used as a folder",
            Layer::new(Compression::None).raw(b"usr/.wh.bin/tool", EntryType::Regular, 0o644, b""),
        ),
    ];
    for (why, layer) in cases {
        let dir = tempfile::tempdir().unwrap();
        single(dir.path(), vec![base(), layer]);
        let e = err_of(dir.path());
        assert_eq!(e.rule.id, "image-corrupt", "{why}: {e}");
        assert!(e.message.contains("malformed whiteout"), "{why}: {e}");
        assert!(e.message.contains(why), "{why}: {e}");
    }
}

#[test]
fn whiteouts_apply_to_lower_layers_only() {
    let dir = tempfile::tempdir().unwrap();
    let upper = Layer::new(Compression::Zstd)
        // The same layer re-adds what it whites out: the new one stays.
        .file("usr/bin/tool", 0o700, b"new")
        .whiteout("usr/bin/tool")
        .whiteout("etc")
        .opaque("usr")
        .file("usr/kept", 0o644, b"k");
    single(dir.path(), vec![base(), upper]);
    let img = open_tag(dir.path(), "t").unwrap();
    let p = &img.platforms[0];
    assert_eq!(p.fs.get("/usr/bin/tool").map(|e| e.mode), Some(0o700));
    assert!(p.fs.get("/etc").is_none() && p.fs.get("/etc/passwd").is_none());
    assert!(p.fs.get("/usr/kept").is_some());
    // /etc/passwd went with /etc: the user cannot be resolved.
    assert!(p.user.is_none());
    assert!(p.user_error.as_deref().unwrap().contains("no /etc/passwd"));
}

#[test]
fn a_layer_replacing_a_folder_by_a_file_drops_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let upper = Layer::new(Compression::Gzip)
        .file("usr/bin", 0o644, b"now a file")
        .symlink("srv", "/usr")
        .file("srv/through", 0o644, b"x");
    single(dir.path(), vec![base(), upper]);
    let img = open_tag(dir.path(), "t").unwrap();
    let fs = &img.platforms[0].fs;
    assert_eq!(fs.get("/usr/bin").map(|e| e.kind), Some(Kind::File));
    assert!(fs.get("/usr/bin/tool").is_none());
    // An entry below a link lands where the link points, as runtimes
    // extract it.
    assert!(fs.get("/usr/through").is_some());
    assert_eq!(fs.resolve("/srv/through").unwrap().path, "/usr/through");
}

#[test]
fn a_hard_link_to_nothing_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let upper = Layer::new(Compression::None).hardlink("usr/bin/x", "usr/bin/missing");
    single(dir.path(), vec![base(), upper]);
    let e = err_of(dir.path());
    assert_eq!(e.rule.id, "image-corrupt");
    assert!(e.message.contains("does not exist"), "{e}");
}

#[test]
fn the_fixture_is_deterministic() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let x = fixture::agent_layout(a.path()).unwrap();
    let y = fixture::agent_layout(b.path()).unwrap();
    assert_eq!(x.v1_29.manifest, y.v1_29.manifest);
    assert_eq!(x.v1_30_index, y.v1_30_index);
    assert_eq!(
        std::fs::read(a.path().join("index.json")).unwrap(),
        std::fs::read(b.path().join("index.json")).unwrap()
    );
}

#[test]
fn inspect_prints_what_it_sees_and_writes_data() {
    let dir = tempfile::tempdir().unwrap();
    let built = fixture::agent_layout(dir.path()).unwrap();
    let img = open_tag(dir.path(), "1.30.0").unwrap();
    let text = inspect::render_text(&img);
    assert!(text.contains(&built.v1_30_index.digest), "{text}");
    assert!(text.contains("linux/arm64/v8"), "{text}");
    assert!(
        text.contains("node (uid 1000, gid 1000, home /home/node)"),
        "{text}"
    );
    assert!(text.contains("ports       none"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&inspect::render_json(&img)).unwrap();
    assert_eq!(json["platforms"][0]["user"], "node");
    let cmds = json["platforms"][1]["commands"].as_array().unwrap();
    assert!(cmds.iter().all(|c| c["name"] != "whystack-health"));
    assert_eq!(
        json["platforms"][0]["entrypoint_path"],
        "/app/apps/runner/docker-entrypoint.sh"
    );
    let data = inspect::data_file(&img, "whystack-agent", "oci:x:1.30.0").unwrap();
    assert!(
        data.contains("Left out, as not every platform has them: whystack-health"),
        "{data}"
    );
    let img = open_tag(dir.path(), "1.29.0").unwrap();
    let data = inspect::data_file(&img, "whystack-agent", "oci:x:1.29.0").unwrap();
    // The written facts load as an image data file.
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("images.yaml"), &data).unwrap();
    let rel = crate::load::images::load(out.path(), Path::new("images.yaml"), "whystack-agent")
        .unwrap_or_else(|d| panic!("{}: {data}", d.message));
    let v = Version::parse("1.29.0").unwrap();
    assert!(rel.has_release(&v));
    assert!(rel.commands_at(&v).any(|c| c.name == "whystack-health"));
    assert!(rel
        .commands_at(&v)
        .any(|c| c.name == "apps/runner/docker-entrypoint.sh"));
    assert_eq!(rel.user_at(&v).map(|u| u.uid), Some(1000));
    assert_eq!(rel.ports_at(&v), Some(&[][..]));
    assert!(rel.env_fact(&v, "NODE_ENV").is_some());
    assert!(rel.env_fact(&v, "PATH").is_none());
}

#[test]
fn aufs_metadata_is_dropped_and_its_hard_link_targets_resolve() {
    let dir = tempfile::tempdir().unwrap();
    // As old Docker versions exported an AUFS layer: the metadata file,
    // the hard-link store and a link into it.
    let upper = Layer::new(Compression::Gzip)
        .raw(b".wh..wh.aufs", EntryType::Regular, 0o600, b"")
        .dir(".wh..wh.plnk", 0o700)
        .file(".wh..wh.plnk/234.567", 0o755, b"linked")
        .dir(".wh..wh.orph", 0o700)
        .hardlink("usr/bin/linked", ".wh..wh.plnk/234.567");
    single(dir.path(), vec![base(), upper]);
    let img = open_tag(dir.path(), "t").unwrap();
    let fs = &img.platforms[0].fs;
    assert_eq!(fs.get("/usr/bin/linked").map(|e| e.mode), Some(0o755));
    assert!(fs.iter().all(|(path, _)| !path.contains(".wh.")));
    // Below the root, `.wh..wh.` is still no name a layer may use.
    let upper =
        Layer::new(Compression::None).raw(b"usr/.wh..wh.aufs", EntryType::Regular, 0o644, b"");
    let dir = tempfile::tempdir().unwrap();
    single(dir.path(), vec![base(), upper]);
    assert_eq!(err_of(dir.path()).rule.id, "image-corrupt");
}

#[test]
fn a_command_is_the_first_file_on_path_its_user_may_run() {
    let dir = tempfile::tempdir().unwrap();
    let upper = Layer::new(Compression::Gzip)
        .dir("usr/local/bin", 0o755)
        .file("usr/local/bin/tool", 0o700, b"root only")
        .dir("srv/bin", 0o755)
        .file("srv/bin/app", 0o755, b"app")
        .dir("opt", 0o700)
        .symlink("opt/bin", "/srv/bin");
    single(dir.path(), vec![base(), upper]);
    let img = open_tag(dir.path(), "t").unwrap();
    let p = &img.platforms[0];
    let lookup = Lookup {
        path: "/usr/local/bin:/usr/bin",
        cwd: "/",
    };
    // As runc's LookPath once it runs as the user: the root-only file is
    // skipped, the next one on PATH runs.
    let found = p.may_execute("tool", lookup, 1000, &[1000]).unwrap();
    assert_eq!(found.target, "/usr/bin/tool");
    assert_eq!(
        p.may_execute("tool", lookup, 0, &[0]).unwrap().target,
        "/usr/local/bin/tool"
    );
    // Reaching a file through a link still crosses the folders the path
    // names: /opt lets only root through.
    assert!(matches!(
        p.may_execute("/opt/bin/app", lookup, 1000, &[1000]),
        Err(CommandError::SearchDenied { .. })
    ));
    let via_path = Lookup {
        path: "/opt/bin",
        cwd: "/",
    };
    assert!(p.may_execute("app", via_path, 1000, &[1000]).is_err());
    assert!(p.may_execute("app", via_path, 0, &[0]).is_ok());
    // A relative name is looked up from the working folder.
    let from_srv = Lookup {
        path: "/usr/bin",
        cwd: "/srv",
    };
    assert!(p.may_execute("./bin/app", from_srv, 1000, &[1000]).is_ok());
    assert!(p.may_execute("./bin/app", lookup, 1000, &[1000]).is_err());
}

#[test]
fn a_script_runs_only_when_its_interpreter_does() {
    let dir = tempfile::tempdir().unwrap();
    let upper = Layer::new(Compression::Gzip)
        .dir("usr/local/bin", 0o755)
        .file("usr/local/bin/bashy", 0o755, b"#!/bin/bash -e\necho\n")
        .file("usr/local/bin/shy", 0o755, b"#! /usr/bin/tool\n")
        .file("usr/local/bin/nodey", 0o755, b"#!/usr/bin/env node\n")
        .file("usr/local/bin/envy", 0o755, b"#!/usr/bin/env tool\n")
        .file("usr/local/bin/split", 0o755, b"#!/usr/bin/env -S tool -v\n")
        .file(
            "usr/local/bin/splitvar",
            0o755,
            b"#!/usr/bin/env -S LANG=C tool\n",
        )
        .file(
            "usr/local/bin/splitnode",
            0o755,
            b"#!/usr/bin/env -S node -e\n",
        )
        .file("usr/local/bin/unsplit", 0o755, b"#!/usr/bin/env tool -v\n")
        .file("usr/local/bin/chain", 0o755, b"#!/usr/local/bin/shy\n")
        .file("usr/local/bin/relative", 0o755, b"#!tool\n")
        .file("usr/bin/env", 0o755, b"env")
        .file("usr/local/bin/crlf", 0o755, b"#!/usr/bin/tool\r\n")
        .file("usr/local/bin/unreadable", 0o711, b"#!/usr/bin/tool\n")
        .file("usr/local/bin/envcrlf", 0o755, b"#!/usr/bin/env tool\r\n")
        .file("usr/local/bin/loop", 0o755, b"#!/usr/bin/env loop\n")
        .file("usr/local/bin/ping", 0o755, b"#!/usr/bin/env pong\n")
        .file("usr/local/bin/pong", 0o755, b"#!/usr/bin/env ping\n")
        .file("probe.sh", 0o600, b"tool\n");
    single(dir.path(), vec![base(), upper]);
    let img = open_tag(dir.path(), "t").unwrap();
    let p = &img.platforms[0];
    let lookup = Lookup {
        path: "/usr/local/bin:/usr/bin",
        cwd: "/",
    };
    let run = |name: &str| p.may_execute(name, lookup, 1000, &[1000]);
    // No /bin/bash in the image: the kernel cannot start the script.
    let Err(CommandError::Interpreter { program, why, .. }) = run("bashy") else {
        panic!("{:?}", run("bashy"));
    };
    assert_eq!(
        (program.as_str(), *why),
        ("/bin/bash", CommandError::NotFound)
    );
    assert!(run("shy").is_ok());
    assert!(run("chain").is_ok());
    // `env NAME` looks NAME up on PATH.
    let Err(CommandError::Interpreter { program, .. }) = run("nodey") else {
        panic!("{:?}", run("nodey"));
    };
    assert_eq!(program, "node");
    assert!(run("envy").is_ok());
    // `env -S` splits the rest into words and runs the first; without
    // it, the kernel passes the rest as one name (`tool -v`).
    assert!(run("split").is_ok());
    assert!(run("splitvar").is_ok());
    let Err(CommandError::Interpreter { program, .. }) = run("splitnode") else {
        panic!("{:?}", run("splitnode"));
    };
    assert_eq!(program, "node");
    assert!(run("unsplit").is_err());
    // The interpreter reads the script: execute alone is not enough.
    assert!(matches!(
        run("unreadable"),
        Err(CommandError::NotReadable { .. })
    ));
    // A script saved with CRLF names an interpreter ending in `\r`.
    assert!(run("crlf").is_err());
    assert!(run("envcrlf").is_err());
    // Scripts that run each other through env end, refused, at the
    // kernel's depth (no stack overflow).
    for name in ["loop", "ping"] {
        assert!(
            matches!(run(name), Err(CommandError::Interpreter { .. })),
            "{name}"
        );
    }
    // A relative interpreter is a path from the working folder, not a name
    // on PATH.
    assert!(run("relative").is_err());
    let in_usr_bin = Lookup {
        cwd: "/usr/bin",
        ..lookup
    };
    assert!(p.may_execute("relative", in_usr_bin, 1000, &[1000]).is_ok());
    // A script given to a shell must be readable.
    assert!(p.may_read("/probe.sh", lookup, 0, &[0]).is_ok());
    assert!(matches!(
        p.may_read("/probe.sh", lookup, 1000, &[1000]),
        Err(CommandError::NotReadable { .. })
    ));
    assert_eq!(
        p.may_read("missing.sh", lookup, 0, &[0]),
        Err(CommandError::NotFound)
    );
}

/// A minimal ELF64 little-endian program for `machine`, with a
/// `PT_INTERP` naming `loader` when given.
fn elf_program(machine: u16, loader: Option<&str>) -> Vec<u8> {
    let mut b = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0];
    b.resize(16, 0);
    b.extend(2u16.to_le_bytes()); // e_type: EXEC
    b.extend(machine.to_le_bytes());
    b.extend(1u32.to_le_bytes()); // e_version
    b.extend(0u64.to_le_bytes()); // e_entry
    b.extend(64u64.to_le_bytes()); // e_phoff
    b.extend(0u64.to_le_bytes()); // e_shoff
    b.extend(0u32.to_le_bytes()); // e_flags
    b.extend(64u16.to_le_bytes()); // e_ehsize
    b.extend(56u16.to_le_bytes()); // e_phentsize
    b.extend(u16::from(loader.is_some()).to_le_bytes()); // e_phnum
    b.extend(64u16.to_le_bytes()); // e_shentsize
    b.extend([0u8; 4]); // e_shnum, e_shstrndx
    if let Some(loader) = loader {
        let len = loader.len() as u64 + 1;
        b.extend(3u32.to_le_bytes()); // p_type: PT_INTERP
        b.extend(4u32.to_le_bytes()); // p_flags
        b.extend(120u64.to_le_bytes()); // p_offset
        b.extend([0u8; 16]); // p_vaddr, p_paddr
        b.extend(len.to_le_bytes());
        b.extend(len.to_le_bytes());
        b.extend(1u64.to_le_bytes());
        b.extend(loader.as_bytes());
        b.push(0);
    }
    b.extend([0u8; 64]);
    b
}

/// The kernel starts an ELF program only on its machine, and with its
/// loader: a musl program in a glibc image, or an arm64 one in an amd64
/// image, fails though the file is there.
#[test]
fn an_elf_program_runs_only_with_its_loader_on_its_machine() {
    const GLIBC: &str = "/lib64/ld-linux-x86-64.so.2";
    const MUSL: &str = "/lib/ld-musl-x86_64.so.1";
    let dir = tempfile::tempdir().unwrap();
    let upper = Layer::new(Compression::Gzip)
        .dir("lib64", 0o755)
        .dir("usr/lib/x86_64-linux-gnu", 0o755)
        .file(
            "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
            0o755,
            &elf_program(62, None),
        )
        .symlink(
            "lib64/ld-linux-x86-64.so.2",
            "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
        )
        .dir("usr/local/bin", 0o755)
        .file("usr/local/bin/glibc", 0o755, &elf_program(62, Some(GLIBC)))
        .file("usr/local/bin/musl", 0o755, &elf_program(62, Some(MUSL)))
        .file("usr/local/bin/arm", 0o755, &elf_program(183, Some(GLIBC)))
        .file("usr/local/bin/static", 0o755, &elf_program(62, None))
        .file(
            "usr/local/bin/musl-script",
            0o755,
            b"#!/usr/local/bin/musl\n",
        );
    single(dir.path(), vec![base(), upper]);
    let img = open_tag(dir.path(), "t").unwrap();
    let p = &img.platforms[0];
    let lookup = Lookup {
        path: "/usr/local/bin:/usr/bin",
        cwd: "/",
    };
    let run = |name: &str| p.may_execute(name, lookup, 1000, &[1000]);
    assert!(run("glibc").is_ok(), "{:?}", run("glibc"));
    assert!(run("static").is_ok(), "{:?}", run("static"));
    let Err(CommandError::Loader { loader, why, .. }) = run("musl") else {
        panic!("{:?}", run("musl"));
    };
    assert_eq!((loader.as_str(), *why), (MUSL, CommandError::NotFound));
    assert!(
        matches!(run("arm"), Err(CommandError::Architecture { ref built_for, .. }) if built_for == "arm64"),
        "{:?}",
        run("arm")
    );
    // A script whose interpreter is such a program does not run either.
    assert!(run("musl-script").is_err());
}
