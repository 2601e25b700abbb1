//! Pendle V2 on the devnet as `bardo devnet up` deploys it (`@pendle/core-v2` 6.11.0's artifacts,
//! Pendle's ERC-4626 SY from its sources): each market holds its SY, PT and YT, the oracle
//! answers its TWAP from the devnet's first block at a PT price near the seeded APY, the router
//! sells PT for what the static router quotes, and after a time travel past maturity PT redeems
//! one for one in the asset. The `pendle` plugin's reads are what those contracts say: its
//! markets and prices are the static router's and the oracle's, its quotes the static router's
//! to the unit, its positions the tokens' balances valued at the TWAP. The host values PT, YT,
//! LP and SY of a listed market from the oracle's TWAP (and the SY's rate) at the asset's
//! trusted price, and a token of a market nobody listed not at all.

use alloy::primitives::{Address, Bytes, U256};
use bardo_devnet::pendle::{SEED_APY, TWAP_SECS};
use bardo_test_artifacts::PENDLE;
use bardo_test_support::chain::Chain;
use bardo_test_support::{devnet, devnet_host_with};
use serde_json::{Value, json};
use std::collections::BTreeMap;

alloy::sol! {
    struct SwapData { uint8 swapType; address extRouter; bytes extCalldata; bool needScale; }
    struct TokenInput { address tokenIn; uint256 netTokenIn; address tokenMintSy; address pendleSwap; SwapData swapData; }
    struct TokenOutput { address tokenOut; uint256 minTokenOut; address tokenRedeemSy; address pendleSwap; SwapData swapData; }
    function readTokens() external view returns (address SY, address PT, address YT);
    function expiry() external view returns (uint256);
    function getOracleState(address market, uint32 duration) external view
        returns (bool increaseCardinalityRequired, uint16 cardinalityRequired, bool oldestObservationSatisfied);
    function getPtToAssetRate(address market, uint32 duration) external view returns (uint256);
    function getYtToAssetRate(address market, uint32 duration) external view returns (uint256);
    function getLpToAssetRate(address market, uint32 duration) external view returns (uint256);
    function swapExactPtForTokenStatic(address market, uint256 exactPtIn, address tokenOut) external view
        returns (uint256 netTokenOut, uint256 netSyToRedeem, uint256 netSyFee, uint256 priceImpact, uint256 exchangeRateAfter);
    function swapExactTokenForYtStatic(address market, address tokenIn, uint256 amountTokenIn) external view
        returns (uint256 netYtOut, uint256 netSyMinted, uint256 netSyFee, uint256 priceImpact, uint256 exchangeRateAfter);
    function swapExactTokenForPtStatic(address market, address tokenIn, uint256 amountTokenIn) external view
        returns (uint256 netPtOut, uint256 netSyMinted, uint256 netSyFee, uint256 priceImpact, uint256 exchangeRateAfter);
    function swapExactTokenForPtSimple(address receiver, address market, uint256 minPtOut, TokenInput input)
        external payable returns (uint256 netPtOut, uint256 netSyFee, uint256 netSyInterm);
    function redeemPyToToken(address receiver, address YT, uint256 netPyIn, TokenOutput output)
        external returns (uint256 netTokenOut, uint256 netSyInterm);
    function approve(address spender, uint256 amount) external returns (bool);
    function balanceOf(address account) external view returns (uint256);
}

