//! What the host takes as evidence from a simulation's logs. A log says only what its emitter
//! chose to say: anyone's contract can emit a pool's `Swap`, `Initialize` or `ModifyLiquidity`
//! with any contents. So a pool event is evidence only from the contract that must have emitted
//! it: a V4 event only from the PoolManager the operator configured, a V3 pool's only from an
//! address the configured V3 factory maps its tokens and fee to, a V2 pair's only from the V2
//! factory's pair of its tokens (see [`crate::valuation::UniswapContracts`]) — or from a pool the
//! plan itself creates, named by that factory's own creation log. Every hook that reads pool
//! facts from logs (stranded value, the price guard, the Uniswap cross-check, the value guard)
//! takes them from here; what a pool holds and its price they read from state. A Pendle
//! market's `Swap` and `Mint` count only from a market the operator lists.

use crate::valuation::{Valuer, Venue};
use alloy::primitives::{Address, B256, Log, b256};
use alloy::sol_types::SolValue;
use bardo_evm::simulate::Simulation;
use std::collections::{BTreeMap, BTreeSet};

/// A V3 pool's `Swap(address,address,int256,int256,uint160,uint128,int24)`.
pub(crate) const V3_SWAP: B256 = b256!("0xc42079f94a6350d7e6235f29174924f928cc2ac818eb64fed8004e115fbcca67");
/// A V3 pool's `Mint(address,address,int24,int24,uint128,uint256,uint256)`.
pub(crate) const V3_MINT: B256 = b256!("0x7a53080ba414158be7ec69b987b5fb7d07dee101fe85488f0853ae16239d0bde");
/// A V3 pool's `Burn(address,int24,int24,uint128,uint256,uint256)`.
const V3_BURN: B256 = b256!("0x0c396cd989a39f4459b5fa1aed6a9a8dcdbc45908acfd67e028cd568da98982c");
/// A V3 pool's `Collect(address,address,int24,int24,uint128,uint128)`.
const V3_COLLECT: B256 = b256!("0x70935338e69775456a85ddef226c395fb668b63fa0115f5f20610b388e6ca9c0");
/// A V3 pool's `Initialize(uint160,int24)`.
pub(crate) const V3_INITIALIZE: B256 =
    b256!("0x98636036cb66a9c19a37435efc1e90142190214e8abeb821bdba3f2990dd4c95");
/// The V3 factory's `PoolCreated(address,address,uint24,int24,address)`.
const V3_POOL_CREATED: B256 = b256!("0x783cca1c0412dd0d695e784568c96da2e9c22ff989357a2e8b1d9b2b4e6b7118");
/// A V2 pair's `Swap(address,uint256,uint256,uint256,uint256,address)`.
pub(crate) const V2_SWAP: B256 = b256!("0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822");
/// A V2 pair's `Mint(address,uint256,uint256)`.
const V2_MINT: B256 = b256!("0x4c209b5fc8ad50758f13e2e1088ba56a560dff690a1c6fef26394f4c03821c4f");
/// A V2 pair's `Burn(address,uint256,uint256,address)`.
const V2_BURN: B256 = b256!("0xdccd412f0b1252819cb1fd330b93224ca42612892bb3f4f789976e6d81936496");
/// A V2 pair's `Sync(uint112,uint112)`.
const V2_SYNC: B256 = b256!("0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1");
/// The V2 factory's `PairCreated(address,address,address,uint256)`.
const V2_PAIR_CREATED: B256 = b256!("0x0d3648bd0f6ba80134a33ba9275ac585d9d315f0ad8355cddefde31afa28d0e9");
/// V4 PoolManager's `Swap(bytes32,address,int128,int128,uint160,uint128,int24,uint24)`.
pub(crate) const V4_SWAP: B256 = b256!("0x40e9cecb9f5f1f1c5b9c97dec2917b7ee92e57ba5563708daca94dd84ad7112f");
/// V4 PoolManager's `ModifyLiquidity(bytes32,address,int24,int24,int256,bytes32)`.
pub(crate) const V4_MODIFY_LIQUIDITY: B256 =
    b256!("0xf208f4912782fd25c7f114ca3723a2d5dd6f3bcc3ac8db5af63baa85f711d5ec");
/// V4 PoolManager's `Initialize(bytes32,address,address,uint24,int24,address,uint160,int24)`.
pub(crate) const V4_INITIALIZE: B256 =
    b256!("0xdd466e674ea557f56295e2d0218a125ea4b4f0f6f3307b95f85e6110838d6438");
/// V4 PoolManager's `Donate(bytes32,address,uint256,uint256)`.
const V4_DONATE: B256 = b256!("0x29ef05caaff9404b7cb6d1c0e9bbae9eaa7ab2541feba1a9c4248594c08156cb");

