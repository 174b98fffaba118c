//! A registry, over the OCI distribution API (the `oci-client` crate).
//!
//! Every request is bounded in time: the client's connect and read
//! timeouts, and a deadline around each call, so a registry that accepts
//! a connection and stays silent fails after [`super::Options::timeout`].
//! Blobs stream through the layer reader chunk by chunk, each chunk under
//! the same deadline. Plain HTTP is used for loopback addresses only,
//! unless the caller says `insecure`.

use super::spec::{self, Descriptor, MANIFEST_TYPES};
use super::{read_verified, Error, Options, SourceRef, Store, Top};
use base64::Engine as _;
use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use std::future::Future;
use std::io::{self, Read};
use std::net::IpAddr;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::time::Duration;
use tokio::runtime::Runtime;

pub struct Registry {
    runtime: Runtime,
    client: Client,
    auth: RegistryAuth,
    /// `host[:port]`, as written.
    registry: String,
    repository: String,
    timeout: Duration,
    /// What the source is called in messages.
    name: String,
}

/// Whether `registry` (`host[:port]`) is a loopback address.
fn is_loopback(registry: &str) -> bool {
    let host = if let Some(rest) = registry.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest)
    } else {
        registry.rsplit_once(':').map_or(registry, |(h, _)| h)
    };
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl Registry {
    pub fn connect(source: &SourceRef, opts: &Options) -> Result<Registry, Error> {
        let SourceRef::Registry {
            registry,
            repository,
            ..
        } = source
        else {
            return Err(Error::source("not a registry source"));
        };
        let probe = Reference::with_tag(registry.clone(), repository.clone(), "latest".into());
        let resolved = probe.resolve_registry().to_string();
        let protocol = if is_loopback(registry) || opts.insecure {
            ClientProtocol::HttpsExcept(vec![resolved.clone(), registry.clone()])
        } else {
            ClientProtocol::Https
        };
        crate::tls::install_provider();
        let config = ClientConfig {
            protocol,
            read_timeout: Some(opts.timeout),
            connect_timeout: Some(opts.timeout),
            platform_resolver: None,
            ..ClientConfig::default()
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| Error::unavailable(format!("cannot start the network runtime: {e}")))?;
        // The client spawns nothing when built, but reqwest wants a runtime
        // around when its connection pool starts.
        let client = runtime.block_on(async { Client::new(config) });
        let auth = credentials(opts, registry, &resolved)?;
        Ok(Registry {
            runtime,
            client,
            auth,
            registry: registry.clone(),
            repository: repository.clone(),
            timeout: opts.timeout,
            name: source.without_tag(),
        })
    }

    fn reference_tag(&self, tag: &str) -> Reference {
        Reference::with_tag(
            self.registry.clone(),
            self.repository.clone(),
            tag.to_string(),
        )
    }

    fn reference_digest(&self, digest: &str) -> Reference {
        Reference::with_digest(
            self.registry.clone(),
            self.repository.clone(),
            digest.to_string(),
        )
    }

    /// Runs one request on the runtime, under the deadline, turning a
    /// panic inside the client into an error.
    fn call<T>(
        &self,
        what: &str,
        fut: impl Future<Output = Result<T, OciDistributionError>>,
    ) -> Result<T, Error> {
        let timeout = self.timeout;
        let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.runtime
                .block_on(async { tokio::time::timeout(timeout, fut).await })
        }));
        match run {
            Err(_) => Err(Error::unavailable(format!(
                "{}: the registry client failed on {what} (an answer it could not handle)",
                self.name
            ))),
            Ok(Err(_)) => Err(Error::unavailable(format!(
                "{}: no answer to {what} within {} s",
                self.name,
                timeout.as_secs_f64()
            ))
            .with_help(
                "check that the registry is up and reachable; --timeout sets how long to wait",
            )),
            Ok(Ok(r)) => r.map_err(|e| self.map_error(e, what)),
        }
    }

    fn map_error(&self, e: OciDistributionError, what: &str) -> Error {
        let name = &self.name;
        let unauthorized = || {
            Error::unavailable(format!(
                "{name}: the registry answered 401 Unauthorized to {what}: it wants credentials, or refused the ones given"
            ))
            .with_help("give credentials for the registry: a Docker config.json with an `auths` entry for its host (--registry-config), or a bearer token (BASEPRESS_REGISTRY_TOKEN)")
        };
        let not_found = |detail: &str| {
            Error::unavailable(format!(
                "{name}: the registry has no {what} (404 {detail})"
            ))
            .with_help("check the repository and the tag: the image of that version may not have been pushed")
        };
        match e {
            OciDistributionError::UnauthorizedError { .. }
            | OciDistributionError::AuthenticationFailure(_) => unauthorized(),
            OciDistributionError::RegistryError { envelope, .. } => {
                let codes: Vec<&OciErrorCode> = envelope.errors.iter().map(|e| &e.code).collect();
                let text = envelope
                    .errors
                    .iter()
                    .map(|e| e.message.clone())
                    .collect::<Vec<_>>()
                    .join("; ");
                if codes.iter().any(|c| {
                    matches!(
                        c,
                        OciErrorCode::ManifestUnknown
                            | OciErrorCode::NameUnknown
                            | OciErrorCode::BlobUnknown
                            | OciErrorCode::NotFound
                    )
                }) {
                    not_found(&text)
                } else if codes
                    .iter()
                    .any(|c| matches!(c, OciErrorCode::Unauthorized | OciErrorCode::Denied))
                {
                    unauthorized()
                } else {
                    Error::unavailable(format!("{name}: the registry refused {what}: {text}"))
                }
            }
            OciDistributionError::ServerError { code, message, .. } => match code {
                401 | 403 => unauthorized(),
                404 => not_found(message.trim()),
                500..=599 => Error::unavailable(format!(
                    "{name}: the registry failed on {what} (HTTP {code}{})",
                    short(&message)
                ))
                .with_help(
                    "the registry has a problem of its own: try again later, or ask its operators",
                ),
                _ => Error::unavailable(format!(
                    "{name}: the registry answered HTTP {code} to {what}{}",
                    short(&message)
                )),
            },
            OciDistributionError::ImageManifestNotFoundError(m) => not_found(&m),
            OciDistributionError::RequestError(r) => {
                if r.is_timeout() {
                    Error::unavailable(format!(
                        "{name}: no answer to {what} within {} s",
                        self.timeout.as_secs_f64()
                    ))
                } else if r.is_connect() {
                    Error::unavailable(format!(
                        "{name}: cannot connect to the registry {}: {}",
                        self.registry,
                        chain(&r)
                    ))
                } else {
                    Error::unavailable(format!("{name}: {what} failed: {}", chain(&r)))
                }
            }
            OciDistributionError::DigestError(d) => Error::corrupt(format!("{name}: {what}: {d}")),
            other => Error::unavailable(format!("{name}: {what} failed: {other}")),
        }
    }

    /// What a tag (or digest) names.
    pub fn resolve(&self, tag: Option<&str>, digest: Option<&str>) -> Result<Top, Error> {
        let (reference, what) = match (digest, tag) {
            (Some(d), _) => (self.reference_digest(d), format!("the manifest {d}")),
            (None, Some(t)) => (self.reference_tag(t), format!("the tag `{t}`")),
            (None, None) => {
                return Err(Error::source(format!(
                    "{}: a registry source needs a tag (registry://HOST/REPO:TAG, or the version of the base)",
                    self.name
                )))
            }
        };
        let (bytes, got) = self.call(
            &what,
            self.client
                .pull_manifest_raw(&reference, &self.auth, MANIFEST_TYPES),
        )?;
        if bytes.len() as u64 > spec::MAX_MANIFEST_BYTES {
            return Err(Error::too_large(format!(
                "{}: {what} is larger than {} bytes",
                self.name,
                spec::MAX_MANIFEST_BYTES
            )));
        }
        let digest = verify_manifest(&bytes, digest, &got, &format!("{}: {what}", self.name))?;
        let media_type = media_type_of(&bytes);
        Ok(Top {
            tag: tag.map(str::to_string),
            media_type,
            digest,
            bytes: bytes.to_vec(),
        })
    }

    fn stream(
        &self,
        digest: &str,
        what: &str,
    ) -> Result<BoxStream<'static, io::Result<Bytes>>, Error> {
        let reference = self.reference_digest(digest);
        let s = self.call(what, self.client.pull_blob_stream(&reference, digest))?;
        Ok(s.stream)
    }
}

