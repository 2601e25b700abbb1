//! `bardo mcp --http ADDR`: streamable HTTP (SSE for server messages) at `/mcp`.
//!
//! Who may connect: every request carries a bearer token. The tokens are the operator's
//! (`[mcp] tokens_env` or `token_file`; never in `bardo.toml` itself) or, on loopback when none
//! is configured, the host's own: made on first start beside the host key (`http.token`, mode
//! 0600), so only who can read this host's files can commit or halt through a door. Off loopback
//! the server refuses to start without the operator's tokens. `--no-auth` ([`Auth::None`]) serves
//! loopback without a token, and then only tools that change nothing (`Served::reads_only`).
//! `Origin` and `Host` are checked against loopback and the configured lists (DNS-rebinding
//! protection, as the MCP specification asks); a foreign one is refused with 403.

use crate::McpError;
use crate::server::{Served, Session};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bardo_core::secret::{TaintLabel, TaintedString};
use bardo_runtime::config::Config;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zeroize::Zeroizing;

/// The path the MCP endpoint is served at.
pub const PATH: &str = "/mcp";

/// How a door admits its callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// A bearer token: the operator's, or the host's own (see the module's note).
    Token,
    /// No token (`--no-auth`): loopback only, and only tools that change nothing.
    None,
}

/// Who may reach the endpoint.
#[derive(Clone)]
pub struct Access {
    tokens: Arc<Vec<TaintedString>>,
    origins: Vec<String>,
    hosts: Vec<String>,
    /// The host's own token file, when that is the token.
    own: Option<(PathBuf, bool)>,
    /// The operator's token and where it is (`$BARDO_OPERATOR_TOKEN`, or its file beside the host
    /// key): it gets in like any token and also confirms permits held for a person
    /// ([`bardo_agent::OperatorCredential`]).
    operator: Option<(Arc<TaintedString>, String)>,
    /// Most sessions at once, and how long one may idle.
    max_sessions: usize,
    idle: std::time::Duration,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the tokens.
        f.debug_struct("Access")
            .field("tokens", &self.tokens.len())
            .field("origins", &self.origins)
            .field("hosts", &self.hosts)
            .field("own", &self.own)
            .field("operator", &self.operator.as_ref().map(|(_, path)| path))
            .finish()
    }
}

