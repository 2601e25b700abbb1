//! A position pushed out of its range by the market, moved to a new range around the price in
//! one transaction through the whole write path (scope, simulation, value guard, on-chain
//! bounds, permit, commit, verify) — V3 through the position manager's multicall, V4 through
//! one `modifyLiquidities` — and held to what the chain shows: the old NFT burned, the new one
//! the wallet's in the new range, one receipt for the move, the value kept at the pool's price.

use super::v4_liquidity::{Lp, getPositionLiquidityCall, int, lp_with, ownerOfCall};
use alloy::primitives::{Address, U256};
use bardo_devnet::CHAIN_ID;
use bardo_devnet::deploy::Deployments;
use bardo_test_support::addr;
use bardo_test_support::chain::Chain;
use serde_json::{Value, json};

/// The pool's state as `uniswap_get_pool_info` reads it: its tokens, tick and sqrt price.
fn pool(e: &Lp, params: Value) -> (Value, [Address; 2], i32) {
    let pool = e.call("uniswap_get_pool_info", params).expect("pool");
    let tokens = [addr(&pool["token0"]["address"]), addr(&pool["token1"]["address"])];
    let tick = pool["tick"].as_i64().expect("tick") as i32;
    (pool, tokens, tick)
}

/// Swap `amount` of `token_in` as the wallet straight on chain (a market move, not a write of
/// the agent's: the value guard would refuse a swap this large). A connection of its own: the
/// write path sends from the same account, and a provider's cached nonce would be stale.
fn push(e: &Lp, _: &Chain, params: Value) {
    let chain = Chain::connect(&e.node.url());
    let plan = e.host.plan("uniswap_execute_swap", &params.to_string()).result.expect("swap plan");
    for c in plan.calls {
        chain.try_send(e.d.deployer, c.to, c.data.to_vec(), c.value).expect("swap");
    }
}

alloy::sol! {
    function updateAnswer(int256 answer) external;
}

/// The market moved: WETH's trusted feed follows the pool's price now (the guards refuse a
/// deposit into a pool off the operator's prices, as they should).
fn feed_follows(e: &Lp, chain: &Chain, params: Value) {
    let (info, tokens, _) = pool(e, params);
    let key = if tokens[0] == e.d.tokens["WETH"].address {
        "price_token1_per_token0"
    } else {
        "price_token0_per_token1"
    };
    let price: f64 = info[key].as_str().expect("price").parse().expect("decimal");
    let answer = alloy::primitives::I256::try_from((price * 1e8) as i128).expect("answer");
    chain.send(e.d.accounts[1], e.d.feeds["WETH"], updateAnswerCall { answer });
}

/// A position's amounts worth in token1 at the sqrt price (Q64.96) `sqrt`, as f64 (enough for
/// a loss in basis points).
fn worth(sqrt: &Value, a0: i128, a1: i128) -> f64 {
    let s: f64 = sqrt.as_str().expect("sqrt price").parse().expect("decimal");
    let price = (s / 2f64.powi(96)).powi(2);
    a0 as f64 * price + a1 as f64
}

/// The V3 or V4 position `id`'s read.
fn position(e: &Lp, id: &str, version: &str) -> Value {
    e.call("uniswap_get_position", json!({"chain_id": CHAIN_ID, "position_id": id, "version": version}))
        .expect("position")
}

