//! S3 settings the way the AWS tools find them: the standard variables
//! (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
//! `AWS_REGION`, `AWS_ENDPOINT_URL`…) and the profiles of `~/.aws/config`
//! and `~/.aws/credentials`. The command line reads the variables and
//! hands them over; this module reads only the two files.
//!
//! Precedence, as in the AWS CLI: a profile named on the command line,
//! then keys in the environment, then the profile `AWS_PROFILE` names (or
//! `default`), then what the machine provides (web identity, container or
//! instance credentials, which the object store client resolves itself).

use super::Environment;
use crate::diagnostics::{rule, Diagnostic};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The largest profile file read.
const MAX_PROFILE_FILE: u64 = 1 << 20;

/// Everything an S3 client needs, resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct S3Settings {
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
    pub session_token: Option<String>,
    pub region: String,
    /// An S3-compatible endpoint (`https://minio.example.com:9000`).
    pub endpoint: Option<String>,
    /// Plain HTTP is allowed: only for an endpoint on loopback.
    pub allow_http: bool,
    /// Settings of the machine's own credentials (web identity, container
    /// credentials), as the client's configuration keys.
    pub ambient: Vec<(String, String)>,
    /// Where the credentials come from, for messages: `the environment`,
    /// `profile ci`, `the machine`.
    pub source: String,
}

/// The variables handed to the client as they are: the machine's
/// credentials (the client fetches them itself).
const AMBIENT: &[&str] = &[
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_ENDPOINT_URL_STS",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
];

/// Profile keys that get credentials some way basepress does not run.
const UNSUPPORTED: &[&str] = &[
    "credential_process",
    "role_arn",
    "source_profile",
    "sso_session",
    "sso_start_url",
    "web_identity_token_file",
];

/// Resolves the S3 settings from the environment and, when `profile` is
/// given or the environment names one, the profile files.
pub fn settings(env: &Environment, profile: Option<&str>) -> Result<S3Settings, Diagnostic> {
    let var = |k: &str| env.vars.get(k).filter(|v| !v.is_empty()).cloned();
    let explicit = profile.map(str::to_string);
    let named = explicit.clone().or_else(|| var("AWS_PROFILE"));
    let profiles = Profiles::read(env)?;
    let chosen = named.clone().unwrap_or_else(|| "default".to_string());
    let found = profiles.get(&chosen);
    if named.is_some() && found.is_none() {
        return Err(Diagnostic::new(
            rule::STORE_CONFIG_INVALID,
            format!(
                "the AWS profile `{chosen}` is in neither {} nor {}",
                profiles.config.display(),
                profiles.credentials.display()
            ),
        )
        .help("name a profile that exists (`aws configure list-profiles`), or unset AWS_PROFILE"));
    }
    let empty = BTreeMap::new();
    let p = found.unwrap_or(&empty);
    let from_profile = |k: &str| p.get(k).filter(|v| !v.is_empty()).cloned();

    let mut out = S3Settings::default();
    let env_keys = (var("AWS_ACCESS_KEY_ID"), var("AWS_SECRET_ACCESS_KEY"));
    let profile_keys = (
        from_profile("aws_access_key_id"),
        from_profile("aws_secret_access_key"),
    );
    match (explicit.is_some(), env_keys, profile_keys) {
        (false, (Some(id), Some(secret)), _) => {
            out.access_key_id = Some(id);
            out.secret_access_key = Some(secret);
            out.session_token = var("AWS_SESSION_TOKEN");
            out.source = "the environment".into();
        }
        (_, _, (Some(id), Some(secret))) => {
            out.access_key_id = Some(id);
            out.secret_access_key = Some(secret);
            out.session_token = from_profile("aws_session_token");
            out.source = format!("profile {chosen}");
        }
        (false, (Some(_), None), _) | (false, (None, Some(_)), _) => {
            return Err(Diagnostic::new(
                rule::STORE_CONFIG_INVALID,
                "only one of AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY is set",
            )
            .help("set both, or neither to use a profile or the machine's credentials"));
        }
        _ => {
            if let Some(key) = UNSUPPORTED.iter().find(|k| p.contains_key(**k)) {
                return Err(Diagnostic::new(
                    rule::STORE_CONFIG_INVALID,
                    format!(
                        "the AWS profile `{chosen}` gets its credentials through `{key}`, which basepress does not run"
                    ),
                )
                .help(format!(
                    "export the profile's credentials first: eval \"$(aws configure export-credentials --profile {chosen} --format env)\""
                )));
            }
            if named.is_some() && found.is_some() {
                return Err(Diagnostic::new(
                    rule::STORE_CONFIG_INVALID,
                    format!("the AWS profile `{chosen}` has no aws_access_key_id and aws_secret_access_key"),
                ));
            }
            out.source = "the machine (web identity, container or instance credentials)".into();
        }
    }
    out.region = var("AWS_REGION")
        .or_else(|| var("AWS_DEFAULT_REGION"))
        .or_else(|| from_profile("region"))
        .unwrap_or_else(|| "us-east-1".to_string());
    let ignore_endpoints =
        var("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if !ignore_endpoints {
        out.endpoint = var("AWS_ENDPOINT_URL_S3")
            .or_else(|| var("AWS_ENDPOINT_URL"))
            .or_else(|| from_profile("s3.endpoint_url"))
            .or_else(|| from_profile("endpoint_url"));
    }
    if let Some(endpoint) = &out.endpoint {
        out.allow_http = check_endpoint(endpoint)?;
    }
    for k in AMBIENT {
        if let Some(v) = var(k) {
            out.ambient.push((k.to_ascii_lowercase(), v));
        }
    }
    Ok(out)
}

