//! `basepress serve` facing a network: DNS rebinding (the `Host` check),
//! no CORS, missing or doubled `Host`, byte ranges, and slow clients
//! (slowloris) that must not take the service from the others. The real
//! binary, on a free loopback port.

use crate::support::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the server gives a client to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// A running `basepress serve`, killed when dropped.
struct Server {
    child: Child,
    /// `127.0.0.1:N`.
    addr: String,
    port: u16,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    fn start(root: &Path, extra: &[&str]) -> Server {
        Server::start_with(basepress(), root, extra)
    }

    /// With the 1,024 open files most systems give a process, as where
    /// 1,100 slow connections once stopped all service.
    fn start_with_usual_open_files(root: &Path) -> Server {
        let mut sh = std::process::Command::new("sh");
        sh.args(["-c", "ulimit -n 1024 && exec \"$0\" \"$@\""])
            .arg(env!("CARGO_BIN_EXE_basepress"));
        Server::start_with(sh, root, &[])
    }

    fn start_with(mut command: std::process::Command, root: &Path, extra: &[&str]) -> Server {
        let mut child = command
            .args(["serve", "--root", &root.to_string_lossy(), "--port", "0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("basepress serve starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let Ok(line) = rx.recv_timeout(Duration::from_secs(180)) else {
            let _ = child.kill();
            panic!("no URL printed; stderr:\n{}", stderr.lock().unwrap());
        };
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"));
        let addr = url["http://".len()..]
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let port = addr.rsplit(':').next().unwrap().parse().unwrap();
        Server {
            child,
            addr,
            port,
            stderr,
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response read whole from a raw HTTP/1.1 exchange.
struct Raw {
    status: u16,
    /// Header lines, lower case.
    head: String,
    body: Vec<u8>,
}

impl std::fmt::Debug for Raw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body = String::from_utf8_lossy(&self.body);
        let cut: String = body.chars().take(300).collect();
        write!(f, "{}\n\n{cut}", self.head)
    }
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then_some(v.trim())
        })
    }
}

/// Sends `request` as is (with `Connection: close` added before the blank
/// line) and reads the answer to the end.
fn exchange(addr: &str, request: &str) -> Raw {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let request = request.replacen("\r\n\r\n", "\r\nConnection: close\r\n\r\n", 1);
    s.write_all(request.as_bytes()).expect("send");
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no head in {:?}", String::from_utf8_lossy(&out)));
    let head = String::from_utf8_lossy(&out[..split]).to_ascii_lowercase();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    Raw {
        status,
        head,
        body: out[split + 4..].to_vec(),
    }
}

fn get(addr: &str, path: &str, host: &str, more: &str) -> Raw {
    exchange(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{more}\r\n"),
    )
}

#[test]
fn dns_rebinding_gets_no_page_and_no_error_page() {
    let project = copy_repo();
    // A leaked token makes the build fail: pages show the findings, which
    // quote the line. A page elsewhere must not read them.
    let token = format!("ghp_{}", "Zq8XkL2mQ9vT7pN0tB4c".repeat(2));
    let page = project.path().join("content/en/secrets.md");
    let mut text = std::fs::read_to_string(&page).unwrap();
    text.push_str(&format!("\nThe token is `{token}`.\n"));
    std::fs::write(&page, text).unwrap();
    let server = Server::start(project.path(), &[]);
    let port = server.port;
    let mut refused = 0;
    for host in [
        "evil.example".to_string(),
        format!("evil.example:{port}"),
        format!("127.0.0.1.evil.example:{port}"),
        format!("localhost:{}", port.wrapping_add(1)),
        format!("LOCALHOST.:{port}"),
    ] {
        for path in [
            "/en/secrets/",
            "/",
            "/kubernetes/versions.txt",
            "/__basepress/events",
        ] {
            let r = get(&server.addr, path, &host, "Accept: text/html\r\n");
            assert_eq!(r.status, 421, "{host} {path}: {r:?}");
            let body = String::from_utf8_lossy(&r.body);
            assert!(!body.contains("ghp_") && !body.contains("<html"), "{body}");
            assert!(r.header("access-control-allow-origin").is_none());
            refused += 1;
        }
    }
    // The server's own names get the findings.
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        "localhost".to_string(),
    ] {
        let r = get(&server.addr, "/en/secrets/", &host, "Accept: text/html\r\n");
        assert_eq!(r.status, 500, "{host}: {r:?}\n{}", server.stderr());
    }
    eprintln!("rebinding: {refused} requests naming other hosts, all refused with 421 and no page");
}

