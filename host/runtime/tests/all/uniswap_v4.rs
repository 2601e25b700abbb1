//! Uniswap V4 on the devnet: pool reads equal StateView's, the best route is the version that
//! really pays most, a V4 swap through the UniversalRouter delivers its quote to the base unit
//! and leaves nothing in the router, and Permit2 allowances are exact, added only when short and
//! renewed when they would expire before the swap's deadline.

use super::uniswap::{Env, addr, env, u256};
use alloy::eips::BlockNumberOrTag;
use alloy::network::TransactionBuilder;
use alloy::primitives::aliases::{U48, U160};
use alloy::primitives::{Address, U256};
use alloy::providers::Provider;
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_core::ErrorCode;
use bardo_devnet::CHAIN_ID;
use serde_json::{Value, json};

sol! {
    function getSlot0(bytes32 poolId) external view returns (uint160 sqrtPriceX96, int24 tick, uint24 protocolFee,
        uint24 lpFee);
    function getLiquidity(bytes32 poolId) external view returns (uint128 liquidity);
    function approve(address spender, uint256 amount) external returns (bool);
    function allowance(address owner, address spender) external view returns (uint256);
    function balanceOf(address account) external view returns (uint256);
    function execute(bytes commands, bytes[] inputs, uint256 deadline) external payable;
}

mod permit2 {
    alloy::sol! {
        function approve(address token, address spender, uint160 amount, uint48 expiration) external;
        function allowance(address user, address token, address spender) external view
            returns (uint160 amount, uint48 expiration, uint48 nonce);
    }
}

fn units(whole: u64, decimals: u8) -> U256 {
    U256::from(whole) * U256::from(10).pow(U256::from(decimals))
}

impl Env {
    fn send(&self, to: Address, data: Vec<u8>) {
        let tx = TransactionRequest::default().from(self.dev).to(to).with_input(data);
        let r = self.rt.block_on(bardo_test_support::send(&self.provider, tx));
        assert!(r.status(), "setup transaction reverted");
    }

    fn now(&self) -> u64 {
        let block =
            self.rt.block_on(self.provider.get_block_by_number(BlockNumberOrTag::Latest).into_future());
        block.expect("rpc").expect("head").header.timestamp
    }
}

#[test]
fn v4_pool_reads_equal_state_view() {
    let e = env();
    let info = e.call(
        "uniswap_get_pool_info",
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "DAI", "version": "v4"}),
    );
    let pool =
        e.d.uniswap_v4_pools.iter().find(|p| p.token0 != "USDC" && p.token1 != "USDC").expect("WETH/DAI");
    assert_eq!(info["version"], "v4");
    assert_eq!(info["pool_id"], json!(pool.id.to_string()));
    assert_eq!(addr(&info["address"]), e.d.uniswap_v4["pool_manager"], "V4 pools live in the PoolManager");
    assert_eq!((info["fee"].clone(), info["tick_spacing"].clone()), (json!(500), json!(10)));
    assert_eq!(addr(&info["hooks"]), Address::ZERO);
    assert_eq!(info["hook_permissions"], json!([]), "no hook, no permissions");
    let state_view = e.d.uniswap_v4["state_view"];
    let slot0 = e.read(state_view, getSlot0Call { poolId: pool.id });
    assert_eq!(u256(&info["sqrt_price_x96"]), U256::from(slot0.sqrtPriceX96));
    assert_eq!(info["tick"], json!(slot0.tick.as_i32()));
    let liquidity = e.read(state_view, getLiquidityCall { poolId: pool.id });
    assert_eq!(info["liquidity"], json!(liquidity.to_string()));
    let dai_per_weth = if addr(&info["token0"]["address"]) == e.token("WETH") {
        &info["price_token1_per_token0"]
    } else {
        &info["price_token0_per_token1"]
    };
    let price: f64 = dai_per_weth.as_str().expect("price").parse().expect("number");
    assert!((price - 2000.0).abs() < 40.0, "seeded near 2,000 DAI per WETH, got {price}");

    let missing = e.error(
        "uniswap_get_pool_info",
        json!({"chain_id": CHAIN_ID, "token_a": "WBTC", "token_b": "DAI", "version": "v4"}),
    );
    assert_eq!(missing.code, ErrorCode::NotFound, "{missing}");
    assert!(missing.message.contains("V4") && missing.message.contains("uniswap_get_pools_by_token_pair"));
}

