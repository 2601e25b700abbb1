//! Syncing records written without a sync ([`super::AuditLog::write_all`]): a thread that makes
//! them durable within [`GATHER`] of being written, so that a crash loses at most the last
//! moment's — and never a record a commit depends on: the write path syncs the log itself
//! before it executes a permit.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

/// How long the thread lets writes gather before one sync covers them all. A sync per write
/// made a burst of previews flush the disk once each (~200 µs of I/O apiece on this VM, whose
/// interrupts and thread cost the previews a fifth of their time: 375 against 290 µs with the
/// log on tmpfs); gathered, a burst costs one.
pub(super) const GATHER: Duration = Duration::from_millis(5);

#[derive(Debug, Default)]
struct State {
    /// Deferred writes made so far.
    written: u64,
    /// How many of them a finished sync covers.
    synced: u64,
    started: bool,
    /// The thread waits for a write (a write wakes it only then).
    idle: bool,
    stop: bool,
}

/// One log's syncing thread and its counters.
#[derive(Debug, Default)]
pub(super) struct Flusher {
    state: Mutex<State>,
    changed: Condvar,
}

impl Flusher {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Count a write made without a sync and have it synced now, starting the thread on first use.
    pub(super) fn written(self: &Arc<Self>, path: &Path) -> std::io::Result<()> {
        let mut state = self.lock();
        state.written += 1;
        if !state.started {
            let (me, path) = (self.clone(), path.to_owned());
            std::thread::Builder::new().name("bardo-audit-sync".into()).spawn(move || me.run(&path))?;
            state.started = true;
        }
        if state.idle {
            self.changed.notify_all();
        }
        Ok(())
    }

    /// Stop the thread once what was written is synced.
    pub(super) fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }

    fn run(&self, path: &PathBuf) {
        let mut state = self.lock();
        loop {
            if state.synced < state.written {
                if !state.stop {
                    // Let the writes of a burst gather (a stop syncs at once).
                    state =
                        self.changed.wait_timeout(state, GATHER).unwrap_or_else(PoisonError::into_inner).0;
                }
                let target = state.written;
                drop(state);
                // Syncing any descriptor of the file flushes every write to it, this process's
                // or another's; a fresh one stays right when the appender reopens the log.
                let result = std::fs::File::open(path).and_then(|f| f.sync_data());
                state = self.lock();
                match result {
                    Ok(()) => state.synced = target,
                    // Retried on the next write, not in a loop against a failing disk; the write
                    // path's own sync before a commit reports it.
                    Err(e) => {
                        tracing::warn!("audit log {}: sync failed: {e}", path.display());
                        if state.stop {
                            return;
                        }
                        state = self.wait(state);
                    }
                }
                continue;
            }
            if state.stop {
                return;
            }
            state = self.wait(state);
        }
    }

    /// Wait, idle, for the next write (or the stop).
    fn wait<'a>(&self, mut state: std::sync::MutexGuard<'a, State>) -> std::sync::MutexGuard<'a, State> {
        state.idle = true;
        let mut state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        state.idle = false;
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn synced_within(flusher: &Flusher, count: u64, within: Duration) {
        let until = Instant::now() + within;
        while flusher.lock().synced < count {
            assert!(Instant::now() < until, "{:?} not synced within {within:?}", flusher.lock());
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_burst_is_synced_within_the_window_and_a_write_after_it_wakes_the_thread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.jsonl");
        std::fs::write(&path, b"{}\n").expect("log");
        let flusher = Arc::new(Flusher::default());
        for _ in 0..10 {
            flusher.written(&path).expect("written");
        }
        synced_within(&flusher, 10, GATHER * 40);
        // Idle now: the next write wakes it.
        flusher.written(&path).expect("written");
        synced_within(&flusher, 11, GATHER * 40);
        // A stop syncs what was written without waiting out the window.
        flusher.written(&path).expect("written");
        flusher.stop();
        synced_within(&flusher, 12, GATHER * 40);
    }
}
