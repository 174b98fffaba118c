//! The merged filesystem of an image, as metadata: each path's kind, mode,
//! owner, size and link target, after every layer was applied in order.
//!
//! Paths are absolute (`/usr/bin/sh`); `/` is the root. Symbolic links are
//! resolved inside the root the way the kernel does it in a container
//! whose root is the image: `..` stops at `/`, absolute targets start
//! again from `/`, and 40 links at most (Linux's limit) are followed.

use super::Error;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// What a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    File,
    Dir,
    Symlink,
    Char,
    Block,
    Fifo,
}

/// The metadata of one path. A hard link is stored as a copy of the
/// entry it links to, as they share one inode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub kind: Kind,
    /// Permission bits with setuid, setgid and sticky (`0o7777` at most).
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    /// Bytes of a regular file; 0 for anything else.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub size: u64,
    /// The target of a symbolic link, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// For an executable file that starts with `#!`, the rest of that
    /// line: the interpreter the kernel runs it with, and its argument.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shebang: Option<String>,
    /// For an executable ELF file: what the kernel needs to start it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elf: Option<Box<Elf>>,
}

/// What an ELF program's header tells the kernel: the machine it is built
/// for (`e_machine`) and the loader that starts it (`PT_INTERP`, absent
/// for a static program).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Elf {
    pub machine: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loader: Option<String>,
}

impl Elf {
    /// The facts of a file that starts with `head`, when it is ELF (its
    /// header and program headers within `head`).
    pub fn of(head: &[u8]) -> Option<Box<Elf>> {
        use object::elf::{FileHeader32, FileHeader64};
        use object::Endianness;
        if !head.starts_with(b"\x7fELF") {
            return None;
        }
        match head.get(4)? {
            1 => Elf::facts::<FileHeader32<Endianness>>(head),
            2 => Elf::facts::<FileHeader64<Endianness>>(head),
            _ => None,
        }
        .map(Box::new)
    }

    fn facts<H: object::read::elf::FileHeader<Endian = object::Endianness>>(
        head: &[u8],
    ) -> Option<Elf> {
        use object::read::elf::ProgramHeader;
        let header = H::parse(head).ok()?;
        let endian = header.endian().ok()?;
        let loader = header
            .program_headers(endian, head)
            .ok()
            .and_then(|all| {
                all.iter()
                    .find_map(|p| p.interpreter(endian, head).ok().flatten())
            })
            .map(|l| String::from_utf8_lossy(l).into_owned());
        Some(Elf {
            machine: header.e_machine(endian),
            loader,
        })
    }

    /// Whether `architecture` (a platform's) is one [`Elf::architecture`]
    /// names.
    pub fn known_architecture(architecture: &str) -> bool {
        MACHINES.iter().any(|(_, a)| *a == architecture)
    }

    /// The image platform's architecture (`amd64`, `arm64`…) this
    /// machine is, when it is one of those.
    pub fn architecture(&self) -> Option<&'static str> {
        MACHINES
            .iter()
            .find(|(m, _)| *m == self.machine)
            .map(|(_, a)| *a)
    }
}

/// ELF machines (`e_machine`) by the OCI platform architecture they are.
const MACHINES: &[(u16, &str)] = &[
    (object::elf::EM_X86_64, "amd64"),
    (object::elf::EM_AARCH64, "arm64"),
    (object::elf::EM_ARM, "arm"),
    (object::elf::EM_386, "386"),
    (object::elf::EM_PPC64, "ppc64le"),
    (object::elf::EM_S390, "s390x"),
    (object::elf::EM_RISCV, "riscv64"),
];

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Entry {
    pub fn dir(mode: u32) -> Self {
        Entry {
            kind: Kind::Dir,
            mode,
            uid: 0,
            gid: 0,
            size: 0,
            link: None,
            shebang: None,
            elf: None,
        }
    }

    pub fn is_file(&self) -> bool {
        self.kind == Kind::File
    }

    /// Whether any of the three execute bits is set.
    pub fn any_exec(&self) -> bool {
        self.mode & 0o111 != 0
    }
}

