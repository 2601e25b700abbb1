//! `bardo mcp`: one MCP session over stdio, or an HTTP server until Ctrl-C; and how the HTTP
//! doors admit (`--no-auth`) and expose tools (`--expose`), which `bardo serve` shares.

use super::{Expose, fleet_chain, journaling, load_config};
use anyhow::Result;
use bardo_core::Runtime;
use std::path::Path;
use std::process::ExitCode;

pub(crate) fn auth(no_auth: bool) -> bardo_mcp::http::Auth {
    if no_auth { bardo_mcp::http::Auth::None } else { bardo_mcp::http::Auth::Token }
}

pub(crate) fn exposure(expose: Expose) -> bardo_mcp::Exposure {
    match expose {
        Expose::Agent => bardo_mcp::Exposure::Agent,
        Expose::Concrete => bardo_mcp::Exposure::Concrete,
    }
}

/// `bardo mcp`: one stdio session, or an HTTP server until Ctrl-C.
pub(crate) fn run(
    config_path: &Path,
    profile: Option<&str>,
    http: Option<std::net::SocketAddr>,
    auth: bardo_mcp::http::Auth,
    expose: Expose,
    watch_ms: u64,
    rt: &Runtime,
) -> Result<ExitCode> {
    let exposure = exposure(expose);
    let config = load_config(config_path, config_path != Path::new("bardo.toml"))?;
    // Refuse an unsafe HTTP setup before opening anything.
    let access = http.map(|addr| bardo_mcp::http::Access::from_config(&config, addr, auth)).transpose()?;
    let watch = (watch_ms > 0).then(|| std::time::Duration::from_millis(watch_ms.max(10)));
    // The write path's steps (previews, hooks, permits, commits) journaled, for `bardo tui`.
    let (fabric, journaling) = journaling::journaled_fabric(&config, fleet_chain(&config)?, rt)?;
    let served = bardo_mcp::open(config_path, profile, exposure, watch, Some(fabric.clone()), rt)?;
    if auth == bardo_mcp::http::Auth::None {
        served.reads_only()?;
    }
    match (http, access) {
        (Some(addr), Some(access)) => {
            bardo_mcp::session_runtime()?.block_on(bardo_mcp::http::serve(served, addr, access, async {
                let _ = tokio::signal::ctrl_c().await;
            }))?
        }
        _ => bardo_mcp::serve_stdio_blocking(served)?,
    }
    journaling.finish(rt, &fabric);
    Ok(ExitCode::SUCCESS)
}
