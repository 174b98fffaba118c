//! What the preview server serves: the files of the last good build, held
//! in memory, and the findings of the last build when it failed.
//!
//! A [`Snapshot`] never changes once made; a rebuild makes a new one and
//! swaps it in, so a request sees one build from start to end.

use crate::engine::session::{Body, LazySearch, SEARCH_DIR};
pub use crate::model::media::content_type;
use axum::body::Bytes;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

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
    /// Keys are shared, so that a page edit's new build copies the map
    /// without copying 20,000 paths.
    files: HashMap<Arc<str>, Arc<Entry>>,
    /// The search bundles, by folder (below [`SEARCH_DIR`], one per docs
    /// version and language): their files are made on first request.
    searches: BTreeMap<String, Arc<LazyBundle>>,
    /// The base URL's path (`/docs`, or empty): the site is served below it,
    /// as it will be once published.
    pub prefix: String,
}

/// A search bundle made on first request, and its files as entries.
pub struct LazyBundle {
    search: Arc<LazySearch>,
    entries: OnceLock<HashMap<String, Arc<Entry>>>,
}

impl LazyBundle {
    fn new(search: Arc<LazySearch>) -> Self {
        LazyBundle {
            search,
            entries: OnceLock::new(),
        }
    }

    /// Makes the bundle now (it takes a while on a large site).
    pub fn make(&self) -> &HashMap<String, Arc<Entry>> {
        self.entries.get_or_init(|| {
            self.search
                .files()
                .iter()
                .map(|(path, bytes)| {
                    let entry = Entry::new(path, Body::Ready(bytes.clone()));
                    (path.clone(), Arc::new(entry))
                })
                .collect()
        })
    }
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
    /// The build made of `files` (by site path; a search bundle by its
    /// folder), reusing the entries of `previous` whose bytes did not
    /// change (so their bodies and ETags are not made again). Also returns
    /// how many files differ from `previous`, counting added and removed
    /// ones (a search bundle counts as one).
    pub fn new(
        files: Vec<(String, Body)>,
        prefix: String,
        previous: Option<&Build>,
    ) -> (Build, usize) {
        let mut changed = 0;
        let mut map = HashMap::with_capacity(files.len());
        let mut searches = BTreeMap::new();
        for (path, body) in files {
            if let Body::Search(s) = body {
                // A bundle of the same pages is the same: kept, made or not.
                let old = previous.and_then(|p| p.searches.get(&path));
                let bundle = match old {
                    Some(old) if old.search.same_input(&s) => Arc::clone(old),
                    _ => {
                        changed += 1;
                        Arc::new(LazyBundle::new(s))
                    }
                };
                searches.insert(path, bundle);
                continue;
            }
            let old = previous.and_then(|p| p.files.get(path.as_str()));
            let entry = match old {
                // A page kept by the render cache is the same buffer.
                Some(e) if e.body.same(&body) => Arc::clone(e),
                _ => {
                    changed += 1;
                    Arc::new(Entry::new(&path, body))
                }
            };
            map.insert(Arc::from(path), entry);
        }
        if let Some(p) = previous {
            changed += p
                .files
                .keys()
                .filter(|k| !map.contains_key(k.as_ref()))
                .count();
            changed += p
                .searches
                .keys()
                .filter(|k| !searches.contains_key(*k))
                .count();
        }
        let build = Build {
            files: map,
            searches,
            prefix,
        };
        (build, changed)
    }

