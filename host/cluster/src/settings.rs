//! `[cluster]` in bardo.toml: which NATS servers hold a fleet's shared state, and how this host
//! names itself there. Credentials come from a creds file or the environment, never from the file.

use crate::ClusterConfig;
use bardo_core::config::Section;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// `[cluster]`: permits, the spending ledger, the halt and the audit chain shared by every host
/// of a fleet through NATS JetStream. Credentials come from a creds file or the environment,
/// never from this file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSettings {
    /// Server URLs, `["nats://10.0.0.1:4222", …]`.
    pub nats: Vec<String>,
    /// The fleet's name (its streams are `BARDO_<name>_…`): hosts with the same name share state.
    #[serde(default = "ClusterSettings::default_name")]
    pub name: String,
    /// A NATS `.creds` file (relative to bardo.toml); else `$BARDO_NATS_CREDS` if set.
    #[serde(default)]
    pub creds: Option<PathBuf>,
    /// The environment variable holding a token, if the servers want one.
    #[serde(default = "ClusterSettings::default_token_env")]
    pub token_env: String,
    /// Copies of each stream (3 on a three-node cluster: writes go on with one node down).
    #[serde(default = "ClusterSettings::default_replicas")]
    pub replicas: usize,
    /// How long one operation may take before it fails (retryable), milliseconds.
    #[serde(default = "ClusterSettings::default_timeout_ms")]
    pub timeout_ms: u64,
    /// This host's name in the fleet's events (letters, digits, `_`, `-`); default: the
    /// machine's host name.
    #[serde(default)]
    pub host: Option<String>,
    /// How long a host holds a fleet subscription's lease without renewing it (it renews every
    /// third of that): the longest a dead host's subscriptions go undelivered, milliseconds.
    #[serde(default = "ClusterSettings::default_lease_ms")]
    pub lease_ms: u64,
    /// Where this host anchors what it saw of the fleet's streams (relative to bardo.toml):
    /// local, sealed with the host key, so a stream an admin deletes, recreates or cuts is
    /// tampering this host halts on (see `bardo fleet reanchor`).
    #[serde(default = "ClusterSettings::default_anchor")]
    pub anchor: PathBuf,
}

impl ClusterSettings {
    fn default_name() -> String {
        "bardo".into()
    }
    fn default_token_env() -> String {
        "BARDO_NATS_TOKEN".into()
    }
    fn default_replicas() -> usize {
        1
    }
    fn default_timeout_ms() -> u64 {
        5_000
    }
    fn default_lease_ms() -> u64 {
        10_000
    }
    fn default_anchor() -> PathBuf {
        PathBuf::from(".bardo/fleet-anchor.json")
    }
}

impl Section for ClusterSettings {
    const NAME: &'static str = "cluster";
}

impl ClusterSettings {
    /// As the NATS client takes it: the creds file resolved against `base` (the directory of
    /// bardo.toml; else `$BARDO_NATS_CREDS` if set), the token read from its environment variable.
    pub fn client_config(&self, base: &Path) -> ClusterConfig {
        let creds = self
            .creds
            .as_ref()
            .map(|p| if p.is_absolute() { p.clone() } else { base.join(p) })
            .or_else(|| std::env::var_os("BARDO_NATS_CREDS").map(PathBuf::from));
        ClusterConfig {
            servers: self.nats.clone(),
            name: self.name.clone(),
            creds,
            token: std::env::var(&self.token_env).ok().filter(|t| !t.is_empty()),
            replicas: self.replicas,
            timeout: std::time::Duration::from_millis(self.timeout_ms.max(1)),
            anchor: Some(if self.anchor.is_absolute() {
                self.anchor.clone()
            } else {
                base.join(&self.anchor)
            }),
        }
    }

    /// This host's name in the fleet's events: `host`, else the machine's.
    pub fn host_name(&self) -> String {
        self.host.clone().unwrap_or_else(default_host)
    }

    /// How long a fleet subscription's lease lives unrenewed (`lease_ms`).
    pub fn lease(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.lease_ms)
    }
}

/// This machine's name as an event subject token (`[cluster] host` when unset).
pub fn default_host() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let token: String = name
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    if token.is_empty() { "host".into() } else { token }
}
