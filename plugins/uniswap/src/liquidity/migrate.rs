//! `uniswap_migrate_position`: a V3 position moved into a V4 pool of the same tokens in one
//! UniversalRouter transaction, as Uniswap's own migrator does it: the router decreases the V3
//! position, collects everything to V4's PositionManager and burns the NFT (commands
//! `V3_POSITION_MANAGER_CALL`, which the router allows only for a position its caller owns),
//! then has the PositionManager mint the V4 position to the wallet from what it holds and sweep
//! the rest back (`V4_POSITION_MANAGER_CALL`, which the router allows only to mint). The router
//! must be approved for the V3 NFT first (one `approve` of that id; the burn clears it).
//!
//! Bounds on chain: the decrease's minimums (the simulated principal less the slippage) and the
//! mint's maximums (what the new liquidity costs at V4's price plus the slippage, never more than
//! what the V3 position paid out): a V3 or V4 pool moved first cannot take more than that.

use super::{check_receipts, json, json_value, owned, write_def};
use crate::abi::*;
use crate::book::book;
use crate::liquidity_v4::{self as v4p, action};
use crate::math::{
    amounts_for_liquidity, check_slippage, liquidity_for_amounts, max_in, min_out, sqrt_price_at_tick,
};
use crate::read::{deadline, position_id};
use crate::router::executeCall;
use alloy_primitives::{Bytes, U256};
use alloy_sol_types::{SolCall, SolValue};
use bardo_sdk::abi::{eth_call, tx_call, wallet};
use bardo_sdk::erc20::{BalanceChange, NftChange};
use bardo_sdk::errors::{internal, invalid_params, not_found};
use bardo_sdk::uniswap::v4::MintPosition;
use bardo_sdk::{
    Error, Phase, PlannedCall, Receipt, RiskTier, ToolDef, TxCall, WritePlan, WriteTool, events,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

alloy_sol_types::sol! {
    function approve(address to, uint256 tokenId) external;
    function getApproved(uint256 tokenId) external view returns (address);
}

/// UniversalRouter commands (`Commands.sol`).
const V3_POSITION_MANAGER_CALL: u8 = 0x12;
const V4_POSITION_MANAGER_CALL: u8 = 0x14;
/// `ActionConstants.OPEN_DELTA`: settle whatever the pool manager is owed.
const OPEN_DELTA: U256 = U256::ZERO;

/// Params of `uniswap_migrate_position`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MigrateParams {
    /// Chain id.
    pub chain_id: u64,
    /// The V3 position NFT's id, decimal.
    pub position_id: String,
    /// The V4 pool's fee, hundredths of a bip (default: the V3 pool's).
    #[serde(default)]
    pub fee: Option<u32>,
    /// The V4 pool's tick spacing (default: the fee tier's standard one).
    #[serde(default)]
    pub tick_spacing: Option<i32>,
    /// The V4 pool's hooks contract (default: none). A hooked pool is used only if the operator
    /// trusts the hook.
    #[serde(default)]
    pub hooks: Option<String>,
    /// The V4 range's lower tick (default: the V3 position's); with `tick_upper` or not at all.
    #[serde(default)]
    pub tick_lower: Option<i32>,
    /// The V4 range's upper tick (default: the V3 position's).
    #[serde(default)]
    pub tick_upper: Option<i32>,
    /// Slippage tolerance in basis points (default 50).
    #[serde(default = "super::default_slippage")]
    pub slippage_bps: u32,
}

/// Expected / verified migration.
#[derive(Debug, Serialize)]
pub struct MigrateOutcome {
    /// What comes back to the wallet: what the V4 range did not use.
    pub balance_changes: Vec<BalanceChange>,
    /// The V3 NFT burned, the V4 one minted to the wallet.
    pub nfts: Vec<NftChange>,
    pub position_id: String,
    pub v4_position_id: String,
    pub v4_pool_id: String,
    pub tick_lower: i32,
    pub tick_upper: i32,
    /// The V4 position's liquidity.
    pub liquidity: String,
    /// What the V3 position paid out (principal and fees), base units of token0 and token1.
    pub withdrawn: (String, String),
    /// Transactions: the approval of the router (when needed) and the migration.
    pub transactions: usize,
}