    /// This build with some files replaced (none added or removed, but
    /// for a new search bundle, which replaces every file of its folder),
    /// and how many of them differ.
    pub fn with_changes(&self, changes: Vec<(String, Body)>) -> (Build, usize) {
        let mut files = self.files.clone();
        let mut searches = self.searches.clone();
        let mut changed = 0;
        for (path, body) in changes {
            if let Body::Search(s) = body {
                files.retain(|p, _| !p.starts_with(s.dir.as_str()));
                searches.insert(path, Arc::new(LazyBundle::new(s)));
                changed += 1;
                continue;
            }
            let same = files
                .get(path.as_str())
                .is_some_and(|old| old.body.same(&body));
            if !same {
                changed += 1;
                let entry = Arc::new(Entry::new(&path, body));
                files.insert(Arc::from(path), entry);
            }
        }
        let build = Build {
            files,
            searches,
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

    /// The stale search bundle whose folder holds `path`, if any.
    fn search_of(&self, path: &str) -> Option<&Arc<LazyBundle>> {
        if !path.starts_with(SEARCH_DIR) {
            return None;
        }
        self.searches
            .iter()
            .find(|(dir, _)| path.starts_with(dir.as_str()))
            .map(|(_, s)| s)
    }

    /// The search bundle `path` needs when it is yet to be made (to make
    /// off the threads that answer requests).
    pub fn pending_search(&self, path: &str) -> Option<Arc<LazyBundle>> {
        let s = self.search_of(path)?;
        s.entries.get().is_none().then(|| Arc::clone(s))
    }

    /// Looks a decoded site path up (below the prefix, starting with `/`):
    /// a file, a folder's `index.html`, or a folder without its slash.
    pub fn lookup(&self, path: &str) -> Found<'_> {
        if let Some(s) = self.search_of(path) {
            return match s.make().get(path) {
                Some(e) => Found::File(e),
                None => Found::Missing,
            };
        }
        if path.ends_with('/') {
            return match self.files.get(format!("{path}index.html").as_str()) {
                Some(e) => Found::File(e),
                None => Found::Missing,
            };
        }
        if let Some(e) = self.files.get(path) {
            return Found::File(e);
        }
        if self
            .files
            .contains_key(format!("{path}/index.html").as_str())
        {
            return Found::Redirect(format!("{path}/"));
        }
        Found::Missing
    }
}

/// What the server shows: the last good build, and the findings of the last
/// build when it failed.
pub struct Snapshot {
    pub build: Option<Arc<Build>>,
    /// While the first build renders: the files it rendered so far, served
    /// as they come (a request waits for its file or the build's end).
    pub partial: Option<Arc<Partial>>,
    /// The error page for HTML requests while the last build fails.
    pub error: Option<Arc<ErrorPage>>,
    /// The findings shown at the top of every page while the last build
    /// found errors that left a site to preview (see
    /// [`crate::engine::renders`]).
    pub banner: Option<Arc<Banner>>,
    /// Changes whenever what a browser shows changes; the reload script
    /// compares it across reconnections.
    pub generation: String,
}

/// The files of a first build while it renders, each as soon as it is
/// rendered (the same bytes the finished build serves).
pub struct Partial {
    files: std::sync::RwLock<HashMap<String, Arc<Entry>>>,
    /// Files requests wait for, for the build to render first.
    wanted: Mutex<Vec<String>>,
    /// The base URL's path, as in [`Build::prefix`].
    pub prefix: String,
    done: std::sync::atomic::AtomicBool,
    arrived: tokio::sync::Notify,
}

impl Partial {
    pub fn new(prefix: String) -> Self {
        Partial {
            files: Default::default(),
            wanted: Default::default(),
            prefix,
            done: Default::default(),
            arrived: tokio::sync::Notify::new(),
        }
    }

    /// The build ended (passed or failed): nothing more will come.
    pub fn finish(&self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        self.arrived.notify_waiters();
    }

    /// Waits until `look` finds something (`Some`) or the build ends
    /// (`None`), looking again whenever a file arrives.
    async fn until<T>(&self, mut look: impl FnMut() -> Option<T>) -> Option<T> {
        loop {
            // Registered before looking, so that a file added between the
            // look and the wait still wakes it.
            let arrived = self.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            if let Some(found) = look() {
                return Some(found);
            }
            if self.done.load(std::sync::atomic::Ordering::SeqCst) {
                return None;
            }
            arrived.await;
        }
    }

    /// Waits for the build's end.
    pub async fn ended(&self) {
        self.until(|| None::<()>).await;
    }

    /// The file at site path `path` (a folder's `index.html` for a path
    /// ending in `/`) once the build has rendered it, asking the build for
    /// it first; `None` when the build ended without it (the finished
    /// build answers then).
    pub async fn wait_for(&self, path: &str) -> Option<Arc<Entry>> {
        let file = file_of(path);
        let mut asked = false;
        self.until(|| {
            let found = self.files.read().ok()?.get(&file).cloned();
            if found.is_none() && !asked {
                asked = true;
                if let Ok(mut wanted) = self.wanted.lock() {
                    wanted.push(file.clone());
                }
            }
            found
        })
        .await
    }
}

impl crate::engine::session::Watch for Partial {
    fn rendered(&self, path: &str, body: &Body) {
        let entry = Arc::new(Entry::new(path, body.clone()));
        if let Ok(mut files) = self.files.write() {
            files.insert(path.to_string(), entry);
        }
        self.arrived.notify_waiters();
    }

