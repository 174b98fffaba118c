//! Signed releases: each version's `SHA256SUMS` gets a detached signature
//! in OpenSSH's SSHSIG format, which installers check with the stock
//! `ssh-keygen -Y verify` against the `allowed_signers` file the site
//! publishes.
//!
//! The signature is part of the release. `basepress release vX.Y.Z` signs
//! the version once and stores the signature in
//! `bases/signatures/vX.Y.Z.sig`, recording its SHA-256 in
//! `bases/published.lock`; every later build publishes that stored file as
//! `SHA256SUMS.sig` and never needs the private key. A build with a key
//! signs only versions that are not released yet.
//!
//! Each version is signed in its own namespace, `NAMESPACE/vX.Y.Z`, so a
//! signature of one version does not verify for another: serving the files
//! of v1.29.0 under v1.30.0 is caught like any other tampering.

use crate::config::FILE_NAME as SITE_YAML;
use crate::diagnostics::{rule, Diagnostic};
use crate::lock::{Lock, FILE as LOCK_FILE};
use crate::render::kubernetes::{sha256sums_for, SIGNATURE};
use crate::site::{sha256_hex, Base, Site};
use semver::Version;
use serde::{Deserialize, Serialize};
use ssh_key::{Algorithm, HashAlg, LineEnding, PrivateKey, PublicKey, SshSig};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where released signatures are stored, relative to the project root.
pub const DIR: &str = "bases/signatures";

/// The largest signature or key file read: an ed25519 SSHSIG is about
/// 300 bytes, a key about 400.
const MAX_KEY_BYTES: u64 = 64 << 10;

/// `signing:` in site.yaml: who signs the releases, and with which key.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SigningConfig {
    /// The signer's identity (`releases@example.com`): the principal of
    /// the `allowed_signers` line, which installers pass to `-I`.
    pub identity: String,
    /// The namespace prefix: version vX.Y.Z is signed in
    /// `NAMESPACE/vX.Y.Z`, which installers pass to `-n`.
    pub namespace: String,
    /// The public key, as in a `.pub` file (`ssh-ed25519 AAAA… comment`).
    pub public_key: String,
}

impl SigningConfig {
    /// The namespace signatures of `version` are made in.
    pub fn namespace_for(&self, version: &Version) -> String {
        format!("{}/v{version}", self.namespace)
    }

    /// The configured public key (validated when site.yaml was read).
    pub fn key(&self) -> Result<PublicKey, String> {
        let key = PublicKey::from_openssh(self.public_key.trim())
            .map_err(|e| format!("`signing.public_key` is not an OpenSSH public key: {e}"))?;
        if key.algorithm() != Algorithm::Ed25519 {
            return Err(format!(
                "`signing.public_key` is a {} key; basepress signs with ed25519 keys only",
                key.algorithm()
            ));
        }
        Ok(key)
    }

    /// The `allowed_signers` file the site publishes: one line that trusts
    /// the key for the identity, in every version's namespace.
    pub fn allowed_signers(&self) -> Result<String, String> {
        let key = PublicKey::new(self.key()?.key_data().clone(), "");
        let key = key.to_openssh().map_err(|e| e.to_string())?;
        Ok(format!(
            "{} namespaces=\"{}/v*\" {}\n",
            self.identity, self.namespace, key
        ))
    }
}

/// Checks `signing:` as site.yaml is read. The error names the value at
/// fault (to locate it in the file) and says what is wrong.
pub fn validate_config(config: &SigningConfig) -> Result<(), (String, String)> {
    // Both values go into allowed_signers and onto the installers' command
    // line: no spaces, quotes, commas or pattern characters.
    let plain = |s: &str| {
        !s.is_empty()
            && !s.starts_with('-')
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@' | '+'))
    };
    if !plain(&config.identity) {
        return Err((
            config.identity.clone(),
            format!(
                "`signing.identity` `{}` must be a plain name such as releases@example.com (letters, digits, `.`, `_`, `-`, `@`, `+`)",
                config.identity
            ),
        ));
    }
    if !plain(&config.namespace) {
        return Err((
            config.namespace.clone(),
            format!(
                "`signing.namespace` `{}` must be a plain name such as whystack-agent (letters, digits, `.`, `_`, `-`, `@`, `+`)",
                config.namespace
            ),
        ));
    }
    config
        .key()
        .map(|_| ())
        .map_err(|e| (config.public_key.clone(), e))
}

