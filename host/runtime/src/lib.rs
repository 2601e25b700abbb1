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
