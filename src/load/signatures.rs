//! The release signatures stored in `bases/signatures/`, one
//! `vX.Y.Z.sig` per signed version.

use super::read_input;
use crate::diagnostics::{rule, Diagnostic};
use crate::model::layout::SIGNATURES_DIR;
use crate::model::site::StoredSignature;
use semver::Version;
use std::collections::BTreeMap;
use std::path::Path;

/// Every stored signature, by version; a finding for a file that is not
/// one.
pub fn load(root: &Path, diagnostics: &mut Vec<Diagnostic>) -> BTreeMap<Version, StoredSignature> {
    let mut out = BTreeMap::new();
    let dir = root.join(SIGNATURES_DIR);
    match crate::input::dir_state(root, &dir) {
        Ok(true) => {}
        Ok(false) => return out,
        Err(d) => {
            diagnostics.push(d);
            return out;
        }
    }
    for (path, name) in super::walk_files(root, &dir, diagnostics) {
        let rel = super::relative(root, &path);
        let version = name
            .strip_suffix(".sig")
            .and_then(|v| v.strip_prefix('v'))
            .and_then(|v| Version::parse(v).ok());
        let Some(version) = version else {
            diagnostics.push(
                Diagnostic::new(
                    rule::SIGNATURE_INVALID,
                    format!("`{name}` is not named after a version (vX.Y.Z.sig)"),
                )
                .in_file(&rel)
                .help(format!(
                    "{SIGNATURES_DIR}/ holds only the signatures `basepress release` stores"
                )),
            );
            continue;
        };
        let text = read_input(root, &path)
            .and_then(|b| crate::input::utf8(b, &rel, rule::SIGNATURE_INVALID));
        let refused = text.is_err();
        match text {
            Ok(text) => {
                out.insert(
                    version,
                    StoredSignature {
                        path: rel,
                        text,
                        refused,
                    },
                );
            }
            Err(d) => {
                diagnostics.push(d);
                out.insert(
                    version,
                    StoredSignature {
                        path: rel,
                        text: String::new(),
                        refused,
                    },
                );
            }
        }
    }
    out
}
