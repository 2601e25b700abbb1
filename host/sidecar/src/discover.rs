//! Finding and reading the pools a route may use, through any batch of `eth_call`s: for each
//! pair of the tokens, the V2 pair its factory knows, the V3 pool of each fee tier, and the V4
//! pool (without hooks) of each standard fee and spacing — each with the state the sidecar
//! needs, read here by the host, never taken from a plugin.
//!
//! Reads go in rounds of independent calls (the caller sends a round as one JSON-RPC batch):
//! where the pools are, then their state, then the bitmap words at their prices, then the
//! ticks those words mark — four round trips for any number of tokens, where one call at a
//! time took ~70.

use crate::book::UniswapBook;
use crate::pool_read::{
    feeCall, getLiquidityCall, getSlot0Call, getTickBitmapCall, getTickLiquidityCall, liquidityCall,
    slot0Call, tickBitmapCall, tickSpacingCall, ticksCall,
};
use crate::route::RoutePool;
use crate::{PoolState, Ticks};
use alloy_primitives::aliases::I24;
use alloy_primitives::{Address, B256, Bytes, U256, keccak256};
use alloy_sol_types::{SolCall, SolValue};
use std::collections::BTreeMap;

alloy_sol_types::sol! {
    function getPair(address tokenA, address tokenB) external view returns (address);
    function getReserves() external view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast);
    function getPool(address tokenA, address tokenB, uint24 fee) external view returns (address);
    function decimals() external view returns (uint8);
}

/// V3's fee tiers.
pub const V3_FEES: [u32; 4] = [100, 500, 3000, 10_000];
/// V4's standard (fee, tick spacing) pairs.
pub const V4_TIERS: [(u32, i32); 4] = [(100, 1), (500, 10), (3000, 60), (10_000, 200)];

/// The id of the V4 pool of `(currency0, currency1, fee, spacing)` without hooks.
pub fn v4_pool_id(tokens: (Address, Address), fee: u32, tick_spacing: i32) -> B256 {
    use alloy_primitives::aliases::U24;
    let spacing = I24::try_from(tick_spacing).unwrap_or(I24::ZERO);
    keccak256((tokens.0, tokens.1, U24::from(fee), spacing, Address::ZERO).abi_encode())
}

/// One round of calls: `(contract, calldata)`, answered in order.
pub type Calls = [(Address, Bytes)];

/// What [`Discovery::pools`] found: the pools with their state and the bitmap word at each
/// one's price, and every token's decimals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The live pools (an empty one — no price, or V2 reserves of 0 — is left out).
    pub pools: Vec<RoutePool>,
    /// Decimals of each token asked about.
    pub decimals: BTreeMap<Address, u8>,
}

/// Reads through `read(calls) -> answers` (every call at one block, the caller's choice).
pub struct Discovery<F> {
    read: F,
    /// Round trips made so far.
    rounds: usize,
}

fn sorted(a: Address, b: Address) -> (Address, Address) {
    if a < b { (a, b) } else { (b, a) }
}

/// A call of a round and what to make of its answer.
struct Pending<C: SolCall> {
    to: Address,
    call: C,
}

impl<C: SolCall> Pending<C> {
    fn encoded(&self) -> (Address, Bytes) {
        (self.to, self.call.abi_encode().into())
    }

    fn decode(&self, out: &[u8]) -> Result<C::Return, String> {
        C::abi_decode_returns(out)
            .map_err(|e| format!("an unreadable answer to {} from {}: {e}", C::SIGNATURE, self.to))
    }
}

/// A pool being read: where it is, and its state once read.
enum Candidate {
    V2 { pair: Address, tokens: (Address, Address) },
    V3 { pool: Address, tokens: (Address, Address) },
    V4 { id: B256, tokens: (Address, Address), spacing: i32, fee: u32, sqrt_price: U256, tick: i32 },
}

impl<F: FnMut(&Calls) -> Vec<Result<Bytes, String>>> Discovery<F> {
    /// Discovery through `read`.
    pub fn new(read: F) -> Self {
        Self { read, rounds: 0 }
    }

    /// Round trips made so far.
    pub fn rounds(&self) -> usize {
        self.rounds
    }

