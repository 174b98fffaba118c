//! `basepress verify URL|DIR [vX.Y.Z]`: checks a published site the way a
//! careful installer would, and reports what does not match.
//!
//! For each version (every one `versions.txt` lists, or the one asked
//! for) it downloads `files.txt`, `SHA256SUMS`, the signature and every
//! file, then checks that the file names are safe for the shell loop, that
//! `files.txt` and `SHA256SUMS` name the same files, that every file has
//! the SHA-256 that `SHA256SUMS` gives it, and that the signature verifies
//! against `allowed_signers` (the site's, or one the caller pins) in the
//! version's own namespace. Nothing it downloads is trusted or written:
//! names from an index are checked before they are fetched.

use crate::diagnostics::{rule, Diagnostic, Location};
use crate::engine::Outcome;
use crate::load::is_safe_file_name;
use crate::model::layout::SIGNATURE;
use crate::model::site::sha256_hex;
use semver::Version;
use ssh_key::{PublicKey, SshSig};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The largest published file: base files are inputs, which basepress
/// reads up to this size.
const MAX_FILE: u64 = crate::load::MAX_FILE_BYTES;
/// The largest index (`versions.txt`, `files.txt`, `SHA256SUMS`,
/// `allowed_signers`, a signature).
const MAX_INDEX: u64 = 1 << 20;
/// At most this many versions, and files per version, are verified.
const MAX_ENTRIES: usize = 4096;
/// At most this much is downloaded in one run.
const MAX_TOTAL: u64 = 1 << 30;

/// What to verify, and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// One version; every version that `versions.txt` lists when `None`.
    pub version: Option<Version>,
    /// An `allowed_signers` file to trust instead of the site's own (for
    /// an installer who pinned the vendor's key): signatures are then
    /// required.
    pub allowed_signers: Option<PathBuf>,
    /// How long one download may take, connecting included.
    pub timeout: Duration,
    /// The identity installers pass `ssh-keygen -Y verify -I`: the signer
    /// must be a principal of it. Any principal when `None`.
    pub identity: Option<String>,
    /// The namespace installers pass `-n` before `/vX.Y.Z`: a signature
    /// must be made in exactly that one. Any ending in `/vX.Y.Z` when
    /// `None`.
    pub namespace: Option<String>,
    /// When the verification happens (seconds since 1970), for the
    /// `valid-after` and `valid-before` of allowed_signers lines; they are
    /// not checked when `None`.
    pub now: Option<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            version: None,
            allowed_signers: None,
            timeout: Duration::from_secs(30),
            identity: None,
            namespace: None,
            now: None,
        }
    }
}

/// What a run verified.
#[derive(Debug, Clone, Default)]
pub struct Verified {
    /// The versions looked at (`v1.30.0`).
    pub versions: Vec<String>,
    /// Files whose checksum matched.
    pub files: usize,
    /// Signatures that verified.
    pub signatures: usize,
}

/// Verifies the site at `target`: an `http://` or `https://` URL of its
/// root, or the folder a build wrote.
pub fn verify(target: &str, options: &Options) -> (Outcome, Verified) {
    let mut run = Run {
        source: match Source::new(target, options.timeout) {
            Ok(s) => s,
            Err(d) => return (Outcome::of(vec![d]), Verified::default()),
        },
        findings: Vec::new(),
        verified: Verified::default(),
        downloaded: 0,
        stopped: false,
        identity: options.identity.clone(),
        namespace: options.namespace.clone(),
        now: options.now,
    };
    run.all(options);
    (Outcome::of(run.findings), run.verified)
}

/// Where published files come from.
enum Source {
    Dir(PathBuf),
    Http { agent: ureq::Agent, base: String },
}

/// A download: the bytes, or why there are none.
enum Fetch {
    Found(Vec<u8>),
    Missing(String),
}

