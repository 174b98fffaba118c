//! Inputs stay inputs: what a hostile or careless docs repository can put
//! in front of basepress (FIFOs, devices, links, paths out of the project,
//! huge lines, self-including templates, names that clash on other disks,
//! pre-releases, contradictory data, bytes that are not UTF-8, terminal
//! escapes) is refused with a finding, never a hang, a crash, a file read
//! from elsewhere or a silent wrong answer.

use crate::support::*;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// Runs basepress with `args`, killing it if it takes more than 60 s (a
/// hang is a failure, not a stuck test run).
fn run_bounded(args: &[&str]) -> Output {
    let mut child = basepress()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("basepress {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `check --format json`, bounded, parsed.
fn check(p: &Project) -> (i32, serde_json::Value) {
    let o = run_bounded(&[
        "check",
        "--format",
        "json",
        "--root",
        &p.root().to_string_lossy(),
    ]);
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "check printed invalid JSON ({e}): {:?}; stderr {}",
            String::from_utf8_lossy(&o.stdout),
            stderr(&o)
        )
    });
    (o.status.code().unwrap_or(-1), v)
}

/// The findings of `rule` in a report, as (file, message).
fn findings(report: &serde_json::Value, rule: &str) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .map(|f| {
            (
                f["location"]["file"].as_str().unwrap_or("").to_string(),
                f["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn replace_with_fifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let o = std::process::Command::new("mkfifo")
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success());
}

#[cfg(unix)]
#[test]
fn a_fifo_anywhere_is_an_error_and_never_a_hang() {
    if !have("mkfifo") {
        return;
    }
    for file in [
        "site.yaml",
        "image-releases.yaml",
        "bases/v1.1.0/kustomization.yaml",
        "bases/v1.1.0/deployment.yaml",
        "bases/published.lock",
        "content/en/install.md",
        "content/en/diagram.svg",
        "static/robots.txt",
        "templates/page.html",
    ] {
        let p = Project::new();
        replace_with_fifo(&p.path(file));
        let (code, report) = check(&p);
        assert_ne!(code, 0, "{file}: {report:#}");
        let found = findings(&report, "input-not-a-file");
        assert!(
            found.iter().any(|(f, m)| f == file && m.contains("FIFO")),
            "{file}: {report:#}"
        );
    }
}

/// The image source of site.yaml, and the files the command line names,
/// are read as carefully: inside the project, and a FIFO is refused, not
/// waited on.
#[cfg(unix)]
#[test]
fn image_sources_and_named_files_never_hang_or_leave_the_project() {
    if !have("mkfifo") {
        return;
    }
    let with_source = |p: &Project, source: &str| {
        let site = std::fs::read_to_string(p.path("site.yaml")).unwrap();
        p.write(
            "site.yaml",
            &site.replace(
                "  releases: image-releases.yaml\n",
                &format!("  releases: image-releases.yaml\n  source: {source}\n"),
            ),
        );
    };
    let p = Project::new();
    with_source(&p, "docker-archive:../../../etc/passwd");
    let (code, report) = check(&p);
    assert_eq!(code, 2, "{report:#}");
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["location"]["file"] == "site.yaml"
                && f["message"]
                    .as_str()
                    .unwrap()
                    .contains("not a path inside the project")),
        "{report:#}"
    );
    for source in ["docker-archive:img.tar", "oci:layout"] {
        let p = Project::new();
        replace_with_fifo(&p.path("img.tar"));
        replace_with_fifo(&p.path("layout/index.json"));
        std::fs::write(
            p.path("layout/oci-layout"),
            r#"{"imageLayoutVersion":"1.0.0"}"#,
        )
        .unwrap();
        with_source(&p, source);
        let (code, report) = check(&p);
        assert_ne!(code, 0, "{source}: {report:#}");
        assert!(report.to_string().contains("FIFO"), "{source}: {report:#}");
    }
    let p = Project::new();
    replace_with_fifo(&p.path("key"));
    let root = p.root().to_string_lossy().into_owned();
    let o = run_bounded(&[
        "check",
        "--root",
        &root,
        "--signing-key",
        &p.path("key").to_string_lossy(),
    ]);
    assert_ne!(o.status.code(), Some(0));
}

