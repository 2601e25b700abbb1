//! Liquidity tools: mint or increase a position, remove liquidity (and burn it), collect fees —
//! V3 through the NonfungiblePositionManager here, V4 through the PositionManager
//! (`liquidity_v4.rs`). Minimum amounts come from simulating the exact calls as the wallet, less
//! the slippage setting.

use crate::abi::*;
use crate::book::{Book, book};
use crate::liquidity_v4::{self as v4p, V4Fields};
use crate::math::{MAX_TICK, check_slippage, min_out};
use crate::pools::Version;
use crate::pools::{sorted, v3_pool};
use crate::read::{Position, check_fee, deadline, pair, position, position_id};
use alloy_primitives::aliases::{I24, U24};
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{events as logs_of, simulate_last, tx_call, wallet};
use bardo_sdk::erc20::{self, Authority, BalanceChange, NftChange, Token};
use bardo_sdk::errors::{error, internal, invalid_params, not_found};
use bardo_sdk::units::{format_units, parse_units};
use bardo_sdk::{
    CapabilityTier, Category, ChainId, Error, ErrorCode, Phase, PlannedCall, Receipt, RiskTier,
    SpriteTrigger, TickBudget, ToolDef, TxCall, WritePlan, WriteTool, events, tool_def,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn write_def<P: JsonSchema>(
    name: &str,
    description: &str,
    risk: RiskTier,
    kind: &str,
    steps: &[&str],
    guidance: &[(Phase, &str)],
) -> ToolDef {
    ToolDef {
        prompt_guidelines: bardo_sdk::guidelines(guidance),
        capability_tier: CapabilityTier::Write,
        risk_tier: risk,
        tick_budget: TickBudget::Medium,
        sprite_trigger: SpriteTrigger::Executing,
        progress_steps: steps.iter().map(|s| (*s).to_owned()).collect(),
        action_kinds: vec![kind.to_owned()],
        prompt_snippet: bardo_sdk::snippet(name, description),
        ..tool_def::<P>(name, description, Category::Lp)
    }
}

fn json<T: Serialize>(v: &T) -> Result<String, Error> {
    serde_json::to_string(v).map_err(|e| internal(e.to_string()))
}

/// Amounts for output: human and base units.
#[derive(Debug, Serialize)]
pub struct Amounts {
    pub token0: Token,
    pub token1: Token,
    pub amount0: String,
    pub amount1: String,
    pub amount0_base: String,
    pub amount1_base: String,
}

impl Amounts {
    fn new(t0: &Token, t1: &Token, a0: U256, a1: U256) -> Self {
        Self {
            token0: t0.clone(),
            token1: t1.clone(),
            amount0: format_units(a0, t0.decimals),
            amount1: format_units(a1, t1.decimals),
            amount0_base: a0.to_string(),
            amount1_base: a1.to_string(),
        }
    }
}

/// The wallet must own the position it changes.
fn owned(chain_id: ChainId, book: &Book, id: U256, owner: Address) -> Result<Position, Error> {
    let pos = position(chain_id, book, id)?;
    if pos.owner != owner {
        return Err(error(
            ErrorCode::Denied,
            format!("position {id} belongs to {}, not to this wallet ({owner})", pos.owner),
        ));
    }
    Ok(pos)
}

fn check_receipts(receipts: &[Receipt]) -> Result<(), Error> {
    match receipts.iter().find(|r| !r.success) {
        Some(r) => Err(error(ErrorCode::Reverted, format!("transaction {} reverted", r.tx_hash))),
        None if receipts.is_empty() => Err(internal("no receipts to verify")),
        None => Ok(()),
    }
}

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

fn default_slippage() -> u32 {
    50
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

/// Params of `uniswap_remove_liquidity`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveParams {
    /// Chain id.
    pub chain_id: u64,
    /// The position NFT's id, decimal.
    pub position_id: String,
    /// Share of the liquidity to remove, 1 to 100 (default 100).
    #[serde(default = "hundred")]
    pub percent: u8,
    /// Tolerance on the withdrawn amounts, basis points 1 to 5000 (default 50).
    #[serde(default = "default_slippage")]
    pub slippage_bps: u32,
    /// `v3` (default) or `v4`: which position manager's NFT `position_id` is.
    #[serde(default)]
    pub version: Option<Version>,
    /// V4: burn the position NFT too (only with `percent` 100).
    #[serde(default)]
    pub burn: bool,
}

fn hundred() -> u8 {
    100
}

/// Expected / verified outcome of removing liquidity.
#[derive(Debug, Serialize)]
pub struct RemoveOutcome {
    /// The wallet's token balance changes (checked by the host against its simulation).
    pub balance_changes: Vec<BalanceChange>,
    pub position_id: String,
    pub liquidity_removed: String,
    /// Principal withdrawn (V4 receipts do not tell principal from fees: verified outcomes
    /// of V4 show `collected` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withdrawn: Option<Amounts>,
    /// Everything sent to the wallet: principal plus fees.
    pub collected: Amounts,
    /// V4: the position NFT burned.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nfts: Vec<NftChange>,
}

pub struct RemoveLiquidity;

fn collect_call(chain_id: ChainId, npm: Address, id: U256, recipient: Address) -> TxCall {
    tx_call(
        chain_id,
        npm,
        &collectCall {
            params: CollectParams { tokenId: id, recipient, amount0Max: u128::MAX, amount1Max: u128::MAX },
        },
    )
}

impl WriteTool for RemoveLiquidity {
    const NAME: &'static str = "uniswap_remove_liquidity";
    type Params = RemoveParams;

    fn def() -> ToolDef {
        write_def::<RemoveParams>(
            Self::NAME,
            "Plans removing liquidity from a Uniswap V3 or V4 position the wallet owns (a percentage, default \
             all) and collecting the tokens and fees to the wallet; a V4 position can be burned with it. \
             Minimum amounts come from simulating the withdrawal, less the slippage setting.",
            RiskTier::Medium,
            "remove_liquidity",
            &["read position", "simulate withdrawal", "build calls"],
            &[
                (Phase::Defensive, "Remove out-of-range positions first."),
                (Phase::Survival, "Remove everything at risk."),
            ],
        )
    }

    fn plan(p: RemoveParams) -> Result<WritePlan, Error> {
        let owner = wallet(p.chain_id)?;
        check_slippage(p.slippage_bps)?;
        if p.percent == 0 || p.percent > 100 {
            return Err(invalid_params(format!("`percent` {} must be 1 to 100", p.percent)));
        }
        if p.burn && (p.percent != 100 || p.version != Some(Version::V4)) {
            return Err(invalid_params(
                "`burn` takes a V4 position's whole liquidity: `version` v4, `percent` 100",
            ));
        }
        if p.version == Some(Version::V4) {
            return remove_v4(p, owner);
        }
        let book = book(p.chain_id)?;
        let id = position_id(&p.position_id)?;
        events::progress(0);
        let pos = owned(p.chain_id, &book, id, owner)?;
        let liquidity =
            pos.liquidity / 100 * u128::from(p.percent) + pos.liquidity % 100 * u128::from(p.percent) / 100;
        if liquidity == 0 {
            return Err(invalid_params(format!(
                "position {id} has no liquidity to remove; collect its fees instead"
            )));
        }
        events::progress(1);
        let npm = book.position_manager;
        let deadline = deadline(p.chain_id, 600)?;
        let decrease = |min0, min1| {
            tx_call(
                p.chain_id,
                npm,
                &decreaseLiquidityCall {
                    params: DecreaseLiquidityParams {
                        tokenId: id,
                        liquidity,
                        amount0Min: min0,
                        amount1Min: min1,
                        deadline,
                    },
                },
            )
        };
        let collect = collect_call(p.chain_id, npm, id, owner);
        let out =
            simulate_last::<decreaseLiquidityCall>(p.chain_id, owner, &[decrease(U256::ZERO, U256::ZERO)])?;
        let total = simulate_last::<collectCall>(
            p.chain_id,
            owner,
            &[decrease(U256::ZERO, U256::ZERO), collect.clone()],
        )?;
        events::progress(2);
        let bound = |used: U256| if used.is_zero() { Ok(U256::ZERO) } else { min_out(used, p.slippage_bps) };
        let (t0, t1) = (&pos.token0, &pos.token1);
        let calls = vec![
            PlannedCall {
                call: decrease(bound(out.amount0)?, bound(out.amount1)?),
                description: format!(
                    "remove {}% of position {id}: {} {} + {} {}",
                    p.percent,
                    format_units(out.amount0, t0.decimals),
                    t0.symbol,
                    format_units(out.amount1, t1.decimals),
                    t1.symbol
                ),
            },
            PlannedCall {
                call: collect,
                description: format!("collect position {id}'s tokens and fees to the wallet"),
            },
        ];
        let expected = RemoveOutcome {
            balance_changes: vec![
                BalanceChange::received(t0, total.amount0),
                BalanceChange::received(t1, total.amount1),
            ],
            position_id: id.to_string(),
            liquidity_removed: liquidity.to_string(),
            withdrawn: Some(Amounts::new(t0, t1, out.amount0, out.amount1)),
            collected: Amounts::new(t0, t1, total.amount0, total.amount1),
            nfts: Vec::new(),
        };
        Ok(WritePlan { calls, expected_outcome_json: json(&expected)? })
    }

    fn verify(p: RemoveParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        check_receipts(&receipts)?;
        let book = book(p.chain_id)?;
        if p.version == Some(Version::V4) {
            return verify_remove_v4(&p, &book, &receipts);
        }
        let id = position_id(&p.position_id)?;
        let pos = position(p.chain_id, &book, id)?;
        let d = logs_of::<DecreaseLiquidity>(&receipts, book.position_manager)
            .into_iter()
            .find(|e| e.tokenId == id)
            .ok_or_else(|| internal("the receipts hold no DecreaseLiquidity event for the position"))?;
        let c = logs_of::<Collect>(&receipts, book.position_manager).into_iter().find(|e| e.tokenId == id);
        let (c0, c1) = c.map(|c| (c.amount0, c.amount1)).unwrap_or_default();
        serde_json::to_value(RemoveOutcome {
            balance_changes: vec![
                BalanceChange::received(&pos.token0, c0),
                BalanceChange::received(&pos.token1, c1),
            ],
            position_id: id.to_string(),
            liquidity_removed: d.liquidity.to_string(),
            withdrawn: Some(Amounts::new(&pos.token0, &pos.token1, d.amount0, d.amount1)),
            collected: Amounts::new(&pos.token0, &pos.token1, c0, c1),
            nfts: Vec::new(),
        })
        .map_err(|e| internal(e.to_string()))
    }
}

/// Params of `uniswap_collect_fees`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CollectFeesParams {
    /// Chain id.
    pub chain_id: u64,
    /// The position NFT's id, decimal.
    pub position_id: String,
    /// `v3` (default) or `v4`: which position manager's NFT `position_id` is.
    #[serde(default)]
    pub version: Option<Version>,
}

