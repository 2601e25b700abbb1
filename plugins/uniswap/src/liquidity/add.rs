//! `uniswap_add_liquidity`: mint a position or increase one, V3 or V4.

use super::{Amounts, base, check_receipts, default_slippage, json, json_value, owned, write_def};
use crate::abi::*;
use crate::book::{Book, book};
use crate::liquidity_v4::{self as v4p, V4Fields};
use crate::math::{MAX_TICK, check_slippage, min_out};
use crate::pools::Version;
use crate::pools::{sorted, v3_pool};
use crate::read::{check_fee, deadline, pair, position, position_id};
use alloy_primitives::U256;
use alloy_primitives::aliases::{I24, U24};
use bardo_sdk::abi::{events as logs_of, simulate_last, tx_call, wallet};
use bardo_sdk::erc20::{self, Authority, BalanceChange, NftChange, Token};
use bardo_sdk::errors::{internal, invalid_params, not_found};
use bardo_sdk::units::{format_units, parse_units};
use bardo_sdk::{
    Error, Phase, PlannedCall, Receipt, RiskTier, ToolDef, TxCall, WritePlan, WriteTool, events,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `uniswap_add_liquidity`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddParams {
    /// Chain id.
    pub chain_id: u64,
    /// One token of the pool: a listed symbol or an address.
    pub token_a: String,
    /// The other token.
    pub token_b: String,
    /// V3 fee tier (100, 500, 3000, 10000).
    pub fee: u32,
    /// Most of `token_a` to deposit, token units ("1.5").
    pub amount_a: String,
    /// Most of `token_b` to deposit, token units.
    pub amount_b: String,
    /// Lower tick, a multiple of the pool's tick spacing. Omit both ticks with `full_range`.
    #[serde(default)]
    pub tick_lower: Option<i32>,
    /// Upper tick, a multiple of the pool's tick spacing, above `tick_lower`.
    #[serde(default)]
    pub tick_upper: Option<i32>,
    /// Use the whole price range instead of ticks.
    #[serde(default)]
    pub full_range: bool,
    /// Add to this existing position (its pool and range) instead of minting a new one.
    #[serde(default)]
    pub position_id: Option<String>,
    /// Tolerance on the deposited amounts, basis points 1 to 5000 (default 50).
    #[serde(default = "default_slippage")]
    pub slippage_bps: u32,
    /// `v3` (default) or `v4`.
    #[serde(default)]
    pub version: Option<Version>,
    /// V4: the pool key's tick spacing (default: the standard one of `fee`).
    #[serde(default)]
    pub tick_spacing: Option<i32>,
    /// V4: the pool key's hooks contract (default: none).
    #[serde(default)]
    pub hooks: Option<String>,
}

/// Expected / verified outcome of adding liquidity.
#[derive(Debug, Serialize)]
pub struct AddOutcome {
    /// The wallet's token balance changes (checked by the host against its simulation).
    pub balance_changes: Vec<BalanceChange>,
    /// What the position manager may still pull after the deposit (the desired amounts approved).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub authorities: Vec<Authority>,
    /// The position NFT a new deposit mints.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nfts: Vec<NftChange>,
    /// The position (new or increased).
    pub position_id: String,
    pub liquidity_added: String,
    pub tick_lower: i32,
    pub tick_upper: i32,
    #[serde(flatten)]
    pub deposited: Amounts,
    /// V4: the pool's id, tick spacing and hooks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v4: Option<V4Fields>,
}

pub struct AddLiquidity;

impl AddLiquidity {
    fn ticks(p: &AddParams, spacing: i32) -> Result<(i32, i32), Error> {
        if p.full_range {
            if p.tick_lower.is_some() || p.tick_upper.is_some() {
                return Err(invalid_params("give either `full_range` or both ticks, not both"));
            }
            return Ok((-MAX_TICK / spacing * spacing, MAX_TICK / spacing * spacing));
        }
        let (Some(lower), Some(upper)) = (p.tick_lower, p.tick_upper) else {
            return Err(invalid_params("give `tick_lower` and `tick_upper`, or `full_range: true`"));
        };
        if lower >= upper || lower < -MAX_TICK || upper > MAX_TICK {
            return Err(invalid_params(format!(
                "ticks {lower}..{upper} must satisfy -{MAX_TICK} <= tick_lower < tick_upper <= {MAX_TICK}"
            )));
        }
        if lower % spacing != 0 || upper % spacing != 0 {
            return Err(invalid_params(format!(
                "ticks must be multiples of the pool's tick spacing {spacing}"
            )));
        }
        Ok((lower, upper))
    }
}

impl WriteTool for AddLiquidity {
    const NAME: &'static str = "uniswap_add_liquidity";
    type Params = AddParams;

    fn def() -> ToolDef {
        write_def::<AddParams>(
            Self::NAME,
            "Plans adding liquidity to a Uniswap V3 pool, or a V4 pool (`version: v4`, through the \
             PositionManager and Permit2): mints a position in a tick range (or the full range), or increases \
             an existing position. Approvals are exact and only when short; bounds come from simulating the \
             deposit, less the slippage setting. The host executes the plan. It does not create pools: the \
             pool must exist.",
            RiskTier::High,
            "add_liquidity",
            &["resolve pool", "simulate deposit", "build calls"],
            &[
                (Phase::Thriving, "Concentrate around the current price only in pools you watch."),
                (Phase::Defensive, "Prefer wide or full ranges; open no positions in volatile pairs."),
                (Phase::Survival, "Do not add liquidity."),
            ],
        )
    }

    fn plan(p: AddParams) -> Result<WritePlan, Error> {
        if p.version == Some(Version::V4) {
            return add_v4(p);
        }
        if p.tick_spacing.is_some() || p.hooks.is_some() {
            return Err(invalid_params(
                "`tick_spacing` and `hooks` name a V4 pool; add `\"version\": \"v4\"`",
            ));
        }
        let owner = wallet(p.chain_id)?;
        check_fee(Some(p.fee))?;
        check_slippage(p.slippage_bps)?;
        let book = book(p.chain_id)?;
        events::progress(0);
        let (a, b, amount_a, amount_b) = deposit_sides(&p, &book)?;
        let pool = v3_pool(p.chain_id, &book, &a, &b, p.fee)?.ok_or_else(|| {
            not_found(format!(
                "no V3 pool of {}/{} at fee {} on chain {}; pick an existing fee tier",
                a.symbol, b.symbol, p.fee, p.chain_id
            ))
        })?;
        let (t0, t1) = sorted(&a, &b);
        let (amount0, amount1) =
            if a.address == t0.address { (amount_a, amount_b) } else { (amount_b, amount_a) };
        erc20::require_balance(p.chain_id, &t0, owner, amount0)?;
        erc20::require_balance(p.chain_id, &t1, owner, amount1)?;
        let existing = p.position_id.as_deref().map(position_id).transpose()?;
        let (lower, upper) = match existing {
            Some(id) => {
                let pos = owned(p.chain_id, &book, id, owner)?;
                if (pos.token0.address, pos.token1.address, pos.fee) != (t0.address, t1.address, p.fee) {
                    return Err(invalid_params(format!(
                        "position {id} is in another pool ({}/{} fee {})",
                        pos.token0.symbol, pos.token1.symbol, pos.fee
                    )));
                }
                (pos.tick_lower, pos.tick_upper)
            }
            None => AddLiquidity::ticks(&p, pool.tick_spacing)?,
        };
        events::progress(1);
        let npm = book.position_manager;
        let mut calls: Vec<PlannedCall> = Vec::new();
        calls.extend(erc20::approval_if_short(
            p.chain_id,
            &t0,
            owner,
            npm,
            amount0,
            "the V3 position manager",
        )?);
        calls.extend(erc20::approval_if_short(
            p.chain_id,
            &t1,
            owner,
            npm,
            amount1,
            "the V3 position manager",
        )?);
        let deadline = deadline(p.chain_id, 600)?;
        let deposit = |min0: U256, min1: U256| -> TxCall {
            match existing {
                Some(id) => tx_call(
                    p.chain_id,
                    npm,
                    &increaseLiquidityCall {
                        params: IncreaseLiquidityParams {
                            tokenId: id,
                            amount0Desired: amount0,
                            amount1Desired: amount1,
                            amount0Min: min0,
                            amount1Min: min1,
                            deadline,
                        },
                    },
                ),
                None => tx_call(
                    p.chain_id,
                    npm,
                    &mintCall {
                        params: MintParams {
                            token0: t0.address,
                            token1: t1.address,
                            fee: U24::from(p.fee),
                            tickLower: I24::try_from(lower).unwrap_or_default(),
                            tickUpper: I24::try_from(upper).unwrap_or_default(),
                            amount0Desired: amount0,
                            amount1Desired: amount1,
                            amount0Min: min0,
                            amount1Min: min1,
                            recipient: owner,
                            deadline,
                        },
                    },
                ),
            }
        };
        let mut sim: Vec<TxCall> = calls.iter().map(|c| c.call.clone()).collect();
        sim.push(deposit(U256::ZERO, U256::ZERO));
        let (id, liquidity, used0, used1) = match existing {
            Some(id) => {
                let r = simulate_last::<increaseLiquidityCall>(p.chain_id, owner, &sim)?;
                (id, r.liquidity, r.amount0, r.amount1)
            }
            None => {
                let r = simulate_last::<mintCall>(p.chain_id, owner, &sim)?;
                (r.tokenId, r.liquidity, r.amount0, r.amount1)
            }
        };
        events::progress(2);
        let bound = |used: U256| if used.is_zero() { Ok(U256::ZERO) } else { min_out(used, p.slippage_bps) };
        calls.push(PlannedCall {
            call: deposit(bound(used0)?, bound(used1)?),
            description: format!(
                "{} {} {} + {} {} in ticks {lower}..{upper} (fee {})",
                if existing.is_some() {
                    format!("add to position {id}:")
                } else {
                    "mint a position with".into()
                },
                format_units(used0, t0.decimals),
                t0.symbol,
                format_units(used1, t1.decimals),
                t1.symbol,
                p.fee
            ),
        });
        let expected = AddOutcome {
            balance_changes: vec![BalanceChange::spent(&t0, used0), BalanceChange::spent(&t1, used1)],
            authorities: vec![Authority::erc20(&t0, npm, amount0), Authority::erc20(&t1, npm, amount1)],
            nfts: if existing.is_some() { Vec::new() } else { vec![NftChange::minted(npm)] },
            position_id: id.to_string(),
            liquidity_added: liquidity.to_string(),
            tick_lower: lower,
            tick_upper: upper,
            deposited: Amounts::new(&t0, &t1, used0, used1),
            v4: None,
        };
        Ok(WritePlan { calls, expected_outcome_json: json(&expected)? })
    }

    fn verify(p: AddParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        check_receipts(&receipts)?;
        let book = book(p.chain_id)?;
        if p.version == Some(Version::V4) {
            return verify_add_v4(&p, &book, &receipts);
        }
        let e = logs_of::<IncreaseLiquidity>(&receipts, book.position_manager).pop().ok_or_else(|| {
            internal("the receipts hold no IncreaseLiquidity event of the position manager")
        })?;
        let pos = position(p.chain_id, &book, e.tokenId)?;
        serde_json::to_value(AddOutcome {
            balance_changes: vec![
                BalanceChange::spent(&pos.token0, e.amount0),
                BalanceChange::spent(&pos.token1, e.amount1),
            ],
            authorities: Vec::new(),
            nfts: Vec::new(),
            position_id: e.tokenId.to_string(),
            liquidity_added: e.liquidity.to_string(),
            tick_lower: pos.tick_lower,
            tick_upper: pos.tick_upper,
            deposited: Amounts::new(&pos.token0, &pos.token1, e.amount0, e.amount1),
            v4: None,
        })
        .map_err(|e| internal(e.to_string()))
    }
}

/// The two tokens of an add and the most of each to deposit, base units; not both zero.
fn deposit_sides(p: &AddParams, book: &Book) -> Result<(Token, Token, U256, U256), Error> {
    let (a, b) = pair(p.chain_id, book, &p.token_a, &p.token_b, ["token_a", "token_b"])?;
    let amount_a = parse_units("amount_a", &p.amount_a, a.decimals)?;
    let amount_b = parse_units("amount_b", &p.amount_b, b.decimals)?;
    if amount_a.is_zero() && amount_b.is_zero() {
        return Err(invalid_params("`amount_a` and `amount_b` are both zero; deposit something"));
    }
    Ok((a, b, amount_a, amount_b))
}

/// `uniswap_add_liquidity` on V4.
fn add_v4(p: AddParams) -> Result<WritePlan, Error> {
    let owner = wallet(p.chain_id)?;
    let book = book(p.chain_id)?;
    events::progress(0);
    let (a, b, amount_a, amount_b) = deposit_sides(&p, &book)?;
    let existing = p.position_id.as_deref().map(position_id).transpose()?;
    let (pool, ticks) = match existing {
        Some(id) => {
            let pos = v4p::owned(p.chain_id, &book, id, owner)?;
            let (t0, t1) = sorted(&a, &b);
            if (pos.pool.token0.address, pos.pool.token1.address) != (t0.address, t1.address) {
                return Err(invalid_params(format!(
                    "V4 position {id} is in a {}/{} pool, not {}/{}",
                    pos.pool.token0.symbol, pos.pool.token1.symbol, a.symbol, b.symbol
                )));
            }
            (pos.pool, (pos.tick_lower, pos.tick_upper))
        }
        None => {
            let key = crate::v4::key_params(p.fee, p.tick_spacing, p.hooks.as_deref())?;
            let pool = crate::v4::hooked_pool(p.chain_id, &book, &a, &b, key)?.ok_or_else(|| {
                not_found(format!(
                    "no V4 pool of {}/{} with fee {}, tick spacing {} and hooks {} on chain {}; list the V4 pools \
                     with uniswap_get_pools_by_token_pair",
                    a.symbol, b.symbol, key.0, key.1, key.2, p.chain_id
                ))
            })?;
            let ticks = AddLiquidity::ticks(&p, pool.key.tick_spacing)?;
            (pool, ticks)
        }
    };
    let most = if a.address == pool.token0.address { (amount_a, amount_b) } else { (amount_b, amount_a) };
    events::progress(1);
    let deposit = v4p::Deposit {
        chain_id: p.chain_id,
        owner,
        pool: &pool,
        existing,
        ticks,
        most,
        slippage_bps: p.slippage_bps,
        deadline: deadline(p.chain_id, 600)?,
    };
    let planned = v4p::deposit(&book, &deposit)?;
    events::progress(2);
    let (t0, t1) = (&pool.token0, &pool.token1);
    let changes = [planned.deltas.0, planned.deltas.1]
        .map(|d| if d.is_negative() { d.unsigned_abs() } else { U256::ZERO });
    let expected = AddOutcome {
        balance_changes: vec![
            BalanceChange::net(t0.address, U256::ZERO, changes[0]),
            BalanceChange::net(t1.address, U256::ZERO, changes[1]),
        ],
        authorities: planned.authorities,
        nfts: if existing.is_some() {
            Vec::new()
        } else {
            vec![NftChange::minted(v4p::manager(p.chain_id, &book)?)]
        },
        position_id: planned.id.to_string(),
        liquidity_added: planned.liquidity.to_string(),
        tick_lower: ticks.0,
        tick_upper: ticks.1,
        deposited: Amounts::new(t0, t1, changes[0], changes[1]),
        v4: Some(V4Fields::of(&pool)),
    };
    // An increase may also take uncollected fees to the wallet: declare the net change.
    let mut expected = expected;
    if existing.is_some() {
        expected.balance_changes = vec![
            BalanceChange::net(t0.address, v4p::inflow(planned.deltas.0), changes[0]),
            BalanceChange::net(t1.address, v4p::inflow(planned.deltas.1), changes[1]),
        ];
    }
    Ok(WritePlan { calls: planned.calls, expected_outcome_json: json(&expected)? })
}

fn verify_add_v4(p: &AddParams, book: &Book, receipts: &[Receipt]) -> Result<serde_json::Value, Error> {
    let owner = wallet(p.chain_id)?;
    let posm = v4p::manager(p.chain_id, book)?;
    let id = match p.position_id.as_deref() {
        Some(text) => position_id(text)?,
        None => v4p::minted(receipts, posm, owner)
            .ok_or_else(|| internal("the receipts hold no V4 position minted to the wallet"))?,
    };
    let added = v4p::modifications(receipts, posm)
        .into_iter()
        .find(|m| m.salt == id && !m.delta.is_negative())
        .ok_or_else(|| internal(format!("the receipts hold no liquidity added to V4 position {id}")))?;
    let pos = v4p::position(p.chain_id, book, id)?;
    let (t0, t1) = (&pos.pool.token0, &pos.pool.token1);
    let (c0, c1) = (v4p::moved(receipts, t0, owner), v4p::moved(receipts, t1, owner));
    let spent = |c: &BalanceChange| if c.delta.starts_with('-') { base(c) } else { U256::ZERO };
    json_value(AddOutcome {
        deposited: Amounts::new(t0, t1, spent(&c0), spent(&c1)),
        balance_changes: vec![c0, c1],
        authorities: Vec::new(),
        nfts: Vec::new(),
        position_id: id.to_string(),
        liquidity_added: added.delta.to_string(),
        tick_lower: pos.tick_lower,
        tick_upper: pos.tick_upper,
        v4: Some(V4Fields::of(&pos.pool)),
    })
}
