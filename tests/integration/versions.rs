//! Versioned docs: `content/` is next, `versions/<line>/content/` the
//! frozen release lines, `versions/versions.lock` the record of them. The
//! URLs, the picker, the banners and the checks of each version.

use crate::support::*;

/// The test project with two frozen lines, 1.0 and 1.1 (the latest), and
/// next in `content/`.
fn versioned() -> Project {
    let p = Project::new();
    for line in ["1.0", "1.1"] {
        for (lang, title) in [("en", "Home"), ("es", "Inicio")] {
            p.write(
                &format!("versions/{line}/content/{lang}/index.md"),
                &format!(
                    "---\ntitle: {title}\n---\n# {title} {line}\n\nSee [install](install.md).\n"
                ),
            );
            p.write(
                &format!("versions/{line}/content/{lang}/install.md"),
                &format!("---\ntitle: Install\n---\n# Install {line}\n\n## Steps\n"),
            );
        }
    }
    // A page only 1.1 and next have.
    p.write(
        "versions/1.1/content/en/upgrade.md",
        "---\ntitle: Upgrade\n---\n# Upgrade\n",
    );
    p.write(
        "content/en/upgrade.md",
        "---\ntitle: Upgrade\n---\n# Upgrade next\n",
    );
    p.write("versions/versions.lock", "1.0\n1.1\n");
    p
}

