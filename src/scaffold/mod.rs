//! Writing projects for people: `basepress init` (a new docs project that
//! builds at once) and `basepress new-release` (the next release's base
//! and image data, copied from the newest one before it).
//!
//! Both only ever create files: a file that exists is never replaced, except
//! the image data file, which `new-release` rewrites through a temporary
//! file after checking that the result still parses.

mod init;
mod release;

pub use init::{init, Created, DEFAULT_LANGUAGE};
pub use release::{add_release, new_release, NewRelease};

use crate::diagnostics::{Diagnostic, Rule};
use std::io::Write;
use std::path::Path;

/// Creates `path` (and its parent folders) with `bytes`, refusing to
/// replace a file that is already there.
fn create_file(rule: &'static Rule, path: &Path, bytes: &[u8]) -> Result<(), Diagnostic> {
    let failed = |e: std::io::Error| {
        Diagnostic::new(rule, format!("cannot write {}: {e}", path.display()))
            .help("check that the folder is writable and that nothing else writes there")
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(failed)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(failed)?;
    file.write_all(bytes).map_err(failed)?;
    file.sync_all().map_err(failed)
}
