//! Stage 4: put the rendered files on disk, all or nothing.
//!
//! The site is written into a temporary folder beside the output and
//! swapped in only once every file is written and synced. On Linux the
//! swap is one `renameat2(RENAME_EXCHANGE)`, so at every instant the output
//! path holds either the complete old site or the complete new one.
//!
//! Builds that share an output take turns: [`Staging`] holds an exclusive
//! lock on the output ([`lock_exclusive`]) from its creation to the swap,
//! as cargo locks its build folder, so one build never removes another's
//! staging folder or swaps a half-written site in. Removing a folder
//! ([`remove_tree`]) never follows a symbolic link and never leaves the
//! folder it was given.
//!
//! The site a build replaces is not thrown away: it is kept beside the
//! output as `.NAME.basepress-spare` (see [`Staging::recycle`]), and the
//! next build makes its site out of it, removing the files that changed
//! and keeping the rest where they are. A build that changed one page of
//! fifty docs versions so touches a few hundred files, not every file
//! twice (once linked into a new folder, once removed with the old one).

use crate::diagnostics::{rule, Diagnostic};
use crate::model::cache::Stamp;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A file basepress leaves in every output folder, so it never replaces a
/// folder it did not write.
pub const MARKER: &str = ".basepress";
const MARKER_TEXT: &str = "This folder is written by basepress and replaced on every build.\n";

/// The random part of a staging folder's name: this many ASCII letters
/// and digits, which is how [`clean_stale`] recognises one.
const RANDOM_CHARS: usize = 10;

/// A site being written: files go into a temporary folder beside the
/// output as they come, so a build need not hold them all in memory, and
/// [`Staging::finish`] swaps the folder into place. Dropped unfinished, it
/// removes the folder and `out` stays as it was.
pub struct Staging {
    out: PathBuf,
    parent: PathBuf,
    name: String,
    tmp: tempfile::TempDir,
    /// The first write that failed, reported by `finish`.
    failed: Mutex<Option<std::io::Error>>,
    /// Whether the replaced site is kept as the spare for the next build.
    keep_spare: bool,
    /// Folders of the recycled spare that files were removed from: those
    /// left empty are removed on finish (a site has no empty folder).
    emptied: Vec<String>,
    /// Whether a reused file had to be copied (the file system, or the
    /// file's owner, refused a link): the copy has a stamp of its own.
    copied: std::sync::atomic::AtomicBool,
    /// Held until the staging folder is gone (fields drop in order).
    _lock: FileLock,
}

fn fail(out: &Path, what: &str, e: &dyn std::fmt::Display) -> Diagnostic {
    Diagnostic::new(
        rule::IO_UNREADABLE,
        format!("cannot {what} {}: {e}", out.display()),
    )
    .help("check that the output's parent folder exists and is writable")
}

/// [`fail`] for an error of the file system, with what to do about its
/// kind: a full disk is no matter of permissions.
fn fail_io(out: &Path, what: &str, e: &std::io::Error) -> Diagnostic {
    use std::io::ErrorKind;
    let help = match e.kind() {
        ErrorKind::StorageFull => "the output's file system is full: free space there (or pass --out on another disk), then build again; the previous site is as it was",
        ErrorKind::ReadOnlyFilesystem => "the output's file system is mounted read-only: pass --out a folder on a writable one",
        ErrorKind::PermissionDenied => "you may not write there: check the owner and the mode of the output's parent folder, and of a site another user built",
        _ if e.raw_os_error() == Some(122) => "your disk quota is used up: free space (or pass --out elsewhere), then build again; the previous site is as it was",
        _ => "check that the output's parent folder exists and is writable",
    };
    Diagnostic::new(
        rule::IO_UNREADABLE,
        format!("cannot {what} {}: {e}", out.display()),
    )
    .help(help)
}

impl Staging {
    /// Locks `out` (waiting for another build of it to finish), checks
    /// that it may be replaced and creates the temporary folder. With
    /// `keep_spare`, the site it replaces is kept beside it for the next
    /// build to [recycle](Staging::recycle); without, it is removed.
    pub fn new(out: &Path, keep_spare: bool) -> Result<Staging, Diagnostic> {
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| fail(out, "write to", &"the output path has no folder name"))?;
        let parent = parent_of(out);
        std::fs::create_dir_all(&parent).map_err(|e| fail_io(out, "create the parent of", &e))?;
        let lock = lock_exclusive(out)?;
        ensure_replaceable(out)?;

