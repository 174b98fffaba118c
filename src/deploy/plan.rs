//! What a deploy does, decided before anything is written: which files to
//! upload, in which order, which objects to delete, and what stops the
//! deploy (a released version the bucket holds with other bytes, more
//! deletions than allowed). Pure: it compares the site folder with what
//! the bucket was seen to hold.

use super::local::LocalFile;
use super::target::Target;
use crate::diagnostics::{rule, Diagnostic};
use crate::model::layout;
use std::collections::{BTreeMap, BTreeSet};

/// What the bucket holds at a site path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remote {
    pub size: u64,
    /// The object's ETag: a version token for a conditional replace, never
    /// compared as a content hash.
    pub e_tag: Option<String>,
    /// The SHA-256 of its bytes: from the object's metadata, or computed
    /// from its bytes for a version's object that has none; `None` until
    /// known.
    pub sha256: Option<String>,
}

/// What a published path is, which decides its upload order and how its
/// object may be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// A file of a version's folder, other than its indexes.
    VersionFile,
    /// A file that names nothing: stylesheets, scripts, images, static files.
    Asset,
    /// A version's `SHA256SUMS`.
    Sums,
    /// A version's `SHA256SUMS.sig`.
    Signature,
    /// A version's `files.txt`, the index the download loop reads first.
    FilesTxt,
    /// `/kubernetes/allowed_signers`.
    Signers,
    /// `/kubernetes/versions.txt` and `versions.json`: replaced only if
    /// they are still what this deploy saw. `versions.txt`, which the
    /// download loop reads, goes first: `versions.json` follows only if
    /// it went up, so that two racing deploys never leave the two
    /// naming different versions.
    Versions,
    /// `/kubernetes/versions.json`, after `versions.txt`.
    VersionsJson,
    /// An HTML page, or a search bundle's shards and page texts.
    Page,
    /// A search bundle's `index.json` and the version sitemaps: after the
    /// shards and pages they name, before what names them.
    Index,
    /// What points at pages from outside: the sitemap, robots.txt, the
    /// redirect at `/` and the 404 page.
    Last,
}

/// The class of a site path, and the version folder it is in
/// (`kubernetes/v1.30.0`), if any.
pub fn classify(path: &str) -> (Class, Option<&str>) {
    if let Some(folder) = version_folder(path) {
        let name = &path[folder.len() + 1..];
        let class = match name {
            "base/SHA256SUMS" => Class::Sums,
            "base/SHA256SUMS.sig" => Class::Signature,
            "base/files.txt" => Class::FilesTxt,
            _ => Class::VersionFile,
        };
        return (class, Some(folder));
    }
    let class = match path {
        "kubernetes/allowed_signers" => Class::Signers,
        "kubernetes/versions.txt" => Class::Versions,
        "kubernetes/versions.json" => Class::VersionsJson,
        "index.html" | "404.html" | "sitemap.xml" | "robots.txt" => Class::Last,
        // The version sitemaps name pages, and the search bundles lead to
        // them: neither goes up before the pages do.
        p if under(p, layout::SITEMAPS_DIR) => Class::Index,
        p if under(p, layout::SEARCH_DIR) && p.ends_with("/index.json") => Class::Index,
        p if p.ends_with(".html") || under(p, layout::SEARCH_DIR) => Class::Page,
        _ => Class::Asset,
    };
    (class, None)
}

/// Whether site path `path` (without its leading `/`) is below the
/// published folder `dir` (`/search/`).
fn under(path: &str, dir: &str) -> bool {
    path.starts_with(dir.trim_start_matches('/'))
}

/// `kubernetes/vX.Y.Z` when `path` lies in a version's folder.
pub fn version_folder(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("kubernetes/")?;
    let (folder, below) = rest.split_once('/')?;
    if below.is_empty() {
        return None;
    }
    let version = folder.strip_prefix('v')?;
    semver::Version::parse(version).ok()?;
    Some(&path[.."kubernetes/".len() + folder.len()])
}

