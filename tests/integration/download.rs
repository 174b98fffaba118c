//! The download contract, end to end: the installers' curl loop against the
//! built site served on loopback, then `sha256sum -c` and `kubectl kustomize`.

use crate::support::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A static file server on 127.0.0.1 for the duration of a test.
pub struct Server {
    /// `http://127.0.0.1:N`.
    pub url: String,
    server: std::sync::Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Serves the files below `root` until dropped.
    pub fn start(root: PathBuf) -> Server {
        let server = std::sync::Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let s = server.clone();
        let thread = std::thread::spawn(move || {
            for req in s.incoming_requests() {
                let path = req.url().split('?').next().unwrap_or("/").to_string();
                let file = if path.split('/').any(|seg| seg == "..") {
                    None
                } else {
                    let mut p = root.join(path.trim_start_matches('/'));
                    if path.ends_with('/') {
                        p.push("index.html");
                    }
                    std::fs::read(&p).ok()
                };
                let _ = match file {
                    Some(bytes) => req.respond(tiny_http::Response::from_data(bytes)),
                    None => req.respond(tiny_http::Response::empty(404)),
                };
            }
        });
        Server {
            url: format!("http://127.0.0.1:{port}"),
            server,
            thread: Some(thread),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The loop from DOMAIN.md, verbatim but for the host.
pub const LOOP: &str = r#"BASE="$SITE/kubernetes/v${VERSION#v}/base"
mkdir -p base
FILES=$(curl -fsSL "$BASE/files.txt") &&
  for f in $FILES; do curl -fsSL -o "base/$f" "$BASE/$f"; done"#;

fn download(server: &Server, dir: &Path, version: &str) -> std::process::Output {
    run_loop(&server.url, dir, version)
}

/// Runs [`LOOP`] in `dir` against the site at `site` (`http://127.0.0.1:N`).
pub fn run_loop(site: &str, dir: &Path, version: &str) -> std::process::Output {
    Command::new("bash")
        .arg("-c")
        .arg(LOOP)
        .current_dir(dir)
        .env("SITE", site)
        .env("VERSION", version)
        .output()
        .expect("bash runs")
}

#[test]
fn installers_loop_fetches_a_base_that_verifies_and_builds() {
    if !have("curl") || !have("sha256sum") {
        return;
    }
    let with_kubectl = have("kubectl");
    let (_keep, site) = built_repo_site();
    let server = Server::start(site.clone());

    for version in ["1.29.0", "v1.29.0", "1.30.0"] {
        let work = tempfile::tempdir().unwrap();
        let o = download(&server, work.path(), version);
        assert!(o.status.success(), "{version}: {}", stderr(&o));
        let base = work.path().join("base");
        let listed = std::fs::read_to_string(site.join(format!(
            "kubernetes/v{}/base/files.txt",
            version.trim_start_matches('v')
        )))
        .unwrap();
        for name in listed.lines() {
            assert!(
                base.join(name).is_file(),
                "{version}: {name} not downloaded"
            );
        }

        verify_downloaded_base(work.path(), version, with_kubectl);
    }
}

#[test]
fn an_unpublished_version_fails_at_the_first_curl_and_writes_nothing() {
    if !have("curl") {
        return;
    }
    let (_keep, site) = built_repo_site();
    let server = Server::start(site);
    for version in ["1.28.0", "v9.9.9"] {
        let work = tempfile::tempdir().unwrap();
        let o = download(&server, work.path(), version);
        assert!(!o.status.success(), "{version}: the loop succeeded");
        assert!(stderr(&o).contains("404"), "{}", stderr(&o));
        let left: Vec<_> = std::fs::read_dir(work.path().join("base"))
            .unwrap()
            .collect();
        assert!(left.is_empty(), "{version}: files were written: {left:?}");
    }
}

#[test]
fn every_published_base_builds_with_kubectl_like_its_source() {
    if !have("kubectl") {
        return;
    }
    let (_keep, site) = built_repo_site();
    let versions = std::fs::read_to_string(site.join("kubernetes/versions.txt")).unwrap();
    assert!(!versions.is_empty());
    for v in versions.lines() {
        let published = Command::new("kubectl")
            .arg("kustomize")
            .arg(site.join(format!("kubernetes/{v}/base")))
            .output()
            .unwrap();
        assert!(published.status.success(), "{v}: {}", stderr(&published));
        let source = Command::new("kubectl")
            .arg("kustomize")
            .arg(repo().join(format!("bases/{v}")))
            .output()
            .unwrap();
        assert!(source.status.success(), "{v}: {}", stderr(&source));
        assert_eq!(
            String::from_utf8_lossy(&published.stdout),
            String::from_utf8_lossy(&source.stdout),
            "{v}: the published base builds differently from its source"
        );
    }
}
