//! Stage 4: put the rendered files on disk, all or nothing.
//!
//! The site is written into a temporary folder beside the output and
//! swapped in only once every file is written. On Linux the swap is one
//! `renameat2(RENAME_EXCHANGE)`, so at every instant the output path holds
//! either the complete old site or the complete new one.

use crate::diagnostics::{rule, Diagnostic};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A file basepress leaves in every output folder, so it never replaces a
/// folder it did not write.
pub const MARKER: &str = ".basepress";
const MARKER_TEXT: &str = "This folder is written by basepress and replaced on every build.\n";

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
}

fn fail(out: &Path, what: &str, e: &dyn std::fmt::Display) -> Diagnostic {
    Diagnostic::new(
        rule::IO_UNREADABLE,
        format!("cannot {what} {}: {e}", out.display()),
    )
    .help("check that the output's parent folder exists and is writable")
}

impl Staging {
    /// Checks that `out` may be replaced and creates the temporary folder.
    pub fn new(out: &Path) -> Result<Staging, Diagnostic> {
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| fail(out, "write to", &"the output path has no folder name"))?;
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(|e| fail(out, "create the parent of", &e))?;
        ensure_replaceable(out)?;

        let tmp = tempfile::Builder::new()
            .prefix(&temp_prefix(&name))
            .tempdir_in(&parent)
            .map_err(|e| fail(out, "create a temporary folder beside", &e))?;
        set_dir_mode(tmp.path());
        Ok(Staging {
            out: out.to_path_buf(),
            parent,
            name,
            tmp,
            failed: Mutex::new(None),
        })
    }

    /// Writes one file at a site path, creating its folders. A failure is
    /// kept for [`Staging::finish`] to report; later files are skipped.
    pub fn put(&self, site_path: &str, bytes: &[u8]) {
        if self.failed.lock().map_or(true, |f| f.is_some()) {
            return;
        }
        let path = target(self.tmp.path(), site_path);
        let written = std::fs::write(&path, bytes).or_else(|e| match path.parent() {
            Some(dir) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(dir)?;
                std::fs::write(&path, bytes)
            }
            _ => Err(e),
        });
        if let Err(e) = written {
            if let Ok(mut failed) = self.failed.lock() {
                failed.get_or_insert(e);
            }
        }
    }

    /// Adds the marker and swaps the folder into place of `out`.
    pub fn finish(self) -> Result<(), Diagnostic> {
        let out = self.out;
        if let Some(e) = self.failed.into_inner().ok().flatten() {
            return Err(fail(&out, "write", &e));
        }
        std::fs::write(self.tmp.path().join(MARKER), MARKER_TEXT)
            .map_err(|e| fail(&out, "write", &e))?;

        let tmp_path = self.tmp.keep();
        if let Err(e) = swap_into_place(&tmp_path, &out) {
            let _ = std::fs::remove_dir_all(&tmp_path);
            return Err(fail(&out, "replace", &e));
        }
        clean_stale(&self.parent, &self.name);
        Ok(())
    }
}

/// Writes the lock of the project at `root` atomically (a temporary file
/// renamed over it).
pub fn save_lock(root: &Path, lock: &crate::model::lock::Lock) -> Result<(), Diagnostic> {
    let path = root.join(crate::model::lock::FILE);
    let tmp: PathBuf = path.with_extension("lock.tmp");
    std::fs::write(&tmp, lock.render())
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| {
            Diagnostic::new(
                rule::IO_UNREADABLE,
                format!("cannot write {}: {e}", crate::model::lock::FILE),
            )
            .help("check that bases/ is writable")
        })
}

