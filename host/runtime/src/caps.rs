//! The host side of the `bardo:host` imports: one module per WIT interface (state, a view,
//! `impl Host for View`, `add_to_linker`) over the shared [`Services`], plus the conversions
//! between WIT and host types. Nothing outside this module and `plugin` sees binding types.

pub mod chain;
pub mod config;
pub(crate) mod convert;
pub mod events;
pub mod signer;
pub mod simulate;
pub mod testnet;
pub mod uniswap_sdk;

use crate::services::Services;
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::Linker;

/// What the imports know about the call they serve.
#[derive(Debug)]
pub struct CallCtx {
    /// Plugin name.
    pub plugin: Arc<str>,
    /// Tool being called.
    pub tool: String,
    /// When the call started.
    pub started: Instant,
    /// When its tick budget runs out; imports that wait (RPC) must not wait past it.
    pub deadline: Instant,
    /// Progress, domain events and log lines the call produced.
    pub events: bardo_core::tool::CallEvents,
    /// The caller's control and the tool's progress step names, when a caller watches.
    pub control: Option<(Arc<crate::plugin::CallControl>, Vec<String>)>,
    /// Set when the call runs on a thread that must not block (see [`InlineAttempt`]).
    pub inline: Option<InlineAttempt>,
}

/// A call tried on a thread that must not block: an MCP session's protocol thread, which also
/// reads the client's cancellations. Rather than wait (RPC, a simulation, a WASI poll) or run
/// past its slice, the attempt gives up; the caller then runs the call again, in a fresh
/// instance, on a thread that may block. What the attempt reported is held until it is known
/// to stand, so an attempt given up leaves no trace.
#[derive(Debug, Default)]
pub struct InlineAttempt {
    /// The attempt met something that would block, or ran past its slice.
    pub gave_up: bool,
    /// Progress steps reported (step, elapsed µs), told to the caller when the attempt stands.
    pub progress: Vec<(u32, u64)>,
}

impl CallCtx {
    /// Whether an import may wait now. An inline attempt may not: it is marked given up, and
    /// the import answers with [`would_block`] (the answer is discarded with the attempt).
    pub(crate) fn may_block(&mut self) -> bool {
        match &mut self.inline {
            Some(attempt) => {
                attempt.gave_up = true;
                false
            }
            None => true,
        }
    }
}

/// What an import answers an inline attempt instead of waiting (never seen by a caller: the
/// attempt is discarded and the call runs again where it may wait).
pub(crate) fn would_block() -> crate::bindings::WitError {
    convert::wit_error(bardo_core::error::ToolError::retryable(
        bardo_core::error::ErrorCode::Timeout,
        "this import waits; the call is run again on a thread that may wait",
    ))
}

/// Store data that exposes the shared services and the call context.
pub trait CapsView: Send + 'static {
    /// The shared services and the current call, borrowed together.
    fn parts(&mut self) -> (&Services, &mut CallCtx);
}

/// Define every `bardo:host` import in `linker`.
pub(crate) fn add_to_linker<T: CapsView + crate::bindings::bardo::host::types::Host>(
    linker: &mut Linker<T>,
) -> wasmtime::Result<()> {
    crate::bindings::bardo::host::types::add_to_linker::<T, wasmtime::component::HasSelf<T>>(linker, |t| t)?;
    chain::add_to_linker(linker)?;
    simulate::add_to_linker(linker)?;
    signer::add_to_linker(linker)?;
    events::add_to_linker(linker)?;
    config::add_to_linker(linker)?;
    uniswap_sdk::add_to_linker(linker)?;
    testnet::add_to_linker(linker)?;
    Ok(())
}
