//! Quotes through the contracts themselves — V4Quoter for V4, QuoterV2 for V3, Router02's
//! getAmounts* for V2 — and the best route among fee tiers and versions.

use crate::abi::*;
use crate::book::{Book, FEE_TIERS};
use crate::pools::{Version, v2_pair, v3_liquidity};
use crate::v4::{self, V4Key};
use alloy_primitives::aliases::{U24, U160};
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::eth_call;
use bardo_sdk::erc20::Token;
use bardo_sdk::errors::{invalid_params, not_found};
use bardo_sdk::{ChainId, Error, ErrorCode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Check a fee tier param.
pub fn check_fee(fee: Option<u32>) -> Result<(), Error> {
    match fee {
        Some(f) if !FEE_TIERS.contains(&f) => Err(invalid_params(format!(
            "`fee` {f} is not a Uniswap V3 fee tier; use 100, 500, 3000 or 10000 (hundredths of a bip)"
        ))),
        _ => Ok(()),
    }
}

/// Which amount is fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// `amount` is what goes in; the quote is what comes out.
    #[default]
    ExactIn,
    /// `amount` is what must come out; the quote is what goes in.
    ExactOut,
}

/// Where a swap goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Route {
    pub version: Version,
    /// Fee in hundredths of a bip (V2: 3000).
    pub fee: u32,
    /// The pool (V4: the PoolManager, which holds every V4 pool).
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub pool: Address,
    /// A V4 pool's id, tick spacing and hooks.
    #[serde(skip_serializing_if = "Option::is_none", flatten)]
    pub v4: Option<V4Key>,
}

/// One route's quote, in base units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quote {
    /// The (first) pool.
    pub route: Route,
    pub amount_in: U256,
    pub amount_out: U256,
    /// A second pool, after `route`, through an intermediate token.
    pub then: Option<Hop>,
}

/// The second hop of a two-hop route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Hop {
    pub route: Route,
    /// The intermediate token (WETH).
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub via: Address,
    /// What the first hop delivers and the second takes, base units.
    #[serde(rename = "amount_via_base", serialize_with = "decimal")]
    pub amount_mid: U256,
}

fn decimal<S: serde::Serializer>(v: &U256, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.to_string())
}

/// Restrictions on the route.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter {
    pub version: Option<Version>,
    pub fee: Option<u32>,
    /// WETH, when the wallet pays or receives it as native ether: V4 pools of ether itself
    /// then count too (single-pool routes).
    pub native: Option<Address>,
    /// One V4 pool, named by its key (a hooked pool, or a non-standard tick spacing): the only
    /// route.
    pub named: v4::Named,
}

impl Filter {
    /// The restrictions a quote's or swap's params give: `hooks` or `tick_spacing` name one V4
    /// pool, with `fee`.
    pub fn of(
        version: Option<Version>,
        fee: Option<u32>,
        (tick_spacing, hooks): (Option<i32>, Option<&str>),
        native: Option<Address>,
    ) -> Result<Self, Error> {
        if hooks.is_none() && tick_spacing.is_none() {
            check_fee(fee)?;
            return Ok(Filter { version, fee, native, named: None });
        }
        let Some(fee) = fee else {
            return Err(bardo_sdk::errors::invalid_params(
                "`hooks` and `tick_spacing` name one V4 pool: give its `fee` too",
            ));
        };
        if version.is_some_and(|v| v != Version::V4) {
            return Err(bardo_sdk::errors::invalid_params(
                "`hooks` and `tick_spacing` name a V4 pool; set `version` to v4 or leave it out",
            ));
        }
        let named = v4::key_params(fee, tick_spacing, hooks)?;
        Ok(Filter { version: Some(Version::V4), fee: Some(fee), native, named: Some(named) })
    }
}

/// A contract call that reverted means "this route cannot fill it"; anything else is an error.
fn skip_reverts<T>(r: Result<T, Error>) -> Result<Option<T>, Error> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.code == ErrorCode::Reverted => Ok(None),
        Err(e) => Err(e),
    }
}

/// QuoterV2's price limits when none is given: a swap that ends at one ran out of liquidity.
const MIN_SQRT_RATIO_PLUS_1: u64 = 4_295_128_740;
const MAX_SQRT_RATIO_MINUS_1: &str = "1461446703485210103287273052203988822378723970341";