        // mkdir with a random name, retried on a clash: the name is ours
        // alone.
        let tmp = tempfile::Builder::new()
            .prefix(&temp_prefix(&name))
            .rand_bytes(RANDOM_CHARS)
            .tempdir_in(&parent)
            .map_err(|e| fail_io(out, "create a temporary folder beside", &e))?;
        set_dir_mode(tmp.path());
        Ok(Staging {
            out: out.to_path_buf(),
            parent,
            name,
            tmp,
            failed: Mutex::new(None),
            keep_spare,
            emptied: Vec::new(),
            copied: std::sync::atomic::AtomicBool::new(false),
            _lock: lock,
        })
    }

    /// Whether a reused file was copied rather than linked, so that its
    /// stamp is no longer the one it had in the previous output.
    pub fn copied(&self) -> bool {
        self.copied.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The stamp of the file this build put (or kept) at `site_path`.
    pub fn stamp(&self, site_path: &str) -> Option<Stamp> {
        stamp_of(&target(self.tmp.path(), site_path))
    }

    /// Makes the spare, the site that the build before the last one left
    /// beside the output (surveyed by [`survey_spare`] under this build's
    /// lock), the folder this build writes into: the files for which
    /// `keep` holds stay as they are, every other entry is removed.
    ///
    /// A kept file may be the very file (a hard link) the live output
    /// shows; it is never written to: a file written into the folder is
    /// always a new one ([`write_new`]). Returns whether the spare was
    /// taken; when not (nothing in it to keep, or it cannot be emptied),
    /// the folder stays empty and the spare is removed once the new site
    /// is in place.
    pub fn recycle(&mut self, spare: &Spare, keep: impl Fn(&str) -> bool + Sync) -> bool {
        use rayon::prelude::*;
        let from = spare_of(&self.parent, &self.name);
        let doomed: Vec<&String> = spare
            .files
            .iter()
            .filter(|f| !keep(f))
            .chain(&spare.others)
            .collect();
        // Nothing to keep: removing the spare as a whole is faster.
        if doomed.len() == spare.files.len() + spare.others.len() {
            return false;
        }
        // Still the real folder that was surveyed (the lock keeps other
        // builds away): renamed over the empty staging folder.
        let is_dir = std::fs::symlink_metadata(&from).is_ok_and(|m| m.is_dir());
        if !is_dir || std::fs::rename(&from, self.tmp.path()).is_err() {
            return false;
        }
        let root = self.tmp.path();
        let removed =
            doomed
                .par_iter()
                .try_for_each(|f| match std::fs::remove_file(target(root, f)) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                });
        if let Err(e) = removed {
            // The spare cannot be emptied (files of another user, say): it
            // goes back where it was, and this build writes into a new,
            // empty folder, as without a spare.
            let back = std::fs::rename(root, &from).and_then(|()| std::fs::create_dir(root));
            match back {
                Ok(()) => set_dir_mode(root),
                Err(_) => {
                    if let Ok(mut failed) = self.failed.lock() {
                        failed.get_or_insert(e);
                    }
                }
            }
            return false;
        }
        self.emptied = folders_of(doomed.iter().map(|f| f.as_str()))
            .into_iter()
            .map(str::to_string)
            .collect();
        true
    }

    /// Writes one file at a site path, creating its folders. A failure is
    /// kept for [`Staging::finish`] to report; later files are skipped.
    pub fn put(&self, site_path: &str, bytes: &[u8]) {
        if self.failed.lock().map_or(true, |f| f.is_some()) {
            return;
        }
        let path = target(self.tmp.path(), site_path);
        let written = write_new(&path, bytes).or_else(|e| match path.parent() {
            Some(dir) if e.kind() == std::io::ErrorKind::NotFound => {
                make_dirs(self.tmp.path(), dir)?;
                write_new(&path, bytes)
            }
            _ => Err(e),
        });
        if let Err(e) = written {
            if let Ok(mut failed) = self.failed.lock() {
                failed.get_or_insert(e);
            }
        }
    }

    /// Creates the folders that the files at `site_paths` go into, each
    /// once and in parallel (a folder whose parent another thread is
    /// making waits for nothing: `create_dir_all` takes a folder made
    /// meanwhile as made). Linking many files into new folders would
    /// otherwise fail once per file before its folder is made.
    pub fn make_folders<'p>(&self, site_paths: impl Iterator<Item = &'p str>) {
        use rayon::prelude::*;
        let made = folders_of(site_paths)
            .par_iter()
            .try_for_each(|dir| make_dirs(self.tmp.path(), &target(self.tmp.path(), dir)));
        if let Err(e) = made {
            if let Ok(mut failed) = self.failed.lock() {
                failed.get_or_insert(e);
            }
        }
    }

    /// Puts the file at `site_path` of the previous output into the new
    /// site, as a hard link to the same bytes (a copy where the file
    /// system cannot link). Only a regular file that still has the stamp
    /// `expected` (the one the build that made it recorded) is taken; the
    /// output is locked, so it stays as it is.
    pub fn reuse(&self, previous: &Previous, site_path: &str, expected: Stamp) {
        if self.failed.lock().map_or(true, |f| f.is_some()) {
            return;
        }
        let linked = if previous.stamp(site_path) == Some(expected) {
            let from = target(&previous.root, site_path);
            let to = target(self.tmp.path(), site_path);
            let link = || link_new(&from, &to);
            link().or_else(|e| match to.parent() {
                Some(dir) if e.kind() == std::io::ErrorKind::NotFound => {
                    make_dirs(self.tmp.path(), dir)?;
                    link()
                }
                _ => Err(e),
            })
        } else {
            // Changed since (by hand, or by a build of another user whose
            // spare this one cannot empty): building again would find it
            // the same way, so the way out is a fresh output.
            Err(std::io::Error::other(format!(
                "{site_path} of {} is not the file the build that made it left (changed since); remove {} and {} (a site kept for the next build), then build again",
                previous.root.display(),
                previous.root.display(),
                spare_of(&self.parent, &self.name).display()
            )))
        };
        match linked {
            Ok(Linked::Copied) => self
                .copied
                .store(true, std::sync::atomic::Ordering::Relaxed),
            Ok(Linked::Linked) => {}
            Err(e) => {
                if let Ok(mut failed) = self.failed.lock() {
                    failed.get_or_insert(e);
                }
            }
        }
    }

    /// Adds the marker, makes every file and folder durable and swaps the
    /// folder into place of `out`.
    pub fn finish(self) -> Result<(), Diagnostic> {
        let Staging {
            out,
            parent,
            name,
            tmp,
            failed,
            keep_spare,
            emptied,
            copied: _,
            _lock,
        } = self;
        if let Some(e) = failed.into_inner().ok().flatten() {
            return Err(fail_io(&out, "write", &e));
        }
        remove_empty_folders(tmp.path(), emptied);
        write_new(&tmp.path().join(MARKER), MARKER_TEXT.as_bytes())
            .map_err(|e| fail_io(&out, "write", &e))?;
        // Before the swap, or a crash could leave a renamed folder whose
        // files were never written out.
        sync_tree(tmp.path()).map_err(|e| fail_io(&out, "sync", &e))?;

        let tmp_path = tmp.keep();
        let replaced = match swap_into_place(&tmp_path, &out, &parent) {
            Ok(replaced) => replaced,
            Err(e) => {
                remove_tree(&tmp_path);
                return Err(fail_io(&out, "replace", &e));
            }
        };
        // The new site is in place. What is left is housekeeping: should
        // it fail, the next build's clean-up takes what remains.
        let spare = spare_of(&parent, &name);
        discard(&spare);
        if let Some(old) = replaced {
            if !keep_spare || std::fs::rename(&old, &spare).is_err() {
                remove_tree(&old);
            }
        }
        clean_stale(&parent, &name);
        Ok(())
    }
}

/// The folders holding the files at `site_paths` (`/en/a` for
/// `/en/a/index.html`), each once, sorted.
fn folders_of<'p>(site_paths: impl Iterator<Item = &'p str>) -> Vec<&'p str> {
    let mut folders: Vec<&str> = site_paths
        .filter_map(|p| p.rsplit_once('/').map(|(dir, _)| dir))
        .filter(|d| !d.is_empty())
        .collect();
    folders.sort_unstable();
    folders.dedup();
    folders
}

/// Removes the folders below `root` at these site paths that are empty,
/// and then their parents that this leaves empty.
fn remove_empty_folders(root: &Path, mut folders: Vec<String>) {
    // Deepest first: a folder is tried after everything below it.
    folders.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
    for dir in folders {
        let mut dir = dir.as_str();
        while !dir.is_empty() && std::fs::remove_dir(target(root, dir)).is_ok() {
            dir = dir.rsplit_once('/').map_or("", |(up, _)| up);
        }
    }
}

