//! `stream_trades`: the wallet's swaps on Uniswap V4, V3 and V2 pools, on one or several chains —
//! one host task per chain, one subscription. V2 and V3 swaps are found by recipient, the pool's
//! own record, so any router or aggregator that pays the wallet is covered. A V4 swap's log names
//! only the contract that called the PoolManager (a router), so V4 swaps are the PoolManager's
//! `Swap`s in transactions the wallet sent.

use crate::config::{LogRef, event, logs, stream_def};
use alloy_primitives::{Address, B256, I256, U256};
use alloy_sol_types::SolEvent;
use bardo_sdk::abi::{decode_log, eth_call};
use bardo_sdk::errors::invalid_params;
use bardo_sdk::tokens::parse_address;
use bardo_sdk::uniswap::{Swap, token0Call, token1Call, v2, v4};
use bardo_sdk::units::format_units;
use bardo_sdk::{ChainId, Error, Log, Source, SpriteTrigger, StreamEvent, StreamTool, ToolDef, chain};
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
    /// V4: the pool's id (`pool` is the PoolManager).
    #[serde(skip_serializing_if = "Option::is_none")]
    pool_id: Option<B256>,
    sold: Leg,
    bought: Leg,
    #[serde(flatten)]
    at: LogRef,
}

pub struct Trades;

/// The V4 pools seen so far: their tokens by chain and id (a pool's key is read once).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct TradesState {
    v4_pools: Vec<(ChainId, B256, [Address; 2])>,
}

fn leg(chain_id: ChainId, token: Address, amount: U256) -> Result<Leg, Error> {
    let t = crate::v4::currency(chain_id, token)?;
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
    type State = TradesState;

    fn def() -> ToolDef {
        stream_def::<TradesParams>(
            Self::NAME,
            "Streams every Uniswap V3 or V2 swap paying the wallet, and every V4 swap in a transaction \
                 the wallet sent, on each chain given (one subscription), with the tokens and amounts sold \
                 and bought. Emits SwapExecuted. Swaps that pay someone else are not included.",
            "stream_trades: the wallet's swaps as they are mined, on every chain given",
            SpriteTrigger::Success,
        )
    }

    fn open(p: &TradesParams) -> Result<(Vec<Source>, TradesState), Error> {
        if p.chain_ids.is_empty() {
            return Err(invalid_params("`chain_ids` is empty; name at least one chain"));
        }
        let wallet = parse_address("wallet", &p.wallet)?;
        let topics =
            || vec![vec![Swap::SIGNATURE_HASH, v2::Swap::SIGNATURE_HASH], vec![], vec![wallet.into_word()]];
        let mut sources: Vec<Source> = p.chain_ids.iter().map(|c| logs(*c, &[], topics())).collect();
        for c in &p.chain_ids {
            let manager = crate::config::chain(*c)?.uniswap.and_then(|b| b.v4_pool_manager);
            if let Some(manager) = manager {
                sources.push(logs(*c, &[manager], vec![vec![v4::Swap::SIGNATURE_HASH]]));
            }
        }
        Ok((sources, TradesState::default()))
    }

    fn on_logs(
        p: &TradesParams,
        logs: Vec<Log>,
        mut state: TradesState,
    ) -> Result<(Vec<StreamEvent>, TradesState), Error> {
        let wallet = parse_address("wallet", &p.wallet)?;
        let mut out = Vec::new();
        for log in &logs {
            let c = log.chain_id;
            let pool = parse_address("log address", &log.address)?;
            if let Some(s) = decode_log::<v4::Swap>(log) {
                let Some(trade) = v4_trade(&mut state, wallet, log, pool, &s)? else { continue };
                out.push(event("swap-executed", &trade)?);
                continue;
            }
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
                    pool_id: None,
                    sold: leg(c, tokens[sold.0], sold.1)?,
                    bought: leg(c, tokens[bought.0], bought.1)?,
                    at: LogRef::from(log),
                },
            )?);
        }
        Ok((out, state))
    }
}

/// The wallet's V4 swap in `log`, if the wallet sent its transaction. The amounts are the
/// swapper's deltas: negative was paid in (sold), positive taken out (bought).
fn v4_trade(
    state: &mut TradesState,
    wallet: Address,
    log: &Log,
    manager: Address,
    s: &v4::Swap,
) -> Result<Option<Trade>, Error> {
    let c = log.chain_id;
    let Some(hash) = log.tx_hash.as_deref() else { return Ok(None) };
    let sent_by_wallet =
        chain::tx_receipt(c, hash)?.is_some_and(|r| r.sender.parse::<Address>().ok() == Some(wallet));
    if !sent_by_wallet {
        return Ok(None);
    }
    let tokens = match state.v4_pools.iter().find(|(chain, id, _)| *chain == c && *id == s.id) {
        Some((_, _, tokens)) => *tokens,
        None => {
            let key = v4::key_by_id(c, manager, s.id)?.ok_or_else(|| {
                bardo_sdk::errors::internal(format!("V4 pool {} has no Initialize log", s.id))
            })?;
            let tokens = [key.currency0, key.currency1];
            state.v4_pools.push((c, s.id, tokens));
            tokens
        }
    };
    let (a0, a1) =
        (I256::try_from(s.amount0).unwrap_or_default(), I256::try_from(s.amount1).unwrap_or_default());
    let (sold, bought) = if a0.is_negative() {
        ((0, a0.unsigned_abs()), (1, a1.unsigned_abs()))
    } else {
        ((1, a1.unsigned_abs()), (0, a0.unsigned_abs()))
    };
    Ok(Some(Trade {
        chain_id: c,
        version: "v4",
        pool: manager,
        pool_id: Some(s.id),
        sold: leg(c, tokens[sold.0], sold.1)?,
        bought: leg(c, tokens[bought.0], bought.1)?,
        at: LogRef::from(log),
    }))
}
