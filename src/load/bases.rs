//! Kustomize bases under `bases/vX.Y.Z/`: what each one publishes.
//!
//! A base publishes exactly its `kustomization.yaml` and the files that it
//! references. Installers fetch them one by one through `files.txt`, so every
//! reference must be a plain file name inside the base's own folder.

use super::{relative, unreadable};
use crate::diagnostics::{rule, Diagnostic, Location};
use crate::model::site::{sha256_hex, Base, BaseFile};
use crate::yaml::{self, Value};
use semver::Version;
use std::collections::BTreeSet;
use std::path::Path;

pub use crate::model::layout::KUSTOMIZATION;

/// Kustomization fields that basepress understands; Kustomize rejects any
/// other field too.
const KNOWN_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "openapi",
    "namePrefix",
    "nameSuffix",
    "namespace",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "patchesStrategicMerge",
    "patchesJson6902",
    "patches",
    "images",
    "replacements",
    "replicas",
    "vars",
    "sortOptions",
    "resources",
    "components",
    "crds",
    "bases",
    "configMapGenerator",
    "secretGenerator",
    "generatorOptions",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "buildMetadata",
];

/// Fields that make Kustomize fetch something at build time, which the
/// download contract cannot carry.
const UNSUPPORTED_FIELDS: &[&str] = &["helmCharts", "helmGlobals", "helmChartInflationGenerator"];

/// One file reference in a kustomization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The field it appears in (`resources`, `configMapGenerator.envs`, …).
    pub field: &'static str,
    pub path: String,
}

/// Every file a kustomization references, in the order it names them.
pub fn kustomization_references(k: &Value) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut push = |field: &'static str, path: &str| {
        out.push(Reference {
            field,
            path: path.to_string(),
        })
    };
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    // Kustomize also accepts inline YAML in these lists.
    let is_inline = |s: &str| s.contains('\n') || s.contains(": ");
    for field in ["resources", "bases", "components", "crds", "configurations"] {
        for p in strings(&k[field]) {
            push(field, &p);
        }
    }
    for field in [
        "generators",
        "transformers",
        "validators",
        "patchesStrategicMerge",
    ] {
        for p in strings(&k[field]) {
            if !is_inline(&p) {
                push(field, &p);
            }
        }
    }
    for field in ["patches", "patchesJson6902", "replacements"] {
        for item in k[field].as_array().into_iter().flatten() {
            if let Some(p) = item["path"].as_str() {
                push(field, p);
            }
        }
    }
    if let Some(p) = k["openapi"]["path"].as_str() {
        push("openapi", p);
    }
    for (field, files_field, envs_field, env_field) in [
        (
            "configMapGenerator",
            "configMapGenerator.files",
            "configMapGenerator.envs",
            "configMapGenerator.env",
        ),
        (
            "secretGenerator",
            "secretGenerator.files",
            "secretGenerator.envs",
            "secretGenerator.env",
        ),
    ] {
        for generator in k[field].as_array().into_iter().flatten() {
            for f in strings(&generator["files"]) {
                // `key=path` names the key; the file is after the `=`.
                let path = f.split_once('=').map_or(f.as_str(), |(_, p)| p);
                push(files_field, path);
            }
            for p in strings(&generator["envs"]) {
                push(envs_field, &p);
            }
            if let Some(p) = generator["env"].as_str() {
                push(env_field, p);
            }
        }
    }
    out
}

/// The release a base folder names, read leniently (`v1.29.0`, `V1.29.0`,
/// `1.29.0`, `v1.29.00`) so that two spellings of one release are caught as
/// duplicates; only `vX.Y.Z` itself is accepted as a name.
fn folder_version(name: &str) -> Option<Version> {
    let rest = name.strip_prefix(['v', 'V']).unwrap_or(name);
    if rest.contains('+') {
        return None;
    }
    let (core, pre) = match rest.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (rest, None),
    };
    let nums: Vec<u64> = core
        .split('.')
        .map(|n| n.parse().ok())
        .collect::<Option<_>>()?;
    let [major, minor, patch] = nums[..] else {
        return None;
    };
    let mut v = Version::new(major, minor, patch);
    if let Some(p) = pre {
        v.pre = semver::Prerelease::new(p).ok()?;
    }
    Some(v)
}

/// Whether installers can fetch this name with `curl -o "base/$f"` and a
/// shell that word-splits and globs the list.
pub fn is_safe_file_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphanumeric() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn is_remote(path: &str) -> bool {
    path.contains("://")
        || path.starts_with("git@")
        || path.starts_with("github.com/")
        || path.starts_with("gitlab.com/")
}

