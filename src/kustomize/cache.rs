//! Folder builds kept between builds: the docs' overlays all include one
//! of a few bases, which then is read and built once.
//!
//! An entry holds what building a folder read (each file's content hash
//! and origin, each folder test) and what it made; it is used again only
//! when every one of those reads gives the same answer.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;

use super::files::{Files, SourceFile};
use super::resource::Res;

/// How many builds of one folder path are kept (the same path can hold
/// different files, e.g. two bases shown as `base` by different pages).
const PER_FOLDER: usize = 8;

/// Results of folder builds, for [`super::build_with`]. Start with
/// `Cache::default()`; it only grows with the folders it sees.
#[derive(Debug, Default)]
pub struct Cache {
    entries: HashMap<String, Vec<Entry>>,
}

#[derive(Debug, Clone)]
struct Entry {
    reads: Vec<Read>,
    result: Vec<Res>,
}

/// One question a build asked of the files, and the answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    File(String, Option<(u64, PathBuf, (usize, usize))>),
    Dir(String, bool),
}

fn fingerprint(file: Option<&SourceFile>) -> Option<(u64, PathBuf, (usize, usize))> {
    use std::hash::BuildHasher;
    // A fixed seed: the same bytes give the same hash in every build.
    let state = foldhash::fast::FixedState::with_seed(0x6b75_7374_6f6d_697a);
    file.map(|f| {
        let at = (f.line_offset, f.column_offset);
        (state.hash_one(&f.bytes), f.origin.clone(), at)
    })
}

impl Read {
    fn holds(&self, files: &dyn Files) -> bool {
        match self {
            Read::File(path, answer) => fingerprint(files.file(path)) == *answer,
            Read::Dir(path, answer) => files.is_dir(path) == *answer,
        }
    }
}

impl Cache {
    /// The result of building `dir`, if the files still answer as they did.
    pub(super) fn lookup(&self, dir: &str, files: &dyn Files) -> Option<(Vec<Read>, Vec<Res>)> {
        let entry = self
            .entries
            .get(dir)?
            .iter()
            .find(|e| e.reads.iter().all(|r| r.holds(files)))?;
        Some((entry.reads.clone(), entry.result.clone()))
    }

    pub(super) fn store(&mut self, dir: &str, reads: Vec<Read>, result: Vec<Res>) {
        let list = self.entries.entry(dir.to_string()).or_default();
        if list.len() >= PER_FOLDER {
            list.remove(0);
        }
        list.push(Entry { reads, result });
    }
}

/// Files that note each question asked of them, per folder being built.
pub(super) struct Recording<'a> {
    inner: &'a dyn Files,
    logs: RefCell<Vec<Vec<Read>>>,
}

impl<'a> Recording<'a> {
    pub fn new(inner: &'a dyn Files) -> Self {
        Recording {
            inner,
            logs: RefCell::new(vec![Vec::new()]),
        }
    }

    pub fn inner(&self) -> &'a dyn Files {
        self.inner
    }

    fn note(&self, read: Read) {
        if let Some(log) = self.logs.borrow_mut().last_mut() {
            log.push(read);
        }
    }

    pub fn file(&self, path: &str) -> Option<&'a SourceFile> {
        let f = self.inner.file(path);
        self.note(Read::File(path.to_string(), fingerprint(f)));
        f
    }

    pub fn is_dir(&self, path: &str) -> bool {
        let d = self.inner.is_dir(path);
        self.note(Read::Dir(path.to_string(), d));
        d
    }

    /// Starts the log of a folder's build.
    pub fn push(&self) {
        self.logs.borrow_mut().push(Vec::new());
    }

    /// Ends the log of a folder's build; its reads count for the folder
    /// that includes it too.
    pub fn pop(&self) -> Vec<Read> {
        let mut logs = self.logs.borrow_mut();
        let log = logs.pop().unwrap_or_default();
        if let Some(parent) = logs.last_mut() {
            parent.extend(log.iter().cloned());
        }
        log
    }

    /// Counts reads of a cached build for the folders that include it.
    pub fn replay(&self, reads: &[Read]) {
        if let Some(log) = self.logs.borrow_mut().last_mut() {
            log.extend(reads.iter().cloned());
        }
    }
}
