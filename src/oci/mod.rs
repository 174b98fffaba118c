//! Reading a container image: what basepress sees in it, without
//! extracting anything to disk.
//!
//! [`parse_source`] reads a source string (`oci:DIR[:TAG]`,
//! `docker-archive:FILE[:TAG]`, `registry://HOST[:PORT]/REPO[:TAG]`,
//! `docker://…`) and [`open`] reads the image it names: for every platform
//! of a multi-platform index, its config (user, environment, entrypoint,
//! command, working folder, ports, labels), the user resolved through the
//! image's `/etc/passwd` and `/etc/group`, and the merged filesystem of its
//! layers as metadata ([`FileSystem`]). Every blob is verified against its
//! digest while it streams; layers are read in parallel, in one pass each.
//!
//! Facts are cached by digest in [`Options::cache_dir`]: a digest never
//! changes, so a second look at the same image reads one small file per
//! platform instead of its layers.
//!
//! Every failure is an [`Error`] with a rule id (`image-unavailable`,
//! `image-corrupt`, `image-unsupported`, `image-too-large`,
//! `image-source-invalid`, `image-symlink-loop`), all of class input.

mod archive;
mod cache;
mod error;
pub mod fixture;
pub mod fs;
pub mod inspect;
mod layer;
mod layout;
mod registry;
mod source;
pub mod spec;
mod tar;
pub mod users;

pub use error::Error;
pub use fs::{can_execute, can_read, Command, Entry, FileSystem, Kind, ResolveError, Resolved};
pub use layer::{shebang, Limits};
pub use source::{parse_source, SourceRef};
pub use users::{User, Users};

use layer::{Budget, Change, Expect};
use rayon::prelude::*;
use semver::Version;
use serde::{Deserialize, Serialize};
use spec::{Compression, ConfigFile, Descriptor, Document};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

/// The `PATH` runtimes set when the config has none (containerd's and
/// Docker's default).
pub const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// How to read images.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where facts are cached by digest; no cache when `None`.
    pub cache_dir: Option<PathBuf>,
    pub credentials: Credentials,
    /// Plain HTTP for a registry that is not on a loopback address (which
    /// gets plain HTTP anyway).
    pub insecure: bool,
    /// The longest wait for a connection, or for any read of a response.
    pub timeout: Duration,
    pub limits: Limits,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            cache_dir: None,
            credentials: Credentials::default(),
            insecure: false,
            timeout: Duration::from_secs(30),
            limits: Limits::default(),
        }
    }
}

/// Registry credentials. A bearer token, when given, is sent as it is;
/// otherwise the `auths` entry of a Docker `config.json` for the
/// registry's host, if any; otherwise none.
#[derive(Clone, Default)]
pub struct Credentials {
    pub docker_config: Option<PathBuf>,
    pub bearer_token: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("docker_config", &self.docker_config)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// An image as basepress sees it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Image {
    /// The source, as given (without the tag).
    pub source: String,
    /// The tag read, if any.
    pub tag: Option<String>,
    /// The digest of what the tag names: the index of a multi-platform
    /// image, or its one manifest. `None` for a docker-archive, which has
    /// no manifest (each platform's config digest identifies it).
    pub digest: Option<String>,
    /// The media type of what `digest` names.
    pub media_type: String,
    /// Every platform, in the order of the index.
    pub platforms: Vec<Platform>,
}

/// One platform's image.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Platform {
    pub os: String,
    pub architecture: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The digest of the platform's manifest (what `image@sha256:…` pins);
    /// `None` for a docker-archive.
    pub manifest_digest: Option<String>,
    /// The digest of the config (the image id).
    pub config_digest: String,
    pub config: Config,
    /// The user the config names, resolved through the image's files.
    pub user: Option<User>,
    /// Why the user does not resolve, when it does not (runtimes refuse
    /// to start such a container).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_error: Option<String>,
    pub users: Users,
    pub fs: FileSystem,
    /// Whether these facts came from the cache.
    #[serde(skip)]
    pub cached: bool,
}

