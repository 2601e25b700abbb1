//! The host's one async runtime. Chain reads, simulations' state fetches, stream tasks, registry
//! transfers and broadcasts all run on it; whoever needs it is handed a clone.

use std::future::Future;
use std::sync::Arc;

/// A shared multi-threaded tokio runtime. Cheap to clone; the last clone shuts it down.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Owned>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").finish_non_exhaustive()
    }
}

/// Owns the tokio runtime so that dropping the last clone is safe anywhere.
struct Owned(Option<tokio::runtime::Runtime>);

impl Drop for Owned {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            // The last clone may go with a task (a stream's, holding the host) on a worker
            // thread, where a blocking shutdown would panic.
            if tokio::runtime::Handle::try_current().is_ok() {
                rt.shutdown_background();
            } else {
                drop(rt);
            }
        }
    }
}

impl Runtime {
    /// A runtime with two worker threads named `bardo-io`, timers and I/O enabled.
    pub fn new() -> std::io::Result<Self> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("bardo-io")
            .enable_all()
            .build()?;
        Ok(Self { inner: Arc::new(Owned(Some(rt))) })
    }

    /// Its handle (spawn tasks, or adapt sync code such as the fork database).
    pub fn handle(&self) -> &tokio::runtime::Handle {
        match &self.inner.0 {
            Some(rt) => rt.handle(),
            None => unreachable!("the runtime is only taken out when the last clone drops"),
        }
    }

    /// Spawn `future` as a task.
    pub fn spawn<F>(&self, future: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle().spawn(future)
    }

    /// Run `future` to completion from synchronous code (a plugin call's thread, the CLI).
    /// Panics inside an async context; use [`Runtime::block_on_anywhere`] there.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.handle().block_on(future)
    }

    /// Run `future` to completion from sync code or from inside an async context (then on a
    /// scoped thread, so no worker of any runtime is blocked by a nested `block_on`).
    pub fn block_on_anywhere<F>(&self, future: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        if tokio::runtime::Handle::try_current().is_err() {
            return self.block_on(future);
        }
        std::thread::scope(|s| {
            s.spawn(|| self.block_on(future)).join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Runtime;

    #[test]
    fn blocks_from_sync_code_and_from_inside_a_task() {
        let rt = Runtime::new().expect("runtime");
        assert_eq!(rt.block_on(async { 1 + 1 }), 2);
        let inner = rt.clone();
        let nested = rt.block_on(async move { inner.block_on_anywhere(async { 40 + 2 }) });
        assert_eq!(nested, 42);
    }

    #[test]
    fn the_last_clone_may_drop_on_a_worker_thread() {
        let rt = Runtime::new().expect("runtime");
        let held = rt.clone();
        let (go, wait) = tokio::sync::oneshot::channel::<()>();
        let (done, finished) = std::sync::mpsc::channel();
        rt.spawn(async move {
            let _ = wait.await;
            drop(held);
            let _ = done.send(());
        });
        drop(rt);
        let _ = go.send(());
        finished
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("the task dropped the last clone on a worker thread without panicking");
    }
}