impl Access {
    /// The access rules for serving on `addr` under `config`'s `[mcp]` with `auth`; an error if
    /// `addr` is not loopback and no token is configured, or a token source cannot be read.
    pub fn from_config(config: &Config, addr: SocketAddr, auth: Auth) -> Result<Self, McpError> {
        let mcp: crate::config::McpConfig = config.section()?;
        let mcp = &mcp;
        let mut tokens: Vec<TaintedString> = Vec::new();
        let token = |t: &str| TaintedString::new(Zeroizing::new(t.to_owned()), &[TaintLabel::OwnerSecret]);
        if let Some(var) = &mcp.tokens_env {
            match TaintedString::from_env(var, &[TaintLabel::OwnerSecret]) {
                Some(v) => tokens
                    .extend(v.expose_secret().split(',').map(str::trim).filter(|t| !t.is_empty()).map(token)),
                None => {
                    return Err(McpError::Http(format!(
                        "[mcp] tokens_env names `{var}`, which is not set; export it (comma-separated tokens)"
                    )));
                }
            }
        }
        if let Some(file) = &mcp.token_file {
            let path = config.resolve(file);
            let text = Zeroizing::new(std::fs::read_to_string(&path).map_err(|e| {
                McpError::Http(format!("cannot read [mcp] token_file {}: {e}", path.display()))
            })?);
            tokens.extend(
                text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(token),
            );
        }
        if let Some(short) = tokens.iter().find(|t| t.expose_secret().len() < 16) {
            return Err(McpError::Http(format!(
                "an MCP bearer token is {} characters; use at least 16 (e.g. `openssl rand -hex 32`)",
                short.expose_secret().len()
            )));
        }
        if tokens.is_empty() && !addr.ip().is_loopback() {
            return Err(McpError::Http(format!(
                "refusing to serve on {addr} (not loopback) without bearer tokens: set [mcp] tokens_env = \"VAR\" \
                 (tokens in that environment variable, comma-separated) or [mcp] token_file in bardo.toml"
            )));
        }
        let mut own = None;
        let mut operator = None;
        if auth == Auth::Token {
            let safety: bardo_safety::SafetyConfig = config.section()?;
            let path = config.resolve(&safety.host_key).with_file_name(OPERATOR_TOKEN);
            let (token, at) = operator_token(&path).map_err(McpError::Http)?;
            if tokens.iter().any(|t| constant_time_eq(t.expose_secret().as_bytes(), token.as_bytes())) {
                return Err(McpError::Http(format!(
                    "the operator's token ({at}) is also an agent's token ([mcp] tokens_env or token_file): \
                     an agent holding it could confirm its own commits; give the operator a token of its own"
                )));
            }
            operator = Some((Arc::new(TaintedString::new(token, &[TaintLabel::OwnerSecret])), at));
        }
        match auth {
            Auth::None if !tokens.is_empty() => {
                return Err(McpError::Http(
                    "--no-auth, yet [mcp] configures tokens: drop one of them".into(),
                ));
            }
            Auth::None => {}
            Auth::Token if tokens.is_empty() => {
                let safety: bardo_safety::SafetyConfig = config.section()?;
                let path = config.resolve(&safety.host_key).with_file_name(OWN_TOKEN);
                let (token, made) = own_token(&path).map_err(McpError::Http)?;
                tokens.push(TaintedString::new(token, &[TaintLabel::OwnerSecret]));
                own = Some((path, made));
            }
            Auth::Token => {}
        }
        let mut origins: Vec<String> =
            ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"].map(String::from).to_vec();
        origins.extend(mcp.allowed_origins.iter().cloned());
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
        if !addr.ip().is_unspecified() {
            hosts.push(addr.ip().to_string());
        }
        hosts.extend(mcp.allowed_hosts.iter().cloned());
        if mcp.max_sessions == 0 || mcp.session_idle_secs == 0 {
            return Err(McpError::Http("[mcp] max_sessions and session_idle_secs must be at least 1".into()));
        }
        let (max_sessions, idle) = (mcp.max_sessions, std::time::Duration::from_secs(mcp.session_idle_secs));
        Ok(Self { tokens: Arc::new(tokens), origins, hosts, own, operator, max_sessions, idle })
    }

    /// Whether requests need a bearer token.
    pub fn requires_token(&self) -> bool {
        !self.tokens.is_empty()
    }

    /// How a client gets in, for the operator starting the server (never the token itself).
    pub fn how_to_connect(&self) -> String {
        let how = match &self.own {
            Some((path, made)) => format!(
                "clients send `Authorization: Bearer <token>`; the token is in {} (mode 0600{}), e.g. \
                 curl -H \"Authorization: Bearer $(cat {})\" …",
                path.display(),
                if *made { ", made now" } else { "" },
                path.display()
            ),
            None if self.requires_token() => {
                "clients send `Authorization: Bearer <token>` with a token of [mcp] tokens_env or token_file"
                    .into()
            }
            None => "no token (--no-auth): loopback only, and only tools that change nothing".into(),
        };
        match &self.operator {
            Some((_, path)) => format!(
                "{how}; the operator's own token (it confirms permits [safety] confirm holds, over A2A and on the approval page) is {path}"
            ),
            None => how,
        }
    }

    fn admits(&self, authorization: Option<&HeaderValue>) -> bool {
        let Some(presented) = presented(authorization) else { return false };
        // Every token compared in full: the time taken does not tell which bytes matched.
        self.tokens
            .iter()
            .chain(self.operator.as_ref().map(|(t, _)| t.as_ref()))
            .fold(false, |ok, t| ok | constant_time_eq(t.expose_secret().as_bytes(), presented.as_bytes()))
    }

