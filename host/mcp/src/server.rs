//! The MCP server: [`Served`] is the process's (host, write path, agent tools, listing, open
//! sessions), [`Session`] one client's connection ([`rmcp::ServerHandler`]).

// `logging/setLevel` and `notifications/message` are deprecated by the 2026-07-28 revision
// (SEP-2577) but are part of the handshake-era revisions this server speaks.
#![allow(deprecated)]

use crate::listing::{self, Exposure, Listing, Route};
use crate::streams::{self, Streams};
use bardo_agent::Adapter;
use bardo_core::Runtime;
use bardo_core::control::CallControl;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::sync::{lock, read, write};
use bardo_runtime::config::Config;
use bardo_runtime::live::{Live, Watcher};
use bardo_safety::WritePath;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel,
    LoggingMessageNotificationParam, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::{Duration, Instant};

/// The protocol revisions served: those with the `initialize` handshake and sessions.
const VERSIONS: &[ProtocolVersion] =
    &[ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_03_26];

/// The adapter and listing of the plugins loaded now; swapped as a whole on a reload.
pub(crate) struct Current {
    pub adapter: Arc<Adapter>,
    pub listing: Listing,
}

/// What every session of one `bardo mcp` process shares.
pub struct Served {
    profile: String,
    config: Config,
    pub(crate) live: Arc<Live>,
    path: Arc<WritePath>,
    exposure: Exposure,
    current: RwLock<Arc<Current>>,
    sessions: Mutex<Vec<Weak<SessionState>>>,
    /// Serving a door without a token (`--no-auth`): only tools that change nothing.
    reads_only: std::sync::atomic::AtomicBool,
    /// How long a commit waits for its client's user to confirm it (`[mcp] confirm_timeout_secs`).
    confirm_timeout: Duration,
    _watcher: Option<Watcher>,
}

impl Served {
    /// Open `profile` (none: the configuration's) from `config_path`, with its write path and
    /// agent state; with `watch`, rebuild the host on changes to the configuration and lock that
    /// often (`crate::open` applies the rebuilds); with `fabric`, the write path publishes every
    /// step there (to be journaled).
    pub(crate) fn open(
        config_path: &Path,
        profile: Option<&str>,
        exposure: Exposure,
        watch: Option<Duration>,
        fabric: Option<Arc<bardo_core::fabric::Fabric>>,
        runtime: &Runtime,
    ) -> Result<Arc<Self>, crate::McpError> {
        let config = Config::load(config_path, true)?;
        let profiles: Vec<String> = profile.map(|p| vec![p.to_owned()]).unwrap_or_default();
        let live = Arc::new(Live::open(config_path, &profiles, runtime)?);
        let profile = live.profiles()[0].clone();
        let host = live
            .host(&profile)
            .ok_or_else(|| crate::McpError::Transport(format!("profile `{profile}` did not open")))?;
        let mut path = bardo_safety::setup::write_path(&config, host)?;
        if let Some(fabric) = fabric {
            path = path.with_fabric(fabric);
        }
        let path = Arc::new(path);
        let adapter = Arc::new(bardo_agent::setup::adapter(&config, path.clone())?);
        let listing = listing::listing(&adapter, exposure);
        let watcher = watch.map(|every| live.watch(every));
        let confirm_timeout =
            Duration::from_secs(config.section::<crate::config::McpConfig>()?.confirm_timeout_secs);
        let served = Arc::new(Self {
            profile,
            config,
            live,
            path,
            exposure,
            current: RwLock::new(Arc::new(Current { adapter, listing })),
            sessions: Mutex::default(),
            reads_only: false.into(),
            confirm_timeout,
            _watcher: watcher,
        });
        Ok(served)
    }

    /// Serve only the tools that change nothing (a door anyone on this machine may reach:
    /// `--no-auth`), for as long as the process runs, reloads included. Refused when the profile
    /// has write tools: those are served only behind a token.
    pub fn reads_only(&self) -> Result<(), crate::McpError> {
        let writes = self.adapter().write_tools();
        if !writes.is_empty() {
            return Err(crate::McpError::Http(format!(
                "--no-auth serves only profiles without write tools; profile `{}` has {} ({}): drop --no-auth and give clients the token",
                self.profile,
                writes.len(),
                writes.join(", ")
            )));
        }
        self.reads_only.store(true, std::sync::atomic::Ordering::SeqCst);
        let adapter = Arc::new(bardo_agent::setup::adapter(&self.config, self.path.clone())?.reads_only());
        let listing = listing::listing(&adapter, self.exposure);
        *write(&self.current) = Arc::new(Current { adapter, listing });
        Ok(())
    }