#[test]
fn v4_pays_most_for_weth_dai_and_the_universal_router_delivers_the_quote() {
    let e = env();
    let (weth, dai) = (e.token("WETH"), e.token("DAI"));
    let (router, permit2) = (e.d.uniswap_v4["universal_router"], e.d.uniswap_v4["permit2"]);
    let params = json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "DAI", "amount": "1.5"});
    let quote = e.call("uniswap_get_quote", params.clone());
    assert_eq!(
        quote["best"]["route"]["version"], "v4",
        "the 0.05 % V4 pool beats V3 and V2 at 0.3 %: {quote}"
    );
    assert_eq!(quote["best"]["route"]["fee"], 500);
    let versions: Vec<&str> = quote["routes"]
        .as_array()
        .expect("routes")
        .iter()
        .filter_map(|r| r["route"]["version"].as_str())
        .collect();
    assert!(versions.contains(&"v3") && versions.contains(&"v2"), "every version competed: {versions:?}");
    let quoted_out = u256(&quote["best"]["amount_out_base"]);

    let plan = e.plan("uniswap_execute_swap", &params);
    let amount = U256::from(15) * U256::from(10).pow(U256::from(17));
    assert_eq!(plan.calls.len(), 3, "WETH → Permit2, Permit2 → router, execute: {:?}", plan.calls);
    let erc20 = approveCall::abi_decode(&plan.calls[0].data).expect("approve");
    assert_eq!((plan.calls[0].to, erc20.spender, erc20.amount), (weth, permit2, amount), "exactly 1.5 WETH");
    let grant = permit2::approveCall::abi_decode(&plan.calls[1].data).expect("Permit2 approve");
    assert_eq!(plan.calls[1].to, permit2);
    assert_eq!((grant.token, grant.spender, U256::from(grant.amount)), (weth, router, amount));
    let expiration: u64 = grant.expiration.to();
    assert!(
        expiration > e.now() && expiration <= e.now() + 600,
        "the allowance dies with the swap's deadline"
    );
    let declared = &plan.expected_outcome["authorities"];
    assert!(
        declared.as_array().expect("authorities").iter().any(|a| a["permit2"] == true
            && a["expiration"] == json!(expiration)
            && addr(&a["spender"]) == router),
        "the Permit2 allowance is declared: {declared}"
    );
    assert_eq!(plan.calls[2].to, router);

    let (weth_before, dai_before) = (e.balance(weth), e.balance(dai));
    let receipts = e.execute(&plan);
    assert_eq!(e.balance(dai) - dai_before, quoted_out, "anvil delivers exactly the quote");
    assert_eq!(weth_before - e.balance(weth), amount);
    for token in [weth, dai] {
        assert_eq!(
            e.read(token, balanceOfCall { account: router }),
            U256::ZERO,
            "nothing stays in the router"
        );
    }
    let left = e.read(permit2, permit2::allowanceCall { user: e.dev, token: weth, spender: router });
    assert_eq!(left.amount, U160::ZERO, "the Permit2 allowance is used up");
    assert_eq!(e.read(weth, allowanceCall { owner: e.dev, spender: permit2 }), U256::ZERO);

    let verified = e.verify("uniswap_execute_swap", &params, &receipts);
    assert_eq!(verified["route"]["version"], "v4");
    assert_eq!(verified["route"]["pool_id"], quote["best"]["route"]["pool_id"]);
    assert_eq!(u256(&verified["amount_out_base"]), quoted_out);
}

#[test]
fn permit2_allowances_are_added_only_when_short_and_renewed_before_they_expire() {
    let e = env();
    let (usdc, weth) = (e.token("USDC"), e.token("WETH"));
    let (router, permit2) = (e.d.uniswap_v4["universal_router"], e.d.uniswap_v4["permit2"]);
    let plenty = units(10_000, 6);
    e.send(usdc, approveCall { spender: permit2, amount: plenty }.abi_encode());
    let grant = |expiration: u64| permit2::approveCall {
        token: usdc,
        spender: router,
        amount: U160::from(plenty),
        expiration: U48::from(expiration),
    };
    e.send(permit2, grant(e.now() + 10 * 86_400).abi_encode());
    let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "0.25",
        "side": "exact_out", "version": "v4"});
    let quote = e.call("uniswap_get_quote", params.clone());
    let quoted_in = u256(&quote["best"]["amount_in_base"]);
    let plan = e.plan("uniswap_execute_swap", &params);
    assert_eq!(plan.calls.len(), 1, "both allowances cover it: only the swap: {:?}", plan.calls);
    let (usdc_before, weth_before) = (e.balance(usdc), e.balance(weth));
    e.execute(&plan);
    assert_eq!(e.balance(weth) - weth_before, units(25, 16), "exactly 0.25 WETH out");
    assert_eq!(usdc_before - e.balance(usdc), quoted_in, "the router takes exactly the quoted input");

    // An allowance that lapses before the swap's deadline is renewed; the token's is not touched.
    e.send(permit2, grant(e.now() + 60).abi_encode());
    let plan = e.plan("uniswap_execute_swap", &params);
    assert_eq!(plan.calls.len(), 2, "Permit2 approve, swap: {:?}", plan.calls);
    assert_eq!(plan.calls[0].to, permit2);
    e.execute(&plan);
}

