//! The same guest work — ~1 KB of JSON params parsed into a typed struct, the `eth_call` they
//! ask for built, JSON out (`bench-work`) — in one run on:
//!
//! - **Bardo, isolated**: `Host::call` of the bench component's `bench_eth_call`: a fresh,
//!   fully limited instance per call (fuel, epoch deadline, memory), params checked against the
//!   tool's schema, result capped.
//! - **raw wasmtime, reused**: the same component, one instance kept, called again and again.
//! - **raw wasmtime, fresh (pooling)**: the same component, a new store and instance per call
//!   from an `InstancePre`, pooling allocator with `pagemap_scan`, fuel and epoch set.
//! - **Extism, reused** / **Extism, fresh**: the same Rust code as an Extism plugin (a core
//!   module, built by `build.rs`); fresh = a new `Plugin` per call from a `CompiledPlugin`, with
//!   a memory limit, a timeout and a fuel limit.
//!
//! Prints a table of medians and ratios to Bardo's isolated call at the end. `make bench-peers`.

use bardo_core::Runtime;
use bardo_core::profile::Profile;
use bardo_runtime::Services;
use bardo_runtime::engine::{Engine, Limits};
use bardo_runtime::plugin::{Host, WasiPolicy};
use criterion::{Criterion, measurement::WallTime};
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// What `bardo` runs on (host/cli/src/main.rs); the peers in this process use it too. It counts
// what it is asked for only in the counting pass after the timed runs (a relaxed load each
// allocation otherwise, the same for every runtime).
#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

mod counting {
    //! Allocations per call: every thread of the process counts (the instance thread's making
    //! and dropping of instances is part of an isolated call's cost, as a raw fresh call's own).

    use std::alloc::{GlobalAlloc, Layout};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    pub struct Counting;

    static ON: AtomicBool = AtomicBool::new(false);
    static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
    static BYTES: AtomicU64 = AtomicU64::new(0);

    fn count(bytes: usize) {
        if ON.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
        }
    }

    // SAFETY: every call is passed on unchanged to mimalloc's own `GlobalAlloc`.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            count(layout.size());
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            count(layout.size());
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
        }

        // A reallocation counts as an allocation of its new size (it may move).
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            count(new_size);
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
        }
    }

    /// Allocations and bytes asked for per call of `f`, over `calls` calls (after one uncounted).
    pub fn per_call(calls: u64, mut f: impl FnMut()) -> (f64, f64) {
        f();
        ALLOCATIONS.store(0, Ordering::SeqCst);
        BYTES.store(0, Ordering::SeqCst);
        ON.store(true, Ordering::SeqCst);
        for _ in 0..calls {
            f();
        }
        ON.store(false, Ordering::SeqCst);
        let per = |n: &AtomicU64| n.load(Ordering::SeqCst) as f64 / calls as f64;
        (per(&ALLOCATIONS), per(&BYTES))
    }
}

/// Calls the counting pass makes of each runtime.
const COUNTED_CALLS: u64 = 10_000;

mod raw {
    //! Raw wasmtime on the same component: WASI p2 and nothing else (the tool imports no host
    //! interface; any it called would trap and fail the run).
    wasmtime::component::bindgen!({
        path: ["../../wit/host", "../../wit/plugin"],
        world: "bardo:plugin/reader",
    });

    use wasmtime::component::{Component, Linker, ResourceTable};
    use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store};
    use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

    pub struct State {
        wasi: WasiCtx,
        table: ResourceTable,
    }

    impl WasiView for State {
        fn ctx(&mut self) -> WasiCtxView<'_> {
            WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
        }
    }

    fn state() -> State {
        State { wasi: WasiCtx::builder().build(), table: ResourceTable::new() }
    }

    /// The engine as wasmtime's docs recommend for many short-lived instances.
    pub fn engine() -> Engine {
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(64)
            .total_core_instances(512)
            .total_memories(128)
            .total_tables(512)
            .max_memory_size(64 << 20)
            .pagemap_scan(Enabled::Auto)
            .linear_memory_keep_resident(4 << 20)
            .table_keep_resident(256 << 10);
        let mut config = Config::new();
        config
            .wasm_component_model(true)
            .consume_fuel(true)
            .epoch_interruption(true)
            .concurrency_support(false)
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        Engine::new(&config).expect("engine")
    }

    pub struct Runner {
        engine: Engine,
        pre: ReaderPre<State>,
    }

    impl Runner {
        pub fn new(engine: &Engine, bytes: &[u8]) -> Self {
            let component = Component::new(engine, bytes).expect("component");
            let mut linker = Linker::new(engine);
            wasmtime_wasi::p2::add_to_linker_sync(&mut linker).expect("wasi");
            linker.define_unknown_imports_as_traps(&component).expect("traps");
            let pre = ReaderPre::new(linker.instantiate_pre(&component).expect("pre")).expect("reader");
            Self { engine: engine.clone(), pre }
        }

        fn store(&self) -> Store<State> {
            let mut store = Store::new(&self.engine, state());
            store.set_fuel(u64::MAX / 2).expect("fuel");
            store.set_epoch_deadline(1_000);
            store
        }

        /// One kept instance: calls on it reuse everything.
        pub fn instance(&self) -> (Store<State>, Reader) {
            let mut store = self.store();
            let reader = self.pre.instantiate(&mut store).expect("instantiate");
            (store, reader)
        }

        pub fn call(store: &mut Store<State>, reader: &Reader, params: &str) -> String {
            store.set_fuel(u64::MAX / 2).expect("fuel");
            reader
                .bardo_plugin_read()
                .call_call(&mut *store, "bench_eth_call", params)
                .expect("call")
                .expect("tool")
        }

        /// A new store and instance for this call only.
        pub fn fresh(&self, params: &str) -> String {
            let (mut store, reader) = self.instance();
            Self::call(&mut store, &reader, params)
        }
    }
}

