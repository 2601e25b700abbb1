//! The Uniswap pools a plan trades with or deposits into, as the host reads them — found from
//! the simulation's authenticated pool events ([`crate::evidence`]), with their tokens from the
//! configured factories and PoolManager and their price before the plan from state (V3 `slot0`,
//! V4 the PoolManager's `extsload`; a pool the plan itself creates, from its own `Initialize`)
//! — each trade and deposit with the price the pool stood at just then; and the reference price
//! of each pool: what the operator's trusted prices say it should be. A pool anyone can create
//! at any price is judged by that reference, never by itself.

use crate::evidence::{
    Evidence, V3_INITIALIZE, V3_MINT, V3_SWAP, V4_INITIALIZE, V4_MODIFY_LIQUIDITY, V4_SWAP,
};
use crate::valuation::{Valuer, Venue, pow10};
use alloy::primitives::{Address, B256, I256, Log, U256, U512, keccak256};
use alloy::sol_types::SolValue;
use std::collections::BTreeMap;

alloy::sol! {
    function extsload(bytes32 slot) external view returns (bytes32);
}

/// The PoolManager's storage slot of its `pools` mapping (`StateLibrary.POOLS_SLOT`).
const POOLS_SLOT: u8 = 6;

/// A pool the plan touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum PoolRef {
    /// A Uniswap V3 pool contract.
    V3(Address),
    /// A V4 pool: its PoolManager and id.
    V4 {
        /// The PoolManager.
        manager: Address,
        /// The pool's id.
        id: B256,
    },
}

impl std::fmt::Display for PoolRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::V3(pool) => write!(f, "V3 pool {pool}"),
            Self::V4 { id, .. } => write!(f, "V4 pool {id}"),
        }
    }
}

/// A pool's tokens and its price before the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PoolState {
    /// Its token0 (V4: the zero address is the native coin).
    pub(crate) token0: Address,
    /// Its token1.
    pub(crate) token1: Address,
    /// Its sqrt price before the plan (or as the plan initialises it), Q64.96.
    pub(crate) sqrt_price_x96: U256,
}

/// A trade with or deposit into a pool, at the price the pool stood at just before it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Touch {
    /// The pool.
    pub(crate) pool: PoolRef,
    /// A deposit (liquidity added), else a trade.
    pub(crate) deposit: bool,
    /// The pool's sqrt price just before it, Q64.96.
    pub(crate) sqrt_price_x96: U256,
    /// The pool's tokens and its price before the plan.
    pub(crate) before: PoolState,
}

/// Every trade and liquidity addition of the plan's authenticated pool events, in order, each
/// at the price its pool stood at just then: the price before the plan, moved by each of the
/// plan's own swaps in that pool (a genuine pool's `Swap` reports the price it left).
pub(crate) fn touches(valuer: &Valuer, chain: u64, ev: &Evidence<'_>) -> Result<Vec<Touch>, String> {
    let mut now: BTreeMap<PoolRef, (PoolState, U256)> = BTreeMap::new();
    let mut out = Vec::new();
    for (_, log, venue) in ev.pool_events() {
        let t = log.topics();
        let (pool, deposit, after) = match (t.first(), venue) {
            (Some(&V3_SWAP), Venue::V3 { .. }) => (PoolRef::V3(log.address), false, word(log, 2)),
            (Some(&V3_MINT), Venue::V3 { .. }) => (PoolRef::V3(log.address), true, None),
            (Some(&V4_SWAP), Venue::V4) if t.len() >= 2 => {
                (PoolRef::V4 { manager: log.address, id: t[1] }, false, word(log, 2))
            }
            (Some(&V4_MODIFY_LIQUIDITY), Venue::V4) if t.len() >= 2 && adds_liquidity(log) => {
                (PoolRef::V4 { manager: log.address, id: t[1] }, true, None)
            }
            _ => continue,
        };
        let (before, price) = match now.get(&pool) {
            Some(known) => *known,
            None => {
                let state = state(valuer, chain, pool, ev)?;
                (state, state.sqrt_price_x96)
            }
        };
        out.push(Touch { pool, deposit, sqrt_price_x96: price, before });
        now.insert(pool, (before, after.unwrap_or(price)));
    }
    Ok(out)
}

/// Whether a V4 `ModifyLiquidity` adds liquidity.
fn adds_liquidity(log: &Log) -> bool {
    <(I256, I256, I256, B256)>::abi_decode_params(&log.data.data)
        .is_ok_and(|(_, _, delta, _)| delta.is_positive())
}

/// The data word `i` of `log` as a sqrt price (160 bits), if it has one.
fn word(log: &Log, i: usize) -> Option<U256> {
    let w = log.data.data.get(i * 32..(i + 1) * 32)?;
    Some(U256::from_be_slice(w) & ((U256::from(1u8) << 160) - U256::from(1u8)))
}

