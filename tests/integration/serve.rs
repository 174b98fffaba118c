//! `basepress serve`: the real binary serving a temporary copy of a project
//! on loopback. The download contract, HTTP semantics, path safety, live
//! reload (with its latency printed), graceful shutdown and a bounded load
//! test.

use crate::download::run_loop;
use crate::support::*;
use basepress::engine::{
    self,
    session::{Body, Output, Session},
};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `basepress serve`, killed when dropped.
struct Server {
    child: Child,
    /// What it printed: `http://127.0.0.1:N/` (with the site's base path).
    printed: String,
    /// `http://127.0.0.1:N`.
    origin: String,
    /// `127.0.0.1:N`.
    addr: String,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    /// `basepress serve` on `root`, once its first build has ended (it
    /// answers before: see [`Server::start_building`]).
    fn start(root: &Path) -> Server {
        Server::start_building(root).first_build_ended()
    }

    /// `basepress serve` on `root`, as soon as it prints its URL, while its
    /// first build may still run.
    fn start_building(root: &Path) -> Server {
        Server::spawn(basepress().args(["serve", "--root", &root.to_string_lossy(), "--port", "0"]))
    }

    /// `basepress serve` as a writer runs it: in the project's folder,
    /// with the default root (`.`).
    fn start_in(dir: &Path) -> Server {
        Server::spawn(basepress().current_dir(dir).args(["serve", "--port", "0"]))
            .first_build_ended()
    }

    /// Waits until the first build has ended, passed or failed (an edit
    /// made before that may be in it already, and reload nothing).
    fn first_build_ended(self) -> Server {
        let deadline = Instant::now() + Duration::from_secs(180);
        while Instant::now() < deadline {
            let said = self.stderr();
            if said.contains("built ") || said.contains("the build failed") {
                return self;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the first build did not end:\n{}", self.stderr());
    }

    fn spawn(command: &mut std::process::Command) -> Server {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("basepress serve starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        let err = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let line = match rx.recv_timeout(Duration::from_secs(180)) {
            Ok(l) => l,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "basepress serve printed no URL; stderr:\n{}",
                    stderr.lock().unwrap()
                );
            }
        };
        let printed = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_string();
        let addr = printed["http://".len()..]
            .split('/')
            .next()
            .unwrap()
            .to_string();
        Server {
            child,
            origin: format!("http://{addr}"),
            printed,
            addr,
            stderr,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Whether the server prints `needle` on stderr within a few seconds
    /// (what it prints is read by another thread).
    fn printed_soon(&self, needle: &str) -> bool {
        self.printed_within(needle, Duration::from_secs(10))
    }

    /// Whether stderr says `needle` within `wait`: for a step whose time
    /// grows with the project (a first build of thousands of pages in a
    /// debug binary on a loaded CI machine).
    fn printed_within(&self, needle: &str, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if self.stderr().contains(needle) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    fn is_running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response, read whole.
struct Reply {
    status: u16,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

fn reply(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>, url: &str) -> Reply {
    let mut r = r.unwrap_or_else(|e| panic!("{url}: {e}"));
    let headers = r
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                v.to_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let body = r
        .body_mut()
        .with_config()
        .limit(64 << 20)
        .read_to_vec()
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    Reply {
        status: r.status().as_u16(),
        headers,
        body,
    }
}

fn get(url: &str) -> Reply {
    reply(agent().get(url).call(), url)
}

fn get_with(url: &str, header: (&str, &str)) -> Reply {
    reply(agent().get(url).header(header.0, header.1).call(), url)
}

/// Sends `target` as the request target of a raw HTTP/1.1 request, as no
/// client library would (they normalize paths); returns the status code
/// and everything the server sent.
fn raw(addr: &str, target: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = b"GET ".to_vec();
    req.extend_from_slice(target);
    req.extend_from_slice(b" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    s.write_all(&req).expect("send");
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "no status for {:?}: {text:?}",
                String::from_utf8_lossy(target)
            )
        });
    (status, text)
}

/// A client of the live-reload event stream.
struct Events {
    reader: BufReader<TcpStream>,
}

impl Events {
    fn connect(addr: &str) -> Events {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.write_all(
            b"GET /__basepress/events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n",
        )
        .unwrap();
        let mut reader = BufReader::new(s);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(line.contains(" 200 "), "{line}");
        let mut headers = String::new();
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            headers.push_str(&line.to_ascii_lowercase());
        }
        assert!(
            headers.contains("content-type: text/event-stream"),
            "{headers}"
        );
        Events { reader }
    }

    /// The next event's name and data.
    fn next(&mut self) -> (String, String) {
        self.next_within(Duration::from_secs(120))
            .expect("an event in time")
    }

    /// The next event, or `None` when none comes within `wait` or the
    /// stream ends.
    fn next_within(&mut self, wait: Duration) -> Option<(String, String)> {
        // One deadline for the whole wait: keep-alive comments arrive more
        // often than a long wait, and must not restart it.
        let deadline = Instant::now() + wait;
        let mut event = None;
        let mut line = String::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            self.reader.get_ref().set_read_timeout(Some(left)).unwrap();
            line.clear();
            match self.reader.read_line(&mut line) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return None
                }
                Err(e) => panic!("event stream: {e}"),
            }
            // Chunk sizes and keep-alive comments fall through.
            let l = line.trim_end();
            if let Some(e) = l.strip_prefix("event:") {
                event = Some(e.trim().to_string());
            } else if let Some(d) = l.strip_prefix("data:") {
                if let Some(e) = event.take() {
                    return Some((e, d.trim().to_string()));
                }
            }
        }
    }
}

