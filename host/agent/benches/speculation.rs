//! The speculation engine on a scripted agent session over the devnet: each tick the agent
//! reads a pool, spends `THINK` on the answer (a stand-in for the model's turn, far shorter than
//! a real one), then reads the price of the pool's token. Measured per tick: the plain host
//! (every read runs when asked) beside the speculator after it learned the habit (the price
//! read is prefetched while the agent thinks), in one run; the hit rate is printed.

use bardo_agent::speculation::Speculator;
use bardo_core::profile::Profile;
use bardo_core::speculation::Model;
use bardo_devnet::CHAIN_ID;
use bardo_evm::Evm;
use bardo_evm::chain::{ChainConfig, Chains};
use bardo_runtime::Services;
use bardo_runtime::engine::{Engine, Limits};
use bardo_runtime::plugin::{CallControl, Host, WasiPolicy};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The agent's time with the pool's answer before it asks for the price.
const THINK: Duration = Duration::from_millis(5);
const TOKENS: [&str; 3] = ["USDC", "DAI", "WBTC"];

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().expect("object")
}

fn session(c: &mut Criterion) {
    let (snapshot, node) = bardo_test_support::snapshot_and_anvil();
    let d = &snapshot.deployments;
    // Every read sees the newest head: no block-scoped cache hides the reads' cost.
    let config = ChainConfig { head_ttl_ms: 0, ..ChainConfig::new(node.url()) };
    let chains = Chains::new(&BTreeMap::from([(CHAIN_ID, config)]), bardo_test_support::host_runtime())
        .expect("chains");
    let services = Arc::new(
        Services::new(Evm::new(chains, None))
            .with_settings(BTreeMap::from([("uniswap".to_owned(), d.uniswap_settings())]), BTreeMap::new()),
    );
    let engine =
        Engine::new(Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-cache"))).expect("engine");
    let profile = Profile::parse("data").expect("profile");
    let mut host =
        Host::new(engine, services, profile, Limits::default(), WasiPolicy::default()).expect("host");
    host.load_file(Path::new(bardo_test_artifacts::UNISWAP)).expect("uniswap");
    let host = Arc::new(host);
    let pool = |t: &str| obj(json!({"chain_id": CHAIN_ID, "token_a": t, "token_b": "WETH"}));
    let price = |t: &str| obj(json!({"chain_id": CHAIN_ID, "token": t, "quote_token": "WETH"}));
    let plain = |tool: &str, p: &Map<String, Value>| {
        host.call(tool, &Value::Object(p.clone()).to_string()).result.expect("read")
    };
    let speculator = Speculator::new(Model::default(), Duration::from_secs(3600), 0.7);
    let control = Arc::new(CallControl::new());
    let speculative =
        |tool: &str, p: &Map<String, Value>| speculator.call(&host, tool, p, &control).result.expect("read");
    // Learn the habit (5 ticks), as an agent's first minutes would teach it.
    for t in TOKENS.iter().cycle().take(5) {
        speculative("uniswap_get_pool_info", &pool(t));
        speculative("data_get_token_price", &price(t));
        speculator.end_tick().expect("tick");
    }
    let learned = speculator.stats();
    let mut g = c.benchmark_group("speculation/tick");
    g.sample_size(30).measurement_time(Duration::from_secs(6));
    let mut n = 0usize;
    g.bench_function("plain", |b| {
        b.iter(|| {
            let t = TOKENS[n % TOKENS.len()];
            n += 1;
            plain("uniswap_get_pool_info", &pool(t));
            std::thread::sleep(THINK);
            plain("data_get_token_price", &price(t))
        })
    });
    g.bench_function("speculative", |b| {
        b.iter(|| {
            let t = TOKENS[n % TOKENS.len()];
            n += 1;
            speculative("uniswap_get_pool_info", &pool(t));
            std::thread::sleep(THINK);
            let answer = speculative("data_get_token_price", &price(t));
            speculator.end_tick().expect("tick");
            answer
        })
    });
    g.finish();
    let s = speculator.stats();
    let (hits, misses) = (s.hits - learned.hits, s.misses - learned.misses);
    eprintln!(
        "speculation: {hits} hits, {misses} misses (hit rate {:.1} % of all reads, {:.1} % of price reads), {} prefetched, {} discarded",
        100.0 * hits as f64 / (hits + misses).max(1) as f64,
        100.0 * hits as f64 / ((hits + misses) / 2).max(1) as f64,
        s.prefetched - learned.prefetched,
        s.wasted - learned.wasted
    );
}

criterion_group!(benches, session);
criterion_main!(benches);