/// The private key that signs releases. It never leaves memory: `Debug`
/// shows only its public fingerprint.
#[derive(Clone)]
pub struct Signer {
    key: PrivateKey,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer")
            .field("public", &self.key.fingerprint(HashAlg::Sha256).to_string())
            .finish()
    }
}

impl Signer {
    /// Parses an OpenSSH private key; `origin` says where it came from
    /// (`--signing-key FILE`, `BASEPRESS_SIGNING_KEY`) for messages.
    pub fn parse(text: &str, origin: &str) -> Result<Signer, Diagnostic> {
        let bad = |why: String| {
            Diagnostic::new(
                rule::SIGNING_KEY_INVALID,
                format!("the signing key from {origin} {why}"),
            )
        };
        let key = PrivateKey::from_openssh(text.trim())
            .map_err(|e| bad(format!("is not an OpenSSH private key ({e})")))?;
        if key.is_encrypted() {
            return Err(bad("is encrypted with a passphrase".into()).help(
                "give basepress an unencrypted copy held by the pipeline's secret store \
                 (`ssh-keygen -p -N '' -f COPY` removes the passphrase)",
            ));
        }
        if key.algorithm() != Algorithm::Ed25519 {
            return Err(bad(format!(
                "is a {} key; basepress signs with ed25519 keys only",
                key.algorithm()
            )));
        }
        Ok(Signer { key })
    }

    /// Reads and parses the private key in `path`.
    pub fn read(path: &Path) -> Result<Signer, Diagnostic> {
        let origin = format!("--signing-key {}", path.display());
        let text = read_small(path).map_err(|e| {
            Diagnostic::new(
                rule::SIGNING_KEY_INVALID,
                format!("cannot read the signing key {}: {e}", path.display()),
            )
        })?;
        Signer::parse(&text, &origin)
    }

    pub fn public_key(&self) -> &PublicKey {
        self.key.public_key()
    }

    /// Signs `message` in `namespace`: an armored SSHSIG, as `ssh-keygen
    /// -Y sign` writes it.
    pub fn sign(&self, namespace: &str, message: &[u8]) -> Result<String, Diagnostic> {
        self.key
            .sign(namespace, HashAlg::Sha512, message)
            .and_then(|sig| sig.to_pem(LineEnding::LF))
            .map_err(|e| Diagnostic::new(rule::SIGNING_KEY_INVALID, format!("cannot sign: {e}")))
    }
}

/// Why an armored signature is not `key`'s signature of `message` in
/// `namespace`; `Ok` when it is.
pub fn verify(
    key: &PublicKey,
    namespace: &str,
    message: &[u8],
    armored: &str,
) -> Result<(), String> {
    let sig =
        SshSig::from_pem(armored.trim()).map_err(|e| format!("not an SSH signature ({e})"))?;
    if sig.public_key() != key.key_data() {
        return Err(format!(
            "made with another key ({}), not site.yaml's `signing.public_key`",
            PublicKey::new(sig.public_key().clone(), "").fingerprint(HashAlg::Sha256)
        ));
    }
    if sig.namespace() != namespace {
        return Err(format!(
            "made in the namespace `{}`, not `{namespace}`",
            sig.namespace()
        ));
    }
    key.verify(namespace, message, &sig)
        .map_err(|_| "does not match the version's SHA256SUMS".to_string())
}

/// The stored signature of a version.
struct Stored {
    /// Relative to the root.
    path: PathBuf,
    text: String,
}