impl Env {
    fn eth(&self) -> U256 {
        self.rt.block_on(self.provider.get_balance(self.dev).into_future()).expect("balance")
    }
}

/// Wei the receipts paid for gas.
fn gas(receipts: &[alloy::rpc::types::TransactionReceipt]) -> U256 {
    receipts.iter().map(|r| U256::from(r.gas_used) * U256::from(r.effective_gas_price)).sum()
}

#[test]
fn native_eth_in_and_out_is_wrapped_and_unwrapped_by_the_router_to_the_wei() {
    let e = env();
    let (usdc, weth) = (e.token("USDC"), e.token("WETH"));
    let router = e.d.uniswap_v4["universal_router"];
    // ETH → USDC, exact in: no approval at all, the ETH goes with the call.
    let params = json!({"chain_id": CHAIN_ID, "token_in": "ETH", "token_out": "USDC", "amount": "0.5"});
    let quote = e.call("uniswap_get_quote", params.clone());
    assert_eq!(quote["token_in"]["symbol"], "ETH");
    let quoted_out = u256(&quote["best"]["amount_out_base"]);
    let plan = e.plan("uniswap_execute_swap", &params);
    assert_eq!(plan.calls.len(), 1, "ETH needs no approval: {:?}", plan.calls);
    assert_eq!(plan.calls[0].value, units(5, 17));
    let changes = &plan.expected_outcome["balance_changes"];
    assert_eq!(
        changes[0]["token"],
        json!(Address::ZERO.to_checksum(None)),
        "native, declared as such: {changes}"
    );
    let (eth_before, usdc_before, weth_before) = (e.eth(), e.balance(usdc), e.balance(weth));
    let receipts = e.execute(&plan);
    assert_eq!(e.balance(usdc) - usdc_before, quoted_out, "exactly the quote");
    assert_eq!(eth_before - e.eth() - gas(&receipts), units(5, 17), "exactly 0.5 ETH, gas aside");
    assert_eq!(e.balance(weth), weth_before, "the wallet's WETH is untouched");
    let verified = e.verify("uniswap_execute_swap", &params, &receipts);
    assert_eq!(
        (verified["amount_in"].clone(), verified["token_in"]["symbol"].clone()),
        (json!("0.5"), json!("ETH"))
    );
    assert_eq!(u256(&verified["amount_out_base"]), quoted_out);

    // USDC → ETH, exact out: the router unwraps exactly the ETH asked for to the wallet.
    let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "ETH", "amount": "0.2",
        "side": "exact_out"});
    let quote = e.call("uniswap_get_quote", params.clone());
    let quoted_in = u256(&quote["best"]["amount_in_base"]);
    let plan = e.plan("uniswap_execute_swap", &params);
    let (eth_before, usdc_before) = (e.eth(), e.balance(usdc));
    let receipts = e.execute(&plan);
    let exact_out = u256(&quote["best"]["amount_out_base"]);
    assert_eq!(e.eth() + gas(&receipts) - eth_before, exact_out, "the quoted ETH, gas aside");
    assert_eq!(usdc_before - e.balance(usdc), quoted_in, "exactly the quoted USDC");
    for token in [usdc, weth] {
        assert_eq!(
            e.read(token, balanceOfCall { account: router }),
            U256::ZERO,
            "nothing stays in the router"
        );
    }
    let verified = e.verify("uniswap_execute_swap", &params, &receipts);
    assert_eq!(u256(&verified["amount_out_base"]), exact_out);
    assert_eq!(verified["token_out"]["symbol"], "ETH");

    // ETH → USDC exact out: the router wraps the most it may pay and returns what it did not use.
    let params = json!({"chain_id": CHAIN_ID, "token_in": "ETH", "token_out": "USDC", "amount": "300",
        "side": "exact_out"});
    let quote = e.call("uniswap_get_quote", params.clone());
    let quoted_in = u256(&quote["best"]["amount_in_base"]);
    let plan = e.plan("uniswap_execute_swap", &params);
    assert!(plan.calls[0].value > quoted_in, "sent with slippage room");
    let eth_before = e.eth();
    let receipts = e.execute(&plan);
    assert_eq!(eth_before - e.eth() - gas(&receipts), quoted_in, "the unused ETH came back");
    assert_eq!(e.read(weth, balanceOfCall { account: router }), U256::ZERO);

    let refused = e.error(
        "uniswap_execute_swap",
        json!({"chain_id": CHAIN_ID, "token_in": "ETH",
        "token_out": "USDC", "amount": "1000000"}),
    );
    assert_eq!(refused.code, ErrorCode::InvalidParams, "{refused}");
    assert!(refused.message.contains("ETH") && refused.message.contains("lower `amount`"), "{refused}");
    let wrap = e.error(
        "uniswap_execute_swap",
        json!({"chain_id": CHAIN_ID, "token_in": "ETH",
        "token_out": "WETH", "amount": "1"}),
    );
    assert!(wrap.message.contains("not a swap"), "{wrap}");
}