fn read(p: &Project, rel: &str) -> String {
    std::fs::read_to_string(p.out().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The findings of `rule` in a `check --format json` run.
fn findings(p: &Project, rule: &str) -> (i32, Vec<serde_json::Value>) {
    let (code, report) = p.check_json();
    (
        code,
        findings_of(&report, rule).into_iter().cloned().collect(),
    )
}

#[test]
fn the_latest_is_at_the_stable_urls_older_ones_below_their_line() {
    let p = versioned();
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(read(&p, "en/index.html").contains("Home 1.1"));
    assert!(read(&p, "en/1.0/index.html").contains("Home 1.0"));
    assert!(read(&p, "en/next/index.html").contains("Home"));
    assert!(read(&p, "en/1.0/install/index.html").contains("Install 1.0"));
    assert!(read(&p, "es/1.0/install/index.html").contains("Install 1.0"));
    // 1.1 is the latest: not published a second time below its line.
    assert!(!p.out().join("en/1.1").exists());
    // Links stay in their version.
    let old = read(&p, "en/1.0/index.html");
    assert!(old.contains("href=\"/en/1.0/install/\""), "{old}");

    // Old versions: a banner and a canonical link to the latest page.
    let install = read(&p, "en/1.0/install/index.html");
    assert!(
        install.contains("<link rel=\"canonical\" href=\"https://docs.example.com/en/install/\""),
        "{install}"
    );
    assert!(install.contains("version-banner"), "{install}");
    assert!(install.contains("href=\"/en/install/\""), "{install}");
    // Next: unreleased, kept out of search engines.
    let next = read(&p, "en/next/install/index.html");
    assert!(next.contains("version-banner"), "{next}");
    assert!(next.contains("noindex"), "{next}");
    // The latest has no banner.
    assert!(!read(&p, "en/install/index.html").contains("version-banner"));
    // The 404 page knows the versions below their own URL segment, to
    // search the one a missing URL was in.
    let not_found = read(&p, "404.html");
    assert!(
        not_found.contains("data-versions=\"next 1.0\""),
        "{not_found}"
    );

    // The sitemap is an index of one sitemap a version (one sitemap may
    // list at most 50,000 URLs) and one of the versions pages, each
    // listing its own pages only, and only those search engines should
    // index: an older page whose canonical is the latest one is not, nor
    // is next (noindex). A version with no such page has no sitemap: the
    // schema wants at least one URL in each.
    let index = read(&p, "sitemap.xml");
    assert!(index.contains("<sitemapindex"), "{index}");
    for empty in ["sitemaps/1.0.xml", "sitemaps/next.xml"] {
        assert!(!index.contains(empty), "{empty} in {index}");
        assert!(!p.out().join(empty).exists(), "{empty}");
    }
    for (sitemap, urls, not) in [
        (
            "sitemaps/1.1.xml",
            &["/en/install/", "/es/install/"][..],
            "/en/1.0/",
        ),
        (
            "sitemaps/site.xml",
            &["/en/versions/", "/es/versions/"][..],
            "/en/install/",
        ),
    ] {
        let loc = format!("<loc>https://docs.example.com/{sitemap}</loc>");
        assert!(index.contains(&loc), "{loc} not in {index}");
        let xml = read(&p, sitemap);
        assert!(xml.contains("<urlset"), "{xml}");
        for url in urls {
            let loc = format!("<loc>https://docs.example.com{url}</loc>");
            assert!(xml.contains(&loc), "{url} not in {sitemap}: {xml}");
        }
        let loc = format!("<loc>https://docs.example.com{not}</loc>");
        assert!(!xml.contains(&loc), "{not} in {sitemap}: {xml}");
    }
    // Search is one bundle per version, holding that version's pages
    // only, and a page searches its own version's.
    assert!(!p.out().join("search/en/index.json").exists());
    for (version, url) in [
        ("1.0", "/en/1.0/install/"),
        ("1.1", "/en/install/"),
        ("next", "/en/next/install/"),
    ] {
        let entry: serde_json::Value =
            serde_json::from_str(&read(&p, &format!("search/{version}/en/index.json"))).unwrap();
        let pages = entry["pages"].as_u64().unwrap();
        let in_version = count_pages(&p.out(), url);
        assert_eq!(pages, in_version, "{version}: {entry:#}");
        let page = read(&p, &format!("{}index.html", &url[1..]));
        assert!(
            page.contains(&format!("data-bundle=\"/search/{version}/\"")),
            "{page}"
        );
    }
}

#[test]
fn the_picker_goes_to_the_same_page_or_to_the_version_home() {
    let p = versioned();
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let upgrade = read(&p, "en/upgrade/index.html");
    // 1.0 has no upgrade page: the picker leads to its home.
    assert!(upgrade.contains("href=\"/en/1.0/\""), "{upgrade}");
    assert!(upgrade.contains("href=\"/en/next/upgrade/\""), "{upgrade}");
    let install = read(&p, "en/1.0/install/index.html");
    assert!(install.contains("href=\"/en/next/install/\""), "{install}");
    // The language switcher stays within the version.
    assert!(install.contains("href=\"/es/1.0/install/\""), "{install}");
    // The banner's link says where it leads: the page in the latest, or,
    // when the latest lacks it, the latest's start page.
    assert!(
        install.contains("Read this page in the latest release"),
        "{install}"
    );
    p.write("content/en/soon.md", "---\ntitle: Soon\n---\n# Soon\n");
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let soon = read(&p, "en/next/soon/index.html");
    let banner = soon.split("version-banner").nth(1).unwrap_or_default();
    assert!(
        banner.contains("Go to the docs of the latest release"),
        "{banner}"
    );
    assert!(!banner.contains("Read this page"), "{banner}");
}

#[test]
fn next_can_stay_unpublished() {
    let p = versioned();
    let site = std::fs::read_to_string(p.path("site.yaml")).unwrap();
    p.write("site.yaml", &format!("{site}versions:\n  next: false\n"));
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!p.out().join("en/next").exists());
    assert!(p.out().join("en/1.0/index.html").is_file());
}

#[test]
fn an_anchor_of_the_same_page_is_checked_in_an_unpublished_next() {
    let p = versioned();
    let site = std::fs::read_to_string(p.path("site.yaml")).unwrap();
    p.write("site.yaml", &format!("{site}versions:\n  next: false\n"));
    p.write(
        "content/en/upgrade.md",
        "---\ntitle: Upgrade\n---\n# Upgrade next\n\nBack to [the top](#upgrade-nxt), [here](#upgrade-next).\n",
    );
    let (code, found) = findings(&p, "anchor-missing");
    assert_eq!(code, 1);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["location"]["file"], "content/en/upgrade.md");
    assert_eq!(found[0]["location"]["line"], 6);
}

#[test]
fn a_link_to_a_page_only_another_version_has_is_an_error() {
    let p = versioned();
    p.write(
        "versions/1.0/content/en/install.md",
        "---\ntitle: Install\n---\n# Install\n\nThen [upgrade](upgrade.md).\n",
    );
    let (code, found) = findings(&p, "link-other-version");
    assert_eq!(code, 1);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        found[0]["location"]["file"],
        "versions/1.0/content/en/install.md"
    );
    assert_eq!(found[0]["location"]["line"], 6);
    assert!(
        found[0]["message"].as_str().unwrap().contains("upgrade.md"),
        "{found:#?}"
    );
}

#[test]
fn a_recorded_version_whose_folder_is_gone() {
    let p = versioned();
    p.write("versions/versions.lock", "1.0\n1.1\n0.9\n");
    let (code, found) = findings(&p, "docs-version-missing");
    assert_eq!(code, 1);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["location"]["file"], "versions/versions.lock");
    assert_eq!(found[0]["location"]["line"], 3, "{found:#?}");
}

