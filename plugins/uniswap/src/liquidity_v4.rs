//! V4 liquidity: positions are NFTs of the PositionManager, changed through
//! `modifyLiquidities(actions, params)` — mint or increase (then settle what is owed, paid
//! through Permit2), decrease or burn (then take the tokens to the wallet), collect (a decrease
//! of zero, then take). The tokens moved come from simulating the exact calls as the wallet.

use crate::book::Book;
use crate::math::{
    amounts_for_liquidity, check_slippage, liquidity_for_amounts, liquidity_for_value, max_in, min_out,
    sqrt_price_at_tick,
};
use crate::v4::{self, PoolKey, V4Pool, pool_id};
use alloy_primitives::{Address, B256, Bytes, I256, U256};
use alloy_sol_types::SolValue;
use bardo_sdk::abi::{decode_log, tx_call, wire};
use bardo_sdk::erc20::{self, Authority, BalanceChange, NftChange, Token};
use bardo_sdk::errors::{chain_not_supported, error, internal, invalid_params, not_found};
use bardo_sdk::uniswap::v4::{
    MintPosition, ModifyLiquidity, currency, getPoolAndPositionInfoCall, getPositionLiquidityCall,
    position_ticks,
};
use bardo_sdk::{ChainId, Error, ErrorCode, PlannedCall, Receipt, TxCall};
use serde::Serialize;

alloy_sol_types::sol! {
    function modifyLiquidities(bytes unlockData, uint256 deadline) external payable;
    function nextTokenId() external view returns (uint256);
    function poolKeys(bytes25 poolId) external view returns (address currency0, address currency1, uint24 fee,
        int24 tickSpacing, address hooks);
}

/// The position NFT's `Transfer` (ERC-721: the id is indexed, unlike ERC-20's amount).
pub mod nft {
    alloy_sol_types::sol! {
        event Transfer(address indexed from, address indexed to, uint256 indexed id);
    }
}

/// `Actions.sol` of v4-periphery.
pub(crate) mod action {
    pub const INCREASE_LIQUIDITY: u8 = 0x00;
    pub const DECREASE_LIQUIDITY: u8 = 0x01;
    pub const MINT_POSITION: u8 = 0x02;
    pub const BURN_POSITION: u8 = 0x03;
    pub const SETTLE: u8 = 0x0b;
    pub const SETTLE_PAIR: u8 = 0x0d;
    pub const TAKE_PAIR: u8 = 0x11;
    pub const CLOSE_CURRENCY: u8 = 0x12;
    pub const SWEEP: u8 = 0x14;
}

/// An amount of each of a pool's tokens, base units.
pub type Pair = (U256, U256);

/// The router's placeholder for "whoever called": the wallet.
const MSG_SENDER: Address = Address::with_last_byte(1);

/// A V4 position as the PositionManager stores it.
#[derive(Debug, Clone)]
pub struct V4Position {
    pub id: U256,
    pub owner: Address,
    pub pool: V4Pool,
    pub tick_lower: i32,
    pub tick_upper: i32,
    pub liquidity: u128,
}

/// The PositionManager, or why this chain has none.
pub fn manager(chain_id: ChainId, book: &Book) -> Result<Address, Error> {
    book.v4_position_manager.ok_or_else(|| {
        chain_not_supported(format!(
            "chain {chain_id} has no Uniswap V4 PositionManager configured; add `v4_position_manager` under \
             `[settings] uniswap`, or use version v3"
        ))
    })
}

