//! The streaming plugin and the SubscriptionRegistry on the devnet: swaps, mints and burns
//! produce exactly the expected events in chain order; a node restart mid-stream loses and
//! duplicates nothing; a position pushed out of range and back alerts exactly twice;
//! unsubscribe, session end and an emergency halt stop every task.

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, I256, U256};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::{SolCall, SolEvent};
use bardo_core::ErrorCode;
use bardo_core::fabric::{GolemEvent, StreamData};
use bardo_devnet::{Anvil, CHAIN_ID, DEV_KEY};
use bardo_test_artifacts::{STREAMING, UNISWAP};
use bardo_test_support::streams::{Env, data, env_on, env_with};
use bardo_test_support::{root, snapshot};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

sol! {
    event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1,
        uint160 sqrtPriceX96, uint128 liquidity, int24 tick);
    event Mint(address sender, address indexed owner, int24 indexed tickLower, int24 indexed tickUpper,
        uint128 amount, uint256 amount0, uint256 amount1);
    event Burn(address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount,
        uint256 amount0, uint256 amount1);
    function slot0() external view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex,
        uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked);
    function transfer(address to, uint256 amount) external returns (bool);
    function balanceOf(address account) external view returns (uint256);
}

fn env() -> Env {
    env_with(&[UNISWAP, STREAMING], DEV_KEY)
}

/// `"-1.5"` in token units as signed base units.
fn signed_base(v: &Value, decimals: u8) -> I256 {
    let text = v.as_str().unwrap_or_else(|| panic!("{v} is not a string"));
    let (neg, abs) = text.strip_prefix('-').map_or((false, text), |t| (true, t));
    let base: U256 = alloy::primitives::utils::parse_units(abs, decimals).expect("units").into();
    let base = I256::from_raw(base);
    if neg { -base } else { base }
}

