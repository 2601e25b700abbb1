//! The intelligence plugin on the devnet: impermanent loss and LVR against their closed forms
//! for constructed cases; a pool's realized volatility, fee APR and liquidity distribution
//! against the test's own computation from the same swaps, fee growth and Mint/Burn logs.

use alloy::network::TransactionBuilder;
use alloy::primitives::aliases::{U24, U160};
use alloy::primitives::{Address, U256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::{Filter, TransactionRequest};
use alloy::sol;
use alloy::sol_types::{SolCall, SolEvent};
use bardo_core::ErrorCode;
use bardo_devnet::CHAIN_ID;
use bardo_runtime::plugin::Host;
use bardo_test_artifacts::INTELLIGENCE;
use bardo_test_support::devnet_host_with;
use bardo_test_support::{devnet, runtime, send};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// V4Quoter, in its own namespace (its `quoteExactInputSingle` overloads QuoterV2's).
mod v4q {
    alloy::sol! {
        struct PoolKey { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; }
        struct QuoteExactSingleParams { PoolKey poolKey; bool zeroForOne; uint128 exactAmount; bytes hookData; }
        function quoteExactInputSingle(QuoteExactSingleParams params) external returns (uint256 amountOut,
            uint256 gasEstimate);
    }
}

sol! {
    function approve(address spender, uint256 amount) external returns (bool);
    struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient; uint256 deadline;
        uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }
    function exactInputSingle(ExactInputSingleParams params) external payable returns (uint256 amountOut);
    function getPool(address tokenA, address tokenB, uint24 fee) external view returns (address pool);
    function slot0() external view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex,
        uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked);
    function liquidity() external view returns (uint128);
    function feeGrowthGlobal0X128() external view returns (uint256);
    function feeGrowthGlobal1X128() external view returns (uint256);
    function positions(uint256 tokenId) external view returns (uint96 nonce, address operator, address token0,
        address token1, uint24 fee, int24 tickLower, int24 tickUpper, uint128 liquidity,
        uint256 feeGrowthInside0LastX128, uint256 feeGrowthInside1LastX128, uint128 tokensOwed0, uint128 tokensOwed1);
    event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1,
        uint160 sqrtPriceX96, uint128 liquidity, int24 tick);
    event Mint(address sender, address indexed owner, int24 indexed tickLower, int24 indexed tickUpper,
        uint128 amount, uint256 amount0, uint256 amount1);
    event Burn(address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount,
        uint256 amount0, uint256 amount1);
}