/// Saves `text` to `path` the way editors do: written beside it under a
/// hidden name, then renamed over it, so the watcher never sees half a file.
fn save(path: &Path, text: &str) {
    let name = path.file_name().unwrap().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Saves `text` to `page` and waits for the server's reload event.
fn save_and_await_reload(server: &Server, events: &mut Events, page: &Path, text: &str) {
    save(page, text);
    let event = events.next_within(Duration::from_secs(30));
    assert_eq!(
        event.map(|e| e.0).as_deref(),
        Some("reload"),
        "{}",
        server.stderr()
    );
}

fn count_pages(root: &Path) -> usize {
    walkdir::WalkDir::new(root.join("content"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .count()
}

#[test]
fn the_download_loop_works_against_basepress_serve() {
    if !have("curl") || !have("sha256sum") {
        return;
    }
    let with_kubectl = have("kubectl");
    let project = copy_repo();
    let server = Server::start(project.path());

    let versions = get(&server.url("/kubernetes/versions.txt"));
    assert_eq!(versions.status, 200);
    let versions = versions.text();
    assert!(versions.lines().count() >= 2, "{versions}");
    for folder in versions.lines() {
        for version in [folder, folder.trim_start_matches('v')] {
            let work = tempfile::tempdir().unwrap();
            let o = run_loop(&server.origin, work.path(), version);
            assert!(o.status.success(), "{version}: {}", stderr(&o));
            let base = work.path().join("base");
            let listed = get(&server.url(&format!("/kubernetes/{folder}/base/files.txt"))).text();
            for name in listed.lines() {
                let served = get(&server.url(&format!("/kubernetes/{folder}/base/{name}")));
                let downloaded = std::fs::read(base.join(name))
                    .unwrap_or_else(|e| panic!("{version}: {name} not downloaded: {e}"));
                assert_eq!(downloaded, served.body, "{version}: {name}");
            }
            verify_downloaded_base(work.path(), version, with_kubectl);
        }
    }

    for version in ["1.28.0", "v9.9.9", "v1.30", "1.30.0/../../v1.29.0"] {
        let work = tempfile::tempdir().unwrap();
        let o = run_loop(&server.origin, work.path(), version);
        assert!(!o.status.success(), "{version}: the loop succeeded");
        let err = stderr(&o);
        assert!(
            err.contains("404") || err.contains("400"),
            "{version}: {err}"
        );
        let left: Vec<_> = std::fs::read_dir(work.path().join("base"))
            .unwrap()
            .collect();
        assert!(left.is_empty(), "{version}: files were written: {left:?}");
    }
    assert!(
        !project.path().join("site").exists(),
        "serve must not write the project's site/"
    );
}

#[test]
fn responses_carry_types_validators_and_the_right_status() {
    let project = copy_repo();
    let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1\" height=\"1\"/>\n";
    std::fs::create_dir_all(project.path().join("static/img")).unwrap();
    std::fs::write(project.path().join("static/img/logo.svg"), svg).unwrap();
    let server = Server::start(project.path());

    for (path, ty) in [
        ("/es/", "text/html; charset=utf-8"),
        ("/es/installation/", "text/html; charset=utf-8"),
        ("/index.html", "text/html; charset=utf-8"),
        ("/assets/style.css", "text/css; charset=utf-8"),
        ("/img/logo.svg", "image/svg+xml"),
        ("/kubernetes/versions.json", "application/json"),
        ("/kubernetes/versions.txt", "text/plain; charset=utf-8"),
        (
            "/kubernetes/v1.30.0/base/files.txt",
            "text/plain; charset=utf-8",
        ),
        (
            "/kubernetes/v1.30.0/base/SHA256SUMS",
            "text/plain; charset=utf-8",
        ),
        (
            "/kubernetes/v1.30.0/base/config.env",
            "text/plain; charset=utf-8",
        ),
        (
            "/kubernetes/v1.30.0/base/statefulset.yaml",
            "text/plain; charset=utf-8",
        ),
        (
            "/__basepress/reload.js",
            "application/javascript; charset=utf-8",
        ),
    ] {
        let r = get(&server.url(path));
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("content-type"), ty, "{path}");
        assert_eq!(r.header("cache-control"), "no-cache", "{path}");
        assert_eq!(r.header("x-content-type-options"), "nosniff", "{path}");
    }
    assert_eq!(get(&server.url("/img/logo.svg")).text(), svg);

    // Served pages reload themselves; the published build never does.
    let page = get(&server.url("/es/installation/"));
    let html = page.text();
    assert_eq!(
        html.matches("<script src=\"/__basepress/reload.js\"></script></body>")
            .count(),
        1
    );
    let out = tempfile::tempdir().unwrap();
    build_ok(project.path(), &out.path().join("site"));
    for (rel, bytes) in tree(&out.path().join("site")) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains("__basepress"),
            "{rel} carries the reload script"
        );
    }
    let built =
        std::fs::read_to_string(out.path().join("site/es/installation/index.html")).unwrap();
    assert_eq!(
        html.replace("<script src=\"/__basepress/reload.js\"></script>", ""),
        built,
        "a served page is the built page plus the script"
    );

    // HEAD: the same headers, no body.
    let head = reply(agent().head(server.url("/es/installation/")).call(), "HEAD");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    for h in ["content-type", "etag", "cache-control"] {
        assert_eq!(head.header(h), page.header(h), "{h}");
    }
    assert_eq!(head.header("content-length"), page.body.len().to_string());
    let (status, text) = {
        let mut s = TcpStream::connect(&server.addr).unwrap();
        s.write_all(b"HEAD /kubernetes/v1.30.0/base/files.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        (out[9..12].to_string(), out)
    };
    assert_eq!(status, "200");
    assert!(text.ends_with("\r\n\r\n"), "HEAD sent a body: {text:?}");

    // ETag: strong, from the content; If-None-Match gives 304.
    let etag = page.header("etag").to_string();
    assert!(
        etag.len() == 66 && etag.starts_with('"') && etag.ends_with('"'),
        "{etag}"
    );
    let again = get_with(&server.url("/es/installation/"), ("If-None-Match", &etag));
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    assert_eq!(again.header("etag"), etag);
    let list = format!("\"nope\", {etag}");
    assert_eq!(
        get_with(&server.url("/es/installation/"), ("If-None-Match", &list)).status,
        304
    );
    let other = get_with(&server.url("/es/installation/"), ("If-None-Match", "\"0\""));
    assert_eq!(other.status, 200);
    assert_eq!(other.body, page.body);
    let files = get(&server.url("/kubernetes/v1.30.0/base/files.txt"));
    assert_ne!(files.header("etag"), etag, "ETags follow the content");

    // Missing: 404 with the site's 404 page.
    let not_found_page = get(&server.url("/404.html"));
    for path in [
        "/es/nope/",
        "/nope.txt",
        "/kubernetes/v9.9.9/base/files.txt",
        "/kubernetes/v1.30.0/base/",
        "/site.yaml",
        "/content/es/installation.md",
    ] {
        let r = get(&server.url(path));
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.header("content-type"), "text/html; charset=utf-8");
        assert_eq!(r.body, not_found_page.body, "{path}");
    }

    // A folder without its slash.
    for (path, to) in [
        ("/es/installation", "/es/installation/"),
        ("/es", "/es/"),
        ("/es/installation?x=1", "/es/installation/?x=1"),
    ] {
        let r = get(&server.url(path));
        assert_eq!(r.status, 302, "{path}");
        assert_eq!(r.header("location"), to, "{path}");
    }

    let post = reply(agent().post(server.url("/es/")).send(""), "POST");
    assert_eq!(post.status, 405);
    assert_eq!(post.header("allow"), "GET, HEAD");
}

