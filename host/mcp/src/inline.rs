//! Tool calls run on a stdio session's own thread, between turns of its protocol runtime, so a
//! call that only computes needs no hop to another thread (each hop wakes a thread: tens of
//! microseconds on this kind of machine, more than the call itself).
//!
//! A handler hands its call to the [`Inline`] slot and awaits the answer; [`drive`] leaves the
//! runtime, runs the call, and enters the runtime again. Leaving matters: WASI's sync imports
//! enter a runtime of their own, which they cannot from inside one. The call is an inline
//! attempt ([`bardo_runtime::plugin::Host::try_call_inline`]): it gives up rather than wait on
//! the chain or run past its slice, so the session reads its client — a cancellation among
//! others — within milliseconds, and the handler then runs the call on a blocking thread.

use bardo_core::sync::lock;
use std::future::Future;
use std::sync::Mutex;

type Job = Box<dyn FnOnce() + Send>;

/// One session thread's slot for a call to run on it.
#[derive(Default)]
pub(crate) struct Inline {
    job: Mutex<Option<Job>>,
    ready: tokio::sync::Notify,
}

impl Inline {
    /// Run `f` on the session thread, outside its runtime. `None` when another call holds the
    /// slot (the caller runs `f`'s work elsewhere) or the session ended first.
    pub(crate) async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        {
            let mut slot = lock(&self.job);
            if slot.is_some() {
                return None;
            }
            *slot = Some(Box::new(move || {
                let _ = tx.send(f());
            }));
        }
        self.ready.notify_one();
        rx.await.ok()
    }

    fn take(&self) -> Option<Job> {
        lock(&self.job).take()
    }
}

/// Run `session` on `runtime`, stepping out of it whenever a call waits in `inline`.
pub(crate) fn drive<F: Future>(runtime: &tokio::runtime::Runtime, inline: &Inline, session: F) -> F::Output {
    let mut session = std::pin::pin!(session);
    loop {
        let turn = runtime.block_on(async {
            tokio::select! {
                biased;
                out = &mut session => Some(out),
                () = inline.ready.notified() => None,
            }
        });
        match turn {
            Some(out) => return out,
            None => {
                if let Some(job) = inline.take() {
                    job();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn calls_run_on_the_session_thread_outside_its_runtime_one_at_a_time() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let inline = Arc::new(Inline::default());
        let session_thread = std::thread::current().id();
        let slot = inline.clone();
        let (first, second) = drive(&runtime, &inline, async move {
            let a = slot.run(move || {
                // Outside the runtime: a sync import may enter one of its own.
                (std::thread::current().id(), tokio::runtime::Handle::try_current().is_err())
            });
            let b = slot.run(|| ());
            tokio::join!(a, b)
        });
        assert_eq!(first, Some((session_thread, true)));
        // The second call found the slot taken: its caller runs it elsewhere.
        assert_eq!(second, None);
    }
}