/// Removes what is at `path`, without following it if it is a link.
fn discard(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => remove_tree(path),
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// The folder that holds the output `out` (`.` for a bare name).
fn parent_of(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Where the spare of the output `name` in `parent` is kept.
fn spare_of(parent: &Path, name: &str) -> PathBuf {
    parent.join(format!(".{name}.basepress-spare"))
}

/// A site an earlier build wrote, kept beside the output by the build
/// that replaced it: what [`Staging::recycle`] may make the next site of.
#[derive(Debug)]
pub struct Spare {
    root: PathBuf,
    /// The record the build that wrote it left in it, if one parses.
    pub record: Option<crate::model::cache::BuildRecord>,
    /// Site paths of its regular files.
    files: std::collections::HashSet<String>,
    /// Site paths of whatever else it holds that is not a folder (a
    /// link is never a file a site is made of: always removed).
    others: Vec<String>,
}

impl Spare {
    /// The stamp of the spare's regular file at `site_path`.
    pub fn stamp(&self, site_path: &str) -> Option<Stamp> {
        if !self.files.contains(site_path) {
            return None;
        }
        stamp_of(&target(&self.root, site_path))
    }
}

/// The spare kept beside the output `out`, when it is a real folder; run
/// under the output's lock (from [`Staging::new`] on).
pub fn survey_spare(out: &Path) -> Option<Spare> {
    let name = out.file_name()?.to_string_lossy().into_owned();
    let root = spare_of(&parent_of(out), &name);
    if !std::fs::symlink_metadata(&root).ok()?.is_dir() {
        return None;
    }
    let record = read_record(&root);
    let (files, others) = list_tree(&root)?;
    Some(Spare {
        root,
        record,
        files,
        others,
    })
}

/// `/en/index.html` for `root/en/index.html`; none for a name that is not
/// Unicode.
#[cfg(not(unix))]
fn site_path(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    rel.iter().try_fold(String::new(), |mut path, part| {
        path.push('/');
        path.push_str(part.to_str()?);
        Some(path)
    })
}

/// Every entry below the folder `root` that is not a folder, by site
/// path: the regular files, and the rest. None when a folder cannot be
/// read or a name is not Unicode (such a tree is not recycled).
///
/// One `getdents` pass per folder on descriptors, each folder opened
/// relative to the one holding it and never through a link: a walk that
/// builds a path and a `DirEntry` for each of a site's 20,000 entries
/// cost an edit build a tenth of its time.
#[cfg(unix)]
fn list_tree(root: &Path) -> Option<(std::collections::HashSet<String>, Vec<String>)> {
    use rustix::fs::{openat, statat, AtFlags, Dir, FileType, Mode, OFlags, CWD};
    const DIR_FLAGS: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);
    /// A folder being listed: its stream (and descriptor), its site path
    /// and the folders in it not entered yet.
    struct Level {
        dir: Dir,
        path: String,
        folders: Vec<std::ffi::CString>,
    }
    let mut files = std::collections::HashSet::new();
    let mut others = Vec::new();
    let open = |fd: std::os::fd::BorrowedFd<'_>,
                name: &std::ffi::CStr,
                path: String,
                files: &mut std::collections::HashSet<String>,
                others: &mut Vec<String>|
     -> Option<Level> {
        let mut dir = Dir::new(openat(fd, name, DIR_FLAGS, Mode::empty()).ok()?).ok()?;
        let mut folders = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.ok()?;
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => statat(dir.fd().ok()?, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map(|s| FileType::from_raw_mode(s.st_mode))
                    .ok()?,
                t => t,
            };
            match kind {
                FileType::Directory => folders.push(name.to_owned()),
                FileType::RegularFile => {
                    files.insert(format!("{path}/{}", name.to_str().ok()?));
                }
                _ => others.push(format!("{path}/{}", name.to_str().ok()?)),
            }
        }
        Some(Level { dir, path, folders })
    };
    let root = std::ffi::CString::new(root.as_os_str().as_encoded_bytes()).ok()?;
    let mut stack = vec![open(CWD, &root, String::new(), &mut files, &mut others)?];
    while let Some(top) = stack.last_mut() {
        let Some(name) = top.folders.pop() else {
            stack.pop();
            continue;
        };
        let path = format!("{}/{}", top.path, name.to_str().ok()?);
        let level = open(top.dir.fd().ok()?, &name, path, &mut files, &mut others)?;
        stack.push(level);
    }
    Some((files, others))
}

#[cfg(not(unix))]
fn list_tree(root: &Path) -> Option<(std::collections::HashSet<String>, Vec<String>)> {
    let mut files = std::collections::HashSet::new();
    let mut others = Vec::new();
    for entry in walkdir::WalkDir::new(root).min_depth(1).follow_links(false) {
        // A folder that cannot be read cannot be recycled either.
        let entry = entry.ok()?;
        let kind = entry.file_type();
        if kind.is_dir() {
            continue;
        }
        let path = site_path(root, entry.path())?;
        if kind.is_file() {
            files.insert(path);
        } else {
            others.push(path);
        }
    }
    Some((files, others))
}

/// The build record in the site folder `root`, if one parses.
fn read_record(root: &Path) -> Option<crate::model::cache::BuildRecord> {
    let path = root.join(crate::model::cache::RECORD_PATH);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    // A record is a few bytes per page; anything far larger is not ours.
    if !meta.is_file() || meta.len() > 64 << 20 {
        return None;
    }
    serde_json::from_slice(&std::fs::read(&path).ok()?).ok()
}

/// The output a build replaces, as far as the build may reuse it: the
/// record the build that wrote it left there.
#[derive(Debug)]
pub struct Previous {
    root: PathBuf,
    /// The record (see [`crate::model::cache`]).
    pub record: crate::model::cache::BuildRecord,
}

impl Previous {
    /// The stamp of the previous output's regular file at `site_path` (a
    /// link or anything else is not a file to reuse).
    pub fn stamp(&self, site_path: &str) -> Option<Stamp> {
        stamp_of(&target(&self.root, site_path))
    }
}

/// The size and modification time of the regular file at `path`; none
/// for anything else.
fn stamp_of(path: &Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some([meta.len(), u64::try_from(modified.as_nanos()).ok()?])
}