#[test]
fn no_request_reaches_a_file_outside_the_site() {
    let project = copy_repo();
    std::fs::write(project.path().join("secret.txt"), "TOPSECRET-in-the-root\n").unwrap();
    let server = Server::start(project.path());
    let long = format!("/{}", "a/".repeat(3000));
    let targets: Vec<&[u8]> = vec![
        b"/../site.yaml",
        b"/%2e%2e/site.yaml",
        b"/%2E%2E%2Fsite.yaml",
        b"/.%2e/site.yaml",
        b"/es/..%2f..%2fsite.yaml",
        b"/es/../../site.yaml",
        b"/es/%2e%2e/%2e%2e/secret.txt",
        b"/..\\site.yaml",
        b"/%5c..%5csite.yaml",
        b"/..%5csite.yaml",
        b"//etc/passwd",
        b"/../../../../../../etc/passwd",
        b"/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        b"/%c0%ae%c0%ae/site.yaml",
        b"/%00",
        b"/index.html%00.txt",
        b"/site.yaml%00",
        b"/\0",
        b"/secret.txt",
        b"/site.yaml",
        b"/content/es/installation.md",
        b"/bases/v1.30.0/kustomization.yaml",
        b"http://localhost/../site.yaml",
        b"*",
        long.as_bytes(),
    ];
    let site_yaml = std::fs::read_to_string(project.path().join("site.yaml")).unwrap();
    for t in targets {
        let (status, text) = raw(&server.addr, t);
        let shown = String::from_utf8_lossy(&t[..t.len().min(60)]).into_owned();
        assert!(status == 400 || status == 404, "{shown}: status {status}");
        for secret in [
            "TOPSECRET",
            "root:x:0:0",
            "default_language:",
            site_yaml.lines().next().unwrap(),
            "title: Instalación",
            "kind: Kustomization",
        ] {
            assert!(
                !text.contains(secret),
                "{shown}: the response has {secret:?}"
            );
        }
    }
    assert!(server_is_up(&server), "the server survived the attempts");
}

