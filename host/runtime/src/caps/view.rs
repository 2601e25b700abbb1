//! What every import module sees of a call: the host's per-capability contexts and the call
//! itself, borrowed together through [`CapsView`] (as wasmtime-wasi's `WasiView` lends a
//! `WasiCtxView`).

use crate::services::{Settings, UniswapSdk};
use bardo_core::control::CallControl;
use bardo_evm::Evm;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

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
    pub control: Option<(Arc<CallControl>, Vec<String>)>,
    /// Set when the call runs on a thread that must not block (see [`InlineAttempt`]).
    pub inline: Option<InlineAttempt>,
    /// The operator-granted interfaces (see [`super::Grant::Operator`]) decided for this
    /// plugin when it was loaded; an import checks it, it does not decide it again.
    pub granted: Arc<BTreeSet<&'static str>>,
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
    /// A chain failure as the plugin's error: a timeout once this call's own time budget has
    /// run out is the plugin's limit (`limit-exceeded`, naming the budget), not the node's
    /// failure — retrying the same reads would run out the same way.
    pub(crate) fn chain_error(&self, e: bardo_evm::ChainError) -> bardo_core::error::ToolError {
        use bardo_core::error::{ErrorCode, ToolError};
        let budget = self.deadline.saturating_duration_since(self.started).as_millis();
        // A read that itself waited most of the budget met a slow node; one cut short because
        // the budget was already (nearly) spent met the plugin's own limit.
        let spent = matches!(e, bardo_evm::ChainError::Timeout { waited_ms, .. } if u128::from(waited_ms) * 2 < budget);
        if spent && Instant::now() >= self.deadline {
            return ToolError::new(
                ErrorCode::LimitExceeded,
                format!(
                    "plugin `{}` tool `{}` spent its whole {budget} ms time budget waiting on chain reads and simulations; ask for less at once (a narrower range, fewer pools) — the node did not fail",
                    self.plugin, self.tool
                ),
            );
        }
        e.into()
    }

    /// Move the deadline by `waited`, time the host spent that is not the plugin's (the
    /// sidecar's start). The epoch check reads the same deadline (see `instances::store`), so
    /// the plugin's own code gets the time back too.
    pub(crate) fn extend(&mut self, waited: std::time::Duration) {
        self.deadline += waited;
    }

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
    super::convert::wit_error(bardo_core::error::ToolError::retryable(
        bardo_core::error::ErrorCode::Timeout,
        "this import waits; the call is run again on a thread that may wait",
    ))
}

/// The host's contexts, one per capability, and the current call, borrowed together.
pub struct CapsCtxView<'a> {
    /// `chain`, `simulate`, `signer`, `testnet`: chains, fork simulator and wallet.
    pub evm: &'a Evm,
    /// `config`: every plugin's settings (an import answers only the caller's).
    pub settings: &'a Settings,
    /// `uniswap-sdk`: the sidecar and the Uniswap books, if the host runs one.
    pub uniswap_sdk: Option<&'a UniswapSdk>,
    /// `memory`: the agent's memory, if the host keeps one.
    pub memory: Option<&'a bardo_memory::Memory>,
    /// The call being served.
    pub call: &'a mut CallCtx,
}

/// Store data that lends the host's contexts and the call context.
pub trait CapsView: Send + 'static {
    /// The contexts and the current call, borrowed together.
    fn caps(&mut self) -> CapsCtxView<'_>;
}
