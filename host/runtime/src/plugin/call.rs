//! One plugin call: a fresh store from the engine (all limits on), instantiate from the
//! `InstancePre`, call, measure, and turn every trap into a typed error for that call only.

use super::instances::{self, CallEnv, Instances};
use crate::caps::state::CallState;
use crate::caps::{CallCtx, InlineAttempt};
use crate::engine::Limits;
use bardo_core::control::CallControl;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::fabric::GolemEvent;
use bardo_core::tool::CallEvents;
use bardo_core::tool::TickBudget;
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::component::Instance;
use wasmtime::{Store, Trap, UpdateDeadline};

/// Progress step `index` by its name in `steps` (its number if the tool names none there).
pub fn step_name(steps: &[String], index: u32) -> String {
    steps.get(index as usize).cloned().unwrap_or_else(|| index.to_string())
}

/// What a call cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CallStats {
    /// Fuel the guest consumed (≈ wasm instructions).
    pub fuel_consumed: u64,
    /// The call was interrupted (deadline, cancel): `fuel_consumed` is then a lower bound, as
    /// wasmtime does not flush a running function's fuel counter on an interrupt (see
    /// `run_with`); a pure-compute loop stopped by its deadline shows only the fuel it used
    /// before entering the loop.
    pub interrupted: bool,
    /// Wall time of the whole call: store, instantiation, call, drop.
    #[serde(serialize_with = "micros")]
    pub wall: Duration,
    /// Largest linear memory the instance had, bytes.
    pub peak_memory_bytes: usize,
}

fn micros<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_micros() as u64)
}

/// The outcome of one call: its result, what it cost, and what it reported.
#[derive(Debug, Clone, Serialize)]
pub struct CallReport<T = String> {
    /// The tool's answer or a typed error.
    pub result: Result<T, ToolError>,
    /// Fuel, time and memory.
    pub stats: CallStats,
    /// Progress and domain events.
    pub events: CallEvents,
    /// The tool's schema version, which its result follows (0: no tool answered).
    pub schema_version: u32,
}

impl<T> CallReport<T> {
    /// The call as the Event Fabric tells a tool's life, after the fact: its start, each
    /// progress step it reached (named from `def`'s `progress_steps`), its end with what it
    /// cost. A read has no audit record; a front end publishes these so `bardo tui` shows
    /// reads beside writes.
    pub fn lifecycle(&self, tool: &str, def: Option<&bardo_core::tool::ToolDef>) -> Vec<GolemEvent> {
        let steps = def.map(|d| d.progress_steps.as_slice()).unwrap_or_default();
        let mut events = vec![GolemEvent::ToolExecutionStart {
            tool: tool.to_owned(),
            total_steps: steps.len() as u32,
            tick_budget_ms: def.map(|d| d.tick_budget.millis()).unwrap_or_default(),
        }];
        events.extend(self.events.events.iter().filter_map(|e| match e {
            bardo_core::tool::ToolEvent::Progress { step, .. } => {
                Some(GolemEvent::ToolExecutionUpdate { tool: tool.to_owned(), step: step_name(steps, *step) })
            }
            _ => None,
        }));
        events.push(GolemEvent::ToolExecutionEnd {
            tool: tool.to_owned(),
            ok: self.result.is_ok(),
            fuel: self.stats.fuel_consumed,
            duration_ms: self.stats.wall.as_millis() as u64,
        });
        events
    }

    /// A plugin's `chain-not-supported` for a chain the host itself has no node for names the
    /// host's configuration (`[chains.N]`), not the plugin's settings: the operator fixes the
    /// host first.
    pub(crate) fn host_chain_first(mut self, services: &crate::Services, params_json: &str) -> Self {
        if let Err(e) = &self.result
            && e.code == ErrorCode::ChainNotSupported
            && let Some(chain) = super::chain_of(params_json)
            && let Err(missing) = services.evm.chains.get(chain)
        {
            self.result = Err(ToolError::new(ErrorCode::ChainNotSupported, missing.to_string()));
        }
        self
    }

    /// A call refused before any plugin code ran.
    pub fn refused(error: ToolError) -> Self {
        Self {
            result: Err(error),
            stats: CallStats::default(),
            events: CallEvents::default(),
            schema_version: 0,
        }
    }
}

/// Run `f` on a fresh instance of `pre` under `env.limits` and `budget`.
pub(crate) fn run<R>(
    env: &CallEnv<'_>,
    instances: &Arc<Instances>,
    plugin: &Arc<str>,
    tool: &str,
    budget: TickBudget,
    f: impl FnOnce(&mut Store<CallState>, &Instance) -> wasmtime::Result<Result<R, ToolError>>,
) -> CallReport<R> {
    run_with(env, instances, plugin, tool, budget, None, f)
}

