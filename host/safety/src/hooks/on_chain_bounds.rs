//! `on-chain-bounds`: the worst case, enforced by the chain. A simulation shows what a plan does
//! on the state it forked; between the preview and the block that mines it anyone can move the
//! pools first (a sandwich), and no check of the host's stops that. What limits the damage is
//! what the calls make the contracts check: a swap's minimum out or maximum in (and a router's
//! minimum delivered, maximum settled), a V3 deposit's or withdrawal's minimum amounts, a V4
//! deposit's maximum payments and withdrawal's minimum principal. Every one of them must be no
//! looser than the simulated outcome less `[safety] max_slippage_bps`, and every asset a swap
//! gets must be bounded; a bound of 0, or none, is refused at preview, naming the call. What the
//! swaps' bounds guarantee is the permit's worst case: a commit whose receipts show less is an
//! outcome mismatch naming the shortfall in USD. Native ether and WETH count as one asset here
//! (routers wrap and unwrap between them). Pendle's router: each function's minimum PT, YT, LP
//! or token out, and a dual deposit's most PT.

mod calls;
mod pendle;

use super::{Decision, Findings, Proposal, SafetyHook, reject};
use crate::valuation::{Valuer, usd};
use alloy::primitives::{Address, B256, I256, Log, U256, b256, keccak256};
use alloy::sol_types::SolValue;
use bardo_core::error::ErrorCode;
use bardo_core::tool::PlannedCall;
use bardo_evm::simulate::CallOutcome;
use calls::{Bound, Layer, Liquidity, V4Action, Way};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

alloy::sol! {
    function poolManager() external view returns (address);
    function V3_POSITION_MANAGER() external view returns (address);
    function V4_POSITION_MANAGER() external view returns (address);
    function extsload(bytes32 slot) external view returns (bytes32);
}

mod v4_positions {
    alloy::sol! {
        struct PoolKey { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; }
        function getPoolAndPositionInfo(uint256 tokenId) external view returns (PoolKey poolKey, uint256 info);
        function getPositionLiquidity(uint256 tokenId) external view returns (uint128 liquidity);
    }
}

/// Default `[safety] max_slippage_bps`: 1 %.
pub const DEFAULT_MAX_SLIPPAGE_BPS: u32 = 100;

/// ERC-20 `Transfer(address indexed from, address indexed to, uint256 value)`.
const TRANSFER: B256 = b256!("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
/// WETH9's `Deposit(address indexed dst, uint256 wad)` and `Withdrawal(address indexed src, uint256 wad)`.
const WETH_DEPOSIT: B256 = b256!("0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c");
const WETH_WITHDRAWAL: B256 = b256!("0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65");
/// A V3 position manager's `IncreaseLiquidity` and `DecreaseLiquidity(uint256 indexed tokenId,
/// uint128 liquidity, uint256 amount0, uint256 amount1)`.
const INCREASE_LIQUIDITY: B256 = b256!("0x3067048beee31b25b2f1681f88dac838c8bba36af25bfb2b7cf7473a5847e35f");
const DECREASE_LIQUIDITY: B256 = b256!("0x26f6a048ee9138f2c0ce266f322cb99228e8d619ae2bff30c67f8dcf9d2377b4");
/// The PoolManager's storage slot of its `pools` mapping (`StateLibrary.POOLS_SLOT`).
const POOLS_SLOT: u8 = 6;

/// Which way a permit's worst case holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The wallet receives at least the amount.
    ReceivesAtLeast,
    /// The wallet pays at most the amount.
    PaysAtMost,
}

/// One guarantee the chain enforces on a permit's plan, whatever happens between the preview
/// and the block that mines it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorstCase {
    /// The token; none is ether (native or WETH, which routers turn into each other).
    pub asset: Option<Address>,
    /// Which way it holds.
    pub side: Side,
    /// Base units, decimal.
    pub amount: String,
    /// The calls and parameters that enforce it.
    pub enforced_by: String,
}

