//! How long each template render has run, for a watchdog outside the
//! engine to see. Tera runs a template's loops and macro calls to their
//! end, however long that takes (30 nested loops over three languages
//! are 3^30 steps), and nothing inside a render can stop it: the command
//! line reads a [`Watch`] and ends a run whose render outlasts its time.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The renders running now: when each started, and what it renders.
#[derive(Debug, Default)]
pub struct Watch {
    running: Mutex<BTreeMap<u64, (Instant, String)>>,
    next: AtomicU64,
}

/// A render under watch: it leaves the watch when dropped.
pub struct Entered<'w> {
    watch: &'w Watch,
    id: u64,
}

impl Watch {
    /// Notes that the render of `what` (a page's source, a template's
    /// name) starts now.
    pub fn enter(&self, what: impl std::fmt::Display) -> Entered<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut running) = self.running.lock() {
            running.insert(id, (Instant::now(), what.to_string()));
        }
        Entered { watch: self, id }
    }

    /// The render running longest, and for how long.
    pub fn longest(&self) -> Option<(Duration, String)> {
        let running = self.running.lock().ok()?;
        running
            .values()
            .min_by_key(|(started, _)| *started)
            .map(|(started, what)| (started.elapsed(), what.clone()))
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        if let Ok(mut running) = self.watch.running.lock() {
            running.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_render_is_the_earliest_still_running() {
        let watch = Watch::default();
        assert!(watch.longest().is_none());
        let a = watch.enter("a.md");
        std::thread::sleep(Duration::from_millis(5));
        let b = watch.enter("b.md");
        let (took, what) = watch.longest().unwrap();
        assert_eq!(what, "a.md");
        assert!(took >= Duration::from_millis(5));
        drop(a);
        assert_eq!(watch.longest().unwrap().1, "b.md");
        drop(b);
        assert!(watch.longest().is_none());
    }
}