pub struct MigratePosition;

impl WriteTool for MigratePosition {
    const NAME: &'static str = "uniswap_migrate_position";
    type Params = MigrateParams;

    fn def() -> ToolDef {
        write_def::<MigrateParams>(
            Self::NAME,
            "Plans moving a Uniswap V3 position into a V4 pool of the same two tokens in one UniversalRouter \
             transaction: the V3 liquidity and fees are withdrawn and the NFT burned, a V4 position in the \
             same range (or `tick_lower`/`tick_upper`) is minted to the wallet from them, and what the V4 \
             range does not use comes back to the wallet. One approval of the router for the V3 NFT comes \
             first. Bounds on chain: the V3 minimums and the V4 maximums, within `slippage_bps`.",
            RiskTier::High,
            "migrate_liquidity",
            &["read position", "find V4 pool", "simulate migration", "build calls"],
            &[(Phase::Thriving, "Migrate when the V4 pool's fees or hooks pay for the move.")],
        )
    }

    fn plan(p: MigrateParams) -> Result<WritePlan, Error> {
        check_slippage(p.slippage_bps)?;
        let (owner, book) = (wallet(p.chain_id)?, book(p.chain_id)?);
        let id = position_id(&p.position_id)?;
        let router = book.universal_router.ok_or_else(|| {
            bardo_sdk::errors::chain_not_supported(format!(
                "no UniversalRouter for chain {} in this plugin's settings (`universal_router`)",
                p.chain_id
            ))
        })?;
        let posm = v4p::manager(p.chain_id, &book)?;
        events::progress(0);
        let pos = owned(p.chain_id, &book, id, owner)?;
        if pos.liquidity == 0 {
            return Err(invalid_params(format!(
                "position {id} holds no liquidity to migrate; collect or close it"
            )));
        }
        events::progress(1);
        let key = crate::v4::key_params(p.fee.unwrap_or(pos.fee), p.tick_spacing, p.hooks.as_deref())?;
        let pool = crate::v4::hooked_pool(p.chain_id, &book, &pos.token0, &pos.token1, key)?.ok_or_else(|| {
            not_found(format!(
                "no V4 pool of {}/{} with fee {}, tick spacing {} and hooks {}; pick one `uniswap_get_pools_by_token_pair` lists",
                pos.token0.symbol, pos.token1.symbol, key.0, key.1, key.2
            ))
        })?;
        let ticks = match (p.tick_lower, p.tick_upper) {
            (Some(l), Some(u)) => (l, u),
            (None, None) => (pos.tick_lower, pos.tick_upper),
            _ => {
                return Err(invalid_params(
                    "give both `tick_lower` and `tick_upper`, or neither (the V3 range)",
                ));
            }
        };
        let spacing = pool.key.tick_spacing;
        if ticks.0 >= ticks.1 || ticks.0 % spacing != 0 || ticks.1 % spacing != 0 {
            return Err(invalid_params(format!(
                "ticks {}..{} are not a range on the V4 pool's spacing {spacing}; give `tick_lower` < `tick_upper`, \
                 multiples of {spacing}",
                ticks.0, ticks.1
            )));
        }
        events::progress(2);
        let deadline = deadline(p.chain_id, 600)?;
        // What the V3 position pays out: its principal (the decrease) and with fees (the collect).
        let decrease = |min: (U256, U256)| decreaseLiquidityCall {
            params: DecreaseLiquidityParams {
                tokenId: id,
                liquidity: pos.liquidity,
                amount0Min: min.0,
                amount1Min: min.1,
                deadline,
            },
        };
        let npm = book.position_manager;
        let probe = tx_call(p.chain_id, npm, &decrease((U256::ZERO, U256::ZERO)));
        let principal = bardo_sdk::abi::simulate_last::<decreaseLiquidityCall>(
            p.chain_id,
            owner,
            std::slice::from_ref(&probe),
        )?;
        let collect = super::collect_call(p.chain_id, npm, id, owner);
        let total = bardo_sdk::abi::simulate_last::<collectCall>(p.chain_id, owner, &[probe, collect])?;
        // The V4 liquidity those amounts buy at V4's price, less the slippage (a price that
        // moves within it still fits); what it costs, rounded up, plus the slippage, at most.
        let (a, b) = (sqrt_price_at_tick(ticks.0)?, sqrt_price_at_tick(ticks.1)?);
        let keep = |x: U256| x * U256::from(10_000 - p.slippage_bps) / U256::from(10_000u32);
        let liquidity = liquidity_for_amounts(pool.sqrt_price_x96, a, b, keep(total.amount0), keep(total.amount1))
            .filter(|l| *l > 0)
            .ok_or_else(|| {
                invalid_params(format!(
                    "what position {id} holds buys no V4 liquidity in ticks {}..{} at the V4 pool's price (tick {}): \
                     the range needs the token the position does not hold; pick a range around the price",
                    ticks.0, ticks.1, pool.tick
                ))
            })?;
        let need = amounts_for_liquidity(pool.sqrt_price_x96, a, b, liquidity);
        let most = |need: U256, paid: U256| -> Result<u128, Error> {
            u128::try_from(max_in(need + U256::from(1u8), p.slippage_bps).min(paid))
                .map_err(|_| invalid_params("the amounts are too large for V4"))
        };
        let bound = |x: U256| if x.is_zero() { Ok(U256::ZERO) } else { min_out(x, p.slippage_bps) };
        let mint = MintPosition {
            poolKey: v4p::key(&pool),
            tickLower: alloy_primitives::aliases::I24::try_from(ticks.0).unwrap_or_default(),
            tickUpper: alloy_primitives::aliases::I24::try_from(ticks.1).unwrap_or_default(),
            liquidity: U256::from(liquidity),
            amount0Max: most(need.0, total.amount0)?,
            amount1Max: most(need.1, total.amount1)?,
            owner,
            hookData: v4p::no_hook_data(),
        };
        let (c0, c1) = (pool.token0.address, pool.token1.address);
        let actions = [
            (action::MINT_POSITION, mint.abi_encode_params()),
            // Paid from what the PositionManager holds (the V3 collect), not from the wallet.
            (action::SETTLE, (c0, OPEN_DELTA, false).abi_encode_params()),
            (action::SETTLE, (c1, OPEN_DELTA, false).abi_encode_params()),
            (action::SWEEP, (c0, owner).abi_encode_params()),
            (action::SWEEP, (c1, owner).abi_encode_params()),
        ];
        let modify = v4p::modify(p.chain_id, posm, &actions, deadline).data;
        let v3_calls: [Vec<u8>; 3] = [
            decrease((bound(principal.amount0)?, bound(principal.amount1)?)).abi_encode(),
            collectCall {
                params: CollectParams {
                    tokenId: id,
                    recipient: posm,
                    amount0Max: u128::MAX,
                    amount1Max: u128::MAX,
                },
            }
            .abi_encode(),
            burnCall { tokenId: id }.abi_encode(),
        ];
        let commands = vec![
            V3_POSITION_MANAGER_CALL,
            V3_POSITION_MANAGER_CALL,
            V3_POSITION_MANAGER_CALL,
            V4_POSITION_MANAGER_CALL,
        ];
        let inputs: Vec<Bytes> = v3_calls.into_iter().chain([modify]).map(Bytes::from).collect();
        let execute =
            tx_call(p.chain_id, router, &executeCall { commands: commands.into(), inputs, deadline });
        let mut calls: Vec<PlannedCall> = Vec::new();
        if eth_call(p.chain_id, npm, &getApprovedCall { tokenId: id })? != router {
            calls.push(PlannedCall {
                call: tx_call(p.chain_id, npm, &approveCall { to: router, tokenId: id }),
                description: format!(
                    "approve the UniversalRouter {router} for V3 position {id} (the migration burns it)"
                ),
            });
        }
        let v4_id = eth_call(p.chain_id, posm, &v4p::nextTokenIdCall {})?;
        let mut sim: Vec<TxCall> = calls.iter().map(|c| c.call.clone()).collect();
        sim.push(execute.clone());
        let back = v4p::simulate(p.chain_id, owner, &sim, &pool)?;
        events::progress(3);
        let (t0, t1) = (&pool.token0, &pool.token1);
        calls.push(PlannedCall {
            call: execute,
            description: format!(
                "migrate V3 position {id} ({} {} + {} {} with fees) to a V4 {}/{} position (fee {}, spacing {spacing}) in \
                 ticks {}..{} of {liquidity} liquidity, the rest back to the wallet",
                bardo_sdk::units::format_units(total.amount0, t0.decimals),
                t0.symbol,
                bardo_sdk::units::format_units(total.amount1, t1.decimals),
                t1.symbol,
                t0.symbol,
                t1.symbol,
                pool.fee,
                ticks.0,
                ticks.1
            ),
        });
        let expected = MigrateOutcome {
            balance_changes: vec![
                BalanceChange::received(t0, v4p::inflow(back.0)),
                BalanceChange::received(t1, v4p::inflow(back.1)),
            ],
            nfts: vec![
                v4p::burned(npm, id),
                NftChange { collection: posm, id: Some(v4_id.to_string()), gained: true },
            ],
            position_id: id.to_string(),
            v4_position_id: v4_id.to_string(),
            v4_pool_id: pool.key.pool_id.to_string(),
            tick_lower: ticks.0,
            tick_upper: ticks.1,
            liquidity: liquidity.to_string(),
            withdrawn: (total.amount0.to_string(), total.amount1.to_string()),
            transactions: calls.len(),
        };
        Ok(WritePlan { calls, expected_outcome_json: json(&expected)? })
    }

