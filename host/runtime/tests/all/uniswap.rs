//! The Uniswap plugin on the devnet: every read equals the contracts' own answer, every write
//! plan — signed and sent by the test as it is — does exactly what it said, `verify` reports it,
//! and bad input is a typed error that says what to do.

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, U256, aliases::U24};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::{TransactionReceipt, TransactionRequest};
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_core::tool::WritePlan;
use bardo_core::{ErrorCode, ToolError};
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_runtime::engine::Limits;
use bardo_runtime::plugin::Host;
use bardo_test_artifacts::UNISWAP;
pub(super) use bardo_test_support::{addr, u256};
use bardo_test_support::{devnet, devnet_host, runtime};
use serde_json::{Value, json};
use std::collections::BTreeSet;

sol! {
    function balanceOf(address account) external view returns (uint256);
    function approve(address spender, uint256 amount) external returns (bool);
    function name() external view returns (string);
    function totalSupply() external view returns (uint256);
    function getPool(address tokenA, address tokenB, uint24 fee) external view returns (address pool);
    function slot0() external view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex,
        uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked);
    function liquidity() external view returns (uint128);
    function getReserves() external view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast);
    function positions(uint256 tokenId) external view returns (uint96 nonce, address operator, address token0,
        address token1, uint24 fee, int24 tickLower, int24 tickUpper, uint128 liquidity,
        uint256 feeGrowthInside0LastX128, uint256 feeGrowthInside1LastX128, uint128 tokensOwed0, uint128 tokensOwed1);
}

pub(super) struct Env {
    _node: Anvil,
    pub(super) d: Deployments,
    host: Host,
    pub(super) rt: tokio::runtime::Runtime,
    pub(super) provider: DynProvider,
    pub(super) dev: Address,
}

fn env_with(settings: impl FnOnce(&Deployments) -> Value, wallet: bool) -> Env {
    let (node, d) = devnet();
    let host = devnet_host(&node.url(), settings(&d), wallet, &[UNISWAP]);
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased();
    let dev = d.deployer;
    Env { _node: node, d, host, rt: runtime(), provider, dev }
}

pub(super) fn env() -> Env {
    env_with(Deployments::uniswap_settings, true)
}

impl Env {
    pub(super) fn token(&self, symbol: &str) -> Address {
        self.d.tokens[symbol].address
    }

    pub(super) fn call(&self, tool: &str, params: Value) -> Value {
        let json = self.host.call(tool, &params.to_string()).result.unwrap_or_else(|e| panic!("{tool}: {e}"));
        serde_json::from_str(&json).expect("json")
    }

    /// [`Self::call`], with the fuel the call burned.
    pub(super) fn call_fuel(&self, tool: &str, params: Value) -> (Value, u64) {
        let report = self.host.call(tool, &params.to_string());
        let json = report.result.unwrap_or_else(|e| panic!("{tool}: {e}"));
        (serde_json::from_str(&json).expect("json"), report.stats.fuel_consumed)
    }

    pub(super) fn error(&self, tool: &str, params: Value) -> ToolError {
        let report =
            if self.host.catalog()[tool].def.capability_tier == bardo_core::tool::CapabilityTier::Read {
                self.host.call(tool, &params.to_string()).result.map(|_| ())
            } else {
                self.host.plan(tool, &params.to_string()).result.map(|_| ())
            };
        report.expect_err(&format!("{tool} {params} must fail"))
    }

    pub(super) fn plan(&self, tool: &str, params: &Value) -> WritePlan {
        self.host.plan(tool, &params.to_string()).result.unwrap_or_else(|e| panic!("{tool}: {e}"))
    }

    /// Sign and send the plan's calls as they are, in order, from the wallet.
    pub(super) fn execute(&self, plan: &WritePlan) -> Vec<TransactionReceipt> {
        plan.calls
            .iter()
            .map(|c| {
                assert_eq!(c.chain_id, CHAIN_ID);
                let tx = TransactionRequest::default()
                    .from(self.dev)
                    .to(c.to)
                    .with_input(c.data.clone())
                    .value(c.value);
                let r = self.rt.block_on(bardo_test_support::send(&self.provider, tx.clone()));
                if !r.status() {
                    // Replay on the parent block for the revert reason.
                    let parent = r.block_number.unwrap_or(1) - 1;
                    let why = self.rt.block_on(self.provider.call(tx).block(parent.into()).into_future());
                    panic!("{} reverted in block {:?}: {why:?}", c.description, r.block_number);
                }
                r
            })
            .collect()
    }