fn temp_prefix(name: &str) -> String {
    format!(".{name}.basepress-")
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
    if !meta.is_dir() {
        return Err(unsafe_out(format!(
            "{} exists and is not a folder",
            out.display()
        )));
    }
    let empty = std::fs::read_dir(out)
        .map(|mut d| d.next().is_none())
        .unwrap_or(false);
    if !empty && !out.join(MARKER).is_file() {
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

#[cfg(target_os = "linux")]
fn swap_into_place(new: &Path, out: &Path) -> std::io::Result<()> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    if std::fs::symlink_metadata(out).is_err() {
        return std::fs::rename(new, out);
    }
    renameat_with(CWD, new, CWD, out, RenameFlags::EXCHANGE)?;
    // `new` now holds the previous site. The new one is in place: should
    // removing the old one fail, the next build's clean-up takes it.
    remove_tree(new);
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn swap_into_place(new: &Path, out: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(out).is_err() {
        return std::fs::rename(new, out);
    }
    let old = new.with_extension("old");
    std::fs::rename(out, &old)?;
    std::fs::rename(new, out)?;
    remove_tree(&old);
    Ok(())
}

/// How many removals are in flight at once in [`remove_tree`].
const REMOVERS: usize = 16;

/// Removes a folder and everything in it, many entries at a time.
///
/// Removing is bound by the disk's latency, not by the processor: on a
/// disk mounted with online discard, where every unlink waits for the
/// device, removing a 10,000-page site one entry at a time took 37 s and
/// 16 at a time 1.3 s. Files go first, then folders, deepest first.
fn remove_tree(dir: &Path) {
    let mut files = Vec::new();
    let mut folders: Vec<Vec<PathBuf>> = Vec::new();
    for entry in walkdir::WalkDir::new(dir).min_depth(1).into_iter() {
        let Ok(entry) = entry else { continue };
        if entry.file_type().is_dir() {
            let depth = entry.depth();
            if folders.len() < depth {
                folders.resize_with(depth, Vec::new);
            }
            folders[depth - 1].push(entry.into_path());
        } else {
            files.push(entry.into_path());
        }
    }
    in_parallel(&files, |f| std::fs::remove_file(f));
    for level in folders.iter().rev() {
        in_parallel(level, |d| std::fs::remove_dir(d));
    }
    // Whatever the parallel pass could not remove (a file that appeared
    // meanwhile), one entry at a time.
    let _ = std::fs::remove_dir_all(dir);
}

/// Runs `remove` on every path, [`REMOVERS`] at a time.
fn in_parallel(paths: &[PathBuf], remove: impl Fn(&Path) -> std::io::Result<()> + Sync) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..REMOVERS.min(paths.len()) {
            scope.spawn(|| {
                while let Some(p) =
                    paths.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    let _ = remove(p);
                }
            });
        }
    });
}

/// Removes temporary folders that killed builds left beside the output.
fn clean_stale(parent: &Path, name: &str) {
    let prefix = temp_prefix(name);
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        if e.file_name().to_string_lossy().starts_with(&prefix) {
            remove_tree(&e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `(path, text)` files as the new content of `out`, as a build
    /// does.
    fn write_site(out: &Path, files: &[(&str, &str)]) -> Result<(), Diagnostic> {
        let staging = Staging::new(out)?;
        for (path, text) in files {
            staging.put(path, text.as_bytes());
        }
        staging.finish()
    }

    #[test]
    fn replaces_previous_output_and_keeps_nothing_stale() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        write_site(&out, &[("/a/index.html", "one")]).unwrap();
        std::fs::create_dir(dir.path().join(".site.basepress-stale")).unwrap();
        write_site(&out, &[("/b.txt", "two")]).unwrap();
        assert!(!out.join("a").exists());
        assert_eq!(std::fs::read_to_string(out.join("b.txt")).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["site"]);
    }

    #[test]
    fn refuses_a_folder_it_did_not_write() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("precious.txt"), "x").unwrap();
        let e = write_site(dir.path(), &[("/a", "b")]).unwrap_err();
        assert_eq!(e.rule.id, "output-unsafe");
        assert!(dir.path().join("precious.txt").exists());
    }

    #[test]
    fn removes_a_deep_tree_without_following_links_out_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let keep = dir.path().join("keep");
        std::fs::create_dir(&keep).unwrap();
        std::fs::write(keep.join("precious.txt"), "x").unwrap();
        let tree = dir.path().join("tree");
        for i in 0..40 {
            let d = tree.join(format!("l{}/m{i}/n", i % 3));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("index.html"), "page").unwrap();
        }
        std::fs::create_dir_all(tree.join("empty/deeper")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&keep, tree.join("l0/link")).unwrap();
        remove_tree(&tree);
        assert!(!tree.exists());
        assert!(keep.join("precious.txt").exists());
    }
}
