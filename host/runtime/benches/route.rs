//! Uniswap's SDK route on the devnet's pools: the sidecar's best-route round trip over pools the
//! host read (the search and the SDK's figures, plus the socket; and with the UniversalRouter
//! calldata, which the SDK's ABI encoding makes the larger part), and `uniswap_get_route` end to end (plugin, the
//! host's pool discovery and reads at one block, the sidecar) — beside the host-native best
//! single route (`uniswap_get_quote`, the plugin's Rust over the quoter contracts) and a cheap
//! sidecar call beside the same math in Rust, in one run. Floor p50 <= 5 ms for best-route,
//! <= 1 ms for the cheap call; the tool warm (a route at a block another route read) <= 3 ms.

use alloy::primitives::U256;
use bardo_core::profile::Profile;
use bardo_core::tool::RequiredCapability;
use bardo_devnet::{CHAIN_ID, DEV_KEY};
use bardo_evm::Evm;
use bardo_evm::chain::{ChainConfig, Chains};
use bardo_evm::signer::Wallet;
use bardo_runtime::Services;
use bardo_runtime::engine::{Engine, Limits};
use bardo_runtime::plugin::{Host, WasiPolicy};
use bardo_runtime::services::UniswapSdk;
use bardo_sidecar::book::UniswapBook;
use bardo_sidecar::discover::{Calls, Discovery, Found};
use bardo_sidecar::route::{RoutePool, RouteRequest, SwapTerms, TradeType};
use bardo_sidecar::{Config, Sidecar};
use criterion::{Criterion, criterion_group, criterion_main};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn routes(c: &mut Criterion) {
    let (snapshot, node) = bardo_test_support::snapshot_and_anvil();
    let d = &snapshot.deployments;
    let state = tempfile::tempdir().expect("tempdir");
    let sidecar = Sidecar::new(Config::new(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sidecar"),
        state.path(),
    ));
    sidecar.hello().expect("the sidecar starts (run `make setup`)");
    let settings = d.uniswap_settings();
    let books = UniswapBook::from_settings(&settings).expect("books");
    let book = books[&CHAIN_ID].clone();
    let config = ChainConfig { head_ttl_ms: 250, ..ChainConfig::new(node.url()) };
    let chains = Chains::new(&BTreeMap::from([(CHAIN_ID, config)]), bardo_test_support::host_runtime())
        .expect("chains");
    let services = Arc::new(
        Services::new(Evm::new(chains, Some(Wallet::from_signer(DEV_KEY.parse().expect("key")))))
            .with_settings(BTreeMap::from([("uniswap".to_owned(), settings)]), BTreeMap::new())
            .with_uniswap_sdk(Some(UniswapSdk::new(sidecar.clone(), books, vec!["uniswap".to_owned()]))),
    );
    let engine =
        Engine::new(Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-cache"))).expect("engine");
    let profile = Profile::parse("trader").expect("profile").with_capabilities([RequiredCapability::Wallet]);
    let mut host =
        Host::new(engine, services.clone(), profile, Limits::default(), WasiPolicy::default()).expect("host");
    host.load_file(Path::new(bardo_test_artifacts::UNISWAP)).expect("uniswap");

    // The devnet's pools between USDC, WETH and DAI as the host reads them, once.
    let (usdc, weth, dai) = (d.tokens["USDC"].address, d.tokens["WETH"].address, d.tokens["DAI"].address);
    let client = services.evm.chains.get(CHAIN_ID).expect("chain");
    let deadline = Instant::now() + Duration::from_secs(60);
    let block = services.evm.chains.block_on(client.block_number(deadline)).expect("block");
    let batch = |calls: &Calls| {
        let answers = services.evm.chains.block_on(client.call_many(calls, block, deadline));
        answers.into_iter().map(|a| a.map_err(|e| e.to_string())).collect::<Vec<_>>()
    };
    let mut discovery = Discovery::new(batch);
    let Found { mut pools, decimals } = discovery.pools(&book, &[usdc, dai, weth]).expect("pools");
    let request = RouteRequest {
        chain_id: CHAIN_ID,
        trade_type: TradeType::ExactIn,
        token_in: usdc,
        token_out: dai,
        amount: U256::from(250_000_000_000u64),
        decimals,
        max_hops: 2,
        max_splits: 3,
        step_percent: 10,
        swap: Some(SwapTerms { recipient: d.deployer, slippage_bps: 50, deadline: u64::MAX >> 12 }),
    };
    let state_view = book.v4_state_view.expect("state view");
    let with_calldata = request.clone();
    let request = RouteRequest { swap: None, ..request };
    let mut read = |pools: &mut Vec<RoutePool>, request: &RouteRequest| {
        sidecar
            .route(request, pools, |pools, needs| discovery.words(pools, state_view, needs))
            .expect("route")
    };
    // Every tick word the route reaches, read once: the bench then times the SDK's search.
    let first = read(&mut pools, &with_calldata);
    println!(
        "best route over {} pools: {} legs, {} paths quoted, {} USDC -> {} DAI",
        pools.len(),
        first.legs.len(),
        first.paths_quoted,
        first.amount_in,
        first.amount_out
    );

    let quote =
        serde_json::json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "DAI", "amount": "250000"})
            .to_string();
    host.call("uniswap_get_route", &quote).result.expect("get_route");
    let mut g = c.benchmark_group("route");
    g.bench_function("sidecar_best_route_devnet_pools", |b| b.iter(|| black_box(read(&mut pools, &request))));
    g.bench_function("sidecar_best_route_with_calldata", |b| {
        b.iter(|| black_box(read(&mut pools, &with_calldata)))
    });
    g.bench_function("get_route_tool_end_to_end", |b| {
        b.iter(|| black_box(host.call("uniswap_get_route", &quote).result.expect("get_route")))
    });
    // Cold: a new block (mined outside the timing) and nothing cached — the pools found and
    // read in four batched rounds, the tick words a pass lacks in two more.
    g.bench_function("get_route_tool_new_block", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mined: serde_json::Value = services
                    .evm
                    .chains
                    .block_on(client.raw(
                        "evm_mine",
                        serde_json::json!([]),
                        Instant::now() + Duration::from_secs(10),
                    ))
                    .expect("mine");
                black_box(mined);
                client.forget();
                let started = Instant::now();
                black_box(host.call("uniswap_get_route", &quote).result.expect("get_route"));
                total += started.elapsed();
            }
            total
        })
    });
    g.bench_function("native_best_single_route_get_quote", |b| {
        b.iter(|| black_box(host.call("uniswap_get_quote", &quote).result.expect("get_quote")))
    });
    g.bench_function("sidecar_tick_to_price_round_trip", |b| {
        b.iter(|| sidecar.tick_to_price(black_box(-200_000), 6, 18).expect("sidecar"))
    });
    g.bench_function("native_sqrt_price_at_tick", |b| {
        b.iter(|| bardo_sdk::uniswap::math::sqrt_price_at_tick(black_box(-200_000)).expect("tick"))
    });
    g.finish();
}

criterion_group!(benches, routes);
criterion_main!(benches);