#[test]
fn a_version_folder_not_recorded_is_a_warning() {
    let p = versioned();
    p.write("versions/versions.lock", "1.1\n");
    let (_, found) = findings(&p, "docs-version-unreleased");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["severity"], "warning");
    assert_eq!(
        found[0]["location"]["file"],
        "versions/1.0/content/en/index.md"
    );
    // Without a start page in the default language, a page it has.
    p.remove("versions/1.0/content/en/index.md");
    let (_, found) = findings(&p, "docs-version-unreleased");
    let file = found[0]["location"]["file"].as_str().unwrap();
    assert!(p.path(file).is_file(), "{file}");
    assert!(file.starts_with("versions/1.0/content/"), "{file}");
}

#[test]
fn a_page_of_the_latest_missing_from_next_is_said() {
    let p = versioned();
    p.remove("content/en/upgrade.md");
    let (_, found) = findings(&p, "version-page-removed");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        found[0]["location"]["file"],
        "versions/1.1/content/en/upgrade.md"
    );
    // Kept in the default language, next shows an untranslated copy at
    // the same URL: it goes on answering.
    p.write(
        "content/en/upgrade.md",
        "---\ntitle: Upgrade\n---\n# Upgrade next\n",
    );
    p.write(
        "versions/1.1/content/es/upgrade.md",
        "---\ntitle: Actualizar\n---\n# Actualizar\n",
    );
    let (_, found) = findings(&p, "version-page-removed");
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn a_lock_line_that_is_not_a_release_line() {
    let p = versioned();
    p.write("versions/versions.lock", "1.0\n1.1.0\n");
    let (code, found) = findings(&p, "lock-invalid");
    assert_eq!(code, 2);
    assert_eq!(found[0]["location"]["line"], 2, "{found:#?}");
}

/// A command the docs of a release run in its image (`kubectl exec …
/// -- CMD`) must be one that release's image has.
#[test]
fn the_docs_of_a_release_exec_only_what_its_image_has() {
    let repo = copy_repo_with_versions();
    let rel = "versions/1.28/content/en/index.md";
    let page = repo.path().join(rel);
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(
        &page,
        format!("{text}\n```sh\nkubectl -n whystack-agent exec whystack-agent-0 -- whystack-health ready\n```\n"),
    )
    .unwrap();
    let (code, report) = check_json_at(repo.path());
    assert_eq!(code, Some(1), "{report:#}");
    let found = findings_of(&report, "doc-command-mismatch");
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(found[0]["location"]["file"], rel);
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains("whystack-agent:1.28.0") && message.contains("from 1.29.0"),
        "{message}"
    );
}

/// The docs of a release before the bases give readers whole manifests:
/// built and checked as that release's base would be, each finding at the
/// page's line (the repository's 1.28 installation page).
#[test]
fn the_manifests_of_a_release_without_a_base_are_checked_as_its_base() {
    let repo = copy_repo_with_versions();
    let rel = "versions/1.28/content/en/installation.md";
    let page = repo.path().join(rel);
    let text = std::fs::read_to_string(&page).unwrap();
    let edits = [
        (
            "      terminationGracePeriodSeconds: 150",
            "      terminationGracePeriodSeconds: 30 ",
            "termination-grace-too-short",
        ),
        (
            "          envFrom:\n",
            "          livenessProbe: {exec: {command: [whystack-health, live]}}\n          envFrom:\n",
            "probe-command-missing",
        ),
        (
            "  RUNNER_ATTESTATION_MODE: gke-oidc",
            "  RUNNER_ATTESTATION_MODE: gke-oid",
            "env-value-invalid",
        ),
    ];
    let mut changed = text.clone();
    for (from, to, _) in &edits {
        assert!(changed.contains(from), "{from}");
        changed = changed.replacen(from, to, 1);
    }
    std::fs::write(&page, &changed).unwrap();
    let (code, report) = check_json_at(repo.path());
    assert_eq!(code, Some(1), "{report:#}");
    for (_, to, rule) in &edits {
        let line = changed
            .lines()
            .position(|l| l.contains(to.lines().next().unwrap().trim()))
            .unwrap() as u64
            + 1;
        let found = findings_of(&report, rule);
        assert!(
            found.iter().any(|f| f["location"]["file"] == rel
                && f["location"]["line"] == line
                && f["message"].as_str().unwrap().contains("release 1.28.0")),
            "{rule} at {line}: {report:#}"
        );
    }
}

