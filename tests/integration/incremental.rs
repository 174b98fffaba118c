//! The fast path of `basepress serve` (a page's body or front matter
//! edited): after every rebuild, what it would serve and what it finds are
//! exactly what a full build of the same files gives; and any other change
//! takes the full path.

use crate::support::*;
use basepress::engine::session::{Output, Rebuild, Session};
use basepress::engine::{self, Outcome};
use basepress::report::render_text;
use std::path::{Path, PathBuf};

/// Writes `files` (path below `root`, text), rebuilds knowing they
/// changed, and holds the result to a full render of the same tree.
fn edit(session: &mut Session, root: &Path, files: &[(&str, &str)]) -> Rebuild {
    let mut paths: Vec<PathBuf> = Vec::new();
    for (rel, text) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        paths.push(path);
    }
    rebuild(session, root, Some(&paths))
}

fn rebuild(session: &mut Session, root: &Path, changed: Option<&[PathBuf]>) -> Rebuild {
    let r = session.rebuild(changed);
    let (full, outcome) = engine::render_site(root, &engine::Options::default());
    assert_eq!(
        findings(root, &r.outcome),
        findings(root, &outcome),
        "the findings differ from a full build's"
    );
    assert_eq!(r.outcome.exit_code(), outcome.exit_code());
    if session.options().preview {
        // A preview renders what has errors too: it gives what a preview's
        // full build gives, and a build's files when that passes.
        let mut fresh = Session::new(root, session.options().clone());
        let reference = fresh.rebuild(None);
        assert_eq!(
            matches!(r.output, Output::Failed),
            matches!(reference.output, Output::Failed),
            "the rebuild and a full preview disagree on rendering"
        );
        assert_eq!(
            matches!(r.output, Output::Failed),
            !engine::renders(session.options(), &r.outcome.diagnostics)
        );
        // After a failed rebuild the session keeps the last files it
        // rendered, for the next edit: nothing is served from them.
        if !matches!(r.output, Output::Failed) {
            same_files(session, fresh.files());
        }
        if full.is_some() {
            same_files(session, full);
        }
        return r;
    }
    match (&r.output, full) {
        (Output::Failed, None) => {}
        (Output::Failed, Some(_)) => panic!("the rebuild failed, a full build passes"),
        (_, None) => panic!("the rebuild passed, a full build fails"),
        (_, Some(full)) => {
            let served = session.files().expect("the files of a good build");
            let paths = |f: &[basepress::render::OutFile]| {
                f.iter().map(|f| f.path.clone()).collect::<Vec<_>>()
            };
            assert_eq!(paths(&served), paths(&full));
            for (a, b) in served.iter().zip(&full) {
                assert!(a.bytes == b.bytes, "{} differs from a full build's", a.path);
            }
        }
    }
    r
}

/// The files `session` serves are `expected`, byte for byte.
fn same_files(session: &Session, expected: Option<Vec<basepress::render::OutFile>>) {
    let served = session.files();
    let paths = |f: &Option<Vec<basepress::render::OutFile>>| {
        f.as_ref()
            .map(|f| f.iter().map(|f| f.path.clone()).collect::<Vec<_>>())
    };
    assert_eq!(paths(&served), paths(&expected));
    for (a, b) in served.iter().flatten().zip(expected.iter().flatten()) {
        assert!(a.bytes == b.bytes, "{} differs from a full build's", a.path);
    }
}

/// A seeded choice among `n`: the same walk on every run (xorshift).
fn seeded(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    }
}

fn findings(root: &Path, o: &Outcome) -> String {
    render_text(&o.diagnostics, root, false)
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap()
}

fn has(r: &Rebuild, rule: &str, file: &str) -> bool {
    r.outcome.diagnostics.iter().any(|d| {
        d.rule.id == rule
            && d.location
                .as_ref()
                .is_some_and(|l| l.file == Path::new(file))
    })
}

