//! Property tests of the loaders: real inputs, mutated at random (bytes cut,
//! repeated, replaced by YAML and Markdown tokens), must never make
//! basepress panic or hang, and every error must say where it is.
//!
//! `PROPTEST_CASES` sets the number of inputs per target (48 by default, so
//! the normal test run stays quick); `fuzz/run.sh` runs them for longer.

use crate::support::*;
use proptest::prelude::*;
use std::time::{Duration, Instant};

/// Pieces that break YAML, front matter, Markdown and variables in
/// interesting ways.
const TOKENS: &[&str] = &[
    ":",
    ": ",
    "- ",
    "---\n",
    "\n",
    "\t",
    "  ",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "'",
    "#",
    "&a ",
    "*a",
    "!!binary ",
    "? ",
    "|\n",
    ">-\n",
    "{{",
    "}}",
    "{{ latest }}",
    "{{ nope }}",
    "{%",
    "```",
    "```yaml file=kustomization.yaml\n",
    "](",
    "[x](missing.md#a)",
    "<",
    "\u{0}",
    "é",
    "\u{feff}",
    "~~",
    "| a |\n|---|\n",
    "[^1]",
    "\\",
    "..",
    "/",
    "%",
    "RUNNER_",
    "RUNNER_HEALTH_DIR",
    "=",
    "apiVersion: v1\n",
    "kind: ",
    "containers:\n",
    "- name: agent\n",
    "$patch: delete\n",
    "999999999999999999999",
    "-1",
    "null",
    "~",
    "true",
];

/// One edit of an input.
#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, usize),
    Delete(usize, usize),
    Repeat(usize, usize),
    Truncate(usize),
    Flip(usize, u8),
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        4 => (any::<usize>(), 0..TOKENS.len()).prop_map(|(p, t)| Edit::Insert(p, t)),
        2 => (any::<usize>(), 1usize..64).prop_map(|(p, n)| Edit::Delete(p, n)),
        1 => (any::<usize>(), 1usize..64).prop_map(|(p, n)| Edit::Repeat(p, n)),
        1 => any::<usize>().prop_map(Edit::Truncate),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Flip(p, b)),
    ];
    prop::collection::vec(edit, 1..8)
}

fn apply(seed: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for e in edits {
        let at = |p: usize, v: &Vec<u8>| if v.is_empty() { 0 } else { p % (v.len() + 1) };
        match *e {
            Edit::Insert(p, t) => {
                let i = at(p, &v);
                v.splice(i..i, TOKENS[t].bytes());
            }
            Edit::Delete(p, n) => {
                let i = at(p, &v);
                let j = (i + n).min(v.len());
                v.drain(i..j);
            }
            Edit::Repeat(p, n) => {
                let i = at(p, &v);
                let j = (i + n).min(v.len());
                let piece: Vec<u8> = v[i..j].to_vec();
                v.splice(j..j, piece);
            }
            Edit::Truncate(p) => {
                let i = at(p, &v);
                v.truncate(i);
            }
            Edit::Flip(p, b) => {
                if !v.is_empty() {
                    let i = p % v.len();
                    v[i] = b;
                }
            }
        }
    }
    v
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(48)
}

/// A copy of the repository's docs project.
fn seed_project() -> Project {
    let p = Project::empty();
    for f in [
        "site.yaml",
        "image-releases.yaml",
        "content",
        "bases/v1.29.0",
        "bases/v1.30.0",
    ] {
        p.copy_from_repo(f, f);
    }
    p
}

/// Runs the loaders and checks with `file` replaced by `bytes`; panics if
/// basepress panics, takes too long, or reports an error without a place.
fn survive(p: &Project, file: &str, seed: &[u8], bytes: &[u8]) {
    std::fs::write(p.path(file), bytes).unwrap();
    let start = Instant::now();
    let result =
        std::panic::catch_unwind(|| basepress::engine::check(p.root(), &Default::default()));
    let took = start.elapsed();
    std::fs::write(p.path(file), seed).unwrap();
    let outcome = result.unwrap_or_else(|_| {
        panic!(
            "basepress panicked on {file}: {:?}",
            String::from_utf8_lossy(bytes)
        )
    });
    assert!(took < Duration::from_secs(5), "{file} took {took:?}");
    for d in outcome.diagnostics.iter().filter(|d| d.is_error()) {
        assert!(
            d.location.is_some(),
            "`{}` has no location for {file}: {}",
            d.rule.id,
            d.message
        );
    }
}

macro_rules! fuzz_target {
    ($name:ident, $file:expr) => {
        #[test]
        fn $name() {
            let p = seed_project();
            let seed = std::fs::read(p.path($file)).unwrap();
            assert_eq!(basepress::engine::check(p.root(), &Default::default()).exit_code(), 0, "the seed project is clean");
            proptest!(ProptestConfig::with_cases(cases()), |(e in edits())| {
                survive(&p, $file, &seed, &apply(&seed, &e));
            });
        }
    };
}

fuzz_target!(
    page_front_matter_markdown_and_variables,
    "content/es/attestation.md"
);
fuzz_target!(kustomization, "bases/v1.30.0/kustomization.yaml");
fuzz_target!(manifest, "bases/v1.30.0/statefulset.yaml");
fuzz_target!(env_file, "bases/v1.30.0/config.env");
fuzz_target!(image_data, "image-releases.yaml");
fuzz_target!(site_config, "site.yaml");
