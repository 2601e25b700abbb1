//! Where the streamed protocols live per chain: `[settings] streaming` in bardo.toml,
//! `{"chains": {"31337": {"uniswap": {…the uniswap plugin's book…}, "aave_pool_addresses_provider": "0x…"}}}`;
//! Ethereum mainnet built in. Also the checks and helpers every stream tool shares.

use alloy_primitives::Address;
use bardo_sdk::errors::{chain_not_supported, invalid_params};
use bardo_sdk::uniswap::Book;
use bardo_sdk::{
    Category, ChainId, Error, LogFilter, Source, SpriteTrigger, StreamEvent, TickBudget, ToolDef, settings,
    tool_def,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The protocols on one chain.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chain {
    pub uniswap: Option<Book>,
    pub aave_pool_addresses_provider: Option<Address>,
}

/// The configuration of `chain_id`.
pub fn chain(chain_id: ChainId) -> Result<Chain, Error> {
    match (settings::of_chain::<Chain>(chain_id)?, chain_id) {
        (Some(c), _) => Ok(c),
        (None, 1) => Ok(Chain {
            uniswap: Some(bardo_sdk::uniswap::mainnet()),
            aave_pool_addresses_provider: Some(bardo_sdk::aave::MAINNET_ADDRESSES_PROVIDER),
        }),
        (None, _) => Err(chain_not_supported(format!(
            "streaming has no configuration for chain {chain_id}; add `[settings] streaming` chains.{chain_id}"
        ))),
    }
}

/// Uniswap's book on `chain_id`.
pub fn uniswap(chain_id: ChainId) -> Result<Book, Error> {
    chain(chain_id)?.uniswap.ok_or_else(|| {
        chain_not_supported(format!("no Uniswap addresses for chain {chain_id} in `[settings] streaming`"))
    })
}

/// A poll interval param: at least `min` ms.
pub fn interval(ms: u32, min: u32) -> Result<u32, Error> {
    if ms < min {
        return Err(invalid_params(format!(
            "`interval_ms` {ms} is below the minimum {min}; poll less often"
        )));
    }
    Ok(ms)
}

/// Logs of `addresses` with `topics` on `chain_id`, live.
pub fn logs(chain_id: ChainId, addresses: &[Address], topics: Vec<Vec<alloy_primitives::B256>>) -> Source {
    Source::Logs(LogFilter {
        chain_id,
        addresses: addresses.iter().map(bardo_sdk::abi::wire).collect(),
        topics: topics.into_iter().map(|p| p.into_iter().map(|t| t.to_string()).collect()).collect(),
        from_block: None,
        to_block: None,
    })
}

/// A stream event of `kind` with a JSON payload.
pub fn event<T: Serialize>(kind: &str, payload: &T) -> Result<StreamEvent, Error> {
    let payload_json =
        serde_json::to_string(payload).map_err(|e| bardo_sdk::errors::internal(e.to_string()))?;
    Ok(StreamEvent { kind: kind.into(), payload_json })
}

/// Where a log came from, for payloads.
#[derive(Debug, Clone, Serialize)]
pub struct LogRef {
    pub block_number: Option<u64>,
    pub tx_hash: Option<String>,
    pub log_index: Option<u64>,
}

impl From<&bardo_sdk::Log> for LogRef {
    fn from(l: &bardo_sdk::Log) -> Self {
        Self { block_number: l.block_number, tx_hash: l.tx_hash.clone(), log_index: l.log_index }
    }
}

/// A signed base-unit amount as a decimal string in token units.
pub fn signed_units(v: alloy_primitives::I256, decimals: u8) -> String {
    let (sign, abs) = v.into_sign_and_abs();
    let text = bardo_sdk::units::format_units(abs, decimals);
    if sign.is_negative() && !abs.is_zero() { format!("-{text}") } else { text }
}

/// A stream tool's ToolDef: every stream tool shares the category and budget.
pub fn stream_def<P: JsonSchema>(
    name: &str,
    description: &str,
    snippet: &str,
    sprite: SpriteTrigger,
) -> ToolDef {
    ToolDef {
        tick_budget: TickBudget::Medium,
        sprite_trigger: sprite,
        prompt_snippet: snippet.into(),
        ..tool_def::<P>(name, description, Category::Streaming)
    }
}