/// The manifest's own media type (the registry's Content-Type is not
/// passed on by the client; every v2 manifest names its type, and an OCI
/// one without it is told apart by its fields).
fn media_type_of(bytes: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct M {
        #[serde(default)]
        media_type: Option<String>,
    }
    serde_json::from_slice::<M>(bytes)
        .ok()
        .and_then(|m| m.media_type)
        .unwrap_or_default()
}

/// Checks a manifest's bytes against the digest asked for (if any) and
/// returns their digest.
fn verify_manifest(
    bytes: &[u8],
    want: Option<&str>,
    header: &str,
    what: &str,
) -> Result<String, Error> {
    use sha2::{Digest, Sha256};
    let got = format!("sha256:{:x}", Sha256::digest(bytes));
    if let Some(w) = want {
        if w != got {
            return Err(Error::corrupt(format!(
                "{what}: the registry sent bytes that hash to {got}, not to {w}"
            )));
        }
    }
    if header.starts_with("sha256:") && header != got {
        return Err(Error::corrupt(format!(
            "{what}: the registry says its digest is {header}, but its bytes hash to {got}"
        )));
    }
    Ok(got)
}

fn short(message: &str) -> String {
    let m = message.trim();
    if m.is_empty() {
        String::new()
    } else {
        let cut: String = m.chars().take(200).collect();
        format!(": {cut}")
    }
}

fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

impl Store for Registry {
    fn read_manifest(&self, desc: &Descriptor) -> Result<Vec<u8>, Error> {
        let what = format!("the manifest {}", desc.digest);
        let reference = self.reference_digest(&desc.digest);
        let (bytes, header) = self.call(
            &what,
            self.client
                .pull_manifest_raw(&reference, &self.auth, MANIFEST_TYPES),
        )?;
        verify_manifest(
            &bytes,
            Some(&desc.digest),
            &header,
            &format!("{}: {what}", self.name),
        )?;
        if bytes.len() as u64 != desc.size() {
            return Err(Error::corrupt(format!(
                "{}: {what} is {} bytes, its descriptor says {}",
                self.name,
                bytes.len(),
                desc.size()
            )));
        }
        Ok(bytes.to_vec())
    }

    fn read_blob(&self, desc: &Descriptor, limit: u64) -> Result<Vec<u8>, Error> {
        let what = format!("the blob {}", desc.digest);
        if desc.size() > limit {
            return Err(Error::too_large(format!(
                "{}: {what} is {} bytes, more than the {limit} basepress reads",
                self.name,
                desc.size()
            )));
        }
        let stream = self.stream(&desc.digest, &what)?;
        let reader = StreamReader::new(self, stream, what.clone());
        read_verified(reader, desc, limit, &format!("{}: {what}", self.name))
    }

    fn open_blob(&self, key: &str, _size: u64) -> Result<Box<dyn Read + Send + '_>, Error> {
        let what = format!("the blob {key}");
        let stream = self.stream(key, &what)?;
        Ok(Box::new(StreamReader::new(self, stream, what)))
    }
}

/// A blocking reader over a blob's byte stream: each chunk is awaited on
/// the registry's runtime, under its deadline.
struct StreamReader<'a> {
    registry: &'a Registry,
    stream: BoxStream<'static, io::Result<Bytes>>,
    chunk: Bytes,
    /// The stream ended: it must not be polled again.
    done: bool,
    what: String,
}

impl<'a> StreamReader<'a> {
    fn new(
        registry: &'a Registry,
        stream: BoxStream<'static, io::Result<Bytes>>,
        what: String,
    ) -> Self {
        StreamReader {
            registry,
            stream,
            chunk: Bytes::new(),
            done: false,
            what,
        }
    }
}

impl Read for StreamReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.chunk.is_empty() {
            if self.done {
                return Ok(0);
            }
            let timeout = self.registry.timeout;
            let next = self
                .registry
                .runtime
                .block_on(async { tokio::time::timeout(timeout, self.stream.next()).await });
            match next {
                Err(_) => {
                    return Err(io::Error::other(Error::unavailable(format!(
                        "{}: {}: the registry stopped sending for {} s",
                        self.registry.name,
                        self.what,
                        timeout.as_secs_f64()
                    ))))
                }
                Ok(None) => {
                    self.done = true;
                    return Ok(0);
                }
                Ok(Some(Ok(b))) => self.chunk = b,
                Ok(Some(Err(e))) => {
                    // The client's own digest check fails at the end of the
                    // stream: say it as a mismatch.
                    let text = chain(&e);
                    let err = if text.to_lowercase().contains("digest") {
                        Error::corrupt(format!(
                            "{}: {}: its bytes do not match its digest ({text})",
                            self.registry.name, self.what
                        ))
                    } else {
                        Error::unavailable(format!(
                            "{}: {}: the download failed: {text}",
                            self.registry.name, self.what
                        ))
                    };
                    return Err(io::Error::other(err));
                }
            }
        }
        let n = buf.len().min(self.chunk.len());
        buf[..n].copy_from_slice(&self.chunk[..n]);
        let _ = self.chunk.split_to(n);
        Ok(n)
    }
}

