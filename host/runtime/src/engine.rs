//! The one place where limits are applied: every call of every plugin runs in a fresh `Store`
//! built by [`Engine::store`], with fuel, an epoch deadline and memory/table/instance limits.
//! Also the compiled-artifact cache.

use bardo_core::tool::TickBudget;
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;
use wasmtime::component::Component;
use wasmtime::{Enabled, InstanceAllocationStrategy, PoolingAllocationConfig, ResourceLimiter, Store};

/// Epoch ticker period: deadlines are counted in these ticks.
pub const TICK: Duration = Duration::from_millis(10);

/// Instances (hence concurrent calls) the pool holds; a call beyond it fails `limit-exceeded`.
const POOL_INSTANCES: u32 = 256;
/// Largest linear memory any profile may grant; the per-call limit is [`Limits::memory_bytes`].
const POOL_MAX_MEMORY: usize = 4 << 30;

/// Per-call resource limits. Defaults: 10 M fuel, 256 MiB memory, 1 MiB result, 256 KiB plan, 4
/// ready instances per plugin.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Guest instructions (roughly) per call; host imports cost none.
    pub fuel: u64,
    /// Linear memory per instance, bytes.
    pub memory_bytes: usize,
    /// Elements per table.
    pub table_elements: usize,
    /// Core instances, tables and memories per store.
    pub instances: usize,
    /// Largest result a call may return, bytes.
    pub result_max_bytes: usize,
    /// Largest write plan a plugin may return (call data, descriptions and expected outcome
    /// together), bytes: a bigger one is refused before it is parsed or stored.
    pub plan_max_bytes: usize,
    /// Fresh instances kept ready per loaded plugin, made and dropped off the call path
    /// (each still serves one call only); 0 makes every instance on its call.
    pub ready_instances: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            fuel: 10_000_000,
            memory_bytes: 256 << 20,
            table_elements: 100_000,
            instances: 64,
            result_max_bytes: 1 << 20,
            plan_max_bytes: 256 << 10,
            ready_instances: 4,
        }
    }
}

/// Errors of engine setup and compilation.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// wasmtime refused the configuration.
    #[error("cannot configure the wasm engine: {0}")]
    Config(String),
    /// The bytes are not a valid component.
    #[error("not a valid WebAssembly component: {0}")]
    Compile(String),
}

/// Where a component came from when it was loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Deserialized from the compiled-artifact cache.
    Hit,
    /// Compiled now (and written to the cache, if one is configured).
    Compiled,
}

/// The wasmtime engine with its pooling allocator, epoch ticker and compiled-artifact cache.
#[derive(Clone)]
pub struct Engine {
    inner: wasmtime::Engine,
    cache_dir: Option<PathBuf>,
    compat: String,
}

impl Engine {
    /// An engine with pooling, fuel and epoch interruption; `cache_dir` enables the
    /// compiled-artifact cache.
    pub fn new(cache_dir: Option<PathBuf>) -> Result<Self, EngineError> {
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(POOL_INSTANCES)
            .total_core_instances(POOL_INSTANCES * 8)
            .total_memories(POOL_INSTANCES * 2)
            .total_tables(POOL_INSTANCES * 8)
            .max_memory_size(POOL_MAX_MEMORY)
            // Reset only what a call dirtied (Linux >= 6.7), keep the rest mapped: this is
            // what makes a fresh instance per call cost microseconds (TESTENV.md).
            .pagemap_scan(Enabled::Auto)
            .linear_memory_keep_resident(4 << 20)
            .table_keep_resident(256 << 10);
        let mut config = wasmtime::Config::new();
        config
            .wasm_component_model(true)
            .consume_fuel(true)
            .epoch_interruption(true)
            // Component-model async is off: no plugin needs it and calls are faster without.
            .concurrency_support(false)
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let inner = wasmtime::Engine::new(&config).map_err(|e| EngineError::Config(format!("{e:#}")))?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        inner.precompile_compatibility_hash().hash(&mut hasher);
        let compat = format!("{:016x}", hasher.finish());
        spawn_ticker(&inner);
        Ok(Self { inner, cache_dir, compat })
    }

    /// The underlying wasmtime engine.
    pub fn wasmtime(&self) -> &wasmtime::Engine {
        &self.inner
    }

