//! What a caller can do to a call in flight: watch the progress steps it reports as they
//! happen, and cancel it (an MCP client's `notifications/cancelled`). A cancel stops the
//! instance at its next epoch tick, like a deadline; an import waiting on RPC is not
//! interrupted (its wait is bounded by the call's deadline), the tick after it returns is.

use std::sync::atomic::{AtomicBool, Ordering};

/// One progress step a running tool reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// The step's index in the tool's `progress_steps`.
    pub step: u32,
    /// How many steps the tool declares (0 if none).
    pub total: u32,
    /// The step's name from the ToolDef (`step N` if it declares none).
    pub name: String,
    /// Time since the call started, microseconds.
    pub elapsed_us: u64,
}

/// A progress observer.
type OnProgress = Box<dyn Fn(&Progress) + Send + Sync>;

/// A caller's handle on one call: progress observer and cancel flag.
#[derive(Default)]
pub struct CallControl {
    cancelled: AtomicBool,
    on_progress: Option<OnProgress>,
}

impl std::fmt::Debug for CallControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallControl")
            .field("cancelled", &self.is_cancelled())
            .field("observed", &self.on_progress.is_some())
            .finish()
    }
}

impl CallControl {
    /// A control that observes nothing and is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Call `f` for each progress step, on the call's thread, as it is reported (keep it quick).
    pub fn on_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Box::new(f));
        self
    }

    /// Ask the call to stop (from any thread); it ends with `ErrorCode::Cancelled`.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    /// Whether [`Self::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Report step `step` of a tool declaring `steps`.
    pub fn progress(&self, steps: &[String], step: u32, elapsed_us: u64) {
        if let Some(f) = &self.on_progress {
            let name = steps.get(step as usize).cloned().unwrap_or_else(|| format!("step {step}"));
            f(&Progress { step, total: steps.len() as u32, name, elapsed_us });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn steps_are_named_from_the_tool_or_by_number_and_cancel_sticks() {
        let heard: Arc<Mutex<Vec<Progress>>> = Arc::default();
        let sink = heard.clone();
        let control = CallControl::new().on_progress(move |p| sink.lock().expect("sink").push(p.clone()));
        let steps = ["fetch".to_owned(), "price".to_owned()];
        control.progress(&steps, 1, 7);
        control.progress(&steps, 5, 9);
        let heard = heard.lock().expect("sink").clone();
        assert_eq!(
            heard,
            [
                Progress { step: 1, total: 2, name: "price".into(), elapsed_us: 7 },
                Progress { step: 5, total: 2, name: "step 5".into(), elapsed_us: 9 },
            ]
        );
        assert!(!control.is_cancelled());
        control.cancel();
        assert!(control.is_cancelled());
        // A control nobody watches takes progress reports and does nothing.
        CallControl::default().progress(&steps, 0, 0);
    }
}
