//! `intel_compare_venues`: what a trade of one size gets in each Uniswap V2 pair, V3 pool and V4
//! pool of a pair — the pool's mid price, the quote (V2 by the pair's constant-product formula
//! from its reserves, V3 by QuoterV2, V4 by V4Quoter) and the price impact between them. V4 pools
//! are those at the standard fee / tick-spacing tiers without hooks, with WETH's side also as
//! native ether.

use alloy_primitives::aliases::{U24, U160};
use alloy_primitives::{U256, U512};
use bardo_sdk::abi::eth_call;
use bardo_sdk::erc20::Token;
use bardo_sdk::errors::{invalid_params, not_found};
use bardo_sdk::uniswap::pools::{v2_pair, v3_pool};
use bardo_sdk::uniswap::{self, FEE_TIERS, v4};
use bardo_sdk::units::{format_units, parse_units};
use bardo_sdk::{Category, ChainId, Error, ReadTool, TickBudget, ToolDef, events, tool_def};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

alloy_sol_types::sol! {
    struct QuoteExactInputSingleParams { address tokenIn; address tokenOut; uint256 amountIn; uint24 fee;
        uint160 sqrtPriceLimitX96; }
    function quoteExactInputSingle(QuoteExactInputSingleParams params) external returns (uint256 amountOut,
        uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate);
}

/// Params of `intel_compare_venues`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VenueParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The token sold: a listed symbol or an address.
    pub token_in: String,
    /// The token bought.
    pub token_out: String,
    /// How much is sold, in `token_in` units (`"5000"`).
    pub amount: String,
}

#[derive(Serialize)]
pub struct Venue {
    /// `v2`, `v3` or `v4`.
    version: &'static str,
    /// Fee tier in hundredths of a bip.
    fee: u32,
    /// The pair's or pool's address; a V4 pool's id.
    pool: String,
    /// A V4 pool's tick spacing.
    #[serde(skip_serializing_if = "Option::is_none")]
    tick_spacing: Option<i32>,
    /// A V4 pool of native ether where the trade names WETH.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    native: bool,
    /// `token_out` per `token_in` at the pool's price now.
    mid_price: f64,
    /// What the trade gets, `token_out` units; none when the pool cannot fill it.
    amount_out: Option<String>,
    /// `1 − (amount_out / amount) / mid_price`: the fee and the slippage.
    price_impact: Option<f64>,
}

#[derive(Serialize)]
pub struct Venues {
    token_in: Token,
    token_out: Token,
    amount: String,
    /// Best first.
    venues: Vec<Venue>,
}

pub struct CompareVenues;

impl ReadTool for CompareVenues {
    const NAME: &'static str = "intel_compare_venues";
    type Params = VenueParams;
    type Output = Venues;

    fn def() -> ToolDef {
        ToolDef {
            tick_budget: TickBudget::Medium,
            progress_steps: vec!["find pools".into(), "quote V3".into(), "quote V4".into()],
            prompt_snippet:
                "intel_compare_venues: price impact of one trade size in every V2/V3/V4 pool of a pair".into(),
            ..tool_def::<VenueParams>(
                Self::NAME,
                "Compare venues for one trade size: for the pair's Uniswap V2 pair, each V3 fee tier and each \
                 V4 pool without hooks at the standard tiers (WETH's side also as native ether), the mid \
                 price, what the trade would get, and the price impact (fee plus slippage), best first. \
                 Reads only.",
                Category::Intelligence,
            )
        }
    }

