//! `uniswap_get_positions`: every V3 and V4 position an account holds, each with its range,
//! whether the price is in it, its amounts and uncollected fees (the position managers' own
//! math, simulated as the owner) and its value at the operator's USD prices.
//!
//! V3's position manager enumerates an owner's NFTs; V4's does not, so V4 positions are the
//! ones the account received (ERC-721 `Transfer` of the PositionManager itself) since
//! `from_block` and still holds.

use super::*;
use crate::liquidity_v4 as v4p;
use crate::math::{amounts_for_liquidity, fee_growth_inside, fees_earned, sqrt_price_at_tick};
use bardo_sdk::abi::{account_or_wallet, wire};
use bardo_sdk::{LogFilter, logs};
use std::collections::BTreeMap;

/// Params of `uniswap_get_positions`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionsParams {
    /// Chain id.
    pub chain_id: u64,
    /// Whose positions (default: the wallet).
    #[serde(default)]
    pub owner: Option<String>,
    /// `v3` or `v4` only (default: both).
    #[serde(default)]
    pub version: Option<Version>,
    /// V4: the first block searched for positions received (default: 200,000 blocks back).
    #[serde(default)]
    pub from_block: Option<u64>,
    /// Also list positions with no liquidity and no fees left (default false).
    #[serde(default)]
    pub include_empty: bool,
    /// At most this many positions, 1 to 25 (default 20; each costs about 0.23 M fuel of a
    /// call's 10 M).
    #[serde(default = "twenty")]
    pub limit: usize,
    /// Skip this many of the positions found (a previous answer's `next_offset`).
    #[serde(default)]
    pub offset: usize,
}

fn twenty() -> usize {
    20
}

/// One position with its value.
#[derive(Debug, Serialize)]
pub struct Held {
    /// `v3` or `v4`.
    pub version: &'static str,
    #[serde(flatten)]
    pub position: PositionOutput,
    /// Ticks from the range to the price (0 in range): how far the price has to come back.
    pub ticks_out_of_range: i32,
    /// Principal at the operator's USD prices (none if a token has no trusted price).
    pub value_usd: Option<f64>,
    /// Uncollected fees at those prices.
    pub fees_usd: Option<f64>,
}

/// Result of `uniswap_get_positions`.
#[derive(Debug, Serialize)]
pub struct Positions {
    pub chain_id: u64,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub owner: Address,
    pub positions: Vec<Held>,
    /// Principal and fees of every priced position, USD.
    pub total_usd: f64,
    /// Tokens without a trusted price, and why (their positions have no USD value).
    pub unpriced: BTreeMap<String, String>,
    /// False when a token is unpriced or the limit cut the list.
    pub complete: bool,
    /// Where the next page starts, when the limit cut the list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// V4: the blocks searched for positions received.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v4_blocks: Option<(u64, u64)>,
}

pub struct GetPositions;

