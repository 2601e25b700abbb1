//! SIGTERM and SIGHUP end the dashboard as `q` does: the loop sees [`Stop::requested`], returns,
//! and the terminal is restored (a `kill` left it in the alternate screen with the cursor hidden).
//! A terminal that hung up can leave crossterm's `poll` spinning on the dead tty without
//! returning; then a watchdog restores what it can and exits after a grace second, rather than
//! spin at full CPU with no terminal.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long the loop has to end by itself after a signal.
const GRACE: Duration = Duration::from_secs(1);

/// The signals that stop the dashboard, and whether it ended.
pub(crate) struct Stop {
    requested: Arc<AtomicBool>,
    hung_up: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
}

impl Stop {
    /// Catch SIGTERM and SIGHUP from now on, and watch that the loop ends after one.
    pub(crate) fn install() -> std::io::Result<Self> {
        let stop = Self {
            requested: Arc::new(AtomicBool::new(false)),
            hung_up: Arc::new(AtomicBool::new(false)),
            done: Arc::new(AtomicBool::new(false)),
        };
        signal_hook::flag::register(signal_hook::consts::SIGTERM, stop.requested.clone())?;
        signal_hook::flag::register(signal_hook::consts::SIGHUP, stop.requested.clone())?;
        signal_hook::flag::register(signal_hook::consts::SIGHUP, stop.hung_up.clone())?;
        let (requested, hung_up, done) = (stop.requested.clone(), stop.hung_up.clone(), stop.done.clone());
        std::thread::Builder::new().name("bardo-tui-signals".into()).spawn(move || {
            while !requested.load(Ordering::Relaxed) {
                if done.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let since = Instant::now();
            while since.elapsed() < GRACE {
                if done.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            ratatui::restore();
            // 128 + the signal, as a process the signal ended.
            std::process::exit(if hung_up.load(Ordering::Relaxed) { 129 } else { 143 });
        })?;
        Ok(stop)
    }

    /// A signal asked the dashboard to end.
    pub(crate) fn requested(&self) -> bool {
        self.requested.load(Ordering::Relaxed)
    }

    /// The loop ended and the terminal was restored: the watchdog stands down.
    pub(crate) fn finished(&self) {
        self.done.store(true, Ordering::Relaxed);
    }
}