    fn run(p: VenueParams) -> Result<Venues, Error> {
        let c = p.chain_id;
        let book = uniswap::book(c)?;
        let tin = book.token(c, "token_in", &p.token_in)?;
        let tout = book.token(c, "token_out", &p.token_out)?;
        if tin.address == tout.address {
            return Err(invalid_params("`token_in` and `token_out` are the same token"));
        }
        let amount = parse_units("amount", &p.amount, tin.decimals)?;
        if amount.is_zero() {
            return Err(invalid_params("`amount` must be more than 0"));
        }
        let human =
            |v: U256, d: u8| v.to_string().parse::<f64>().unwrap_or(f64::NAN) / 10f64.powi(i32::from(d));
        let impact =
            |out: U256, mid: f64| 1.0 - (human(out, tout.decimals) / human(amount, tin.decimals)) / mid;
        events::progress(0);
        let mut venues = Vec::new();
        if let Some(pair) = v2_pair(c, &book, &tin, &tout)? {
            let (r_in, r_out) = if pair.token0.address == tin.address {
                (pair.reserve0, pair.reserve1)
            } else {
                (pair.reserve1, pair.reserve0)
            };
            let mid = human(r_out, tout.decimals) / human(r_in, tin.decimals);
            // UniswapV2Library.getAmountOut: the 0.3 % fee on the input, then x·y = k.
            let with_fee = U512::from(amount) * U512::from(997u32);
            let out = with_fee * U512::from(r_out) / (U512::from(r_in) * U512::from(1000u32) + with_fee);
            let out = U256::from(out);
            venues.push(Venue {
                version: "v2",
                fee: 3000,
                pool: pair.address.to_checksum(None),
                tick_spacing: None,
                native: false,
                mid_price: mid,
                amount_out: Some(format_units(out, tout.decimals)),
                price_impact: Some(impact(out, mid)),
            });
        }
        events::progress(1);
        for fee in FEE_TIERS {
            let Some(pool) = v3_pool(c, &book, &tin, &tout, fee)? else { continue };
            let price01 = crate::pool::price_of_sqrt(pool.sqrt_price_x96, &pool);
            let mid = if pool.token0.address == tin.address { price01 } else { 1.0 / price01 };
            let params = QuoteExactInputSingleParams {
                tokenIn: tin.address,
                tokenOut: tout.address,
                amountIn: amount,
                fee: U24::from(fee),
                sqrtPriceLimitX96: U160::ZERO,
            };
            // The quoter reverts when the pool cannot fill the amount: no quote, not an error.
            let out =
                eth_call(c, book.quoter_v2, &quoteExactInputSingleCall { params }).ok().map(|q| q.amountOut);
            venues.push(Venue {
                version: "v3",
                fee,
                pool: pool.address.to_checksum(None),
                tick_spacing: None,
                native: false,
                mid_price: mid,
                amount_out: out.map(|o| format_units(o, tout.decimals)),
                price_impact: out.map(|o| impact(o, mid)),
            });
        }
        events::progress(2);
        if let Some(quoter) = book.v4_quoter {
            let mut pools = v4::pools(c, &book, &tin, &tout, None)?;
            if let Some(weth) = book.weth() {
                pools.extend(v4::native_pools(c, &book, (&tin, &tout), weth, (None, None))?);
            }
            for pool in pools {
                let price01 = crate::pool::sqrt_to_price(
                    pool.sqrt_price_x96,
                    pool.token0.decimals,
                    pool.token1.decimals,
                );
                // In a native pool ether (currency 0) stands for WETH.
                let mid = if pool.zero_for_one(&tin) { price01 } else { 1.0 / price01 };
                // The quoter reverts when the pool cannot fill the amount: no quote, not an error.
                let out = v4::quote(c, quoter, &pool, &tin, amount, true).ok();
                venues.push(Venue {
                    version: "v4",
                    fee: pool.fee,
                    pool: pool.key.pool_id.to_string(),
                    tick_spacing: Some(pool.key.tick_spacing),
                    native: pool.key.native,
                    mid_price: mid,
                    amount_out: out.map(|o| format_units(o, tout.decimals)),
                    price_impact: out.map(|o| impact(o, mid)),
                });
            }
        }
        if venues.is_empty() {
            return Err(not_found(format!(
                "no Uniswap V2, V3 or V4 pool of {}/{} on chain {c}",
                tin.symbol, tout.symbol
            )));
        }
        venues.sort_by(|a, b| {
            let key = |v: &Venue| v.price_impact.unwrap_or(f64::INFINITY);
            key(a).total_cmp(&key(b))
        });
        Ok(Venues { token_in: tin, token_out: tout, amount: p.amount, venues })
    }
}
