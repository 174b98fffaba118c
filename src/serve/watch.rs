//! Watching the project's inputs: file-system events are gathered until
//! they stop for a moment (a save is often several events), then the
//! inputs they name are hashed, and the site is rebuilt only when some
//! input's bytes really changed.

use super::App;
use crate::load::{config, INPUT_DIRS};
use notify::{RecursiveMode, Watcher as _};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long events must stop before a rebuild starts.
pub const QUIET: Duration = Duration::from_millis(30);
/// How long, once the last event says a file is complete (closed after
/// writing, or renamed into place), for the events that come with it.
pub const SETTLED: Duration = Duration::from_millis(2);
/// The longest a stream of events can put a rebuild off.
const MAX_DELAY: Duration = Duration::from_millis(300);

enum Msg {
    Fs(notify::Result<notify::Event>),
    Stop,
}

/// The watching thread; stops when dropped.
pub struct Watch {
    tx: mpsc::Sender<Msg>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.tx.send(Msg::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts watching the project of `app` and rebuilding it on changes.
pub fn start(app: Arc<App>) -> notify::Result<Watch> {
    let (tx, rx) = mpsc::channel();
    let events = tx.clone();
    let watcher = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
        // Reading a file (the rebuild reads them all) is no change; closing
        // one written is, the end of a save.
        if e.as_ref()
            .is_ok_and(|e| e.kind.is_access() && !completes(&e.kind))
        {
            return;
        }
        let _ = events.send(Msg::Fs(e));
    })?;
    let mut inputs = Inputs::new(app.root.clone(), watcher);
    inputs.sync_watches()?;
    inputs.scan();
    let thread = std::thread::Builder::new()
        .name("basepress-watch".into())
        .spawn(move || run(&app, inputs, &rx))
        .map_err(notify::Error::io)?;
    Ok(Watch {
        tx,
        thread: Some(thread),
    })
}

fn run(app: &App, mut inputs: Inputs, rx: &mpsc::Receiver<Msg>) {
    loop {
        let mut batch = Batch::default();
        match rx.recv() {
            Ok(Msg::Fs(e)) => batch.add(e),
            Ok(Msg::Stop) | Err(_) => return,
        }
        let start = Instant::now();
        loop {
            let quiet = if batch.settled { SETTLED } else { QUIET };
            let wait = quiet.min(MAX_DELAY.saturating_sub(start.elapsed()));
            match rx.recv_timeout(wait) {
                Ok(Msg::Fs(e)) => batch.add(e),
                Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Err(RecvTimeoutError::Timeout) => break,
            }
        }
        if batch.rescan {
            inputs.scan();
            app.rebuild(None, batch.first);
        } else {
            let relevant: Vec<PathBuf> = batch
                .paths
                .iter()
                .filter(|p| inputs.is_input(p))
                .cloned()
                .collect();
            let mut changed = Vec::new();
            for p in &relevant {
                inputs.refresh(p, &mut changed);
            }
            if !changed.is_empty() {
                changed.sort();
                changed.dedup();
                app.rebuild(Some(&changed), batch.first);
            }
        }
        // A new input folder, or a new image data file named in site.yaml:
        // watched from now on, and looked at once, for what was written in
        // it before the watch began.
        let before = inputs.watched.clone();
        if let Err(e) = inputs.sync_watches() {
            eprintln!("warning: cannot watch every input: {e}");
        }
        let added: Vec<PathBuf> = inputs
            .watched
            .keys()
            .filter(|p| !before.contains_key(*p))
            .cloned()
            .collect();
        let mut missed = Vec::new();
        for p in &added {
            inputs.refresh(p, &mut missed);
        }
        if !missed.is_empty() {
            app.rebuild(None, batch.first);
        }
    }
}

/// The events of one burst.
#[derive(Default)]
struct Batch {
    paths: BTreeSet<PathBuf>,
    /// Events were lost (or the watcher failed): check everything.
    rescan: bool,
    /// When the first event arrived.
    first: Option<Instant>,
    /// Whether the last event said a file is complete: no need to wait as
    /// long for more.
    settled: bool,
}

impl Batch {
    fn add(&mut self, event: notify::Result<notify::Event>) {
        self.first.get_or_insert_with(Instant::now);
        match event {
            Ok(e) => {
                if e.need_rescan() {
                    self.rescan = true;
                }
                self.settled = completes(&e.kind);
                self.paths.extend(e.paths);
            }
            Err(_) => self.rescan = true,
        }
    }
}

/// Whether an event says a file is complete: closed after writing, or
/// renamed into place (how many editors save).
fn completes(kind: &notify::EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};
    matches!(
        kind,
        notify::EventKind::Access(AccessKind::Close(AccessMode::Write))
            | notify::EventKind::Modify(ModifyKind::Name(RenameMode::To | RenameMode::Both))
    )
}

/// What the project's inputs were at the last look: a SHA-256 per file.
struct Inputs {
    root: PathBuf,
    watcher: notify::RecommendedWatcher,
    /// Folders watched, and whether recursively.
    watched: HashMap<PathBuf, RecursiveMode>,
    /// In path order, so that the inputs below a folder are one range.
    digests: BTreeMap<PathBuf, [u8; 32]>,
    /// site.yaml and the image data file it names, as of the last look.
    files: Vec<PathBuf>,
}