/// The hook (after the simulator).
#[derive(Debug, Clone)]
pub struct OnChainBounds {
    /// Trusted prices (a shortfall in USD) and the chain's WETH.
    pub valuer: Valuer,
    /// The allowlist with roles, per chain: which calls swap or move liquidity.
    pub roles: BTreeMap<u64, BTreeMap<Address, bardo_core::scope::Role>>,
    /// How far below the simulated outcome a bound may be, basis points.
    pub max_slippage_bps: u32,
}

/// A guarantee found in a group: the asset, which way, the amount, and what enforces it.
type Guarantee = (Option<Address>, Side, U256, String);

/// Calls that run as one transaction, with what they did.
struct Group<'a> {
    /// (index in the plan, the call).
    calls: Vec<(usize, &'a PlannedCall)>,
    logs: Vec<&'a Log>,
    native: I256,
}

/// What a group of calls moved in and out of the wallet, per asset (ether as none).
#[derive(Default)]
struct Flows {
    net: BTreeMap<Option<Address>, I256>,
}

impl Flows {
    fn of(group: &Group<'_>, wallet: Address, weth: Option<Address>) -> Self {
        let mut f = Flows::default();
        let me = wallet.into_word();
        for log in &group.logs {
            let t = log.topics();
            let Some(amount) = log.data.data.get(..32).map(|d| I256::from_raw(U256::from_be_slice(d))) else {
                continue;
            };
            let asset = norm(Some(log.address), weth);
            match (t.first(), t.len()) {
                (Some(&TRANSFER), 3) if log.data.data.len() == 32 => {
                    if t[1] == me {
                        f.add(asset, -amount);
                    }
                    if t[2] == me {
                        f.add(asset, amount);
                    }
                }
                (Some(&WETH_DEPOSIT), 2) if Some(log.address) == weth && t[1] == me => f.add(asset, amount),
                (Some(&WETH_WITHDRAWAL), 2) if Some(log.address) == weth && t[1] == me => {
                    f.add(asset, -amount)
                }
                _ => {}
            }
        }
        f.add(None, group.native);
        f
    }

    fn add(&mut self, asset: Option<Address>, delta: I256) {
        let e = self.net.entry(asset).or_default();
        *e = e.saturating_add(delta);
    }

    fn net(&self, asset: Option<Address>) -> I256 {
        self.net.get(&asset).copied().unwrap_or_default()
    }
}

/// `asset` with WETH counted as ether.
fn norm(asset: Option<Address>, weth: Option<Address>) -> Option<Address> {
    asset.filter(|a| Some(*a) != weth)
}

/// `amount` less `bps`, rounded down.
fn less(amount: U256, bps: u32) -> U256 {
    amount * U256::from(10_000u32.saturating_sub(bps)) / U256::from(10_000u32)
}

/// `amount` plus `bps`, rounded up, plus one base unit of rounding.
fn more(amount: U256, bps: u32) -> U256 {
    (amount * U256::from(10_000u32 + bps)).div_ceil(U256::from(10_000u32)) + U256::from(1u8)
}

/// The bound a group's calls set on `asset` one way: within a layer the bounds add up (a
/// split route); of the layers, the tighter holds.
fn combined(bounds: &[(usize, Bound)], asset: Option<Address>, way: Way) -> Option<(U256, String)> {
    let mut layers: BTreeMap<Layer, (U256, Vec<String>)> = BTreeMap::new();
    for (i, b) in bounds.iter().filter(|(_, b)| b.asset == asset && b.way == way) {
        let e = layers.entry(b.layer).or_default();
        e.0 = e.0.saturating_add(b.amount);
        e.1.push(format!("call {} {}", i + 1, b.what));
    }
    let pick = match way {
        Way::Out => layers.into_values().max_by_key(|(a, _)| *a),
        Way::In => layers.into_values().min_by_key(|(a, _)| *a),
    };
    pick.map(|(amount, named)| (amount, named.join(" + ")))
}

