//! `basepress deploy` against a real S3 server: moto_server on a loopback
//! port, started by each test and stopped after. The bucket is made
//! publicly readable, as a bucket behind a CDN is, so that the installers'
//! loops run against what the bucket serves.

use crate::download::run_loop;
use crate::signing::{run_block, verifying_block};
use crate::support::*;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BUCKET: &str = "docs";

fn tools() -> bool {
    have("moto_server") && have("curl") && have("sha256sum")
}

/// moto's S3 server on a loopback port, with one public-read bucket;
/// killed when dropped.
struct Moto {
    child: Child,
    endpoint: String,
}

impl Moto {
    fn start() -> Moto {
        let port = free_port();
        let child = Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto_server starts");
        let moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "moto_server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        let policy = format!(
            r#"{{"Version":"2012-10-17","Statement":[{{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::{BUCKET}/*"}}]}}"#
        );
        for (url, body) in [
            (format!("{}/{BUCKET}", moto.endpoint), String::new()),
            (format!("{}/{BUCKET}?policy", moto.endpoint), policy),
        ] {
            let o = moto.signed(
                &["-X", "PUT", "-H", "Content-Type: application/json"],
                &url,
                &body,
            );
            assert!(o.status.success(), "{url}: {}", stderr(&o));
        }
        moto
    }

    /// A request signed as the S3 API wants it (moto takes any keys).
    fn signed(&self, args: &[&str], url: &str, body: &str) -> Output {
        let mut cmd = Command::new("curl");
        cmd.args([
            "-fsS",
            "--aws-sigv4",
            "aws:amz:us-east-1:s3",
            "--user",
            "test:test",
        ])
        .args(args);
        if !body.is_empty() {
            cmd.args(["--data-binary", body]);
        }
        cmd.arg(url).output().unwrap()
    }

    /// The public URL of a prefix of the bucket: a site's root.
    fn site_url(&self, prefix: &str) -> String {
        format!("{}/{BUCKET}/{prefix}", self.endpoint)
    }

    /// Every object below `prefix`, with its ETag, as the S3 API lists
    /// them.
    fn objects(&self, prefix: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut token = String::new();
        loop {
            let mut url = format!("{}/{BUCKET}?list-type=2&prefix={prefix}/", self.endpoint);
            if !token.is_empty() {
                url.push_str(&format!("&continuation-token={token}"));
            }
            let o = self.signed(&[], &url, "");
            assert!(o.status.success(), "{}", stderr(&o));
            let xml = String::from_utf8(o.stdout).unwrap();
            for item in xml.split("<Contents>").skip(1) {
                let field = |name: &str| {
                    item.split(&format!("<{name}>"))
                        .nth(1)
                        .and_then(|r| r.split(&format!("</{name}>")).next())
                        .unwrap_or_default()
                        .to_string()
                };
                out.push((field("Key"), field("ETag")));
            }
            match xml.split("<NextContinuationToken>").nth(1) {
                Some(rest) => token = rest.split('<').next().unwrap().to_string(),
                None => break,
            }
        }
        out.sort();
        out
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `basepress deploy` of `site` to the bucket's `prefix` at `endpoint`,
/// with keys in the environment and nothing else of the machine's AWS
/// settings: the exit code and the JSON report.
fn deploy(endpoint: &str, prefix: &str, site: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let o = deploy_command(endpoint, prefix, site, extra)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "deploy printed invalid JSON ({e}): {}{}",
            String::from_utf8_lossy(&o.stdout),
            stderr(&o)
        )
    });
    (o.status.code().unwrap_or(-1), v)
}

fn deploy_command(endpoint: &str, prefix: &str, site: &Path, extra: &[&str]) -> Command {
    let home = std::env::temp_dir().join("basepress-deploy-test-no-home");
    let mut cmd = basepress();
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("AWS_") {
            cmd.env_remove(k);
        }
    }
    cmd.args(["deploy", &format!("s3://{BUCKET}/{prefix}"), "--site"])
        .arg(site)
        .args(["--format", "json", "--timeout", "10"])
        .args(extra)
        .env("HOME", home)
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ENDPOINT_URL", endpoint);
    // A proxy the deploy must not use: it would carry the plain HTTP to
    // the loopback endpoint through another host (here: nowhere).
    for proxy in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        cmd.env(proxy, "http://127.0.0.1:9");
    }
    cmd.env_remove("NO_PROXY").env_remove("no_proxy");
    cmd
}

