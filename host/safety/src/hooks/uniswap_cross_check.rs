//! The Uniswap cross-check: after simulation, each Uniswap pool swap the simulated plan made is
//! recomputed by Uniswap's own SDK (the sidecar) from that pool's state at the fork block, and
//! what the wallet ends up with is held to what the SDK says the last pool pays; each V3 mint and
//! burn is held to the SDK's position math at the pool's price, each collect to what the
//! position is owed, and a V4 mint or burn to the same math (`liquidity.rs`). A second
//! opinion independent of both the plugin and the simulator: a pool that is not the factory's,
//! a pool whose simulated swap pays other than Uniswap's math, or a wallet receiving less than
//! the pools paid (something in between took a cut), or a plan claiming more than the pools pay,
//! is refused with both figures. A split route is held to the sum of its paths' last pools. Its
//! pools are those of the plan's authenticated events ([`crate::evidence`]).

use super::{Decision, Findings, Proposal, SafetyHook};
use crate::evidence::Evidence;
use crate::valuation::{Valuer, Venue};
use alloy::primitives::{Address, B256, I256, U256};
use alloy::rpc::types::Filter;
use alloy::sol_types::{SolCall, SolEvent};
use bardo_core::error::ErrorCode;
use bardo_runtime::Services;
use bardo_sidecar::pool_read::{Pool, PoolReader};
use bardo_sidecar::{Sidecar, SidecarError, Ticks};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

alloy::sol! {
    event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, uint24 fee,
        int24 tickSpacing, address hooks, uint160 sqrtPriceX96, int24 tick);
}

// The factory and pair views, as the sidecar's pool discovery declares them.
use bardo_sidecar::discover::{getPoolCall, getReservesCall};

// Each version's `Swap` event (the names clash).
mod v2 {
    alloy::sol! {
        event Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out,
            uint256 amount1Out, address indexed to);
    }
}
mod v3 {
    alloy::sol! {
        event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1,
            uint160 sqrtPriceX96, uint128 liquidity, int24 tick);
        event Mint(address sender, address indexed owner, int24 indexed tickLower, int24 indexed tickUpper,
            uint128 amount, uint256 amount0, uint256 amount1);
        event Burn(address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount,
            uint256 amount0, uint256 amount1);
        event Collect(address indexed owner, address recipient, int24 indexed tickLower, int24 indexed tickUpper,
            uint128 amount0, uint128 amount1);
    }
}
mod v4 {
    alloy::sol! {
        event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96,
            uint128 liquidity, int24 tick, uint24 fee);
    }
}

mod liquidity;

pub use bardo_sidecar::book::UniswapBook;

/// One pool swap the simulation made.
#[derive(Debug, Clone)]
struct Hop {
    pool: Kind,
    token_in: Address,
    token_out: Address,
    amount_in: U256,
    amount_out: U256,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    V2(Address),
    V3(Address),
    V4 { id: B256, tick_spacing: i32, hooks: Address },
}

impl Kind {
    fn name(&self) -> String {
        match self {
            Kind::V2(a) => format!("V2 pair {a}"),
            Kind::V3(a) => format!("V3 pool {a}"),
            Kind::V4 { id, .. } => format!("V4 pool {id}"),
        }
    }
}

/// The hook.
pub struct UniswapCrossCheck {
    /// The chains it reads.
    pub services: Arc<Services>,
    /// Which pools are the trusted deployments' (see [`crate::evidence`]).
    pub valuer: Valuer,
    /// Uniswap's SDKs.
    pub sidecar: Arc<Sidecar>,
    /// Uniswap's contracts per chain.
    pub books: BTreeMap<u64, UniswapBook>,
}

/// How far a simulated amount may be from the SDK's: the rounding of exact-out routes (a pool
/// asked for an exact output takes an input rounded up, whose exact-in output can pass the
/// request by a few base units) — 2 base units and one part per million.
fn tolerance(amount: U256) -> U256 {
    U256::from(2u8).max(amount / U256::from(1_000_000u32))
}

pub(super) fn differs(a: U256, b: U256) -> bool {
    a.abs_diff(b) > tolerance(a.max(b))
}