#[test]
fn page_edits_give_what_a_full_build_gives() {
    let project = copy_repo();
    let root = project.path();
    // A page only in the default language (its copies in pt and en show
    // it), linked to with anchors from an English page, by its source
    // and by the URL of its English copy.
    let extra = "---\ntitle: Extra\n---\n# Extra\n\n## Part one\n\nSome text.\n";
    std::fs::write(root.join("content/es/extra.md"), extra).unwrap();
    let index = read(root, "content/en/index.md");
    std::fs::write(
        root.join("content/en/index.md"),
        format!("{index}\nSee [part one](../es/extra.md#part-one) and [its copy](/en/extra/#part-one).\n"),
    )
    .unwrap();
    let mut session = Session::new(root, engine::Options::default());
    let r = rebuild(&mut session, root, None);
    assert!(!r.fast);
    assert!(matches!(r.output, Output::Full(_)));

    // A body edit: one page and its translations rendered again.
    let es = read(root, "content/es/installation.md");
    let r = edit(
        &mut session,
        root,
        &[(
            "content/es/installation.md",
            &format!("{es}\n## Otra sección\n\nUna línea más con {{{{ latest }}}}.\n"),
        )],
    );
    assert!(r.fast, "a body edit takes the fast path");
    assert!(matches!(r.output, Output::Changed(_)));
    assert_eq!(r.rendered, 3, "the page in its three languages");

    // A heading other pages link to, with its anchor: they are checked
    // again, and the build fails until it is back.
    let shutdown = read(root, "content/en/shutdown.md");
    let renamed = shutdown.replacen("## The drain\n", "## The draining\n", 1);
    assert_ne!(renamed, shutdown);
    let r = edit(&mut session, root, &[("content/en/shutdown.md", &renamed)]);
    assert!(r.fast);
    assert!(matches!(r.output, Output::Failed));
    assert!(has(&r, "anchor-missing", "content/en/configuration.md"));
    assert!(has(&r, "anchor-missing", "content/en/installation.md"));

    // Edits while the build fails are rendered once it passes.
    let pt = read(root, "content/pt/secrets.md");
    let r = edit(
        &mut session,
        root,
        &[("content/pt/secrets.md", &format!("{pt}\nMais uma linha.\n"))],
    );
    assert!(r.fast);
    assert!(matches!(r.output, Output::Failed));
    let r = edit(
        &mut session,
        root,
        &[(
            "content/en/shutdown.md",
            &format!("{shutdown}\nOne more line.\n"),
        )],
    );
    assert!(r.fast);
    assert!(matches!(r.output, Output::Changed(_)));
    assert!(!has(&r, "anchor-missing", "content/en/configuration.md"));

    // An overlay the page shows, a credential, an unknown variable and a
    // broken link: found as a full build finds them.
    let broken = shutdown
        .replacen("terminationGracePeriodSeconds: 330", "terminationGracePeriodSecond: 330", 1)
        .replacen(
            "## The drain\n",
            "## The drain\n\nRUNNER_BOOTSTRAP_TOKEN=wst_9f8a7b6c5d4e3f2a1b0c {{ nope }} [gone](gone.md)\n",
            1,
        );
    let r = edit(&mut session, root, &[("content/en/shutdown.md", &broken)]);
    assert!(r.fast);
    for rule in ["credential-leak", "doc-variable-unknown", "link-broken"] {
        assert!(has(&r, rule, "content/en/shutdown.md"), "{rule}");
    }
    let r = edit(&mut session, root, &[("content/en/shutdown.md", &shutdown)]);
    assert!(r.fast);
    assert!(matches!(r.output, Output::Changed(_)));

    // Variables in the title: replaced as a full build replaces them, in
    // the page and in what shows its title; an unknown one fails the
    // build until it is fixed.
    let titled = shutdown.replacen("\ntitle: ", "\ntitle: v{{ latest }} · ", 1);
    assert_ne!(titled, shutdown);
    let r = edit(&mut session, root, &[("content/en/shutdown.md", &titled)]);
    assert!(r.fast);
    assert!(matches!(r.output, Output::Changed(_)));
    let typo = shutdown.replacen("\ntitle: ", "\ntitle: v{{ lastest }} · ", 1);
    let r = edit(&mut session, root, &[("content/en/shutdown.md", &typo)]);
    assert!(matches!(r.output, Output::Failed));
    assert!(has(&r, "doc-variable-unknown", "content/en/shutdown.md"));
    let r = edit(&mut session, root, &[("content/en/shutdown.md", &shutdown)]);
    assert!(matches!(r.output, Output::Changed(_)));
    assert!(!has(&r, "doc-variable-unknown", "content/en/shutdown.md"));

    // The untranslated page: its copies follow it, and so do the anchors
    // into it and into its copy.
    let r = edit(
        &mut session,
        root,
        &[(
            "content/es/extra.md",
            &extra.replace("## Part one", "## Part two"),
        )],
    );
    assert!(r.fast);
    assert!(matches!(r.output, Output::Failed));
    assert!(has(&r, "anchor-missing", "content/en/index.md"));
    let r = edit(
        &mut session,
        root,
        &[(
            "content/es/extra.md",
            &format!("{extra}\nMore words for the search index.\n"),
        )],
    );
    assert!(r.fast);
    assert!(matches!(r.output, Output::Changed(_)));
    assert_eq!(r.rendered, 3, "the page and its two copies");

    // Two pages at once, one of them saved with the same bytes.
    let r = edit(
        &mut session,
        root,
        &[
            ("content/es/extra.md", extra),
            (
                "content/pt/secrets.md",
                &read(root, "content/pt/secrets.md"),
            ),
        ],
    );
    assert!(r.fast);
}

