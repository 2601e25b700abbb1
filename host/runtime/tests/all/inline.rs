//! Inline attempts (`Host::try_call_inline`): a call tried on a thread that must not block
//! answers exactly as a threaded call when it only computes, and otherwise gives up without a
//! trace — no progress heard, no waiting on the chain, no running past its slice.

use super::{host, host_with};
use bardo_core::ErrorCode;
use bardo_runtime::engine::Limits;
use bardo_runtime::plugin::{CallControl, INLINE_SLICE};
use bardo_test_artifacts::{HELLO, HOSTILE};
use bardo_test_support::{anvil, host_on};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A control that records the progress steps it hears.
fn watched() -> (Arc<CallControl>, Arc<Mutex<Vec<u32>>>) {
    let heard: Arc<Mutex<Vec<u32>>> = Arc::default();
    let sink = heard.clone();
    let control = CallControl::new().on_progress(move |p| sink.lock().expect("sink").push(p.step));
    (Arc::new(control), heard)
}

/// An inline attempt that only computes, tried up to five times: a 2 ms slice can be lost to
/// the scheduler on a loaded machine, and an attempt given up leaves no trace.
fn stands(
    h: &bardo_runtime::Host,
    tool: &str,
    params: &str,
    control: &Arc<CallControl>,
) -> Option<bardo_runtime::plugin::CallReport> {
    (0..5).find_map(|_| h.try_call_inline(tool, params, control))
}

#[test]
fn a_call_that_only_computes_answers_inline_as_on_a_thread_with_its_progress() {
    let h = host(&[HELLO, HOSTILE]);
    let (control, heard) = watched();
    let params = r#"{"name":"golem"}"#;
    let inline = stands(&h, "hello_greet", params, &control).expect("computes only: stands inline");
    assert_eq!(inline.result, h.call("hello_greet", params).result);
    assert_eq!(inline.result.as_deref(), Ok(r#"{"greeting":"hello, golem","block_number":null}"#));
    assert_eq!(*heard.lock().expect("heard"), [0], "the progress of an attempt that stands is told");
    assert!(inline.stats.fuel_consumed > 0);

    // Refusals and limits are answers too, the same as on a thread.
    let bad = stands(&h, "hello_greet", r#"{"name":5}"#, &control).expect("refused inline");
    assert_eq!(bad.result.expect_err("bad params").code, ErrorCode::InvalidParams);
    // Little fuel, so it runs out well inside the slice even on a loaded machine.
    let lean = host_with("dev", Limits { fuel: 100_000, ..Limits::default() }, &[HOSTILE]);
    let spin = stands(&lean, "hostile_spin", "{}", &control).expect("fuel runs out inline");
    assert_eq!(spin.result.expect_err("out of fuel").code, ErrorCode::LimitExceeded);
}

#[test]
fn an_attempt_that_would_wait_on_the_chain_gives_up_and_the_threaded_call_answers() {
    let node = anvil();
    let h = host_on(&node.url(), &[HELLO]);
    let (control, heard) = watched();
    let params = r#"{"name":"golem","chain_id":31337}"#;
    let started = Instant::now();
    assert!(h.try_call_inline("hello_greet", params, &control).is_none(), "a chain read waits: give up");
    assert!(started.elapsed() < Duration::from_millis(100), "gave up at the import, not after the read");
    assert!(heard.lock().expect("heard").is_empty(), "step 0 of the attempt given up is not heard");

    let threaded = h.call_with("hello_greet", params, &control);
    let answer: serde_json::Value =
        serde_json::from_str(&threaded.result.expect("threaded call")).expect("json");
    assert!(answer["block_number"].is_u64(), "{answer}");
    assert_eq!(*heard.lock().expect("heard"), [0, 1], "each step heard once, in order");
}

#[test]
fn an_attempt_that_runs_on_gives_up_after_its_slice_not_its_budget() {
    // Fuel out of the way: only time bounds the loop (its budget is 1 s).
    let h = host_with("dev", Limits { fuel: u64::MAX / 2, ..Limits::default() }, &[HOSTILE]);
    let (control, _) = watched();
    let started = Instant::now();
    assert!(h.try_call_inline("hostile_spin", "{}", &control).is_none());
    let took = started.elapsed();
    assert!(
        took >= INLINE_SLICE && took < INLINE_SLICE + Duration::from_millis(100),
        "gave up after {took:?}"
    );
    // The host keeps serving, inline too.
    let echo = stands(&h, "hostile_echo", r#"{"text":"still serving"}"#, &control).expect("inline");
    assert_eq!(echo.result.as_deref(), Ok(r#""still serving""#));
}
