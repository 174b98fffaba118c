//! `basepress image inspect` on real images: OCI layouts made by the
//! fixture builder, pushed with skopeo to Debian's docker-registry (the
//! CNCF distribution server) started on a free loopback port, and
//! docker-archives written by skopeo; and registries that refuse (401),
//! lack the tag (404), fail (5xx) or never answer.

use crate::support::*;
use basepress::oci::fixture;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) fn tools() -> bool {
    have("skopeo") && have("docker-registry")
}

/// A docker-registry on a loopback port, stopped when dropped.
pub(crate) struct Registry {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Registry {
    /// Starts a registry; with `user`, it asks for that user's password
    /// (HTTP basic auth from an htpasswd file).
    pub(crate) fn start(user: Option<(&str, &str)>) -> Registry {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
            dir.path().join("data").display()
        );
        if let Some((u, p)) = user {
            let hash = bcrypt::hash(p, 5).unwrap();
            let htpasswd = dir.path().join("htpasswd");
            std::fs::write(&htpasswd, format!("{u}:{hash}\n")).unwrap();
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: basepress-test\n    path: {}\n",
                htpasswd.display()
            ));
        }
        let cfg = dir.path().join("config.yml");
        std::fs::write(&cfg, config).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker-registry starts");
        let r = Registry {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while http_status(port, "/v2/").is_none() {
            assert!(Instant::now() < deadline, "the registry did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        r
    }

    pub(crate) fn url(&self, repo_tag: &str) -> String {
        format!("registry://127.0.0.1:{}/{repo_tag}", self.port)
    }

    /// Pushes `tag` of the layout with skopeo (every platform).
    pub(crate) fn push(&self, layout: &Path, tag: &str, creds: Option<&str>) {
        let mut cmd = Command::new("skopeo");
        cmd.args([
            "copy",
            "--all",
            "--insecure-policy",
            "--dest-tls-verify=false",
        ]);
        if let Some(c) = creds {
            cmd.args(["--dest-creds", c]);
        }
        let o = cmd
            .arg(format!("oci:{}:{tag}", layout.display()))
            .arg(format!(
                "docker://127.0.0.1:{}/whystack-agent:{tag}",
                self.port
            ))
            .output()
            .unwrap();
        assert!(o.status.success(), "skopeo copy: {}", stderr(&o));
    }
}

/// The digest and JSON of the manifest (or index) a tag names in the
/// registry, as skopeo reads it (skopeo compresses plain layers when it
/// pushes, so the registry's digests differ from the layout's).
fn raw_manifest(port: u16, repo_tag: &str, creds: Option<&str>) -> (String, serde_json::Value) {
    use sha2::Digest as _;
    let mut cmd = Command::new("skopeo");
    cmd.args(["inspect", "--raw", "--tls-verify=false"]);
    if let Some(c) = creds {
        cmd.args(["--creds", c]);
    }
    let o = cmd
        .arg(format!("docker://127.0.0.1:{port}/{repo_tag}"))
        .output()
        .unwrap();
    assert!(o.status.success(), "skopeo inspect: {}", stderr(&o));
    let digest = format!("sha256:{:x}", sha2::Sha256::digest(&o.stdout));
    (digest, serde_json::from_slice(&o.stdout).unwrap())
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The HTTP status of GET `path`, or `None` when nothing answers.
fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).ok()?;
    let line = String::from_utf8_lossy(&buf[..n]);
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The agent's layout (1.28.0, 1.29.0, multi-platform 1.30.0).
fn layout() -> (tempfile::TempDir, fixture::AgentLayout) {
    let dir = tempfile::tempdir().unwrap();
    let built = fixture::agent_layout(dir.path()).unwrap();
    (dir, built)
}

/// `basepress image inspect` with `args`, without the user's own cache,
/// credentials or token.
fn inspect(args: &[&str]) -> Output {
    basepress()
        .args(["image", "inspect"])
        .args(args)
        .env_remove("BASEPRESS_REGISTRY_TOKEN")
        .env("DOCKER_CONFIG", "/nonexistent")
        .env("XDG_CACHE_HOME", "/nonexistent")
        .output()
        .unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            stderr(o)
        )
    })
}