    /// The profile served.
    pub fn profile(&self) -> &str {
        &self.profile
    }

    /// The adapter and listing now.
    pub(crate) fn current(&self) -> Arc<Current> {
        read(&self.current).clone()
    }

    /// The adapter every call goes through now (replaced on a hot reload; one write path).
    pub fn adapter(&self) -> Arc<Adapter> {
        self.current().adapter.clone()
    }

    /// The names of the tools listed now.
    pub fn tool_names(&self) -> Vec<String> {
        self.current().listing.tools.iter().map(|t| t.name.to_string()).collect()
    }

    /// Take the live host of the profile (after a reload) as the write path's next generation,
    /// and an adapter over it: new calls use them, calls in flight finish on theirs. True when
    /// the listing changed.
    pub(crate) fn apply_reload(&self) -> Result<bool, crate::McpError> {
        let Some(host) = self.live.host(&self.profile) else { return Ok(false) };
        if self.path.host().is_some_and(|current| Arc::ptr_eq(&current, &host)) {
            return Ok(false);
        }
        let services = host.services().clone();
        self.path.reload(host, services)?;
        let mut adapter = bardo_agent::setup::adapter(&self.config, self.path.clone())?;
        if self.reads_only.load(std::sync::atomic::Ordering::SeqCst) {
            adapter = adapter.reads_only();
        }
        let adapter = Arc::new(adapter);
        let listing = listing::listing(&adapter, self.exposure);
        let changed = listing != self.current().listing;
        *write(&self.current) = Arc::new(Current { adapter, listing });
        Ok(changed)
    }

    /// The sessions still open.
    fn sessions(&self) -> Vec<Arc<SessionState>> {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| s.strong_count() > 0);
        sessions.iter().filter_map(Weak::upgrade).collect()
    }

    /// Tell every session its tool list changed.
    pub(crate) async fn notify_tools_changed(&self) {
        for s in self.sessions() {
            if let Some(peer) = s.peer.get()
                && let Err(e) = peer.notify_tool_list_changed().await
            {
                tracing::debug!("cannot send tools/list_changed: {e}");
            }
        }
    }

    /// Log `message` to every session whose level lets it through.
    pub(crate) async fn log_all(&self, level: LoggingLevel, message: String) {
        for s in self.sessions() {
            s.log(level, &message).await;
        }
    }
}

/// Severity rank of an MCP logging level (the type has no order).
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// One session's state, shared with the process for broadcasts.
pub(crate) struct SessionState {
    peer: OnceLock<Peer<RoleServer>>,
    /// The least severe level the client wants (`logging/setLevel`; warning until it sets one).
    level: Mutex<LoggingLevel>,
    streams: Mutex<Option<Arc<Streams>>>,
}

impl SessionState {
    async fn log(&self, level: LoggingLevel, message: &str) {
        let min = *lock(&self.level);
        let Some(peer) = self.peer.get() else { return };
        if rank(level) < rank(min) {
            return;
        }
        let param = LoggingMessageNotificationParam::new(level, Value::String(message.to_owned()))
            .with_logger("bardo");
        if let Err(e) = peer.notify_logging_message(param).await {
            tracing::debug!("cannot send a log message: {e}");
        }
    }
}

/// One client's session.
pub struct Session {
    served: Arc<Served>,
    state: Arc<SessionState>,
    /// The session thread's slot for calls that only compute (stdio sessions).
    inline: Option<Arc<crate::inline::Inline>>,
}

impl Session {
    /// A new session of `served`.
    pub fn new(served: Arc<Served>) -> Self {
        let state = Arc::new(SessionState {
            peer: OnceLock::new(),
            level: Mutex::new(LoggingLevel::Warning),
            streams: Mutex::default(),
        });
        lock(&served.sessions).push(Arc::downgrade(&state));
        Self { served, state, inline: None }
    }

    /// Try read calls on the session's own thread first, through `inline`.
    pub(crate) fn with_inline(mut self, inline: Arc<crate::inline::Inline>) -> Self {
        self.inline = Some(inline);
        self
    }

    /// The call run on the session thread, if it has a free slot and the call only computes.
    async fn try_inline(
        &self,
        adapter: &Arc<Adapter>,
        name: &str,
        route: &Route,
        args: &Value,
        control: &Arc<CallControl>,
    ) -> Option<Result<Value, ToolError>> {
        let inline = self.inline.as_ref()?;
        let (adapter, name, route, args, control) =
            (adapter.clone(), name.to_owned(), route.clone(), args.clone(), control.clone());
        inline
            .run(move || match route {
                Route::Agent => adapter.try_call_inline(&name, &args, &control),
                Route::Read => adapter.try_call_read_inline(&name, &args, &control),
            })
            .await
            .flatten()
    }