impl Inputs {
    fn new(root: PathBuf, watcher: notify::RecommendedWatcher) -> Self {
        Inputs {
            root,
            watcher,
            watched: HashMap::new(),
            digests: BTreeMap::new(),
            files: Vec::new(),
        }
    }

    /// site.yaml and the image data file it names.
    fn input_files(&self) -> Vec<PathBuf> {
        let mut files = vec![self.root.join(config::FILE_NAME)];
        if let Ok(c) = config::load(&self.root) {
            files.push(self.root.join(&c.image.releases));
        }
        files
    }

    fn dirs(&self) -> Vec<PathBuf> {
        INPUT_DIRS.iter().map(|d| self.root.join(d)).collect()
    }

    /// Whether `path` is (or holds) an input: below an input folder, or
    /// one of the input files; hidden files (editors' swap files) are not.
    fn is_input(&self, path: &Path) -> bool {
        let Ok(rel) = path.strip_prefix(&self.root) else {
            return false;
        };
        if rel
            .components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
        {
            return false;
        }
        self.dirs().iter().any(|d| path.starts_with(d)) || self.files.iter().any(|f| f == path)
    }

    /// Watches the root (for site.yaml, and input folders appearing), every
    /// input folder that exists, and the image data file's folder.
    fn sync_watches(&mut self) -> notify::Result<()> {
        self.files = self.input_files();
        let mut wanted = vec![(self.root.clone(), RecursiveMode::NonRecursive)];
        for d in self.dirs() {
            if d.is_dir() {
                wanted.push((d, RecursiveMode::Recursive));
            }
        }
        for f in &self.files {
            if let Some(parent) = f.parent().filter(|p| p.is_dir()) {
                let covered = wanted.iter().any(|(w, mode)| {
                    w == parent || (*mode == RecursiveMode::Recursive && parent.starts_with(w))
                });
                if !covered {
                    wanted.push((parent.to_path_buf(), RecursiveMode::NonRecursive));
                }
            }
        }
        // Folders that went away lose their watch with them.
        self.watched.retain(|p, _| p.is_dir());
        let mut result = Ok(());
        for (path, mode) in wanted {
            if self.watched.get(&path) == Some(&mode) {
                continue;
            }
            match self.watcher.watch(&path, mode) {
                Ok(()) => {
                    self.watched.insert(path, mode);
                }
                Err(e) => result = Err(e),
            }
        }
        result
    }

    /// Hashes every input from scratch.
    fn scan(&mut self) {
        self.digests.clear();
        let mut changed = Vec::new();
        for d in self.dirs() {
            self.refresh(&d, &mut changed);
        }
        for f in self.files.clone() {
            self.refresh(&f, &mut changed);
        }
    }

    /// Looks at `path` again (a file, or a folder and everything below it);
    /// adds to `changed` every input whose bytes changed, appeared or went
    /// away.
    fn refresh(&mut self, path: &Path, changed: &mut Vec<PathBuf>) {
        let mut seen = BTreeSet::new();
        if path.is_dir() {
            for entry in walkdir::WalkDir::new(path).into_iter().flatten() {
                if entry.file_type().is_file() && self.is_input(entry.path()) {
                    if self.refresh_file(entry.path()) {
                        changed.push(entry.path().to_path_buf());
                    }
                    seen.insert(entry.path().to_path_buf());
                }
            }
        } else if path.is_file() {
            if self.refresh_file(path) {
                changed.push(path.to_path_buf());
            }
            seen.insert(path.to_path_buf());
        }
        // Inputs at or below `path` that are no longer there: paths order
        // by component, so those below `path` come right after it.
        let gone: Vec<PathBuf> = self
            .digests
            .range::<Path, _>((std::ops::Bound::Included(path), std::ops::Bound::Unbounded))
            .map(|(k, _)| k)
            .take_while(|k| k.starts_with(path))
            .filter(|k| !seen.contains(*k))
            .cloned()
            .collect();
        for k in gone {
            self.digests.remove(&k);
            changed.push(k);
        }
    }

    fn refresh_file(&mut self, path: &Path) -> bool {
        let Ok(bytes) = crate::input::read_file(path) else {
            // Unreadable now: let the build say why.
            self.digests.remove(path);
            return true;
        };
        let digest: [u8; 32] = Sha256::digest(&bytes).into();
        self.digests.insert(path.to_path_buf(), digest) != Some(digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_save_ends_with_a_close_after_writing_or_a_rename_into_place() {
        use notify::event::{
            AccessKind, AccessMode, CreateKind, DataChange, ModifyKind, RenameMode,
        };
        use notify::{Event, EventKind};
        let close = EventKind::Access(AccessKind::Close(AccessMode::Write));
        let renamed = EventKind::Modify(ModifyKind::Name(RenameMode::To));
        let written = EventKind::Modify(ModifyKind::Data(DataChange::Content));
        assert!(completes(&close) && completes(&renamed));
        assert!(!completes(&written));
        assert!(!completes(&EventKind::Create(CreateKind::File)));
        assert!(!completes(&EventKind::Access(AccessKind::Close(
            AccessMode::Read
        ))));
        let mut batch = Batch::default();
        batch.add(Ok(Event::new(written)));
        assert!(!batch.settled, "a file being written");
        batch.add(Ok(Event::new(close)));
        assert!(batch.settled, "closed after writing");
        batch.add(Ok(Event::new(written)));
        assert!(!batch.settled, "written again after");
    }
}