#[test]
fn pool_events_trades_and_prices_arrive_exactly_in_chain_order() {
    let mut e = env();
    let pool = e.pool();
    let dev = e.d.deployer.to_checksum(None);
    let pool_sub =
        e.subscribe("stream_pool_events", json!({"chain_id": CHAIN_ID, "pool": pool.to_checksum(None)}));
    e.subscribe("stream_trades", json!({"chain_ids": [CHAIN_ID], "wallet": dev}));
    e.subscribe("stream_price_feed", json!({"chain_id": CHAIN_ID, "base": "WETH", "quote": "USDC"}));

    // Two swaps, a mint and a burn.
    let mut receipts = vec![e.swap("WETH", "USDC", "1"), e.swap("USDC", "WETH", "500")];
    let tick = e.tick(pool);
    let lower = tick.div_euclid(60) * 60 - 600;
    let add = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000, "amount_a": "1",
        "amount_b": "2000", "tick_lower": lower, "tick_upper": lower + 1200});
    let minted = e.execute(&e.plan("uniswap_add_liquidity", add.clone()), e.d.deployer);
    let verified =
        e.host.verify("uniswap_add_liquidity", &add.to_string(), CHAIN_ID, &minted).result.expect("verify");
    receipts.extend(minted);
    let remove = json!({"chain_id": CHAIN_ID, "position_id": verified["position_id"]});
    receipts.extend(e.execute(&e.plan("uniswap_remove_liquidity", remove), e.d.deployer));
    // Two swaps in the deepest WETH/USDC pool (0.05 %), which the price feed follows.
    e.swap_in("WETH", "USDC", "2", 500);
    e.swap_in("USDC", "WETH", "1000", 500);

    // What the chain says happened in the pool, in order.
    let decimals = |t: &str| if t.eq_ignore_ascii_case("WETH") { 18 } else { 6 };
    let weth_is_0 = e.d.tokens["WETH"].address < e.d.tokens["USDC"].address;
    let (d0, d1) =
        if weth_is_0 { (decimals("WETH"), decimals("USDC")) } else { (decimals("USDC"), decimals("WETH")) };
    let mut expected = Vec::new();
    for r in &receipts {
        for log in r.inner.logs().iter().filter(|l| l.address() == pool) {
            let (kind, a0, a1) = if let Ok(s) = Swap::decode_log(&log.inner) {
                ("swap", s.amount0, s.amount1)
            } else if let Ok(m) = Mint::decode_log(&log.inner) {
                ("mint", I256::from_raw(m.amount0), I256::from_raw(m.amount1))
            } else if let Ok(b) = Burn::decode_log(&log.inner) {
                ("burn", I256::from_raw(b.amount0), I256::from_raw(b.amount1))
            } else {
                continue;
            };
            expected.push((
                kind,
                log.transaction_hash.expect("tx").to_string(),
                log.log_index.expect("index"),
                a0,
                a1,
            ));
        }
    }
    assert_eq!(expected.iter().map(|x| x.0).collect::<Vec<_>>(), ["swap", "swap", "mint", "burn"]);
    let got = e.wait("PoolEventReceived", expected.len(), Duration::from_secs(10));
    for ((_, d), (kind, tx, index, a0, a1)) in got.iter().zip(&expected) {
        assert_eq!(d.tool, "stream_pool_events");
        assert_eq!(d.subscription_id, pool_sub);
        assert_eq!(d.pane, "pools");
        assert_eq!(
            (d.data["type"].as_str(), d.data["tx_hash"].as_str(), d.data["log_index"].as_u64()),
            (Some(*kind), Some(tx.as_str()), Some(*index))
        );
        assert_eq!(
            (signed_base(&d.data["amount0"], d0), signed_base(&d.data["amount1"], d1)),
            (*a0, *a1),
            "{kind} amounts"
        );
        // Readable on its own: the pool's tokens, fee tier and version ride with every event.
        let (t0, t1) = if weth_is_0 { ("WETH", "USDC") } else { ("USDC", "WETH") };
        assert_eq!(
            (&d.data["token0"]["symbol"], &d.data["token1"]["symbol"], &d.data["fee"], &d.data["version"]),
            (&json!(t0), &json!(t1), &json!(3000), &json!("v3"))
        );
        assert_eq!(d.data["token0"]["decimals"], json!(d0));
    }
    assert!(got.windows(2).all(|w| w[0].0 < w[1].0), "in sequence order");

    // The wallet's four swaps, with what it sold and bought.
    let trades = e.wait("SwapExecuted", 4, Duration::from_secs(5));
    assert_eq!(trades[0].1.data["sold"]["symbol"], "WETH");
    assert_eq!(trades[0].1.data["sold"]["amount"], "1");
    assert_eq!(trades[1].1.data["bought"]["symbol"], "WETH");
    assert_eq!(trades[1].1.data["sold"]["amount"], "500");
    assert_eq!(trades[0].1.data["chain_id"], CHAIN_ID);
    assert_eq!(trades[2].1.data["sold"]["amount"], "2");
    // One price update per swap in the followed pool.
    let prices = e.wait("PriceUpdate", 2, Duration::from_secs(5));
    assert!(prices[1].1.data["change_bps"].as_i64().is_some());
    for (_, p) in &prices {
        let big = p.data["change_bps"].as_i64().is_some_and(|c| c.abs() > 500);
        assert_eq!(p.sprite_trigger == bardo_core::tool::SpriteTrigger::Executing, big);
    }
    // Nothing more: no duplicates.
    let extra: Vec<_> =
        e.drain(Duration::from_millis(400)).into_iter().filter(|x| data(&x.event).is_some()).collect();
    assert!(extra.is_empty(), "unexpected events {extra:?}");
    let info = e.registry.list().into_iter().find(|i| i.subscription_id == pool_sub).expect("listed");
    assert_eq!((info.event_count, info.event_variant), (4, Some("PoolEventReceived")));

    // Unsubscribed: further swaps produce nothing for it.
    assert!(e.registry.unsubscribe(&pool_sub));
    e.swap("WETH", "USDC", "1");
    let after = e.drain(Duration::from_millis(500));
    assert!(!after.iter().any(|x| x.event.variant() == "PoolEventReceived"), "{after:?}");
    assert!(after.iter().any(|x| x.event.variant() == "SwapExecuted"), "the other subscriptions go on");
}

