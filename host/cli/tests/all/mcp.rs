//! `bardo mcp` driven by the official MCP clients, not a hand-written one: the Python SDK
//! (`tests/clients/mcp_client.py`, over stdio and streamable HTTP) and the TypeScript SDK
//! (`tests/clients/mcp_client.mjs`, over stdio). `scripts/setup.sh` installs both.

use super::free_port;
use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, U256};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol_types::SolCall;
use bardo_devnet::{CHAIN_ID, DEV_KEY};
use bardo_test_artifacts::{ECHO_V1, ECHO_V3, HOSTILE, STREAMING, UNISWAP};
use bardo_test_support::{devnet, root, runtime};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

alloy::sol! {
    function balanceOf(address account) external view returns (uint256);
    function slot0() external view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex,
        uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked);
    function liquidity() external view returns (uint128);
}

pub(super) fn clients() -> PathBuf {
    root().join("tests/clients")
}

/// The project's Python with the MCP SDK; its absence fails the test (never a silent skip).
pub(super) fn python() -> PathBuf {
    let p = clients().join(".venv/bin/python");
    assert!(p.exists(), "{} is missing: run scripts/setup.sh (or `make setup`)", p.display());
    p
}

/// A directory with `bardo.toml` and the given plugins.
pub(super) struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    pub(super) fn new(profile: &str, plugins: &[(&str, &str)], extra_config: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
        for (name, file) in plugins {
            std::fs::copy(file, dir.path().join("plugins").join(name)).expect("copy plugin");
        }
        let config = format!("profile = \"{profile}\"\nplugins = [\"plugins\"]\n{extra_config}");
        std::fs::write(dir.path().join("bardo.toml"), config).expect("config");
        Self { dir }
    }

    /// A trader workspace on `node`: Uniswap and the streams, the devnet's settings, pricing
    /// and allowlist.
    pub(super) fn trader(node: &bardo_devnet::Anvil, d: &bardo_devnet::deploy::Deployments) -> Self {
        Self::trader_with(node, d, "")
    }

    /// [`Self::trader`] with more `[safety]` lines (`confirm = "always"`).
    pub(super) fn trader_with(
        node: &bardo_devnet::Anvil,
        d: &bardo_devnet::deploy::Deployments,
        safety: &str,
    ) -> Self {
        let allow: Vec<String> =
            d.write_targets().iter().map(|(a, role)| format!("\"{a}\" = \"{role}\"")).collect();
        let extra = format!(
            "[chains.31337]\nrpc = \"{}\"\nhead_ttl_ms = 0\n[settings]\nuniswap = \"uniswap.json\"\n\
             streaming = \"streaming.json\"\n[safety]\npricing_file = \"pricing.json\"\n{safety}\n[safety.allowlist.31337]\n{}\n",
            node.url(),
            allow.join("\n")
        );
        let w = Self::new("trader", &[("uniswap.wasm", UNISWAP), ("streaming.wasm", STREAMING)], &extra);
        let p = w.path();
        std::fs::write(p.join("uniswap.json"), d.uniswap_settings().to_string()).expect("settings");
        std::fs::write(p.join("streaming.json"), d.streaming_settings().to_string()).expect("settings");
        std::fs::write(p.join("pricing.json"), d.pricing_json().to_string()).expect("pricing");
        w
    }

    pub(super) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The events of the write path's audit log (`.bardo/audit.jsonl`), in order.
    pub(super) fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(self.path().join(".bardo/audit.jsonl"))
            .expect("audit log")
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("json")["event"].clone())
            .collect()
    }

    /// `bardo --config <dir>/bardo.toml mcp <extra>`.
    pub(super) fn server(&self, extra: &[&str]) -> Vec<String> {
        let mut cmd = vec![
            env!("CARGO_BIN_EXE_bardo").to_owned(),
            "--config".into(),
            self.path().join("bardo.toml").display().to_string(),
            "mcp".into(),
        ];
        cmd.extend(extra.iter().map(|s| (*s).to_owned()));
        cmd
    }

    pub(super) fn bardo(&self, args: &[&str]) -> std::process::Output {
        Command::new(env!("CARGO_BIN_EXE_bardo"))
            .arg("--config")
            .arg(self.path().join("bardo.toml"))
            .args(args)
            .env("BARDO_PRIVATE_KEY", DEV_KEY)
            .output()
            .expect("run bardo")
    }
}