#[test]
fn each_version_is_checked_against_its_own_image_release() {
    // The repository's 1.28 docs: RUNNER_HEALTH_DIR came with 1.29.0.
    let repo = copy_repo_with_versions();
    let page = repo.path().join("versions/1.28/content/en/index.md");
    let text = std::fs::read_to_string(&page).unwrap();
    let line = text.lines().count() + 2;
    std::fs::write(&page, format!("{text}\nSet `RUNNER_HEALTH_DIR` too.\n")).unwrap();
    let (code, report) = check_json_at(repo.path());
    assert_eq!(code, Some(1), "{report:#}");
    let found = findings_of(&report, "doc-env-key-unknown");
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(
        found[0]["location"]["file"],
        "versions/1.28/content/en/index.md"
    );
    assert_eq!(found[0]["location"]["line"], line as u64, "{report:#}");
    assert!(
        found[0]["message"].as_str().unwrap().contains("1.28"),
        "{report:#}"
    );
    // The same sentence in next is fine: next documents 1.30.
    let next = repo.path().join("content/en/index.md");
    let text = std::fs::read_to_string(&next).unwrap();
    std::fs::write(&next, format!("{text}\nSet `RUNNER_HEALTH_DIR` too.\n")).unwrap();
    let (_, report) = check_json_at(repo.path());
    assert_eq!(
        findings_of(&report, "doc-env-key-unknown").len(),
        1,
        "{report:#}"
    );
}