/// What the image config tells the runtime.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// `User` as written (`""` is root).
    pub user: String,
    /// `KEY=VALUE` strings, in order.
    pub env: Vec<String>,
    pub entrypoint: Vec<String>,
    pub cmd: Vec<String>,
    pub working_dir: String,
    /// `PORT/PROTO` (`8080/tcp`), sorted.
    pub exposed_ports: Vec<String>,
    pub labels: BTreeMap<String, String>,
}

impl Config {
    fn from_file(c: &ConfigFile) -> Config {
        let rc = c.config.clone().unwrap_or_default();
        Config {
            user: rc.user.unwrap_or_default(),
            env: rc.env.unwrap_or_default(),
            entrypoint: rc.entrypoint.unwrap_or_default(),
            cmd: rc.cmd.unwrap_or_default(),
            working_dir: rc.working_dir.unwrap_or_default(),
            exposed_ports: rc
                .exposed_ports
                .map(|m| m.into_keys().collect())
                .unwrap_or_default(),
            labels: rc.labels.unwrap_or_default(),
        }
    }

    /// The value of an environment variable in `Env` (the last one wins).
    pub fn env_var(&self, key: &str) -> Option<&str> {
        self.env
            .iter()
            .rev()
            .find_map(|kv| kv.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
    }

    /// `Env` as key and value pairs, in order.
    pub fn env_pairs(&self) -> Vec<(&str, &str)> {
        self.env
            .iter()
            .map(|kv| kv.split_once('=').unwrap_or((kv.as_str(), "")))
            .collect()
    }

    /// The `PATH` a process of the image gets: the config's, else the
    /// runtimes' default.
    pub fn path(&self) -> &str {
        self.env_var("PATH").unwrap_or(DEFAULT_PATH)
    }

    /// The working folder: the config's, else `/`.
    pub fn cwd(&self) -> &str {
        if self.working_dir.is_empty() {
            "/"
        } else {
            &self.working_dir
        }
    }

    /// The exposed port numbers (any protocol), sorted.
    pub fn ports(&self) -> Vec<u16> {
        let mut p: Vec<u16> = self
            .exposed_ports
            .iter()
            .filter_map(|s| s.split('/').next()?.parse().ok())
            .collect();
        p.sort_unstable();
        p.dedup();
        p
    }

    /// The `org.opencontainers.image.version` label.
    pub fn version_label(&self) -> Option<&str> {
        self.labels
            .get("org.opencontainers.image.version")
            .map(String::as_str)
    }
}

/// Where a process looks a command up: its `PATH` and its working
/// folder (a container's own, over its image's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lookup<'a> {
    pub path: &'a str,
    pub cwd: &'a str,
}

/// Why a command may not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandError {
    /// No regular file of that name on `PATH` (or at that path).
    NotFound,
    /// Found, but the mode bits do not let the user execute it.
    NotExecutable { path: String, entry: Entry },
    /// Found, but a folder above it does not let the user through.
    SearchDenied { path: String, dir: String },
    /// Found, but the mode bits do not let the user read it (a script a
    /// shell is given as a file).
    NotReadable { path: String, entry: Entry },
    /// A shell given a script file (`sh /probe.sh`) that it may not read.
    ScriptFile {
        file: String,
        why: Box<CommandError>,
    },
    /// An ELF program whose loader (`PT_INTERP`) may not run: a program
    /// linked against another C library than the image's (musl in a
    /// glibc image) fails with `no such file or directory`.
    Loader {
        program: String,
        loader: String,
        why: Box<CommandError>,
    },
    /// An ELF program built for another machine than the platform's:
    /// `exec format error`.
    Architecture { program: String, built_for: String },
    /// A script (`#!` line) whose interpreter may not run, and why.
    Interpreter {
        script: String,
        line: String,
        /// What did not run: the interpreter, or the program `env` runs.
        program: String,
        why: Box<CommandError>,
    },
}

