//! Which signature each base is published with: its stored one (checked
//! against the key of site.yaml, and against the lock for a released
//! version), one made now with the signing key for a version not yet
//! released, or none. What a base publishes (`files.txt`, `SHA256SUMS`)
//! depends on it, so this comes before paths are claimed.

use crate::diagnostics::{rule, Diagnostic};
use crate::model::config::FILE_NAME as SITE_YAML;
use crate::model::layout::{self, sha256sums_for, SIGNATURE};
use crate::model::lock::FILE as LOCK_FILE;
use crate::model::site::{sha256_hex, Site};
use crate::signing::{self, Signer};

/// Gives each base the signature it is published with, and reports what
/// is wrong with them. Call it after loading and before checking and
/// rendering: what a base publishes (`files.txt`) depends on it.
///
/// - A stored signature is published when it verifies (and, for a
///   released version, matches the SHA-256 recorded in the lock).
/// - A released version without one is an error: it is signed once, by
///   `basepress release`, never again by a build.
/// - A version not released yet is signed with `signer`, or published
///   unsigned when there is none (with a warning once the project has
///   released a version, as for `version-unreleased`).
pub fn attach(site: &mut Site, signer: Option<&Signer>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let stored = &site.signatures;
    let Some(config) = site.config.signing.clone() else {
        if signer.is_some() {
            out.push(
                Diagnostic::new(
                    rule::SIGNING_KEY_INVALID,
                    "a signing key was given, and site.yaml configures no `signing`",
                )
                .in_file(SITE_YAML)
                .help("add `signing:` with identity, namespace and public_key to site.yaml, or drop the key"),
            );
        }
        for (version, files) in &site.lock.versions {
            if files.contains_key(SIGNATURE) {
                out.push(
                    Diagnostic::new(
                        rule::SIGNATURE_MISSING,
                        format!("v{version} was released signed, and site.yaml no longer configures `signing`"),
                    )
                    .in_file(SITE_YAML)
                    .help("restore `signing:` in site.yaml: a released version keeps its signature"),
                );
            }
        }
        return out;
    };
    let key = match signing::public_key(&config) {
        Ok(k) => k,
        Err(e) => {
            out.push(Diagnostic::new(rule::CONFIG_INVALID, e).in_file(SITE_YAML));
            return out;
        }
    };
    let signer = signer.filter(|s| {
        let ok = s.public_key().key_data() == key.key_data();
        if !ok {
            out.push(
                Diagnostic::new(
                    rule::SIGNING_KEY_INVALID,
                    format!(
                        "the signing key ({}) is not the key site.yaml's `signing.public_key` names ({})",
                        signing::fingerprint(s.public_key()),
                        signing::fingerprint(&key)
                    ),
                )
                .in_file(SITE_YAML),
            );
        }
        ok
    });
    for base in &mut site.bases {
        let namespace = config.namespace_for(&base.version);
        let released = site.lock.versions.get(&base.version);
        let recorded = released.and_then(|files| files.get(SIGNATURE));
        let sums = sha256sums_for(base, true);
        match stored.get(&base.version) {
            // Refused as it was read: that is its finding.
            Some(s) if s.refused => {}
            Some(s) => match signing::verify(&key, &namespace, sums.as_bytes(), &s.text) {
                Err(why) => out.push(
                    Diagnostic::new(
                        rule::SIGNATURE_INVALID,
                        format!("the signature of {} {why}", base.folder()),
                    )
                    .in_file(&s.path),
                ),
                Ok(()) => match (released, recorded) {
                    (Some(_), Some(sha)) if *sha != sha256_hex(s.text.as_bytes()) => out.push(
                        Diagnostic::new(
                            rule::SIGNATURE_INVALID,
                            format!(
                                "{} is released, and its signature differs from the one released (sha256 {} in {LOCK_FILE})",
                                base.folder(),
                                &sha[..12.min(sha.len())]
                            ),
                        )
                        .in_file(&s.path),
                    ),
                    (Some(_), None) => out.push(
                        Diagnostic::new(
                            rule::SIGNATURE_MISSING,
                            format!(
                                "{} is released, and its signature is not recorded in {LOCK_FILE}",
                                base.folder()
                            ),
                        )
                        .in_file(&s.path)
                        .help(format!(
                            "run `basepress release {}` to record it",
                            base.folder()
                        )),
                    ),
                    _ => base.signature = Some(s.text.clone()),
                },
            },
            None if released.is_some() => out.push(
                Diagnostic::new(
                    rule::SIGNATURE_MISSING,
                    format!(
                        "{} is released without a stored signature ({} is missing)",
                        base.folder(),
                        layout::stored_signature(&base.version).display()
                    ),
                )
                .in_file(layout::stored_signature(&base.version))
                .help(match recorded {
                    Some(_) => format!(
                        "restore {} from version control: a released signature never changes",
                        layout::stored_signature(&base.version).display()
                    ),
                    None => format!(
                        "sign it once: `basepress release {} --signing-key FILE`",
                        base.folder()
                    ),
                }),
            ),
            None => match signer {
                Some(signer) => match signer.sign(&namespace, sums.as_bytes()) {
                    Ok(sig) => base.signature = Some(sig),
                    Err(d) => out.push(d),
                },
                // Like `version-unreleased`: said once the project has
                // released something, when published versions are final.
                None if site.lock.versions.is_empty() => {}
                None => out.push(
                    Diagnostic::new(
                        rule::VERSION_UNSIGNED,
                        format!(
                            "{} is published unsigned: it is not released, and no signing key was given",
                            base.folder()
                        ),
                    )
                    .in_file(base.dir.join(layout::KUSTOMIZATION)),
                ),
            },
        }
    }
    // A released version whose base is gone is reported by the lock.
    out
}