/// Whether `uid`, with primary and supplementary groups `gids`, may execute
/// the regular file `entry`, by its mode bits: the owner's bits for its
/// owner, the group's for a member of its group, the others' otherwise.
/// Root (uid 0) needs one execute bit set, as the kernel requires.
pub fn can_execute(entry: &Entry, uid: u32, gids: &[u32]) -> bool {
    entry.is_file() && allows(entry, uid, gids, 0o1)
}

/// Whether `uid`/`gids` may read the regular file `entry`, by its mode
/// bits (root reads anything).
pub fn can_read(entry: &Entry, uid: u32, gids: &[u32]) -> bool {
    entry.is_file() && allows(entry, uid, gids, 0o4)
}

/// Whether the mode bits of `entry` give `uid`/`gids` the permission
/// `bit` (4 read, 2 write, 1 execute or search).
fn allows(entry: &Entry, uid: u32, gids: &[u32], bit: u32) -> bool {
    if uid == 0 {
        // Root may read and write anything; it may execute what has any
        // execute bit, and search any folder.
        return bit != 1 || entry.kind == Kind::Dir || entry.any_exec();
    }
    let shift = if uid == entry.uid {
        6
    } else if gids.contains(&entry.gid) {
        3
    } else {
        0
    };
    entry.mode & (bit << shift) != 0
}

/// Why a path does not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveError {
    /// Nothing at `path` (the first missing component).
    NotFound { path: String },
    /// `path` is used as a folder, but is not one.
    NotADirectory { path: String },
    /// The links loop: resolving came back to `link` with the same path
    /// left to resolve.
    Loop { link: String },
    /// More than [`MAX_HOPS`] links on the way.
    TooManyLinks { link: String },
}

/// Linux follows at most 40 symbolic links in one path (ELOOP beyond).
pub const MAX_HOPS: usize = 40;

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolveError::NotFound { path } => write!(f, "{path} does not exist"),
            ResolveError::NotADirectory { path } => write!(f, "{path} is not a folder"),
            ResolveError::Loop { link } => {
                write!(f, "the symbolic links at {link} loop")
            }
            ResolveError::TooManyLinks { link } => write!(
                f,
                "more than {MAX_HOPS} symbolic links to follow (the last at {link})"
            ),
        }
    }
}

impl ResolveError {
    /// The error as an image error, for a path that must resolve.
    pub fn to_error(&self, what: &str) -> Error {
        let message = format!("{what}: {self}");
        match self {
            ResolveError::Loop { .. } | ResolveError::TooManyLinks { .. } => {
                Error::new(crate::diagnostics::rule::IMAGE_SYMLINK_LOOP, message)
            }
            _ => Error::unavailable(message),
        }
    }
}

/// A path resolved through its links.
#[derive(Debug, Clone, Copy)]
pub struct Resolved<'a> {
    /// The path without links (each component an entry of the image).
    pub path: &'a str,
    pub entry: &'a Entry,
}

/// A command found for a name: where it resolved, and its entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command<'a> {
    /// The path the command was found at, as `PATH` gives it
    /// (`/bin/sh`).
    pub path: String,
    /// The path it resolves to through links (`/usr/bin/dash`).
    pub target: String,
    pub entry: &'a Entry,
}

/// The merged filesystem: every path of the image and its metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FileSystem {
    entries: BTreeMap<String, Entry>,
}

