//! `bardo devnet up` and `down` as an operator runs them, from a project outside the checkout.

use super::cli::{bardo, stdout};

#[test]
fn devnet_up_and_down_work_with_a_config_outside_the_repository() {
    use alloy::sol_types::SolCall;
    // The config in one directory, the command run from another: `devnet/` is found in the
    // checkout bardo was built from; state and settings go next to the config.
    let (home, elsewhere) = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
    // The second chain's default is the first's port + 1, which another test's connection may
    // hold (it did, once): this test names a free one (the default is unit-tested).
    let (port, second_port) = (super::free_port(), super::free_port());
    let config = home.path().join("bardo.toml");
    std::fs::write(&config, format!("[chains.31337]\nrpc = \"http://127.0.0.1:{port}\"\ndevnet = true\n"))
        .expect("config");
    let config = config.to_str().expect("utf-8");
    // The stack deployed once for this checkout's devnet/ (the tests' own snapshot) is the one a
    // new project's devnet starts from: nothing is deployed again.
    let shared = bardo_test_support::snapshot();
    // No --port: the devnet listens where the configured chain's RPC points, and says so.
    let second = second_port.to_string();
    let up = bardo(
        elsewhere.path(),
        &["--config", config, "devnet", "up", "--detach", "--json", "--second-port", &second],
    );
    let err = String::from_utf8_lossy(&up.stderr);
    assert!(up.status.success(), "{err}");
    assert!(!err.contains("deploying"), "started from {}, not deployed again: {err}", shared.state.display());
    assert!(!home.path().join(".bardo/devnet").exists(), "no second copy of the snapshot in the project");
    assert!(
        err.contains(&format!(
            "devnet: chain 31337 on port {port} ([chains.31337] rpc = \"http://127.0.0.1:{port}\")"
        )),
        "{err}"
    );
    let started: serde_json::Value = serde_json::from_str(&stdout(&up)).expect("--json: one object");
    assert_eq!(
        (&started["rpc"], &started["chain_id"]),
        (&format!("http://127.0.0.1:{port}").into(), &31337.into())
    );
    assert!(started["pid"].as_u64().is_some() && started["deployments"].as_str().is_some(), "{started}");
    // The second chain beside it: its own anvil on the port given (the config names no
    // [chains.8453]), its own deployment at its own addresses.
    let second = &started["more"][0];
    assert_eq!(
        (&second["chain_id"], &second["rpc"]),
        (&8453.into(), &format!("http://127.0.0.1:{second_port}").into()),
        "{started}"
    );
    assert!(err.contains(&format!("devnet: chain 8453 on port {second_port} (--second-port)")), "{err}");
    let second_rpc = second["rpc"].as_str().expect("rpc");
    let chain_b = bardo_test_support::chain::Chain::connect(second_rpc);
    let second_d: serde_json::Value = serde_json::from_slice(
        &std::fs::read(home.path().join(".bardo/deployments.8453.json"))
            .expect("the second chain's deployments"),
    )
    .expect("json");
    let usdc_b: alloy::primitives::Address =
        second_d["tokens"]["USDC"]["address"].as_str().expect("usdc").parse().expect("address");
    assert_eq!(chain_b.read(usdc_b, decimalsCall {}), 6, "USDC deployed on chain 8453");
    let settings = home.path().join(".bardo/settings");
    for name in ["uniswap", "aave", "wallet", "vault", "allowlist", "pricing"] {
        let file: serde_json::Value =
            serde_json::from_slice(&std::fs::read(settings.join(format!("{name}.json"))).expect(name))
                .expect("json");
        let chains = file.get("chains").unwrap_or(&file);
        assert!(
            chains.get("31337").is_some() && chains.get("8453").is_some(),
            "{name}.json keys both chains: {file}"
        );
    }
    let pendle: serde_json::Value =
        serde_json::from_slice(&std::fs::read(settings.join("pendle.json")).expect("pendle")).expect("json");
    assert!(pendle["chains"].get("8453").is_none(), "no Pendle on Base: {pendle}");
    let deployments: serde_json::Value = serde_json::from_slice(
        &std::fs::read(home.path().join(".bardo/deployments.json")).expect("deployments"),
    )
    .expect("json");
    assert_eq!(deployments["vaults"]["bvUSDC"]["asset"], "USDC");
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(), "anvil listens on {port}");
    // Its price feeds were re-stamped as it started (the host refuses answers over an hour old,
    // as pricing.json says), and a keeper beside it keeps them fresh while it runs.
    let pricing: serde_json::Value =
        serde_json::from_slice(&std::fs::read(settings.join("pricing.json")).expect("pricing"))
            .expect("json");
    assert_eq!(pricing["31337"]["max_feed_age_secs"], 3600);
    let feed: alloy::primitives::Address =
        deployments["feeds"]["WETH"].as_str().expect("feed").parse().expect("address");
    let rpc = format!("http://127.0.0.1:{port}");
    let provider = alloy::providers::ProviderBuilder::new().connect_http(rpc.parse().expect("url"));
    let rt = bardo_test_support::runtime();
    alloy::sol! {
        function latestRoundData() external view returns (uint80, int256, uint256, uint256 updatedAt, uint80);
        function decimals() external view returns (uint8);
    }
    let tx = alloy::rpc::types::TransactionRequest::default()
        .to(feed)
        .input(latestRoundDataCall {}.abi_encode().into());
    let raw =
        rt.block_on(alloy::providers::Provider::call(&provider, tx).into_future()).expect("latestRoundData");
    let updated = latestRoundDataCall::abi_decode_returns(&raw).expect("round").updatedAt.to::<u64>();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs();
    assert!(now.abs_diff(updated) < 600, "re-stamped on start: updated at {updated}, now {now}");
    let detached: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.path().join(".bardo/devnet.json")).expect("devnet.json"))
            .expect("json");
    let keeper = detached["keeper"].as_u64().expect("a keeper runs beside the devnet");
    assert!(std::path::Path::new(&format!("/proc/{keeper}")).exists(), "keeper {keeper} runs");
    // Up again: it is up, which is what was asked (no second anvil, the same one said).
    let again = bardo(elsewhere.path(), &["--config", config, "devnet", "up", "--detach"]);
    assert!(again.status.success(), "{again:?}");
    assert!(
        stdout(&again).contains(&format!(
            "devnet already up: chain 31337 at http://127.0.0.1:{port} (pid {}",
            started["pid"]
        )),
        "{again:?}"
    );
    let down = bardo(elsewhere.path(), &["--config", config, "devnet", "down"]);
    assert!(down.status.success(), "{}", String::from_utf8_lossy(&down.stderr));
    let stopped = std::time::Instant::now();
    while [port, second_port].iter().any(|p| std::net::TcpStream::connect(("127.0.0.1", *p)).is_ok()) {
        assert!(stopped.elapsed().as_secs() < 10, "both chains' anvils stop");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let again = bardo(elsewhere.path(), &["--config", config, "devnet", "down"]);
    assert!(again.status.success() && stdout(&again).contains("devnet already down"), "{again:?}");
    assert!(!elsewhere.path().join(".bardo").exists(), "nothing is written where the command ran");
    let gone = (0..50).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        !std::path::Path::new(&format!("/proc/{keeper}")).exists()
            || std::fs::read_to_string(format!("/proc/{keeper}/stat")).is_ok_and(|s| s.contains(") Z "))
    });
    assert!(gone, "devnet down stops the keeper too");
}