/// Read V4 position `id`; `not-found` when it does not exist (or was burned).
pub fn position(chain_id: ChainId, book: &Book, id: U256) -> Result<V4Position, Error> {
    let posm = manager(chain_id, book)?;
    let gone = || {
        not_found(format!("V4 position {id} does not exist on chain {chain_id} (never minted, or burned)"))
    };
    let owner =
        match bardo_sdk::abi::eth_call(chain_id, posm, &bardo_sdk::uniswap::ownerOfCall { tokenId: id }) {
            Ok(owner) => owner,
            Err(e) if e.code == ErrorCode::Reverted => return Err(gone()),
            Err(e) => return Err(e),
        };
    let stored = bardo_sdk::abi::eth_call(chain_id, posm, &getPoolAndPositionInfoCall { tokenId: id })?;
    if stored.poolKey.tickSpacing.is_zero() {
        return Err(gone());
    }
    let key = stored.poolKey;
    let (t0, t1) = (currency(chain_id, key.currency0)?, currency(chain_id, key.currency1)?);
    let params = (key.fee.to::<u32>(), key.tickSpacing.as_i32(), key.hooks);
    let pool = v4::hooked_pool(chain_id, book, &t0, &t1, params)?
        .ok_or_else(|| internal(format!("V4 position {id}'s pool is not initialized")))?;
    let liquidity = bardo_sdk::abi::eth_call(chain_id, posm, &getPositionLiquidityCall { tokenId: id })?;
    let (tick_lower, tick_upper) = position_ticks(stored.info);
    Ok(V4Position { id, owner, pool, tick_lower, tick_upper, liquidity })
}

/// The pool key of `pool`.
pub(crate) fn key(pool: &V4Pool) -> PoolKey {
    v4::pool_key(&pool.token0, &pool.token1, pool.fee, pool.key.tick_spacing, pool.key.hooks)
}

/// `modifyLiquidities` of `actions`, each with its ABI-encoded params.
pub(crate) fn modify(chain_id: ChainId, posm: Address, actions: &[(u8, Vec<u8>)], deadline: U256) -> TxCall {
    let codes: Vec<u8> = actions.iter().map(|(a, _)| *a).collect();
    let params: Vec<Bytes> = actions.iter().map(|(_, p)| Bytes::from(p.clone())).collect();
    let unlock = (Bytes::from(codes), params).abi_encode_params();
    tx_call(chain_id, posm, &modifyLiquiditiesCall { unlockData: unlock.into(), deadline })
}

/// Take both of `pool`'s currencies to the wallet.
fn take_pair(pool: &V4Pool) -> (u8, Vec<u8>) {
    (action::TAKE_PAIR, (pool.token0.address, pool.token1.address, MSG_SENDER).abi_encode_params())
}

pub(crate) fn no_hook_data() -> Bytes {
    Bytes::new()
}

/// How the wallet's balances move when `calls` run (every call must succeed): signed base
/// units of `token0` and `token1`.
pub fn simulate(
    chain_id: ChainId,
    owner: Address,
    calls: &[TxCall],
    pool: &V4Pool,
) -> Result<(I256, I256), Error> {
    let sim = bardo_sdk::simulate::run(chain_id, &wire(&owner), calls)?;
    if let Some((i, failed)) = sim.outcomes.iter().enumerate().find(|(_, o)| !o.success) {
        return Err(error(
            ErrorCode::Reverted,
            format!(
                "step {} of {} reverts in simulation ({}); check the amounts, the range and the balances",
                i + 1,
                calls.len(),
                bardo_sdk::abi::revert_reason(&failed.output)
            ),
        ));
    }
    let delta = |token: Address| -> I256 {
        sim.balance_deltas
            .iter()
            .find(|d| d.token.as_deref().and_then(|t| t.parse::<Address>().ok()).unwrap_or_default() == token)
            .and_then(|d| d.delta.parse().ok())
            .unwrap_or_default()
    };
    Ok((delta(pool.token0.address), delta(pool.token1.address)))
}

/// Base units received (positive) from a signed delta; zero when it is an outflow.
pub fn inflow(delta: I256) -> U256 {
    if delta.is_negative() { U256::ZERO } else { delta.into_raw() }
}

/// Base units spent (positive) from a signed delta; zero when it is an inflow.
pub(crate) fn outflow(delta: I256) -> U256 {
    if delta.is_negative() { delta.unsigned_abs() } else { U256::ZERO }
}

/// A change of a position's liquidity the receipts show (the PoolManager's `ModifyLiquidity`
/// from the position manager).
pub struct Modification {
    pub pool_id: B256,
    pub delta: I256,
    /// The position's token id.
    pub salt: U256,
}