/// Execute a USDC → DAI swap's plan: what the wallet spent and received — checking that the WETH
/// in between never reaches the wallet and nothing stays in the router.
fn usdc_to_dai(e: &Env, params: &Value) -> (U256, U256, Vec<alloy::rpc::types::TransactionReceipt>) {
    let (usdc, dai, weth) = (e.token("USDC"), e.token("DAI"), e.token("WETH"));
    let plan = e.plan("uniswap_execute_swap", params);
    let (usdc_before, dai_before, weth_before) = (e.balance(usdc), e.balance(dai), e.balance(weth));
    let receipts = e.execute(&plan);
    assert_eq!(e.balance(weth), weth_before, "the WETH in between never reaches the wallet");
    for token in [usdc, dai, weth] {
        let left = e.read(token, balanceOfCall { account: e.d.uniswap_v4["universal_router"] });
        assert_eq!(left, U256::ZERO, "nothing stays in the router");
    }
    (usdc_before - e.balance(usdc), e.balance(dai) - dai_before, receipts)
}

#[test]
fn a_two_hop_route_through_weth_mixes_versions_and_delivers_its_quote() {
    let e = env();
    let weth = e.token("WETH");
    // No pool pairs USDC with DAI: the best way is V3's 0.05 % USDC/WETH, then V4's 0.05 % WETH/DAI.
    let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "DAI", "amount": "1000"});
    let quote = e.call("uniswap_get_quote", params.clone());
    let best = &quote["best"];
    assert_eq!(
        (best["route"]["version"].clone(), best["route"]["fee"].clone()),
        (json!("v3"), json!(500)),
        "{quote}"
    );
    assert_eq!(
        (best["then"]["route"]["version"].clone(), best["then"]["route"]["fee"].clone()),
        (json!("v4"), json!(500))
    );
    assert_eq!(addr(&best["then"]["via"]), weth);
    let candidates = quote["routes"].as_array().expect("routes");
    assert!(candidates.len() >= 3, "every second pool for the best first: {quote}");
    let quoted_out = u256(&best["amount_out_base"]);
    assert!(candidates.iter().all(|c| u256(&c["amount_out_base"]) <= quoted_out), "the best pays most");

    let (spent, got, receipts) = usdc_to_dai(&e, &params);
    assert_eq!(got, quoted_out, "exactly the two-hop quote");
    assert_eq!(spent, units(1000, 6));
    let verified = e.verify("uniswap_execute_swap", &params, &receipts);
    assert_eq!(verified["route"]["version"], "v3");
    assert_eq!(verified["then"]["route"]["version"], "v4");
    assert_eq!(verified["then"]["route"]["pool_id"], best["then"]["route"]["pool_id"]);
    assert_eq!(u256(&verified["amount_out_base"]), quoted_out);
}

