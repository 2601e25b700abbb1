//! Integration tests of the runtime against real guest components (built by tests/artifacts),
//! a real devnet (anvil with the published contracts), a real OCI registry and real NATS.

mod audit;
mod bootstrap;
mod catalog;
mod chain;
mod hostile;
mod inline;
mod intelligence;
mod loading;
mod lp_reads;
mod params;
mod registry;
mod safety_plugin;
mod schema_versions;
mod sidecar;
mod simulate;
mod streaming;
mod testnet;
mod uniswap;
mod uniswap_v4;

pub use bardo_test_support::{engine, host, host_runtime, host_with, no_services};