/// Expected / verified fees collected.
#[derive(Debug, Serialize)]
pub struct CollectOutcome {
    /// The wallet's token balance changes (checked by the host against its simulation).
    pub balance_changes: Vec<BalanceChange>,
    pub position_id: String,
    #[serde(flatten)]
    pub fees: Amounts,
}

pub struct CollectFees;

impl WriteTool for CollectFees {
    const NAME: &'static str = "uniswap_collect_fees";
    type Params = CollectFeesParams;

    fn def() -> ToolDef {
        write_def::<CollectFeesParams>(
            Self::NAME,
            "Plans collecting the uncollected fees of a Uniswap V3 or V4 position the wallet owns, to the \
             wallet. The expected amounts come from simulating the collect. It leaves the liquidity in place.",
            RiskTier::Low,
            "collect_fees",
            &["read position", "simulate collect", "build call"],
            &[(Phase::Thriving, "Collect when the fees are worth more than the gas.")],
        )
    }

    fn plan(p: CollectFeesParams) -> Result<WritePlan, Error> {
        let owner = wallet(p.chain_id)?;
        let book = book(p.chain_id)?;
        let id = position_id(&p.position_id)?;
        if p.version == Some(Version::V4) {
            return collect_v4(&p, &book, id, owner);
        }
        events::progress(0);
        let pos = owned(p.chain_id, &book, id, owner)?;
        events::progress(1);
        let collect = collect_call(p.chain_id, book.position_manager, id, owner);
        let fees = simulate_last::<collectCall>(p.chain_id, owner, std::slice::from_ref(&collect))?;
        if fees.amount0.is_zero() && fees.amount1.is_zero() {
            return Err(invalid_params(format!("position {id} has no fees to collect yet")));
        }
        events::progress(2);
        let (t0, t1) = (&pos.token0, &pos.token1);
        let calls = vec![PlannedCall {
            call: collect,
            description: format!(
                "collect {} {} + {} {} of fees from position {id}",
                format_units(fees.amount0, t0.decimals),
                t0.symbol,
                format_units(fees.amount1, t1.decimals),
                t1.symbol
            ),
        }];
        let expected = CollectOutcome {
            balance_changes: vec![
                BalanceChange::received(t0, fees.amount0),
                BalanceChange::received(t1, fees.amount1),
            ],
            position_id: id.to_string(),
            fees: Amounts::new(t0, t1, fees.amount0, fees.amount1),
        };
        Ok(WritePlan { calls, expected_outcome_json: json(&expected)? })
    }