/// Every change of a position of `posm` in the receipts.
pub fn modifications(receipts: &[Receipt], posm: Address) -> Vec<Modification> {
    receipts
        .iter()
        .flat_map(|r| &r.logs)
        .filter_map(decode_log::<ModifyLiquidity>)
        .filter(|e| e.sender == posm)
        .map(|e| Modification { pool_id: e.id, delta: e.liquidityDelta, salt: U256::from_be_bytes(e.salt.0) })
        .collect()
}

/// The tokens of the pool `id`, from the key the position manager keeps for every pool it
/// minted in (it outlives burned positions).
pub fn pool_tokens(chain_id: ChainId, posm: Address, id: B256) -> Result<(Token, Token), Error> {
    let short = alloy_primitives::FixedBytes::<25>::from_slice(&id[..25]);
    let key = bardo_sdk::abi::eth_call(chain_id, posm, &poolKeysCall { poolId: short })?;
    Ok((currency(chain_id, key.currency0)?, currency(chain_id, key.currency1)?))
}

/// The position the receipts minted to `owner`, if any.
pub fn minted(receipts: &[Receipt], posm: Address, owner: Address) -> Option<U256> {
    receipts
        .iter()
        .flat_map(|r| &r.logs)
        .filter(|l| l.address.parse::<Address>().ok() == Some(posm))
        .filter_map(decode_log::<nft::Transfer>)
        .find(|t| t.from.is_zero() && t.to == owner)
        .map(|t| t.id)
}

/// The wallet's net movement of `token` in the receipts (ERC-20 `Transfer`s; native ETH is
/// not logged and reads as zero).
pub fn moved(receipts: &[Receipt], token: &Token, owner: Address) -> BalanceChange {
    let logs: Vec<bardo_sdk::Log> = receipts.iter().flat_map(|r| r.logs.clone()).collect();
    let (received, sent) = erc20::transfers(&logs, token.address, owner);
    BalanceChange::net(token.address, received, sent)
}

/// What adding liquidity to a V4 pool plans.
pub struct Deposit<'a> {
    pub chain_id: ChainId,
    pub owner: Address,
    pub pool: &'a V4Pool,
    /// `None`: mint a new position in `ticks`; `Some`: increase this one.
    pub existing: Option<U256>,
    pub ticks: (i32, i32),
    /// The most of each token to deposit, base units (token0, token1).
    pub most: (U256, U256),
    pub slippage_bps: u32,
    pub deadline: U256,
}

/// A planned deposit.
pub struct Planned {
    pub calls: Vec<PlannedCall>,
    pub id: U256,
    pub liquidity: u128,
    pub deltas: (I256, I256),
    pub authorities: Vec<Authority>,
}

