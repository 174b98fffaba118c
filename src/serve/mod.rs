//! `basepress serve`: a preview server for a docs project.
//!
//! The site is rendered in memory by the engine's
//! [`Session`](crate::engine::session::Session), with the same stages as a
//! build, and served from there, so the project's `site/` is never
//! touched. The inputs are watched ([`watch`]); a change rebuilds the site
//! (a page's text alone is checked and rendered again by itself) and tells
//! every open page, over
//! Server-Sent Events, to reload. A failed build keeps the
//! server up: pages show the findings until they are fixed, and other
//! files are served from the last good build.

mod host;
mod http;
mod net;
mod range;
mod snapshot;
mod watch;

use crate::engine::session::{Output, Session};
use crate::{diagnostics, report};
use snapshot::{Build, ErrorPage, Snapshot};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;
use tokio::sync::{broadcast, watch as signal};

/// The first port tried when none is given.
pub const DEFAULT_PORT: u16 = 1111;
/// How many ports from [`DEFAULT_PORT`] are tried before giving up.
pub const PORTS_TRIED: u16 = 20;

/// How to serve.
#[derive(Debug, Clone)]
pub struct Options {
    /// The docs project (the folder with site.yaml).
    pub root: PathBuf,
    /// The address to listen on.
    pub bind: IpAddr,
    /// The port; `None` tries [`DEFAULT_PORT`] and the next ones until one
    /// is free, `Some(0)` lets the system choose.
    pub port: Option<u16>,
    /// Settings of every build.
    pub build: crate::engine::Options,
    /// Whether findings printed to the terminal are coloured.
    pub color: bool,
    /// Names requests may give as `Host` besides the address listened on
    /// (and `localhost` on loopback): `--allow-host`.
    pub allow_hosts: Vec<String>,
}

/// Builds the site, serves it and rebuilds it on changes until Ctrl-C.
/// Fails only when the server cannot start.
pub fn run(mut options: Options) -> anyhow::Result<()> {
    // The watcher's events name absolute paths: a relative root (`.`, the
    // default) would match none of them, and no edit would be seen.
    options.root = std::path::absolute(&options.root)
        .map_err(|e| anyhow::anyhow!("cannot find {}: {e}", options.root.display()))?;
    let listener = bind(options.bind, options.port)?;
    let addr = listener.local_addr()?;
    let prefix = prefix_of(&options.root);
    // A writer sees the pages of a project with errors, with its findings.
    options.build.preview = true;
    let app = Arc::new(App::new(
        options.root.clone(),
        prefix.clone(),
        options.build.clone(),
        options.color,
    ));
    // Watching starts first, so no change made during the first build is
    // missed.
    let _watch = watch::start(Arc::clone(&app))
        .map_err(|e| anyhow::anyhow!("cannot watch {}: {e}", options.root.display()))?;
    // The first build runs while the server answers: a request waits for
    // its page, which the build renders next.
    let first = {
        let app = Arc::clone(&app);
        std::thread::Builder::new()
            .name("basepress-first-build".into())
            .spawn(move || app.rebuild(None, None))?
    };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("basepress-serve")
        .build()?;
    let hosts = announce(addr, &prefix, &options.allow_hosts);
    eprintln!(
        "watching {} for changes to site.yaml, the image data and {}/",
        options.root.display(),
        crate::load::INPUT_DIRS.join("/, ")
    );
    runtime.block_on(serve(listener, app, hosts))?;
    let _ = first.join();
    eprintln!("stopped");
    Ok(())
}

/// Prints where the site is served and, beyond loopback, a warning with
/// the addresses to open; returns the hosts requests may name.
fn announce(addr: SocketAddr, prefix: &str, allow: &[String]) -> host::AllowedHosts {
    let interfaces = if addr.ip().is_unspecified() {
        net::interface_addresses().unwrap_or_else(|e| {
            eprintln!(
                "warning: cannot list this machine's addresses ({e}): only loopback and --allow-host names are answered"
            );
            Vec::new()
        })
    } else {
        Vec::new()
    };
    let (out, warnings) = announcement(addr, prefix, &interfaces, allow);
    for w in warnings {
        eprintln!("{w}");
    }
    for line in out {
        println!("{line}");
    }
    host::AllowedHosts::new(addr, &interfaces, allow)
}