/// A Pendle market's `Swap(address,address,int256,int256,uint256,uint256)`.
const PENDLE_SWAP: B256 = b256!("0x829000a5bc6a12d46e30cdcecd7c56b1efd88f6d7d059da6734a04f3764557c4");
/// A Pendle market's `Mint(address,uint256,uint256,uint256)`.
const PENDLE_MINT: B256 = b256!("0xb4c03061fb5b7fed76389d5af8f2e0ddb09f8c70d1333abbb62582835e10accb");

const V3_EVENTS: [B256; 5] = [V3_SWAP, V3_MINT, V3_BURN, V3_COLLECT, V3_INITIALIZE];
const V2_EVENTS: [B256; 4] = [V2_SWAP, V2_MINT, V2_BURN, V2_SYNC];
const V4_EVENTS: [B256; 4] = [V4_SWAP, V4_MODIFY_LIQUIDITY, V4_INITIALIZE, V4_DONATE];

/// Whether `topic` is an event only a pool of `venue`'s kind emits.
fn emitted_by(topic: &B256, venue: Venue) -> bool {
    match venue {
        Venue::V2 { .. } => V2_EVENTS.contains(topic),
        Venue::V3 { .. } => V3_EVENTS.contains(topic),
        Venue::V4 => V4_EVENTS.contains(topic),
    }
}

fn is_pool_event(topic: &B256) -> bool {
    V3_EVENTS.contains(topic) || V2_EVENTS.contains(topic) || V4_EVENTS.contains(topic)
}

/// A simulation's logs, with every emitter of a pool event authenticated.
#[derive(Debug)]
pub(crate) struct Evidence<'a> {
    logs: Vec<&'a Log>,
    venues: BTreeMap<Address, Venue>,
    created: BTreeSet<Address>,
    /// Pendle markets the operator lists (their own `Swap` and `Mint` are evidence).
    pendle_markets: Vec<Address>,
}

impl<'a> Evidence<'a> {
    /// The logs of `sim`, their pool events' emitters authenticated on `chain` (reads of the
    /// configured factories, kept per pool by `valuer`). An error only when the node failed.
    pub(crate) fn of(valuer: &Valuer, chain: u64, sim: &'a Simulation) -> Result<Self, String> {
        Self::from_logs(valuer, chain, sim.outcomes.iter().flat_map(|o| &o.logs).collect())
    }

    /// [`Self::of`] over `logs`, in the order they were emitted.
    pub(crate) fn from_logs(valuer: &Valuer, chain: u64, logs: Vec<&'a Log>) -> Result<Self, String> {
        let contracts = valuer.uniswap(chain);
        let (mut venues, mut created) = (BTreeMap::new(), BTreeSet::new());
        // Pools the plan creates: named by their factory's own log, with their tokens and fee.
        for log in &logs {
            let t = log.topics();
            let made = match t.first() {
                Some(&V3_POOL_CREATED) if t.len() == 4 && Some(log.address) == contracts.v3_factory => {
                    <(alloy::primitives::I256, Address)>::abi_decode_params(&log.data.data).ok().map(
                        |(_, pool)| {
                            let fee = u32::try_from(alloy::primitives::U256::from_be_bytes(t[3].0))
                                .unwrap_or_default();
                            (
                                pool,
                                Venue::V3 {
                                    token0: Address::from_word(t[1]),
                                    token1: Address::from_word(t[2]),
                                    fee,
                                },
                            )
                        },
                    )
                }
                Some(&V2_PAIR_CREATED) if t.len() == 3 && Some(log.address) == contracts.v2_factory => {
                    <(Address, alloy::primitives::U256)>::abi_decode_params(&log.data.data).ok().map(
                        |(pair, _)| {
                            (
                                pair,
                                Venue::V2 {
                                    token0: Address::from_word(t[1]),
                                    token1: Address::from_word(t[2]),
                                },
                            )
                        },
                    )
                }
                _ => None,
            };
            if let Some((pool, venue)) = made {
                venues.insert(pool, venue);
                created.insert(pool);
            }
        }
        let emitters: BTreeSet<Address> = logs
            .iter()
            .filter(|l| l.topics().first().is_some_and(is_pool_event) && !venues.contains_key(&l.address))
            .map(|l| l.address)
            .collect();
        for at in emitters {
            if let Some(venue) = valuer.venue(chain, at)? {
                venues.insert(at, venue);
            }
        }
        Ok(Self { logs, venues, created, pendle_markets: valuer.pendle_markets(chain) })
    }

    /// Whether a listed Pendle market emitted `topic` in the plan.
    fn pendle(&self, topic: B256) -> bool {
        self.logs
            .iter()
            .any(|l| l.topics().first() == Some(&topic) && self.pendle_markets.contains(&l.address))
    }

