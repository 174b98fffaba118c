//! Every kind of bad input gets a finding with a stable rule id, the file
//! and, where it is known, the line; and the right exit code.

use crate::support::*;

/// Runs `check` on a project changed by `setup` and returns the finding
/// with `rule`, asserting the exit code.
fn finding(setup: impl Fn(&Project), exit: i32, rule: &str) -> serde_json::Value {
    let p = Project::new();
    setup(&p);
    let (code, report) = p.check_json();
    let found = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == rule)
        .cloned()
        .unwrap_or_else(|| panic!("no `{rule}` finding in {report:#}"));
    assert_eq!(code, exit, "exit code for {rule}: {report:#}");
    assert_eq!(report["exit_code"], exit);
    assert!(!found["remedy"].as_str().unwrap().is_empty());
    found
}

fn assert_at(f: &serde_json::Value, file: &str, line: Option<u64>) {
    assert_eq!(f["location"]["file"], file, "{f:#}");
    if let Some(l) = line {
        assert_eq!(f["location"]["line"], l, "{f:#}");
    }
}

#[test]
fn unknown_key_in_site_yaml() {
    let f = finding(
        |p| {
            p.write("site.yaml", &format!("{SITE_YAML}theme: dark\n"));
        },
        2,
        "config-invalid",
    );
    assert_at(&f, "site.yaml", Some(12));
    assert!(f["message"].as_str().unwrap().contains("theme"));
}

#[test]
fn missing_site_yaml() {
    let f = finding(
        |p| {
            p.remove("site.yaml");
        },
        2,
        "config-invalid",
    );
    assert_at(&f, "site.yaml", None);
}

#[test]
fn default_language_not_listed() {
    let f = finding(
        |p| {
            p.write(
                "site.yaml",
                &SITE_YAML.replace("default_language: en", "default_language: fr"),
            );
        },
        2,
        "config-invalid",
    );
    assert_at(&f, "site.yaml", Some(3));
}

#[test]
fn unknown_front_matter_key() {
    let f = finding(
        |p| {
            p.write(
                "content/en/install.md",
                "---\ntitle: Install\nweight: 2\nlayuot: wide\n---\n# Install\n",
            );
        },
        2,
        "front-matter-invalid",
    );
    assert_at(&f, "content/en/install.md", Some(4));
    assert!(f["message"].as_str().unwrap().contains("layuot"));
}

#[test]
fn front_matter_without_title_or_fence() {
    let f = finding(
        |p| {
            p.write("content/en/install.md", "---\nweight: 2\n---\n");
        },
        2,
        "front-matter-invalid",
    );
    assert!(f["message"].as_str().unwrap().contains("title"));
    let f = finding(
        |p| {
            p.write("content/en/install.md", "# Install\n");
        },
        2,
        "front-matter-invalid",
    );
    assert_at(&f, "content/en/install.md", Some(1));
}

#[test]
fn front_matter_with_a_wrong_type() {
    let f = finding(
        |p| {
            p.write(
                "content/en/install.md",
                "---\ntitle: I\nweight: heavy\n---\n",
            );
        },
        2,
        "front-matter-invalid",
    );
    assert_at(&f, "content/en/install.md", Some(3));
    // Each mistake gets its own fix, not the advice to start a front
    // matter that is there.
    for (front, line, fix) in [
        ("title: I\ntitle: J\n", 3, "keep one of the two"),
        ("title: [a, b]\n", 2, "in quotes"),
        (
            "title: I\nweight: 1\ndescription: \"open\n",
            5,
            "fix the YAML at this line",
        ),
    ] {
        let f = finding(
            |p| {
                p.write("content/en/install.md", &format!("---\n{front}---\n"));
            },
            2,
            "front-matter-invalid",
        );
        assert_at(&f, "content/en/install.md", Some(line));
        let remedy = f["remedy"].as_str().unwrap_or_default();
        assert!(remedy.contains(fix), "{front}: {f:#}");
        assert!(!remedy.contains("Start the page"), "{front}: {f:#}");
    }
}

