//! Bardo's EVM layer: chain reads through alloy providers (timeouts bounded by the caller's
//! deadline, retries on transient failures, block-scoped caches), simulation on a revm fork, and
//! the wallet the host signs with. Plain Rust on the host's runtime: no wasmtime here.
#![deny(unsafe_code)]

pub mod chain;
pub mod changes;
pub mod cheats;
pub mod evm;
pub mod executed;
pub mod safe;
pub mod signer;
pub mod simulate;

pub use chain::{ChainClient, ChainConfig, ChainError, Chains, GasPrice};
pub use evm::Evm;
pub use safe::{SafeKey, SafeWallet};
pub use signer::{KEYSTORE_ENV, SignerConfig, SignerMode, Wallet, create_keystore};
pub use simulate::{Origin, SimCall, Simulation, Simulator};
