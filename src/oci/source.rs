//! Where an image is, written the way skopeo names its transports:
//! `oci:DIR[:TAG]`, `docker-archive:FILE[:TAG]` (or `FILE:NAME:TAG`),
//! `registry://HOST[:PORT]/REPO[:TAG]` and `docker://HOST/REPO[:TAG]`
//! (either with `@sha256:…` in place of the tag).

use super::Error;
use std::fmt;
use std::path::PathBuf;

/// A parsed image source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceRef {
    /// An OCI image layout folder (`oci-layout`, `index.json`, `blobs/`).
    Layout { dir: PathBuf, tag: Option<String> },
    /// A `docker save` tarball (or skopeo's `docker-archive:`).
    /// `reference` is a tag or `name:tag`.
    Archive {
        file: PathBuf,
        reference: Option<String>,
    },
    /// A registry speaking the OCI distribution API.
    Registry {
        /// `host` or `host:port`.
        registry: String,
        repository: String,
        tag: Option<String>,
        /// `sha256:…`, when the image is named by digest.
        digest: Option<String>,
    },
}

/// Parses a source string.
pub fn parse_source(s: &str) -> Result<SourceRef, Error> {
    let help =
        "write `oci:DIR[:TAG]`, `docker-archive:FILE[:TAG]` or `registry://HOST[:PORT]/REPO[:TAG]`";
    if let Some(rest) = s.strip_prefix("oci:") {
        let (dir, tag) = split_once_opt(rest);
        if dir.is_empty() {
            return Err(Error::source(format!("`{s}` names no folder")).with_help(help));
        }
        let tag = tag.map(|t| check_tag(t, s)).transpose()?;
        return Ok(SourceRef::Layout {
            dir: PathBuf::from(dir),
            tag,
        });
    }
    if let Some(rest) = s.strip_prefix("docker-archive:") {
        let (file, reference) = split_once_opt(rest);
        if file.is_empty() {
            return Err(Error::source(format!("`{s}` names no file")).with_help(help));
        }
        if let Some(r) = reference {
            let tag = r.rsplit_once(':').map_or(r, |(_, t)| t);
            check_tag(tag, s)?;
        }
        return Ok(SourceRef::Archive {
            file: PathBuf::from(file),
            reference: reference.map(str::to_string),
        });
    }
    let (rest, docker) = if let Some(r) = s.strip_prefix("registry://") {
        (r, false)
    } else if let Some(r) = s.strip_prefix("docker://") {
        (r, true)
    } else {
        return Err(Error::source(format!(
            "`{s}` does not start with a transport basepress reads (oci:, docker-archive:, registry://, docker://)"
        ))
        .with_help(help));
    };
    let (name, digest) = match rest.split_once('@') {
        Some((n, d)) => {
            super::spec::validate_digest(d)
                .map_err(|e| Error::source(format!("`{s}`: {}", e.message)))?;
            (n, Some(d.to_string()))
        }
        None => (rest, None),
    };
    let (name, tag) = match name.rsplit_once(':') {
        Some((n, t)) if !t.contains('/') => (n, Some(check_tag(t, s)?)),
        _ => (name, None),
    };
    let (first, path) = match name.split_once('/') {
        Some((h, p)) => (h, Some(p)),
        None => (name, None),
    };
    let looks_like_host = first.contains('.') || first.contains(':') || first == "localhost";
    let (registry, repository) = match (looks_like_host, path) {
        (true, Some(p)) => (first.to_string(), p.to_string()),
        // docker://NAME and docker://USER/NAME are Docker Hub's, as for
        // skopeo; registry:// always names its host.
        _ if docker => {
            let repo = if path.is_some() {
                name.to_string()
            } else {
                format!("library/{name}")
            };
            ("docker.io".to_string(), repo)
        }
        _ => {
            return Err(Error::source(format!(
                "`{s}` names no registry host: write registry://HOST[:PORT]/REPO[:TAG]"
            )))
        }
    };
    let repo_ok = !repository.is_empty()
        && repository.split('/').all(|c| {
            !c.is_empty()
                && c.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
                })
        });
    if !repo_ok {
        return Err(Error::source(format!(
            "`{s}`: `{repository}` is not a repository name (lowercase letters, digits, `.`, `_`, `-`, in `/`-separated parts)"
        )));
    }
    Ok(SourceRef::Registry {
        registry,
        repository,
        tag,
        digest,
    })
}

fn split_once_opt(s: &str) -> (&str, Option<&str>) {
    match s.split_once(':') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    }
}

/// A tag as the distribution spec allows it: `[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`.
fn check_tag(t: &str, source: &str) -> Result<String, Error> {
    let ok = !t.is_empty()
        && t.len() <= 128
        && t.bytes().enumerate().all(|(i, b)| {
            b.is_ascii_alphanumeric() || b == b'_' || (i > 0 && (b == b'.' || b == b'-'))
        });
    if ok {
        Ok(t.to_string())
    } else {
        Err(Error::source(format!(
            "`{source}`: `{t}` is not a valid tag (letters, digits, `_`, `.`, `-`, at most 128)"
        )))
    }
}