/// The bases of the project, in ascending version order, and the
/// releases whose base folder is there and was refused (see
/// [`crate::model::site::Site::refused`]).
pub fn load(root: &Path, diagnostics: &mut Vec<Diagnostic>) -> (Vec<Base>, BTreeSet<Version>) {
    let mut refused = BTreeSet::new();
    let dir = root.join("bases");
    if let Err(d) = crate::input::dir_state(root, &dir) {
        diagnostics.push(d);
        return (Vec::new(), refused);
    }
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Vec::new(), refused),
        Err(e) => {
            diagnostics.push(unreadable(root, &dir, &e));
            return (Vec::new(), refused);
        }
    };
    let mut folders = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        // Hidden entries, the release signatures, which live beside the
        // bases and not in them, and the lock (which its reader checks).
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "signatures" || name == "published.lock" {
            continue;
        }
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => folders.push(path),
            // A link (to a folder, or to nothing) would be read as a base
            // folder, or looks like one.
            Ok(t) if t.is_symlink() => {
                if let Some(v) = folder_version(&name) {
                    refused.insert(v);
                }
                diagnostics.push(
                    Diagnostic::new(
                        rule::BASE_SYMLINK,
                        format!(
                            "`{}` is a symbolic link, not a base folder: basepress does not follow links, which could lead outside the project",
                            relative(root, &path).display()
                        ),
                    )
                    .in_file(relative(root, &path))
                    .help("put the base's files in a folder of their own here"),
                )
            }
            _ => {}
        }
    }
    folders.sort();

    let mut bases: Vec<Base> = Vec::new();
    let mut seen: Vec<(Version, std::path::PathBuf)> = Vec::new();
    for folder in folders {
        let name = folder
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let rel = relative(root, &folder);
        // Findings about the folder's name point at a file in it when
        // there is one: CI annotations cannot show a folder.
        let at = folder_finding_file(&folder, &rel);
        let Some(version) = folder_version(&name) else {
            diagnostics.push(
                Diagnostic::new(
                    rule::BASE_VERSION_INVALID,
                    format!("base folder `{name}` is not named vX.Y.Z after a release"),
                )
                .in_file(&at),
            );
            continue;
        };
        if let Some((_, other)) = seen.iter().find(|(v, _)| *v == version) {
            diagnostics.push(
                Diagnostic::new(
                    rule::BASE_VERSION_DUPLICATE,
                    format!(
                        "`{}` and `{}` both name release {version}",
                        other.display(),
                        rel.display()
                    ),
                )
                .in_file(&at),
            );
            continue;
        }
        seen.push((version.clone(), rel.clone()));
        if name != format!("v{version}") {
            diagnostics.push(
                Diagnostic::new(
                    rule::BASE_VERSION_INVALID,
                    format!("base folder `{name}` names release {version}, but is not spelled `v{version}`"),
                )
                .in_file(&at)
                .help(format!("rename the folder to `v{version}`: installers build that URL from the image tag")),
            );
            continue;
        }
        match load_base(root, &folder, version.clone(), diagnostics) {
            Some(base) => bases.push(base),
            None => {
                refused.insert(version);
            }
        }
    }
    bases.sort_by(|a, b| a.version.cmp(&b.version));
    (bases, refused)
}

/// The file a finding about a base folder points at: its
/// kustomization.yaml when it has one (a regular file, not a link), the
/// folder itself otherwise.
fn folder_finding_file(folder: &Path, rel: &Path) -> std::path::PathBuf {
    let kustomization = folder.join(KUSTOMIZATION);
    match std::fs::symlink_metadata(&kustomization) {
        Ok(m) if m.is_file() => rel.join(KUSTOMIZATION),
        _ => rel.to_path_buf(),
    }
}