/// The credentials to send to `registry`: the bearer token if given, else
/// the Docker config's entry for the host, else none.
fn credentials(opts: &Options, registry: &str, resolved: &str) -> Result<RegistryAuth, Error> {
    if let Some(token) = &opts.credentials.bearer_token {
        let token = token.trim();
        if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Error::source(
                "the registry token is empty or has characters an HTTP header cannot carry",
            ));
        }
        return Ok(RegistryAuth::Bearer(token.to_string()));
    }
    match &opts.credentials.docker_config {
        Some(path) => docker_config_auth(path, registry, resolved),
        None => Ok(RegistryAuth::Anonymous),
    }
}

/// The host a config.json `auths` key names (`https://index.docker.io/v1/`
/// is Docker Hub's).
fn auth_key_host(key: &str) -> String {
    let k = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    let host = k.split('/').next().unwrap_or(k);
    match host {
        "index.docker.io" | "registry-1.docker.io" | "docker.io" => "docker.io".to_string(),
        h => h.to_string(),
    }
}

fn docker_config_auth(path: &Path, registry: &str, resolved: &str) -> Result<RegistryAuth, Error> {
    #[derive(serde::Deserialize, Default)]
    struct AuthEntry {
        #[serde(default)]
        auth: Option<String>,
        #[serde(default)]
        username: Option<String>,
        #[serde(default)]
        password: Option<String>,
        #[serde(default)]
        registrytoken: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct DockerConfig {
        #[serde(default)]
        auths: std::collections::BTreeMap<String, AuthEntry>,
    }
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(RegistryAuth::Anonymous),
        Err(e) => {
            return Err(Error::unavailable(format!(
                "the registry config {} cannot be read: {e}",
                path.display()
            )))
        }
    };
    let config: DockerConfig = serde_json::from_slice(&bytes).map_err(|e| {
        Error::source(format!(
            "the registry config {} is not valid: {e}",
            path.display()
        ))
    })?;
    let want = [auth_key_host(registry), auth_key_host(resolved)];
    let Some((key, entry)) = config
        .auths
        .iter()
        .find(|(k, _)| want.contains(&auth_key_host(k)))
    else {
        return Ok(RegistryAuth::Anonymous);
    };
    if let Some(t) = &entry.registrytoken {
        return Ok(RegistryAuth::Bearer(t.clone()));
    }
    if let (Some(u), Some(p)) = (&entry.username, &entry.password) {
        return Ok(RegistryAuth::Basic(u.clone(), p.clone()));
    }
    let Some(auth) = &entry.auth else {
        return Ok(RegistryAuth::Anonymous);
    };
    let bad = || {
        Error::source(format!(
            "the registry config {}: `auths.{key}.auth` is not base64 of `user:password`",
            path.display()
        ))
    };
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(auth.trim())
        .map_err(|_| bad())?;
    let text = String::from_utf8(decoded).map_err(|_| bad())?;
    let (u, p) = text.split_once(':').ok_or_else(bad)?;
    Ok(RegistryAuth::Basic(u.to_string(), p.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_told_apart() {
        assert!(is_loopback("127.0.0.1:5000"));
        assert!(is_loopback("127.3.2.1"));
        assert!(is_loopback("localhost:5000"));
        assert!(is_loopback("[::1]:5000"));
        assert!(!is_loopback("registry.example.com:5000"));
        assert!(!is_loopback("10.0.0.1:5000"));
    }

    #[test]
    fn docker_config_auths_are_matched_by_host() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let b64 = base64::engine::general_purpose::STANDARD.encode("ci:s3cret");
        std::fs::write(
            &path,
            format!(r#"{{"auths":{{"http://127.0.0.1:5000/v2/":{{"auth":"{b64}"}},"https://index.docker.io/v1/":{{"username":"u","password":"p"}}}}}}"#),
        )
        .unwrap();
        let a = docker_config_auth(&path, "127.0.0.1:5000", "127.0.0.1:5000").unwrap();
        assert!(matches!(a, RegistryAuth::Basic(ref u, ref p) if u == "ci" && p == "s3cret"));
        let a = docker_config_auth(&path, "docker.io", "index.docker.io").unwrap();
        assert!(matches!(a, RegistryAuth::Basic(ref u, _) if u == "u"));
        let a = docker_config_auth(&path, "other.example.com", "other.example.com").unwrap();
        assert!(matches!(a, RegistryAuth::Anonymous));
        std::fs::write(&path, r#"{"auths":{"h.example.com":{"auth":"!!"}}}"#).unwrap();
        let e = docker_config_auth(&path, "h.example.com", "h.example.com").unwrap_err();
        assert_eq!(e.rule.id, "image-source-invalid");
    }
}