/// [`run`] with a caller's control and the tool's progress step names: progress goes to the
/// control as reported, and a cancel interrupts the instance at the next epoch tick.
pub(crate) fn run_with<R>(
    env: &CallEnv<'_>,
    instances: &Arc<Instances>,
    plugin: &Arc<str>,
    tool: &str,
    budget: TickBudget,
    control: Option<(&Arc<CallControl>, &[String])>,
    f: impl FnOnce(&mut Store<CallState>, &Instance) -> wasmtime::Result<Result<R, ToolError>>,
) -> CallReport<R> {
    match attempt(env, instances, plugin, tool, budget, control, false, f) {
        Some(report) => report,
        // Only an inline attempt gives up.
        None => {
            CallReport::refused(ToolError::new(ErrorCode::Internal, "a call gave up without being inline"))
        }
    }
}

/// How long an inline attempt may run before it gives up (checked at epoch ticks, so it runs
/// at most this plus one [`crate::engine::TICK`]).
pub const INLINE_SLICE: Duration = Duration::from_millis(2);

/// [`run_with`] on a thread that must not block (see [`crate::caps::InlineAttempt`]): `None`
/// when the attempt gave up (an import would have waited, or it ran past [`INLINE_SLICE`]);
/// the caller then runs the call with [`run_with`] where waiting is allowed.
pub(crate) fn run_inline<R>(
    env: &CallEnv<'_>,
    instances: &Arc<Instances>,
    plugin: &Arc<str>,
    tool: &str,
    budget: TickBudget,
    control: (&Arc<CallControl>, &[String]),
    f: impl FnOnce(&mut Store<CallState>, &Instance) -> wasmtime::Result<Result<R, ToolError>>,
) -> Option<CallReport<R>> {
    attempt(env, instances, plugin, tool, budget, Some(control), true, f)
}

#[expect(clippy::too_many_arguments, reason = "the two entry points above name them")]
fn attempt<R>(
    env: &CallEnv<'_>,
    instances: &Arc<Instances>,
    plugin: &Arc<str>,
    tool: &str,
    budget: TickBudget,
    control: Option<(&Arc<CallControl>, &[String])>,
    inline: bool,
    f: impl FnOnce(&mut Store<CallState>, &Instance) -> wasmtime::Result<Result<R, ToolError>>,
) -> Option<CallReport<R>> {
    let started = Instant::now();
    let call = CallCtx {
        plugin: plugin.clone(),
        tool: tool.to_owned(),
        started,
        deadline: started + Duration::from_millis(budget.millis()),
        events: CallEvents::default(),
        control: control.map(|(c, steps)| (c.clone(), steps.to_vec())),
        inline: inline.then(InlineAttempt::default),
        granted: instances.granted(),
    };
    let (mut store, instance) = instances.take(env, call, budget);
    if control.is_some() {
        // Every tick: stop on the caller's cancel or the budget's deadline (the same deadline
        // the plain epoch count enforces), or give an inline attempt up; otherwise run one
        // more tick.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut ctx| {
            let call = &mut ctx.data_mut().call;
            let cancelled = call.control.as_ref().is_some_and(|(c, _)| c.is_cancelled());
            if let Some(attempt) = &mut call.inline
                && (attempt.gave_up || call.started.elapsed() >= INLINE_SLICE)
            {
                attempt.gave_up = true;
                return Ok(UpdateDeadline::Interrupt);
            }
            Ok(if cancelled || Instant::now() >= call.deadline {
                UpdateDeadline::Interrupt
            } else {
                UpdateDeadline::Continue(1)
            })
        });
    }
    let outcome = instance.and_then(|instance| f(&mut store, &instance));
    if store.data().call.inline.as_ref().is_some_and(|a| a.gave_up) {
        instances::retire(store);
        return None;
    }
    let fuel_left = store.get_fuel().unwrap_or(0);
    let mut interrupted = false;
    let result = match outcome {
        Ok(result) => result,
        Err(trap) => {
            // Why an interrupted call's fuel is only a lower bound (wasmtime 48, sync calls):
            // compiled code keeps a function's fuel count in a local and writes it to the store
            // only before a call, at a return or trap instruction, and when the count runs out
            // (cranelift `func_environ.rs`: `fuel_before_op`, `fuel_check`). The epoch check
            // calls `new_epoch` without writing it (`epoch_check_full`), so the epoch callback
            // reads the same stale figure, and the trap unwinds the frames with their counts.
            // Making the count run out in slices would flush it, but refuelling without a trap
            // needs `fuel_async_yield_interval`, i.e. async calls. Hence `interrupted`.
            interrupted = matches!(trap.downcast_ref::<Trap>(), Some(Trap::Interrupt));
            let cancelled = control.is_some_and(|(c, _)| c.is_cancelled());
            Err(if cancelled && interrupted {
                ToolError::new(
                    ErrorCode::Cancelled,
                    format!(
                        "plugin `{plugin}` tool `{tool}` was cancelled by its caller after {} ms",
                        started.elapsed().as_millis()
                    ),
                )
            } else {
                classify(&trap, &store, env.limits, budget, plugin, tool)
            })
        }
    };
    let state = store.data_mut();
    if !state.output.is_empty() {
        tracing::debug!(target: "plugin", plugin = %plugin, tool, "output: {}", state.output.text());
    }
    // The attempt stands: the caller hears its progress now, in the order reported.
    if let (Some(attempt), Some((control, steps))) = (&state.call.inline, control) {
        for &(step, elapsed_us) in &attempt.progress {
            control.progress(steps, step, elapsed_us);
        }
    }
    let peak_memory_bytes = state.limiter.peak_memory();
    let events = std::mem::take(&mut state.call.events);
    // Dropping the store resets its slot: the instance thread does it, after the answer
    // (with no ready instances wanted, there is no instance thread to hand it to).
    if env.limits.ready_instances > 0 {
        instances::retire(store);
    } else {
        drop(store);
    }
    let stats = CallStats {
        fuel_consumed: env.limits.fuel.saturating_sub(fuel_left),
        interrupted,
        wall: started.elapsed(),
        peak_memory_bytes,
    };
    Some(CallReport { result, stats, events, schema_version: 0 })
}

