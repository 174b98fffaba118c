//! What the browser tests stand on: the repository's site, built once per
//! run and served on a loopback port; chromedriver on another loopback
//! port, one per test; headless Chromium sessions with the performance log
//! on, so a test can see every request a page made.

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use std::future::Future;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Chromium's flags for this machine: root, no GPU, no network but
/// loopback. The resolver rule makes sure nothing else is even tried; the
/// performance log still shows any request a page attempted.
const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
];

/// Chromium's narrowest window; narrower screens are emulated.
const MIN_WINDOW_WIDTH: u32 = 500;

/// Whether the browser tests must run: in CI they never skip.
pub fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Whether Chromium and chromedriver are installed; panics in CI when
/// they are not, says why it skips otherwise.
pub fn have_browser() -> bool {
    let missing: Vec<&str> = [CHROMIUM, CHROMEDRIVER]
        .into_iter()
        .filter(|p| !Path::new(p).is_file())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let why = format!(
        "{} not installed (apt-get install chromium chromium-driver)",
        missing.join(" and ")
    );
    if required() {
        panic!("the browser tests are required when CI=true: {why}");
    }
    eprintln!("skipping: {why}");
    false
}

/// The browsers' scratch folder, `target/tmp/browser/`: their profiles and
/// their TMPDIR, so that a browser killed in the middle of a test leaves
/// nothing behind outside `target/`.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("browser")
        .join(name);
    std::fs::create_dir_all(&dir).expect("create the browsers' scratch folder");
    dir
}

/// Where screenshots are kept: `target/browser-screenshots/`.
pub fn screenshot_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.parent().unwrap_or(tmp).join("browser-screenshots");
    std::fs::create_dir_all(&dir).expect("create the screenshot folder");
    dir
}

/// The repository's site, built once per run.
pub fn site() -> &'static Path {
    static SITE: OnceLock<PathBuf> = OnceLock::new();
    SITE.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-site");
        let root = env!("CARGO_MANIFEST_DIR");
        let o = Command::new(env!("CARGO_BIN_EXE_basepress"))
            .args(["build", "--root", root, "--out"])
            .arg(&out)
            .output()
            .expect("basepress runs");
        assert!(
            o.status.success(),
            "the repository's site does not build:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        out
    })
}

/// A static file server on 127.0.0.1 for the whole run, serving the site
/// as a web host would: `index.html` for folders, `/404.html` with status
/// 404 for anything missing, and the right Content-Type.
pub struct Server {
    pub url: String,
}

pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let root = site().to_path_buf();
        let http = tiny_http::Server::http("127.0.0.1:0").expect("bind a loopback port");
        let port = http.server_addr().to_ip().expect("an IP address").port();
        std::thread::spawn(move || {
            for req in http.incoming_requests() {
                let path = req
                    .url()
                    .split(['?', '#'])
                    .next()
                    .unwrap_or("/")
                    .to_string();
                let (status, file) = match resolve(&root, &path) {
                    Some(file) => (200, file),
                    None => (404, root.join("404.html")),
                };
                let bytes = std::fs::read(&file).unwrap_or_default();
                let header = tiny_http::Header::from_bytes("Content-Type", content_type(&file))
                    .expect("a valid header");
                let response = tiny_http::Response::from_data(bytes)
                    .with_status_code(status)
                    .with_header(header);
                let _ = req.respond(response);
            }
        });
        Server {
            url: format!("http://127.0.0.1:{port}"),
        }
    })
}

/// The file a URL path names below `root`, if it exists.
fn resolve(root: &Path, path: &str) -> Option<PathBuf> {
    if path.split('/').any(|seg| seg == "..") {
        return None;
    }
    let mut file = root.join(path.trim_start_matches('/'));
    if path.ends_with('/') {
        file.push("index.html");
    }
    file.is_file().then_some(file)
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "xml" => "application/xml",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        _ => "text/plain; charset=utf-8",
    }
}

/// chromedriver on a free loopback port, in a process group of its own:
/// when dropped, the group is killed, the browsers it started with it,
/// even when a test failed before closing its session.
struct Driver {
    child: Child,
    url: String,
}

