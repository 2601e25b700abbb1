//! `bardo commit` interrupted and killed for real, against the devnet: SIGINT before its first
//! transaction stops it with the permit open (the retry executes); SIGINT after, and it finishes
//! and prints what it sent; a second SIGINT exits at once (130), naming what was sent; `kill -9`
//! after signing or after sending leaves the transaction recorded, and the next `bardo audit-log
//! verify` resolves it from the chain (`UNRESOLVED` until then in `bardo records`: `sent`) —
//! nothing sent twice, nothing sent unrecorded. Where the commit stands when the signal comes is
//! chosen by a test-only failpoint that pauses it there (`BARDO_FAILPOINT`, absent from release
//! builds); the signals and the kill are real.

use super::cli::trader_dir;
use alloy::primitives::U256;
use bardo_test_support::balance_of;
use serde_json::Value;
use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

const SWAP: &str = r#"{"chain_id":31337,"token_in":"USDC","token_out":"WETH","amount":"100"}"#;

fn bardo(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bardo"));
    c.current_dir(dir).env("BARDO_PRIVATE_KEY", bardo_devnet::DEV_KEY);
    c
}

fn run(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let o = bardo(dir).args(args).output().expect("run bardo");
    (o.status.code(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
}

/// A permit for the swap: its id and how many transactions it sends.
fn preview(dir: &Path) -> (String, usize) {
    let o = bardo(dir).args(["preview", "swap", "--params", SWAP]).output().expect("preview");
    assert!(o.status.success(), "{o:?}");
    let permit: Value = serde_json::from_slice(&o.stdout).expect("json");
    let calls = permit["calls"].as_array().map_or(0, Vec::len);
    (permit["permit_id"].as_str().expect("permit id").to_owned(), calls)
}

/// `bardo commit id`, paused at failpoint `step`, once it says so; its stderr lines as they come.
fn commit_paused_at(dir: &Path, id: &str, step: &str) -> (Child, Receiver<String>) {
    let mut child = bardo(dir)
        .args(["commit", id])
        .env("BARDO_FAILPOINT", format!("{step}:pause"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn bardo commit");
    let (lines, received) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().expect("stderr");
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = match received.recv_timeout(left) {
            Ok(line) => line,
            Err(e) => {
                let _ = child.kill();
                let ended = child.wait();
                panic!("commit never reached `{step}`: {e} ({ended:?})");
            }
        };
        let name = step.split('#').next().unwrap_or(step);
        if line.contains(&format!("failpoint {name} of {id}")) {
            return (child, received);
        }
    }
}

fn signal(child: &Child, name: &str) {
    let sent =
        Command::new("kill").args([&format!("-{name}"), &child.id().to_string()]).status().expect("kill");
    assert!(sent.success());
}

/// What `child` printed and how it ended.
fn ended(child: Child, stderr: &Receiver<String>) -> (Option<i32>, Value, String) {
    let o = child.wait_with_output().expect("wait");
    let err: Vec<String> = stderr.try_iter().collect();
    let out = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code(), out, err.join("\n"))
}

fn record(dir: &Path, id: &str) -> Value {
    let o = bardo(dir).args(["records", "--json", "--permit", id]).output().expect("records");
    assert!(o.status.success(), "{o:?}");
    let all: Value = serde_json::from_slice(&o.stdout).expect("json");
    all[0].clone()
}

#[test]
fn a_commit_interrupted_or_killed_is_recorded_and_sent_at_most_once() {
    let (node, d) = bardo_test_support::devnet();
    let dir = trader_dir(&node, &d);
    let dir = dir.path();
    let usdc = || balance_of(&node, d.tokens["USDC"].address, d.deployer);
    let hundred = U256::from(100_000_000u64);

    // SIGINT after the re-simulation, before anything is signed: stopped, the permit open.
    let (id, n) = preview(dir);
    assert_eq!(n, 3, "the approvals and the swap");
    let before = usdc();
    let (child, stderr) = commit_paused_at(dir, &id, "simulated");
    signal(&child, "INT");
    let (code, out, err) = ended(child, &stderr);
    assert_eq!(code, Some(1), "{out} {err}");
    assert_eq!(out["error"]["code"], "cancelled", "{out}");
    assert!(out["error"]["message"].as_str().is_some_and(|m| m.contains("open again")), "{out}");
    assert!(err.contains("interrupted"), "{err}");
    assert_eq!(usdc(), before, "nothing sent");
    assert_eq!(record(dir, &id)["status"], "deferred", "open");
    // The retry executes it (three transactions: the approvals and the swap).
    let (code, out) = run(dir, &["commit", &id]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(before - usdc(), hundred);

    // SIGINT after the first transaction was sent: the commit finishes the plan and prints it.
    let (id, n) = preview(dir);
    let before = usdc();
    let (child, stderr) = commit_paused_at(dir, &id, "sent#0");
    signal(&child, "INT");
    let (code, out, err) = ended(child, &stderr);
    assert_eq!(code, Some(0), "finished: {out} {err}");
    assert_eq!(out["tx_hashes"].as_array().map(Vec::len), Some(n), "{out}");
    assert!(out["outcome_mismatch"].as_array().is_some_and(Vec::is_empty), "{out}");
    assert_eq!(before - usdc(), hundred);
    assert_eq!(record(dir, &id)["status"], "executed");

    // A second SIGINT exits at once, naming what was sent (the last transaction mined, its
    // receipt not recorded).
    let (id, n) = preview(dir);
    let before = usdc();
    let (child, stderr) = commit_paused_at(dir, &id, &format!("mined#{}", n - 1));
    signal(&child, "INT");
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, "INT");
    let (code, _, err) = ended(child, &stderr);
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains(&format!("sent so far ({n})")) && err.contains("transaction 0x"), "{err}");
    let r = record(dir, &id);
    assert_eq!(r["status"], "sent", "recorded, not yet resolved: {r}");
    assert_eq!(before - usdc(), hundred, "on chain");
    let (code, out) = run(dir, &["audit-log", "verify"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("resolved from the chain and recorded: 1") && out.contains("intact"), "{out}");
    assert_eq!(record(dir, &id)["status"], "executed");

    // kill -9 after signing (nothing sent yet) and after sending: the next start resolves each,
    // the first by sending its recorded bytes — once.
    for step in ["signed", "sent"] {
        let (id, n) = preview(dir);
        let before = usdc();
        let (mut child, _stderr) = commit_paused_at(dir, &id, &format!("{step}#{}", n - 1));
        child.kill().expect("kill -9");
        child.wait().expect("reaped");
        let r = record(dir, &id);
        assert_eq!(r["status"], "sent", "{step}: {r}");
        assert_eq!(r["transactions"].as_array().map(Vec::len), Some(n), "{step}: {r}");
        let (code, out) = run(dir, &["commit", &id]);
        assert_eq!(code, Some(1), "{step}: the permit is used: {out}");
        assert!(out.contains("already used"), "{step}: {out}");
        // That command's start resolved it already: verify finds nothing left.
        let (code, out) = run(dir, &["audit-log", "verify"]);
        assert_eq!(code, Some(0), "{step}: {out}");
        assert!(out.contains("intact") && !out.contains("UNRESOLVED"), "{step}: {out}");
        let r = record(dir, &id);
        assert_eq!(r["status"], "executed", "{step}: {r}");
        assert_eq!(r["outcome"]["ground_truth_source"], "recovery", "{step}: {r}");
        assert_eq!(before - usdc(), hundred, "{step}: sent once");
    }
}