/// What [`announce`] prints: the lines for stdout (the first one names a
/// URL that works on this machine: loopback when listening on every
/// address) and the warnings.
fn announcement(
    addr: SocketAddr,
    prefix: &str,
    interfaces: &[IpAddr],
    allow: &[String],
) -> (Vec<String>, Vec<String>) {
    let mut warnings = Vec::new();
    if !addr.ip().is_loopback() {
        let what = if addr.ip().is_unspecified() {
            format!("every address of this machine ({})", url(addr))
        } else {
            url(addr)
        };
        warnings.push(format!(
            "warning: listening on {what}: anyone who can reach it can read the preview, drafts and build findings included, with no password; --bind 127.0.0.1 keeps it on this machine"
        ));
    }
    if !allow.is_empty() {
        warnings.push(format!("answering also to the names: {}", allow.join(", ")));
    }
    let mut out = Vec::new();
    for (i, a) in net::reachable(addr, interfaces).into_iter().enumerate() {
        out.push(if i == 0 {
            format!("serving {}{prefix}/ (Ctrl-C to stop)", url(a))
        } else {
            format!("also at {}{prefix}/", url(a))
        });
    }
    (out, warnings)
}

fn url(addr: SocketAddr) -> String {
    match addr.ip() {
        IpAddr::V6(ip) => format!("http://[{ip}]:{}", addr.port()),
        IpAddr::V4(ip) => format!("http://{ip}:{}", addr.port()),
    }
}

/// Listens on `port`, or on the first free port from [`DEFAULT_PORT`].
fn bind(ip: IpAddr, port: Option<u16>) -> anyhow::Result<TcpListener> {
    match port {
        Some(p) => net::listen(SocketAddr::new(ip, p))
            .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", SocketAddr::new(ip, p))),
        None => bind_first_free(ip, DEFAULT_PORT, PORTS_TRIED),
    }
}

/// Listens on the first port from `first` (of `tries`) that is free.
fn bind_first_free(ip: IpAddr, first: u16, tries: u16) -> anyhow::Result<TcpListener> {
    let last = first.saturating_add(tries - 1);
    for p in first..=last {
        match net::listen(SocketAddr::new(ip, p)) {
            Ok(l) => return Ok(l),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => continue,
            Err(e) => {
                return Err(anyhow::anyhow!(
                    "cannot listen on {}: {e}",
                    SocketAddr::new(ip, p)
                ))
            }
        }
    }
    Err(anyhow::anyhow!(
        "ports {first} to {last} on {ip} are all in use; choose one with --port"
    ))
}

async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    hosts: host::AllowedHosts,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    // The host check runs first, before any page or error is looked at.
    let router = http::router(Arc::clone(&app))
        .layer(axum::middleware::from_fn(range::ranges))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(hosts),
            host::guard,
        ));
    let stopping = Arc::clone(&app);
    tokio::spawn(async move {
        shutdown_signal().await;
        eprintln!("stopping…");
        // Ends the event streams, which would otherwise keep their
        // connections open forever, and the server.
        let _ = stopping.shutdown.send(true);
    });
    net::serve(listener, router, net::LIMITS, app.shutdown.subscribe()).await;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}

/// The path below the host that the site of `root` is served at.
fn prefix_of(root: &Path) -> String {
    crate::load::config::load(root)
        .map(|c| c.path_prefix())
        .unwrap_or_default()
}

/// The server's state, shared by the HTTP handlers and the watcher.
pub(crate) struct App {
    root: PathBuf,
    current: RwLock<Arc<Snapshot>>,
    /// Tells the event streams a rebuild changed the site (the new
    /// generation).
    reloads: broadcast::Sender<String>,
    shutdown: signal::Sender<bool>,
    /// Distinguishes this server's generations from a previous run's.
    run_id: u64,
    builds: AtomicU64,
    /// What the last build loaded, checked and rendered, for the next one
    /// to redo only what a change reaches. Held for a whole rebuild: one
    /// runs at a time.
    session: Mutex<Session>,
    /// The findings printed last, not to repeat them at every rebuild.
    printed: Mutex<String>,
    /// Download loops in progress, each served from one build.
    downloads: snapshot::Downloads,
    color: bool,
}

