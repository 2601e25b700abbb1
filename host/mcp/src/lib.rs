//! `bardo mcp`: the host as a Model Context Protocol server, built on `rmcp`.
//!
//! An MCP client sees the profile's agent-facing tools (`preview_action`, `commit_action`, …),
//! optionally its concrete read tools (`--expose concrete`), and its stream tools as resources it
//! subscribes to. Every call goes through the same adapter, limits and safety chain as the Rust
//! API: a write tool is never callable directly, only through a simulated, permitted,
//! single-use commit. Served over stdio ([`serve_stdio`]) or streamable HTTP ([`http`]).
//!
//! The server speaks the MCP revisions with the `initialize` handshake (2024-11-05 up to
//! 2025-11-25): sessions, `resources/subscribe`, `notifications/*`. A client that probes the
//! stateless 2026-07-28 revision first (`server/discover`) falls back to the handshake.

mod batch;
pub mod config;
mod confirm;
pub mod http;
mod inline;
mod listing;
mod reload;
mod screen;
mod server;
mod streams;

pub use listing::Exposure;

/// The message screen, for the fuzz targets (`fuzz/`): not an API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::screen::{Handshake, Message, Screened, screen};
}
pub use server::{Served, Session};

use rmcp::ServiceExt;

/// Errors starting the server.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// `bardo.toml` is unusable.
    #[error(transparent)]
    Config(#[from] bardo_core::config::ConfigError),
    /// Opening the profile's host failed.
    #[error(transparent)]
    Setup(#[from] bardo_runtime::setup::SetupError),
    /// Opening the write path failed.
    #[error(transparent)]
    WritePath(#[from] bardo_safety::setup::SetupError),
    /// Opening the agent's tools failed.
    #[error(transparent)]
    Agent(#[from] bardo_agent::setup::SetupError),
    /// A reload could not become the write path's next generation.
    #[error(transparent)]
    Reload(#[from] bardo_core::ToolError),
    /// The transport failed.
    #[error("MCP transport: {0}")]
    Transport(String),
    /// The HTTP listener could not start, or its access is not configured safely.
    #[error("{0}")]
    Http(String),
}

/// Open `profile` (none: the configuration's) from `config_path` for serving: the host, its
/// write path and the agent's tools; with `watch`, the configuration and lock are watched that
/// often and a rebuilt host becomes the write path's next generation (sessions are told when
/// the listing changed); with `fabric`, the write path publishes every step there.
pub fn open(
    config_path: &std::path::Path,
    profile: Option<&str>,
    exposure: Exposure,
    watch: Option<std::time::Duration>,
    fabric: Option<std::sync::Arc<bardo_core::fabric::Fabric>>,
    runtime: &bardo_core::Runtime,
) -> Result<std::sync::Arc<Served>, McpError> {
    let served = Served::open(config_path, profile, exposure, watch, fabric, runtime)?;
    if let Some(every) = watch {
        reload::spawn(std::sync::Arc::downgrade(&served), every, runtime);
    }
    Ok(served)
}

/// Serve one MCP session on this process's stdin/stdout until the client closes it, blocking the
/// calling thread. Nothing but protocol goes to stdout (logs go to stderr and, at the level the
/// client sets, to the client).
///
/// The session's protocol work runs on this thread alone (a current-thread runtime), and so do
/// its read calls, between the runtime's turns, as long as they only compute ([`inline`]): a
/// request is read, run and answered by one thread. A call that waits (RPC, a simulation) or
/// runs on, and every write, runs on a blocking thread instead, so a `notifications/cancelled`
/// is read while it runs. Chain I/O, streams and the reload watcher stay on the shared runtime.
pub fn serve_stdio_blocking(served: std::sync::Arc<Served>) -> Result<(), McpError> {
    let runtime = session_runtime()?;
    let inline = std::sync::Arc::new(inline::Inline::default());
    inline::drive(&runtime, &inline, serve_on(Session::new(served).with_inline(inline.clone())))
}

/// The runtime one session's protocol work runs on (see [`serve_stdio_blocking`]).
pub fn session_runtime() -> Result<tokio::runtime::Runtime, McpError> {
    tokio::runtime::Builder::new_current_thread()
        .thread_name("bardo-mcp")
        .enable_all()
        .build()
        .map_err(|e| McpError::Transport(format!("starting the session's runtime: {e}")))
}

/// Serve one MCP session on this process's stdin/stdout until the client closes it, on the
/// current runtime (every call on a blocking thread).
pub async fn serve_stdio(served: std::sync::Arc<Served>) -> Result<(), McpError> {
    serve_on(Session::new(served)).await
}

/// One session on stdin/stdout, each incoming line [`screen`]ed first: rmcp reads what passes
/// through a pipe, and its answers and the screen's errors go out line by line, never interleaved.
async fn serve_on(session: Session) -> Result<(), McpError> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (server_in, mut feed) = tokio::io::duplex(1 << 16);
    let (server_out, from_server) = tokio::io::duplex(1 << 16);
    let (errors, mut screened_out) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let pending = std::sync::Arc::new(batch::Pending::default());
    let batches = pending.clone();
    // The pipes are served before the handshake: rmcp's `serve` waits for `initialize` itself.
    tokio::spawn(async move {
        let mut stdin = tokio::io::BufReader::new(tokio::io::stdin());
        let (mut line, mut handshake) = (Vec::new(), screen::Handshake::default());
        while stdin.read_until(b'\n', &mut line).await.is_ok_and(|n| n > 0) {
            let body = line.trim_ascii();
            // A batch, on a session whose revision allows them: each message on its own.
            if body.starts_with(b"[")
                && handshake.batching()
                && let Ok(serde_json::Value::Array(items)) = serde_json::from_slice(body)
            {
                let split = match batch::split(items, &batches, |m| handshake.check(m)) {
                    Ok(split) => split,
                    Err(e) => {
                        let _ = errors.send(format!("{e}\n").into_bytes());
                        line.clear();
                        continue;
                    }
                };
                let mut fed = Ok(());
                for message in &split.feed {
                    fed = fed.and(feed.write_all(message).await).and(feed.write_all(b"\n").await);
                }
                if let Some(now) = batches.open(split.ids, split.answered) {
                    let _ = errors.send(now);
                }
                if fed.is_err() {
                    break;
                }
            } else if !body.is_empty() {
                match screen::screen(body, |m| handshake.check(m)) {
                    screen::Screened::Pass => {
                        let fed = feed.write_all(body).await.and(feed.write_all(b"\n").await);
                        if fed.is_err() {
                            break;
                        }
                    }
                    screen::Screened::Reply(reply) => {
                        let _ = errors.send(format!("{reply}\n").into_bytes());
                    }
                    screen::Screened::Drop => {}
                }
            }
            line.clear();
        }
        // Dropping `feed` ends rmcp's input: the session closes as the client's did.
    });
    let writer = tokio::spawn(async move {
        let (mut out, mut answers, mut line) =
            (tokio::io::stdout(), tokio::io::BufReader::new(from_server), Vec::new());
        loop {
            tokio::select! {
                // A line partly read stays in `line` until it is whole (read_until appends).
                read = answers.read_until(b'\n', &mut line) => {
                    if !read.is_ok_and(|n| n > 0) {
                        break;
                    }
                    let written = match pending.answer(&line) {
                        None => out.write_all(&line).await,
                        Some(None) => Ok(()),
                        Some(Some(answers)) => out.write_all(&answers).await,
                    };
                    if written.and(out.flush().await).is_err() {
                        break;
                    }
                    line.clear();
                }
                Some(reply) = screened_out.recv() => {
                    if out.write_all(&reply).await.and(out.flush().await).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let running =
        session.serve((server_in, server_out)).await.map_err(|e| McpError::Transport(e.to_string()));
    running?.waiting().await.map_err(|e| McpError::Transport(e.to_string()))?;
    // Everything rmcp answered is written before the process ends.
    let _ = writer.await;
    Ok(())
}
