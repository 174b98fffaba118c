//! How fast a preview server shows what was saved, measured over HTTP the
//! way a reader sees it: it starts the server itself, times the first page
//! it answers, then edits a page's body and its title several times and
//! times each edit from the write to the first response that shows it.
//! It works for any server that serves Markdown pages as HTML
//! (`basepress serve` and `hugo server` alike), so both are measured the
//! same way.
//!
//! ```sh
//! serve_latency --page /tmp/bp/content/en/topic-02/page-048.md \
//!   --url /en/topic-02/page-048/ --also /en/topic-02/page-049/ --edits 3 \
//!   --log /tmp/serve.log -- basepress serve --root /tmp/bp --port '{port}'
//! ```
//!
//! `{port}` in the command is replaced by a free loopback port. Printed,
//! one `key value…` a line (milliseconds; CPU is the server's user + system
//! time, all threads):
//!
//! - `pid PID`: the server's, as soon as it is started;
//! - `first WALL CPU`: from the spawn to the first 200 of `--url`;
//! - `settled WALL`: from the spawn until the server stopped using CPU;
//! - `body WALL CPU` for each body edit (a paragraph appended);
//! - `title WALL ALSO CPU` for each title edit (`title:` changed in the
//!   front matter): WALL until `--url` shows the new title, ALSO until
//!   `--also` (a page whose navigation shows it) does too;
//! - `hwm KIB`: the server's peak resident memory (VmHWM) after the edits.
//!
//! CPU of an edit runs from the write until the server is idle again
//! (no CPU used for 300 ms), so work done after the page is served counts
//! too. Between edits it waits for that and half a second more. The page
//! is put back as it was when the program ends, and the server is killed;
//! every wait has a deadline (`--timeout`, 600 s by default). Linux only
//! (it reads `/proc`).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Clock ticks per second of `/proc/PID/stat` (USER_HZ, 100 on Linux).
const TICKS_PER_SECOND: u64 = 100;
/// Pause between two polls of a page.
const POLL: Duration = Duration::from_millis(2);
/// How long the server must use no CPU to count as idle.
const IDLE: Duration = Duration::from_millis(300);

struct Args {
    page: PathBuf,
    url: String,
    also: Option<String>,
    edits: usize,
    timeout: Duration,
    log: Option<PathBuf>,
    command: Vec<String>,
}

fn usage() -> ! {
    eprintln!(
        "usage: serve_latency --page FILE.md --url /PATH/ [--also /PATH/] [--edits N] \
         [--timeout SECONDS] [--log FILE] -- SERVER ARGS… ('{{port}}' is replaced)"
    );
    std::process::exit(2);
}

fn parse_args() -> Args {
    let mut args = std::env::args().skip(1);
    let (mut page, mut url, mut also, mut log) = (None, None, None, None);
    let (mut edits, mut timeout) = (3usize, 600u64);
    let mut command = Vec::new();
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--page" => page = Some(PathBuf::from(value())),
            "--url" => url = Some(value()),
            "--also" => also = Some(value()),
            "--log" => log = Some(PathBuf::from(value())),
            "--edits" => edits = value().parse().unwrap_or_else(|_| usage()),
            "--timeout" => timeout = value().parse().unwrap_or_else(|_| usage()),
            "--" => {
                command = args.by_ref().collect();
                break;
            }
            _ => usage(),
        }
    }
    let (Some(page), Some(url)) = (page, url) else {
        usage()
    };
    if command.is_empty() {
        usage();
    }
    Args {
        page,
        url,
        also,
        edits,
        timeout: Duration::from_secs(timeout),
        log,
        command,
    }
}

fn main() {
    let args = parse_args();
    if let Err(e) = run(&args) {
        eprintln!("serve_latency: {e}");
        std::process::exit(1);
    }
}

type Result<T> = std::result::Result<T, String>;

/// The server: killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The edited page: put back as it was when dropped.
struct Page<'a> {
    path: &'a Path,
    original: String,
}

