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

/// Set on an HTTP request by the host's access rules when it carries the operator's token (not
/// an agent's): the A2A door lets only such a request confirm a permit the confirmation policy
/// holds for a person.
#[derive(Debug, Clone, Copy)]
pub struct OperatorCredential;
pub use config::AgentConfig;