#[test]
fn allowed_hosts_and_no_cors() {
    let project = copy_repo();
    let server = Server::start(
        project.path(),
        &[
            "--allow-host",
            "docs.test",
            "--allow-host",
            "proxy.test:8443",
        ],
    );
    let port = server.port;
    for host in [
        "docs.test".to_string(),
        format!("docs.test:{port}"),
        "proxy.test:8443".to_string(),
        format!("127.0.0.1:{port}"),
    ] {
        let r = get(
            &server.addr,
            "/en/",
            &host,
            "Origin: http://evil.example\r\n",
        );
        assert_eq!(r.status, 200, "{host}: {r:?}");
        assert!(
            !r.head.contains("access-control-"),
            "a CORS header for {host}: {}",
            r.head
        );
    }
    assert_eq!(get(&server.addr, "/en/", "other.test", "").status, 421);
    // A preflight gets no permission either.
    let r = exchange(
        &server.addr,
        &format!("OPTIONS /en/ HTTP/1.1\r\nHost: localhost:{port}\r\nOrigin: http://evil.example\r\nAccess-Control-Request-Method: GET\r\n\r\n"),
    );
    assert_eq!(r.status, 405, "{r:?}");
    assert!(!r.head.contains("access-control-"), "{}", r.head);
}

#[test]
fn a_missing_or_doubled_host_is_a_bad_request() {
    let project = copy_repo();
    let server = Server::start(project.path(), &[]);
    let port = server.port;
    let cases = [
        ("GET /en/ HTTP/1.1\r\n\r\n".to_string(), 400),
        (
            format!(
                "GET /en/ HTTP/1.1\r\nHost: localhost:{port}\r\nHost: localhost:{port}\r\n\r\n"
            ),
            400,
        ),
        (
            format!("GET /en/ HTTP/1.1\r\nHost: localhost:{port}\r\nHost: evil.example\r\n\r\n"),
            400,
        ),
        ("GET /en/ HTTP/1.0\r\n\r\n".to_string(), 400),
        (
            format!("GET /en/ HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n"),
            200,
        ),
        (
            format!("GET /en/ HTTP/1.0\r\nHost: localhost:{port}\r\n\r\n"),
            200,
        ),
        // The absolute form's authority is the one that counts.
        (
            format!("GET http://evil.example/en/ HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n"),
            421,
        ),
        (
            format!("GET http://localhost:{port}/en/ HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n"),
            200,
        ),
    ];
    for (request, want) in cases {
        let r = exchange(&server.addr, &request);
        assert_eq!(r.status, want, "{request:?}: {r:?}");
    }
}

