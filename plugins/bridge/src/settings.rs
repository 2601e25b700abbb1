//! `[settings] bridge`, per chain: `{"chains": {"31337": {"spoke_pool": "0x…", "relayer_fee_bps": 10,
//! "fill_deadline_secs": 3600, "tokens": [{"symbol", "address"}], "routes": {"USDC": {"8453":
//! "0x…"}}}}}` — the chain's SpokePool, the fee its relayers publish, how long a deposit may
//! wait for its fill, the tokens params may name, and the routes: which token a listed token
//! arrives as on each other chain. The host holds a deposit to its own list of the same routes.

use alloy_primitives::{Address, U256};
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::errors::{chain_not_supported, invalid_params};
use bardo_sdk::tokens::Listed;
use bardo_sdk::{ChainId, Error};
use serde::Deserialize;
use std::collections::BTreeMap;

/// One chain's bridge settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chain {
    /// Across's SpokePool on this chain.
    pub spoke_pool: Address,
    /// The fee the relayers filling deposits from this chain publish, basis points of the input.
    #[serde(default = "default_fee")]
    pub relayer_fee_bps: u32,
    /// How long after the deposit its fill may come, seconds.
    #[serde(default = "default_fill_deadline")]
    pub fill_deadline_secs: u32,
    /// Tokens params may name by symbol.
    #[serde(default)]
    pub tokens: Vec<Listed>,
    /// Symbol → destination chain id → the token it arrives as there.
    #[serde(default)]
    pub routes: BTreeMap<String, BTreeMap<String, Address>>,
}

fn default_fee() -> u32 {
    10
}

fn default_fill_deadline() -> u32 {
    3_600
}

/// Chain `id`'s settings.
pub fn chain(id: ChainId) -> Result<Chain, Error> {
    bardo_sdk::settings::of_chain::<Chain>(id)?.ok_or_else(|| {
        chain_not_supported(format!(
            "no bridge settings for chain {id} in this plugin's `[settings]` (chains.{id}: spoke_pool, routes)"
        ))
    })
}

/// A route: `input` on the origin arriving as `output` on `destination`.
pub struct Route {
    pub origin: Chain,
    pub input: Token,
    pub destination: ChainId,
    pub output: Token,
}

impl Route {
    /// What `amount` of the input delivers on the destination after the relayer's fee, in the
    /// output's base units (scaled by the two tokens' decimals), and that fee in the input's.
    pub fn quote(&self, amount: U256) -> (U256, U256) {
        let bps = U256::from(10_000u32);
        let fee = amount * U256::from(self.origin.relayer_fee_bps.min(10_000)) / bps;
        let net = amount - fee;
        let (din, dout) = (u32::from(self.input.decimals), u32::from(self.output.decimals));
        let out = if dout >= din {
            net * U256::from(10u64).pow(U256::from(dout - din))
        } else {
            net / U256::from(10u64).pow(U256::from(din - dout))
        };
        (out, fee)
    }
}

/// The route of `token` (a listed symbol or address) from `origin` to `destination`.
pub fn route(origin: ChainId, destination: ChainId, token: &str) -> Result<Route, Error> {
    if origin == destination {
        return Err(invalid_params("`destination_chain_id` is the origin chain; a bridge moves between two"));
    }
    let o = chain(origin)?;
    // The destination must be one the operator set up for bridging too.
    chain(destination)?;
    let input = bardo_sdk::tokens::resolve(origin, "token", token, &o.tokens)?;
    let listed = o.tokens.iter().find(|t| t.address == input.address).map(|t| t.symbol.clone());
    let output = listed
        .as_ref()
        .and_then(|s| o.routes.get(s))
        .and_then(|to| to.get(&destination.to_string()))
        .copied()
        .ok_or_else(|| {
            invalid_params(format!(
                "no route for {} from chain {origin} to chain {destination} in this plugin's settings (routes); \
                 bridge_get_routes lists them",
                input.symbol
            ))
        })?;
    let output = erc20::token(destination, output)?;
    Ok(Route { origin: o, input, destination, output })
}
