//! Bardo's write path. A plugin only plans; here a plan is checked by the hook chain, simulated,
//! turned into a single-use permit, and — at commit, after a fresh simulation matches — executed
//! through a [`Capability`](write_path::capability::Capability) that only this crate can mint
//! and only its broadcast consumes.
//!
//! It reaches the plugins through one narrow interface, [`Planner`] (which write tool serves a
//! kind, a plan, a reading of the receipts), implemented by the runtime's `Host`; and it runs
//! every preview and commit on one [`Generation`]: the planner, the services it reads through and
//! the hooks they feed, swapped as a whole on a reload.
#![deny(unsafe_code)]

pub mod audit_log;
pub mod cage;
pub mod config;
pub mod confirm;
pub mod declared;
mod episodes;
mod evidence;
#[doc(hidden)]
pub mod failpoint;
pub mod generation;
pub mod hooks;
pub mod host_key;
pub mod morpho;
pub mod permit;
pub mod planner;
mod pools;
pub mod records;
pub mod scope;
pub mod setup;
mod store;
pub mod valuation;
mod write_path;

/// Internals the fuzz targets reach (not API).
#[doc(hidden)]
pub mod fuzzing {
    /// How many on-chain bounds a call to a contract of `role` carries (swaps' and deliveries'
    /// amounts, liquidity changes), or why its calldata does not decode.
    pub fn call_bounds(role: bardo_core::scope::Role, data: &[u8]) -> Result<usize, String> {
        crate::hooks::on_chain_bounds::count(role, data)
    }
}

pub use config::SafetyConfig;
pub use generation::Generation;
pub use planner::{Planner, PluginId};
pub use write_path::capability;
pub use write_path::{
    Approved, Clock, DEFAULT_TTL, MAX_PLAN_BYTES, MAX_PLAN_CALLS, Pending, Recovery, WritePath, WriteResult,
    sends,
};