/// Whether a V3 exact-in swap from `tin` ending at `sqrt_after` stopped at the price limit.
fn ran_dry(tin: &Token, tout: &Token, sqrt_after: U160) -> bool {
    let limit = if tin.address < tout.address {
        U160::from(MIN_SQRT_RATIO_PLUS_1)
    } else {
        MAX_SQRT_RATIO_MINUS_1.parse().unwrap_or(U160::MAX)
    };
    sqrt_after == limit
}

/// The quotes of a swap: every route that fills the whole amount, best first (most out for
/// exact-in, least in for exact-out), and those that can fill only part of it (with what they
/// would really take and give).
#[derive(Debug, Default)]
pub struct Quotes {
    pub full: Vec<Quote>,
    pub partial: Vec<Quote>,
}

/// Quote every route allowed by `filter` — each pool of the pair, and between two tokens other
/// than WETH, the two-hop routes through WETH. `not-found` when no route can
/// fill the whole amount, naming the most one pool could.
pub fn quotes(
    chain_id: ChainId,
    book: &Book,
    tin: &Token,
    tout: &Token,
    amount: U256,
    side: Side,
    filter: Filter,
) -> Result<Quotes, Error> {
    let ask = Ask { tin, tout, amount, side, filter };
    let Quotes { full: mut out, partial } = direct(chain_id, book, ask)?;
    // A named pool is the only route.
    let via = book.weth().filter(|w| filter.named.is_none() && *w != tin.address && *w != tout.address);
    if let Some(weth) = via {
        let weth = bardo_sdk::erc20::token(chain_id, weth)?;
        let ask = Ask { filter: Filter { native: None, ..filter }, ..ask };
        out.extend(match side {
            Side::ExactIn => two_hop_exact_in(chain_id, book, ask, &weth)?,
            Side::ExactOut => two_hop_exact_out(chain_id, book, ask, &weth)?,
        });
    }
    match side {
        Side::ExactIn => out.sort_by_key(|q| std::cmp::Reverse(q.amount_out)),
        Side::ExactOut => out.sort_by_key(|q| q.amount_in),
    }
    if out.is_empty() {
        return Err(none_fills(chain_id, ask, &partial));
    }
    Ok(Quotes { full: out, partial })
}

/// Exact-in through `via`: the first pool that gives most of it, then every second pool. More
/// `via` in never gives less out of any pool, so the best first hop is the first hop of every
/// best two-hop route.
fn two_hop_exact_in(chain_id: ChainId, book: &Book, ask: Ask<'_>, via: &Token) -> Result<Vec<Quote>, Error> {
    let first = direct(chain_id, book, Ask { tout: via, ..ask })?.full;
    let Some(q1) = first.iter().max_by_key(|q| q.amount_out) else { return Ok(Vec::new()) };
    let second = direct(chain_id, book, Ask { tin: via, amount: q1.amount_out, ..ask })?.full;
    Ok(second
        .into_iter()
        .map(|q2| Quote {
            route: q1.route,
            amount_in: ask.amount,
            amount_out: q2.amount_out,
            then: Some(Hop { route: q2.route, via: via.address, amount_mid: q1.amount_out }),
        })
        .collect())
}

/// Exact-out through `via`, one version per route: the router runs a V2 path, a V3 path or V4
/// path keys as one command that asks each pool, from the last, for exactly what the next one
/// needs — so the quote is the second pool of that version needing the least `via`, then every
/// first pool of that version selling that much. (A mixed-version exact-out would have to buy
/// the intermediate token before knowing what the second pool will ask.)
fn two_hop_exact_out(chain_id: ChainId, book: &Book, ask: Ask<'_>, via: &Token) -> Result<Vec<Quote>, Error> {
    let second = direct(chain_id, book, Ask { tin: via, ..ask })?.full;
    let mut out = Vec::new();
    for version in [Version::V4, Version::V3, Version::V2] {
        let Some(q2) = second.iter().filter(|q| q.route.version == version).min_by_key(|q| q.amount_in)
        else {
            continue;
        };
        let filter = Filter { version: Some(version), ..ask.filter };
        let first = direct(chain_id, book, Ask { tout: via, amount: q2.amount_in, filter, ..ask })?.full;
        for q1 in first {
            let (amount_mid, amount_out) = match version {
                // A V2 pair pays what its input is worth, a little more than asked: the
                // second pair gets all the first delivers.
                Version::V2 => (q1.amount_out, v2_out(chain_id, book, q1.amount_out, via, ask.tout)?),
                _ => (q2.amount_in, q2.amount_out),
            };
            let then = Some(Hop { route: q2.route, via: via.address, amount_mid });
            out.push(Quote { route: q1.route, amount_in: q1.amount_in, amount_out, then });
        }
    }
    Ok(out)
}