#[test]
fn ranges_answer_206_as_a_static_host_does() {
    let project = copy_repo();
    let server = Server::start(project.path(), &[]);
    let host = format!("localhost:{}", server.port);
    let path = "/kubernetes/v1.30.0/base/statefulset.yaml";
    let whole = get(&server.addr, path, &host, "");
    assert_eq!(whole.status, 200);
    assert_eq!(whole.header("accept-ranges"), Some("bytes"));
    let len = whole.body.len();
    assert!(len > 100, "{len}");
    let etag = whole.header("etag").unwrap().to_string();

    let part = |range: &str| get(&server.addr, path, &host, &format!("Range: {range}\r\n"));
    let r = part("bytes=0-9");
    assert_eq!(r.status, 206, "{r:?}");
    assert_eq!(r.body, whole.body[..10]);
    assert_eq!(
        r.header("content-range"),
        Some(format!("bytes 0-9/{len}").as_str())
    );
    assert_eq!(r.header("content-length"), Some("10"));
    assert_eq!(r.header("etag"), Some(etag.as_str()));

    let r = part("bytes=-7");
    assert_eq!(r.status, 206);
    assert_eq!(r.body, whole.body[len - 7..]);

    let r = part("bytes=50-");
    assert_eq!(r.status, 206);
    assert_eq!(r.body, whole.body[50..]);
    assert_eq!(
        r.header("content-range"),
        Some(format!("bytes 50-{}/{len}", len - 1).as_str())
    );

    for unsatisfiable in [
        format!("bytes={len}-"),
        format!("bytes={}-{}", len + 5, len + 9),
    ] {
        let r = part(&unsatisfiable);
        assert_eq!(r.status, 416, "{unsatisfiable}: {r:?}");
        assert_eq!(
            r.header("content-range"),
            Some(format!("bytes */{len}").as_str())
        );
        assert!(r.body.is_empty());
    }

    // Several ranges, or nonsense: the whole file.
    for whole_again in ["bytes=0-1,4-5", "bytes=9-2", "pages=1-2"] {
        let r = part(whole_again);
        assert_eq!(r.status, 200, "{whole_again}");
        assert_eq!(r.body, whole.body);
    }

    // If-Range: the part while the file is the same, else the whole.
    let r = get(
        &server.addr,
        path,
        &host,
        &format!("Range: bytes=0-3\r\nIf-Range: {etag}\r\n"),
    );
    assert_eq!((r.status, r.body.len()), (206, 4));
    let r = get(
        &server.addr,
        path,
        &host,
        "Range: bytes=0-3\r\nIf-Range: \"other\"\r\n",
    );
    assert_eq!((r.status, r.body.len()), (200, len));

    // HEAD names the ranges but sends no part; a 404 has no ranges.
    let r = exchange(
        &server.addr,
        &format!("HEAD {path} HTTP/1.1\r\nHost: {host}\r\nRange: bytes=0-3\r\n\r\n"),
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("accept-ranges"), Some("bytes"));
    assert!(r.body.is_empty());
    let r = get(
        &server.addr,
        "/kubernetes/v9.9.9/base/files.txt",
        &host,
        "Range: bytes=0-3\r\n",
    );
    assert_eq!(r.status, 404);
    // The event stream is not a file.
    let mut s = TcpStream::connect(&server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(
        format!("GET /__basepress/events HTTP/1.1\r\nHost: {host}\r\nRange: bytes=0-3\r\n\r\n")
            .as_bytes(),
    )
    .unwrap();
    let mut head = String::new();
    let mut reader = BufReader::new(s);
    reader.read_line(&mut head).unwrap();
    assert!(head.contains(" 200 "), "{head}");
}

/// Lets this process hold `n` more sockets than the usual 1,024.
fn raise_open_files(n: u64) {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    let want = n + 256;
    if limit.current.is_some_and(|c| c < want) {
        limit.current = Some(limit.maximum.map_or(want, |m| m.min(want)));
        setrlimit(Resource::Nofile, limit).expect("raise the open-files limit");
    }
}

#[test]
fn slow_clients_do_not_take_the_service_from_the_others() {
    const SLOW: usize = 1100;
    raise_open_files(SLOW as u64 + 64);
    let project = copy_repo();
    let server = Server::start_with_usual_open_files(project.path());
    let host = format!("localhost:{}", server.port);
    assert_eq!(get(&server.addr, "/en/", &host, "").status, 200);

    // Slowloris: connections that send a request's headers a byte at a
    // time and never finish them; half of them send nothing at all.
    let opened = Instant::now();
    let mut slow: Vec<TcpStream> = (0..SLOW)
        .map(|i| {
            let mut s = TcpStream::connect(&server.addr).expect("connect");
            if i % 2 == 0 {
                let _ = s
                    .write_all(format!("GET /en/ HTTP/1.1\r\nHost: {host}\r\nX-Slow: ").as_bytes());
            }
            s
        })
        .collect();
    let open_took = opened.elapsed();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let trickle = {
        let mut streams: Vec<TcpStream> = slow.iter().map(|s| s.try_clone().unwrap()).collect();
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for s in streams.iter_mut().step_by(2) {
                    // A closed connection fails here: that is the point.
                    let _ = s.write_all(b"a");
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        })
    };

    // A normal client is still served, fast, while they hang on.
    let mut worst = Duration::ZERO;
    for path in [
        "/en/",
        "/es/installation/",
        "/kubernetes/versions.txt",
        "/assets/style.css",
        "/en/secrets/",
    ] {
        let start = Instant::now();
        let r = get(&server.addr, path, &host, "");
        let took = start.elapsed();
        assert_eq!(r.status, 200, "{path}");
        worst = worst.max(took);
        std::thread::sleep(Duration::from_millis(300));
    }
    // Starved, a request would wait for the slow ones' 10 s header
    // timeout; the bound leaves room for a busy machine (a request took
    // 1.002 s once while the whole suite ran on two cores).
    assert!(
        worst < Duration::from_secs(3),
        "a request took {worst:?} with {SLOW} slow connections open"
    );

    // After the header timeout, the server has closed every slow
    // connection: each reads the end of the stream (or a reset).
    std::thread::sleep(HEADER_TIMEOUT + Duration::from_secs(3));
    let mut closed = 0;
    for s in &mut slow {
        s.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 512];
        // Some get an answer (a 408) before the close.
        let closed_now = loop {
            match s.read(&mut buf) {
                Ok(0) => break true,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break false,
                Err(_) => break true,
            }
        };
        closed += usize::from(closed_now);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    trickle.join().unwrap();
    let after = get(&server.addr, "/en/", &host, "");
    eprintln!(
        "slowloris: {SLOW} slow connections opened in {} ms; 5 normal requests meanwhile, the slowest in {} ms; {closed}/{SLOW} closed by the server {} s after opening",
        open_took.as_millis(),
        worst.as_millis(),
        opened.elapsed().as_secs()
    );
    assert_eq!(
        closed, SLOW,
        "slow connections still open after the header timeout"
    );
    assert_eq!(after.status, 200);
}

#[test]
fn an_idle_keep_alive_connection_is_closed_after_the_timeout() {
    let project = copy_repo();
    let server = Server::start(project.path(), &[]);
    let mut s = TcpStream::connect(&server.addr).unwrap();
    s.write_all(
        format!(
            "GET /kubernetes/versions.txt HTTP/1.1\r\nHost: localhost:{}\r\n\r\n",
            server.port
        )
        .as_bytes(),
    )
    .unwrap();
    s.set_read_timeout(Some(HEADER_TIMEOUT * 3)).unwrap();
    let start = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    // The answer, then the close after the idle timeout.
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => panic!("no close within {:?}: {e}", HEADER_TIMEOUT * 3),
        }
    }
    let took = start.elapsed();
    assert!(
        got.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&got)
    );
    assert!(
        took >= HEADER_TIMEOUT - Duration::from_secs(1) && took < HEADER_TIMEOUT * 2,
        "closed after {took:?}"
    );
}