#[test]
fn a_v3_position_pushed_out_of_range_is_moved_around_the_price_in_one_transaction() {
    let e = lp_with(Deployments::write_targets);
    let chain = Chain::connect(&e.node.url());
    let npm = e.d.uniswap_v3["position_manager"];
    let info = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000});
    let (_, tokens, tick) = pool(&e, info.clone());
    let base = tick.div_euclid(60) * 60;
    let mint = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000,
        "amount_a": "1", "amount_b": "3000", "tick_lower": base - 120, "tick_upper": base + 180});
    let (_, minted) = e.write("add_liquidity", &mint, tokens);
    let id = minted.actual["position_id"].as_str().expect("id").to_owned();

    // The market sells WETH until the pool leaves the range.
    let weth_is_0 = tokens[0] == e.d.tokens["WETH"].address;
    // In small steps: the Aave oracle is a trusted source too, and a feed more than 5 % from it
    // prices nothing.
    for _ in 0..40 {
        push(
            &e,
            &chain,
            json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": "1",
            "version": "v3", "fee": 3000, "slippage_bps": 5000}),
        );
        if position(&e, &id, "v3")["in_range"] == false {
            break;
        }
    }
    feed_follows(&e, &chain, info.clone());
    let before = position(&e, &id, "v3");
    assert_eq!(before["in_range"], false, "pushed out of range: {before}");
    let held = [int(&before["amount0_base"]), int(&before["amount1_base"])];
    let weth_side = if weth_is_0 { 0 } else { 1 };
    assert!(held[weth_side] > 0 && held[1 - weth_side] == 0, "only WETH left in it: {held:?}");

    // Moved around the price in one transaction.
    let (moved, done) = e.write(
        "rebalance_liquidity",
        &json!({"chain_id": CHAIN_ID, "position_id": id, "width_ticks": 600}),
        tokens,
    );
    let (info_now, _, tick_now) = pool(&e, info);
    let new = done.actual["position_id"].as_str().expect("new id").to_owned();
    assert_ne!(new, id);
    assert_eq!(done.actual["transactions"], 1, "the move is one transaction: {}", done.actual);
    assert!(done.tx_hashes.len() <= 3, "at most two exact approvals and the move: {:?}", done.tx_hashes);
    let old: U256 = id.parse().expect("id");
    assert!(e.read(npm, ownerOfCall { id: old }).is_err(), "the old position is burned");
    let after = position(&e, &new, "v3");
    assert_eq!(addr(&after["owner"]), e.d.deployer);
    let (lower, upper) =
        (after["tick_lower"].as_i64().expect("lower"), after["tick_upper"].as_i64().expect("upper"));
    assert_eq!(
        (lower, upper),
        (done.expected["tick_lower"].as_i64().expect("l"), done.expected["tick_upper"].as_i64().expect("u"))
    );
    assert!(
        lower <= i64::from(tick_now) && i64::from(tick_now) < upper,
        "in range: {lower}..{upper} at {tick_now}"
    );
    assert_eq!(after["in_range"], true);
    // What the wallet saw is what the plan said: it paid USDC for the new ratio, got WETH back.
    let net = |k: &str, i: usize| {
        let w = &done.actual[k];
        int(&w[if i == 0 { "amount0_base" } else { "amount1_base" }])
    };
    for (i, m) in moved.iter().enumerate() {
        assert_eq!(*m, net("withdrawn", i) - net("deposited", i), "token {i}: {}", done.actual);
    }
    assert!(moved[1 - weth_side] < 0 && moved[weth_side] > 0, "topped up with USDC: {moved:?}");
    // The value kept at the pool's price: what came out is worth what went in plus what the
    // wallet kept, within a basis point.
    let sqrt = &info_now["sqrt_price_x96"];
    let out = worth(sqrt, net("withdrawn", 0), net("withdrawn", 1));
    let into = worth(sqrt, int(&after["amount0_base"]), int(&after["amount1_base"]));
    assert!((into - out).abs() / out < 1e-4, "the new position is worth what the old held: {into} vs {out}");

    // The wallet's positions: the new one listed, in range, valued at the trusted feeds; the
    // burned one gone.
    let listed =
        e.call("uniswap_get_positions", json!({"chain_id": CHAIN_ID, "version": "v3"})).expect("positions");
    let all = listed["positions"].as_array().expect("positions");
    assert!(all.iter().all(|p| p["position_id"] != json!(id)), "the burned position is not listed");
    let mine = all.iter().find(|p| p["position_id"] == json!(new)).expect("the new position is listed");
    assert_eq!(mine["in_range"], true);
    assert_eq!(mine["ticks_out_of_range"], 0);
    assert_eq!(mine["amount0_base"], after["amount0_base"]);
    let weth_usd: f64 = {
        let (info, ..) =
            pool(&e, json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000}));
        let key = if weth_is_0 { "price_token1_per_token0" } else { "price_token0_per_token1" };
        info[key].as_str().expect("price").parse().expect("decimal")
    };
    let human = |k: &str| -> f64 { mine[k].as_str().expect(k).parse().expect("decimal") };
    let (weth_amount, usdc_amount) =
        if weth_is_0 { (human("amount0"), human("amount1")) } else { (human("amount1"), human("amount0")) };
    let value = mine["value_usd"].as_f64().expect("valued");
    let expected = weth_amount * weth_usd + usdc_amount;
    assert!(
        (value - expected).abs() / expected < 1e-3,
        "valued at the feed (which follows the pool): {value} vs {expected}"
    );
    assert_eq!(listed["complete"], true, "{listed}");
}

