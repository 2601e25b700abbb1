//! Hostile plugins: every abuse ends as a typed error for that call, and the host keeps serving.

use super::{host, host_with};
use bardo_core::ErrorCode;
use bardo_runtime::Host;
use bardo_runtime::engine::Limits;
use bardo_test_artifacts::{HELLO, HOSTILE};
use std::time::{Duration, Instant};

fn echo_works(host: &Host) {
    let r = host.call("hostile_echo", r#"{"text":"still serving"}"#);
    assert_eq!(
        r.result.as_deref(),
        Ok(r#""still serving""#),
        "the host must keep serving after a hostile call"
    );
}

fn error_of(host: &Host, tool: &str) -> (bardo_core::ToolError, bardo_runtime::CallStats) {
    let r = host.call(tool, "{}");
    (r.result.expect_err("a hostile call must fail"), r.stats)
}

#[test]
fn infinite_loop_runs_out_of_fuel() {
    let h = host(&[HOSTILE]);
    let (e, stats) = error_of(&h, "hostile_spin");
    assert_eq!(e.code, ErrorCode::LimitExceeded, "{e}");
    assert!(e.message.contains("ran out of fuel (10000000"), "{e}");
    assert_eq!(stats.fuel_consumed, 10_000_000);
    echo_works(&h);
}

#[test]
fn loop_over_host_imports_is_bounded_and_its_logs_capped() {
    let h = host(&[HOSTILE]);
    let r = h.call("hostile_host_spin", "{}");
    let e = r.result.expect_err("must be stopped");
    assert_eq!(e.code, ErrorCode::LimitExceeded, "{e}");
    assert!(
        r.events.log_lines > bardo_runtime::caps::events::MAX_LOG_LINES,
        "it logged {} lines",
        r.events.log_lines
    );
    assert!(r.events.dropped > 0, "lines over the cap are counted as dropped");
    echo_works(&h);
}

#[test]
fn memory_bomb_hits_the_memory_limit() {
    let h = host(&[HOSTILE]);
    let (e, stats) = error_of(&h, "hostile_memory_bomb");
    assert_eq!(e.code, ErrorCode::LimitExceeded, "{e}");
    assert!(e.message.contains("over the 256 MiB limit"), "{e}");
    assert!(
        stats.peak_memory_bytes <= 256 << 20 && stats.peak_memory_bytes > 200 << 20,
        "peak {}",
        stats.peak_memory_bytes
    );
    echo_works(&h);
}

#[test]
fn memory_limit_is_configurable() {
    let h = host_with("dev", Limits { memory_bytes: 32 << 20, ..Limits::default() }, &[HOSTILE]);
    let (e, stats) = error_of(&h, "hostile_memory_bomb");
    assert!(e.message.contains("over the 32 MiB limit"), "{e}");
    assert!(stats.peak_memory_bytes <= 32 << 20);
}

#[test]
fn unbounded_recursion_overflows_the_stack() {
    let h = host(&[HOSTILE]);
    let (e, _) = error_of(&h, "hostile_recurse");
    assert_eq!(e.code, ErrorCode::LimitExceeded, "{e}");
    assert!(e.message.contains("overflowed its stack"), "{e}");
    echo_works(&h);
}

/// A guest whose frames live in its linear memory overflows the stack Rust keeps there: the
/// trap wasmtime reports is an access out of bounds (the stack pointer wrapped below zero), and
/// it is named for what it is, from the backtrace's repeated frames.
#[test]
fn unbounded_recursion_in_linear_memory_is_named_a_stack_overflow() {
    let h = host(&[HOSTILE]);
    let (e, _) = error_of(&h, "hostile_recurse_in_memory");
    assert_eq!(e.code, ErrorCode::LimitExceeded, "{e}");
    assert!(e.message.contains("overflowed its stack"), "{e}");
    assert!(!e.message.contains("out of bounds"), "{e}");
    echo_works(&h);
}

#[test]
fn panic_is_an_internal_error_with_the_message() {
    let h = host(&[HOSTILE]);
    let (e, _) = error_of(&h, "hostile_panic");
    assert_eq!(e.code, ErrorCode::Internal, "{e}");
    assert!(e.message.contains("panicked: hostile plugin panicked on purpose"), "{e}");
    echo_works(&h);
}

#[test]
fn huge_result_is_refused() {
    // Enough fuel to build 5 MB (5x the cap), so the result cap is what stops it.
    let h = host_with("dev", Limits { fuel: 5_000_000_000, ..Limits::default() }, &[HOSTILE]);
    let (e, _) = error_of(&h, "hostile_huge_output");
    assert_eq!(e.code, ErrorCode::LimitExceeded, "{e}");
    assert!(e.message.contains("returned 5000002 bytes, over the 1048576 byte limit"), "{e}");
    echo_works(&h);
}

#[test]
fn result_cap_is_configurable() {
    let h = host_with("dev", Limits { result_max_bytes: 10, ..Limits::default() }, &[HOSTILE]);
    let r = h.call("hostile_echo", r#"{"text":"this is longer than ten bytes"}"#);
    assert_eq!(r.result.expect_err("over the cap").code, ErrorCode::LimitExceeded);
    assert!(h.call("hostile_echo", r#"{"text":"short"}"#).result.is_ok());
}

/// With fuel out of the way, the epoch deadline stops a loop at the tool's budget (fast = 1 s),
/// while a well-behaved call on another thread keeps being served quickly.
#[test]
fn deadline_stops_a_loop_and_other_calls_keep_running() {
    let h = host_with("dev", Limits { fuel: u64::MAX / 2, ..Limits::default() }, &[HOSTILE, HELLO]);
    std::thread::scope(|s| {
        let spinner = s.spawn(|| {
            let started = Instant::now();
            let r = h.call("hostile_spin", "{}");
            (r.result.expect_err("stopped by the deadline"), started.elapsed())
        });
        std::thread::sleep(Duration::from_millis(50));
        let mut served = 0;
        while !spinner.is_finished() {
            let started = Instant::now();
            let r = h.call("hello_greet", r#"{"name":"neighbour"}"#);
            assert_eq!(r.result.as_deref(), Ok(r#"{"greeting":"hello, neighbour","block_number":null}"#));
            assert!(
                started.elapsed() < Duration::from_millis(250),
                "a neighbour call took {:?}",
                started.elapsed()
            );
            served += 1;
            std::thread::sleep(Duration::from_millis(20));
        }
        let (e, took) = spinner.join().expect("spinner thread");
        assert_eq!(e.code, ErrorCode::Timeout, "{e}");
        assert!(e.retryable);
        assert!(e.message.contains("1000 ms budget"), "{e}");
        assert!(
            took >= Duration::from_millis(990) && took < Duration::from_millis(1500),
            "stopped after {took:?}"
        );
        assert!(served >= 10, "only {served} neighbour calls were served during the spin");
    });
}

/// A caller's cancel stops a loop at the next epoch tick, long before its budget; the fuel
/// figure of an interrupted call says it is a lower bound.
#[test]
fn a_cancelled_call_stops_within_ticks_and_reports_an_interrupted_fuel_bound() {
    use bardo_runtime::plugin::CallControl;
    use std::sync::Arc;
    let h = host_with("dev", Limits { fuel: u64::MAX / 2, ..Limits::default() }, &[HOSTILE]);
    let control = Arc::new(CallControl::new());
    let started = Instant::now();
    let r = std::thread::scope(|s| {
        let call = s.spawn(|| h.call_with("hostile_spin", "{}", &control));
        std::thread::sleep(Duration::from_millis(100));
        control.cancel();
        call.join().expect("call thread")
    });
    let took = started.elapsed();
    let e = r.result.expect_err("cancelled");
    assert_eq!(e.code, ErrorCode::Cancelled, "{e}");
    assert!(e.message.contains("cancelled by its caller"), "{e}");
    assert!(took < Duration::from_millis(600), "stopped after {took:?}, the budget is 1 s");
    assert!(r.stats.interrupted, "{:?}", r.stats);
    // A timed-out call is interrupted too: its fuel figure is marked as a lower bound.
    let t = h.call("hostile_spin", "{}");
    assert_eq!(t.result.expect_err("timeout").code, ErrorCode::Timeout);
    assert!(t.stats.interrupted);
    // One that ran out of fuel is counted exactly.
    let f = host(&[HOSTILE]).call("hostile_spin", "{}");
    assert!(!f.stats.interrupted && f.stats.fuel_consumed == 10_000_000, "{:?}", f.stats);
    echo_works(&h);
}

/// A watched call hears each progress step as the tool reports it, in order, named from the
/// tool's `progress_steps`; the report keeps the same steps.
#[test]
fn progress_steps_reach_the_caller_in_order() {
    use bardo_runtime::plugin::{CallControl, Progress};
    use std::sync::{Arc, Mutex};
    let h = host(&[HELLO]);
    let heard: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = heard.clone();
    let control = Arc::new(CallControl::new().on_progress(move |p| {
        sink.lock().expect("progress sink").push(p.clone());
    }));
    // `hello_greet` reports step 0, then step 1 before it reads the chain (which is not
    // configured here, so the call then fails: the steps were heard all the same).
    let r = h.call_with("hello_greet", r#"{"name":"a","chain_id":31337}"#, &control);
    assert_eq!(r.result.expect_err("no chain").code, ErrorCode::ChainNotSupported);
    let heard = heard.lock().expect("progress sink").clone();
    let steps: Vec<(u32, u32, &str)> = heard.iter().map(|p| (p.step, p.total, p.name.as_str())).collect();
    assert_eq!(steps, [(0, 2, "greet"), (1, 2, "read block")]);
    assert!(heard[0].elapsed_us <= heard[1].elapsed_us, "{heard:?}");
    let reported: Vec<u32> = r
        .events
        .events
        .iter()
        .filter_map(|e| match e {
            bardo_core::tool::ToolEvent::Progress { step, .. } => Some(*step),
            _ => None,
        })
        .collect();
    assert_eq!(reported, [0, 1]);
    // A control nobody watches, and a plain call, work as before.
    let quiet = Arc::new(CallControl::new());
    assert!(h.call_with("hello_greet", r#"{"name":"a"}"#, &quiet).result.is_ok());
    assert!(h.call("hello_greet", r#"{"name":"a"}"#).result.is_ok());
}

/// Params are checked against the tool's schema by the host: a refused call runs no plugin code.
#[test]
fn params_that_break_the_schema_never_reach_the_plugin() {
    let h = host(&[HOSTILE]);
    for (params, says) in [(r#"{"text":5}"#, "at /text"), ("not json", "not JSON"), (r#"{}"#, "text")] {
        let r = h.call("hostile_echo", params);
        let e = r.result.expect_err(params);
        assert_eq!(e.code, ErrorCode::InvalidParams, "{params}: {e}");
        assert!(e.message.contains(says) && e.message.contains("hostile_echo"), "{params}: {e}");
        assert_eq!(r.stats.fuel_consumed, 0, "{params}: the plugin ran");
    }
    echo_works(&h);
}

/// Fresh instances are made ahead of calls and dropped after them off the call path, but an
/// instance never serves two calls: a plugin that counts, in its own memory, the calls its
/// instance served always sees its first — from a ready instance, from one made on the call,
/// one call at a time or many at once.
#[test]
fn an_instance_never_serves_two_calls_ready_or_made_on_the_call() {
    let h = host(&[HOSTILE]);
    let plugin = h.catalog()["hostile_remember"].plugin.clone();
    // Instances are made ready from a plugin's first call on.
    assert_eq!(plugin.instance_stats().ready, 0, "none before any call");
    assert_eq!(h.call("hostile_remember", "{}").result.as_deref(), Ok(r#""1""#));
    let until = Instant::now() + Duration::from_secs(10);
    while plugin.instance_stats().ready < 4 {
        assert!(Instant::now() < until, "no instances were made ready: {:?}", plugin.instance_stats());
        std::thread::sleep(Duration::from_millis(5));
    }
    let before = plugin.instance_stats();
    let first = |h: &Host| h.call("hostile_remember", "{}").result;
    for i in 0..40 {
        assert_eq!(first(&h).as_deref(), Ok(r#""1""#), "call {i} found a used instance");
    }
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for i in 0..40 {
                    assert_eq!(first(&h).as_deref(), Ok(r#""1""#), "call {i} found a used instance");
                }
            });
        }
    });
    let stats = plugin.instance_stats();
    let (ready, made) = (stats.taken_ready - before.taken_ready, stats.made_on_call - before.made_on_call);
    assert!(ready >= 4, "the ready instances served no call: {stats:?}");
    assert_eq!(ready + made, 200, "{stats:?}");
    echo_works(&h);
}

/// A plugin that spends its whole time budget on chain reads is told so: `limit-exceeded` naming
/// its budget, not a node timeout to retry — the node answered every read.
#[test]
fn a_budget_spent_on_reads_is_the_plugins_limit_not_the_nodes_timeout() {
    let (node, _) = bardo_test_support::devnet();
    let h = bardo_test_support::host_on(&node.url(), &[HOSTILE]);
    let started = Instant::now();
    let e = h.call("hostile_read_spin", "{}").result.expect_err("the budget runs out");
    assert_eq!(e.code, ErrorCode::LimitExceeded, "{e}");
    assert!(!e.retryable, "{e}");
    assert!(
        e.message.contains("spent its whole 1000 ms time budget")
            && e.message.contains("the node did not fail"),
        "{e}"
    );
    assert!(started.elapsed() < Duration::from_millis(1_500), "{:?}", started.elapsed());
}