fn call(h: &Host, tool: &str, params: Value) -> Result<Value, bardo_core::ToolError> {
    h.call(tool, &params.to_string()).result.map(|j| serde_json::from_str(&j).expect("json"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-18)
}

#[test]
fn impermanent_loss_and_lvr_equal_their_closed_forms() {
    let (node, d) = devnet();
    let settings = BTreeMap::from([("intelligence".to_owned(), d.uniswap_settings())]);
    let h = devnet_host_with(&node.url(), settings, None, &[INTELLIGENCE]);
    let path = ["500", "1000", "2000", "4000", "8000"];
    let il = call(&h, "intel_compute_impermanent_loss", json!({"entry_price": "2000", "prices": path}))
        .expect("il");
    for (point, p) in il["points"].as_array().expect("points").iter().zip(path) {
        let r = p.parse::<f64>().expect("price") / 2000.0;
        let want = 2.0 * r.sqrt() / (1.0 + r) - 1.0;
        assert!(
            close(f(&point["impermanent_loss"]), want, 1e-12)
                || want == 0.0 && f(&point["impermanent_loss"]).abs() < 1e-15,
            "{point} vs {want}"
        );
    }
    // A concentrated range: the holdings of liquidity L at price P are L(1/√P − 1/√Pb) and L(√P − √Pa).
    let (pa, pb, p0, p1) = (1_500f64, 2_500f64, 2_000f64, 2_200f64);
    let hold = |p: f64| (1.0 / p.sqrt() - 1.0 / pb.sqrt(), p.sqrt() - pa.sqrt());
    let ((x0, y0), (x1, y1)) = (hold(p0), hold(p1));
    let want = (x1 * p1 + y1) / (x0 * p1 + y0) - 1.0;
    let c = call(
        &h,
        "intel_compute_impermanent_loss",
        json!({"entry_price": "2000", "lower_price": "1500", "upper_price": "2500", "prices": ["2200"]}),
    )
    .expect("il");
    assert!(close(f(&c["points"][0]["impermanent_loss"]), want, 1e-12), "{c}");

    // A real position: its range from its ticks, entered at the pool's price now.
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased();
    let rt = runtime();
    let npm = d.uniswap_v3["position_manager"];
    let pos = read(&rt, &provider, npm, positionsCall { tokenId: U256::from(1u8) });
    let real = call(
        &h,
        "intel_compute_impermanent_loss",
        json!({"chain_id": CHAIN_ID, "position_id": "1", "prices": ["1"]}),
    )
    .expect("position");
    assert_eq!(real["source"], "position");
    let (d0, d1) = (decimals(&d, pos.token0), decimals(&d, pos.token1));
    let tick_price = |t: i32| 1.0001f64.powi(t) * 10f64.powi(d0 - d1);
    assert!(close(f(&real["lower_price"]), tick_price(pos.tickLower.as_i32()), 1e-12), "{real}");

    let lvr = call(&h, "intel_compute_lvr", json!({"volatility": 0.8, "price": "3000"})).expect("lvr");
    assert!(close(f(&lvr["lvr_per_year"]), 0.08, 1e-12), "σ²/8: {lvr}");
    assert!(close(f(&lvr["lvr_per_day"]), 0.08 / 365.0, 1e-12));
    let ranged = call(
        &h,
        "intel_compute_lvr",
        json!({"volatility": 0.5, "price": "2000", "lower_price": "1500", "upper_price": "2500"}),
    )
    .expect("lvr");
    let want = 0.25 * p0.sqrt() / (4.0 * (2.0 * p0.sqrt() - pa.sqrt() - p0 / pb.sqrt()));
    assert!(close(f(&ranged["lvr_per_year"]), want, 1e-12), "{ranged}");

    for (tool, params) in [
        ("intel_compute_impermanent_loss", json!({"entry_price": "2000", "prices": []})),
        (
            "intel_compute_impermanent_loss",
            json!({"entry_price": "2000", "lower_price": "3", "upper_price": "2", "prices": ["1"]}),
        ),
        ("intel_compute_impermanent_loss", json!({"prices": ["1"]})),
        ("intel_compute_lvr", json!({"price": "1"})),
        ("intel_compute_lvr", json!({"volatility": -1.0, "price": "1"})),
    ] {
        assert_eq!(
            call(&h, tool, params.clone()).expect_err(&params.to_string()).code,
            ErrorCode::InvalidParams
        );
    }
}

fn decimals(d: &bardo_devnet::deploy::Deployments, token: Address) -> i32 {
    i32::from(d.tokens.values().find(|t| t.address == token).expect("listed").decimals)
}

fn read<C: SolCall>(rt: &tokio::runtime::Runtime, p: &DynProvider, to: Address, call: C) -> C::Return {
    read_at(rt, p, to, call, None)
}

fn read_at<C: SolCall>(
    rt: &tokio::runtime::Runtime,
    p: &DynProvider,
    to: Address,
    call: C,
    block: Option<u64>,
) -> C::Return {
    let tx = TransactionRequest::default().to(to).with_input(call.abi_encode());
    let id = block.map_or(alloy::eips::BlockId::latest(), alloy::eips::BlockId::number);
    C::abi_decode_returns(&rt.block_on(p.call(tx).block(id).into_future()).expect("eth_call"))
        .expect("decode")
}

#[test]
fn pool_statistics_equal_the_tests_own_computation() {
    let (node, d) = devnet();
    let settings = BTreeMap::from([("intelligence".to_owned(), d.uniswap_settings())]);
    let h = devnet_host_with(&node.url(), settings, None, &[INTELLIGENCE]);
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased();
    let rt = runtime();
    let (weth, usdc, router, dev) =
        (d.tokens["WETH"].address, d.tokens["USDC"].address, d.uniswap_v3["swap_router"], d.deployer);
    let pool = read(
        &rt,
        &provider,
        d.uniswap_v3["factory"],
        getPoolCall { tokenA: weth, tokenB: usdc, fee: U24::from(3000) },
    );
    let start_block = rt.block_on(provider.get_block_number().into_future()).expect("head");
    let (g0, g1) = (
        read(&rt, &provider, pool, feeGrowthGlobal0X128Call {}),
        read(&rt, &provider, pool, feeGrowthGlobal1X128Call {}),
    );
    let l = read(&rt, &provider, pool, liquidityCall {});

    // Four swaps either way, a minute apart.
    for token in [weth, usdc] {
        let tx = TransactionRequest::default()
            .from(dev)
            .to(token)
            .with_input(approveCall { spender: router, amount: U256::MAX }.abi_encode());
        assert!(rt.block_on(send(&provider, tx)).status());
    }
    let e18 = U256::from(10u64).pow(U256::from(18u8));
    for (i, (tin, tout, amount)) in [
        (weth, usdc, e18 / U256::from(4u8)),
        (usdc, weth, U256::from(300_000_000u64)),
        (weth, usdc, e18 / U256::from(10u8)),
        (usdc, weth, U256::from(900_000_000u64)),
    ]
    .into_iter()
    .enumerate()
    {
        rt.block_on(provider.raw_request::<_, i64>("evm_increaseTime".into(), (60u64 + i as u64,)))
            .expect("time");
        let params = ExactInputSingleParams {
            tokenIn: tin,
            tokenOut: tout,
            fee: U24::from(3000),
            recipient: dev,
            deadline: U256::MAX,
            amountIn: amount,
            amountOutMinimum: U256::from(1u8),
            sqrtPriceLimitX96: U160::ZERO,
        };
        let tx = TransactionRequest::default()
            .from(dev)
            .to(router)
            .with_input(exactInputSingleCall { params }.abi_encode());
        assert!(rt.block_on(send(&provider, tx)).status());
    }
    let head = rt.block_on(provider.get_block_number().into_future()).expect("head");
    let blocks = head - start_block;
    let params =
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000, "blocks": blocks});

    let vol = call(&h, "intel_get_realized_volatility", params.clone()).expect("volatility");
    assert_eq!(vol["swaps"], 4);
    let (from, to) = (vol["from_block"].as_u64().expect("from"), vol["to_block"].as_u64().expect("to"));
    assert_eq!((from, to), (start_block + 1, head));
    let filter =
        Filter::new().address(pool).event_signature(Swap::SIGNATURE_HASH).from_block(from).to_block(to);
    let logs = rt.block_on(provider.get_logs(&filter)).expect("logs");
    let swaps: Vec<Swap> = logs.iter().map(|l| Swap::decode_log_data(l.data()).expect("swap")).collect();
    let sqrt = |s: U256| s.to_string().parse::<f64>().expect("f64");
    let mut last = sqrt(U256::from(read_at(&rt, &provider, pool, slot0Call {}, Some(from - 1)).sqrtPriceX96));
    let mut sum = 0.0;
    for s in &swaps {
        let now = sqrt(U256::from(s.sqrtPriceX96));
        sum += (2.0 * (now / last).ln()).powi(2);
        last = now;
    }
    assert!(close(f(&vol["volatility_window"]), sum.sqrt(), 1e-9), "{vol} vs {}", sum.sqrt());
    let ts = |b: u64| {
        rt.block_on(provider.get_block_by_number(b.into()).into_future())
            .expect("block")
            .expect("exists")
            .header
            .timestamp
    };
    let seconds = ts(to) - ts(from - 1);
    assert_eq!(vol["seconds"], seconds);
    assert!(close(
        f(&vol["volatility_annualized"]),
        sum.sqrt() * (31_536_000.0 / seconds as f64).sqrt(),
        1e-9
    ));

    // Fees: the fee tier of each input, and the pool's own fee growth times its (unchanged) liquidity.
    let apr = call(&h, "intel_get_fee_apr", params.clone()).expect("apr");
    let fee_of = |a: alloy::primitives::I256| {
        if a.is_positive() {
            a.into_raw() * U256::from(3000u32) / U256::from(1_000_000u32)
        } else {
            U256::ZERO
        }
    };
    let (f0, f1) = swaps
        .iter()
        .fold((U256::ZERO, U256::ZERO), |(a, b), s| (a + fee_of(s.amount0), b + fee_of(s.amount1)));
    let grown0 = ((read(&rt, &provider, pool, feeGrowthGlobal0X128Call {}) - g0) * U256::from(l)) >> 128;
    let grown1 = ((read(&rt, &provider, pool, feeGrowthGlobal1X128Call {}) - g1) * U256::from(l)) >> 128;
    assert!(
        f0.abs_diff(grown0) <= U256::from(4u8) && f1.abs_diff(grown1) <= U256::from(4u8),
        "{f0} {grown0} {f1} {grown1}"
    );
    let (t0, t1) = if weth < usdc { (18, 6) } else { (6, 18) };
    let units = |v: U256, dec: i32| v.to_string().parse::<f64>().expect("f64") / 10f64.powi(dec);
    assert!(
        close(f(&apr["fees0"]), units(f0, t0), 1e-12) && close(f(&apr["fees1"]), units(f1, t1), 1e-12),
        "{apr}"
    );
    assert!(f(&apr["apr"]) > 0.0 && f(&apr["tvl"]) > 0.0);

    // A range from those numbers: the same volatility and fee rate; wider candidates stay in
    // range more; the full range's fee APR is its share of the liquidity in range times the
    // fee rate (a full-range position of value C at price P holds liquidity C / 2√P).
    let mut advice_params = params.clone();
    advice_params["horizon_days"] = json!(7.0);
    advice_params["capital"] = json!("10000");
    let advice = call(&h, "intel_optimize_lp_range", advice_params).expect("advice");
    assert!(close(f(&advice["volatility_annualized"]), f(&vol["volatility_annualized"]), 1e-12), "{advice}");
    let fees_per_year = f(&apr["fees_value"]) * 31_536_000.0 / seconds as f64;
    assert!(close(f(&advice["fees_per_year"]), fees_per_year, 1e-9));
    let candidates = advice["candidates"].as_array().expect("candidates");
    assert_eq!(candidates.len(), 8, "seven widths and the full range");
    for pair in candidates.windows(2) {
        assert!(f(&pair[0]["probability_in_range"]) <= f(&pair[1]["probability_in_range"]), "{advice}");
    }
    for c in candidates {
        assert!(close(f(&c["net_apr"]), f(&c["fee_apr"]) + f(&c["il_apr"]), 1e-12));
        let (lo, hi) = (c["tick_lower"].as_i64().expect("lo"), c["tick_upper"].as_i64().expect("hi"));
        assert!(lo % 60 == 0 && hi % 60 == 0 && lo < hi, "{c}");
        assert!(f(&c["expected_il"]) <= 0.0);
    }
    let best = candidates.iter().map(|c| f(&c["net_apr"])).fold(f64::MIN, f64::max);
    assert_eq!(f(&advice["recommended"]["net_apr"]), best);
    let tick = advice["tick"].as_i64().expect("tick");
    let rec = &advice["recommended"];
    assert!(rec["tick_lower"].as_i64() <= Some(tick) && Some(tick) < rec["tick_upper"].as_i64(), "{advice}");
    let price = f(&advice["pool"]["price"]);
    let active = read(&rt, &provider, pool, liquidityCall {}) as f64 / 10f64.powf(f64::from(t0 + t1) / 2.0);
    let full_liquidity = 10_000.0 / (2.0 * price.sqrt());
    let full = candidates.last().expect("full range");
    let expected = fees_per_year * full_liquidity / (active + full_liquidity) / 10_000.0;
    assert!(close(f(&full["fee_apr"]), expected, 1e-6), "{full} vs {expected}");

    // Liquidity by range: from every Mint and Burn of the pool since its creation.
    let dist = call(
        &h,
        "intel_get_liquidity_distribution",
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000, "spacings": 5}),
    )
    .expect("distribution");
    let ranges = dist["ranges"].as_array().expect("ranges");
    assert_eq!(ranges.len(), 11);
    let all = |sig| Filter::new().address(pool).event_signature(sig).from_block(0).to_block(head);
    let mints = rt.block_on(provider.get_logs(&all(Mint::SIGNATURE_HASH))).expect("mints");
    let burns = rt.block_on(provider.get_logs(&all(Burn::SIGNATURE_HASH))).expect("burns");
    for r in ranges {
        let (lo, hi) =
            (r["tick_lower"].as_i64().expect("lo") as i32, r["tick_upper"].as_i64().expect("hi") as i32);
        let covers = |a: i32, b: i32| a <= lo && b >= hi;
        let minted: u128 = mints
            .iter()
            .map(|m| Mint::decode_log_data(m.data()).expect("mint"))
            .filter(|m| covers(m.tickLower.as_i32(), m.tickUpper.as_i32()))
            .map(|m| m.amount)
            .sum();
        let burned: u128 = burns
            .iter()
            .map(|b| Burn::decode_log_data(b.data()).expect("burn"))
            .filter(|b| covers(b.tickLower.as_i32(), b.tickUpper.as_i32()))
            .map(|b| b.amount)
            .sum();
        assert_eq!(r["liquidity"], (minted - burned).to_string(), "range {lo}..{hi}");
    }
    let current = ranges.iter().find(|r| r["current"] == true).expect("a current range");
    assert_eq!(current["liquidity"], read(&rt, &provider, pool, liquidityCall {}).to_string());

    let bad = call(
        &h,
        "intel_get_fee_apr",
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000, "blocks": 0}),
    );
    assert_eq!(bad.expect_err("0 blocks").code, ErrorCode::InvalidParams);
    let none = call(
        &h,
        "intel_get_realized_volatility",
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 123}),
    );
    assert_eq!(none.expect_err("no pool").code, ErrorCode::NotFound);
}