/// Plan a mint or increase: the liquidity the amounts less the slippage buy at the current
/// price (so a price move within it still fits), simulated as the wallet with the amounts as
/// maximums; then the maximums what it pays plus the slippage, with Permit2 approvals of the
/// position manager for them when short.
pub fn deposit(book: &Book, d: &Deposit<'_>) -> Result<Planned, Error> {
    check_slippage(d.slippage_bps)?;
    let posm = manager(d.chain_id, book)?;
    let pool = d.pool;
    if pool.token0.address.is_zero() {
        return Err(error(
            ErrorCode::InvalidParams,
            "V4 positions in native-ETH pools are not supported yet (the host values a position from the \
             tokens the wallet pays the pool manager, and native ETH is not logged); use the WETH pool",
        ));
    }
    let (lower, upper) = d.ticks;
    let keep = |a: U256| a * U256::from(10_000 - d.slippage_bps) / U256::from(10_000u32);
    let liquidity = liquidity_for_amounts(
        pool.sqrt_price_x96,
        sqrt_price_at_tick(lower)?,
        sqrt_price_at_tick(upper)?,
        keep(d.most.0),
        keep(d.most.1),
    )
    .ok_or_else(|| {
        invalid_params("the amounts buy more liquidity than one position holds (a uint128); deposit less")
    })?;
    if liquidity == 0 {
        return Err(invalid_params(format!(
            "the amounts buy no liquidity in ticks {lower}..{upper} at the pool's price (tick {}); deposit more, \
             or of the token the range needs",
            pool.tick
        )));
    }
    let amount = |a: U256| u128::try_from(a).map_err(|_| invalid_params("the amount is too large for V4"));
    for (token, most) in [(&pool.token0, d.most.0), (&pool.token1, d.most.1)] {
        if !most.is_zero() {
            erc20::require_balance(d.chain_id, token, d.owner, most)?;
        }
    }
    let id = match d.existing {
        None => bardo_sdk::abi::eth_call(d.chain_id, posm, &nextTokenIdCall {})?,
        Some(id) => id,
    };
    // What that liquidity costs, simulated with the amounts offered as maximums (a hook the
    // operator trusts may take its fee on top of the position math); then the maximums become
    // what it costs plus the slippage, never more than offered: a maximum at the amounts
    // offered would let a pool moved first take all of the side the range needs less of.
    let offered = deposit_calls(d, posm, id, liquidity, (amount(d.most.0)?, amount(d.most.1)?))?;
    let mut sim: Vec<TxCall> = offered.0.iter().map(|c: &PlannedCall| c.call.clone()).collect();
    sim.push(offered.2);
    let deltas = simulate(d.chain_id, d.owner, &sim, pool)?;
    let max =
        |delta: I256, most: U256| amount(max_in(outflow(delta) + U256::from(1u8), d.slippage_bps).min(most));
    let (mut calls, authorities, call) =
        deposit_calls(d, posm, id, liquidity, (max(deltas.0, d.most.0)?, max(deltas.1, d.most.1)?))?;
    let (t0, t1) = (&pool.token0, &pool.token1);
    calls.push(PlannedCall {
        call,
        description: format!(
            "{} {liquidity} liquidity in V4 {}/{} (fee {}, spacing {}) ticks {lower}..{upper}: pay {} {} + {} {}",
            if d.existing.is_some() { format!("add to position {id}:") } else { "mint a position of".into() },
            t0.symbol,
            t1.symbol,
            pool.fee,
            pool.key.tick_spacing,
            bardo_sdk::units::format_units(outflow(deltas.0), t0.decimals),
            t0.symbol,
            bardo_sdk::units::format_units(outflow(deltas.1), t1.decimals),
            t1.symbol,
        ),
    });
    Ok(Planned { calls, id, liquidity, deltas, authorities })
}

/// A deposit of `liquidity` taking at most `max` of each token: the Permit2 approvals of the
/// position manager it needs (with the authorities they leave), and the `modifyLiquidities` call
/// that mints position `id` or adds to it.
fn deposit_calls(
    d: &Deposit<'_>,
    posm: Address,
    id: U256,
    liquidity: u128,
    (max0, max1): (u128, u128),
) -> Result<(Vec<PlannedCall>, Vec<Authority>, TxCall), Error> {
    let pool = d.pool;
    let (lower, upper) = d.ticks;
    let expiration = d.deadline.to::<u64>();
    let mut calls = Vec::new();
    let mut authorities = Vec::new();
    for (token, amount) in [(&pool.token0, U256::from(max0)), (&pool.token1, U256::from(max1))] {
        if amount.is_zero() {
            continue;
        }
        let (approve, granted) = bardo_sdk::permit2::approvals_if_short(
            d.chain_id,
            token,
            d.owner,
            posm,
            amount,
            expiration,
            "the V4 position manager",
        )?;
        calls.extend(approve);
        authorities.extend(granted);
    }
    let actions = match d.existing {
        None => {
            let mint = MintPosition {
                poolKey: key(pool),
                tickLower: alloy_primitives::aliases::I24::try_from(lower).unwrap_or_default(),
                tickUpper: alloy_primitives::aliases::I24::try_from(upper).unwrap_or_default(),
                liquidity: U256::from(liquidity),
                amount0Max: max0,
                amount1Max: max1,
                owner: d.owner,
                hookData: no_hook_data(),
            };
            let settle = (pool.token0.address, pool.token1.address).abi_encode_params();
            vec![(action::MINT_POSITION, mint.abi_encode_params()), (action::SETTLE_PAIR, settle)]
        }
        // An increase first credits the position's uncollected fees, which can leave a currency
        // owed to the wallet rather than by it: CLOSE_CURRENCY settles or takes, whichever it is.
        Some(_) => vec![
            (
                action::INCREASE_LIQUIDITY,
                (id, U256::from(liquidity), max0, max1, no_hook_data()).abi_encode_params(),
            ),
            (action::CLOSE_CURRENCY, (pool.token0.address,).abi_encode_params()),
            (action::CLOSE_CURRENCY, (pool.token1.address,).abi_encode_params()),
        ],
    };
    Ok((calls, authorities, modify(d.chain_id, posm, &actions, d.deadline)))
}