#[test]
fn content_folder_for_an_unknown_language() {
    let f = finding(
        |p| {
            p.write("content/fr/index.md", "---\ntitle: Accueil\n---\n");
        },
        1,
        "content-layout",
    );
    assert_at(&f, "content/fr", None);
}

#[test]
fn a_hugo_section_page_is_told_to_be_an_index() {
    let f = finding(
        |p| {
            p.write("content/en/guides/_index.md", "---\ntitle: Guides\n---\n");
        },
        1,
        "content-layout",
    );
    assert_at(&f, "content/en/guides/_index.md", None);
    assert!(
        f["remedy"].as_str().unwrap().contains("`guides/index.md`"),
        "{f:#}"
    );
}

#[test]
fn image_data_with_an_unknown_key() {
    let f = finding(
        |p| {
            p.write(
                "image-releases.yaml",
                &format!("{IMAGES_YAML}colour: blue\n"),
            );
        },
        2,
        "image-data-invalid",
    );
    assert_at(&f, "image-releases.yaml", Some(7));
}

#[test]
fn kustomization_that_is_not_yaml() {
    let f = finding(
        |p| {
            p.write("bases/v1.1.0/kustomization.yaml", "resources: [a.yaml\n");
        },
        2,
        "kustomization-invalid",
    );
    assert_eq!(f["location"]["file"], "bases/v1.1.0/kustomization.yaml");
    assert!(f["location"]["line"].as_u64().is_some());
}

#[test]
fn kustomization_with_an_unknown_field() {
    let f = finding(
        |p| {
            p.write(
                "bases/v1.1.0/kustomization.yaml",
                &format!("{KUSTOMIZATION}resourses: [x.yaml]\n"),
            );
        },
        2,
        "kustomization-invalid",
    );
    assert_at(&f, "bases/v1.1.0/kustomization.yaml", Some(9));
}

#[test]
fn reference_to_a_missing_file() {
    let f = finding(
        |p| {
            p.remove("bases/v1.1.0/config.env");
        },
        1,
        "base-reference-missing",
    );
    assert_at(&f, "bases/v1.1.0/kustomization.yaml", Some(8));
}

#[test]
fn references_outside_the_base() {
    for (reference, what) in [
        ("../shared.yaml", "leaves"),
        ("/etc/passwd", "absolute"),
        ("https://example.com/x.yaml", "remote"),
        ("sub/x.yaml", "subfolder"),
    ] {
        let f = finding(
            |p| {
                p.write(
                    "bases/v1.1.0/kustomization.yaml",
                    &KUSTOMIZATION.replace(
                        "  - deployment.yaml",
                        &format!("  - deployment.yaml\n  - {reference}"),
                    ),
                );
            },
            1,
            "base-reference-outside",
        );
        assert_at(&f, "bases/v1.1.0/kustomization.yaml", Some(5));
        assert!(f["message"].as_str().unwrap().contains(what), "{f:#}");
    }
}

#[test]
fn unsafe_file_names() {
    for name in ["-rf.yaml", "my file.yaml", "a*.yaml", ".hidden.yaml"] {
        let f = finding(
            |p| {
                p.write(&format!("bases/v1.1.0/{name}"), "a: 1\n");
                p.write(
                    "bases/v1.1.0/kustomization.yaml",
                    &KUSTOMIZATION.replace(
                        "  - deployment.yaml",
                        &format!("  - deployment.yaml\n  - \"{name}\""),
                    ),
                );
            },
            1,
            "base-file-name-unsafe",
        );
        assert_at(&f, "bases/v1.1.0/kustomization.yaml", Some(5));
    }
}