    /// Whether `authorization` carries the operator's token.
    pub fn is_operator(&self, authorization: Option<&HeaderValue>) -> bool {
        let (Some(presented), Some((token, _))) = (presented(authorization), &self.operator) else {
            return false;
        };
        constant_time_eq(token.expose_secret().as_bytes(), presented.as_bytes())
    }

    /// Whether `host` (a `Host` header, port and all) is loopback, the listen address or
    /// configured.
    pub fn admits_host(&self, host: &str) -> bool {
        let name = match host.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or(""),
            None => host
                .rsplit_once(':')
                .filter(|(_, p)| p.bytes().all(|b| b.is_ascii_digit()))
                .map_or(host, |(n, _)| n),
        };
        self.hosts.iter().any(|h| h.eq_ignore_ascii_case(name))
    }

    /// Whether `origin` (a browser's `Origin` header) may call: loopback or configured.
    pub fn admits_origin(&self, origin: &str) -> bool {
        self.origins.iter().any(|allowed| match allowed.strip_suffix(":*") {
            Some(base) => {
                origin == base
                    || origin
                        .strip_prefix(base)
                        .and_then(|p| p.strip_prefix(':'))
                        .is_some_and(|port| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()))
            }
            None => origin == allowed,
        })
    }
}

/// The host's own token's file name, beside the host key.
const OWN_TOKEN: &str = "http.token";
/// The operator's token's file name, beside the host key.
const OPERATOR_TOKEN: &str = "operator.token";

/// Where the operator's token may come from instead of a file: only the environment of the
/// `bardo serve` the operator starts, never a file an agent's process could read.
pub const OPERATOR_TOKEN_ENV: &str = "BARDO_OPERATOR_TOKEN";

/// The operator's token and where it is: `$BARDO_OPERATOR_TOKEN` when set (no file is made),
/// else the file at `path` (made 0600 on first start). A file others can read is refused: an
/// agent run as another user (docs/operators.md) must not be able to read it.
fn operator_token(path: &Path) -> Result<(Zeroizing<String>, String), String> {
    if let Some(v) = TaintedString::from_env(OPERATOR_TOKEN_ENV, &[TaintLabel::OwnerSecret]) {
        let token = v.expose_secret().trim();
        if token.len() < 16 {
            return Err(format!(
                "${OPERATOR_TOKEN_ENV} is {} characters; use at least 16 (e.g. `openssl rand -hex 32`)",
                token.len()
            ));
        }
        return Ok((Zeroizing::new(token.to_owned()), format!("${OPERATOR_TOKEN_ENV}")));
    }
    let (token, _) = own_token(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode =
            std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(format!(
                "the operator's token {} is readable by others (mode {:o}): `chmod 600 {}`, or pass it as ${OPERATOR_TOKEN_ENV} instead",
                path.display(),
                mode & 0o777,
                path.display()
            ));
        }
    }
    Ok((token, format!("in {}", path.display())))
}

