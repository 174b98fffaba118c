//! A site deployed earlier (`--against DIR`): the files of its base
//! folders, which this build must publish again byte for byte.

use crate::diagnostics::{rule, Diagnostic};
use crate::model::site::Deployed;
use std::collections::BTreeMap;
use std::path::Path;

/// Reads `dir/kubernetes/*/base/*`; `None` (with a finding) when `dir`
/// is not a site basepress deployed.
pub fn load(dir: &Path, diagnostics: &mut Vec<Diagnostic>) -> Option<Deployed> {
    let kubernetes = dir.join("kubernetes");
    let entries = match std::fs::read_dir(&kubernetes) {
        Ok(e) => e,
        Err(e) => {
            diagnostics.push(
                Diagnostic::new(
                    rule::IO_UNREADABLE,
                    format!(
                        "cannot read {}: not a site basepress deployed ({e})",
                        kubernetes.display()
                    ),
                )
                .help(
                    "pass --against the folder of the deployed site (the one holding kubernetes/)",
                ),
            );
            return None;
        }
    };
    let mut bases = BTreeMap::new();
    for entry in entries.filter_map(Result::ok) {
        let base_dir = entry.path().join("base");
        if !base_dir.is_dir() {
            continue;
        }
        let folder = entry.file_name().to_string_lossy().into_owned();
        let mut files = BTreeMap::new();
        for file in std::fs::read_dir(&base_dir).into_iter().flatten().flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            match crate::input::read_file(&file.path()) {
                Ok(bytes) => {
                    files.insert(name, bytes);
                }
                Err(e) => diagnostics.push(
                    Diagnostic::new(
                        rule::IO_UNREADABLE,
                        format!("cannot read {}: {e}", file.path().display()),
                    )
                    .help("the deployed site must be readable to compare it with this build"),
                ),
            }
        }
        bases.insert(folder, files);
    }
    Some(Deployed {
        dir: dir.to_path_buf(),
        bases,
    })
}
