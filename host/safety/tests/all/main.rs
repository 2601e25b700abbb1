//! Integration tests of the write path on a real devnet (anvil with the published contracts),
//! with real plugins planning, real NATS for a fleet, and the attacks a hostile plugin makes.

mod aave;
mod attacks;
mod cage;
mod cluster;
mod confirmation;
mod crash;
mod cross_check;
mod economic;
mod fleet_history;
mod forged;
mod generations;
mod limits;
mod lp_writes;
mod migration;
mod morpho;
mod morpho_writes;
mod pendle;
mod pendle_math;
mod pendle_writes;
mod reputation;
mod routes;
mod safe;
mod staking;
mod v4_liquidity;
mod valuation;
mod vault;
mod wallet;
mod write_path;

pub use bardo_test_support::{engine, host, host_runtime, host_with, no_services};

/// Run `tests/clients/SCRIPT` (which uses the npm `package`) on `input` (stdin, and the first
/// argument when short) and parse the JSON it prints: the protocols' own SDKs as oracles.
fn client_script(script: &str, package: &str, input: &str) -> serde_json::Value {
    use std::io::Write;
    let clients = bardo_test_support::root().join("tests/clients");
    assert!(
        clients.join("node_modules").join(package).exists(),
        "tests/clients/node_modules lacks {package}: run scripts/setup.sh (or `make setup`)"
    );
    let mut node = std::process::Command::new("node");
    node.arg(clients.join(script));
    if input.len() < 4096 {
        node.arg(input);
    }
    let mut child = node
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run node");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write the input");
    let out = child.wait_with_output().expect("node");
    assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("json")
}