fn server_is_up(server: &Server) -> bool {
    get(&server.url("/es/")).status == 200
}

#[test]
fn an_edit_reloads_open_pages_and_a_broken_edit_shows_the_findings() {
    let project = copy_repo();
    let mut server = Server::start(project.path());
    let page = project.path().join("content/es/installation.md");
    let original = std::fs::read_to_string(&page).unwrap();
    let mut events = Events::connect(&server.addr);
    let (name, first) = events.next();
    assert_eq!(name, "hello");

    // A change: the next request shows it, and open pages are told.
    let edited = original.replacen("Para instalar el agente", "Para instalar HOY el agente", 1);
    assert_ne!(edited, original);
    let start = Instant::now();
    save(&page, &edited);
    let (name, generation) = events.next();
    let took = start.elapsed();
    assert_eq!(name, "reload");
    assert_ne!(generation, first);
    eprintln!(
        "serve: an edit reached the browser {} ms after the write ({} build)",
        took.as_millis(),
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    // A bound for a debug build on a busy machine: the reload comes at
    // once, not after a timeout (bench/reload.sh measures it).
    assert!(took < Duration::from_secs(5), "the reload took {took:?}");
    let r = get(&server.url("/es/installation/"));
    assert_eq!(r.status, 200);
    assert!(r.text().contains("Para instalar HOY el agente"));

    // The same bytes again: nothing to rebuild, no reload.
    save(&page, &edited);
    assert_eq!(events.next_within(Duration::from_millis(600)), None);

    // A broken edit: every page shows the findings, escaped; other files
    // still come from the last good build.
    let broken = edited.replacen(
        "title: Instalación",
        "title: Instalación\n\"<b>bold</b>\": 1",
        1,
    );
    save(&page, &broken);
    assert_eq!(events.next().0, "reload");
    for path in ["/es/installation/", "/en/", "/es/nope/", "/404.html"] {
        let r = get_with(&server.url(path), ("Accept", "text/html"));
        assert_eq!(r.status, 500, "{path}");
        assert_eq!(r.header("content-type"), "text/html; charset=utf-8");
        let body = r.text();
        assert!(body.contains("front-matter-invalid"), "{body}");
        assert!(body.contains("&lt;b&gt;bold&lt;/b&gt;"), "{body}");
        assert!(!body.contains("<b>bold"), "{body}");
        assert!(
            body.contains("/__basepress/reload.js"),
            "the error page reloads too"
        );
    }
    for path in [
        "/kubernetes/v1.30.0/base/files.txt",
        "/assets/style.css",
        "/kubernetes/versions.json",
    ] {
        assert_eq!(get(&server.url(path)).status, 200, "{path}");
    }
    assert!(server.is_running());
    assert!(
        server.printed_soon("error[front-matter-invalid]"),
        "{}",
        server.stderr()
    );

    // Fixed: pages come back, with the newest text.
    let fixed = original.replacen("Para instalar el agente", "Para instalar YA el agente", 1);
    save(&page, &fixed);
    assert_eq!(events.next().0, "reload");
    let r = get(&server.url("/es/installation/"));
    assert_eq!(r.status, 200);
    assert!(r.text().contains("Para instalar YA el agente"));
    assert!(!r.text().contains("basepress-findings"));

    // A check's finding (a link to a page not written yet) keeps the
    // preview: the pages are served with the findings at the top, the
    // edited one with its new text, and so are the other files.
    let linking = format!("{fixed}\nVer [la guía <nueva>](guia-nueva.md).\n");
    save(&page, &linking);
    assert_eq!(events.next().0, "reload");
    for path in ["/es/installation/", "/en/"] {
        let r = get_with(&server.url(path), ("Accept", "text/html"));
        assert_eq!(r.status, 200, "{path}");
        let body = r.text();
        let banner = body
            .find("id=\"basepress-findings\"")
            .expect("the findings box");
        assert!(banner > body.find("<body").unwrap(), "inside the body");
        assert!(body.contains("1 error"), "{body}");
        assert!(body.contains("link-broken"), "{body}");
        assert!(body.contains("guia-nueva.md"), "{body}");
        assert!(body.contains("/__basepress/reload.js"), "{path}");
        // The page the finding is in opens with it.
        assert_eq!(
            body.contains("1 finding on this page"),
            path == "/es/installation/",
            "{path}"
        );
    }
    let page_now = get(&server.url("/es/installation/"));
    assert!(page_now.text().contains("la guía &lt;nueva&gt;"));
    let missing = get_with(&server.url("/es/nope/"), ("Accept", "text/html"));
    assert_eq!(missing.status, 404);
    assert!(
        missing.text().contains("basepress-findings"),
        "the 404 page shows them too"
    );
    let sums = get(&server.url("/kubernetes/v1.30.0/base/SHA256SUMS"));
    assert_eq!(sums.status, 200);
    assert!(!sums.text().contains("basepress-findings"));
    assert!(
        server.printed_soon("pages show them at the top"),
        "{}",
        server.stderr()
    );
    save(&page, &fixed);
    assert_eq!(events.next().0, "reload");
    let r = get(&server.url("/es/installation/"));
    assert_eq!(r.status, 200);
    assert!(!r.text().contains("basepress-findings"));
    assert!(!r.text().contains("guía &lt;nueva&gt;"));

    // A new page and a removed one.
    save(
        &project.path().join("content/en/extra.md"),
        "---\ntitle: Extra\n---\n# Extra\n\nAn extra page.\n",
    );
    assert_eq!(events.next().0, "reload");
    assert_eq!(get(&server.url("/en/extra/")).status, 200);
    std::fs::remove_file(project.path().join("content/en/extra.md")).unwrap();
    assert_eq!(events.next().0, "reload");
    assert_eq!(get(&server.url("/en/extra/")).status, 404);

    // An input folder that did not exist: watched from its creation.
    assert!(!project.path().join("static").exists());
    std::fs::create_dir_all(project.path().join("static/notes")).unwrap();
    save(&project.path().join("static/notes/hello.txt"), "hello\n");
    assert_eq!(events.next().0, "reload");
    assert_eq!(get(&server.url("/notes/hello.txt")).text(), "hello\n");
    save(
        &project.path().join("static/notes/hello.txt"),
        "hello again\n",
    );
    assert_eq!(events.next().0, "reload");
    assert_eq!(get(&server.url("/notes/hello.txt")).text(), "hello again\n");
    assert!(!project.path().join("site").exists());
}

/// Every folder a build reads is watched: an edit of a frozen docs version
/// (`versions/X.Y/content/`) is served as a build of the edited project
/// writes it, the page and the version's search files alike.
#[test]
fn an_edit_of_a_frozen_docs_version_is_served_as_built() {
    let project = copy_repo_with_versions();
    let server = Server::start(project.path());
    let mut events = Events::connect(&server.addr);
    assert_eq!(events.next().0, "hello");
    let page = project.path().join("versions/1.29/content/en/egress.md");
    let original = std::fs::read_to_string(&page).unwrap();
    let edited = original.replacen(
        "The agent only opens outbound connections.",
        "The agent only opens outbound connections, always.",
        1,
    );
    assert_ne!(edited, original);
    save_and_await_reload(&server, &mut events, &page, &edited);
    let out = tempfile::tempdir().unwrap();
    build_ok(project.path(), &out.path().join("site"));
    let built = tree(&out.path().join("site"));
    let page_file = "en/1.29/egress/index.html";
    assert!(String::from_utf8_lossy(&built[page_file]).contains("connections, always."));
    let search: Vec<&String> = built
        .keys()
        .filter(|k| k.starts_with("search/1.29/en/"))
        .collect();
    assert!(!search.is_empty());
    for rel in search.into_iter().chain([&page_file.to_string()]) {
        let served = get(&server.url(&format!("/{rel}")));
        assert_eq!(served.status, 200, "{rel}");
        let body = String::from_utf8_lossy(&served.body)
            .replace("<script src=\"/__basepress/reload.js\"></script>", "");
        assert!(
            body.as_bytes() == built[rel].as_slice(),
            "/{rel} is served otherwise than built"
        );
    }
}

/// Edits one page `n` times and returns the milliseconds from each write
/// to the reload event, checking that the page shows each edit.
fn reload_latencies(server: &Server, page: &Path, url: &str, n: usize) -> Vec<u128> {
    let mut events = Events::connect(&server.addr);
    assert_eq!(events.next().0, "hello");
    let original = std::fs::read_to_string(page).unwrap();
    let mut times = Vec::new();
    for i in 0..n {
        let marker = format!("Edit number {i} of this page.");
        let start = Instant::now();
        save(page, &format!("{original}\n{marker}\n"));
        let (name, _) = events.next();
        times.push(start.elapsed().as_millis());
        assert_eq!(name, "reload");
        let r = get(&server.url(url));
        assert!(r.text().contains(&marker), "edit {i} is not served");
        std::thread::sleep(Duration::from_millis(150));
    }
    times.sort_unstable();
    times
}

/// Every reload of a page edit reaches open pages within a bound that a
/// debug build on a busy machine keeps: the watcher's short wait and one
/// fast rebuild, not a full one after a timeout. The speed itself is a
/// benchmark's (`bench/reload.sh`, `examples/reload_latency.rs`).
#[test]
fn page_edits_reload_promptly() {
    let project = copy_repo();
    let server = Server::start(project.path());
    let times = reload_latencies(
        &server,
        &project.path().join("content/es/health-probes.md"),
        "/es/health-probes/",
        5,
    );
    let median = times[times.len() / 2];
    assert!(median < 2_000, "median reload {median} ms: {times:?}");
}

#[test]
fn the_page_cache_renders_what_a_full_render_renders() {
    let project = copy_repo();
    let root = project.path();
    let mut cache = Session::new(root, engine::Options::default());
    let same = |cache: &mut Session, what: &str| {
        let rebuilt = cache.rebuild(None);
        let Output::Full(kept) = rebuilt.output else {
            panic!("{what}: {:?}", rebuilt.outcome.diagnostics)
        };
        // What is kept in memory: every page packed, each version's
        // search bundle one entry made on first request.
        let packed = kept
            .iter()
            .filter(|(_, b)| matches!(b, Body::Packed(_)))
            .count();
        assert!(packed >= count_pages(root), "{what}: {packed} packed");
        assert!(
            kept.iter().any(|(_, b)| matches!(b, Body::Search(_))),
            "{what}"
        );
        let cached = cache.files().expect("the files of a good build");
        let (full, _) = engine::render_site(root, &engine::Options::default());
        let full = full.unwrap();
        assert_eq!(cached.len(), full.len(), "{what}");
        for (a, b) in cached.iter().zip(&full) {
            assert_eq!(a.path, b.path, "{what}");
            assert!(a.bytes == b.bytes, "{what}: {} differs", a.path);
        }
        cached
    };
    same(&mut cache, "first build");
    assert_eq!(cache.cache_hits(), 0);
    let pages = count_pages(root);
    same(&mut cache, "nothing changed");
    assert_eq!(cache.cache_hits(), pages, "every page comes from the cache");

    let page = root.join("content/en/shutdown.md");
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&page, format!("{text}\nOne more line.\n")).unwrap();
    same(&mut cache, "a body edit");
    assert_eq!(
        cache.cache_hits(),
        pages - 1,
        "only the edited page is rendered"
    );

    std::fs::write(&page, text.replacen("title: ", "title: Stop and ", 1)).unwrap();
    let files = same(&mut cache, "a title edit");
    let nav = files
        .iter()
        .find(|f| f.path == "/en/index.html")
        .expect("the English start page");
    assert!(String::from_utf8_lossy(&nav.bytes).contains("Stop and "));

    let default_page = default_template("page.html");
    std::fs::create_dir_all(root.join("templates")).unwrap();
    std::fs::write(
        root.join("templates/page.html"),
        default_page.replacen("{% block body %}", "{% block body %}<!-- overridden -->", 1),
    )
    .unwrap();
    let files = same(&mut cache, "a template override");
    let overridden = files
        .iter()
        .filter(|f| String::from_utf8_lossy(&f.bytes).contains("<!-- overridden -->"))
        .count();
    assert_eq!(overridden, pages, "every page uses the new template");
    assert_eq!(
        cache.cache_hits(),
        0,
        "a new template renders every page again"
    );

    let site = std::fs::read_to_string(root.join("site.yaml")).unwrap();
    std::fs::write(
        root.join("site.yaml"),
        site.replacen("title: whystack agent", "title: whystack agent docs", 1),
    )
    .unwrap();
    same(&mut cache, "a site title edit");
    assert_eq!(cache.cache_hits(), 0);

    // A new page changes where links can go: every page is rendered
    // again, and pages that link to it resolve.
    std::fs::write(
        root.join("content/en/extra.md"),
        "---\ntitle: Extra\n---\n# Extra\n\nBack to [shutdown](shutdown.md).\n",
    )
    .unwrap();
    same(&mut cache, "a new page");
    assert_eq!(cache.cache_hits(), 0);
    same(&mut cache, "again");
    assert_eq!(cache.cache_hits(), pages + 1);
}