    fn verify(p: CollectFeesParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        check_receipts(&receipts)?;
        let book = book(p.chain_id)?;
        let id = position_id(&p.position_id)?;
        if p.version == Some(Version::V4) {
            let owner = wallet(p.chain_id)?;
            let pos = v4p::position(p.chain_id, &book, id)?;
            let (c0, c1) = (
                v4p::moved(&receipts, &pos.pool.token0, owner),
                v4p::moved(&receipts, &pos.pool.token1, owner),
            );
            let fees = Amounts::new(&pos.pool.token0, &pos.pool.token1, base(&c0), base(&c1));
            return json_value(CollectOutcome {
                balance_changes: vec![c0, c1],
                position_id: id.to_string(),
                fees,
            });
        }
        let pos = position(p.chain_id, &book, id)?;
        let c = logs_of::<Collect>(&receipts, book.position_manager)
            .into_iter()
            .find(|e| e.tokenId == id)
            .ok_or_else(|| internal("the receipts hold no Collect event for the position"))?;
        serde_json::to_value(CollectOutcome {
            balance_changes: vec![
                BalanceChange::received(&pos.token0, c.amount0),
                BalanceChange::received(&pos.token1, c.amount1),
            ],
            position_id: id.to_string(),
            fees: Amounts::new(&pos.token0, &pos.token1, c.amount0, c.amount1),
        })
        .map_err(|e| internal(e.to_string()))
    }
}