impl Source {
    fn new(target: &str, timeout: Duration) -> Result<Source, Diagnostic> {
        let lower = target.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            let config = ureq::Agent::config_builder()
                .timeout_global(Some(timeout))
                .http_status_as_error(false)
                .max_redirects(5)
                .user_agent(concat!("basepress/", env!("CARGO_PKG_VERSION")))
                .build();
            return Ok(Source::Http {
                agent: config.into(),
                base: target.trim_end_matches('/').to_string(),
            });
        }
        if target.contains("://") {
            return Err(Diagnostic::new(
                rule::SITE_UNREACHABLE,
                format!("`{target}` is neither an http(s) URL nor a folder"),
            ));
        }
        let dir = PathBuf::from(target);
        if !dir.join("kubernetes").is_dir() {
            return Err(Diagnostic::new(
                rule::SITE_UNREACHABLE,
                format!(
                    "{} is not a built site: it has no kubernetes/ folder",
                    dir.display()
                ),
            ));
        }
        Ok(Source::Dir(dir))
    }

    /// Downloads the site path `path` (`kubernetes/versions.txt`), at most
    /// `limit` bytes of it. `Err` when the site does not answer.
    fn get(&self, path: &str, limit: u64) -> Result<Fetch, Diagnostic> {
        match self {
            Source::Dir(root) => {
                let file = root.join(path);
                let meta = match std::fs::symlink_metadata(&file) {
                    Ok(m) => m,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        return Ok(Fetch::Missing("it does not exist".into()))
                    }
                    Err(e) => return Err(unreachable(path, &e)),
                };
                if !meta.is_file() {
                    return Ok(Fetch::Missing("it is not a regular file".into()));
                }
                if meta.len() > limit {
                    return Ok(too_large(limit));
                }
                read_bounded(&file, limit).map_err(|e| unreachable(path, &e))
            }
            Source::Http { agent, base } => {
                let url = format!("{base}/{path}");
                let mut response = agent.get(&url).call().map_err(|e| unreachable(&url, &e))?;
                // Not there: 404, 410, and the 403 a bucket answers for a
                // key it does not hold when listing is not public. Any other
                // answer (a 5xx, 429) says nothing about the file: the site
                // cannot be read now.
                let status = response.status();
                if matches!(status.as_u16(), 403 | 404 | 410) {
                    return Ok(Fetch::Missing(format!("the server answers {status}")));
                }
                if status != 200 {
                    return Err(unreachable(&url, &format!("the server answers {status}")));
                }
                match response.body_mut().with_config().limit(limit).read_to_vec() {
                    Ok(bytes) => Ok(Fetch::Found(bytes)),
                    Err(ureq::Error::BodyExceedsLimit(_)) => Ok(too_large(limit)),
                    Err(e) => Err(unreachable(&url, &e)),
                }
            }
        }
    }

    /// The names in the site folder `path` (`kubernetes/v1.30.0/base/`):
    /// `None` over HTTP, where a folder cannot be listed, or when it cannot
    /// be read.
    fn list(&self, path: &str) -> Option<Vec<String>> {
        let Source::Dir(root) = self else {
            return None;
        };
        let mut names: Vec<String> = std::fs::read_dir(root.join(path))
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        Some(names)
    }

    /// What findings name files by: the site path.
    fn at(&self, path: &str) -> Location {
        Location::file(path)
    }
}

fn unreachable(what: &str, e: &dyn std::fmt::Display) -> Diagnostic {
    Diagnostic::new(
        rule::SITE_UNREACHABLE,
        format!("cannot download {what}: {e}"),
    )
}

fn too_large(limit: u64) -> Fetch {
    Fetch::Missing(format!(
        "it is larger than {limit} bytes, which no published file is"
    ))
}

fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Fetch> {
    use std::io::Read;
    let mut bytes = Vec::new();
    crate::input::open_regular(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Ok(too_large(limit));
    }
    Ok(Fetch::Found(bytes))
}

/// One allowed_signers line basepress can use.
#[derive(Debug, Clone)]
struct Trusted {
    principals: String,
    /// The `namespaces="…"` pattern list; any namespace when absent.
    namespaces: Option<String>,
    /// `valid-after` and `valid-before`, in seconds since 1970.
    valid_after: Option<u64>,
    valid_before: Option<u64>,
    key: PublicKey,
}

/// What a signature must satisfy besides a trusted key: the identity and
/// namespace installers verify with, at the time of the verification.
struct Expect<'a> {
    identity: Option<&'a str>,
    namespace: Option<&'a str>,
    now: Option<u64>,
}