#[test]
fn a_site_with_a_base_path_is_served_below_it() {
    let p = Project::new();
    p.write(
        "site.yaml",
        &SITE_YAML.replace("https://docs.example.com", "https://example.com/docs"),
    );
    let server = Server::start(p.root());
    assert!(server.printed.ends_with("/docs/"), "{}", server.printed);
    assert_eq!(get(&server.url("/docs/en/")).status, 200);
    assert_eq!(
        get(&server.url("/docs/kubernetes/v1.1.0/base/files.txt")).status,
        200
    );
    for (path, to) in [
        ("/", "/docs/"),
        ("/docs", "/docs/"),
        ("/docs/en", "/docs/en/"),
    ] {
        let r = get(&server.url(path));
        assert_eq!(r.status, 302, "{path}");
        assert_eq!(r.header("location"), to, "{path}");
    }
    assert_eq!(get(&server.url("/en/")).status, 404);
    assert_eq!(get(&server.url("/docsx/en/")).status, 404);
}

#[test]
fn ctrl_c_stops_the_server_with_a_page_still_listening() {
    let p = Project::new();
    let mut server = Server::start(p.root());
    let mut events = Events::connect(&server.addr);
    assert_eq!(events.next().0, "hello");
    let pid = server.child.id().to_string();
    let o = Command::new("kill").args(["-INT", &pid]).output().unwrap();
    assert!(o.status.success());
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(s) = server.child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "still running after Ctrl-C");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}: {}", server.stderr());
    assert_eq!(events.next_within(Duration::from_secs(5)), None);
}