#[test]
fn pendle_markets_quote_trade_and_redeem_at_maturity() {
    let (node, d) = devnet();
    let chain = Chain::connect(&node.url());
    let oracle = d.pendle.contracts["py_lp_oracle"];
    let now = chain.now();
    assert_eq!(d.pendle.markets.len(), 2, "{:?}", d.pendle.markets.keys());
    for (name, m) in &d.pendle.markets {
        let tokens = chain.read(m.market, readTokensCall {});
        assert_eq!((tokens.SY, tokens.PT, tokens.YT), (m.sy, m.pt, m.yt), "{name}");
        assert_eq!(chain.read(m.market, expiryCall {}), U256::from(m.expiry));
        assert!(m.expiry > now + 150 * 86_400, "{name} matures months after the devnet's clock");
        let state = chain.read(oracle, getOracleStateCall { market: m.market, duration: TWAP_SECS });
        assert!(
            !state.increaseCardinalityRequired && state.oldestObservationSatisfied,
            "{name}'s TWAP is ready"
        );
        // PT in the asset, from the TWAP: the seeded APY discounted over the time to maturity.
        let rate = chain.read(oracle, getPtToAssetRateCall { market: m.market, duration: TWAP_SECS });
        let rate = f64::from(rate) / 1e18;
        let years = (m.expiry - now) as f64 / (365.0 * 86_400.0);
        let expected = (1.0 + SEED_APY).powf(-years);
        assert!((rate / expected - 1.0).abs() < 0.002, "{name}: PT at {rate}, expected ~{expected}");
    }

    // Buy PT with 1,000 USDC through the router: what the static router quoted, at a discount.
    let m = &d.pendle.markets["PT-bvUSDC"];
    let (router, quoter) = (d.pendle.contracts["router"], d.pendle.contracts["router_static"]);
    let usdc = d.tokens["USDC"].address;
    let buyer = d.accounts[1];
    let amount = U256::from(1_000_000_000u64);
    let quote = chain.read(
        quoter,
        swapExactTokenForPtStaticCall { market: m.market, tokenIn: usdc, amountTokenIn: amount },
    );
    assert!(quote.netPtOut > amount, "PT trades under the asset before maturity: {}", quote.netPtOut);
    chain.send(buyer, usdc, approveCall { spender: router, amount });
    let input = TokenInput {
        tokenIn: usdc,
        netTokenIn: amount,
        tokenMintSy: usdc,
        pendleSwap: Address::ZERO,
        swapData: SwapData {
            swapType: 0,
            extRouter: Address::ZERO,
            extCalldata: Bytes::new(),
            needScale: false,
        },
    };
    let min = quote.netPtOut * U256::from(9_999u64) / U256::from(10_000u64);
    chain.send(
        buyer,
        router,
        swapExactTokenForPtSimpleCall { receiver: buyer, market: m.market, minPtOut: min, input },
    );
    let pt = chain.read(m.pt, balanceOfCall { account: buyer });
    let off = if pt > quote.netPtOut { pt - quote.netPtOut } else { quote.netPtOut - pt };
    assert!(off * U256::from(10_000u64) <= quote.netPtOut, "bought {pt} PT, quoted {}", quote.netPtOut);
    assert_eq!(chain.read(usdc, balanceOfCall { account: router }), U256::ZERO, "nothing left in the router");

    // Past maturity a PT redeems for one unit of the asset (through SY and the vault).
    chain.travel_to(m.expiry + 1);
    chain.send(buyer, m.pt, approveCall { spender: router, amount: pt });
    let before = chain.read(usdc, balanceOfCall { account: buyer });
    let output = TokenOutput {
        tokenOut: usdc,
        minTokenOut: U256::ZERO,
        tokenRedeemSy: usdc,
        pendleSwap: Address::ZERO,
        swapData: SwapData {
            swapType: 0,
            extRouter: Address::ZERO,
            extCalldata: Bytes::new(),
            needScale: false,
        },
    };
    chain.send(buyer, router, redeemPyToTokenCall { receiver: buyer, YT: m.yt, netPyIn: pt, output });
    let got = chain.read(usdc, balanceOfCall { account: buyer }) - before;
    assert!(got <= pt && pt - got <= U256::from(2u8), "{pt} PT redeemed for {got} USDC units");
    assert!(got > amount, "held to maturity, the PT earned: {got} for {amount}");
    assert_eq!(chain.read(m.pt, balanceOfCall { account: buyer }), U256::ZERO);
}

fn base(v: &Value) -> U256 {
    v["base"].as_str().expect("base units").parse().expect("U256")
}

