//! The `pendle` plugin's writes through the host's write path on the devnet's Pendle V2 (policy
//! cage, the allowlist with the router's scope, simulation, value guards, on-chain bounds,
//! stranded value): each previewed, committed and verified from its receipt, spending exactly
//! what it names and receiving what the static router quoted (within the block's drift), no
//! allowance left behind; the YT's interest and PENDLE claimed; after a time travel with the
//! `testnet` plugin past maturity, PT redeemed alone one for one in the asset.

use alloy::primitives::{Address, U256};
use bardo_devnet::CHAIN_ID;
use bardo_devnet::pendle::PendleMarket;
use bardo_test_artifacts::{PENDLE, TESTNET};
use bardo_test_support::writes::{self as plugin_env, Env, u256};
use serde_json::{Value, json};
use std::collections::BTreeMap;

alloy::sol! {
    function allowance(address owner, address spender) external view returns (uint256);
}

pub(crate) fn env() -> Env {
    plugin_env::env(
        &[PENDLE, TESTNET],
        |d| BTreeMap::from([("pendle".to_owned(), d.pendle_settings())]),
        |d| d.write_targets(),
    )
}

pub(crate) trait Pendle {
    fn market(&self) -> PendleMarket;
    fn router(&self) -> Address;
    fn usdc(&self) -> Address;
}

impl Pendle for Env {
    fn market(&self) -> PendleMarket {
        self.d.pendle.markets["PT-bvUSDC"].clone()
    }
    fn router(&self) -> Address {
        self.d.pendle.contracts["router"]
    }
    fn usdc(&self) -> Address {
        self.d.tokens["USDC"].address
    }
}

fn params(amount: &str) -> Value {
    json!({"chain_id": CHAIN_ID, "market": "PT-bvUSDC", "amount": amount})
}

/// The static router's quote of `action` with `amount` in, base units.
fn quoted(e: &Env, action: &str, amount: &str) -> U256 {
    let q = e.tool(
        "pendle_quote",
        json!({"chain_id": CHAIN_ID, "market": "PT-bvUSDC", "action": action, "amount": amount}),
    );
    u256(&q["amount_out"]["base"])
}

/// `got` within 1 bp of `quote` (the block that mines the write is a second or two later than the
/// quote's, and Pendle's rates move with time).
fn near(got: U256, quote: U256, what: &str) {
    let bp = quote / U256::from(10_000u32) + U256::from(2u8);
    assert!(got.abs_diff(quote) <= bp, "{what}: got {got}, quoted {quote}");
}

/// What `f` changed of `tokens` in the wallet: (token → after − before), signed.
fn moved(e: &Env, tokens: &[Address], f: impl FnOnce()) -> Vec<alloy::primitives::I256> {
    let before: Vec<U256> = tokens.iter().map(|t| e.balance_of(*t, e.user)).collect();
    f();
    tokens
        .iter()
        .zip(before)
        .map(|(t, b)| {
            let after = e.balance_of(*t, e.user);
            alloy::primitives::I256::from_raw(after) - alloy::primitives::I256::from_raw(b)
        })
        .collect()
}

fn pos(v: alloy::primitives::I256) -> U256 {
    assert!(!v.is_negative(), "{v} is a loss");
    v.unsigned_abs()
}

fn neg(v: alloy::primitives::I256) -> U256 {
    assert!(v.is_negative() || v.is_zero(), "{v} is a gain");
    v.unsigned_abs()
}