    /// A store for one call: fuel, epoch deadline from `budget`, and `limits` on memory,
    /// tables and instances. Every plugin call goes through here.
    pub fn store<T: Limited>(&self, mut data: T, limits: &Limits, budget: TickBudget) -> Store<T> {
        *data.limiter() = MemoryLimiter::new(limits);
        let mut store = Store::new(&self.inner, data);
        store.limiter(|d| d.limiter());
        // Cannot fail: fuel consumption is enabled in `new`.
        let _ = store.set_fuel(limits.fuel);
        store.set_epoch_deadline(deadline_ticks(budget));
        store
    }

    /// Compile `bytes`, or load them from the compiled-artifact cache, keyed by their sha256
    /// and this engine's compatibility hash.
    pub fn compile(&self, bytes: &[u8]) -> Result<(Component, CacheOutcome), EngineError> {
        self.compile_digested(bytes, &sha256_hex(bytes))
    }

    /// [`Self::compile`] for bytes whose sha256 (hex) the caller already has: hashing a
    /// component again is most of a cached load's time.
    pub fn compile_digested(
        &self,
        bytes: &[u8],
        sha256: &str,
    ) -> Result<(Component, CacheOutcome), EngineError> {
        let Some((dir, path)) = self.cache_dir.as_ref().zip(self.cache_path(sha256)) else {
            return Ok((self.compile_now(bytes)?, CacheOutcome::Compiled));
        };
        if let Some(component) = self.load_cached(&path) {
            return Ok((component, CacheOutcome::Hit));
        }
        let component = self.compile_now(bytes)?;
        let serialized = component.serialize().map_err(|e| EngineError::Compile(format!("{e:#}")))?;
        if let Err(e) = write_atomically(dir, &path, &serialized) {
            // The component is compiled and usable; only the next load pays again.
            tracing::warn!(path = %path.display(), "cannot write the compiled-artifact cache: {e}");
        }
        Ok((component, CacheOutcome::Compiled))
    }

    /// Whether [`Self::compile`] would load the bytes of digest `sha256` (hex) from the cache
    /// rather than compile them (seconds per plugin on a first start, which a front end says
    /// before it waits).
    pub fn is_cached(&self, sha256: &str) -> bool {
        self.cache_path(sha256).is_some_and(|path| path.exists())
    }

    /// The compiled component of digest `sha256` (hex), if the cache holds a usable one.
    pub(crate) fn cached(&self, sha256: &str) -> Option<Component> {
        self.load_cached(&self.cache_path(sha256)?)
    }

    /// What the host read from the component of digest `sha256` at an earlier load (its
    /// surface and manifest, `plugin::listing`), if the cache holds it.
    pub(crate) fn read_listing(&self, sha256: &str) -> Option<Vec<u8>> {
        std::fs::read(self.listing_path(sha256)?).ok()
    }

    /// Keep `bytes` as the listing of the component of digest `sha256`; a failure costs the
    /// next load its speed only.
    pub(crate) fn write_listing(&self, sha256: &str, bytes: &[u8]) {
        let Some((dir, path)) = self.cache_dir.as_ref().zip(self.listing_path(sha256)) else { return };
        if let Err(e) = write_atomically(dir, &path, bytes) {
            tracing::warn!(path = %path.display(), "cannot write the plugin listing cache: {e}");
        }
    }

    fn listing_path(&self, sha256: &str) -> Option<PathBuf> {
        let dir = self.cache_dir.as_ref()?;
        Some(dir.join(format!("{sha256}-{}.listing.json", self.compat)))
    }

    fn cache_path(&self, sha256: &str) -> Option<PathBuf> {
        let dir = self.cache_dir.as_ref()?;
        Some(dir.join(format!("{sha256}-{}.cwasm", self.compat)))
    }

    fn compile_now(&self, bytes: &[u8]) -> Result<Component, EngineError> {
        Component::new(&self.inner, bytes).map_err(|e| EngineError::Compile(format!("{e:#}")))
    }

    fn load_cached(&self, path: &Path) -> Option<Component> {
        if !path.exists() {
            return None;
        }
        // SAFETY: the cache directory is the operator's own (created 0700), written only by
        // this function's caller through an atomic rename, and the file name binds the source
        // digest and the engine's compatibility hash; wasmtime also checks the header.
        #[expect(unsafe_code, reason = "deserializing our own compiled artifact")]
        let loaded = unsafe { Component::deserialize_file(&self.inner, path) };
        match loaded {
            Ok(component) => Some(component),
            Err(e) => {
                tracing::warn!(path = %path.display(), "ignoring unusable compiled artifact: {e:#}");
                None
            }
        }
    }
}