    fn wanted(&self) -> Option<String> {
        self.wanted.lock().ok()?.pop()
    }
}

/// The file a site path names: a folder's `index.html` for a path ending
/// in `/`.
fn file_of(path: &str) -> String {
    match path.ends_with('/') {
        true => format!("{path}index.html"),
        false => path.to_string(),
    }
}

/// Finishes a [`Partial`] when dropped, however the build ends.
pub struct FinishOnDrop(pub Arc<Partial>);

impl Drop for FinishOnDrop {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// How long a download loop may pause between two requests and still get
/// the rest of its base from the build it started on.
pub const DOWNLOAD_IDLE: Duration = Duration::from_secs(10);

/// Download loops in progress, so each gets one build's files.
///
/// The installers' loop fetches `files.txt`, then each file it lists, one
/// `curl` (one connection) each: nothing in the requests tells one loop
/// from another, and a rebuild between two of them would mix two builds
/// (`sha256sum -c` fails, or worse, the base is inconsistent). So each
/// base folder with a loop in progress is *pinned* to the build that loop
/// started on:
///
/// - a loop starts with a `GET` of `files.txt` that is not a browser's
///   (no `text/html` in `Accept`); the folder is pinned to the current
///   build, and the names that `files.txt` lists are what the loop still
///   has to fetch;
/// - while pinned, every request in the folder (`files.txt` included) is
///   answered from the pinned build, and ticks its name off the oldest
///   loop still expecting it; the pin ends when every loop has fetched
///   every name, or after [`DOWNLOAD_IDLE`] without a request;
/// - a loop that starts while the pinned build is no longer the current
///   one (its `files.txt` or `SHA256SUMS` changed) waits until the older
///   loops end, then starts on the current build: the base of a new loop
///   is never older than the last edit once the loops before it finish,
///   and pins cannot keep an edit out for ever.
///
/// The old build stays in memory as long as its pin holds it. Pins are
/// per base folder, so there are at most as many as versions.
#[derive(Default)]
pub struct Downloads {
    pins: Mutex<HashMap<String, Pin>>,
}

struct Pin {
    build: Arc<Build>,
    /// Each loop on this build, oldest first.
    loops: Vec<Loop>,
    last: Instant,
}

/// One run of the download loop.
struct Loop {
    /// The names `files.txt` lists, in its order: the order the loop
    /// fetches them in.
    order: Vec<String>,
    /// The names it has still to fetch.
    pending: BTreeSet<String>,
}

impl Loop {
    fn new(order: Vec<String>) -> Self {
        Loop {
            pending: order.iter().cloned().collect(),
            order,
        }
    }

    /// Whether the loop has fetched every name before `files.txt` and
    /// none after: a `files.txt` that lists itself is fetched again by
    /// the loop right then, which is no new loop.
    fn at_its_index(&self) -> bool {
        let Some(i) = self.order.iter().position(|n| n == "files.txt") else {
            return false;
        };
        self.pending.len() == self.order.len() - i
            && self.order[i..].iter().all(|n| self.pending.contains(n))
    }
}

/// A request for a file of a base folder, as [`Downloads`] sees it.
pub struct BaseRequest<'a> {
    /// The folder's site path: `/kubernetes/v1.30.0/base/`.
    pub folder: &'a str,
    /// The file's name in it.
    pub name: &'a str,
    /// A client that is not a browser, asking for the bytes (`GET`).
    pub loop_like: bool,
}

impl<'a> BaseRequest<'a> {
    /// The base folder and file name of a site path, when it is one
    /// (`/kubernetes/v1.30.0/base/files.txt`).
    pub fn parse(path: &'a str, loop_like: bool) -> Option<Self> {
        let rest = path.strip_prefix("/kubernetes/")?;
        let (version, rest) = rest.split_once('/')?;
        let name = rest.strip_prefix("base/")?;
        if version.is_empty() || name.is_empty() || name.contains('/') {
            return None;
        }
        let folder = &path[..path.len() - name.len()];
        Some(BaseRequest {
            folder,
            name,
            loop_like,
        })
    }