#[test]
fn the_plugin_reads_markets_quotes_and_positions_as_the_contracts_say() {
    let (node, d) = devnet();
    let chain = Chain::connect(&node.url());
    let settings = BTreeMap::from([("pendle".to_owned(), d.pendle_settings())]);
    let host = devnet_host_with(&node.url(), settings, None, &[PENDLE]);
    let tool = |name: &str, params: Value| -> Result<Value, bardo_core::ToolError> {
        let out = host.call(name, &params.to_string()).result?;
        Ok(serde_json::from_str(&out).expect("json"))
    };
    let oracle = d.pendle.contracts["py_lp_oracle"];
    let quoter = d.pendle.contracts["router_static"];
    let m = &d.pendle.markets["PT-bvUSDC"];
    let usdc = d.tokens["USDC"].address;

    let markets = tool("pendle_get_markets", json!({"chain_id": 31337})).expect("markets");
    assert_eq!(markets.as_array().map(Vec::len), Some(2));
    let one = tool("pendle_get_market", json!({"chain_id": 31337, "market": "pt-bvusdc"})).expect("market");
    assert_eq!(one["asset"]["symbol"], "USDC");
    assert_eq!(one["expiry"], m.expiry);
    assert!(one["days_to_maturity"].as_u64().expect("days") >= 150);
    let twap = chain.read(oracle, getPtToAssetRateCall { market: m.market, duration: TWAP_SECS });
    // The TWAP moves with the clock (PT accretes toward one asset unit): a second later, a hair.
    let shown: f64 = one["twap"]["pt"].as_str().expect("pt").parse().expect("f64");
    assert!((shown / (f64::from(twap) / 1e18) - 1.0).abs() < 1e-7, "{shown} vs {twap}");
    let apy: f64 = one["implied_apy"].as_str().expect("apy").parse().expect("f64");
    assert!((apy - SEED_APY * 100.0).abs() < 0.1, "seeded at 8 %: {apy}");

    // Quotes: the static router's, to the unit.
    let quote = tool(
        "pendle_quote",
        json!({"chain_id": 31337, "market": "PT-bvUSDC", "action": "buy_pt", "amount": "2500"}),
    )
    .expect("quote");
    let amount = U256::from(2_500_000_000u64);
    let direct = chain.read(
        quoter,
        swapExactTokenForPtStaticCall { market: m.market, tokenIn: usdc, amountTokenIn: amount },
    );
    assert_eq!(base(&quote["amount_out"]), direct.netPtOut);
    assert_eq!(quote["token_out"]["address"], json!(m.pt.to_checksum(None)));
    let price: f64 = quote["effective_price"].as_str().expect("price").parse().expect("f64");
    assert!(price < 1.0 && price > 0.9, "PT under the asset: {price}");
    let sell = tool(
        "pendle_quote",
        json!({"chain_id": 31337, "market": "PT-bvUSDC", "action": "sell_pt", "amount": "1000"}),
    )
    .expect("quote");
    let direct = chain.read(
        quoter,
        swapExactPtForTokenStaticCall {
            market: m.market,
            exactPtIn: U256::from(1_000_000_000u64),
            tokenOut: usdc,
        },
    );
    assert_eq!(base(&sell["amount_out"]), direct.netTokenOut);
    let yt = tool("pendle_quote", json!({"chain_id": 31337, "market": "PT-bvUSDC", "action": "buy_yt", "amount": "100", "token": "bvUSDC"}))
        .expect("quote");
    let bv = d.vaults["bvUSDC"].address;
    let direct = chain.read(
        quoter,
        swapExactTokenForYtStaticCall {
            market: m.market,
            tokenIn: bv,
            amountTokenIn: U256::from(100_000_000u64),
        },
    );
    assert_eq!(base(&yt["amount_out"]), direct.netYtOut);

    // Hostile and wrong input: a typed error that says what to do.
    let e = tool(
        "pendle_quote",
        json!({"chain_id": 31337, "market": "PT-bvUSDC", "action": "buy_pt", "amount": "1", "token": "WETH"}),
    )
    .expect_err("WETH is not the SY's");
    assert!(e.message.contains("neither") && e.message.contains("USDC"), "{e:?}");
    let e =
        tool("pendle_get_market", json!({"chain_id": 31337, "market": "PT-stranger"})).expect_err("unlisted");
    assert!(e.message.contains("operator's markets: PT-bvUSDC, PT-bvWETH"), "{e:?}");
    let e = tool("pendle_get_markets", json!({"chain_id": 1})).expect_err("no chain");
    assert_eq!(format!("{:?}", e.code), "ChainNotSupported", "{e:?}");

    // A position: the deployer holds YT and LP from the seed; valued at the TWAP.
    let pos = tool(
        "pendle_get_position",
        json!({"chain_id": 31337, "account": d.deployer.to_string(), "market": "PT-bvUSDC"}),
    )
    .expect("position");
    let p = &pos["positions"][0];
    let yt_held = chain.read(m.yt, balanceOfCall { account: d.deployer });
    let lp_held = chain.read(m.market, balanceOfCall { account: d.deployer });
    assert_eq!(base(&p["yt"]), yt_held);
    assert_eq!(base(&p["lp"]), lp_held);
    assert!(!yt_held.is_zero() && !lp_held.is_zero());
    let yt_rate = chain.read(oracle, getYtToAssetRateCall { market: m.market, duration: TWAP_SECS });
    let lp_rate = chain.read(oracle, getLpToAssetRateCall { market: m.market, duration: TWAP_SECS });
    let wad = U256::from(10u64).pow(U256::from(18u8));
    let floor = yt_held * yt_rate / wad + lp_held * lp_rate / wad;
    let value = base(&p["value"]);
    assert!(
        value >= floor && value - floor <= U256::from(10_000_000u64),
        "{value} vs {floor} (+ SY and interest)"
    );
    let rewards = p["rewards"].as_array().expect("rewards");
    assert!(rewards.iter().any(|r| r["token"]["symbol"] == "PENDLE"), "LPs earn PENDLE: {p}");
}

