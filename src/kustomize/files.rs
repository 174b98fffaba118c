//! The files a build reads, by slash path relative to a root.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

/// The bytes of one file, and where findings about it point.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub bytes: Vec<u8>,
    /// The file findings name (relative to the project root), e.g. a base
    /// file, or the Markdown page that shows it in a fenced block.
    pub origin: PathBuf,
    /// Lines before the file's first line in `origin` (0 for a whole file;
    /// for a fenced block, the line of the fence).
    pub line_offset: usize,
    /// Characters before each line of the file in `origin` (0 for a whole
    /// file; for a fenced block in a list item, the item's indentation).
    pub column_offset: usize,
}

impl SourceFile {
    pub fn new(bytes: impl Into<Vec<u8>>, origin: impl Into<PathBuf>) -> Self {
        SourceFile {
            bytes: bytes.into(),
            origin: origin.into(),
            line_offset: 0,
            column_offset: 0,
        }
    }
}

/// Files by slash path relative to a root (a base folder, or an overlay
/// whose `resources` name another kustomization's folder).
pub trait Files {
    /// The file at `path` ("kustomization.yaml", "base/statefulset.yaml").
    fn file(&self, path: &str) -> Option<&SourceFile>;
    /// Whether `path` is a folder ("" is the root).
    fn is_dir(&self, path: &str) -> bool;
}

/// Files held in memory; folders are the parents of the files.
#[derive(Debug, Clone, Default)]
pub struct MemFiles {
    files: BTreeMap<String, SourceFile>,
    dirs: BTreeSet<String>,
}

impl MemFiles {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the file at slash path `path`.
    pub fn insert(&mut self, path: &str, file: SourceFile) {
        let path = path.trim_matches('/').to_string();
        let mut dir = path.as_str();
        while let Some(i) = dir.rfind('/') {
            dir = &dir[..i];
            self.dirs.insert(dir.to_string());
        }
        self.files.insert(path, file);
    }

    /// Reads every regular file under `root` (following no links), named
    /// in findings as `origin_prefix` joined with the relative path.
    pub fn from_dir(root: &Path, origin_prefix: &Path) -> io::Result<Self> {
        let mut files = MemFiles::new();
        for entry in walkdir::WalkDir::new(root).follow_links(false) {
            let entry = entry.map_err(io::Error::other)?;
            if !entry.file_type().is_file() {
                continue;
            }
            let rel = entry.path().strip_prefix(root).map_err(io::Error::other)?;
            let slash: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let bytes = std::fs::read(entry.path())?;
            files.insert(
                &slash.join("/"),
                SourceFile::new(bytes, origin_prefix.join(rel)),
            );
        }
        Ok(files)
    }

    /// The paths of the files, in order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }
}

impl Files for MemFiles {
    fn file(&self, path: &str) -> Option<&SourceFile> {
        self.files.get(path)
    }

    fn is_dir(&self, path: &str) -> bool {
        path.is_empty() || self.dirs.contains(path)
    }
}

/// Joins a relative reference to a folder, resolving `.` and `..`; None
/// when the result would leave the root, or the reference is absolute.
pub fn join(dir: &str, rel: &str) -> Option<String> {
    if rel.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// Whether `path` is `dir` or below it.
pub fn within(dir: &str, path: &str) -> bool {
    dir.is_empty()
        || path == dir
        || (path.starts_with(dir) && path.as_bytes().get(dir.len()) == Some(&b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_resolves_dots() {
        assert_eq!(join("overlay", "../base").as_deref(), Some("base"));
        assert_eq!(join("", "./a/b.yaml").as_deref(), Some("a/b.yaml"));
        assert_eq!(join("", "../x"), None);
        assert_eq!(join("a", "/etc/passwd"), None);
        assert!(within("a", "a/b"));
        assert!(!within("a", "ab/c"));
        assert!(within("", "x"));
        let mut f = MemFiles::new();
        f.insert("base/x/k.yaml", SourceFile::new("a: 1", "k.yaml"));
        assert!(f.is_dir("base") && f.is_dir("base/x") && f.is_dir(""));
        assert!(!f.is_dir("base/x/k.yaml"));
    }
}