#[test]
fn a_v4_position_moves_in_one_modify_liquidities() {
    let e = lp_with(Deployments::write_targets);
    let chain = Chain::connect(&e.node.url());
    let posm = e.d.uniswap_v4["position_manager"];
    let info =
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "DAI", "version": "v4", "fee": 500});
    let (_, tokens, tick) = pool(&e, info.clone());
    let base = tick.div_euclid(10) * 10;
    let mint = json!({"chain_id": CHAIN_ID, "version": "v4", "token_a": "WETH", "token_b": "DAI", "fee": 500,
        "amount_a": "1", "amount_b": "3000", "tick_lower": base - 50, "tick_upper": base + 60});
    let (_, minted) = e.write("add_liquidity", &mint, tokens);
    let id = minted.actual["position_id"].as_str().expect("id").to_owned();
    for _ in 0..6 {
        push(
            &e,
            &chain,
            json!({"chain_id": CHAIN_ID, "token_in": "DAI", "token_out": "WETH", "amount": "20000",
            "version": "v4", "fee": 500, "slippage_bps": 5000}),
        );
        if position(&e, &id, "v4")["in_range"] == false {
            break;
        }
    }
    assert_eq!(position(&e, &id, "v4")["in_range"], false, "pushed out of range");
    feed_follows(&e, &chain, info.clone());

    let (moved, done) = e.write(
        "rebalance_liquidity",
        &json!({"chain_id": CHAIN_ID, "position_id": id, "version": "v4", "width_ticks": 400}),
        tokens,
    );
    assert_eq!(done.actual["transactions"], 1, "{}", done.actual);
    let new: U256 = done.actual["position_id"].as_str().expect("new").parse().expect("id");
    assert!(e.read(posm, ownerOfCall { id: id.parse().expect("id") }).is_err(), "burned");
    assert_eq!(e.read(posm, ownerOfCall { id: new }).expect("owner"), e.d.deployer);
    let liquidity = e.read(posm, getPositionLiquidityCall { tokenId: new }).expect("liquidity");
    assert_eq!(liquidity.to_string(), done.actual["liquidity"].as_str().expect("liquidity"));
    let after = position(&e, &new.to_string(), "v4");
    assert_eq!(after["in_range"], true, "{after}");
    // The wallet's net is what the plan declared: one token paid in, the other back.
    let declared: Vec<i128> = done.expected["balance_changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| int(&c["delta"]))
        .collect();
    assert_eq!(moved.to_vec(), declared, "{}", done.expected);
    assert!(moved[0].signum() != moved[1].signum(), "one paid, one returned: {moved:?}");
}

mod npm {
    alloy::sol! {
        struct DecreaseLiquidityParams { uint256 tokenId; uint128 liquidity; uint256 amount0Min; uint256 amount1Min;
            uint256 deadline; }
        function decreaseLiquidity(DecreaseLiquidityParams params) external payable returns (uint256, uint256);
        struct CollectParams { uint256 tokenId; address recipient; uint128 amount0Max; uint128 amount1Max; }
        function collect(CollectParams params) external payable returns (uint256, uint256);
        function burn(uint256 tokenId) external payable;
        struct MintParams { address token0; address token1; uint24 fee; int24 tickLower; int24 tickUpper;
            uint256 amount0Desired; uint256 amount1Desired; uint256 amount0Min; uint256 amount1Min; address recipient;
            uint256 deadline; }
        function mint(MintParams params) external payable returns (uint256, uint128, uint256, uint256);
        function multicall(bytes[] data) external payable returns (bytes[] results);
    }
}

