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

pub mod http;
mod listing;
mod reload;
mod server;
mod streams;

pub use listing::Exposure;
pub use server::{Served, Session};

use rmcp::ServiceExt;

/// Errors starting the server.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// Opening the profile's host, write path or agent state failed.
    #[error(transparent)]
    Setup(#[from] bardo_host::setup::SetupError),
    /// The transport failed.
    #[error("MCP transport: {0}")]
    Transport(String),
    /// The HTTP listener could not start, or its access is not configured safely.
    #[error("{0}")]
    Http(String),
}

/// Serve one MCP session on this process's stdin/stdout until the client closes it, blocking the
/// calling thread. Nothing but protocol goes to stdout (logs go to stderr and, at the level the
/// client sets, to the client).
///
/// The session's protocol work runs on this thread alone (a current-thread runtime); each tool
/// call runs on a blocking thread, so a `notifications/cancelled` is read while it runs. Why not
/// the process's shared runtime: there, a request hopped between its two workers and the blocking
/// pool (~6 context switches a call, the largest cost of a small call on this machine); here it
/// is the reader thread and the call's thread, nothing else. Chain I/O, streams and the reload
/// watcher stay on the shared runtime.
pub fn serve_stdio_blocking(served: std::sync::Arc<Served>) -> Result<(), McpError> {
    session_runtime()?.block_on(serve_stdio(served))
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
/// current runtime.
pub async fn serve_stdio(served: std::sync::Arc<Served>) -> Result<(), McpError> {
    let session = Session::new(served);
    let running = session
        .serve(rmcp::transport::stdio_pipes())
        .await
        .map_err(|e| McpError::Transport(e.to_string()))?;
    running.waiting().await.map_err(|e| McpError::Transport(e.to_string()))?;
    Ok(())
}