/// What a withdrawal from a V4 position plans.
pub struct Withdrawal<'a> {
    pub chain_id: ChainId,
    pub position: &'a V4Position,
    /// Liquidity to remove (zero: collect fees only).
    pub liquidity: u128,
    /// Burn the position NFT (all its liquidity goes).
    pub burn: bool,
    pub slippage_bps: u32,
    pub deadline: U256,
}

/// A planned withdrawal: the call, and the wallet's deltas (principal and fees) and principal
/// alone.
pub struct Withdrawn {
    pub call: PlannedCall,
    pub total: (U256, U256),
    pub principal: (U256, U256),
}

/// The first action of a withdrawal: the decrease, or the burn.
fn withdrawal(w: &Withdrawal<'_>, min0: u128, min1: u128) -> (u8, Vec<u8>) {
    let id = w.position.id;
    if w.burn {
        (action::BURN_POSITION, (id, min0, min1, no_hook_data()).abi_encode_params())
    } else {
        let liquidity = U256::from(w.liquidity);
        (action::DECREASE_LIQUIDITY, (id, liquidity, min0, min1, no_hook_data()).abi_encode_params())
    }
}

/// `(everything the wallet receives, the principal part of it)` per token, from simulating
/// the withdrawal and a fees-only collect as the position's owner.
fn withdrawal_amounts(posm: Address, w: &Withdrawal<'_>) -> Result<(Pair, Pair), Error> {
    let pos = w.position;
    let take = take_pair(&pos.pool);
    let all = modify(w.chain_id, posm, &[withdrawal(w, 0, 0), take.clone()], w.deadline);
    let total = simulate(w.chain_id, pos.owner, &[all], &pos.pool)?;
    let collect = Withdrawal { liquidity: 0, burn: false, ..*w };
    let fees_only = modify(w.chain_id, posm, &[withdrawal(&collect, 0, 0), take], w.deadline);
    let fees = simulate(w.chain_id, pos.owner, &[fees_only], &pos.pool)?;
    let total = (inflow(total.0), inflow(total.1));
    Ok((total, (total.0.saturating_sub(inflow(fees.0)), total.1.saturating_sub(inflow(fees.1)))))
}

/// Plan a decrease (or a burn) and take everything to the wallet; minimum principal amounts
/// from simulating it, less the slippage.
pub fn withdraw(book: &Book, w: &Withdrawal<'_>) -> Result<Withdrawn, Error> {
    let posm = manager(w.chain_id, book)?;
    let pos = w.position;
    let (total, principal) = withdrawal_amounts(posm, w)?;
    let bound = |used: U256| -> Result<u128, Error> {
        if used.is_zero() {
            return Ok(0);
        }
        u128::try_from(min_out(used, w.slippage_bps)?).map_err(|_| internal("a V4 amount over 128 bits"))
    };
    let (t0, t1) = (&pos.pool.token0, &pos.pool.token1);
    let fmt = |a: U256, t: &Token| format!("{} {}", bardo_sdk::units::format_units(a, t.decimals), t.symbol);
    let got = format!("{} + {}", fmt(total.0, t0), fmt(total.1, t1));
    let call = PlannedCall {
        call: modify(
            w.chain_id,
            posm,
            &[withdrawal(w, bound(principal.0)?, bound(principal.1)?), take_pair(&pos.pool)],
            w.deadline,
        ),
        description: match (w.burn, w.liquidity) {
            (true, _) => format!("burn V4 position {} and take {got} to the wallet", pos.id),
            (false, 0) => format!("collect V4 position {}'s fees: {got}", pos.id),
            (false, l) => {
                format!("remove {l} liquidity from V4 position {} and take {got} to the wallet", pos.id)
            }
        },
    };
    Ok(Withdrawn { call, total, principal })
}