/// The attacker's rebalances of the wallet's position, built call by call (`attack_raw`): one
/// position-manager multicall of decrease, collect, burn and mint with no minimums — the new NFT
/// minted to a stranger, or the collect paid to one (each one call of four in the batch) — and
/// the whole move, every recipient the wallet and everything declared, after the plan's own swap
/// pushed the pool. Each refused at preview; nothing moves.
#[test]
fn a_rebalance_that_pays_a_stranger_or_moves_at_a_pushed_price_is_refused() {
    use super::attacks::{ExactInputSingleParams, STRANGER, approveCall, env, exactInputSingleCall, refused};
    use alloy::primitives::aliases::{I24, U24, U160};
    use alloy::sol_types::SolCall;
    let e = env();
    let add = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000,
        "amount_a": "0.5", "amount_b": "1000", "full_range": true});
    let permit = e.scoped.preview("add-liquidity", &add).expect("preview add");
    let added = e.scoped.commit(&permit.permit_id).expect("commit add");
    let id: U256 = added.actual["position_id"].as_str().expect("id").parse().expect("id");
    let liquidity: u128 = added.actual["liquidity_added"].as_str().expect("liquidity").parse().expect("u128");
    let before = e.state(Some(id));
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let (t0, t1) = if weth < usdc { (weth, usdc) } else { (usdc, weth) };
    let desired = |t: Address| {
        if t == weth { U256::from(400_000_000_000_000_000u64) } else { U256::from(800_000_000u64) }
    };
    let (npm_address, router) = (e.d.uniswap_v3["position_manager"], e.d.uniswap_v3["swap_router"]);
    let batch = |collect_to: Address, mint_to: Address| {
        let data: Vec<alloy::primitives::Bytes> = vec![
            npm::decreaseLiquidityCall {
                params: npm::DecreaseLiquidityParams {
                    tokenId: id,
                    liquidity,
                    amount0Min: U256::ZERO,
                    amount1Min: U256::ZERO,
                    deadline: U256::MAX,
                },
            }
            .abi_encode()
            .into(),
            npm::collectCall {
                params: npm::CollectParams {
                    tokenId: id,
                    recipient: collect_to,
                    amount0Max: u128::MAX,
                    amount1Max: u128::MAX,
                },
            }
            .abi_encode()
            .into(),
            npm::burnCall { tokenId: id }.abi_encode().into(),
            npm::mintCall {
                params: npm::MintParams {
                    token0: t0,
                    token1: t1,
                    fee: U24::from(3000),
                    tickLower: I24::try_from(-887_220).expect("tick"),
                    tickUpper: I24::try_from(887_220).expect("tick"),
                    amount0Desired: desired(t0),
                    amount1Desired: desired(t1),
                    amount0Min: U256::ZERO,
                    amount1Min: U256::ZERO,
                    recipient: mint_to,
                    deadline: U256::MAX,
                },
            }
            .abi_encode()
            .into(),
        ];
        (npm_address, npm::multicallCall { data }.abi_encode())
    };
    let approvals =
        [t0, t1].map(|t| (t, approveCall { spender: npm_address, amount: desired(t) }.abi_encode()));
    let raw = |calls: Vec<(Address, Vec<u8>)>| e.raw(&calls, None);
    let wallet = e.wallet;
    let mut calls = approvals.to_vec();
    calls.push(batch(wallet, STRANGER));
    refused(&e.scoped, "attack-raw", &raw(calls), "allowlist-guard", "multicall call 4 of 4");
    let mut calls = approvals.to_vec();
    calls.push(batch(STRANGER, wallet));
    refused(&e.scoped, "attack-raw", &raw(calls), "allowlist-guard", "multicall call 2 of 4");

    // Every recipient the wallet and everything declared, but the plan first pushes the pool
    // with its own swap: the move would mint at a price the plan made.
    let push = U256::from(200_000_000_000u64);
    let swap = exactInputSingleCall {
        params: ExactInputSingleParams {
            tokenIn: usdc,
            tokenOut: weth,
            fee: U24::from(3000),
            recipient: wallet,
            deadline: U256::MAX,
            amountIn: push,
            amountOutMinimum: U256::ZERO,
            sqrtPriceLimitX96: U160::ZERO,
        },
    };
    let mut calls =
        vec![(usdc, approveCall { spender: router, amount: push }.abi_encode()), (router, swap.abi_encode())];
    calls.extend(approvals);
    calls.push(batch(wallet, wallet));
    let mut pushed = raw(calls);
    let lots = "1000000000000000000000";
    pushed["outcome"] = json!(json!({
        "balance_changes": [
            {"token": usdc.to_string(), "delta": "-300000000000", "tolerance": "300000000000"},
            {"token": weth.to_string(), "delta": format!("-{}", desired(weth)), "tolerance": lots}],
        "authorities": [
            {"token": usdc.to_string(), "spender": npm_address.to_string(), "amount": desired(usdc).to_string()},
            {"token": weth.to_string(), "spender": npm_address.to_string(), "amount": desired(weth).to_string()}],
        "nfts": [{"collection": npm_address.to_string(), "id": id.to_string(), "gained": false},
            {"collection": npm_address.to_string(), "gained": true}]})
    .to_string());
    refused(&e.scoped, "attack-raw", &pushed, "price-guard", "a price its own swaps pushed it to");
    assert_eq!(e.state(Some(id)), before, "nothing moved");
}

