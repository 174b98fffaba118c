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

use crate::diagnostics::{rule, Diagnostic};
use crate::model::config::SigningConfig;
use ssh_key::{Algorithm, HashAlg, LineEnding, PrivateKey, PublicKey, SshSig};
use std::path::Path;

/// The largest signature or key file read: an ed25519 SSHSIG is about
/// 300 bytes, a key about 400.
pub const MAX_KEY_BYTES: u64 = 64 << 10;

/// The configured public key (validated when site.yaml was read).
pub fn public_key(config: &SigningConfig) -> Result<PublicKey, String> {
    let key = PublicKey::from_openssh(config.public_key.trim())
        .map_err(|e| format!("`signing.public_key` is not an OpenSSH public key: {e}"))?;
    if key.algorithm() != Algorithm::Ed25519 {
        return Err(format!(
            "`signing.public_key` is {} key; basepress signs with ed25519 keys only",
            with_article(key.algorithm().as_ref())
        ));
    }
    Ok(key)
}

/// A key type's name with its article (`an ecdsa-sha2-nistp256`, `a
/// ssh-rsa`), as said aloud.
fn with_article(name: &str) -> String {
    let vowel = name.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {name}", if vowel { "an" } else { "a" })
}

/// The `allowed_signers` file the site publishes: one line that trusts
/// the key for the identity, in every version's namespace.
pub fn allowed_signers(config: &SigningConfig) -> Result<String, String> {
    let key = PublicKey::new(public_key(config)?.key_data().clone(), "");
    let key = key.to_openssh().map_err(|e| e.to_string())?;
    Ok(format!(
        "{} namespaces=\"{}/v*\" {}\n",
        config.identity, config.namespace, key
    ))
}

/// The SHA-256 fingerprint of a key, as `ssh-keygen -l` prints it.
pub fn fingerprint(key: &PublicKey) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
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
    public_key(config)
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
        let text = text.trim();
        // What people give instead of the key's text: a public key, a
        // path.
        if PublicKey::from_openssh(text).is_ok() {
            return Err(bad("is a public key".into())
                .help("give the private key (the file without `.pub`): the public one goes in site.yaml's `signing.public_key`"));
        }
        // (Nothing of the text is shown: it may be part of a key.)
        if !text.starts_with("-----BEGIN") {
            return Err(bad(
                "is not an OpenSSH private key: it does not start with a `-----BEGIN` line".into(),
            )
            .help("BASEPRESS_SIGNING_KEY holds the key's text, not a path (for a file, pass --signing-key FILE); a file must hold an OpenSSH private key"));
        }
        let key = PrivateKey::from_openssh(text)
            .map_err(|e| bad(format!("is not an OpenSSH private key ({e})")))?;
        if key.is_encrypted() {
            return Err(bad("is encrypted with a passphrase".into()).help(
                "give basepress an unencrypted copy held by the pipeline's secret store \
                 (`ssh-keygen -p -N '' -f COPY` removes the passphrase)",
            ));
        }
        if key.algorithm() != Algorithm::Ed25519 {
            return Err(bad(format!(
                "is {} key; basepress signs with ed25519 keys only",
                with_article(key.algorithm().as_ref())
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
    // What `ssh-keygen -Y sign` writes: the armor, then base64.
    let armored = armored.trim().trim_start_matches('\u{feff}').trim();
    if !armored.starts_with("-----BEGIN SSH SIGNATURE-----") {
        return Err(
            "is not an SSH signature: it does not start with `-----BEGIN SSH SIGNATURE-----`"
                .into(),
        );
    }
    let sig = SshSig::from_pem(armored)
        .map_err(|e| format!("is not an SSH signature that can be read ({e})"))?;
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

/// Reads a small text file (a key or a signature), refusing large ones.
fn read_small(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let file = crate::input::open_regular(path)?;
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
        assert!(
            e.starts_with("is not an SSH signature: it does not start"),
            "{e}"
        );
        // A byte-order mark before the armor is an editor's, not a fault.
        let bom = format!("\u{feff}{sig}");
        assert_eq!(verify(&key, "agent/v1.0.0", b"sums\n", &bom), Ok(()));
    }

    #[test]
    fn config_values_are_checked() {
        let signer = test_signer(1);
        let good = config_for(&signer);
        assert_eq!(validate_config(&good), Ok(()));
        let allowed = allowed_signers(&good).unwrap();
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