/// The NFT a burn gives up.
pub fn burned(posm: Address, id: U256) -> NftChange {
    NftChange { collection: posm, id: Some(id.to_string()), gained: false }
}

/// A position's value now, as the contracts compute it (simulated as its owner): `(principal,
/// uncollected fees)` per token.
pub fn amounts(
    chain_id: ChainId,
    book: &Book,
    pos: &V4Position,
    deadline: U256,
) -> Result<(Pair, Pair), Error> {
    let w = Withdrawal {
        chain_id,
        position: pos,
        liquidity: pos.liquidity,
        burn: false,
        slippage_bps: 1,
        deadline,
    };
    let (total, principal) = withdrawal_amounts(manager(chain_id, book)?, &w)?;
    Ok((principal, (total.0 - principal.0, total.1 - principal.1)))
}

/// The wallet must own the position it changes.
pub fn owned(chain_id: ChainId, book: &Book, id: U256, owner: Address) -> Result<V4Position, Error> {
    let pos = position(chain_id, book, id)?;
    if pos.owner != owner {
        return Err(error(
            ErrorCode::Denied,
            format!("V4 position {id} belongs to {}, not to this wallet ({owner})", pos.owner),
        ));
    }
    Ok(pos)
}

/// The id of `pool` for output.
pub fn id_of(pool: &V4Pool) -> B256 {
    pool_id(&key(pool))
}

/// V4 fields of a position's output.
#[derive(Debug, Serialize)]
pub struct V4Fields {
    pub pool_id: String,
    pub tick_spacing: i32,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub hooks: Address,
}

impl V4Fields {
    pub fn of(pool: &V4Pool) -> Self {
        Self { pool_id: id_of(pool).to_string(), tick_spacing: pool.key.tick_spacing, hooks: pool.key.hooks }
    }
}

/// What moving a V4 position to a new range plans.
pub struct Move<'a> {
    pub chain_id: ChainId,
    pub position: &'a V4Position,
    pub ticks: (i32, i32),
    /// Keep the value: the wallet pays what the new range needs beyond the credits.
    pub top_up: bool,
    pub slippage_bps: u32,
    pub deadline: U256,
}

/// A planned move: the Permit2 approvals a top-up needs, then one `modifyLiquidities` that
/// burns the position, mints the new one from what the burn credits (principal and fees) and
/// settles or takes the rest.
pub struct Moved {
    pub calls: Vec<PlannedCall>,
    pub authorities: Vec<Authority>,
    /// Everything the burn credits, per token (principal and fees).
    pub out: Pair,
    /// The wallet's net change per token (the top-up negative, the rest positive).
    pub deltas: (I256, I256),
    pub id: U256,
    pub liquidity: u128,
}