    /// Every log of the plan, in order (a token's own `Transfer` speaks for that token).
    pub(crate) fn logs(&self) -> &[&'a Log] {
        &self.logs
    }

    /// The plan's pool events whose emitter is the contract that must have emitted them, in
    /// order: (index in [`Self::logs`], the log, what emitted it). Any other pool event — a
    /// stranger's contract speaking for a pool — is not here.
    pub(crate) fn pool_events(&self) -> impl Iterator<Item = (usize, &'a Log, Venue)> + '_ {
        self.logs.iter().enumerate().filter_map(|(i, log)| {
            let venue = *self.venues.get(&log.address)?;
            log.topics().first().is_some_and(|t| emitted_by(t, venue)).then_some((i, *log, venue))
        })
    }

    /// Whether the plan swaps in a trusted pool or a listed Pendle market.
    pub(crate) fn trades(&self) -> bool {
        self.pool_events()
            .any(|(_, l, _)| l.topics().first().is_some_and(|t| [V2_SWAP, V3_SWAP, V4_SWAP].contains(t)))
            || self.pendle(PENDLE_SWAP)
    }

    /// Whether the plan adds liquidity to a trusted pool or a listed Pendle market.
    pub(crate) fn deposits(&self) -> bool {
        self.pendle(PENDLE_MINT)
            || self.pool_events().any(|(_, l, _)| match l.topics().first() {
                Some(&V2_MINT) | Some(&V3_MINT) => true,
                Some(&V4_MODIFY_LIQUIDITY) => <(
                    alloy::primitives::I256,
                    alloy::primitives::I256,
                    alloy::primitives::I256,
                    B256,
                )>::abi_decode_params(&l.data.data)
                .is_ok_and(|(_, _, delta, _)| delta.is_positive()),
                _ => false,
            })
    }

    /// What `at` is, if the plan's logs showed it to be a trusted pool (or the PoolManager).
    pub(crate) fn venue(&self, at: Address) -> Option<Venue> {
        self.venues.get(&at).copied()
    }

    /// Whether the plan itself created pool `at` (it had no state before the plan).
    pub(crate) fn created(&self, at: Address) -> bool {
        self.created.contains(&at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::keccak256;

    #[test]
    fn event_topics_are_the_signatures() {
        let pairs = [
            (V3_SWAP, "Swap(address,address,int256,int256,uint160,uint128,int24)"),
            (PENDLE_SWAP, "Swap(address,address,int256,int256,uint256,uint256)"),
            (PENDLE_MINT, "Mint(address,uint256,uint256,uint256)"),
            (V3_MINT, "Mint(address,address,int24,int24,uint128,uint256,uint256)"),
            (V3_BURN, "Burn(address,int24,int24,uint128,uint256,uint256)"),
            (V3_COLLECT, "Collect(address,address,int24,int24,uint128,uint128)"),
            (V3_INITIALIZE, "Initialize(uint160,int24)"),
            (V3_POOL_CREATED, "PoolCreated(address,address,uint24,int24,address)"),
            (V2_SWAP, "Swap(address,uint256,uint256,uint256,uint256,address)"),
            (V2_MINT, "Mint(address,uint256,uint256)"),
            (V2_BURN, "Burn(address,uint256,uint256,address)"),
            (V2_SYNC, "Sync(uint112,uint112)"),
            (V2_PAIR_CREATED, "PairCreated(address,address,address,uint256)"),
            (V4_SWAP, "Swap(bytes32,address,int128,int128,uint160,uint128,int24,uint24)"),
            (V4_MODIFY_LIQUIDITY, "ModifyLiquidity(bytes32,address,int24,int24,int256,bytes32)"),
            (V4_INITIALIZE, "Initialize(bytes32,address,address,uint24,int24,address,uint160,int24)"),
            (V4_DONATE, "Donate(bytes32,address,uint256,uint256)"),
        ];
        for (topic, signature) in pairs {
            assert_eq!(topic, keccak256(signature), "{signature}");
        }
    }

    #[test]
    fn a_pool_event_counts_only_from_a_pool_of_its_kind() {
        let v3 = Venue::V3 { token0: Address::ZERO, token1: Address::ZERO, fee: 3000 };
        assert!(emitted_by(&V3_SWAP, v3) && !emitted_by(&V4_SWAP, v3) && !emitted_by(&V2_SYNC, v3));
        assert!(emitted_by(&V4_MODIFY_LIQUIDITY, Venue::V4) && !emitted_by(&V3_MINT, Venue::V4));
        let v2 = Venue::V2 { token0: Address::ZERO, token1: Address::ZERO };
        assert!(emitted_by(&V2_SYNC, v2) && !emitted_by(&V3_INITIALIZE, v2));
    }
}