/// Whether `endpoint` is plain HTTP, which only a loopback host may be;
/// a finding when it is not a URL, or is plain HTTP elsewhere.
pub fn check_endpoint(endpoint: &str) -> Result<bool, Diagnostic> {
    let bad = |why: String| {
        Diagnostic::new(
            rule::STORE_CONFIG_INVALID,
            format!("the endpoint `{endpoint}` {why}"),
        )
    };
    let url = url::Url::parse(endpoint).map_err(|e| bad(format!("is not a URL ({e})")))?;
    match url.scheme() {
        "https" => Ok(false),
        "http" if is_loopback(&url) => Ok(true),
        "http" => Err(bad(
            "is plain HTTP to a host that is not loopback: credentials and the site would cross the network unencrypted".into(),
        )
        .help("use https:// (plain http:// is accepted only for 127.0.0.1, ::1 or localhost)")),
        other => Err(bad(format!("has the scheme `{other}`, not https"))),
    }
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// The profiles of both files, by name, the credentials file winning.
struct Profiles {
    config: PathBuf,
    credentials: PathBuf,
    by_name: BTreeMap<String, BTreeMap<String, String>>,
}

impl Profiles {
    fn read(env: &Environment) -> Result<Profiles, Diagnostic> {
        let file = |var: &str, name: &str| {
            env.vars
                .get(var)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| env.home.as_ref().map(|h| h.join(".aws").join(name)))
                .unwrap_or_else(|| PathBuf::from(".aws").join(name))
        };
        let config = file("AWS_CONFIG_FILE", "config");
        let credentials = file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
        let mut by_name = BTreeMap::new();
        if let Some(text) = read_profile_file(&config)? {
            for (section, keys) in parse(&text) {
                let name = match section.strip_prefix("profile ") {
                    Some(n) => n.trim().to_string(),
                    None if section == "default" => section,
                    None => continue,
                };
                by_name.insert(name, keys);
            }
        }
        if let Some(text) = read_profile_file(&credentials)? {
            for (section, keys) in parse(&text) {
                by_name.entry(section).or_default().extend(keys);
            }
        }
        Ok(Profiles {
            config,
            credentials,
            by_name,
        })
    }

    fn get(&self, name: &str) -> Option<&BTreeMap<String, String>> {
        self.by_name.get(name)
    }
}