#[cfg(unix)]
#[test]
fn symlink_in_a_base() {
    let f = finding(
        |p| {
            p.remove("bases/v1.1.0/config.env");
            std::os::unix::fs::symlink("/etc/hostname", p.path("bases/v1.1.0/config.env")).unwrap();
        },
        1,
        "base-symlink",
    );
    assert_at(&f, "bases/v1.1.0/config.env", None);
}

#[test]
fn base_folder_not_named_after_a_version() {
    let f = finding(
        |p| {
            p.write("bases/latest/kustomization.yaml", KUSTOMIZATION);
        },
        1,
        "base-version-invalid",
    );
    // The folder's kustomization, so that CI annotations have a file.
    assert_at(&f, "bases/latest/kustomization.yaml", None);
}

#[test]
fn a_base_folder_without_a_file_is_named_as_a_folder() {
    let f = finding(
        |p| {
            std::fs::create_dir_all(p.path("bases/latest")).unwrap();
        },
        1,
        "base-version-invalid",
    );
    assert_at(&f, "bases/latest", None);
}

#[test]
fn base_without_an_image_release() {
    let f = finding(
        |p| {
            for n in ["kustomization.yaml", "deployment.yaml", "config.env"] {
                let text = std::fs::read_to_string(p.path(&format!("bases/v1.1.0/{n}"))).unwrap();
                p.write(&format!("bases/v2.0.0/{n}"), &text);
            }
        },
        1,
        "base-image-release-missing",
    );
    assert_at(&f, "bases/v2.0.0/kustomization.yaml", None);
}

#[test]
fn broken_link_and_missing_anchor() {
    let f = finding(
        |p| {
            p.write(
                "content/en/index.md",
                "---\ntitle: Home\n---\n# Home\n\nText.\n\nSee [gone](gone.md).\n",
            );
        },
        1,
        "link-broken",
    );
    assert_at(&f, "content/en/index.md", Some(8));
    assert_eq!(f["location"]["column"], 5);

    let f = finding(
        |p| {
            p.write(
                "content/en/index.md",
                "---\ntitle: Home\n---\n# Home\n\nSee [steps](install.md#stpes).\n",
            );
        },
        1,
        "anchor-missing",
    );
    assert_at(&f, "content/en/index.md", Some(6));
    assert!(f["remedy"].as_str().unwrap().contains("steps"));

    let f = finding(
        |p| {
            p.write(
                "content/en/index.md",
                "---\ntitle: Home\n---\n[v9](/kubernetes/v9.0.0/base/files.txt)\n",
            );
        },
        1,
        "link-broken",
    );
    assert_at(&f, "content/en/index.md", Some(4));
}