#[test]
fn other_changes_take_the_full_path() {
    let p = Project::new();
    let root = p.root();
    let mut session = Session::new(root, engine::Options::default());
    assert!(!rebuild(&mut session, root, None).fast);
    let install = read(root, "content/en/install.md");

    // Front matter: the navigation and other pages show the title, which
    // the fast path renders again.
    let retitled = install.replacen("title: Install", "title: Set up", 1);
    let r = edit(&mut session, root, &[("content/en/install.md", &retitled)]);
    assert!(r.fast, "a title edit takes the fast path");
    // And a body edit after it.
    let r = edit(
        &mut session,
        root,
        &[("content/en/install.md", &format!("{retitled}\nMore.\n"))],
    );
    assert!(r.fast);

    // New and removed pages, assets, site.yaml and templates.
    let r = edit(
        &mut session,
        root,
        &[("content/en/new.md", "---\ntitle: New\n---\n# New\n")],
    );
    assert!(!r.fast);
    p.remove("content/en/new.md");
    let gone = [root.join("content/en/new.md")];
    assert!(!rebuild(&mut session, root, Some(&gone)).fast);
    let r = edit(&mut session, root, &[("content/en/notes.txt", "notes\n")]);
    assert!(!r.fast);
    let r = edit(&mut session, root, &[("site.yaml", SITE_YAML)]);
    assert!(!r.fast);
    let default_page = default_template("page.html");
    let r = edit(&mut session, root, &[("templates/page.html", default_page)]);
    assert!(!r.fast);

    // Broken front matter: the full build fails, and the next page edit
    // is a full build too (nothing of that build was rendered).
    let r = edit(
        &mut session,
        root,
        &[("content/en/install.md", "---\ntitle: [\n---\n# Install\n")],
    );
    assert!(!r.fast);
    assert!(matches!(r.output, Output::Failed));
    let r = edit(&mut session, root, &[("content/en/install.md", &install)]);
    assert!(!r.fast);
    assert!(matches!(r.output, Output::Full(_)));
    let r = edit(
        &mut session,
        root,
        &[("content/en/install.md", &format!("{install}\nAgain.\n"))],
    );
    assert!(r.fast);
}

/// Text a page edit adds, each raising a finding of a page check.
const SNIPPETS: &[(&str, &str)] = &[
    ("link-broken", "See [gone](gone.md)."),
    ("anchor-missing", "See [the drain](shutdown.md#nowhere)."),
    ("doc-yaml-invalid", "```yaml\na: [1\n```"),
    ("doc-env-key-unknown", "Set `RUNNER_NOT_A_KEY` first."),
    ("doc-variable-unknown", "Version {{ lastest }}."),
    (
        "credential-leak",
        "RUNNER_BOOTSTRAP_TOKEN=wst_9f8a7b6c5d4e3f2a1b0c",
    ),
    (
        "replicas-not-one",
        "```yaml file=kustomization.yaml\nresources: [base]\npatches:\n  - path: two.yaml\n```\n\n```yaml file=two.yaml\napiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: whystack-agent\nspec:\n  replicas: 2\n```",
    ),
    (
        "kustomize-patch-no-target",
        "```yaml file=kustomization.yaml\nresources: [base]\npatches:\n  - path: other.yaml\n```\n\n```yaml file=other.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nothing\n```",
    ),
    (
        "doc-command-mismatch",
        "```sh\nkubectl -n default logs whystack-agent-0\n```",
    ),
    ("doc-version-mismatch", "Pull `whystack-agent:1.0.7`."),
    (
        "doc-translation-code-differs",
        "```sh\necho in one language only\n```",
    ),
    ("none", "Just one more sentence about the drain."),
];

