//! Bardo's agent-facing tools: the eight tools an agent (in process, over MCP, over A2A) uses —
//! preview, commit and cancel an action, query state, search the operator's context, query
//! the grimoire, update a directive, halt — over one runtime host and its write path, and the
//! speculation engine that prefetches the reads that usually follow a read.
#![deny(unsafe_code)]

pub mod adapter;
pub mod config;
pub mod setup;
pub mod speculation;

pub use adapter::Adapter;
pub use config::AgentConfig;
