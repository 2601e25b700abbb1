//! Where Uniswap lives on each chain, and which tokens the operator trusts there. Built in for
//! Ethereum mainnet; any chain (a devnet, a fork, an L2) comes from `[settings] uniswap` in
//! bardo.toml: `{"chains": {"31337": {"v3_factory": "0x…", …, "tokens": [{"symbol", "address"}]}}}`.

use bardo_sdk::errors::chain_not_supported;
use bardo_sdk::{ChainId, Error, settings};
use serde::Deserialize;
use std::collections::BTreeMap;

pub use bardo_sdk::uniswap::{Book, FEE_TIERS};

/// The plugin's settings.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    #[serde(default)]
    chains: BTreeMap<String, Book>,
}

/// The book for `chain_id`: the operator's settings first, then the built-in ones.
pub fn book(chain_id: ChainId) -> Result<Book, Error> {
    let settings: Settings = settings::load()?;
    if let Some(book) = settings.chains.get(&chain_id.to_string()) {
        return Ok(book.clone());
    }
    match chain_id {
        1 => Ok(bardo_sdk::uniswap::mainnet()),
        _ => Err(chain_not_supported(format!(
            "uniswap has no contract addresses for chain {chain_id}; add them under `[settings] uniswap` \
             (chains.{chain_id}: v3_factory, quoter_v2, swap_router, position_manager, tokens)"
        ))),
    }
}
