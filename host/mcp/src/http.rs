//! `bardo mcp --http ADDR`: streamable HTTP (SSE for server messages) at `/mcp`.
//!
//! Who may connect: on an address that is not loopback the server refuses to start without
//! bearer tokens (`[mcp] tokens_env` or `token_file`; never in `bardo.toml` itself), and when
//! tokens are configured every request must carry one, whatever the address. `Origin` and
//! `Host` are checked against loopback and the configured lists (DNS-rebinding protection, as
//! the MCP specification asks); a foreign one is refused with 403.

use crate::McpError;
use crate::server::{Served, Session};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bardo_core::secret::{TaintLabel, TaintedString};
use bardo_runtime::config::Config;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use zeroize::Zeroizing;

/// The path the MCP endpoint is served at.
pub const PATH: &str = "/mcp";

/// Who may reach the endpoint.
#[derive(Clone)]
pub struct Access {
    tokens: Arc<Vec<TaintedString>>,
    origins: Vec<String>,
    hosts: Vec<String>,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the tokens.
        f.debug_struct("Access")
            .field("tokens", &self.tokens.len())
            .field("origins", &self.origins)
            .field("hosts", &self.hosts)
            .finish()
    }
}

impl Access {
    /// The access rules for serving on `addr` under `config`'s `[mcp]`; an error if `addr` is
    /// not loopback and no token is configured, or a token source cannot be read.
    pub fn from_config(config: &Config, addr: SocketAddr) -> Result<Self, McpError> {
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
                "refusing to serve MCP on {addr} (not loopback) without bearer tokens: set [mcp] tokens_env = \"VAR\" \
                 (tokens in that environment variable, comma-separated) or [mcp] token_file in bardo.toml"
            )));
        }
        let mut origins: Vec<String> =
            ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"].map(String::from).to_vec();
        origins.extend(mcp.allowed_origins.iter().cloned());
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
        if !addr.ip().is_unspecified() {
            hosts.push(addr.ip().to_string());
        }
        hosts.extend(mcp.allowed_hosts.iter().cloned());
        Ok(Self { tokens: Arc::new(tokens), origins, hosts })
    }

    /// Whether requests need a bearer token.
    pub fn requires_token(&self) -> bool {
        !self.tokens.is_empty()
    }

    fn admits(&self, authorization: Option<&HeaderValue>) -> bool {
        let Some(presented) = authorization
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
        else {
            return false;
        };
        // Every token compared in full: the time taken does not tell which bytes matched.
        self.tokens
            .iter()
            .fold(false, |ok, t| ok | constant_time_eq(t.expose_secret().as_bytes(), presented.as_bytes()))
    }

    /// Whether `origin` (a browser's `Origin` header) may call: loopback or configured.
    fn admits_origin(&self, origin: &str) -> bool {
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

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn authorize(State(access): State<Access>, request: Request, next: Next) -> Response {
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

/// `router` behind the access rules: a bearer token when tokens are configured, and a
/// loopback or configured `Origin` if the request has one.
pub fn guard(router: axum::Router, access: Access) -> axum::Router {
    router
        .layer(axum::middleware::from_fn_with_state(access.clone(), check_origin))
        .layer(axum::middleware::from_fn_with_state(access, authorize))
}

/// The router: the MCP endpoint at [`PATH`], behind the access rules.
pub fn router(served: Arc<Served>, access: Access) -> axum::Router {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(access.hosts.clone())
        .with_allowed_origins(access.origins.clone());
    let service = StreamableHttpService::new(
        move || Ok(Session::new(served.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    axum::Router::new()
        .nest_service(PATH, service)
        .layer(axum::middleware::from_fn_with_state(access, authorize))
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
    eprintln!("bardo mcp: serving http://{bound}{PATH}");
    axum::serve(listener, router(served, access))
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|e| McpError::Http(format!("HTTP server: {e}")))
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
        let e = Access::from_config(&open, public).expect_err("no tokens off loopback");
        assert!(e.to_string().contains("tokens_env"), "{e}");
        let local = Access::from_config(&open, "127.0.0.1:9000".parse().expect("addr")).expect("loopback");
        assert!(!local.requires_token());

        // SAFETY of the test: a variable name only this test uses.
        unsafe { std::env::set_var("BARDO_MCP_TEST_TOKENS", "0123456789abcdef0123, fedcba9876543210fedc") };
        let with = config("[mcp]\ntokens_env = \"BARDO_MCP_TEST_TOKENS\"\n");
        let access = Access::from_config(&with, public).expect("tokens");
        assert!(access.requires_token());
        let bearer = |t: &str| HeaderValue::from_str(&format!("Bearer {t}")).expect("header");
        assert!(access.admits(Some(&bearer("fedcba9876543210fedc"))));
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
    }
}
