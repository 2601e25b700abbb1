//! Integration tests of the write path on a real devnet (anvil with the published contracts),
//! with real plugins planning, real NATS for a fleet, and the attacks a hostile plugin makes.

mod aave;
mod attacks;
mod cage;
mod cluster;
mod confirmation;
mod crash;
mod cross_check;
mod economic;
mod fleet_history;
mod forged;
mod generations;
mod limits;
mod morpho;
mod morpho_writes;
mod pendle;
mod reputation;
mod routes;
mod safe;
mod v4_liquidity;
mod valuation;
mod vault;
mod wallet;
mod write_path;

pub use bardo_test_support::{engine, host, host_runtime, host_with, no_services};
