//! Helpers shared by the integration tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root: a real docs project.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn basepress() -> Command {
    Command::new(env!("CARGO_BIN_EXE_basepress"))
}

/// Runs basepress with `args`, returning its output.
pub fn run(args: &[&str]) -> Output {
    basepress().args(args).output().expect("basepress runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The findings of `rule` in a JSON report.
pub fn findings_of<'r>(report: &'r serde_json::Value, rule: &str) -> Vec<&'r serde_json::Value> {
    report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["rule"] == rule)
        .collect()
}

/// `basepress check --format json` on the project at `root`: its exit
/// code and report.
pub fn check_json_at(root: &Path) -> (Option<i32>, serde_json::Value) {
    let o = run(&[
        "check",
        "--root",
        &root.to_string_lossy(),
        "--format",
        "json",
    ]);
    let report =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
    (o.status.code(), report)
}

/// Whether tests that need an external tool must run: in CI they never skip.
pub fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Whether `tool` can run here; panics in CI when it cannot.
pub fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--help")
        .output()
        // Some tools (ssh-keygen) answer --help with their usage on stderr
        // and a failing status: having run at all is what counts.
        .is_ok_and(|o| o.status.success() || !o.stdout.is_empty() || !o.stderr.is_empty());
    if !ok && required() {
        panic!("`{tool}` is required when CI=true, and it cannot run here");
    }
    if !ok {
        eprintln!("skipping: `{tool}` is not installed");
    }
    ok
}

/// A temporary docs project, seeded with a small valid site.
pub struct Project {
    pub dir: tempfile::TempDir,
}

pub const SITE_YAML: &str = "title: Test docs
base_url: https://docs.example.com
default_language: en
languages:
  - code: en
    name: English
  - code: es
    name: Español
image:
  name: agent
  releases: image-releases.yaml
";

pub const IMAGES_YAML: &str = "name: agent
releases: [1.0.0, 1.1.0]
commands:
  - name: agent-health
    versions: \">=1.1.0\"
    args: [[live], [ready]]
";

pub const KUSTOMIZATION: &str = "apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - deployment.yaml
configMapGenerator:
  - name: agent-config
    envs:
      - config.env
";

pub const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      securityContext:
        runAsNonRoot: true
      containers:
        - name: agent
          image: agent
";

impl Project {
    /// Copies a file of this repository, or a folder with everything in it,
    /// to `to` in the project.
    pub fn copy_from_repo(&self, from: &str, to: &str) {
        let src = repo().join(from);
        for e in walkdir::WalkDir::new(&src) {
            let e = e.unwrap();
            if e.file_type().is_file() {
                let rel = e.path().strip_prefix(&src).unwrap();
                let dest = match rel.as_os_str().is_empty() {
                    true => std::path::PathBuf::from(to),
                    false => std::path::Path::new(to).join(rel),
                };
                self.write(
                    &dest.to_string_lossy(),
                    &std::fs::read_to_string(e.path()).unwrap(),
                );
            }
        }
    }

    /// An empty folder.
    pub fn empty() -> Self {
        Project {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn new() -> Self {
        let p = Project::empty();
        p.write("site.yaml", SITE_YAML);
        p.write("image-releases.yaml", IMAGES_YAML);
        p.write(
            "content/en/index.md",
            "---\ntitle: Home\nweight: 1\n---\n# Home\n\nSee [install](install.md#steps).\n",
        );
        p.write(
            "content/en/install.md",
            "---\ntitle: Install\nweight: 2\n---\n# Install\n\n## Steps\n\nGet [files](/kubernetes/v1.1.0/base/files.txt).\n",
        );
        p.write("content/es/index.md", "---\ntitle: Inicio\n---\n# Inicio\n");
        p.write(
            "content/es/install.md",
            "---\ntitle: Instalar\n---\n# Instalar\n\n## Pasos\n",
        );
        p.write("bases/v1.1.0/kustomization.yaml", KUSTOMIZATION);
        p.write("bases/v1.1.0/deployment.yaml", DEPLOYMENT);
        p.write("bases/v1.1.0/config.env", "MODE=a\n");
        p
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) -> &Self {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
        self
    }

    pub fn remove(&self, rel: &str) -> &Self {
        std::fs::remove_file(self.path(rel)).expect("remove");
        self
    }

    pub fn out(&self) -> PathBuf {
        self.path("site")
    }

    pub fn build(&self) -> Output {
        run(&["build", "--root", &self.root().to_string_lossy()])
    }

    /// `basepress check --format json`, parsed.
    pub fn check_json(&self) -> (i32, serde_json::Value) {
        let o = run(&[
            "check",
            "--root",
            &self.root().to_string_lossy(),
            "--format",
            "json",
        ]);
        let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "check --format json printed invalid JSON ({e}): {}",
                String::from_utf8_lossy(&o.stdout)
            )
        });
        (o.status.code().unwrap_or(-1), v)
    }
}

