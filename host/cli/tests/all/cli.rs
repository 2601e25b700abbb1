//! The `bardo` binary, as an operator runs it.

use bardo_test_artifacts::HELLO;
use std::path::Path;
use std::process::{Command, Output};

pub(super) fn bardo(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bardo")).current_dir(dir).args(args).output().expect("run bardo")
}

pub(super) fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(HELLO, dir.path().join("plugins/hello.wasm")).expect("copy");
    std::fs::write(dir.path().join("bardo.toml"), "profile = \"data\"\nplugins = [\"plugins\"]\n")
        .expect("config");
    dir
}

pub(super) fn stdout(o: &Output) -> String {
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