/// The previous output at `out`, when it is a folder with a record that
/// parses; none otherwise, which only means nothing is reused.
pub fn read_previous(out: &Path) -> Option<Previous> {
    if !std::fs::symlink_metadata(out).ok()?.is_dir() {
        return None;
    }
    Some(Previous {
        root: out.to_path_buf(),
        record: read_record(out)?,
    })
}

/// Writes the lock of the project at `root` durably and atomically (see
/// [`replace_file`]).
pub fn save_lock(root: &Path, lock: &crate::model::lock::Lock) -> Result<(), Diagnostic> {
    let path = root.join(crate::model::lock::FILE);
    replace_file(&path, lock.render().as_bytes()).map_err(|e| {
        Diagnostic::new(
            rule::IO_UNREADABLE,
            format!("cannot write {}: {e}", crate::model::lock::FILE),
        )
        .help("check that bases/ is writable")
    })
}

/// Creates `path` as a new file (never through a symbolic link) with
/// `bytes` in it. What was at `path` is removed first, never written to:
/// in a recycled site it may be a hard link to a file of the live one.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match create_new(path, bytes) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::remove_file(path)?;
            create_new(path, bytes)
        }
        done => done,
    }
}

/// How a reused file came into the new site.
enum Linked {
    Linked,
    Copied,
}

/// Links `to` to the file at `from` (a copy where the file system, or the
/// file's owner, refuses a link), replacing what was at `to` without
/// writing to it.
fn link_new(from: &Path, to: &Path) -> std::io::Result<Linked> {
    match std::fs::hard_link(from, to) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::remove_file(to)?;
            link_new(from, to)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(e),
        Err(_) => write_new(to, &std::fs::read(from)?).map(|()| Linked::Copied),
        Ok(()) => Ok(Linked::Linked),
    }
}

/// Creates the file at `path` with `bytes`, readable by everyone (0644,
/// whatever the umask of the build: the same inputs make the same site,
/// modes too, and a web server of another user reads it).
fn create_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .mode(0o644);
    }
    let mut file = options.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    file.write_all(bytes)
}

/// Creates folder `dir` below `root` and the folders missing between,
/// each 0755 whatever the umask (see [`create_new`]). A folder another
/// thread makes meanwhile counts as made.
fn make_dirs(root: &Path, dir: &Path) -> std::io::Result<()> {
    match std::fs::create_dir(dir) {
        Ok(()) => {
            set_dir_mode(dir);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match dir.parent() {
            Some(up) if up.starts_with(root) && up != root => {
                make_dirs(root, up)?;
                make_dirs(root, dir)
            }
            _ => Err(e),
        },
        Err(e) => Err(e),
    }
}

fn temp_prefix(name: &str) -> String {
    format!(".{name}.basepress-")
}

/// Whether `file` is the name of a staging folder of the output `name`:
/// the prefix, then exactly [`RANDOM_CHARS`] letters and digits (and
/// `.old` where the swap is two renames). The output `site.basepress-x`
/// has staging folders `.site.basepress-x.basepress-…`, which are not
/// those of `site`.
fn is_staging_name(file: &str, name: &str) -> bool {
    let Some(rest) = file.strip_prefix(&temp_prefix(name)) else {
        return false;
    };
    let rest = rest.strip_suffix(".old").unwrap_or(rest);
    rest.len() == RANDOM_CHARS && rest.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Refuses to replace a folder that holds anything but a previous build.
fn ensure_replaceable(out: &Path) -> Result<(), Diagnostic> {
    let meta = match std::fs::symlink_metadata(out) {
        Ok(m) => m,
        Err(_) => return Ok(()),
    };
    let unsafe_out = |why: String| {
        Diagnostic::new(rule::OUTPUT_UNSAFE, why)
            .help("pass another --out, or remove that folder yourself if its content is disposable")
    };
    if meta.file_type().is_symlink() {
        return Err(Diagnostic::new(
            rule::OUTPUT_UNSAFE,
            format!("{} is a symbolic link, which basepress does not replace (the site is swapped into place of the path itself)", out.display()),
        )
        .help("pass --out the folder the link points to"));
    }
    if !meta.is_dir() {
        return Err(Diagnostic::new(
            rule::OUTPUT_UNSAFE,
            format!("{} exists and is not a folder", out.display()),
        )
        .help("pass --out a folder (new, or one a build wrote): basepress never replaces a file with the site"));
    }
    // A mount point (a container's bind mount, a tmpfs) cannot be renamed:
    // the new site could never be swapped into its place.
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let parent = std::fs::metadata(parent_of(out));
        if parent.is_ok_and(|p| p.dev() != meta.dev()) {
            return Err(Diagnostic::new(
                rule::OUTPUT_UNSAFE,
                format!(
                    "{} is a mount point, which cannot be renamed: the new site is swapped into place of the folder as a whole",
                    out.display()
                ),
            )
            .help("mount the folder above it instead and pass --out a folder inside the mount (`--out /mnt/www/site`), or build elsewhere and copy"));
        }
    }
    let empty = std::fs::read_dir(out)
        .map(|mut d| d.next().is_none())
        .unwrap_or(false);
    let marked = std::fs::symlink_metadata(out.join(MARKER)).is_ok_and(|m| m.is_file());
    if !empty && !marked {
        return Err(unsafe_out(format!(
            "{} exists and was not written by basepress (no {MARKER} file in it)",
            out.display()
        )));
    }
    Ok(())
}

/// Where a site path lands below `dir`. Site paths come from the render
/// stage, which only produces `/`-separated paths without `..`.
fn target(dir: &Path, site_path: &str) -> PathBuf {
    let mut p = dir.to_path_buf();
    for seg in site_path.split('/').filter(|s| !s.is_empty() && *s != "..") {
        p.push(seg);
    }
    p
}

#[cfg(unix)]
fn set_dir_mode(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
}

#[cfg(not(unix))]
fn set_dir_mode(_dir: &Path) {}

/// Writes out every file and folder below `dir` to the disk.
///
/// On Linux one `syncfs` on the folder does it: the kernel writes the
/// whole file system's dirty data in one pass, where one `fsync` per file
/// waits for a journal commit per file (seconds for a 10,000-page site).
#[cfg(target_os = "linux")]
fn sync_tree(dir: &Path) -> std::io::Result<()> {
    let fd = std::fs::File::open(dir)?;
    rustix::fs::syncfs(&fd)?;
    Ok(())
}

/// Writes out every file and folder below `dir` to the disk, one `fsync`
/// each, folders after what they hold.
#[cfg(not(target_os = "linux"))]
fn sync_tree(dir: &Path) -> std::io::Result<()> {
    for entry in walkdir::WalkDir::new(dir).contents_first(true) {
        let entry = entry.map_err(std::io::Error::other)?;
        if entry.file_type().is_file() || entry.file_type().is_dir() {
            std::fs::File::open(entry.path())?.sync_all()?;
        }
    }
    Ok(())
}

/// Makes a rename or a new entry in `dir` durable.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Puts the folder `new` in place of `out`; returns where the site it
/// replaced is now, if there was one.
#[cfg(target_os = "linux")]
fn swap_into_place(new: &Path, out: &Path, parent: &Path) -> std::io::Result<Option<PathBuf>> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    if std::fs::symlink_metadata(out).is_err() {
        std::fs::rename(new, out)?;
        sync_dir(parent)?;
        return Ok(None);
    }
    renameat_with(CWD, new, CWD, out, RenameFlags::EXCHANGE)?;
    sync_dir(parent)?;
    Ok(Some(new.to_path_buf()))
}