pub(super) fn reject(code: ErrorCode, reason: impl Into<String>) -> Decision {
    Decision::Reject { code, reason: reason.into() }
}

/// `eth_call` of `data` to `to` at `block` on `chain`.
pub(super) fn read_at(
    services: &Services,
    chain: u64,
    block: u64,
    to: Address,
    data: Vec<u8>,
) -> Result<Vec<u8>, String> {
    let chains = &services.evm.chains;
    let client = chains.get(chain).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(5);
    chains
        .block_on(client.call(to, data.into(), U256::ZERO, Some(block), deadline))
        .map(|b| b.to_vec())
        .map_err(|e| format!("reading {to} at block {block}: {e}"))
}

impl UniswapCrossCheck {
    /// `eth_call` at `block`.
    fn call(&self, chain: u64, block: u64, to: Address, data: Vec<u8>) -> Result<Vec<u8>, String> {
        read_at(&self.services, chain, block, to, data)
    }

    fn read<C: SolCall>(&self, chain: u64, block: u64, to: Address, c: C) -> Result<C::Return, String> {
        let out = self.call(chain, block, to, c.abi_encode())?;
        C::abi_decode_returns(&out).map_err(|e| format!("{} of {to}: {e}", C::SIGNATURE))
    }

    /// The swaps of the plan's authenticated pool events, in order (a stranger's contract
    /// emitting a pool's `Swap` is not a pool, see [`crate::evidence`]).
    fn hops(&self, chain: u64, block: u64, ev: &Evidence<'_>) -> Result<Vec<Hop>, String> {
        let mut hops = Vec::new();
        for (_, log, venue) in ev.pool_events() {
            let Some(topic) = log.topics().first() else { continue };
            let at = log.address;
            match venue {
                Venue::V3 { token0: t0, token1: t1, .. } if *topic == v3::Swap::SIGNATURE_HASH => {
                    let Ok(e) = v3::Swap::decode_log_data(&log.data) else { continue };
                    // The pool's view: positive is paid in.
                    let (in0, amount_in, amount_out) = match e.amount0.is_positive() {
                        true => (true, e.amount0.unsigned_abs(), e.amount1.unsigned_abs()),
                        false => (false, e.amount1.unsigned_abs(), e.amount0.unsigned_abs()),
                    };
                    let (token_in, token_out) = if in0 { (t0, t1) } else { (t1, t0) };
                    hops.push(Hop { pool: Kind::V3(at), token_in, token_out, amount_in, amount_out });
                }
                Venue::V2 { token0: t0, token1: t1 } if *topic == v2::Swap::SIGNATURE_HASH => {
                    let Ok(e) = v2::Swap::decode_log_data(&log.data) else { continue };
                    let (token_in, token_out, amount_in, amount_out) = match e.amount0In.is_zero() {
                        false => (t0, t1, e.amount0In, e.amount1Out),
                        true => (t1, t0, e.amount1In, e.amount0Out),
                    };
                    hops.push(Hop { pool: Kind::V2(at), token_in, token_out, amount_in, amount_out });
                }
                Venue::V4 if *topic == v4::Swap::SIGNATURE_HASH => {
                    let Ok(e) = v4::Swap::decode_log_data(&log.data) else { continue };
                    let id = log.topics().get(1).copied().unwrap_or_default();
                    let key = self.v4_key(chain, block, at, id)?;
                    // The swapper's view: negative is paid in.
                    let (in0, amount_in, amount_out) = match e.amount0 < 0 {
                        true => {
                            (true, U256::from(e.amount0.unsigned_abs()), U256::from(e.amount1.unsigned_abs()))
                        }
                        false => (
                            false,
                            U256::from(e.amount1.unsigned_abs()),
                            U256::from(e.amount0.unsigned_abs()),
                        ),
                    };
                    let (token_in, token_out) =
                        if in0 { (key.currency0, key.currency1) } else { (key.currency1, key.currency0) };
                    let pool = Kind::V4 { id, tick_spacing: key.tickSpacing.as_i32(), hooks: key.hooks };
                    hops.push(Hop { pool, token_in, token_out, amount_in, amount_out });
                }
                _ => {}
            }
        }
        Ok(hops)
    }