/// An allowed_signers time (`YYYYMMDD[HHMM[SS]][Z]`, as ssh-keygen reads
/// it; taken as UTC) in seconds since 1970.
fn signers_time(text: &str) -> Option<u64> {
    let digits = text.strip_suffix(['Z', 'z']).unwrap_or(text);
    if !matches!(digits.len(), 8 | 12 | 14) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = |r: std::ops::Range<usize>| digits.get(r).map_or(Some(0), |d| d.parse::<i64>().ok());
    let (y, m, d) = (n(0..4)?, n(4..6)?, n(6..8)?);
    let (hh, mm, ss) = (n(8..10)?, n(10..12)?, n(12..14)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + hh * 3600 + mm * 60 + ss).ok()
}

/// Parses an allowed_signers file (the format of ssh-keygen's ALLOWED
/// SIGNERS section): `principals [options] keytype key [comment]`.
/// Certificate authorities are left out: basepress verifies plain keys.
fn parse_allowed_signers(text: &str) -> Result<Vec<Trusted>, (usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (principals, rest) = split_token(line);
        let rest = rest.trim_start();
        let is_key = |s: &str| ["ssh-", "ecdsa-", "sk-"].iter().any(|p| s.starts_with(p));
        let (options, key_text) = if is_key(rest) {
            ("", rest)
        } else {
            let (o, k) = split_token(rest);
            (o, k.trim_start())
        };
        let options = split_options(options);
        if options
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("cert-authority"))
        {
            continue;
        }
        let key = PublicKey::from_openssh(key_text)
            .map_err(|e| (i + 1, format!("the key is not an OpenSSH public key ({e})")))?;
        let option = |name: &str| {
            options
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let time = |name: &str| match option(name) {
            None => Ok(None),
            Some(t) => signers_time(&t).map(Some).ok_or_else(|| {
                (
                    i + 1,
                    format!("`{name}=\"{t}\"` is not a time as YYYYMMDD[HHMM[SS]][Z]"),
                )
            }),
        };
        out.push(Trusted {
            principals: principals.to_string(),
            namespaces: option("namespaces"),
            valid_after: time("valid-after")?,
            valid_before: time("valid-before")?,
            key,
        });
    }
    Ok(out)
}

/// The first whitespace-separated token (spaces inside double quotes
/// included), and the rest.
fn split_token(s: &str) -> (&str, &str) {
    let mut quoted = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => return (&s[..i], &s[i..]),
            _ => {}
        }
    }
    (s, "")
}

/// `a,b="x,y"` as `[(a, ""), (b, "x,y")]`.
fn split_options(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut quoted = false;
    let mut current = String::new();
    let mut push = |part: &str| {
        if part.is_empty() {
            return;
        }
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        out.push((k.to_string(), v.trim_matches('"').to_string()));
    };
    for c in s.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            ',' if !quoted => {
                push(&current);
                current.clear();
            }
            c => current.push(c),
        }
    }
    push(&current);
    out
}

/// Whether `s` matches an OpenSSH pattern list: comma-separated glob
/// patterns (`*`, `?`), where a match of a `!`-negated one refuses.
fn matches_list(list: &str, s: &str) -> bool {
    let mut matched = false;
    for pattern in list.split(',') {
        if let Some(negated) = pattern.strip_prefix('!') {
            if glob(negated, s) {
                return false;
            }
        } else if glob(pattern, s) {
            matched = true;
        }
    }
    matched
}