#[cfg(not(target_os = "linux"))]
fn swap_into_place(new: &Path, out: &Path, parent: &Path) -> std::io::Result<Option<PathBuf>> {
    if std::fs::symlink_metadata(out).is_err() {
        std::fs::rename(new, out)?;
        sync_dir(parent)?;
        return Ok(None);
    }
    let mut old = new.as_os_str().to_owned();
    old.push(".old");
    let old = PathBuf::from(old);
    std::fs::rename(out, &old)?;
    std::fs::rename(new, out)?;
    sync_dir(parent)?;
    Ok(Some(old))
}

/// Removes temporary folders that killed builds left beside the output.
/// The caller holds the output's lock, so none of them belongs to a build
/// still running; anything that is not a real folder (a symbolic link
/// planted under such a name) is left alone.
fn clean_stale(parent: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && is_staging_name(&e.file_name().to_string_lossy(), name) {
            remove_tree(&e.path());
        }
    }
}

/// An exclusive lock, held until dropped; see [`lock_exclusive`].
pub struct FileLock {
    /// The lock file and its path; `None` when there was nothing to lock.
    held: Option<(std::fs::File, PathBuf)>,
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Removed while still locked: a process waiting on this file sees
        // that it is no longer the lock file and takes the new one.
        if let Some((_, path)) = &self.held {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The file that [`lock_exclusive`] locks for `target`: `.NAME.lock`
/// beside it. (The target itself is replaced by a rename, which would
/// leave a waiting process holding the lock of a file that is gone.)
pub fn lock_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    parent.join(format!(".{name}.lock"))
}

/// Takes the exclusive lock of `target`, a file or folder that one
/// basepress at a time may read and replace (a build's output,
/// bases/published.lock): an advisory `flock` on [`lock_path`]. When
/// another process holds it, says so on stderr and waits. When the folder
/// of `target` does not exist there is nothing to protect yet: no lock is
/// taken.
pub fn lock_exclusive(target: &Path) -> Result<FileLock, Diagnostic> {
    let path = lock_path(target);
    let cannot = |e: &dyn std::fmt::Display| {
        Diagnostic::new(
            rule::IO_UNREADABLE,
            format!("cannot lock {}: {e}", path.display()),
        )
        .help("check that the folder is writable; the lock file may be removed when no basepress runs")
    };
    // The folder may be reached through a link (`--out /srv/www/site` with
    // `/srv/www` a link); the lock file itself never is.
    match path.parent().map(std::fs::metadata) {
        Some(Ok(m)) if m.is_dir() => {}
        Some(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(FileLock { held: None })
        }
        _ => return Err(cannot(&"the path holding it is not a folder")),
    }
    let mut announced = false;
    loop {
        let file = open_lock_file(&path).map_err(|e| cannot(&e))?;
        if !try_lock(&file).map_err(|e| cannot(&e))? {
            if !announced {
                eprintln!(
                    "waiting for another basepress to finish with {} (lock {})",
                    target.display(),
                    path.display()
                );
                announced = true;
            }
            lock(&file).map_err(|e| cannot(&e))?;
        }
        // The holder before us removes the file before releasing it: the
        // lock counts only while the path still names the file locked.
        if is_same_file(&file, &path) {
            return Ok(FileLock {
                held: Some((file, path)),
            });
        }
    }
}

fn open_lock_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .mode(0o644);
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("the lock file is not a regular file"));
    }
    Ok(file)
}

/// Locks `file` if no one holds it; `false` when someone does.
#[cfg(unix)]
fn try_lock(file: &std::fs::File) -> std::io::Result<bool> {
    use rustix::fs::{flock, FlockOperation};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(unix)]
fn lock(file: &std::fs::File) -> std::io::Result<()> {
    use rustix::fs::{flock, FlockOperation};
    loop {
        match flock(file, FlockOperation::LockExclusive) {
            Err(e) if e == rustix::io::Errno::INTR => continue,
            r => return r.map_err(Into::into),
        }
    }
}

#[cfg(not(unix))]
fn try_lock(_file: &std::fs::File) -> std::io::Result<bool> {
    Ok(true)
}