    fn verify(p: MigrateParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        check_receipts(&receipts)?;
        let (owner, book) = (wallet(p.chain_id)?, book(p.chain_id)?);
        let id = position_id(&p.position_id)?;
        let posm = v4p::manager(p.chain_id, &book)?;
        let v4_id = v4p::minted(&receipts, posm, owner)
            .ok_or_else(|| internal("the receipts hold no V4 position minted to the wallet"))?;
        let pos = v4p::position(p.chain_id, &book, v4_id)?;
        let collected = bardo_sdk::abi::events::<Collect>(&receipts, book.position_manager)
            .into_iter()
            .find(|e| e.tokenId == id)
            .ok_or_else(|| internal("the receipts hold no Collect of the V3 position"))?;
        let (t0, t1) = (&pos.pool.token0, &pos.pool.token1);
        json_value(MigrateOutcome {
            balance_changes: vec![v4p::moved(&receipts, t0, owner), v4p::moved(&receipts, t1, owner)],
            nfts: vec![
                v4p::burned(book.position_manager, id),
                NftChange { collection: posm, id: Some(v4_id.to_string()), gained: true },
            ],
            position_id: id.to_string(),
            v4_position_id: v4_id.to_string(),
            v4_pool_id: pos.pool.key.pool_id.to_string(),
            tick_lower: pos.tick_lower,
            tick_upper: pos.tick_upper,
            liquidity: pos.liquidity.to_string(),
            withdrawn: (collected.amount0.to_string(), collected.amount1.to_string()),
            transactions: receipts.len(),
        })
    }
}
