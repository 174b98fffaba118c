//! Each base as `kubectl kustomize bases/vX.Y.Z` builds it: the objects
//! the base checks read, every field with the file, line and column it
//! came from. A base Kustomize would refuse has no objects, and the
//! reasons are findings at their places.

use crate::diagnostics::Diagnostic;
use crate::kustomize::{self, Build, MemFiles, SourceFile};
use crate::model::site::Base;
use rayon::prelude::*;

/// The files of `base` as a build reads them: at the root of the build,
/// each named in findings by its path relative to the project root.
pub fn files(base: &Base) -> MemFiles {
    let mut files = MemFiles::new();
    add_files(&mut files, base, "");
    files
}

/// Puts the files of `base` below `dir` of `files` (`""` for the root).
pub fn add_files(files: &mut MemFiles, base: &Base, dir: &str) {
    for f in &base.files {
        let path = if dir.is_empty() {
            f.name.clone()
        } else {
            format!("{dir}/{}", f.name)
        };
        files.insert(
            &path,
            SourceFile::new(f.bytes.clone(), base.dir.join(&f.name)),
        );
    }
}

/// Builds one base; `Err` holds why Kustomize would refuse it.
pub fn build(base: &Base) -> Result<Build, Vec<Diagnostic>> {
    kustomize::build(&files(base), "").map_err(|errors| {
        errors
            .iter()
            .map(kustomize::Error::diagnostic)
            .collect::<Vec<_>>()
    })
}

/// Builds every base, in `bases` order: the build of each (`None` when
/// it fails) and the findings of the builds that failed.
pub fn build_all(bases: &[Base]) -> (Vec<Option<Build>>, Vec<Diagnostic>) {
    let results: Vec<Result<Build, Vec<Diagnostic>>> = bases.par_iter().map(build).collect();
    let mut builds = Vec::with_capacity(results.len());
    let mut findings = Vec::new();
    for r in results {
        match r {
            Ok(b) => builds.push(Some(b)),
            Err(d) => {
                builds.push(None);
                findings.extend(d);
            }
        }
    }
    (builds, findings)
}