/// The one finding of a failed `--format json` run.
fn finding(o: &Output) -> (String, String) {
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let v = json(o);
    let f = &v["findings"][0];
    (
        f["rule"].as_str().unwrap().to_string(),
        f["message"].as_str().unwrap().to_string(),
    )
}

fn commands(platform: &serde_json::Value) -> Vec<String> {
    platform["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_layout_is_inspected_as_text_json_and_data() {
    let (dir, built) = layout();
    let src = format!("oci:{}:1.29.0", dir.path().display());
    let o = inspect(&[&src, "--no-cache"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(&built.v1_29.manifest.digest), "{text}");
    assert!(
        text.contains("node (uid 1000, gid 1000, home /home/node)"),
        "{text}"
    );
    assert!(text.contains("whystack-health"), "{text}");
    assert!(
        text.contains("entrypoint  apps/runner/docker-entrypoint.sh"),
        "{text}"
    );
    assert!(
        text.contains("org.opencontainers.image.version=1.29.0"),
        "{text}"
    );

    let o = inspect(&[&src, "--no-cache", "--format", "json"]);
    let v = json(&o);
    assert_eq!(v["digest"], built.v1_29.manifest.digest.as_str());
    assert_eq!(v["platforms"][0]["resolved_user"]["uid"], 1000);
    assert!(v["platforms"][0]["exposed_ports"]
        .as_array()
        .unwrap()
        .is_empty());

    let out = tempfile::tempdir().unwrap();
    let data = out.path().join("image-releases.yaml");
    let data_s = data.to_string_lossy().to_string();
    let o = inspect(&[
        &src,
        "--no-cache",
        "--write-data",
        &data_s,
        "--name",
        "whystack-agent",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written = std::fs::read_to_string(&data).unwrap();
    assert!(written.contains("name: whystack-agent"), "{written}");
    assert!(written.contains("- name: whystack-health"), "{written}");
    // Never over an existing file.
    let o = inspect(&[
        &src,
        "--no-cache",
        "--write-data",
        &data_s,
        "--format",
        "json",
    ]);
    assert_eq!(finding(&o).0, "output-unsafe");

    // The tag of the version asked for, when the source has none; a
    // missing one is named with the tags there are.
    let bare = format!("oci:{}", dir.path().display());
    let o = inspect(&[&bare, "--tag", "1.27.0", "--no-cache", "--format", "json"]);
    let (rule, msg) = finding(&o);
    assert_eq!(rule, "image-unavailable");
    assert!(msg.contains("1.28.0, 1.29.0, 1.30.0"), "{msg}");
    let o = inspect(&["images/agent", "--format", "json"]);
    assert_eq!(finding(&o).0, "image-source-invalid");
    let o = inspect(&["images/agent"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("error[image-source-invalid]"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_second_inspection_comes_from_the_cache() {
    let (dir, _) = layout();
    let cache = tempfile::tempdir().unwrap();
    let cache_s = cache.path().to_string_lossy().to_string();
    let src = format!("oci:{}:1.30.0", dir.path().display());
    let args = [src.as_str(), "--cache", &cache_s, "--format", "json"];
    let first = json(&inspect(&args));
    assert_eq!(first["platforms"][0]["cached"], false);
    let start = Instant::now();
    let second = json(&inspect(&args));
    let took = start.elapsed();
    assert_eq!(second["platforms"][0]["cached"], true);
    assert_eq!(second["platforms"][1]["cached"], true);
    assert_eq!(
        commands(&first["platforms"][1]),
        commands(&second["platforms"][1])
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn a_registry_serves_what_skopeo_pushed() {
    if !tools() {
        return;
    }
    let (dir, _) = layout();
    let reg = Registry::start(None);
    for tag in ["1.28.0", "1.29.0", "1.30.0"] {
        reg.push(dir.path(), tag, None);
    }
    let cache = tempfile::tempdir().unwrap();
    let cache_s = cache.path().to_string_lossy().to_string();

    let o = inspect(&[
        &reg.url("whystack-agent:1.29.0"),
        "--format",
        "json",
        "--no-cache",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    let (digest, _) = raw_manifest(reg.port, "whystack-agent:1.29.0", None);
    assert_eq!(v["digest"], digest.as_str());
    assert_eq!(v["platforms"][0]["manifest_digest"], digest.as_str());
    assert!(commands(&v["platforms"][0]).contains(&"whystack-health".to_string()));
    assert_eq!(v["platforms"][0]["resolved_user"]["home"], "/home/node");

    let o = inspect(&[
        &reg.url("whystack-agent:1.28.0"),
        "--format",
        "json",
        "--no-cache",
    ]);
    let v = json(&o);
    assert!(!commands(&v["platforms"][0]).contains(&"whystack-health".to_string()));

    // The multi-platform index: every platform is read, and arm64 lacks
    // the health binary.
    let src = reg.url("whystack-agent");
    let args = [
        src.as_str(),
        "--tag",
        "1.30.0",
        "--format",
        "json",
        "--cache",
        &cache_s,
    ];
    let o = inspect(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    let (digest, index) = raw_manifest(reg.port, "whystack-agent:1.30.0", None);
    assert_eq!(v["digest"], digest.as_str());
    let ps = v["platforms"].as_array().unwrap();
    assert_eq!(ps.len(), 2);
    assert_eq!(ps[1]["platform"], "linux/arm64/v8");
    assert_eq!(ps[1]["manifest_digest"], index["manifests"][1]["digest"]);
    assert!(commands(&ps[0]).contains(&"whystack-health".to_string()));
    assert!(!commands(&ps[1]).contains(&"whystack-health".to_string()));
    // Cached by digest: the second look reads no layer.
    let start = Instant::now();
    let v = json(&inspect(&args));
    assert!(v["platforms"][0]["cached"].as_bool().unwrap());
    assert!(start.elapsed() < Duration::from_secs(2));

    // 404: a tag that was never pushed, a repository that does not exist.
    let o = inspect(&[
        &reg.url("whystack-agent:1.27.0"),
        "--format",
        "json",
        "--no-cache",
    ]);
    let (rule, msg) = finding(&o);
    assert_eq!(rule, "image-unavailable");
    assert!(msg.contains("404") && msg.contains("`1.27.0`"), "{msg}");
    let o = inspect(&[
        &reg.url("nothing-here:1.0.0"),
        "--format",
        "json",
        "--no-cache",
    ]);
    assert!(finding(&o).1.contains("404"));
}

#[test]
fn a_registry_refuses_missing_and_wrong_credentials() {
    if !tools() {
        return;
    }
    let (dir, _) = layout();
    let reg = Registry::start(Some(("ci", "right-password")));
    reg.push(dir.path(), "1.29.0", Some("ci:right-password"));
    let src = reg.url("whystack-agent:1.29.0");
    let creds = tempfile::tempdir().unwrap();
    let config = |user: &str, pass: &str| -> PathBuf {
        use base64::Engine as _;
        let auth = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
        let p = creds.path().join(format!("{user}-{pass}.json"));
        std::fs::write(
            &p,
            format!(
                r#"{{"auths":{{"127.0.0.1:{}":{{"auth":"{auth}"}}}}}}"#,
                reg.port
            ),
        )
        .unwrap();
        p
    };
    // No credential.
    let o = inspect(&[&src, "--format", "json", "--no-cache"]);
    let (rule, msg) = finding(&o);
    assert_eq!(rule, "image-unavailable");
    assert!(msg.contains("401"), "{msg}");
    // A wrong one.
    let wrong = config("ci", "wrong").to_string_lossy().to_string();
    let o = inspect(&[
        &src,
        "--format",
        "json",
        "--no-cache",
        "--registry-config",
        &wrong,
    ]);
    let (rule, msg) = finding(&o);
    assert_eq!(rule, "image-unavailable");
    assert!(msg.contains("401"), "{msg}");
    // The right one, from a Docker config.json.
    let right = config("ci", "right-password").to_string_lossy().to_string();
    let o = inspect(&[
        &src,
        "--format",
        "json",
        "--no-cache",
        "--registry-config",
        &right,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (digest, _) = raw_manifest(reg.port, "whystack-agent:1.29.0", Some("ci:right-password"));
    assert_eq!(json(&o)["digest"], digest.as_str());
}

#[test]
fn a_failing_registry_is_an_error_not_a_hang() {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let port = server.server_addr().to_ip().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let t = std::thread::spawn(move || {
        while !s.load(Ordering::Relaxed) {
            if let Ok(Some(req)) = server.recv_timeout(Duration::from_millis(100)) {
                let _ = req.respond(
                    tiny_http::Response::from_string("the registry is down for maintenance")
                        .with_status_code(503),
                );
            }
        }
    });
    let src = format!("registry://127.0.0.1:{port}/whystack-agent:1.29.0");
    let o = inspect(&[&src, "--format", "json", "--no-cache", "--timeout", "5"]);
    stop.store(true, Ordering::Relaxed);
    t.join().unwrap();
    let (rule, msg) = finding(&o);
    assert_eq!(rule, "image-unavailable");
    assert!(msg.contains("HTTP 503"), "{msg}");
}

#[test]
fn a_registry_that_never_answers_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    // Accepts every connection and says nothing.
    let t = std::thread::spawn(move || {
        let mut held = Vec::new();
        while !s.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((c, _)) => held.push(c),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    });
    let src = format!("registry://127.0.0.1:{port}/whystack-agent:1.29.0");
    let start = Instant::now();
    let o = inspect(&[&src, "--format", "json", "--no-cache", "--timeout", "2"]);
    let took = start.elapsed();
    stop.store(true, Ordering::Relaxed);
    t.join().unwrap();
    let (rule, msg) = finding(&o);
    assert_eq!(rule, "image-unavailable");
    assert!(
        msg.contains("no answer") || msg.contains("timed out"),
        "{msg}"
    );
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

#[test]
fn a_docker_archive_written_by_skopeo_is_read() {
    if !have("skopeo") {
        return;
    }
    // A docker-archive holds no zstd layer: the agent's runtime layer is
    // gzip here.
    let dir = tempfile::tempdir().unwrap();
    let mut spec = fixture::agent_image("1.29.0", true, "amd64");
    spec.layers[1].compression = fixture::Compression::Gzip;
    let mut w = fixture::LayoutWriter::create(dir.path()).unwrap();
    let built = w.image(&spec).unwrap();
    w.tag("1.29.0", &built.manifest);
    w.finish().unwrap();
    let out = tempfile::tempdir().unwrap();
    let archive = out.path().join("agent.tar");
    let o = Command::new("skopeo")
        .args(["copy", "--insecure-policy"])
        .arg(format!("oci:{}:1.29.0", dir.path().display()))
        .arg(format!(
            "docker-archive:{}:whystack-agent:1.29.0",
            archive.display()
        ))
        .output()
        .unwrap();
    assert!(o.status.success(), "skopeo copy: {}", stderr(&o));
    let src = format!("docker-archive:{}", archive.display());
    let o = inspect(&[&src, "--tag", "1.29.0", "--format", "json", "--no-cache"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert!(v["digest"].is_null());
    let p = &v["platforms"][0];
    assert_eq!(p["platform"], "linux/amd64");
    assert_eq!(p["user"], "node");
    assert_eq!(p["resolved_user"]["uid"], 1000);
    assert!(commands(p).contains(&"whystack-health".to_string()));
    assert_eq!(
        p["entrypoint_path"],
        "/app/apps/runner/docker-entrypoint.sh"
    );
    assert_eq!(p["config_digest"], built.config.digest.as_str());
    // By name and tag as well; a tag it lacks is named.
    let named = format!("docker-archive:{}:whystack-agent:1.29.0", archive.display());
    assert_eq!(inspect(&[&named, "--no-cache"]).status.code(), Some(0));
    let o = inspect(&[&src, "--tag", "1.28.0", "--format", "json", "--no-cache"]);
    let (rule, msg) = finding(&o);
    assert_eq!(rule, "image-unavailable");
    assert!(msg.contains("whystack-agent:1.29.0"), "{msg}");
    // A damaged archive is corrupt, not a panic.
    let mut bytes = std::fs::read(&archive).unwrap();
    let n = bytes.len();
    bytes.truncate(n / 2);
    std::fs::write(&archive, &bytes).unwrap();
    let o = inspect(&[&src, "--tag", "1.29.0", "--format", "json", "--no-cache"]);
    let (rule, _) = finding(&o);
    assert!(rule == "image-corrupt", "{rule}");
}
