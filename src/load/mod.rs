//! Stage 1: read a docs project from disk into a [`Site`].
//!
//! Loading reports every problem it can find in one pass. Problems that stop
//! the build from knowing what the site is (unreadable files, bad YAML) are
//! errors of class `input`; loading also reports a few findings about the
//! shape of the inputs (unsafe base file names, unreferenced files) that
//! only it can see.

mod bases;
pub mod config;
mod content;
mod deployed;
pub mod i18n;
pub mod images;
pub mod lock;
mod signatures;
pub mod versions;

use crate::diagnostics::{rule, Diagnostic};
use crate::model::site::{Page, Site, TemplateFile};
use std::path::{Path, PathBuf};

pub use bases::{is_safe_file_name, kustomization_references, Reference, KUSTOMIZATION};

/// What loading reads besides the project itself.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A site deployed earlier, whose versions must be published again
    /// unchanged.
    pub against: Option<PathBuf>,
}

/// What loading gives: the site when it could be read, and the findings.
pub struct Loaded {
    pub site: Option<Site>,
    pub diagnostics: Vec<Diagnostic>,
    /// The pages of the site whose front matter could not be read: each
    /// stands in with its body and its file name as title, so that the
    /// checks of the other pages go on. Their own findings would be about
    /// a page that is not the one written, and the site is not rendered.
    pub stand_ins: Vec<PathBuf>,
}