impl Driver {
    fn start() -> Driver {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .process_group(0)
            .env("TMPDIR", scratch("tmp"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let mut driver = Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = driver.child.try_wait() {
                panic!("chromedriver exited at start: {status}");
            }
            assert!(Instant::now() < deadline, "chromedriver did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        driver
    }
}

impl Driver {
    /// Kills chromedriver's process group; once done, does nothing.
    fn stop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A browser for one test: its chromedriver, its profile folder, and a
/// WebDriver client on the site's server.
pub struct Browser {
    pub client: Client,
    pub base: String,
    driver: Driver,
    profile: tempfile::TempDir,
}

impl Drop for Browser {
    /// Stops the browser, then removes its profile, which a browser still
    /// shutting down may write to for a moment.
    fn drop(&mut self) {
        self.driver.stop();
        for _ in 0..20 {
            if std::fs::remove_dir_all(self.profile.path()).is_ok() || !self.profile.path().exists()
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Browser {
    async fn open(width: u32, height: u32) -> Browser {
        let driver = Driver::start();
        let profile = tempfile::tempdir_in(scratch("profiles")).expect("a profile folder");
        let mut args: Vec<String> = FLAGS.iter().map(|f| f.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        args.push(format!("--window-size={width},{height}"));
        let mut options = json!({ "binary": CHROMIUM, "args": args });
        if width < MIN_WINDOW_WIDTH {
            // A window cannot be that narrow: emulate a phone's screen.
            options["mobileEmulation"] = json!({
                "deviceMetrics": { "width": width, "height": height, "pixelRatio": 1.0, "touch": true }
            });
        }
        let caps = json!({
            "browserName": "chrome",
            "goog:chromeOptions": options,
            "goog:loggingPrefs": { "performance": "ALL" },
        });
        let caps = match caps {
            Value::Object(map) => map,
            _ => unreachable!("a JSON object"),
        };
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&driver.url)
            .await
            .expect("a Chromium session");
        Browser {
            client,
            base: server().url.clone(),
            driver,
            profile,
        }
    }

    /// Makes every request whose URL matches one of `patterns` (`*site.js`)
    /// fail, as a blocked or missing file does.
    pub async fn block(&self, patterns: &[&str]) {
        for (cmd, params) in [
            ("Network.enable", json!({})),
            ("Network.setBlockedURLs", json!({ "urls": patterns })),
        ] {
            let command = Chromedriver {
                endpoint: "goog/cdp/execute",
                body: json!({ "cmd": cmd, "params": params }),
            };
            self.client
                .issue_cmd(command)
                .await
                .expect("a DevTools command");
        }
    }

    /// Opens `url`, of another server than the site's.
    pub async fn goto_url(&self, url: &str) {
        self.client.goto(url).await.expect("the page loads");
    }

    /// Opens `path` of the site.
    pub async fn goto(&self, path: &str) {
        let url = format!("{}{path}", self.base);
        self.client.goto(&url).await.expect("the page loads");
    }

    /// The result of a script (its `return` value).
    pub async fn js(&self, script: &str) -> Value {
        self.client
            .execute(script, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// The result of an async script: it calls `arguments[0]` with it.
    pub async fn js_async(&self, script: &str) -> Value {
        self.client
            .execute_async(script, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Waits until `script` returns true.
    pub async fn until(&self, what: &str, script: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if self.js(script).await == Value::Bool(true) {
                return;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub async fn click(&self, css: &str) {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no `{css}`: {e}"))
            .click()
            .await
            .unwrap_or_else(|e| panic!("cannot click `{css}`: {e}"));
    }

    /// Saves a PNG of the window under `target/browser-screenshots/`.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("a screenshot");
        let path = screenshot_dir().join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write the screenshot");
        path
    }

    /// Every network URL (http, https, ws, wss) the browser asked for since
    /// the last call, from Chromium's performance log; the browser's own
    /// `chrome:` pages and `data:` URLs are not requests.
    pub async fn requested_urls(&self) -> Vec<String> {
        let log = self
            .client
            .issue_cmd(Chromedriver {
                endpoint: "se/log",
                body: json!({ "type": "performance" }),
            })
            .await
            .expect("the performance log");
        let mut urls = Vec::new();
        for entry in log.as_array().into_iter().flatten() {
            let Some(text) = entry["message"].as_str() else {
                continue;
            };
            let Ok(message) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            if message["message"]["method"] == "Network.requestWillBeSent" {
                if let Some(url) = message["message"]["params"]["request"]["url"].as_str() {
                    let scheme = url.split(':').next().unwrap_or_default();
                    if matches!(scheme, "http" | "https" | "ws" | "wss") {
                        urls.push(url.to_string());
                    }
                }
            }
        }
        urls
    }
}

/// A POST to one of chromedriver's own endpoints of the session
/// (`se/log` for the performance log, `goog/cdp/execute` for a command of
/// the DevTools protocol), with its JSON body.
#[derive(Debug)]
struct Chromedriver {
    endpoint: &'static str,
    body: Value,
}

impl WebDriverCompatibleCommand for Chromedriver {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/{}",
            session_id.unwrap_or_default(),
            self.endpoint
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(self.body.to_string()))
    }
}

/// Runs `test` with a fresh browser of the given window size, on a runtime
/// of its own, and closes the browser after it, whether the test passed
/// or panicked (then the panic goes on).
pub fn with_browser<F, Fut>(width: u32, height: u32, test: F)
where
    F: FnOnce(Arc<Browser>) -> Fut,
    Fut: Future<Output = ()> + 'static,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let browser = Arc::new(Browser::open(width, height).await);
        let local = tokio::task::LocalSet::new();
        let run = test(browser.clone());
        let outcome = local
            .run_until(async move { tokio::task::spawn_local(run).await })
            .await;
        let _ = browser.client.clone().close().await;
        if let Err(e) = outcome {
            match e.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(e) => panic!("the test did not finish: {e}"),
            }
        }
    });
}