impl OnChainBounds {
    fn asset_name(&self, chain: u64, asset: Option<Address>) -> String {
        match asset {
            None => match self.valuer.weth(chain) {
                Some(weth) => format!("ether or WETH ({weth})"),
                None => "ether".into(),
            },
            Some(token) => match self.valuer.label(chain, Some(token)).0 {
                Some(symbol) => format!("{symbol} ({token})"),
                None => token.to_string(),
            },
        }
    }

    /// `amount` of `asset` in USD, or a note that it has no trusted price.
    fn worth(&self, chain: u64, asset: Option<Address>, amount: U256) -> String {
        let value = match asset {
            Some(token) => self.valuer.usd(chain, token, amount),
            None => self
                .valuer
                .signed_native_usd(chain, I256::try_from(amount).unwrap_or(I256::MAX))
                .map(|v| v.unsigned_abs()),
        };
        value.map(usd).unwrap_or_else(|_| "no trusted price".into())
    }

    /// Check one group's bounds against what it did; its worst cases, or why it is refused.
    fn group(&self, p: &Proposal<'_>, group: &Group<'_>) -> Result<Vec<Guarantee>, String> {
        let chain = p.chain_id;
        let weth = self.valuer.weth(chain);
        let roles = self.roles.get(&chain);
        let (mut bounds, mut liquidity, mut swaps) = (Vec::new(), Vec::new(), true);
        for &(i, call) in &group.calls {
            let role = roles.and_then(|r| r.get(&call.to)).copied().unwrap_or_default();
            let found = match role {
                bardo_core::scope::Role::PendleRouter => {
                    let market = |m| self.valuer.pendle_pt_yt(chain, m);
                    let pt_of_yt = |yt| self.valuer.pendle_pt_of_yt(chain, yt);
                    pendle::of_call(&call.data, &pendle::Reads { market: &market, pt_of_yt: &pt_of_yt })
                }
                _ => calls::of_call(role, &call.data),
            }
            .map_err(|e| format!("call {} {e}", i + 1))?;
            // Approvals move nothing; any other call that does not swap makes the group's gains
            // no longer the swaps' alone.
            swaps &= found.swaps
                || role == bardo_core::scope::Role::Erc20
                || role == bardo_core::scope::Role::Permit2;
            bounds.extend(found.bounds.into_iter().map(|b| (i, Bound { asset: norm(b.asset, weth), ..b })));
            liquidity.extend(found.liquidity.into_iter().map(|l| (i, call, l)));
        }
        let swaps = swaps && bounds.iter().any(|_| true);
        let flows = Flows::of(group, p.sender, weth);
        let s = self.max_slippage_bps;
        let mut worst = Vec::new();
        let describe = |i: usize| {
            let call = &p.plan.calls[i];
            format!("call {} of {} ({})", i + 1, p.plan.calls.len(), call.description)
        };
        for (&asset, &net) in &flows.net {
            if net.is_positive() {
                let got = net.unsigned_abs();
                let floor = less(got, s);
                match combined(&bounds, asset, Way::Out) {
                    Some((bound, named)) if bound >= floor => {
                        worst.push((asset, Side::ReceivesAtLeast, bound, named));
                    }
                    Some((bound, named)) => {
                        let first = bounds
                            .iter()
                            .find(|(_, b)| b.asset == asset && b.way == Way::Out)
                            .map(|(i, _)| *i);
                        return Err(format!(
                            "{} lets the wallet receive as little as {bound} of {} ({named}) where its simulation receives {got}: more than [safety] max_slippage_bps {s} below, so a sandwich could take up to {} of it; bound it at {floor} or more",
                            first.map_or_else(|| "the plan".into(), describe),
                            self.asset_name(chain, asset),
                            self.worth(chain, asset, got - bound.min(got)),
                        ));
                    }
                    None if swaps => {
                        return Err(format!(
                            "{} swaps into {} with no minimum the chain enforces (its simulation receives {got}): a sandwich could take all of it; set a minimum out of at least {floor}",
                            group.calls.first().map_or_else(|| "the plan".into(), |(i, _)| describe(*i)),
                            self.asset_name(chain, asset),
                        ));
                    }
                    None => {}
                }
            } else if net.is_negative() {
                let paid = net.unsigned_abs();
                let ceiling = more(paid, s);
                if let Some((bound, named)) = combined(&bounds, asset, Way::In) {
                    if bound > ceiling {
                        let first = bounds
                            .iter()
                            .find(|(_, b)| b.asset == asset && b.way == Way::In)
                            .map(|(i, _)| *i);
                        return Err(format!(
                            "{} lets the wallet pay as much as {bound} of {} ({named}) where its simulation pays {paid}: more than [safety] max_slippage_bps {s} above, so a sandwich could take up to {} more; bound it at {ceiling} or less",
                            first.map_or_else(|| "the plan".into(), describe),
                            self.asset_name(chain, asset),
                            self.worth(chain, asset, bound.saturating_sub(paid)),
                        ));
                    }
                    worst.push((asset, Side::PaysAtMost, bound, named));
                }
            }
        }
        self.liquidity(p, group, &liquidity, &flows, weth)
            .map_err(|(i, why)| format!("{}: {why}", describe(i)))?;
        Ok(worst)
    }

