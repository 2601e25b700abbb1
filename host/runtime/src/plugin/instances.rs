//! Fresh instances made ahead of the calls that use them, and dropped after them, off the
//! call path.
//!
//! A call's isolation is an instance no call used before it and none uses after it. Making
//! that instance (a store, a pooled slot, the memory image) and unmaking it (resetting the
//! slot) cost more than a short call itself, so one background thread does both: it keeps a
//! few never-used instances ready of each plugin that has been called (from its first call on:
//! listing tools makes none), made under the limits the host's calls run with, and drops the
//! stores calls are done with. A call wakes that thread only when it must (see [`Queue`]). A call takes a ready instance if one
//! was made for its setup — or makes its own, as before — sets its own fuel, deadline and
//! context on it, uses it once, and hands the store over only to be dropped. Nothing ever puts
//! a used instance back: [`Instances::take`] only pops what the worker made.

use crate::caps::state::CallState;
use crate::caps::{CallCtx, InlineAttempt};
use crate::engine::{Engine, Limits, deadline_ticks};
use crate::services::Services;
use bardo_core::sync::lock;
use bardo_core::tool::TickBudget;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, Weak};
use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

/// Everything a call needs that is not the call itself.
pub(crate) struct CallEnv<'a> {
    pub engine: &'a Engine,
    pub services: &'a Arc<Services>,
    pub wasi: &'a Arc<crate::caps::WasiPolicy>,
    pub limits: &'a Limits,
}

/// Ready instances across the process: each holds a slot of the engine's instance pool.
const READY_TOTAL: usize = 64;
/// Ticks a background instantiation may take (a start function that loops is stopped).
const MAKE_BUDGET: TickBudget = TickBudget::Fast;

static READY_NOW: AtomicUsize = AtomicUsize::new(0);

/// A store with its instance, not yet used by any call.
pub(crate) type Fresh = (Store<CallState>, Instance);

/// One plugin's instantiation: its pre-instantiated component and its ready instances.
pub(crate) struct Instances {
    pre: InstancePre<CallState>,
    /// The operator-granted interfaces its calls may use, decided once its manifest is read.
    granted: std::sync::OnceLock<Arc<std::collections::BTreeSet<&'static str>>>,
    ready: Mutex<Ready>,
    taken_ready: AtomicU64,
    made_on_call: AtomicU64,
}

/// How a plugin's calls got their instances.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct InstanceStats {
    /// Instances ready now.
    pub ready: usize,
    /// Calls that took a ready instance.
    pub taken_ready: u64,
    /// Calls that made their own (none was ready for their setup).
    pub made_on_call: u64,
}

#[derive(Default)]
struct Ready {
    /// What the ready instances are made for; `None` until the host warms the plugin.
    setup: Option<Setup>,
    stores: Vec<Fresh>,
    /// A refill is queued or running.
    refilling: bool,
}

/// What a store is made with: a call takes a ready store only if its own setup is this one.
#[derive(Clone)]
struct Setup {
    engine: Engine,
    services: Arc<Services>,
    wasi: Arc<crate::caps::WasiPolicy>,
    limits: Limits,
}

impl Setup {
    fn of(env: &CallEnv<'_>) -> Self {
        Self {
            engine: env.engine.clone(),
            services: env.services.clone(),
            wasi: env.wasi.clone(),
            limits: env.limits.clone(),
        }
    }

    fn is(&self, env: &CallEnv<'_>) -> bool {
        wasmtime::Engine::same(self.engine.wasmtime(), env.engine.wasmtime())
            && Arc::ptr_eq(&self.services, env.services)
            && Arc::ptr_eq(&self.wasi, env.wasi)
            && &self.limits == env.limits
    }

    fn env(&self) -> CallEnv<'_> {
        CallEnv { engine: &self.engine, services: &self.services, wasi: &self.wasi, limits: &self.limits }
    }
}

impl Instances {
    pub(crate) fn new(pre: InstancePre<CallState>) -> Arc<Self> {
        Arc::new(Self {
            pre,
            granted: std::sync::OnceLock::new(),
            ready: Mutex::default(),
            taken_ready: AtomicU64::new(0),
            made_on_call: AtomicU64::new(0),
        })
    }

    /// Decide the operator-granted interfaces (once: a second decision is ignored).
    pub(crate) fn grant(&self, granted: std::collections::BTreeSet<&'static str>) {
        let _ = self.granted.set(Arc::new(granted));
    }

