//! Reusing the output of the docs versions that did not change.
//!
//! A build into a folder leaves there a record ([`BuildRecord`]) of each
//! docs version's fingerprint, files and findings. The next build into
//! the same folder computes the fingerprints again (after loading, which
//! reads every input anyway): a version whose fingerprint, files and
//! cross-version anchors are as recorded is not analysed, checked or
//! rendered again: its findings come from the record, and its files stay
//! where they are in the recycled spare (the site before the previous
//! one, see [`crate::write::Staging::recycle`]) when they are the same
//! there, or are linked from the previous output. A site of fifty
//! versions where one page of next changed renders one version and
//! touches the files of the versions changed by the last two builds.

use crate::analyze::{fingerprint, Analysis};
use crate::diagnostics::Diagnostic;
use crate::model::cache::{BuildRecord, Finding, Stamp, VersionRecord, FORMAT};
use crate::model::layout;
use crate::model::site::Site;
use crate::write::{Previous, Spare, Staging};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// What a build reuses, decided before the analysis.
#[derive(Debug, Default)]
pub struct Plan {
    /// By docs version: whether its previous output is reused.
    pub reused: Vec<bool>,
    /// The recorded findings of the reused versions.
    pub findings: Vec<Diagnostic>,
    /// By docs version: the files it publishes on its own (for a reused
    /// version, with those of its folders).
    owned: Vec<BTreeSet<String>>,
    /// By docs version: the folders whose every file it publishes on its
    /// own (its search bundle, whose file names this plan cannot know).
    folders: Vec<Vec<String>>,
    /// By docs version: whether its files are reused where they are in
    /// the spare (else from the previous output).
    in_spare: Vec<bool>,
    digests: Vec<[u8; 32]>,
    previous: Option<Previous>,
    spare: Option<Spare>,
}

/// The id a version is recorded by (a project without versions has one).
fn id(site: &Site, v: usize) -> &str {
    site.versions.get(v).map_or("latest", |v| v.id.as_str())
}