/// Fees compounded back into a position and the position closed, V3 and V4, each one
/// transaction of the position manager (approvals aside): the liquidity grows by what the plan
/// said, the wallet keeps only what the range could not use, and closing pays everything out and
/// burns the NFT.
#[test]
fn fees_compound_into_the_position_and_a_closed_position_is_gone() {
    let e = lp_with(Deployments::write_targets);
    let chain = Chain::connect(&e.node.url());
    for (version, pool_params, swaps) in [
        (
            "v3",
            json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000}),
            [("WETH", "USDC", "2"), ("USDC", "WETH", "4000")],
        ),
        (
            "v4",
            json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "DAI", "fee": 500, "version": "v4"}),
            [("WETH", "DAI", "2"), ("DAI", "WETH", "4000")],
        ),
    ] {
        let (_, tokens, tick) = pool(&e, pool_params.clone());
        let spacing = if version == "v3" { 60 } else { 10 };
        let base = tick.div_euclid(spacing) * spacing;
        let mut mint = pool_params.clone();
        mint["amount_a"] = json!("1");
        mint["amount_b"] = json!("3000");
        mint["tick_lower"] = json!(base - 20 * spacing);
        mint["tick_upper"] = json!(base + 20 * spacing);
        mint["token_b"] = pool_params["token_b"].clone();
        let (_, minted) = e.write("add_liquidity", &mint, tokens);
        let id = minted.actual["position_id"].as_str().expect("id").to_owned();
        let fee = pool_params["fee"].clone();
        for (tin, tout, amount) in swaps {
            push(
                &e,
                &chain,
                json!({"chain_id": CHAIN_ID, "token_in": tin, "token_out": tout, "amount": amount,
                "version": version, "fee": fee, "slippage_bps": 5000}),
            );
        }
        let before = position(&e, &id, version);
        assert!(int(&before["fees0_base"]) > 0 && int(&before["fees1_base"]) > 0, "fees earned: {before}");

        // Its record so far: what went in, the fees it earned, its loss against holding. Ten
        // seconds on first: its pace (`fee_apr`) is over the time since it opened, and on a fast
        // machine the mint, the swaps and this read all fall in one second (it failed so once).
        chain.travel_to(chain.now() + 10);
        let performance = |id: &str| {
            e.call("uniswap_get_position_performance", json!({"chain_id": CHAIN_ID, "position_id": id}))
                .expect("performance")
        };
        if version == "v3" {
            let record = performance(&id);
            assert_eq!(record["deposited"]["amount0"], minted.actual["amount0"], "{record}");
            assert_eq!(record["deposited"]["amount1"], minted.actual["amount1"], "{record}");
            assert_eq!(record["fees_uncollected"]["amount0"], before["fees0"]);
            assert_eq!(record["fees_collected"]["amount1"], "0");
            let (il, fees) = (
                record["impermanent_loss"].as_f64().expect("il"),
                record["fees_value"].as_f64().expect("fees"),
            );
            assert!(il <= 1e-9 && il > -0.01, "a round trip loses little against holding: {record}");
            assert!(fees > 0.0 && record["fee_apr"].as_f64().expect("apr") > 0.0, "{record}");
            assert!(
                (record["net_return"].as_f64().expect("net")
                    - (il + fees / record["value_held"].as_f64().expect("held")))
                .abs()
                    < 1e-9
            );
        }

        // Compound: one call to the position manager; the liquidity grows by what it said.
        let params = json!({"chain_id": CHAIN_ID, "position_id": id, "version": version});
        let (moved, done) = e.write("compound_fees", &params, tokens);
        if version == "v3" {
            let record = performance(&id);
            assert_eq!(record["fees_collected"]["amount0"], done.actual["fees"]["amount0"], "{record}");
            assert_eq!(record["fees_uncollected"]["amount0"], "0");
        }
        assert!(
            done.tx_hashes.len() <= 3,
            "{version}: approvals at most, and one compound: {:?}",
            done.tx_hashes
        );
        let after = position(&e, &id, version);
        let grown = int(&after["liquidity"]) - int(&before["liquidity"]);
        assert_eq!(grown, int(&done.actual["liquidity_added"]), "{version}: {}", done.actual);
        assert!(grown > 0);
        assert!(
            int(&after["fees0_base"]) == 0 && int(&after["fees1_base"]) == 0,
            "{version}: fees used: {after}"
        );
        for (i, change) in done.expected["balance_changes"].as_array().expect("changes").iter().enumerate() {
            assert_eq!(moved[i], int(&change["delta"]), "{version}: the wallet kept what the plan said");
            assert!(moved[i] >= 0, "{version}: the wallet pays nothing to compound");
        }

        // Close: everything to the wallet in one transaction, the NFT burned.
        let held = [int(&after["amount0_base"]), int(&after["amount1_base"])];
        let (got, done) = e.write("close_liquidity", &params, tokens);
        assert_eq!(done.tx_hashes.len(), 1, "{version}: one transaction");
        let posm = if version == "v3" {
            e.d.uniswap_v3["position_manager"]
        } else {
            e.d.uniswap_v4["position_manager"]
        };
        assert!(e.read(posm, ownerOfCall { id: id.parse().expect("id") }).is_err(), "{version}: burned");
        for i in 0..2 {
            assert!((got[i] - held[i]).abs() <= 2, "{version}: token {i}: got {} of {}", got[i], held[i]);
        }
        assert_eq!(
            got,
            [int(&done.actual["collected"]["amount0_base"]), int(&done.actual["collected"]["amount1_base"])],
            "{version}: {}",
            done.actual
        );
    }
}