    fn remember(&self, peer: &Peer<RoleServer>) {
        let _ = self.state.peer.set(peer.clone());
    }

    /// This session's stream subscriptions, started on first use.
    fn streams(&self, adapter: &Adapter, peer: &Peer<RoleServer>) -> Result<Arc<Streams>, ToolError> {
        let mut streams = lock(&self.state.streams);
        if let Some(s) = streams.as_ref() {
            return Ok(s.clone());
        }
        let s = Arc::new(Streams::new(adapter, peer.clone())?);
        *streams = Some(s.clone());
        Ok(s)
    }

    /// Run one tool call on a blocking thread: progress forwarded in order, a client's cancel
    /// turned into the instance's interrupt.
    async fn run(
        &self,
        name: String,
        route: Route,
        args: Value,
        context: &RequestContext<RoleServer>,
        progress_token: Option<rmcp::model::ProgressToken>,
    ) -> Result<Value, ToolError> {
        let adapter = self.served.current().adapter.clone();
        let mut control = CallControl::new();
        let mut forward = None;
        if let Some(token) = progress_token {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<bardo_core::control::Progress>();
            control = control.on_progress(move |p| {
                let _ = tx.send(p.clone());
            });
            let peer = context.peer.clone();
            // One forwarder per call keeps the notifications in the order the plugin reported.
            forward = Some(tokio::spawn(async move {
                while let Some(p) = rx.recv().await {
                    let param = ProgressNotificationParam::new(token.clone(), f64::from(p.step + 1))
                        .with_total(f64::from(p.total))
                        .with_message(p.name);
                    if peer.notify_progress(param).await.is_err() {
                        break;
                    }
                }
            }));
        }
        let control = Arc::new(control);
        let cancel = {
            let (ct, control) = (context.ct.clone(), control.clone());
            tokio::spawn(async move {
                ct.cancelled().await;
                control.cancel();
            })
        };
        let started = Instant::now();
        // A commit the confirmation policy holds waits for a person first (see `confirm`).
        if name == "commit_action"
            && let Route::Agent = route
            && let Some(permit_id) = args.get("permit_id").and_then(Value::as_str)
            && let Err(e) =
                crate::confirm::confirm(adapter.write_path(), permit_id, context, self.served.confirm_timeout)
                    .await
        {
            cancel.abort();
            return Err(e);
        }
        let result = match self.try_inline(&adapter, &name, &route, &args, &control).await {
            Some(result) => result,
            None => {
                let (name, control) = (name.clone(), control.clone());
                tokio::task::spawn_blocking(move || match route {
                    Route::Agent => adapter.call_with(&name, &args, &control),
                    Route::Read => adapter.call_read(&name, &args, &control),
                })
                .await
                .unwrap_or_else(|e| Err(ToolError::new(ErrorCode::Internal, format!("the call failed: {e}"))))
            }
        };
        cancel.abort();
        let cancelled = control.is_cancelled();
        drop(control); // closes the progress channel: the forwarder drains and ends
        if let Some(forward) = forward {
            let _ = forward.await;
        }
        if cancelled {
            let ms = started.elapsed().as_millis();
            let message = match &result {
                Err(e) if e.code == ErrorCode::Cancelled => {
                    format!("`{name}` cancelled by the client after {ms} ms; its instance was stopped")
                }
                Ok(answer) if name == "commit_action" => format!(
                    "`commit_action` was not cancelled: it was already broadcasting, and a broadcast is not \
                     stopped; its result: {answer}"
                ),
                _ => format!("`{name}` was asked to cancel after {ms} ms but had already finished"),
            };
            let level = if name == "commit_action" { LoggingLevel::Warning } else { LoggingLevel::Info };
            tracing::info!("{message}");
            self.state.log(level, &message).await;
        }
        result
    }
}

/// The `_meta` key of a concrete tool's result naming its schema version.
pub(crate) const SCHEMA_VERSION_META: &str = "dev.bardo/schema_version";

/// A tool error as the client sees it: `isError` and the typed `{code, message, retryable}`.
fn error_result(e: &ToolError) -> CallToolResult {
    CallToolResult::structured_error(json!({"code": e.code, "message": e.message, "retryable": e.retryable}))
}

fn answer_result(value: Value) -> CallToolResult {
    if value.is_object() {
        CallToolResult::structured(value)
    } else {
        CallToolResult::success(vec![ContentBlock::text(value.to_string())])
    }
}

