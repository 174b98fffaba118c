//! Findings in the formats that CI systems already read: SARIF 2.1.0 for
//! code scanning ([`sarif`]) and JUnit XML for test reports ([`junit`]).
//!
//! Both carry the same findings, in the same order, as the text and JSON
//! formats of [`crate::diagnostics`]: only the shape differs.

pub mod junit;
pub mod sarif;

use crate::diagnostics::Location;
use std::path::{Path, PathBuf};

/// The file a location names, in `/` form relative to `prefix`-joined
/// project root, or `None` when the location names a folder: CI systems
/// show an annotation on a file, and one on a folder goes nowhere.
pub(crate) fn file_of(root: &Path, prefix: &Path, location: &Location) -> Option<String> {
    if location.file.as_os_str().is_empty() || root.join(&location.file).is_dir() {
        return None;
    }
    let path = prefix.join(&location.file);
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    Some(parts.join("/"))
}

/// Where the project at `root` sits inside its git repository (`docs`
/// for a project in `REPO/docs`, empty at the top), so that paths in a
/// report are relative to the repository root as code scanning expects.
/// Empty when `root` is not inside a repository.
pub(crate) fn repository_prefix(root: &Path) -> PathBuf {
    let Ok(root) = root.canonicalize() else {
        return PathBuf::new();
    };
    for dir in root.ancestors() {
        if dir.join(".git").exists() {
            return root
                .strip_prefix(dir)
                .map(Path::to_path_buf)
                .unwrap_or_default();
        }
    }
    PathBuf::new()
}

/// The text of line `line` (1-based) of `file`, trimmed; empty when it
/// cannot be read.
pub(crate) fn line_text(root: &Path, file: &Path, line: usize) -> String {
    let Some(index) = line.checked_sub(1) else {
        return String::new();
    };
    let Ok(text) = std::fs::read_to_string(root.join(file)) else {
        return String::new();
    };
    text.lines()
        .nth(index)
        .map(|l| l.trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_not_files_and_paths_use_slashes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bases/v1.0.0")).unwrap();
        std::fs::write(
            dir.path().join("bases/v1.0.0/kustomization.yaml"),
            "a\n  b  \n",
        )
        .unwrap();
        let folder = Location::file("bases/v1.0.0");
        assert_eq!(file_of(dir.path(), Path::new(""), &folder), None);
        let file = Location::line("bases/v1.0.0/kustomization.yaml", 2);
        assert_eq!(
            file_of(dir.path(), Path::new("docs"), &file).as_deref(),
            Some("docs/bases/v1.0.0/kustomization.yaml")
        );
        assert_eq!(line_text(dir.path(), &file.file, 2), "b");
        assert_eq!(line_text(dir.path(), &file.file, 9), "");
    }

    #[test]
    fn the_prefix_is_the_project_inside_its_repository() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join("docs/site")).unwrap();
        assert_eq!(
            repository_prefix(&dir.path().join("docs/site")),
            Path::new("docs/site")
        );
        assert_eq!(repository_prefix(dir.path()), Path::new(""));
    }
}
