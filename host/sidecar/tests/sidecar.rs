//! The real sidecar (Node and the pinned Uniswap SDKs from `make setup`): the handshake, the
//! SDKs' math against the Rust port in `bardo_sdk::uniswap::math` on 10,000 random cases, typed
//! errors, and supervision — killed mid-call, hung, missing packages or Node. And the sidecar's
//! own tests (`sidecar/test`, `node --test`): the route search's native-BigInt swap against the
//! SDK's on random pools.

use alloy_primitives::U256;
use bardo_sdk::uniswap::math::{MAX_TICK, amounts_for_liquidity, liquidity_for_amounts, sqrt_price_at_tick};
use bardo_sidecar::{Config, Sidecar, SidecarError};
use proptest::prelude::*;
use proptest::test_runner::{Config as Cases, TestRunner};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sidecar")
}

fn sidecar_in(state: &tempfile::TempDir, tune: impl FnOnce(&mut Config)) -> Arc<Sidecar> {
    let mut config = Config::new(dir(), state.path());
    tune(&mut config);
    Sidecar::new(config)
}

fn signal(pid: u32, sig: &str) {
    let status = std::process::Command::new("kill").arg(sig).arg(pid.to_string()).status().expect("kill");
    assert!(status.success(), "kill {sig} {pid}");
}