    /// A V4 pool's key, from its `Initialize` event.
    fn v4_key(&self, chain: u64, block: u64, manager: Address, id: B256) -> Result<Initialize, String> {
        let chains = &self.services.evm.chains;
        let client = chains.get(chain).map_err(|e| e.to_string())?;
        let filter = Filter::new()
            .address(manager)
            .event_signature(Initialize::SIGNATURE_HASH)
            .topic1(id)
            .from_block(0)
            .to_block(block);
        let deadline = Instant::now() + Duration::from_secs(5);
        let logs = chains.block_on(client.logs(&filter, deadline)).map_err(|e| e.to_string())?;
        logs.iter()
            .find_map(|l| Initialize::decode_log_data(&l.inner.data).ok())
            .ok_or_else(|| format!("no Initialize event names V4 pool {id}"))
    }

    /// What the SDK says `hop`'s pool pays for its input, from its state at `block`.
    fn sdk_out(&self, chain: u64, block: u64, book: &UniswapBook, hop: &Hop) -> Result<U256, Refusal> {
        let call = |to: Address, data: Vec<u8>| self.call(chain, block, to, data);
        let pool = match hop.pool {
            Kind::V2(pair) => {
                let r = self.read(chain, block, pair, getReservesCall {}).map_err(Refusal::Read)?;
                let (r0, r1) = (U256::from(r.reserve0), U256::from(r.reserve1));
                let (rin, rout) = if hop.token_in < hop.token_out { (r0, r1) } else { (r1, r0) };
                return self.sidecar.v2_swap(rin, rout, hop.amount_in).map_err(Refusal::Sidecar);
            }
            Kind::V3(address) => Pool::V3(address),
            Kind::V4 { id, tick_spacing, .. } => Pool::V4 {
                state_view: book
                    .v4_state_view
                    .ok_or_else(|| Refusal::Read("no V4 StateView configured".into()))?,
                id,
                tick_spacing,
            },
        };
        let mut reader = PoolReader::new(pool, call);
        let state = reader.state().map_err(Refusal::Read)?;
        let amount =
            I256::try_from(hop.amount_in).map_err(|_| Refusal::Read("an input over an int256".into()))?;
        let mut ticks = Ticks::default();
        let swapped = self
            .sidecar
            .swap(&state, &mut ticks, (hop.token_in < hop.token_out, amount), |pos, ticks| {
                reader.read_word(pos, state.tick_spacing, ticks)
            })
            .map_err(|e| match e {
                bardo_sidecar::SwapError::Sidecar(e) => Refusal::Sidecar(e),
                bardo_sidecar::SwapError::Read(e) => Refusal::Read(e),
            })?;
        Ok(swapped.amount_calculated.unsigned_abs())
    }
}

/// The refusal when the sidecar gave no figure: retryable when it is restarting.
pub(super) fn sidecar_refusal(e: SidecarError) -> Decision {
    match e.retryable() {
        true => reject(ErrorCode::Timeout, format!("the SDK sidecar is not answering ({e}); try again")),
        false => reject(e.code(), format!("the SDK sidecar cannot check this plan: {e}")),
    }
}

/// Why no SDK figure could be had.
enum Refusal {
    Read(String),
    Sidecar(SidecarError),
}

