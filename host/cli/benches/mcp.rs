//! `tools/call` through `bardo mcp` (issue floor: p50 <= 150 µs over stdio), beside the same
//! call made in-process in the same run.
//!
//! (a) `in_process_1kb`: `Host::call` of `bench_summarize` with ~1 KB of params: a fresh, fully
//!     limited instance per call (the baseline).
//! (b) `adapter_read_1kb`: the work `bardo mcp` does for that call minus the protocol: the
//!     params check against the tool's schema, the call, the result filter.
//! (c) `stdio_1kb`: the same tool through `bardo mcp --expose concrete`, a child process,
//!     from rmcp's client (the official Rust SDK) over its stdin/stdout, on a current-thread
//!     runtime as the server's session is. rmcp attaches a progress token to every request, so
//!     each call also carries one progress notification (a second write and client wake-up).
//! (d) `stdio_1kb_raw_client`: the same from a minimal blocking JSON-lines client (one write a
//!     message, no progress token): the server's own latency, without a client runtime's.
//! (e) `http_1kb`: the same over streamable HTTP on loopback, from rmcp's client.
//! (f) `python_sdk_stdio/bardo` and `python_sdk_stdio/noop_python_server` (issue floor: p50
//!     within 1.2× of the baseline): the official MCP Python SDK's client
//!     (`tests/clients/mcp_bench.py`) calling the same tool with the same params, against
//!     `bardo mcp` and against a Python MCP server doing no work (`tests/clients/noop_server.py`,
//!     the SDK's MCPServer, once FastMCP), in the same run. Timed inside the client.

use bardo_core::Runtime;
use bardo_runtime::config::Config;
use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

/// ~1 KB of JSON: a small order book (as the call benchmark's).
fn params_1kb() -> JsonObject {
    let orders: Vec<serde_json::Value> = (0..12)
        .map(|i| {
            serde_json::json!({"token": format!("0x{:040x}", i + 1), "amount": (1_000_000 + i).to_string(), "price": 1800.5 + f64::from(i)})
        })
        .collect();
    let p = serde_json::json!({ "orders": orders });
    let len = p.to_string().len();
    assert!((900..1200).contains(&len), "params are {len} bytes");
    p.as_object().cloned().expect("object")
}

fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(bardo_test_artifacts::BENCH, dir.path().join("plugins/bench.wasm")).expect("copy");
    std::fs::write(dir.path().join("bardo.toml"), "profile = \"dev\"\nplugins = [\"plugins\"]\n")
        .expect("config");
    dir
}

fn mcp_command(dir: &Path, extra: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_bardo"));
    cmd.current_dir(dir)
        .args(["--config", "bardo.toml", "mcp", "--expose", "concrete", "--watch-ms", "0"])
        .args(extra)
        .stderr(std::process::Stdio::null());
    cmd
}

/// A minimal blocking JSON-lines client: the server's own latency, with no client runtime.
struct RawClient {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    line: String,
    id: u64,
}

impl RawClient {
    fn start(dir: &Path) -> Self {
        use std::io::Write;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bardo"))
            .current_dir(dir)
            .args(["--config", "bardo.toml", "mcp", "--expose", "concrete", "--watch-ms", "0"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut c = Self { child, stdin, stdout, line: String::new(), id: 0 };
        c.request(r#""method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}"#);
        c.stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .expect("write");
        c
    }

    fn request(&mut self, body: &str) -> &str {
        use std::io::{BufRead, Write};
        self.id += 1;
        // One write per message, as a client should: a split line wakes the server per piece.
        let message = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},{body}}}\n", self.id);
        self.stdin.write_all(message.as_bytes()).expect("write");
        self.line.clear();
        self.stdout.read_line(&mut self.line).expect("read");
        &self.line
    }
}

impl Drop for RawClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn calls(c: &mut Criterion) {
    let dir = workdir();
    let rt = Runtime::new().expect("runtime");
    let params = params_1kb();
    let text = serde_json::Value::Object(params.clone()).to_string();