mod extism_peer {
    //! The Extism plugin. Its core module comes from the `wasm32-wasip2` toolchain, whose std
    //! links a few WASI p2 functions (for panic messages and the environment) that Extism does
    //! not provide: they are defined here as functions that fail the call, so a run that
    //! reached one would error, never pass silently. The benchmark's work calls none.

    use extism::{CompiledPlugin, Function, Manifest, Plugin, PluginBuilder, UserData, ValType, Wasm};

    fn val_type(t: &wasmtime::ValType) -> ValType {
        match t {
            wasmtime::ValType::I32 => ValType::I32,
            wasmtime::ValType::I64 => ValType::I64,
            wasmtime::ValType::F32 => ValType::F32,
            wasmtime::ValType::F64 => ValType::F64,
            other => panic!("the guest imports a function taking {other}"),
        }
    }

    /// Every WASI p2 import of `bytes`, as a function that fails.
    fn wasi_p2_imports(bytes: &[u8]) -> Vec<Function> {
        let engine = wasmtime::Engine::default();
        let module = wasmtime::Module::new(&engine, bytes).expect("core module");
        module
            .imports()
            .filter(|i| i.module().starts_with("wasi:"))
            .map(|i| {
                let wasmtime::ExternType::Func(f) = i.ty() else { panic!("{} is not a function", i.name()) };
                let name = format!("{}#{}", i.module(), i.name());
                Function::new(
                    i.name(),
                    f.params().map(|t| val_type(&t)).collect::<Vec<_>>(),
                    f.results().map(|t| val_type(&t)).collect::<Vec<_>>(),
                    UserData::new(()),
                    move |_, _, _, _| Err(extism::Error::msg(format!("{name} is not provided"))),
                )
                .with_namespace(i.module())
            })
            .collect()
    }

    fn builder(bytes: &[u8]) -> PluginBuilder<'static> {
        let manifest = Manifest::new([Wasm::data(bytes.to_vec())])
            .with_memory_max(1024)
            .with_timeout(std::time::Duration::from_secs(10));
        PluginBuilder::new(manifest)
            .with_wasi(false)
            .with_functions(wasi_p2_imports(bytes))
            .with_fuel_limit(u64::MAX / 2)
    }

    pub fn plugin(bytes: &[u8]) -> Plugin {
        builder(bytes).build().expect("extism plugin")
    }

    pub fn compiled(bytes: &[u8]) -> CompiledPlugin {
        builder(bytes).compile().expect("extism compile")
    }

    pub fn call(plugin: &mut Plugin, params: &str) -> Vec<u8> {
        plugin.call::<&[u8], Vec<u8>>("build_call", params.as_bytes()).expect("extism call")
    }

    pub fn fresh(compiled: &CompiledPlugin, params: &str) -> Vec<u8> {
        let mut plugin = Plugin::new_from_compiled(compiled).expect("instantiate");
        call(&mut plugin, params)
    }
}