#[test]
fn a_node_restart_mid_stream_loses_and_duplicates_nothing() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port();
    let s = snapshot();
    let binary = Anvil::binary(&root());
    let node = s.spawn_on(crate::host_runtime(), &binary, port).expect("anvil");
    let mut e = env_on(node, s.deployments.clone(), &[UNISWAP, STREAMING], DEV_KEY);
    let pool = e.pool();
    e.subscribe(
        "stream_pool_events",
        json!({"chain_id": CHAIN_ID, "pool": pool.to_checksum(None), "events": ["swap"]}),
    );
    let first = e.swap("WETH", "USDC", "1");
    e.wait("PoolEventReceived", 1, Duration::from_secs(5));

    // A swap, then the node goes down at once (its event may not have been delivered) and comes
    // back from the same state.
    let second = e.swap("WETH", "USDC", "1");
    let state = tempfile::NamedTempFile::new().expect("temp");
    bardo_devnet::snapshot::save_state(crate::host_runtime(), &e.url(), state.path()).expect("dump");
    drop(e.node.take());
    std::thread::sleep(Duration::from_millis(300));
    let state_arg = state.path().to_string_lossy().into_owned();
    e.node = Some(Anvil::spawn_on(&binary, port, &["--load-state", &state_arg]).expect("restart"));
    // The old node's keep-alive connections died with it.
    e.provider = ProviderBuilder::new().connect_http(e.url().parse().expect("url")).erased();
    let head = e.rt.block_on(e.provider.get_block_number()).expect("head");
    assert!(head >= second.block_number.expect("block"), "the restarted node continues the chain");
    let third = e.swap("WETH", "USDC", "1");

    let got = e.wait("PoolEventReceived", 2, Duration::from_secs(15));
    let mut hashes: Vec<String> =
        got.iter().map(|(_, d)| d.data["tx_hash"].as_str().expect("tx").to_owned()).collect();
    let rest = e.drain(Duration::from_millis(800));
    let lost = rest.iter().any(
        |x| matches!(&*x.event, GolemEvent::StreamError { message, .. } if message.contains("reconnecting")),
    );
    assert!(lost, "the outage was noticed and reported: {rest:?}");
    let extra = rest
        .iter()
        .filter(|x| x.event.variant() == "PoolEventReceived")
        .map(|x| data(&x.event).expect("data").data["tx_hash"].as_str().expect("tx").to_owned());
    hashes.extend(extra);
    assert_eq!(
        hashes,
        [second.transaction_hash.to_string(), third.transaction_hash.to_string()],
        "the swap before the restart and the one after, once each"
    );
    assert_ne!(first.transaction_hash, second.transaction_hash);
}