/// The path of the stored signature of `version`, relative to the root.
pub fn stored_path(version: &Version) -> PathBuf {
    Path::new(DIR).join(format!("v{version}.sig"))
}

/// Reads `bases/signatures/`: the stored signature of each version that
/// has one.
fn stored(root: &Path, diagnostics: &mut Vec<Diagnostic>) -> BTreeMap<Version, Stored> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(root.join(DIR)) else {
        return out;
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    for name in names {
        let path = Path::new(DIR).join(&name);
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
                .in_file(&path)
                .help(format!(
                    "{DIR}/ holds only the signatures `basepress release` stores"
                )),
            );
            continue;
        };
        match read_small(&root.join(&path)) {
            Ok(text) => {
                out.insert(version, Stored { path, text });
            }
            Err(e) => diagnostics.push(
                Diagnostic::new(rule::IO_UNREADABLE, format!("cannot read: {e}")).in_file(&path),
            ),
        }
    }
    out
}

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
    let stored = stored(&site.root, &mut out);
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
    let key = match config.key() {
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
                        s.public_key().fingerprint(HashAlg::Sha256),
                        key.fingerprint(HashAlg::Sha256)
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
            Some(s) => match verify(&key, &namespace, sums.as_bytes(), &s.text) {
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
                        stored_path(&base.version).display()
                    ),
                )
                .in_file(LOCK_FILE)
                .help(match recorded {
                    Some(_) => format!(
                        "restore {} from version control: a released signature never changes",
                        stored_path(&base.version).display()
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
                    .in_file(base.dir.join(crate::load::KUSTOMIZATION)),
                ),
            },
        }
    }
    // A released version whose base is gone is reported by the lock.
    out
}

/// For `basepress release`: makes sure the released `base` has its stored
/// signature, signing it with `signer` when it has none, and records the
/// signature's SHA-256 in `lock`. Returns the file written, if any. Does
/// nothing for a project that does not sign.
pub fn release(
    root: &Path,
    site: &Site,
    base: &Base,
    signer: Option<&Signer>,
    lock: &mut Lock,
) -> Result<Option<PathBuf>, Diagnostic> {
    let Some(config) = &site.config.signing else {
        return Ok(None);
    };
    let path = stored_path(&base.version);
    let (text, written) = match read_small(&root.join(&path)) {
        // `attach` verified it, or reported why not (which stops a release).
        Ok(text) => (text, None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let Some(signer) = signer else {
                return Err(Diagnostic::new(
                    rule::SIGNING_KEY_INVALID,
                    format!(
                        "releasing {} needs the signing key: site.yaml configures `signing`",
                        base.folder()
                    ),
                )
                .help("pass --signing-key FILE or set BASEPRESS_SIGNING_KEY to the key's text"));
            };
            let sums = sha256sums_for(base, true);
            let text = signer.sign(&config.namespace_for(&base.version), sums.as_bytes())?;
            write_atomic(&root.join(&path), text.as_bytes()).map_err(|e| {
                Diagnostic::new(rule::IO_UNREADABLE, format!("cannot write: {e}")).in_file(&path)
            })?;
            (text, Some(path))
        }
        Err(e) => {
            return Err(
                Diagnostic::new(rule::IO_UNREADABLE, format!("cannot read: {e}")).in_file(&path),
            )
        }
    };
    lock.versions
        .entry(base.version.clone())
        .or_default()
        .insert(SIGNATURE.to_string(), sha256_hex(text.as_bytes()));
    Ok(written)
}

