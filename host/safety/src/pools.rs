//! The Uniswap pools a plan trades with or deposits into, as the host reads them — found from the
//! simulation's logs, priced before the plan from the chain (V3 `slot0`, V4 the PoolManager's
//! state through `extsload`), or from the plan's own `Initialize` when it creates the pool — and
//! the reference price of each: what the operator's trusted prices say the pool's price should
//! be. A pool anyone can create at any price is judged by that reference, never by itself.

use super::valuation::{Valuer, pow10};
use alloy::primitives::{Address, B256, I256, Log, U256, U512, b256, keccak256};
use alloy::sol_types::SolValue;
use std::collections::BTreeSet;

alloy::sol! {
    function extsload(bytes32 slot) external view returns (bytes32);
}

/// A V3 pool's `Swap(address,address,int256,int256,uint160,uint128,int24)`.
const V3_SWAP: B256 = b256!("0xc42079f94a6350d7e6235f29174924f928cc2ac818eb64fed8004e115fbcca67");
/// A V3 pool's `Mint(address,address,int24,int24,uint128,uint256,uint256)`.
pub(crate) const V3_MINT: B256 = b256!("0x7a53080ba414158be7ec69b987b5fb7d07dee101fe85488f0853ae16239d0bde");
/// A V3 pool's `Initialize(uint160,int24)`.
const V3_INITIALIZE: B256 = b256!("0x98636036cb66a9c19a37435efc1e90142190214e8abeb821bdba3f2990dd4c95");
/// The V3 factory's `PoolCreated(address,address,uint24,int24,address)`.
const V3_POOL_CREATED: B256 = b256!("0x783cca1c0412dd0d695e784568c96da2e9c22ff989357a2e8b1d9b2b4e6b7118");
/// V4 PoolManager's `Swap(bytes32,address,int128,int128,uint160,uint128,int24,uint24)`.
const V4_SWAP: B256 = b256!("0x40e9cecb9f5f1f1c5b9c97dec2917b7ee92e57ba5563708daca94dd84ad7112f");
/// V4 PoolManager's `ModifyLiquidity(bytes32,address,int24,int24,int256,bytes32)`.
pub(crate) const V4_MODIFY_LIQUIDITY: B256 =
    b256!("0xf208f4912782fd25c7f114ca3723a2d5dd6f3bcc3ac8db5af63baa85f711d5ec");
/// V4 PoolManager's `Initialize(bytes32,address,address,uint24,int24,address,uint160,int24)`.
const V4_INITIALIZE: B256 = b256!("0xdd466e674ea557f56295e2d0218a125ea4b4f0f6f3307b95f85e6110838d6438");

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

/// Every pool that swapped or had liquidity added in the plan (V3 `Swap` / `Mint`, V4 `Swap` /
/// `ModifyLiquidity` with a positive delta).
pub(crate) fn touched(logs: &[&Log]) -> BTreeSet<PoolRef> {
    let mut pools = BTreeSet::new();
    for log in logs {
        let t = log.topics();
        match t.first() {
            Some(&V3_SWAP) | Some(&V3_MINT) => {
                pools.insert(PoolRef::V3(log.address));
            }
            Some(&V4_SWAP) if t.len() >= 2 => {
                pools.insert(PoolRef::V4 { manager: log.address, id: t[1] });
            }
            Some(&V4_MODIFY_LIQUIDITY) if t.len() >= 2 => {
                let adds = <(I256, I256, I256, B256)>::abi_decode_params(&log.data.data)
                    .is_ok_and(|(_, _, delta, _)| delta.is_positive());
                if adds {
                    pools.insert(PoolRef::V4 { manager: log.address, id: t[1] });
                }
            }
            _ => {}
        }
    }
    pools
}

/// `pool`'s tokens and its price before the plan whose logs are `logs`.
pub(crate) fn state(valuer: &Valuer, chain: u64, pool: PoolRef, logs: &[&Log]) -> Result<PoolState, String> {
    match pool {
        PoolRef::V3(address) => {
            // Created by the plan itself: its tokens from the factory's event, its price from
            // the pool's `Initialize`.
            let initialized =
                logs.iter().find(|l| l.address == address && l.topics().first() == Some(&V3_INITIALIZE));
            if let Some(init) = initialized {
                let (sqrt, _) = <(U256, I256)>::abi_decode_params(&init.data.data)
                    .map_err(|e| format!("{pool}: malformed Initialize: {e}"))?;
                let created = logs.iter().find(|l| {
                    l.topics().first() == Some(&V3_POOL_CREATED)
                        && l.topics().len() == 4
                        && <(I256, Address)>::abi_decode_params(&l.data.data).is_ok_and(|(_, p)| p == address)
                });
                let (token0, token1) = match created {
                    Some(c) => (Address::from_word(c.topics()[1]), Address::from_word(c.topics()[2])),
                    None => valuer.pool_tokens(chain, address)?,
                };
                return Ok(PoolState { token0, token1, sqrt_price_x96: sqrt });
            }
            let (token0, token1) = valuer.pool_tokens(chain, address)?;
            let sqrt_price_x96 = valuer.v3_sqrt_price(chain, address)?;
            Ok(PoolState { token0, token1, sqrt_price_x96 })
        }
        PoolRef::V4 { manager, id } => {
            let in_plan = logs.iter().find(|l| {
                l.address == manager
                    && l.topics().first() == Some(&V4_INITIALIZE)
                    && l.topics().get(1) == Some(&id)
            });
            let init = match in_plan {
                Some(log) => (*log).clone(),
                None => valuer.v4_initialize(chain, manager, id, V4_INITIALIZE)?,
            };
            let t = init.topics();
            if t.len() != 4 {
                return Err(format!("{pool}: malformed Initialize"));
            }
            let (token0, token1) = (Address::from_word(t[2]), Address::from_word(t[3]));
            let sqrt_price_x96 = if in_plan.is_some() {
                let (_, _, _, sqrt, _) =
                    <(U256, I256, Address, U256, I256)>::abi_decode_params(&init.data.data)
                        .map_err(|e| format!("{pool}: malformed Initialize: {e}"))?;
                sqrt
            } else {
                let slot = keccak256([id.as_slice(), &U256::from(POOLS_SLOT).to_be_bytes::<32>()].concat());
                let word = valuer.read(chain, manager, extsloadCall { slot })?;
                U256::from_be_bytes(word.0) & ((U256::from(1u8) << 160) - U256::from(1u8))
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
    fn event_topics_are_the_signatures() {
        assert_eq!(V3_SWAP, keccak256("Swap(address,address,int256,int256,uint160,uint128,int24)"));
        assert_eq!(V3_MINT, keccak256("Mint(address,address,int24,int24,uint128,uint256,uint256)"));
        assert_eq!(V3_INITIALIZE, keccak256("Initialize(uint160,int24)"));
        assert_eq!(V3_POOL_CREATED, keccak256("PoolCreated(address,address,uint24,int24,address)"));
        assert_eq!(V4_SWAP, keccak256("Swap(bytes32,address,int128,int128,uint160,uint128,int24,uint24)"));
        assert_eq!(
            V4_MODIFY_LIQUIDITY,
            keccak256("ModifyLiquidity(bytes32,address,int24,int24,int256,bytes32)")
        );
        assert_eq!(
            V4_INITIALIZE,
            keccak256("Initialize(bytes32,address,address,uint24,int24,address,uint160,int24)")
        );
    }

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