impl Platform {
    /// `linux/amd64`, `linux/arm64/v8`.
    pub fn name(&self) -> String {
        match &self.variant {
            Some(v) => format!("{}/{}/{v}", self.os, self.architecture),
            None => format!("{}/{}", self.os, self.architecture),
        }
    }

    /// Finds a command the way the runtime does: a bare name on the
    /// image's `PATH`, a path with `/` from the working folder.
    pub fn find_command(&self, name: &str) -> Option<Command<'_>> {
        self.fs
            .find_command(name, self.config.path(), self.config.cwd())
    }

    /// Every command name on the image's `PATH`, sorted.
    pub fn commands(&self) -> Vec<(String, Command<'_>)> {
        self.fs
            .commands_on_path(self.config.path(), self.config.cwd())
    }

    /// Whether `uid`, with groups `gids` (primary, supplementary,
    /// `fsGroup`), may run the command `name` looked up as `lookup` says,
    /// as the runtime does once it switched to that user (runc's LookPath):
    /// the first file found that is regular, whose mode bits let them
    /// execute it, and whose folders (the ones the path crosses, and the
    /// ones above where its links lead) let them through. When no file
    /// does, why the first one found does not.
    pub fn may_execute(
        &self,
        name: &str,
        lookup: Lookup,
        uid: u32,
        gids: &[u32],
    ) -> Result<Command<'_>, CommandError> {
        self.may_execute_at(name, lookup, uid, gids, 0)
    }

    /// [`Platform::may_execute`] for a program an interpreter chain
    /// `depth` deep runs (`#!/usr/bin/env NAME` looks NAME up again).
    fn may_execute_at(
        &self,
        name: &str,
        lookup: Lookup,
        uid: u32,
        gids: &[u32],
        depth: usize,
    ) -> Result<Command<'_>, CommandError> {
        let mut first = None;
        for c in self.fs.candidates(name, lookup.path, lookup.cwd) {
            match self.reachable(&c, uid, gids) {
                Ok(()) => {
                    // The file runs: a script needs its interpreter too.
                    self.interpreter_runs(&c, lookup, uid, gids, depth)?;
                    return Ok(c);
                }
                Err(why) => {
                    first.get_or_insert(why);
                }
            }
        }
        Err(first.unwrap_or(CommandError::NotFound))
    }

    /// Whether `uid`/`gids` may execute the file `c` and reach it: its
    /// mode bits, and every folder its path crosses (the one written, and
    /// the one its links lead to).
    fn reachable(&self, c: &Command, uid: u32, gids: &[u32]) -> Result<(), CommandError> {
        if !can_execute(c.entry, uid, gids) {
            return Err(CommandError::NotExecutable {
                path: c.target.clone(),
                entry: c.entry.clone(),
            });
        }
        self.may_reach(c, uid, gids)
    }

    /// Whether the kernel runs the file `c` once it may execute it: an ELF
    /// program for this platform with its loader, or a script the user
    /// may read whose `#!` interpreter runs. For a file the image does not
    /// hold itself (a script a volume mounts).
    pub fn file_runs(
        &self,
        c: &Command,
        lookup: Lookup,
        uid: u32,
        gids: &[u32],
    ) -> Result<(), CommandError> {
        self.interpreter_runs(c, lookup, uid, gids, 0)
    }

    /// Whether the interpreter of script `c` (its `#!` line) runs, as the
    /// kernel starts it: the interpreter is a path (from the working folder
    /// when relative, never looked up on `PATH`), itself maybe a script,
    /// four levels deep at most; `env NAME` then looks NAME up on `PATH`.
    fn interpreter_runs(
        &self,
        c: &Command,
        lookup: Lookup,
        uid: u32,
        gids: &[u32],
        depth: usize,
    ) -> Result<(), CommandError> {
        if let Some(elf) = &c.entry.elf {
            return self.program_runs(c, elf, lookup, uid, gids);
        }
        let Some(line) = c.entry.shebang.as_deref() else {
            return Ok(());
        };
        // The interpreter reads the script: its user must be able to.
        if !can_read(c.entry, uid, gids) {
            return Err(CommandError::NotReadable {
                path: c.target.clone(),
                entry: c.entry.clone(),
            });
        }
        let fail = |program: &str| {
            let program = program.to_string();
            move |why: CommandError| CommandError::Interpreter {
                script: c.target.clone(),
                line: line.to_string(),
                program,
                why: Box::new(why),
            }
        };
        let (interpreter, arg) = match line.split_once([' ', '\t']) {
            Some((i, a)) => (
                i,
                Some(a.trim_matches([' ', '\t'])).filter(|a| !a.is_empty()),
            ),
            None => (line, None),
        };
        if interpreter.is_empty() || depth >= 4 {
            return Err(fail(interpreter)(CommandError::NotFound));
        }
        let shown = from_cwd(interpreter);
        let found = self
            .may_execute_file(interpreter, lookup, uid, gids)
            .map_err(fail(&shown))?;
        self.interpreter_runs(&found, lookup, uid, gids, depth + 1)
            .map_err(fail(&shown))?;
        // `#!/usr/bin/env node`: env runs its argument, found on PATH (the
        // whole rest of the line is one argument, as the kernel passes it).
        let via_env = found.target.rsplit('/').next() == Some("env")
            || interpreter.rsplit('/').next() == Some("env");
        // `-S` (`--split-string`) splits it into words first, and runs the
        // first that is no option.
        let program = arg.filter(|_| via_env).and_then(|a| {
            let split = a
                .strip_prefix("-S")
                .or_else(|| a.strip_prefix("--split-string="))
                .or_else(|| a.strip_prefix("--split-string"));
            match split {
                // Options and `NAME=value` settings come before it.
                Some(words) => words
                    .split_whitespace()
                    .find(|w| !w.starts_with('-') && !w.contains('=')),
                None => Some(a).filter(|a| !a.starts_with('-')),
            }
        });
        if let Some(program) = program {
            self.may_execute_at(program, lookup, uid, gids, depth + 1)
                .map_err(fail(program))?;
        }
        Ok(())
    }

    /// Whether the kernel starts the ELF program `c`: built for the
    /// platform's machine, with a loader the image has.
    fn program_runs(
        &self,
        c: &Command,
        elf: &fs::Elf,
        lookup: Lookup,
        uid: u32,
        gids: &[u32],
    ) -> Result<(), CommandError> {
        if let Some(built_for) = elf.architecture() {
            // 64-bit kernels commonly run their 32-bit programs too.
            let runs_here = built_for == self.architecture
                || matches!(
                    (built_for, self.architecture.as_str()),
                    ("386", "amd64") | ("arm", "arm64")
                );
            if !runs_here && fs::Elf::known_architecture(&self.architecture) {
                return Err(CommandError::Architecture {
                    program: c.target.clone(),
                    built_for: built_for.to_string(),
                });
            }
        }
        if let Some(loader) = &elf.loader {
            // The loader is a program of its own; a static one needs none.
            self.may_execute_file(loader, lookup, uid, gids)
                .map_err(|why| CommandError::Loader {
                    program: c.target.clone(),
                    loader: loader.clone(),
                    why: Box::new(why),
                })?;
        }
        Ok(())
    }

    /// Whether `uid`/`gids` may reach the file `c`: every folder its path
    /// crosses (the one written, and the one its links lead to) lets them
    /// through.
    fn may_reach(&self, c: &Command, uid: u32, gids: &[u32]) -> Result<(), CommandError> {
        let denied = self
            .fs
            .search_denied(&c.path, uid, gids)
            .or_else(|| self.fs.search_denied(&c.target, uid, gids));
        match denied {
            Some(dir) => Err(CommandError::SearchDenied {
                path: c.target.clone(),
                dir,
            }),
            None => Ok(()),
        }
    }

    /// Whether `uid`/`gids` may read the script file `path` a shell is
    /// given (`sh /probe.sh`): a regular file (from the working folder
    /// when relative, as the shell opens it) whose mode bits and folders
    /// let them read it.
    pub fn may_read(
        &self,
        path: &str,
        lookup: Lookup,
        uid: u32,
        gids: &[u32],
    ) -> Result<(), CommandError> {
        let c = self.file_at(path, lookup)?;
        if !can_read(c.entry, uid, gids) {
            return Err(CommandError::NotReadable {
                path: c.target.clone(),
                entry: c.entry.clone(),
            });
        }
        self.may_reach(&c, uid, gids)
    }

    /// [`Platform::may_execute`] for one path, without following its own
    /// `#!` line.
    fn may_execute_file(
        &self,
        path: &str,
        lookup: Lookup,
        uid: u32,
        gids: &[u32],
    ) -> Result<Command<'_>, CommandError> {
        let c = self.file_at(path, lookup)?;
        self.reachable(&c, uid, gids)?;
        Ok(c)
    }

    /// The regular file at `path`, from the working folder when relative
    /// (never looked up on `PATH`): as the kernel opens an interpreter and
    /// a shell its script file.
    fn file_at(&self, path: &str, lookup: Lookup) -> Result<Command<'_>, CommandError> {
        self.fs
            .candidates(&from_cwd(path), lookup.path, lookup.cwd)
            .into_iter()
            .next()
            .ok_or(CommandError::NotFound)
    }

    /// How a process of the image itself looks commands up: the image's
    /// `PATH` and working folder.
    pub fn lookup(&self) -> Lookup<'_> {
        Lookup {
            path: self.config.path(),
            cwd: self.config.cwd(),
        }
    }

    /// The uid and every gid a pod's container runs with: the image user,
    /// or `runAsUser`/`runAsGroup`, plus the user's supplementary groups,
    /// `fsGroup` and `supplementalGroups`.
    pub fn identity(
        &self,
        run_as_user: Option<u32>,
        run_as_group: Option<u32>,
        fs_group: Option<u32>,
        supplemental: &[u32],
    ) -> (u32, Vec<u32>) {
        let image = self.user.clone().unwrap_or(User {
            name: None,
            uid: 0,
            gid: 0,
            home: "/".into(),
            groups: Vec::new(),
        });
        let u = self.users.resolve_ids(&image, run_as_user, run_as_group);
        let mut gids = u.gids();
        for g in fs_group.iter().chain(supplemental) {
            if !gids.contains(g) {
                gids.push(*g);
            }
        }
        (u.uid, gids)
    }
}