#[test]
fn a_bounded_load_test_has_no_failed_request() {
    const CLIENTS: usize = 64;
    const TOTAL: usize = 20_000;
    let project = copy_repo();
    let server = Server::start(project.path());
    let mut paths: Vec<String> = Vec::new();
    for lang in ["es", "pt", "en"] {
        for page in [
            "",
            "installation/",
            "health-probes/",
            "shutdown/",
            "secrets/",
        ] {
            paths.push(format!("/{lang}/{page}"));
        }
    }
    paths.push("/assets/style.css".into());
    paths.push("/kubernetes/versions.json".into());
    for v in get(&server.url("/kubernetes/versions.txt")).text().lines() {
        let dir = format!("/kubernetes/{v}/base/");
        for f in get(&server.url(&format!("{dir}files.txt"))).text().lines() {
            paths.push(format!("{dir}{f}"));
        }
        paths.push(format!("{dir}files.txt"));
    }
    let expected: HashMap<&str, usize> = paths
        .iter()
        .map(|p| (p.as_str(), get(&server.url(p)).body.len()))
        .collect();

    let next = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    let first_failure = Mutex::new(None::<String>);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..CLIENTS {
            s.spawn(|| {
                let agent = agent();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= TOTAL {
                        break;
                    }
                    let path = paths[i % paths.len()].as_str();
                    let url = server.url(path);
                    let outcome =
                        agent
                            .get(&url)
                            .call()
                            .map_err(|e| e.to_string())
                            .and_then(|mut r| {
                                let status = r.status().as_u16();
                                let body = r.body_mut().read_to_vec().map_err(|e| e.to_string())?;
                                if status == 200 && body.len() == expected[path] {
                                    Ok(())
                                } else {
                                    Err(format!("status {status}, {} bytes", body.len()))
                                }
                            });
                    if let Err(e) = outcome {
                        failed.fetch_add(1, Ordering::Relaxed);
                        first_failure
                            .lock()
                            .unwrap()
                            .get_or_insert(format!("{path}: {e}"));
                    }
                }
            });
        }
    });
    let secs = start.elapsed().as_secs_f64();
    let failed = failed.into_inner();
    assert!(secs < 120.0, "{TOTAL} requests took {secs:.1} s");
    eprintln!(
        "serve: {TOTAL} requests from {CLIENTS} clients over loopback in {secs:.2} s: {:.0} requests/s, {failed} failed",
        TOTAL as f64 / secs
    );
    assert_eq!(
        failed,
        0,
        "first failure: {:?}",
        first_failure.into_inner().unwrap()
    );
}

