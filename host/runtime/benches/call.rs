//! Call-path benchmarks (issue targets: isolated call p50 <= 25 µs and <= 3x a reused
//! instance; load from the compiled cache <= 1 ms).
//!
//! (a) `isolated_1kb`: a fresh, fully limited instance per call, 1 KB JSON read tool, calls back
//!     to back: each takes a ready instance when the background thread has one made (it also
//!     drops the used ones), else makes its own.
//! (a') `isolated_1kb_ready`: the same call when an instance is ready (the background thread
//!     is given time to refill between calls, outside the timing): an agent's burst of reads.
//! (a'') `isolated_1kb_on_call`: with `ready_instances = 0`: store, instantiate, call and drop
//!     all on the call path.
//! (b) `reused_1kb`: the same call, with the same host checks (params against the schema, the
//!     result cap), on one kept instance: the baseline for (a).
//! (c) `isolated_noop` / `reused_noop`: a call that does nothing (`isolated_noop_ready`: one
//!     call with its instances made, as (a')).
//! (d) `load_cached`: compiled component from the cache; `load_cached_with_manifest` adds the
//!     surface check and the manifest call; `compile_cold` is the baseline without a cache.

use bardo_core::Runtime;
use bardo_core::profile::Profile;
use bardo_runtime::Services;
use bardo_runtime::engine::{Engine, Limits};
use bardo_runtime::plugin::{Host, WasiPolicy};
use bardo_test_artifacts::{BENCH, bytes};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::sync::Arc;