#[test]
fn links_in_raw_html_are_checked_as_published() {
    // An image that is not there, written as a tag to give it a width.
    let f = finding(
        |p| {
            p.write(
                "content/en/index.md",
                "---\ntitle: Home\n---\n# Home\n\n<img src=\"img/arch.svg\" width=\"600\">\n",
            );
        },
        1,
        "link-broken",
    );
    assert_at(&f, "content/en/index.md", Some(6));
    assert_eq!(f["location"]["column"], 11);

    // A source path resolves for a Markdown link, but raw HTML is not
    // rewritten: the published `href` would be `install.md`.
    let f = finding(
        |p| {
            p.write(
                "content/en/index.md",
                "---\ntitle: Home\n---\n# Home\n\nSee <a href=\"install.md#steps\" target=\"_blank\">the steps</a>.\n",
            );
        },
        1,
        "link-broken",
    );
    assert_at(&f, "content/en/index.md", Some(6));
    assert!(
        f["remedy"].as_str().unwrap().contains("/en/install/#steps"),
        "{f:#}"
    );

    // A URL of the site, and an anchor that is there, are fine.
    let p = Project::new();
    p.write(
        "content/en/index.md",
        "---\ntitle: Home\n---\n# Home\n\n<p><a href=\"/en/install/#steps\">steps</a> <a href=\"#home\">top</a> <a href=\"https://example.com/\">out</a></p>\n",
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 0, "{report:#}");

    // Under a base URL with a path, a site-absolute path needs it: a
    // Markdown link gets it, a tag is published as written.
    let p = Project::new();
    p.write(
        "site.yaml",
        &SITE_YAML.replace("https://docs.example.com", "https://example.com/docs/"),
    );
    p.write(
        "content/en/index.md",
        "---\ntitle: Home\n---\n# Home\n\n[fine](/en/install/) <a href=\"/en/install/\">not</a> <a href=\"/docs/en/install/\">fine</a>\n",
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    let broken = findings_of(&report, "link-broken");
    assert_eq!(broken.len(), 1, "{report:#}");
    assert_eq!(broken[0]["location"]["column"], 31, "{report:#}");
    assert!(
        broken[0]["remedy"]
            .as_str()
            .unwrap()
            .contains("/docs/en/install/"),
        "{report:#}"
    );

    // A wrong anchor is still caught.
    let f = finding(
        |p| {
            p.write(
                "content/en/index.md",
                "---\ntitle: Home\n---\n# Home\n\n<a href=\"/en/install/#stpes\">steps</a>\n",
            );
        },
        1,
        "anchor-missing",
    );
    assert_at(&f, "content/en/index.md", Some(6));

    // An anchor a Markdown link may write another way (case, accents) is
    // rewritten to the heading's id; a tag's is published as written, and
    // the browser would not find it.
    let f = finding(
        |p| {
            p.write(
                "content/en/index.md",
                "---\ntitle: Home\n---\n# Home\n\n[fine](/en/install/#Steps) <a href=\"/en/install/#Steps\">steps</a>\n",
            );
        },
        1,
        "anchor-missing",
    );
    assert_at(&f, "content/en/index.md", Some(6));
    assert_eq!(f["location"]["column"], 37, "{f:#}");
    assert!(f["remedy"].as_str().unwrap().contains("`#steps`"), "{f:#}");
}

/// A full URL of the site itself is a link into the site: checked like a
/// path of it, as published (written as is, anchors exact).
#[test]
fn full_urls_of_the_site_are_checked() {
    let f = finding(
        |p| {
            p.write(
                "content/en/index.md",
                "---\ntitle: Home\n---\n# Home\n\nSee [it](https://docs.example.com/en/instal/).\n",
            );
        },
        1,
        "link-broken",
    );
    assert_at(&f, "content/en/index.md", Some(6));
    assert!(
        f["remedy"].as_str().unwrap().contains("/en/install/"),
        "{f:#}"
    );

    let f = finding(
        |p| {
            p.write(
                "content/en/index.md",
                "---\ntitle: Home\n---\n# Home\n\n[it](http://docs.example.com/en/install/#Steps)\n",
            );
        },
        1,
        "anchor-missing",
    );
    assert!(f["remedy"].as_str().unwrap().contains("`#steps`"), "{f:#}");

    // Fine: a page, a published file, another host.
    let p = Project::new();
    p.write(
        "content/en/index.md",
        "---\ntitle: Home\n---\n# Home\n\n[a](https://docs.example.com/en/install/#steps) [b](https://docs.example.com/kubernetes/v1.1.0/base/files.txt) [c](https://example.com/en/instal/)\n",
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 0, "{report:#}");

    // Under a base URL with a path, the full URL needs that path.
    let p = Project::new();
    p.write(
        "site.yaml",
        &SITE_YAML.replace("https://docs.example.com", "https://example.com/docs/"),
    );
    p.write(
        "content/en/index.md",
        "---\ntitle: Home\n---\n# Home\n\n[ok](https://example.com/docs/en/install/) [not](https://example.com/en/install/)\n",
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 1, "{report:#}");
    let broken = findings_of(&report, "link-broken");
    assert_eq!(broken.len(), 1, "{report:#}");
    assert!(
        broken[0]["remedy"]
            .as_str()
            .unwrap()
            .contains("/docs/en/install/"),
        "{report:#}"
    );
}

#[test]
fn links_across_languages_and_by_url_resolve() {
    let p = Project::new();
    p.write(
        "content/en/index.md",
        "---\ntitle: Home\n---\n[es](../es/index.md) [url](/en/install/#steps) [rel](install/) [sums](/kubernetes/v1.1.0/base/SHA256SUMS) [ext](https://example.com/x)\n",
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(p.build().status.code(), Some(0));
    let html = std::fs::read_to_string(p.out().join("en/index.html")).unwrap();
    assert!(html.contains("href=\"/es/\""), "{html}");
}

/// A finding after a `{{ variable }}` on its line points where the link
/// is written, not where it is once the value is in.
#[test]
fn columns_after_a_variable_are_the_written_ones() {
    let p = Project::new();
    let line = "Base {{ site.base_url }} and [x](/nowhere/{{ version }}/) then [y](/gone/)";
    p.write(
        "content/en/index.md",
        &format!("---\ntitle: Home\n---\n{line}\n"),
    );
    let (_, report) = p.check_json();
    let found = findings_of(&report, "link-broken");
    let columns: Vec<u64> = found
        .iter()
        .map(|f| f["location"]["column"].as_u64().unwrap())
        .collect();
    let written = |needle: &str| line[..line.find(needle).unwrap()].chars().count() as u64 + 1;
    assert_eq!(columns, [written("[x]"), written("[y]")], "{report:#}");
}

/// A link's query is not part of what is checked, and is published as
/// written, whatever form the link takes.
#[test]
fn a_link_keeps_its_query_string() {
    let p = Project::new();
    p.write(
        "content/en/index.md",
        "---\ntitle: Home\n---\n[a](/en/install/?tab=gke#steps) [b](install.md?tab=gke) [c](../es/index.md?x=1) [d](/kubernetes/v1.1.0/base/SHA256SUMS?download=1)\n",
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(p.build().status.code(), Some(0));
    let html = std::fs::read_to_string(p.out().join("en/index.html")).unwrap();
    for href in [
        "/en/install/?tab=gke#steps",
        "/en/install/?tab=gke",
        "/es/?x=1",
        "/kubernetes/v1.1.0/base/SHA256SUMS?download=1",
    ] {
        assert!(html.contains(&format!("href=\"{href}\"")), "{href}: {html}");
    }
}

#[test]
fn broken_template() {
    let f = finding(
        |p| {
            p.write("templates/page.html", "{% if %}\n");
        },
        2,
        "template-invalid",
    );
    assert_at(&f, "templates/page.html", Some(1));
}

/// A template that fails on every page is found by `check` (which renders
/// a page of each language and the pages made from templates alone), once,
/// at the tag that fails in the template that has it, even when included.
#[test]
fn template_errors_are_found_by_check_where_they_are() {
    let footer =
        |tag: &str| format!("<footer>\n<p>{{{{ site.title }}}}</p>\n<p>{tag}</p>\n</footer>\n");
    for (tag, column, says) in [
        ("{{ nope | upper }}", 7, "Variable `nope` not found"),
        (
            "{{ site.title | nofilter }}",
            20,
            "Filter 'nofilter' not found",
        ),
        (
            "{{ foo( }}",
            12,
            "Failed to parse 'partials/footer.html': expected",
        ),
        // Tera finds a missing include only while rendering it, and its
        // error named no line.
        (
            "{% include \"partials/nope.html\" %}",
            16,
            "`partials/footer.html` includes `partials/nope.html`, and there is no such template",
        ),
    ] {
        let p = Project::new();
        p.write("templates/partials/footer.html", &footer(tag));
        let (code, report) = p.check_json();
        assert_eq!(code, 2, "{tag}: {report:#}");
        let found = findings_of(&report, "template-invalid");
        assert_eq!(found.len(), 1, "{tag}: {report:#}");
        assert_at(found[0], "templates/partials/footer.html", Some(3));
        assert_eq!(found[0]["location"]["column"], column, "{tag}: {report:#}");
        let message = found[0]["message"].as_str().unwrap();
        assert!(message.starts_with(says), "{message}");
        assert!(
            !message.contains('\n') && !message.contains("-->"),
            "{message}"
        );
        // The build refuses it the same way.
        let o = p.build();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("templates/partials/footer.html:3:"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn output_folder_not_written_by_basepress() {
    let p = Project::new();
    p.write("site/notes.txt", "mine");
    let o = p.build();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("output-unsafe"));
    assert_eq!(
        std::fs::read_to_string(p.path("site/notes.txt")).unwrap(),
        "mine"
    );
    // A file where the site would go: kept, and the fix is another --out.
    let p = Project::new();
    p.write("site", "a file");
    let o = p.build();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is not a folder"), "{}", stderr(&o));
    assert!(stderr(&o).contains("pass --out a folder"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("remove that folder"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(p.path("site")).unwrap(), "a file");
    // A link to a folder: the folder is what to pass.
    #[cfg(unix)]
    {
        let p = Project::new();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), p.path("site")).unwrap();
        let o = p.build();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("is a symbolic link"), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("the folder the link points to"),
            "{}",
            stderr(&o)
        );
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }
    // A mount point (Linux's /dev/shm is one): it could never be swapped.
    let mounted = std::fs::read_to_string("/proc/self/mountinfo")
        .is_ok_and(|m| m.lines().any(|l| l.split(' ').nth(4) == Some("/dev/shm")));
    if mounted {
        let p = Project::new();
        let root = p.root().to_string_lossy().into_owned();
        let o = run(&["build", "--root", &root, "--out", "/dev/shm"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("is a mount point"), "{}", stderr(&o));
    }
}

#[test]
fn output_folder_inside_the_input() {
    let p = Project::new();
    let root = p.root().to_string_lossy().into_owned();
    std::fs::create_dir_all(p.path("site")).unwrap();
    let inside = [
        p.path("content/en/site"),
        p.path("bases/out"),
        p.path("static/a/b"),
        // Through a folder that exists and `..`, or the project itself.
        p.path("site/../templates/site"),
        p.root().to_path_buf(),
    ];
    for out in inside {
        let o = run(&["build", "--root", &root, "--out", &out.to_string_lossy()]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}: {}",
            out.display(),
            stderr(&o)
        );
        assert!(stderr(&o).contains("output-unsafe"), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("which the build reads"),
            "{}",
            stderr(&o)
        );
    }
    assert!(!p.path("content/en/site").exists());
    assert!(!p.path("bases/out").exists());
    // Beside the input is fine.
    let out = p.path("public");
    let o = run(&["build", "--root", &root, "--out", &out.to_string_lossy()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn text_output_quotes_the_line_and_github_output_annotates() {
    let p = Project::new();
    p.remove("bases/v1.1.0/config.env");
    let o = run(&["check", "--root", &p.root().to_string_lossy()]);
    let err = stderr(&o);
    assert!(err.contains("error[base-reference-missing]"), "{err}");
    assert!(
        err.contains("--> bases/v1.1.0/kustomization.yaml:8:9"),
        "{err}"
    );
    assert!(err.contains("      - config.env"), "{err}");
    assert!(err.contains("= help:"), "{err}");

    let o = run(&[
        "check",
        "--root",
        &p.root().to_string_lossy(),
        "--format",
        "github",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("::error title=base-reference-missing,file=bases/v1.1.0/kustomization.yaml,line=8,col=9::"),
        "{out}"
    );
}

/// A partial that fails only where there is no page (the 404 page, the
/// versions pages) says which output it failed on.
#[test]
fn a_template_error_names_the_output_it_failed_on() {
    let p = Project::new();
    p.write(
        "templates/partials/footer.html",
        "<footer>{{ page.title | upper }}</footer>\n",
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 2, "{report:#}");
    let found = findings_of(&report, "template-invalid");
    assert!(!found.is_empty(), "{report:#}");
    let remedy = found[0]["remedy"].as_str().unwrap();
    assert!(remedy.contains("while rendering /"), "{report:#}");
}

/// An editor's backup and autosave files are not inputs: they never break
/// a check or reach the site.
#[test]
fn editor_backups_are_not_inputs() {
    let p = Project::new();
    let (code, clean) = p.check_json();
    p.write(
        "content/en/install.md~",
        "old, with a [broken](nowhere.md) link\n",
    );
    p.write("content/en/#install.md#", "autosave\n");
    p.write("static/#logo.svg#", "x");
    let (again, report) = p.check_json();
    assert_eq!((again, &report["findings"]), (code, &clean["findings"]));
    assert!(p.build().status.code().is_some_and(|c| c < 2));
    assert!(!p.out().join("#logo.svg#").exists());
}

/// Run from a folder inside the project, basepress works on the project,
/// as git finds its repository.
#[test]
fn a_command_run_inside_the_project_finds_it() {
    let p = Project::new();
    let (code, report) = p.check_json();
    let o = basepress()
        .args(["check", "--format", "json"])
        .current_dir(p.path("content/en"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
    let inside: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(inside["findings"], report["findings"]);
    // Outside any project it still says there is no site.yaml.
    let nowhere = tempfile::tempdir().unwrap();
    let o = basepress()
        .arg("check")
        .current_dir(nowhere.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("site.yaml"), "{}", stderr(&o));
}

/// A page moved from Hugo: every unknown key in one finding, each with
/// its line, and the key it was probably meant to be.
#[test]
fn every_unknown_front_matter_key_at_once() {
    let f = finding(
        |p| {
            p.write(
                "content/en/install.md",
                "---\ntitle: I\ndate: 2020-01-01\ntags: [a]\ntittle: J\n---\n",
            );
        },
        2,
        "front-matter-invalid",
    );
    assert_at(&f, "content/en/install.md", Some(3));
    let m = f["message"].as_str().unwrap();
    for part in [
        "`date` (line 3)",
        "`tags` (line 4)",
        "`tittle` (line 5), did you mean `title`?",
    ] {
        assert!(m.contains(part), "{part}: {m}");
    }
    assert!(!m.contains("`date` (line 3), did you mean"), "{m}");
    // A `: ` in a value is told to be quoted.
    let f = finding(
        |p| {
            p.write(
                "content/en/install.md",
                "---\ntitle: Install: the agent\n---\n",
            );
        },
        2,
        "front-matter-invalid",
    );
    assert!(f["remedy"].as_str().unwrap().contains("quotes"), "{f:#}");
}

/// A page whose front matter is wrong does not hide the findings of the
/// other pages: it stands in for them with its body (links into it still
/// resolve, with their anchors), its own findings wait for its front
/// matter, and nothing is written.
#[test]
fn a_front_matter_error_leaves_the_other_pages_checked() {
    let p = Project::new();
    // install.md: an unknown key; its body links nowhere (not reported yet).
    p.write(
        "content/en/install.md",
        "---\ntitle: Install\ntittle: x\n---\n# Install\n\n## Steps\n\nSee [gone](gone.md).\n",
    );
    // es/install.md: no front matter at all.
    p.write("content/es/install.md", "# Instalar\n\n## Pasos\n");
    // guide.md: front matter never closed; its headings are still read.
    p.write(
        "content/en/guide.md",
        "---\ntitle: Guide\n\n# Guide\n\n## Setup\n",
    );
    // A page that links into them, one link broken elsewhere.
    p.write(
        "content/en/more.md",
        "---\ntitle: More\n---\n# More\n\n[Steps](install.md#steps), [setup](guide.md#setup), [nowhere](missing.md).\n",
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 2, "{report:#}");
    let at = |rule: &str| -> Vec<String> {
        findings_of(&report, rule)
            .iter()
            .map(|f| f["location"]["file"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(
        at("front-matter-invalid"),
        [
            "content/en/guide.md",
            "content/en/install.md",
            "content/es/install.md"
        ]
    );
    assert_eq!(at("link-broken"), ["content/en/more.md"], "{report:#}");
    assert!(at("anchor-missing").is_empty(), "{report:#}");
    // Both languages have install.md: neither lacks a translation.
    assert!(
        !at("translation-missing")
            .iter()
            .any(|f| f.ends_with("install.md")),
        "{report:#}"
    );
    let built = p.build();
    assert_eq!(built.status.code(), Some(2));
    assert!(!p.out().exists());
}

/// Markdown under another extension is no page, and is not published raw.
#[test]
fn a_page_with_another_markdown_extension_is_named_as_a_page() {
    for name in ["guide.markdown", "guide.MD"] {
        let f = finding(
            |p| {
                p.write(
                    &format!("content/en/{name}"),
                    "---\ntitle: Guide\n---\n# Guide\n",
                );
            },
            1,
            "content-layout",
        );
        assert_at(&f, &format!("content/en/{name}"), None);
        assert!(
            f["remedy"].as_str().unwrap().contains("`guide.md`"),
            "{f:#}"
        );
    }
}

/// A key written twice in a base's kustomization is Kustomize's error,
/// said once at the second key: the base is refused as a whole, not read
/// with the last key winning (which left a file it needs unpublished,
/// and the links to it broken).
#[test]
fn a_key_written_twice_in_a_kustomization_is_one_error() {
    let p = Project::new();
    p.write(
        "bases/v1.1.0/kustomization.yaml",
        &format!("{KUSTOMIZATION}configMapGenerator:\n  - name: other\n    literals: [a=b]\n"),
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 2, "{report:#}");
    let found = report["findings"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(found[0]["rule"], "kustomization-invalid", "{report:#}");
    assert_eq!(found[0]["location"]["line"], 9, "{report:#}");
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("`configMapGenerator` is written twice"),
        "{report:#}"
    );
}

/// A site.yaml value that is wrong is found at its line, and a path it
/// names that is no file says where to fix it.
#[test]
fn site_yaml_values_are_found_where_they_are_written() {
    let p = Project::new();
    p.write(
        "site.yaml",
        "title: Test docs\nbase_url: https://docs.example.com\ndefault_language: en\nlanguages: []\nimage:\n  name: agent\n  releases: image-releases.yaml\n",
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 2, "{report:#}");
    let found = &report["findings"][0];
    assert_eq!(found["rule"], "config-invalid", "{report:#}");
    assert_eq!(found["location"]["line"], 4, "{report:#}");
    // A language without a name: the switcher would show nothing.
    p.write(
        "site.yaml",
        &SITE_YAML.replace("    name: Español", "    name: \"\""),
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 2, "{report:#}");
    let found = &report["findings"][0];
    assert!(
        found["message"]
            .as_str()
            .unwrap_or_default()
            .contains("empty `name`"),
        "{report:#}"
    );
    assert_eq!(found["location"]["line"], 8, "{report:#}");
    // `image.releases` naming a folder: the remedy is in site.yaml.
    p.write(
        "site.yaml",
        &SITE_YAML.replace("releases: image-releases.yaml", "releases: content"),
    );
    let (code, report) = p.check_json();
    assert_eq!(code, 2, "{report:#}");
    let remedy = report["findings"][0]["remedy"].as_str().unwrap_or_default();
    assert!(
        remedy.contains("`image.releases` in site.yaml"),
        "{report:#}"
    );
}