#[test]
fn a_two_hop_exact_out_asks_each_pool_of_one_version_for_what_the_next_needs() {
    let e = env();
    let weth = e.token("WETH");
    let want = units(1000, 18);
    let mut paid = Vec::new();
    for version in ["v4", "v3", "v2"] {
        let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "DAI", "amount": "1000",
            "side": "exact_out", "version": version});
        let quote = e.call("uniswap_get_quote", params.clone());
        let best = &quote["best"];
        assert_eq!(
            (&best["route"]["version"], &best["then"]["route"]["version"]),
            (&json!(version), &json!(version))
        );
        assert_eq!(addr(&best["then"]["via"]), weth);
        let (quoted_in, quoted_out) = (u256(&best["amount_in_base"]), u256(&best["amount_out_base"]));
        // A V2 pair pays what its input is worth, a little over what was asked.
        match version {
            "v2" => assert!(quoted_out >= want && quoted_out < want + units(1, 15), "{quoted_out}"),
            _ => assert_eq!(quoted_out, want),
        }

        let (spent, got, receipts) = usdc_to_dai(&e, &params);
        assert_eq!(spent, quoted_in, "{version}: exactly the quoted input");
        assert_eq!(got, quoted_out, "{version}: exactly the quoted output");
        let verified = e.verify("uniswap_execute_swap", &params, &receipts);
        assert_eq!(verified["route"]["version"], version, "{verified}");
        assert_eq!(verified["then"]["route"], best["then"]["route"], "{verified}");
        assert_eq!(verified["then"]["amount_via_base"], best["then"]["amount_via_base"], "{verified}");
        assert_eq!(
            (u256(&verified["amount_in_base"]), u256(&verified["amount_out_base"])),
            (quoted_in, quoted_out)
        );
        paid.push(quoted_in);
    }

    // With no version named, every version's route is a candidate, and the cheapest leads.
    let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "DAI", "amount": "1000",
        "side": "exact_out"});
    let quote = e.call("uniswap_get_quote", params);
    let candidates = quote["routes"].as_array().expect("routes");
    for version in ["v4", "v3", "v2"] {
        assert!(candidates.iter().any(|c| c["then"]["route"]["version"] == version), "{version}: {quote}");
    }
    let best_in = u256(&quote["best"]["amount_in_base"]);
    assert!(candidates.iter().all(|c| u256(&c["amount_in_base"]) >= best_in), "the best costs least");
}

#[test]
fn a_native_eth_v4_pool_trades_ether_itself_without_wrapping() {
    let e = env();
    let (usdc, weth) = (e.token("USDC"), e.token("WETH"));
    let router = e.d.uniswap_v4["universal_router"];
    let native = e.d.uniswap_v4_pools.iter().find(|p| p.token0 == "ETH").expect("the native pool").id;
    // V4 at 0.05 %: only the ETH/USDC pool (there is no WETH/USDC V4 pool at that tier).
    let only = |p: Value| {
        let mut p = p;
        p["version"] = json!("v4");
        p["fee"] = json!(500);
        p
    };
    let router_eth = || {
        let b = e.rt.block_on(e.provider.get_balance(router).into_future());
        b.expect("balance")
    };

    // ETH → USDC exact in: one V4_SWAP, no WRAP_ETH, the ether settled from the call's value.
    let params = only(json!({"chain_id": CHAIN_ID, "token_in": "ETH", "token_out": "USDC", "amount": "1"}));
    let quote = e.call("uniswap_get_quote", params.clone());
    assert_eq!(quote["best"]["route"]["pool_id"], json!(native.to_string()), "{quote}");
    assert_eq!(quote["best"]["route"]["native"], true);
    let quoted_out = u256(&quote["best"]["amount_out_base"]);
    let plan = e.plan("uniswap_execute_swap", &params);
    assert_eq!(plan.calls.len(), 1);
    let execute = executeCall::abi_decode(&plan.calls[0].data).expect("execute");
    assert_eq!(execute.commands.to_vec(), [0x10], "V4_SWAP only: no wrap");
    let (eth_before, usdc_before, weth_before) = (e.eth(), e.balance(usdc), e.balance(weth));
    let receipts = e.execute(&plan);
    assert_eq!(e.balance(usdc) - usdc_before, quoted_out, "exactly the quote");
    assert_eq!(eth_before - e.eth() - gas(&receipts), units(1, 18), "exactly 1 ETH, gas aside");
    assert_eq!(e.balance(weth), weth_before, "no WETH involved");
    let verified = e.verify("uniswap_execute_swap", &params, &receipts);
    assert_eq!(u256(&verified["amount_out_base"]), quoted_out);
    let route = &verified["route"];
    assert_eq!((route["pool_id"].clone(), route["native"].clone()), (json!(native.to_string()), json!(true)));

    // USDC → ETH exact out: the pool pays ether straight to the wallet.
    let params = only(json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "ETH", "amount": "0.25",
        "side": "exact_out"}));
    let quote = e.call("uniswap_get_quote", params.clone());
    let quoted_in = u256(&quote["best"]["amount_in_base"]);
    let plan = e.plan("uniswap_execute_swap", &params);
    let (eth_before, usdc_before) = (e.eth(), e.balance(usdc));
    let receipts = e.execute(&plan);
    assert_eq!(e.eth() + gas(&receipts) - eth_before, units(25, 16), "exactly 0.25 ETH, gas aside");
    assert_eq!(usdc_before - e.balance(usdc), quoted_in, "exactly the quoted USDC");
    assert_eq!(u256(&e.verify("uniswap_execute_swap", &params, &receipts)["amount_in_base"]), quoted_in);

    // ETH → USDC exact out: the most it may pay goes with the call; what the pool did not take is
    // swept back.
    let params = only(json!({"chain_id": CHAIN_ID, "token_in": "ETH", "token_out": "USDC", "amount": "500",
        "side": "exact_out"}));
    let quote = e.call("uniswap_get_quote", params.clone());
    let quoted_in = u256(&quote["best"]["amount_in_base"]);
    let plan = e.plan("uniswap_execute_swap", &params);
    assert!(plan.calls[0].value > quoted_in, "sent with slippage room");
    let eth_before = e.eth();
    let receipts = e.execute(&plan);
    assert_eq!(eth_before - e.eth() - gas(&receipts), quoted_in, "the unused ETH came back");
    assert_eq!(router_eth(), U256::ZERO, "no ether stays in the router");
    assert_eq!(e.read(usdc, balanceOfCall { account: router }), U256::ZERO);
}