    /// One round: every call at once; any failure fails it.
    fn round(&mut self, calls: &Calls) -> Result<Vec<Bytes>, String> {
        if calls.is_empty() {
            return Ok(Vec::new());
        }
        self.rounds += 1;
        let answers = (self.read)(calls);
        if answers.len() != calls.len() {
            return Err(format!("{} answers to {} calls", answers.len(), calls.len()));
        }
        answers.into_iter().collect()
    }

    /// Every Uniswap pool of `book` between two of `tokens`, with its state and the bitmap word
    /// at its price, and each token's decimals.
    pub fn pools(&mut self, book: &UniswapBook, tokens: &[Address]) -> Result<Found, String> {
        // Round 1: where the pools are (and the tokens' decimals, and V4's prices by id).
        let mut pairs = Vec::new();
        for (i, a) in tokens.iter().enumerate() {
            for b in &tokens[i + 1..] {
                pairs.push(sorted(*a, *b));
            }
        }
        let decimals: Vec<_> = tokens.iter().map(|t| Pending { to: *t, call: decimalsCall {} }).collect();
        let v2: Vec<_> = book
            .v2_factory
            .iter()
            .flat_map(|f| {
                pairs.iter().map(|p| Pending { to: *f, call: getPairCall { tokenA: p.0, tokenB: p.1 } })
            })
            .collect();
        let v3: Vec<_> = book
            .v3_factory
            .iter()
            .flat_map(|f| {
                pairs.iter().flat_map(move |p| {
                    V3_FEES.map(|fee| Pending {
                        to: *f,
                        call: getPoolCall {
                            tokenA: p.0,
                            tokenB: p.1,
                            fee: fee.try_into().unwrap_or_default(),
                        },
                    })
                })
            })
            .collect();
        let v4: Vec<_> = book
            .v4_state_view
            .iter()
            .flat_map(|sv| {
                pairs.iter().flat_map(move |p| {
                    V4_TIERS.map(|(fee, spacing)| {
                        (
                            *p,
                            fee,
                            spacing,
                            Pending { to: *sv, call: getSlot0Call { poolId: v4_pool_id(*p, fee, spacing) } },
                        )
                    })
                })
            })
            .collect();
        let mut calls: Vec<_> = decimals.iter().map(Pending::encoded).collect();
        calls.extend(v2.iter().map(Pending::encoded));
        calls.extend(v3.iter().map(Pending::encoded));
        calls.extend(v4.iter().map(|(.., p)| p.encoded()));
        let answers = self.round(&calls)?;
        let mut answers = answers.iter();
        let mut next = || answers.next().map(|b| &b[..]).unwrap_or_default();
        let mut found_decimals = BTreeMap::new();
        for (t, p) in tokens.iter().zip(&decimals) {
            found_decimals.insert(*t, p.decode(next())?);
        }
        let mut candidates = Vec::new();
        let pair_of =
            |tokens: &(Address, Address)| pairs.iter().position(|p| p == tokens).unwrap_or_default();
        for (p, pair) in v2.iter().zip(&pairs) {
            let at = p.decode(next())?;
            if !at.is_zero() {
                candidates.push(((pair_of(pair), 0), Candidate::V2 { pair: at, tokens: *pair }));
            }
        }
        for p in &v3 {
            let at = p.decode(next())?;
            if !at.is_zero() {
                let tokens = (p.call.tokenA, p.call.tokenB);
                candidates.push(((pair_of(&tokens), 1), Candidate::V3 { pool: at, tokens }));
            }
        }
        for (tokens, _, spacing, p) in &v4 {
            let slot0 = p.decode(next())?;
            if slot0.sqrtPriceX96.is_zero() {
                continue;
            }
            let id = p.call.poolId;
            if slot0.protocolFee.to::<u32>() != 0 {
                return Err(format!("V4 pool {id} charges a protocol fee, which the check does not model"));
            }
            let order = (pair_of(tokens), 2);
            candidates.push((
                order,
                Candidate::V4 {
                    id,
                    tokens: *tokens,
                    spacing: *spacing,
                    fee: slot0.lpFee.to::<u32>(),
                    sqrt_price: slot0.sqrtPriceX96.to(),
                    tick: slot0.tick.as_i32(),
                },
            ));
        }
        // Each pair's pools together, V2 then V3 then V4 by fee: the order the SDK sees them in.
        candidates.sort_by_key(|(order, _)| *order);
        let candidates = candidates.into_iter().map(|(_, c)| c).collect();
        let pools = self.states(book, candidates)?;
        Ok(Found { pools, decimals: found_decimals })
    }