#[cfg(not(unix))]
fn lock(_file: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

#[cfg(unix)]
fn is_same_file(file: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn is_same_file(_file: &std::fs::File, path: &Path) -> bool {
    path.exists()
}

/// Replaces the file at `path` with `bytes`, atomically and durably: they
/// go into a new file with a unique name beside it (created exclusively,
/// so never through a symbolic link), which is synced, renamed over
/// `path` (a symbolic link at `path` is replaced, not followed), and the
/// folder is synced. The file keeps the permissions of the one it
/// replaces; a new one gets 0644 (less the umask).
pub fn replace_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| std::io::Error::other("the path has no file name"))?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .rand_bytes(RANDOM_CHARS)
        .tempfile_in(parent)?;
    tmp.write_all(bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map_or(0o644, |m| m.permissions().mode() & 0o777);
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(parent)
}

/// How many removals are in flight at once in [`remove_tree`].
const REMOVERS: usize = 16;

/// Removes a folder and everything in it, many entries at a time. Does
/// nothing when `dir` is not a folder (a symbolic link to one included).
///
/// Removing is bound by the disk's latency, not by the processor: on a
/// disk mounted with online discard, where every unlink waits for the
/// device, removing a 10,000-page site one entry at a time took 37 s and
/// 16 at a time 1.3 s.
///
/// It never follows a symbolic link and never leaves `dir`: every folder
/// is opened relative to the one holding it, refusing links, and every
/// entry is removed relative to its folder, so a link is removed itself
/// and a folder swapped for a link meanwhile is not entered.
pub fn remove_tree(dir: &Path) {
    let is_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
    if !is_dir {
        return;
    }
    #[cfg(unix)]
    remover::remove_below(dir, REMOVERS);
    // What the parallel pass left (a file that appeared meanwhile, or no
    // parallel pass at all): the standard library's removal, which does
    // not follow links either.
    let is_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
    if is_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The parallel removal of [`remove_tree`], on file descriptors.
#[cfg(unix)]
mod remover {
    use rustix::fs::{openat, statat, unlinkat, AtFlags, Dir, FileType, Mode, OFlags, CWD};
    use rustix::io::Errno;
    use std::ffi::CString;
    use std::os::fd::OwnedFd;
    use std::path::Path;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Condvar, Mutex};

    /// Entries of one folder removed by one job.
    const CHUNK: usize = 32;

    /// A folder being emptied.
    struct Folder {
        fd: OwnedFd,
        /// The folder holding it and its name there; `None` for the top.
        parent: Option<(Arc<Folder>, CString)>,
        /// Jobs on its entries not done yet, plus one while it is listed.
        pending: AtomicUsize,
    }

    enum Job {
        /// Open the folder `name` of a folder, then empty and remove it.
        Enter(Arc<Folder>, CString),
        /// Remove these entries (not folders) of a folder.
        Unlink(Arc<Folder>, Vec<CString>),
    }

    struct Queue {
        state: Mutex<(Vec<Job>, usize)>,
        wake: Condvar,
    }

    impl Queue {
        fn push(&self, job: Job) {
            if let Ok(mut s) = self.state.lock() {
                s.0.push(job);
                self.wake.notify_one();
            }
        }

        /// The next job, or `None` once there is none and no job runs
        /// that could add one.
        fn next(&self) -> Option<Job> {
            let mut s = self.state.lock().ok()?;
            loop {
                if let Some(job) = s.0.pop() {
                    s.1 += 1;
                    return Some(job);
                }
                if s.1 == 0 {
                    self.wake.notify_all();
                    return None;
                }
                s = self.wake.wait(s).ok()?;
            }
        }

        fn done(&self) {
            if let Ok(mut s) = self.state.lock() {
                s.1 -= 1;
                if s.1 == 0 && s.0.is_empty() {
                    self.wake.notify_all();
                }
            }
        }
    }

    const DIR_FLAGS: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);

    /// Empties and removes the folder `dir` (not followed if a link),
    /// `workers` entries at a time.
    pub fn remove_below(dir: &Path, workers: usize) {
        let Ok(fd) = openat(CWD, dir, DIR_FLAGS, Mode::empty()) else {
            return;
        };
        let queue = Queue {
            state: Mutex::new((Vec::new(), 0)),
            wake: Condvar::new(),
        };
        let top = Arc::new(Folder {
            fd,
            parent: None,
            pending: AtomicUsize::new(1),
        });
        list(&queue, &top);
        finish_one(top);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    while let Some(job) = queue.next() {
                        run(&queue, job);
                        queue.done();
                    }
                });
            }
        });
        let _ = std::fs::remove_dir(dir);
    }

    fn run(queue: &Queue, job: Job) {
        match job {
            Job::Enter(parent, name) => {
                match openat(&parent.fd, name.as_c_str(), DIR_FLAGS, Mode::empty()) {
                    // The folder's removal, when its last entry is gone,
                    // finishes this job of its parent.
                    Ok(fd) => {
                        let folder = Arc::new(Folder {
                            fd,
                            parent: Some((parent, name)),
                            pending: AtomicUsize::new(1),
                        });
                        list(queue, &folder);
                        finish_one(folder);
                    }
                    // No longer a folder (a link now, or a file): remove
                    // the entry itself.
                    Err(e) => {
                        if e == Errno::NOTDIR || e == Errno::LOOP {
                            let _ = unlinkat(&parent.fd, name.as_c_str(), AtFlags::empty());
                        }
                        finish_one(parent);
                    }
                }
            }
            Job::Unlink(folder, names) => {
                for name in &names {
                    let _ = unlinkat(&folder.fd, name.as_c_str(), AtFlags::empty());
                }
                finish_one(folder);
            }
        }
    }

    /// Queues a job per subfolder and per [`CHUNK`] other entries.
    fn list(queue: &Queue, folder: &Arc<Folder>) {
        // A duplicate of the folder's descriptor to read it through (one
        // call; `Dir::read_from` opens the folder again).
        let Ok(entries) = folder.fd.try_clone().and_then(|fd| Ok(Dir::new(fd)?)) else {
            return;
        };
        let mut chunk = Vec::new();
        let add = |job: Job| {
            folder.pending.fetch_add(1, Ordering::SeqCst);
            queue.push(job);
        };
        for entry in entries {
            let Ok(entry) = entry else { break };
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => statat(&folder.fd, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map(|s| FileType::from_raw_mode(s.st_mode))
                    .unwrap_or(FileType::Unknown),
                t => t,
            };
            if kind == FileType::Directory {
                add(Job::Enter(Arc::clone(folder), name.to_owned()));
            } else {
                chunk.push(name.to_owned());
                if chunk.len() == CHUNK {
                    add(Job::Unlink(Arc::clone(folder), std::mem::take(&mut chunk)));
                }
            }
        }
        if !chunk.is_empty() {
            add(Job::Unlink(Arc::clone(folder), chunk));
        }
    }

    /// One job on `folder`'s entries is done: once none is left, the
    /// folder is removed from its parent, which then has one job less.
    fn finish_one(folder: Arc<Folder>) {
        let mut current = folder;
        loop {
            if current.pending.fetch_sub(1, Ordering::SeqCst) != 1 {
                return;
            }
            let Some((parent, name)) = &current.parent else {
                return;
            };
            let _ = unlinkat(&parent.fd, name.as_c_str(), AtFlags::REMOVEDIR);
            let parent = Arc::clone(parent);
            current = parent;
        }
    }
}

