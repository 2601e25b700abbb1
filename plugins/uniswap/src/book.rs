//! Where Uniswap lives on each chain, and which tokens the operator trusts there. Built in for
//! Ethereum mainnet; any chain (a devnet, a fork, an L2) comes from `[settings] uniswap` in
//! bardo.toml: `{"chains": {"31337": {"v3_factory": "0x…", …, "tokens": [{"symbol", "address"}]}}}`.

use alloy_primitives::{Address, address};
use bardo_sdk::erc20::Token;
use bardo_sdk::errors::chain_not_supported;
use bardo_sdk::tokens::{self, Listed};
use bardo_sdk::{ChainId, Error, settings};
use serde::Deserialize;
use std::collections::BTreeMap;

/// V3 fee tiers, in hundredths of a bip.
pub const FEE_TIERS: [u32; 4] = [100, 500, 3000, 10000];

/// The plugin's settings.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    #[serde(default)]
    chains: BTreeMap<String, Book>,
}

/// Uniswap's contracts and the token list on one chain.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Book {
    pub v3_factory: Address,
    pub quoter_v2: Address,
    pub swap_router: Address,
    pub position_manager: Address,
    pub v2_factory: Option<Address>,
    pub v2_router: Option<Address>,
    #[serde(default)]
    pub tokens: Vec<Listed>,
    /// Symbol prices are quoted in (`data_get_token_price`).
    #[serde(default = "default_quote")]
    pub quote_token: String,
}

fn default_quote() -> String {
    "USDC".into()
}

fn mainnet() -> Book {
    Book {
        v3_factory: address!("0x1F98431c8aD98523631AE4a59f267346ea31F984"),
        quoter_v2: address!("0x61fFE014bA17989E743c5F6cB21bF9697530B21e"),
        swap_router: address!("0xE592427A0AEce86092D3D1B4ec1a1c4A61F05E45"),
        position_manager: address!("0xC36442b4a4522E871399CD717aBDD847Ab11FE88"),
        v2_factory: Some(address!("0x5C69bEe701ef814a2B6a3EDD4B1652CB9cc5aA6f")),
        v2_router: Some(address!("0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D")),
        tokens: tokens::mainnet(),
        quote_token: default_quote(),
    }
}

/// The book for `chain_id`: the operator's settings first, then the built-in ones.
pub fn book(chain_id: ChainId) -> Result<Book, Error> {
    let settings: Settings = settings::load()?;
    if let Some(book) = settings.chains.get(&chain_id.to_string()) {
        return Ok(book.clone());
    }
    match chain_id {
        1 => Ok(mainnet()),
        _ => Err(chain_not_supported(format!(
            "uniswap has no contract addresses for chain {chain_id}; add them under `[settings] uniswap` \
             (chains.{chain_id}: v3_factory, quoter_v2, swap_router, position_manager, tokens)"
        ))),
    }
}

impl Book {
    /// Resolve a token param (address or listed symbol) on this book's chain.
    pub fn token(&self, chain_id: ChainId, field: &str, input: &str) -> Result<Token, Error> {
        tokens::resolve(chain_id, field, input, &self.tokens)
    }
}