/// Whether the lock records a signature for `version`.
pub fn is_recorded(lock: &Lock, version: &Version) -> bool {
    lock.versions
        .get(version)
        .is_some_and(|files| files.contains_key(SIGNATURE))
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("sig.tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Reads a small text file (a key or a signature), refusing large ones.
fn read_small(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut text = String::new();
    file.take(MAX_KEY_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_KEY_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {MAX_KEY_BYTES} bytes: not a key or signature"),
        ));
    }
    Ok(text)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ssh_key::private::{Ed25519Keypair, KeypairData};

    /// A fixed test key: the same seed gives the same key every run.
    pub(crate) fn test_signer(seed: u8) -> Signer {
        let pair = Ed25519Keypair::from_seed(&[seed; 32]);
        let key = PrivateKey::new(KeypairData::Ed25519(pair), "test").unwrap();
        Signer { key }
    }

    pub(crate) fn config_for(signer: &Signer) -> SigningConfig {
        SigningConfig {
            identity: "releases@example.com".into(),
            namespace: "agent".into(),
            public_key: signer.public_key().to_openssh().unwrap(),
        }
    }

    #[test]
    fn signatures_verify_only_for_their_key_namespace_and_message() {
        let signer = test_signer(1);
        let key = signer.public_key().clone();
        let sig = signer.sign("agent/v1.0.0", b"sums\n").unwrap();
        assert!(sig.starts_with("-----BEGIN SSH SIGNATURE-----\n"));
        assert_eq!(verify(&key, "agent/v1.0.0", b"sums\n", &sig), Ok(()));
        // ed25519 is deterministic: the same input gives the same bytes.
        assert_eq!(sig, signer.sign("agent/v1.0.0", b"sums\n").unwrap());

        let e = verify(&key, "agent/v1.0.1", b"sums\n", &sig).unwrap_err();
        assert!(e.contains("namespace `agent/v1.0.0`"), "{e}");
        let e = verify(&key, "agent/v1.0.0", b"other\n", &sig).unwrap_err();
        assert!(e.contains("does not match"), "{e}");
        let other = test_signer(2).public_key().clone();
        let e = verify(&other, "agent/v1.0.0", b"sums\n", &sig).unwrap_err();
        assert!(e.contains("another key"), "{e}");
        let e = verify(&key, "agent/v1.0.0", b"sums\n", "garbage").unwrap_err();
        assert!(e.contains("not an SSH signature"), "{e}");
    }

    #[test]
    fn config_values_are_checked() {
        let signer = test_signer(1);
        let good = config_for(&signer);
        assert_eq!(validate_config(&good), Ok(()));
        let allowed = good.allowed_signers().unwrap();
        assert!(
            allowed.starts_with("releases@example.com namespaces=\"agent/v*\" ssh-ed25519 AAAA"),
            "{allowed}"
        );
        assert!(
            !allowed.contains("test"),
            "the key's comment is left out: {allowed}"
        );

        for (identity, namespace) in [
            ("a b", "agent"),
            ("x", "a,b"),
            ("x", "a*"),
            ("-x", "a"),
            ("x", ""),
        ] {
            let c = SigningConfig {
                identity: identity.into(),
                namespace: namespace.into(),
                ..good.clone()
            };
            assert!(validate_config(&c).is_err(), "{identity} {namespace}");
        }
        let c = SigningConfig {
            public_key: "ssh-ed25519 notbase64".into(),
            ..good.clone()
        };
        let (needle, msg) = validate_config(&c).unwrap_err();
        assert_eq!(needle, "ssh-ed25519 notbase64");
        assert!(msg.contains("not an OpenSSH public key"), "{msg}");
    }

    #[test]
    fn keys_are_parsed_with_clear_errors() {
        let signer = test_signer(3);
        let text = signer.key.to_openssh(LineEnding::LF).unwrap();
        let parsed = Signer::parse(&text, "BASEPRESS_SIGNING_KEY").unwrap();
        assert_eq!(parsed.public_key(), signer.public_key());
        let e = Signer::parse("not a key", "BASEPRESS_SIGNING_KEY").unwrap_err();
        assert_eq!(e.rule.id, "signing-key-invalid");
        assert!(
            e.message.contains("from BASEPRESS_SIGNING_KEY"),
            "{}",
            e.message
        );
        // The private key never shows in debug output.
        let shown = format!("{signer:?}");
        assert!(
            shown.contains("SHA256:") && !shown.contains("PRIVATE"),
            "{shown}"
        );
    }
}
