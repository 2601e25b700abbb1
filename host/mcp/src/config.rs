//! `[mcp]` in bardo.toml: who may reach `bardo mcp --http`.

use bardo_core::config::Section;
use serde::Deserialize;
use std::path::PathBuf;

/// `[mcp]`: who may reach `bardo mcp --http`. Tokens never live in this file: they come from
/// an environment variable or a token file.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// An environment variable holding bearer tokens, comma-separated.
    pub tokens_env: Option<String>,
    /// A file of bearer tokens, one per line (`#` comments), relative to this file.
    pub token_file: Option<PathBuf>,
    /// Browser origins allowed besides loopback ones (`https://app.example.com:443`); any
    /// other `Origin` is refused (DNS-rebinding protection).
    pub allowed_origins: Vec<String>,
    /// `Host` header values allowed besides loopback and the listen address's host.
    pub allowed_hosts: Vec<String>,
    /// Most MCP HTTP sessions open at once; a new one past it is refused (503) until one is
    /// closed or expires.
    pub max_sessions: usize,
    /// Seconds a session may sit idle before it is closed.
    pub session_idle_secs: u64,
    /// Seconds a commit held by the confirmation policy (`[safety] confirm`) waits for the
    /// client's user to answer the elicitation (at most until the permit expires).
    pub confirm_timeout_secs: u64,
}

impl Default for McpConfig {
    fn default() -> Self {
        Self {
            tokens_env: None,
            token_file: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_sessions: 100,
            session_idle_secs: 300,
            confirm_timeout_secs: 120,
        }
    }
}

impl Section for McpConfig {
    const NAME: &'static str = "mcp";
}
