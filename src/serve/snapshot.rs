//! What the preview server serves: the files of the last good build, held
//! in memory, and the findings of the last build when it failed.
//!
//! A [`Snapshot`] never changes once made; a rebuild makes a new one and
//! swaps it in, so a request sees one build from start to end.

use crate::engine::session::Body;
use crate::render::OutFile;
use axum::body::Bytes;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// Where the served pages load the live-reload script from.
pub const RELOAD_SCRIPT_PATH: &str = "/__basepress/reload.js";
/// The Server-Sent Events stream the script listens to.
pub const EVENTS_PATH: &str = "/__basepress/events";

/// The tag put before `</body>` in every HTML page the server sends (and
/// never in a built site).
pub const RELOAD_TAG: &str = "<script src=\"/__basepress/reload.js\"></script>";

/// One file of a build, as written by the renderer, and what is sent for it.
pub struct Entry {
    body: Body,
    content_type: &'static str,
    /// The body sent (HTML with the reload script) and its ETag, made on
    /// the first request for the file.
    served: OnceLock<Served>,
}

/// A response body and its strong ETag (`"<sha256>"`).
pub struct Served {
    pub body: Bytes,
    pub etag: String,
}

impl Entry {
    fn new(path: &str, body: Body) -> Self {
        Entry {
            body,
            content_type: content_type(path),
            served: OnceLock::new(),
        }
    }

    pub fn content_type(&self) -> &'static str {
        self.content_type
    }

    pub fn is_html(&self) -> bool {
        self.content_type.starts_with("text/html")
    }

    /// Whether [`Entry::served`] returns at once (a search index made on
    /// first request takes a while).
    pub fn is_ready(&self) -> bool {
        self.served.get().is_some() || self.body.is_ready()
    }

    /// The body to send and its ETag.
    pub fn served(&self) -> &Served {
        self.served.get_or_init(|| {
            let bytes = self.body.bytes();
            let body = if self.is_html() {
                Bytes::from(inject_reload(&bytes))
            } else {
                bytes
            };
            let etag = etag(&body);
            Served { body, etag }
        })
    }
}

/// A strong ETag from the SHA-256 of `body`.
pub fn etag(body: &[u8]) -> String {
    let digest = Sha256::digest(body);
    let mut s = String::with_capacity(66);
    s.push('"');
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s.push('"');
    s
}

/// The files of one successful build, by site path (`/es/install/index.html`).
#[derive(Default)]
pub struct Build {
    files: HashMap<String, Arc<Entry>>,
    /// The base URL's path (`/docs`, or empty): the site is served below it,
    /// as it will be once published.
    pub prefix: String,
}

/// What a request path names in a build.
pub enum Found<'a> {
    File(&'a Arc<Entry>),
    /// A folder asked for without its trailing slash: where to send the
    /// reader instead (a site path).
    Redirect(String),
    Missing,
}

impl Build {
    /// The build made of `files`, reusing the entries of `previous` whose
    /// bytes did not change (so their bodies and ETags are not made again).
    /// Also returns how many files differ from `previous`, counting added
    /// and removed ones.
    pub fn new(files: Vec<OutFile>, prefix: String, previous: Option<&Build>) -> (Build, usize) {
        let mut changed = 0;
        let mut map = HashMap::with_capacity(files.len());
        for f in files {
            let old = previous.and_then(|p| p.files.get(&f.path));
            let entry = match old {
                // A page kept by the render cache is the same buffer.
                Some(e) if same_body(&e.body, &f.bytes) => Arc::clone(e),
                _ => {
                    changed += 1;
                    Arc::new(Entry::new(&f.path, Body::Ready(f.bytes)))
                }
            };
            map.insert(f.path, entry);
        }
        if let Some(p) = previous {
            changed += p.files.keys().filter(|k| !map.contains_key(*k)).count();
        }
        (Build { files: map, prefix }, changed)
    }

    /// This build with some files replaced (none added or removed), and
    /// how many of them differ.
    pub fn with_changes(&self, changes: Vec<(String, Body)>) -> (Build, usize) {
        let mut files = self.files.clone();
        let mut changed = 0;
        for (path, body) in changes {
            let same = match (&body, files.get(&path)) {
                (Body::Ready(bytes), Some(old)) => same_body(&old.body, bytes),
                _ => false,
            };
            if !same {
                changed += 1;
                let entry = Arc::new(Entry::new(&path, body));
                files.insert(path, entry);
            }
        }
        let build = Build {
            files,
            prefix: self.prefix.clone(),
        };
        (build, changed)
    }

    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    pub fn get(&self, path: &str) -> Option<&Arc<Entry>> {
        self.files.get(path)
    }