    /// The operator-granted interfaces its calls may use (none before [`Self::grant`]).
    pub(crate) fn granted(&self) -> Arc<std::collections::BTreeSet<&'static str>> {
        self.granted.get().cloned().unwrap_or_default()
    }

    /// The pre-instantiated component (for export indices and kept instances).
    pub(crate) fn pre(&self) -> &InstancePre<CallState> {
        &self.pre
    }

    /// How calls got their instances so far.
    pub(crate) fn stats(&self) -> InstanceStats {
        InstanceStats {
            ready: self.lock().stores.len(),
            taken_ready: self.taken_ready.load(Ordering::Relaxed),
            made_on_call: self.made_on_call.load(Ordering::Relaxed),
        }
    }

    /// Keep instances ready for calls made with `env` (the host's own setup; a manifest read
    /// at load runs with other limits and makes its own).
    pub(crate) fn warm(self: &Arc<Self>, env: &CallEnv<'_>) {
        let mut ready = self.lock();
        if ready.setup.as_ref().is_some_and(|s| s.is(env)) {
            return;
        }
        ready.setup = Some(Setup::of(env));
        let stale = std::mem::take(&mut ready.stores);
        READY_NOW.fetch_sub(stale.len(), Ordering::Relaxed);
        drop(ready);
        stale.into_iter().for_each(|(store, _)| retire(store));
        self.refill_later();
    }

    /// A fresh instance for one call: a ready one made for `env`, or one made now. The call's
    /// own context, fuel and deadline are set on it here, whichever it is.
    pub(crate) fn take(
        self: &Arc<Self>,
        env: &CallEnv<'_>,
        call: CallCtx,
        budget: TickBudget,
    ) -> (Store<CallState>, wasmtime::Result<Instance>) {
        if WORKER.is_some() {
            CALLER_CPU.store(rustix::thread::sched_getcpu(), Ordering::Relaxed);
        }
        let (taken, first) = {
            let mut ready = self.lock();
            match &ready.setup {
                Some(setup) if setup.is(env) => (ready.stores.pop(), false),
                // A setup that wants none (the manifest read at load) gives way to the first
                // that wants some; two that want some do not take turns.
                Some(setup) => (None, setup.limits.ready_instances == 0 && env.limits.ready_instances > 0),
                None => (None, env.limits.ready_instances > 0),
            }
        };
        // The plugin's first call: from now on its calls find instances made ahead.
        if first {
            self.warm(env);
        }
        match taken {
            Some((mut store, instance)) => {
                READY_NOW.fetch_sub(1, Ordering::Relaxed);
                self.taken_ready.fetch_add(1, Ordering::Relaxed);
                self.refill_later();
                store.data_mut().call = call;
                // Cannot fail: fuel consumption is on for every store of the engine.
                let _ = store.set_fuel(env.limits.fuel);
                store.set_epoch_deadline(deadline_ticks(budget));
                (store, Ok(instance))
            }
            None => {
                // None ready (the worker is behind, or asleep on a refill queued earlier): this
                // call makes its own at once, as a raw fresh instance would — waking the worker
                // would cost it more than the instance; the worker comes at its next look.
                self.made_on_call.fetch_add(1, Ordering::Relaxed);
                let state = CallState::new(env.services.clone(), call, env.wasi.clone());
                let mut store = store(env, state, budget);
                let instance = self.pre.instantiate(&mut store);
                (store, instance)
            }
        }
    }

    fn refill_later(self: &Arc<Self>) {
        let mut ready = self.lock();
        let wanted = ready.setup.as_ref().map_or(0, |s| s.limits.ready_instances);
        // Half the instances left: the next calls need the worker now. Until then it may come
        // at its next round (waking a sleeping thread costs a call several µs here).
        let urgent = ready.stores.len() * 2 <= wanted;
        if ready.refilling || ready.stores.len() >= wanted {
            drop(ready);
            // Queued before it was urgent: the worker may still be asleep on it.
            if urgent {
                nudge();
            }
            return;
        }
        ready.refilling = true;
        drop(ready);
        if !send(Work::Refill(Arc::downgrade(self)), urgent) {
            self.lock().refilling = false;
        }
    }

    /// Make instances until the plugin has its share (run by the worker).
    fn refill(&self) {
        loop {
            let setup = {
                let mut ready = self.lock();
                let full = ready.stores.len() >= ready.setup.as_ref().map_or(0, |s| s.limits.ready_instances);
                match &ready.setup {
                    Some(setup) if !full && READY_NOW.load(Ordering::Relaxed) < READY_TOTAL => setup.clone(),
                    _ => {
                        ready.refilling = false;
                        return;
                    }
                }
            };
            let Some(fresh) = self.make(&setup) else {
                // Instantiation fails under these limits: calls make their own and report why.
                self.lock().refilling = false;
                return;
            };
            let mut ready = self.lock();
            if ready.setup.as_ref().is_some_and(|s| s.is(&setup.env())) {
                ready.stores.push(fresh);
                READY_NOW.fetch_add(1, Ordering::Relaxed);
            } else {
                drop(ready);
                retire(fresh.0);
            }
        }
    }

    fn make(&self, setup: &Setup) -> Option<Fresh> {
        let env = setup.env();
        // A component may run code as it is instantiated; here it may not wait on anything
        // (an inline attempt's rule), and what it reports is replaced by the call's context.
        let now = std::time::Instant::now();
        let placeholder = CallCtx {
            plugin: Arc::from(""),
            tool: String::new(),
            started: now,
            deadline: now,
            events: Default::default(),
            control: None,
            inline: Some(InlineAttempt::default()),
            granted: Arc::default(),
        };
        let state = CallState::new(env.services.clone(), placeholder, env.wasi.clone());
        let mut store = store(&env, state, MAKE_BUDGET);
        match self.pre.instantiate(&mut store) {
            Ok(instance) if !store.data().call.inline.as_ref().is_some_and(|a| a.gave_up) => {
                Some((store, instance))
            }
            Ok(_) => None,
            Err(e) => {
                tracing::debug!("cannot keep an instance ready: {e:#}");
                None
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Ready> {
        lock(&self.ready)
    }
}

/// A store for a call: the engine's limits, and an epoch check that reads the call's own
/// deadline when the budget's ticks run out — so time an import gives back to the call
/// ([`CallCtx::extend`]: the sidecar's start) is the plugin's code's too.
fn store(env: &CallEnv<'_>, state: CallState, budget: TickBudget) -> Store<CallState> {
    let mut store = env.engine.store(state, env.limits, budget);
    store.epoch_deadline_callback(|ctx| {
        Ok(if std::time::Instant::now() >= ctx.data().call.deadline {
            wasmtime::UpdateDeadline::Interrupt
        } else {
            wasmtime::UpdateDeadline::Continue(1)
        })
    });
    store
}

impl Drop for Instances {
    fn drop(&mut self) {
        let ready = std::mem::take(&mut self.lock().stores);
        READY_NOW.fetch_sub(ready.len(), Ordering::Relaxed);
    }
}

/// Hand a store a call is done with to the worker to drop (resetting its slot is the slow
/// part); dropped here when there is no worker, or when too many wait already (each waiting
/// store holds a slot of the engine's instance pool).
pub(crate) fn retire(store: Store<CallState>) {
    let store = Box::new(store);
    let waiting = RETIRING.fetch_add(1, Ordering::Relaxed);
    if waiting >= RETIRING_MAX {
        RETIRING.fetch_sub(1, Ordering::Relaxed);
        return;
    }
    // Half the bound waiting: the worker is needed before calls start dropping their own.
    let urgent = waiting * 2 >= RETIRING_MAX;
    if !send(Work::Drop(store), urgent) {
        RETIRING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Used stores waiting for the worker, at most.
const RETIRING_MAX: usize = 16;
static RETIRING: AtomicUsize = AtomicUsize::new(0);

enum Work {
    Drop(Box<Store<CallState>>),
    Refill(Weak<Instances>),
}

/// The worker's queue. A call only wakes the worker when its work is `urgent` and it sleeps:
/// a sleeping thread takes several µs to wake on a small VM (7 µs p50 here), more than the
/// call itself, and a call that leaves instances ready has nothing urgent to ask. Otherwise
/// the worker finds the work when it next looks: at once when it is busy, within
/// [`IDLE_LOOK`] when it sleeps.
struct Queue {
    state: Mutex<Queued>,
    wake: Condvar,
    /// Work queued since the worker last took it (read without the lock while it spins).
    pending: AtomicUsize,
}

#[derive(Default)]
struct Queued {
    work: Vec<Work>,
    /// The worker waits on `wake` (set and read under the lock: no wake-up is lost).
    asleep: bool,
}

/// How long a sleeping worker waits before it looks for work no call woke it for.
const IDLE_LOOK: std::time::Duration = std::time::Duration::from_millis(20);
/// How long the worker keeps looking after its last work before it sleeps: calls in a burst
/// come microseconds apart, and find it awake.
const SPIN: std::time::Duration = std::time::Duration::from_micros(200);

/// To the worker; `false` when there is none (the caller does the work itself).
fn send(work: Work, urgent: bool) -> bool {
    let Some(queue) = WORKER.as_ref() else { return false };
    let mut queued = lock(&queue.state);
    queued.work.push(work);
    queue.pending.fetch_add(1, Ordering::Release);
    let wake = urgent && queued.asleep;
    drop(queued);
    if wake {
        queue.wake.notify_one();
    }
    true
}

/// Wake the worker if it sleeps on queued work (a lock and a look when it is up).
fn nudge() {
    let Some(queue) = WORKER.as_ref() else { return };
    let queued = lock(&queue.state);
    let wake = queued.asleep && !queued.work.is_empty();
    drop(queued);
    if wake {
        queue.wake.notify_one();
    }
}

/// The one background thread that makes and drops instances for every host in the process —
/// none when the process may use only one CPU (`taskset`, a cgroup's quota): there it could
/// only take turns with the calls, and each turn costs a context switch, so calls make and
/// drop their own.
static WORKER: LazyLock<Option<Arc<Queue>>> = LazyLock::new(|| {
    if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
        tracing::debug!("one CPU usable: calls make and drop their own instances");
        return None;
    }
    let queue =
        Arc::new(Queue { state: Mutex::default(), wake: Condvar::new(), pending: AtomicUsize::new(0) });
    let worker = queue.clone();
    let spawned = std::thread::Builder::new().name("bardo-instances".into()).spawn(move || {
        let mut apart = Apart::new();
        loop {
            let idle = std::time::Instant::now();
            while worker.pending.load(Ordering::Acquire) == 0 && idle.elapsed() < SPIN {
                std::thread::yield_now();
            }
            let batch = {
                let mut queued = lock(&worker.state);
                while queued.work.is_empty() {
                    queued.asleep = true;
                    queued = match worker.wake.wait_timeout(queued, IDLE_LOOK) {
                        Ok((q, _)) => q,
                        Err(poisoned) => poisoned.into_inner().0,
                    };
                    queued.asleep = false;
                }
                worker.pending.store(0, Ordering::Relaxed);
                std::mem::take(&mut queued.work)
            };
            apart.keep();
            for work in batch {
                match work {
                    Work::Drop(store) => {
                        drop(store);
                        RETIRING.fetch_sub(1, Ordering::Relaxed);
                    }
                    Work::Refill(instances) => {
                        if let Some(instances) = instances.upgrade() {
                            instances.refill();
                        }
                    }
                }
            }
        }
    });
    match spawned {
        Ok(_) => Some(queue),
        Err(e) => {
            // Calls still work: each makes and drops its own instance.
            tracing::warn!("cannot start the instance thread: {e}");
            None
        }
    }
});

/// The CPU the latest call ran on (`usize::MAX` before the first).
static CALLER_CPU: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Keeps the worker off the CPU calls run on. The scheduler often wakes it there (beside the
/// thread that queued its work) and leaves it: the two then take turns on one CPU while another
/// idles, and a call costs more than making its instance inline would (measured: 14–17 µs a
/// call against 10.2–10.5 µs with the two apart, `make bench-peers`).
struct Apart {
    /// The CPUs the process may use.
    allowed: Option<rustix::thread::CpuSet>,
    /// The CPU the worker is kept off now.
    avoided: usize,
}

impl Apart {
    fn new() -> Self {
        Self { allowed: rustix::thread::sched_getaffinity(None).ok(), avoided: usize::MAX }
    }

    /// Move off the calls' CPU if the worker is on it (a look at its own CPU otherwise).
    fn keep(&mut self) {
        let caller = CALLER_CPU.load(Ordering::Relaxed);
        if caller == self.avoided || caller != rustix::thread::sched_getcpu() {
            return;
        }
        let Some(allowed) = &self.allowed else { return };
        let mut others = *allowed;
        others.unset(caller);
        if others.count() == 0 {
            return;
        }
        match rustix::thread::sched_setaffinity(None, &others) {
            Ok(()) => self.avoided = caller,
            // A cpuset changed under the process: leave placement to the scheduler.
            Err(e) => {
                tracing::debug!("cannot move the instance thread off CPU {caller}: {e}");
                self.allowed = None;
            }
        }
    }
}
