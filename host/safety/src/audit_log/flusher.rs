//! Syncing records written without a sync ([`super::AuditLog::write_all`]): a thread that makes
//! them durable as soon as they are written, so that a crash loses at most the last moment's.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

#[derive(Debug, Default)]
struct State {
    /// Deferred writes made so far.
    written: u64,
    /// How many of them a finished sync covers.
    synced: u64,
    started: bool,
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
        self.changed.notify_all();
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
                        state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
                    }
                }
                continue;
            }
            if state.stop {
                return;
            }
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }
}