/// `path` as a path the kernel opens from the working folder: a bare
/// name (`tool`) is `./tool`, never looked up on `PATH`.
fn from_cwd(path: &str) -> std::borrow::Cow<'_, str> {
    if path.contains('/') {
        std::borrow::Cow::Borrowed(path)
    } else {
        std::borrow::Cow::Owned(format!("./{path}"))
    }
}

impl Image {
    /// The platforms that have no regular file for command `name`.
    pub fn lacking(&self, name: &str) -> Vec<&Platform> {
        self.platforms
            .iter()
            .filter(|p| p.find_command(name).is_none())
            .collect()
    }

    /// Whether every platform has the command `name`.
    pub fn has_command(&self, name: &str) -> bool {
        !self.platforms.is_empty() && self.lacking(name).is_empty()
    }
}

/// The versions whose image has command `name` on every platform.
pub fn versions_with_command<'a>(
    images: &'a BTreeMap<Version, Image>,
    name: &str,
) -> Vec<&'a Version> {
    images
        .iter()
        .filter(|(_, i)| i.has_command(name))
        .map(|(v, _)| v)
        .collect()
}

/// The version nearest to `version` whose image has command `name` on
/// every platform: the first later one, else the last earlier one.
pub fn nearest_with_command<'a>(
    images: &'a BTreeMap<Version, Image>,
    version: &Version,
    name: &str,
) -> Option<&'a Version> {
    let with = versions_with_command(images, name);
    with.iter()
        .find(|v| **v > version)
        .or_else(|| with.iter().rev().find(|v| **v < version))
        .copied()
}

