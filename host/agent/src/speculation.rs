//! The speculation engine: read calls go through it; it learns which read follows which (and
//! with which params) into a persisted [`Model`], and after each call prefetches the likely next
//! reads (probability at least the threshold, default 0.7) on their own threads. Their results
//! are kept for the current tick only and discarded when it ends.
//!
//! A prefetch is only ever a read tool of the profile (never a write, never a stream), runs
//! under the same limits as any call, and is invisible to the agent's limits: the write path's
//! rate limiter counts previews, and a prefetch is not one.

use bardo_core::control::CallControl;
use bardo_core::speculation::Model;
use bardo_core::sync::lock;
use bardo_core::tool::{CapabilityTier, Category};
use bardo_runtime::plugin::{CallReport, Host};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The default probability above which a next read is prefetched.
pub const DEFAULT_THRESHOLD: f64 = 0.7;

/// A prefetched call: its report once it finished.
#[derive(Default)]
struct Slot {
    report: Mutex<Option<CallReport>>,
    done: Condvar,
}

impl Slot {
    fn fill(&self, report: CallReport) {
        *lock(&self.report) = Some(report);
        self.done.notify_all();
    }

    fn wait(&self) -> CallReport {
        let mut report = lock(&self.report);
        while report.is_none() {
            report = self.done.wait(report).unwrap_or_else(|p| p.into_inner());
        }
        report.clone().unwrap_or_else(|| {
            CallReport::refused(bardo_core::ToolError::new(
                bardo_core::ErrorCode::Internal,
                "a prefetch ended without a report",
            ))
        })
    }
}

/// One tick: the prefetched results and the last call, both forgotten when it ends.
struct Tick {
    started: Instant,
    /// The host its results came from (a reload ends the tick).
    host: usize,
    last: Option<(String, Map<String, Value>)>,
    cache: HashMap<(String, String), Arc<Slot>>,
}

impl Tick {
    fn new() -> Self {
        Self { started: Instant::now(), host: 0, last: None, cache: HashMap::new() }
    }
}

/// What the engine did, for benchmarks and the operator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct SpeculationStats {
    /// Calls answered from a prefetch.
    pub hits: u64,
    /// Calls that ran when asked.
    pub misses: u64,
    /// Prefetches started.
    pub prefetched: u64,
    /// Prefetched results discarded unused at a tick's end.
    pub wasted: u64,
}

/// Read calls with prefetching, over whichever host is current (a reload ends the tick).
pub struct Speculator {
    model: Mutex<Model>,
    tick: Mutex<Tick>,
    tick_length: Duration,
    threshold: f64,
    file: Option<PathBuf>,
    hits: AtomicU64,
    misses: AtomicU64,
    prefetched: AtomicU64,
    wasted: AtomicU64,
}

impl Speculator {
    /// Speculate with `model`, ticks of `tick_length`, prefetching above `threshold`.
    pub fn new(model: Model, tick_length: Duration, threshold: f64) -> Self {
        Self {
            model: Mutex::new(model),
            tick: Mutex::new(Tick::new()),
            tick_length,
            threshold,
            file: None,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            prefetched: AtomicU64::new(0),
            wasted: AtomicU64::new(0),
        }
    }

    /// Keep the model in `file` (read now if it exists; written at every tick's end).
    pub fn persisted(mut self, file: PathBuf) -> Result<Self, String> {
        match std::fs::read_to_string(&file) {
            Ok(text) => {
                let model = serde_json::from_str(&text).map_err(|e| {
                    format!("{}: not a speculation model ({e}); delete it to start over", file.display())
                })?;
                self.model = Mutex::new(model);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("reading {}: {e}", file.display())),
        }
        self.file = Some(file);
        Ok(self)
    }

    /// Call `host`'s read tool `tool` with `params`: from this tick's prefetch if there is one
    /// (else under `control`), then learn from the call and prefetch what usually follows it.
    pub fn call(
        &self,
        host: &Arc<Host>,
        tool: &str,
        params: &Map<String, Value>,
        control: &Arc<CallControl>,
    ) -> CallReport {
        let key = (tool.to_owned(), Value::Object(params.clone()).to_string());
        let slot = {
            let mut tick = self.lock_tick();
            let host_id = Arc::as_ptr(host) as usize;
            if tick.started.elapsed() >= self.tick_length || tick.host != host_id {
                self.end(&mut tick);
                tick.host = host_id;
            }
            let slot = tick.cache.remove(&key);
            if let Some((from, prev)) = tick.last.replace((tool.to_owned(), params.clone())) {
                self.lock_model().followed(&from, &prev, tool, params);
            }
            slot
        };
        let report = match slot {
            Some(slot) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                slot.wait()
            }
            None => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                host.call_with(tool, &key.1, control)
            }
        };
        self.lock_model().called(tool);
        self.prefetch(host, tool, params);
        report
    }

    fn prefetch(&self, host: &Arc<Host>, tool: &str, params: &Map<String, Value>) {
        let predictions = self.lock_model().predict(tool, params, self.threshold);
        for p in predictions {
            // Only the profile's read tools, never a stream or memory's (which change memory): a
            // prefetch changes nothing anywhere.
            let read = host.catalog().get(&p.tool).is_some_and(|e| {
                e.def.capability_tier == CapabilityTier::Read && e.def.category != Category::Memory
            });
            let readable = read && !host.is_stream(&p.tool);
            if !readable {
                continue;
            }
            let key = (p.tool.clone(), Value::Object(p.params).to_string());
            let slot = {
                let mut tick = self.lock_tick();
                if tick.cache.contains_key(&key) {
                    continue;
                }
                let slot = Arc::new(Slot::default());
                tick.cache.insert(key.clone(), slot.clone());
                slot
            };
            self.prefetched.fetch_add(1, Ordering::Relaxed);
            let host = host.clone();
            std::thread::spawn(move || slot.fill(host.call(&key.0, &key.1)));
        }
    }

    /// End the tick now: unused prefetches are discarded, the model is saved.
    pub fn end_tick(&self) -> Result<(), String> {
        let mut tick = self.lock_tick();
        self.end(&mut tick);
        self.save()
    }

    fn end(&self, tick: &mut Tick) {
        self.wasted.fetch_add(tick.cache.len() as u64, Ordering::Relaxed);
        *tick = Tick::new();
    }

    /// Write the model to its file, if it has one.
    pub fn save(&self) -> Result<(), String> {
        let Some(file) = &self.file else { return Ok(()) };
        let text = serde_json::to_string(&*self.lock_model()).map_err(|e| e.to_string())?;
        let tmp = file.with_extension("tmp");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, file))
            .map_err(|e| format!("writing {}: {e}", file.display()))
    }

    /// What it did so far.
    pub fn stats(&self) -> SpeculationStats {
        SpeculationStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            prefetched: self.prefetched.load(Ordering::Relaxed),
            wasted: self.wasted.load(Ordering::Relaxed),
        }
    }

    /// A copy of the model.
    pub fn model(&self) -> Model {
        self.lock_model().clone()
    }

    fn lock_tick(&self) -> std::sync::MutexGuard<'_, Tick> {
        lock(&self.tick)
    }

    fn lock_model(&self) -> std::sync::MutexGuard<'_, Model> {
        lock(&self.model)
    }
}