#[test]
fn release_freezes_next_once_per_release_line() {
    let p = Project::new();
    let site = std::fs::read_to_string(p.path("site.yaml")).unwrap();
    p.write("site.yaml", &format!("{site}versions:\n  next: true\n"));
    let root = p.root().to_string_lossy().into_owned();
    let o = run(&["release", "v1.1.0", "--root", &root]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for f in [
        "en/index.md",
        "en/install.md",
        "es/index.md",
        "es/install.md",
    ] {
        let frozen = std::fs::read(p.path(&format!("versions/1.1/content/{f}"))).unwrap();
        assert_eq!(
            frozen,
            std::fs::read(p.path(&format!("content/{f}"))).unwrap()
        );
    }
    let lock = std::fs::read_to_string(p.path("versions/versions.lock")).unwrap();
    assert!(lock.lines().any(|l| l == "1.1"), "{lock}");
    // The project is now versioned: 1.1 at the stable URLs, next below.
    p.write(
        "content/en/install.md",
        "---\ntitle: Install\nweight: 2\n---\n# Install soon\n\n## Steps\n",
    );
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(read(&p, "en/next/install/index.html").contains("Install soon"));
    assert!(!read(&p, "en/install/index.html").contains("Install soon"));
    // A patch release of the same line shares its docs: nothing is copied
    // again and the frozen page keeps its text.
    p.write("bases/v1.1.1/kustomization.yaml", KUSTOMIZATION);
    p.write("bases/v1.1.1/deployment.yaml", DEPLOYMENT);
    p.write("bases/v1.1.1/config.env", "MODE=a\n");
    let images = std::fs::read_to_string(p.path("image-releases.yaml")).unwrap();
    p.write(
        "image-releases.yaml",
        &images.replace("[1.0.0, 1.1.0]", "[1.0.0, 1.1.0, 1.1.1]"),
    );
    let o = run(&["release", "v1.1.1", "--root", &root]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("already frozen")
            || stderr(&o).contains("already frozen"),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        stderr(&o)
    );
    let frozen = std::fs::read_to_string(p.path("versions/1.1/content/en/install.md")).unwrap();
    assert!(!frozen.contains("Install soon"), "{frozen}");
}

#[test]
fn versioned_builds_are_byte_identical() {
    let p = versioned();
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first = tree(&p.out());
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(first == tree(&p.out()), "a second build differs");
}

/// `build --format json`: exit code and findings.
fn build_json(p: &Project, out: &std::path::Path) -> (i32, serde_json::Value) {
    let o = run(&[
        "build",
        "--root",
        &p.root().to_string_lossy(),
        "--out",
        &out.to_string_lossy(),
        "--format",
        "json",
    ]);
    let report = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", String::from_utf8_lossy(&o.stdout), stderr(&o)));
    (o.status.code().unwrap_or(-1), report)
}

#[cfg(unix)]
fn inode(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().ino()
}

#[cfg(unix)]
#[test]
fn an_edit_of_next_renders_next_only_and_gives_a_clean_builds_bytes() {
    let p = versioned();
    let out = p.out();
    let (code, first) = build_json(&p, &out);
    assert_eq!(code, 0, "{first:#}");
    let old_page = out.join("en/1.0/install/index.html");
    let old_index = out.join("search/1.0/en/index.json");
    let old_chunks = files_below(&out.join("search/1.0"));
    assert!(old_chunks.len() > 5, "{old_chunks:?}");
    let next_words = read(&p, "search/next/en/s/0.json");
    let next_page = out.join("en/next/install/index.html");
    let (a, b, c) = (inode(&old_page), inode(&old_index), inode(&next_page));

    p.write(
        "content/en/install.md",
        "---\ntitle: Install\nweight: 2\n---\n# Install\n\n## Steps\n\nNew words.\n",
    );
    let (code, second) = build_json(&p, &out);
    assert_eq!(code, 0, "{second:#}");
    // 1.0 and 1.1 were not rendered again: the same files, linked.
    assert_eq!(inode(&old_page), a);
    assert_eq!(inode(&old_index), b);
    for (f, ino) in &old_chunks {
        assert_eq!(inode(f), *ino, "{} was written again", f.display());
    }
    assert_ne!(inode(&next_page), c);
    assert!(read(&p, "en/next/install/index.html").contains("New words."));
    // Next's bundle was made again, with the new words.
    assert_ne!(read(&p, "search/next/en/s/0.json"), next_words);
    assert!(read(&p, "search/next/en/s/0.json").contains("\"new\""));
    // The findings of the reused versions are still reported.
    assert_eq!(first["findings"], second["findings"]);
    assert!(
        first["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["location"]["file"]
                .as_str()
                .unwrap_or_default()
                .starts_with("versions/1.1/")),
        "the fixture has a finding in a frozen version: {first:#}"
    );

    // A clean build of the same tree writes the same bytes.
    let clean = p.path("clean");
    let (code, report) = build_json(&p, &clean);
    assert_eq!(code, 0, "{report:#}");
    assert!(
        tree(&out) == tree(&clean),
        "a reusing build differs from a clean one"
    );
    assert_eq!(report["findings"], second["findings"]);

    // A settings change renders every version again.
    let site = std::fs::read_to_string(p.path("site.yaml")).unwrap();
    p.write(
        "site.yaml",
        &site.replace("title: Test docs", "title: Other docs"),
    );
    let (code, report) = build_json(&p, &out);
    assert_eq!(code, 0, "{report:#}");
    assert_ne!(inode(&old_page), a);
}

#[cfg(unix)]
#[test]
fn a_record_that_lies_is_not_trusted() {
    let p = versioned();
    let out = p.out();
    let (code, report) = build_json(&p, &out);
    assert_eq!(code, 0, "{report:#}");
    let record_path = out.join(".basepress-cache.json");
    let record = std::fs::read_to_string(&record_path).unwrap();
    assert!(record.contains("\"1.0\""), "{record}");
    let secret = p.path("secret.txt");
    std::fs::write(&secret, "not for the site").unwrap();
    // A record naming a file outside the version's own: nothing of that
    // version is reused, and the file never reaches the site.
    let lying = record.replacen(
        "\"files\":[",
        "\"files\":[\"/../secret.txt\",\"/en/1.0/secret.txt\",",
        1,
    );
    std::fs::write(&record_path, lying).unwrap();
    std::os::unix::fs::symlink(&secret, out.join("en/1.0/secret.txt")).unwrap();
    let page = out.join("en/1.0/index.html");
    let before = inode(&page);
    let (code, report) = build_json(&p, &out);
    assert_eq!(code, 0, "{report:#}");
    assert!(!out.join("en/1.0/secret.txt").exists());
    assert!(!out.join("secret.txt").exists());
    assert_ne!(inode(&page), before, "1.0 was rendered again");
    // Garbage: a full build, the same site.
    std::fs::write(&record_path, "{ not json").unwrap();
    let (code, report) = build_json(&p, &out);
    assert_eq!(code, 0, "{report:#}");
    let clean = p.path("clean");
    build_json(&p, &clean);
    assert!(tree(&out) == tree(&clean));
}

/// A reused file is one the record saw: a file of the output truncated
/// or edited since (same size or not) is made again, whether the build
/// would take it from the live output or from the spare.
#[test]
fn a_reused_file_changed_since_its_build_is_made_again() {
    let p = versioned();
    let out = p.out();
    let clean = p.path("clean");
    assert_eq!(build_json(&p, &clean).0, 0);
    let page = "en/1.0/install/index.html";
    let bundle = "search/1.0/en/index.json";
    assert_eq!(build_json(&p, &out).0, 0);
    let good = read(&p, page);
    type Edit = fn(&str) -> String;
    let edits: [(&str, Edit); 3] = [
        (page, |t| t[..t.len() / 2].to_string()),
        (page, |t| t.replacen("<", ">", 1)),
        (bundle, |_| String::new()),
    ];
    for (file, edit) in edits {
        let text = read(&p, file);
        std::fs::write(out.join(file), edit(&text)).unwrap();
        let (code, report) = build_json(&p, &out);
        assert_eq!(code, 0, "{report:#}");
        assert!(tree(&out) == tree(&clean), "{file} was reused as edited");
    }
    assert_eq!(read(&p, page), good);
}

#[test]
fn a_page_that_stops_loading_in_a_reused_version_still_stops_the_build() {
    let p = versioned();
    let out = p.out();
    let (code, report) = build_json(&p, &out);
    assert_eq!(code, 0, "{report:#}");
    // The page leaves the loaded site, so only its finding says it changed.
    p.write(
        "versions/1.0/content/en/install.md",
        "---\ntitle: [unclosed\n---\n# Install\n",
    );
    let (code, report) = build_json(&p, &out);
    assert_eq!(code, 2, "{report:#}");
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["location"]["file"] == "versions/1.0/content/en/install.md"),
        "{report:#}"
    );
}