/// A trap or host failure as a typed error that says what happened and what to do.
fn classify(
    error: &wasmtime::Error,
    store: &Store<CallState>,
    limits: &Limits,
    budget: TickBudget,
    plugin: &str,
    tool: &str,
) -> ToolError {
    let who = format!("plugin `{plugin}` tool `{tool}`");
    if let Some(denied) = store.data().limiter.denied() {
        return ToolError::new(
            ErrorCode::LimitExceeded,
            format!(
                "{who} tried to grow its memory to {} MiB, over the {} MiB limit; call it with smaller input or raise `limits.memory_bytes`",
                denied >> 20,
                store.data().limiter.memory_limit() >> 20
            ),
        );
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => ToolError::new(
            ErrorCode::LimitExceeded,
            format!(
                "{who} ran out of fuel ({} instructions); it may loop forever — report it to the plugin's author or raise `limits.fuel`",
                limits.fuel
            ),
        ),
        Some(Trap::Interrupt) => ToolError::retryable(
            ErrorCode::Timeout,
            format!(
                "{who} ran past its {} ms budget and was stopped; retry later or with a narrower request",
                budget.millis()
            ),
        ),
        Some(Trap::StackOverflow) => ToolError::new(
            ErrorCode::LimitExceeded,
            format!("{who} overflowed its stack (unbounded recursion?); report it to the plugin's author"),
        ),
        // Rust and C guests keep part of each frame in linear memory, stack first: that stack
        // overflowing wraps its pointer below zero, which wasmtime sees as any other access out
        // of bounds. The backtrace tells them apart.
        Some(Trap::MemoryOutOfBounds) if let Some(depth) = runaway_recursion(error) => ToolError::new(
            ErrorCode::LimitExceeded,
            format!(
                "{who} overflowed its stack in linear memory (its innermost {depth} frames are one function calling itself: unbounded recursion?); report it to the plugin's author"
            ),
        ),
        Some(trap) => match store.data().output.panic_message() {
            Some(message) => ToolError::new(ErrorCode::Internal, format!("{who} panicked: {message}")),
            None => ToolError::new(
                ErrorCode::Internal,
                format!("{who} trapped: {trap}; report it to the plugin's author"),
            ),
        },
        None if error.to_string().contains("concurrent") || error.to_string().contains("maximum") => {
            ToolError::retryable(
                ErrorCode::LimitExceeded,
                format!("{who} could not start: {error:#}; the host is at its instance limit, retry shortly"),
            )
        }
        None => ToolError::new(ErrorCode::Internal, format!("{who} failed: {error:#}")),
    }
}

/// Whether a trap's backtrace shows a runaway recursion: full (wasmtime keeps the innermost
/// frames only, 20 by default) and one or two functions calling each other throughout. Returns
/// how many frames it holds.
fn runaway_recursion(error: &wasmtime::Error) -> Option<usize> {
    const FULL: usize = 16;
    let frames = error.downcast_ref::<wasmtime::WasmBacktrace>()?.frames();
    if frames.len() < FULL {
        return None;
    }
    let mut counts = std::collections::HashMap::new();
    for frame in frames {
        *counts.entry(frame.func_index()).or_insert(0usize) += 1;
    }
    let most = counts.values().copied().max().unwrap_or(0);
    (most * 2 >= frames.len()).then_some(frames.len())
}

/// Refuse results over the cap before they travel further.
pub(crate) fn cap_result(
    result: String,
    limits: &Limits,
    plugin: &str,
    tool: &str,
) -> Result<String, ToolError> {
    if result.len() > limits.result_max_bytes {
        return Err(ToolError::new(
            ErrorCode::LimitExceeded,
            format!(
                "plugin `{plugin}` tool `{tool}` returned {} bytes, over the {} byte limit; narrow the request (fewer items, a smaller range)",
                result.len(),
                limits.result_max_bytes
            ),
        ));
    }
    Ok(result)
}