fn json_value<T: Serialize>(v: T) -> Result<serde_json::Value, Error> {
    serde_json::to_value(v).map_err(|e| internal(e.to_string()))
}

/// `amounts` of `t0` and `t1` arriving in the wallet.
fn received(t0: &Token, t1: &Token, amounts: (U256, U256)) -> Vec<BalanceChange> {
    vec![BalanceChange::received(t0, amounts.0), BalanceChange::received(t1, amounts.1)]
}

/// The size of a balance change, base units (either direction).
fn base(change: &BalanceChange) -> U256 {
    change.delta.trim_start_matches('-').parse().unwrap_or_default()
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

/// `uniswap_remove_liquidity` on V4.
fn remove_v4(p: RemoveParams, owner: Address) -> Result<WritePlan, Error> {
    let book = book(p.chain_id)?;
    let id = position_id(&p.position_id)?;
    events::progress(0);
    let pos = v4p::owned(p.chain_id, &book, id, owner)?;
    let liquidity =
        pos.liquidity / 100 * u128::from(p.percent) + pos.liquidity % 100 * u128::from(p.percent) / 100;
    if liquidity == 0 && !p.burn {
        return Err(invalid_params(format!(
            "V4 position {id} has no liquidity to remove; collect its fees, or burn it (`burn`: true)"
        )));
    }
    events::progress(1);
    let w = v4p::Withdrawal {
        chain_id: p.chain_id,
        position: &pos,
        liquidity,
        burn: p.burn,
        slippage_bps: p.slippage_bps,
        deadline: deadline(p.chain_id, 600)?,
    };
    let out = v4p::withdraw(&book, &w)?;
    events::progress(2);
    let (t0, t1) = (&pos.pool.token0, &pos.pool.token1);
    let expected = RemoveOutcome {
        balance_changes: received(t0, t1, out.total),
        position_id: id.to_string(),
        liquidity_removed: liquidity.to_string(),
        withdrawn: Some(Amounts::new(t0, t1, out.principal.0, out.principal.1)),
        collected: Amounts::new(t0, t1, out.total.0, out.total.1),
        nfts: if p.burn { vec![v4p::burned(v4p::manager(p.chain_id, &book)?, id)] } else { Vec::new() },
    };
    Ok(WritePlan { calls: vec![out.call], expected_outcome_json: json(&expected)? })
}

fn verify_remove_v4(p: &RemoveParams, book: &Book, receipts: &[Receipt]) -> Result<serde_json::Value, Error> {
    let owner = wallet(p.chain_id)?;
    let posm = v4p::manager(p.chain_id, book)?;
    let id = position_id(&p.position_id)?;
    let removed: U256 = v4p::modifications(receipts, posm)
        .into_iter()
        .filter(|m| m.salt == id && m.delta.is_negative())
        .map(|m| m.delta.unsigned_abs())
        .sum();
    // The position may be burned: its tokens come from the pool key the position manager keeps.
    let pool = v4p::modifications(receipts, posm)
        .into_iter()
        .find(|m| m.salt == id)
        .map(|m| m.pool_id)
        .ok_or_else(|| internal(format!("the receipts hold no change of V4 position {id}")))?;
    let (t0, t1) = v4p::pool_tokens(p.chain_id, posm, pool)?;
    let (c0, c1) = (v4p::moved(receipts, &t0, owner), v4p::moved(receipts, &t1, owner));
    json_value(RemoveOutcome {
        collected: Amounts::new(&t0, &t1, base(&c0), base(&c1)),
        balance_changes: vec![c0, c1],
        position_id: id.to_string(),
        liquidity_removed: removed.to_string(),
        withdrawn: None,
        nfts: Vec::new(),
    })
}

/// `uniswap_collect_fees` on V4: a decrease of nothing, then take both tokens.
fn collect_v4(p: &CollectFeesParams, book: &Book, id: U256, owner: Address) -> Result<WritePlan, Error> {
    events::progress(0);
    let pos = v4p::owned(p.chain_id, book, id, owner)?;
    events::progress(1);
    let w = v4p::Withdrawal {
        chain_id: p.chain_id,
        position: &pos,
        liquidity: 0,
        burn: false,
        slippage_bps: 1,
        deadline: deadline(p.chain_id, 600)?,
    };
    let out = v4p::withdraw(book, &w)?;
    if out.total.0.is_zero() && out.total.1.is_zero() {
        return Err(invalid_params(format!("V4 position {id} has no fees to collect yet")));
    }
    events::progress(2);
    let (t0, t1) = (&pos.pool.token0, &pos.pool.token1);
    let expected = CollectOutcome {
        balance_changes: received(t0, t1, out.total),
        position_id: id.to_string(),
        fees: Amounts::new(t0, t1, out.total.0, out.total.1),
    };
    Ok(WritePlan { calls: vec![out.call], expected_outcome_json: json(&expected)? })
}
