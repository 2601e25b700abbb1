//! `bardo serve --a2a` driven by the official A2A Python SDK (`tests/clients/a2a_client.py`,
//! a2a-sdk from PyPI, installed by `scripts/setup.sh`): the card, reads, a swap that waits for
//! the caller's confirmation, declines, cancels, expiry, a restart mid-task, errors and tokens.

use super::free_port;
use super::mcp::{Workspace, balanceOfCall, clients, one, python, tool_error, view};
use alloy::primitives::U256;
use bardo_devnet::{CHAIN_ID, DEV_KEY};
use bardo_test_support::devnet;
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `bardo serve`, killed when dropped.
struct Server {
    child: Child,
    url: String,
    /// The host's own token (`.bardo/http.token`), when the door made one.
    token: Option<String>,
}

impl Server {
    fn start(w: &Workspace, listen: &str, env: &[(&str, &str)]) -> Self {
        Self::start_with(w, listen, env, &[])
    }

    fn start_with(w: &Workspace, listen: &str, env: &[(&str, &str)], extra: &[&str]) -> Self {
        Self::start_at(w, listen, free_port(), env, extra)
    }

    fn start_at(w: &Workspace, listen: &str, port: u16, env: &[(&str, &str)], extra: &[&str]) -> Self {
        let listen = format!("{listen}:{port}");
        let child = Command::new(env!("CARGO_BIN_EXE_bardo"))
            .arg("--config")
            .arg(w.path().join("bardo.toml"))
            .args(["serve", "--listen", &listen, "--a2a", "--watch-ms", "0"])
            .args(extra)
            .env("BARDO_PRIVATE_KEY", DEV_KEY)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .spawn()
            .expect("bardo serve");
        let url = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(60), "bardo serve did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        let token = std::fs::read_to_string(w.path().join(".bardo/http.token")).ok();
        Self { child, url, token: token.map(|t| t.trim().to_owned()) }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run a client scenario (with the server's own token unless `args` name one); its last JSON
/// line.
fn a2a(server: &Server, args: &[&str]) -> Value {
    let token = server.token.as_deref().filter(|_| !args.contains(&"--token"));
    let out = Command::new(python())
        .arg(clients().join("a2a_client.py"))
        .args(args)
        .args(["--url", &server.url])
        .args(token.map(|t| ["--token", t]).into_iter().flatten())
        .output()
        .expect("run the A2A Python client");
    assert!(
        out.status.success(),
        "client failed: {}\nstdout: {}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().expect("the scenario printed nothing");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("not JSON ({e}): {last}"))
}

fn artifact<'a>(task: &'a Value, name: &str) -> &'a Value {
    let artifacts = task["artifacts"].as_array().unwrap_or_else(|| panic!("no artifacts in {task}"));
    let a = artifacts
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no {name} artifact in {task}"));
    &a["parts"][0]["data"]
}

fn base(v: &Value) -> U256 {
    U256::from_str_radix(v.as_str().unwrap_or_else(|| panic!("base units: {v}")), 10).expect("number")
}

/// A trader workspace whose permits live `ttl` seconds.
fn trader_with_ttl(node: &bardo_devnet::Anvil, d: &bardo_devnet::deploy::Deployments, ttl: u64) -> Workspace {
    let w = Workspace::trader(node, d);
    set_ttl(&w, ttl);
    w
}

fn set_ttl(w: &Workspace, ttl: u64) {
    let path = w.path().join("bardo.toml");
    let text = std::fs::read_to_string(&path).expect("config");
    let text = match text.find("ttl_secs = ") {
        Some(at) => {
            let end = at + text[at..].find('\n').expect("line end");
            format!("{}ttl_secs = {ttl}{}", &text[..at], &text[end..])
        }
        None => text.replacen("[safety]\n", &format!("[safety]\nttl_secs = {ttl}\n"), 1),
    };
    std::fs::write(&path, text).expect("config");
}

#[test]
fn a2a_card_read_and_a_swap_confirmed_declined_and_cancelled() {
    let (node, d) = devnet();
    let w = trader_with_ttl(&node, &d, 120);
    let server = Server::start(&w, "127.0.0.1", &[]);

    // The card, resolved by the SDK at A2A's path and served at the specification's too.
    let card = a2a(&server, &["card"]);
    let c = &card["card"];
    assert_eq!(c["supportedInterfaces"][0]["url"], format!("{}/a2a", server.url), "{c}");
    assert_eq!(c["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
    assert_eq!(c["supportedInterfaces"][0]["protocolVersion"], "1.0");
    assert_eq!(c["capabilities"]["streaming"], true, "{c}");
    assert_eq!(c["name"], "Bardo Tools (trader)");
    assert_eq!(c["defaultInputModes"], json!(["application/json"]));
    assert_eq!(c["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"], "Bearer", "{c}");
    // On loopback too, the door needs the host's own token (made on first start, 0600).
    let own = server.token.clone().expect("the host's own token");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(w.path().join(".bardo/http.token")).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let seen = a2a(&server, &["auth", "--token", &own]);
    for who in ["none", "wrong"] {
        assert_eq!(seen[who]["rpc"], 401, "{seen}");
    }
    assert_eq!(seen["right"]["rpc"], 200, "{seen}");
    // Without a token a profile that writes is not served at all.
    let open = w.bardo(&["serve", "--listen", "127.0.0.1:0", "--no-auth"]);
    assert!(!open.status.success(), "{open:?}");
    assert!(String::from_utf8_lossy(&open.stderr).contains("without write tools"), "{open:?}");
    let skills: Vec<&str> =
        c["skills"].as_array().expect("skills").iter().filter_map(|s| s["id"].as_str()).collect();
    assert!(skills.contains(&"action-swap"), "{skills:?}");
    assert!(skills.iter().any(|s| s.starts_with("read-")), "{skills:?}");
    let swap_skill =
        c["skills"].as_array().expect("skills").iter().find(|s| s["id"] == "action-swap").expect("swap");
    let example: Value =
        serde_json::from_str(swap_skill["examples"][0].as_str().expect("example")).expect("JSON");
    assert_eq!(example["action"], "swap", "{example}");
    // The same card at /.well-known/agent.json (the SDK's parse drops empty lists).
    for part in ["supportedInterfaces", "skills", "securitySchemes", "name"] {
        assert_eq!(card["spec_path"][part], c[part], "{part}: the same card at /.well-known/agent.json");
    }

    // A read: completed, the tool's answer as an artifact.
    let pool = json!({"kind": "uniswap_get_pool_info",
                      "params": {"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000}});
    let read = a2a(&server, &["read", "--args", &pool.to_string()]);
    let task = &read["events"][0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{read}");
    assert!(artifact(task, "result")["address"].as_str().is_some_and(|a| a.starts_with("0x")), "{task}");

    // A swap streamed to input-required with its permit; GetTask and SubscribeToTask mid-task;
    // confirmed: completed with the verified receipt, and the balances moved by it.
    let (weth, usdc) = (d.tokens["WETH"].address, d.tokens["USDC"].address);
    let balances = || {
        let b = |t| view(&node.url(), t, balanceOfCall { account: d.deployer });
        (b(weth), b(usdc))
    };
    let swap =
        json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1000"}).to_string();
    let before = balances();
    let done = a2a(&server, &["swap", "--args", &swap, "--decision", "confirm"]);
    let states = done["states"].as_array().expect("states");
    assert_eq!(states.first(), Some(&json!("TASK_STATE_WORKING")), "{done}");
    assert_eq!(states.last(), Some(&json!("TASK_STATE_INPUT_REQUIRED")), "{done}");
    assert_eq!(done["mid"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{done}");
    let permit = artifact(&done["mid"], "permit");
    assert!(permit["permit_id"].as_str().is_some_and(|p| p.starts_with("permit-")), "{permit}");
    assert!(permit["risk_tier"].is_string() && permit["expires_at"].is_string(), "{permit}");
    assert_eq!(done["resubscribed"]["task"]["id"], done["mid"]["id"], "{done}");
    assert_eq!(
        done["second_states"].as_array().and_then(|s| s.last()),
        Some(&json!("TASK_STATE_COMPLETED")),
        "{done}"
    );
    let receipt = artifact(&done["final"], "receipt");
    assert_eq!(receipt["ground_truth"], "receipt", "{receipt}");
    let after = balances();
    let expected = &permit["expected_outcome"];
    assert_eq!(after.0 - before.0, base(&expected["amount_out_base"]), "WETH received");
    assert_eq!(before.1 - after.1, base(&expected["amount_in_base"]), "USDC paid");

    // Declined: canceled, its permit cancelled, nothing sent.
    let declined = a2a(&server, &["swap", "--args", &swap, "--decision", "decline"]);
    assert_eq!(declined["final"]["status"]["state"], "TASK_STATE_CANCELED", "{declined}");
    assert_eq!(balances(), after, "a declined swap sends nothing");
    let cancelled_permit =
        artifact(&declined["final"], "permit")["permit_id"].as_str().expect("permit").to_owned();
    let commit = w.bardo(&["commit", &cancelled_permit]);
    let said = String::from_utf8_lossy(&commit.stdout).to_string() + &String::from_utf8_lossy(&commit.stderr);
    assert!(!commit.status.success() && said.contains("cancelled"), "the declined permit is dead: {said}");

    // CancelTask on a waiting task: canceled too.
    let cancelled = a2a(&server, &["swap", "--args", &swap, "--decision", "cancel"]);
    assert_eq!(cancelled["cancelled"]["status"]["state"], "TASK_STATE_CANCELED", "{cancelled}");
    assert_eq!(balances(), after);

    // Each task state change is a fabric event in the journal and an audit record.
    let journal = std::fs::read_to_string(w.path().join(".bardo/events.jsonl")).expect("journal");
    let task_id = done["mid"]["id"].as_str().expect("id");
    let changes: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("line"))
        .filter(|e| e["event"]["type"] == "TaskStatusChanged" && e["event"]["task_id"] == task_id)
        .map(|e| e["event"]["state"].clone())
        .collect();
    assert_eq!(
        changes,
        json!(["working", "input-required", "working", "completed"]).as_array().expect("list").clone()
    );
    let audit = std::fs::read_to_string(w.path().join(".bardo/audit.jsonl")).expect("audit");
    let permit_id = permit["permit_id"].as_str().expect("permit");
    // And the write path's own steps beside them, for `bardo tui`: the permit, its execution.
    let steps: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("line"))
        .filter(|e| e["event"]["permit_id"] == permit_id)
        .map(|e| e["event"]["type"].clone())
        .collect();
    assert!(
        steps.contains(&json!("PermitCreated")) && steps.contains(&json!("ActionExecuted")),
        "the A2A write's steps are journaled: {steps:?}"
    );
    assert!(
        audit.lines().any(|l| l.contains("\"TaskStatus\"")
            && l.contains(task_id)
            && l.contains(permit_id)
            && l.contains("completed")),
        "the task is audited with its permit"
    );
    let verified = w.bardo(&["audit-log", "verify"]);
    assert!(verified.status.success(), "{}", String::from_utf8_lossy(&verified.stdout));
    assert!(String::from_utf8_lossy(&verified.stdout).contains("intact"));

    // A waiting task followed with SubscribeToTask by another client while a third confirms it:
    // the follower sees it work and complete, and its stream ends.
    let followed = a2a(&server, &["follow", "--args", &swap]);
    assert_eq!(followed["ended"], true, "{followed}");
    assert_eq!(
        followed["states"],
        json!(["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]),
        "{followed}"
    );
}

#[test]
fn a2a_errors_expiry_and_a_task_confirmed_after_a_restart() {
    let (node, d) = devnet();
    let w = trader_with_ttl(&node, &d, 120);
    let swap =
        json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "700"}).to_string();

    // Errors, each with its code.
    let server = Server::start(&w, "127.0.0.1", &[]);
    let e = a2a(&server, &["errors"]);
    assert_eq!(e["malformed"]["error"]["code"], -32700, "{e}");
    assert_eq!(e["batch"]["error"]["code"], -32600, "{e}");
    assert_eq!(e["unknown_method"]["error"]["code"], -32601, "{e}");
    assert_eq!(e["text_plain"]["status"], 415, "{e}");
    assert_eq!(e["text_plain"]["body"]["error"]["code"], -32600, "{e}");
    assert_eq!(e["foreign_host"]["status"], 403, "DNS rebinding: {e}");
    assert_eq!(e["list_negative"]["error"]["code"], -32602, "{e}");
    assert_eq!(e["list_garbage"]["error"]["code"], -32602, "{e}");
    assert_eq!(e["list_ok"]["result"]["pageSize"], 5, "{e}");
    assert!(e["old_name"]["error"]["message"].as_str().expect("message").contains("SendMessage"), "{e}");
    assert_eq!(e["push"]["error"]["code"], -32003, "{e}");
    assert_eq!(e["version"]["error"]["code"], -32009, "{e}");
    assert_eq!(e["unknown_task"]["type"], "TaskNotFoundError", "{e}");
    assert_eq!(e["text_only"]["type"], "ContentTypeNotSupportedError", "{e}");
    assert!(e["text_only"]["message"].as_str().expect("message").contains("\"action\""), "{e}");
    // A tool error is a failed task with the typed error, not a protocol error.
    assert_eq!(e["bad_tool"]["state"], "TASK_STATE_FAILED", "{e}");
    let typed =
        e["bad_tool"]["message"]["parts"].as_array().expect("parts").iter().find_map(|p| p.get("data"));
    assert_eq!(typed.map(|d| &d["code"]), Some(&json!("not-found")), "{e}");

    // A swap waits; the server restarts; the task is still there and its permit commits.
    let waiting = a2a(&server, &["swap", "--args", &swap, "--decision", "none"]);
    let task_id = waiting["mid"]["id"].as_str().expect("id").to_owned();
    drop(server);
    let server = Server::start(&w, "127.0.0.1", &[]);
    let confirmed = a2a(&server, &["confirm", "--task", &task_id]);
    assert_eq!(confirmed["before"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{confirmed}");
    let task = &confirmed["events"][0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{confirmed}");
    assert_eq!(artifact(task, "receipt")["ground_truth"], "receipt", "{task}");
    drop(server);

    // Permits of 2 s: a task left waiting fails with the expiry code; a late confirmation is refused.
    set_ttl(&w, 2);
    let server = Server::start(&w, "127.0.0.1", &[]);
    let expired = a2a(&server, &["swap", "--args", &swap, "--decision", "wait", "--wait-s", "3.5"]);
    let after = &expired["after"];
    assert_eq!(after["status"]["state"], "TASK_STATE_FAILED", "{expired}");
    let data = after["status"]["message"]["parts"]
        .as_array()
        .expect("parts")
        .iter()
        .find_map(|p| p.get("data"))
        .unwrap_or_else(|| panic!("no error data in {after}"));
    assert_eq!(data["code"], "expired", "{data}");
    assert_eq!(expired["late_confirm"]["type"], "UnsupportedOperationError", "{expired}");
}

#[test]
fn a2a_off_loopback_needs_a_token_and_the_card_says_so() {
    let w = Workspace::new("data", &[], "[mcp]\ntokens_env = \"BARDO_A2A_TEST_TOKENS\"\n");
    // Without the tokens it names, the server refuses to start.
    let refused = w.bardo(&["serve", "--listen", "0.0.0.0:0", "--a2a"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("BARDO_A2A_TEST_TOKENS"), "{refused:?}");

    let token = "a2a-test-token-0123456789abcdef";
    let server = Server::start(&w, "0.0.0.0", &[("BARDO_A2A_TEST_TOKENS", token)]);
    let seen = a2a(&server, &["auth", "--token", token]);
    for who in ["none", "wrong"] {
        assert_eq!(seen[who]["card"], 200, "the card is public: {seen}");
        assert_eq!(seen[who]["rpc"], 401, "{seen}");
        assert!(seen[who]["www_authenticate"].as_str().is_some_and(|h| h.starts_with("Bearer")), "{seen}");
    }
    assert_eq!(seen["right"]["rpc"], 200, "{seen}");
    assert_eq!(seen["right"]["body"]["error"]["code"], -32001, "an unknown task, past the door: {seen}");
    assert_eq!(seen["scheme"]["bearer"]["httpAuthSecurityScheme"]["scheme"], "Bearer", "{seen}");
    // The public card never names a Host the door does not admit (it reflected any).
    let addr = server.url.trim_start_matches("http://").to_owned();
    let card = |host: &str| -> Value {
        use std::io::{Read, Write};
        let mut tcp = std::net::TcpStream::connect(&addr).expect("connect");
        write!(tcp, "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
            .expect("write");
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).expect("read");
        serde_json::from_str(answer.split("\r\n\r\n").nth(1).expect("a body")).expect("the card")
    };
    let foreign = card("evil.example:443");
    let named = foreign["supportedInterfaces"][0]["url"].as_str().expect("url");
    assert!(!named.contains("evil.example") && named.starts_with("http://127.0.0.1:"), "{named}");
    let own = card(&addr);
    assert_eq!(own["supportedInterfaces"][0]["url"], format!("http://{addr}/a2a"), "{own}");
}

/// `--no-auth`: loopback only, a profile without write tools, and then only the tools that
/// change nothing — an anonymous local caller reads, but cannot halt the host or change its
/// directives.
#[test]
fn a2a_without_a_token_serves_only_reads() {
    let w = Workspace::new("data", &[], "");
    let refused = w.bardo(&["serve", "--listen", "0.0.0.0:0", "--no-auth"]);
    assert!(!refused.status.success(), "{refused:?}");
    // `bardo mcp --http` on the same configuration first: it writes the events journal, and
    // `bardo serve` still starts beside it (its task events then stay in its task store).
    let mcp_addr = format!("127.0.0.1:{}", free_port());
    let _mcp = super::mcp::HttpServer::start_with(&w, &mcp_addr, &[], &["--no-auth"]);
    let server = Server::start_with(&w, "127.0.0.1", &[], &["--no-auth"]);
    assert!(server.token.is_none(), "no token made for an open door");
    let seen = a2a(&server, &["auth", "--token", "unused-token-0123456789abcdef"]);
    assert_eq!(seen["none"]["rpc"], 200, "past the door without a token: {seen}");
    assert!(seen["scheme"].is_null(), "the card asks for no token: {seen}");
    let card = a2a(&server, &["card"]);
    let skills = card["card"]["skills"].to_string();
    assert!(skills.contains("search_context") && !skills.contains("emergency_halt"), "{skills}");
    let halt = a2a(&server, &["read", "--tool", "emergency_halt", "--args", r#"{"reason":"anyone"}"#]);
    let status = &halt["events"].as_array().and_then(|e| e.last()).expect("an event")["task"]["status"];
    assert_eq!(status["state"], "TASK_STATE_FAILED", "{halt}");
    assert!(status.to_string().contains("not-found"), "no halt offered: {halt}");
    let search = a2a(&server, &["read", "--tool", "search_context", "--args", r#"{"query":"swap"}"#]);
    let last = &search["events"].as_array().and_then(|e| e.last()).expect("an event")["task"]["status"];
    assert_eq!(last["state"], "TASK_STATE_COMPLETED", "reads are served: {search}");
}

#[test]
fn a2a_under_confirm_always_the_agents_own_confirmation_is_refused_and_the_operators_commits() {
    let (node, d) = devnet();
    let w = Workspace::trader_with(&node, &d, "confirm = \"always\"");
    // Both doors, as `bardo serve` with no protocol flag serves them.
    let server = Server::start_with(&w, "127.0.0.1", &[], &["--mcp"]);
    let operator = std::fs::read_to_string(w.path().join(".bardo/operator.token")).expect("operator token");
    let operator = operator.trim();
    assert_ne!(Some(operator), server.token.as_deref(), "the operator's token is not the agents'");
    let usdc = || view(&node.url(), d.tokens["USDC"].address, balanceOfCall { account: d.deployer });
    let before = usdc();
    let swap =
        json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "250"}).to_string();
    let waiting = a2a(&server, &["swap", "--args", &swap, "--decision", "none"]);
    let task_id = waiting["mid"]["id"].as_str().expect("id").to_owned();
    let said =
        waiting["mid"]["status"]["message"]["parts"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert!(said.contains("held for a person") && said.contains("operator's token"), "{waiting}");

    // The agent answers its own input-required: refused, the task keeps waiting, nothing sent.
    let own = a2a(&server, &["confirm", "--task", &task_id]);
    assert_eq!(own["error"]["type"], "UnsupportedOperationError", "{own}");
    let message = own["error"]["message"].as_str().expect("message");
    assert!(message.contains("confirm = \"always\"") && message.contains("operator.token"), "{own}");
    assert_eq!(own["after"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{own}");
    assert_eq!(usdc(), before, "nothing was sent");

    // The same agent, with the same token, commits the permit on the same server's MCP door with
    // an elicitation handler that accepts: it is not asked (its answer is its own), nothing sent.
    let permit = artifact(&waiting["mid"], "permit")["permit_id"].as_str().expect("permit id").to_owned();
    let mcp = format!("{}/mcp", server.url);
    let token = server.token.as_deref().expect("the agent's token");
    let args = json!({"permit_id": permit}).to_string();
    let itself =
        one(&["commit", "--args", &args, "--answer", "accept", "--http", &mcp, "--token", token], &[]);
    let e = tool_error(&itself["commit"]);
    assert_eq!(e["code"], "confirmation-required", "{itself}");
    assert!(e["message"].as_str().is_some_and(|m| m.contains("bardo confirm")), "{itself}");
    assert_eq!(itself["asked"], json!([]), "the agent was not asked to confirm its own commit");
    assert_eq!(usdc(), before, "nothing was sent");

    // The operator's token confirms it, twice at once: one answer carries it out — committed,
    // verified, audited as the operator's — and the other is told the task is answered already.
    let both: Vec<Value> = std::thread::scope(|s| {
        let confirm = || s.spawn(|| a2a(&server, &["confirm", "--task", &task_id, "--token", operator]));
        let (one, two) = (confirm(), confirm());
        [one, two].map(|h| h.join().expect("a client")).into()
    });
    let completed: Vec<&Value> =
        both.iter().filter(|c| c["events"][0]["task"]["status"]["state"] == "TASK_STATE_COMPLETED").collect();
    assert_eq!(completed.len(), 1, "one answer carried out: {both:?}");
    let other = both.iter().find(|c| c["events"][0]["task"]["status"]["state"] != "TASK_STATE_COMPLETED");
    let other = other.expect("the other answer");
    assert_eq!(other["error"]["type"], "UnsupportedOperationError", "{other}");
    let said = other["error"]["message"].as_str().unwrap_or_default();
    assert!(said.contains("answered already") || said.contains("not waiting for a confirmation"), "{other}");
    let task = &completed[0]["events"][0]["task"];
    assert_eq!(before - usdc(), U256::from(250_000_000u64), "250 USDC paid, once");
    let permit = artifact(task, "receipt")["permit_id"].as_str().expect("permit id").to_owned();
    let audit = std::fs::read_to_string(w.path().join(".bardo/audit.jsonl")).expect("audit log");
    assert!(
        audit.lines().map(|l| serde_json::from_str::<Value>(l).expect("json")["event"].clone()).any(
            |e| e["type"] == "PermitConfirmed"
                && e["permit_id"] == permit.as_str()
                && e["by"] == "operator token"
                && e["channel"] == "a2a-operator"
        ),
        "{audit}"
    );

    // A waiting task whose permit the operator commits through another door (the CLI) ends with
    // it, saying so; it stayed input-required.
    let waiting = a2a(&server, &["swap", "--args", &swap, "--decision", "none"]);
    let task_id = waiting["mid"]["id"].as_str().expect("id").to_owned();
    let permit = artifact(&waiting["mid"], "permit")["permit_id"].as_str().expect("permit id").to_owned();
    for step in [["confirm", permit.as_str()], ["commit", permit.as_str()]] {
        let o = w.bardo(&step);
        assert!(o.status.success(), "{step:?}: {o:?}");
    }
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let after = a2a(&server, &["confirm", "--task", &task_id]);
    let status = &after["before"]["status"];
    assert_eq!(status["state"], "TASK_STATE_COMPLETED", "{after}");
    assert!(status.to_string().contains("committed through another door"), "{after}");
}

/// `bardo identity register` names the card in an on-chain registration file; with the
/// `[identity]` it prints, the card names the registration back: identity → agentURI →
/// registration file → services → card → identity, followed by the A2A SDK, the identity
/// plugin and agent0-sdk.
#[test]
fn the_card_and_the_on_chain_identity_name_each_other() {
    let (node, d) = devnet();
    let w = super::erc8004::identity_workspace(&node, &d);
    let port = free_port();
    let card_url = format!("http://127.0.0.1:{port}/.well-known/agent-card.json");
    let o = w.bardo(&["identity", "register", "--card-url", &card_url]);
    let said = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{said}\n{}", String::from_utf8_lossy(&o.stdout));
    let section = &said[said.find("[identity]").expect("the section to add")..];
    let config = std::fs::read_to_string(w.path().join("bardo.toml")).expect("config");
    std::fs::write(w.path().join("bardo.toml"), format!("{config}\n{section}")).expect("config");
    let registry = format!("eip155:31337:{}", d.erc8004.identity.to_checksum(None));
    assert!(section.contains(&registry) && section.contains("agent_id = 1"), "{section}");

    let server = Server::start_at(&w, "127.0.0.1", port, &[], &[]);
    let card = a2a(&server, &["card"]);
    let extensions = &card["card"]["capabilities"]["extensions"];
    assert_eq!(extensions[0]["uri"], "https://eips.ethereum.org/EIPS/eip-8004", "{card}");
    assert_eq!(extensions[0]["params"]["agentRegistry"], registry, "{card}");
    assert_eq!(extensions[0]["params"]["agentId"].as_f64(), Some(1.0), "{card}");

    // And from the chain to this card, and back: the card the SDK fetched names agent 1.
    let verify = |id: u64| -> Value {
        let params =
            json!({"chain_id": CHAIN_ID, "agent_id": id, "card_url": card_url, "card": card["card"]});
        let o = w.bardo(&[
            "call",
            "identity_verify_agent",
            "--profile",
            "erc8004",
            "--params",
            &params.to_string(),
        ]);
        serde_json::from_slice(&o.stdout).expect("json")
    };
    let verified = verify(1);
    assert_eq!(verified["verified"], true, "{verified}");

    // An impersonator registers its own agent naming this card: the chain's half holds, the
    // card's does not.
    let o = w.bardo(&["identity", "register", "--card-url", &card_url, "--name", "not bardo"]);
    assert!(o.status.success(), "{o:?}");
    let impostor = verify(2);
    assert_eq!((&impostor["verified"], &impostor["names_card"]), (&json!(false), &json!(true)), "{impostor}");
    assert!(impostor["reason"].as_str().expect("reason").contains("another identity"), "{impostor}");
    // And its own `bardo serve`, elsewhere, claiming agent 1: refused before it listens.
    let elsewhere = free_port();
    let listen = format!("127.0.0.1:{elsewhere}");
    let said = super::mcp::HttpServer::refused(
        &w,
        &[("BARDO_PRIVATE_KEY", DEV_KEY)],
        &["serve", "--listen", &listen, "--a2a", "--watch-ms", "0"],
    );
    assert!(
        said.contains("claims agent 1") && said.contains(&card_url) && said.contains("set-uri"),
        "{said}"
    );
    assert!(std::net::TcpStream::connect(("127.0.0.1", elsewhere)).is_err(), "it never listened");
    let params = json!({"chain_id": CHAIN_ID, "agent_id": 1, "metadata_keys": ["role"]}).to_string();
    let o = w.bardo(&["call", "identity_get_agent", "--profile", "erc8004", "--params", &params]);
    let agent: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(agent["registration"]["role"], "infrastructure", "{agent}");
    assert_eq!(agent["metadata"][0]["text"], "infrastructure", "{agent}");
    let read = super::erc8004::agent0_reads(&node, &d, &["--read-agent", "1"]);
    assert_eq!(read["agent"]["a2a"], card_url, "agent0-sdk follows the same chain: {read}");
}