/// The host's own token in `path`: read, or made on first start (32 random bytes as hex, mode
/// 0600, put in place whole so a concurrent start reads the same one); true when made now.
fn own_token(path: &Path) -> Result<(Zeroizing<String>, bool), String> {
    let io = |e: std::io::Error| format!("the host's HTTP token {}: {e}", path.display());
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let text = Zeroizing::new(text);
            let token = text.trim();
            if token.len() < 16 {
                return Err(format!(
                    "the host's HTTP token {} is {} characters, fewer than 16: delete it and a new one is made on the next start",
                    path.display(),
                    token.len()
                ));
            }
            Ok((Zeroizing::new(token.to_owned()), false))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(io)?;
            }
            let mut bytes = Zeroizing::new([0u8; 32]);
            getrandom::getrandom(&mut bytes[..])
                .map_err(|e| format!("no randomness for the HTTP token: {e}"))?;
            let token: Zeroizing<String> = Zeroizing::new(bytes.iter().map(|b| format!("{b:02x}")).collect());
            // A random name: no other start writes it.
            let mut nonce = [0u8; 8];
            getrandom::getrandom(&mut nonce).map_err(|e| format!("no randomness for the HTTP token: {e}"))?;
            let draft = path.with_file_name(format!(".{OWN_TOKEN}.{}", u64::from_le_bytes(nonce)));
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let written = options.open(&draft).and_then(|mut f| {
                std::io::Write::write_all(&mut f, format!("{}\n", token.as_str()).as_bytes())?;
                f.sync_all()
            });
            // A link fails if another start put its token there first: that one is used.
            let placed = written.and_then(|()| std::fs::hard_link(&draft, path));
            let _ = std::fs::remove_file(&draft);
            match placed {
                Ok(()) => Ok((token, true)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => own_token(path),
                Err(e) => Err(io(e)),
            }
        }
        Err(e) => Err(io(e)),
    }
}

/// The bearer token in an `Authorization` header; the scheme is case-insensitive (RFC 9110
/// §11.1).
fn presented(authorization: Option<&HeaderValue>) -> Option<&str> {
    authorization
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim_start().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn authorize(State(access): State<Access>, mut request: Request, next: Next) -> Response {
    if access.is_operator(request.headers().get(header::AUTHORIZATION)) {
        request.extensions_mut().insert(bardo_agent::OperatorCredential);
    }
    if access.requires_token() && !access.admits(request.headers().get(header::AUTHORIZATION)) {
        let mut response = (
            StatusCode::UNAUTHORIZED,
            "a bearer token is required: send `Authorization: Bearer <token>` (see [mcp] in bardo.toml)",
        )
            .into_response();
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"bardo\""));
        return response;
    }
    next.run(request).await
}

/// A browser page from a foreign origin is refused (DNS-rebinding protection) on the routes
/// rmcp does not check itself.
async fn check_origin(State(access): State<Access>, request: Request, next: Next) -> Response {
    let origin = request.headers().get(header::ORIGIN).map(|o| o.to_str().unwrap_or("<not text>"));
    if let Some(origin) = origin.filter(|o| !access.admits_origin(o)) {
        let shown: String = origin.chars().take(80).collect();
        let message = format!("origin {shown} is not allowed: add it to [mcp] allowed_origins");
        return (StatusCode::FORBIDDEN, message).into_response();
    }
    next.run(request).await
}

/// A `Host` that is not loopback, the listen address or configured is refused (DNS-rebinding
/// protection) on the routes rmcp does not check itself.
async fn check_host(State(access): State<Access>, request: Request, next: Next) -> Response {
    let host = request.headers().get(header::HOST).map(|h| h.to_str().unwrap_or("<not text>"));
    if let Some(host) = host.filter(|h| !access.admits_host(h)) {
        let shown: String = host.chars().take(80).collect();
        let message = format!("host {shown} is not allowed: add it to [mcp] allowed_hosts");
        return (StatusCode::FORBIDDEN, message).into_response();
    }
    next.run(request).await
}

/// `router` behind the access rules: a bearer token when tokens are configured, and a
/// loopback or configured `Host`, and `Origin` if the request has one.
pub fn guard(router: axum::Router, access: Access) -> axum::Router {
    router
        .layer(axum::middleware::from_fn_with_state(access.clone(), check_origin))
        .layer(axum::middleware::from_fn_with_state(access.clone(), check_host))
        .layer(axum::middleware::from_fn_with_state(access, authorize))
}