    /// Rounds 2–4: each candidate's state, then the bitmap word at its price with its ticks.
    fn states(&mut self, book: &UniswapBook, candidates: Vec<Candidate>) -> Result<Vec<RoutePool>, String> {
        let state_view = book.v4_state_view.unwrap_or_default();
        let mut calls = Vec::new();
        for c in &candidates {
            match c {
                Candidate::V2 { pair, .. } => calls.push((*pair, getReservesCall {}.abi_encode().into())),
                Candidate::V3 { pool, .. } => {
                    calls.push((*pool, slot0Call {}.abi_encode().into()));
                    calls.push((*pool, feeCall {}.abi_encode().into()));
                    calls.push((*pool, tickSpacingCall {}.abi_encode().into()));
                    calls.push((*pool, liquidityCall {}.abi_encode().into()));
                }
                Candidate::V4 { id, .. } => {
                    calls.push((state_view, getLiquidityCall { poolId: *id }.abi_encode().into()))
                }
            }
        }
        let answers = self.round(&calls)?;
        let mut answers = answers.iter().map(|b| &b[..]);
        let mut next = || answers.next().unwrap_or_default();
        let mut pools = Vec::new();
        for c in candidates {
            match c {
                Candidate::V2 { pair, tokens } => {
                    let r = getReservesCall::abi_decode_returns(next())
                        .map_err(|e| format!("an unreadable answer to getReserves() from {pair}: {e}"))?;
                    let reserves = (U256::from(r.reserve0), U256::from(r.reserve1));
                    if !reserves.0.is_zero() && !reserves.1.is_zero() {
                        pools.push(RoutePool::V2 { pair, tokens, reserves });
                    }
                }
                Candidate::V3 { pool, tokens } => {
                    let bad =
                        |e: alloy_sol_types::Error| format!("an unreadable answer from V3 pool {pool}: {e}");
                    let slot0 = slot0Call::abi_decode_returns(next()).map_err(bad)?;
                    let fee = feeCall::abi_decode_returns(next()).map_err(bad)?;
                    let spacing = tickSpacingCall::abi_decode_returns(next()).map_err(bad)?;
                    let liquidity = liquidityCall::abi_decode_returns(next()).map_err(bad)?;
                    if slot0.sqrtPriceX96.is_zero() {
                        continue;
                    }
                    let state = PoolState {
                        fee: fee.to::<u32>(),
                        tick_spacing: spacing.as_i32(),
                        sqrt_price_x96: slot0.sqrtPriceX96.to(),
                        tick: slot0.tick.as_i32(),
                        liquidity,
                    };
                    pools.push(RoutePool::V3 { pool, tokens, state, ticks: Ticks::default() });
                }
                Candidate::V4 { id, tokens, spacing, fee, sqrt_price, tick } => {
                    let liquidity = getLiquidityCall::abi_decode_returns(next())
                        .map_err(|e| format!("an unreadable liquidity of V4 pool {id}: {e}"))?;
                    let state =
                        PoolState { fee, tick_spacing: spacing, sqrt_price_x96: sqrt_price, tick, liquidity };
                    pools.push(RoutePool::V4 { id, tokens, state, ticks: Ticks::default() });
                }
            }
        }
        let words: Vec<(usize, i16)> = pools
            .iter_mut()
            .enumerate()
            .filter_map(|(i, p)| p.concentrated().map(|(s, _)| (i, Ticks::word_of(s.tick, s.tick_spacing))))
            .collect();
        self.words(&mut pools, state_view, &words)?;
        Ok(pools)
    }

