//! Bardo's runtime: runs DeFi tool plugins (WebAssembly components) under uniform limits.
//! Engine and limits, the host imports (`caps`, one module per WIT interface, declared once in
//! `caps::CAPABILITIES`), plugins and their distribution, the surface audit, stream
//! subscriptions and hot reload. Domain types come from `bardo-core`, chain access and
//! simulation from `bardo-evm`. Writes are not executed here: a write tool's plan goes to the
//! write path (`bardo-safety`), which reaches the plugins through its `Planner` interface.
#![deny(unsafe_code)]

mod bindings;
pub mod caps;
pub mod config;
pub mod distribution;
pub mod engine;
pub mod fleet_events;
pub mod fleet_memory;
pub mod live;
pub mod plugin;
pub mod services;
pub mod setup;
pub mod subscriptions;
pub mod surface_audit;
pub mod world;

pub use config::Config;

/// The tracing target of progress a person waits on (a plugin's first compile): front ends show
/// it plainly, whatever their log filter.
pub const PROGRESS: &str = "bardo::progress";
pub use engine::{Engine, Limits};
pub use plugin::{CallReport, CallStats, Host, LoadError};
pub use services::Services;

/// The plan conversion at the WIT boundary, for the fuzz targets (`fuzz/`): not an API.
#[doc(hidden)]
pub mod fuzzing {
    use crate::bindings::bardo::plugin::types as wit;

    /// One planned call as a plugin returns it: chain, `to`, `value`, call data, description.
    pub type Call = (u64, String, String, Vec<u8>, String);

    /// What the host makes of a plan a plugin returned: its size as `[limits] plan_max_bytes`
    /// counts it, and the host's plan or why it is unusable.
    pub fn plan(
        calls: Vec<Call>,
        expected_outcome_json: String,
    ) -> (usize, Result<bardo_core::tool::WritePlan, String>) {
        let calls = calls
            .into_iter()
            .map(|(chain_id, to, value, data, description)| wit::PlannedCall {
                call: wit::TxCall { chain_id, to, value, data },
                description,
            })
            .collect();
        let plan = wit::WritePlan { calls, expected_outcome_json };
        (crate::caps::convert::plan_size(&plan), crate::caps::convert::write_plan(plan))
    }
}