/// The router: the MCP endpoint at [`PATH`], behind the access rules and the protocol's edges.
pub fn router(served: Arc<Served>, access: Access) -> axum::Router {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(access.hosts.clone())
        .with_allowed_origins(access.origins.clone())
        .with_max_request_body_bytes(MAX_BODY);
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(access.idle);
    let sessions = Arc::new(sessions);
    let service =
        StreamableHttpService::new(move || Ok(Session::new(served.clone())), sessions.clone(), config);
    let edges = Edges {
        sessions,
        max_sessions: access.max_sessions,
        idle: access.idle,
        seen: Arc::default(),
        batching: Arc::default(),
        inner: service.clone(),
    };
    axum::Router::new()
        .nest_service(PATH, service)
        .layer(axum::middleware::from_fn_with_state(edges, protocol_edges))
        .layer(axum::middleware::from_fn_with_state(access, authorize))
}

/// The largest request body read (rmcp's own default).
const MAX_BODY: usize = 4 * 1024 * 1024;

/// What the protocol's edges need: the open sessions, how many may be, and when each was last
/// used.
#[derive(Clone)]
struct Edges {
    sessions: Arc<LocalSessionManager>,
    max_sessions: usize,
    idle: std::time::Duration,
    seen: Arc<std::sync::Mutex<std::collections::HashMap<SessionId, std::time::Instant>>>,
    /// Sessions negotiated at 2025-03-26, which may send batches ([`crate::batch`]).
    batching: Arc<std::sync::Mutex<std::collections::HashSet<SessionId>>>,
    /// rmcp's service, for the messages of a batch.
    inner: crate::batch::Inner,
}

impl Edges {
    fn touch(&self, id: &SessionId) {
        bardo_core::sync::lock(&self.seen).insert(id.clone(), std::time::Instant::now());
    }

    /// The sessions open, once those idle longer than [`Access`]'s limit are closed: rmcp stops
    /// an idle session's worker but keeps its entry until a `DELETE` that may never come.
    async fn open_sessions(&self) -> usize {
        use rmcp::transport::streamable_http_server::session::SessionManager;
        let ids: Vec<SessionId> = self.sessions.sessions.read().await.keys().cloned().collect();
        let now = std::time::Instant::now();
        let idle: Vec<SessionId> = {
            let mut seen = bardo_core::sync::lock(&self.seen);
            // One never seen here (its initialize in flight) counts as used now.
            let idle = ids
                .iter()
                .filter(|id| now.duration_since(*seen.entry((*id).clone()).or_insert(now)) > self.idle)
                .cloned()
                .collect();
            seen.retain(|id, _| ids.contains(id));
            idle
        };
        for id in &idle {
            let _ = self.sessions.close_session(id).await;
            bardo_core::sync::lock(&self.seen).remove(id);
            bardo_core::sync::lock(&self.batching).remove(id);
        }
        ids.len() - idle.len()
    }
}