    /// Looks a decoded site path up (below the prefix, starting with `/`):
    /// a file, a folder's `index.html`, or a folder without its slash.
    pub fn lookup(&self, path: &str) -> Found<'_> {
        if path.ends_with('/') {
            return match self.files.get(&format!("{path}index.html")) {
                Some(e) => Found::File(e),
                None => Found::Missing,
            };
        }
        if let Some(e) = self.files.get(path) {
            return Found::File(e);
        }
        if self.files.contains_key(&format!("{path}/index.html")) {
            return Found::Redirect(format!("{path}/"));
        }
        Found::Missing
    }
}

/// Whether a file's body is `bytes` (a body made on request never is).
fn same_body(body: &Body, b: &Bytes) -> bool {
    match body {
        Body::Ready(a) => (a.as_ptr() == b.as_ptr() && a.len() == b.len()) || a == b,
        Body::Search(_) => false,
    }
}

/// What the server shows: the last good build, and the findings of the last
/// build when it failed.
pub struct Snapshot {
    pub build: Option<Arc<Build>>,
    /// The error page for HTML requests while the last build fails.
    pub error: Option<Arc<ErrorPage>>,
    /// Changes whenever what a browser shows changes; the reload script
    /// compares it across reconnections.
    pub generation: String,
}

/// The findings of a failed build, as the page browsers get instead of the
/// site's pages.
pub struct ErrorPage {
    /// The findings as the terminal shows them, without color.
    pub text: String,
    pub body: Bytes,
}

impl ErrorPage {
    pub fn new(text: String) -> Self {
        let html = format!(
            "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>Build failed · basepress</title>\n<style>\n\
             body {{ font: 16px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #1b1b1b; }}\n\
             h1 {{ color: #b00020; font-size: 1.5rem; }}\n\
             pre {{ background: #f6f6f6; border-left: 4px solid #b00020; padding: 1rem; overflow-x: auto; font-size: 14px; }}\n\
             </style>\n</head>\n<body>\n<h1>The build failed</h1>\n\
             <p>basepress serve keeps running. Fix the findings below and save: this page reloads by itself. \
             Files other than pages are still served from the last good build.</p>\n\
             <pre>{}</pre>\n{RELOAD_TAG}\n</body>\n</html>\n",
            crate::render::escape::escape(&text)
        );
        ErrorPage {
            text,
            body: Bytes::from(html),
        }
    }
}

/// `html` with [`RELOAD_TAG`] before its last `</body>` (any case), or at
/// its end when it has none.
pub fn inject_reload(html: &[u8]) -> Vec<u8> {
    const CLOSE: &[u8] = b"</body>";
    let at = html
        .windows(CLOSE.len())
        .rposition(|w| w.eq_ignore_ascii_case(CLOSE))
        .unwrap_or(html.len());
    let mut out = Vec::with_capacity(html.len() + RELOAD_TAG.len() + 1);
    out.extend_from_slice(&html[..at]);
    out.extend_from_slice(RELOAD_TAG.as_bytes());
    if at == html.len() {
        out.push(b'\n');
    }
    out.extend_from_slice(&html[at..]);
    out
}