fn load_base(
    root: &Path,
    folder: &Path,
    version: Version,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Base> {
    let rel_dir = relative(root, folder);
    let k_rel = rel_dir.join(KUSTOMIZATION);
    let k_path = folder.join(KUSTOMIZATION);
    let read = super::read_input_optional(root, &k_path).and_then(|b| {
        b.map(|b| crate::input::utf8(b, &k_rel, rule::KUSTOMIZATION_INVALID))
            .transpose()
    });
    let text = match read {
        Ok(Some(t)) => t,
        Err(d) => {
            diagnostics.push(d);
            return None;
        }
        Ok(None) => {
            let other = ["kustomization.yml", "Kustomization"]
                .into_iter()
                .find(|n| folder.join(n).is_file());
            let help = match other {
                Some(n) => format!(
                    "rename `{n}` to `{KUSTOMIZATION}`: it is the name the base is published under"
                ),
                None => format!("add a `{KUSTOMIZATION}` that lists the base's resources"),
            };
            diagnostics.push(
                Diagnostic::new(
                    rule::KUSTOMIZATION_INVALID,
                    format!("cannot read {KUSTOMIZATION}: the file does not exist"),
                )
                .in_file(&k_rel)
                .help(help),
            );
            return None;
        }
    };
    // Kustomize reads a file that starts with a byte-order mark (and CRLF
    // line ends, which the YAML parser takes as they are).
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    };
    // A key written twice is Kustomize's error (`mapping key already
    // defined`), not the last one winning: read as Kustomize reads it.
    let parsed = yaml::documents(&text).and_then(|_| yaml::from_str(&text));
    let kustomization: Value = match parsed {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => {
            diagnostics.push(
                Diagnostic::new(
                    rule::KUSTOMIZATION_INVALID,
                    "a kustomization must be a mapping",
                )
                .in_file(&k_rel),
            );
            return None;
        }
        Err(e) => {
            let loc = match (e.line, e.column) {
                (Some(l), Some(c)) => Location::at(&k_rel, l, c),
                _ => Location::file(&k_rel),
            };
            let repeated = e
                .message
                .strip_prefix("duplicate entry with key \"")
                .and_then(|k| k.strip_suffix('"'));
            let d = match repeated {
                Some(key) => Diagnostic::new(
                    rule::KUSTOMIZATION_INVALID,
                    format!("`{key}` is written twice in one mapping, which Kustomize refuses (`mapping key already defined`)"),
                )
                .help(format!("keep one `{key}:` and move the entries of the other under it")),
                None => Diagnostic::new(rule::KUSTOMIZATION_INVALID, e.message),
            };
            diagnostics.push(d.at(loc));
            return None;
        }
    };
    let at = |needle: &str| {
        yaml::locate_scalar(&text, needle)
            .or_else(|| locate_key(&text, needle))
            .map(|(l, c)| Location::at(&k_rel, l, c))
            .unwrap_or_else(|| Location::file(&k_rel))
    };
    let mut ok = true;
    for key in kustomization.as_object().into_iter().flat_map(|m| m.keys()) {
        if UNSUPPORTED_FIELDS.contains(&key.as_str()) {
            ok = false;
            diagnostics.push(
                Diagnostic::new(
                    rule::BASE_REFERENCE_OUTSIDE,
                    format!("`{key}` makes Kustomize download charts, which installers cannot get through files.txt"),
                )
                .at(at(key)),
            );
        } else if !KNOWN_FIELDS.contains(&key.as_str()) {
            ok = false;
            diagnostics.push(
                Diagnostic::new(
                    rule::KUSTOMIZATION_INVALID,
                    format!("`{key}` is not a kustomization field"),
                )
                .at(at(key))
                .help(
                    "remove it or fix its spelling; `kubectl kustomize` rejects unknown fields too",
                ),
            );
        }
    }

    let mut names = BTreeSet::new();
    names.insert(KUSTOMIZATION.to_string());
    for r in kustomization_references(&kustomization) {
        let p = r.path.as_str();
        let outside = if is_remote(p) {
            Some("a remote reference")
        } else if p.starts_with('/') || p.starts_with('\\') || p.contains(':') {
            Some("an absolute path")
        } else if p.split(['/', '\\']).any(|s| s == "..") {
            Some("a path that leaves the base folder")
        } else if p.contains(['/', '\\']) {
            Some("a path into a subfolder")
        } else {
            None
        };
        if let Some(what) = outside {
            ok = false;
            diagnostics.push(
                Diagnostic::new(
                    rule::BASE_REFERENCE_OUTSIDE,
                    format!("`{}` in `{}` is {what}", p, r.field),
                )
                .at(at(p)),
            );
            continue;
        }
        if !is_safe_file_name(p) {
            ok = false;
            diagnostics.push(
                Diagnostic::new(
                    rule::BASE_FILE_NAME_UNSAFE,
                    format!(
                        "`{p}` cannot be published: installers' shell loop would mangle the name"
                    ),
                )
                .at(at(p)),
            );
            continue;
        }
        let path = folder.join(p);
        match std::fs::symlink_metadata(&path) {
            Err(_) => {
                ok = false;
                diagnostics.push(
                    Diagnostic::new(
                        rule::BASE_REFERENCE_MISSING,
                        format!("`{p}` (in `{}`) is not in {}", r.field, rel_dir.display()),
                    )
                    .at(at(p)),
                );
            }
            Ok(m) if m.is_dir() => {
                ok = false;
                diagnostics.push(
                    Diagnostic::new(
                        rule::BASE_REFERENCE_OUTSIDE,
                        format!("`{p}` in `{}` is a folder (another kustomization)", r.field),
                    )
                    .at(at(p)),
                );
            }
            Ok(_) => {
                names.insert(p.to_string());
            }
        }
    }

    // Symbolic links are refused wherever they are; other files that nothing
    // references are left out and reported.
    let mut entries: Vec<_> = match std::fs::read_dir(folder) {
        Ok(e) => e.filter_map(Result::ok).collect(),
        Err(e) => {
            diagnostics.push(unreadable(root, folder, &e));
            return None;
        }
    };
    entries.sort_by_key(|e| e.file_name());
    let names_on_disk: Vec<String> = entries
        .iter()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    for (first, second) in crate::input::case_clashes(names_on_disk.iter().map(String::as_str)) {
        ok = false;
        diagnostics.push(
            Diagnostic::new(
                rule::NAME_CASE_CONFLICT,
                format!("`{first}` and `{second}` differ only in case: a disk that ignores case keeps only one"),
            )
            .in_file(rel_dir.join(second)),
        );
    }
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_link = entry.file_type().map(|t| t.is_symlink()).unwrap_or(false);
        if is_link {
            // A link the kustomization needs leaves the base without a
            // file; one it does not is only not published.
            ok &= !names.contains(&name);
            diagnostics.push(
                Diagnostic::new(rule::BASE_SYMLINK, format!("`{name}` is a symbolic link"))
                    .in_file(rel_dir.join(&name)),
            );
        } else if !names.contains(&name) {
            diagnostics.push(
                Diagnostic::new(
                    rule::BASE_UNREFERENCED_FILE,
                    format!(
                        "`{name}` is not referenced by {KUSTOMIZATION}, so it is not published"
                    ),
                )
                .in_file(rel_dir.join(&name)),
            );
        }
    }
    if !ok {
        return None;
    }

    let mut files = Vec::with_capacity(names.len());
    for name in names {
        match super::read_input(root, &folder.join(&name)) {
            Ok(bytes) => files.push(BaseFile {
                sha256: sha256_hex(&bytes),
                name,
                bytes,
            }),
            Err(d) => {
                diagnostics.push(d);
                return None;
            }
        }
    }
    Some(Base {
        version,
        dir: rel_dir,
        files,
        signature: None,
        image: None,
    })
}