fn json_rpc(status: StatusCode, body: serde_json::Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// Where rmcp's own answers differ from the specifications: a POST's body screened (see
/// [`crate::screen`]; errors are JSON-RPC with 400), a new session past the cap refused (503),
/// and `DELETE` answering 200 for a session it ends and 404 for one that is not there.
async fn protocol_edges(State(edges): State<Edges>, request: Request, next: Next) -> Response {
    let session: Option<SessionId> =
        request.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(Into::into);
    if let Some(id) = &session
        && edges.sessions.has_session(id).await.unwrap_or(false)
    {
        edges.touch(id);
    }
    match *request.method() {
        axum::http::Method::DELETE => {
            let Some(id) = session else { return next.run(request).await };
            if !edges.sessions.has_session(&id).await.unwrap_or(false) {
                let shown: String = id.chars().take(80).collect();
                return (
                    StatusCode::NOT_FOUND,
                    format!("no session {shown}: it ended, expired or never was"),
                )
                    .into_response();
            }
            let mut response = next.run(request).await;
            if response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::OK;
            }
            response
        }
        axum::http::Method::POST => {
            // A wrong Content-Type or Accept is rmcp's to answer (415, 406).
            let json =
                request.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
                    v.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/json")
                });
            if !json {
                return next.run(request).await;
            }
            let (parts, body) = request.into_parts();
            let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
                let e = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600,
                    "message": format!("the body is larger than {MAX_BODY} bytes, or was cut off")}});
                return json_rpc(StatusCode::PAYLOAD_TOO_LARGE, e);
            };
            // A batch, on a session whose revision allows them.
            if bytes.trim_ascii_start().starts_with(b"[")
                && let Some(id) = &session
                && bardo_core::sync::lock(&edges.batching).contains(id)
                && let Ok(serde_json::Value::Array(items)) = serde_json::from_slice(&bytes)
            {
                return crate::batch::serve(edges.inner.clone(), &parts, items).await;
            }
            let mut initialize = false;
            let screened = crate::screen::screen(&bytes, |m| {
                initialize = m.method == Some("initialize");
                session.as_ref().and_then(|_| crate::screen::initialize_again(m))
            });
            match screened {
                crate::screen::Screened::Reply(error) => json_rpc(StatusCode::BAD_REQUEST, error),
                crate::screen::Screened::Drop => StatusCode::ACCEPTED.into_response(),
                crate::screen::Screened::Pass => {
                    let new_session = initialize && session.is_none();
                    let open = if new_session { edges.open_sessions().await } else { 0 };
                    if new_session && open >= edges.max_sessions {
                        // The initialize's own id: a client matches the answer to its request.
                        let id = serde_json::from_slice::<serde_json::Value>(&bytes)
                            .ok()
                            .and_then(|m| m.get("id").cloned())
                            .unwrap_or(serde_json::Value::Null);
                        let e = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000,
                            "message": format!("{open} sessions are open, the most [mcp] max_sessions allows: close one (DELETE) or wait for an idle one to expire"),
                            "data": {"retryable": true}}});
                        let mut response = json_rpc(StatusCode::SERVICE_UNAVAILABLE, e);
                        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                        return response;
                    }
                    let response =
                        next.run(Request::from_parts(parts, axum::body::Body::from(bytes.clone()))).await;
                    let made = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok());
                    if let Some(id) = made.filter(|_| new_session) {
                        let id: SessionId = id.into();
                        edges.touch(&id);
                        // rmcp agrees to a revision it serves, which 2025-03-26 is.
                        let asked = serde_json::from_slice::<serde_json::Value>(&bytes)
                            .ok()
                            .and_then(|m| m["params"]["protocolVersion"].as_str().map(str::to_owned));
                        if asked.as_deref() == Some(crate::screen::BATCH_REVISION) {
                            bardo_core::sync::lock(&edges.batching).insert(id);
                        }
                    }
                    response
                }
            }
        }
        _ => next.run(request).await,
    }
}

/// Serve `served` on `addr` until `shutdown` resolves.
pub async fn serve(
    served: Arc<Served>,
    addr: SocketAddr,
    access: Access,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), McpError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| McpError::Http(format!("cannot listen on {addr}: {e}")))?;
    let bound = listener.local_addr().map_err(|e| McpError::Http(e.to_string()))?;
    tracing::info!(
        "MCP over streamable HTTP at http://{bound}{PATH} (tokens required: {})",
        access.requires_token()
    );
    eprintln!("bardo mcp: serving http://{bound}{PATH}; {}", access.how_to_connect());
    axum::serve(no_delay(listener), router(served, access))
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|e| McpError::Http(format!("HTTP server: {e}")))
}