/// A seeded walk of page edits (each snippet added to or taken from a
/// page, pages restored): after every step the fast path gives what a
/// full build gives. Every page check of the registry has a snippet.
#[test]
fn random_page_edits_give_what_a_full_build_gives() {
    page_edit_walk(engine::Options::default());
}

/// The same walk in a preview (`serve`): a page with a check's error is
/// rendered all the same, by the fast path as by a full build.
#[test]
fn random_page_edits_preview_what_a_full_preview_gives() {
    page_edit_walk(engine::Options {
        preview: true,
        ..Default::default()
    });
}

fn page_edit_walk(options: engine::Options) {
    for check in basepress::check::CHECKS {
        if matches!(check.scope, basepress::check::Scope::Page(_)) {
            assert!(
                SNIPPETS
                    .iter()
                    .any(|(rule, _)| check.own_rules().any(|r| r.id == *rule)),
                "no snippet raises a rule of page check `{}`",
                check.id
            );
        }
    }
    // The repository with its docs versions: pages of next, of the latest
    // and of an older version are edited.
    let project = copy_repo_with_versions();
    let root = project.path();
    // The first shows no overlay, so one added there is assembled alone.
    let pages = [
        "content/en/egress.md",
        "versions/1.30/content/en/shutdown.md",
        "versions/1.29/content/es/installation.md",
        "content/pt/secrets.md",
        "versions/1.28/content/pt/secrets.md",
    ];
    let originals: Vec<String> = pages.iter().map(|p| read(root, p)).collect();
    let mut current = originals.clone();
    let preview = options.preview;
    let mut session = Session::new(root, options);
    rebuild(&mut session, root, None);
    // Each snippet raises its rule, at the page's line.
    for (i, (rule, snippet)) in SNIPPETS.iter().enumerate() {
        let p = if snippet.contains("file=") {
            0
        } else {
            i % pages.len()
        };
        let text = format!("{}\n\n{snippet}\n", originals[p]);
        let r = edit(&mut session, root, &[(pages[p], &text)]);
        assert!(r.fast);
        if *rule != "none" {
            assert!(has(&r, rule, pages[p]), "{rule} is not found: {snippet}");
        }
        // A preview shows every page but one holding a credential.
        if preview {
            let shown = !matches!(r.output, Output::Failed);
            assert_eq!(shown, *rule != "credential-leak", "{rule}");
        }
        edit(&mut session, root, &[(pages[p], &originals[p])]);
    }
    let mut next = seeded(0x2545_f491_4f6c_dd1d);
    for step in 0..24 {
        let p = next(pages.len());
        let text = match next(4) {
            0 => originals[p].clone(),
            _ => {
                let (_, snippet) = SNIPPETS[next(SNIPPETS.len())];
                format!("{}\n\n{snippet}\n", current[p])
            }
        };
        current[p] = text;
        let r = edit(&mut session, root, &[(pages[p], &current[p])]);
        assert!(r.fast, "step {step}: a body edit takes the fast path");
    }
}

/// A page of the front matter walk: its name, title and weight.
fn walk_page(name: &str, title: &str, weight: Option<i64>, extra: &str) -> String {
    let weight = weight.map(|w| format!("weight: {w}\n")).unwrap_or_default();
    format!("---\ntitle: {title}\n{weight}{extra}---\n# {title}\n\n## Part\n\nText of {name}.\n")
}