/// The `Content-Type` of a site path, by its file name. Text that people
/// read in a browser (the download index, checksums, YAML, env files) is
/// `text/plain` so browsers show it instead of downloading it.
pub fn content_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name == "SHA256SUMS" {
        return "text/plain; charset=utf-8";
    }
    let ext = match name.rsplit_once('.') {
        Some((_, ext)) => ext.to_ascii_lowercase(),
        None => return "application/octet-stream",
    };
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "application/javascript; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "avif" => "image/avif",
        "ico" => "image/x-icon",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "ttf" => "font/ttf",
        "otf" => "font/otf",
        "pdf" => "application/pdf",
        "xml" => "application/xml",
        "wasm" => "application/wasm",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "txt" | "yaml" | "yml" | "env" | "md" | "sh" | "csv" | "toml" | "conf" => {
            "text/plain; charset=utf-8"
        }
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_goes_before_the_last_closing_body() {
        let html = b"<html><body><p>&lt;/body&gt;</p></BODY></html>";
        let out = String::from_utf8(inject_reload(html)).unwrap();
        assert_eq!(
            out,
            format!("<html><body><p>&lt;/body&gt;</p>{RELOAD_TAG}</BODY></html>")
        );
        let out = String::from_utf8(inject_reload(b"<p>no body</p>")).unwrap();
        assert_eq!(out, format!("<p>no body</p>{RELOAD_TAG}\n"));
    }

    #[test]
    fn content_types_follow_the_file_name() {
        assert_eq!(content_type("/es/index.html"), "text/html; charset=utf-8");
        assert_eq!(
            content_type("/kubernetes/v1.0.0/base/SHA256SUMS"),
            "text/plain; charset=utf-8"
        );
        assert_eq!(
            content_type("/kubernetes/v1.0.0/base/config.env"),
            "text/plain; charset=utf-8"
        );
        assert_eq!(content_type("/a/B.YAML"), "text/plain; charset=utf-8");
        assert_eq!(content_type("/logo.svg"), "image/svg+xml");
        assert_eq!(
            content_type("/kubernetes/versions.json"),
            "application/json"
        );
        assert_eq!(content_type("/x/LICENSE"), "application/octet-stream");
    }

    #[test]
    fn folders_resolve_to_their_index_or_redirect() {
        let files = vec![
            OutFile::new("/index.html", "root"),
            OutFile::new("/es/install/index.html", "<body></body>"),
            OutFile::new("/kubernetes/v1.0.0/base/files.txt", "a\n"),
        ];
        let (b, changed) = Build::new(files, String::new(), None);
        assert_eq!(changed, 3);
        assert!(matches!(b.lookup("/"), Found::File(_)));
        assert!(matches!(b.lookup("/es/install/"), Found::File(_)));
        assert!(matches!(b.lookup("/es/install"), Found::Redirect(p) if p == "/es/install/"));
        assert!(matches!(
            b.lookup("/kubernetes/v1.0.0/base"),
            Found::Missing
        ));
        assert!(matches!(
            b.lookup("/kubernetes/v1.0.0/base/"),
            Found::Missing
        ));
        assert!(matches!(
            b.lookup("/kubernetes/v1.0.0/base/files.txt"),
            Found::File(_)
        ));
    }

    #[test]
    fn unchanged_files_keep_their_entry() {
        let (a, _) = Build::new(
            vec![OutFile::new("/a.txt", "a"), OutFile::new("/b.txt", "b")],
            String::new(),
            None,
        );
        let before = Arc::clone(a.get("/a.txt").unwrap());
        let (b, changed) = Build::new(
            vec![OutFile::new("/a.txt", "a"), OutFile::new("/c.txt", "c")],
            String::new(),
            Some(&a),
        );
        assert_eq!(changed, 2, "c added, b removed");
        assert!(Arc::ptr_eq(&before, b.get("/a.txt").unwrap()));
    }

    #[test]
    fn changes_replace_only_the_files_that_differ() {
        let (a, _) = Build::new(
            vec![OutFile::new("/a.txt", "a"), OutFile::new("/b.txt", "b")],
            String::new(),
            None,
        );
        let kept = Arc::clone(a.get("/a.txt").unwrap());
        let (b, changed) = a.with_changes(vec![
            ("/a.txt".into(), Body::Ready(Bytes::from_static(b"a"))),
            ("/b.txt".into(), Body::Ready(Bytes::from_static(b"B"))),
        ]);
        assert_eq!(changed, 1);
        assert_eq!(b.file_count(), 2);
        assert!(Arc::ptr_eq(&kept, b.get("/a.txt").unwrap()));
        assert_eq!(&b.get("/b.txt").unwrap().served().body[..], b"B");
        assert_eq!(&a.get("/b.txt").unwrap().served().body[..], b"b");
    }

    #[test]
    fn the_error_page_escapes_findings() {
        let page = ErrorPage::new("error: <script>alert(1)</script> & \"x\"".into());
        let body = String::from_utf8(page.body.to_vec()).unwrap();
        assert!(body.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"));
        assert!(!body.contains("<script>alert"));
        assert!(body.contains(RELOAD_TAG));
    }
}
