//! The host side of the `bardo:host` imports: one module per WIT interface (state, a view,
//! `impl Host for View`, `add_to_linker`) over the shared [`Services`], plus the conversions
//! between WIT and host types. Nothing outside this module and `plugin` sees binding types.

pub mod chain;
pub mod config;
pub(crate) mod convert;
pub mod events;
pub mod signer;
pub mod simulate;

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
    Ok(())
}