/// The text of some HTML: tags dropped, the escapes basepress writes
/// undone.
/// The text of basepress's built-in template `name` (`page.html`).
pub fn default_template(name: &str) -> &'static str {
    basepress::render::templates::DEFAULTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
        .unwrap_or_else(|| panic!("no built-in template {name}"))
}

pub fn text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Every file below `dir`, by relative path, with its bytes; the build
/// cache's record (`.basepress-cache.json`, bookkeeping of the build that
/// wrote the folder, never published) is left out.
pub fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let e = e.expect("walk");
        if e.file_type().is_file() {
            let rel = e.path().strip_prefix(dir).expect("prefix");
            if rel == Path::new(".basepress-cache.json") {
                continue;
            }
            out.insert(
                rel.to_string_lossy().into_owned(),
                std::fs::read(e.path()).expect("read"),
            );
        }
    }
    out
}

/// The repository's site, built into a temporary folder (kept alive by the
/// returned guard).
pub fn built_repo_site() -> (tempfile::TempDir, PathBuf) {
    let out = tempfile::tempdir().unwrap();
    let site = out.path().join("site");
    build_ok(&repo(), &site);
    (out, site)
}

/// After the installers' loop has filled `work/base`: `sha256sum -c`
/// verifies it and, when kubectl is there, `kubectl kustomize base` builds
/// the agent.
pub fn verify_downloaded_base(work: &Path, version: &str, with_kubectl: bool) {
    let sums = Command::new("sha256sum")
        .args(["-c", "SHA256SUMS"])
        .current_dir(work.join("base"))
        .output()
        .unwrap();
    assert!(
        sums.status.success(),
        "{version}: {}",
        String::from_utf8_lossy(&sums.stdout)
    );
    if with_kubectl {
        let k = Command::new("kubectl")
            .args(["kustomize", "base"])
            .current_dir(work)
            .output()
            .unwrap();
        assert!(k.status.success(), "{version}: {}", stderr(&k));
        let manifests = String::from_utf8_lossy(&k.stdout);
        assert!(manifests.contains("kind: StatefulSet"), "{version}");
        assert!(
            manifests.contains("name: whystack-agent-config-"),
            "{version}"
        );
    }
}

/// A temporary copy of this repository's docs project, with its docs
/// versions (`versions/`).
pub fn copy_repo_with_versions() -> tempfile::TempDir {
    let dir = copy_repo();
    let src = repo();
    for e in walkdir::WalkDir::new(src.join("versions")) {
        let e = e.unwrap();
        let to = dir.path().join(e.path().strip_prefix(&src).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
    dir
}

/// A temporary copy of this repository's docs project without its docs
/// versions: `content/` is the one version, published as the latest.
pub fn copy_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = repo();
    for item in [
        "site.yaml",
        "image-releases.yaml",
        "content",
        "bases",
        "templates",
        "static",
        "i18n",
    ] {
        let from = src.join(item);
        if !from.exists() {
            continue;
        }
        for e in walkdir::WalkDir::new(&from) {
            let e = e.unwrap();
            let to = dir.path().join(e.path().strip_prefix(&src).unwrap());
            if e.file_type().is_dir() {
                std::fs::create_dir_all(&to).unwrap();
            } else {
                std::fs::copy(e.path(), &to).unwrap();
            }
        }
    }
    dir
}

/// `basepress build --root ROOT --out OUT`, which must succeed.
pub fn build_ok(root: &Path, out: &Path) {
    let o = run(&[
        "build",
        "--root",
        &root.to_string_lossy(),
        "--out",
        &out.to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// A free TCP port on loopback, for a server a test starts.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A copy of a built site, to change or tamper with.
pub fn copy_site(site: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, bytes) in tree(site) {
        let to = dir.path().join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, bytes).unwrap();
    }
    dir
}