/// A resource error: JSON-RPC errors carrying the typed code in `data`.
fn resource_error(e: ToolError) -> ErrorData {
    let data = Some(json!({"code": e.code, "retryable": e.retryable}));
    match e.code {
        ErrorCode::NotFound => ErrorData::resource_not_found(e.message, data),
        ErrorCode::InvalidParams | ErrorCode::Denied => ErrorData::invalid_params(e.message, data),
        _ => ErrorData::internal_error(e.message, data),
    }
}

impl Session {
    /// What the client is told at the handshake: only the tools it is served now.
    fn instructions(&self) -> String {
        let writes = self.served.current().listing.tools.iter().any(|t| t.name == "preview_action");
        let act = if writes {
            "act with preview_action (plan, safety checks, simulation, a permit) then commit_action (executes \
             the permit once)"
        } else {
            "this server has no write tools now: it has no wallet (the server's environment lacks \
             BARDO_PRIVATE_KEY — an MCP client passes a server only part of its own environment, so name the \
             variable in the client's `env` for this server — or [signer] is not set in bardo.toml), or it is \
             served without a token (--no-auth)"
        };
        format!(
            "Bardo Tools, profile `{}`. Read chain state with query_state (or the concrete read tools when \
             listed); {act}. Errors carry a typed `code` to branch on and `retryable`. Stream tools are \
             resources: subscribe to bardo://streams/<tool>?params=<JSON>.",
            self.served.profile
        )
    }
}

impl ServerHandler for Session {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
            .with_server_info(Implementation::new("bardo", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions())
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(VERSIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.remember(&context.peer);
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.remember(&context.peer);
        *lock(&self.state.level) = request.level;
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.remember(&context.peer);
        Ok(ListToolsResult::with_all_items(self.served.current().listing.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.remember(&context.peer);
        let name = request.name.to_string();
        let Some(route) = self.served.current().listing.routes.get(&name).cloned() else {
            let shown: String = name.chars().take(64).collect();
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{shown}`; tools/list names the tools of this profile"),
                None,
            ));
        };
        let progress_token = context
            .meta
            .get_progress_token()
            .or_else(|| request.meta.as_ref().and_then(|m| m.get_progress_token()));
        let args = Value::Object(request.arguments.unwrap_or_default());
        // A concrete tool's answer says which schema version it follows (schema versioning).
        let schema_version = match route {
            Route::Read => {
                self.served.current().adapter.host().catalog().get(&name).map(|e| e.def.schema_version)
            }
            Route::Agent => None,
        };
        let result = match self.run(name, route, args, &context, progress_token).await {
            Ok(value) => {
                let mut answer = answer_result(value);
                if let Some(v) = schema_version {
                    let mut meta = rmcp::model::MetaObject::new();
                    meta.0.insert(SCHEMA_VERSION_META.into(), json!(v));
                    answer.meta = Some(meta);
                }
                answer
            }
            Err(e) => error_result(&e),
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        // Stream resources exist per params: they are listed as templates.
        Ok(ListResourcesResult::with_all_items(Vec::new()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.remember(&context.peer);
        Ok(ListResourceTemplatesResult::with_all_items(streams::templates(&self.served.current().adapter)))
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.remember(&context.peer);
        let adapter = self.served.current().adapter.clone();
        let streams = self.streams(&adapter, &context.peer).map_err(resource_error)?;
        let uri = request.uri;
        tokio::task::spawn_blocking(move || streams.subscribe(&uri))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
            .map_err(|e| resource_error(adapter.screen_error(e)))
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let streams = lock(&self.state.streams).clone();
        match streams {
            Some(s) if s.unsubscribe(&request.uri) => Ok(()),
            _ => Err(resource_error(ToolError::new(
                ErrorCode::NotFound,
                format!("not subscribed to `{}`", request.uri.chars().take(200).collect::<String>()),
            ))),
        }
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let streams = lock(&self.state.streams).clone();
        let uri = request.uri;
        let Some(streams) = streams else {
            return Err(resource_error(ToolError::new(
                ErrorCode::NotFound,
                "no stream subscriptions in this session; resources/subscribe first",
            )));
        };
        let adapter = self.served.current().adapter.clone();
        let value = adapter.screen(streams.read(&uri)).map_err(resource_error)?;
        let contents = ResourceContents::TextResourceContents {
            uri,
            mime_type: Some("application/json".into()),
            text: value.to_string(),
            meta: None,
        };
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(vec![contents])))
    }
}