    /// Each liquidity change's amounts held to its bounds.
    fn liquidity(
        &self,
        p: &Proposal<'_>,
        group: &Group<'_>,
        changes: &[(usize, &PlannedCall, Liquidity)],
        flows: &Flows,
        weth: Option<Address>,
    ) -> Result<(), (usize, String)> {
        let s = self.max_slippage_bps;
        // A V3 position manager's events, in order, per manager and kind.
        let mut seen: BTreeMap<(Address, bool), usize> = BTreeMap::new();
        // V4 positions' liquidity this group decreased before a burn.
        let mut decreased: BTreeMap<U256, U256> = BTreeMap::new();
        for (i, call, change) in changes {
            let i = *i;
            let floor = |what: &str, min: U256, amount: U256| -> Result<(), (usize, String)> {
                if amount.is_zero() || min >= less(amount, s) {
                    return Ok(());
                }
                Err((
                    i,
                    format!(
                        "its minimum {what} is {min} where its simulation moves {amount}: more than [safety] max_slippage_bps {s} below, so a sandwich could move the pool first; set it to at least {}",
                        less(amount, s)
                    ),
                ))
            };
            match change {
                Liquidity::V3 { increase, min } => {
                    let topic = if *increase { INCREASE_LIQUIDITY } else { DECREASE_LIQUIDITY };
                    let npm = self.manager(p.chain_id, call.to, false).map_err(|e| (i, e))?;
                    let k = seen.entry((npm, *increase)).or_default();
                    let event = group
                        .logs
                        .iter()
                        .filter(|l| l.address == npm && l.topics().first() == Some(&topic))
                        .nth(*k);
                    *k += 1;
                    let Some((_, amount0, amount1)) =
                        event.and_then(|e| <(u128, U256, U256)>::abi_decode_params(&e.data.data).ok())
                    else {
                        return Err((i, "its position manager logged no liquidity change for it".into()));
                    };
                    floor("amount0", min.0, amount0)?;
                    floor("amount1", min.1, amount1)?;
                }
                Liquidity::V2 { add, tokens, min } => {
                    for (token, min, name) in [(tokens.0, min.0, "amountA"), (tokens.1, min.1, "amountB")] {
                        let net = flows.net(norm(Some(token), weth));
                        let moved = if *add { (-net).max(I256::ZERO) } else { net.max(I256::ZERO) };
                        floor(name, min, moved.unsigned_abs())?;
                    }
                }
                Liquidity::V4(action) => {
                    let moved =
                        |currency: Address| flows.net(norm((!currency.is_zero()).then_some(currency), weth));
                    // A call that also mints or increases pays that from what its burns and
                    // decreases credit: the wallet sees only the rest, so those are held to the
                    // position math alone.
                    let credits_reused = changes.iter().any(|(j, _, c)| {
                        *j == i
                            && matches!(c, Liquidity::V4(V4Action::Mint { .. } | V4Action::Increase { .. }))
                    });
                    let posm = self.manager(p.chain_id, call.to, true).map_err(|e| (i, e))?;
                    self.v4(p.chain_id, posm, action, &mut decreased, &moved, credits_reused)
                        .map_err(|e| (i, e))?
                }
            }
        }
        Ok(())
    }

