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

/// xorshift64: reproducible randomness without a dependency (the same values in every run).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// In `lo..hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo) as u64) as i64
    }

    /// In `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True once in `n` draws, on average.
    pub(crate) fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }
}
