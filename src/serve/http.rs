//! HTTP: the site's files from memory, the live-reload script and its
//! event stream.

use super::snapshot::{self, Build, Found, Snapshot, EVENTS_PATH, RELOAD_SCRIPT_PATH};
use super::App;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode, Uri};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use futures_util::stream::Stream;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::broadcast::error::RecvError;

/// The longest request path accepted, in bytes as sent.
pub const MAX_PATH_BYTES: usize = 2048;

/// The script served pages load: it reloads the page when the server says
/// the site changed, and after a reconnection to a server that rebuilt (or
/// restarted) in the meantime. A page the reader leaves closes its
/// connection (a browser keeps left pages for going back, and allows six
/// connections to a host: the seventh page would wait for one), and opens
/// it again when the reader comes back to it.
const RELOAD_JS: &str = r#"// basepress serve: reloads the page when the site is rebuilt.
(function () {
  var seen = null;
  var source = null;
  function listen() {
    source = new EventSource("/__basepress/events");
    source.addEventListener("hello", function (e) {
      if (seen !== null && seen !== e.data) location.reload();
      seen = e.data;
    });
    source.addEventListener("reload", function () {
      location.reload();
    });
  }
  addEventListener("pagehide", function () {
    if (source) source.close();
    source = null;
  });
  addEventListener("pageshow", function () {
    if (!source) listen();
  });
  listen();
})();
"#;

pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route(EVENTS_PATH, get(events))
        .route(RELOAD_SCRIPT_PATH, get(reload_js))
        .fallback(site_file)
        .with_state(app)
}

async fn reload_js(headers: HeaderMap) -> Response {
    let body = Bytes::from_static(RELOAD_JS.as_bytes());
    let etag = snapshot::etag(&body);
    file_response(
        &headers,
        false,
        "application/javascript; charset=utf-8",
        body,
        &etag,
    )
}

/// `/__basepress/events`: a `hello` event with the current generation, then
/// a `reload` event after every rebuild that changes what browsers show.
async fn events(State(app): State<Arc<App>>) -> impl IntoResponse {
    // Subscribe before reading the generation, so no rebuild falls between.
    let reloads = app.reloads.subscribe();
    let hello = app.snapshot().generation.clone();
    let shutdown = app.shutdown.subscribe();
    let stream = event_stream(hello, reloads, shutdown);
    Sse::new(stream).keep_alive(KeepAlive::default())
}

fn event_stream(
    hello: String,
    reloads: tokio::sync::broadcast::Receiver<String>,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    futures_util::stream::unfold(
        (Some(hello), reloads, shutdown),
        |(hello, mut reloads, mut shutdown)| async move {
            if let Some(g) = hello {
                let e = Event::default().event("hello").data(g);
                return Some((Ok(e), (None, reloads, shutdown)));
            }
            let generation = tokio::select! {
                r = reloads.recv() => match r {
                    Ok(g) => g,
                    // Missed some: the page is stale either way.
                    Err(RecvError::Lagged(_)) => "lagged".to_string(),
                    Err(RecvError::Closed) => return None,
                },
                _ = shutdown.wait_for(|stop| *stop) => return None,
            };
            let e = Event::default().event("reload").data(generation);
            Some((Ok(e), (None, reloads, shutdown)))
        },
    )
}

/// Why a request path is refused before any look-up.
#[derive(Debug, PartialEq, Eq)]
pub enum BadPath {
    TooLong,
    NotAbsolute,
    BadEscape,
    NotUtf8,
    /// A control character (NUL included) or a backslash.
    BadCharacter,
    /// A `.` or `..` segment, written or percent-encoded.
    DotSegment,
}