    pub(super) fn verify(&self, tool: &str, params: &Value, receipts: &[TransactionReceipt]) -> Value {
        self.host
            .verify(tool, &params.to_string(), CHAIN_ID, receipts)
            .result
            .unwrap_or_else(|e| panic!("verify {tool}: {e}"))
    }

    pub(super) fn read<C: SolCall>(&self, to: Address, call: C) -> C::Return {
        let tx = TransactionRequest::default().to(to).with_input(call.abi_encode());
        let out = self.rt.block_on(self.provider.call(tx).into_future()).expect("eth_call");
        C::abi_decode_returns(&out).expect("decode")
    }

    pub(super) fn balance(&self, token: Address) -> U256 {
        self.read(token, balanceOfCall { account: self.dev })
    }
}

#[test]
fn pool_and_token_reads_equal_direct_contract_calls() {
    let e = env();
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let info = e.call(
        "uniswap_get_pool_info",
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000}),
    );
    let pool =
        e.read(e.d.uniswap_v3["factory"], getPoolCall { tokenA: weth, tokenB: usdc, fee: U24::from(3000) });
    assert_eq!(addr(&info["address"]), pool);
    let slot0 = e.read(pool, slot0Call {});
    assert_eq!(u256(&info["sqrt_price_x96"]), U256::from(slot0.sqrtPriceX96));
    assert_eq!(info["tick"], json!(slot0.tick.as_i32()));
    assert_eq!(info["liquidity"], json!(e.read(pool, liquidityCall {}).to_string()));
    assert_eq!(addr(&info["token0"]["address"]), weth.min(usdc));
    assert_eq!(info["token1"]["decimals"], json!(if usdc > weth { 6 } else { 18 }));
    let price: f64 = info["price_token1_per_token0"].as_str().expect("price").parse().expect("number");
    assert!((price - 2000.0).abs() < 40.0, "the pools are seeded near 2,000 USDC per WETH, got {price}");

    let v2 = e.call(
        "uniswap_get_pool_info",
        json!({"chain_id": CHAIN_ID, "token_a": "USDC", "token_b": "WETH", "version": "v2"}),
    );
    let reserves = e.read(addr(&v2["address"]), getReservesCall {});
    assert_eq!(v2["reserve0"], json!(reserves.reserve0.to_string()));
    assert_eq!(v2["reserve1"], json!(reserves.reserve1.to_string()));

    let pools = e.call(
        "uniswap_get_pools_by_token_pair",
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC"}),
    );
    let got: BTreeSet<Address> = pools
        .as_array()
        .expect("list")
        .iter()
        .filter(|p| p["version"] != "v4")
        .map(|p| addr(&p["address"]))
        .collect();
    let pair = |p: &bardo_devnet::deploy::Pool| {
        BTreeSet::from([p.token0.as_str(), p.token1.as_str()]) == BTreeSet::from(["WETH", "USDC"])
    };
    let expected: BTreeSet<Address> =
        e.d.uniswap_v3_pools
            .iter()
            .chain(&e.d.uniswap_v2_pairs)
            .filter(|p| pair(p))
            .map(|p| p.address)
            .collect();
    assert_eq!(got, expected, "every WETH/USDC V2/V3 pool the devnet deployed, and no other");
    let v4: Vec<&Value> = pools.as_array().expect("list").iter().filter(|p| p["version"] == "v4").collect();
    assert_eq!(v4.len(), 1, "the V4 WETH/USDC pool, by id: {pools}");
    assert_eq!(v4[0]["pool_id"], json!(e.d.uniswap_v4_pools[0].id.to_string()));

    let token =
        e.call("uniswap_get_token_info", json!({"chain_id": CHAIN_ID, "token": usdc.to_checksum(None)}));
    assert_eq!(token["symbol"], "USDC");
    assert_eq!(token["decimals"], 6);
    assert_eq!(token["listed"], true);
    assert_eq!(token["name"], json!(e.read(usdc, nameCall {})));
    assert_eq!(u256(&token["total_supply_base"]), e.read(usdc, totalSupplyCall {}));
}

