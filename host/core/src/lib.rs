//! Bardo's domain types, shared by every layer: typed errors, tool definitions (tiers,
//! categories, write plans), profiles, allowlist roles, secrets, the Event Fabric and its journal, and the one async
//! runtime the host runs its I/O on. No wasmtime and no RPC clients here.
#![deny(unsafe_code)]

pub mod action_class;
pub mod archetype;
pub mod config;
pub mod control;
pub mod error;
pub mod fabric;
pub mod journal;
pub mod names;
pub mod profile;
pub mod runtime;
pub mod schema_compat;
pub mod scope;
pub mod secret;
pub mod speculation;
pub mod suggest;
pub mod sync;
pub mod text;
pub mod tool;

pub use error::{ErrorCode, ToolError};
pub use runtime::Runtime;
