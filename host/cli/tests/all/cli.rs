//! The `bardo` binary, as an operator runs it.

use bardo_test_artifacts::{FS_IMPORT, HELLO, KIND_THIEF, UNISWAP};
use std::path::Path;
use std::process::{Command, Output};

fn bardo(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bardo")).current_dir(dir).args(args).output().expect("run bardo")
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(HELLO, dir.path().join("plugins/hello.wasm")).expect("copy");
    std::fs::write(dir.path().join("bardo.toml"), "profile = \"data\"\nplugins = [\"plugins\"]\n")
        .expect("config");
    dir
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn tools_lists_the_profile() {
    let dir = setup();
    let o = bardo(dir.path(), &["tools"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(out.contains("hello_greet") && out.contains("hello@0.1.0") && out.contains("1000 ms"), "{out}");
    // A first start says what it compiles, and that it compiles once.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("compiling hello.wasm (1/1, ") && err.contains("once"), "{err}");
    let o = bardo(dir.path(), &["tools", "--json", "--profile", "trader,vault"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("compiling"), "cached: {o:?}");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["tools"][0]["tool"]["name"], "hello_greet");
    assert_eq!(json["tools"][0]["tool"]["category"], "data");
    assert_eq!(json["tools"][0]["tool"]["schema_version"], 1);
    // The profile table, as text and JSON, without a configuration or plugins.
    let o = bardo(dir.path(), &["tools", "--profiles"]);
    let out = stdout(&o);
    assert!(
        out.contains("conservative  not high-risk") && out.contains("data, trading, lp, safety"),
        "{out}"
    );
    let o = bardo(dir.path(), &["tools", "--profiles", "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(rows.as_array().map(Vec::len), Some(16), "{rows}");
    let trader = rows.as_array().and_then(|r| r.iter().find(|r| r["profile"] == "trader")).expect("trader");
    assert_eq!(trader["categories"], serde_json::json!(["data", "trading", "safety", "streaming"]));
    assert_eq!(trader["writes"], "all");
    let o = bardo(dir.path(), &["tools", "--profile", "wizard"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown profile `wizard`"));
}

#[test]
fn call_prints_result_and_costs() {
    let dir = setup();
    let o = bardo(dir.path(), &["call", "hello_greet", "--params", r#"{"name":"operator"}"#]);
    assert!(o.status.success(), "{o:?}");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["greeting"], "hello, operator");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("fuel ") && err.contains("wall ") && err.contains("peak memory"), "{err}");
    let o = bardo(dir.path(), &["call", "hello_greet", "--params", r#"{"name":""}"#]);
    assert_eq!(o.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["error"]["code"], "invalid-params");
}

#[test]
fn audit_prints_surface_and_exits_1_on_growth() {
    let dir = setup();
    let o = bardo(dir.path(), &["audit", HELLO]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(
        out.contains("world    Reader")
            && out.contains("bardo:host/chain@0.1.0")
            && out.contains("hello_greet"),
        "{out}"
    );
    assert_eq!(bardo(dir.path(), &["audit", HELLO, HELLO]).status.code(), Some(0));
    let o = bardo(dir.path(), &["audit", HELLO, FS_IMPORT, "--json"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["grew"], true);
}

#[test]
fn uniswap_tools_by_profile_plan_without_wallet_and_audit() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(bardo_test_artifacts::UNISWAP, dir.path().join("plugins/uniswap.wasm")).expect("copy");
    std::fs::write(dir.path().join("bardo.toml"), "profile = \"trader\"\nplugins = [\"plugins\"]\n")
        .expect("config");
    let names = |o: &Output| -> Vec<String> {
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        json["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["tool"]["name"].as_str().unwrap_or("").to_owned())
            .collect()
    };
    let key = bardo_devnet::DEV_KEY;
    let o = Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dir.path())
        .env("BARDO_PRIVATE_KEY", key)
        .args(["tools", "--json"])
        .output()
        .expect("run");
    let with_wallet = names(&o);
    for tool in ["uniswap_execute_swap", "uniswap_get_quote", "uniswap_get_pool_info", "data_get_token_price"]
    {
        assert!(with_wallet.iter().any(|t| t == tool), "trader lists {tool}: {with_wallet:?}");
    }
    assert!(!with_wallet.iter().any(|t| t == "uniswap_add_liquidity"), "liquidity is the lp profile's");
    let o = bardo(dir.path(), &["tools", "--json", "--profile", "lp"]);
    assert!(names(&o).iter().any(|t| t == "uniswap_get_position"));

    let o = Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dir.path())
        .env_remove("BARDO_PRIVATE_KEY")
        .args([
            "plan",
            "uniswap_execute_swap",
            "--params",
            r#"{"chain_id":1,"token_in":"WETH","token_out":"USDC","amount":"1"}"#,
        ])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["error"]["code"], "wallet-not-configured", "{json}");

    // A chain the host has no node for: the host's configuration is named, not the plugin's.
    let o = bardo(
        dir.path(),
        &[
            "call",
            "uniswap_get_pool_info",
            "--params",
            r#"{"chain_id":999,"token_a":"WETH","token_b":"USDC","fee":3000}"#,
        ],
    );
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["error"]["code"], "chain-not-supported", "{json}");
    let message = json["error"]["message"].as_str().expect("message");
    assert!(message.contains("[chains.999]") && !message.contains("plugin's"), "{message}");

    // A swap previewed in a profile that does not run it: the error names the profiles that do.
    let swap = r#"{"chain_id":1,"token_in":"WETH","token_out":"USDC","amount":"1"}"#;
    let o = Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dir.path())
        .env("BARDO_PRIVATE_KEY", key)
        .args(["preview", "swap", "--profile", "data", "--params", swap])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let message = json["error"]["message"].as_str().expect("message");
    assert_eq!(json["error"]["code"], "not-found", "{json}");
    for hint in [
        "uniswap_execute_swap",
        "in profiles ",
        " trader,",
        "not in `data`",
        "run with --profile ",
        "--profile data,",
    ] {
        assert!(message.contains(hint), "{hint} in {message}");
    }
    // Without a wallet the trader profile skips it, and says how to configure one.
    let o = Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dir.path())
        .env_remove("BARDO_PRIVATE_KEY")
        .args(["preview", "swap", "--params", swap])
        .output()
        .expect("run");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let message = json["error"]["message"].as_str().expect("message");
    assert_eq!(json["error"]["code"], "wallet-not-configured", "{json}");
    assert!(
        message.contains("BARDO_PRIVATE_KEY") && message.contains("bardo init --profile trader"),
        "{json}"
    );

    let o = bardo(dir.path(), &["audit", "plugins/uniswap.wasm"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    for expected in [
        "bardo:host/simulate",
        "bardo:host/signer",
        "bardo:host/config",
        "uniswap_execute_swap",
        "writer",
        "serves swap",
    ] {
        assert!(out.to_lowercase().contains(&expected.to_lowercase()), "audit shows {expected}: {out}");
    }
}

/// A working directory for a trader on `node`: the Uniswap plugin, the devnet's prices and
/// allowlist, the write path on files in `.bardo`.
pub(super) fn trader_dir(
    node: &bardo_devnet::Anvil,
    d: &bardo_devnet::deploy::Deployments,
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(bardo_test_artifacts::UNISWAP, dir.path().join("plugins/uniswap.wasm")).expect("copy");
    std::fs::write(dir.path().join("uniswap.json"), d.uniswap_settings().to_string()).expect("settings");
    std::fs::write(dir.path().join("pricing.json"), d.pricing_json().to_string()).expect("pricing");
    let allow: Vec<String> =
        d.write_targets().iter().map(|(a, role)| format!("\"{a}\" = \"{role}\"")).collect();
    let config = format!(
        "profile = \"trader\"\nplugins = [\"plugins\"]\n[chains.31337]\nrpc = \"{}\"\nhead_ttl_ms = 0\n\
         [settings]\nuniswap = \"uniswap.json\"\n[safety]\npricing_file = \"pricing.json\"\n[safety.allowlist.31337]\n{}\n",
        node.url(),
        allow.join("\n")
    );
    std::fs::write(dir.path().join("bardo.toml"), config).expect("config");
    dir
}

#[test]
fn preview_and_commit_in_separate_processes_execute_once_and_are_audited() {
    let (node, d) = bardo_test_support::devnet();
    let dir = trader_dir(&node, &d);
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_bardo"))
            .current_dir(dir.path())
            .env("BARDO_PRIVATE_KEY", bardo_devnet::DEV_KEY)
            .args(args)
            .output()
            .expect("run bardo")
    };
    let swap = r#"{"chain_id":31337,"token_in":"USDC","token_out":"WETH","amount":"250"}"#;
    let o = run(&["preview", "swap", "--params", swap]);
    assert!(o.status.success(), "{o:?}");
    let permit: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let id = permit["permit_id"].as_str().expect("permit id").to_owned();
    let o = run(&["commit", &id]);
    assert!(o.status.success(), "{o:?}");
    let result: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(result["ground_truth"], "receipt");
    assert_eq!(result["actual"]["amount_out_base"], permit["expected_outcome"]["amount_out_base"]);
    let o = run(&["commit", &id]);
    assert_eq!(o.status.code(), Some(1), "a second process cannot reuse the permit");
    assert!(stdout(&o).contains("already used"));

    // A halt in the permit file (as an agent's emergency_halt in another process leaves it)
    // stops every process's previews until the operator runs `bardo resume`.
    let permits = dir.path().join(".bardo/permits.json");
    let book = serde_json::json!({"halted": {"reason": "operator drill", "at_ms": 0}, "permits": {}});
    std::fs::write(&permits, book.to_string()).expect("halt");
    let o = run(&["preview", "swap", "--params", swap]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(stdout(&o).contains("1970-01-01 00:00:00 UTC for: operator drill"), "{o:?}");
    assert!(stdout(&o).contains("bardo resume"), "{o:?}");
    let o = run(&["resume"]);
    assert!(o.status.success(), "{o:?}");
    let resumed: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(resumed["resumed"], true);
    let o = run(&["preview", "swap", "--params", swap]);
    assert!(o.status.success(), "previews work again: {o:?}");

    // The records: the executed swap (once, whatever the second commit tried), the preview the
    // halt refused, the open permit.
    let o = run(&["records", "--json"]);
    assert!(o.status.success(), "{o:?}");
    let records: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let status: Vec<&str> =
        records.as_array().expect("list").iter().map(|r| r["status"].as_str().unwrap_or("?")).collect();
    assert_eq!(status, ["executed", "blocked", "deferred"], "{records}");
    assert_eq!(records[0]["permit_id"], id.as_str());
    assert_eq!(records[0]["outcome"]["verified"], true);
    assert!(records[0]["outcome"]["pnl_impact"].is_number(), "{records}");
    assert!(records[1]["block_reason"].as_str().is_some_and(|r| r.contains("operator drill")), "{records}");
    let o = run(&["records", "--status", "executed"]);
    assert!(
        stdout(&o).contains(&id)
            && stdout(&o).contains("verified from the receipt")
            && stdout(&o).contains("1 records"),
        "{o:?}"
    );
    let o = run(&["records", "--status", "lost"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");

    let o = run(&["audit-log", "verify"]);
    assert!(o.status.success() && stdout(&o).contains("intact"), "{o:?}");
    let log = dir.path().join(".bardo/audit.jsonl");
    let text = std::fs::read_to_string(&log).expect("log");
    std::fs::write(&log, text.replacen("\"ok\":true", "\"ok\":false", 1)).expect("tamper");
    let o = run(&["audit-log", "verify"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("TAMPERED"), "{o:?}");
}

/// `bardo stream stream_tokenjar` in `dir` on `jar`'s USDC, once it has subscribed; its stdout.
pub(super) fn stream_tokenjar(
    dir: &Path,
    jar: alloy::primitives::Address,
) -> (std::process::Child, std::io::BufReader<std::process::ChildStdout>) {
    use std::io::BufRead;
    let params = format!(r#"{{"chain_id":31337,"jar":"{}","tokens":["USDC"]}}"#, jar.to_checksum(None));
    let mut child = Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dir)
        .args(["stream", "stream_tokenjar", "--params", &params])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("bardo stream");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    // A first start says what it compiles before it subscribes.
    loop {
        line.clear();
        let read = stderr.read_line(&mut line).expect("stderr line");
        if read == 0 || !line.starts_with("compiling ") {
            break;
        }
    }
    assert!(line.contains("subscribed sub-1 to stream_tokenjar"), "{line}");
    // The rest of stderr is read too: a closed pipe would fail its last line at exit.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    (child, stdout)
}

#[test]
fn stream_prints_events_until_interrupted_and_events_replays_the_journal() {
    use alloy::network::TransactionBuilder;
    use alloy::providers::ProviderBuilder;
    use alloy::sol_types::SolCall;
    use std::io::BufRead;
    alloy::sol! { function transfer(address to, uint256 amount) external returns (bool); }

    let (node, d) = bardo_test_support::devnet();
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(bardo_test_artifacts::STREAMING, dir.path().join("plugins/streaming.wasm")).expect("copy");
    std::fs::write(dir.path().join("streaming.json"), d.streaming_settings().to_string()).expect("settings");
    let config = format!(
        "profile = \"data\"\nplugins = [\"plugins\"]\n[chains.31337]\nrpc = \"{}\"\n[settings]\nstreaming = \"streaming.json\"\n",
        node.url()
    );
    std::fs::write(dir.path().join("bardo.toml"), config).expect("config");
    let jar = d.accounts[7];
    let (mut child, printed) = stream_tokenjar(dir.path(), jar);

    let rt = bardo_test_support::runtime();
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url"));
    let call = transferCall { to: jar, amount: alloy::primitives::U256::from(42_000_000u64) };
    let tx = alloy::rpc::types::TransactionRequest::default()
        .from(d.deployer)
        .to(d.tokens["USDC"].address)
        .with_input(call.abi_encode());
    rt.block_on(bardo_test_support::send(&provider, tx));

    let mut stdout_lines = printed.lines();
    let first: serde_json::Value =
        serde_json::from_str(&stdout_lines.next().expect("an event").expect("line")).expect("json");
    assert_eq!(first["seq"], 1);
    assert_eq!(first["event"]["type"], "TokenJarUpdate");
    assert_eq!(first["event"]["data"]["movement"], "deposit");
    assert_eq!(first["event"]["data"]["amount"], "42");
    assert_eq!(first["event"]["pane"], "fees");

    let interrupted = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill");
    assert!(interrupted.success());
    let status = child.wait().expect("exit");
    assert!(status.success(), "Ctrl-C ends `bardo stream` cleanly: {status:?}");
    let rest: Vec<String> = stdout_lines.map_while(Result::ok).collect();
    assert!(rest.iter().any(|l| l.contains("StreamClosed")), "{rest:?}");

    let o = bardo(dir.path(), &["events", "--resume-from", "1", "--no-follow"]);
    assert!(o.status.success(), "{o:?}");
    let lines: Vec<serde_json::Value> =
        stdout(&o).lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    assert_eq!(lines[0], first, "the journal replays what was printed");
    assert_eq!(
        lines.iter().map(|l| l["seq"].as_u64().expect("seq")).collect::<Vec<_>>(),
        (1..=lines.len() as u64).collect::<Vec<_>>()
    );
    let o = bardo(dir.path(), &["events", "--resume-from", "2", "--no-follow"]);
    assert_eq!(stdout(&o).lines().count(), lines.len() - 1);
    // `--no-follow` alone prints all the journal holds.
    let o = bardo(dir.path(), &["events", "--no-follow"]);
    assert_eq!(stdout(&o).lines().count(), lines.len(), "{o:?}");
}

#[test]
fn a_plugin_whose_settings_file_is_missing_loads_and_says_which_file() {
    // A fresh checkout before `bardo devnet up`: the settings files do not exist yet.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(bardo_test_artifacts::WALLET, dir.path().join("plugins/wallet.wasm")).expect("copy");
    std::fs::copy(HELLO, dir.path().join("plugins/hello.wasm")).expect("copy");
    let config = "profile = \"trader\"\nplugins = [\"plugins\"]\n[chains.31337]\nrpc = \"http://127.0.0.1:9\"\n\
                  [settings]\nwallet = \".bardo/settings/wallet.json\"\n";
    std::fs::write(dir.path().join("bardo.toml"), config).expect("config");
    let o = bardo(dir.path(), &["tools"]);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("wallet_get_balances"), "the plugin loads");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("wallet.json").count(), 1, "one warning: {err}");
    let o = bardo(dir.path(), &["call", "wallet_get_gas_price", "--params", r#"{"chain_id":31337}"#]);
    assert_eq!(o.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["error"]["code"], "denied");
    let message = json["error"]["message"].as_str().expect("message");
    assert!(message.contains("wallet.json") && message.contains("bardo devnet up"), "{message}");
    // Plugins that need no settings are unaffected.
    let o = bardo(dir.path(), &["call", "hello_greet", "--params", r#"{"name":"operator"}"#]);
    assert!(o.status.success(), "{o:?}");
}

#[test]
fn devnet_up_and_down_work_with_a_config_outside_the_repository() {
    use alloy::sol_types::SolCall;
    // The config in one directory, the command run from another: `devnet/` is found in the
    // checkout bardo was built from; state and settings go next to the config.
    let (home, elsewhere) = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
    let free =
        || std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    // The second chain's default is the first's port + 1, which another test's connection may
    // hold (it did, once): this test names a free one (the default is unit-tested).
    let (port, second_port) = (free(), free());
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

#[test]
fn archetypes_are_checked_and_scope_a_sessions_tools_and_delegations() {
    let dir = setup();
    std::fs::copy(bardo_test_artifacts::WALLET, dir.path().join("plugins/wallet.wasm")).expect("copy");
    // The built-in set: the specification's hierarchy, valid.
    let o = bardo(dir.path(), &["archetypes", "check"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert!(out.contains("golem-instance") && out.contains("trade-executor (writes;"), "{out}");
    assert!(out.contains("the delegation graph is valid"), "{out}");

    // A file breaking two rules: both reported, exit 1.
    std::fs::write(
        dir.path().join("bad.toml"),
        "[archetype.a]\ncategories = [\"trading\"]\ndelegates_to = [\"b\"]\n\
         [archetype.b]\ncategories = [\"data\"]\ndelegates_to = [\"a\"]\n",
    )
    .expect("bad.toml");
    let o = bardo(dir.path(), &["archetypes", "check", "--file", "bad.toml"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("delegation cycle a -> b -> a"), "{err}");
    assert!(err.contains("`a` can write (trading) but does not delegate to `safety-guardian`"), "{err}");
    // The same as JSON: the graph, or the violations.
    let o = bardo(dir.path(), &["archetypes", "list", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let executor = listed["archetypes"]
        .as_array()
        .expect("archetypes")
        .iter()
        .find(|a| a["name"] == "trade-executor")
        .expect("trade-executor");
    assert_eq!(
        (&executor["role"], &executor["writes"]),
        (&serde_json::json!("writes"), &serde_json::json!(true))
    );
    assert!(executor["delegates_to"].as_array().expect("delegates").contains(&"safety-guardian".into()));
    let o = bardo(dir.path(), &["archetypes", "list", "--json", "--file", "bad.toml"]);
    assert_eq!(o.status.code(), Some(1));
    let violations: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let violations = violations["violations"].as_array().expect("violations");
    assert!(
        violations.iter().any(|v| v.as_str().is_some_and(|v| v.contains("delegation cycle"))),
        "{violations:?}"
    );

    // A session scoped to an archetype: its categories' tools, its delegations.
    let o = bardo(dir.path(), &["tools", "--archetype", "pool-researcher"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert!(out.contains("erc20_get_allowance") && !out.contains("wallet_transfer"), "{out}");
    assert!(out.contains("archetype `pool-researcher` delegates to nobody (terminal)"), "{out}");
    let o = bardo(dir.path(), &["tools", "--archetype", "trade-executor"]);
    let out = stdout(&o);
    assert!(out.contains("wallet_transfer"), "{out}");
    assert!(out.contains("may delegate to: safety-guardian, risk-assessor"), "{out}");
    let o = bardo(dir.path(), &["tools", "--archetype", "nobody"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown archetype `nobody`"));
    let o = bardo(dir.path(), &["tools", "--archetype", "trade-executor", "--profile", "data"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot be used with"), "{o:?}");
}

/// `bardo audit OLD NEW` on a breaking params change: shown, and exit 1 unless it comes with a
/// new major version.
#[test]
fn audit_of_two_versions_shows_a_breaking_params_change_and_its_schema_version() {
    use bardo_test_artifacts::{ECHO_V2, ECHO_V2_1, ECHO_V4};
    let dir = tempfile::tempdir().expect("tempdir");
    let o = bardo(dir.path(), &["audit", ECHO_V2, ECHO_V2_1]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("! params echo_get_version changes the type of `n` (schema version 1 -> 2; breaking)"),
        "{out}"
    );
    assert!(out.contains("INCOMPATIBLE: `echo_get_version`'s params change incompatibly"), "{out}");
    let o = bardo(dir.path(), &["audit", ECHO_V2, ECHO_V4]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("breaking") && !out.contains("INCOMPATIBLE"), "{out}");
}

/// Each part of the host owns its section of bardo.toml; a key none of them knows is refused, by
/// any command, naming the file and the key — in a part's section and at the top level alike.
#[test]
fn a_key_no_part_of_the_host_knows_is_refused_with_the_file_and_the_key() {
    let dir = setup();
    let file = dir.path().join("bardo.toml");
    let base = std::fs::read_to_string(&file).expect("config");
    for (extra, says) in [
        ("[safety]\nttl_sec = 5\n", &["[safety]", "ttl_sec", "did you mean `ttl_secs`?"][..]),
        ("[agent]\nspeculate = true\n", &["[agent]", "speculate"]),
        ("[mcp]\ntoken_env = \"X\"\n", &["[mcp]", "token_env"]),
        ("[tui]\nfollows = []\n", &["[tui]", "follows"]),
        ("[sidecar]\ngrants = []\n", &["[sidecar]", "grants"]),
        ("[cluster]\nnats = []\nreplica = 3\n", &["[cluster]", "replica"]),
        ("[limits]\nfuell = 1\n", &["fuell"]),
        ("[safty]\nttl_secs = 5\n", &["unknown key `safty`; did you mean `safety`?"]),
        ("profil = \"data\"\n", &["unknown key `profil`; did you mean `profile`?"]),
    ] {
        std::fs::write(&file, format!("{base}{extra}")).expect("config");
        let o = bardo(dir.path(), &["tools"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra}: {err}");
        assert!(err.contains("bardo.toml"), "{extra}: names the file: {err}");
        for word in says {
            assert!(err.contains(word), "{extra}: names {word}: {err}");
        }
    }
    // The sections each part reads, well formed, are taken.
    let good = "[safety]\nttl_secs = 5\n[agent]\nspeculation = false\n[mcp]\nallowed_hosts = []\n\
                [tui]\nfollow = []\n[sidecar]\ncross_check = true\n";
    std::fs::write(&file, format!("{base}{good}")).expect("config");
    let o = bardo(dir.path(), &["tools"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_tool_name_two_plugins_declare_is_resolved_by_the_line_the_refusal_suggests() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(UNISWAP, dir.path().join("plugins/a-uniswap.wasm")).expect("copy");
    std::fs::copy(KIND_THIEF, dir.path().join("plugins/b-thief.wasm")).expect("copy");
    let config = |disable: &str| {
        let text = format!("profile = \"data\"\nplugins = [\"plugins\"]\n[tools]\ndisable = [{disable}]\n");
        std::fs::write(dir.path().join("bardo.toml"), text).expect("config");
    };
    // The thief's `swap` claim is out of the way; its read tool shares Uniswap's name.
    config(r#""kind-thief:thief_plan_swap""#);
    let o = bardo(dir.path(), &["tools", "--json"]);
    let refused = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(refused.contains("[tools] disable = [\"kind-thief:uniswap_get_pool_info\"]"), "{refused}");
    let plugins = |o: &Output| -> Vec<String> {
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        let mut names: Vec<String> = json["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| {
                format!("{}:{}", t["plugin"].as_str().unwrap_or(""), t["tool"]["name"].as_str().unwrap_or(""))
            })
            .collect();
        names.sort();
        names
    };
    assert!(plugins(&o).iter().all(|t| !t.starts_with("kind-thief:")), "the thief was not loaded");
    // The suggested line: both load; the name is Uniswap's.
    config(r#""kind-thief:thief_plan_swap", "kind-thief:uniswap_get_pool_info""#);
    let o = bardo(dir.path(), &["tools", "--json"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("refused"), "{o:?}");
    let served = plugins(&o);
    assert!(served.contains(&"uniswap:uniswap_get_pool_info".to_owned()), "{served:?}");
    assert!(!served.iter().any(|t| t.starts_with("kind-thief:")), "{served:?}");
    // The bare name disables it in both plugins, which then load side by side.
    config(r#""kind-thief:thief_plan_swap", "uniswap_get_pool_info""#);
    let o = bardo(dir.path(), &["tools", "--json"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("refused"), "{o:?}");
    assert!(!plugins(&o).iter().any(|t| t.ends_with(":uniswap_get_pool_info")), "{o:?}");
}

#[test]
fn without_a_configuration_bardo_says_so_and_init_writes_one_that_loads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = bardo(dir.path(), &["tools"]);
    let said = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(said.contains("no bardo.toml here") && said.contains("bardo init"), "{said}");
    let o = bardo(dir.path(), &["init"]);
    assert!(o.status.success(), "{o:?}");
    let written = std::fs::read_to_string(dir.path().join("bardo.toml")).expect("written");
    assert!(written.contains("profile = \"data\"") && written.contains("# confirm = \"never\""), "{written}");
    // It loads, and says nothing about a missing file any more.
    let o = bardo(dir.path(), &["tools", "--json"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("no bardo.toml"), "{o:?}");
    serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("tools as JSON");
    // A second init leaves the file as it is.
    std::fs::write(dir.path().join("bardo.toml"), "profile = \"lp\"\n").expect("edit");
    let o = bardo(dir.path(), &["init"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(std::fs::read_to_string(dir.path().join("bardo.toml")).expect("kept"), "profile = \"lp\"\n");
}

#[test]
fn call_and_preview_answer_params_that_are_not_json_alike() {
    let dir = setup();
    let call = bardo(dir.path(), &["call", "hello_greet", "--params", "{bad"]);
    let preview = bardo(dir.path(), &["preview", "swap", "--params", "{bad"]);
    for o in [&call, &preview] {
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("a JSON error");
        assert_eq!(json["error"]["code"], "invalid-params", "{json}");
        assert!(json["error"]["message"].as_str().is_some_and(|m| m.contains("are not JSON")), "{json}");
    }
}

#[test]
fn tools_describe_shows_what_a_tool_takes_and_errors_name_what_was_meant() {
    let dir = setup();
    std::fs::copy(UNISWAP, dir.path().join("plugins/uniswap.wasm")).expect("copy");
    let with_key = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_bardo"))
            .current_dir(dir.path())
            .args(args)
            .env("BARDO_PRIVATE_KEY", "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
            .output()
            .expect("run bardo")
    };
    let error = |o: &Output| -> serde_json::Value {
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("json")["error"].clone()
    };
    // `bardo tools` shows the action kinds a write tool serves.
    let out = stdout(&with_key(&["tools", "--profile", "trader"]));
    let swap = out.lines().find(|l| l.starts_with("uniswap_execute_swap ")).expect("listed");
    assert!(swap.trim_end().ends_with(" swap"), "{swap}");

    // Params with types, required marks and defaults, and a command to start from.
    let o = bardo(dir.path(), &["tools", "describe", "uniswap_get_quote"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{o:?}");
    for part in ["amount*", "token_in*", "exact_in|exact_out", "(default \"exact_in\")", "v2|v3|v4 "] {
        assert!(out.contains(part), "{part} in {out}");
    }
    assert!(
        out.contains(r#"bardo call uniswap_get_quote --profile data --params '{"amount":"<string>","#),
        "{out}"
    );
    // A write tool without a wallet is described (not callable), with its kind and profiles.
    let o =
        bardo(dir.path(), &["tools", "describe", "uniswap_execute_swap", "--profile", "trader", "--json"]);
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        (d["action_kinds"].clone(), d["callable"].clone()),
        (serde_json::json!(["swap"]), false.into())
    );
    assert!(
        d["example"].as_str().is_some_and(|e| e.starts_with("bardo preview swap --profile trader --params")),
        "{d}"
    );
    let slippage = d["params"].as_array().and_then(|ps| ps.iter().find(|p| p["name"] == "slippage_bps"));
    assert_eq!(
        slippage.map(|p| (p["required"].clone(), p["default"].clone())),
        Some((false.into(), 50.into()))
    );
    assert!(d["profiles"].as_array().is_some_and(|ps| ps.contains(&"trader".into())), "{d}");

    // Did you mean: a tool, a param, an action kind; and the profiles that run a tool.
    let e = error(&bardo(dir.path(), &["tools", "describe", "uniswap_get_qoute"]));
    assert!(e["message"].as_str().is_some_and(|m| m.contains("did you mean `uniswap_get_quote`?")), "{e}");
    let params = r#"{"chain_id":31337,"tokenIn":"WETH","token_out":"USDC","amount":"1"}"#;
    let e = error(&bardo(dir.path(), &["call", "uniswap_get_quote", "--params", params]));
    assert_eq!(e["code"], "invalid-params");
    assert!(e["message"].as_str().is_some_and(|m| m.contains("`tokenIn`: did you mean `token_in`?")), "{e}");
    let e = error(&with_key(&["call", "uniswap_execute_swap", "--params", "{}"]));
    assert_eq!(e["code"], "not-found");
    let m = e["message"].as_str().unwrap_or_default();
    assert!(
        m.contains("not in profile `data`") && m.contains("profiles that run it:") && m.contains("trader"),
        "{m}"
    );
    let e = error(&with_key(&["preview", "swapp", "--profile", "trader", "--params", "{}"]));
    assert!(e["message"].as_str().is_some_and(|m| m.contains("did you mean `swap`?")), "{e}");
}

#[test]
fn completions_load_in_bash_and_commit_reads_a_preview_from_stdin() {
    let dir = setup();
    let script = stdout(&bardo(dir.path(), &["completions", "bash"]));
    assert!(script.contains("describe"), "subcommands are completed");
    let loaded = Command::new("bash")
        .args(["-c", "source /dev/stdin; complete -p bardo"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().expect("stdin").write_all(script.as_bytes())?;
            child.wait_with_output()
        })
        .expect("bash");
    assert!(stdout(&loaded).contains("-F _bardo"), "{loaded:?}");

    // Flags show only where they act: `--archetype` on the commands a profile scopes.
    let help = |args: &[&str]| stdout(&bardo(dir.path(), args));
    assert!(help(&["tools", "--help"]).contains("--archetype"));
    for command in [
        &["devnet", "up", "--help"][..],
        &["cancel", "--help"],
        &["audit", "--help"],
        &["plugin", "new", "--help"],
    ] {
        assert!(!help(command).contains("--archetype"), "{command:?} shows --archetype");
    }
    let plugin = help(&["plugin", "--help"]);
    assert!(plugin.contains("new") && plugin.contains("keygen"), "{plugin}");
    assert_eq!(bardo(dir.path(), &["cancel", "x", "--archetype", "trade-executor"]).status.code(), Some(2));

    // `bardo commit -` takes the permit id from a preview's JSON, and says so when there is none.
    let piped = |stdin: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bardo"))
            .current_dir(dir.path())
            .args(["commit", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("bardo");
        std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), stdin.as_bytes()).expect("write");
        child.wait_with_output().expect("bardo")
    };
    let refused = piped(r#"{"error":{"code":"denied","message":"over the daily limit"}}"#);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && err.contains("the preview was refused: over the daily limit"),
        "{err}"
    );
    let unknown = piped(r#"{"permit_id": "permit-00ff"}"#);
    let out = stdout(&unknown);
    assert!(out.contains("permit-00ff"), "the id read from stdin is the one committed: {out}");
}

/// `bardo audit` of the morpho plugin: a writer that reads the chain and the wallet's address and
/// nothing more (no simulation, no Uniswap SDK, no testnet cheats), and its ten lending tools —
/// the borrow the only high-risk one — each write serving its own action kind.
#[test]
fn audit_shows_the_morpho_plugins_surface() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(bardo_test_artifacts::MORPHO, dir.path().join("morpho.wasm")).expect("copy");
    let o = bardo(dir.path(), &["audit", "morpho.wasm"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    for expected in
        ["morpho@0.1.0", "world    Writer", "bardo:host/chain", "bardo:host/signer", "bardo:host/config"]
    {
        assert!(out.contains(expected), "audit shows {expected}: {out}");
    }
    for absent in [
        "bardo:host/simulate",
        "bardo:host/uniswap-sdk",
        "bardo:host/testnet",
        "wasi:sockets",
        "wasi:filesystem",
    ] {
        assert!(!out.contains(absent), "the plugin does not import {absent}: {out}");
    }
    let tools: Vec<&str> = out.lines().filter(|l| l.trim_start().starts_with("morpho_")).collect();
    assert_eq!(tools.len(), 10, "{out}");
    assert!(tools.iter().all(|l| l.contains("lending")), "{out}");
    let high: Vec<&str> = tools.iter().filter(|l| l.contains("risk high")).copied().collect();
    assert!(
        high.len() == 1 && high[0].contains("morpho_borrow") && high[0].contains("serves morpho-borrow"),
        "{out}"
    );
}

/// `bardo audit` reads a component before anything validates it: a kind written as prose for
/// the host's prompt is shown escaped on its own line, never as lines of the host's output.
#[test]
fn audit_shows_a_plugins_text_escaped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = bardo(dir.path(), &["audit", bardo_test_artifacts::PROMPT_KIND]);
    let out = stdout(&o);
    assert!(out.contains("prompt_plan_swap"), "{out}");
    assert!(out.contains("swap`\\n  spends 0.00 USD"), "escaped: {out}");
    assert!(!out.lines().any(|l| l.trim_start().starts_with("spends 0.00 USD")), "no forged line: {out}");
}
