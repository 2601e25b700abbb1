//! `bardo serve --a2a`: the host as an Agent2Agent (A2A 1.0) server for external agents.
//!
//! A message carries one data part naming an agent tool (`{"tool": "query_state", "args": …}`)
//! or a write (`{"action": "swap", "params": …}`). A read's task completes with the answer as
//! an artifact. A write's task works (plan, hooks, simulation; progress as status updates),
//! then waits, `input-required`, with the permit as an artifact, until the caller replies on
//! the task with `{"confirm": true}` (commit: completed with the verified receipt) or
//! `{"confirm": false}` (canceled, nothing sent); a permit that expires first fails the task
//! with code `expired`. Tasks are kept in files and outlive a restart; every state change is a
//! fabric event (journaled for `bardo events`) and an audit record with its permit.
//!
//! The agent card is public at `/.well-known/agent-card.json` (A2A's path) and
//! `/.well-known/agent.json` (the specification's); the JSON-RPC endpoint is `/a2a`, behind the
//! same bearer-token rule as `/mcp` (applied by the caller of [`A2a::routers`]).

mod card;
mod identity;
mod rpc;
mod run;
mod tasks;

pub use card::PROTOCOL_VERSION;
pub use identity::{EXTENSION_URI, IdentityConfig};
pub use rpc::RpcError;
pub use run::{AdapterSource, Ask};
pub use tasks::State;
pub use tasks::StoreError;

/// The request parsers, for the fuzz targets (`fuzz/`): not an API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::rpc::request;

    /// The caller's ask in a message, or the JSON-RPC error that refuses it.
    pub fn ask(message: &serde_json::Value) -> Result<crate::Ask, crate::RpcError> {
        crate::rpc::parse_ask(message)
    }
}

use axum::extract::State as Extract;
use axum::http::{HeaderMap, header};
use axum::routing::{get, post};
use bardo_core::fabric::Fabric;
use std::path::Path;
use std::sync::Arc;

/// The path of the JSON-RPC endpoint.
pub const PATH: &str = "/a2a";

/// Errors starting the A2A server.
#[derive(Debug, thiserror::Error)]
pub enum A2aError {
    /// The task store could not be opened.
    #[error(transparent)]
    Store(#[from] tasks::StoreError),
}

/// The A2A server's state.
pub struct A2a {
    runner: Arc<run::Runner>,
    adapter: AdapterSource,
    profile: String,
    bearer: bool,
    identity: Option<IdentityConfig>,
    hosts: CardHosts,
}

/// Which `Host` the public card may name its endpoint at: one the door admits, else `fallback`
/// (the listen address). A card never reflects a foreign `Host` header into its URL.
#[derive(Clone)]
pub struct CardHosts {
    /// Whether a `Host` header (port and all) is one the door admits.
    pub admits: Arc<dyn Fn(&str) -> bool + Send + Sync>,
    /// `host:port` to name otherwise.
    pub fallback: String,
}

impl A2a {
    /// Open the task store in `tasks_dir` (tasks left working by a previous process fail,
    /// waiting ones keep their expiry), publish task events on `fabric` (the caller journals
    /// it, with the write path's steps), and call tools through `adapter`. `bearer`: the
    /// endpoint requires a token (the card says so); `identity`: the host's ERC-8004
    /// registration, which the card names. Call inside a Tokio runtime: expiry watches run on it.
    pub fn open(
        tasks_dir: &Path,
        fabric: Arc<Fabric>,
        adapter: AdapterSource,
        profile: &str,
        (bearer, hosts): (bool, CardHosts),
        identity: Option<IdentityConfig>,
    ) -> Result<Arc<Self>, A2aError> {
        let store = Arc::new(tasks::Tasks::open(tasks_dir)?);
        let runner = run::Runner::new(store, adapter.clone(), fabric);
        runner.recover();
        Ok(Arc::new(Self { runner, adapter, profile: profile.to_owned(), bearer, identity, hosts }))
    }

    /// Task `id` as A2A shows it.
    pub fn task(&self, id: &str) -> Option<serde_json::Value> {
        self.runner.tasks.get(id).map(|r| r.task(None))
    }

    /// The routers: the public one (the agent card at both paths) and the one to put behind the
    /// access rules (the JSON-RPC endpoint at [`PATH`]).
    pub fn routers(self: &Arc<Self>) -> (axum::Router, axum::Router) {
        let public = axum::Router::new()
            .route("/.well-known/agent-card.json", get(card_route))
            .route("/.well-known/agent.json", get(card_route))
            .with_state(self.clone());
        let endpoint = axum::Router::new().route(PATH, post(rpc_route)).with_state(self.clone());
        (public, endpoint)
    }
}

async fn card_route(Extract(a2a): Extract<Arc<A2a>>, headers: HeaderMap) -> axum::Json<serde_json::Value> {
    // The endpoint's URL as this caller reached the server, if the door admits that Host; the
    // card is public, so any other Host is not reflected.
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).filter(|h| (a2a.hosts.admits)(h));
    let url = format!("http://{}{PATH}", host.unwrap_or(&a2a.hosts.fallback));
    let mut card = card::card(&(a2a.adapter)(), &a2a.profile, &url, a2a.bearer);
    if let Some(identity) = &a2a.identity {
        card["capabilities"]["extensions"] = serde_json::json!([identity.extension()]);
    }
    axum::Json(card)
}

async fn rpc_route(
    Extract(a2a): Extract<Arc<A2a>>,
    operator: Option<axum::Extension<bardo_agent::OperatorCredential>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> axum::response::Response {
    rpc::handle(a2a, headers, body, operator.is_some()).await
}
