//! Stage 1: read a docs project from disk into a [`Site`].
//!
//! Loading reports every problem it can find in one pass. Problems that stop
//! the build from knowing what the site is (unreadable files, bad YAML) are
//! errors of class `input`; loading also reports a few findings about the
//! shape of the inputs (unsafe base file names, unreferenced files) that
//! only it can see.

mod bases;
mod content;

use crate::config;
use crate::diagnostics::{rule, Diagnostic};
use crate::images;
use crate::site::{Page, Site, TemplateFile};
use std::path::{Path, PathBuf};

pub use bases::{env_lines, is_safe_file_name, kustomization_references, Reference, KUSTOMIZATION};

/// What loading gives: the site when it could be read, and the findings.
pub struct Loaded {
    pub site: Option<Site>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads the project at `root`.
pub fn load(root: &Path) -> Loaded {
    let mut diagnostics = Vec::new();
    let config = match config::load(root) {
        Ok(c) => c,
        Err(d) => {
            return Loaded {
                site: None,
                diagnostics: vec![d],
            }
        }
    };
    let images = match images::load(root, &config.image.releases, &config.image.name) {
        Ok(i) => Some(i),
        Err(d) => {
            diagnostics.push(d);
            None
        }
    };
    let (pages, assets) = content::load(root, &config, &mut diagnostics);
    let bases = bases::load(root, &mut diagnostics);
    let templates = load_templates(root, &mut diagnostics);
    let lock = crate::lock::Lock::load(root).unwrap_or_else(|d| {
        diagnostics.push(d);
        crate::lock::Lock::default()
    });

    let failed = diagnostics
        .iter()
        .any(|d| d.is_error() && d.rule.class == crate::diagnostics::Class::Input);
    let site = match (failed, images) {
        (false, Some(images)) => Some(Site {
            root: root.to_path_buf(),
            config,
            pages,
            assets,
            bases,
            images,
            templates,
            lock,
        }),
        _ => None,
    };
    Loaded { site, diagnostics }
}

/// Reads one page again, the way [`load`] reads it: `path` is a Markdown
/// file below `content/<lang>/`, which [`load`] found there.
pub fn page(root: &Path, lang: &str, path: &Path) -> Result<Page, Diagnostic> {
    content::load_page(root, lang, path)
}

/// Template overrides: every file below `ROOT/templates/`, named by its
/// path there.
fn load_templates(root: &Path, diagnostics: &mut Vec<Diagnostic>) -> Vec<TemplateFile> {
    let dir = root.join("templates");
    let mut out = Vec::new();
    for (path, name) in walk_files(root, &dir, diagnostics) {
        match read_input(root, &path).map(String::from_utf8) {
            Ok(Ok(text)) => out.push(TemplateFile {
                name,
                source: relative(root, &path),
                text,
            }),
            Ok(Err(e)) => diagnostics.push(unreadable(root, &path, &e)),
            Err(d) => diagnostics.push(d),
        }
    }
    out
}

/// The largest input file basepress reads.
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// Reads an input file, refusing ones over [`MAX_FILE_BYTES`].
pub(crate) fn read_input(root: &Path, path: &Path) -> Result<Vec<u8>, Diagnostic> {
    let meta = std::fs::metadata(path).map_err(|e| unreadable(root, path, &e))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(Diagnostic::new(
            rule::INPUT_TOO_LARGE,
            format!(
                "the file has {} bytes; basepress reads at most {MAX_FILE_BYTES}",
                meta.len()
            ),
        )
        .in_file(relative(root, path)));
    }
    std::fs::read(path).map_err(|e| unreadable(root, path, &e))
}

/// Every file below `dir` (none when it does not exist), sorted, with its
/// path below `dir` in `/` form. Hidden files and folders are skipped;
/// symbolic links are reported and skipped, never followed.
pub(crate) fn walk_files(
    root: &Path,
    dir: &Path,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    if !dir.is_dir() {
        return out;
    }
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                diagnostics.push(unreadable(root, e.path().unwrap_or(dir), &e));
                continue;
            }
        };
        if is_hidden(entry.path(), dir) {
            continue;
        }
        if entry.path_is_symlink() {
            diagnostics.push(
                Diagnostic::new(
                    rule::INPUT_SYMLINK,
                    "a symbolic link is not followed: it could point outside the project",
                )
                .in_file(relative(root, entry.path())),
            );
            continue;
        }
        if entry.file_type().is_file() {
            let rel = slash_path(entry.path().strip_prefix(dir).unwrap_or(entry.path()));
            out.push((entry.into_path(), rel));
        }
    }
    out
}

pub(crate) fn unreadable(root: &Path, path: &Path, e: &dyn std::fmt::Display) -> Diagnostic {
    Diagnostic::new(rule::IO_UNREADABLE, format!("cannot read: {e}")).in_file(relative(root, path))
}

/// `path` relative to `root` for findings (unchanged when outside it).
pub(crate) fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}

/// A path with `/` separators, for URLs and names.
pub(crate) fn slash_path(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether any component of `path` below `base` starts with a dot.
pub(crate) fn is_hidden(path: &Path, base: &Path) -> bool {
    path.strip_prefix(base)
        .unwrap_or(path)
        .components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
}