#[test]
fn every_pendle_write_moves_what_the_static_router_quoted_and_pt_redeems_after_maturity() {
    let e = env();
    let m = e.market();
    let (usdc, router) = (e.usdc(), e.router());
    let usd = |units: u64| U256::from(units) * U256::from(1_000_000u64);
    let no_allowance = |token: Address| {
        assert_eq!(e.read(token, allowanceCall { owner: e.user, spender: router }), U256::ZERO, "{token}");
    };

    // Buy PT with 1,000 USDC: exactly that leaves, the quote's PT arrives.
    let q = quoted(&e, "buy_pt", "1000");
    let d = moved(&e, &[usdc, m.pt], || {
        let out = e.write("pendle_buy_pt", params("1000")).actual;
        assert_eq!(out["action"], "buy_pt");
    });
    assert_eq!(neg(d[0]), usd(1_000));
    near(pos(d[1]), q, "PT bought");
    assert!(pos(d[1]) > usd(1_000), "PT trades below par before maturity");
    no_allowance(usdc);

    // Sell 400 PT back.
    let q = quoted(&e, "sell_pt", "400");
    let d = moved(&e, &[usdc, m.pt], || drop(e.write("pendle_sell_pt", params("400"))));
    assert_eq!(neg(d[1]), usd(400));
    near(pos(d[0]), q, "USDC for PT");
    no_allowance(m.pt);

    // Buy YT with 100 USDC, sell all of it.
    let q = quoted(&e, "buy_yt", "100");
    let d = moved(&e, &[usdc, m.yt], || drop(e.write("pendle_buy_yt", params("100"))));
    assert_eq!(neg(d[0]), usd(100));
    near(pos(d[1]), q, "YT bought");
    assert!(pos(d[1]) > usd(1_000), "YT is leveraged: far more YT than USDC paid");
    let yt = e.balance_of(m.yt, e.user);
    let q = quoted(&e, "sell_yt", &units_6(yt));
    let d = moved(&e, &[usdc, m.yt], || drop(e.write("pendle_sell_yt", params("max"))));
    assert_eq!(neg(d[1]), yt);
    near(pos(d[0]), q, "USDC for YT");
    assert_eq!(e.balance_of(m.yt, e.user), U256::ZERO);

    // Single-token liquidity in, half of it out.
    let q = quoted(&e, "add_liquidity", "2000");
    let d = moved(&e, &[usdc, m.market], || drop(e.write("pendle_add_liquidity", params("2000"))));
    assert_eq!(neg(d[0]), usd(2_000));
    near(pos(d[1]), q, "LP");
    let half = pos(d[1]) / U256::from(2u8);
    let half_text = format_18(half);
    let q = quoted(&e, "remove_liquidity", &half_text);
    let d = moved(&e, &[usdc, m.market], || drop(e.write("pendle_remove_liquidity", params(&half_text))));
    assert_eq!(neg(d[1]), half);
    near(pos(d[0]), q, "USDC for LP");

    // Dual: 100 USDC with the PT it needs (offered: all the PT held), then LP out as USDC and PT.
    let pt_held = e.balance_of(m.pt, e.user);
    let dual = json!({"chain_id": CHAIN_ID, "market": "PT-bvUSDC", "amount": "100", "pt_amount": "max"});
    let d = moved(&e, &[usdc, m.pt, m.market], || drop(e.write("pendle_add_liquidity", dual)));
    assert_eq!(neg(d[0]), usd(100));
    assert!(neg(d[1]) > U256::ZERO && neg(d[1]) < pt_held, "some PT, not all: {}", d[1]);
    assert!(pos(d[2]) > U256::ZERO);
    // The PT approved is the match plus the slippage; what the market did not take stays approved
    // to the router (declared as the plan's authority), no more.
    let left = e.read(m.pt, allowanceCall { owner: e.user, spender: router });
    assert!(left <= neg(d[1]) * U256::from(51u8) / U256::from(10_000u32), "{left} of {}", d[1]);
    let lp = e.balance_of(m.market, e.user);
    let d = moved(&e, &[usdc, m.pt, m.market], || {
        e.write(
            "pendle_remove_liquidity",
            json!({"chain_id": CHAIN_ID, "market": "PT-bvUSDC", "amount": "max", "keep_pt": true}),
        );
    });
    assert_eq!(neg(d[2]), lp);
    assert!(pos(d[0]) > U256::ZERO && pos(d[1]) > U256::ZERO, "both sides out: {d:?}");
    assert_eq!(e.balance_of(m.market, e.user), U256::ZERO);

    // Mint PT+YT from 500 USDC: as much of each; redeem 200 of each before maturity.
    let q = quoted(&e, "mint_py", "500");
    let d = moved(&e, &[usdc, m.pt, m.yt], || drop(e.write("pendle_mint_py", params("500"))));
    assert_eq!(neg(d[0]), usd(500));
    near(pos(d[1]), q, "PT minted");
    assert_eq!(d[1], d[2], "as much YT as PT");
    let q = quoted(&e, "redeem_py", "200");
    let d = moved(&e, &[usdc, m.pt, m.yt], || drop(e.write("pendle_redeem_py", params("200"))));
    assert_eq!((neg(d[1]), neg(d[2])), (usd(200), usd(200)));
    near(pos(d[0]), q, "USDC for PT+YT");
    no_allowance(m.yt);

    // A day with liquidity in the market (the testnet plugin's time travel): the gauge pays LP
    // PENDLE, and the claim collects it.
    e.write("pendle_add_liquidity", params("1000"));
    e.tool("testnet_increase_time", json!({"chain_id": CHAIN_ID, "seconds": 86_400}));
    e.tool("testnet_mine", json!({"chain_id": CHAIN_ID}));
    e.restamp_feeds();
    let pendle = e.d.pendle.contracts["pendle"];
    let d = moved(&e, &[pendle], || {
        let out = e.write("pendle_claim", json!({"chain_id": CHAIN_ID, "market": "PT-bvUSDC"})).actual;
        assert_eq!(out["action"], "claim");
    });
    assert!(pos(d[0]) > U256::ZERO, "a day of PENDLE rewards for the LP");

    // Past maturity (the testnet plugin's time travel): PT alone redeems 1:1 in USDC; trading is
    // refused with what to do instead.
    let to_go = m.expiry.saturating_sub(chain_now(&e)) + 3_600;
    e.tool("testnet_increase_time", json!({"chain_id": CHAIN_ID, "seconds": to_go}));
    e.tool("testnet_mine", json!({"chain_id": CHAIN_ID}));
    e.restamp_feeds();
    let refused = e.host.plan("pendle_buy_pt", &params("10").to_string()).result.expect_err("matured");
    assert!(refused.message.contains("matured"), "{refused}");
    let pt = e.balance_of(m.pt, e.user);
    let d = moved(&e, &[usdc, m.pt, m.yt], || drop(e.write("pendle_redeem_py", params("max"))));
    assert_eq!(neg(d[1]), pt);
    assert_eq!(d[2], alloy::primitives::I256::ZERO, "no YT needed after maturity");
    let got = pos(d[0]);
    assert!(got <= pt && pt - got <= U256::from(2u8), "PT {pt} redeemed for {got} USDC");
}

fn chain_now(e: &Env) -> u64 {
    use alloy::providers::Provider;
    let block = e.rt.block_on(e.provider.get_block_by_number(Default::default()).into_future());
    block.expect("block").expect("head").header.timestamp
}

fn format_18(v: U256) -> String {
    let s = format!("{v:0>19}");
    let (whole, frac) = s.split_at(s.len() - 18);
    format!("{whole}.{frac}")
}

/// USDC-decimals (6) base units as token units.
fn units_6(base: U256) -> String {
    let s = format!("{base:0>7}");
    let (whole, frac) = s.split_at(s.len() - 6);
    format!("{whole}.{frac}")
}
