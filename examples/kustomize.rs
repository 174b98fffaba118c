//! Prints what basepress's Kustomize build makes of a folder, to compare
//! with `kubectl kustomize DIR`:
//! `cargo run --example kustomize -- DIR [SUBDIR]`.
//!
//! Every file under DIR is read; SUBDIR (default DIR itself) is the
//! kustomization built. The objects go to stdout as JSON, one per line,
//! keys sorted; an error goes to stderr as `RULE: message (file:line)`,
//! with exit code 1.

use std::path::Path;
use std::process::ExitCode;

use basepress::kustomize::{self, MemFiles, SourceFile};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(root) = args.first() else {
        eprintln!("usage: kustomize DIR [SUBDIR]");
        return ExitCode::from(2);
    };
    let root = Path::new(root);
    let mut files = MemFiles::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let path = entry.path();
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let slash = rel.to_string_lossy().replace('\\', "/");
        match std::fs::read(path) {
            Ok(bytes) => files.insert(&slash, SourceFile::new(bytes, rel)),
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    let dir = args.get(1).map(String::as_str).unwrap_or("");
    match kustomize::build(&files, dir) {
        Ok(build) => {
            for object in build.objects {
                println!("{}", object.value);
            }
            ExitCode::SUCCESS
        }
        Err(errors) => {
            for e in errors {
                let at = &e.location;
                eprintln!(
                    "{}: {} ({}:{})",
                    e.rule.id,
                    e.message,
                    at.file.display(),
                    at.line.unwrap_or(0)
                );
            }
            ExitCode::from(1)
        }
    }
}