/// The line of a top-level `key:` in a YAML text.
fn locate_key(text: &str, key: &str) -> Option<(usize, usize)> {
    text.lines()
        .position(|l| l.starts_with(key) && l[key.len()..].trim_start().starts_with(':'))
        .map(|i| (i + 1, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_versions() {
        let v = |s: &str| folder_version(s).map(|v| v.to_string());
        assert_eq!(v("v1.29.0").as_deref(), Some("1.29.0"));
        assert_eq!(v("V1.29.00").as_deref(), Some("1.29.0"));
        assert_eq!(v("v1.30.0-rc.1").as_deref(), Some("1.30.0-rc.1"));
        assert_eq!(v("latest"), None);
        assert_eq!(v("v1.29"), None);
        assert_eq!(v("v1.29.0+build"), None);
    }

    #[test]
    fn safe_names() {
        for ok in ["kustomization.yaml", "config.env", "a_b-c.1.yaml", "_x"] {
            assert!(is_safe_file_name(ok), "{ok}");
        }
        for bad in ["-rf", ".env", "a b", "a*", "a/b", "..", "", "ñ.yaml", "a$b"] {
            assert!(!is_safe_file_name(bad), "{bad}");
        }
    }

    #[test]
    fn references_cover_every_file_field() {
        let k: Value = yaml::from_str(
            r#"
resources: [ns.yaml, sts.yaml]
patches:
  - path: p1.yaml
  - patch: |-
      inline: true
patchesStrategicMerge:
  - p2.yaml
  - |-
    apiVersion: v1
patchesJson6902:
  - path: j.yaml
configMapGenerator:
  - name: c
    files: [key=data.txt, plain.txt]
    envs: [c.env]
secretGenerator:
  - name: s
    env: s.env
openapi:
  path: schema.json
"#,
        )
        .unwrap();
        let paths: Vec<_> = kustomization_references(&k)
            .into_iter()
            .map(|r| r.path)
            .collect();
        assert_eq!(
            paths,
            [
                "ns.yaml",
                "sts.yaml",
                "p2.yaml",
                "p1.yaml",
                "j.yaml",
                "schema.json",
                "data.txt",
                "plain.txt",
                "c.env",
                "s.env"
            ]
        );
    }
}