    fn starts_loop(&self) -> bool {
        self.loop_like && self.name == "files.txt"
    }
}

impl Downloads {
    /// The build to answer `request` from, given the current one; `None`
    /// when the request starts a loop that must wait for older loops on a
    /// build since replaced (ask again shortly).
    pub fn build_for(
        &self,
        current: &Arc<Build>,
        request: &BaseRequest,
        now: Instant,
    ) -> Option<Arc<Build>> {
        let mut pins = self.pins.lock().unwrap_or_else(|e| e.into_inner());
        pins.retain(|_, p| now.duration_since(p.last) < DOWNLOAD_IDLE);
        let Some(pin) = pins.get_mut(request.folder) else {
            if request.starts_loop() {
                if let Some(names) = listed(current, request.folder) {
                    let pin = Pin {
                        build: Arc::clone(current),
                        loops: vec![Loop::new(names)],
                        last: now,
                    };
                    pins.insert(request.folder.to_string(), pin);
                }
            }
            return Some(Arc::clone(current));
        };
        let build = Arc::clone(&pin.build);
        let again = request.starts_loop() && pin.loops.iter().any(Loop::at_its_index);
        if request.starts_loop() && !again {
            if !same_base(&build, current, request.folder) {
                return None;
            }
            pin.loops
                .extend(listed(&build, request.folder).map(Loop::new));
        } else if request.loop_like {
            let fetching =
                |l: &&mut Loop| l.pending.contains(request.name) && (!again || l.at_its_index());
            if let Some(l) = pin.loops.iter_mut().find(fetching) {
                l.pending.remove(request.name);
            }
            pin.loops.retain(|l| !l.pending.is_empty());
        }
        pin.last = now;
        if pin.loops.is_empty() {
            pins.remove(request.folder);
        }
        Some(build)
    }