#[test]
fn the_quote_is_what_the_swap_delivers_and_verify_reports_it() {
    let e = env();
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let params = json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": "1.5"});
    let quote = e.call("uniswap_get_quote", params.clone());
    let quoted_out = u256(&quote["best"]["amount_out_base"]);
    let routes = quote["routes"].as_array().expect("routes");
    assert!(routes.iter().any(|r| r["route"]["version"] == "v4"), "V4 competes: {quote}");
    assert_eq!(quote["best"]["route"]["version"], "v3", "V3's concentrated 0.05 % pool pays most here");

    let plan = e.plan("uniswap_execute_swap", &params);
    assert_eq!(u256(&plan.expected_outcome["amount_out_base"]), quoted_out);
    let min = u256(&plan.expected_outcome["amount_out_minimum_base"]);
    assert_eq!(min, quoted_out * U256::from(9950) / U256::from(10000), "0.5 % default slippage, never 0");

    let (weth_before, usdc_before) = (e.balance(weth), e.balance(usdc));
    let receipts = e.execute(&plan);
    assert_eq!(e.balance(usdc) - usdc_before, quoted_out, "anvil delivers exactly the quote");
    assert_eq!(weth_before - e.balance(weth), U256::from(15) * U256::from(10).pow(U256::from(17)));

    let verified = e.verify("uniswap_execute_swap", &params, &receipts);
    assert_eq!(u256(&verified["amount_out_base"]), quoted_out);
    assert_eq!(verified["amount_in"], "1.5");
    assert_eq!(verified["route"]["pool"], quote["best"]["route"]["pool"]);
}

#[test]
fn exact_out_on_v2_spends_the_quoted_input() {
    let e = env();
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "0.25",
        "side": "exact_out", "version": "v2", "slippage_bps": 100});
    let quote = e.call(
        "uniswap_get_quote",
        params
            .as_object()
            .map(|o| {
                let mut o = o.clone();
                o.remove("slippage_bps");
                Value::Object(o)
            })
            .expect("object"),
    );
    let (quoted_in, quoted_out) =
        (u256(&quote["best"]["amount_in_base"]), u256(&quote["best"]["amount_out_base"]));
    assert_eq!(quote["best"]["route"]["version"], "v2");
    let asked = U256::from(25) * U256::from(10).pow(U256::from(16));
    assert!(quoted_out >= asked && quoted_out - asked < U256::from(10).pow(U256::from(10)), "{quote}");
    let plan = e.plan("uniswap_execute_swap", &params);
    assert_eq!(
        u256(&plan.expected_outcome["amount_in_maximum_base"]),
        (quoted_in * U256::from(10100)).div_ceil(U256::from(10000)),
        "1 % over the quote, rounded up"
    );
    let (weth_before, usdc_before) = (e.balance(weth), e.balance(usdc));
    let receipts = e.execute(&plan);
    // The pair's rounding pays a few wei over the 0.25 asked for; the quote says exactly how many.
    assert_eq!(e.balance(weth) - weth_before, quoted_out, "exactly the quoted output");
    assert_eq!(usdc_before - e.balance(usdc), quoted_in, "the router takes exactly the quoted input");
    let verified = e.verify("uniswap_execute_swap", &params, &receipts);
    assert_eq!(verified["route"]["version"], "v2");
    assert_eq!(u256(&verified["amount_in_base"]), quoted_in);
}