/// Reads the image `source` names. The tag is the source's own
/// (`oci:DIR:1.29.0`), else `tag` (the version a base is checked for);
/// a source with one image needs neither.
pub fn open(source: &SourceRef, tag: Option<&str>, opts: &Options) -> Result<Image, Error> {
    let tag = source.tag().or(tag);
    match source {
        SourceRef::Layout { dir, .. } => {
            let store = layout::Layout::open(dir)?;
            let top = store.resolve_tag(tag)?;
            read_image(&store, source, top, opts)
        }
        SourceRef::Registry { digest, .. } => {
            let store = registry::Registry::connect(source, opts)?;
            let top = store.resolve(tag, digest.as_deref())?;
            read_image(&store, source, top, opts)
        }
        SourceRef::Archive { file, .. } => archive::read(file, source, tag, opts),
    }
}

/// What a tag names: its descriptor and bytes (already verified).
pub(crate) struct Top {
    pub tag: Option<String>,
    pub media_type: String,
    pub digest: String,
    pub bytes: Vec<u8>,
}

/// Where blobs come from.
pub(crate) trait Store: Sync {
    /// Reads a manifest named by digest, verified, at most `limit` bytes.
    fn read_manifest(&self, desc: &Descriptor) -> Result<Vec<u8>, Error> {
        self.read_blob(desc, spec::MAX_MANIFEST_BYTES)
    }
    /// Reads a small blob whole, verified against its descriptor.
    fn read_blob(&self, desc: &Descriptor, limit: u64) -> Result<Vec<u8>, Error>;
    /// Opens a blob to stream it (the caller verifies it).
    fn open_blob(&self, key: &str, size: u64) -> Result<Box<dyn Read + Send + '_>, Error>;
}

