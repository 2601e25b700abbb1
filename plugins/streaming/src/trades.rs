//! `stream_trades`: the wallet's swaps on Uniswap V3 and V2 pools, on one or several chains —
//! one host task per chain, one subscription. Swaps are found by recipient, the pool's own
//! record, so any router or aggregator that pays the wallet is covered.

use crate::config::{LogRef, event, logs, stream_def};
use alloy_primitives::{Address, I256, U256};
use alloy_sol_types::SolEvent;
use bardo_sdk::abi::{decode_log, eth_call};
use bardo_sdk::erc20;
use bardo_sdk::errors::invalid_params;
use bardo_sdk::tokens::parse_address;
use bardo_sdk::uniswap::{Swap, token0Call, token1Call, v2};
use bardo_sdk::units::format_units;
use bardo_sdk::{ChainId, Error, Log, Source, SpriteTrigger, StreamEvent, StreamTool, ToolDef};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `stream_trades`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TradesParams {
    /// Chains to watch (one or more).
    pub chain_ids: Vec<ChainId>,
    /// The wallet whose swaps are streamed.
    pub wallet: String,
}

#[derive(Debug, Serialize)]
struct Leg {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    token: Address,
    symbol: String,
    amount: String,
    amount_base: String,
}

#[derive(Debug, Serialize)]
struct Trade {
    chain_id: ChainId,
    version: &'static str,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pool: Address,
    sold: Leg,
    bought: Leg,
    #[serde(flatten)]
    at: LogRef,
}

pub struct Trades;

fn leg(chain_id: ChainId, token: Address, amount: U256) -> Result<Leg, Error> {
    let t = erc20::token(chain_id, token)?;
    Ok(Leg {
        token,
        amount: format_units(amount, t.decimals),
        amount_base: amount.to_string(),
        symbol: t.symbol,
    })
}

/// (sold, bought) token indexes and amounts of a swap, from the pool's point of view.
fn legs_v3(amount0: I256, amount1: I256) -> ((usize, U256), (usize, U256)) {
    // Positive = paid into the pool by the swapper.
    if amount0.is_positive() {
        ((0, amount0.unsigned_abs()), (1, amount1.unsigned_abs()))
    } else {
        ((1, amount1.unsigned_abs()), (0, amount0.unsigned_abs()))
    }
}

impl StreamTool for Trades {
    const NAME: &'static str = "stream_trades";
    type Params = TradesParams;
    type State = ();

    fn def() -> ToolDef {
        stream_def::<TradesParams>(
            Self::NAME,
            "Streams every Uniswap V3 or V2 swap paying the wallet, on each chain given (one \
                 subscription), with the tokens and amounts sold and bought. Emits SwapExecuted. Swaps \
                 that pay someone else are not included.",
            "stream_trades: the wallet's swaps as they are mined, on every chain given",
            SpriteTrigger::Success,
        )
    }

    fn open(p: &TradesParams) -> Result<(Vec<Source>, ()), Error> {
        if p.chain_ids.is_empty() {
            return Err(invalid_params("`chain_ids` is empty; name at least one chain"));
        }
        let wallet = parse_address("wallet", &p.wallet)?;
        let topics =
            || vec![vec![Swap::SIGNATURE_HASH, v2::Swap::SIGNATURE_HASH], vec![], vec![wallet.into_word()]];
        Ok((p.chain_ids.iter().map(|c| logs(*c, &[], topics())).collect(), ()))
    }

    fn on_logs(_: &TradesParams, logs: Vec<Log>, state: ()) -> Result<(Vec<StreamEvent>, ()), Error> {
        let mut out = Vec::new();
        for log in &logs {
            let c = log.chain_id;
            let pool = parse_address("log address", &log.address)?;
            let (version, (sold, bought)) = if let Some(s) = decode_log::<Swap>(log) {
                ("v3", legs_v3(s.amount0, s.amount1))
            } else if let Some(s) = decode_log::<v2::Swap>(log) {
                let sold = if s.amount0In > U256::ZERO { (0, s.amount0In) } else { (1, s.amount1In) };
                let bought = if s.amount0Out > U256::ZERO { (0, s.amount0Out) } else { (1, s.amount1Out) };
                ("v2", (sold, bought))
            } else {
                continue;
            };
            let tokens = [eth_call(c, pool, &token0Call {})?, eth_call(c, pool, &token1Call {})?];
            out.push(event(
                "swap-executed",
                &Trade {
                    chain_id: c,
                    version,
                    pool,
                    sold: leg(c, tokens[sold.0], sold.1)?,
                    bought: leg(c, tokens[bought.0], bought.1)?,
                    at: LogRef::from(log),
                },
            )?);
        }
        Ok((out, state))
    }
}