fn hex(digest: &[u8; 32]) -> String {
    digest.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Whether site path `file` is in one of `folders` (`/search/1.29/`),
/// written plainly (a record naming `..` is not ours).
fn in_folders(folders: &[String], file: &str) -> bool {
    let plain = !file.split('/').any(|s| s == ".." || s == ".");
    plain && folders.iter().any(|d| file.starts_with(d.as_str()))
}

/// Whether every file of `rec` has the stamp recorded for it.
fn unchanged(rec: &VersionRecord, stamp: impl Fn(&str) -> Option<Stamp> + Sync) -> bool {
    use rayon::prelude::*;
    rec.stamps.len() == rec.files.len()
        && rec
            .files
            .par_iter()
            .zip(&rec.stamps)
            .all(|(f, s)| stamp(f) == Some(*s))
}

/// Decides what to reuse of `previous` (the output this build replaces,
/// if any): `context` names the binary and the options.
pub fn plan(
    site: &Site,
    loaded: &[Diagnostic],
    context: &str,
    previous: Option<Previous>,
    spare: Option<Spare>,
) -> Plan {
    let digests = fingerprint::fingerprints(site, context, loaded);
    let previous = previous.filter(|p| p.record.format == FORMAT);
    let empty = BuildRecord::default();
    let record = previous.as_ref().map_or(&empty, |p| &p.record);
    let count = digests.len();
    let mut reused = vec![false; count];
    let mut in_spare = vec![false; count];
    let mut findings: Vec<Vec<Diagnostic>> = vec![Vec::new(); count];
    let mut owned: Vec<_> = (0..count).map(|v| layout::version_files(site, v)).collect();
    let folders: Vec<_> = (0..count)
        .map(|v| layout::version_folders(site, v))
        .collect();
    for v in 0..count {
        let (Some(rec), Some(old)) = (record.versions.get(id(site, v)), &previous) else {
            continue;
        };
        if rec.digest != hex(&digests[v]) {
            continue;
        }
        // Only the files this build would write for the version (in its
        // folders: those recorded, the same fingerprint giving the same
        // files), each still in the previous output as a regular file.
        let mut expected = owned[v].clone();
        expected.extend(
            rec.files
                .iter()
                .filter(|f| in_folders(&folders[v], f))
                .cloned(),
        );
        let as_recorded =
            rec.files.len() == expected.len() && rec.files.iter().all(|f| expected.contains(f));
        // The spare holds the same files when its record says they were
        // made from the same inputs, and each file is still as the build
        // that recorded it left it.
        in_spare[v] = as_recorded
            && spare.as_ref().is_some_and(|s| {
                let kept = s.record.as_ref().and_then(|r| r.versions.get(id(site, v)));
                kept.is_some_and(|k| {
                    k.digest == rec.digest && k.files == rec.files && unchanged(k, |f| s.stamp(f))
                })
            });
        let same = as_recorded && (in_spare[v] || unchanged(rec, |f| old.stamp(f)));
        let restored: Option<Vec<Diagnostic>> =
            rec.findings.iter().map(Finding::diagnostic).collect();
        if let (true, Some(found)) = (same, restored) {
            reused[v] = true;
            findings[v] = found;
            owned[v] = expected;
        }
    }
    // A version linking with an anchor into one rendered again is
    // rendered again too: its findings depend on that one's headings.
    loop {
        let mut changed = false;
        for v in 0..count {
            if !reused[v] {
                continue;
            }
            let into = record
                .versions
                .get(id(site, v))
                .map(|r| r.links_into.as_slice())
                .unwrap_or_default();
            let stale = into.iter().any(|w| {
                (0..count)
                    .find(|&u| id(site, u) == w)
                    .is_none_or(|u| !reused[u])
            });
            if stale {
                reused[v] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let findings = findings
        .into_iter()
        .zip(&reused)
        .filter(|(_, r)| **r)
        .flat_map(|(f, _)| f)
        .collect();
    for (v, r) in reused.iter().enumerate() {
        in_spare[v] &= *r;
    }
    Plan {
        reused,
        findings,
        owned,
        folders,
        in_spare,
        digests,
        previous,
        spare,
    }
}

impl Plan {
    /// The output this build replaces (there is one whenever a version is
    /// reused).
    pub fn previous(&self) -> Option<&Previous> {
        self.previous.as_ref()
    }

    /// The files of the reused versions.
    pub fn reused_files(&self) -> impl Iterator<Item = &String> {
        self.files_of(|v| self.reused[v])
    }

    /// The files of the reused versions that the spare does not hold, to
    /// link from the previous output, with the stamp each must still have.
    pub fn files_to_link(&self, site: &Site) -> Vec<(&String, Stamp)> {
        let Some(previous) = &self.previous else {
            return Vec::new();
        };
        (0..self.reused.len())
            .filter(|&v| self.reused[v] && !self.in_spare[v])
            .filter_map(|v| previous.record.versions.get(id(site, v)))
            .flat_map(|rec| {
                // A file without a stamp matches no file: never linked.
                let stamp = |i: usize| rec.stamps.get(i).copied().unwrap_or([u64::MAX; 2]);
                rec.files
                    .iter()
                    .enumerate()
                    .map(move |(i, f)| (f, stamp(i)))
            })
            .collect()
    }

    /// The stamps of reused version `v`'s files in the new site: those its
    /// files had where they are taken from, which the plan found them to
    /// have still (a link keeps them).
    fn reused_stamps(&self, site: &Site, v: usize) -> Vec<Stamp> {
        let from = match self.in_spare[v] {
            true => self.spare.as_ref().and_then(|s| s.record.as_ref()),
            false => self.previous.as_ref().map(|p| &p.record),
        };
        from.and_then(|r| r.versions.get(id(site, v)))
            .map(|r| r.stamps.clone())
            .unwrap_or_default()
    }

    fn files_of(&self, wanted: impl Fn(usize) -> bool) -> impl Iterator<Item = &String> {
        self.owned
            .iter()
            .enumerate()
            .filter(move |(v, _)| wanted(*v))
            .flat_map(|(_, files)| files)
    }

    /// Makes the spare the folder `staging` writes into, keeping the
    /// files of the versions reused from it; returns whether it did.
    /// When it did not, every reused file is linked from the previous
    /// output instead.
    pub fn recycle(&mut self, staging: &mut Staging) -> bool {
        let done = self.spare.as_ref().is_some_and(|spare| {
            let kept: std::collections::HashSet<&str> = self
                .files_of(|v| self.in_spare[v])
                .map(String::as_str)
                .collect();
            staging.recycle(spare, |f| kept.contains(f))
        });
        if !done {
            self.in_spare.fill(false);
        }
        done
    }

    /// Whether a finding is about a reused version's pages (and so comes
    /// from the record instead).
    pub fn covers(&self, site: &Site, d: &Diagnostic) -> bool {
        let Some(file) = d.location.as_ref().map(|l| &l.file) else {
            return false;
        };
        site.version_of_file(file)
            .is_some_and(|v| self.reused.get(v).copied().unwrap_or(false))
    }

    /// The record of this build: `written` are the site paths it wrote
    /// itself, `diagnostics` everything it reported, `stamp` gives the
    /// stamp of a file of the new site. `copied`: a reused file was
    /// copied, not linked, so the reused files are stamped where they are
    /// too.
    pub fn record(
        &self,
        analysis: &Analysis,
        written: &[String],
        diagnostics: &[Diagnostic],
        stamp: impl Fn(&str) -> Option<Stamp> + Sync,
        copied: bool,
    ) -> BuildRecord {
        use rayon::prelude::*;
        let site = &analysis.site;
        let count = self.digests.len();
        let mut versions: Vec<VersionRecord> = (0..count)
            .map(|v| VersionRecord {
                digest: hex(&self.digests[v]),
                ..VersionRecord::default()
            })
            .collect();
        let owned = &self.owned;
        for (v, rec) in versions.iter_mut().enumerate() {
            if self.reused[v] {
                rec.files = owned[v].iter().cloned().collect();
                rec.links_into = self
                    .previous
                    .as_ref()
                    .and_then(|p| p.record.versions.get(id(site, v)))
                    .map(|r| r.links_into.clone())
                    .unwrap_or_default();
            } else {
                rec.files = written
                    .iter()
                    .filter(|p| owned[v].contains(*p) || in_folders(&self.folders[v], p))
                    .cloned()
                    .collect();
                rec.files.sort();
                let mut into: Vec<String> = site
                    .pages
                    .iter()
                    .zip(&analysis.graph.outbound)
                    .filter(|(p, _)| p.version == v)
                    .flat_map(|(_, to)| to.iter())
                    .filter_map(|&t| site.pages.get(t))
                    .filter(|t| t.version != v)
                    .map(|t| id(site, t.version).to_string())
                    .collect();
                into.sort();
                into.dedup();
                rec.links_into = into;
            }
        }
        // The files written are stamped where they are; a version with a
        // file that cannot be stamped is not reused next time.
        for (v, rec) in versions.iter_mut().enumerate() {
            rec.stamps = match self.reused[v] && !copied {
                true => self.reused_stamps(site, v),
                false => rec
                    .files
                    .par_iter()
                    .map(|f| stamp(f))
                    .collect::<Option<Vec<_>>>()
                    .unwrap_or_default(),
            };
        }
        for d in diagnostics {
            let at = d
                .location
                .as_ref()
                .and_then(|l| site.version_of_file(&l.file));
            if let Some(rec) = at.and_then(|v| versions.get_mut(v)) {
                rec.findings.push(Finding::of(d));
            }
        }
        BuildRecord {
            format: FORMAT,
            versions: versions
                .into_iter()
                .enumerate()
                .map(|(v, rec)| (id(site, v).to_string(), rec))
                .collect::<BTreeMap<_, _>>(),
        }
    }
}