/// Every position's fees in one transaction: three V3 positions over two pools (one call of the
/// position manager's multicall), then two V4 positions (one modifyLiquidities); the wallet gets
/// exactly the fees the reads showed, and the positions keep their liquidity.
#[test]
fn the_fees_of_every_position_are_collected_in_one_transaction() {
    let e = lp_with(Deployments::write_targets);
    let chain = Chain::connect(&e.node.url());
    for (version, fees, spacing, pair) in [
        ("v3", vec![3000, 3000, 500], [60, 60, 10], ("USDC", "4000")),
        ("v4", vec![500, 500], [10, 10, 10], ("DAI", "4000")),
    ] {
        let (other, back) = pair;
        let mut ids = Vec::new();
        let mut tokens = [Address::ZERO; 2];
        for (i, fee) in fees.iter().enumerate() {
            let mut params = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": other, "fee": fee});
            if version == "v4" {
                params["version"] = json!("v4");
            }
            let (_, t, tick) = pool(&e, params.clone());
            tokens = t;
            let base = tick.div_euclid(spacing[i]) * spacing[i];
            params["amount_a"] = json!("0.5");
            params["amount_b"] = json!("1500");
            params["tick_lower"] = json!(base - 30 * spacing[i] - i as i32 * spacing[i]);
            params["tick_upper"] = json!(base + 30 * spacing[i]);
            let (_, minted) = e.write("add_liquidity", &params, tokens);
            ids.push(minted.actual["position_id"].as_str().expect("id").to_owned());
        }
        let mut distinct = fees.clone();
        distinct.dedup();
        for fee in distinct {
            for (tin, tout, amount) in [("WETH", other, "2"), (other, "WETH", back)] {
                push(
                    &e,
                    &chain,
                    json!({"chain_id": CHAIN_ID, "token_in": tin, "token_out": tout, "amount": amount,
                    "version": version, "fee": fee, "slippage_bps": 5000}),
                );
            }
        }
        let before: Vec<Value> = ids.iter().map(|id| position(&e, id, version)).collect();
        assert!(
            before.iter().all(|p| int(&p["fees0_base"]) > 0 && int(&p["fees1_base"]) > 0),
            "{version}: fees earned"
        );
        // The wallet holds the devnet's seeded positions too: every one of them is collected.
        let listed = e
            .call("uniswap_get_positions", json!({"chain_id": CHAIN_ID, "version": version, "limit": 25}))
            .expect("positions");
        let all = listed["positions"].as_array().expect("positions");
        assert!(ids.iter().all(|id| all.iter().any(|p| p["position_id"] == json!(id))), "{version}: listed");
        let of = |k: &str, token: Address| {
            all.iter()
                .map(|p| {
                    let t0 = addr(&p["token0"]["address"]);
                    let t1 = addr(&p["token1"]["address"]);
                    if t0 == token {
                        int(&p[&format!("fees0{k}")])
                    } else if t1 == token {
                        int(&p[&format!("fees1{k}")])
                    } else {
                        0
                    }
                })
                .sum::<i128>()
        };
        let (owed0, owed1) = (of("_base", tokens[0]), of("_base", tokens[1]));

        let (got, done) =
            e.write("collect_all_fees", &json!({"chain_id": CHAIN_ID, "version": version}), tokens);
        assert_eq!(done.tx_hashes.len(), 1, "{version}: one transaction");
        assert_eq!(got, [owed0, owed1], "{version}: every fee the reads showed, and only fees");
        for (id, was) in ids.iter().zip(&before) {
            let now = position(&e, id, version);
            assert_eq!(now["liquidity"], was["liquidity"], "{version}: the liquidity stays");
            assert_eq!((now["fees0_base"].clone(), now["fees1_base"].clone()), (json!("0"), json!("0")));
        }
    }
}

