//! The data flow stays one-directional: every module of `src/` imports
//! only the stages before it (model ← load ← analyze ← check ← render ←
//! write ← engine ← serve, verify ← deploy ← the command line), and the
//! submodules of a stage do not import each other in a loop.

use crate::support::repo;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules, lowest first. A module may import the ones of a
/// lower layer only.
const LAYERS: &[&[&str]] = &[
    &["diagnostics", "testing", "tls", "yaml"],
    &["input", "kustomize", "secrets"],
    &["report"],
    &["oci"],
    &["model"],
    &["signing"],
    &["load"],
    &["analyze"],
    &["check"],
    &["render"],
    &["write"],
    &["engine", "scaffold"],
    &["serve", "verify"],
    &["deploy"],
    &["main"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's module path below the crate (`render::highlight`), the
/// top-level module first.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The code of a file that is not tests (which may reach any stage),
/// without comments: enough to find paths in it.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with("//") {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::a::b` (or, in main.rs, `basepress::a::b`) path a file
/// names, as its first two segments.
fn crate_paths(code: &str, krate: &str) -> BTreeSet<(String, Option<String>)> {
    let mut out = BTreeSet::new();
    let needle = format!("{krate}::");
    let mut rest = code;
    while let Some(i) = rest.find(&needle) {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + needle.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let seg = |s: &str| -> (String, usize) {
            let end = s
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(s.len());
            (s[..end].to_string(), end)
        };
        if let Some(group) = rest.strip_prefix('{') {
            // `use super::{a, b::c}`: the first segment of each item.
            let mut depth = 0;
            let end = group
                .find(|c: char| {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => return true,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    false
                })
                .unwrap_or(group.len());
            for item in group[..end].split(',') {
                let (first, _) = seg(item.trim());
                if !first.is_empty() && first != "self" {
                    out.insert((first, None));
                }
            }
            continue;
        }
        let (first, end) = seg(rest);
        let second = rest[end..].strip_prefix("::").map(|s| seg(s).0);
        if !first.is_empty() {
            out.insert((first, second.filter(|s| !s.is_empty())));
        }
    }
    out
}

#[test]
fn stages_import_only_the_stages_before_them() {
    let src = repo().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let module = module_of(&src, file);
        let top = module.first().cloned().unwrap_or_default();
        let Some(own) = layer(&top) else {
            if top.is_empty() {
                continue; // lib.rs declares the modules
            }
            panic!("src/{} is in no layer", top);
        };
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let krate = if top == "main" { "basepress" } else { "crate" };
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        for (first, _) in crate_paths(&code, krate) {
            if first == top {
                continue;
            }
            match layer(&first) {
                Some(l) if l < own => {}
                _ => wrong.push(format!(
                    "{} imports {krate}::{first}",
                    file.strip_prefix(repo()).unwrap().display()
                )),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the data flow:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn submodules_of_a_stage_do_not_import_each_other_in_a_loop() {
    let src = repo().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // Edges between siblings: `super::x` and `crate::top::x` from a
    // submodule of `top` (the stage's own mod.rs is shared by all).
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let module = module_of(&src, file);
        if module.len() != 2 {
            continue;
        }
        let (top, me) = (&module[0], &module[1]);
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        let siblings: BTreeSet<String> = crate_paths(&code, "super")
            .into_iter()
            .map(|(first, _)| first)
            .chain(
                crate_paths(&code, "crate")
                    .into_iter()
                    .filter(|(first, _)| first == top)
                    .filter_map(|(_, second)| second),
            )
            .filter(|s| s != me)
            .filter(|s| {
                files
                    .iter()
                    .any(|f| module_of(&src, f) == [top.clone(), s.clone()])
            })
            .map(|s| format!("{top}::{s}"))
            .collect();
        edges.insert(format!("{top}::{me}"), siblings);
    }
    // Depth-first search for a cycle.
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut cycle = path[i..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for n in edges.keys() {
        if let Some(cycle) = visit(n, &edges, &mut Vec::new(), &mut done) {
            panic!("an import loop: {}", cycle.join(" → "));
        }
    }
    assert!(edges.len() > 10, "the modules were found: {edges:?}");
}

#[test]
fn the_import_scanner_finds_paths() {
    let found = crate_paths(
        "use crate::model::site::Page;\nlet x = crate::render::html::escape(s);\nmy_crate::nope\nuse crate::{yaml, load::x};",
        "crate",
    );
    assert!(found.contains(&("model".into(), Some("site".into()))));
    assert!(found.contains(&("render".into(), Some("html".into()))));
    assert!(found.contains(&("yaml".into(), None)));
    assert!(found.contains(&("load".into(), None)));
    assert_eq!(found.len(), 4, "{found:?}");
    assert_eq!(
        module_of(Path::new("/s"), Path::new("/s/render/mod.rs")),
        ["render"]
    );
    assert_eq!(
        module_of(Path::new("/s"), Path::new("/s/render/html.rs")),
        ["render", "html"]
    );
}