/// The `Cache-Control` of a published path: a version's folder never
/// changes, so caches may keep it for a year; everything else (pages,
/// indexes, assets with stable names) for a minute.
pub fn cache_control(path: &str) -> &'static str {
    match version_folder(path) {
        Some(_) => "public, max-age=31536000, immutable",
        None => "public, max-age=60",
    }
}

/// How an object is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// Only if no object is there (`If-None-Match: *`): a version's files.
    Create,
    /// Only if the object is still the one seen (`If-Match: ETAG`), or
    /// still absent: versions.txt and versions.json.
    Replace(Option<String>),
    /// Whatever is there.
    Overwrite,
}

/// Why a file is uploaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    New,
    Changed,
}

/// One upload of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    pub file: LocalFile,
    /// Uploads run tier by tier: a tier starts once every upload of the
    /// tiers before it is done.
    pub tier: u8,
    pub reason: Reason,
    pub write: Write,
}

/// The whole plan.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// In the order they run (by tier, then path).
    pub uploads: Vec<Upload>,
    /// Site paths already there with the same bytes.
    pub unchanged: Vec<String>,
    /// Site paths to delete once every upload is done, pages first.
    pub deletes: Vec<String>,
    /// What stops the deploy before anything is written.
    pub findings: Vec<Diagnostic>,
}

/// The number of tiers: one past the highest.
pub const TIERS: u8 = 11;

fn tier(class: Class, reason: Reason) -> u8 {
    match class {
        Class::VersionFile | Class::Asset => 0,
        Class::Sums => 1,
        Class::Signature => 2,
        Class::FilesTxt => 3,
        Class::Signers => 4,
        Class::Versions => 5,
        Class::VersionsJson => 6,
        // New pages before changed ones: a changed page may link to a new
        // one, and a new one only to pages already there.
        Class::Page if reason == Reason::New => 7,
        Class::Page => 8,
        Class::Index => 9,
        Class::Last => 10,
    }
}

/// Whether the plan needs the SHA-256 of the object at a path before it
/// can decide: a version's object always (it must be the same bytes);
/// another only when its size is the same (otherwise it changed).
pub fn needs_sha256(local: &LocalFile, remote: &Remote) -> bool {
    remote.sha256.is_none() && (version_folder(&local.path).is_some() || remote.size == local.size)
}