impl App {
    /// The server of the project at `root`, whose site is served below
    /// `prefix` (see [`prefix_of`]).
    fn new(root: PathBuf, prefix: String, build: crate::engine::Options, color: bool) -> Self {
        let run_id = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        App {
            session: Mutex::new(Session::new(root.clone(), build)),
            root,
            current: RwLock::new(Arc::new(Snapshot {
                build: None,
                // Until the first build ends.
                partial: Some(Arc::new(snapshot::Partial::new(prefix))),
                error: None,
                banner: None,
                generation: format!("{run_id}-0"),
            })),
            reloads: broadcast::channel(16).0,
            shutdown: signal::channel(false).0,
            run_id,
            builds: AtomicU64::new(0),
            printed: Mutex::new(String::new()),
            downloads: snapshot::Downloads::default(),
            color,
        }
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Renders the site again and, when what browsers see changed, swaps it
    /// in and tells the open pages. `changed` lists the inputs whose bytes
    /// changed, when known (a page's body alone takes the fast path);
    /// `since` is when the change was first seen, for the timing printed.
    fn rebuild(&self, changed: Option<&[PathBuf]>, since: Option<Instant>) {
        // One build at a time, from rendering to the swap, so that an older
        // build never replaces a newer one.
        let mut session = self.session.lock().unwrap_or_else(|e| e.into_inner());
        let start = Instant::now();
        // What is served now: only a rebuild replaces it, and one runs at a
        // time. For the first build it is the partial snapshot, whose files
        // are served as they render, so the first pages show long before
        // the whole site is done.
        let current = self.snapshot();
        let partial = current.partial.clone();
        let _finished = partial
            .as_ref()
            .map(|p| snapshot::FinishOnDrop(Arc::clone(p)));
        let watch = partial
            .as_deref()
            .map(|p| p as &dyn crate::engine::session::Watch);
        let rebuilt = session.rebuild_watched(changed, watch);
        let outcome = rebuilt.outcome;
        let took = start.elapsed();
        let since = since.map(|s| s.elapsed());
        let timing = match since {
            Some(s) => format!(
                "{} ms ({} ms after the change)",
                took.as_millis(),
                s.as_millis()
            ),
            None => format!("{} ms", took.as_millis()),
        };
        let pages = outcome.written.as_ref().map_or(0, |w| w.pages);
        let built = match rebuilt.output {
            Output::Full(files) => {
                let prefix = prefix_of(&self.root);
                let previous = current.build.as_deref();
                let same_prefix = previous.is_none_or(|b| b.prefix == prefix);
                let (build, changed) = Build::new(files, prefix, previous.filter(|_| same_prefix));
                let reused = session.cache_hits();
                let report = format!(
                    "{} files in {timing}: {changed} changed; {reused} of {pages} pages reused",
                    build.file_count()
                );
                Some((build, changed, report))
            }
            Output::Changed(files) => {
                let (build, changed) = match current.build.as_deref() {
                    Some(previous) => previous.with_changes(files),
                    // Not expected: a fast rebuild follows a good build.
                    None => {
                        let all = session.bodies().unwrap_or_default();
                        let prefix = prefix_of(&self.root);
                        Build::new(all, prefix, None)
                    }
                };
                let report = format!(
                    "{} files in {timing}: {changed} changed; {} of {pages} pages rendered again (a page edit)",
                    build.file_count(),
                    rebuilt.rendered
                );
                Some((build, changed, report))
            }
            Output::Failed => None,
        };
        // Printed once the pages are told: printing many findings takes a
        // while.
        let mut say = Vec::new();
        let next = match built {
            Some((build, changed, report)) => {
                // Errors that left a site to preview: its pages show them.
                let errors = outcome.diagnostics.iter().filter(|d| d.is_error()).count();
                let banner = (errors > 0).then(|| {
                    let text = report::render_text(&outcome.diagnostics, &self.root, false);
                    let pages = self.page_findings(&session, &outcome.diagnostics);
                    Arc::new(snapshot::Banner::new(text, errors, pages))
                });
                let same_banner = match (&banner, &current.banner) {
                    (None, None) => true,
                    (Some(a), Some(b)) => a.text == b.text,
                    _ => false,
                };
                if changed == 0 && same_banner && current.error.is_none() && current.build.is_some()
                {
                    self.print_findings(&outcome.diagnostics);
                    eprintln!("rebuilt {report}: nothing to reload");
                    return;
                }
                if errors == 0 && (current.error.is_some() || current.banner.is_some()) {
                    say.push("the build is fixed".to_string());
                }
                say.push(format!("built {report}"));
                if errors > 0 {
                    say.push(format!(
                        "{errors} error{}: pages show them at the top until they are fixed \
                         (basepress build refuses to publish the site)",
                        if errors == 1 { "" } else { "s" }
                    ));
                }
                Snapshot {
                    build: Some(Arc::new(build)),
                    partial: None,
                    error: None,
                    // Pages shown while the first build rendered are
                    // these same bytes: nothing to reload (a build with
                    // errors shows no page before it ends).
                    generation: match (&partial, &banner) {
                        (Some(_), None) => current.generation.clone(),
                        _ => self.next_generation(),
                    },
                    banner,
                }
            }
            None => {
                let text = report::render_text(&outcome.diagnostics, &self.root, false);
                if current.error.as_ref().is_some_and(|e| e.text == text) {
                    self.print_findings(&outcome.diagnostics);
                    return;
                }
                say.push(format!(
                    "the build failed in {timing}: pages show the findings until they are fixed{}",
                    if current.build.is_some() {
                        "; other files come from the last good build"
                    } else {
                        ""
                    }
                ));
                Snapshot {
                    build: current.build.clone(),
                    partial: None,
                    error: Some(Arc::new(ErrorPage::new(text))),
                    banner: None,
                    generation: self.next_generation(),
                }
            }
        };
        let generation = next.generation.clone();
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
        if generation != current.generation {
            // No receiver (no page open) is not an error.
            let _ = self.reloads.send(generation);
        }
        drop(session);
        self.print_findings(&outcome.diagnostics);
        for line in say {
            eprintln!("{line}");
        }
    }

    /// The findings located in each page's source, by the page's file
    /// (`/es/install/index.html`), counted and as the terminal shows them:
    /// what the page's findings box opens with.
    fn page_findings(
        &self,
        session: &Session,
        findings: &[diagnostics::Diagnostic],
    ) -> std::collections::HashMap<String, (usize, String)> {
        let mut by_source: std::collections::HashMap<
            &std::path::Path,
            Vec<diagnostics::Diagnostic>,
        > = Default::default();
        for d in findings {
            if let Some(l) = &d.location {
                by_source
                    .entry(l.file.as_path())
                    .or_default()
                    .push(d.clone());
            }
        }
        session
            .page_sources()
            .into_iter()
            .filter_map(|(file, source)| {
                let own = by_source.get(source.as_path())?;
                Some((
                    file,
                    (own.len(), report::render_text(own, &self.root, false)),
                ))
            })
            .collect()
    }

    fn next_generation(&self) -> String {
        let n = self.builds.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{}-{n}", self.run_id)
    }

    /// Prints the findings to the terminal, unless they are the ones
    /// printed last; errors are always printed.
    fn print_findings(&self, findings: &[diagnostics::Diagnostic]) {
        let text = report::render_text(findings, &self.root, self.color);
        let mut printed = self.printed.lock().unwrap_or_else(|e| e.into_inner());
        let has_errors = findings.iter().any(|d| d.is_error());
        if has_errors || *printed != text {
            eprint!("{text}");
            *printed = text;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_port_moves_to_the_next_free_one() {
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let busy = TcpListener::bind((ip, 0)).unwrap();
        let port = busy.local_addr().unwrap().port();
        if port > u16::MAX - 20 {
            return;
        }
        let l = bind_first_free(ip, port, 20).unwrap();
        let got = l.local_addr().unwrap().port();
        assert!(got > port && got < port + 20, "{port} → {got}");
        let e = bind_first_free(ip, port, 1).unwrap_err().to_string();
        assert!(e.contains("all in use"), "{e}");
    }

    #[test]
    fn beyond_loopback_a_warning_and_the_real_addresses() {
        let ifs: Vec<IpAddr> = vec!["127.0.0.1".parse().unwrap(), "192.168.1.7".parse().unwrap()];
        let (out, warnings) = announcement("0.0.0.0:1111".parse().unwrap(), "/docs", &ifs, &[]);
        assert_eq!(
            out,
            [
                "serving http://127.0.0.1:1111/docs/ (Ctrl-C to stop)",
                "also at http://192.168.1.7:1111/docs/"
            ]
        );
        assert!(out.iter().all(|l| !l.contains("0.0.0.0")), "{out:?}");
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("warning: listening on every address"),
            "{warnings:?}"
        );

        let (out, warnings) = announcement("127.0.0.1:1111".parse().unwrap(), "", &[], &[]);
        assert_eq!(out, ["serving http://127.0.0.1:1111/ (Ctrl-C to stop)"]);
        assert!(warnings.is_empty());

        let allow = vec!["docs.internal".to_string()];
        let (out, warnings) = announcement("192.168.1.7:80".parse().unwrap(), "", &ifs, &allow);
        assert_eq!(out, ["serving http://192.168.1.7:80/ (Ctrl-C to stop)"]);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
    }

    #[test]
    fn urls_bracket_ipv6() {
        assert_eq!(
            url("127.0.0.1:1111".parse().unwrap()),
            "http://127.0.0.1:1111"
        );
        assert_eq!(url("[::1]:1111".parse().unwrap()), "http://[::1]:1111");
    }
}
