//! See `benches/peers.rs`: the benchmark is the crate.