#[test]
fn v4_reads_name_native_ether_and_any_pool_key() {
    let e = env();
    let native = e.d.uniswap_v4_pools.iter().find(|p| p.token0 == "ETH").expect("the native pool").id;
    let info = e.call(
        "uniswap_get_pool_info",
        json!({"chain_id": CHAIN_ID, "token_a": "ETH", "token_b": "USDC", "version": "v4"}),
    );
    assert_eq!(info["pool_id"], json!(native.to_string()));
    assert_eq!(
        (info["token0"]["symbol"].clone(), addr(&info["token0"]["address"])),
        (json!("ETH"), Address::ZERO)
    );
    let state_view = e.d.uniswap_v4["state_view"];
    let slot0 = e.read(state_view, getSlot0Call { poolId: native });
    assert_eq!(u256(&info["sqrt_price_x96"]), U256::from(slot0.sqrtPriceX96));
    // `ETH` lists the WETH pools of every version and the pools of ether itself.
    let pools = e.call(
        "uniswap_get_pools_by_token_pair",
        json!({"chain_id": CHAIN_ID, "token_a": "USDC", "token_b": "ETH"}),
    );
    let ids: Vec<&Value> = pools.as_array().expect("list").iter().map(|p| &p["pool_id"]).collect();
    assert!(ids.contains(&&json!(native.to_string())), "{pools}");
    assert!(pools.as_array().expect("list").iter().any(|p| p["version"] == "v3"), "WETH's V3 pools too");

    // A key: the hooked pool by its hooks, with its permissions named.
    let hook = e.d.uniswap_v4["fee_taking_hook"];
    let hooked = e.call(
        "uniswap_get_pool_info",
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "version": "v4", "fee": 3000,
            "hooks": hook.to_string()}),
    );
    let id = e.d.uniswap_v4_pools.iter().find(|p| p.hooks == hook).expect("hooked").id;
    assert_eq!(hooked["pool_id"], json!(id.to_string()));
    let names: Vec<&str> =
        hooked["hook_permissions"].as_array().expect("names").iter().filter_map(Value::as_str).collect();
    assert!(names.contains(&"afterSwapReturnDelta"), "{names:?}");
    // A key no pool has (the spacing does not match the tier's pool), and one that cannot be.
    let mismatch = e.error(
        "uniswap_get_pool_info",
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "version": "v4", "fee": 3000,
            "tick_spacing": 10}),
    );
    assert_eq!(mismatch.code, ErrorCode::NotFound, "{mismatch}");
    assert!(mismatch.message.contains("tick spacing 10"), "{mismatch}");
    let no_fee = e.error(
        "uniswap_get_pool_info",
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "version": "v4", "tick_spacing": 60}),
    );
    assert_eq!(no_fee.code, ErrorCode::InvalidParams, "{no_fee}");
    let v3_key = e.error(
        "uniswap_get_pool_info",
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "tick_spacing": 60}),
    );
    assert_eq!(v3_key.code, ErrorCode::InvalidParams, "{v3_key}");
}