/// Glob matching with `*` (any run of characters) and `?` (one), without
/// backtracking blow-up.
fn glob(pattern: &str, s: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = s.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Why `armored` is not a trusted signature of `message` for the version
/// folder `folder`, as `ssh-keygen -Y verify` decides with the identity
/// and namespace of `expect`; the signer's principals when it is.
fn check_signature(
    trusted: &[Trusted],
    folder: &str,
    message: &[u8],
    armored: &[u8],
    expect: &Expect,
) -> Result<String, String> {
    let sig = SshSig::from_pem(armored).map_err(|e| format!("is not an SSH signature ({e})"))?;
    let namespace = sig.namespace();
    match expect.namespace {
        Some(ns) if namespace != format!("{ns}/{folder}") => {
            return Err(format!(
                "was made in the namespace `{namespace}`, where installers verify `{ns}/{folder}`"
            ))
        }
        None if !namespace.ends_with(&format!("/{folder}")) => {
            return Err(format!(
                "was made in the namespace `{namespace}`, which is not one for {folder}: it may be another version's"
            ))
        }
        _ => {}
    }
    let fingerprint =
        || PublicKey::new(sig.public_key().clone(), "").fingerprint(ssh_key::HashAlg::Sha256);
    let keyed: Vec<&Trusted> = trusted
        .iter()
        .filter(|t| t.key.key_data() == sig.public_key())
        .filter(|t| {
            t.namespaces
                .as_deref()
                .is_none_or(|n| matches_list(n, namespace))
        })
        .filter(|t| {
            expect
                .identity
                .is_none_or(|id| matches_list(&t.principals, id))
        })
        .collect();
    if keyed.is_empty() {
        let whom = expect
            .identity
            .map(|id| format!(" as `{id}`"))
            .unwrap_or_default();
        return Err(format!(
            "was made by a key that allowed_signers does not trust{whom} for `{namespace}` ({})",
            fingerprint()
        ));
    }
    let in_time = |t: &&&Trusted| {
        expect.now.is_none_or(|now| {
            t.valid_after.is_none_or(|a| now >= a) && t.valid_before.is_none_or(|b| now < b)
        })
    };
    let Some(signer) = keyed.iter().find(in_time) else {
        return Err(format!(
            "was made by a key that allowed_signers trusts only at other times (valid-after, valid-before), as ssh-keygen finds ({})",
            fingerprint()
        ));
    };
    signer
        .key
        .verify(namespace, message, &sig)
        .map_err(|_| "does not match SHA256SUMS: one of them was changed".to_string())?;
    Ok(signer.principals.clone())
}

/// `SHA256SUMS` parsed: name → (hex, line).
type Sums = BTreeMap<String, (String, usize)>;

struct Run {
    source: Source,
    findings: Vec<Diagnostic>,
    verified: Verified,
    downloaded: u64,
    /// Set when the site stops answering (or sends too much): nothing
    /// more is fetched, so one finding says so instead of one per file.
    stopped: bool,
    /// What signatures must satisfy: see [`Options`].
    identity: Option<String>,
    namespace: Option<String>,
    now: Option<u64>,
}

impl Run {
    /// Downloads `path`; a finding (of `rule`) when it is missing.
    fn fetch(
        &mut self,
        path: &str,
        limit: u64,
        missing: &'static crate::diagnostics::Rule,
    ) -> Option<Vec<u8>> {
        if self.stopped {
            return None;
        }
        match self.source.get(path, limit) {
            Ok(Fetch::Found(bytes)) => {
                self.downloaded += bytes.len() as u64;
                if self.downloaded > MAX_TOTAL {
                    self.stopped = true;
                    self.findings.push(Diagnostic::new(
                        rule::SITE_UNREACHABLE,
                        format!("the site sends more than {MAX_TOTAL} bytes in all; verification stopped"),
                    ));
                    return None;
                }
                Some(bytes)
            }
            Ok(Fetch::Missing(why)) => {
                self.findings.push(
                    Diagnostic::new(missing, format!("`{path}` cannot be downloaded: {why}"))
                        .at(self.source.at(path)),
                );
                None
            }
            Err(d) => {
                self.stopped = true;
                self.findings.push(d);
                None
            }
        }
    }

    fn all(&mut self, options: &Options) {
        let trusted = self.trust(options);
        let versions: Vec<String> = match &options.version {
            Some(v) => vec![format!("v{v}")],
            None => self.versions(),
        };
        // Past the cap, versions.txt lists more than was read.
        if options.version.is_none() && versions.len() < MAX_ENTRIES {
            self.unlisted(
                "kubernetes/",
                "kubernetes/versions.txt",
                &versions,
                |name| {
                    name.strip_prefix('v')
                        .is_some_and(|v| Version::parse(v).is_ok())
                },
            );
            // Beside the versions, the indexes and the signers' file.
            use crate::model::layout::{ALLOWED_SIGNERS, VERSIONS_JSON, VERSIONS_TXT};
            let own: Vec<String> = [VERSIONS_TXT, VERSIONS_JSON, ALLOWED_SIGNERS]
                .iter()
                .filter_map(|p| p.strip_prefix("/kubernetes/"))
                .map(str::to_string)
                .collect();
            self.unlisted(
                "kubernetes/",
                "the download contract (versions, their indexes and allowed_signers)",
                &own,
                |name| {
                    name.strip_prefix('v')
                        .is_none_or(|v| Version::parse(v).is_err())
                },
            );
        }
        for folder in versions {
            self.version(&folder, trusted.as_deref());
            self.verified.versions.push(folder);
        }
    }

    /// In a folder that can be listed, the entries `counts` picks that
    /// `listed` (read from `index`) does not name: published, yet no
    /// installer downloads them and nothing here checks them.
    fn unlisted(
        &mut self,
        dir: &str,
        index: &str,
        listed: &[String],
        counts: impl Fn(&str) -> bool,
    ) {
        let Some(names) = self.source.list(dir) else {
            return;
        };
        for name in names.iter().filter(|n| counts(n)) {
            if !listed.contains(name) {
                self.findings.push(
                    Diagnostic::new(
                        rule::PUBLISHED_FILE_UNLISTED,
                        format!("`{name}` is published in {dir}, and {index} does not list it: installers never download it and it is not verified"),
                    )
                    .at(self.source.at(&format!("{dir}{name}")))
                    .help("publish the folder a build wrote as it is: remove what was added by hand"),
                );
            }
        }
    }

    /// The keys to trust: the pinned file, else the site's allowed_signers
    /// (`None` when the site publishes none: it is unsigned).
    fn trust(&mut self, options: &Options) -> Option<Vec<Trusted>> {
        let (text, place) = match &options.allowed_signers {
            Some(path) => match read_bounded(path, MAX_INDEX) {
                Ok(Fetch::Found(bytes)) => (bytes, path.display().to_string()),
                Ok(Fetch::Missing(why)) => {
                    self.findings.push(
                        Diagnostic::new(
                            rule::IO_UNREADABLE,
                            format!("cannot use {}: {why}", path.display()),
                        )
                        .in_file(path),
                    );
                    return Some(Vec::new());
                }
                Err(e) => {
                    self.findings.push(
                        Diagnostic::new(rule::IO_UNREADABLE, format!("cannot read: {e}"))
                            .in_file(path),
                    );
                    return Some(Vec::new());
                }
            },
            None => {
                let path = "kubernetes/allowed_signers";
                match self.source.get(path, MAX_INDEX) {
                    Ok(Fetch::Found(bytes)) => (bytes, path.to_string()),
                    Ok(Fetch::Missing(_)) => return None,
                    Err(d) => {
                        self.stopped = true;
                        self.findings.push(d);
                        return None;
                    }
                }
            }
        };
        let text = String::from_utf8_lossy(&text);
        match parse_allowed_signers(&text) {
            Ok(list) => {
                if list.is_empty() {
                    self.findings.push(
                        Diagnostic::new(
                            rule::PUBLISHED_SIGNATURE_INVALID,
                            format!("{place} trusts no key: no signature can verify"),
                        )
                        .in_file(&place),
                    );
                }
                Some(list)
            }
            Err((line, why)) => {
                self.findings.push(
                    Diagnostic::new(rule::PUBLISHED_SIGNATURE_INVALID, format!("{place}: {why}"))
                        .at(Location::line(&place, line)),
                );
                Some(Vec::new())
            }
        }
    }

    /// The version folders `versions.txt` lists, each checked to be
    /// `vX.Y.Z`.
    fn versions(&mut self) -> Vec<String> {
        let path = "kubernetes/versions.txt";
        let Some(bytes) = self.fetch(path, MAX_INDEX, rule::PUBLISHED_FILE_MISSING) else {
            return Vec::new();
        };
        let text = String::from_utf8_lossy(&bytes);
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let ok = line
                .strip_prefix('v')
                .and_then(|v| Version::parse(v).ok())
                .is_some_and(|v| format!("v{v}") == line);
            if !ok {
                self.findings.push(
                    Diagnostic::new(
                        rule::BASE_FILE_NAME_UNSAFE,
                        format!(
                            "versions.txt lists `{}`, which is not a version like v1.30.0",
                            line.escape_debug()
                        ),
                    )
                    .at(Location::line(path, i + 1)),
                );
                continue;
            }
            if out.len() == MAX_ENTRIES {
                self.findings.push(
                    Diagnostic::new(
                        rule::BASE_FILE_NAME_UNSAFE,
                        format!("versions.txt lists more than {MAX_ENTRIES} versions; the rest are not verified"),
                    )
                    .in_file(path),
                );
                break;
            }
            out.push(line.to_string());
        }
        out
    }

    /// Verifies one version folder.
    fn version(&mut self, folder: &str, trusted: Option<&[Trusted]>) {
        let dir = format!("kubernetes/{folder}/base/");
        let files_path = format!("{dir}files.txt");
        let Some(files_txt) = self.fetch(&files_path, MAX_INDEX, rule::PUBLISHED_FILE_MISSING)
        else {
            return;
        };
        let listed = self.names(&files_path, &files_txt);
        self.unlisted(&dir, "its files.txt", &listed, |name| name != "files.txt");
        // A version folder holds its base alone: anything beside it would
        // be published as part of the immutable version, unchecked.
        self.unlisted(
            &format!("kubernetes/{folder}/"),
            "the download contract (a version folder holds base/ alone)",
            &["base".to_string()],
            |_| true,
        );
        if !listed.iter().any(|n| n == "SHA256SUMS") {
            self.findings.push(
                Diagnostic::new(
                    rule::PUBLISHED_CHECKSUM_MISMATCH,
                    format!("{folder}'s files.txt does not list SHA256SUMS: installers cannot check what they download"),
                )
                .in_file(&files_path),
            );
        }
        let sums_path = format!("{dir}SHA256SUMS");
        let Some(sums_bytes) = self.fetch(&sums_path, MAX_INDEX, rule::PUBLISHED_FILE_MISSING)
        else {
            return;
        };
        let sums = self.sums(&sums_path, &sums_bytes);
        self.signature(folder, &dir, &listed, &sums_bytes, trusted);

        for name in &listed {
            if name != "SHA256SUMS" && name != SIGNATURE && !sums.contains_key(name) {
                self.findings.push(
                    Diagnostic::new(
                        rule::PUBLISHED_CHECKSUM_MISMATCH,
                        format!("{folder}'s files.txt lists `{name}`, which SHA256SUMS does not vouch for"),
                    )
                    .in_file(&files_path),
                );
            }
        }
        for (name, (sha, line)) in &sums {
            if !listed.contains(name) {
                self.findings.push(
                    Diagnostic::new(
                        rule::PUBLISHED_CHECKSUM_MISMATCH,
                        format!("{folder}'s SHA256SUMS names `{name}`, which files.txt does not list: installers do not download it"),
                    )
                    .at(Location::line(&sums_path, *line)),
                );
            }
            let path = format!("{dir}{name}");
            let bytes = if name == "files.txt" {
                Some(files_txt.clone())
            } else {
                self.fetch(&path, MAX_FILE, rule::PUBLISHED_FILE_MISSING)
            };
            let Some(bytes) = bytes else { continue };
            let actual = sha256_hex(&bytes);
            if actual == *sha {
                self.verified.files += 1;
            } else {
                self.findings.push(
                    Diagnostic::new(
                        rule::PUBLISHED_CHECKSUM_MISMATCH,
                        format!(
                            "{folder}'s `{name}` has sha256 {}…, and SHA256SUMS gives {}…",
                            &actual[..12],
                            &sha[..12]
                        ),
                    )
                    .at(self.source.at(&path)),
                );
            }
        }
    }

    /// The names in `files.txt`, word by word as the shell loop splits it,
    /// without the unsafe ones (each a finding).
    fn names(&mut self, path: &str, bytes: &[u8]) -> Vec<String> {
        let text = String::from_utf8_lossy(bytes);
        let mut out = Vec::new();
        // The download loop splits on the shell's IFS (space, tab, new
        // line): a carriage return stays in the name, so curl refuses
        // every URL of a CRLF index.
        const IFS: [char; 2] = [' ', '\t'];
        for (i, line) in text.split('\n').enumerate() {
            for word in line.split(IFS).filter(|w| !w.is_empty()) {
                let safe = is_safe_file_name(word) && line.trim_matches(IFS) == word;
                if !safe {
                    self.findings.push(
                        Diagnostic::new(
                            rule::BASE_FILE_NAME_UNSAFE,
                            format!(
                                "files.txt names `{}`, which the download loop would split, expand or write outside base/",
                                line.trim().escape_debug()
                            ),
                        )
                        .at(Location::line(path, i + 1)),
                    );
                    break;
                }
                if out.len() == MAX_ENTRIES {
                    self.findings.push(
                        Diagnostic::new(
                            rule::BASE_FILE_NAME_UNSAFE,
                            format!("files.txt names more than {MAX_ENTRIES} files; the rest are not verified"),
                        )
                        .in_file(path),
                    );
                    return out;
                }
                out.push(word.to_string());
            }
        }
        out
    }

    /// `SHA256SUMS` parsed (`HEX  NAME` or `HEX *NAME` per line); lines
    /// that are not are findings.
    fn sums(&mut self, path: &str, bytes: &[u8]) -> Sums {
        let text = String::from_utf8_lossy(bytes);
        let mut out = Sums::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let parsed = line.split_once(' ').and_then(|(sha, rest)| {
                let name = rest.strip_prefix(' ').or_else(|| rest.strip_prefix('*'))?;
                let hex = sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit());
                (hex && is_safe_file_name(name))
                    .then(|| (sha.to_ascii_lowercase(), name.to_string()))
            });
            match parsed {
                Some((sha, name)) if out.len() < MAX_ENTRIES => match out.get(&name) {
                    // `sha256sum -c` checks every line: two sums for one
                    // name fail it, whichever comes last.
                    Some((first, line)) if *first != sha => self.findings.push(
                        Diagnostic::new(
                            rule::PUBLISHED_CHECKSUM_MISMATCH,
                            format!(
                                "SHA256SUMS gives `{name}` a second, different SHA-256 (the first is on line {line}): `sha256sum -c` fails on one of them"
                            ),
                        )
                        .at(Location::line(path, i + 1)),
                    ),
                    Some(_) => {}
                    None => {
                        out.insert(name, (sha, i + 1));
                    }
                },
                Some(_) => {}
                None => self.findings.push(
                    Diagnostic::new(
                        rule::PUBLISHED_CHECKSUM_MISMATCH,
                        format!(
                            "SHA256SUMS line {} is not `SHA256  NAME` with a safe name: `{}`",
                            i + 1,
                            line.escape_debug()
                        ),
                    )
                    .at(Location::line(path, i + 1)),
                ),
            }
        }
        out
    }

    /// Checks the signature of `SHA256SUMS` when there is something to
    /// check it against, or one to check.
    fn signature(
        &mut self,
        folder: &str,
        dir: &str,
        listed: &[String],
        sums: &[u8],
        trusted: Option<&[Trusted]>,
    ) {
        let path = format!("{dir}{SIGNATURE}");
        let published = listed.iter().any(|n| n == SIGNATURE);
        let Some(trusted) = trusted else {
            if published {
                self.findings.push(
                    Diagnostic::new(
                        rule::PUBLISHED_SIGNATURE_INVALID,
                        format!("{folder} is signed, and the site publishes no kubernetes/allowed_signers to verify it with"),
                    )
                    .at(self.source.at(&path)),
                );
            }
            return;
        };
        if !published {
            self.findings.push(
                Diagnostic::new(
                    rule::PUBLISHED_SIGNATURE_INVALID,
                    format!("{folder} is not signed: its files.txt lists no {SIGNATURE}, and the keys to trust ask for a signature"),
                )
                .in_file(format!("{dir}files.txt"))
                .help("a build without the signing key publishes a version not released yet unsigned (warning `version-unsigned`): build with --signing-key FILE (or BASEPRESS_SIGNING_KEY) before publishing it"),
            );
            return;
        }
        let Some(armored) = self.fetch(&path, MAX_INDEX, rule::PUBLISHED_SIGNATURE_INVALID) else {
            return;
        };
        let expect = Expect {
            identity: self.identity.as_deref(),
            namespace: self.namespace.as_deref(),
            now: self.now,
        };
        match check_signature(trusted, folder, sums, &armored, &expect) {
            Ok(_) => self.verified.signatures += 1,
            Err(why) => self.findings.push(
                Diagnostic::new(
                    rule::PUBLISHED_SIGNATURE_INVALID,
                    format!("the signature of {folder}'s SHA256SUMS {why}"),
                )
                .at(self.source.at(&path)),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_patterns() {
        assert!(glob("agent/v*", "agent/v1.2.3"));
        assert!(!glob("agent/v*", "other/v1.2.3"));
        assert!(glob("a?c", "abc") && !glob("a?c", "abbc"));
        assert!(glob("*", "") && glob("**x", "yyx"));
        assert!(matches_list("a/*,b/*", "b/v1"));
        assert!(!matches_list("*,!b/*", "b/v1"));
        // Many stars on a long text stay fast.
        let long = "a".repeat(5000);
        assert!(!glob(&"*a".repeat(50).replace("a", "a*b"), &long));
    }

    #[test]
    fn allowed_signers_lines() {
        let key = crate::signing::tests::test_signer(7)
            .public_key()
            .to_openssh()
            .unwrap();
        let text = format!(
            "# comment\n\nrel@example.com namespaces=\"agent/v*\" {key}\nca@x cert-authority {key}\nany@x {key}\n"
        );
        let list = parse_allowed_signers(&text).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].principals, "rel@example.com");
        assert_eq!(list[0].namespaces.as_deref(), Some("agent/v*"));
        assert_eq!(list[1].namespaces, None);
        let e = parse_allowed_signers("x ssh-ed25519 zzz\n").unwrap_err();
        assert_eq!(e.0, 1);
    }

    #[test]
    fn signatures_are_checked_for_key_namespace_and_version() {
        let signer = crate::signing::tests::test_signer(7);
        let key = signer.public_key().to_openssh().unwrap();
        let trusted =
            parse_allowed_signers(&format!("rel@x namespaces=\"agent/v*\" {key}\n")).unwrap();
        let sig = signer.sign("agent/v1.0.0", b"sums").unwrap();
        assert_eq!(
            check_signature(&trusted, "v1.0.0", b"sums", sig.as_bytes(), &ANY),
            Ok("rel@x".into())
        );
        let e = check_signature(&trusted, "v1.0.1", b"sums", sig.as_bytes(), &ANY).unwrap_err();
        assert!(e.contains("another version"), "{e}");
        let e = check_signature(&trusted, "v1.0.0", b"other", sig.as_bytes(), &ANY).unwrap_err();
        assert!(e.contains("does not match"), "{e}");
        let other = crate::signing::tests::test_signer(8)
            .sign("agent/v1.0.0", b"sums")
            .unwrap();
        let e = check_signature(&trusted, "v1.0.0", b"sums", other.as_bytes(), &ANY).unwrap_err();
        assert!(e.contains("does not trust"), "{e}");
        let outside = signer.sign("other/v1.0.0", b"sums").unwrap();
        let e = check_signature(&trusted, "v1.0.0", b"sums", outside.as_bytes(), &ANY).unwrap_err();
        assert!(e.contains("does not trust"), "{e}");

        // As installers verify: the exact namespace, the identity among
        // the line's principals, the time within its validity.
        let exact = |ns: &'static str, id: &'static str, now| Expect {
            identity: Some(id),
            namespace: Some(ns),
            now: Some(now),
        };
        let file = signer.sign("file/v1.0.0", b"sums").unwrap();
        let any_ns = parse_allowed_signers(&format!("rel@x,ops@x {key}\n")).unwrap();
        assert!(check_signature(&any_ns, "v1.0.0", b"sums", file.as_bytes(), &ANY).is_ok());
        let e = check_signature(
            &any_ns,
            "v1.0.0",
            b"sums",
            file.as_bytes(),
            &exact("agent", "rel@x", 0),
        )
        .unwrap_err();
        assert!(e.contains("where installers verify `agent/v1.0.0`"), "{e}");
        let ok = check_signature(
            &any_ns,
            "v1.0.0",
            b"sums",
            sig.as_bytes(),
            &exact("agent", "ops@x", 0),
        );
        assert_eq!(ok, Ok("rel@x,ops@x".into()));
        let e = check_signature(
            &any_ns,
            "v1.0.0",
            b"sums",
            sig.as_bytes(),
            &exact("agent", "eve@x", 0),
        )
        .unwrap_err();
        assert!(e.contains("does not trust as `eve@x`"), "{e}");
        let dated = parse_allowed_signers(&format!(
            "rel@x valid-after=\"20200101\",valid-before=\"20210101Z\" {key}\n"
        ))
        .unwrap();
        let in_2020 = 1_600_000_000;
        let check = |now| {
            check_signature(
                &dated,
                "v1.0.0",
                b"sums",
                sig.as_bytes(),
                &exact("agent", "rel@x", now),
            )
        };
        assert!(check(in_2020).is_ok());
        for now in [1_500_000_000, 1_700_000_000] {
            assert!(check(now).unwrap_err().contains("only at other times"));
        }
        assert!(parse_allowed_signers(&format!("rel@x valid-before=\"soon\" {key}\n")).is_err());
        assert_eq!(signers_time("19700102"), Some(86_400));
        assert_eq!(signers_time("20000301000001Z"), Some(951_868_801));
    }

    const ANY: Expect = Expect {
        identity: None,
        namespace: None,
        now: None,
    };
}