impl ReadTool for GetPositions {
    const NAME: &'static str = "uniswap_get_positions";
    type Params = PositionsParams;
    type Output = Positions;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet:
                "uniswap_get_positions: every V3/V4 LP position of the wallet: range, in-range, amounts, \
                             fees, USD value"
                    .into(),
            progress_steps: vec!["find positions".into(), "read positions".into(), "value positions".into()],
            tick_budget: TickBudget::Slow,
            prompt_guidelines: guidelines(&[
                (Phase::Thriving, "Re-centre positions out of range that you mean to keep."),
                (Phase::Defensive, "Close positions out of range; collect fees."),
                (Phase::Survival, "List every position and close what is at risk."),
            ]),
            ..tool_def::<PositionsParams>(
                Self::NAME,
                "Lists every Uniswap V3 and V4 liquidity position an account holds (default the wallet): pool, \
                 tick range, whether the price is in range and how far out, liquidity, the token amounts it is \
                 worth now and its uncollected fees (the position managers' own math, simulated on a fork), and \
                 their USD value at the operator's trusted prices. V4 positions are those received since \
                 `from_block`. It changes nothing.",
                Category::Lp,
            )
        }
    }

    fn run(p: PositionsParams) -> Result<Positions, Error> {
        if !(1..=25).contains(&p.limit) {
            return Err(invalid_params(format!("`limit` {} must be 1 to 25; page with `offset`", p.limit)));
        }
        let book = book(p.chain_id)?;
        let owner = account_or_wallet(p.chain_id, p.owner.as_deref(), "owner")?;
        events::progress(0);
        // V3 ids are read by index as the page needs them; V4's come from one log scan.
        let v3_count = if p.version != Some(Version::V4) {
            eth_call(p.chain_id, book.position_manager, &balanceOfCall { owner })?.saturating_to::<usize>()
        } else {
            0
        };
        let mut v4_ids = Vec::new();
        let mut v4_blocks = None;
        if p.version != Some(Version::V3) && book.v4_position_manager.is_some() {
            let (from, to) = logs::range(p.chain_id, p.from_block, logs::MAX_SCAN)?;
            v4_blocks = Some((from, to));
            v4_ids = received_v4(p.chain_id, &book, owner, from, to)?;
        }
        events::progress(1);
        let now = bardo_sdk::chain::block_timestamp(p.chain_id, None)?;
        let mut out = Positions {
            chain_id: p.chain_id,
            owner,
            positions: Vec::new(),
            total_usd: 0.0,
            unpriced: BTreeMap::new(),
            complete: true,
            next_offset: None,
            v4_blocks,
        };
        let mut prices: BTreeMap<Address, Option<f64>> = BTreeMap::new();
        let mut cache = Cache::default();
        for i in p.offset..v3_count + v4_ids.len() {
            if out.positions.len() == p.limit {
                out.complete = false;
                out.next_offset = Some(i);
                break;
            }
            let (version, id) = match v4_ids.get(i.wrapping_sub(v3_count)) {
                Some(id) if i >= v3_count => (Version::V4, *id),
                _ => {
                    let index = U256::from(i);
                    (
                        Version::V3,
                        eth_call(
                            p.chain_id,
                            book.position_manager,
                            &tokenOfOwnerByIndexCall { owner, index },
                        )?,
                    )
                }
            };
            let position = match version {
                Version::V4 => {
                    let read = PositionParams {
                        chain_id: p.chain_id,
                        position_id: id.to_string(),
                        version: Some(version),
                    };
                    GetPosition::run(read)?
                }
                _ => cache.v3(p.chain_id, &book, id, owner)?,
            };
            let empty = position.liquidity == "0" && position.fees0_base == "0" && position.fees1_base == "0";
            if empty && !p.include_empty {
                continue;
            }
            let mut usd = |t: &Token| -> Option<f64> {
                *prices.entry(t.address).or_insert_with(|| {
                    match book.tokens.iter().find(|l| l.address == t.address) {
                        // Only the listed symbol names a feed: a token may call itself anything.
                        Some(listed) => match book.prices.usd(p.chain_id, &listed.symbol, now) {
                            Ok(price) => Some(price),
                            Err(why) => {
                                out.unpriced.insert(listed.symbol.clone(), why);
                                None
                            }
                        },
                        None => {
                            out.unpriced.insert(
                                t.address.to_checksum(None),
                                "not in the operator's token list".into(),
                            );
                            None
                        }
                    }
                })
            };
            let (p0, p1) = (usd(&position.token0), usd(&position.token1));
            let worth = |a: &str, b: &str| -> Option<f64> {
                let (a, b): (f64, f64) = (a.parse().ok()?, b.parse().ok()?);
                Some(a * p0? + b * p1?)
            };
            let value_usd = worth(&position.amount0, &position.amount1);
            let fees_usd = worth(&position.fees0, &position.fees1);
            match (value_usd, fees_usd) {
                (Some(v), Some(f)) => out.total_usd += v + f,
                _ => out.complete = false,
            }
            let (lower, upper, tick) = (position.tick_lower, position.tick_upper, position.current_tick);
            let ticks_out_of_range = if tick < lower {
                lower - tick
            } else if tick >= upper {
                tick - upper + 1
            } else {
                0
            };
            out.positions.push(Held {
                version: if version == Version::V4 { "v4" } else { "v3" },
                position,
                ticks_out_of_range,
                value_usd,
                fees_usd,
            });
        }
        events::progress(2);
        out.total_usd = (out.total_usd * 100.0).round() / 100.0;
        Ok(out)
    }
}

/// What positions of the same pools share: their tokens and pools, read once per listing.
/// A V3 pool by its tokens and fee.
type PoolKey = (Address, Address, u32);

#[derive(Default)]
pub(super) struct Cache {
    tokens: BTreeMap<Address, Token>,
    /// Each pool's state and fee growth (global, per token).
    pools: BTreeMap<PoolKey, (crate::pools::V3Pool, (U256, U256))>,
    /// Each initialized tick's fee growth outside it, per pool.
    ticks: BTreeMap<(Address, i32), (U256, U256)>,
}

impl Cache {
    fn token(&mut self, chain_id: ChainId, address: Address) -> Result<Token, Error> {
        if let Some(t) = self.tokens.get(&address) {
            return Ok(t.clone());
        }
        let t = erc20::token(chain_id, address)?;
        self.tokens.insert(address, t.clone());
        Ok(t)
    }