    let config = Config::load(&dir.path().join("bardo.toml"), true).expect("config");
    let opened = bardo_runtime::setup::open(&config, None, &rt).expect("open");
    let host = std::sync::Arc::new(opened.host);
    let expected = host.call("bench_summarize", &text).result.expect("in-process call");
    assert!(expected.contains(r#""count":12"#), "{expected}");

    let mut g = c.benchmark_group("mcp");
    let path =
        std::sync::Arc::new(bardo_safety::setup::write_path(&config, host.clone()).expect("write path"));
    let adapter = bardo_agent::setup::adapter(&config, path).expect("adapter");
    let args = serde_json::Value::Object(params.clone());
    let control = std::sync::Arc::new(bardo_runtime::plugin::CallControl::new());
    g.bench_function("adapter_read_1kb", |b| {
        b.iter(|| black_box(adapter.call_read("bench_summarize", black_box(&args), &control).is_ok()))
    });
    g.bench_function("in_process_1kb", |b| {
        b.iter(|| black_box(host.call("bench_summarize", black_box(&text)).result.is_ok()))
    });

    let call = || CallToolRequestParams::new("bench_summarize").with_arguments(params.clone());
    // The shared runtime's two workers would add a hop between the client's reader and caller.
    let client_rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let stdio = client_rt
        .block_on(async {
            ().serve(TokioChildProcess::new(mcp_command(dir.path(), &[]))?)
                .await
                .map_err(std::io::Error::other)
        })
        .expect("bardo mcp over stdio");
    let first = client_rt.block_on(stdio.call_tool(call())).expect("stdio call");
    assert_eq!(first.is_error, Some(false), "{first:?}");
    assert_eq!(first.structured_content.as_ref().and_then(|v| v["count"].as_u64()), Some(12), "{first:?}");
    g.bench_function("stdio_1kb", |b| {
        b.iter(|| black_box(client_rt.block_on(stdio.call_tool(call())).expect("call").is_error))
    });
    drop(client_rt.block_on(stdio.cancel()));

    let mut raw = RawClient::start(dir.path());
    let body = format!(r#""method":"tools/call","params":{{"name":"bench_summarize","arguments":{text}}}"#);
    let first = raw.request(&body).to_string();
    assert!(first.contains(r#""structuredContent":{"#) && first.contains(r#""count":12"#), "{first}");
    g.bench_function("stdio_1kb_raw_client", |b| b.iter(|| black_box(raw.request(&body).len())));
    drop(raw);

    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port();
    let addr = format!("127.0.0.1:{port}");
    let mut server = rt
        .block_on(async {
            mcp_command(dir.path(), &["--http", &addr, "--no-auth"]).kill_on_drop(true).spawn()
        })
        .expect("spawn");
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(started.elapsed() < Duration::from_secs(60), "bardo mcp --http did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let http = rt
        .block_on(async {
            ().serve(StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp")))
                .await
                .map_err(std::io::Error::other)
        })
        .expect("bardo mcp over HTTP");
    let first = rt.block_on(http.call_tool(call())).expect("http call");
    assert_eq!(first.is_error, Some(false), "{first:?}");
    g.bench_function("http_1kb", |b| {
        b.iter(|| black_box(rt.block_on(http.call_tool(call())).expect("call").is_error))
    });
    drop(rt.block_on(http.cancel()));
    let _ = rt.block_on(server.kill());
    g.finish();
}

/// A long-lived `mcp_bench.py` client of one server: each request makes N calls and answers how
/// long they took.
struct PythonClient {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: std::io::BufReader<std::process::ChildStdout>,
}

impl PythonClient {
    fn start(dir: &Path, args: &str, server: &[&str]) -> Self {
        use std::io::BufRead;
        let clients = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/clients");
        let mut child = std::process::Command::new(clients.join(".venv/bin/python"))
            .arg(clients.join("mcp_bench.py"))
            .args(["bench_summarize", args, "--"])
            .args(server)
            .current_dir(dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the Python client (run `make setup`)");
        let input = child.stdin.take().expect("stdin");
        let mut output = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut ready = String::new();
        output.read_line(&mut ready).expect("read");
        assert_eq!(ready.trim(), "ready", "the client's first call failed");
        Self { child, input, output }
    }

    fn time(&mut self, calls: u64) -> Duration {
        use std::io::{BufRead, Write};
        writeln!(self.input, "{calls}").and_then(|()| self.input.flush()).expect("write");
        let mut took = String::new();
        self.output.read_line(&mut took).expect("read");
        Duration::from_nanos(took.trim().parse().expect("nanoseconds"))
    }
}

impl Drop for PythonClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn python_sdk(c: &mut Criterion) {
    let dir = workdir();
    let args = serde_json::Value::Object(params_1kb()).to_string();
    let clients = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/clients");
    let python = clients.join(".venv/bin/python").display().to_string();
    let noop = clients.join("noop_server.py").display().to_string();
    let bardo = env!("CARGO_BIN_EXE_bardo");
    let mut g = c.benchmark_group("python_sdk_stdio");
    let mut client = PythonClient::start(
        dir.path(),
        &args,
        &[bardo, "--config", "bardo.toml", "mcp", "--expose", "concrete", "--watch-ms", "0"],
    );
    g.bench_function("bardo", |b| b.iter_custom(|n| client.time(n)));
    drop(client);
    let mut client = PythonClient::start(dir.path(), &args, &[&python, &noop]);
    g.bench_function("noop_python_server", |b| b.iter_custom(|n| client.time(n)));
    g.finish();
}

criterion_group!(benches, calls, python_sdk);
criterion_main!(benches);