/// Reads the project at `root`.
pub fn load(root: &Path, options: &Options) -> Loaded {
    let mut diagnostics = Vec::new();
    let config = match config::load(root) {
        Ok(c) => c,
        Err(d) => {
            return Loaded {
                site: None,
                diagnostics: vec![d],
                stand_ins: Vec::new(),
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
    let (bases, refused_bases) = bases::load(root, &mut diagnostics);
    // A refused base is still its release's: the docs keep documenting it.
    let base_versions: Vec<semver::Version> = bases
        .iter()
        .map(|b| b.version.clone())
        .chain(refused_bases.iter().cloned())
        .collect();
    let publish_next = config.versions.as_ref().is_none_or(|v| v.next);
    let (versions, refused_lines) = versions::load(
        root,
        publish_next,
        &base_versions,
        images.as_ref(),
        &mut diagnostics,
    );
    let frozen = versions::load_lock(root, &mut diagnostics);
    let (pages, assets) = content::load(root, &config, &versions, &mut diagnostics);
    let templates = load_templates(root, &mut diagnostics);
    let strings = i18n::load(root, &config, &mut diagnostics);
    let lock = lock::load(root).unwrap_or_else(|d| {
        diagnostics.push(d);
        crate::model::lock::Lock::default()
    });
    let deployed = options
        .against
        .as_deref()
        .and_then(|dir| deployed::load(dir, &mut diagnostics));
    let signatures = signatures::load(root, &mut diagnostics);

    // A front matter error leaves its page standing in; any other input
    // error leaves nothing to check.
    let sources: std::collections::HashSet<&Path> =
        pages.iter().map(|p| p.source.as_path()).collect();
    let stand_in = |d: &Diagnostic| {
        d.rule.id == rule::FRONT_MATTER_INVALID.id
            && d.location
                .as_ref()
                .is_some_and(|l| sources.contains(l.file.as_path()))
    };
    let stand_ins: Vec<PathBuf> = diagnostics
        .iter()
        .filter(|d| stand_in(d))
        .filter_map(|d| Some(d.location.as_ref()?.file.clone()))
        .collect();
    let failed = diagnostics
        .iter()
        .any(|d| d.is_error() && d.rule.class == crate::diagnostics::Class::Input && !stand_in(d));
    // The inputs that are there and were refused, by their findings.
    let refusals = [
        rule::INPUT_SYMLINK.id,
        rule::BASE_SYMLINK.id,
        rule::IO_UNREADABLE.id,
        rule::INPUT_NOT_A_FILE.id,
        rule::INPUT_TOO_LARGE.id,
    ];
    let refused_paths: Vec<PathBuf> = diagnostics
        .iter()
        .filter(|d| refusals.contains(&d.rule.id))
        .filter_map(|d| Some(d.location.as_ref()?.file.clone()))
        .collect();
    let site = match (failed, images) {
        (false, Some(images)) => Some(Site {
            root: root.to_path_buf(),
            config,
            versions,
            frozen,
            pages,
            assets,
            bases,
            refused: crate::model::site::Refused {
                bases: refused_bases,
                docs_folder: refused_lines.is_none(),
                docs_lines: refused_lines.unwrap_or_default(),
                paths: refused_paths,
            },
            images,
            templates,
            strings,
            lock,
            deployed,
            signatures,
        }),
        _ => None,
    };
    Loaded {
        site,
        diagnostics,
        stand_ins,
    }
}

/// Reads one page again, the way [`load`] reads it: `path` is a Markdown
/// file below the `content/<lang>/` of docs version `index` of `site`,
/// which [`load`] found there.
pub fn page(
    root: &Path,
    site: &Site,
    index: usize,
    lang: &str,
    path: &Path,
) -> Result<Page, Diagnostic> {
    let version = site.versions.get(index).ok_or_else(|| {
        Diagnostic::new(rule::IO_UNREADABLE, "the page's docs version is gone").in_file(path)
    })?;
    let root = crate::input::Root::open(root);
    content::load_page(&root, index, version, lang, path, &Default::default())
}

/// Template overrides: every file below `ROOT/templates/`, named by its
/// path there.
fn load_templates(root: &Path, diagnostics: &mut Vec<Diagnostic>) -> Vec<TemplateFile> {
    let dir = root.join("templates");
    let mut out = Vec::new();
    for (path, name) in walk_files(root, &dir, diagnostics) {
        let source = relative(root, &path);
        let text = read_input(root, &path)
            .and_then(|b| crate::input::utf8(b, &source, rule::IO_UNREADABLE));
        match text {
            Ok(text) => out.push(TemplateFile { name, source, text }),
            Err(d) => diagnostics.push(d),
        }
    }
    out
}

/// The folders of a project that [`load`] reads.
pub const INPUT_DIRS: &[&str] = &[
    "content",
    "bases",
    "templates",
    "static",
    i18n::DIR,
    versions::DIR,
];

/// The input folder of the project at `root` that `path` is in or is (or
/// the project itself, when `path` holds it), if any: a site written there
/// would replace input, or become input of the next build. Both paths are
/// resolved through the folders that exist, so `site/../content/x` and a
/// symbolic link into `content/` are caught.
pub fn input_holding(root: &Path, path: &Path) -> Option<Holding> {
    let root = resolve(root);
    let path = resolve(path);
    if root.starts_with(&path) {
        return Some(Holding::Project(root));
    }
    INPUT_DIRS
        .iter()
        .map(|d| root.join(d))
        .find(|d| path.starts_with(d))
        .map(Holding::Input)
}

/// How a path meets a project's input (see [`input_holding`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holding {
    /// The path is the project's folder, or a folder above it.
    Project(PathBuf),
    /// The path is in this input folder of the project.
    Input(PathBuf),
}

/// `path` made absolute, with its longest existing prefix canonicalized
/// and `.` and `..` resolved in the rest.
fn resolve(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                match part {
                    std::path::Component::ParentDir => {
                        out.pop();
                    }
                    std::path::Component::CurDir => {}
                    other => out.push(other),
                }
            }
            return out;
        }
        match (existing.parent(), existing.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

/// The largest input file basepress reads.
pub const MAX_FILE_BYTES: u64 = crate::input::MAX_FILE_BYTES;

/// Reads an input file: see [`crate::input::read`] (no link followed,
/// regular files only, at most [`MAX_FILE_BYTES`]).
pub(crate) fn read_input(root: &Path, path: &Path) -> Result<Vec<u8>, Diagnostic> {
    crate::input::read(root, path)
}

/// [`read_input`], with `None` when there is no file at `path`.
pub(crate) fn read_input_optional(root: &Path, path: &Path) -> Result<Option<Vec<u8>>, Diagnostic> {
    crate::input::read_optional(root, path)
}

/// The deepest a folder may be below an input folder (`content/<lang>/`,
/// `static/`, `templates/`): the sidebar, the page context and the
/// templates' macros walk the tree level by level, and a tree thousands of
/// folders deep overflowed the stack.
pub const MAX_FOLDER_DEPTH: usize = 32;

/// Every file below `dir` (none when it does not exist), sorted, with its
/// path below `dir` in `/` form. Hidden files and folders are skipped;
/// symbolic links are reported and skipped, never followed.
pub fn walk_files(
    root: &Path,
    dir: &Path,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    match crate::input::dir_state(root, dir) {
        Ok(true) => {}
        Ok(false) => return out,
        Err(d) => {
            diagnostics.push(d);
            return out;
        }
    }
    let mut entries = walkdir::WalkDir::new(dir).sort_by_file_name().into_iter();
    while let Some(entry) = entries.next() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                diagnostics.push(unreadable(root, e.path().unwrap_or(dir), &e));
                continue;
            }
        };
        if is_hidden(entry.path(), dir) {
            if entry.file_type().is_dir() {
                entries.skip_current_dir();
            }
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
        if entry.file_type().is_dir() && entry.depth() > MAX_FOLDER_DEPTH {
            diagnostics.push(
                Diagnostic::new(
                    rule::CONTENT_LAYOUT,
                    format!("this folder is more than {MAX_FOLDER_DEPTH} folders deep"),
                )
                .in_file(relative(root, entry.path()))
                .help("flatten the tree: the sidebar and the templates walk it level by level"),
            );
            entries.skip_current_dir();
            continue;
        }
        if entry.file_type().is_file() {
            let rel = slash_path(entry.path().strip_prefix(dir).unwrap_or(entry.path()));
            out.push((entry.into_path(), rel));
        } else if !entry.file_type().is_dir() {
            diagnostics.push(crate::input::not_a_file(root, entry.path()));
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

/// Whether any component of `path` below `base` is hidden (starts with a
/// dot: `.git`, Vim's `.page.md.swp`) or an editor's backup or autosave
/// (`page.md~`, Emacs's `#page.md#`): none of them is an input.
pub(crate) fn is_hidden(path: &Path, base: &Path) -> bool {
    path.strip_prefix(base)
        .unwrap_or(path)
        .components()
        .any(|c| {
            let name = c.as_os_str().to_string_lossy();
            name.starts_with('.')
                || name.ends_with('~')
                || (name.len() > 1 && name.starts_with('#') && name.ends_with('#'))
        })
}