/// Every file below `dir`, with its inode.
#[cfg(unix)]
fn files_below(dir: &std::path::Path) -> Vec<(std::path::PathBuf, u64)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let ino = inode(&path);
                out.push((path, ino));
            }
        }
    }
    out.sort();
    out
}

/// How many pages the output has below site path `url`'s version (its
/// language's pages of the same docs version: `/en/1.0/…`, `/en/next/…`,
/// or the latest's `/en/…` outside those).
fn count_pages(out: &std::path::Path, url: &str) -> u64 {
    let parts: Vec<&str> = url.trim_matches('/').split('/').collect();
    let lang = parts[0];
    let versioned = parts.len() > 2;
    let root = if versioned {
        out.join(lang).join(parts[1])
    } else {
        out.join(lang)
    };
    let mut count = 0;
    let mut todo = vec![root.clone()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                // The latest's pages are not those of other versions, nor
                // the versions page.
                let other = !versioned
                    && d == root
                    && (name == "next" || name == "versions" || name.starts_with("1."));
                if !other {
                    todo.push(path);
                }
            } else if name == "index.html" {
                count += 1;
            }
        }
    }
    count
}

/// Everything below `dir`, folders and links included: by path, what it
/// is and (for a file) its bytes. The build record is bookkeeping.
#[cfg(unix)]
fn entries(dir: &std::path::Path) -> std::collections::BTreeMap<String, (char, Vec<u8>)> {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(|e| e.expect("walk"))
        .filter(|e| e.file_name() != ".basepress-cache.json")
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let kind = e.file_type();
            let entry = if kind.is_dir() {
                ('d', Vec::new())
            } else if kind.is_file() {
                ('f', std::fs::read(e.path()).unwrap())
            } else {
                ('l', Vec::new())
            };
            (rel, entry)
        })
        .collect()
}

/// A run of builds into one output, each recycling the spare that the
/// one before the last left: after every edit the output is entry for
/// entry what a clean build writes (nothing stale, no empty folder), and
/// the site it replaced, kept as the spare, still has the bytes it was
/// served with (a file shared with the live site is never written to).
#[cfg(unix)]
#[test]
fn every_build_recycling_the_spare_equals_a_clean_build() {
    let p = versioned();
    let out = p.out();
    let spare = p.path(".site.basepress-spare");
    // Body edits of next (the frozen versions stay in the spare as they
    // are: one makes next's search index many files, which the spare
    // still holds two builds later) between edits that change what every
    // version shows (a page added or removed, a frozen page fixed).
    let next = |words: &str| format!("---\ntitle: Upgrade\n---\n# Upgrade next\n\n{words}\n");
    let install =
        |words: &str| format!("---\ntitle: Install\n---\n# Install 1.0{words}\n\n## Steps\n");
    let many: String = (0..4000).map(|i| format!("word{i} ")).collect();
    let deep = "---\ntitle: Deep\n---\n# Deep\n".to_string();
    let edits: Vec<(&str, Option<String>)> = vec![
        ("content/en/upgrade.md", Some(next("One."))),
        ("content/en/upgrade.md", Some(next("Two."))),
        ("content/en/upgrade.md", Some(next(&many))),
        ("content/en/upgrade.md", Some(next("Small again."))),
        ("content/en/upgrade.md", Some(next("Small still."))),
        ("content/en/new/deep.md", Some(deep)),
        ("content/en/upgrade.md", Some(next("Three."))),
        ("content/en/upgrade.md", Some(next("Four."))),
        ("content/en/new/deep.md", None),
        (
            "versions/1.0/content/en/install.md",
            Some(install(", fixed")),
        ),
        ("content/en/upgrade.md", Some(next("Five."))),
        ("content/en/upgrade.md", Some(next("Six."))),
        ("versions/1.0/content/en/install.md", Some(install(""))),
        ("content/en/upgrade.md", None),
        (
            "content/en/index.md",
            Some("---\ntitle: Home\n---\n# Home\n".to_string()),
        ),
    ];
    let (code, report) = build_json(&p, &out);
    assert_eq!(code, 0, "{report:#}");
    let mut recycled = 0;
    for (round, (file, text)) in edits.into_iter().enumerate() {
        match text {
            Some(text) => {
                p.write(file, &text);
            }
            None => std::fs::remove_file(p.path(file)).unwrap(),
        }
        let served = entries(&out);
        // A folder cannot be linked: the new site's is the spare's when
        // the spare was recycled.
        let spare_folder =
            std::fs::metadata(spare.join("en/1.0")).map(|_| inode(&spare.join("en/1.0")));
        let (code, report) = build_json(&p, &out);
        assert_eq!(code, 0, "round {round}: {report:#}");
        recycled += usize::from(spare_folder.ok() == Some(inode(&out.join("en/1.0"))));
        assert!(
            entries(&spare) == served,
            "round {round}: the replaced site changed after it was replaced"
        );
        let clean = p.path(&format!("clean-{round}"));
        let (code, report) = build_json(&p, &clean);
        assert_eq!(code, 0, "round {round}: {report:#}");
        let (got, want) = (entries(&out), entries(&clean));
        let differ: Vec<_> = got
            .keys()
            .chain(want.keys())
            .filter(|k| got.get(*k) != want.get(*k))
            .collect();
        assert!(differ.is_empty(), "round {round} ({file}): {differ:?}");
        std::fs::remove_dir_all(&clean).unwrap();
        let _ = std::fs::remove_dir_all(p.path(&format!(".clean-{round}.basepress-spare")));
    }
    assert!(recycled >= 5, "the spare was recycled in {recycled} rounds");
}