    /// V3 position `id` of `owner`: its stored range and liquidity, the amounts that liquidity
    /// holds at the pool's price (the pool's own rounding: what removing it pays), and its fees:
    /// what the manager owes plus what the range earned since the manager last looked, from the
    /// pool's fee growth (`TickLibrary`, `PositionLibrary`) — what `collect` would pay.
    pub(super) fn v3(
        &mut self,
        chain_id: ChainId,
        book: &Book,
        id: U256,
        owner: Address,
    ) -> Result<PositionOutput, Error> {
        use bardo_sdk::uniswap::{feeGrowthGlobal0X128Call, feeGrowthGlobal1X128Call, ticksCall};
        let stored = eth_call(chain_id, book.position_manager, &positionsCall { tokenId: id })?;
        let (t0, t1) = (self.token(chain_id, stored.token0)?, self.token(chain_id, stored.token1)?);
        let fee = stored.fee.to::<u32>();
        let key = (t0.address, t1.address, fee);
        if let std::collections::btree_map::Entry::Vacant(slot) = self.pools.entry(key) {
            let address = eth_call(
                chain_id,
                book.v3_factory,
                &getPoolCall { tokenA: t0.address, tokenB: t1.address, fee: stored.fee },
            )?;
            let pool = crate::pools::v3_state(chain_id, address, &t0, &t1, fee)?;
            let global = (
                eth_call(chain_id, address, &feeGrowthGlobal0X128Call {})?,
                eth_call(chain_id, address, &feeGrowthGlobal1X128Call {})?,
            );
            slot.insert((pool, global));
        }
        let (pool, global) = self.pools[&key].clone();
        let ticks = (stored.tickLower.as_i32(), stored.tickUpper.as_i32());
        let mut outside = |tick: i32| -> Result<(U256, U256), Error> {
            if let Some(o) = self.ticks.get(&(pool.address, tick)) {
                return Ok(*o);
            }
            let at = alloy_primitives::aliases::I24::try_from(tick)
                .map_err(|_| invalid_params(format!("tick {tick}")))?;
            let t = eth_call(chain_id, pool.address, &ticksCall { tick: at })?;
            let o = (t.feeGrowthOutside0X128, t.feeGrowthOutside1X128);
            self.ticks.insert((pool.address, tick), o);
            Ok(o)
        };
        let (lower, upper) = (outside(ticks.0)?, outside(ticks.1)?);
        let fees = [0, 1].map(|i| {
            let pick = |p: (U256, U256)| if i == 0 { p.0 } else { p.1 };
            let inside = fee_growth_inside(ticks, pool.tick, pick(global), pick(lower), pick(upper));
            let last = if i == 0 { stored.feeGrowthInside0LastX128 } else { stored.feeGrowthInside1LastX128 };
            let owed = if i == 0 { stored.tokensOwed0 } else { stored.tokensOwed1 };
            // A position without liquidity earns nothing; the manager's owed stays.
            let earned =
                if stored.liquidity == 0 { U256::ZERO } else { fees_earned(inside, last, stored.liquidity) };
            U256::from(owed) + earned
        });
        let (sa, sb) = (sqrt_price_at_tick(ticks.0)?, sqrt_price_at_tick(ticks.1)?);
        let principal = amounts_for_liquidity(pool.sqrt_price_x96, sa, sb, stored.liquidity);
        Ok(PositionOutput::new(
            PositionView {
                id,
                owner,
                pool: pool.address,
                fee,
                ticks,
                current_tick: pool.tick,
                liquidity: stored.liquidity,
            },
            (t0, t1),
            (principal, (fees[0], fees[1])),
            None,
        ))
    }
}

/// V4 positions `owner` received from `from` to `to` and still holds, oldest first.
fn received_v4(
    chain_id: ChainId,
    book: &Book,
    owner: Address,
    from: u64,
    to: u64,
) -> Result<Vec<U256>, Error> {
    let posm = v4p::manager(chain_id, book)?;
    let filter = LogFilter {
        chain_id,
        addresses: vec![wire(&posm)],
        topics: vec![
            vec![<v4p::nft::Transfer as alloy_sol_types::SolEvent>::SIGNATURE_HASH.to_string()],
            vec![],
            vec![alloy_primitives::B256::left_padding_from(owner.as_slice()).to_string()],
        ],
        from_block: None,
        to_block: None,
    };
    let mut ids = Vec::new();
    for log in logs::scan(filter, from, to)? {
        let Some(t) = bardo_sdk::abi::decode_log::<v4p::nft::Transfer>(&log) else { continue };
        if ids.contains(&t.id) {
            continue;
        }
        match eth_call(chain_id, posm, &ownerOfCall { tokenId: t.id }) {
            Ok(now) if now == owner => ids.push(t.id),
            Ok(_) => {}
            // Burned since.
            Err(e) if e.code == bardo_sdk::ErrorCode::Reverted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(ids)
}