/// Plan a move in one unlock: `BURN_POSITION` (minimum principal: simulated less the slippage),
/// `MINT_POSITION` of the liquidity worth the credits at the pool's price (`top_up`), or of what
/// the credits alone buy, less the slippage either way (its maximums what it takes plus the
/// slippage), and `CLOSE_CURRENCY` of each token — the PoolManager nets the burn's credits
/// against the mint's debts, the wallet pays the difference through Permit2 or takes the rest.
pub fn move_position(book: &Book, m: &Move<'_>) -> Result<Moved, Error> {
    check_slippage(m.slippage_bps)?;
    let posm = manager(m.chain_id, book)?;
    let pos = m.position;
    let pool = &pos.pool;
    let (principal, fees) = amounts(m.chain_id, book, pos, m.deadline)?;
    let out = (principal.0 + fees.0, principal.1 + fees.1);
    let keep = |a: U256| a * U256::from(10_000 - m.slippage_bps) / U256::from(10_000u32);
    let (lower, upper) = m.ticks;
    let (sa, sb) = (sqrt_price_at_tick(lower)?, sqrt_price_at_tick(upper)?);
    let now = pool.sqrt_price_x96;
    let liquidity = if m.top_up {
        liquidity_for_value(now, sa, sb, keep(out.0), keep(out.1))
    } else {
        liquidity_for_amounts(now, sa, sb, keep(out.0), keep(out.1))
    }
    .unwrap_or(0);
    if liquidity == 0 {
        return Err(invalid_params(format!(
            "what V4 position {} holds buys no liquidity in ticks {lower}..{upper} at the pool's price (tick {}); \
             let the wallet pay the other token (`top_up`: true), or pick a range on the held token's side",
            pos.id, pool.tick
        )));
    }
    let need = amounts_for_liquidity(now, sa, sb, liquidity);
    let cap = |a: U256| u128::try_from(a).map_err(|_| invalid_params("the amount is too large for V4"));
    let most =
        (max_in(need.0 + U256::from(1u8), m.slippage_bps), max_in(need.1 + U256::from(1u8), m.slippage_bps));
    let mut calls = Vec::new();
    let mut authorities = Vec::new();
    let expiration = m.deadline.to::<u64>();
    for (token, most, out) in [(&pool.token0, most.0, out.0), (&pool.token1, most.1, out.1)] {
        if most <= out {
            continue;
        }
        erc20::require_balance(m.chain_id, token, pos.owner, most - out)?;
        let (approve, granted) = bardo_sdk::permit2::approvals_if_short(
            m.chain_id,
            token,
            pos.owner,
            posm,
            most - out,
            expiration,
            "the V4 position manager",
        )?;
        calls.extend(approve);
        authorities.extend(granted);
    }
    let id = bardo_sdk::abi::eth_call(m.chain_id, posm, &nextTokenIdCall {})?;
    let call = |min: (u128, u128), max: (u128, u128)| {
        let mint = MintPosition {
            poolKey: key(pool),
            tickLower: alloy_primitives::aliases::I24::try_from(lower).unwrap_or_default(),
            tickUpper: alloy_primitives::aliases::I24::try_from(upper).unwrap_or_default(),
            liquidity: U256::from(liquidity),
            amount0Max: max.0,
            amount1Max: max.1,
            owner: pos.owner,
            hookData: no_hook_data(),
        };
        let actions = [
            (action::BURN_POSITION, (pos.id, min.0, min.1, no_hook_data()).abi_encode_params()),
            (action::MINT_POSITION, mint.abi_encode_params()),
            (action::CLOSE_CURRENCY, (pool.token0.address,).abi_encode_params()),
            (action::CLOSE_CURRENCY, (pool.token1.address,).abi_encode_params()),
        ];
        modify(m.chain_id, posm, &actions, m.deadline)
    };
    let bound = |used: U256| -> Result<u128, Error> {
        if used.is_zero() { Ok(0) } else { cap(min_out(used, m.slippage_bps)?) }
    };
    let call = call((bound(principal.0)?, bound(principal.1)?), (cap(most.0)?, cap(most.1)?));
    let mut sim: Vec<TxCall> = calls.iter().map(|c: &PlannedCall| c.call.clone()).collect();
    sim.push(call.clone());
    let deltas = simulate(m.chain_id, pos.owner, &sim, pool)?;
    let (t0, t1) = (&pool.token0, &pool.token1);
    let fmt = |a: U256, t: &Token| format!("{} {}", bardo_sdk::units::format_units(a, t.decimals), t.symbol);
    let signed = |d: I256, t: &Token| {
        if d.is_negative() {
            format!("pays {}", fmt(d.unsigned_abs(), t))
        } else {
            format!("gets {}", fmt(inflow(d), t))
        }
    };
    calls.push(PlannedCall {
        call,
        description: format!(
            "move V4 position {} to ticks {lower}..{upper} in one transaction: burn it ({} + {} with fees), mint \
             {liquidity} liquidity in its pool; the wallet {} and {}",
            pos.id,
            fmt(out.0, t0),
            fmt(out.1, t1),
            signed(deltas.0, t0),
            signed(deltas.1, t1)
        ),
    });
    Ok(Moved { calls, authorities, out, deltas, id, liquidity })
}

/// A planned V4 compound.
pub struct Compounded {
    pub call: PlannedCall,
    /// The position's uncollected fees.
    pub fees: Pair,
    /// The wallet's net change: what of the fees the range could not use.
    pub deltas: (I256, I256),
    pub liquidity: u128,
}