/// Reads a small blob whole from `r`, checking size and digest.
pub(crate) fn read_verified(
    mut r: impl Read,
    desc: &Descriptor,
    limit: u64,
    what: &str,
) -> Result<Vec<u8>, Error> {
    use sha2::{Digest, Sha256};
    if desc.size() > limit {
        return Err(Error::too_large(format!(
            "{what} is {} bytes, more than the {limit} basepress reads",
            desc.size()
        )));
    }
    let mut bytes = Vec::with_capacity(desc.size() as usize);
    (&mut r)
        .take(desc.size() + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| tar::io_error(e, what))?;
    if bytes.len() as u64 != desc.size() {
        return Err(Error::corrupt(format!(
            "{what} is {}{} bytes, its descriptor says {}",
            if bytes.len() as u64 > desc.size() {
                "more than "
            } else {
                ""
            },
            bytes.len().min(desc.size() as usize),
            desc.size()
        )));
    }
    let got = format!("sha256:{:x}", Sha256::digest(&bytes));
    if got != desc.digest {
        return Err(Error::corrupt(format!(
            "{what}: its bytes hash to {got}, not to the digest {} of its descriptor",
            desc.digest
        )));
    }
    Ok(bytes)
}

/// Reads every platform of the image `top` names.
fn read_image(
    store: &dyn Store,
    source: &SourceRef,
    top: Top,
    opts: &Options,
) -> Result<Image, Error> {
    let what = format!(
        "{}{}",
        source.without_tag(),
        top.tag
            .as_deref()
            .map(|t| format!(":{t}"))
            .unwrap_or_default()
    );
    let doc = spec::parse_document(
        &top.bytes,
        &top.media_type,
        &format!("{what}: the manifest {}", top.digest),
    )?;
    let mut wanted: Vec<Wanted> = Vec::new();
    let media_type = match (&doc, top.media_type.is_empty()) {
        (Document::Manifest(_), true) => spec::OCI_MANIFEST.to_string(),
        (Document::Index(_), true) => spec::OCI_INDEX.to_string(),
        _ => top.media_type.clone(),
    };
    let top_desc = Descriptor {
        media_type: top.media_type.clone(),
        digest: top.digest.clone(),
        size: top.bytes.len() as i64,
        platform: None,
        annotations: BTreeMap::new(),
    };
    collect_manifests(
        store,
        doc,
        top_desc,
        Some(top.bytes),
        &mut wanted,
        opts,
        &what,
        0,
    )?;
    if wanted.is_empty() {
        return Err(Error::unsupported(format!(
            "{what}: the index lists no image manifest for a platform"
        )));
    }
    let mut platforms = Vec::new();
    for w in wanted {
        let p = read_platform(store, &w.desc, w.bytes, w.platform.as_ref(), opts, &what)?;
        platforms.push(p);
    }
    Ok(Image {
        source: source.without_tag(),
        tag: top.tag,
        digest: Some(top.digest),
        media_type,
        platforms,
    })
}