/// The decoded site path of a request path (`/es/inst%C3%A1lar/` →
/// `/es/instálar/`), refusing anything that could mean a different file
/// on another server or operating system: dot segments however written,
/// backslashes, control characters, bad escapes and overlong paths.
pub fn site_path(raw: &str) -> Result<String, BadPath> {
    if raw.len() > MAX_PATH_BYTES {
        return Err(BadPath::TooLong);
    }
    if !raw.starts_with('/') {
        return Err(BadPath::NotAbsolute);
    }
    let mut bytes = Vec::with_capacity(raw.len());
    let mut it = raw.bytes();
    while let Some(b) = it.next() {
        if b == b'%' {
            let hi = it.next().and_then(hex).ok_or(BadPath::BadEscape)?;
            let lo = it.next().and_then(hex).ok_or(BadPath::BadEscape)?;
            bytes.push(hi << 4 | lo);
        } else {
            bytes.push(b);
        }
    }
    let path = String::from_utf8(bytes).map_err(|_| BadPath::NotUtf8)?;
    if path.chars().any(|c| c.is_control() || c == '\\') {
        return Err(BadPath::BadCharacter);
    }
    if path.split('/').any(|seg| seg == "." || seg == "..") {
        return Err(BadPath::DotSegment);
    }
    Ok(path)
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Every other path: a file of the site, from memory.
async fn site_file(
    State(app): State<Arc<App>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let head = method == Method::HEAD;
    if method != Method::GET && !head {
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD\n");
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    let path = match site_path(uri.path()) {
        Ok(p) => p,
        Err(_) => return plain(StatusCode::BAD_REQUEST, "bad request path\n"),
    };
    let mut snapshot = app.snapshot();
    // The first build is rendering: its files as they come.
    while let Some(partial) = snapshot.partial.clone() {
        let wanted = match below_prefix(&partial.prefix, &path) {
            None if path == "/" || path == partial.prefix => {
                return redirect(&format!("{}/", partial.prefix), uri.query());
            }
            // Outside the site, or a base's file (one build serves a whole
            // download loop, see `base_download`): the finished build
            // answers.
            None => None,
            Some(rel) if snapshot::BaseRequest::parse(rel, false).is_some() => None,
            Some(rel) => Some(rel),
        };
        match wanted {
            Some(rel) => {
                if let Some(entry) = partial.wait_for(rel).await {
                    let served = entry.served();
                    return file_response(
                        &headers,
                        head,
                        entry.content_type(),
                        served.body.clone(),
                        &served.etag,
                    );
                }
            }
            None => partial.ended().await,
        }
        // The build ended: it answers as any build (one that ended without
        // leaving a snapshot has nothing to serve).
        snapshot = app.snapshot();
        if snapshot
            .partial
            .as_ref()
            .is_some_and(|p| Arc::ptr_eq(p, &partial))
        {
            return plain(StatusCode::NOT_FOUND, "not found\n");
        }
    }
    let Some(build) = snapshot.build.as_deref() else {
        // No build has succeeded yet.
        return match &snapshot.error {
            Some(_) if wants_html(&path, &headers) => error_page(&snapshot, head),
            _ => plain(StatusCode::NOT_FOUND, "not found\n"),
        };
    };
    let Some(rel) = below_prefix(&build.prefix, &path) else {
        if path == "/" || path == build.prefix {
            return redirect(&format!("{}/", build.prefix), uri.query());
        }
        if snapshot.error.is_some() && wants_html(&path, &headers) {
            return error_page(&snapshot, head);
        }
        return not_found(build, snapshot.banner.as_deref(), head);
    };
    let pinned = base_download(&app, rel, &method, &headers).await;
    let build = pinned.as_deref().unwrap_or(build);
    if let Some(search) = build.pending_search(rel) {
        // A search bundle made on first request: off the threads that
        // answer requests.
        let _ = tokio::task::spawn_blocking(move || {
            search.make();
        })
        .await;
    }
    match build.lookup(rel) {
        Found::File(entry) => {
            if entry.is_html() && snapshot.error.is_some() {
                return error_page(&snapshot, head);
            }
            if !entry.is_ready() {
                // A search index made on first request: off the threads
                // that answer requests.
                let e = Arc::clone(entry);
                let _ = tokio::task::spawn_blocking(move || {
                    e.served();
                })
                .await;
            }
            let served = entry.served();
            if let Some(banner) = snapshot.banner.as_deref().filter(|_| entry.is_html()) {
                // The page's file: a folder's is its index.html.
                let file = match rel.ends_with('/') {
                    true => format!("{rel}index.html"),
                    false => rel.to_string(),
                };
                let body = banner.onto(&file, &served.body);
                let etag = snapshot::etag(&body);
                return file_response(&headers, head, entry.content_type(), body, &etag);
            }
            file_response(
                &headers,
                head,
                entry.content_type(),
                served.body.clone(),
                &served.etag,
            )
        }
        Found::Redirect(to) => redirect(&format!("{}{to}", build.prefix), uri.query()),
        Found::Missing => {
            if snapshot.error.is_some() && wants_html(&path, &headers) {
                error_page(&snapshot, head)
            } else {
                not_found(build, snapshot.banner.as_deref(), head)
            }
        }
    }
}

/// For a file of a base folder (`/kubernetes/vX.Y.Z/base/NAME`, below the
/// prefix): the build a download loop in progress must get it from (see
/// [`snapshot::Downloads`]), waiting while older loops finish when the
/// request starts a loop; `None` for any other path.
async fn base_download(
    app: &App,
    rel: &str,
    method: &Method,
    headers: &HeaderMap,
) -> Option<Arc<Build>> {
    let browser = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/html"));
    let request = snapshot::BaseRequest::parse(rel, *method == Method::GET && !browser)?;
    let give_up = Instant::now() + snapshot::DOWNLOAD_IDLE * 2;
    loop {
        let current = app.snapshot().build.clone()?;
        let now = Instant::now();
        if let Some(build) = app.downloads.build_for(&current, &request, now) {
            return Some(build);
        }
        if now > give_up {
            return Some(current);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// `path` below the site's prefix (`/docs/es/` → `/es/`), or `None` when
/// it is outside it.
fn below_prefix<'a>(prefix: &str, path: &'a str) -> Option<&'a str> {
    if prefix.is_empty() {
        return Some(path);
    }
    path.strip_prefix(prefix)
        .filter(|rest| rest.starts_with('/'))
}

/// Whether a request is for a page, so that it gets the error page while
/// the build fails.
fn wants_html(path: &str, headers: &HeaderMap) -> bool {
    path.ends_with('/')
        || path.ends_with(".html")
        || headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("text/html"))
}

/// A file, or `304 Not Modified` when the client has it already.
fn file_response(
    headers: &HeaderMap,
    head: bool,
    content_type: &'static str,
    body: Bytes,
    etag: &str,
) -> Response {
    let etag_value = HeaderValue::from_str(etag).expect("an ETag is ASCII");
    let fresh = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| if_none_match(v, etag));
    let mut builder = Response::builder()
        .header(header::ETAG, etag_value)
        .header(header::CACHE_CONTROL, "no-cache");
    if fresh {
        return builder
            .status(StatusCode::NOT_MODIFIED)
            .body(Body::empty())
            .expect("a valid response");
    }
    builder = builder
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, content_type)
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    with_body(builder, body, head)
}

