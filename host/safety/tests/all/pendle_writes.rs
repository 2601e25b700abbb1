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
use bardo_test_support::chain::Chain;
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

    // YT at the operator's default 2 % deviation: refused (see below).
    let refused = e.path.preview("pendle_buy_yt", &params("100")).expect_err("YT's fee at 2 %");
    assert!(refused.message.contains("max_price_deviation_bps"), "{refused}");

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
    let to_go = m.expiry.saturating_sub(e.chain().now()) + 3_600;
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

/// YT moves ~25× the implied rate: a 100 USDC YT buy in the devnet's market costs 2.3 % of the
/// YT's value at the oracle's TWAP (1.2 % fee on the PT traded inside, 1 % price impact; 1.3 %
/// for 1 USDC), over the default 2 % `max_price_deviation_bps` a trade is held to. An operator who trades YT widens it (here to 4 %); within it, a YT buy and
/// sell move exactly what the static router quoted.
#[test]
fn yt_is_bought_and_sold_as_quoted_within_a_wider_deviation() {
    let e = plugin_env::env_deviating(
        &[PENDLE],
        |d| BTreeMap::from([("pendle".to_owned(), d.pendle_settings())]),
        |d| d.write_targets(),
        400,
    );
    let m = e.market();
    let usdc = e.usdc();
    let usd = |units: u64| U256::from(units) * U256::from(1_000_000u64);
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

mod attacker {
    alloy::sol! {
        struct SwapData { uint8 swapType; address extRouter; bytes extCalldata; bool needScale; }
        struct TokenInput { address tokenIn; uint256 netTokenIn; address tokenMintSy; address pendleSwap; SwapData swapData; }
        function approve(address spender, uint256 amount) external returns (bool);
        function swapExactTokenForPtSimple(address receiver, address market, uint256 minPtOut, TokenInput input)
            external payable returns (uint256, uint256, uint256);
        function createYieldContract(address SY, uint32 expiry, bool doCacheIndexSameBlock)
            external returns (address PT, address YT);
        function createNewMarket(address PT, int256 scalarRoot, int256 initialAnchor, uint80 lnFeeRateRoot)
            external returns (address market);
    }
}

/// The attacker's own Pendle market: Pendle's ERC-4626 SY (the devnet's compiled build) over the
/// USDC vault, a PT/YT pair from the real yield-contract factory and a market from the real
/// market factory — all permissionless, none listed by the operator.
fn attackers_market(e: &Env, chain: &Chain, attacker: Address) -> Address {
    use alloy::sol_types::{SolCall, SolValue};
    let build = bardo_test_support::root().join("devnet/node_modules/.bardo-build/PendleERC4626SY.json");
    let artifact: Value =
        serde_json::from_slice(&std::fs::read(&build).expect("the devnet's SY build")).expect("json");
    let code = alloy::hex::decode(artifact["bytecode"].as_str().expect("bytecode")).expect("hex");
    let args =
        ("SY Attacker".to_owned(), "SY-evil".to_owned(), e.d.vaults["bvUSDC"].address).abi_encode_params();
    let sy = chain.deploy(attacker, [code, args].concat());
    let create = attacker::createYieldContractCall {
        SY: sy,
        expiry: e.market().expiry as u32,
        doCacheIndexSameBlock: true,
    };
    let factory = e.d.pendle.contracts["yield_contract_factory"];
    let made = chain.call_as(attacker, factory, &create.abi_encode()).expect("createYieldContract");
    let pt = attacker::createYieldContractCall::abi_decode_returns(&made).expect("PT/YT").PT;
    chain.send(attacker, factory, create);
    let market = attacker::createNewMarketCall {
        PT: pt,
        scalarRoot: alloy::primitives::I256::from_raw(U256::from(12u128 * 10u128.pow(18))),
        initialAnchor: alloy::primitives::I256::from_raw(U256::from(104u128 * 10u128.pow(16))),
        lnFeeRateRoot: alloy::primitives::aliases::U80::from(999_500_333_083_533u128),
    };
    let factory = e.d.pendle.contracts["market_factory"];
    let made = chain.call_as(attacker, factory, &market.abi_encode()).expect("createNewMarket");
    let address = attacker::createNewMarketCall::abi_decode_returns(&made).expect("market");
    chain.send(attacker, factory, market);
    address
}

#[test]
fn a_stranger_receiver_an_unlisted_market_and_a_market_pushed_off_its_oracle_are_refused() {
    let e = plugin_env::env(
        &[PENDLE, TESTNET, bardo_test_artifacts::ATTACK],
        |d| BTreeMap::from([("pendle".to_owned(), d.pendle_settings())]),
        |d| d.write_targets(),
    );
    let m = e.market();
    let (usdc, router) = (e.usdc(), e.router());
    let (attacker, stranger) = (e.d.accounts[3], crate::attacks::STRANGER);
    let held = || {
        [(usdc, e.user), (m.pt, e.user), (m.pt, stranger), (usdc, router), (m.pt, router)]
            .map(|(token, who)| e.balance_of(token, who))
    };
    let before = held();
    let attack = |market: Address, receiver: Address| {
        let params = json!({
            "chain_id": CHAIN_ID, "target": router.to_string(), "stranger": receiver.to_string(),
            "market": market.to_string(), "token": usdc.to_string(), "amount": "1000000000", "minimum": "1",
        });
        e.path.preview("attack_pendle_buy_pt", &params).expect_err("refused")
    };

    // PT bought in the listed market, paid to a stranger: the router's scope.
    let refused = attack(m.market, stranger);
    assert_eq!(refused.code, bardo_core::ErrorCode::Denied, "{refused}");
    assert!(
        refused.message.contains("`receiver`") && refused.message.contains("must be the wallet"),
        "{refused}"
    );

    // PT bought for the wallet in a market the attacker created over an SY of its own.
    let chain = e.chain();
    let evil = attackers_market(&e, &chain, attacker);
    let refused = attack(evil, e.user);
    assert_eq!(refused.code, bardo_core::ErrorCode::Denied, "{refused}");
    assert!(
        refused.message.contains(&evil.to_string()) && refused.message.contains("pendle-market"),
        "{refused}"
    );

    // The listed market pushed: the attacker buys 150,000 USDC of PT, and the implied rate falls far
    // below what the oracle's TWAP has seen. The honest plugin's buy, at that spot, is refused
    // by the value guard: what the wallet gets, at the TWAP, is worth far less than it pays.
    let amount = U256::from(150_000u64) * U256::from(1_000_000u64);
    chain.send(attacker, usdc, attacker::approveCall { spender: router, amount });
    let input = attacker::TokenInput {
        tokenIn: usdc,
        netTokenIn: amount,
        tokenMintSy: usdc,
        pendleSwap: Address::ZERO,
        swapData: attacker::SwapData {
            swapType: 0,
            extRouter: Address::ZERO,
            extCalldata: Default::default(),
            needScale: false,
        },
    };
    let push = attacker::swapExactTokenForPtSimpleCall {
        receiver: attacker,
        market: m.market,
        minPtOut: U256::ZERO,
        input,
    };
    chain.send(attacker, router, push);
    let pushed = e.tool("pendle_get_market", json!({"chain_id": CHAIN_ID, "market": "PT-bvUSDC"}));
    let (spot, twap): (f64, f64) = (
        pushed["spot"]["pt"].as_str().expect("spot").parse().expect("f64"),
        pushed["twap"]["pt"].as_str().expect("twap").parse().expect("f64"),
    );
    assert!(spot > twap * 1.02, "pushed: PT at {spot} against a TWAP of {twap}");
    let refused = e.path.preview("pendle_buy_pt", &params("1000")).expect_err("off the oracle");
    assert_eq!(refused.code, bardo_core::ErrorCode::Denied, "{refused}");
    assert!(refused.message.contains("value-guard"), "{refused}");

    assert_eq!(held(), before, "nothing moved for the wallet, the stranger or the router");
}