/// A Python client scenario against `server` (a command line, over stdio) or an HTTP URL.
pub(super) fn python_client(args: &[&str]) -> Command {
    let mut cmd = Command::new(python());
    cmd.arg(clients().join("mcp_client.py")).args(args).env("BARDO_PRIVATE_KEY", DEV_KEY);
    cmd
}

/// Run a scenario to its end; the JSON lines it printed.
pub(super) fn scenario(args: &[&str], server: &[String]) -> Vec<Value> {
    let mut cmd = python_client(args);
    if !server.is_empty() {
        cmd.arg("--stdio").arg("--").args(server);
    }
    let out = cmd.output().expect("run the Python MCP client");
    assert!(
        out.status.success(),
        "client failed: {}\nstdout: {}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

pub(super) fn one(args: &[&str], server: &[String]) -> Value {
    scenario(args, server).pop().expect("the scenario printed nothing")
}

/// The typed error a tool result carries.
pub(super) fn tool_error(outcome: &Value) -> Value {
    assert_eq!(outcome["isError"], true, "{outcome}");
    serde_json::from_str(outcome["text"].as_str().expect("text")).expect("error JSON")
}

pub(super) fn view<C: SolCall>(url: &str, to: Address, call: C) -> C::Return {
    let provider = ProviderBuilder::new().connect_http(url.parse().expect("url"));
    let tx = TransactionRequest::default().to(to).with_input(call.abi_encode());
    let out = runtime().block_on(provider.call(tx).into_future()).expect("eth_call");
    C::abi_decode_returns(&out).expect("decode")
}

fn annotation(tools: &[Value], name: &str, hint: &str) -> Value {
    let tool = tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("{name} not listed"));
    tool["annotations"][hint].clone()
}

#[test]
fn python_over_stdio_lists_reads_previews_commits_once_and_reports_progress_and_errors() {
    let (node, d) = devnet();
    let w = Workspace::trader(&node, &d);
    let server = w.server(&["--expose", "concrete"]);

    // The listing: agent tools, concrete read tools with their ToolDefs' schemas, never a write tool.
    let listed = one(&["list"], &server);
    assert_eq!(listed["server"]["name"], "bardo", "{listed}");
    assert!(listed["instructions"].as_str().is_some_and(|i| i.contains("commit_action")), "{listed}");
    assert_eq!(listed["capabilities"]["tools"]["listChanged"], true, "{listed}");
    assert_eq!(listed["capabilities"]["resources"]["subscribe"], true, "{listed}");
    let tools = listed["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for agent in [
        "preview_action",
        "commit_action",
        "cancel_action",
        "query_state",
        "search_context",
        "emergency_halt",
    ] {
        assert!(names.contains(&agent), "{agent} missing from {names:?}");
    }
    assert!(names.contains(&"uniswap_get_pool_info"), "{names:?}");
    // Every schema in a dialect every client reads: no `["string", "null"]` type arrays, no
    // `{"type": "null"}` branches (what the MCP Inspector's --strict flags as not portable).
    fn portable(v: &Value) -> bool {
        match v {
            Value::Object(o) => {
                !o.get("type").is_some_and(|t| t.is_array() || t == "null") && o.values().all(portable)
            }
            Value::Array(a) => a.iter().all(portable),
            _ => true,
        }
    }
    let not_portable: Vec<&str> =
        tools.iter().filter(|t| !portable(&t["inputSchema"])).filter_map(|t| t["name"].as_str()).collect();
    assert!(not_portable.is_empty(), "nullable type arrays in {not_portable:?}");
    assert!(!names.iter().any(|n| n.starts_with("uniswap_execute") || n.starts_with("stream_")), "{names:?}");
    let defs: Value = serde_json::from_slice(&w.bardo(&["tools", "--json"]).stdout).expect("tools --json");
    let def =
        defs["tools"].as_array().expect("defs").iter().find(|t| t["tool"]["name"] == "uniswap_get_pool_info");
    let listed_schema =
        &tools.iter().find(|t| t["name"] == "uniswap_get_pool_info").expect("listed")["inputSchema"];
    assert_eq!(listed_schema, &def.expect("def")["tool"]["input_schema"]);
    assert_eq!(annotation(tools, "uniswap_get_pool_info", "readOnlyHint"), true);
    assert_eq!(annotation(tools, "query_state", "readOnlyHint"), true);
    assert_eq!(annotation(tools, "commit_action", "destructiveHint"), true);
    assert_eq!(annotation(tools, "commit_action", "readOnlyHint"), false);
    assert_eq!(annotation(tools, "cancel_action", "idempotentHint"), true);

    // A read equals the contract's own answer; its progress steps arrive in order, named.
    let pool_params =
        json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000}).to_string();
    let read = one(&["progress", "--tool", "uniswap_get_pool_info", "--args", &pool_params], &server);
    assert_eq!(read["isError"], false, "{read}");
    let info = &read["structured"];
    let pool: Address = info["address"].as_str().expect("address").parse().expect("address");
    let slot0 = view(&node.url(), pool, slot0Call {});
    assert_eq!(info["sqrt_price_x96"].as_str(), Some(slot0.sqrtPriceX96.to_string().as_str()), "{info}");
    assert_eq!(info["tick"], json!(slot0.tick.as_i32()));
    assert_eq!(info["liquidity"], json!(view(&node.url(), pool, liquidityCall {}).to_string()));
    assert_eq!(
        read["progress"],
        json!([
            {"progress": 1.0, "total": 2.0, "message": "resolve tokens"},
            {"progress": 2.0, "total": 2.0, "message": "read pool"}
        ]),
        "{read}"
    );

    // Preview and commit a swap: the balances move as the permit said; a second commit is refused.
    let (weth, usdc) = (d.tokens["WETH"].address, d.tokens["USDC"].address);
    let balances = || {
        let b = |t| view(&node.url(), t, balanceOfCall { account: d.deployer });
        (b(weth), b(usdc))
    };
    let before = balances();
    let swap =
        json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1000"}).to_string();
    let done = one(&["swap", "--args", &swap], &server);
    let expected = &done["preview"]["expected_outcome"];
    assert_eq!(done["commit"]["isError"], false, "{done}");
    let committed = &done["commit"]["structured"];
    assert_eq!(committed["ground_truth"], "receipt", "{done}");
    let after = balances();
    let base = |v: &Value| U256::from_str_radix(v.as_str().expect("base units"), 10).expect("number");
    assert_eq!(after.0 - before.0, base(&expected["amount_out_base"]), "WETH received");
    assert_eq!(before.1 - after.1, base(&expected["amount_in_base"]), "USDC paid");
    let second = tool_error(&done["second"]);
    assert_eq!(second["code"], "denied", "{second}");
    assert!(second["message"].as_str().expect("message").contains("already used"), "{second}");
    assert_eq!(second["retryable"], false);
    // The session's write path is journaled (what `bardo tui` and `bardo events` follow): the
    // permit's life in order, sequence numbers contiguous.
    let id = done["preview"]["permit_id"].as_str().expect("permit id");
    let journal = std::fs::read_to_string(w.path().join(".bardo/events.jsonl")).expect("the journal");
    let lines: Vec<Value> = journal.lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    let seqs: Vec<u64> = lines.iter().map(|l| l["seq"].as_u64().expect("seq")).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
    let life: Vec<&str> = lines
        .iter()
        .filter(|l| l["event"]["permit_id"] == id)
        .map(|l| l["event"]["type"].as_str().expect("type"))
        .collect();
    assert_eq!(
        life,
        [
            "PermitCreated",
            "PermitConsumed",
            "ActionExecuted",
            "ActionExecuted",
            "ActionExecuted",
            "PermitRefused"
        ],
        "{journal}"
    );
    assert!(journal.contains("\"ToolExecutionEnd\""), "{journal}");
    // The read is there too, step by step, with what it cost.
    let read_life: Vec<&str> = lines
        .iter()
        .filter(|l| l["event"]["tool"] == "uniswap_get_pool_info")
        .map(|l| l["event"]["type"].as_str().expect("type"))
        .collect();
    assert_eq!(
        read_life,
        ["ToolExecutionStart", "ToolExecutionUpdate", "ToolExecutionUpdate", "ToolExecutionEnd"],
        "{journal}"
    );

    // Params that break the tool's schema are refused by the host, naming the path; an unknown
    // tool is a JSON-RPC error.
    let bad_params = json!({"chain_id": CHAIN_ID, "token_a": 5, "token_b": "USDC"}).to_string();
    let bad = one(&["bad", "--tool", "uniswap_get_pool_info", "--args", &bad_params], &server);
    let e = tool_error(&bad["bad"]);
    assert_eq!(e["code"], "invalid-params", "{bad}");
    assert!(e["message"].as_str().expect("message").contains("/token_a"), "{bad}");
    assert_eq!(bad["unknown"]["error"]["code"], -32602, "{bad}");
    assert!(bad["unknown"]["error"]["message"].as_str().expect("message").contains("no_such_tool"), "{bad}");
}