#[test]
fn the_host_values_a_listed_markets_tokens_at_the_oracles_twap_and_nothing_else() {
    use bardo_evm::Evm;
    use bardo_evm::chain::{ChainConfig, Chains};
    use bardo_safety::valuation::Valuer;
    let (node, d) = devnet();
    let chain = Chain::connect(&node.url());
    let config = ChainConfig { head_ttl_ms: 0, ..ChainConfig::new(node.url()) };
    let chains = Chains::new(&BTreeMap::from([(bardo_devnet::CHAIN_ID, config)]), crate::host_runtime())
        .expect("chains");
    let services = std::sync::Arc::new(bardo_runtime::Services::new(Evm::new(chains, None)));
    let v = Valuer::new(&services, bardo_test_support::writes::pricing(&d));
    let oracle = d.pendle.contracts["py_lp_oracle"];
    let wad = 1e18;
    for (name, m) in &d.pendle.markets {
        let asset = &d.tokens[&m.asset];
        let asset_usd = asset.usd;
        let unit = |decimals: u8| U256::from(10u64).pow(U256::from(decimals));
        let dec = asset.decimals;
        let rate = |r: U256| f64::from(r) / wad;
        let pt_rate =
            rate(chain.read(oracle, getPtToAssetRateCall { market: m.market, duration: TWAP_SECS }));
        let yt_rate =
            rate(chain.read(oracle, getYtToAssetRateCall { market: m.market, duration: TWAP_SECS }));
        let lp_rate =
            rate(chain.read(oracle, getLpToAssetRateCall { market: m.market, duration: TWAP_SECS }));
        alloy::sol! { function exchangeRate() external view returns (uint256); }
        let sy_rate = rate(chain.read(m.sy, exchangeRateCall {}));
        let usd = |token: Address, amount: U256| {
            v.usd(bardo_devnet::CHAIN_ID, token, amount).expect("valued") as f64 / 1e6
        };
        let near = |got: f64, want: f64, what: &str| {
            assert!((got / want - 1.0).abs() < 1e-4, "{name} {what}: ${got}, expected ${want}");
        };
        // 1,000 whole PT, YT and SY; 1,000 whole LP (18 decimals).
        let thousand = U256::from(1_000u64);
        near(usd(m.pt, thousand * unit(dec)), 1_000.0 * pt_rate * asset_usd, "PT");
        near(usd(m.yt, thousand * unit(dec)), 1_000.0 * yt_rate * asset_usd, "YT");
        near(usd(m.sy, thousand * unit(dec)), 1_000.0 * sy_rate * asset_usd, "SY");
        near(
            usd(m.market, thousand * unit(18)),
            1_000.0 * lp_rate * asset_usd * 1e18 / 10f64.powi(dec.into()),
            "LP",
        );
        assert!(
            pt_rate < 1.0 && pt_rate + yt_rate > 0.999 && pt_rate + yt_rate < 1.001,
            "PT + YT is one asset"
        );
    }
    // A market anyone creates over the same SY: its PT and LP are worth nothing to the host.
    let m = &d.pendle.markets["PT-bvUSDC"];
    let mut unlisted = bardo_test_support::writes::pricing(&d);
    for config in unlisted.values_mut() {
        if let Some(p) = config.pendle.as_mut() {
            p.markets.retain(|a| *a != m.market);
        }
    }
    let v = Valuer::new(&services, unlisted);
    let e =
        v.usd(bardo_devnet::CHAIN_ID, m.pt, U256::from(1_000_000u64)).expect_err("an unlisted market's PT");
    assert!(e.contains("unpriced"), "{e}");
}
