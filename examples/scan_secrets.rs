//! Scans every file under a folder with the secret scanner, as a build
//! would scan its output, and prints the findings and the throughput.
//!
//! ```sh
//! cargo run --release --example scan_secrets -- site/
//! ```
//!
//! Files are read first and scanned from memory, on all cores, so the
//! time printed is the scanner's alone.

use basepress::secrets::Scanner;
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let Some(root) = std::env::args_os().nth(1).map(PathBuf::from) else {
        anyhow::bail!("usage: scan_secrets DIR");
    };
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let entry = entry?;
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path())?;
            files.push((entry.path().display().to_string(), bytes));
        }
    }
    let bytes: usize = files.iter().map(|(_, b)| b.len()).sum();

    let start = Instant::now();
    let scanner = Scanner::new();
    let compiled = start.elapsed();

    let start = Instant::now();
    let found: Vec<String> = files
        .par_iter()
        .flat_map_iter(|(name, b)| {
            scanner.scan_file(name, b).into_iter().map(move |f| {
                format!(
                    "{name}:{}:{}: {} {}",
                    f.line,
                    f.column,
                    f.rule.id,
                    f.message()
                )
            })
        })
        .collect();
    let parallel = start.elapsed();

    let start = Instant::now();
    for (name, b) in &files {
        scanner.scan_file(name, b);
    }
    let single = start.elapsed();

    for line in &found {
        println!("{line}");
    }
    let mb = bytes as f64 / 1e6;
    eprintln!(
        "{} files, {mb:.1} MB: {} findings; rules compiled in {} ms; scanned in {:.3} s on all cores ({:.0} MB/s), {:.3} s on one ({:.0} MB/s)",
        files.len(),
        found.len(),
        compiled.as_millis(),
        parallel.as_secs_f64(),
        mb / parallel.as_secs_f64(),
        single.as_secs_f64(),
        mb / single.as_secs_f64(),
    );
    Ok(())
}
