//! The protocol's edges, as only raw bytes can send them (no SDK sends a malformed message):
//! over stdio and streamable HTTP, each malformed or out-of-order message gets the JSON-RPC
//! error the specifications name, with its `id` or `null`; HTTP sessions are capped, expire when
//! idle, and end with `DELETE` (200, then 404).

use super::free_port;
use super::mcp::{HttpServer, Workspace};
use bardo_test_artifacts::HOSTILE;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// `bardo mcp` over stdio in `w`, and a way to send it one line and read one line back.
fn stdio(w: &Workspace) -> (std::process::Child, impl FnMut(&[u8]) -> Value) {
    let server = w.server(&[]);
    let mut child = Command::new(&server[0])
        .args(&server[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("bardo mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let ask = move |line: &[u8]| -> Value {
        stdin
            .write_all(line)
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush())
            .expect("write");
        let mut answer = String::new();
        stdout.read_line(&mut answer).expect("read");
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("not JSON ({e}): {answer}"))
    };
    (child, ask)
}

#[test]
fn stdio_answers_every_malformed_or_early_message_with_its_json_rpc_error() {
    let w = Workspace::new("dev", &[("hostile.wasm", HOSTILE)], "");
    let (mut child, mut ask) = stdio(&w);
    let error = |v: &Value| (v["error"]["code"].as_i64(), v["id"].clone());
    let init = json!({"jsonrpc": "2.0", "id": 10, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});

    assert_eq!(error(&ask(b"{not json")), (Some(-32700), Value::Null));
    assert_eq!(error(&ask(b"\xff\xfe\"\xc3\x28\"")), (Some(-32700), Value::Null), "invalid UTF-8");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(error(&ask(deep.as_bytes())), (Some(-32700), Value::Null), "nesting past the limit");
    assert_eq!(error(&ask(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)).0, Some(-32600), "a batch");
    assert_eq!(error(&ask(br#"{"id":2,"method":"ping"}"#)), (Some(-32600), json!(2)), "no jsonrpc: its id");
    let early = ask(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    assert_eq!(error(&early), (Some(-32600), json!(3)), "{early}");
    assert!(early["error"]["message"].as_str().is_some_and(|m| m.contains("initialize")), "{early}");

    // A notification before initialize: dropped unanswered, the session lives on (rmcp ended it).
    // An initialize with bad params: refused, and not counted, so the corrected one is served.
    let bad =
        json!({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"protocolVersion": 20251125}});
    let early_note = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n{bad}");
    assert_eq!(
        error(&ask(early_note.as_bytes())),
        (Some(-32602), json!(9)),
        "only the bad initialize is answered"
    );
    let first = ask(init.to_string().as_bytes());
    assert_eq!(first["result"]["serverInfo"]["name"], "bardo", "{first}");
    // `notifications/initialized` has no answer: it and a ping in one write, only the ping's.
    let pong = ask(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"ping\"}");
    assert_eq!(pong["id"], 99, "{pong}");
    let again = ask(init.to_string().as_bytes());
    assert_eq!(error(&again), (Some(-32600), json!(10)), "initialize once: {again}");
    let no_params = ask(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call"}"#);
    assert_eq!(error(&no_params), (Some(-32602), json!(4)), "{no_params}");
    let long = format!(r#"{{"jsonrpc":"2.0","id":5,"method":"{}"}}"#, "m".repeat(100_000));
    let unknown = ask(long.as_bytes());
    assert_eq!(error(&unknown), (Some(-32601), json!(5)));
    assert!(unknown.to_string().len() < 300, "not echoed whole: {} bytes", unknown.to_string().len());
    // Ids MCP does not allow are answered with null, and the session goes on.
    for id in ["null", "{}", "true", "1.5"] {
        let odd = ask(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).as_bytes());
        assert_eq!(error(&odd), (Some(-32600), Value::Null), "id {id}: {odd}");
    }
    // The session still works.
    let listed = ask(br#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#);
    assert!(listed["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{listed}");
    let _ = child.kill();
    let _ = child.wait();
}

/// One POST to the MCP endpoint at `url` with the host's `token`, on `session` if given, at
/// protocol `version` if given: status, the session id it answers with, and the body.
fn post(
    url: &str,
    token: &str,
    body: Vec<u8>,
    session: Option<&str>,
    version: Option<&str>,
) -> (u16, Option<String>, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .bearer_auth(token.trim())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    for (name, value) in [("mcp-session-id", session), ("mcp-protocol-version", version)] {
        if let Some(value) = value {
            request = request.header(name, value);
        }
    }
    bardo_test_support::runtime().block_on(async {
        let r = request.send().await.expect("POST");
        let session = r.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        (r.status().as_u16(), session, r.text().await.expect("body"))
    })
}

#[test]
fn http_answers_malformed_posts_as_json_rpc_caps_sessions_and_deletes_once() {
    let w = Workspace::new(
        "dev",
        &[("hostile.wasm", HOSTILE)],
        "[mcp]\nmax_sessions = 2\nsession_idle_secs = 3\n",
    );
    let addr = format!("127.0.0.1:{}", free_port());
    let server = HttpServer::start_with(&w, &addr, &[], &[]);
    let token = std::fs::read_to_string(w.path().join(".bardo/http.token")).expect("token");
    let rt = bardo_test_support::runtime();
    let client = reqwest::Client::new();
    let post =
        |body: Vec<u8>, session: Option<&str>| post(&server.url, &token, body, session, Some("2025-11-25"));
    let error = |(status, _, body): (u16, Option<String>, String)| {
        let v: Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{status}: not JSON ({e}): {body}"));
        (status, v["error"]["code"].as_i64(), v["id"].clone())
    };
    assert_eq!(error(post(b"{not json".to_vec(), None)), (400, Some(-32700), Value::Null));
    assert_eq!(error(post(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(), None)).1, Some(-32600));
    assert_eq!(error(post(br#"{"foo":1}"#.to_vec(), None)), (400, Some(-32600), Value::Null));

    let init = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        .to_string()
        .into_bytes()
    };
    let (status, session, _) = post(init(1), None);
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let notified =
        post(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec(), Some(&session));
    assert_eq!(notified.0, 202, "{notified:?}");
    let no_params = post(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call"}"#.to_vec(), Some(&session));
    assert_eq!(error(no_params), (400, Some(-32602), json!(2)));
    assert_eq!(error(post(init(3), Some(&session))), (400, Some(-32600), json!(3)), "initialize once");

    // Two sessions at most ([mcp] max_sessions = 2): the third is refused, retryable.
    let (status, second, _) = post(init(4), None);
    assert_eq!(status, 200);
    let (status, _, body) = post(init(5), None);
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("max_sessions"), "{body}");
    let answer: Value = serde_json::from_str(&body).expect("a JSON-RPC answer");
    assert_eq!(answer["id"], 5, "the initialize's own id: {body}");

    // DELETE ends a session (200), then it is gone (404); a freed place takes a new session.
    let delete = |s: &str| {
        rt.block_on(async {
            let r = client
                .delete(&server.url)
                .bearer_auth(token.trim())
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-11-25")
                .send()
                .await
                .expect("DELETE");
            r.status().as_u16()
        })
    };
    assert_eq!(delete(&session), 200);
    assert_eq!(delete(&session), 404);
    assert_eq!(delete("no-such-session"), 404);
    let (status, _, _) = post(init(6), None);
    assert_eq!(status, 200, "the place a DELETE freed");
    drop(second);

    // Sessions idle past [mcp] session_idle_secs are closed: their places go to new ones.
    std::thread::sleep(std::time::Duration::from_secs(4));
    for id in [7, 8] {
        assert_eq!(post(init(id), None).0, 200, "an idle session's place");
    }
    assert_eq!(post(init(9), None).0, 503, "two fresh sessions fill it again");
}

#[test]
fn http_serves_a_batch_only_on_a_session_negotiated_at_2025_03_26() {
    let w = Workspace::new("dev", &[("hostile.wasm", HOSTILE)], "");
    let addr = format!("127.0.0.1:{}", free_port());
    let server = HttpServer::start_with(&w, &addr, &[], &[]);
    let token = std::fs::read_to_string(w.path().join(".bardo/http.token")).expect("token");
    // Without MCP-Protocol-Version: 2025-03-26 clients do not send it.
    let post =
        |body: String, session: Option<&str>| post(&server.url, &token, body.into_bytes(), session, None);
    // The JSON-RPC messages of an SSE body (or of a JSON one).
    let messages = |body: &str| -> Vec<Value> {
        let data: Vec<Value> = body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect();
        if data.is_empty() { serde_json::from_str(body).into_iter().collect() } else { data }
    };
    let session_at = |version: &str| {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
        let (status, session, body) = post(init.to_string(), None);
        assert_eq!(status, 200, "{body}");
        let answer = messages(&body);
        assert_eq!(answer[0]["result"]["protocolVersion"], version, "{body}");
        let session = session.expect("a session id");
        let done = post(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
            Some(&session),
        );
        assert_eq!(done.0, 202);
        session
    };
    let batch = json!([
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "id": "c", "method": "tools/call"},
        {"jsonrpc": "2.0", "id": "d", "method": "initialize", "params": {}},
    ])
    .to_string();

    // At 2025-03-26: one answer per request, each by its id; the notification answered by none.
    let old = session_at("2025-03-26");
    let (status, _, body) = post(batch.clone(), Some(&old));
    assert_eq!(status, 200, "{body}");
    let answers = messages(&body);
    let by_id = |id: &str| {
        answers
            .iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id} in {body}"))
            .clone()
    };
    assert_eq!(answers.len(), 4, "{body}");
    assert_eq!(by_id("a")["result"], json!({}), "{body}");
    assert!(by_id("b")["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{body}");
    assert_eq!(by_id("c")["error"]["code"], -32602, "tools/call without params: {body}");
    assert_eq!(by_id("d")["error"]["code"], -32600, "initialize in a batch: {body}");
    // Only notifications: accepted, nothing to answer. An empty batch: invalid.
    let quiet = json!([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]).to_string();
    assert_eq!(post(quiet, Some(&old)).0, 202);
    let (status, _, body) = post("[]".into(), Some(&old));
    assert_eq!((status, messages(&body)[0]["error"]["code"].as_i64()), (400, Some(-32600)), "{body}");

    // At 2025-11-25 (and without a session) batches are not served: -32600 naming why.
    let new = session_at("2025-11-25");
    let (status, _, body) = post(batch, Some(&new));
    assert_eq!(status, 400, "{body}");
    let refused = &messages(&body)[0];
    assert_eq!(refused["error"]["code"], -32600, "{body}");
    assert!(refused["error"]["message"].as_str().is_some_and(|m| m.contains("2025-03-26")), "{body}");
}

#[test]
fn stdio_serves_a_batch_on_a_session_at_2025_03_26_as_one_array_of_answers() {
    let w = Workspace::new("dev", &[("hostile.wasm", HOSTILE)], "");
    let (mut child, mut ask) = stdio(&w);
    let mut ask = |line: &str| ask(line.as_bytes());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    assert_eq!(ask(&init.to_string())["result"]["protocolVersion"], "2025-03-26");
    let batch = json!([
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/list"},
        {"jsonrpc": "2.0", "id": "c", "method": "tools/call"},
        {"jsonrpc": "2.0", "id": "d", "method": "initialize", "params": {}},
    ]);
    let answers = ask(&batch.to_string());
    let answers = answers.as_array().unwrap_or_else(|| panic!("one array: {answers}"));
    let by_id =
        |id: &str| answers.iter().find(|m| m["id"] == id).unwrap_or_else(|| panic!("{id}: {answers:?}"));
    assert_eq!(answers.len(), 4, "{answers:?}");
    assert_eq!(by_id("a")["result"], json!({}));
    assert!(by_id("b")["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()));
    assert_eq!(by_id("c")["error"]["code"], -32602);
    assert_eq!(by_id("d")["error"]["code"], -32600);
    // An empty batch is one error (not an array); a single message still gets a single answer.
    assert_eq!(ask("[]")["error"]["code"], -32600);
    assert_eq!(ask(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#)["id"], 7);
    let _ = child.kill();
    let _ = child.wait();
}