#[test]
fn a_pool_that_can_fill_only_part_says_how_much_it_would_really_take() {
    let e = env();
    // 1,000,000 WETH: the concentrated 0.05 % pool runs dry long before; the full-range pools and
    // the V2 pair take it all (at a ruinous price).
    let params = json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": "1000000"});
    let quote = e.call("uniswap_get_quote", params);
    let partial = quote["partial"].as_array().expect("partial routes");
    assert_eq!(partial.len(), 1, "{quote}");
    assert_eq!(
        (partial[0]["route"]["version"].clone(), partial[0]["route"]["fee"].clone()),
        (json!("v3"), json!(500))
    );
    let takes: f64 = partial[0]["amount_in"].as_str().expect("amount").parse().expect("number");
    assert!(takes > 10.0 && takes < 10_000.0, "the pool takes only part: {takes} WETH");
    assert!(
        quote["routes"]
            .as_array()
            .expect("routes")
            .iter()
            .all(|r| r["route"]["fee"] != 500 || r["route"]["version"] != "v3"),
        "a partial fill is not offered as a full one"
    );
    // Restricted to that pool: not found, saying the most it takes, in the token the amount is in.
    let only = json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": "1000000",
        "version": "v3", "fee": 500});
    let e2 = e.error("uniswap_get_quote", only);
    assert_eq!(e2.code, ErrorCode::NotFound);
    assert!(
        e2.message.contains("1000000 WETH (selling for USDC)")
            && e2.message.contains("the most one pool takes is"),
        "{e2}"
    );
    let out = json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": "2000000000",
        "side": "exact_out", "version": "v3", "fee": 500});
    let e3 = e.error("uniswap_get_quote", out);
    assert!(e3.message.contains("2000000000 USDC (buying with WETH)"), "the amount is in USDC: {e3}");
}

#[test]
fn a_v3_swap_goes_through_the_universal_router_with_exact_permit2_approvals() {
    let e = env();
    let usdc = e.token("USDC");
    let (router, permit2) = (e.d.uniswap_v4["universal_router"], e.d.uniswap_v4["permit2"]);
    let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "100", "version": "v3"});
    let plan = e.plan("uniswap_execute_swap", &params);
    assert_eq!(plan.calls.len(), 3, "USDC → Permit2, Permit2 → router, then the swap");
    assert_eq!(plan.calls[0].to, usdc);
    let approval = approveCall::abi_decode(&plan.calls[0].data).expect("an approve call");
    assert_eq!(
        (approval.spender, approval.amount),
        (permit2, U256::from(100_000_000u64)),
        "exactly 100 USDC"
    );
    assert_eq!((plan.calls[1].to, plan.calls[2].to), (permit2, router));
    assert_eq!(plan.expected_outcome["route"]["version"], "v3");
    let (weth, usdc_before) = (e.balance(e.token("WETH")), e.balance(usdc));
    let receipts = e.execute(&plan);
    assert_eq!(usdc_before - e.balance(usdc), U256::from(100_000_000u64));
    let verified = e.verify("uniswap_execute_swap", &params, &receipts);
    assert_eq!(e.balance(e.token("WETH")) - weth, u256(&verified["amount_out_base"]));
    assert_eq!(verified["route"]["version"], "v3", "the V3 pool took the USDC: {verified}");
}