impl Drop for Page<'_> {
    fn drop(&mut self) {
        let _ = std::fs::write(self.path, &self.original);
    }
}

fn run(args: &Args) -> Result<()> {
    let original = std::fs::read_to_string(&args.page)
        .map_err(|e| format!("cannot read {}: {e}", args.page.display()))?;
    let (title_line, title) = title_of(&original)
        .map(|(line, title)| (line.to_string(), title.trim_matches('"').to_string()))
        .ok_or_else(|| format!("{} has no `title:` line", args.page.display()))?;
    let page = Page {
        path: &args.page,
        original,
    };
    let mut server = spawn(args)?;
    // First, so that whoever started this program can end the server if
    // this program is killed before it does.
    println!("pid {}", server.child.id());
    let start = Instant::now();
    let deadline = start + args.timeout;

    // The first page: the server may accept connections before it can
    // answer them, so the first request waits as long as the deadline.
    wait_for(&mut server, &args.url, deadline, |status, _| status == 200)?;
    println!(
        "first {} {}",
        start.elapsed().as_millis(),
        cpu_ms(server.child.id())?
    );
    if let Some(also) = &args.also {
        wait_for(&mut server, also, deadline, |status, _| status == 200)?;
    }
    settle(&server, deadline)?;
    println!("settled {}", start.elapsed().as_millis());

    let nonce = std::process::id();
    let mut last = None;
    for i in 0..args.edits {
        let marker = format!("bpbench{nonce}b{i}");
        std::thread::sleep(Duration::from_millis(500));
        let cpu = cpu_ms(server.child.id())?;
        let text = format!("{}\n\nBench edit {marker}.\n", page.original);
        let wrote = write(&args.page, &text)?;
        let wall = shows(&mut server, &args.url, &marker, wrote, wrote + args.timeout)?;
        settle(&server, wrote + args.timeout)?;
        println!(
            "body {} {}",
            wall.as_millis(),
            cpu_ms(server.child.id())? - cpu
        );
        last = Some(marker);
    }
    // Back to the original before the title edits, and served so.
    if let Some(marker) = last.take() {
        let wrote = write(&args.page, &page.original)?;
        gone(&mut server, &args.url, &marker, wrote + args.timeout)?;
        settle(&server, wrote + args.timeout)?;
    }
    for i in 0..args.edits {
        let marker = format!("bpbench{nonce}t{i}");
        std::thread::sleep(Duration::from_millis(500));
        let cpu = cpu_ms(server.child.id())?;
        let text = page
            .original
            .replacen(&title_line, &format!("title: \"{title} {marker}\""), 1);
        let wrote = write(&args.page, &text)?;
        let wall = shows(&mut server, &args.url, &marker, wrote, wrote + args.timeout)?;
        let also = match &args.also {
            Some(also) => {
                shows(&mut server, also, &marker, wrote, wrote + args.timeout)?.as_millis()
            }
            None => wall.as_millis(),
        };
        settle(&server, wrote + args.timeout)?;
        println!(
            "title {} {also} {}",
            wall.as_millis(),
            cpu_ms(server.child.id())? - cpu
        );
    }
    // The page is put back when `page` is dropped, after the server is
    // measured: waiting for that rebuild would measure nothing.
    println!("hwm {}", hwm_kib(server.child.id())?);
    drop(server);
    drop(page);
    Ok(())
}

/// The `title:` line of the front matter and its value.
fn title_of(text: &str) -> Option<(&str, &str)> {
    let front = text.strip_prefix("---\n")?;
    let end = front.find("\n---")?;
    front[..end]
        .lines()
        .find_map(|l| Some((l, l.strip_prefix("title:")?.trim())))
}

