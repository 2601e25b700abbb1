//! Integration tests of the agent-facing tools and the speculation engine on a real devnet.

mod adapter;
mod speculation;

pub use bardo_test_support::{engine, host, host_runtime, host_with, no_services};