/// A version's `files.txt` and `SHA256SUMS` as they were before the
/// version was signed (`files.txt` without `SHA256SUMS.sig`, and the sums
/// with that `files.txt`'s): what a bucket holds of a version deployed
/// unsigned, which `basepress release` signs once `signing` is set.
pub fn unsigned_indexes(files_txt: &str, sums: &str) -> (String, String) {
    let files: String = files_txt
        .lines()
        .filter(|l| *l != crate::model::layout::SIGNATURE)
        .map(|l| format!("{l}\n"))
        .collect();
    let index = crate::model::site::sha256_hex(files.as_bytes());
    let sums = sums
        .lines()
        .map(|l| match l.split_once("  ") {
            Some((_, "files.txt")) => format!("{index}  files.txt\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    (files, sums)
}

/// Compares the site's files with the bucket's objects (by site path).
/// `unsigned`: for each signed version's `files.txt` and `SHA256SUMS`,
/// the SHA-256 it had unsigned (see [`unsigned_indexes`]): a version the
/// bucket holds unsigned, with those bytes and every other file the same,
/// takes its signature, and those two files are replaced.
pub fn plan(
    target: &Target,
    local: &[LocalFile],
    remote: &BTreeMap<String, Remote>,
    unsigned: &BTreeMap<String, String>,
    max_deletes: usize,
) -> Plan {
    let mut out = Plan::default();
    let short = |sha: &str| sha.get(..12).unwrap_or(sha).to_string();
    let local_versions: BTreeSet<&str> = local
        .iter()
        .filter_map(|f| version_folder(&f.path))
        .collect();
    let local_paths: BTreeSet<&str> = local.iter().map(|f| f.path.as_str()).collect();

    // A version deployed unsigned, now signed: its indexes may change as
    // signing changes them, and nothing else.
    let signing = |folder: &str, path: &str, r: &Remote| {
        let signature = format!("{folder}/base/{}", crate::model::layout::SIGNATURE);
        !remote.contains_key(&signature)
            && local_paths.contains(signature.as_str())
            && r.sha256.is_some()
            && unsigned.get(path) == r.sha256.as_ref()
    };
    for file in local {
        let (class, version) = classify(&file.path);
        let theirs = remote.get(&file.path);
        let reason = match theirs {
            None => Reason::New,
            Some(r) if version.is_some_and(|v| signing(v, &file.path, r)) => {
                out.uploads.push(Upload {
                    file: file.clone(),
                    tier: tier(class, Reason::Changed),
                    reason: Reason::Changed,
                    write: Write::Replace(r.e_tag.clone()),
                });
                continue;
            }
            Some(r) if version.is_some() => {
                if r.size == file.size && r.sha256.as_deref() == Some(file.sha256.as_str()) {
                    out.unchanged.push(file.path.clone());
                    continue;
                }
                let theirs = match &r.sha256 {
                    Some(sha) => format!("sha256 {} there", short(sha)),
                    None => format!("{} bytes there, not compared", r.size),
                };
                out.findings.push(
                    Diagnostic::new(
                        rule::RELEASED_VERSION_CHANGED,
                        format!(
                            "`{}` is in the bucket with other bytes ({theirs}, sha256 {} here): a published version never changes",
                            target.url(&file.path),
                            short(&file.sha256)
                        ),
                    )
                    .in_file(&file.path)
                    .help("publish the change as a new version; if this version was never served (an earlier deploy failed on it), delete its objects from the bucket by hand"),
                );
                continue;
            }
            Some(r) if r.size == file.size && r.sha256.as_deref() == Some(file.sha256.as_str()) => {
                out.unchanged.push(file.path.clone());
                continue;
            }
            Some(_) => Reason::Changed,
        };
        let write = match class {
            _ if version.is_some() => Write::Create,
            Class::Versions | Class::VersionsJson => {
                Write::Replace(theirs.and_then(|r| r.e_tag.clone()))
            }
            _ => Write::Overwrite,
        };
        out.uploads.push(Upload {
            file: file.clone(),
            tier: tier(class, reason),
            reason,
            write,
        });
    }
    out.uploads
        .sort_by(|a, b| (a.tier, &a.file.path).cmp(&(b.tier, &b.file.path)));

    let mut missing_versions: BTreeMap<&str, usize> = BTreeMap::new();
    let mut deletes: Vec<(u8, &str)> = Vec::new();
    for path in remote.keys().filter(|p| !local_paths.contains(p.as_str())) {
        match version_folder(path) {
            Some(folder) if local_versions.contains(folder) => out.findings.push(
                Diagnostic::new(
                    rule::RELEASED_VERSION_CHANGED,
                    format!(
                        "`{}` is in the bucket, and this site no longer publishes it: a published version never changes",
                        target.url(path)
                    ),
                )
                .in_file(folder_file(folder)),
            ),
            Some(folder) => *missing_versions.entry(folder).or_default() += 1,
            None => deletes.push((tier(classify(path).0, Reason::Changed), path)),
        }
    }
    for (folder, count) in missing_versions {
        let version = folder.trim_start_matches("kubernetes/");
        out.findings.push(
            Diagnostic::new(
                rule::RELEASED_VERSION_MISSING,
                format!(
                    "{version} is in the bucket ({count} object(s) in {}/), and this site does not publish it",
                    target.url(folder)
                ),
            )
            .help(format!(
                "restore bases/{version} and build again: installers may have pinned it"
            )),
        );
    }
    deletes.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    out.deletes = deletes.into_iter().map(|(_, p)| p.to_string()).collect();
    if out.deletes.len() > max_deletes {
        out.findings.push(
            Diagnostic::new(
                rule::DEPLOY_TOO_MANY_DELETES,
                format!(
                    "the deploy would delete {} object(s) under {target}, more than --max-deletes {max_deletes} allows (the first: `{}`)",
                    out.deletes.len(),
                    out.deletes.first().map(String::as_str).unwrap_or_default()
                ),
            ),
        );
    }
    out
}

/// The file findings about a version's folder point at: its files.txt.
fn folder_file(folder: &str) -> String {
    format!("{folder}/base/files.txt")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::site::sha256_hex;

    fn file(path: &str, text: &str) -> LocalFile {
        LocalFile {
            path: path.into(),
            size: text.len() as u64,
            sha256: sha256_hex(text.as_bytes()),
        }
    }

    fn remote_of(files: &[LocalFile]) -> BTreeMap<String, Remote> {
        files
            .iter()
            .map(|f| {
                (
                    f.path.clone(),
                    Remote {
                        size: f.size,
                        e_tag: Some(format!("\"{}\"", &f.sha256[..8])),
                        sha256: Some(f.sha256.clone()),
                    },
                )
            })
            .collect()
    }

    fn site() -> Vec<LocalFile> {
        vec![
            file("404.html", "nf"),
            file("assets/style.css", "css"),
            file("en/index.html", "home"),
            file("search/en/index.json", "{}"),
            file("index.html", "redirect"),
            file("kubernetes/allowed_signers", "k"),
            file("kubernetes/v1.0.0/base/SHA256SUMS", "sums"),
            file("kubernetes/v1.0.0/base/SHA256SUMS.sig", "sig"),
            file("kubernetes/v1.0.0/base/files.txt", "files"),
            file("kubernetes/v1.0.0/base/kustomization.yaml", "k"),
            file("kubernetes/versions.json", "{}"),
            file("kubernetes/versions.txt", "v1.0.0\n"),
            file("sitemap.xml", "<urlset/>"),
        ]
    }

    fn target() -> Target {
        Target::parse("s3://docs/site").unwrap()
    }

    #[test]
    fn paths_are_classified_by_what_points_at_them() {
        assert_eq!(
            classify("kubernetes/v1.30.0/base/statefulset.yaml"),
            (Class::VersionFile, Some("kubernetes/v1.30.0"))
        );
        assert_eq!(
            classify("kubernetes/v1.30.0/base/files.txt").0,
            Class::FilesTxt
        );
        assert_eq!(
            classify("kubernetes/v1.30.0-rc.1/base/SHA256SUMS").0,
            Class::Sums
        );
        assert_eq!(classify("kubernetes/vX/base/a").0, Class::Asset);
        assert_eq!(classify("kubernetes/versions.txt"), (Class::Versions, None));
        // versions.json only after versions.txt went up.
        let (txt, json) = (
            tier(classify("kubernetes/versions.txt").0, Reason::Changed),
            tier(classify("kubernetes/versions.json").0, Reason::Changed),
        );
        assert!(txt < json, "{txt} {json}");
        assert_eq!(classify("es/versions/index.html").0, Class::Page);
        assert_eq!(classify("search/1.30/es/index.json").0, Class::Index);
        assert_eq!(classify("search/es/s/0.json").0, Class::Page);
        assert_eq!(classify("sitemaps/1.29.xml").0, Class::Index);
        assert_eq!(classify("searching/x.json").0, Class::Asset);
        assert_eq!(classify("index.html").0, Class::Last);
        assert_eq!(classify("img/logo.svg").0, Class::Asset);
        assert_eq!(
            cache_control("kubernetes/v1.0.0/base/files.txt"),
            "public, max-age=31536000, immutable"
        );
        assert_eq!(
            cache_control("kubernetes/versions.json"),
            "public, max-age=60"
        );
        assert_eq!(cache_control("en/index.html"), "public, max-age=60");
    }

    #[test]
    fn a_first_deploy_uploads_indexes_after_what_they_name() {
        let local = site();
        let p = plan(&target(), &local, &BTreeMap::new(), &BTreeMap::new(), 256);
        assert!(p.findings.is_empty());
        let order: Vec<&str> = p.uploads.iter().map(|u| u.file.path.as_str()).collect();
        assert_eq!(
            order,
            [
                "assets/style.css",
                "kubernetes/v1.0.0/base/kustomization.yaml",
                "kubernetes/v1.0.0/base/SHA256SUMS",
                "kubernetes/v1.0.0/base/SHA256SUMS.sig",
                "kubernetes/v1.0.0/base/files.txt",
                "kubernetes/allowed_signers",
                "kubernetes/versions.txt",
                "kubernetes/versions.json",
                "en/index.html",
                "search/en/index.json",
                "404.html",
                "index.html",
                "sitemap.xml",
            ]
        );
        let writes: Vec<&Write> = p.uploads.iter().map(|u| &u.write).collect();
        assert_eq!(writes[1], &Write::Create);
        assert_eq!(writes[4], &Write::Create);
        assert_eq!(writes[6], &Write::Replace(None));
        assert_eq!(writes[8], &Write::Overwrite);
    }

    #[test]
    fn a_redeploy_uploads_what_changed_and_deletes_what_is_gone() {
        let mut local = site();
        let mut remote = remote_of(&local);
        remote.insert(
            "en/old/index.html".into(),
            Remote {
                size: 3,
                e_tag: None,
                sha256: None,
            },
        );
        let unchanged = plan(&target(), &local, &remote_of(&local), &BTreeMap::new(), 256);
        assert!(unchanged.uploads.is_empty() && unchanged.deletes.is_empty());
        assert_eq!(unchanged.unchanged.len(), local.len());

        local[2] = file("en/index.html", "home, changed");
        local[11] = file("kubernetes/versions.txt", "v1.0.0\nv1.1.0\n");
        local.push(file("en/new/index.html", "new"));
        local.push(file("kubernetes/v1.1.0/base/kustomization.yaml", "k2"));
        let p = plan(&target(), &local, &remote, &BTreeMap::new(), 256);
        assert!(p.findings.is_empty(), "{:?}", p.findings);
        let order: Vec<(&str, Reason)> = p
            .uploads
            .iter()
            .map(|u| (u.file.path.as_str(), u.reason))
            .collect();
        assert_eq!(
            order,
            [
                ("kubernetes/v1.1.0/base/kustomization.yaml", Reason::New),
                ("kubernetes/versions.txt", Reason::Changed),
                ("en/new/index.html", Reason::New),
                ("en/index.html", Reason::Changed),
            ]
        );
        let seen = remote["kubernetes/versions.txt"].e_tag.clone();
        assert_eq!(p.uploads[1].write, Write::Replace(seen));
        assert_eq!(p.deletes, ["en/old/index.html"]);
        let guarded = plan(&target(), &local, &remote, &BTreeMap::new(), 0);
        assert_eq!(guarded.findings[0].rule.id, "deploy-too-many-deletes");
    }

    /// A version deployed unsigned, signed since (`basepress release` signs
    /// it once `signing` is set): its signature goes up and its indexes are
    /// replaced, when the bucket holds exactly their unsigned forms and
    /// every other file of it is the same; anything else still stops.
    #[test]
    fn a_version_deployed_unsigned_takes_its_signature() {
        let files_txt = "SHA256SUMS\nSHA256SUMS.sig\nfiles.txt\nkustomization.yaml\n";
        let sums = format!(
            "{}  files.txt\n{}  kustomization.yaml\n",
            sha256_hex(files_txt.as_bytes()),
            sha256_hex(b"k")
        );
        let (old_files, old_sums) = unsigned_indexes(files_txt, &sums);
        assert_eq!(old_files, "SHA256SUMS\nfiles.txt\nkustomization.yaml\n");
        assert!(old_sums.starts_with(&sha256_hex(old_files.as_bytes())));
        let v = "kubernetes/v1.0.0/base/";
        let mut local = site();
        local.retain(|f| !f.path.starts_with(v));
        local.extend([
            file(&format!("{v}SHA256SUMS"), &sums),
            file(&format!("{v}SHA256SUMS.sig"), "sig"),
            file(&format!("{v}files.txt"), files_txt),
            file(&format!("{v}kustomization.yaml"), "k"),
        ]);
        local.sort_by(|a, b| a.path.cmp(&b.path));
        let deployed: Vec<LocalFile> = local
            .iter()
            .filter(|f| !f.path.ends_with(".sig"))
            .map(|f| match f.path.rsplit('/').next() {
                Some("files.txt") if f.path.starts_with(v) => file(&f.path, &old_files),
                Some("SHA256SUMS") => file(&f.path, &old_sums),
                _ => f.clone(),
            })
            .collect();
        let remote = remote_of(&deployed);
        let unsigned: BTreeMap<String, String> = [
            (format!("{v}files.txt"), sha256_hex(old_files.as_bytes())),
            (format!("{v}SHA256SUMS"), sha256_hex(old_sums.as_bytes())),
        ]
        .into();
        let p = plan(&target(), &local, &remote, &unsigned, 256);
        assert!(p.findings.is_empty(), "{:?}", p.findings);
        let ups: Vec<(&str, &Write)> = p
            .uploads
            .iter()
            .map(|u| (u.file.path.as_str(), &u.write))
            .collect();
        let sums_tag = remote[&format!("{v}SHA256SUMS")].e_tag.clone();
        let files_tag = remote[&format!("{v}files.txt")].e_tag.clone();
        assert_eq!(
            ups,
            [
                (format!("{v}SHA256SUMS").as_str(), &Write::Replace(sums_tag)),
                (format!("{v}SHA256SUMS.sig").as_str(), &Write::Create),
                (format!("{v}files.txt").as_str(), &Write::Replace(files_tag)),
            ]
        );
        // The bucket's files.txt is not the unsigned form: it changed.
        let mut other = remote.clone();
        other.get_mut(&format!("{v}files.txt")).unwrap().sha256 = Some(sha256_hex(b"x"));
        let p = plan(&target(), &local, &other, &unsigned, 256);
        assert_eq!(p.findings.len(), 1, "{:?}", p.findings);
        assert_eq!(p.findings[0].rule.id, "released-version-changed");
        // The bucket holds a signature already: no transition.
        let mut signed = remote.clone();
        signed.insert(
            format!("{v}SHA256SUMS.sig"),
            Remote {
                size: 3,
                e_tag: None,
                sha256: Some(sha256_hex(b"old")),
            },
        );
        let p = plan(&target(), &local, &signed, &unsigned, 256);
        assert!(p.findings.len() >= 2, "{:?}", p.findings);
    }

    #[test]
    fn a_published_version_with_other_bytes_stops_the_deploy() {
        let local = site();
        let mut remote = remote_of(&local);
        let k = "kubernetes/v1.0.0/base/kustomization.yaml";
        remote.get_mut(k).unwrap().sha256 = Some(sha256_hex(b"x"));
        remote.insert(
            "kubernetes/v1.0.0/base/extra.yaml".into(),
            Remote {
                size: 1,
                e_tag: None,
                sha256: None,
            },
        );
        remote.insert(
            "kubernetes/v0.9.0/base/files.txt".into(),
            Remote {
                size: 1,
                e_tag: None,
                sha256: None,
            },
        );
        let p = plan(&target(), &local, &remote, &BTreeMap::new(), 256);
        let found: Vec<(&str, String)> = p
            .findings
            .iter()
            .map(|d| (d.rule.id, d.message.clone()))
            .collect();
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found.iter().any(|(id, m)| *id == "released-version-changed"
            && m.contains("s3://docs/site/kubernetes/v1.0.0/base/kustomization.yaml")
            && m.contains("other bytes")));
        assert!(found.iter().any(|(id, m)| *id == "released-version-changed"
            && m.contains("extra.yaml")
            && m.contains("no longer publishes")));
        assert!(found
            .iter()
            .any(|(id, m)| *id == "released-version-missing"
                && m.starts_with("v0.9.0 is in the bucket")));
        // Nothing of a version is ever deleted.
        assert!(p.deletes.is_empty());
    }

    #[test]
    fn what_needs_a_sha256_before_deciding() {
        let page = file("en/index.html", "home");
        let same_size = Remote {
            size: 4,
            e_tag: None,
            sha256: None,
        };
        let other_size = Remote {
            size: 9,
            e_tag: None,
            sha256: None,
        };
        assert!(needs_sha256(&page, &same_size));
        assert!(!needs_sha256(&page, &other_size));
        let base = file("kubernetes/v1.0.0/base/a.yaml", "a");
        assert!(needs_sha256(&base, &other_size));
    }
}
