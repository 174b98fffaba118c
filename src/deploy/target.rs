//! Where a deploy goes: `s3://BUCKET/PREFIX` (or `gs://`, `az://`), read
//! and checked before anything connects.

use crate::diagnostics::{rule, Diagnostic};

/// The kind of object store a target names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Amazon S3 and S3-compatible servers (`s3://`).
    S3,
    /// Google Cloud Storage (`gs://`).
    Gcs,
    /// Azure Blob Storage (`az://`, the container as the bucket).
    Azure,
}

/// A parsed deploy target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub scheme: Scheme,
    pub bucket: String,
    /// The folder inside the bucket, without a leading or trailing `/`;
    /// empty for the bucket's top.
    pub prefix: String,
}

impl Target {
    /// Reads `s3://BUCKET[/PREFIX]`.
    pub fn parse(text: &str) -> Result<Target, Diagnostic> {
        let bad = |why: String| {
            Diagnostic::new(
                rule::DEPLOY_TARGET_INVALID,
                format!("`{text}` is not a deploy target: {why}"),
            )
        };
        let (scheme, rest) = match text.split_once("://") {
            Some(("s3", rest)) => (Scheme::S3, rest),
            Some(("gs", rest)) => (Scheme::Gcs, rest),
            Some(("az", rest)) => (Scheme::Azure, rest),
            Some((other, _)) => {
                return Err(bad(format!(
                    "the scheme `{other}` is not one of s3://, gs:// or az://"
                )))
            }
            None => return Err(bad("it has no scheme; write s3://BUCKET/PREFIX".into())),
        };
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if let Err(why) = check_bucket(scheme, bucket) {
            return Err(bad(why));
        }
        let prefix = prefix.trim_end_matches('/');
        if !prefix.is_empty() {
            for segment in prefix.split('/') {
                if let Err(why) = check_segment(segment) {
                    return Err(bad(format!("the prefix segment `{segment}` {why}")));
                }
            }
        }
        Ok(Target {
            scheme,
            bucket: bucket.to_string(),
            prefix: prefix.to_string(),
        })
    }

    /// The object key of a site path (`en/index.html`).
    pub fn key(&self, site_path: &str) -> String {
        match self.prefix.is_empty() {
            true => site_path.to_string(),
            false => format!("{}/{site_path}", self.prefix),
        }
    }

    /// The site path of an object key, when it lies below the prefix.
    pub fn site_path<'a>(&self, key: &'a str) -> Option<&'a str> {
        if self.prefix.is_empty() {
            return Some(key);
        }
        key.strip_prefix(self.prefix.as_str())?.strip_prefix('/')
    }

    /// How findings and the summary name an object: `s3://b/p/en/index.html`.
    pub fn url(&self, site_path: &str) -> String {
        let scheme = match self.scheme {
            Scheme::S3 => "s3",
            Scheme::Gcs => "gs",
            Scheme::Azure => "az",
        };
        format!("{scheme}://{}/{}", self.bucket, self.key(site_path))
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let url = self.url("");
        f.write_str(url.trim_end_matches('/'))
    }
}

/// Bucket names as the services accept them: S3's and GCS's 3 to 63
/// lowercase letters, digits, `-` and `.` (starting and ending with a
/// letter or digit); Azure containers the same without `.`.
fn check_bucket(scheme: Scheme, bucket: &str) -> Result<(), String> {
    if bucket.is_empty() {
        return Err("it names no bucket".into());
    }
    let allowed = |c: char| {
        c.is_ascii_lowercase()
            || c.is_ascii_digit()
            || c == '-'
            || (c == '.' && scheme != Scheme::Azure)
    };
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if !(3..=63).contains(&bucket.len())
        || !bucket.chars().all(allowed)
        || !edge(bucket.chars().next())
        || !edge(bucket.chars().next_back())
        || bucket.contains("..")
    {
        return Err(format!(
            "`{bucket}` is not a bucket name (3 to 63 lowercase letters, digits, `-`{}, starting and ending with a letter or digit)",
            if scheme == Scheme::Azure { "" } else { " and `.`" }
        ));
    }
    Ok(())
}

/// A prefix segment is a plain name: not empty, not `.` or `..`, without
/// control characters or a backslash.
fn check_segment(segment: &str) -> Result<(), &'static str> {
    if segment.is_empty() {
        return Err("is empty (a doubled or leading `/`)");
    }
    if segment == "." || segment == ".." {
        return Err("climbs out of the folder");
    }
    if segment.chars().any(|c| c.is_control() || c == '\\') {
        return Err("has a control character or a backslash");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_a_bucket_and_a_prefix() {
        let t = Target::parse("s3://docs-bucket/site/").unwrap();
        assert_eq!(t.scheme, Scheme::S3);
        assert_eq!(
            (t.bucket.as_str(), t.prefix.as_str()),
            ("docs-bucket", "site")
        );
        assert_eq!(t.key("en/index.html"), "site/en/index.html");
        assert_eq!(t.site_path("site/en/index.html"), Some("en/index.html"));
        assert_eq!(t.site_path("siteX/en/index.html"), None);
        assert_eq!(t.url("a.css"), "s3://docs-bucket/site/a.css");
        assert_eq!(t.to_string(), "s3://docs-bucket/site");
        let top = Target::parse("gs://docs.example.com").unwrap();
        assert_eq!(top.prefix, "");
        assert_eq!(top.key("a"), "a");
        assert_eq!(top.site_path("a/b"), Some("a/b"));
        assert_eq!(Target::parse("az://docs/a/b").unwrap().prefix, "a/b");
    }

    #[test]
    fn bad_targets_are_refused_with_the_reason() {
        for (text, why) in [
            ("docs-bucket/site", "no scheme"),
            ("ftp://docs/site", "scheme `ftp`"),
            ("s3:///site", "no bucket"),
            ("s3://Docs/site", "not a bucket name"),
            ("s3://ab", "not a bucket name"),
            ("s3://-docs", "not a bucket name"),
            ("az://docs.site", "not a bucket name"),
            ("s3://docs//site", "is empty"),
            ("s3://docs/a/../b", "climbs out"),
            ("s3://docs/a\nb", "control character"),
        ] {
            let d = Target::parse(text).unwrap_err();
            assert_eq!(d.rule.id, "deploy-target-invalid");
            assert!(d.message.contains(why), "{text}: {}", d.message);
        }
    }
}