#[test]
fn a_position_pushed_out_of_range_and_back_alerts_exactly_twice() {
    let mut e = env();
    let pool = e.pool();
    let tick = e.tick(pool);
    // A range of ±5 tick spacings around the price.
    let lower = tick.div_euclid(60) * 60 - 300;
    let upper = lower + 660;
    let id = e.mint_position(lower, upper);
    e.subscribe("stream_position_alerts", json!({"chain_id": CHAIN_ID, "token_id": id}));
    e.subscribe(
        "stream_position_alerts",
        json!({"chain_id": CHAIN_ID, "token_id": id, "fee_threshold_usd": "0.01"}),
    );

    // Sell WETH until the price leaves the range below, then buy it back into the range.
    let mut steps = 0;
    while e.tick(pool) >= lower {
        e.swap("WETH", "USDC", "20");
        steps += 1;
        assert!(steps < 50, "the price does not leave the range");
    }
    while e.tick(pool) < lower {
        e.swap("USDC", "WETH", "5000");
        steps += 1;
        assert!(steps < 100, "the price does not come back");
    }
    let now = e.tick(pool);
    assert!(lower <= now && now < upper, "back inside the range: {lower} <= {now} < {upper}");

    let alerts = e.wait("PositionAlert", 5, Duration::from_secs(10));
    let kinds: Vec<&str> = alerts.iter().map(|(_, d)| d.data["alert"].as_str().expect("alert")).collect();
    assert!(alerts.iter().all(|(_, d)| d.data["chain_id"] == CHAIN_ID), "each alert names its chain");
    // Each of the two subscriptions sees out_of_range, then back_in_range; the second also one
    // fee alert.
    let mut by_sub: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (_, d) in &alerts {
        let kind = d.data["alert"].as_str().expect("alert");
        if kind != "fee_threshold" {
            by_sub.entry(d.subscription_id.as_str()).or_default().push(kind);
        }
    }
    assert!(by_sub.values().all(|k| k == &["out_of_range", "back_in_range"]), "{by_sub:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "out_of_range").count(), 2, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "back_in_range").count(), 2, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "fee_threshold").count(), 1, "{kinds:?}");
    let fee = alerts.iter().find(|(_, d)| d.data["alert"] == "fee_threshold").expect("fee alert");
    assert!(signed_base(&fee.1.data["fees_usd"], 6) >= I256::try_from(10_000).expect("0.01 USDC"));
    for (_, d) in &alerts {
        assert_eq!((d.pane, d.sprite_trigger), ("positions", bardo_core::tool::SpriteTrigger::Alert));
    }
    let extra: Vec<_> = e
        .drain(Duration::from_millis(400))
        .into_iter()
        .filter(|x| x.event.variant() == "PositionAlert")
        .collect();
    assert!(extra.is_empty(), "fired once per transition: {extra:?}");
}

#[test]
fn pool_state_snapshots_and_token_jar_movements() {
    let mut e = env();
    let pool = e.pool();
    let bad = e.registry.subscribe(
        "stream_pool_state",
        &json!({"chain_id": CHAIN_ID, "pool": pool.to_checksum(None), "interval_ms": 4999}).to_string(),
    );
    assert_eq!(bad.expect_err("too often").code, ErrorCode::InvalidParams);
    let not_pool = e.registry.subscribe(
        "stream_pool_events",
        &json!({"chain_id": CHAIN_ID, "pool": e.d.tokens["USDC"].address.to_checksum(None)}).to_string(),
    );
    assert_eq!(not_pool.expect_err("a token").code, ErrorCode::InvalidParams);
    let read_call = e.host.call(
        "stream_pool_state",
        &json!({"chain_id": CHAIN_ID, "pool": pool.to_checksum(None)}).to_string(),
    );
    assert_eq!(read_call.result.expect_err("a stream").code, ErrorCode::Denied);

    e.subscribe(
        "stream_pool_state",
        json!({"chain_id": CHAIN_ID, "pool": pool.to_checksum(None), "interval_ms": 5000}),
    );
    let snap = e.wait("PoolStateSnapshot", 1, Duration::from_secs(5)).remove(0).1;
    assert_eq!(snap.data["tick"].as_i64(), Some(i64::from(e.tick(pool))));

    // A jar: an account that receives USDC and burns some.
    let jar = e.d.accounts[5];
    let usdc = e.d.tokens["USDC"].address;
    e.subscribe(
        "stream_tokenjar",
        json!({"chain_id": CHAIN_ID, "jar": jar.to_checksum(None), "tokens": ["USDC", "DAI"]}),
    );
    let before = {
        let tx =
            TransactionRequest::default().to(usdc).with_input(balanceOfCall { account: jar }.abi_encode());
        balanceOfCall::abi_decode_returns(&e.rt.block_on(e.provider.call(tx).into_future()).expect("call"))
            .expect("uint")
    };
    e.send_as(e.d.deployer, usdc, transferCall { to: jar, amount: U256::from(250_000_000u64) }.abi_encode());
    let dead: Address = "0x000000000000000000000000000000000000dEaD".parse().expect("dead");
    e.send_as(jar, usdc, transferCall { to: dead, amount: U256::from(100_000_000u64) }.abi_encode());
    let moves = e.wait("TokenJarUpdate", 2, Duration::from_secs(5));
    let mut moves: Vec<&StreamData> = moves.iter().map(|(_, d)| d).collect();
    moves.sort_by_key(|d| d.data["block_number"].as_u64());
    assert_eq!(
        (moves[0].data["movement"].as_str(), moves[0].data["amount"].as_str()),
        (Some("deposit"), Some("250"))
    );
    assert_eq!(
        (moves[1].data["movement"].as_str(), moves[1].data["amount"].as_str()),
        (Some("burn"), Some("100"))
    );
    let after = signed_base(&moves[1].data["balances"]["USDC"], 6);
    assert_eq!(after, I256::from_raw(before + U256::from(150_000_000u64)), "balances after the burn");
}

#[test]
fn unsubscribe_session_end_and_halt_cancel_every_task() {
    let e = env();
    let pool = e.pool().to_checksum(None);
    let a = e.subscribe("stream_pool_events", json!({"chain_id": CHAIN_ID, "pool": pool}));
    let b =
        e.subscribe("stream_pool_state", json!({"chain_id": CHAIN_ID, "pool": pool, "interval_ms": 5000}));
    let c = e.subscribe("stream_trades", json!({"chain_ids": [CHAIN_ID, CHAIN_ID], "wallet": pool}));
    // One task per source: trades watches two chains, each for V2/V3 swaps and V4 swaps.
    assert_eq!(e.registry.live_tasks(), 6);
    let out = e.registry.unsubscribe_many(Some(std::slice::from_ref(&a))).expect("unsubscribe");
    assert_eq!((out.unsubscribed, out.remaining), (vec![a.clone()], vec![b.clone(), c.clone()]));
    let unknown = e.registry.unsubscribe_many(Some(&[a])).expect_err("gone");
    assert_eq!(unknown.code, ErrorCode::NotFound);
    let wait_tasks = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(2);
        while e.registry.live_tasks() != n {
            assert!(
                Instant::now() < deadline,
                "{} tasks still running, expected {n}",
                e.registry.live_tasks()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    wait_tasks(5);
    let out = e.registry.unsubscribe_many(None).expect("all");
    assert_eq!((out.unsubscribed.len(), out.remaining.len()), (2, 0));
    wait_tasks(0);

    // The agent-facing entry point: a stream tool's name subscribes, `stream_unsubscribe` cancels.
    let v = e
        .registry
        .call("stream_pool_events", &json!({"chain_id": CHAIN_ID, "pool": pool}).to_string())
        .expect("call");
    let id = v["subscription_id"].as_str().expect("id").to_owned();
    assert_eq!(
        e.registry.call("stream_unsubscribe", "{}").expect("unsubscribe"),
        json!({"unsubscribed": [id], "remaining": []})
    );
    let bad = e.registry.call("stream_unsubscribe", r#"{"id": 3}"#).expect_err("bad params");
    assert_eq!(bad.code, ErrorCode::InvalidParams);
    wait_tasks(0);

    // An emergency halt on the fabric ends every subscription.
    e.subscribe("stream_pool_events", json!({"chain_id": CHAIN_ID, "pool": pool}));
    wait_tasks(1);
    e.fabric.emit(GolemEvent::Halted { reason: "test".into() });
    wait_tasks(0);
    assert!(e.registry.list().is_empty());

    // Session end: dropping the registry stops its tasks.
    e.subscribe("stream_pool_state", json!({"chain_id": CHAIN_ID, "pool": pool, "interval_ms": 5000}));
    wait_tasks(1);
    let tasks = e.registry.task_counter();
    let Env { registry, .. } = e;
    drop(registry);
    let deadline = Instant::now() + Duration::from_secs(2);
    while tasks.live() != 0 {
        assert!(Instant::now() < deadline, "{} tasks outlived their session", tasks.live());
        std::thread::sleep(Duration::from_millis(10));
    }
}

mod v4_events {
    alloy::sol! {
        event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1,
            uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee);
        event ModifyLiquidity(bytes32 indexed id, address indexed sender, int24 tickLower, int24 tickUpper,
            int256 liquidityDelta, bytes32 salt);
    }
}

#[test]
fn v4_pool_events_trades_prices_and_position_alerts_follow_the_pool_manager_in_chain_order() {
    let mut e = env();
    let manager = e.d.uniswap_v4["pool_manager"];
    let (weth, usdc) = (e.d.tokens["WETH"].address, e.d.tokens["USDC"].address);
    let v4_pool = |fee: u32| {
        e.d.uniswap_v4_pools.iter().find(|p| p.fee == fee && p.hooks.is_zero()).expect("a V4 pool").id
    };
    let (id, dai_pool) = (v4_pool(3000), v4_pool(500));
    let dev = e.d.deployer.to_checksum(None);
    // A narrow position makes V4's WETH/DAI pool the deepest of its pair: the feed follows it.
    let dai_tick = {
        let params =
            json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "DAI", "version": "v4", "fee": 500});
        let info = e.host.call("uniswap_get_pool_info", &params.to_string()).result.expect("pool");
        serde_json::from_str::<Value>(&info).expect("json")["tick"].as_i64().expect("tick") as i32
    };
    let deep = json!({"chain_id": CHAIN_ID, "version": "v4", "token_a": "WETH", "token_b": "DAI", "fee": 500,
        "amount_a": "50", "amount_b": "100000", "tick_lower": dai_tick.div_euclid(10) * 10 - 20,
        "tick_upper": dai_tick.div_euclid(10) * 10 + 30});
    e.execute(&e.plan("uniswap_add_liquidity", deep), e.d.deployer);
    let sub = e.subscribe("stream_pool_events", json!({"chain_id": CHAIN_ID, "pool_id": id.to_string()}));
    e.subscribe("stream_trades", json!({"chain_ids": [CHAIN_ID], "wallet": dev}));
    e.subscribe("stream_price_feed", json!({"chain_id": CHAIN_ID, "base": "WETH", "quote": "DAI"}));

    // A position in the V4 WETH/USDC pool, a swap each way through it, one through WETH/DAI,
    // then half of the position out.
    let info = e
        .host
        .call(
            "uniswap_get_pool_info",
            &json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "version": "v4", "fee": 3000})
                .to_string(),
        )
        .result
        .expect("pool");
    let tick = serde_json::from_str::<Value>(&info).expect("json")["tick"].as_i64().expect("tick") as i32;
    let (lower, upper) = (tick.div_euclid(60) * 60 - 600, tick.div_euclid(60) * 60 + 600);
    let add = json!({"chain_id": CHAIN_ID, "version": "v4", "token_a": "WETH", "token_b": "USDC", "fee": 3000,
        "amount_a": "1", "amount_b": "2000", "tick_lower": lower, "tick_upper": upper});
    let minted = e.execute(&e.plan("uniswap_add_liquidity", add.clone()), e.d.deployer);
    let verified =
        e.host.verify("uniswap_add_liquidity", &add.to_string(), CHAIN_ID, &minted).result.expect("verify");
    let position = verified["position_id"].as_str().expect("id").to_owned();
    e.subscribe(
        "stream_position_alerts",
        json!({"chain_id": CHAIN_ID, "token_id": position, "version": "v4", "fee_threshold_usd": "0.01"}),
    );
    let mut receipts = minted;
    for (tin, tout, amount, fee) in
        [("WETH", "USDC", "1", 3000), ("USDC", "WETH", "1500", 3000), ("WETH", "DAI", "1", 500)]
    {
        let swap = json!({"chain_id": CHAIN_ID, "token_in": tin, "token_out": tout, "amount": amount,
            "version": "v4", "fee": fee, "slippage_bps": 5000});
        receipts.extend(e.execute(&e.plan("uniswap_execute_swap", swap), e.d.deployer));
    }
    let half = json!({"chain_id": CHAIN_ID, "position_id": position, "version": "v4", "percent": 50});
    receipts.extend(e.execute(&e.plan("uniswap_remove_liquidity", half), e.d.deployer));

    // What the PoolManager logged for this pool, in order; swaps from the pool's side.
    let mut expected = Vec::new();
    for r in &receipts {
        for log in r.inner.logs().iter().filter(|l| l.address() == manager && l.topics()[1] == id) {
            let row = if let Ok(s) = v4_events::Swap::decode_log(&log.inner) {
                let side = |a: i128| -I256::try_from(a).expect("amount");
                ("swap", side(s.amount0), side(s.amount1), U256::from(s.liquidity))
            } else if let Ok(m) = v4_events::ModifyLiquidity::decode_log(&log.inner) {
                let kind = if m.liquidityDelta.is_negative() { "burn" } else { "mint" };
                (kind, I256::ZERO, I256::ZERO, m.liquidityDelta.unsigned_abs())
            } else {
                continue;
            };
            expected.push((row, log.transaction_hash.expect("tx").to_string(), log.log_index.expect("i")));
        }
    }
    let kinds: Vec<&str> = expected.iter().map(|x| x.0.0).collect();
    assert_eq!(kinds, ["mint", "swap", "swap", "burn"]);
    let (d0, d1) = if weth < usdc { (18, 6) } else { (6, 18) };
    let got = e.wait("PoolEventReceived", expected.len(), Duration::from_secs(10));
    for ((_, d), ((kind, a0, a1, liquidity), tx, index)) in got.iter().zip(&expected) {
        assert_eq!(d.subscription_id, sub);
        assert_eq!(d.data["pool_id"], json!(id.to_string()));
        assert_eq!(
            (d.data["type"].as_str(), d.data["tx_hash"].as_str(), d.data["log_index"].as_u64()),
            (Some(*kind), Some(tx.as_str()), Some(*index))
        );
        assert_eq!(d.data["liquidity"], json!(liquidity.to_string()), "{kind}");
        assert_eq!((&d.data["fee"], &d.data["version"]), (&json!(3000), &json!("v4")));
        if *kind == "swap" {
            assert_eq!(
                (signed_base(&d.data["amount0"], d0), signed_base(&d.data["amount1"], d1)),
                (*a0, *a1)
            );
        } else {
            assert!(d.data.get("amount0").is_none(), "V4 logs no liquidity amounts: {}", d.data);
        }
    }
    // The first swap sold 1 WETH: it went into the pool.
    let weth_into_pool = if weth < usdc { &got[1].1.data["amount0"] } else { &got[1].1.data["amount1"] };
    assert_eq!(weth_into_pool, "1");

    // The wallet's three V4 swaps, each with what it sold and bought.
    let trades = e.wait("SwapExecuted", 3, Duration::from_secs(5));
    let leg = |i: usize, side: &str| {
        let t = &trades[i].1.data;
        (
            t["version"].as_str(),
            t[side]["symbol"].as_str().map(str::to_owned),
            t[side]["amount"].as_str().map(str::to_owned),
        )
    };
    assert_eq!(leg(0, "sold"), (Some("v4"), Some("WETH".into()), Some("1".into())));
    assert_eq!(leg(1, "sold"), (Some("v4"), Some("USDC".into()), Some("1500".into())));
    assert_eq!(leg(2, "bought").1.as_deref(), Some("DAI"));
    assert_eq!(trades[0].1.data["pool_id"], json!(id.to_string()));
    // One price update, from the WETH/DAI swap.
    let prices = e.wait("PriceUpdate", 1, Duration::from_secs(5));
    assert_eq!(prices[0].1.data["pool_id"], json!(dai_pool.to_string()));
    // The position earned fees worth more than a cent.
    let alerts = e.wait("PositionAlert", 1, Duration::from_secs(5));
    assert_eq!(alerts[0].1.data["alert"], "fee_threshold");

    let none = json!({"chain_id": CHAIN_ID, "pool_id": format!("0x{}", "11".repeat(32))});
    let bad = e.registry.subscribe("stream_pool_events", &none.to_string());
    assert_eq!(bad.expect_err("no such pool").code, ErrorCode::NotFound);
    let both = json!({"chain_id": CHAIN_ID, "pool_id": id.to_string(), "pool": dev});
    let bad = e.registry.subscribe("stream_pool_events", &both.to_string());
    assert_eq!(bad.expect_err("pool and pool_id").code, ErrorCode::InvalidParams);
}