    /// How many base folders are pinned now.
    #[cfg(test)]
    pub fn pinned(&self) -> usize {
        self.pins.lock().map_or(0, |p| p.len())
    }
}

/// The names `files.txt` of `folder` lists in `build`, as the shell splits
/// them, in order and once each.
fn listed(build: &Build, folder: &str) -> Option<Vec<String>> {
    let entry = build.get(&format!("{folder}files.txt"))?;
    let body = entry.served().body.clone();
    let mut names: Vec<String> = Vec::new();
    for name in String::from_utf8_lossy(&body).split_whitespace() {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    (!names.is_empty()).then_some(names)
}

/// Whether the base in `folder` is the same in two builds: `files.txt`
/// names every file and `SHA256SUMS` hashes each.
fn same_base(a: &Arc<Build>, b: &Arc<Build>, folder: &str) -> bool {
    if Arc::ptr_eq(a, b) {
        return true;
    }
    ["files.txt", "SHA256SUMS"].iter().all(|name| {
        let path = format!("{folder}{name}");
        match (a.get(&path), b.get(&path)) {
            (Some(x), Some(y)) => Arc::ptr_eq(x, y) || x.served().body == y.served().body,
            (None, None) => true,
            _ => false,
        }
    })
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

/// The errors of a build that was rendered all the same, as a box at the
/// top of each page: the writer sees the page and what keeps it from
/// being published.
pub struct Banner {
    /// The findings as the terminal shows them, without color.
    pub text: String,
    /// The box, cut where the findings of the page it is shown on go.
    head: String,
    tail: String,
    /// The findings located in each page's source, by the page's file
    /// (`/es/install/index.html`): their count and their text as HTML.
    pages: HashMap<String, (usize, String)>,
}

/// Inline styles only: the site's stylesheet is not ours to rely on, and
/// the box must read the same on every theme.
const PRE_STYLE: &str = "white-space: pre-wrap; overflow-x: auto; max-height: 50vh; \
     margin: 0.5rem 0 0; padding: 0.5rem; background: #fff; font: 13px/1.4 monospace;";

impl Banner {
    /// The box of `errors` errors, whose findings read `text`; `pages`
    /// gives the count and the text of the findings of a page, by its file.
    pub fn new(text: String, errors: usize, pages: HashMap<String, (usize, String)>) -> Self {
        let title = match errors {
            1 => "1 error".to_string(),
            n => format!("{n} errors"),
        };
        let head = format!(
            "<div id=\"basepress-findings\" role=\"alert\" lang=\"en\" dir=\"ltr\" style=\"\
             all: initial; display: block; position: relative; z-index: 2147483647; \
             box-sizing: border-box; margin: 0; padding: 0.75rem 1rem; \
             background: #fff4f4; color: #1b1b1b; border-bottom: 4px solid #b00020; \
             font: 15px/1.5 system-ui, sans-serif; text-align: start;\">\
             <strong style=\"color: #b00020;\">basepress serve: {title}.</strong> \
             <code>basepress build</code> refuses to publish the site until they are fixed; \
             this preview shows the pages as they are. Save a fix and the page reloads by itself."
        );
        let tail = format!(
            "<details style=\"margin-top: 0.5rem;\"><summary style=\"cursor: pointer;\">All the findings</summary>\
             <pre style=\"{PRE_STYLE}\">{}</pre></details></div>",
            crate::render::escape::escape(&text)
        );
        let pages = pages
            .into_iter()
            .map(|(file, (count, text))| (file, (count, crate::render::escape::escape(&text))))
            .collect();
        Banner {
            text,
            head,
            tail,
            pages,
        }
    }

    /// `html`, the page at site path `file`, with the box right after its
    /// `<body…>` tag (see [`box_at`]), the page's own findings open in it.
    pub fn onto(&self, file: &str, html: &[u8]) -> Bytes {
        let own = self.pages.get(file).map(|(count, text)| {
            let title = match count {
                1 => "1 finding on this page".to_string(),
                n => format!("{n} findings on this page"),
            };
            format!(
                "<details open style=\"margin-top: 0.5rem;\"><summary style=\"cursor: pointer;\">{title}</summary>\
                 <pre style=\"{PRE_STYLE}\">{text}</pre></details>"
            )
        });
        let own = own.unwrap_or_default();
        let at = box_at(html);
        let mut out =
            Vec::with_capacity(html.len() + self.head.len() + own.len() + self.tail.len());
        out.extend_from_slice(&html[..at]);
        out.extend_from_slice(self.head.as_bytes());
        out.extend_from_slice(own.as_bytes());
        out.extend_from_slice(self.tail.as_bytes());
        out.extend_from_slice(&html[at..]);
        Bytes::from(out)
    }
}

/// Where a box shown at the top of a page goes in `html`: right after the
/// `<body…>` tag (any case, attributes with `>` in quotes included), found
/// outside comments, scripts and styles; without one (it is optional in
/// HTML), after `</head>`, else after the `<html…>` tag, else after the
/// doctype, so that the page never falls into quirks mode.
pub fn box_at(html: &[u8]) -> usize {
    let lower = |at: usize, word: &[u8]| {
        html.get(at..at + word.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(word))
    };
    // A tag name ends at white space, `>` or `/`.
    let named = |at: usize, name: &[u8]| {
        lower(at, name)
            && matches!(
                html.get(at + name.len()),
                Some(b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c') | None
            )
    };
    // The end of the tag opened at `at`, past its `>`, minding quotes.
    let tag_end = |at: usize| {
        let mut quote = None;
        for (i, &b) in html.iter().enumerate().skip(at) {
            match (quote, b) {
                (Some(q), b) if b == q => quote = None,
                (None, b'"' | b'\'') => quote = Some(b),
                (None, b'>') => return i + 1,
                _ => {}
            }
        }
        html.len()
    };
    let find = |from: usize, what: &[u8]| {
        (from..html.len())
            .find(|&i| lower(i, what))
            .map_or(html.len(), |i| i + what.len())
    };
    let (mut head_end, mut html_end, mut doctype_end) = (None, None, None);
    let mut i = 0;
    while i < html.len() {
        if html[i] != b'<' {
            i += 1;
            continue;
        }
        if lower(i, b"<!--") {
            i = find(i + 4, b"-->");
        } else if lower(i, b"<!doctype") {
            i = tag_end(i);
            doctype_end.get_or_insert(i);
        } else if named(i + 1, b"script") || named(i + 1, b"style") {
            let close: &[u8] = if named(i + 1, b"script") {
                b"</script"
            } else {
                b"</style"
            };
            i = find(tag_end(i), close);
        } else if named(i + 1, b"body") {
            return tag_end(i);
        } else if named(i + 1, b"html") {
            i = tag_end(i);
            html_end.get_or_insert(i);
        } else if named(i, b"</head") {
            i = tag_end(i);
            head_end.get_or_insert(i);
        } else {
            i += 1;
        }
    }
    head_end.or(html_end).or(doctype_end).unwrap_or(0)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::packed::Packed;

    fn file(path: impl Into<String>, bytes: impl Into<Bytes>) -> (String, Body) {
        (path.into(), Body::Ready(bytes.into()))
    }

    #[test]
    fn a_request_during_the_first_build_waits_for_its_file_and_asks_for_it() {
        use crate::engine::session::Watch;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let partial = Arc::new(Partial::new(String::new()));
            let p = Arc::clone(&partial);
            let page = tokio::spawn(async move { p.wait_for("/en/").await });
            tokio::task::yield_now().await;
            // The waiting request asked the build for its page's file.
            assert_eq!(partial.wanted().as_deref(), Some("/en/index.html"));
            assert_eq!(partial.wanted(), None);
            partial.rendered("/en/other/index.html", &Body::Ready("other".into()));
            let home = Packed::new(&Bytes::from("<p>home</p>".repeat(100)));
            partial.rendered("/en/index.html", &Body::Packed(home));
            let entry = page.await.unwrap().expect("the page, once rendered");
            assert!(entry.served().body.starts_with(b"<p>home</p>"));
            // A file the build never renders: nothing, once it ends.
            let p = Arc::clone(&partial);
            let missing = tokio::spawn(async move { p.wait_for("/nowhere").await });
            tokio::task::yield_now().await;
            drop(FinishOnDrop(Arc::clone(&partial)));
            assert!(missing.await.unwrap().is_none());
            partial.ended().await;
        });
    }

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
    fn folders_resolve_to_their_index_or_redirect() {
        let files = vec![
            file("/index.html", "root"),
            file("/es/install/index.html", "<body></body>"),
            file("/kubernetes/v1.0.0/base/files.txt", "a\n"),
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
            vec![file("/a.txt", "a"), file("/b.txt", "b")],
            String::new(),
            None,
        );
        let before = Arc::clone(a.get("/a.txt").unwrap());
        let (b, changed) = Build::new(
            vec![file("/a.txt", "a"), file("/c.txt", "c")],
            String::new(),
            Some(&a),
        );
        assert_eq!(changed, 2, "c added, b removed");
        assert!(Arc::ptr_eq(&before, b.get("/a.txt").unwrap()));
    }

    #[test]
    fn a_packed_page_is_served_unpacked_and_equals_its_bytes() {
        let text = format!("<body>{}</body>", "<p>página</p>".repeat(200));
        let html = Bytes::from(text.clone());
        let packed = Body::Packed(Packed::new(&html));
        let (a, _) = Build::new(
            vec![("/es/index.html".into(), packed.clone())],
            String::new(),
            None,
        );
        let entry = a.get("/es/index.html").unwrap();
        assert_eq!(entry.served().body[..], inject_reload(&html)[..]);
        // The same bytes, packed again or not packed, are no change.
        let kept = Arc::clone(entry);
        let again = Body::Packed(Packed::new(&html));
        let (b, changed) = a.with_changes(vec![("/es/index.html".into(), again)]);
        assert_eq!(changed, 0);
        assert!(Arc::ptr_eq(&kept, b.get("/es/index.html").unwrap()));
        let (c, changed) = Build::new(
            vec![("/es/index.html".into(), Body::Ready(html.clone()))],
            String::new(),
            Some(&b),
        );
        assert_eq!(changed, 0);
        assert!(Arc::ptr_eq(&kept, c.get("/es/index.html").unwrap()));
        let edited = Bytes::from(format!("{text}<p>más</p>"));
        let (_, changed) = c.with_changes(vec![(
            "/es/index.html".into(),
            Body::Packed(Packed::new(&edited)),
        )]);
        assert_eq!(changed, 1);
    }

    #[test]
    fn a_full_rebuild_of_the_same_inputs_changes_nothing() {
        use crate::engine::session::{Output, Session};
        let root = env!("CARGO_MANIFEST_DIR");
        let mut session = Session::new(root, crate::engine::Options::default());
        let mut full = || match session.rebuild(None).output {
            Output::Full(files) => files,
            _ => panic!("the repository builds"),
        };
        let first = full();
        assert!(first.iter().any(|(_, b)| matches!(b, Body::Search(_))));
        let (a, _) = Build::new(first, String::new(), None);
        // A search bundle made in between is kept, made.
        let search = a.searches.keys().next().expect("a search bundle").clone();
        let made = a.searches[&search].make().len();
        assert!(made > 0);
        let (b, changed) = Build::new(full(), String::new(), Some(&a));
        assert_eq!(changed, 0, "nothing to reload");
        assert!(Arc::ptr_eq(&a.searches[&search], &b.searches[&search]));
        assert!(b.searches[&search].entries.get().is_some());
    }

    #[test]
    fn changes_replace_only_the_files_that_differ() {
        let (a, _) = Build::new(
            vec![file("/a.txt", "a"), file("/b.txt", "b")],
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

    fn base_build(config: &str) -> Arc<Build> {
        let dir = "/kubernetes/v1.0.0/base/";
        let sums = format!(
            "{}  config.env\n",
            crate::model::site::sha256_hex(config.as_bytes())
        );
        let files = vec![
            file(format!("{dir}files.txt"), "SHA256SUMS\nconfig.env\n"),
            file(format!("{dir}SHA256SUMS"), sums),
            file(format!("{dir}config.env"), config.to_string()),
            file("/index.html", "<body></body>"),
        ];
        Arc::new(Build::new(files, String::new(), None).0)
    }

    fn req(name: &str) -> BaseRequest<'_> {
        BaseRequest {
            folder: "/kubernetes/v1.0.0/base/",
            name,
            loop_like: true,
        }
    }

    #[test]
    fn base_requests_are_recognised() {
        let r = BaseRequest::parse("/kubernetes/v1.0.0/base/files.txt", true).unwrap();
        assert_eq!(
            (r.folder, r.name),
            ("/kubernetes/v1.0.0/base/", "files.txt")
        );
        assert!(BaseRequest::parse("/kubernetes/v1.0.0/base/", true).is_none());
        assert!(BaseRequest::parse("/kubernetes/versions.json", true).is_none());
        assert!(BaseRequest::parse("/kubernetes/v1.0.0/base/a/b", true).is_none());
        assert!(BaseRequest::parse("/es/kubernetes/v1.0.0/base/x", true).is_none());
    }

    #[test]
    fn a_loop_finishes_on_the_build_it_started_on() {
        let downloads = Downloads::default();
        let old = base_build("MODE=a\n");
        let new = base_build("MODE=b\n");
        let t = Instant::now();
        let got = downloads.build_for(&old, &req("files.txt"), t).unwrap();
        assert!(Arc::ptr_eq(&got, &old));
        // A rebuild: the rest of the loop still comes from `old`.
        let got = downloads.build_for(&new, &req("SHA256SUMS"), t).unwrap();
        assert!(Arc::ptr_eq(&got, &old));
        // A second loop starting now waits for the first.
        assert!(downloads.build_for(&new, &req("files.txt"), t).is_none());
        let got = downloads.build_for(&new, &req("config.env"), t).unwrap();
        assert!(Arc::ptr_eq(&got, &old));
        assert_eq!(downloads.pinned(), 0, "every name fetched: the pin ends");
        let got = downloads.build_for(&new, &req("files.txt"), t).unwrap();
        assert!(Arc::ptr_eq(&got, &new));
        // A loop that stops half-way holds its build only for a while.
        let later = t + DOWNLOAD_IDLE + Duration::from_millis(1);
        let newer = base_build("MODE=c\n");
        let got = downloads
            .build_for(&newer, &req("files.txt"), later)
            .unwrap();
        assert!(Arc::ptr_eq(&got, &newer));
    }

    #[test]
    fn loops_on_the_same_base_share_a_pin_and_browsers_do_not_pin() {
        let downloads = Downloads::default();
        let a = base_build("MODE=a\n");
        let same = base_build("MODE=a\n");
        let t = Instant::now();
        downloads.build_for(&a, &req("files.txt"), t).unwrap();
        // A rebuild that leaves the base as it was does not hold loops up.
        let got = downloads.build_for(&same, &req("files.txt"), t).unwrap();
        assert!(Arc::ptr_eq(&got, &a));
        for name in ["SHA256SUMS", "config.env", "SHA256SUMS", "config.env"] {
            downloads.build_for(&same, &req(name), t).unwrap();
        }
        assert_eq!(downloads.pinned(), 0);
        let browser = BaseRequest {
            loop_like: false,
            ..req("files.txt")
        };
        downloads.build_for(&a, &browser, t).unwrap();
        assert_eq!(downloads.pinned(), 0);
    }

    #[test]
    fn the_error_page_escapes_findings() {
        let page = ErrorPage::new("error: <script>alert(1)</script> & \"x\"".into());
        let body = String::from_utf8(page.body.to_vec()).unwrap();
        assert!(body.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"));
        assert!(!body.contains("<script>alert"));
        assert!(body.contains(RELOAD_TAG));
    }

    proptest::proptest! {
        /// Any bytes get a place for the box, inside them, after a body
        /// tag when they hold one outside comments and scripts.
        #[test]
        fn any_page_has_a_place_for_the_box(html in proptest::collection::vec(proptest::sample::select(b"<>!-/\"'bodyscriptehal x".to_vec()), 0..60)) {
            let at = box_at(&html);
            proptest::prop_assert!(at <= html.len());
        }
    }

    #[test]
    fn the_findings_box_opens_the_body_and_escapes_them() {
        let pages = HashMap::from([(
            "/es/index.html".to_string(),
            (1, "error[link-broken]: <mine>".to_string()),
        )]);
        let banner = Banner::new("error[link-broken]: <a> & \"b\"".into(), 2, pages);
        let boxed = |html: &str| {
            String::from_utf8(banner.onto("/en/index.html", html.as_bytes()).to_vec()).unwrap()
        };
        let own = String::from_utf8(banner.onto("/es/index.html", b"<body>").to_vec()).unwrap();
        assert!(
            own.contains("1 finding on this page") && own.contains("&lt;mine&gt;"),
            "{own}"
        );
        assert!(!boxed("<body>").contains("on this page"));
        let out =
            boxed("<html><head><title>t</title></head><BODY class=\"x\"><p>page</p></body></html>");
        let at = out.find("<div id=\"basepress-findings\"").unwrap();
        assert_eq!(
            &out[..at],
            "<html><head><title>t</title></head><BODY class=\"x\">"
        );
        assert!(out.ends_with("</div><p>page</p></body></html>"), "{out}");
        assert!(out.contains("2 errors"));
        assert!(out.contains("&lt;a&gt; &amp; &quot;b&quot;"), "{out}");
        assert!(!out.contains("<a>"));
        // `<bodyguard>` is no body tag; without one the box comes first.
        let out = boxed("<p><bodyguard>x</bodyguard></p>");
        assert!(out.starts_with("<div id=\"basepress-findings\""), "{out}");
        assert!(out.ends_with("<p><bodyguard>x</bodyguard></p>"));
        // Where the box goes: `|` marks it.
        for (html, expected) in [
            ("<!doctype html><html><head><script>var t = \"<body class='x'>\";</script><!-- <body> --><style>p::after{content:'<body>'}</style></head><bodyx><body data-x=\"a>b\">t</body>",
             "<!doctype html><html><head><script>var t = \"<body class='x'>\";</script><!-- <body> --><style>p::after{content:'<body>'}</style></head><bodyx><body data-x=\"a>b\">|t</body>"),
            ("<!DOCTYPE html>\n<html lang=\"en\"><head><title>t</title></head><p>no body</p>",
             "<!DOCTYPE html>\n<html lang=\"en\"><head><title>t</title></head>|<p>no body</p>"),
            ("<!doctype html><html><p>x</p>", "<!doctype html><html>|<p>x</p>"),
            ("<!doctype html><p>x</p>", "<!doctype html>|<p>x</p>"),
            ("<body>", "<body>|"),
            ("<!-- never closed <body>", "|<!-- never closed <body>"),
        ] {
            let at = box_at(html.as_bytes());
            assert_eq!(format!("{}|{}", &html[..at], &html[at..]), expected);
        }
        assert!(Banner::new(String::new(), 1, HashMap::new())
            .head
            .contains(": 1 error."));
    }
}