#[test]
fn liquidity_mint_fees_collect_and_remove() {
    let e = env();
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let pool = e.call(
        "uniswap_get_pool_info",
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000}),
    );
    let (tick, spacing) =
        (pool["tick"].as_i64().expect("tick") as i32, pool["tick_spacing"].as_i64().expect("spacing") as i32);
    let lower = tick.div_euclid(spacing) * spacing - 10 * spacing;
    let upper = lower + 20 * spacing;
    let add = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000, "amount_a": "2",
        "amount_b": "4000", "tick_lower": lower, "tick_upper": upper});
    let plan = e.plan("uniswap_add_liquidity", &add);
    let receipts = e.execute(&plan);
    let added = e.verify("uniswap_add_liquidity", &add, &receipts);
    assert_eq!(added["position_id"], plan.expected_outcome["position_id"]);
    assert_eq!(
        added["liquidity_added"], plan.expected_outcome["liquidity_added"],
        "simulated mint = real mint"
    );
    assert_eq!(added["amount0_base"], plan.expected_outcome["amount0_base"]);
    assert_eq!(added["amount1_base"], plan.expected_outcome["amount1_base"]);
    let id = added["position_id"].as_str().expect("id").to_owned();

    // Increase the same position: its pool and range come from the position itself.
    let increase = json!({"chain_id": CHAIN_ID, "token_a": "USDC", "token_b": "WETH", "fee": 3000,
        "amount_a": "1000", "amount_b": "1", "position_id": id});
    let plan = e.plan("uniswap_add_liquidity", &increase);
    let receipts = e.execute(&plan);
    let increased = e.verify("uniswap_add_liquidity", &increase, &receipts);
    assert_eq!(increased["position_id"], json!(id));
    assert_eq!(increased["liquidity_added"], plan.expected_outcome["liquidity_added"]);
    let total = u256(&added["liquidity_added"]) + u256(&increased["liquidity_added"]);

    let direct =
        e.read(e.d.uniswap_v3["position_manager"], positionsCall { tokenId: id.parse().expect("id") });
    let position = e.call("uniswap_get_position", json!({"chain_id": CHAIN_ID, "position_id": id}));
    assert_eq!(position["liquidity"], json!(direct.liquidity.to_string()));
    assert_eq!(U256::from(direct.liquidity), total, "mint + increase");
    assert_eq!(
        (position["tick_lower"].clone(), position["tick_upper"].clone()),
        (json!(lower), json!(upper))
    );
    assert_eq!(position["in_range"], true);
    assert_eq!(addr(&position["owner"]), e.dev);
    assert_eq!(position["fees0_base"], "0");
    // Deposited amounts come back, less the pool's rounding (at most 1 base unit per deposit).
    for i in ["0", "1"] {
        let key = format!("amount{i}_base");
        let (back, put) = (u256(&position[&key]), u256(&added[&key]) + u256(&increased[&key]));
        assert!(back <= put && put - back <= U256::from(2), "amount{i}: {back} back of {put}");
    }

    // Trade through the pool both ways so that the position earns fees in both tokens.
    for (tin, tout, amount) in [("WETH", "USDC", "1"), ("USDC", "WETH", "2000")] {
        let swap = json!({"chain_id": CHAIN_ID, "token_in": tin, "token_out": tout, "amount": amount, "version": "v3", "fee": 3000});
        e.execute(&e.plan("uniswap_execute_swap", &swap));
    }
    let position = e.call("uniswap_get_position", json!({"chain_id": CHAIN_ID, "position_id": id}));
    let (fees0, fees1) = (u256(&position["fees0_base"]), u256(&position["fees1_base"]));
    assert!(fees0 > U256::ZERO && fees1 > U256::ZERO, "the swaps paid fees: {position}");

    let collect = json!({"chain_id": CHAIN_ID, "position_id": id});
    let plan = e.plan("uniswap_collect_fees", &collect);
    assert_eq!(
        (u256(&plan.expected_outcome["amount0_base"]), u256(&plan.expected_outcome["amount1_base"])),
        (fees0, fees1)
    );
    let (t0, t1) = if weth < usdc { (weth, usdc) } else { (usdc, weth) };
    let before = (e.balance(t0), e.balance(t1));
    let receipts = e.execute(&plan);
    assert_eq!(
        (e.balance(t0) - before.0, e.balance(t1) - before.1),
        (fees0, fees1),
        "the fees reached the wallet"
    );
    let collected = e.verify("uniswap_collect_fees", &collect, &receipts);
    assert_eq!((u256(&collected["amount0_base"]), u256(&collected["amount1_base"])), (fees0, fees1));

    let remove = json!({"chain_id": CHAIN_ID, "position_id": id});
    let plan = e.plan("uniswap_remove_liquidity", &remove);
    let before = (e.balance(t0), e.balance(t1));
    let receipts = e.execute(&plan);
    let removed = e.verify("uniswap_remove_liquidity", &remove, &receipts);
    assert_eq!(removed["liquidity_removed"], json!(direct.liquidity.to_string()));
    assert_eq!(removed["withdrawn"]["amount0_base"], plan.expected_outcome["withdrawn"]["amount0_base"]);
    assert_eq!(
        (e.balance(t0) - before.0, e.balance(t1) - before.1),
        (u256(&removed["collected"]["amount0_base"]), u256(&removed["collected"]["amount1_base"])),
        "what verify reports is what the wallet received"
    );
    let after = e.call("uniswap_get_position", json!({"chain_id": CHAIN_ID, "position_id": id}));
    assert_eq!(after["liquidity"], "0");
}