impl FileSystem {
    /// A filesystem with only its root folder.
    pub fn new() -> Self {
        let mut entries = BTreeMap::new();
        entries.insert("/".to_string(), Entry::dir(0o755));
        FileSystem { entries }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every path with its entry, in byte order of the paths.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The entry at exactly `path` (absolute, normalised), links not
    /// followed.
    pub fn get(&self, path: &str) -> Option<&Entry> {
        self.entries.get(path)
    }

    /// The entries directly inside folder `dir` (a resolved path).
    pub fn children<'a>(&'a self, dir: &str) -> impl Iterator<Item = (&'a str, &'a Entry)> + 'a {
        let prefix = if dir == "/" {
            "/".to_string()
        } else {
            format!("{dir}/")
        };
        let plen = prefix.len();
        self.entries
            .range(prefix.clone()..)
            .take_while(move |(k, _)| k.starts_with(&prefix))
            .filter(move |(k, _)| k.len() > plen && !k[plen..].contains('/'))
            .map(move |(k, v)| (&k[plen..], v))
    }

    /// Resolves `path` (absolute, or relative to `/`), following every
    /// link, the last component's too.
    pub fn resolve(&self, path: &str) -> Result<Resolved<'_>, ResolveError> {
        self.walk(path, true)
    }

    /// Resolves `path` but leaves its last component as it is (a link
    /// stays a link), as `lstat` does.
    pub fn resolve_parent(&self, path: &str) -> Result<Resolved<'_>, ResolveError> {
        self.walk(path, false)
    }

    fn walk(&self, path: &str, follow_last: bool) -> Result<Resolved<'_>, ResolveError> {
        // Components left to resolve, the next one last.
        let mut todo: Vec<String> = split_rev(path);
        let mut cur = String::from("/");
        let mut hops = 0;
        let mut seen: Vec<(String, Vec<String>)> = Vec::new();
        while let Some(c) = todo.pop() {
            if c == ".." {
                parent_in_place(&mut cur);
                continue;
            }
            let next = join(&cur, &c);
            let Some(entry) = self.entries.get(&next) else {
                return Err(ResolveError::NotFound { path: next });
            };
            match entry.kind {
                Kind::Symlink if follow_last || !todo.is_empty() => {
                    hops += 1;
                    let state = (next.clone(), todo.clone());
                    if seen.contains(&state) {
                        return Err(ResolveError::Loop { link: next });
                    }
                    if hops > MAX_HOPS {
                        return Err(ResolveError::TooManyLinks { link: next });
                    }
                    seen.push(state);
                    let target = entry.link.as_deref().unwrap_or("");
                    if target.is_empty() {
                        return Err(ResolveError::NotFound { path: next });
                    }
                    if target.starts_with('/') {
                        cur = "/".to_string();
                    }
                    todo.extend(split_rev(target));
                }
                Kind::Dir => cur = next,
                _ if todo.is_empty() => cur = next,
                _ => return Err(ResolveError::NotADirectory { path: next }),
            }
        }
        let (path, entry) = self
            .entries
            .get_key_value(&cur)
            .ok_or(ResolveError::NotFound { path: cur.clone() })?;
        Ok(Resolved { path, entry })
    }

    /// Finds the command `name` as `execvp` and Go's `exec.LookPath` do:
    /// a name with a `/` is a path (relative ones from `cwd`); a bare name
    /// is looked up in each folder of `path_var` in turn (an empty one is
    /// `cwd`). The first regular file with an execute bit wins; when none
    /// has one, the first regular file is returned so that callers can say
    /// it is not executable. `None` when no regular file has the name.
    pub fn find_command(&self, name: &str, path_var: &str, cwd: &str) -> Option<Command<'_>> {
        let found = self.candidates(name, path_var, cwd);
        let first_exec = found.iter().position(|c| c.entry.any_exec());
        found.into_iter().nth(first_exec.unwrap_or(0))
    }

    /// The regular files a lookup of `name` finds, in the order it tries
    /// them: `name` itself (from `cwd`) when it has a `/`, else `name` in
    /// each folder of `path_var` (an empty entry being `cwd`).
    pub fn candidates(&self, name: &str, path_var: &str, cwd: &str) -> Vec<Command<'_>> {
        if name.is_empty() {
            return Vec::new();
        }
        let cwd = if cwd.is_empty() { "/" } else { cwd };
        let paths: Vec<String> = if name.contains('/') {
            vec![absolute(cwd, name)]
        } else {
            path_var
                .split(':')
                .map(|dir| {
                    let dir = if dir.is_empty() { cwd } else { dir };
                    absolute(cwd, &format!("{dir}/{name}"))
                })
                .collect()
        };
        paths
            .into_iter()
            .filter_map(|c| {
                let r = self.resolve(&c).ok()?;
                r.entry.is_file().then(|| Command {
                    target: r.path.to_string(),
                    path: c,
                    entry: r.entry,
                })
            })
            .collect()
    }

    /// Every command name on `path_var`: the names of regular files with
    /// an execute bit in the `PATH` folders, each with the entry a lookup
    /// of it finds. Sorted by name.
    pub fn commands_on_path(&self, path_var: &str, cwd: &str) -> Vec<(String, Command<'_>)> {
        let mut names: Vec<String> = Vec::new();
        for dir in path_var.split(':') {
            let dir = if dir.is_empty() { cwd } else { dir };
            let Ok(d) = self.resolve(&absolute(cwd, dir)) else {
                continue;
            };
            if d.entry.kind != Kind::Dir {
                continue;
            }
            for (name, _) in self.children(d.path) {
                names.push(name.to_string());
            }
        }
        names.sort();
        names.dedup();
        names
            .into_iter()
            .filter_map(|n| {
                let c = self.find_command(&n, path_var, cwd)?;
                c.entry.any_exec().then_some((n, c))
            })
            .collect()
    }

    /// Why `uid`/`gids` may not search the folders above the resolved path
    /// `path`: the first folder without the search (execute) bit for them,
    /// or `None` when every folder lets them through.
    pub fn search_denied(&self, path: &str, uid: u32, gids: &[u32]) -> Option<String> {
        let mut dir = path.to_string();
        let mut denied = None;
        while dir != "/" {
            parent_in_place(&mut dir);
            // A link's own mode is never used: the folder it leads to is
            // on the resolved path, checked there.
            if let Some(e) = self.entries.get(&dir).filter(|e| e.kind != Kind::Symlink) {
                if !allows(e, uid, gids, 0o1) {
                    denied = Some(dir.clone());
                }
            }
        }
        denied
    }

    /// Inserts or replaces `path`; the caller keeps the parents in place.
    pub(crate) fn insert(&mut self, path: String, entry: Entry) {
        self.entries.insert(path, entry);
    }

    /// Removes `path` and everything below it. Returns whether anything was
    /// there.
    pub(crate) fn remove_tree(&mut self, path: &str) -> bool {
        if path == "/" {
            let root = self.entries.remove("/");
            let any = !self.entries.is_empty();
            self.entries.clear();
            if let Some(r) = root {
                self.entries.insert("/".to_string(), r);
            }
            return any;
        }
        let had = self.entries.remove(path).is_some();
        let removed = self.remove_children(path);
        had || removed
    }

    /// Removes everything below folder `path`, keeping the folder.
    pub(crate) fn remove_children(&mut self, path: &str) -> bool {
        if path == "/" {
            let root = self.entries.remove("/");
            let any = !self.entries.is_empty();
            self.entries.clear();
            if let Some(r) = root {
                self.entries.insert("/".to_string(), r);
            }
            return any;
        }
        let prefix = format!("{path}/");
        // Everything below `path` sorts between `path/` and `path0`
        // (`0` follows `/` in ASCII).
        let end = format!("{path}0");
        let mut tail = self.entries.split_off(&prefix);
        let mut rest = tail.split_off(&end);
        let any = !tail.is_empty();
        self.entries.append(&mut rest);
        any
    }
}