/// A seeded walk of front matter edits (titles that move a page within
/// its folder, weights set and removed, descriptions, a front matter one
/// line longer) on a site large enough that sidebars list only a window
/// of a folder: after every step the fast path gives what a full build
/// gives, and renders only the pages that show the edited one.
#[test]
fn random_front_matter_edits_give_what_a_full_build_gives() {
    let p = Project::new();
    let root = p.root();
    // 320 pages in English (past the size where every folder is listed):
    // a folder of 60, one of 250 and a few at the top.
    let mut pages: Vec<String> = Vec::new();
    for (folder, count) in [("small", 60), ("large", 250)] {
        p.write(
            &format!("content/en/{folder}/index.md"),
            &walk_page("index", &format!("Folder {folder}"), Some(5), ""),
        );
        pages.push(format!("content/en/{folder}/index.md"));
        for i in 0..count {
            let rel = format!("content/en/{folder}/p{i:03}.md");
            p.write(
                &rel,
                &walk_page(&format!("p{i:03}"), &format!("Page {i:03}"), None, ""),
            );
            pages.push(rel);
        }
    }
    for i in 0..8 {
        let rel = format!("content/en/top{i}.md");
        p.write(
            &rel,
            &walk_page(&format!("top{i}"), &format!("Top {i}"), Some(10 + i), ""),
        );
        pages.push(rel);
    }
    // Links with anchors into a page, so its linkers are checked again.
    p.write(
        "content/en/top0.md",
        &format!(
            "{}See [part](large/p007.md#part) and [there](small/p003.md#part).\n",
            walk_page("top0", "Top 0", Some(10), "")
        ),
    );
    let mut session = Session::new(root, engine::Options::default());
    rebuild(&mut session, root, None);
    // A title that keeps its page's place: the pages whose sidebar window
    // lists it (and their untranslated Spanish copies), its neighbours and
    // itself are rendered, not the whole language.
    let rel = "content/en/large/p100.md";
    let retitled = read(root, rel).replace("Page 100", "Page 100 again");
    let r = edit(&mut session, root, &[(rel, &retitled)]);
    assert!(r.fast);
    let language_pages = pages.len() + 2;
    assert!(
        r.rendered <= 2 * (40 + 3) && r.rendered >= 2,
        "{} pages rendered for a title edit (the language has {language_pages})",
        r.rendered
    );
    let mut next = seeded(0x9e37_79b9_7f4a_7c15);
    for step in 0..30 {
        let rel = &pages[next(pages.len())];
        let name = rel.rsplit('/').next().unwrap().trim_end_matches(".md");
        let text = read(root, rel);
        let body_from = text.match_indices("---\n").nth(1).map(|(i, _)| i).unwrap();
        let body = &text[body_from + 4..];
        let title = match next(3) {
            0 => format!("Page {:03}", next(260)),
            1 => format!("Renamed {step}"),
            _ => text
                .lines()
                .nth(1)
                .unwrap()
                .trim_start_matches("title: ")
                .to_string(),
        };
        let weight = match next(3) {
            0 => None,
            1 => Some(next(50) as i64),
            _ => text
                .lines()
                .find_map(|l| l.strip_prefix("weight: "))
                .and_then(|w| w.parse().ok()),
        };
        let extra = match next(3) {
            0 => format!("description: About {name} at step {step}\n"),
            _ => String::new(),
        };
        let weight_line = weight.map(|w| format!("weight: {w}\n")).unwrap_or_default();
        let new = format!("---\ntitle: {title}\n{weight_line}{extra}---\n{body}");
        let r = edit(&mut session, root, &[(rel.as_str(), &new)]);
        assert!(
            r.fast,
            "step {step}: a front matter edit takes the fast path"
        );
    }
}

