//! `message/send` (A2A 1.0 `SendMessage`) of a read through `bardo serve` on loopback, beside
//! the same read as an MCP `tools/call` over streamable HTTP to the same server, in one run.
//!
//! Both call the agent tool `query_state` with `bench_summarize` and ~1 KB of params: a fresh,
//! fully limited instance per call. The A2A call is a whole task: created, stored, `working`,
//! the answer as an artifact, `completed` (stored, a fabric event, one audit record), returned.

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::Duration;

fn calls(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(bardo_test_artifacts::BENCH, dir.path().join("plugins/bench.wasm")).expect("copy");
    std::fs::write(dir.path().join("bardo.toml"), "profile = \"dev\"\nplugins = [\"plugins\"]\n")
        .expect("config");
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port();
    let addr = format!("127.0.0.1:{port}");
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dir.path())
        .args([
            "--config",
            "bardo.toml",
            "serve",
            "--listen",
            &addr,
            "--no-auth",
            "--a2a",
            "--mcp",
            "--watch-ms",
            "0",
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("bardo serve");
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(started.elapsed() < Duration::from_secs(60), "bardo serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");

    let orders: Vec<Value> = (0..12)
        .map(|i| json!({"token": format!("0x{:040x}", i + 1), "amount": (1_000_000 + i).to_string(), "price": 1800.5 + f64::from(i)}))
        .collect();
    let args = json!({"kind": "bench_summarize", "params": {"orders": orders}});
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "bench", "role": "ROLE_USER", "parts": [{"data": {"tool": "query_state", "args": args}}]}}});
    let http = reqwest::Client::new();
    let url = format!("http://{addr}/a2a");
    let send = || async {
        let r: Value = http.post(&url).json(&request).send().await.expect("post").json().await.expect("json");
        r
    };
    let first = rt.block_on(send());
    let task = &first["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{first}");
    assert_eq!(task["artifacts"][0]["parts"][0]["data"]["count"], 12, "{first}");

    let mcp = rt
        .block_on(async {
            ().serve(StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp")))
                .await
                .map_err(std::io::Error::other)
        })
        .expect("MCP over HTTP");
    let arguments: JsonObject = args.as_object().cloned().expect("object");
    let call = || CallToolRequestParams::new("query_state").with_arguments(arguments.clone());
    let answer = rt.block_on(mcp.call_tool(call())).expect("MCP call");
    assert_eq!(answer.structured_content.as_ref().map(|v| v["count"].clone()), Some(json!(12)), "{answer:?}");

    let mut g = c.benchmark_group("a2a");
    g.bench_function("message_send_read_1kb", |b| {
        b.iter(|| {
            black_box(rt.block_on(send())["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED")
        })
    });
    g.bench_function("mcp_http_read_1kb", |b| {
        b.iter(|| black_box(rt.block_on(mcp.call_tool(call())).expect("call").is_error))
    });
    g.finish();
    drop(rt.block_on(mcp.cancel()));
    let _ = server.kill();
    let _ = server.wait();
}

criterion_group!(benches, calls);
criterion_main!(benches);