impl SafetyHook for UniswapCrossCheck {
    fn name(&self) -> &'static str {
        "uniswap-cross-check"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let sim = match found.simulated() {
            Ok(sim) => sim,
            Err(refused) => return refused,
        };
        let Some(book) = self.books.get(&p.chain_id) else { return Decision::Allow };
        let ev = match Evidence::of(&self.valuer, p.chain_id, sim) {
            Ok(ev) => ev,
            Err(e) => return reject(ErrorCode::Rpc, format!("cannot read the pools the plan touches: {e}")),
        };
        let block = sim.block_number;
        let (hops, moves) = match self
            .hops(p.chain_id, block, &ev)
            .and_then(|h| Ok((h, self.liquidity_moves(p.chain_id, block, book, &ev)?)))
        {
            Ok(found) => found,
            Err(e) => return reject(ErrorCode::Denied, e),
        };
        let swapped: BTreeSet<Kind> = hops.iter().map(|h| h.pool).collect();
        if let Some(refused) = self.check_liquidity(p.chain_id, block, book, &moves, &swapped) {
            return refused;
        }
        if let Some(refused) = self.check_v4_liquidity(p.chain_id, block, book, (&ev, p.sender), &swapped) {
            return refused;
        }
        // Each pool's first swap starts from the state at the fork block; a later swap in the
        // same pool would start from a state only the simulation knows, and is not checked.
        let mut seen = BTreeSet::new();
        let mut paid: Vec<(&Hop, Option<U256>)> = Vec::new();
        for hop in &hops {
            if !seen.insert(hop.pool) {
                paid.push((hop, None));
                continue;
            }
            let sdk = match self.sdk_out(p.chain_id, block, book, hop) {
                Ok(sdk) => sdk,
                Err(Refusal::Sidecar(e)) => return sidecar_refusal(e),
                Err(Refusal::Read(e)) => {
                    return reject(ErrorCode::Rpc, format!("cannot read the pool to check it: {e}"));
                }
            };
            if differs(hop.amount_out, sdk) {
                return reject(
                    ErrorCode::Denied,
                    format!(
                        "the simulated swap in {} pays {} of {} for {} of {}, but Uniswap's SDK says that pool pays {} at block {block}",
                        hop.pool.name(),
                        hop.amount_out,
                        hop.token_out,
                        hop.amount_in,
                        hop.token_in,
                        sdk
                    ),
                );
            }
            paid.push((hop, Some(sdk)));
        }
        // The route's last pools: those whose output no other pool takes (an exact-out path
        // swaps it first; a split route has one per path). They must all pay the same token and
        // all be checked, or there is no single figure to hold the wallet to.
        let ends: Vec<_> =
            paid.iter().filter(|(h, _)| !hops.iter().any(|o| o.token_in == h.token_out)).collect();
        let Some((last, _)) = ends.first() else { return Decision::Allow };
        let last = *last;
        let Some(paid) = ends
            .iter()
            .filter(|(h, _)| h.token_out == last.token_out)
            .map(|(_, sdk)| *sdk)
            .sum::<Option<U256>>()
            .filter(|_| ends.iter().all(|(h, _)| h.token_out == last.token_out))
        else {
            return Decision::Allow;
        };
        // What the wallet gets of the last pools' output (as ether, if WETH was unwrapped to it),
        // unless a pool has a hook, which the operator allowlisted and may take a cut.
        if ends.iter().any(|(h, _)| matches!(h.pool, Kind::V4 { hooks, .. } if !hooks.is_zero())) {
            return Decision::Allow;
        }
        let ends_as_ether = last.token_out.is_zero() || Some(last.token_out) == book.weth;
        let mut received = sim.changes.balance((!last.token_out.is_zero()).then_some(last.token_out));
        if ends_as_ether && received <= I256::ZERO {
            received = sim.changes.balance(None);
        }
        let received = if received.is_negative() { U256::ZERO } else { received.unsigned_abs() };
        if received < paid && differs(received, paid) {
            return reject(
                ErrorCode::Denied,
                format!(
                    "the wallet would receive {received} of {} but the pools pay {paid} (Uniswap's SDK, at block {block}): something in between takes {}",
                    last.token_out,
                    paid - received
                ),
            );
        }
        // And the plugin's own claim: no more than Uniswap's math says the pools pay.
        if let Ok(Some(declared)) = p.declared {
            let claimed: U256 = declared
                .acquired()
                .filter(|(t, _)| *t == last.token_out)
                .map(|(_, d)| d.unsigned_abs())
                .sum();
            if claimed > paid && differs(claimed, paid) {
                return reject(
                    ErrorCode::Denied,
                    format!(
                        "the plan claims the wallet receives {claimed} of {}, but Uniswap's SDK says the pools pay {paid} at block {block}",
                        last.token_out
                    ),
                );
            }
        }
        Decision::Allow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_tolerated_and_a_percent_is_not() {
        let million = U256::from(10u64.pow(18));
        assert!(!differs(million, million + U256::from(2u8)));
        assert!(!differs(million, million + million / U256::from(2_000_000u32)));
        assert!(differs(million, million + million / U256::from(100u8)));
        assert!(differs(U256::from(10u8), U256::from(13u8)));
    }
}