/// Plan a compound in one unlock: `INCREASE_LIQUIDITY` of what the position's fees less the
/// slippage buy at the pool's price — the increase is credited the fees first, and its maximums
/// are the fees, so the wallet never pays — then `CLOSE_CURRENCY` of each token takes the rest.
pub fn compound(
    book: &Book,
    chain_id: ChainId,
    pos: &V4Position,
    slippage_bps: u32,
    deadline: U256,
) -> Result<Compounded, Error> {
    check_slippage(slippage_bps)?;
    let posm = manager(chain_id, book)?;
    let pool = &pos.pool;
    let (_, fees) = amounts(chain_id, book, pos, deadline)?;
    if fees.0.is_zero() && fees.1.is_zero() {
        return Err(invalid_params(format!("V4 position {} has no fees to compound yet", pos.id)));
    }
    let keep = |a: U256| a * U256::from(10_000 - slippage_bps) / U256::from(10_000u32);
    let (sa, sb) = (sqrt_price_at_tick(pos.tick_lower)?, sqrt_price_at_tick(pos.tick_upper)?);
    let liquidity =
        liquidity_for_amounts(pool.sqrt_price_x96, sa, sb, keep(fees.0), keep(fees.1)).unwrap_or(0);
    if liquidity == 0 {
        return Err(invalid_params(format!(
            "V4 position {}'s fees buy no liquidity in its range at the pool's price; collect them instead",
            pos.id
        )));
    }
    let cap = |a: U256| u128::try_from(a).map_err(|_| invalid_params("the amount is too large for V4"));
    // Maximums: what the liquidity costs plus the slippage (a looser one would let a pool moved
    // first take more of a side), never more than the fees.
    let need = amounts_for_liquidity(pool.sqrt_price_x96, sa, sb, liquidity);
    let most = |need: U256, fee: U256| cap(max_in(need + U256::from(1u8), slippage_bps).min(fee));
    let actions = [
        (
            action::INCREASE_LIQUIDITY,
            (pos.id, U256::from(liquidity), most(need.0, fees.0)?, most(need.1, fees.1)?, no_hook_data())
                .abi_encode_params(),
        ),
        (action::CLOSE_CURRENCY, (pool.token0.address,).abi_encode_params()),
        (action::CLOSE_CURRENCY, (pool.token1.address,).abi_encode_params()),
    ];
    let call = modify(chain_id, posm, &actions, deadline);
    let deltas = simulate(chain_id, pos.owner, std::slice::from_ref(&call), pool)?;
    let (t0, t1) = (&pool.token0, &pool.token1);
    let fmt = |a: U256, t: &Token| format!("{} {}", bardo_sdk::units::format_units(a, t.decimals), t.symbol);
    let call = PlannedCall {
        call,
        description: format!(
            "compound V4 position {} in one transaction: its fees {} + {} back in as {liquidity} liquidity, the rest \
             ({} + {}) to the wallet",
            pos.id,
            fmt(fees.0, t0),
            fmt(fees.1, t1),
            fmt(inflow(deltas.0), t0),
            fmt(inflow(deltas.1), t1)
        ),
    };
    Ok(Compounded { call, fees, deltas, liquidity })
}

/// One `modifyLiquidities` collecting the fees of every position in `ids` (a decrease of nothing
/// each credits its fees) and taking each of `currencies` to the wallet.
pub fn collect_all(
    chain_id: ChainId,
    book: &Book,
    ids: &[U256],
    currencies: &[Address],
) -> Result<TxCall, Error> {
    let posm = manager(chain_id, book)?;
    let mut actions: Vec<(u8, Vec<u8>)> = ids
        .iter()
        .map(|id| {
            (action::DECREASE_LIQUIDITY, (*id, U256::ZERO, 0u128, 0u128, no_hook_data()).abi_encode_params())
        })
        .collect();
    actions.extend(currencies.iter().map(|c| (action::CLOSE_CURRENCY, (*c,).abi_encode_params())));
    let deadline = U256::from(bardo_sdk::chain::block_timestamp(chain_id, None)? + 600);
    Ok(modify(chain_id, posm, &actions, deadline))
}