/// The sha256 of `bytes`, lowercase hex: a component's name in the cache and in `bardo.lock`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Epoch ticks for a tick budget: one more than it spans, because the first tick comes at any
/// point of the ticker's period — without it the interrupt could land up to a tick before the
/// wall-clock deadline that chain reads observe, and a plugin stopped while its reads spent the
/// budget would be told "timeout" instead of its own limit.
pub fn deadline_ticks(budget: TickBudget) -> u64 {
    budget.millis().div_ceil(TICK.as_millis() as u64) + 1
}

/// Advances the engine's epoch every [`TICK`]; stops when the engine is dropped.
fn spawn_ticker(engine: &wasmtime::Engine) {
    let weak = engine.weak();
    let spawned = std::thread::Builder::new().name("bardo-epoch".into()).spawn(move || {
        while let Some(engine) = weak.upgrade() {
            engine.increment_epoch();
            drop(engine);
            std::thread::sleep(TICK);
        }
    });
    if let Err(e) = spawned {
        // Without a ticker no deadline fires; fuel still bounds pure compute.
        tracing::error!("cannot start the epoch ticker thread: {e}");
    }
}

fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    // Unique per writer: concurrent loads of one component in one process must not collide.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp{}-{n}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Store data that carries a [`MemoryLimiter`].
pub trait Limited: 'static {
    /// The store's limiter.
    fn limiter(&mut self) -> &mut MemoryLimiter;
}

/// Memory/table/instance limits that also record the peak linear memory and whether a
/// growth was refused (so a trap after it reads as "memory limit", not "unreachable").
#[derive(Debug, Default)]
pub struct MemoryLimiter {
    memory_bytes: usize,
    table_elements: usize,
    instances: usize,
    peak_memory: usize,
    /// All linear memories of the store together: a component of many core instances gets
    /// the limit once, not once per memory.
    total_memory: usize,
    denied: Option<usize>,
}

impl MemoryLimiter {
    fn new(limits: &Limits) -> Self {
        Self {
            memory_bytes: limits.memory_bytes,
            table_elements: limits.table_elements,
            instances: limits.instances,
            peak_memory: 0,
            total_memory: 0,
            denied: None,
        }
    }

    /// The largest linear memory size granted during the call, bytes.
    pub fn peak_memory(&self) -> usize {
        self.peak_memory
    }

    /// The size of a refused memory growth, if one was refused.
    pub fn denied(&self) -> Option<usize> {
        self.denied
    }

    /// The memory limit in force.
    pub fn memory_limit(&self) -> usize {
        self.memory_bytes
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self.total_memory.saturating_sub(current).saturating_add(desired);
        if total > self.memory_bytes {
            self.denied = Some(total);
            return Ok(false);
        }
        self.total_memory = total;
        self.peak_memory = self.peak_memory.max(total);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= self.table_elements)
    }

    fn instances(&self) -> usize {
        self.instances
    }

    fn tables(&self) -> usize {
        self.instances
    }

    fn memories(&self) -> usize {
        self.instances
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Data(MemoryLimiter);

    impl Limited for Data {
        fn limiter(&mut self) -> &mut MemoryLimiter {
            &mut self.0
        }
    }

    /// Two core instances, 6 MiB of linear memory each.
    const TWO_MEMORIES: &str = r#"(component
        (core module $a (memory (export "m") 96))
        (core module $b (memory (export "m") 96))
        (core instance $ia (instantiate $a))
        (core instance $ib (instantiate $b)))"#;

    #[test]
    fn the_memory_limit_counts_every_memory_of_a_component_together() {
        let engine = Engine::new(None).expect("engine");
        let component = Component::new(engine.wasmtime(), TWO_MEMORIES).expect("component");
        let linker = wasmtime::component::Linker::<Data>::new(engine.wasmtime());
        let run = |mib: usize| {
            let limits = Limits { memory_bytes: mib << 20, ..Limits::default() };
            let mut store = engine.store(Data(MemoryLimiter::default()), &limits, TickBudget::Fast);
            let outcome = linker.instantiate(&mut store, &component).map(|_| ());
            (outcome, store.data().0.peak_memory(), store.data().0.denied())
        };
        // 12 MiB in all: over a 10 MiB limit although each memory alone is under it.
        let (outcome, _, denied) = run(10);
        assert!(outcome.is_err(), "two 6 MiB memories under a 10 MiB limit");
        assert_eq!(denied, Some(12 << 20));
        let (outcome, peak, denied) = run(16);
        assert!(outcome.is_ok(), "{outcome:?}");
        assert_eq!((peak, denied), (12 << 20, None));
    }
}