    /// The position manager a liquidity change of a call to `target` is made in: the target,
    /// or the managers a UniversalRouter calls for a migration (its own immutables, read from
    /// it: calldata cannot name them).
    fn manager(&self, chain: u64, target: Address, v4: bool) -> Result<Address, String> {
        let role = self.roles.get(&chain).and_then(|r| r.get(&target)).copied();
        match (role, v4) {
            (Some(bardo_core::scope::Role::UniversalRouter), false) => {
                self.valuer.read(chain, target, V3_POSITION_MANAGERCall {})
            }
            (Some(bardo_core::scope::Role::UniversalRouter), true) => {
                self.valuer.read(chain, target, V4_POSITION_MANAGERCall {})
            }
            _ => Ok(target),
        }
    }

    /// A V4 PositionManager action's bounds held to what it moves: a mint's or an increase's
    /// maximums to the larger of the position math at the pool's price and what its call paid
    /// in the simulation (a trusted hook may take a fee on top), a decrease's or a burn's
    /// minimums to the smaller of its principal by that math and what its call received (a
    /// hook's cut comes off; the minimum never covers fees).
    fn v4(
        &self,
        chain: u64,
        posm: Address,
        action: &V4Action,
        decreased: &mut BTreeMap<U256, U256>,
        moved: &dyn Fn(Address) -> I256,
        credits_reused: bool,
    ) -> Result<(), String> {
        let s = self.max_slippage_bps;
        // A position's pool id, currencies and ticks, as the position manager keeps them.
        type Position = (B256, (Address, Address), (i32, i32));
        let position = |token_id: U256| -> Result<Position, String> {
            let info = self.valuer.read(
                chain,
                posm,
                v4_positions::getPoolAndPositionInfoCall { tokenId: token_id },
            )?;
            let k = &info.poolKey;
            Ok((
                keccak256(k.abi_encode()),
                (k.currency0, k.currency1),
                bardo_uniswap_math::position_ticks(info.info),
            ))
        };
        let ((id, currencies, ticks), liquidity, limit, paying) = match action {
            V4Action::Mint { pool, currencies, ticks, liquidity, max } => {
                ((*pool, *currencies, *ticks), *liquidity, *max, true)
            }
            V4Action::Increase { token_id, liquidity, max } => (position(*token_id)?, *liquidity, *max, true),
            V4Action::Decrease { token_id, liquidity, min } => {
                *decreased.entry(*token_id).or_default() += *liquidity;
                (position(*token_id)?, *liquidity, *min, false)
            }
            V4Action::Burn { token_id, min } => {
                let held = self.valuer.read(
                    chain,
                    posm,
                    v4_positions::getPositionLiquidityCall { tokenId: *token_id },
                )?;
                let left =
                    U256::from(held).saturating_sub(decreased.get(token_id).copied().unwrap_or_default());
                (position(*token_id)?, left, *min, false)
            }
        };
        let liquidity = u128::try_from(liquidity).map_err(|_| "a V4 liquidity over uint128".to_owned())?;
        if liquidity == 0 {
            return Ok(());
        }
        let manager = self.valuer.read(chain, posm, poolManagerCall {})?;
        let slot = keccak256([id.as_slice(), &U256::from(POOLS_SLOT).to_be_bytes::<32>()].concat());
        let word = self.valuer.read(chain, manager, extsloadCall { slot })?;
        let price = U256::from_be_bytes(word.0) & ((U256::from(1u8) << 160) - U256::from(1u8));
        let at = |t: i32| bardo_uniswap_math::sqrt_price_at_tick(t).map_err(|e| e.to_string());
        let amounts = bardo_uniswap_math::amounts_for_liquidity(price, at(ticks.0)?, at(ticks.1)?, liquidity);
        let sides =
            [("amount0", limit.0, amounts.0, currencies.0), ("amount1", limit.1, amounts.1, currencies.1)];
        for (name, bound, math, currency) in sides {
            let (bound, flow) = (U256::from(bound), moved(currency));
            if paying {
                let paid = if flow.is_negative() { flow.unsigned_abs() } else { U256::ZERO };
                let most = more(math.max(paid) + U256::from(1u8), s);
                if !math.is_zero() && bound > most {
                    return Err(format!(
                        "its {name} maximum is {bound} where it pays {} (the position math at the pool's price: {math}): more than [safety] max_slippage_bps {s} above, so a sandwich could make it pay that; set it to at most {most}",
                        math.max(paid)
                    ));
                }
            } else {
                let got = if flow.is_positive() { flow.unsigned_abs() } else { U256::ZERO };
                let principal = if credits_reused { math } else { math.min(got) };
                if !principal.is_zero() && bound < less(principal, s) {
                    return Err(format!(
                        "its {name} minimum is {bound} where it returns {principal} of principal (the position math at the pool's price: {math}): more than [safety] max_slippage_bps {s} below, so a sandwich could move the pool first; set it to at least {}",
                        less(principal, s)
                    ));
                }
            }
        }
        Ok(())
    }
}

