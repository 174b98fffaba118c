//! Several basepress processes at once, as busy pipelines run them: builds
//! into one output and releases into one lock take turns, and a download
//! loop against `basepress serve` gets one build's files while the bases
//! are being edited.

use crate::download::run_loop;
use crate::support::*;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A project with two unreleased bases and enough pages that a build takes
/// a while to write.
fn busy_project() -> Project {
    let p = Project::new();
    for n in ["kustomization.yaml", "deployment.yaml", "config.env"] {
        let text = std::fs::read_to_string(p.path(&format!("bases/v1.1.0/{n}"))).unwrap();
        p.write(&format!("bases/v1.0.0/{n}"), &text);
    }
    for i in 0..16 {
        p.write(
            &format!("content/en/p{i:03}.md"),
            &format!(
                "---\ntitle: Page {i}\n---\n# Page {i}\n\n{}\n",
                "Text of the page. ".repeat(800)
            ),
        );
    }
    p
}

fn spawn(args: &[&str]) -> Child {
    basepress()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("basepress starts")
}

#[test]
fn builds_and_releases_at_once_lose_nothing() {
    const ROUNDS: usize = 20;
    let p = busy_project();
    let root = p.root().to_string_lossy().into_owned();
    let reference = tempfile::tempdir().unwrap();
    let reference_out = reference.path().join("site");
    build_ok(Path::new(&root), &reference_out);
    let expected = tree(&reference_out);
    let lock = p.path("bases/published.lock");
    // A build between the two releases sees only v1.0.0 released, and
    // advertises it as the latest: the other complete site it may write.
    let o = spawn(&["release", "v1.0.0", "--root", &root])
        .wait_with_output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let between_out = reference.path().join("between");
    build_ok(Path::new(&root), &between_out);
    let between = tree(&between_out);
    assert!(between != expected, "the latest follows the releases");

    let start = Instant::now();
    let mut waits = 0;
    for round in 0..ROUNDS {
        let _ = std::fs::remove_file(&lock);
        let children = vec![
            spawn(&["build", "--root", &root]),
            spawn(&["release", "v1.0.0", "--root", &root]),
            spawn(&["build", "--root", &root]),
            spawn(&["release", "v1.1.0", "--root", &root]),
        ];
        let outputs: Vec<Output> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        for o in &outputs {
            assert_eq!(o.status.code(), Some(0), "round {round}: {}", stderr(o));
            waits += stderr(o).matches("waiting for another basepress").count();
        }
        let got = tree(&p.out());
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "round {round}: the output is not the complete site"
        );
        assert!(
            got == expected || got == between,
            "round {round}: a file differs from both complete sites"
        );
        let text = std::fs::read_to_string(&lock).unwrap();
        for v in ["v1.0.0", "v1.1.0"] {
            assert_eq!(
                text.lines()
                    .filter(|l| l.starts_with(&format!("{v} ")))
                    .count(),
                3,
                "round {round}: {v} is not fully released:\n{text}"
            );
        }
    }
    let took = start.elapsed();
    eprintln!(
        "{ROUNDS} rounds of 2 builds and 2 releases at once in {:.1} s: every output \
         complete ({} files), both versions in the lock every time, {waits} waits for a lock",
        took.as_secs_f64(),
        expected.len()
    );
    // Nothing left beside the output but the spare the next build
    // recycles: no staging folder, no lock file.
    let hidden: Vec<_> = std::fs::read_dir(p.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n != ".site.basepress-spare")
        .collect();
    assert!(hidden.is_empty(), "left behind: {hidden:?}");
}

/// A running `basepress serve` on a free loopback port, killed when
/// dropped.
struct Serve {
    child: Child,
    origin: String,
    stderr: Arc<Mutex<String>>,
}

impl Serve {
    fn start(root: &Path) -> Serve {
        let mut child = basepress()
            .args(["serve", "--root", &root.to_string_lossy(), "--port", "0"])
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
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {first:?}: {}", stderr.lock().unwrap()));
        let addr = url["http://".len()..].split('/').next().unwrap();
        Serve {
            child,
            origin: format!("http://{addr}"),
            stderr,
        }
    }

    fn rebuilds(&self) -> usize {
        self.stderr.lock().unwrap().matches("built ").count()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// While a base changes several times a second, two installers run the
/// download loop again and again: every base they download verifies with
/// `sha256sum -c` (SHA256SUMS, files.txt and the files from one build),
/// and once the edits stop the loop gets the last one.
#[test]
fn a_download_loop_gets_one_build_while_bases_change() {
    if !have("curl") || !have("sha256sum") {
        return;
    }
    let p = Project::new();
    let server = Serve::start(p.root());
    let env = p.path("bases/v1.1.0/config.env");
    let editing = Arc::new(AtomicBool::new(true));
    let edits = Arc::new(AtomicUsize::new(0));
    let editor = {
        let (editing, edits, env) = (Arc::clone(&editing), Arc::clone(&edits), env.clone());
        std::thread::spawn(move || {
            while editing.load(Ordering::Relaxed) {
                let n = edits.fetch_add(1, Ordering::Relaxed);
                std::fs::write(&env, format!("MODE=a\n# edit {n}\n")).unwrap();
                std::thread::sleep(Duration::from_millis(70));
            }
        })
    };
    // At least 4 s of loops; then until each installer has seen 3 bases
    // (a busy machine rebuilds slowly), for at most 40 s.
    let start = Instant::now();
    let (least, most) = (Duration::from_secs(4), Duration::from_secs(40));
    let installers: Vec<_> = (0..2)
        .map(|_| {
            let origin = server.origin.clone();
            std::thread::spawn(move || {
                let mut seen = BTreeSet::new();
                let mut loops = 0;
                while start.elapsed() < least || (seen.len() < 3 && start.elapsed() < most) {
                    let work = tempfile::tempdir().unwrap();
                    let o = run_loop(&origin, work.path(), "v1.1.0");
                    assert!(o.status.success(), "the loop failed: {}", stderr(&o));
                    let sums = Command::new("sha256sum")
                        .args(["-c", "SHA256SUMS"])
                        .current_dir(work.path().join("base"))
                        .output()
                        .unwrap();
                    assert!(
                        sums.status.success(),
                        "loop {loops}: a base mixed from two builds:\n{}",
                        String::from_utf8_lossy(&sums.stdout)
                    );
                    seen.insert(std::fs::read(work.path().join("base/SHA256SUMS")).unwrap());
                    loops += 1;
                }
                (loops, seen.len())
            })
        })
        .collect();
    let results: Vec<(usize, usize)> = installers.into_iter().map(|t| t.join().unwrap()).collect();
    editing.store(false, Ordering::Relaxed);
    editor.join().unwrap();
    let loops: usize = results.iter().map(|r| r.0).sum();
    let versions = results.iter().map(|r| r.1).max().unwrap_or(0);
    eprintln!(
        "{loops} download loops, {} edits, {} rebuilds served, {versions} distinct bases \
         downloaded by one installer: every one verified",
        edits.load(Ordering::Relaxed),
        server.rebuilds()
    );
    assert!(
        versions >= 3,
        "the edits did not reach the loops: {versions}"
    );

    // Once the edits stop, the last one is what the loop downloads.
    let last = std::fs::read(&env).unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let work = tempfile::tempdir().unwrap();
        assert!(run_loop(&server.origin, work.path(), "v1.1.0")
            .status
            .success());
        if std::fs::read(work.path().join("base/config.env")).unwrap() == last {
            break;
        }
        assert!(Instant::now() < until, "the last edit is never served");
        std::thread::sleep(Duration::from_millis(100));
    }
}