/// Copies every file below `root/from` to `root/to` (both relative to
/// `root`, `to` not existing yet), as inputs are read: no link followed,
/// regular files only. The copy is made in a hidden folder beside the
/// first folder of `to` that does not exist yet, and renamed into place:
/// `to` and the folders made for it appear whole or not at all, even when
/// the copy stops half-way. Returns how many files it copied, and the
/// outermost folder it made (relative to `root`): what removing the copy
/// removes.
pub fn copy_tree(root: &Path, from: &Path, to: &Path) -> Result<(usize, PathBuf), Diagnostic> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        Diagnostic::new(rule::IO_UNREADABLE, format!("cannot {what}: {e}")).in_file(to)
    };
    let target = root.join(to);
    if std::fs::symlink_metadata(&target).is_ok() {
        return Err(fail("copy the docs", &"the folder exists already"));
    }
    // The outermost folder to make: `versions/1.0` for
    // `versions/1.0/content` when `versions/` exists.
    let mut top = target.clone();
    while let Some(parent) = top.parent() {
        if parent == root || std::fs::symlink_metadata(parent).is_ok() {
            break;
        }
        top = parent.to_path_buf();
    }
    let parent = top
        .parent()
        .ok_or_else(|| fail("copy the docs", &"the folder has no parent"))?;
    let staging = tempfile::Builder::new()
        .prefix(".copy-")
        .tempdir_in(parent)
        .map_err(|e| fail("create a temporary folder", &e))?;
    let inside = target.strip_prefix(&top).unwrap_or(Path::new(""));
    let mut diagnostics = Vec::new();
    let files = crate::load::walk_files(root, &root.join(from), &mut diagnostics);
    if let Some(d) = diagnostics.into_iter().find(Diagnostic::is_error) {
        return Err(d);
    }
    for (path, rel) in &files {
        let bytes = crate::input::read(root, path)?;
        let dest = staging.path().join(inside).join(rel);
        if let Some(dir) = dest.parent() {
            std::fs::create_dir_all(dir).map_err(|e| fail("create a folder", &e))?;
        }
        write_new(&dest, &bytes).map_err(|e| fail("write a copy", &e))?;
    }
    std::fs::create_dir_all(staging.path().join(inside))
        .map_err(|e| fail("create a folder", &e))?;
    let kept = staging.keep();
    std::fs::rename(&kept, &top).map_err(|e| {
        let _ = std::fs::remove_dir_all(&kept);
        fail("move the copy into place", &e)
    })?;
    let made = top.strip_prefix(root).unwrap_or(&top).to_path_buf();
    Ok((files.len(), made))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A write that fails says what to do about its cause: a full disk is
    /// no matter of permissions.
    #[test]
    fn a_failed_write_says_what_to_do_about_its_cause() {
        use std::io::{Error, ErrorKind};
        let help = |e: Error| {
            fail_io(Path::new("site"), "write", &e)
                .help
                .unwrap_or_default()
        };
        assert!(help(Error::from(ErrorKind::StorageFull)).contains("free space"));
        assert!(help(Error::from_raw_os_error(122)).contains("quota"));
        assert!(help(Error::from(ErrorKind::ReadOnlyFilesystem)).contains("read-only"));
        assert!(help(Error::from(ErrorKind::PermissionDenied)).contains("owner"));
        assert!(help(Error::from(ErrorKind::NotFound)).contains("exists and is writable"));
    }

    /// A reused file is linked where it can be, and copied across file
    /// systems (or where its owner refuses a link), which the build must
    /// know: the copy has a stamp of its own, to record.
    #[cfg(unix)]
    #[test]
    fn a_reused_file_is_linked_or_copied_and_says_which() {
        use std::os::unix::fs::MetadataExt;
        let a = tempfile::tempdir().unwrap();
        let from = a.path().join("page.html");
        std::fs::write(&from, "<p>page</p>").unwrap();
        let same = a.path().join("linked.html");
        assert!(matches!(link_new(&from, &same), Ok(Linked::Linked)));
        assert_eq!(stamp_of(&same), stamp_of(&from));
        // /dev/shm is a file system of its own where there is one.
        let Ok(b) = tempfile::tempdir_in("/dev/shm") else {
            return;
        };
        let other = b.path().join("page.html");
        let devices = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
        let across = devices(a.path()) != devices(b.path());
        match link_new(&from, &other) {
            Ok(Linked::Copied) => assert!(across),
            Ok(Linked::Linked) => assert!(!across),
            Err(e) => panic!("{e}"),
        }
        assert_eq!(std::fs::read(&other).unwrap(), b"<p>page</p>");
    }

    /// A copy that stops leaves nothing a load would see (a folder of a
    /// docs version without its content); one that ends makes every
    /// folder on the way at once.
    #[cfg(unix)]
    #[test]
    fn copy_tree_makes_its_folders_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("content/en/sub")).unwrap();
        std::fs::write(root.join("content/en/a.md"), "a").unwrap();
        std::fs::write(root.join("content/en/sub/b.md"), "b").unwrap();
        std::fs::create_dir(root.join("versions")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("content/en/link.md")).unwrap();
        let to = Path::new("versions/1.0/content");
        assert!(copy_tree(root, Path::new("content"), to).is_err());
        let left: Vec<_> = std::fs::read_dir(root.join("versions"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(left.is_empty(), "{left:?}");

        std::fs::remove_file(root.join("content/en/link.md")).unwrap();
        assert_eq!(
            copy_tree(root, Path::new("content"), to).unwrap(),
            (2, PathBuf::from("versions/1.0"))
        );
        assert_eq!(
            std::fs::read_to_string(root.join("versions/1.0/content/en/sub/b.md")).unwrap(),
            "b"
        );
        let left: Vec<_> = std::fs::read_dir(root.join("versions"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, ["1.0"]);
    }

    /// Writes `(path, text)` files as the new content of `out`, as a build
    /// does.
    fn write_site(out: &Path, files: &[(&str, &str)]) -> Result<(), Diagnostic> {
        let staging = Staging::new(out, false)?;
        for (path, text) in files {
            staging.put(path, text.as_bytes());
        }
        staging.finish()
    }

    /// A spare that cannot be emptied is put back, and the build writes
    /// into a new folder as without one: it neither fails nor publishes
    /// what it could not remove.
    #[test]
    fn a_spare_that_cannot_be_emptied_is_left_and_the_build_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        for _ in 0..2 {
            let staging = Staging::new(&out, true).unwrap();
            staging.put("/a.txt", b"a");
            staging.put("/b.txt", b"b");
            staging.finish().unwrap();
        }
        let spare = survey_spare(&out).unwrap();
        // What the survey saw as a file cannot be removed as one now.
        let b = spare_of(dir.path(), "site").join("b.txt");
        std::fs::remove_file(&b).unwrap();
        std::fs::create_dir_all(b.join("inside")).unwrap();

        let mut staging = Staging::new(&out, true).unwrap();
        assert!(!staging.recycle(&spare, |f| f == "/a.txt"));
        assert_eq!(std::fs::read_dir(staging.tmp.path()).unwrap().count(), 0);
        assert!(spare_of(dir.path(), "site").join("a.txt").is_file());
        staging.put("/c.txt", b"c");
        staging.finish().unwrap();
        let names: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        assert_eq!(names, ["c.txt"]);
    }

    #[test]
    fn replaces_previous_output_and_keeps_nothing_stale() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        write_site(&out, &[("/a/index.html", "one")]).unwrap();
        std::fs::create_dir(dir.path().join(".site.basepress-0123456789")).unwrap();
        write_site(&out, &[("/b.txt", "two")]).unwrap();
        assert!(!out.join("a").exists());
        assert_eq!(std::fs::read_to_string(out.join("b.txt")).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["site"], "no staging folder and no lock file left");
    }

    #[test]
    fn refuses_a_folder_it_did_not_write() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("precious.txt"), "x").unwrap();
        let e = write_site(dir.path(), &[("/a", "b")]).unwrap_err();
        assert_eq!(e.rule.id, "output-unsafe");
        assert!(dir.path().join("precious.txt").exists());
    }

    /// A folder with files and subfolders to keep, and a tree to remove
    /// with links into it.
    #[cfg(unix)]
    fn keep_and_tree(dir: &Path) -> (PathBuf, PathBuf) {
        let keep = dir.join("keep");
        std::fs::create_dir_all(keep.join("sub")).unwrap();
        std::fs::write(keep.join("precious.txt"), "x").unwrap();
        std::fs::write(keep.join("sub/deep.txt"), "y").unwrap();
        let tree = dir.join("tree");
        for i in 0..40 {
            let d = tree.join(format!("l{}/m{i}/n", i % 3));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("index.html"), "page").unwrap();
        }
        for i in 0..100 {
            std::fs::write(tree.join(format!("f{i}.txt")), "many").unwrap();
        }
        std::fs::create_dir_all(tree.join("empty/deeper")).unwrap();
        std::os::unix::fs::symlink(&keep, tree.join("l0/link")).unwrap();
        std::os::unix::fs::symlink(keep.join("precious.txt"), tree.join("file-link")).unwrap();
        (keep, tree)
    }

    /// The descriptor walk finds what walkdir finds, enters no link and
    /// calls a link, to a folder or a file, something else than a file.
    #[cfg(unix)]
    #[test]
    fn lists_a_tree_as_walkdir_does_without_entering_links() {
        let dir = tempfile::tempdir().unwrap();
        let (_keep, tree) = keep_and_tree(dir.path());
        let (files, mut others) = list_tree(&tree).unwrap();
        let mut want_files = std::collections::HashSet::new();
        let mut want_others = Vec::new();
        for e in walkdir::WalkDir::new(&tree).min_depth(1) {
            let e = e.unwrap();
            let rel = e.path().strip_prefix(&tree).unwrap().to_str().unwrap();
            if e.file_type().is_file() {
                want_files.insert(format!("/{rel}"));
            } else if !e.file_type().is_dir() {
                want_others.push(format!("/{rel}"));
            }
        }
        assert_eq!(files.len(), 140);
        assert_eq!(files, want_files);
        others.sort();
        want_others.sort();
        assert_eq!(others, ["/file-link", "/l0/link"]);
        assert_eq!(others, want_others);
        // A link given as the tree is not entered.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&tree, &link).unwrap();
        assert!(list_tree(&link).is_none());
    }

    #[cfg(unix)]
    fn kept_intact(keep: &Path) {
        assert_eq!(
            std::fs::read_to_string(keep.join("precious.txt")).unwrap(),
            "x"
        );
        assert_eq!(
            std::fs::read_to_string(keep.join("sub/deep.txt")).unwrap(),
            "y"
        );
    }

    #[cfg(unix)]
    #[test]
    fn removes_a_deep_tree_without_following_links_out_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let (keep, tree) = keep_and_tree(dir.path());
        remove_tree(&tree);
        assert!(!tree.exists());
        kept_intact(&keep);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_given_to_remove_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let (keep, _) = keep_and_tree(dir.path());
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&keep, &link).unwrap();
        remove_tree(&link);
        kept_intact(&keep);
    }

    /// The attack of issue 15: a link named like a staging folder beside
    /// the output, pointing at a folder to destroy.
    #[cfg(unix)]
    #[test]
    fn a_link_named_like_a_staging_folder_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (keep, _) = keep_and_tree(dir.path());
        let out = dir.path().join("site");
        write_site(&out, &[("/index.html", "one")]).unwrap();
        let planted = dir.path().join(".site.basepress-abcdefghij");
        std::os::unix::fs::symlink(&keep, &planted).unwrap();
        write_site(&out, &[("/index.html", "two")]).unwrap();
        kept_intact(&keep);
        assert!(std::fs::symlink_metadata(&planted).is_ok());
        assert_eq!(
            std::fs::read_to_string(out.join("index.html")).unwrap(),
            "two"
        );
    }

    #[test]
    fn only_staging_names_of_this_output_are_stale() {
        assert!(is_staging_name(".site.basepress-a1B2c3D4e5", "site"));
        assert!(is_staging_name(".site.basepress-a1B2c3D4e5.old", "site"));
        assert!(!is_staging_name(
            ".site.basepress-x.basepress-a1B2c3D4e5",
            "site"
        ));
        assert!(!is_staging_name(".site.basepress-short", "site"));
        assert!(!is_staging_name(".site.lock", "site"));
        assert!(!is_staging_name(".other.basepress-a1B2c3D4e5", "site"));
    }

    #[cfg(unix)]
    #[test]
    fn a_second_lock_waits_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("published.lock");
        let first = lock_exclusive(&target).unwrap();
        assert!(lock_path(&target).exists());
        let (tx, rx) = std::sync::mpsc::channel();
        let t = target.clone();
        let waiter = std::thread::spawn(move || {
            let second = lock_exclusive(&t).unwrap();
            tx.send(()).unwrap();
            drop(second);
        });
        assert!(rx
            .recv_timeout(std::time::Duration::from_millis(300))
            .is_err());
        drop(first);
        rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        waiter.join().unwrap();
        assert!(!lock_path(&target).exists(), "the lock file is removed");
        // Nothing to lock in a folder that does not exist.
        assert!(lock_exclusive(&dir.path().join("none/x")).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn replacing_a_file_never_writes_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let path = dir.path().join("published.lock");
        // The fixed temporary name of old, as a planted link.
        std::os::unix::fs::symlink(&victim, dir.path().join("published.lock.tmp")).unwrap();
        replace_file(&path, b"one").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one");
        // A link at the path itself is replaced, not written through.
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        replace_file(&path, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp") && n != "published.lock.tmp")
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