/// A manifest to read, with the platform its index gives it and its bytes
/// when they were read already.
struct Wanted {
    platform: Option<spec::PlatformSpec>,
    desc: Descriptor,
    bytes: Option<Vec<u8>>,
}

#[allow(clippy::too_many_arguments)]
fn collect_manifests(
    store: &dyn Store,
    doc: Document,
    desc: Descriptor,
    bytes: Option<Vec<u8>>,
    out: &mut Vec<Wanted>,
    opts: &Options,
    what: &str,
    depth: usize,
) -> Result<(), Error> {
    match doc {
        Document::Manifest(_) => {
            out.push(Wanted {
                platform: desc.platform.clone(),
                desc,
                bytes,
            });
        }
        Document::Index(index) => {
            if depth > 3 {
                return Err(Error::unsupported(format!(
                    "{what}: indexes nested more than 3 deep"
                )));
            }
            for d in index.manifests {
                // Build attestations (BuildKit) ride along as manifests for
                // the platform `unknown/unknown`: they are not images.
                let attestation = d
                    .annotations
                    .get("vnd.docker.reference.type")
                    .is_some_and(|t| t == "attestation-manifest");
                let unknown = d
                    .platform
                    .as_ref()
                    .is_some_and(|p| p.os == "unknown" && p.architecture == "unknown");
                if attestation || unknown {
                    continue;
                }
                if d.is_index() {
                    let b = store.read_manifest(&d)?;
                    let sub = spec::parse_document(
                        &b,
                        &d.media_type,
                        &format!("{what}: the index {}", d.digest),
                    )?;
                    collect_manifests(store, sub, d, Some(b), out, opts, what, depth + 1)?;
                } else if d.is_manifest() {
                    out.push(Wanted {
                        platform: d.platform.clone(),
                        desc: d,
                        bytes: None,
                    });
                } else {
                    return Err(Error::unsupported(format!(
                        "{what}: the index lists {} of the unknown media type `{}`",
                        d.digest, d.media_type
                    )));
                }
                if out.len() > opts.limits.max_platforms {
                    return Err(Error::too_large(format!(
                        "{what}: the index lists more than {} platforms",
                        opts.limits.max_platforms
                    )));
                }
            }
        }
    }
    Ok(())
}

/// One layer to read: where its bytes are and what they must hash to.
pub(crate) struct LayerJob {
    pub key: String,
    pub size: u64,
    pub compression: Option<Compression>,
    pub expect: Expect,
    pub what: String,
}