/// `listener` with Nagle's algorithm off on every connection: a response is written in pieces
/// (headers, then the SSE event), and with it on, a kept-alive connection's next answer waited
/// for the client's delayed ACK — ~44 ms a request, measured, against 0.3 ms without.
pub fn no_delay(listener: tokio::net::TcpListener) -> impl axum::serve::Listener<Addr = SocketAddr> {
    use axum::serve::ListenerExt;
    listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!("TCP_NODELAY on an MCP connection: {e}");
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        let dir = std::env::temp_dir().join(format!("bardo-mcp-access-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join(format!("{}.toml", text.len()));
        std::fs::write(&path, text).expect("write");
        Config::load(&path, true).expect("config")
    }

    #[test]
    fn off_loopback_needs_tokens_and_tokens_are_checked() {
        let open = config("");
        let public: SocketAddr = "0.0.0.0:9000".parse().expect("addr");
        let e = Access::from_config(&open, public, Auth::Token).expect_err("no tokens off loopback");
        assert!(e.to_string().contains("tokens_env"), "{e}");
        assert!(Access::from_config(&open, public, Auth::None).is_err(), "--no-auth is loopback only");
        let loopback: SocketAddr = "127.0.0.1:9000".parse().expect("addr");
        let local = Access::from_config(&open, loopback, Auth::None).expect("loopback, --no-auth");
        assert!(!local.requires_token());

        // SAFETY of the test: a variable name only this test uses.
        unsafe { std::env::set_var("BARDO_MCP_TEST_TOKENS", "0123456789abcdef0123, fedcba9876543210fedc") };
        let with = config("[mcp]\ntokens_env = \"BARDO_MCP_TEST_TOKENS\"\n");
        let access = Access::from_config(&with, public, Auth::Token).expect("tokens");
        assert!(access.requires_token());
        assert!(Access::from_config(&with, loopback, Auth::None).is_err(), "tokens and --no-auth");
        let bearer = |t: &str| HeaderValue::from_str(&format!("Bearer {t}")).expect("header");
        assert!(access.admits(Some(&bearer("fedcba9876543210fedc"))));
        for scheme in ["bearer", "BEARER", "bEaReR"] {
            let header = HeaderValue::from_str(&format!("{scheme} fedcba9876543210fedc")).expect("header");
            assert!(access.admits(Some(&header)), "{scheme}: the scheme is case-insensitive");
        }
        let basic = HeaderValue::from_static("Basic fedcba9876543210fedc");
        assert!(!access.admits(Some(&basic)));
        assert!(!access.admits(Some(&bearer("fedcba9876543210fedX"))));
        assert!(!access.admits(Some(&bearer(""))));
        assert!(!access.admits(None));
        assert!(!format!("{access:?}").contains("fedcba"), "tokens never printed");
        assert!(access.admits_origin("http://localhost:8080") && access.admits_origin("http://127.0.0.1"));
        assert!(
            !access.admits_origin("http://localhost.evil.com")
                && !access.admits_origin("http://localhost:80x")
        );
        assert!(!access.admits_origin("https://evil.example"));
        assert!(access.admits_host("127.0.0.1:8766") && access.admits_host("[::1]:80"));
        assert!(access.admits_host("LOCALHOST") && access.admits_host("localhost:1"));
        assert!(!access.admits_host("evil.example:8766") && !access.admits_host("127.0.0.1.evil.example"));
    }

    #[test]
    fn the_hosts_own_token_is_made_once_unreadable_to_others_and_then_reused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(".bardo").join(OWN_TOKEN);
        let (first, made) = own_token(&path).expect("made");
        assert!(made && first.len() == 64, "32 random bytes as hex");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("file").permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "only the owner reads it");
        }
        let (again, made) = own_token(&path).expect("read");
        assert!(!made && again == first, "the same token on the next start");
        // Starts at once all end up with the one token in the file.
        let other = dir.path().join("other").join(OWN_TOKEN);
        let tokens: Vec<_> = std::thread::scope(|s| {
            let starts: Vec<_> = (0..8).map(|_| s.spawn(|| own_token(&other).expect("token").0)).collect();
            starts.into_iter().map(|h| h.join().expect("start")).collect()
        });
        assert!(tokens.windows(2).all(|w| w[0] == w[1]), "one token");
        std::fs::write(&path, "short\n").expect("write");
        assert!(own_token(&path).expect_err("too short").contains("delete it"));
    }
}