fn alive(pid: u32) -> bool {
    std::process::Command::new("kill")
        .arg("-0")
        .arg(pid.to_string())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn it_starts_on_first_use_says_hello_and_listens_only_for_its_user() {
    let state = tempfile::tempdir().expect("tempdir");
    let sidecar = sidecar_in(&state, |_| {});
    assert_eq!(sidecar.pid(), None, "nothing runs before the first call");
    let hello = sidecar.hello().expect("hello");
    assert_eq!(hello.protocol, bardo_sidecar::PROTOCOL);
    assert_eq!(hello.packages["@uniswap/v3-sdk"], "3.31.5", "the pinned SDK");
    assert_eq!(hello.packages["@uniswap/v4-sdk"], "2.4.0");
    let socket = state.path().join("uniswap-sidecar.sock");
    let mode = std::fs::metadata(&socket).expect("socket").permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let price = sidecar.tick_to_price(200_000, 6, 18).expect("price");
    assert_eq!(price.price, "0.000484680305025733588");
    let pid = sidecar.pid().expect("running");
    drop(sidecar);
    assert!(!alive(pid), "stopped with its owner");
    assert!(!socket.exists(), "its socket removed");
}

#[test]
fn the_sdks_math_equals_the_rust_port_on_10000_random_cases() {
    let state = tempfile::tempdir().expect("tempdir");
    let sidecar = sidecar_in(&state, |_| {});
    // A sqrt price anywhere inside a tick's interval, a range, amounts and a liquidity spread
    // over every magnitude.
    let case = (
        -MAX_TICK..MAX_TICK,
        any::<u128>(),
        (-MAX_TICK..MAX_TICK, 1..=2 * MAX_TICK),
        (any::<u128>(), 0u32..128, any::<u128>(), 0u32..128),
        (any::<u128>(), 0u32..128),
    );
    let mut runner = TestRunner::new(Cases { cases: 10_000, failure_persistence: None, ..Cases::default() });
    let checked = std::cell::Cell::new(0u32);
    runner
        .run(&case, |(tick, offset, (lower, width), (a0, s0, a1, s1), (l, sl))| {
            let upper = (lower + width).min(MAX_TICK);
            prop_assume!(lower < upper);
            let at = |t| sqrt_price_at_tick(t).expect("tick in range");
            // TickMath itself, at the tick and at both ends of the range.
            for t in [tick, lower, upper] {
                prop_assert_eq!(sidecar.tick_to_sqrt_price(t).expect("sdk"), at(t), "tick {}", t);
            }
            let (lo, hi) = (at(tick), at(tick + 1));
            let now = lo + U256::from(offset) % (hi - lo);
            prop_assert_eq!(sidecar.sqrt_price_to_tick(now).expect("sdk"), tick, "the tick of {}", now);
            let (amount0, amount1) = (U256::from(a0 >> s0), U256::from(a1 >> s1));
            let ours = liquidity_for_amounts(now, at(lower), at(upper), amount0, amount1);
            let sdk = sidecar.liquidity_for_amounts(now, (lower, upper), amount0, amount1).expect("sdk");
            // The SDK does not cap; the contract's toUint128 reverts where ours says none.
            prop_assert_eq!(ours.map(U256::from), (sdk <= U256::from(u128::MAX)).then_some(sdk));
            let liquidity = l >> sl;
            let sdk = sidecar.position_amounts(now, (lower, upper), liquidity).expect("sdk");
            prop_assert_eq!(
                amounts_for_liquidity(now, at(lower), at(upper), liquidity),
                (sdk.amount0, sdk.amount1)
            );
            checked.set(checked.get() + 1);
            Ok(())
        })
        .expect("0 mismatches");
    assert!(checked.get() >= 9_000, "most cases ran: {}", checked.get());
}

#[test]
fn the_sidecars_own_tests_pass() {
    let out = std::process::Command::new("node")
        .args(["--test", "test/"])
        .current_dir(dir())
        .output()
        .expect("node runs (make setup)");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "node --test sidecar/test failed:\n{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("# pass 2") && report.contains("# fail 0"), "{report}");
}

#[test]
fn bad_params_are_refused_with_a_typed_error_and_it_keeps_serving() {
    let state = tempfile::tempdir().expect("tempdir");
    let sidecar = sidecar_in(&state, |_| {});
    let e = sidecar.tick_to_sqrt_price(MAX_TICK + 1).expect_err("out of range");
    assert!(
        matches!(&e, SidecarError::Refused { code: -32602, message, .. } if message.contains("tick")),
        "{e}"
    );
    assert_eq!(e.code(), bardo_core::ErrorCode::InvalidParams);
    assert!(!e.retryable());
    let e = sidecar.call("no_such_method", serde_json::json!({})).expect_err("unknown");
    assert!(matches!(e, SidecarError::Refused { code: -32601, .. }), "{e}");
    let e = sidecar.position_amounts(U256::from(1u8), (-60, 60), 1).expect_err("below MIN_SQRT_RATIO");
    assert!(e.to_string().contains("MIN_SQRT_RATIO"), "{e}");
    assert_eq!(sidecar.tick_to_sqrt_price(0).expect("still serving"), U256::from(1u8) << 96);
    assert_eq!(sidecar.starts(), 1, "refusals are answers, not crashes");
}

#[test]
fn killed_mid_call_the_call_is_told_to_retry_and_the_next_is_served_by_a_new_process() {
    let state = tempfile::tempdir().expect("tempdir");
    let sidecar = sidecar_in(&state, |c| c.ping_every = Duration::from_secs(3600));
    sidecar.hello().expect("up");
    let pid = sidecar.pid().expect("pid");
    // Frozen, the call waits in flight; then it is killed outright.
    signal(pid, "-STOP");
    let caller = {
        let sidecar = sidecar.clone();
        std::thread::spawn(move || sidecar.tick_to_sqrt_price(1))
    };
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    signal(pid, "-KILL");
    let e = caller.join().expect("caller").expect_err("killed mid-call");
    assert!(started.elapsed() < Duration::from_secs(2), "told at once, not at the call timeout");
    assert!(e.retryable(), "{e}");
    assert!(matches!(&e, SidecarError::Unavailable(m) if m.contains("died")), "{e}");
    assert_eq!(sidecar.tick_to_sqrt_price(0).expect("served again"), U256::from(1u8) << 96);
    assert_ne!(sidecar.pid(), Some(pid));
    assert_eq!(sidecar.starts(), 2);
}

#[test]
fn a_hung_sidecar_fails_its_health_ping_and_is_replaced() {
    let state = tempfile::tempdir().expect("tempdir");
    let sidecar = sidecar_in(&state, |c| {
        c.ping_every = Duration::from_millis(200);
        c.ping_timeout = Duration::from_millis(300);
    });
    sidecar.hello().expect("up");
    let pid = sidecar.pid().expect("pid");
    signal(pid, "-STOP");
    let deadline = Instant::now() + Duration::from_secs(15);
    while sidecar.pid().is_none_or(|p| p == pid) {
        assert!(Instant::now() < deadline, "the hung sidecar was never replaced");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(pid), "the hung process was stopped");
    assert_eq!(sidecar.tick_to_sqrt_price(0).expect("served"), U256::from(1u8) << 96);
    assert!(sidecar.starts() >= 2);
}

#[test]
fn without_its_packages_or_node_it_says_how_to_fix_it() {
    let state = tempfile::tempdir().expect("tempdir");
    let bare = tempfile::tempdir().expect("bare");
    std::fs::copy(dir().join("server.cjs"), bare.path().join("server.cjs")).expect("copy");
    let sidecar = sidecar_in(&state, |c| c.dir = bare.path().to_owned());
    let e = sidecar.tick_to_sqrt_price(0).expect_err("no packages");
    assert!(matches!(&e, SidecarError::NotInstalled(m) if m.contains("make setup")), "{e}");
    assert!(!e.retryable());

    let sidecar = sidecar_in(&state, |c| c.node = "/nonexistent/node".into());
    let e = sidecar.tick_to_sqrt_price(0).expect_err("no node");
    assert!(
        matches!(&e, SidecarError::NotInstalled(m) if m.contains("Node.js") && m.contains("make setup")),
        "{e}"
    );
}

#[test]
fn a_relative_directory_is_taken_from_the_hosts_working_directory() {
    // Cargo runs this test in the crate's directory; `bardo` resolves `[sidecar] dir` the same way.
    let state = tempfile::tempdir().expect("tempdir");
    let sidecar = Sidecar::new(Config::new("../../sidecar", state.path()));
    assert_eq!(sidecar.tick_to_sqrt_price(0).expect("started"), U256::from(1u8) << 96);
}
