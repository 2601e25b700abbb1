//! Where Uniswap lives on a chain, as the operator configured it for the uniswap plugin
//! (`[settings] uniswap` in bardo.toml): the same book the plugin gets, which it cannot change.
//! The host's cross-check and routes read pools through it, never through a plugin's word.

use alloy_primitives::Address;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The Uniswap contracts of one chain.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct UniswapBook {
    /// The V3 factory: a V3 pool it did not create is not Uniswap's.
    #[serde(default)]
    pub v3_factory: Option<Address>,
    /// The V3 NonfungiblePositionManager, whose positions' fees the cross-check holds collects to.
    #[serde(default)]
    pub position_manager: Option<Address>,
    /// The V2 factory.
    #[serde(default)]
    pub v2_factory: Option<Address>,
    /// The V4 PoolManager, whose `Swap` events name V4 pools.
    #[serde(default)]
    pub v4_pool_manager: Option<Address>,
    /// StateView, through which V4 pools are read.
    #[serde(default)]
    pub v4_state_view: Option<Address>,
    /// The UniversalRouter routes are encoded for.
    #[serde(default)]
    pub universal_router: Option<Address>,
    /// Wrapped ether: an output of WETH may reach the wallet as ether, and routes may pass it.
    #[serde(default)]
    pub weth: Option<Address>,
}

impl UniswapBook {
    /// The books per chain in the uniswap plugin's settings (`{"chains": {"<id>": {...}}}`).
    pub fn from_settings(settings: &serde_json::Value) -> Result<BTreeMap<u64, UniswapBook>, String> {
        let Some(chains) = settings.get("chains").and_then(|c| c.as_object()) else {
            return Ok(BTreeMap::new());
        };
        chains
            .iter()
            .map(|(id, book)| {
                let id = id.parse::<u64>().map_err(|_| format!("chain id {id:?} is not a number"))?;
                let book = serde_json::from_value(book.clone()).map_err(|e| format!("chain {id}: {e}"))?;
                Ok((id, book))
            })
            .collect()
    }
}