/// Whether an `If-None-Match` value matches `etag` (weak comparison, as
/// RFC 9110 asks for this header).
fn if_none_match(value: &str, etag: &str) -> bool {
    value.split(',').map(str::trim).any(|tag| {
        tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag.trim_start_matches("W/")
    })
}

/// Sets the body, or only its length for `HEAD`.
fn with_body(builder: axum::http::response::Builder, body: Bytes, head: bool) -> Response {
    let builder = builder.header(header::CONTENT_LENGTH, body.len());
    let body = if head {
        Body::empty()
    } else {
        Body::from(body)
    };
    builder.body(body).expect("a valid response")
}

/// `404 Not Found` with the site's 404 page, so `curl -f` fails as the
/// download instructions promise and browsers show the site's own page.
/// While the build has findings to show, the page carries them.
fn not_found(build: &Build, banner: Option<&snapshot::Banner>, head: bool) -> Response {
    let Some(entry) = build.get("/404.html") else {
        return plain(StatusCode::NOT_FOUND, "not found\n");
    };
    let served = entry.served();
    let body = match banner.filter(|_| entry.is_html()) {
        Some(banner) => banner.onto("/404.html", &served.body),
        None => served.body.clone(),
    };
    let builder = Response::builder()
        .status(StatusCode::NOT_FOUND)
        .header(header::CONTENT_TYPE, entry.content_type())
        .header(header::CACHE_CONTROL, "no-cache")
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    with_body(builder, body, head)
}