// What `bardo` runs on (host/cli/src/main.rs): a call's store is freed on the instance thread.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// ~1 KB of JSON: a small order book.
fn params_1kb() -> String {
    let orders: Vec<String> = (0..12)
        .map(|i| {
            format!(r#"{{"token":"0x{:040x}","amount":"{}","price":{}.5}}"#, i + 1, 1_000_000 + i, 1800 + i)
        })
        .collect();
    let p = format!(r#"{{"orders":[{}]}}"#, orders.join(","));
    assert!((900..1200).contains(&p.len()), "params are {} bytes", p.len());
    p
}

fn host(engine: &Engine, services: &Arc<Services>) -> Host {
    host_with(engine, services, Limits::default())
}

fn host_with(engine: &Engine, services: &Arc<Services>, limits: Limits) -> Host {
    let mut host = Host::new(
        engine.clone(),
        services.clone(),
        Profile::parse("dev").expect("profile"),
        limits,
        WasiPolicy::default(),
    )
    .expect("host");
    host.load_bytes("bench.wasm", &bytes(BENCH)).expect("load bench plugin");
    host
}

fn calls(c: &mut Criterion) {
    // As `bardo` runs (host/cli/src/main.rs): no huge pages for mimalloc's heap, each zeroed whole
    // on its first touch — inside a timed call.
    rustix::thread::disable_transparent_huge_pages(true).expect("prctl(PR_SET_THP_DISABLE)");
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::new(Some(dir.path().to_owned())).expect("engine");
    let runtime = Runtime::new().expect("runtime");
    let services = Arc::new(Services::empty(&runtime));
    let host = host(&engine, &services);
    let params = params_1kb();
    let expected = host.call("bench_summarize", &params).result.expect("bench call works");
    assert!(expected.contains(r#""count":12"#), "{expected}");

    let mut g = c.benchmark_group("call");
    let plugin = host.catalog()["bench_summarize"].plugin.clone();
    let before = plugin.instance_stats();
    g.bench_function("isolated_1kb", |b| {
        b.iter(|| black_box(host.call("bench_summarize", black_box(&params)).result.expect("call")))
    });
    // Back to back, the instance thread makes and drops one instance per call on the other CPU:
    // when it falls behind, calls make their own (what splits this bench's runs in two).
    let after = plugin.instance_stats();
    let (ready, made) = (after.taken_ready - before.taken_ready, after.made_on_call - before.made_on_call);
    println!("isolated_1kb back to back: {ready} calls took a ready instance, {made} made their own");
    g.bench_function("isolated_1kb_ready", |b| {
        b.iter_custom(|iters| {
            let mut total = std::time::Duration::ZERO;
            for _ in 0..iters {
                // The background thread refills within microseconds; never wait for ever.
                let until = std::time::Instant::now() + std::time::Duration::from_millis(20);
                while plugin.instance_stats().ready < Limits::default().ready_instances
                    && std::time::Instant::now() < until
                {
                    std::thread::yield_now();
                }
                let started = std::time::Instant::now();
                black_box(host.call("bench_summarize", black_box(&params)).result.expect("call"));
                total += started.elapsed();
            }
            total
        })
    });
    let on_call = host_with(&engine, &services, Limits { ready_instances: 0, ..Limits::default() });
    g.bench_function("isolated_1kb_on_call", |b| {
        b.iter(|| black_box(on_call.call("bench_summarize", black_box(&params)).result.expect("call")))
    });
    let mut reused = host.reused_instance("bench_summarize").expect("instance");
    g.bench_function("reused_1kb", |b| {
        b.iter(|| black_box(reused.call("bench_summarize", black_box(&params)).is_ok()))
    });
    let noop = host.catalog()["bench_noop"].plugin.clone();
    let before = noop.instance_stats();
    g.bench_function("isolated_noop", |b| {
        b.iter(|| black_box(host.call("bench_noop", "{}").result.expect("call")))
    });
    let after = noop.instance_stats();
    let (ready, made) = (after.taken_ready - before.taken_ready, after.made_on_call - before.made_on_call);
    println!("isolated_noop back to back: {ready} calls took a ready instance, {made} made their own");
    // One call when the instance thread has had time to make its instances: what a call that
    // is not part of a burst waits for.
    g.bench_function("isolated_noop_ready", |b| {
        b.iter_custom(|iters| {
            let mut total = std::time::Duration::ZERO;
            for _ in 0..iters {
                let until = std::time::Instant::now() + std::time::Duration::from_millis(20);
                while noop.instance_stats().ready < Limits::default().ready_instances
                    && std::time::Instant::now() < until
                {
                    std::thread::yield_now();
                }
                let started = std::time::Instant::now();
                black_box(host.call("bench_noop", "{}").result.expect("call"));
                total += started.elapsed();
            }
            total
        })
    });
    let mut reused = host.reused_instance("bench_noop").expect("instance");
    g.bench_function("reused_noop", |b| b.iter(|| black_box(reused.call("bench_noop", "{}").is_ok())));
    g.finish();
}

fn loads(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::new(Some(dir.path().to_owned())).expect("engine");
    let wasm = bytes(BENCH);
    engine.compile(&wasm).expect("warm the cache");
    let runtime = Runtime::new().expect("runtime");
    let services = Arc::new(Services::empty(&runtime));
    let mut g = c.benchmark_group("load");
    g.bench_function("load_cached", |b| {
        b.iter(|| black_box(engine.compile(black_box(&wasm)).expect("cached")))
    });
    g.bench_function("load_cached_with_manifest", |b| {
        b.iter(|| {
            let mut h = Host::new(
                engine.clone(),
                services.clone(),
                Profile::parse("dev").expect("p"),
                Limits::default(),
                WasiPolicy::default(),
            )
            .expect("host");
            black_box(h.load_bytes("bench.wasm", &wasm).expect("load"));
        })
    });
    let uncached = Engine::new(None).expect("engine");
    g.sample_size(10);
    g.bench_function("compile_cold", |b| {
        b.iter(|| black_box(uncached.compile(black_box(&wasm)).expect("compile")))
    });
    g.finish();
}

/// What checking a call's params costs, apart from the call: the tool's schema against ~1 KB of
/// params (`check_1kb`), and the baseline of parsing them into a `serde_json::Value` alone.
fn params(c: &mut Criterion) {
    let runtime = Runtime::new().expect("runtime");
    let services = Arc::new(Services::empty(&runtime));
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::new(Some(dir.path().to_owned())).expect("engine");
    let host = host(&engine, &services);
    let schema = &host.catalog()["bench_summarize"].def.input_schema;
    let checker = bardo_runtime::plugin::ParamsSchema::compile(schema).expect("schema");
    let params = params_1kb();
    checker.check("bench_summarize", &params).expect("valid");
    let mut g = c.benchmark_group("params");
    g.bench_function("check_1kb", |b| b.iter(|| black_box(checker.check("t", black_box(&params)).is_ok())));
    g.bench_function("parse_value_1kb", |b| {
        b.iter(|| black_box(serde_json::from_str::<serde_json::Value>(black_box(&params)).is_ok()))
    });
    g.finish();
}

criterion_group!(benches, calls, loads, params);
criterion_main!(benches);