/// How many bounds a call to a contract of `role` carries, or why its calldata does not decode
/// (for the fuzz target: what a scope admits must decode here too).
pub(crate) fn count(role: bardo_core::scope::Role, data: &[u8]) -> Result<usize, String> {
    calls::of_call(role, data).map(|b| b.bounds.len() + b.liquidity.len())
}

/// The plan's calls grouped as they are sent: one transaction each, or (through a Safe) one
/// for all.
fn groups<'a>(calls: &'a [PlannedCall], outcomes: &'a [CallOutcome]) -> Vec<Group<'a>> {
    if outcomes.len() == calls.len() {
        return calls
            .iter()
            .enumerate()
            .zip(outcomes)
            .map(|((i, call), o)| Group {
                calls: vec![(i, call)],
                logs: o.logs.iter().collect(),
                native: o.native,
            })
            .collect();
    }
    vec![Group {
        calls: calls.iter().enumerate().collect(),
        logs: outcomes.iter().flat_map(|o| &o.logs).collect(),
        native: outcomes.iter().map(|o| o.native).fold(I256::ZERO, |a, b| a.saturating_add(b)),
    }]
}

impl SafetyHook for OnChainBounds {
    fn name(&self) -> &'static str {
        "on-chain-bounds"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let sim = match found.simulated() {
            Ok(sim) => sim,
            Err(refused) => return refused,
        };
        let mut worst: BTreeMap<(Option<Address>, Side), (U256, Vec<String>)> = BTreeMap::new();
        for group in groups(&p.plan.calls, &sim.outcomes) {
            match self.group(p, &group) {
                Ok(found) => {
                    for (asset, side, amount, named) in found {
                        let e = worst.entry((asset, side)).or_default();
                        e.0 = e.0.saturating_add(amount);
                        e.1.push(named);
                    }
                }
                Err(reason) => return reject(ErrorCode::Denied, reason),
            }
        }
        found.worst_case = worst
            .into_iter()
            .map(|((asset, side), (amount, named))| WorstCase {
                asset,
                side,
                amount: amount.to_string(),
                enforced_by: named.join("; "),
            })
            .collect();
        Decision::Allow
    }
}