/// What the V2 pair of `tin`/`tout` pays for `amount` of `tin`.
fn v2_out(chain_id: ChainId, book: &Book, amount: U256, tin: &Token, tout: &Token) -> Result<U256, Error> {
    let router =
        book.v2_router.ok_or_else(|| bardo_sdk::errors::internal("a V2 quote without a V2 router"))?;
    let amounts = eth_call(
        chain_id,
        router,
        &getAmountsOutCall { amountIn: amount, path: vec![tin.address, tout.address] },
    )?;
    amounts.last().copied().ok_or_else(|| bardo_sdk::errors::internal("getAmountsOut returned no amounts"))
}

/// What is quoted: `amount` of `tin` (exact-in) or of `tout` (exact-out), through the routes
/// `filter` allows.
#[derive(Clone, Copy)]
struct Ask<'a> {
    tin: &'a Token,
    tout: &'a Token,
    amount: U256,
    side: Side,
    filter: Filter,
}

/// Quote each pool of the pair (unsorted).
fn direct(chain_id: ChainId, book: &Book, ask: Ask<'_>) -> Result<Quotes, Error> {
    let Ask { tin, tout, amount, side, filter } = ask;
    let mut out = Vec::new();
    let mut partial = Vec::new();
    if filter.version.is_none_or(|v| v == Version::V4)
        && let (Some(quoter), Some(manager)) = (book.v4_quoter, book.v4_pool_manager)
    {
        let mut pools = v4::pools_or_named(chain_id, book, (tin, tout), filter.fee, filter.named)?;
        if let Some(weth) = filter.native {
            pools.extend(v4::native_pools(chain_id, book, (tin, tout), weth, (filter.fee, filter.named))?);
        }
        for pool in pools {
            if pool.liquidity == 0 {
                continue;
            }
            let quoted =
                skip_reverts(v4::quote(chain_id, quoter, &pool, tin, amount, side == Side::ExactIn))?;
            if let Some((amount_in, amount_out)) = quoted.filter(|(i, o)| !i.is_zero() && !o.is_zero()) {
                let route = Route { version: Version::V4, fee: pool.fee, pool: manager, v4: Some(pool.key) };
                out.push(Quote { route, amount_in, amount_out, then: None });
            }
        }
    }
    if filter.version.is_none_or(|v| v == Version::V3) {
        for fee in FEE_TIERS.into_iter().filter(|f| filter.fee.is_none_or(|want| want == *f)) {
            let Some((pool, liquidity)) = v3_liquidity(chain_id, book, tin, tout, fee)? else { continue };
            if liquidity == 0 {
                continue;
            }
            let route = Route { version: Version::V3, fee, pool, v4: None };
            let quoted = match side {
                Side::ExactIn => {
                    let r = skip_reverts(eth_call(
                        chain_id,
                        book.quoter_v2,
                        &quoteExactInputSingleCall {
                            params: QuoteExactInputSingleParams {
                                tokenIn: tin.address,
                                tokenOut: tout.address,
                                amountIn: amount,
                                fee: U24::from(fee),
                                sqrtPriceLimitX96: U160::ZERO,
                            },
                        },
                    ))?;
                    // QuoterV2 passes a partial fill through as if it took everything: what the
                    // pool really takes is the input its output costs.
                    if let Some(r) = r.as_ref().filter(|r| ran_dry(tin, tout, r.sqrtPriceX96After)) {
                        if let Some(takes) = exact_out_v3(chain_id, book, tin, tout, fee, r.amountOut)? {
                            partial.push(Quote {
                                route,
                                amount_in: takes,
                                amount_out: r.amountOut,
                                then: None,
                            });
                        }
                        continue;
                    }
                    r.map(|r| (amount, r.amountOut))
                }
                Side::ExactOut => {
                    exact_out_v3(chain_id, book, tin, tout, fee, amount)?.map(|amount_in| (amount_in, amount))
                }
            };
            if let Some((amount_in, amount_out)) = quoted.filter(|(i, o)| !i.is_zero() && !o.is_zero()) {
                out.push(Quote { route, amount_in, amount_out, then: None });
            }
        }
    }
    let v2_allowed = filter.version.is_none_or(|v| v == Version::V2) && filter.fee.is_none_or(|f| f == 3000);
    if v2_allowed && let (Some(router), Some(pair)) = (book.v2_router, v2_pair(chain_id, book, tin, tout)?) {
        let path = vec![tin.address, tout.address];
        let quoted = match side {
            Side::ExactIn => {
                skip_reverts(eth_call(chain_id, router, &getAmountsOutCall { amountIn: amount, path }))?
                    .and_then(|a| a.last().map(|out| (amount, *out)))
            }
            // What the pair pays for that input, which its rounding makes a little more than
            // asked: what the wallet really receives.
            Side::ExactOut => {
                let amount_in = skip_reverts(eth_call(
                    chain_id,
                    router,
                    &getAmountsInCall { amountOut: amount, path: path.clone() },
                ))?
                .and_then(|a| a.first().copied());
                match amount_in {
                    Some(amount_in) => skip_reverts(eth_call(
                        chain_id,
                        router,
                        &getAmountsOutCall { amountIn: amount_in, path },
                    ))?
                    .and_then(|a| a.last().map(|out| (amount_in, *out))),
                    None => None,
                }
            }
        };
        if let Some((amount_in, amount_out)) = quoted.filter(|(i, o)| !i.is_zero() && !o.is_zero()) {
            let route = Route { version: Version::V2, fee: 3000, pool: pair.address, v4: None };
            out.push(Quote { route, amount_in, amount_out, then: None });
        }
    }
    Ok(Quotes { full: out, partial })
}

