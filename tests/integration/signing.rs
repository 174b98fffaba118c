//! Signed releases end to end: the installation page's verifying block,
//! run as a reader copies it with the real curl, sha256sum and ssh-keygen
//! against the built site on loopback; tampering stops it before anything
//! reaches kubectl; `basepress verify` reports the same; and `release` and
//! `build` with throwaway keys.

use crate::download::Server;
use crate::support::*;
use basepress::model::site::sha256_hex;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The host the pages name, which the tests replace with the loopback one.
const SITE_URL: &str = "https://docs.whystack.ai";

fn tools() -> bool {
    have("curl") && have("sha256sum") && have("ssh-keygen")
}

fn out_text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The verifying block of a built installation page, as a reader copies
/// it from the page.
pub fn verifying_block(site: &Path, lang: &str) -> String {
    let html =
        std::fs::read_to_string(site.join(format!("{lang}/installation/index.html"))).unwrap();
    let blocks: Vec<String> = html
        .split(r#"<pre class="code" data-lang="sh" tabindex="0">"#)
        .skip(1)
        .map(|rest| text(rest.split("</pre>").next().unwrap()))
        .filter(|b| b.contains("ssh-keygen -Y verify"))
        .collect();
    assert_eq!(blocks.len(), 1, "{lang}: one verifying block");
    blocks[0].clone()
}

/// Runs `block` with POSIX sh in `dir`, with the site URL pointed at
/// `url` (the only change).
pub fn run_block(block: &str, url: &str, dir: &Path) -> Output {
    assert!(block.contains(SITE_URL));
    Command::new("sh")
        .arg("-c")
        .arg(block.replace(SITE_URL, url))
        .current_dir(dir)
        .output()
        .expect("sh runs")
}

/// A fresh ed25519 key pair made by ssh-keygen: the private key's path.
fn keygen(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let o = Command::new("ssh-keygen")
        .args(["-q", "-C", "", "-f"])
        .arg(&path)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "ssh-keygen: {}", stderr(&o));
    path
}

pub(crate) fn ed25519(dir: &Path, name: &str) -> PathBuf {
    keygen(dir, name, &["-t", "ed25519", "-N", ""])
}

/// Signs `file` with ssh-keygen: `file.sig`.
fn ssh_sign(key: &Path, namespace: &str, file: &Path, extra: &[&str]) -> Vec<u8> {
    let sig = PathBuf::from(format!("{}.sig", file.display()));
    let _ = std::fs::remove_file(&sig);
    let o = Command::new("ssh-keygen")
        .args(["-Y", "sign", "-f"])
        .arg(key)
        .args(["-n", namespace])
        .args(extra)
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "ssh-keygen -Y sign: {}", stderr(&o));
    std::fs::read(&sig).unwrap()
}

/// `ssh-keygen -Y verify` of a published base's signature against the
/// published allowed_signers.
fn ssh_verify(site: &Path, identity: &str, namespace: &str, version: &str) -> Output {
    let base = site.join(format!("kubernetes/{version}/base"));
    Command::new("ssh-keygen")
        .args(["-Y", "verify", "-f"])
        .arg(site.join("kubernetes/allowed_signers"))
        .args(["-I", identity, "-n", namespace, "-s"])
        .arg(base.join("SHA256SUMS.sig"))
        .stdin(std::fs::File::open(base.join("SHA256SUMS")).unwrap())
        .output()
        .unwrap()
}