/// A fast rebuild whose render fails keeps nothing of what it rendered:
/// the pages it rendered again are still stale, so the rebuild that
/// passes renders them and serves a full build's bytes.
#[test]
fn a_failed_render_leaves_what_it_rendered_stale() {
    let p = Project::new();
    let root = p.root();
    p.write(
        "content/en/third.md",
        "---\ntitle: Third\nweight: 3\n---\n# Third\n",
    );
    // A template that fails on the page whose description is `boom`.
    let page = default_template("page.html");
    let failing = page.replacen(
        "{% block title %}",
        "{% block title %}{% if page.description == \"boom\" %}{{ no_such.value }}{% endif %}",
        1,
    );
    assert_ne!(&failing, page);
    p.write("templates/page.html", &failing);
    let mut session = Session::new(root, engine::Options::default());
    assert!(!rebuild(&mut session, root, None).fast);
    let install = read(root, "content/en/install.md");
    let boom = install.replacen("weight: 2\n", "weight: 2\ndescription: boom\n", 1);
    let r = edit(&mut session, root, &[("content/en/install.md", &boom)]);
    assert!(r.fast);
    assert!(matches!(r.output, Output::Failed));
    // A title the third page's sidebar shows, while the render fails.
    let home = read(root, "content/en/index.md").replacen("title: Home", "title: Start", 1);
    let r = edit(&mut session, root, &[("content/en/index.md", &home)]);
    assert!(r.fast);
    assert!(matches!(r.output, Output::Failed));
    // Fixed: the third page shows the new title (`rebuild` compares).
    let r = edit(&mut session, root, &[("content/en/install.md", &install)]);
    assert!(r.fast);
    assert!(matches!(r.output, Output::Changed(_)));
}

/// A link into a page with an anchor publishes the id of the heading it
/// names (`#Steps` names `## Steps`, whose id is `steps`): when that
/// page's headings change, the linking page follows, on the fast path and
/// through the render cache of the full path.
#[test]
fn links_follow_the_ids_of_the_headings_they_name() {
    let p = Project::new();
    let root = p.root();
    p.write(
        "content/en/index.md",
        "---\ntitle: Home\nweight: 1\n---\n# Home\n\nSee [install](install.md#Steps).\n",
    );
    let mut session = Session::new(root, engine::Options::default());
    rebuild(&mut session, root, None);
    let install = read(root, "content/en/install.md");
    let exact = install.replacen("## Steps\n", "## Steps {#Steps}\n", 1);
    assert_ne!(exact, install);
    // `rebuild` holds each result to a full build's bytes.
    let r = edit(&mut session, root, &[("content/en/install.md", &exact)]);
    assert!(r.fast);
    let r = edit(&mut session, root, &[("content/en/install.md", &install)]);
    assert!(r.fast);
    // The full path (site.yaml saved too), with the pages of the last
    // build in its cache.
    let r = edit(
        &mut session,
        root,
        &[("content/en/install.md", &exact), ("site.yaml", SITE_YAML)],
    );
    assert!(!r.fast);
    // A linking page only one language has: its untranslated copies
    // publish its links too, and follow.
    p.write(
        "content/en/guide.md",
        "---\ntitle: Guide\nweight: 3\n---\n# Guide\n\nSee [install](install.md#Steps).\n",
    );
    let mut session = Session::new(root, engine::Options::default());
    rebuild(&mut session, root, None);
    let r = edit(&mut session, root, &[("content/en/install.md", &install)]);
    assert!(r.fast);
    let r = edit(&mut session, root, &[("content/en/install.md", &exact)]);
    assert!(r.fast);
}

/// A preview renders a project whose errors are checks' findings, but
/// never one that would serve a credential, in a page or in a base.
#[test]
fn a_preview_never_renders_a_credential() {
    let p = Project::new();
    let root = p.root();
    let options = engine::Options {
        preview: true,
        ..Default::default()
    };
    let mut session = Session::new(root, options.clone());
    rebuild(&mut session, root, None);
    // A broken link: rendered, with its finding.
    let index = read(root, "content/en/index.md");
    let r = edit(
        &mut session,
        root,
        &[(
            "content/en/index.md",
            &format!("{index}\n[gone](gone.md)\n"),
        )],
    );
    assert!(has(&r, "link-broken", "content/en/index.md"));
    assert!(matches!(r.output, Output::Changed(_)));
    // A Secret with data in the base: nothing.
    p.write(
        "bases/v1.1.0/secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: correct-horse-battery-staple-prod\n",
    );
    p.write(
        "bases/v1.1.0/kustomization.yaml",
        &KUSTOMIZATION.replace(
            "  - deployment.yaml\n",
            "  - deployment.yaml\n  - secret.yaml\n",
        ),
    );
    let r = Session::new(root, options).rebuild(None);
    assert!(
        r.outcome
            .diagnostics
            .iter()
            .any(|d| d.rule.id == "secret-in-base"),
        "{:?}",
        r.outcome.diagnostics
    );
    assert!(matches!(r.output, Output::Failed));
}