mod v4_move {
    alloy::sol! {
        function modifyLiquidities(bytes unlockData, uint256 deadline) external payable;
    }
}

/// A V4 move (burn and mint in one unlock) pays the mint from the burn's credits, so the wallet
/// sees only what is left: its burn must still carry a minimum near the position math, or a
/// pool moved first takes the difference. The honest plan's own call passes; the same call with
/// the burn's minimums lowered to what the wallet gets back (which a check of the wallet's
/// receipts alone accepts), everything else and its declaration unchanged, is refused.
#[test]
fn a_v4_move_whose_burn_minimum_is_only_the_rest_is_refused() {
    use super::attacks::{env, refused};
    use alloy::sol_types::{SolCall, SolValue};
    let e = env();
    let add = json!({"chain_id": CHAIN_ID, "version": "v4", "token_a": "WETH", "token_b": "DAI", "fee": 500,
        "amount_a": "1", "amount_b": "3000", "full_range": true});
    let permit = e.scoped.preview("add-liquidity", &add).expect("preview add");
    let added = e.scoped.commit(&permit.permit_id).expect("commit add");
    let id = added.actual["position_id"].as_str().expect("id").to_owned();
    let rebalance = json!({"chain_id": CHAIN_ID, "position_id": id, "version": "v4", "width_ticks": 2000, "top_up": false});
    let plan = e.host.plan("uniswap_rebalance_position", &rebalance.to_string()).result.expect("honest plan");
    assert_eq!(plan.calls.len(), 1, "no top-up: one call");
    let call = &plan.calls[0];
    let honest = v4_move::modifyLiquiditiesCall::abi_decode(&call.data).expect("modifyLiquidities");
    let (actions, mut params) =
        <(alloy::primitives::Bytes, Vec<alloy::primitives::Bytes>)>::abi_decode_params(&honest.unlockData)
            .expect("unlock data");
    assert_eq!(actions[0], 0x03, "BURN_POSITION first");
    let (burned, _, _, hook) =
        <(U256, u128, u128, alloy::primitives::Bytes)>::abi_decode_params(&params[0]).expect("burn params");
    let back: Vec<u128> = plan.expected_outcome["balance_changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| c["delta"].as_str().expect("delta").parse().expect("what comes back"))
        .collect();
    params[0] = (burned, back[0], back[1], hook).abi_encode_params().into();
    let unlock = (actions, params).abi_encode_params();
    let stripped = v4_move::modifyLiquiditiesCall { unlockData: unlock.into(), deadline: honest.deadline };
    let raw = |data: &[u8]| e.raw(&[(call.to, data.to_vec())], Some(&plan.expected_outcome));
    e.scoped.preview("attack-raw", &raw(&call.data)).expect("the honest call, sent as it is, passes");
    refused(&e.scoped, "attack-raw", &raw(&stripped.abi_encode()), "on-chain-bounds", "of principal");
}