/// A profile file's text; `None` when there is none.
fn read_profile_file(path: &Path) -> Result<Option<String>, Diagnostic> {
    let cannot = |why: String| {
        Diagnostic::new(
            rule::STORE_CONFIG_INVALID,
            format!("cannot read {}: {why}", path.display()),
        )
    };
    // A dotfile manager may link it: followed, but it must be a file.
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(cannot(e.to_string())),
    };
    if !meta.is_file() {
        return Err(cannot("it is not a regular file".into()));
    }
    if meta.len() > MAX_PROFILE_FILE {
        return Err(cannot(format!(
            "it is larger than {MAX_PROFILE_FILE} bytes"
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| cannot(e.to_string()))?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// The sections of an AWS profile file (INI): `[name]` headers and
/// `key = value` lines, `#` and `;` comments. A key with no value opens
/// nested settings (`s3 =` then indented `endpoint_url = …`), kept as
/// `s3.endpoint_url`.
fn parse(text: &str) -> Vec<(String, BTreeMap<String, String>)> {
    let mut out: Vec<(String, BTreeMap<String, String>)> = Vec::new();
    let mut nested: Option<String> = None;
    for line in text.lines() {
        let indented = line.starts_with([' ', '\t']);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            out.push((name.trim().to_string(), BTreeMap::new()));
            nested = None;
            continue;
        }
        let Some((_, keys)) = out.last_mut() else {
            continue;
        };
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim().to_ascii_lowercase(), value.trim().to_string());
        match (&nested, indented) {
            (Some(parent), true) => {
                keys.insert(format!("{parent}.{key}"), value);
            }
            _ if value.is_empty() => nested = Some(key),
            _ => {
                nested = None;
                keys.insert(key, value);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)], home: Option<&Path>) -> Environment {
        Environment {
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            home: home.map(Path::to_path_buf),
        }
    }

    #[test]
    fn profile_files_are_read_like_the_aws_cli_reads_them() {
        let sections = parse(
            "# comment\n[default]\nregion = eu-west-1\n\n[profile ci]\nregion=us-east-2\ns3 =\n  endpoint_url = https://s3.local\noutput = json\n; more\n",
        );
        assert_eq!(sections.len(), 2);
        assert_eq!(sections[0].1["region"], "eu-west-1");
        assert_eq!(sections[1].0, "profile ci");
        assert_eq!(sections[1].1["s3.endpoint_url"], "https://s3.local");
        assert_eq!(sections[1].1["output"], "json");
    }

    #[test]
    fn the_environment_and_profiles_resolve_in_the_aws_order() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".aws")).unwrap();
        std::fs::write(
            home.path().join(".aws/config"),
            "[default]\nregion = eu-west-1\n[profile ci]\nregion = us-east-2\nendpoint_url = http://127.0.0.1:9000\n[profile sso]\nsso_session = corp\n",
        )
        .unwrap();
        std::fs::write(
            home.path().join(".aws/credentials"),
            "[default]\naws_access_key_id = DEFAULTID\naws_secret_access_key = d\n[ci]\naws_access_key_id = CIID\naws_secret_access_key = c\naws_session_token = t\n",
        )
        .unwrap();
        let h = Some(home.path());

        // Keys in the environment win over AWS_PROFILE, as in the CLI.
        let s = settings(
            &env(
                &[
                    ("AWS_ACCESS_KEY_ID", "ENVID"),
                    ("AWS_SECRET_ACCESS_KEY", "e"),
                    ("AWS_PROFILE", "ci"),
                ],
                h,
            ),
            None,
        )
        .unwrap();
        assert_eq!(s.access_key_id.as_deref(), Some("ENVID"));
        assert_eq!(s.region, "us-east-2");
        assert_eq!(s.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert!(s.allow_http);

        // --profile wins over the environment's keys.
        let s = settings(
            &env(
                &[
                    ("AWS_ACCESS_KEY_ID", "ENVID"),
                    ("AWS_SECRET_ACCESS_KEY", "e"),
                ],
                h,
            ),
            Some("ci"),
        )
        .unwrap();
        assert_eq!(s.access_key_id.as_deref(), Some("CIID"));
        assert_eq!(s.session_token.as_deref(), Some("t"));
        assert_eq!(s.source, "profile ci");

        // No profile named: `default`, and AWS_REGION over its region.
        let s = settings(&env(&[("AWS_REGION", "ap-south-1")], h), None).unwrap();
        assert_eq!(s.access_key_id.as_deref(), Some("DEFAULTID"));
        assert_eq!(s.region, "ap-south-1");
        assert_eq!(s.endpoint, None);

        // AWS_ENDPOINT_URL_S3 over AWS_ENDPOINT_URL over the profile's.
        let s = settings(
            &env(
                &[
                    ("AWS_PROFILE", "ci"),
                    ("AWS_ENDPOINT_URL", "https://a.example"),
                    ("AWS_ENDPOINT_URL_S3", "https://b.example"),
                ],
                h,
            ),
            None,
        )
        .unwrap();
        assert_eq!(s.endpoint.as_deref(), Some("https://b.example"));
        assert!(!s.allow_http);

        let missing = settings(&env(&[("AWS_PROFILE", "nope")], h), None).unwrap_err();
        assert_eq!(missing.rule.id, "store-config-invalid");
        assert!(missing.message.contains("`nope`"), "{}", missing.message);
        let sso = settings(&env(&[], h), Some("sso")).unwrap_err();
        assert!(sso.message.contains("sso_session"), "{}", sso.message);
        assert!(sso.remedy().contains("export-credentials --profile sso"));
        let half = settings(&env(&[("AWS_ACCESS_KEY_ID", "x")], None), None).unwrap_err();
        assert!(half.message.contains("only one"), "{}", half.message);

        // Nothing anywhere: the machine's credentials, the default region.
        let none = tempfile::tempdir().unwrap();
        let s = settings(
            &env(
                &[("AWS_ROLE_ARN", "arn:aws:iam::1:role/r")],
                Some(none.path()),
            ),
            None,
        )
        .unwrap();
        assert_eq!(s.access_key_id, None);
        assert_eq!(s.region, "us-east-1");
        assert_eq!(
            s.ambient,
            vec![(
                "aws_role_arn".to_string(),
                "arn:aws:iam::1:role/r".to_string()
            )]
        );
    }

    #[test]
    fn plain_http_is_for_loopback_only() {
        assert!(check_endpoint("http://127.0.0.1:9000").unwrap());
        assert!(check_endpoint("http://[::1]:9000").unwrap());
        assert!(check_endpoint("http://localhost:9000").unwrap());
        assert!(!check_endpoint("https://s3.example.com").unwrap());
        for bad in [
            "http://10.0.0.1:9000",
            "http://minio.internal",
            "ftp://x",
            "not a url",
        ] {
            let d = check_endpoint(bad).unwrap_err();
            assert_eq!(d.rule.id, "store-config-invalid", "{bad}");
        }
    }
}