/// The findings of the failed build, for a page request.
fn error_page(snapshot: &Snapshot, head: bool) -> Response {
    let body = snapshot
        .error
        .as_ref()
        .map(|e| e.body.clone())
        .unwrap_or_default();
    let builder = Response::builder()
        .status(StatusCode::INTERNAL_SERVER_ERROR)
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .header(header::CACHE_CONTROL, "no-store")
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    with_body(builder, body, head)
}

fn redirect(to: &str, query: Option<&str>) -> Response {
    let location = match query {
        Some(q) => format!("{}?{q}", encode_path(to)),
        None => encode_path(to),
    };
    Response::builder()
        .status(StatusCode::FOUND)
        .header(header::LOCATION, location)
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::empty())
        .expect("a valid response")
}

/// Percent-encodes what may not appear as is in a `Location` path.
fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    let builder = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header(header::CACHE_CONTROL, "no-cache");
    with_body(builder, Bytes::from_static(text.as_bytes()), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_decode_and_refuse_what_could_escape() {
        assert_eq!(site_path("/es/inst%C3%A1lar/").unwrap(), "/es/instálar/");
        assert_eq!(site_path("/a%20b.txt").unwrap(), "/a b.txt");
        assert_eq!(site_path("//etc/passwd").unwrap(), "//etc/passwd");
        for (raw, why) in [
            ("/../site.yaml", BadPath::DotSegment),
            ("/%2e%2e/site.yaml", BadPath::DotSegment),
            ("/%2E%2E%2Fsite.yaml", BadPath::DotSegment),
            ("/es/..%2f..%2fsite.yaml", BadPath::DotSegment),
            ("/es/./x", BadPath::DotSegment),
            ("/..", BadPath::DotSegment),
            ("/..\\site.yaml", BadPath::BadCharacter),
            ("/%5c..%5csite.yaml", BadPath::BadCharacter),
            ("/a%00.html", BadPath::BadCharacter),
            ("/a%0a", BadPath::BadCharacter),
            ("/a%2", BadPath::BadEscape),
            ("/a%zz", BadPath::BadEscape),
            ("/%ff", BadPath::NotUtf8),
            ("/%c0%ae%c0%ae/site.yaml", BadPath::NotUtf8),
            ("site.yaml", BadPath::NotAbsolute),
        ] {
            assert_eq!(site_path(raw), Err(why), "{raw}");
        }
        assert_eq!(
            site_path(&format!("/{}", "a".repeat(MAX_PATH_BYTES))),
            Err(BadPath::TooLong)
        );
    }

    #[test]
    fn if_none_match_compares_weakly() {
        let etag = "\"abc\"";
        assert!(if_none_match("\"abc\"", etag));
        assert!(if_none_match("W/\"abc\"", etag));
        assert!(if_none_match("\"x\", \"abc\"", etag));
        assert!(if_none_match("*", etag));
        assert!(!if_none_match("\"abd\"", etag));
    }

    #[test]
    fn prefixes_and_redirects() {
        assert_eq!(below_prefix("", "/es/"), Some("/es/"));
        assert_eq!(below_prefix("/docs", "/docs/es/"), Some("/es/"));
        assert_eq!(below_prefix("/docs", "/docsx/"), None);
        assert_eq!(below_prefix("/docs", "/docs"), None);
        assert_eq!(encode_path("/es/instálar/"), "/es/inst%C3%A1lar/");
    }
}