fn rules(report: &serde_json::Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

fn count(report: &serde_json::Value, key: &str) -> u64 {
    report["deploy"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("no deploy.{key}: {report:#}"))
}

fn planned(report: &serde_json::Value) -> Vec<(String, String)> {
    report["deploy"]["plan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["action"].as_str().unwrap().to_string(),
                a["path"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The response headers of a GET, lowercased.
fn headers(url: &str) -> String {
    let o = Command::new("curl")
        .args(["-fsS", "-D", "-", "-o", "/dev/null", url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{url}: {}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).to_ascii_lowercase()
}

/// What `basepress verify` says of the site the bucket serves at `prefix`.
fn verify_served(moto: &Moto, prefix: &str) -> (i32, String) {
    let o = basepress()
        .args(["verify", &moto.site_url(prefix), "--format", "json"])
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn a_site_is_deployed_then_only_its_changes() {
    if !tools() {
        return;
    }
    let moto = Moto::start();
    let (_keep, site) = built_repo_site();
    let files = tree(&site).len() as u64 - 1; // without the build's marker

    // A dry run plans everything and writes nothing.
    let (code, r) = deploy(&moto.endpoint, "site", &site, &["--dry-run"]);
    assert_eq!((code, rules(&r)), (0, vec![]), "{r:#}");
    assert_eq!(planned(&r).len() as u64, files, "{r:#}");
    assert!(moto.objects("site").is_empty());

    let (code, r) = deploy(&moto.endpoint, "site", &site, &[]);
    assert_eq!((code, rules(&r)), (0, vec![]), "{r:#}");
    assert_eq!(count(&r, "uploaded"), files);
    assert_eq!(r["deploy"]["complete"], true);
    assert_eq!(moto.objects("site").len() as u64, files);

    // Indexes go up after what they name: every version's files, then
    // its SHA256SUMS and signature, then files.txt, then versions.txt
    // and versions.json, then the pages.
    let order: Vec<String> = planned(&r).into_iter().map(|(_, p)| p).collect();
    let at = |p: &str| {
        order
            .iter()
            .position(|o| o == p)
            .unwrap_or_else(|| panic!("{p}"))
    };
    let first_page = order.iter().position(|p| p.ends_with(".html")).unwrap();
    for v in ["v1.29.0", "v1.30.0"] {
        let base = format!("kubernetes/{v}/base/");
        let sums = at(&format!("{base}SHA256SUMS"));
        let sig = at(&format!("{base}SHA256SUMS.sig"));
        let index = at(&format!("{base}files.txt"));
        for (i, p) in order.iter().enumerate() {
            if p.starts_with(&base)
                && !p.ends_with("SHA256SUMS")
                && !p.ends_with(".sig")
                && !p.ends_with("files.txt")
            {
                assert!(i < sums, "{p} after {base}SHA256SUMS");
            }
        }
        assert!(sums < sig && sig < index, "{order:?}");
        assert!(index < at("kubernetes/versions.txt"), "{order:?}");
    }
    assert!(at("kubernetes/versions.txt") < first_page);
    assert!(at("kubernetes/versions.json") < first_page);
    // What points at pages from outside comes last.
    let outside = ["index.html", "404.html", "sitemap.xml", "robots.txt"];
    for p in outside.iter().filter(|p| order.iter().any(|o| o == *p)) {
        for (i, q) in order.iter().enumerate() {
            if q.ends_with(".html") && !outside.contains(&q.as_str()) {
                assert!(i < at(p), "{q} after {p}: {order:?}");
            }
        }
    }

    // Served with their type, and cached by what they are.
    let url = moto.site_url("site");
    let h = headers(&format!("{url}/kubernetes/v1.30.0/base/files.txt"));
    assert!(h.contains("content-type: text/plain; charset=utf-8"), "{h}");
    assert!(
        h.contains("cache-control: public, max-age=31536000, immutable"),
        "{h}"
    );
    assert!(h.contains("x-amz-meta-sha256: "), "{h}");
    let h = headers(&format!("{url}/en/index.html"));
    assert!(h.contains("content-type: text/html; charset=utf-8"), "{h}");
    assert!(h.contains("cache-control: public, max-age=60\r\n"), "{h}");

    // What the bucket serves is what installers verify: the installation
    // page's verifying block (signature included), the plain loop and
    // `sha256sum -c`, and basepress verify.
    if have("ssh-keygen") {
        let work = tempfile::tempdir().unwrap();
        let o = run_block(&verifying_block(&site, "en"), &url, work.path());
        assert!(
            o.status.success(),
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            stderr(&o)
        );
        verify_downloaded_base(work.path(), "1.30.0", false);
    }
    let work = tempfile::tempdir().unwrap();
    let o = run_loop(&url, work.path(), "1.29.0");
    assert!(o.status.success(), "{}", stderr(&o));
    verify_downloaded_base(work.path(), "1.29.0", false);
    let (code, json) = verify_served(&moto, "site");
    assert_eq!(code, 0, "{json}");

    // Deployed again unchanged: nothing goes up.
    let before = moto.objects("site");
    let (code, r) = deploy(&moto.endpoint, "site", &site, &[]);
    assert_eq!((code, rules(&r)), (0, vec![]), "{r:#}");
    assert_eq!(
        (
            count(&r, "uploaded"),
            count(&r, "unchanged"),
            count(&r, "deleted")
        ),
        (0, files, 0)
    );
    assert_eq!(moto.objects("site"), before);

    // A changed page and a page gone: one upload, one deletion.
    let changed = copy_site(&site);
    let page = changed.path().join("en/index.html");
    let mut html = std::fs::read_to_string(&page).unwrap();
    html.push_str("<!-- changed -->\n");
    std::fs::write(&page, html).unwrap();
    let gone = tree(changed.path())
        .into_keys()
        .find(|p| p.starts_with("pt/") && p.ends_with("/index.html") && p.matches('/').count() == 2)
        .unwrap();
    std::fs::remove_file(changed.path().join(&gone)).unwrap();

    // More deletions than allowed stop it before anything is written.
    let (code, r) = deploy(
        &moto.endpoint,
        "site",
        changed.path(),
        &["--max-deletes", "0"],
    );
    assert_eq!(
        (code, rules(&r)),
        (1, vec!["deploy-too-many-deletes".to_string()]),
        "{r:#}"
    );
    assert_eq!(moto.objects("site"), before);

    let (code, r) = deploy(&moto.endpoint, "site", changed.path(), &[]);
    assert_eq!((code, rules(&r)), (0, vec![]), "{r:#}");
    assert_eq!(
        planned(&r),
        [
            ("upload".to_string(), "en/index.html".to_string()),
            ("delete".to_string(), gone.clone()),
        ]
    );
    assert_eq!((count(&r, "uploaded"), count(&r, "deleted")), (1, 1));
    let o = Command::new("curl")
        .args(["-fsS", &format!("{url}/en/index.html")])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).ends_with("<!-- changed -->\n"));
    assert!(!moto
        .objects("site")
        .iter()
        .any(|(k, _)| k == &format!("site/{gone}")));
}

/// A small project built twice, its v1.1.0 base with other bytes in the
/// second build: two sites that disagree about one version.
fn two_sites() -> (Project, std::path::PathBuf, std::path::PathBuf) {
    let p = Project::new();
    let a = p.path("out-a");
    let b = p.path("out-b");
    let build = |out: &Path| build_ok(p.root(), out);
    build(&a);
    p.write("bases/v1.1.0/config.env", "MODE=b\n");
    build(&b);
    (p, a, b)
}

#[test]
fn a_published_version_is_never_replaced() {
    if !tools() {
        return;
    }
    let moto = Moto::start();
    let (_p, a, b) = two_sites();
    let (code, r) = deploy(&moto.endpoint, "p", &a, &[]);
    assert_eq!((code, rules(&r)), (0, vec![]), "{r:#}");
    let before = moto.objects("p");

    let (code, r) = deploy(&moto.endpoint, "p", &b, &[]);
    assert_eq!(code, 1, "{r:#}");
    let messages: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "released-version-changed")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    // Each object that differs is named, and nothing is written.
    for name in ["config.env", "SHA256SUMS"] {
        assert!(
            messages
                .iter()
                .any(|m| m.contains(&format!("s3://{BUCKET}/p/kubernetes/v1.1.0/base/{name}`"))),
            "{name}: {r:#}"
        );
    }
    assert_eq!(r["deploy"]["uploaded"], 0);
    assert_eq!(moto.objects("p"), before);
    let (code, json) = verify_served(&moto, "p");
    assert_eq!(code, 0, "{json}");
}

/// A version deployed unsigned, released again once `signing` is set
/// (which signs it): the deploy adds its signature and replaces its two
/// indexes, and nothing else of it.
#[test]
fn a_version_deployed_unsigned_takes_its_signature() {
    if !tools() || !have("ssh-keygen") {
        return;
    }
    let moto = Moto::start();
    let p = Project::new();
    let run = |args: &[&str], key: Option<&Path>| {
        let mut c = basepress();
        c.args(args)
            .args(["--root", &p.root().to_string_lossy()])
            .env_remove("BASEPRESS_SIGNING_KEY");
        if let Some(k) = key {
            c.arg("--signing-key").arg(k);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    };
    run(&["release", "v1.1.0"], None);
    let unsigned = p.path("out-a");
    build_ok(p.root(), &unsigned);
    let (code, r) = deploy(&moto.endpoint, "s", &unsigned, &[]);
    assert_eq!((code, rules(&r)), (0, vec![]), "{r:#}");

    let keys = tempfile::tempdir().unwrap();
    let key = crate::signing::ed25519(keys.path(), "release");
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    p.write(
        "site.yaml",
        &format!(
            "{SITE_YAML}signing:\n  identity: r@example.com\n  namespace: agent\n  public_key: {}\n",
            public.trim()
        ),
    );
    run(&["release", "v1.1.0"], Some(&key));
    let signed = p.path("out-b");
    build_ok(p.root(), &signed);
    let (code, r) = deploy(&moto.endpoint, "s", &signed, &[]);
    assert_eq!((code, rules(&r)), (0, vec![]), "{r:#}");
    let keys_after: Vec<String> = moto.objects("s").into_iter().map(|(k, _)| k).collect();
    assert!(
        keys_after.contains(&"s/kubernetes/v1.1.0/base/SHA256SUMS.sig".to_string()),
        "{keys_after:?}"
    );
    let (code, json) = verify_served(&moto, "s");
    assert_eq!(code, 0, "{json}");
}

#[test]
fn racing_deploys_never_mix_two_versions() {
    if !tools() {
        return;
    }
    let moto = Moto::start();
    let (_p, a, b) = two_sites();
    // The same site twice at once: both succeed.
    let run_two = |x: &Path, y: &Path, prefix: &str| {
        let children: Vec<Child> = [x, y]
            .iter()
            .map(|s| {
                deploy_command(&moto.endpoint, prefix, s, &[])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        children
            .into_iter()
            .map(|c| {
                let o = c.wait_with_output().unwrap();
                let v: serde_json::Value = serde_json::from_slice(&o.stdout)
                    .unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
                (o.status.code().unwrap_or(-1), v)
            })
            .collect::<Vec<_>>()
    };
    for (code, r) in run_two(&a, &a, "same") {
        assert_eq!((code, rules(&r)), (0, vec![]), "{r:#}");
    }
    let (code, json) = verify_served(&moto, "same");
    assert_eq!(code, 0, "{json}");

    // Two sites that disagree about v1.1.0: at most one publishes it, the
    // other stops, and what the bucket serves verifies.
    let results = run_two(&a, &b, "race");
    let winners = results.iter().filter(|(code, _)| *code == 0).count();
    assert!(winners <= 1, "{results:#?}");
    for (code, r) in results.iter().filter(|(code, _)| *code != 0) {
        assert_eq!(*code, 1, "{r:#}");
        for rule in rules(r) {
            assert!(
                rule == "deploy-conflict" || rule == "released-version-changed",
                "{r:#}"
            );
        }
    }
    let url = moto.site_url("race");
    let work = tempfile::tempdir().unwrap();
    let o = run_loop(&url, work.path(), "1.1.0");
    if o.status.success() {
        // Published: by one of them, whole.
        verify_downloaded_base(work.path(), "1.1.0", false);
        let config = std::fs::read(work.path().join("base/config.env")).unwrap();
        assert!(config == b"MODE=a\n" || config == b"MODE=b\n");
        assert_eq!(winners, 1, "{results:#?}");
    } else {
        // Not published at all: no index names files that are not there.
        assert_eq!(winners, 0, "{results:#?}");
    }
}

/// A TCP proxy to `upstream` that forwards until it has seen `cut` PUT
/// requests, then drops every connection and each new one.
struct Proxy {
    endpoint: String,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    fn start(upstream: &str, cut: usize) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let upstream = upstream.trim_start_matches("http://").to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let puts = Arc::new(AtomicUsize::new(0));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let s = stop.clone();
        listener.set_nonblocking(true).unwrap();
        std::thread::spawn(move || loop {
            if s.load(Ordering::SeqCst) {
                return;
            }
            let client = match listener.accept() {
                Ok((c, _)) => c,
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                }
            };
            client.set_nonblocking(false).unwrap();
            if puts.load(Ordering::SeqCst) >= cut {
                let _ = client.shutdown(Shutdown::Both);
                continue;
            }
            let server = TcpStream::connect(&upstream).unwrap();
            open.lock().unwrap().push(client.try_clone().unwrap());
            open.lock().unwrap().push(server.try_clone().unwrap());
            // Client to server, counting PUTs; server to client as is.
            let (mut from, mut to) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (p, o) = (puts.clone(), open.clone());
            std::thread::spawn(move || {
                let mut buf = [0u8; 1 << 16];
                while let Ok(n) = from.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let seen = buf[..n].windows(5).filter(|w| w == b"PUT /").count();
                    if p.fetch_add(seen, Ordering::SeqCst) + seen > cut {
                        for c in o.lock().unwrap().iter() {
                            let _ = c.shutdown(Shutdown::Both);
                        }
                        break;
                    }
                    if to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = to.shutdown(Shutdown::Write);
            });
            let (mut from, mut to) = (server, client);
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut from, &mut to);
                let _ = to.shutdown(Shutdown::Write);
            });
        });
        Proxy { endpoint, stop }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

#[test]
fn a_deploy_cut_midway_leaves_a_consistent_site_and_the_next_completes_it() {
    if !tools() {
        return;
    }
    let moto = Moto::start();
    let p = Project::new();
    let old = p.path("out-old");
    let new = p.path("out-new");
    let build = |out: &Path| build_ok(p.root(), out);
    build(&old);
    // The new site adds a version and changes every page's version list.
    for f in ["kustomization.yaml", "deployment.yaml", "config.env"] {
        let text = std::fs::read_to_string(p.path(&format!("bases/v1.1.0/{f}"))).unwrap();
        p.write(&format!("bases/v1.0.0/{f}"), &text);
    }
    build(&new);
    let new_files = tree(&new).len() as u64 - 1;

    // Cut after the first PUT (a version's file), and later, among the
    // indexes and pages.
    for cut in [1, 5, 9] {
        let prefix = format!("cut{cut}");
        let (code, r) = deploy(&moto.endpoint, &prefix, &old, &[]);
        assert_eq!((code, rules(&r)), (0, vec![]), "{r:#}");
        let before = moto.objects(&prefix);

        let proxy = Proxy::start(&moto.endpoint, cut);
        let (code, r) = deploy(&proxy.endpoint, &prefix, &new, &["--retries", "1"]);
        drop(proxy);
        let found = rules(&r);
        assert_eq!(code, 2, "cut {cut}: {r:#}");
        assert!(
            !found.is_empty() && found.iter().all(|id| id == "store-unreachable"),
            "cut {cut}: {r:#}"
        );
        assert_eq!(r["deploy"]["complete"], false);
        let after = moto.objects(&prefix);
        assert_ne!(after, before, "cut {cut}: nothing was written");

        // What the bucket serves still verifies: every index names files
        // that are there.
        let (code, json) = verify_served(&moto, &prefix);
        assert_eq!(code, 0, "cut {cut}: {json}");

        // The next deploy completes it.
        let (code, r) = deploy(&moto.endpoint, &prefix, &new, &[]);
        assert_eq!((code, rules(&r)), (0, vec![]), "cut {cut}: {r:#}");
        assert_eq!(
            count(&r, "uploaded") + count(&r, "unchanged"),
            new_files,
            "cut {cut}: {r:#}"
        );
        let (code, json) = verify_served(&moto, &prefix);
        assert_eq!(code, 0, "cut {cut}: {json}");
        let work = tempfile::tempdir().unwrap();
        let o = run_loop(&moto.site_url(&prefix), work.path(), "1.0.0");
        assert!(o.status.success(), "cut {cut}: {}", stderr(&o));
        verify_downloaded_base(work.path(), "1.0.0", false);
    }
}