fn verify_site(target: &str, extra: &[&str]) -> (i32, String) {
    let o = basepress()
        .args(["verify", target, "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    (o.status.code().unwrap_or(-1), out_text(&o))
}

/// The rule ids of a `--format json` report.
fn rules_of(json: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_installation_pages_verifying_block_accepts_the_released_bases() {
    if !tools() {
        return;
    }
    let with_kubectl = have("kubectl");
    let (_keep, site) = built_repo_site();
    let server = Server::start(site.clone());
    let blocks: Vec<String> = ["es", "pt", "en"]
        .iter()
        .map(|lang| verifying_block(&site, lang))
        .collect();
    assert!(
        blocks.iter().all(|b| *b == blocks[0]),
        "the languages show different blocks"
    );
    assert!(blocks[0].starts_with("VERSION=1.30.0 "), "{}", blocks[0]);

    let work = tempfile::tempdir().unwrap();
    let o = run_block(&blocks[0], &server.url, work.path());
    assert!(o.status.success(), "{}{}", out_text(&o), stderr(&o));
    assert!(
        out_text(&o).contains("OK: base/ holds v1.30.0 as released"),
        "{}",
        out_text(&o)
    );
    let said = format!("{}{}", out_text(&o), stderr(&o));
    assert!(
        said.contains("Good \"whystack-agent/v1.30.0\" signature for releases@whystack.ai"),
        "{said}"
    );
    let listed = std::fs::read_to_string(site.join("kubernetes/v1.30.0/base/files.txt")).unwrap();
    for name in listed.lines() {
        assert_eq!(
            std::fs::read(work.path().join("base").join(name)).unwrap(),
            std::fs::read(site.join("kubernetes/v1.30.0/base").join(name)).unwrap(),
            "{name}"
        );
    }
    verify_downloaded_base(work.path(), "1.30.0", with_kubectl);

    // The older release verifies too (the reader sets VERSION).
    let older = blocks[0].replacen("VERSION=1.30.0 ", "VERSION=v1.29.0 ", 1);
    let work = tempfile::tempdir().unwrap();
    let o = run_block(&older, &server.url, work.path());
    assert!(o.status.success(), "{}{}", out_text(&o), stderr(&o));
    verify_downloaded_base(work.path(), "1.29.0", with_kubectl);

    // And so does basepress verify, over HTTP and on the folder.
    let (code, json) = verify_site(&server.url, &[]);
    assert_eq!((code, rules_of(&json)), (0, vec![]), "{json}");
    let (code, json) = verify_site(&site.to_string_lossy(), &["v1.30.0"]);
    assert_eq!((code, rules_of(&json)), (0, vec![]), "{json}");
    let o = basepress().args(["verify", &server.url]).output().unwrap();
    assert!(
        stderr(&o).contains(
            "verified v1.29.0, v1.30.0: 12 files match SHA256SUMS, 2 signature(s) verified"
        ),
        "{}",
        stderr(&o)
    );
}

/// One way to tamper with the served v1.30.0, and what must stop the
/// block and what `basepress verify` must report.
struct Tamper {
    what: &'static str,
    apply: fn(&Path, &Path),
    /// What the failing command prints.
    says: &'static str,
    rule: &'static str,
}

fn base_dir(site: &Path) -> PathBuf {
    site.join("kubernetes/v1.30.0/base")
}

fn append(path: &Path, text: &str) {
    let mut s = std::fs::read_to_string(path).unwrap();
    s.push_str(text);
    std::fs::write(path, s).unwrap();
}

const TAMPERS: &[Tamper] = &[
    Tamper {
        what: "a changed base file",
        apply: |site, _| append(&base_dir(site).join("statefulset.yaml"), "# changed\n"),
        says: "statefulset.yaml: FAILED",
        rule: "published-checksum-mismatch",
    },
    Tamper {
        what: "a files.txt naming a file outside base/",
        apply: |site, _| append(&base_dir(site).join("files.txt"), "../escaped\n"),
        says: "files.txt: FAILED",
        rule: "base-file-name-unsafe",
    },
    Tamper {
        what: "a changed file with SHA256SUMS to match",
        apply: |site, _| {
            let base = base_dir(site);
            append(&base.join("statefulset.yaml"), "# changed\n");
            let sha = sha256_hex(&std::fs::read(base.join("statefulset.yaml")).unwrap());
            let sums = std::fs::read_to_string(base.join("SHA256SUMS")).unwrap();
            let sums: String = sums
                .lines()
                .map(|l| match l.ends_with("  statefulset.yaml") {
                    true => format!("{sha}  statefulset.yaml\n"),
                    false => format!("{l}\n"),
                })
                .collect();
            std::fs::write(base.join("SHA256SUMS"), sums).unwrap();
        },
        says: "Could not verify signature",
        rule: "published-signature-invalid",
    },
    Tamper {
        what: "a signature by another key",
        apply: |site, keys| {
            let key = ed25519(keys, "intruder");
            let sig = ssh_sign(
                &key,
                "whystack-agent/v1.30.0",
                &base_dir(site).join("SHA256SUMS"),
                &[],
            );
            std::fs::write(base_dir(site).join("SHA256SUMS.sig"), sig).unwrap();
        },
        says: "Could not verify signature",
        rule: "published-signature-invalid",
    },
    Tamper {
        what: "v1.29.0's files served as v1.30.0",
        apply: |site, _| {
            let base = base_dir(site);
            std::fs::remove_dir_all(&base).unwrap();
            std::fs::create_dir(&base).unwrap();
            for e in std::fs::read_dir(site.join("kubernetes/v1.29.0/base")).unwrap() {
                let e = e.unwrap();
                std::fs::copy(e.path(), base.join(e.file_name())).unwrap();
            }
        },
        says: "Could not verify signature",
        rule: "published-signature-invalid",
    },
    Tamper {
        what: "a missing signature",
        apply: |site, _| std::fs::remove_file(base_dir(site).join("SHA256SUMS.sig")).unwrap(),
        says: "404",
        rule: "published-signature-invalid",
    },
];

#[test]
fn tampering_stops_the_verifying_block_before_kubectl() {
    if !tools() {
        return;
    }
    let (_keep, site) = built_repo_site();
    let block = verifying_block(&site, "en");
    let keys = tempfile::tempdir().unwrap();
    for t in TAMPERS {
        let copy = copy_site(&site);
        (t.apply)(copy.path(), keys.path());
        let server = Server::start(copy.path().to_path_buf());
        let work = tempfile::tempdir().unwrap();
        let o = run_block(&block, &server.url, work.path());
        assert!(!o.status.success(), "{}: the block succeeded", t.what);
        assert!(
            !out_text(&o).contains("OK: base/"),
            "{}: it went on to the end: {}",
            t.what,
            out_text(&o)
        );
        let said = format!("{}{}", out_text(&o), stderr(&o));
        assert!(said.contains(t.says), "{}: {said}", t.what);
        // Nothing escaped base/, and no base that kubectl could apply was
        // left complete and checked.
        assert!(!work.path().join("escaped").exists(), "{}", t.what);
        assert!(
            !work.path().parent().unwrap().join("escaped").exists(),
            "{}",
            t.what
        );
        let entries: Vec<String> = std::fs::read_dir(work.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            entries
                .iter()
                .all(|e| e == "base" || e == "allowed_signers"),
            "{}: {entries:?}",
            t.what
        );

        let (code, json) = verify_site(&server.url, &[]);
        assert_eq!(code, 1, "{}: {json}", t.what);
        assert!(
            rules_of(&json).iter().any(|r| r == t.rule),
            "{}: {json}",
            t.what
        );
        let (code, json) = verify_site(&copy.path().to_string_lossy(), &["1.30.0"]);
        assert_eq!(code, 1, "{}: {json}", t.what);
        assert!(
            rules_of(&json).iter().any(|r| r == t.rule),
            "{}: {json}",
            t.what
        );
    }
}

#[test]
fn verify_reports_what_it_cannot_read_with_exit_2() {
    // A port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (code, json) = verify_site(&format!("http://127.0.0.1:{port}"), &["--timeout", "5"]);
    assert_eq!(code, 2, "{json}");
    assert_eq!(rules_of(&json), vec!["site-unreachable"], "{json}");

    // A server that answers 503 to everything: it cannot be read now,
    // which says nothing of what it publishes.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            use std::io::{Read, Write};
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    let (code, json) = verify_site(&format!("http://127.0.0.1:{busy}"), &["--timeout", "5"]);
    assert_eq!(code, 2, "{json}");
    assert!(
        rules_of(&json).iter().all(|r| r == "site-unreachable"),
        "{json}"
    );

    let empty = tempfile::tempdir().unwrap();
    let (code, json) = verify_site(&empty.path().to_string_lossy(), &[]);
    assert_eq!(
        (code, rules_of(&json)),
        (2, vec!["site-unreachable".to_string()]),
        "{json}"
    );

    let o = basepress()
        .args(["verify", ".", "not-a-version"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn verify_checks_indexes_names_and_pinned_keys() {
    let (_keep, site) = built_repo_site();
    let target = |copy: &tempfile::TempDir| copy.path().to_string_lossy().into_owned();

    // An unsigned version is refused when the site publishes allowed_signers.
    let copy = copy_site(&site);
    let base = base_dir(copy.path());
    let files = std::fs::read_to_string(base.join("files.txt")).unwrap();
    std::fs::write(
        base.join("files.txt"),
        files.replace("SHA256SUMS.sig\n", ""),
    )
    .unwrap();
    let (code, json) = verify_site(&target(&copy), &[]);
    assert_eq!(code, 1);
    let rules = rules_of(&json);
    assert!(
        rules.contains(&"published-signature-invalid".to_string()),
        "{json}"
    );
    assert!(json.contains("is not signed"), "{json}");

    // Unsafe names are reported and never fetched; SHA256SUMS must name
    // what files.txt lists.
    let copy = copy_site(&site);
    let base = base_dir(copy.path());
    append(&base.join("files.txt"), "-rf\nextra.yaml\n");
    std::fs::write(base.join("extra.yaml"), "x: 1\n").unwrap();
    let (code, json) = verify_site(&target(&copy), &["v1.30.0"]);
    assert_eq!(code, 1);
    let rules = rules_of(&json);
    assert!(
        rules.contains(&"base-file-name-unsafe".to_string()),
        "{json}"
    );
    assert!(
        json.contains("`extra.yaml`, which SHA256SUMS does not vouch for"),
        "{json}"
    );

    // A CRLF files.txt: the loop's word splitting keeps the carriage
    // return, and curl refuses every name.
    let copy = copy_site(&site);
    let base = base_dir(copy.path());
    let files = std::fs::read_to_string(base.join("files.txt")).unwrap();
    std::fs::write(base.join("files.txt"), files.replace('\n', "\r\n")).unwrap();
    let (code, json) = verify_site(&target(&copy), &["v1.30.0"]);
    assert_eq!(code, 1);
    assert!(
        rules_of(&json).contains(&"base-file-name-unsafe".to_string()),
        "{json}"
    );

    // Two sums for one name: `sha256sum -c` fails on one, so does verify.
    let copy = copy_site(&site);
    let base = base_dir(copy.path());
    let sums = std::fs::read_to_string(base.join("SHA256SUMS")).unwrap();
    let forged = format!("{}  config.env\n{sums}", "0".repeat(64));
    std::fs::write(base.join("SHA256SUMS"), forged).unwrap();
    let (code, json) = verify_site(&target(&copy), &["v1.30.0"]);
    assert_eq!(code, 1);
    assert!(json.contains("a second, different SHA-256"), "{json}");

    // On a folder, what is published and no index lists: a file in a base
    // folder, a version folder. Installers never fetch it; nothing checks it.
    let copy = copy_site(&site);
    std::fs::write(base_dir(copy.path()).join("agent.env"), "RUNNER_TOKEN=x\n").unwrap();
    let (code, json) = verify_site(&target(&copy), &["v1.30.0"]);
    assert_eq!(code, 1, "{json}");
    assert_eq!(rules_of(&json), ["published-file-unlisted"], "{json}");
    assert!(json.contains("`agent.env`"), "{json}");
    let copy = copy_site(&site);
    let versions_txt = copy.path().join("kubernetes/versions.txt");
    let listed = std::fs::read_to_string(&versions_txt).unwrap();
    std::fs::write(&versions_txt, listed.replace("v1.30.0\n", "")).unwrap();
    let (code, json) = verify_site(&target(&copy), &[]);
    assert_eq!(code, 1, "{json}");
    assert_eq!(rules_of(&json), ["published-file-unlisted"], "{json}");
    assert!(json.contains("`v1.30.0`"), "{json}");
    // Beside a version's base, or beside the versions: published as part
    // of the immutable version, or of the contract, and unchecked.
    let copy = copy_site(&site);
    let version = copy.path().join("kubernetes/v1.30.0");
    std::fs::write(version.join("notes.env"), "TOKEN=x\n").unwrap();
    std::fs::create_dir_all(version.join("overlay")).unwrap();
    std::fs::write(version.join("overlay/k.yaml"), "a: 1\n").unwrap();
    std::fs::write(copy.path().join("kubernetes/stray.sh"), "echo\n").unwrap();
    let (code, json) = verify_site(&target(&copy), &[]);
    assert_eq!(code, 1, "{json}");
    for name in ["`notes.env`", "`overlay`", "`stray.sh`"] {
        assert!(json.contains(name), "{name}: {json}");
    }
    assert!(
        rules_of(&json)
            .iter()
            .all(|r| r == "published-file-unlisted"),
        "{json}"
    );

    // A missing file, and a versions.txt naming something unsafe.
    let copy = copy_site(&site);
    std::fs::remove_file(base_dir(copy.path()).join("config.env")).unwrap();
    append(&copy.path().join("kubernetes/versions.txt"), "v1.31.0;rm\n");
    let (code, json) = verify_site(&target(&copy), &[]);
    assert_eq!(code, 1);
    let rules = rules_of(&json);
    assert!(
        rules.contains(&"published-file-missing".to_string()),
        "{json}"
    );
    assert!(
        rules.contains(&"base-file-name-unsafe".to_string()),
        "{json}"
    );

    // A file larger than any published file is not read whole.
    let copy = copy_site(&site);
    std::fs::write(
        base_dir(copy.path()).join("statefulset.yaml"),
        vec![b'#'; 5 << 20],
    )
    .unwrap();
    let (code, json) = verify_site(&target(&copy), &["v1.30.0"]);
    assert_eq!(code, 1);
    assert!(json.contains("is larger than 4194304 bytes"), "{json}");

    // A version the site does not publish.
    let (code, json) = verify_site(&site.to_string_lossy(), &["v9.9.9"]);
    assert_eq!(
        (code, rules_of(&json)),
        (1, vec!["published-file-missing".to_string()]),
        "{json}"
    );

    if !have("ssh-keygen") {
        return;
    }
    // Pinning another key: the genuine signatures are refused.
    let keys = tempfile::tempdir().unwrap();
    let other = ed25519(keys.path(), "other");
    let public = std::fs::read_to_string(other.with_extension("pub")).unwrap();
    let pinned = keys.path().join("allowed_signers");
    std::fs::write(
        &pinned,
        format!("releases@whystack.ai namespaces=\"whystack-agent/v*\" {public}"),
    )
    .unwrap();
    let (code, json) = verify_site(
        &site.to_string_lossy(),
        &["--allowed-signers", &pinned.to_string_lossy()],
    );
    assert_eq!(code, 1, "{json}");
    let rules = rules_of(&json);
    assert_eq!(rules, vec!["published-signature-invalid"; 2], "{json}");
    assert!(json.contains("does not trust"), "{json}");
    // Pinning the site's own file: accepted.
    let (code, json) = verify_site(
        &site.to_string_lossy(),
        &[
            "--allowed-signers",
            &site.join("kubernetes/allowed_signers").to_string_lossy(),
        ],
    );
    assert_eq!(code, 0, "{json}");
}

/// A project that signs its releases with a key made for the test.
struct Signed {
    project: Project,
    keys: tempfile::TempDir,
    key: PathBuf,
}

const IDENTITY: &str = "releases@example.com";

impl Signed {
    fn new() -> Signed {
        let project = Project::new();
        let keys = tempfile::tempdir().unwrap();
        let key = ed25519(keys.path(), "release");
        let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
        project.write(
            "site.yaml",
            &format!(
                "{SITE_YAML}signing:\n  identity: {IDENTITY}\n  namespace: agent\n  public_key: {}\n",
                public.trim()
            ),
        );
        Signed { project, keys, key }
    }

    fn root(&self) -> String {
        self.project.root().to_string_lossy().into_owned()
    }

    fn run(&self, args: &[&str], key: Option<&Path>) -> Output {
        let mut c = basepress();
        c.args(args)
            .args(["--root", &self.root()])
            .env_remove("BASEPRESS_SIGNING_KEY");
        if let Some(k) = key {
            c.arg("--signing-key").arg(k);
        }
        c.output().unwrap()
    }

    fn build(&self, key: Option<&Path>) -> Output {
        self.run(&["build", "--format", "json"], key)
    }

    fn published(&self, name: &str) -> Option<Vec<u8>> {
        std::fs::read(self.project.out().join("kubernetes/v1.1.0/base").join(name)).ok()
    }
}

#[test]
fn a_release_is_signed_once_and_every_build_publishes_that_signature() {
    if !have("ssh-keygen") {
        return;
    }
    let s = Signed::new();
    let site = s.project.out();

    // Not released, no key: published unsigned (without a warning while
    // nothing is released, like version-unreleased).
    let o = s.build(None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(rules_of(&out_text(&o)), Vec::<String>::new());
    assert_eq!(s.published("SHA256SUMS.sig"), None);
    let files = String::from_utf8(s.published("files.txt").unwrap()).unwrap();
    assert!(!files.contains("SHA256SUMS.sig"), "{files}");
    let allowed = std::fs::read_to_string(site.join("kubernetes/allowed_signers")).unwrap();
    assert!(
        allowed.starts_with("releases@example.com namespaces=\"agent/v*\" ssh-ed25519 "),
        "{allowed}"
    );

    // Not released, with the key: signed by the build, and ssh-keygen agrees.
    let o = s.build(Some(&s.key));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let files = String::from_utf8(s.published("files.txt").unwrap()).unwrap();
    assert!(files.contains("SHA256SUMS.sig\n"), "{files}");
    let v = ssh_verify(&site, IDENTITY, "agent/v1.1.0", "v1.1.0");
    assert!(v.status.success(), "{}", stderr(&v));
    let v = ssh_verify(&site, IDENTITY, "agent/v1.0.0", "v1.1.0");
    assert!(!v.status.success(), "another version's namespace verified");

    // Releasing needs the key, and writes nothing without it.
    let o = s.run(&["release", "v1.1.0"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("signing-key-invalid"), "{}", stderr(&o));
    assert!(!s.project.path("bases/published.lock").exists());
    assert!(!s.project.path("bases/signatures").exists());

    // With the key in the environment, as a pipeline holds it.
    let o = basepress()
        .args(["release", "v1.1.0", "--root", &s.root()])
        .env(
            "BASEPRESS_SIGNING_KEY",
            std::fs::read_to_string(&s.key).unwrap(),
        )
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("signature stored in bases/signatures/v1.1.0.sig"),
        "{}",
        stderr(&o)
    );
    let stored = std::fs::read(s.project.path("bases/signatures/v1.1.0.sig")).unwrap();
    let lock = std::fs::read_to_string(s.project.path("bases/published.lock")).unwrap();
    assert!(
        lock.contains(&format!("v1.1.0 SHA256SUMS.sig {}\n", sha256_hex(&stored))),
        "{lock}"
    );

    // Every build publishes the stored signature, key or not.
    for key in [None, Some(s.key.as_path())] {
        let o = s.build(key);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(
            rules_of(&out_text(&o)),
            Vec::<String>::new(),
            "{}",
            out_text(&o)
        );
        assert_eq!(
            s.published("SHA256SUMS.sig").as_deref(),
            Some(stored.as_slice())
        );
    }
    let (code, json) = verify_site(&site.to_string_lossy(), &[]);
    assert_eq!(code, 0, "{json}");
    let before = tree(&site);

    // Another key is refused before anything is written.
    let other = ed25519(s.keys.path(), "other");
    let o = s.build(Some(&other));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(rules_of(&out_text(&o)).contains(&"signing-key-invalid".to_string()));
    assert_eq!(tree(&site), before, "a refused build changed the site");

    // A re-signed release (valid, other bytes) is not the one released.
    let sums = s.project.path("sums");
    std::fs::write(&sums, s.published("SHA256SUMS").unwrap()).unwrap();
    let resigned = ssh_sign(&s.key, "agent/v1.1.0", &sums, &["-O", "hashalg=sha256"]);
    assert_ne!(resigned, stored);
    std::fs::remove_file(&sums).unwrap();
    std::fs::remove_file(s.project.path("sums.sig")).unwrap();
    std::fs::write(s.project.path("bases/signatures/v1.1.0.sig"), &resigned).unwrap();
    let o = s.build(Some(&s.key));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        out_text(&o).contains("differs from the one released"),
        "{}",
        out_text(&o)
    );
    assert_eq!(tree(&site), before);

    // A released signature that is gone.
    std::fs::remove_file(s.project.path("bases/signatures/v1.1.0.sig")).unwrap();
    let o = s.build(Some(&s.key));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        rules_of(&out_text(&o)).contains(&"signature-missing".to_string()),
        "{}",
        out_text(&o)
    );

    // A stored signature that cannot be read is that, not also missing.
    let mut broken = stored.clone();
    broken.push(0xff);
    std::fs::write(s.project.path("bases/signatures/v1.1.0.sig"), &broken).unwrap();
    let o = s.build(Some(&s.key));
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    let rules = rules_of(&out_text(&o));
    assert!(
        rules.contains(&"signature-invalid".to_string())
            && !rules.contains(&"signature-missing".to_string()),
        "{rules:?}"
    );

    // Back as released; then a changed base file breaks both the lock and
    // the signature.
    std::fs::write(s.project.path("bases/signatures/v1.1.0.sig"), &stored).unwrap();
    assert_eq!(s.build(None).status.code(), Some(0));
    s.project.write("bases/v1.1.0/config.env", "MODE=b\n");
    let o = s.build(None);
    assert_eq!(o.status.code(), Some(1));
    let rules = rules_of(&out_text(&o));
    assert!(
        rules.contains(&"released-version-changed".to_string()),
        "{rules:?}"
    );
    assert!(
        rules.contains(&"signature-invalid".to_string()),
        "{rules:?}"
    );

    // Once something is released, a new version built without the key is
    // published unsigned with a warning; with the key, signed.
    s.project.write("bases/v1.1.0/config.env", "MODE=a\n");
    for f in ["kustomization.yaml", "deployment.yaml", "config.env"] {
        let text = std::fs::read_to_string(s.project.path(&format!("bases/v1.1.0/{f}"))).unwrap();
        s.project.write(&format!("bases/v1.0.0/{f}"), &text);
    }
    let o = s.build(None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let unsigned: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "version-unsigned")
        .collect();
    assert_eq!(unsigned.len(), 1, "{v}");
    assert_eq!(
        unsigned[0]["location"]["file"],
        "bases/v1.0.0/kustomization.yaml"
    );
    assert!(!site.join("kubernetes/v1.0.0/base/SHA256SUMS.sig").exists());
    let o = s.build(Some(&s.key));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!rules_of(&out_text(&o)).contains(&"version-unsigned".to_string()));
    let v = ssh_verify(&site, IDENTITY, "agent/v1.0.0", "v1.0.0");
    assert!(v.status.success(), "{}", stderr(&v));

    // Releasing a version adds its own signature, never another's: with
    // v1.1.0's stored signature gone, releasing v1.0.0 is refused.
    std::fs::remove_file(s.project.path("bases/signatures/v1.1.0.sig")).unwrap();
    let lock_before = std::fs::read(s.project.path("bases/published.lock")).unwrap();
    let o = s.run(&["release", "v1.0.0"], Some(&s.key));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("signature-missing"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(s.project.path("bases/published.lock")).unwrap(),
        lock_before
    );
}

/// A version released and deployed before `signing` was set takes its
/// signature once it is (`basepress release` signs it then): a build
/// against the deployed site, and the site's check, accept exactly that
/// change, and nothing else.
#[test]
fn a_version_deployed_unsigned_takes_its_signature_later() {
    if !have("ssh-keygen") {
        return;
    }
    let s = Signed::new();
    let signed_site = std::fs::read_to_string(s.project.path("site.yaml")).unwrap();
    s.project.write("site.yaml", SITE_YAML);
    let o = s.run(&["release", "v1.1.0"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = s.build(None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let deployed = copy_site(&s.project.out());
    let against = deployed.path().to_string_lossy().into_owned();

    s.project.write("site.yaml", &signed_site);
    let o = s.run(&["release", "v1.1.0"], Some(&s.key));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = s.run(&["build", "--format", "json", "--against", &against], None);
    assert_eq!(o.status.code(), Some(0), "{}", out_text(&o));
    assert!(s.published("SHA256SUMS.sig").is_some());
    let (code, json) = verify_site(&s.project.out().to_string_lossy(), &[]);
    assert_eq!(code, 0, "{json}");

    // Any other change of the deployed version is still refused.
    let config = deployed.path().join("kubernetes/v1.1.0/base/config.env");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}# changed\n")).unwrap();
    let o = s.run(&["build", "--format", "json", "--against", &against], None);
    assert_eq!(o.status.code(), Some(1), "{}", out_text(&o));
    assert!(
        rules_of(&out_text(&o)).contains(&"released-version-changed".to_string()),
        "{}",
        out_text(&o)
    );
}

#[test]
fn keys_that_cannot_sign_are_refused_with_exit_2() {
    if !have("ssh-keygen") {
        return;
    }
    let s = Signed::new();
    let encrypted = keygen(
        s.keys.path(),
        "encrypted",
        &["-t", "ed25519", "-N", "secret phrase"],
    );
    let ecdsa = keygen(s.keys.path(), "ecdsa", &["-t", "ecdsa", "-N", ""]);
    let garbage = s.keys.path().join("garbage");
    std::fs::write(&garbage, "not a key\n").unwrap();
    let missing = s.keys.path().join("missing");
    let public = s.key.with_extension("pub");
    for (key, says) in [
        (&encrypted, "is encrypted with a passphrase"),
        (
            &ecdsa,
            "is an ecdsa-sha2-nistp256 key; basepress signs with ed25519 keys only",
        ),
        (&garbage, "does not start with a `-----BEGIN` line"),
        (&public, "is a public key"),
        (&missing, "cannot read the signing key"),
    ] {
        let o = s.run(&["check"], Some(key));
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("error[signing-key-invalid]"),
            "{}",
            stderr(&o)
        );
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
        assert!(!stderr(&o).contains("PRIVATE KEY"), "the key was printed");
    }

    // A key for a project that does not sign.
    let plain = Project::new();
    let o = basepress()
        .args([
            "check",
            "--root",
            &plain.root().to_string_lossy(),
            "--signing-key",
        ])
        .arg(&s.key)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("site.yaml configures no `signing`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn site_yaml_signing_values_are_checked() {
    let p = Project::new();
    p.write(
        "site.yaml",
        &format!("{SITE_YAML}signing:\n  identity: releases@example.com\n  namespace: agent\n  public_key: ssh-ed25519 AAAAnotakey\n"),
    );
    let (code, v) = p.check_json();
    assert_eq!(code, 2, "{v}");
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "config-invalid");
    assert_eq!(f["location"]["line"], 15, "{v}");
    assert!(f["message"].as_str().unwrap().contains("public_key"), "{v}");

    p.write(
        "site.yaml",
        &format!(
            "{SITE_YAML}signing:\n  identity: two words\n  namespace: agent\n  public_key: x\n"
        ),
    );
    let (code, v) = p.check_json();
    assert_eq!(code, 2, "{v}");
    assert!(
        v["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("signing.identity"),
        "{v}"
    );
}

#[test]
fn the_versions_page_shows_the_installation_pages_verifying_loop() {
    if !tools() {
        return;
    }
    let (_keep, site) = built_repo_site();
    let blocks = |lang: &str| -> Vec<String> {
        let html =
            std::fs::read_to_string(site.join(format!("{lang}/versions/index.html"))).unwrap();
        html.split(r#"<pre class="code" data-lang="sh""#)
            .skip(1)
            .map(|rest| rest.split_once('>').unwrap().1)
            .map(|rest| text(rest.split("</pre>").next().unwrap()))
            .filter(|b| b.contains("ssh-keygen -Y verify"))
            .collect()
    };
    // One per version, newest first; in English, the installation page's
    // block word for word.
    let en = blocks("en");
    assert_eq!(en.len(), 2, "{en:#?}");
    assert_eq!(en[0], verifying_block(&site, "en"));
    assert!(en[1].starts_with("VERSION=1.29.0 "), "{}", en[1]);
    // In Spanish, its comment and last line are; and it runs.
    let es = blocks("es");
    assert!(
        es[0].starts_with("VERSION=1.30.0   # el tag de la imagen, con o sin la \"v\"\n"),
        "{}",
        es[0]
    );
    let server = Server::start(site.clone());
    let work = tempfile::tempdir().unwrap();
    let o = run_block(&es[1], &server.url, work.path());
    assert!(o.status.success(), "{}{}", out_text(&o), stderr(&o));
    assert!(
        out_text(&o).contains("OK: base/ tiene v1.29.0 tal como se publicó"),
        "{}",
        out_text(&o)
    );
    verify_downloaded_base(work.path(), "1.29.0", false);
}

/// `verify --identity --namespace` decides as the installer's
/// `ssh-keygen -Y verify -I -n` does, for every combination.
#[test]
fn verify_agrees_with_ssh_keygen_on_identity_and_namespace() {
    let (_keep, site) = built_repo_site();
    let target = site.to_string_lossy().into_owned();
    for (identity, namespace) in [
        ("releases@whystack.ai", "whystack-agent"),
        ("eve@example.com", "whystack-agent"),
        ("releases@whystack.ai", "file"),
        ("releases@whystack.ai", "whystack-agen"),
    ] {
        let (code, json) = verify_site(
            &target,
            &["v1.30.0", "--identity", identity, "--namespace", namespace],
        );
        if !have("ssh-keygen") {
            assert_eq!(
                code == 0,
                identity.starts_with("releases") && namespace == "whystack-agent"
            );
            continue;
        }
        let ssh = ssh_verify(&site, identity, &format!("{namespace}/v1.30.0"), "v1.30.0");
        assert_eq!(
            code == 0,
            ssh.status.success(),
            "{identity} {namespace}: basepress {json}, ssh-keygen {}",
            stderr(&ssh)
        );
    }
}