/// Starts the server on a free loopback port.
fn spawn(args: &Args) -> Result<Server> {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free loopback port: {e}"))?
        .port();
    let words: Vec<String> = args
        .command
        .iter()
        .map(|w| w.replace("{port}", &port.to_string()))
        .collect();
    let output = || -> Result<Stdio> {
        match &args.log {
            Some(path) => std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map(Stdio::from)
                .map_err(|e| format!("cannot open {}: {e}", path.display())),
            None => Ok(Stdio::null()),
        }
    };
    let child = Command::new(&words[0])
        .args(&words[1..])
        .stdin(Stdio::null())
        .stdout(output()?)
        .stderr(output()?)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", words[0]))?;
    Ok(Server { child, port })
}

/// Writes the page; returns when.
fn write(path: &Path, text: &str) -> Result<Instant> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(Instant::now())
}

/// Polls `url` until a 200 response contains `marker`; returns the time
/// from `wrote` to that response.
fn shows(
    server: &mut Server,
    url: &str,
    marker: &str,
    wrote: Instant,
    deadline: Instant,
) -> Result<Duration> {
    wait_for(server, url, deadline, |status, body| {
        status == 200 && contains(body, marker.as_bytes())
    })?;
    Ok(wrote.elapsed())
}

/// Polls `url` until a 200 response no longer contains `marker`.
fn gone(server: &mut Server, url: &str, marker: &str, deadline: Instant) -> Result<()> {
    wait_for(server, url, deadline, |status, body| {
        status == 200 && !contains(body, marker.as_bytes())
    })
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Polls `url` until `done(status, body)`; fails when the server exits or
/// at the deadline.
fn wait_for(
    server: &mut Server,
    url: &str,
    deadline: Instant,
    done: impl Fn(u16, &[u8]) -> bool,
) -> Result<()> {
    loop {
        if let Ok(Some(status)) = server.child.try_wait() {
            return Err(format!(
                "the server exited ({status}) before {url} was ready"
            ));
        }
        if let Ok((status, body)) = get(server.port, url, deadline) {
            if done(status, &body) {
                return Ok(());
            }
        }
        if Instant::now() >= deadline {
            return Err(format!("{url} was not ready before the deadline"));
        }
        std::thread::sleep(POLL);
    }
}

/// One HTTP/1.0 GET (no chunked bodies, the server closes the connection):
/// the status and the body.
fn get(port: u16, url: &str, deadline: Instant) -> std::io::Result<(u16, Vec<u8>)> {
    let wait = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(10));
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(wait))?;
    stream.set_write_timeout(Some(wait))?;
    write!(
        stream,
        "GET {url} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let status = std::str::from_utf8(&response[..response.len().min(16)])
        .ok()
        .and_then(|head| head.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = match response.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(end) => response.split_off(end + 4),
        None => Vec::new(),
    };
    Ok((status, body))
}

/// Waits until the server has used no CPU for [`IDLE`].
fn settle(server: &Server, deadline: Instant) -> Result<()> {
    let pid = server.child.id();
    let mut cpu = cpu_ms(pid)?;
    let mut since = Instant::now();
    while since.elapsed() < IDLE {
        if Instant::now() >= deadline {
            return Err("the server did not become idle before the deadline".into());
        }
        std::thread::sleep(Duration::from_millis(20));
        let now = cpu_ms(pid)?;
        if now != cpu {
            cpu = now;
            since = Instant::now();
        }
    }
    Ok(())
}

/// User + system CPU of a process (all its threads), in milliseconds.
fn cpu_ms(pid: u32) -> Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|e| format!("cannot read /proc/{pid}/stat: {e}"))?;
    // Fields after the command name, which is in parentheses and may hold
    // spaces: state is the first, utime the 12th and stime the 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let tick = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    match (tick(11), tick(12)) {
        (Some(user), Some(system)) => Ok((user + system) * 1000 / TICKS_PER_SECOND),
        _ => Err(format!("cannot parse /proc/{pid}/stat")),
    }
}

/// Peak resident memory of a process, in KiB.
fn hwm_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("cannot read /proc/{pid}/status: {e}"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| format!("no VmHWM in /proc/{pid}/status"))
}
