//! The site folder to deploy: every file a build wrote, with its size and
//! SHA-256, read without following a link and refused when it is not a
//! regular file.

use crate::diagnostics::{rule, Diagnostic};
use crate::model::site::sha256_hex;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest file uploaded: one PUT (S3 takes up to 5 GiB in one; a
/// built site's largest files, search indexes, are a few MiB).
pub const MAX_FILE: u64 = 1 << 30;
/// At most this many files are deployed.
pub const MAX_FILES: usize = 1_000_000;
/// How deep folders may nest.
const MAX_DEPTH: usize = 64;

/// One file of the site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalFile {
    /// The site path, without a leading `/` (`en/index.html`).
    pub path: String,
    pub size: u64,
    pub sha256: String,
}

/// Every file of the built site at `dir`, sorted by path; the build's
/// marker (`.basepress`) and its cache record (`.basepress-cache.json`)
/// are left out.
pub fn scan(dir: &Path) -> Result<Vec<LocalFile>, Vec<Diagnostic>> {
    let invalid = |why: String| {
        vec![Diagnostic::new(
            rule::DEPLOY_SITE_INVALID,
            format!("{}: {why}", dir.display()),
        )]
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(invalid("it is not a folder".into())),
        Err(e) => return Err(invalid(format!("cannot read it ({e})"))),
    }
    if !dir.join("kubernetes/versions.txt").is_file() {
        return Err(invalid(
            "it has no kubernetes/versions.txt, so it is not a site that `basepress build` wrote"
                .into(),
        ));
    }
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let walk = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .max_depth(MAX_DEPTH)
        .sort_by_file_name();
    for entry in walk {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                problems.push(site_problem(dir, e.path().unwrap_or(dir), &e.to_string()));
                continue;
            }
        };
        let rel = match entry.path().strip_prefix(dir) {
            Ok(r) if !r.as_os_str().is_empty() => r.to_path_buf(),
            _ => continue,
        };
        if rel == Path::new(crate::write::MARKER)
            || rel == Path::new(crate::model::cache::RECORD_PATH)
        {
            continue;
        }
        let kind = entry.file_type();
        if kind.is_dir() {
            if entry.depth() == MAX_DEPTH {
                problems.push(site_problem(dir, entry.path(), "folders nest too deep"));
            }
            continue;
        }
        if kind.is_symlink() {
            problems.push(site_problem(
                dir,
                entry.path(),
                "it is a symbolic link, which a build never writes",
            ));
            continue;
        }
        if !kind.is_file() {
            problems.push(site_problem(dir, entry.path(), "it is not a regular file"));
            continue;
        }
        let Some(path) = site_path(&rel) else {
            problems.push(site_problem(
                dir,
                entry.path(),
                "its name is not UTF-8, or not a plain name, so it cannot be an object key",
            ));
            continue;
        };
        match hash_file(entry.path()) {
            Ok((size, sha256)) => files.push(LocalFile { path, size, sha256 }),
            Err(why) => problems.push(site_problem(dir, entry.path(), &why)),
        }
        if files.len() > MAX_FILES {
            problems.push(site_problem(
                dir,
                dir,
                &format!("it has more than {MAX_FILES} files"),
            ));
            break;
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(files)
}

fn site_problem(dir: &Path, path: &Path, why: &str) -> Diagnostic {
    let rel = path.strip_prefix(dir).unwrap_or(path);
    Diagnostic::new(
        rule::DEPLOY_SITE_INVALID,
        format!("{}: {why}", dir.join(rel).display()),
    )
    .in_file(rel)
}

/// The site path of a file below the site folder: its components, UTF-8
/// and without a backslash or control character, joined by `/`.
fn site_path(rel: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for c in rel.components() {
        let std::path::Component::Normal(name) = c else {
            return None;
        };
        let name = name.to_str()?;
        if name.chars().any(|c| c.is_control() || c == '\\') {
            return None;
        }
        parts.push(name);
    }
    Some(parts.join("/"))
}

/// Opens a file of the site without following a link, as a regular file
/// of at most [`MAX_FILE`] bytes.
fn open(path: &Path) -> Result<(std::fs::File, u64), String> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(|e| format!("cannot open it ({e})"))?;
    let file = std::fs::File::from(fd);
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read it ({e})"))?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    if meta.len() > MAX_FILE {
        return Err(format!(
            "it is larger than {MAX_FILE} bytes, more than one upload takes"
        ));
    }
    Ok((file, meta.len()))
}

/// The size and SHA-256 of a file, read in pieces.
fn hash_file(path: &Path) -> Result<(u64, String), String> {
    let (file, _) = open(path)?;
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    let mut reader = file.take(MAX_FILE + 1);
    loop {
        let n = reader
            .read(&mut buf)
            .map_err(|e| format!("cannot read it ({e})"))?;
        if n == 0 {
            break;
        }
        size += n as u64;
        hasher.update(&buf[..n]);
    }
    if size > MAX_FILE {
        return Err(format!("it is larger than {MAX_FILE} bytes"));
    }
    Ok((size, hex(&hasher.finalize())))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The bytes of `file` to upload, read again: a finding when they are not
/// the ones planned (the folder changed during the deploy).
pub fn read(dir: &Path, file: &LocalFile) -> Result<Vec<u8>, Diagnostic> {
    let path: PathBuf = dir.join(&file.path);
    let problem = |why: &str| site_problem(dir, &path, why);
    let (handle, len) = open(&path).map_err(|why| problem(&why))?;
    let mut bytes = Vec::with_capacity(len as usize);
    handle
        .take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| problem(&format!("cannot read it ({e})")))?;
    if sha256_hex(&bytes) != file.sha256 {
        return Err(problem(
            "it changed while it was being deployed (was a build running?)",
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, text) in [
            ("kubernetes/versions.txt", "v1.0.0\n"),
            ("en/index.html", "<p>hi</p>"),
            (".basepress", "marker"),
            (".basepress-cache.json", "{}"),
            (".well-known/security.txt", "x"),
        ] {
            let p = dir.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_site_is_its_files_with_their_sha256() {
        let dir = site();
        let files = scan(dir.path()).unwrap();
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                ".well-known/security.txt",
                "en/index.html",
                "kubernetes/versions.txt"
            ]
        );
        assert_eq!(files[1].size, 9);
        assert_eq!(files[1].sha256, sha256_hex(b"<p>hi</p>"));
        assert_eq!(read(dir.path(), &files[1]).unwrap(), b"<p>hi</p>");
        std::fs::write(dir.path().join("en/index.html"), "<p>changed</p>").unwrap();
        let d = read(dir.path(), &files[1]).unwrap_err();
        assert!(d.message.contains("changed while"), "{}", d.message);
    }

    #[cfg(unix)]
    #[test]
    fn links_and_special_files_are_refused() {
        let dir = site();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("en/passwd")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.path().join("en/fifo"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let problems = scan(dir.path()).unwrap_err();
        let files: Vec<String> = problems
            .iter()
            .map(|d| d.location.as_ref().unwrap().file.display().to_string())
            .collect();
        assert_eq!(files, ["en/fifo", "en/passwd"]);
        assert!(problems.iter().all(|d| d.rule.id == "deploy-site-invalid"));
    }

    #[test]
    fn a_folder_that_is_not_a_built_site_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = scan(dir.path()).unwrap_err();
        assert!(
            d[0].message.contains("no kubernetes/versions.txt"),
            "{}",
            d[0].message
        );
        let d = scan(&dir.path().join("missing")).unwrap_err();
        assert!(d[0].message.contains("cannot read it"), "{}", d[0].message);
    }
}