/// The `not-found` error when no route fills `amount`, with the most one pool takes.
fn none_fills(chain_id: ChainId, ask: Ask<'_>, partial: &[Quote]) -> Error {
    let Ask { tin, tout, amount, side, filter } = ask;
    let (fixed, verb) = match side {
        Side::ExactIn => (tin, format!("selling for {}", tout.symbol)),
        Side::ExactOut => (tout, format!("buying with {}", tin.symbol)),
    };
    let most = partial.iter().max_by_key(|q| q.amount_out).map(|q| {
        format!(
            "; the most one pool takes is {} {} for {} {} ({} fee {})",
            bardo_sdk::units::format_units(q.amount_in, tin.decimals),
            tin.symbol,
            bardo_sdk::units::format_units(q.amount_out, tout.decimals),
            tout.symbol,
            q.route.version.name(),
            q.route.fee
        )
    });
    not_found(format!(
        "no Uniswap pool{} can fill {} {} ({verb}) on chain {chain_id}{}; try a smaller amount or another pair",
        match (filter.version, filter.fee) {
            (Some(v), Some(f)) => format!(" ({}, fee {f})", v.name()),
            (Some(v), None) => format!(" ({})", v.name()),
            (None, Some(f)) => format!(" (fee {f})"),
            (None, None) => String::new(),
        },
        bardo_sdk::units::format_units(amount, fixed.decimals),
        fixed.symbol,
        most.unwrap_or_default(),
    ))
}

/// QuoterV2's exact-out quote at `fee`: the input `amount_out` costs; none when the pool cannot
/// deliver it (the quoter reverts).
fn exact_out_v3(
    chain_id: ChainId,
    book: &Book,
    tin: &Token,
    tout: &Token,
    fee: u32,
    amount_out: U256,
) -> Result<Option<U256>, Error> {
    let call = quoteExactOutputSingleCall {
        params: QuoteExactOutputSingleParams {
            tokenIn: tin.address,
            tokenOut: tout.address,
            amount: amount_out,
            fee: U24::from(fee),
            sqrtPriceLimitX96: U160::ZERO,
        },
    };
    Ok(skip_reverts(eth_call(chain_id, book.quoter_v2, &call))?.map(|r| r.amountIn))
}