/// The watcher sees edits whatever the root is written as: run in the
/// project's folder with the default root `.`, it rebuilt nothing (the
/// watcher's events name absolute paths, which never started with `.`).
#[test]
fn an_edit_is_seen_with_the_default_relative_root() {
    let project = copy_repo();
    let server = Server::start_in(project.path());
    let page = project.path().join("content/es/installation.md");
    let original = std::fs::read_to_string(&page).unwrap();
    let mut events = Events::connect(&server.addr);
    assert_eq!(events.next().0, "hello");
    let edited = original.replacen("Para instalar el agente", "Para instalar YA el agente", 1);
    assert_ne!(edited, original);
    save_and_await_reload(&server, &mut events, &page, &edited);
    let r = get(&server.url("/es/installation/"));
    assert!(r.text().contains("Para instalar YA el agente"));
}

/// `basepress serve` answers while its first build renders: a page asked
/// for is rendered next and served at once, with the bytes the finished
/// build serves, and the finished build reloads nothing.
#[test]
fn the_first_pages_are_served_while_the_first_build_renders() {
    let project = copy_repo();
    // Enough pages that rendering them all takes a while.
    for i in 0..1500 {
        let text = format!(
            "---\ntitle: Bulk page {i}\n---\n# Bulk page {i}\n\n## Part\n\nWords of page {i}, for the build to render.\n"
        );
        for lang in ["es", "pt", "en"] {
            let path = project
                .path()
                .join(format!("content/{lang}/bulk/page-{i}.md"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, &text).unwrap();
        }
    }
    let server = Server::start_building(project.path());
    let mut events = Events::connect(&server.addr);
    assert_eq!(events.next().0, "hello");
    let early = get(&server.url("/en/bulk/page-1400/"));
    let built_then = server.stderr().contains("built ");
    assert_eq!(early.status, 200, "{}", server.stderr());
    assert!(
        !built_then,
        "the page came only once the whole site was built:\n{}",
        server.stderr()
    );
    assert!(
        server.printed_within("built ", Duration::from_secs(300)),
        "{}",
        server.stderr()
    );
    // Nothing to reload: the pages shown are the finished build's.
    assert!(
        events.next_within(Duration::from_secs(2)).is_none(),
        "a reload after the first build"
    );
    let after = get(&server.url("/en/bulk/page-1400/"));
    assert_eq!(early.text(), after.text());
    assert!(after.text().contains("Words of page 1400"));
}