    /// Add the bitmap words `needs` names (pool index, word position) to their pools, with the
    /// liquidityNet of each tick they mark: two rounds however many.
    pub fn words(
        &mut self,
        pools: &mut [RoutePool],
        state_view: Address,
        needs: &[(usize, i16)],
    ) -> Result<(), String> {
        let mut calls = Vec::with_capacity(needs.len());
        for &(i, pos) in needs {
            calls.push(match pools.get(i) {
                Some(RoutePool::V3 { pool, .. }) => {
                    (*pool, tickBitmapCall { wordPosition: pos }.abi_encode().into())
                }
                Some(RoutePool::V4 { id, .. }) => {
                    (state_view, getTickBitmapCall { poolId: *id, tick: pos }.abi_encode().into())
                }
                _ => return Err(format!("pool {i} has no ticks to read")),
            });
        }
        let bitmaps = self.round(&calls)?;
        let mut marked = Vec::new();
        for (&(i, pos), out) in needs.iter().zip(&bitmaps) {
            let word = U256::abi_decode(out).map_err(|e| format!("an unreadable tick bitmap word: {e}"))?;
            let Some((state, ticks)) = pools[i].concentrated() else { continue };
            ticks.words.insert(pos, word);
            marked.extend(Ticks::initialized(pos, word, state.tick_spacing).map(|t| (i, t)));
        }
        let mut calls = Vec::with_capacity(marked.len());
        for &(i, tick) in &marked {
            let at = I24::try_from(tick).map_err(|e| e.to_string())?;
            calls.push(match &pools[i] {
                RoutePool::V3 { pool, .. } => (*pool, ticksCall { tick: at }.abi_encode().into()),
                RoutePool::V4 { id, .. } => {
                    (state_view, getTickLiquidityCall { poolId: *id, tick: at }.abi_encode().into())
                }
                RoutePool::V2 { .. } => continue,
            });
        }
        let nets = self.round(&calls)?;
        for (&(i, tick), out) in marked.iter().zip(&nets) {
            let net = match &pools[i] {
                RoutePool::V4 { .. } => getTickLiquidityCall::abi_decode_returns(out).map(|r| r.liquidityNet),
                _ => ticksCall::abi_decode_returns(out).map(|r| r.liquidityNet),
            }
            .map_err(|e| format!("an unreadable tick {tick}: {e}"))?;
            if let Some((_, ticks)) = pools[i].concentrated() {
                ticks.nets.insert(tick, net);
            }
        }
        Ok(())
    }
}

/// Pool sets found at recent blocks, by (chain, block, tokens): a block's pools never change,
/// so a route at a block another route read reads nothing — and the tick words that route
/// needed are kept with them. A few blocks' worth; the oldest goes first.
#[derive(Debug, Default)]
pub struct PoolSets(std::sync::Mutex<std::collections::VecDeque<(PoolSetKey, Found)>>);

/// Which pool set: the chain, the block, and the tokens in the order they were asked for.
pub type PoolSetKey = (u64, u64, Vec<Address>);

/// Pool sets kept.
const KEPT: usize = 16;

impl PoolSets {
    /// The pool set read for `key`, if kept.
    pub fn get(&self, key: &PoolSetKey) -> Option<Found> {
        let sets = bardo_core::sync::lock(&self.0);
        sets.iter().find(|(k, _)| k == key).map(|(_, found)| found.clone())
    }

    /// Keep `found` for `key` (replacing what was kept for it).
    pub fn put(&self, key: PoolSetKey, found: Found) {
        let mut sets = bardo_core::sync::lock(&self.0);
        sets.retain(|(k, _)| *k != key);
        if sets.len() == KEPT {
            sets.pop_front();
        }
        sets.push_back((key, found));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(n: u8) -> Found {
        Found { pools: Vec::new(), decimals: BTreeMap::from([(Address::repeat_byte(n), n)]) }
    }

    #[test]
    fn a_pool_set_is_kept_per_chain_block_and_tokens_and_the_oldest_goes_first() {
        let sets = PoolSets::default();
        let tokens = vec![Address::repeat_byte(1), Address::repeat_byte(2)];
        sets.put((1, 10, tokens.clone()), found(1));
        assert_eq!(sets.get(&(1, 10, tokens.clone())), Some(found(1)));
        assert_eq!(sets.get(&(1, 11, tokens.clone())), None, "another block");
        assert_eq!(sets.get(&(2, 10, tokens.clone())), None, "another chain");
        assert_eq!(sets.get(&(1, 10, tokens.iter().rev().copied().collect())), None, "other tokens");
        sets.put((1, 10, tokens.clone()), found(2));
        assert_eq!(sets.get(&(1, 10, tokens.clone())), Some(found(2)), "replaced");
        for block in 11..(11 + KEPT as u64) {
            sets.put((1, block, tokens.clone()), found(3));
        }
        assert_eq!(sets.get(&(1, 10, tokens.clone())), None, "the oldest went");
        assert!(sets.get(&(1, 11, tokens)).is_some());
    }
}