/// What the spare holds is the build's to decide: a file or a link put
/// into it never reaches the site, and a link is never followed.
#[cfg(unix)]
#[test]
fn what_is_planted_in_the_spare_never_reaches_the_site() {
    let p = versioned();
    let out = p.out();
    let spare = p.path(".site.basepress-spare");
    for _ in 0..2 {
        let (code, report) = build_json(&p, &out);
        assert_eq!(code, 0, "{report:#}");
    }
    assert!(spare.join("en/1.0/index.html").is_file());
    let victim = tempfile::tempdir().unwrap();
    std::fs::write(victim.path().join("precious.txt"), "keep me").unwrap();
    std::os::unix::fs::symlink(victim.path(), spare.join("en/1.0/away")).unwrap();
    std::fs::write(spare.join("en/1.0/planted.html"), "not ours").unwrap();
    p.write(
        "content/en/upgrade.md",
        "---\ntitle: Upgrade\n---\n# Upgrade next\n\nEdited.\n",
    );
    let (code, report) = build_json(&p, &out);
    assert_eq!(code, 0, "{report:#}");
    assert!(!out.join("en/1.0/planted.html").exists());
    assert!(std::fs::symlink_metadata(out.join("en/1.0/away")).is_err());
    assert_eq!(
        std::fs::read_to_string(victim.path().join("precious.txt")).unwrap(),
        "keep me"
    );
    // The spare replaced by a link: not followed, not recycled, removed.
    std::fs::remove_dir_all(&spare).unwrap();
    std::os::unix::fs::symlink(victim.path(), &spare).unwrap();
    p.write(
        "content/en/upgrade.md",
        "---\ntitle: Upgrade\n---\n# Upgrade next\n\nAgain.\n",
    );
    let (code, report) = build_json(&p, &out);
    assert_eq!(code, 0, "{report:#}");
    assert!(read(&p, "en/next/upgrade/index.html").contains("Again."));
    assert!(std::fs::symlink_metadata(&spare).unwrap().is_dir());
    assert_eq!(
        std::fs::read_dir(victim.path()).unwrap().count(),
        1,
        "the link's target was written to"
    );
}