/// Each benchmark's per-call times of criterion's measured samples, in the order run.
static SAMPLES: Mutex<Vec<(&'static str, Vec<f64>)>> = Mutex::new(Vec::new());
const SAMPLE_SIZE: usize = 50;

/// Run `f` as benchmark `name`, keeping the per-call time of each measured sample (criterion
/// warms up first with the same routine: its samples are the last [`SAMPLE_SIZE`]).
fn bench(g: &mut criterion::BenchmarkGroup<'_, WallTime>, name: &'static str, mut f: impl FnMut()) {
    let mut seen: Vec<f64> = Vec::new();
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                f();
            }
            let took = start.elapsed();
            seen.push(took.as_nanos() as f64 / iters as f64);
            took
        })
    });
    if seen.len() >= SAMPLE_SIZE {
        let measured = seen.split_off(seen.len() - SAMPLE_SIZE);
        SAMPLES.lock().expect("samples").push((name, measured));
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Time each runtime, then count its allocations: each runtime's allocations and bytes a call.
fn peers(c: &mut Criterion) -> Vec<(&'static str, f64, f64)> {
    // As `bardo` runs: no huge pages for mimalloc's heap (each zeroed whole on its first touch).
    rustix::thread::disable_transparent_huge_pages(true).expect("prctl(PR_SET_THP_DISABLE)");
    let params = bench_work::params_1kb();
    assert!((900..1300).contains(&params.len()), "params are {} bytes", params.len());
    let expected = String::from_utf8(bench_work::run(params.as_bytes()).expect("the work")).expect("utf-8");
    let component = bardo_test_artifacts::bytes(bardo_test_artifacts::BENCH);

    let runtime = Runtime::new().expect("runtime");
    let cache = tempfile::tempdir().expect("tempdir");
    let engine = Engine::new(Some(cache.path().to_owned())).expect("engine");
    let services = Arc::new(Services::empty(&runtime));
    let mut bardo = Host::new(
        engine,
        services,
        Profile::parse("dev").expect("profile"),
        Limits::default(),
        WasiPolicy::default(),
    )
    .expect("host");
    bardo.load_bytes("bench.wasm", &component).expect("bench plugin");
    let call = || bardo.call("bench_eth_call", &params).result.expect("bardo call");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&call()).expect("json"), json(&expected));

    let raw_engine = raw::engine();
    let raw = raw::Runner::new(&raw_engine, &component);
    let (mut store, reader) = raw.instance();
    assert_eq!(json(&raw::Runner::call(&mut store, &reader, &params)), json(&expected));

    let extism_wasm = std::fs::read(env!("EXTISM_GUEST")).expect("the Extism guest (build.rs builds it)");
    let mut plugin = extism_peer::plugin(&extism_wasm);
    let compiled = extism_peer::compiled(&extism_wasm);
    assert_eq!(extism_peer::call(&mut plugin, &params), expected.as_bytes());

    // Each runtime's call, timed and then counted.
    let mut bardo_isolated = || drop(black_box(call()));
    let mut wasmtime_reused = || drop(black_box(raw::Runner::call(&mut store, &reader, &params)));
    let mut wasmtime_fresh = || drop(black_box(raw.fresh(&params)));
    let mut extism_reused = || drop(black_box(extism_peer::call(&mut plugin, &params)));
    let mut extism_fresh = || drop(black_box(extism_peer::fresh(&compiled, &params)));

    let mut g = c.benchmark_group("peers");
    g.sample_size(SAMPLE_SIZE);
    let loaded = bardo.catalog()["bench_eth_call"].plugin.clone();
    let before = loaded.instance_stats();
    bench(&mut g, "bardo_isolated", &mut bardo_isolated);
    let after = loaded.instance_stats();
    println!(
        "bardo_isolated: {} calls took an instance made ahead, {} made their own",
        after.taken_ready - before.taken_ready,
        after.made_on_call - before.made_on_call
    );
    bench(&mut g, "wasmtime_reused", &mut wasmtime_reused);
    bench(&mut g, "wasmtime_fresh_pooling", &mut wasmtime_fresh);
    bench(&mut g, "extism_reused", &mut extism_reused);
    bench(&mut g, "extism_fresh", &mut extism_fresh);
    g.finish();

    let runs: [(&'static str, &mut dyn FnMut()); 5] = [
        ("bardo_isolated", &mut bardo_isolated),
        ("wasmtime_reused", &mut wasmtime_reused),
        ("wasmtime_fresh_pooling", &mut wasmtime_fresh),
        ("extism_reused", &mut extism_reused),
        ("extism_fresh", &mut extism_fresh),
    ];
    runs.into_iter()
        .map(|(name, f)| {
            let (allocations, bytes) = counting::per_call(COUNTED_CALLS, f);
            (name, allocations, bytes)
        })
        .collect()
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).expect("json")
}

fn main() {
    let mut c = Criterion::default().warm_up_time(Duration::from_secs(2)).configure_from_args();
    let allocated = peers(&mut c);
    c.final_summary();
    let samples = SAMPLES.lock().expect("samples");
    let medians: Vec<(&str, f64)> = samples.iter().map(|(n, v)| (*n, median(v.clone()))).collect();
    let Some(base) = medians.iter().find(|(n, _)| *n == "bardo_isolated").map(|(_, m)| *m) else {
        return;
    };
    println!("\n| runtime (same guest work, 1 KB params) | p50 | × Bardo isolated |");
    println!("|---|---|---|");
    for (name, m) in &medians {
        println!("| {name} | {:.1} µs | {:.2} |", m / 1000.0, m / base);
    }
    println!("\n| runtime | allocations a call | bytes asked a call ({COUNTED_CALLS} calls, every thread) |");
    println!("|---|---|---|");
    for (name, allocations, bytes) in &allocated {
        println!("| {name} | {allocations:.1} | {bytes:.0} |");
    }
}