impl SourceRef {
    /// The tag the source names, if any.
    pub fn tag(&self) -> Option<&str> {
        match self {
            SourceRef::Layout { tag, .. } => tag.as_deref(),
            SourceRef::Archive { reference, .. } => reference
                .as_deref()
                .map(|r| r.rsplit_once(':').map_or(r, |(_, t)| t)),
            SourceRef::Registry { tag, .. } => tag.as_deref(),
        }
    }

    /// The image name the source suggests (the last part of a repository,
    /// a folder or file name), for a data file's `name`.
    pub fn name_hint(&self) -> String {
        let stem = |p: &std::path::Path| {
            p.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        match self {
            SourceRef::Layout { dir, .. } => stem(dir),
            SourceRef::Archive { file, reference } => match reference
                .as_deref()
                .and_then(|r| r.rsplit_once(':').map(|(n, _)| n))
            {
                Some(n) => n.rsplit('/').next().unwrap_or(n).to_string(),
                None => stem(file),
            },
            SourceRef::Registry { repository, .. } => repository
                .rsplit('/')
                .next()
                .unwrap_or(repository)
                .to_string(),
        }
    }

    /// The source without its tag (`oci:DIR`, `registry://HOST/REPO`).
    pub fn without_tag(&self) -> String {
        match self {
            SourceRef::Layout { dir, .. } => format!("oci:{}", dir.display()),
            SourceRef::Archive { file, .. } => format!("docker-archive:{}", file.display()),
            SourceRef::Registry {
                registry,
                repository,
                ..
            } => format!("registry://{registry}/{repository}"),
        }
    }
}

impl fmt::Display for SourceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.without_tag())?;
        match self {
            SourceRef::Archive {
                reference: Some(r), ..
            } => write!(f, ":{r}"),
            SourceRef::Registry { tag, digest, .. } => {
                if let Some(t) = tag {
                    write!(f, ":{t}")?;
                }
                if let Some(d) = digest {
                    write!(f, "@{d}")?;
                }
                Ok(())
            }
            _ => match self.tag() {
                Some(t) => write!(f, ":{t}"),
                None => Ok(()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse_like_skopeo_transports() {
        assert_eq!(
            parse_source("oci:images/agent:1.29.0").unwrap(),
            SourceRef::Layout {
                dir: "images/agent".into(),
                tag: Some("1.29.0".into())
            }
        );
        assert_eq!(
            parse_source("oci:/tmp/x").unwrap(),
            SourceRef::Layout {
                dir: "/tmp/x".into(),
                tag: None
            }
        );
        let a = parse_source("docker-archive:a.tar:whystack-agent:1.29.0").unwrap();
        assert_eq!(a.tag(), Some("1.29.0"));
        assert_eq!(a.name_hint(), "whystack-agent");
        assert_eq!(
            parse_source("docker-archive:a.tar:1.2").unwrap().tag(),
            Some("1.2")
        );
        let r = parse_source("registry://127.0.0.1:5000/team/whystack-agent:1.29.0").unwrap();
        assert_eq!(
            r,
            SourceRef::Registry {
                registry: "127.0.0.1:5000".into(),
                repository: "team/whystack-agent".into(),
                tag: Some("1.29.0".into()),
                digest: None
            }
        );
        assert_eq!(
            r.to_string(),
            "registry://127.0.0.1:5000/team/whystack-agent:1.29.0"
        );
        assert_eq!(r.name_hint(), "whystack-agent");
        let d = parse_source("docker://localhost:5000/agent").unwrap();
        assert!(matches!(d, SourceRef::Registry { ref tag, .. } if tag.is_none()));
        let hub = parse_source("docker://alpine:3").unwrap();
        assert!(
            matches!(hub, SourceRef::Registry { ref registry, ref repository, .. }
            if registry == "docker.io" && repository == "library/alpine")
        );
        let dg = format!("registry://r.example.com/a@sha256:{}", "a".repeat(64));
        assert!(matches!(
            parse_source(&dg).unwrap(),
            SourceRef::Registry {
                digest: Some(_),
                ..
            }
        ));
    }

    #[test]
    fn bad_sources_are_refused_with_the_rule() {
        for s in [
            "images/agent",
            "oci:",
            "oci:dir:bad tag",
            "oci:dir:-x",
            "registry://agent:1.0",
            "registry://host.example.com/Upper:1",
            "registry://host.example.com/a@sha256:12",
            "docker-archive:",
            "http://x/y",
        ] {
            let e = parse_source(s).unwrap_err();
            assert_eq!(e.rule.id, "image-source-invalid", "{s}: {e}");
        }
    }
}