/// `pool`'s tokens and its price before the plan whose authenticated events are `ev`: a V3
/// pool's tokens as its factory knows them and its `slot0`; a V4 pool's key from the
/// PoolManager's `Initialize` and its price from the PoolManager's state. A pool the plan
/// creates has no state before it: its price is the one its own `Initialize` set.
pub(crate) fn state(
    valuer: &Valuer,
    chain: u64,
    pool: PoolRef,
    ev: &Evidence<'_>,
) -> Result<PoolState, String> {
    let initialized = |topic: B256, id: Option<B256>, at: Address| {
        ev.pool_events().map(|(_, log, _)| log).find(|l| {
            l.address == at
                && l.topics().first() == Some(&topic)
                && id.is_none_or(|id| l.topics().get(1) == Some(&id))
        })
    };
    match pool {
        PoolRef::V3(address) => {
            let Some(Venue::V3 { token0, token1, .. }) = ev.venue(address) else {
                return Err(format!("{address} is not a pool of the configured V3 factory"));
            };
            let sqrt_price_x96 =
                match initialized(V3_INITIALIZE, None, address).filter(|_| ev.created(address)) {
                    Some(init) => {
                        <(U256, I256)>::abi_decode_params(&init.data.data)
                            .map_err(|e| format!("{pool}: malformed Initialize: {e}"))?
                            .0
                    }
                    None => valuer.v3_sqrt_price(chain, address)?,
                };
            Ok(PoolState { token0, token1, sqrt_price_x96 })
        }
        PoolRef::V4 { manager, id } => {
            let in_plan = initialized(V4_INITIALIZE, Some(id), manager).cloned();
            let init = match &in_plan {
                Some(log) => log.clone(),
                None => valuer.v4_initialize(chain, manager, id, V4_INITIALIZE)?,
            };
            let t = init.topics();
            if t.len() != 4 {
                return Err(format!("{pool}: malformed Initialize"));
            }
            let (token0, token1) = (Address::from_word(t[2]), Address::from_word(t[3]));
            let sqrt_price_x96 = match in_plan {
                Some(init) => {
                    <(U256, I256, Address, U256, I256)>::abi_decode_params(&init.data.data)
                        .map_err(|e| format!("{pool}: malformed Initialize: {e}"))?
                        .3
                }
                None => {
                    let slot =
                        keccak256([id.as_slice(), &U256::from(POOLS_SLOT).to_be_bytes::<32>()].concat());
                    let word = valuer.read(chain, manager, extsloadCall { slot })?;
                    U256::from_be_bytes(word.0) & ((U256::from(1u8) << 160) - U256::from(1u8))
                }
            };
            Ok(PoolState { token0, token1, sqrt_price_x96 })
        }
    }
}

/// The trusted USD prices (18 decimals) and decimals of a pool's two tokens.
pub(crate) struct Reference {
    /// USD per whole token0, and its decimals.
    pub(crate) token0: (U512, u8),
    /// USD per whole token1, and its decimals.
    pub(crate) token1: (U512, u8),
}

impl Reference {
    /// The pool's two tokens at trusted prices; an unpriced token is an error.
    pub(crate) fn of(valuer: &Valuer, chain: u64, pool: &PoolState) -> Result<Self, String> {
        Ok(Self {
            token0: valuer.unit_price(chain, pool.token0)?,
            token1: valuer.unit_price(chain, pool.token1)?,
        })
    }

    /// The sqrt price (Q64.96) the pool would have at these prices: sqrt(raw token1 per raw
    /// token0) × 2⁹⁶.
    pub(crate) fn sqrt_price_x96(&self) -> U256 {
        let ((p0, d0), (p1, d1)) = (self.token0, self.token1);
        let num = p0.saturating_mul(pow10(d1)).saturating_mul(U512::from(1u8) << 192);
        let den = p1.saturating_mul(pow10(d0));
        let ratio = num.checked_div(den).unwrap_or(U512::MAX);
        U256::saturating_from(ratio.root(2))
    }

    /// How far a pool at `sqrt_price_x96` is from this reference, basis points of the reference
    /// price (saturating).
    pub(crate) fn deviation_bps(&self, sqrt_price_x96: U256) -> u64 {
        let (pool, reference) = (U512::from(sqrt_price_x96), U512::from(self.sqrt_price_x96()));
        let (pool, reference) = (pool * pool, reference * reference);
        let bps = pool.abs_diff(reference).saturating_mul(U512::from(10_000u32)).checked_div(reference);
        bps.map_or(u64::MAX, |b| u64::try_from(b).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_price_is_the_pools_price_at_trusted_prices() {
        let usd = |d: u64| pow10(18) * U512::from(d);
        // WETH (18) as token0 at $2,000, USDC (6) at $1: 2,000e6 raw USDC per 1e18 raw WETH, so
        // sqrtPriceX96 = sqrt(2e-9) × 2^96.
        let weth_usdc = Reference { token0: (usd(2_000), 18), token1: (usd(1), 6) };
        let sqrt = weth_usdc.sqrt_price_x96();
        let expected = U256::from(3_543_191_142_285_914_205_922_034u128);
        assert!(sqrt.abs_diff(expected) < U256::from(10u64.pow(9)), "{sqrt}");
        assert_eq!(weth_usdc.deviation_bps(sqrt), 0);
        // Ten times the price is 10 × the squared sqrt price: 90,000 bps away.
        let tenfold =
            U256::saturating_from(U512::from(sqrt) * U512::from(3_162_278u64) / U512::from(1_000_000u64));
        assert!(
            (89_990..=90_010).contains(&weth_usdc.deviation_bps(tenfold)),
            "{}",
            weth_usdc.deviation_bps(tenfold)
        );
        // 1 % off in price is 100 bps.
        let one_percent =
            U256::saturating_from(U512::from(sqrt) * U512::from(1_004_988u64) / U512::from(1_000_000u64));
        assert!((99..=101).contains(&weth_usdc.deviation_bps(one_percent)));
    }
}
