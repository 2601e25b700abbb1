//! Where Uniswap lives on each chain, and which tokens the operator trusts there. Built in for
//! Ethereum mainnet; any chain (a devnet, a fork, an L2) comes from `[settings] uniswap` in
//! bardo.toml: `{"chains": {"31337": {"v3_factory": "0x…", …, "tokens": [{"symbol", "address"}]}}}`.

pub use bardo_sdk::uniswap::{Book, FEE_TIERS, book};
