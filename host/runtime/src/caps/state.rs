//! Per-call store data: limits, the call context the imports see, and a lazily built WASI
//! context (most calls never touch WASI, so they never pay for building one).

use super::view::{CallCtx, CapsCtxView, CapsView};
use crate::engine::{Limited, MemoryLimiter};
use crate::services::Services;
use bardo_core::sync::lock;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use wasmtime::component::{HasData, Linker, Resource, ResourceTable};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::DynPollable;
use wasmtime_wasi::p2::bindings::sync::io::poll;
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

/// What the operator granted beyond the minimal WASI set.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WasiPolicy {
    /// Granted WASI packages or interfaces, e.g. `wasi:clocks/wall-clock`.
    pub grant: Vec<String>,
    /// Host directories visible (read-only) when `wasi:filesystem` is granted.
    pub preopens: Vec<Preopen>,
}

/// A host directory mapped into plugins.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preopen {
    /// The directory on the host.
    pub host: PathBuf,
    /// Where the plugin sees it.
    pub guest: String,
}

impl WasiPolicy {
    fn build(&self, output: &OutputCapture) -> WasiCtx {
        let mut b = WasiCtxBuilder::new();
        b.stdout(output.clone()).stderr(output.clone());
        if self.grant.iter().any(|g| g.starts_with("wasi:filesystem")) {
            for p in &self.preopens {
                let added = b.preopened_dir(&p.host, &p.guest, wasmtime_wasi::FsPerms::ReadOnly);
                if let Err(e) = added {
                    tracing::warn!(host = %p.host.display(), "cannot preopen for plugins: {e:#}");
                }
            }
        }
        if self.grant.iter().any(|g| g.starts_with("wasi:sockets")) {
            b.inherit_network();
        }
        b.build()
    }
}

/// The store data of one call.
pub(crate) struct CallState {
    pub limiter: MemoryLimiter,
    pub services: Arc<Services>,
    pub call: CallCtx,
    pub output: OutputCapture,
    wasi_policy: Arc<WasiPolicy>,
    wasi: Option<WasiCtx>,
    table: ResourceTable,
}

impl CallState {
    pub(crate) fn new(services: Arc<Services>, call: CallCtx, wasi_policy: Arc<WasiPolicy>) -> Self {
        Self {
            limiter: MemoryLimiter::default(),
            services,
            call,
            output: OutputCapture::default(),
            wasi_policy,
            wasi: None,
            table: ResourceTable::new(),
        }
    }
}

/// `bardo:host/types` has no functions; the linker still wants the trait.
impl crate::bindings::bardo::host::types::Host for CallState {}

impl Limited for CallState {
    fn limiter(&mut self) -> &mut MemoryLimiter {
        &mut self.limiter
    }
}

impl CapsView for CallState {
    fn caps(&mut self) -> CapsCtxView<'_> {
        let services = &*self.services;
        CapsCtxView {
            evm: &services.evm,
            settings: &services.settings,
            uniswap_sdk: services.uniswap_sdk.as_deref(),
            memory: services.memory.as_ref(),
            call: &mut self.call,
        }
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let (policy, output) = (&self.wasi_policy, &self.output);
        let ctx = self.wasi.get_or_insert_with(|| policy.build(output));
        WasiCtxView { ctx, table: &mut self.table }
    }
}

/// Bytes a call may write to stdout + stderr; the rest is counted, not kept.
const OUTPUT_CAP: usize = 8 << 10;

/// The guest's stdout and stderr, kept (bounded) for the host log and for panic messages.
#[derive(Clone, Default)]
pub(crate) struct OutputCapture(Arc<Mutex<Vec<u8>>>);

impl OutputCapture {
    /// Whether the guest printed anything.
    pub(crate) fn is_empty(&self) -> bool {
        lock(&self.0).is_empty()
    }

    /// What the guest printed, lossily decoded.
    pub(crate) fn text(&self) -> String {
        let buf = lock(&self.0);
        String::from_utf8_lossy(&buf).into_owned()
    }

    /// The panic message, if the guest printed one (Rust's `panicked at ...:\nmessage`).
    pub(crate) fn panic_message(&self) -> Option<String> {
        let text = self.text();
        let at = text.find("panicked at")?;
        let rest = &text[at..];
        let message = rest.lines().nth(1).unwrap_or(rest.lines().next().unwrap_or(""));
        Some(message.trim().to_owned())
    }
}

impl IsTerminal for OutputCapture {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for OutputCapture {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(tokio::io::sink())
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for OutputCapture {
    fn write(&mut self, bytes: bytes::Bytes) -> Result<(), StreamError> {
        let mut buf = lock(&self.0);
        let room = OUTPUT_CAP.saturating_sub(buf.len());
        buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
        Ok(())
    }
    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }
    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(64 << 10)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for OutputCapture {
    async fn ready(&mut self) {}
}

/// `wasi:io/poll` over the call's resource table, in place of wasmtime-wasi's own: a poll
/// waits (a sleep, a socket), so an inline attempt gives up there instead of blocking the
/// thread it must not block (see [`super::view::InlineAttempt`]); any other call polls as usual.
pub(crate) fn shadow_wasi_poll(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let added = poll::add_to_linker::<CallState, HasPoll>(linker, |t| PollView {
        table: &mut t.table,
        call: &mut t.call,
    });
    linker.allow_shadowing(false);
    added
}

struct PollView<'a> {
    table: &'a mut ResourceTable,
    call: &'a mut CallCtx,
}

struct HasPoll;
impl HasData for HasPoll {
    type Data<'a> = PollView<'a>;
}

impl PollView<'_> {
    fn may_wait(&mut self) -> wasmtime::Result<()> {
        if self.call.may_block() {
            Ok(())
        } else {
            Err(wasmtime::format_err!("a poll waits; the call is run again on a thread that may wait"))
        }
    }
}

impl poll::Host for PollView<'_> {
    fn poll(&mut self, pollables: Vec<Resource<DynPollable>>) -> wasmtime::Result<Vec<u32>> {
        self.may_wait()?;
        poll::Host::poll(&mut *self.table, pollables)
    }
}

impl poll::HostPollable for PollView<'_> {
    fn ready(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<bool> {
        poll::HostPollable::ready(&mut *self.table, pollable)
    }

    fn block(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<()> {
        self.may_wait()?;
        poll::HostPollable::block(&mut *self.table, pollable)
    }

    fn drop(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<()> {
        poll::HostPollable::drop(&mut *self.table, pollable)
    }
}