#[test]
fn python_stream_resource_is_updated_by_a_swap_and_read_back() {
    let (node, d) = devnet();
    let w = Workspace::trader(&node, &d);
    // The wallet's own trades: whatever pool the route picks, its swap is one.
    let params = json!({"chain_ids": [CHAIN_ID], "wallet": d.deployer.to_checksum(None)}).to_string();
    let encoded: String = params.bytes().map(|b| format!("%{b:02X}")).collect();
    let uri = format!("bardo://streams/stream_trades?params={encoded}");
    let swap =
        json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "500"}).to_string();
    let seen = one(&["stream", "--uri", &uri, "--args", &swap], &w.server(&[]));
    let templates = seen["templates"].as_array().expect("templates");
    assert!(
        templates.iter().any(|t| t["uriTemplate"] == "bardo://streams/stream_trades{?params}"),
        "{templates:?}"
    );
    assert!(!templates.iter().any(|t| t["uriTemplate"].as_str().is_some_and(|u| u.contains("uniswap_"))));
    assert_eq!(seen["updated"], uri);
    assert_eq!(seen["commit"]["isError"], false, "{seen}");
    let events = seen["contents"][0]["events"].as_array().expect("events");
    let trade = events
        .iter()
        .map(|e| &e["event"])
        .find(|e| e["type"] == "SwapExecuted")
        .unwrap_or_else(|| panic!("no trade in {events:?}"));
    assert_eq!(trade["tool"], "stream_trades", "{trade}");
    assert_eq!(
        (trade["data"]["sold"]["symbol"].as_str(), trade["data"]["sold"]["amount"].as_str()),
        (Some("USDC"), Some("500"))
    );
    assert_eq!(trade["data"]["bought"]["symbol"], "WETH", "{trade}");
    assert_eq!(
        trade["data"]["bought"]["amount_base"], seen["commit"]["structured"]["actual"]["amount_out_base"],
        "{trade}"
    );
}

