//! Bardo's runtime: runs DeFi tool plugins (WebAssembly components) under uniform limits and
//! owns every write. Engine and limits, the host imports (`caps`, one module per WIT
//! interface), plugins and their distribution, the surface audit, the safety chain, stream
//! subscriptions and the agent adapter. Domain types come from `bardo-core`, chain access and
//! simulation from `bardo-evm`.
#![deny(unsafe_code)]

pub mod adapter;
mod bindings;
pub mod caps;
pub mod config;
pub mod distribution;
pub mod engine;
pub mod fleet_events;
pub mod live;
pub mod plugin;
pub mod safety;
pub mod services;
pub mod setup;
pub mod speculation;
pub mod subscriptions;
pub mod surface_audit;

pub use config::Config;
pub use engine::{Engine, Limits};
pub use plugin::{CallReport, CallStats, Host, LoadError};
pub use services::Services;
