//! The I/O floor of a build: what it costs only to read every source file
//! of a project and to write as many files, of the same sizes and at the
//! same paths, as a build of it wrote. No build can be faster than this on
//! the same machine, so `basepress time / floor time` says how much of a
//! build is work beyond I/O.
//!
//! ```sh
//! cargo run --release --example io_floor -- --src PROJECT --like BUILT_SITE --out NEW_DIR
//! ```
//!
//! It prints the seconds it took (reading and writing, on as many threads
//! as a build uses); listing `--like` happens before the clock starts.

use clap::Parser;
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser)]
struct Args {
    /// The project whose files are read (every file below it).
    #[arg(long)]
    src: PathBuf,
    /// A built site: its files' paths and sizes are written again.
    #[arg(long)]
    like: PathBuf,
    /// Where to write; must not exist.
    #[arg(long)]
    out: PathBuf,
}

fn files(dir: &PathBuf) -> Vec<(PathBuf, u64)> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let len = e.metadata().map_or(0, |m| m.len());
            (e.path().strip_prefix(dir).unwrap().to_path_buf(), len)
        })
        .collect()
}

fn main() {
    let args = Args::parse();
    if args.out.exists() {
        eprintln!("io_floor: {} exists", args.out.display());
        std::process::exit(2);
    }
    let outputs = files(&args.like);
    let largest = outputs.iter().map(|(_, n)| *n).max().unwrap_or(0) as usize;
    let filler = vec![b'x'; largest];

    let start = Instant::now();
    // Read: list the project and read every file, in parallel.
    let sources: Vec<PathBuf> = walkdir::WalkDir::new(&args.src)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    let read: u64 = sources
        .par_iter()
        .map(|p| std::fs::read(p).map_or(0, |b| b.len() as u64))
        .sum();
    // Write: the same folders, then the same files with the same sizes.
    let mut folders: Vec<PathBuf> = outputs
        .iter()
        .filter_map(|(p, _)| args.out.join(p).parent().map(|d| d.to_path_buf()))
        .collect();
    folders.sort();
    folders.dedup();
    for d in &folders {
        std::fs::create_dir_all(d).expect("create a folder");
    }
    outputs.par_iter().for_each(|(p, n)| {
        std::fs::write(args.out.join(p), &filler[..*n as usize]).expect("write a file");
    });
    let elapsed = start.elapsed().as_secs_f64();
    let written: u64 = outputs.iter().map(|(_, n)| n).sum();
    eprintln!(
        "io_floor: read {} files ({} bytes), wrote {} files ({} bytes)",
        sources.len(),
        read,
        outputs.len(),
        written
    );
    println!("{elapsed:.3}");
}