#[test]
fn python_sees_tools_list_changed_after_an_approved_update() {
    let w = Workspace::new("dev", &[("echo.wasm", ECHO_V1)], "");
    assert!(w.bardo(&["lock"]).status.success());
    let mut client = python_client(&["list-changed", "--stdio", "--"])
        .args(w.server(&["--watch-ms", "50"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("client");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(client.stdout.take().expect("stdout")));
    let mut next = || -> Value {
        let line = lines.next().expect("a line").expect("read");
        serde_json::from_str(&line).expect("json")
    };
    let ready = next();
    assert_eq!(
        ready["tools"].as_array().map(|t| t.iter().any(|n| n == "preview_action")),
        Some(false),
        "{ready}"
    );
    // The operator approves echo 0.3.0 (it adds a write tool): the agent gains preview/commit.
    std::fs::copy(ECHO_V3, w.path().join("plugins/echo.wasm")).expect("update");
    assert!(w.bardo(&["lock"]).status.success());
    let changed = next();
    assert_eq!(changed["changed"], true, "{changed}");
    let tools: Vec<&str> =
        changed["tools"].as_array().expect("tools").iter().filter_map(Value::as_str).collect();
    assert!(tools.contains(&"preview_action") && tools.contains(&"commit_action"), "{tools:?}");
    assert!(client.wait().expect("exit").success());
}

#[test]
fn python_cancels_a_call_stuck_in_a_hostile_loop_and_the_server_keeps_serving() {
    // Fuel enough to spin past the cancel: only the cancel (or the 1 s budget) stops it.
    let w = Workspace::new("dev", &[("hostile.wasm", HOSTILE)], "[limits]\nfuel = 100000000000\n");
    let out = one(
        &[
            "cancel",
            "--tool",
            "hostile_spin",
            "--after-ms",
            "150",
            "--then-tool",
            "hostile_echo",
            "--then-args",
            r#"{"text":"still here"}"#,
        ],
        &w.server(&["--expose", "concrete"]),
    );
    assert_eq!(out["then"]["isError"], false, "{out}");
    assert_eq!(out["then"]["text"], "\"still here\"", "{out}");
    let logs = out["logs"].as_array().expect("logs");
    let cancelled = logs
        .iter()
        .find(|l| l["data"].as_str().is_some_and(|d| d.contains("hostile_spin") && d.contains("cancelled")))
        .unwrap_or_else(|| panic!("no cancellation log in {logs:?}"));
    assert_eq!(cancelled["logger"], "bardo");
    // Stopped by the cancel, well before the spin's 1 s budget would have stopped it.
    let ms: u64 = cancelled["data"]
        .as_str()
        .and_then(|d| d.split("after ").nth(1))
        .and_then(|d| d.split(" ms").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no duration in {cancelled}"));
    assert!(ms < 700, "the instance ran {ms} ms after the cancel was sent at 150 ms");
}

/// `bardo mcp --http` as a child, killed on drop.
pub(super) struct HttpServer {
    child: Child,
    pub(super) url: String,
}

impl HttpServer {
    fn start(w: &Workspace, addr: &str, env: &[(&str, &str)]) -> Self {
        Self::start_with(w, addr, env, &[])
    }

    pub(super) fn start_with(w: &Workspace, addr: &str, env: &[(&str, &str)], extra: &[&str]) -> Self {
        let mut args = vec!["mcp", "--expose", "concrete", "--http", addr];
        args.extend(extra);
        Self::spawn(w, addr, env, &args)
    }

    /// `bardo --config <dir>/bardo.toml <args>`, serving MCP at `addr`.
    pub(super) fn spawn(w: &Workspace, addr: &str, env: &[(&str, &str)], args: &[&str]) -> Self {
        let config = w.path().join("bardo.toml").display().to_string();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_bardo"));
        cmd.args(["--config", &config]).args(args).stdout(Stdio::null()).stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("bardo mcp --http");
        let started = Instant::now();
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(started.elapsed() < Duration::from_secs(60), "bardo mcp --http did not listen on {addr}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, url: format!("http://{addr}/mcp") }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HttpServer {
    /// `bardo --config <dir>/bardo.toml <args>` that must refuse to start: its stderr. (A server
    /// that starts instead is killed after 60 s and fails the test.)
    pub(super) fn refused(w: &Workspace, env: &[(&str, &str)], args: &[&str]) -> String {
        let config = w.path().join("bardo.toml").display().to_string();
        let mut child = Command::new(env!("CARGO_BIN_EXE_bardo"))
            .args(["--config", &config])
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("bardo");
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            if started.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("`bardo {}` started; it must refuse", args.join(" "));
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut said = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut said).expect("stderr");
        assert!(!status.success(), "{said}");
        said
    }
}

#[test]
fn python_over_http_needs_the_bearer_token_and_a_local_origin() {
    let token = "0123456789abcdef0123456789abcdef";
    let w = Workspace::new(
        "dev",
        &[("hostile.wasm", HOSTILE)],
        "[mcp]\ntokens_env = \"BARDO_TEST_MCP_TOKENS\"\n",
    );
    let addr = format!("127.0.0.1:{}", free_port());
    let server = HttpServer::start(&w, &addr, &[("BARDO_TEST_MCP_TOKENS", token)]);

    let listed = one(&["list", "--http", &server.url, "--token", token], &[]);
    let names: Vec<&str> =
        listed["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"hostile_echo") && names.contains(&"query_state"), "{names:?}");
    let called = one(
        &[
            "call",
            "--http",
            &server.url,
            "--token",
            token,
            "--tool",
            "hostile_echo",
            "--args",
            r#"{"text":"over http"}"#,
        ],
        &[],
    );
    assert_eq!(
        (called["isError"].as_bool(), called["text"].as_str()),
        (Some(false), Some("\"over http\"")),
        "{called}"
    );

    let raw = |extra: &[&str]| {
        let mut args = vec!["raw-http", "--http", &server.url];
        args.extend(extra);
        one(&args, &[])
    };
    let missing = raw(&[]);
    assert_eq!(missing["status"], 401, "{missing}");
    assert!(missing["www_authenticate"].as_str().is_some_and(|h| h.starts_with("Bearer")), "{missing}");
    assert_eq!(raw(&["--token", "not-the-token-at-all-0000000000"])["status"], 401);
    let foreign = raw(&["--token", token, "--origin", "http://evil.example"]);
    assert_eq!(foreign["status"], 403, "{foreign}");
    let port = addr.rsplit(':').next().expect("port");
    let local = raw(&["--token", token, "--origin", &format!("http://localhost:{port}")]);
    assert_eq!(local["status"], 200, "{local}");

    // Off loopback without tokens: refuses to start, saying what to configure.
    let open = Workspace::new("dev", &[("hostile.wasm", HOSTILE)], "");
    let out = open.bardo(&["mcp", "--http", &format!("0.0.0.0:{}", free_port())]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("tokens_env"), "{out:?}");

    // On loopback with no tokens configured: the host's own token, made on first start.
    let addr = format!("127.0.0.1:{}", free_port());
    let server = HttpServer::start(&open, &addr, &[]);
    let own = std::fs::read_to_string(open.path().join(".bardo/http.token")).expect("the host's own token");
    let own = own.trim();
    let raw = |extra: &[&str]| {
        let mut args = vec!["raw-http", "--http", &server.url];
        args.extend(extra);
        one(&args, &[])
    };
    assert_eq!(raw(&[])["status"], 401, "loopback needs the token too");
    assert_eq!(raw(&["--token", own])["status"], 200);
    let listed = one(&["list", "--http", &server.url, "--token", own], &[]);
    let names: Vec<&str> =
        listed["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"emergency_halt"), "{names:?}");
    drop(server);

    // `--no-auth`: no token, and only what changes nothing is listed.
    let addr = format!("127.0.0.1:{}", free_port());
    let server = HttpServer::start_with(&open, &addr, &[], &["--no-auth"]);
    let listed = one(&["list", "--http", &server.url], &[]);
    let names: Vec<&str> =
        listed["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"query_state") && names.contains(&"hostile_echo"), "{names:?}");
    for changing in ["emergency_halt", "update_directive", "preview_action", "commit_action"] {
        assert!(!names.contains(&changing), "{changing} offered without a token: {names:?}");
    }
}

#[test]
fn typescript_sdk_lists_and_calls_over_stdio() {
    let w = Workspace::new("dev", &[("hostile.wasm", HOSTILE)], "");
    let sdk = clients().join("node_modules/@modelcontextprotocol/sdk");
    assert!(sdk.exists(), "{} is missing: run scripts/setup.sh", sdk.display());
    let out = Command::new("node")
        .arg(clients().join("mcp_client.mjs"))
        .args(["--tool", "hostile_echo", "--args", r#"{"text":"from node"}"#, "--"])
        .args(w.server(&["--expose", "concrete"]))
        .output()
        .expect("node");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let seen: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(seen["server"], "bardo", "{seen}");
    let tools: Vec<&str> =
        seen["tools"].as_array().expect("tools").iter().filter_map(Value::as_str).collect();
    assert!(tools.contains(&"hostile_echo") && tools.contains(&"search_context"), "{tools:?}");
    assert_eq!(seen["call"], json!({"isError": false, "text": "\"from node\""}), "{seen}");
}

/// Requests on a kept-alive connection (as every SDK sends them) are answered at once: with
/// Nagle's algorithm on, each waited ~44 ms for the client's delayed ACK. On both servers.
/// (A latency figure belongs in a benchmark; this catches the stall coming back.)
#[test]
fn requests_on_a_kept_alive_connection_are_not_held_back() {
    let token = "0123456789abcdef0123456789abcdef";
    let w = Workspace::new(
        "dev",
        &[("hostile.wasm", HOSTILE)],
        "[mcp]\ntokens_env = \"BARDO_TEST_MCP_TOKENS\"\n",
    );
    let env = [("BARDO_TEST_MCP_TOKENS", token)];
    let mcp = HttpServer::start(&w, &format!("127.0.0.1:{}", free_port()), &env);
    let addr = format!("127.0.0.1:{}", free_port());
    let serve = HttpServer::spawn(&w, &addr, &env, &["serve", "--listen", &addr, "--mcp"]);
    for url in [&mcp.url, &serve.url] {
        let timed = one(&["keepalive", "--http", url, "--token", token, "--count", "200"], &[]);
        let p50 = timed["p50_ms"].as_f64().expect("p50");
        assert_eq!(timed["count"], 200);
        // With Nagle on, every request waited for the delayed ACK (p50 43.99 ms); without it the
        // p50 is 0.43 ms on an idle machine. Asserted well under the stall, not at the idle
        // figure: on this 2-core machine with the suite's other binaries running it reached 4.9 ms.
        assert!(p50 < 20.0, "{url}: median {p50:.2} ms a ping on one connection (p90 {})", timed["p90_ms"]);
    }
}

/// A client that does not pass the wallet's key on to the server it starts (the Python SDK
/// passes only part of its environment) gets a server without write tools: the handshake's
/// instructions say so and how to fix it, instead of naming tools it does not have.
#[test]
fn without_the_key_the_instructions_name_no_write_tool_and_say_why() {
    let (node, d) = devnet();
    let w = Workspace::trader(&node, &d);
    let server = w.server(&[]);
    let mut cmd = python_client(&["list"]);
    cmd.env_remove("BARDO_PRIVATE_KEY").arg("--stdio").arg("--").args(&server);
    let out = cmd.output().expect("the Python client");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).expect("json");
    let names: Vec<&str> =
        listed["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(!names.contains(&"commit_action"), "{names:?}");
    let instructions = listed["instructions"].as_str().expect("instructions");
    assert!(!instructions.contains("commit_action"), "{instructions}");
    assert!(instructions.contains("BARDO_PRIVATE_KEY") && instructions.contains("`env`"), "{instructions}");
}
