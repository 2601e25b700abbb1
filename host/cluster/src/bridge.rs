//! Blocking calls into async-nats: a private one-thread runtime runs each future; the caller
//! waits on a channel, so it may itself be on any runtime's thread (the NATS I/O never needs it).

use std::future::Future;
use std::time::Duration;

pub(crate) struct Bridge {
    runtime: Option<tokio::runtime::Runtime>,
}

/// The deadline passed.
pub(crate) struct Elapsed;

impl Bridge {
    pub(crate) fn new() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("bardo-nats")
            .enable_all()
            .build()?;
        Ok(Self { runtime: Some(runtime) })
    }

    /// Run `fut` in the background on the private runtime (None once it is shut down).
    pub(crate) fn spawn(
        &self,
        fut: impl Future<Output = ()> + Send + 'static,
    ) -> Option<tokio::task::JoinHandle<()>> {
        self.runtime.as_ref().map(|r| r.spawn(fut))
    }

    /// Drive `fut` on this thread (not an async one) until it ends or `deadline` passes; for
    /// futures borrowing the caller's state.
    pub(crate) fn wait<F: Future>(&self, deadline: Duration, fut: F) -> Result<F::Output, Elapsed> {
        let Some(runtime) = &self.runtime else { return Err(Elapsed) };
        runtime.handle().block_on(async { tokio::time::timeout(deadline, fut).await }).map_err(|_| Elapsed)
    }

    /// Run `fut` to its end or until `deadline` passes.
    pub(crate) fn run<R: Send + 'static>(
        &self,
        deadline: Duration,
        fut: impl Future<Output = R> + Send + 'static,
    ) -> Result<R, Elapsed> {
        let Some(runtime) = &self.runtime else { return Err(Elapsed) };
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        runtime.spawn(async move {
            let _ = tx.send(tokio::time::timeout(deadline, fut).await);
        });
        match rx.recv() {
            Ok(Ok(out)) => Ok(out),
            _ => Err(Elapsed),
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which panics on an async thread; this does not.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
