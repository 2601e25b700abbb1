//! `bardo plugin new`: each of the three scaffolds builds outside this workspace (its own
//! `[workspace]`, bardo-sdk by version with a `[patch]` to this checkout's sdk/, explicit
//! dependency versions) and its tool works on the
//! devnet: the read tool answers the node's block number, the write tool's plan goes through
//! preview → commit and wraps exactly the ether it declared, the stream tool alerts when the
//! watched balance changes.

use alloy::primitives::{U256, address};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use bardo_devnet::CHAIN_ID;
use bardo_devnet::deploy::Deployments;
use bardo_test_support::devnet_host_with;
use bardo_test_support::writes as plugin_env;
use bardo_test_support::{devnet, root, runtime, send};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Scaffold `name` with `flag` in a temporary directory, as an author would, and build it for
/// wasm32-wasip2. The build shares the guest programs' target directory and profile as
/// tests/artifacts builds them (defined here on the command line: the crate itself knows only
/// `release`), so the SDK's dependencies compiled for them are reused; the crate is still its
/// own workspace.
fn scaffold(name: &str, flag: Option<&str>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dir.path())
        .args(["plugin", "new", name])
        .args(flag)
        .output()
        .expect("run bardo");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("created"));
    let krate = dir.path().join(name);
    let manifest = std::fs::read_to_string(krate.join("Cargo.toml")).expect("Cargo.toml");
    assert!(manifest.contains("[workspace]") && !manifest.contains("workspace = true"), "{manifest}");
    // bardo-sdk by version (the checkout's own), from the checkout only through `[patch]`.
    let sdk: toml::Table =
        std::fs::read_to_string(root().join("sdk/Cargo.toml")).expect("sdk").parse().expect("toml");
    let scaffolded: toml::Table = manifest.parse().expect("toml");
    assert_eq!(
        scaffolded["dependencies"]["bardo-sdk"].as_str(),
        sdk["package"]["version"].as_str(),
        "{manifest}"
    );
    let patched = scaffolded["patch"]["crates-io"]["bardo-sdk"]["path"].as_str().expect("patch path");
    assert_eq!(Path::new(patched), root().join("sdk").canonicalize().expect("sdk dir"), "{manifest}");
    let target = root().join("target").join("guest");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(&krate)
        .args(["build", "--offline", "--target", "wasm32-wasip2", "--profile", "plugin"])
        .args(["--config", "profile.plugin.inherits=\"release\"", "--config", "profile.plugin.lto=false"])
        .args(["--config", "profile.plugin.codegen-units=16", "--config", "profile.plugin.strip=true"])
        .args(["--config", "profile.plugin.panic=\"unwind\""])
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .status()
        .expect("run cargo");
    assert!(status.success(), "the scaffolded {name} does not build");
    let wasm = target.join("wasm32-wasip2/plugin").join(format!("{}.wasm", name.replace('-', "_")));
    assert!(wasm.is_file(), "{}", wasm.display());
    (dir, wasm)
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn a_scaffolded_read_plugin_builds_alone_and_reads_the_chain() {
    let (_dir, wasm) = scaffold("scaffold-read", None);
    let (node, _) = devnet();
    let host = devnet_host_with(&node.url(), BTreeMap::new(), None, &[path(&wasm)]);
    let out = host.call("scaffold_read_get_block", &json!({"chain_id": CHAIN_ID}).to_string()).result;
    let out: serde_json::Value = serde_json::from_str(&out.expect("call")).expect("json");
    let rt = runtime();
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url"));
    let head = rt.block_on(provider.get_block_number().into_future()).expect("block number");
    assert_eq!(out["block_number"], head);
    let bad = host.call("scaffold_read_get_block", r#"{"chain_id":0}"#).result.expect_err("chain 0");
    assert_eq!(bad.code, bardo_core::ErrorCode::InvalidParams);
}

#[test]
fn a_scaffolded_write_plugin_plans_what_the_host_commits() {
    let (_dir, wasm) = scaffold("scaffold-write", Some("--write"));
    let settings = |d: &Deployments| {
        let weth = d.tokens["WETH"].address;
        BTreeMap::from([("scaffold-write".to_owned(), json!({"chains": {"31337": {"weth": weth}}}))])
    };
    let e = plugin_env::env(&[path(&wasm)], settings, Deployments::write_targets);
    let weth = e.d.tokens["WETH"].address;
    let before = e.balance_of(weth, e.user);
    let result = e.write("scaffold_write_wrap", json!({"chain_id": CHAIN_ID, "amount": "0.25"}));
    assert_eq!(result.actual["wrapped"], "0.25");
    assert_eq!(e.balance_of(weth, e.user), before + U256::from(250_000_000_000_000_000u64));
}

#[test]
fn a_scaffolded_stream_plugin_alerts_on_a_balance_change() {
    let (_dir, wasm) = scaffold("scaffold-stream", Some("--stream"));
    let mut e = bardo_test_support::streams::env_with(&[path(&wasm)], bardo_devnet::DEV_KEY);
    let watched = address!("0x00000000000000000000000000000000000b0b00");
    let params = json!({"chain_id": CHAIN_ID, "account": watched.to_string(), "interval_ms": 500});
    e.registry.subscribe("scaffold_stream_watch_balance", &params.to_string()).expect("subscribe");
    // The stream read the starting balance when it opened; pay the account.
    let pay = TransactionRequest::default().from(e.d.deployer).to(watched).value(U256::from(12_345u64));
    assert!(e.rt.block_on(send(&e.provider, pay)).status());
    let alerts = e.wait("PositionAlert", 1, Duration::from_secs(15));
    assert_eq!(alerts[0].1.data["balance_wei"], "12345", "{:?}", alerts[0].1.data);
    assert_eq!(alerts[0].1.data["previous_wei"], "0");
}