/// A front matter shared by the pages of several versions is parsed once
/// a build, yet each page keeps what its own says, and a bad one is
/// reported in every page that has it, at that page's line.
#[test]
fn a_front_matter_shared_across_versions_is_each_pages_own() {
    let p = versioned();
    let bad = "---\ntitle: Steps\nweight: [1\n---\n# Steps\n";
    p.write("versions/1.0/content/en/steps.md", bad);
    p.write("versions/1.1/content/en/steps.md", bad);
    let (_, found) = findings(&p, "front-matter-invalid");
    let mut files: Vec<_> = found
        .iter()
        .map(|f| {
            assert_eq!(f["location"]["line"], 3, "{f:#}");
            f["location"]["file"].as_str().unwrap().to_string()
        })
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "versions/1.0/content/en/steps.md",
            "versions/1.1/content/en/steps.md"
        ]
    );
    // The same front matter in two versions and in next; one title edit.
    let page = |title: &str| format!("---\ntitle: {title}\nweight: 3\n---\n# Steps\n");
    p.write("versions/1.0/content/en/steps.md", &page("Steps"));
    p.write("versions/1.1/content/en/steps.md", &page("Steps"));
    p.write("content/en/steps.md", &page("Next steps"));
    let o = p.build();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(read(&p, "en/1.0/steps/index.html").contains("<title>Steps"));
    assert!(read(&p, "en/steps/index.html").contains("<title>Steps"));
    assert!(read(&p, "en/next/steps/index.html").contains("<title>Next steps"));
}

/// The sitemaps' folder is basepress's: a static file there is a conflict.
#[test]
fn a_static_file_where_a_versions_sitemap_goes_is_a_conflict() {
    let p = versioned();
    p.write("static/sitemaps/1.1.xml", "<urlset/>");
    let (code, found) = findings(&p, "output-conflict");
    assert_eq!(code, 1, "{found:?}");
    assert!(
        found.iter().any(|f| f["message"]
            .as_str()
            .unwrap_or_default()
            .contains("/sitemaps/1.1.xml")),
        "{found:?}"
    );
}

/// An overlay shown on a page of a release line with no base (the
/// repository's 1.28 came without one) cannot be built, so it is an error
/// rather than an example nobody checked; naming a published base in the
/// front matter builds it on that base.
#[test]
fn an_overlay_on_a_line_without_a_base_is_an_error() {
    let repo = copy_repo_with_versions();
    let page = repo.path().join("versions/1.28/content/en/index.md");
    let text = std::fs::read_to_string(&page).unwrap();
    let overlay = "```yaml file=kustomization.yaml\nresources:\n  - base\nnamespace: agents\n```\n";
    // The block's first line: `resources:`.
    let line = text.lines().count() + 5;
    std::fs::write(&page, format!("{text}\nAn overlay:\n\n{overlay}")).unwrap();
    let check = || {
        let (code, report) = check_json_at(repo.path());
        let found: Vec<_> = findings_of(&report, "doc-overlay-invalid")
            .into_iter()
            .cloned()
            .collect();
        (code, found, report)
    };
    let (code, found, report) = check();
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(
        found[0]["location"]["file"],
        "versions/1.28/content/en/index.md"
    );
    assert_eq!(found[0]["location"]["line"], line as u64, "{report:#}");
    assert!(
        found[0]["message"].as_str().unwrap().contains("v1.28.0"),
        "{report:#}"
    );

    // On a published base it builds, and is checked like any overlay.
    let text = std::fs::read_to_string(&page).unwrap();
    let text = text.replacen("weight: 1\n", "weight: 1\nbase: v1.29.0\n", 1);
    std::fs::write(&page, &text).unwrap();
    let (_, found, report) = check();
    assert!(found.is_empty(), "{report:#}");
    std::fs::write(&page, text.replace("  - base\n", "  - elsewhere\n")).unwrap();
    let (code, found, report) = check();
    assert_eq!(code, Some(1), "{report:#}");
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("does not name the base"),
        "{report:#}"
    );
}

/// A link relative to the page's URL leads elsewhere from an untranslated
/// copy of the page: `../health-probes/#x` from /pt/next/container/ goes to
/// the Portuguese page, whose headings have Portuguese ids. It is checked
/// from the copy too, and reported at the original's line.
#[test]
fn a_relative_link_is_checked_from_each_untranslated_copy() {
    let repo = copy_repo_with_versions();
    std::fs::remove_file(repo.path().join("content/pt/container.md")).unwrap();
    let page = repo.path().join("content/es/container.md");
    let text = std::fs::read_to_string(&page).unwrap();
    let line = text.lines().count() + 2;
    let link = "[sondas](../health-probes/#imagenes-anteriores-a-1-29-0)";
    std::fs::write(&page, format!("{text}\n{link}\n")).unwrap();
    let (code, report) = check_json_at(repo.path());
    let found = findings_of(&report, "anchor-missing");
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(found[0]["location"]["file"], "content/es/container.md");
    assert_eq!(found[0]["location"]["line"], line as u64);
    let message = found[0]["message"].as_str().unwrap();
    assert!(message.contains("content/pt/health-probes.md"), "{message}");
    assert!(message.contains("/pt/next/container/"), "{message}");
    assert!(
        found[0]["remedy"]
            .as_str()
            .unwrap()
            .contains("imagens-anteriores"),
        "{report:#}"
    );
}