sol! {
    function getAmountsOut(uint256 amountIn, address[] path) external view returns (uint256[] amounts);
    struct QuoteExactInputSingleParams { address tokenIn; address tokenOut; uint256 amountIn; uint24 fee;
        uint160 sqrtPriceLimitX96; }
    function quoteExactInputSingle(QuoteExactInputSingleParams params) external returns (uint256 amountOut,
        uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate);
}

#[test]
fn venue_quotes_equal_the_router_and_the_quoter() {
    let (node, d) = devnet();
    let settings = BTreeMap::from([("intelligence".to_owned(), d.uniswap_settings())]);
    let h = devnet_host_with(&node.url(), settings, None, &[INTELLIGENCE]);
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased();
    let rt = runtime();
    let (usdc, weth) = (d.tokens["USDC"].address, d.tokens["WETH"].address);
    let v = call(
        &h,
        "intel_compare_venues",
        json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "25000"}),
    )
    .expect("venues");
    let venues = v["venues"].as_array().expect("venues");
    assert!(
        venues.iter().any(|x| x["version"] == "v2") && venues.iter().any(|x| x["version"] == "v3"),
        "{v:#}"
    );
    // The devnet's V4 pools without hooks: WETH/USDC 0.3 % and native ETH/USDC 0.05 %.
    let v4: Vec<&Value> = venues.iter().filter(|x| x["version"] == "v4").collect();
    assert!(v4.iter().any(|x| x["native"] == true && x["fee"] == 500), "{v:#}");
    assert!(v4.iter().any(|x| x["native"].is_null() && x["fee"] == 3000), "{v:#}");
    let amount = U256::from(25_000_000_000u64);
    let units = |s: &Value| {
        alloy::primitives::utils::parse_units(s.as_str().expect("amount"), 18).expect("units").get_absolute()
    };
    for x in venues {
        let Some(out) = x["amount_out"].as_str() else { continue };
        let want = if x["version"] == "v4" {
            let other = if x["native"] == true { Address::ZERO } else { weth };
            let key = v4q::PoolKey {
                currency0: usdc.min(other),
                currency1: usdc.max(other),
                fee: U24::from(x["fee"].as_u64().expect("fee")),
                tickSpacing: alloy::primitives::aliases::I24::try_from(
                    x["tick_spacing"].as_i64().expect("spacing"),
                )
                .expect("i24"),
                hooks: Address::ZERO,
            };
            let id = alloy::primitives::keccak256(alloy::sol_types::SolValue::abi_encode(&key));
            assert_eq!(x["pool"], id.to_string(), "the pool id is the key's hash");
            let params = v4q::QuoteExactSingleParams {
                zeroForOne: usdc < other,
                poolKey: key,
                exactAmount: 25_000_000_000u128,
                hookData: Default::default(),
            };
            let quoter = d.uniswap_v4["v4_quoter"];
            read(&rt, &provider, quoter, v4q::quoteExactInputSingleCall { params }).amountOut
        } else if x["version"] == "v2" {
            read(
                &rt,
                &provider,
                d.uniswap_v2["router02"],
                getAmountsOutCall { amountIn: amount, path: vec![usdc, weth] },
            )[1]
        } else {
            let params = QuoteExactInputSingleParams {
                tokenIn: usdc,
                tokenOut: weth,
                amountIn: amount,
                fee: U24::from(x["fee"].as_u64().expect("fee")),
                sqrtPriceLimitX96: U160::ZERO,
            };
            read(&rt, &provider, d.uniswap_v3["quoter_v2"], quoteExactInputSingleCall { params }).amountOut
        };
        assert_eq!(units(&json!(out)), want, "{x}");
        let impact = f(&x["price_impact"]);
        assert!(impact > 0.0 && impact < 0.5, "{x}");
    }
    let impacts: Vec<f64> = venues.iter().filter_map(|x| x["price_impact"].as_f64()).collect();
    assert!(impacts.windows(2).all(|w| w[0] <= w[1]), "best first: {impacts:?}");
    let same = call(
        &h,
        "intel_compare_venues",
        json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "USDC", "amount": "1"}),
    );
    assert_eq!(same.expect_err("same token").code, ErrorCode::InvalidParams);
}