#[test]
fn the_token_price_comes_from_the_deepest_pool() {
    let e = env();
    let usdc = e.token("USDC");
    let price = e.call("data_get_token_price", json!({"chain_id": CHAIN_ID, "token": "WETH"}));
    let pools = e.call(
        "uniswap_get_pools_by_token_pair",
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC"}),
    );
    let depth = |p: &Value| e.read(usdc, balanceOfCall { account: addr(&p["address"]) });
    // Prices come from V2 and V3 pools (a V4 pool's tokens sit in the PoolManager with every other's).
    let pools: Vec<&Value> =
        pools.as_array().expect("pools").iter().filter(|p| p["version"] != "v4").collect();
    let max = pools.iter().map(|p| depth(p)).max().expect("a pool");
    let deepest = pools
        .iter()
        .find(|p| p["address"] == price["source"]["pool"])
        .expect("the source is a WETH/USDC pool");
    assert_eq!(depth(deepest), max, "no pool holds more USDC than the source");
    let usdc_is_token1 = addr(&deepest["token1"]["address"]) == usdc;
    let expected = if usdc_is_token1 {
        &deepest["price_token1_per_token0"]
    } else {
        &deepest["price_token0_per_token1"]
    };
    assert_eq!(&price["price"], expected);
}

#[test]
fn bad_input_is_a_typed_error_that_says_what_to_do() {
    let e = env();
    let usdc = e.token("USDC");
    let usdc_before = e.balance(usdc);
    let big = (e.balance(usdc) * U256::from(2) / U256::from(1_000_000u64)).to_string();
    let bad_checksum = {
        let good = usdc.to_checksum(None);
        let flipped: String = good
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i > 1 && c.is_ascii_alphabetic() {
                    if c.is_ascii_uppercase() { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() }
                } else {
                    c
                }
            })
            .collect();
        flipped
    };
    // A token pair the devnet has no pool for.
    let pooled: BTreeSet<BTreeSet<&str>> =
        e.d.uniswap_v3_pools
            .iter()
            .chain(&e.d.uniswap_v2_pairs)
            .map(|p| BTreeSet::from([p.token0.as_str(), p.token1.as_str()]))
            .collect();
    let symbols: Vec<&str> = e.d.tokens.keys().map(String::as_str).collect();
    let (x, y) = symbols
        .iter()
        .flat_map(|a| symbols.iter().map(move |b| (*a, *b)))
        .find(|(a, b)| a != b && !pooled.contains(&BTreeSet::from([*a, *b])))
        .expect("an unpooled pair");

    let swap = |extra: Value| {
        let mut p = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "100"});
        p.as_object_mut().expect("object").extend(extra.as_object().expect("object").clone());
        p
    };
    let cases: Vec<(&str, Value, ErrorCode, &str)> = vec![
        (
            "uniswap_get_pool_info",
            json!({"chain_id": CHAIN_ID, "token_a": "NOPE", "token_b": "USDC"}),
            ErrorCode::NotFound,
            "token list",
        ),
        (
            "uniswap_get_pool_info",
            json!({"chain_id": CHAIN_ID, "token_a": x, "token_b": y}),
            ErrorCode::NotFound,
            "uniswap_get_pools_by_token_pair",
        ),
        (
            "uniswap_get_pool_info",
            json!({"chain_id": CHAIN_ID, "token_a": "0x1234", "token_b": "USDC"}),
            ErrorCode::InvalidParams,
            "40 hex digits",
        ),
        (
            "uniswap_get_pool_info",
            json!({"chain_id": CHAIN_ID, "token_a": bad_checksum, "token_b": "WETH"}),
            ErrorCode::InvalidParams,
            "checksum",
        ),
        (
            "uniswap_get_pool_info",
            json!({"chain_id": CHAIN_ID, "token_a": e.dev.to_checksum(None), "token_b": "WETH"}),
            ErrorCode::InvalidParams,
            "no contract code",
        ),
        (
            "uniswap_get_pool_info",
            json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 1234}),
            ErrorCode::InvalidParams,
            "fee tier",
        ),
        (
            "uniswap_get_pool_info",
            json!({"chain_id": 999, "token_a": "WETH", "token_b": "USDC"}),
            ErrorCode::ChainNotSupported,
            // The host has no node for it: its own configuration is named, not the plugin's.
            "[chains.999]",
        ),
        (
            "uniswap_get_quote",
            json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": "0"}),
            ErrorCode::InvalidParams,
            "positive",
        ),
        (
            "uniswap_get_quote",
            json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": "1.5e3"}),
            ErrorCode::InvalidParams,
            "decimal",
        ),
        (
            "uniswap_get_quote",
            json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1.0000001"}),
            ErrorCode::InvalidParams,
            "6 decimals",
        ),
        (
            "uniswap_get_quote",
            json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "WETH", "amount": "1"}),
            ErrorCode::InvalidParams,
            "same token",
        ),
        (
            "uniswap_get_quote",
            json!({"chain_id": CHAIN_ID, "token_in": "WETH", "amount": "1"}),
            ErrorCode::InvalidParams,
            "token_out",
        ),
        ("uniswap_execute_swap", swap(json!({"slippage_bps": 0})), ErrorCode::InvalidParams, "slippage_bps"),
        (
            "uniswap_execute_swap",
            swap(json!({"slippage_bps": 10000})),
            ErrorCode::InvalidParams,
            "slippage_bps",
        ),
        (
            "uniswap_execute_swap",
            swap(json!({"amount": big, "version": "v2"})),
            ErrorCode::InvalidParams,
            "lower the amount",
        ),
        (
            "uniswap_get_position",
            json!({"chain_id": CHAIN_ID, "position_id": "999999"}),
            ErrorCode::NotFound,
            "does not exist",
        ),
        (
            "uniswap_get_position",
            json!({"chain_id": CHAIN_ID, "position_id": "-1"}),
            ErrorCode::InvalidParams,
            "position_id",
        ),
    ];
    for (tool, params, code, hint) in cases {
        let err = e.error(tool, params.clone());
        assert_eq!(err.code, code, "{tool} {params}: {err}");
        assert!(err.message.contains(hint), "{tool} {params}: {:?} should mention {hint:?}", err.message);
    }
    assert_eq!(e.balance(usdc), usdc_before, "planning and failing moved nothing");
}

