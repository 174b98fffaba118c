//! How long after a page is saved the reload event reaches a browser of a
//! running `basepress serve`: the time from the write to the `reload`
//! Server-Sent Event, over a few edits.
//!
//! ```sh
//! basepress serve --root /tmp/bp --port 18222 &
//! cargo run --release --example reload_latency -- 18222 /tmp/bp/content/en/topic-02/page-048.md 7
//! ```
//!
//! Each edit appends a line to the page (the page is put back as it was
//! at the end) and waits half a second before the next, so that edits do
//! not fall into one rebuild. Prints the median, minimum and maximum in
//! milliseconds. `bench/reload.sh` runs it on a generated corpus.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(port), Some(page)) = (args.first(), args.get(1)) else {
        eprintln!("usage: reload_latency PORT PAGE.md [EDITS]");
        std::process::exit(2);
    };
    let edits: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(7);
    match run(port, Path::new(page), edits.max(1)) {
        Ok(mut times) => {
            times.sort_unstable();
            println!(
                "median {} ms, min {}, max {}, n={}",
                times[times.len() / 2],
                times[0],
                times[times.len() - 1],
                times.len()
            );
        }
        Err(e) => {
            eprintln!("reload_latency: {e}");
            std::process::exit(1);
        }
    }
}

fn run(port: &str, page: &Path, edits: usize) -> std::io::Result<Vec<u128>> {
    let mut stream = TcpStream::connect(format!("127.0.0.1:{port}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    stream.write_all(
        b"GET /__basepress/events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n",
    )?;
    let mut events = BufReader::new(stream);
    wait_for(&mut events, "hello")?;
    let original = std::fs::read_to_string(page)?;
    let mut times = Vec::with_capacity(edits);
    for i in 0..edits {
        std::thread::sleep(Duration::from_millis(500));
        let start = Instant::now();
        std::fs::write(page, format!("{original}\n\nEdit number {i}.\n"))?;
        wait_for(&mut events, "reload")?;
        times.push(start.elapsed().as_millis());
    }
    std::thread::sleep(Duration::from_millis(500));
    std::fs::write(page, &original)?;
    Ok(times)
}

/// Reads the event stream until an event named `name`.
fn wait_for(events: &mut BufReader<TcpStream>, name: &str) -> std::io::Result<()> {
    let mut line = String::new();
    loop {
        line.clear();
        if events.read_line(&mut line)? == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the server closed the event stream",
            ));
        }
        if line.trim_end().strip_prefix("event:").map(str::trim) == Some(name) {
            return Ok(());
        }
    }
}