fn read_platform(
    store: &dyn Store,
    desc: &Descriptor,
    bytes: Option<Vec<u8>>,
    pspec: Option<&spec::PlatformSpec>,
    opts: &Options,
    what: &str,
) -> Result<Platform, Error> {
    let key = cache::Key::Manifest(desc.digest.clone());
    if let Some(mut p) = cache::load(opts.cache_dir.as_deref(), &key) {
        if let Some(ps) = pspec {
            apply_platform_spec(&mut p, ps);
        }
        return Ok(p);
    }
    let bytes = match bytes {
        Some(b) => b,
        None => store.read_manifest(desc)?,
    };
    let mwhat = format!("{what}: the manifest {}", desc.digest);
    let Document::Manifest(m) = spec::parse_document(&bytes, &desc.media_type, &mwhat)? else {
        return Err(Error::corrupt(format!(
            "{mwhat} is an index where a manifest was expected"
        )));
    };
    if m.layers.len() > opts.limits.max_layers {
        return Err(Error::too_large(format!(
            "{mwhat} has {} layers, more than {}",
            m.layers.len(),
            opts.limits.max_layers
        )));
    }
    let cwhat = format!("{what}: the config {}", m.config.digest);
    let cbytes = store.read_blob(&m.config, spec::MAX_CONFIG_BYTES)?;
    let config = spec::parse_config(&cbytes, m.layers.len(), &cwhat)?;
    let diff_ids = config
        .rootfs
        .as_ref()
        .map(|r| r.diff_ids.clone())
        .unwrap_or_default();
    let jobs: Vec<LayerJob> = m
        .layers
        .iter()
        .zip(diff_ids)
        .enumerate()
        .map(|(i, (l, diff_id))| LayerJob {
            key: l.digest.clone(),
            size: l.size(),
            compression: Compression::of_layer(&l.media_type),
            expect: Expect {
                blob: Some((l.digest.clone(), l.size())),
                diff_id: Some(diff_id),
            },
            what: format!("{what}: layer {} ({})", i + 1, l.digest),
        })
        .collect();
    let mut p = build_platform(store, &jobs, &config, opts)?;
    p.manifest_digest = Some(desc.digest.clone());
    p.config_digest = m.config.digest.clone();
    if let Some(ps) = pspec {
        apply_platform_spec(&mut p, ps);
    }
    cache::store(opts.cache_dir.as_deref(), &key, &p);
    Ok(p)
}

fn apply_platform_spec(p: &mut Platform, ps: &spec::PlatformSpec) {
    if !ps.os.is_empty() {
        p.os = ps.os.clone();
    }
    if !ps.architecture.is_empty() {
        p.architecture = ps.architecture.clone();
    }
    if ps.variant.is_some() {
        p.variant = ps.variant.clone();
    }
}

/// Reads the layers (in parallel), merges them in order and resolves the
/// user: the facts of one platform, digests left for the caller.
pub(crate) fn build_platform(
    store: &dyn Store,
    jobs: &[LayerJob],
    config: &ConfigFile,
    opts: &Options,
) -> Result<Platform, Error> {
    let budget = Budget::new(opts.limits);
    let changes: Vec<Vec<Change>> = jobs
        .par_iter()
        .map(|job| {
            let raw = store
                .open_blob(&job.key, job.size)
                .map_err(|e| e.context(&job.what))?;
            layer::read_layer(raw, job.compression, &job.expect, &budget, &job.what)
        })
        .collect::<Result<_, _>>()?;
    let mut fs = FileSystem::new();
    let mut kept = BTreeMap::new();
    for (job, c) in jobs.iter().zip(changes) {
        layer::apply(&mut fs, &mut kept, c, &job.what)?;
    }
    let users = Users::parse(
        kept.get("/etc/passwd").map(Vec::as_slice),
        kept.get("/etc/group").map(Vec::as_slice),
    );
    let cfg = Config::from_file(config);
    let (user, user_error) = match users.resolve(&cfg.user) {
        Ok(u) => (Some(u), None),
        Err(e) => (None, Some(e)),
    };
    Ok(Platform {
        os: config.os.clone(),
        architecture: config.architecture.clone(),
        variant: config.variant.clone(),
        manifest_digest: None,
        config_digest: String::new(),
        config: cfg,
        user,
        user_error,
        users,
        fs,
        cached: false,
    })
}

#[cfg(test)]
mod tests;
