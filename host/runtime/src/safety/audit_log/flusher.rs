//! Syncing records written without a sync ([`super::AuditLog::write_all`]): a thread that makes
//! them durable as soon as they are written, and a barrier ([`Flusher::sync`]) for whatever
//! must not happen before they are (a permit published, a commit).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

#[derive(Debug, Default)]
pub(super) struct State {
    /// Deferred writes made so far.
    pub(super) written: u64,
    /// How many of them a finished sync covers.
    pub(super) synced: u64,
    /// The last sync's failure (cleared by the next that succeeds).
    failed: Option<String>,
    started: bool,
    stop: bool,
}

/// One log's syncing thread and its counters.
#[derive(Debug, Default)]
pub(super) struct Flusher {
    pub(super) state: Mutex<State>,
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

    /// Wait until every write counted so far is on disk; the sync's error if it failed.
    pub(super) fn sync(&self) -> Result<(), String> {
        let mut state = self.lock();
        let target = state.written;
        let mut retried = false;
        while state.synced < target {
            if let Some(e) = state.failed.take() {
                if retried {
                    state.failed = Some(e.clone());
                    return Err(e);
                }
                // The failure may be a past one: the thread tries once more for this barrier.
                retried = true;
                self.changed.notify_all();
            }
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
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
                let target = state.written;
                drop(state);
                // Syncing any descriptor of the file flushes every write to it, this process's
                // or another's; a fresh one stays right when the appender reopens the log.
                let result = std::fs::File::open(path).and_then(|f| f.sync_data());
                state = self.lock();
                match result {
                    Ok(()) => (state.synced, state.failed) = (target, None),
                    Err(e) => state.failed = Some(format!("{}: sync failed: {e}", path.display())),
                }
                self.changed.notify_all();
                if state.failed.is_some() {
                    if state.stop {
                        return;
                    }
                    // Retried on the next write or barrier, not in a loop against a failing disk.
                    state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
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