/// What the receipts show against a permit's worst case: each asset the wallet received less
/// of, or paid more of, than the chain should have let it, with the shortfall in USD.
/// `changes` are the wallet's derived balance changes from the receipts (native, with `gas`
/// the wallet paid added back).
pub(crate) fn shortfalls(
    valuer: &Valuer,
    chain: u64,
    worst: &[WorstCase],
    changes: &bardo_evm::changes::ChangeSet,
    gas: U256,
) -> Vec<String> {
    let weth = valuer.weth(chain);
    let net = |asset: Option<Address>| -> I256 {
        match asset {
            Some(token) => changes.balance(Some(token)),
            None => {
                let weth = weth.map(|w| changes.balance(Some(w))).unwrap_or_default();
                changes
                    .balance(None)
                    .saturating_add(I256::try_from(gas).unwrap_or(I256::MAX))
                    .saturating_add(weth)
            }
        }
    };
    let mut out = Vec::new();
    for w in worst {
        let Ok(amount) = w.amount.parse::<U256>() else { continue };
        let moved = net(w.asset);
        let (short, how) = match w.side {
            Side::ReceivesAtLeast => {
                let got = if moved.is_negative() { U256::ZERO } else { moved.unsigned_abs() };
                (amount.saturating_sub(got), format!("received {got}, under"))
            }
            Side::PaysAtMost => {
                let paid = if moved.is_negative() { moved.unsigned_abs() } else { U256::ZERO };
                (paid.saturating_sub(amount), format!("paid {paid}, over"))
            }
        };
        if short.is_zero() {
            continue;
        }
        let asset = w.asset.map_or_else(|| "ether".to_owned(), |a| a.to_string());
        let worth = match w.asset {
            Some(token) => valuer.usd(chain, token, short),
            None => valuer
                .signed_native_usd(chain, I256::try_from(short).unwrap_or(I256::MAX))
                .map(|v| v.unsigned_abs()),
        };
        let worth = worth.map(usd).unwrap_or_else(|_| "no trusted price".into());
        out.push(format!(
            "the wallet {how} the worst case the chain was to enforce ({} {amount} of {asset}, by {}): short {short} base units, {worth}",
            match w.side {
                Side::ReceivesAtLeast => "at least",
                Side::PaysAtMost => "at most",
            },
            w.enforced_by
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::address;
    use bardo_evm::changes::{Change, ChangeSet};

    const WETH: Address = address!("0x00000000000000000000000000000000000000c2");

    #[test]
    fn layers_add_within_and_the_tighter_holds() {
        let b = |amount: u64, way, layer| Bound {
            asset: Some(WETH),
            way,
            amount: U256::from(amount),
            layer,
            what: "x".into(),
        };
        let bounds = [
            (0, b(3, Way::Out, Layer::Swap)),
            (0, b(4, Way::Out, Layer::Swap)),
            (0, b(6, Way::Out, Layer::Delivery)),
            (1, b(10, Way::In, Layer::Swap)),
            (1, b(9, Way::In, Layer::Delivery)),
        ];
        assert_eq!(combined(&bounds, Some(WETH), Way::Out).map(|b| b.0), Some(U256::from(7)));
        assert_eq!(combined(&bounds, Some(WETH), Way::In).map(|b| b.0), Some(U256::from(9)));
        assert_eq!(combined(&bounds, None, Way::Out), None);
        assert_eq!(less(U256::from(10_000), 100), U256::from(9_900));
        assert_eq!(more(U256::from(10_000), 100), U256::from(10_101));
    }

    #[test]
    fn a_receipt_under_the_worst_case_is_a_shortfall_and_over_it_is_not() {
        let worst = [WorstCase {
            asset: Some(WETH),
            side: Side::ReceivesAtLeast,
            amount: "100".into(),
            enforced_by: "call 3 V3_SWAP_EXACT_IN amountOutMin".into(),
        }];
        let changes = |delta: i64| ChangeSet {
            changes: vec![Change::Balance { asset: Some(WETH), delta: I256::try_from(delta).expect("i256") }],
        };
        // The valuer is only asked for a USD figure; none here (no chain), so it says so.
        let services = std::sync::Arc::new(bardo_runtime::Services::new(bardo_evm::Evm::new(
            bardo_evm::chain::Chains::none(&bardo_core::Runtime::new().expect("runtime")),
            None,
        )));
        let valuer = Valuer::new(&services, BTreeMap::new());
        assert!(shortfalls(&valuer, 1, &worst, &changes(100), U256::ZERO).is_empty());
        let short = shortfalls(&valuer, 1, &worst, &changes(60), U256::ZERO);
        assert_eq!(short.len(), 1);
        assert!(
            short[0].contains("received 60, under") && short[0].contains("short 40 base units"),
            "{short:?}"
        );
    }
}