#[test]
fn ambiguous_symbols_and_missing_wallets_are_refused() {
    let e = env_with(
        |d| {
            let mut s = d.uniswap_settings();
            let list = s["chains"][CHAIN_ID.to_string()]["tokens"].as_array_mut().expect("tokens");
            list.push(json!({"symbol": "usdc", "address": d.tokens["DAI"].address}));
            s
        },
        false,
    );
    let err = e.error(
        "uniswap_get_quote",
        json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1"}),
    );
    assert_eq!(err.code, ErrorCode::InvalidParams);
    assert!(
        err.message.contains("ambiguous") && err.message.contains(&e.token("DAI").to_checksum(None)),
        "{err}"
    );
    let err = e.error(
        "uniswap_execute_swap",
        json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "DAI", "amount": "1"}),
    );
    assert_eq!(err.code, ErrorCode::WalletNotConfigured, "{err}");
}

#[test]
fn every_tool_carries_complete_metadata() {
    let host = super::host_with("dev", Limits::default(), &[UNISWAP]);
    let plugin = host.plugins().iter().find(|p| &*p.name == "uniswap").expect("uniswap loaded");
    assert_eq!(plugin.manifest.tools.len(), 22);
    // The LP agent's day: positions, fees, ranges, staking, migration.
    let lp: Vec<&str> = (plugin.manifest.tools.iter())
        .filter(|t| t.category == bardo_core::tool::Category::Lp)
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(lp.len(), 15, "{lp:?}");
    for t in &plugin.manifest.tools {
        assert!(t.name.starts_with("uniswap_") || t.name.starts_with("data_"), "{}", t.name);
        assert!(t.description.len() > 120, "{}: a description that says when and what not", t.name);
        assert!(t.prompt_snippet.starts_with(&t.name), "{}", t.name);
        assert!(!t.progress_steps.is_empty() && !t.prompt_guidelines.is_empty(), "{}", t.name);
        let props = t.input_schema["properties"].as_object().expect("schema properties");
        assert!(props.contains_key("chain_id"), "{}", t.name);
        for (field, schema) in props {
            assert!(schema.get("description").is_some(), "{}.{field} is documented", t.name);
        }
        let write = t.capability_tier == bardo_core::tool::CapabilityTier::Write;
        assert_eq!(!t.action_kinds.is_empty(), write, "{}: write tools name their action kinds", t.name);
    }
}