/// `path` split on `/`, without empty and `.` components, reversed.
fn split_rev(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .rev()
        .map(str::to_string)
        .collect()
}

fn join(dir: &str, name: &str) -> String {
    if dir == "/" {
        format!("/{name}")
    } else {
        format!("{dir}/{name}")
    }
}

fn parent_in_place(p: &mut String) {
    match p.rfind('/') {
        Some(0) | None => {
            p.clear();
            p.push('/');
        }
        Some(i) => p.truncate(i),
    }
}

/// `path` made absolute from `cwd` (not normalised: resolving does that).
fn absolute(cwd: &str, path: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{path}", cwd.trim_end_matches('/'))
    }
}

/// The parent folder of an absolute, normalised path (`/` for `/x`).
pub(crate) fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The last component of an absolute, normalised path.
pub(crate) fn base_name(path: &str) -> &str {
    match path.rfind('/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(mode: u32, uid: u32, gid: u32) -> Entry {
        Entry {
            kind: Kind::File,
            mode,
            uid,
            gid,
            size: 1,
            link: None,
            shebang: None,
            elf: None,
        }
    }

    fn link(to: &str) -> Entry {
        Entry {
            kind: Kind::Symlink,
            mode: 0o777,
            uid: 0,
            gid: 0,
            size: 0,
            link: Some(to.to_string()),
            shebang: None,
            elf: None,
        }
    }

    fn fs(entries: &[(&str, Entry)]) -> FileSystem {
        let mut f = FileSystem::new();
        for (p, e) in entries {
            f.insert(p.to_string(), e.clone());
        }
        f
    }

    fn sample() -> FileSystem {
        fs(&[
            ("/usr", Entry::dir(0o755)),
            ("/usr/bin", Entry::dir(0o755)),
            ("/usr/bin/dash", file(0o755, 0, 0)),
            ("/usr/bin/sh", link("dash")),
            ("/bin", link("usr/bin")),
            ("/usr/local", Entry::dir(0o755)),
            ("/usr/local/bin", Entry::dir(0o755)),
            ("/usr/local/bin/abs", link("/usr/bin/sh")),
            ("/usr/local/bin/up", link("../../../../../usr/bin/dash")),
            ("/usr/local/bin/noexec", file(0o644, 0, 0)),
            ("/usr/bin/noexec", file(0o755, 0, 0)),
            ("/loop1", link("loop2")),
            ("/loop2", link("/loop1")),
            ("/self", link("self")),
            ("/dangling", link("nowhere")),
        ])
    }

    #[test]
    fn links_resolve_inside_the_root() {
        let f = sample();
        assert_eq!(f.resolve("/bin/sh").unwrap().path, "/usr/bin/dash");
        assert_eq!(f.resolve("bin/sh").unwrap().path, "/usr/bin/dash");
        assert_eq!(
            f.resolve("/usr/local/bin/abs").unwrap().path,
            "/usr/bin/dash"
        );
        // `..` above the root stays at the root, as in a container.
        assert_eq!(
            f.resolve("/usr/local/bin/up").unwrap().path,
            "/usr/bin/dash"
        );
        assert_eq!(f.resolve("/../../bin/./sh").unwrap().path, "/usr/bin/dash");
        assert_eq!(f.resolve_parent("/bin/sh").unwrap().path, "/usr/bin/sh");
        assert_eq!(f.resolve("/").unwrap().path, "/");
        assert_eq!(
            f.resolve("/usr/bin/dash/x").unwrap_err(),
            ResolveError::NotADirectory {
                path: "/usr/bin/dash".into()
            }
        );
        assert_eq!(
            f.resolve("/dangling").unwrap_err(),
            ResolveError::NotFound {
                path: "/nowhere".into()
            }
        );
    }

    #[test]
    fn loops_are_detected_and_hops_bounded() {
        let f = sample();
        assert!(matches!(
            f.resolve("/loop1"),
            Err(ResolveError::Loop { .. })
        ));
        assert!(matches!(
            f.resolve("/self/x"),
            Err(ResolveError::Loop { .. })
        ));
        // A long chain without a loop ends at the hop limit.
        let mut entries = vec![("/t0".to_string(), file(0o755, 0, 0))];
        for i in 1..=45 {
            entries.push((format!("/t{i}"), link(&format!("t{}", i - 1))));
        }
        let mut g = FileSystem::new();
        for (p, e) in entries {
            g.insert(p, e);
        }
        assert_eq!(g.resolve("/t40").unwrap().path, "/t0");
        assert!(matches!(
            g.resolve("/t41"),
            Err(ResolveError::TooManyLinks { .. })
        ));
        let e = ResolveError::Loop { link: "/x".into() }.to_error("command sh");
        assert_eq!(e.rule.id, "image-symlink-loop");
    }

    #[test]
    fn commands_are_looked_up_like_execvp() {
        let f = sample();
        let path = "/usr/local/bin:/usr/bin:/bin";
        let c = f.find_command("sh", path, "/").unwrap();
        assert_eq!(
            (c.path.as_str(), c.target.as_str()),
            ("/usr/bin/sh", "/usr/bin/dash")
        );
        // The executable one wins over an earlier one without exec bits.
        let c = f.find_command("noexec", path, "/").unwrap();
        assert_eq!(c.path, "/usr/bin/noexec");
        let c = f.find_command("noexec", "/usr/local/bin", "/").unwrap();
        assert!(!c.entry.any_exec());
        assert!(f.find_command("missing", path, "/").is_none());
        assert!(f.find_command("", path, "/").is_none());
        // Names with a slash are paths, relative ones from the workdir.
        assert_eq!(
            f.find_command("bin/sh", "", "/usr").unwrap().target,
            "/usr/bin/dash"
        );
        assert_eq!(
            f.find_command("/bin/sh", "", "/x").unwrap().target,
            "/usr/bin/dash"
        );
        // A folder is not a command.
        assert!(f.find_command("bin", "/usr", "/").is_none());
        let names: Vec<_> = f
            .commands_on_path(path, "/")
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["abs", "dash", "noexec", "sh", "up"]);
    }

    #[test]
    fn execute_permission_follows_owner_group_other() {
        let e = file(0o710, 1000, 2000);
        assert!(can_execute(&e, 1000, &[]));
        assert!(can_execute(&e, 5, &[2000]));
        assert!(!can_execute(&e, 5, &[3000]));
        // The owner gets the owner's bits only, even when others' allow.
        let e = file(0o017, 1000, 2000);
        assert!(!can_execute(&e, 1000, &[2000]));
        assert!(can_execute(&e, 7, &[]));
        assert!(!can_execute(&file(0o644, 0, 0), 0, &[0]));
        assert!(can_execute(&file(0o100, 5, 5), 0, &[]));
        assert!(!can_execute(&Entry::dir(0o777), 0, &[]));
        let mut f = sample();
        f.insert(
            "/secret".into(),
            Entry {
                uid: 0,
                gid: 0,
                ..Entry::dir(0o700)
            },
        );
        f.insert("/secret/tool".into(), file(0o755, 0, 0));
        assert_eq!(
            f.search_denied("/secret/tool", 1000, &[1000]).as_deref(),
            Some("/secret")
        );
        assert_eq!(f.search_denied("/secret/tool", 0, &[]), None);
        assert_eq!(f.search_denied("/usr/bin/dash", 1000, &[]), None);
        // Some tar writers store a link as 0644: Linux ignores it.
        f.insert(
            "/tools".into(),
            Entry {
                kind: Kind::Symlink,
                link: Some("usr/bin".into()),
                ..file(0o644, 0, 0)
            },
        );
        assert_eq!(f.search_denied("/tools/dash", 1000, &[]), None);
    }

    #[test]
    fn trees_are_removed_whole_and_only_them() {
        let mut f = fs(&[
            ("/a", Entry::dir(0o755)),
            ("/a/b", file(0o644, 0, 0)),
            ("/a/c", Entry::dir(0o755)),
            ("/a/c/d", file(0o644, 0, 0)),
            ("/a-b", file(0o644, 0, 0)),
            ("/a0", file(0o644, 0, 0)),
            ("/ab", file(0o644, 0, 0)),
        ]);
        assert!(f.remove_children("/a"));
        let paths: Vec<_> = f.iter().map(|(p, _)| p).collect();
        assert_eq!(paths, ["/", "/a", "/a-b", "/a0", "/ab"]);
        assert!(f.remove_tree("/a"));
        assert!(!f.remove_tree("/a"));
        assert!(f.remove_children("/"));
        assert_eq!(f.len(), 1);
        let kids: Vec<_> = sample()
            .children("/usr/bin")
            .map(|(n, _)| n.to_string())
            .collect();
        assert_eq!(kids, ["dash", "noexec", "sh"]);
    }
}
