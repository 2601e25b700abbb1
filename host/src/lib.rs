//! Bardo host: runs DeFi tool plugins (WebAssembly components) under uniform limits.
//!
//! Re-exports only; see each module.
#![deny(unsafe_code)]

pub mod adapter;
pub mod audit;
mod bindings;
pub mod caps;
pub mod chain;
pub mod config;
pub mod devnet;
pub mod engine;
pub mod error;
pub mod fabric;
pub mod journal;
pub mod live;
pub mod plugin;
pub mod profile;
pub mod safety;
pub mod setup;
pub mod signer;
pub mod simulate;
pub mod stream;
pub mod tool;

pub use config::Config;
pub use engine::{Engine, Limits};
pub use error::{ErrorCode, ToolError};
pub use plugin::{CallReport, CallStats, Host, LoadError};
pub use profile::Profile;