#[cfg(unix)]
#[test]
fn a_device_is_refused_and_the_cap_is_what_is_read() {
    let p = Project::new();
    // A device node needs privileges; a file that claims to be empty and
    // is not (as /proc files do) is tested in the library.
    let dev = p.path("content/en/zero.md");
    let made = std::process::Command::new("mknod")
        .arg(&dev)
        .args(["c", "1", "5"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !made {
        eprintln!("skipping the device: mknod is not permitted here");
        return;
    }
    let (code, report) = check(&p);
    assert_ne!(code, 0);
    assert!(
        findings(&report, "input-not-a-file")
            .iter()
            .any(|(f, m)| f == "content/en/zero.md" && m.contains("device")),
        "{report:#}"
    );
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_refused_everywhere() {
    use std::os::unix::fs::symlink;
    // Each case moves a real input folder or file away and links to it.
    for (what, rule) in [
        ("bases", "input-symlink"),
        ("bases/v1.1.0", "base-symlink"),
        ("content", "input-symlink"),
        ("content/en", "input-symlink"),
        ("static", "input-symlink"),
        ("templates", "input-symlink"),
        ("site.yaml", "input-symlink"),
        ("image-releases.yaml", "input-symlink"),
        ("bases/published.lock", "input-symlink"),
    ] {
        let p = Project::new();
        p.write("static/robots.txt", "User-agent: *\n");
        p.write("templates/partials/footer.html", "<footer>f</footer>\n");
        p.write("bases/published.lock", "# Released bases\n");
        let elsewhere = tempfile::tempdir().unwrap();
        let moved = elsewhere.path().join("moved");
        std::fs::rename(p.path(what), &moved).unwrap();
        symlink(&moved, p.path(what)).unwrap();
        let (code, report) = check(&p);
        assert_ne!(code, 0, "{what}: {report:#}");
        assert!(
            findings(&report, rule).iter().any(|(f, _)| f == what),
            "{what}: no {rule} at {what}: {report:#}"
        );
    }
}

#[test]
fn paths_from_settings_stay_inside_the_project() {
    // Both in the same temporary folder: `..` from the project reaches it.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("images.yaml"), IMAGES_YAML).unwrap();
    let p = Project::new();
    assert_eq!(p.root().parent(), outside.path().parent());
    let up = format!(
        "../{}/images.yaml",
        outside.path().file_name().unwrap().to_string_lossy()
    );
    for releases in [up.as_str(), "/etc/passwd"] {
        p.write(
            "site.yaml",
            &SITE_YAML.replace(
                "releases: image-releases.yaml",
                &format!("releases: {releases}"),
            ),
        );
        let (code, report) = check(&p);
        assert_eq!(code, 2, "{releases}: {report:#}");
        let found = findings(&report, "config-invalid");
        assert!(
            found
                .iter()
                .any(|(f, m)| f == "site.yaml" && m.contains("not a path inside the project")),
            "{releases}: {report:#}"
        );
    }
}

/// However many findings one page makes, the report stays small: 100 of
/// a rule a file, and one more that counts the rest.
#[test]
fn a_page_of_a_thousand_errors_makes_a_bounded_report() {
    let p = Project::new();
    let body: String = (0..1000)
        .map(|i| format!("[link {i}](nowhere-{i}.md)\n\n"))
        .collect();
    p.write(
        "content/en/many.md",
        &format!("---\ntitle: Many\n---\n{body}"),
    );
    let (code, report) = check(&p);
    assert_eq!(code, 1);
    let broken = findings(&report, "link-broken");
    assert_eq!(broken.len(), 101, "{report:#}");
    assert!(
        broken[100].1.contains("900 more `link-broken` findings"),
        "{:?}",
        broken[100]
    );
    let o = run_bounded(&["check", "--root", &p.root().to_string_lossy()]);
    assert!(stderr(&o).len() < 60_000, "{} bytes", stderr(&o).len());
}

#[test]
fn a_message_never_echoes_more_than_a_cut_value() {
    let secret = "sk_live_".to_string() + &"Zq9".repeat(300_000);
    let p = Project::new();
    p.write("bases/v1.1.0/config.env", &format!("MODE=a\n{secret}\n"));
    let o = run_bounded(&["check", "--root", &p.root().to_string_lossy()]);
    let text = stderr(&o);
    // Kustomize stops reading the env file at a line this long.
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("kustomize-generator-invalid"), "{text}");
    assert!(
        text.len() < 2_000,
        "the text output has {} bytes",
        text.len()
    );
    let (_, report) = check(&p);
    let m = report["findings"][0]["message"].as_str().unwrap();
    assert!(m.len() < 400, "the JSON message has {} bytes", m.len());
}

#[test]
fn templates_that_never_stop_are_an_error_naming_them() {
    for (name, text, expect) in [
        (
            "page.html",
            "{% include \"page.html\" %}",
            "`page.html` includes, extends or imports itself",
        ),
        (
            "partials/footer.html",
            "{% include \"partials/loop.html\" %}",
            "`partials/footer.html` → `partials/loop.html` → `partials/footer.html`",
        ),
        (
            "macros.html",
            "{% macro nav(items, prefix) %}{{ self::nav(items=items, prefix=prefix) }}{% endmacro nav %}",
            "macro `nav` of `macros.html` calls itself without descending",
        ),
    ] {
        let p = Project::new();
        p.write(&format!("templates/{name}"), text);
        p.write("templates/partials/loop.html", "{% include \"partials/footer.html\" %}");
        for cmd in ["check", "build"] {
            let o = run_bounded(&[cmd, "--format", "json", "--root", &p.root().to_string_lossy()]);
            assert_eq!(o.status.code(), Some(2), "{cmd} {name}: {}", stderr(&o));
            let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let found = findings(&report, "template-recursion");
            assert!(
                found
                    .iter()
                    .any(|(f, m)| f == &format!("templates/{name}") && m.contains(expect)),
                "{cmd} {name}: {report:#}"
            );
        }
    }
    // The sidebar macro walks its tree: a page drawing it builds, as deep
    // as folders may go.
    let p = Project::new();
    p.write(
        "templates/page.html",
        "{% import \"macros.html\" as m %}<html><body>{{ m::nav(items=nav, prefix=\"\") }}{{ page.content | safe }}</body></html>\n",
    );
    let deepest = "d/".repeat(32);
    p.write(
        &format!("content/en/{deepest}page.md"),
        "---\ntitle: Deep\n---\n# Deep\n",
    );
    let o = run_bounded(&["build", "--root", &p.root().to_string_lossy()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Deeper is refused before anything walks it (at 1,500 folders the
    // stack overflowed).
    let mut path = p.path("content/en");
    for _ in 0..1500 {
        path.push("d");
        if !path.exists() {
            std::fs::create_dir(&path).unwrap();
        }
    }
    std::fs::write(path.join("page.md"), "---\ntitle: Deeper\n---\n").unwrap();
    let o = run_bounded(&[
        "build",
        "--format",
        "json",
        "--root",
        &p.root().to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        findings(&report, "content-layout")
            .iter()
            .any(|(_, m)| m.contains("more than 32 folders deep")),
        "{report:#}"
    );
}

#[test]
fn a_deeply_nested_template_is_an_error_not_a_crash() {
    for (text, says) in [
        (
            "{% if true %}".repeat(20_000) + "x" + &"{% endif %}".repeat(20_000),
            "more than 64 deep",
        ),
        (
            format!("{{{{ {}1{} }}}}", "(".repeat(20_000), ")".repeat(20_000)),
            "more than 64 deep",
        ),
        // A long chain of operators overflowed the parser's stack; a loop
        // of 30 million steps ran for minutes.
        (format!("{{{{ 1{} }}}}", " + 1".repeat(20_000)), "operators"),
        (
            "{% for i in range(end=30000000) %}x{% endfor %}".to_string(),
            "loops over ranges",
        ),
        // A range whose end only rendering knows held 32 GB; a step of 0
        // never ended.
        (
            "{% set n = 1000000000 %}{% for i in range(end=n) %}x{% endfor %}".to_string(),
            "more than the 1000000",
        ),
        (
            "{% for i in range(end=5, step_by=0) %}x{% endfor %}".to_string(),
            "never ends",
        ),
        // The environment is no input of a page.
        (
            "{{ get_env(name=\"HOME\") }}".to_string(),
            "`get_env` is not available",
        ),
    ] {
        let p = Project::new();
        p.write("templates/page.html", &text);
        let (code, report) = check(&p);
        assert_eq!(code, 2, "{report:#}");
        assert!(
            findings(&report, "template-invalid")
                .iter()
                .any(|(f, m)| f == "templates/page.html" && m.contains(says)),
            "{report:#}"
        );
    }
}

/// Runs `check` and `build` of `p` with `limit` (a render limit and its
/// value): each must stop with exit 2 and one finding of `rule` that says
/// `says`. How long each took, by command.
fn stopped_renders(
    p: &Project,
    limit: &[&str],
    rule: &str,
    says: &str,
) -> Vec<(&'static str, Duration)> {
    let root = p.root().to_string_lossy().into_owned();
    let out = p.out().to_string_lossy().into_owned();
    let mut took = Vec::new();
    for command in ["check", "build"] {
        let started = Instant::now();
        let mut args = vec![command, "--root", &root, "--format", "json"];
        args.extend(limit);
        if command == "build" {
            args.extend(["--out", &out]);
        }
        let o = run_bounded(&args);
        took.push((command, started.elapsed()));
        assert_eq!(o.status.code(), Some(2), "{command}: {}", stderr(&o));
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let found = findings(&report, rule);
        assert_eq!(found.len(), 1, "{report:#}");
        assert!(found[0].1.contains(says), "{report:#}");
    }
    took
}

/// Work a template does that only rendering shows (loops nested over the
/// site's data: 3^30 steps) ends the run at its time limit with
/// `render-timeout`, exit 2, the previous output as it was; the next
/// build removes what the stopped one left.
#[test]
fn a_render_that_never_ends_is_stopped_at_its_time_limit() {
    let p = Project::new();
    p.build();
    let before = tree(&p.out());
    let loops: String = (0..30)
        .map(|i| format!("{{% for a{i} in site.languages %}}"))
        .collect::<String>()
        + &"{% endfor %}".repeat(30);
    p.write("templates/partials/footer.html", &loops);
    for (command, took) in stopped_renders(
        &p,
        &["--render-timeout", "1"],
        "render-timeout",
        "more than 1 s",
    ) {
        assert!(took < Duration::from_secs(30), "{command} took {took:?}");
    }
    assert_eq!(tree(&p.out()), before);
    p.write("templates/partials/footer.html", "<footer></footer>\n");
    let o = p.build();
    assert!(o.status.success(), "{}", stderr(&o));
    let parent = p.out().parent().unwrap().to_path_buf();
    let left: Vec<String> = std::fs::read_dir(&parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".basepress-") && !n.ends_with("-spare"))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}

/// A template that builds a value from itself in a loop (a string
/// doubled 40 times is 32 TiB) ends the run at its memory limit with
/// `render-memory`, exit 2, the previous output as it was: not an abort
/// on a failed allocation, nor the machine's memory exhausted.
#[test]
fn a_render_that_grows_without_bound_is_stopped_at_its_memory_limit() {
    let p = Project::new();
    p.build();
    let before = tree(&p.out());
    p.write(
        "templates/partials/footer.html",
        "{% set_global s = \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\" %}{% for i in range(end=40) %}{% set_global s = s ~ s %}{% endfor %}{{ s | length }}",
    );
    stopped_renders(
        &p,
        &["--render-memory", "512"],
        "render-memory",
        "more than the 512 MiB",
    );
    assert_eq!(tree(&p.out()), before);
}

/// The site's files are 0644 and its folders 0755 whatever the umask of
/// the build, and of the builds before it whose files it reuses: the
/// same inputs make the same site, and a web server of another user
/// reads all of it.
#[cfg(unix)]
#[test]
fn modes_depend_on_nothing_but_the_site() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new();
    let root = p.root().to_string_lossy().into_owned();
    let out = p.out().to_string_lossy().into_owned();
    let build = |umask: &str| {
        let o = std::process::Command::new("sh")
            .args([
                "-c",
                &format!("umask {umask}; exec \"$0\" build --root \"$1\" --out \"$2\""),
            ])
            .args([env!("CARGO_BIN_EXE_basepress"), root.as_str(), out.as_str()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    };
    let modes = || {
        let mut modes = std::collections::BTreeSet::new();
        for e in walkdir::WalkDir::new(p.out()).min_depth(1) {
            let e = e.unwrap();
            let mode = e.metadata().unwrap().permissions().mode() & 0o777;
            modes.insert((e.file_type().is_dir(), mode));
        }
        modes
    };
    let want: std::collections::BTreeSet<_> = [(false, 0o644), (true, 0o755)].into();
    build("077");
    assert_eq!(modes(), want, "umask 077");
    p.write(
        "content/en/index.md",
        "---\ntitle: Home\n---\n# Home\n\nEdited.\n",
    );
    build("022");
    assert_eq!(modes(), want, "umask 022 after 077");
}

#[test]
fn names_that_differ_only_in_case_are_an_error() {
    for (a, b) in [
        ("content/en/Install.md", "content/en/install.md"),
        ("content/en/Guide/index.md", "content/en/guide.md"),
        ("static/Logo.svg", "static/logo.svg"),
        ("bases/v1.1.0/Config.env", "bases/v1.1.0/config.env"),
    ] {
        let p = Project::new();
        p.write(a, "---\ntitle: A\n---\n# A\n");
        p.write(b, "---\ntitle: B\n---\n# B\n");
        if b.ends_with("config.env") {
            p.write(b, "MODE=a\n");
        }
        let (code, report) = check(&p);
        assert_eq!(code, 1, "{a} {b}: {report:#}");
        let found = findings(&report, "name-case-conflict");
        assert!(!found.is_empty(), "{a} {b}: {report:#}");
    }
}

/// A static file is published under its name: one a URL cannot hold is
/// found by check, not by deploy.
#[test]
fn static_names_a_url_cannot_hold_are_an_error() {
    for fine in [
        "static/logo@2x.png",
        "static/agent-1.30.0+linux.tar.gz",
        "static/café.png",
    ] {
        let p = Project::new();
        p.write(fine, "x");
        let (code, report) = check(&p);
        assert_eq!(code, 0, "{fine}: {report:#}");
    }
    for name in ["static/a b.png", "static/a\nb.png", "static/dir?/x.css"] {
        let p = Project::new();
        p.write(name, "x");
        let (code, report) = check(&p);
        assert_eq!(code, 1, "{name:?}: {report:#}");
        let found = findings(&report, "content-layout");
        assert!(found.iter().any(|(f, _)| f == name), "{name:?}: {report:#}");
    }
}

/// A path one input publishes as a file and another needs as a folder is
/// found by check, with both named; a language cannot take a folder
/// basepress writes.
#[test]
fn a_file_where_the_site_needs_a_folder_is_a_conflict() {
    let p = Project::new();
    p.write("static/en/guide", "x");
    p.write("content/en/guide.md", "---\ntitle: Guide\n---\n# Guide\n");
    let (code, report) = check(&p);
    assert_eq!(code, 1, "{report:#}");
    let found = findings(&report, "output-conflict");
    assert!(
        found
            .iter()
            .any(|(_, m)| m.contains("static/en/guide") && m.contains("content/en/guide.md")),
        "{report:#}"
    );
    let p = Project::new();
    let site = std::fs::read_to_string(p.path("site.yaml")).unwrap();
    p.write(
        "site.yaml",
        &site.replace("- code: en", "- code: kubernetes"),
    );
    let (code, report) = check(&p);
    assert_eq!(code, 2, "{report:#}");
    assert!(
        report.to_string().contains("basepress writes itself"),
        "{report:#}"
    );
}

/// A strings file that is not UTF-8 is pointed at where its first bad
/// byte is, as every other input is.
#[test]
fn a_strings_file_that_is_not_utf8_is_pointed_at() {
    let p = Project::new();
    std::fs::create_dir_all(p.path("i18n")).unwrap();
    std::fs::write(p.path("i18n/en.yaml"), b"skip: Skip\nmenu: \xff\n").unwrap();
    let (_, report) = check(&p);
    let f = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["location"]["file"] == "i18n/en.yaml")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(
        (&f["location"]["line"], &f["location"]["column"]),
        (&serde_json::json!(2), &serde_json::json!(7)),
        "{f:#}"
    );
}

/// A site whose default language has no start page would redirect its
/// root to a page that is not there.
#[test]
fn a_site_without_its_start_page_is_refused() {
    let p = Project::new();
    std::fs::remove_file(p.path("content/en/index.md")).unwrap();
    p.write("content/en/other.md", "---\ntitle: Other\n---\n# Other\n");
    let (code, report) = check(&p);
    assert_eq!(code, 1, "{report:#}");
    let found = findings(&report, "start-page-missing");
    assert!(
        found.iter().any(|(f, _)| f == "content/en/index.md"),
        "{report:#}"
    );
}

#[test]
fn pre_releases_are_versions_as_semver_orders_them() {
    let p = Project::new();
    p.write(
        "image-releases.yaml",
        "name: agent\nreleases: [1.0.0, 1.1.0, 1.2.0-rc.1]\ncommands:\n  - name: agent-health\n    versions: \">=1.1.0\"\n    args: [[live], [ready]]\n",
    );
    let probe = DEPLOYMENT.replace(
        "          image: agent\n",
        "          image: agent\n          livenessProbe:\n            exec:\n              command: [agent-health, live]\n",
    );
    for (n, text) in [
        ("kustomization.yaml", KUSTOMIZATION),
        ("deployment.yaml", probe.as_str()),
        ("config.env", "MODE=a\n"),
    ] {
        p.write(&format!("bases/v1.2.0-rc.1/{n}"), text);
    }
    // `>=1.1.0` holds for 1.2.0-rc.1, which comes after 1.1.0.
    let (code, report) = check(&p);
    assert_eq!(code, 0, "{report:#}");
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let versions: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p.out().join("kubernetes/versions.json")).unwrap())
            .unwrap();
    assert_eq!(
        versions["latest"], "v1.1.0",
        "a release candidate is not the latest"
    );
    let order: Vec<_> = versions["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(order, ["v1.1.0", "v1.2.0-rc.1"]);

    // Two facts about one thing for one release contradict each other.
    p.write(
        "image-releases.yaml",
        "name: agent\nreleases: [1.0.0, 1.1.0, 1.2.0-rc.1]\nports:\n  - {versions: \"*\", listen: []}\n  - {versions: \">=1.2.0-rc.1\", listen: [8080]}\n",
    );
    let (code, report) = check(&p);
    assert_eq!(code, 2, "{report:#}");
    assert!(
        findings(&report, "image-data-invalid")
            .iter()
            .any(|(_, m)| m.contains("two `ports` facts hold for release 1.2.0-rc.1")),
        "{report:#}"
    );
}

#[cfg(unix)]
#[test]
fn machine_output_never_fails_silently() {
    use std::os::unix::ffi::OsStrExt;
    // A file name that is not UTF-8: the JSON says where, lossily.
    let p = Project::new();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.md");
    std::fs::write(p.path("content/en").join(name), "---\ntitle: C\n---\n").unwrap();
    let (code, report) = check(&p);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        report["findings"][0]["location"]["file"],
        "content/en/caf\u{fffd}.md"
    );

    // Bytes that are not UTF-8: line and column.
    let p = Project::new();
    std::fs::write(
        p.path("content/en/install.md"),
        b"---\ntitle: Install\n---\n# Install\n\nna\xefve\n",
    )
    .unwrap();
    let (_, report) = check(&p);
    let f = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "io-unreadable")
        .unwrap_or_else(|| panic!("{report:#}"));
    let loc = &f["location"];
    assert_eq!(loc["file"], "content/en/install.md");
    assert_eq!(
        (loc["line"].as_u64(), loc["column"].as_u64()),
        (Some(6), Some(3)),
        "{report:#}"
    );

    // Control characters from an input never reach the terminal.
    let p = Project::new();
    p.write(
        "bases/v1.1.0/config.env",
        "MODE=a\n\x1b]0;pwned\x07\x1b[2Jnot a setting\n",
    );
    let o = run_bounded(&["check", "--root", &p.root().to_string_lossy()]);
    let text = stderr(&o);
    assert!(text.contains("kustomize-generator-key-invalid"), "{text}");
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    assert!(text.contains("\\u{1b}"), "{text}");
}

#[cfg(unix)]
#[test]
fn a_link_planted_beside_the_output_is_never_followed() {
    let p = Project::new();
    let victim = tempfile::tempdir().unwrap();
    std::fs::write(victim.path().join("precious.txt"), "keep me").unwrap();
    assert_eq!(p.build().status.code(), Some(0));
    std::os::unix::fs::symlink(victim.path(), p.path(".site.basepress-Zz9Zz9Zz9Z")).unwrap();
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(victim.path().join("precious.txt")).unwrap(),
        "keep me"
    );
}

/// What one page shows of the whole stays bounded: a page of thousands of
/// identical headings lists a bounded table of contents, and each page of
/// a folder of hundreds of pages lists a bounded window of it in the
/// sidebar (both grew with the input: the table of contents held every
/// heading and the sidebar every page of the folder, so a folder of
/// 4,000 pages published 750 MB).
#[test]
fn what_a_page_shows_of_the_whole_stays_bounded() {
    let p = Project::new();
    p.write(
        "content/en/many.md",
        &format!(
            "---\ntitle: Many\n---\n{}",
            "## Same\n\ntext\n\n".repeat(1_000)
        ),
    );
    for i in 0..400 {
        p.write(
            &format!("content/en/big/p{i:04}.md"),
            &format!("---\ntitle: Page {i:04}\n---\nText {i}.\n"),
        );
    }
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(p.out().join("en/many/index.html")).unwrap();
    // Every heading is on the page, with its own id.
    assert!(html.contains("id=\"same-999\""), "the last heading's id");
    let toc = html
        .split("class=\"toc\"")
        .nth(1)
        .and_then(|t| t.split("</nav>").next())
        .expect("a table of contents");
    let entries = toc.matches("<li").count();
    assert!((100..=300).contains(&entries), "{entries} entries");

    let sizes: Vec<usize> = [0, 200, 399]
        .iter()
        .map(|i| {
            let page = p.out().join(format!("en/big/p{i:04}/index.html"));
            let html = std::fs::read_to_string(&page).unwrap();
            // The page itself is listed, and at most a window of the others.
            assert!(html.contains("aria-current=\"page\""), "{i}");
            let listed = html.matches("href=\"/en/big/p").count();
            assert!(
                (10..=60).contains(&listed),
                "page {i}: {listed} pages listed"
            );
            html.len()
        })
        .collect();
    assert!(sizes.iter().all(|s| *s < 40_000), "{sizes:?}");
}

/// A base that is there and refused (a link, a kustomization that does
/// not parse) is its one finding: nothing that needs the base (the lock,
/// the pages' links, overlays and keys) reports it missing as well.
#[test]
fn a_refused_base_is_one_finding_not_a_cascade() {
    use crate::support::{check_json_at, copy_repo};
    let rules = |root: &Path| -> (Option<i32>, Vec<String>) {
        let (code, report) = check_json_at(root);
        let mut rules: Vec<String> = report["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| f["severity"] == "error")
            .map(|f| f["rule"].as_str().unwrap_or_default().to_string())
            .collect();
        rules.dedup();
        (code, rules)
    };
    let newest = |root: &Path| {
        let mut versions: Vec<semver::Version> = std::fs::read_dir(root.join("bases"))
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                semver::Version::parse(name.strip_prefix('v')?).ok()
            })
            .collect();
        versions.sort();
        format!("v{}", versions.last().unwrap())
    };

    // A link to the base's own folder, moved out of the project.
    let p = copy_repo();
    let outside = tempfile::tempdir().unwrap();
    let v = newest(p.path());
    let base = p.path().join("bases").join(&v);
    std::fs::rename(&base, outside.path().join(&v)).unwrap();
    std::os::unix::fs::symlink(outside.path().join(&v), &base).unwrap();
    assert_eq!(rules(p.path()), (Some(1), vec!["base-symlink".to_string()]));
    // A link to nothing.
    std::fs::remove_file(&base).unwrap();
    std::os::unix::fs::symlink("nowhere", &base).unwrap();
    assert_eq!(rules(p.path()), (Some(1), vec!["base-symlink".to_string()]));

    // A kustomization that does not parse.
    let p = copy_repo();
    let k = p.path().join("bases").join(&v).join("kustomization.yaml");
    let mut text = std::fs::read_to_string(&k).unwrap();
    text.push_str("resources: [\n");
    std::fs::write(&k, text).unwrap();
    let (code, found) = rules(p.path());
    assert_eq!(code, Some(2), "{found:?}");
    assert_eq!(found, ["kustomization-invalid"]);

    // The lock as a folder is that, not also a base folder badly named.
    let p = copy_repo();
    let lock = p.path().join("bases/published.lock");
    std::fs::remove_file(&lock).unwrap();
    std::fs::create_dir(&lock).unwrap();
    assert_eq!(rules(p.path()).1, ["input-not-a-file"]);
}

/// A docs version's folder or a language's folder that is there and
/// refused is one finding: the lock does not call the version gone, and
/// no page is called untranslated.
#[test]
fn a_refused_docs_folder_is_one_finding_not_a_cascade() {
    use crate::support::{check_json_at, copy_repo_with_versions};
    let p = copy_repo_with_versions();
    let outside = tempfile::tempdir().unwrap();
    let line = p.path().join("versions/1.28");
    std::fs::rename(&line, outside.path().join("1.28")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("1.28"), &line).unwrap();
    let en = p.path().join("content/en");
    std::fs::rename(&en, outside.path().join("en")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("en"), &en).unwrap();
    let (code, report) = check_json_at(p.path());
    assert_eq!(code, Some(1));
    let rules: Vec<(&str, &str)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or_default(),
                f["location"]["file"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        rules,
        [
            ("input-symlink", "content/en"),
            ("input-symlink", "versions/1.28")
        ],
        "{report:#}"
    );
}
