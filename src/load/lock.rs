//! Reading `bases/published.lock` into a [`Lock`].

use crate::diagnostics::{rule, Diagnostic, Location};
use crate::model::lock::{Lock, FILE};
use semver::Version;
use std::path::Path;

/// Reads the lock of the project at `root`; an absent file is an empty
/// lock.
pub fn load(root: &Path) -> Result<Lock, Diagnostic> {
    match crate::input::read_optional(root, &root.join(FILE))? {
        None => Ok(Lock::default()),
        Some(bytes) => parse(&crate::input::utf8(
            bytes,
            Path::new(FILE),
            rule::LOCK_INVALID,
        )?),
    }
}

/// Parses the text of a lock.
pub fn parse(text: &str) -> Result<Lock, Diagnostic> {
    let mut lock = Lock::default();
    // The line each version's file is on.
    let mut lines = std::collections::HashMap::new();
    for (i, line) in crate::input::text_lines(text).enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| {
            Diagnostic::new(rule::LOCK_INVALID, format!("{why}: `{line}`"))
                .at(Location::line(FILE, i + 1))
        };
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [version, file, sha] = fields[..] else {
            return Err(bad("a line must hold a version, a file name and a SHA-256"));
        };
        let version = version
            .strip_prefix('v')
            .and_then(|v| Version::parse(v).ok())
            .ok_or_else(|| bad("not a version like v1.30.0"))?;
        if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad("not a SHA-256 in hex"));
        }
        let first = lines
            .entry((version.clone(), file.to_string()))
            .or_insert(i + 1);
        if *first != i + 1 {
            return Err(bad(&format!(
                "v{version} {file} is listed already, at line {first}: a merge or a hand edit \
                 left two lines for one file"
            ))
            .help("keep the line of the released file (its SHA-256 is in the release's SHA256SUMS), restoring the lock from version control"));
        }
        lock.versions
            .entry(version)
            .or_default()
            .insert(file.to_string(), sha.to_ascii_lowercase());
    }
    Ok(lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_render_round_trip_and_errors() {
        let sha = "a".repeat(64);
        let text = format!("# c\nv1.30.0 b.yaml {sha}\nv1.29.0 a.yaml {sha}\n");
        let lock = parse(&text).unwrap();
        assert_eq!(lock.versions.len(), 2);
        let rendered = lock.render();
        assert!(rendered.ends_with(&format!("v1.29.0 a.yaml {sha}\nv1.30.0 b.yaml {sha}\n")));
        assert_eq!(parse(&rendered).unwrap(), lock);

        // Any line break an editor writes, and a byte-order mark: a lock
        // whose comment line ends in a lone CR loses no version.
        for (cut, bom) in [("\r", ""), ("\r\n", "\u{feff}"), ("\n", "\u{feff}")] {
            let text = format!("{bom}# c{cut}v1.30.0 b.yaml {sha}{cut}v1.29.0 a.yaml {sha}{cut}");
            assert_eq!(parse(&text).unwrap(), lock, "{cut:?}");
        }

        let e = parse("v1.29.0 a.yaml nothex\n").unwrap_err();
        assert_eq!(e.rule.id, "lock-invalid");
        assert_eq!(e.location.unwrap().line, Some(1));
        assert!(parse("1.29.0 a.yaml x y\n").is_err());

        // Two lines for one released file, as a merge leaves them: which
        // one is true cannot be told, whether the hashes differ or not.
        let other = "b".repeat(64);
        for second in [&sha, &other] {
            let text =
                format!("v1.29.0 a.yaml {sha}\nv1.29.1 a.yaml {sha}\nv1.29.0 a.yaml {second}\n");
            let e = parse(&text).unwrap_err();
            assert_eq!(e.rule.id, "lock-invalid");
            assert_eq!(e.location.unwrap().line, Some(3));
            assert!(e.message.contains("at line 1"), "{}", e.message);
        }
    }
}
