//! `[registry]` and `[oci.NAME]` in bardo.toml: where components are pulled from, over what, signed
//! by whom, and which profiles load each.

use serde::Deserialize;
use std::path::PathBuf;

/// `[registry]`: how components are pulled.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RegistryConfig {
    /// Registries (`host:port`) spoken to over plain HTTP; every other one over HTTPS.
    pub insecure: Vec<String>,
    /// Refuse any component no trust policy covers (by default only covered ones need a signature).
    pub require_signatures: bool,
    /// Signer keys per repository namespace.
    pub trust: Vec<TrustPolicy>,
    /// Logins, by registry; registries not listed use Docker's `config.json`, else none.
    pub auth: Vec<RegistryLogin>,
}

/// `[[registry.auth]]`: a login for one registry. The password (or token) is read from the
/// environment, so the configuration file holds no secret.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistryLogin {
    /// `host[:port]`, as written in references (`ghcr.io`).
    pub registry: String,
    /// The user name to log in with.
    pub username: String,
    /// The environment variable holding the password or token.
    pub password_env: String,
}

/// `[[registry.trust]]`: components under `prefix` must be signed by one of `keys`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustPolicy {
    /// A reference prefix, e.g. `127.0.0.1:5000/bardo/`.
    pub prefix: String,
    /// PEM public keys (P-256), relative to the configuration file.
    pub keys: Vec<PathBuf>,
}

/// `[oci.NAME]`: a component to pull and load, optionally only in some profiles (a canary).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OciSource {
    /// Just the reference: every profile.
    Reference(String),
    /// A reference routed to the listed profiles.
    Routed {
        /// The component's reference (`host/repo:tag` or `@sha256:...`).
        reference: String,
        /// The profiles that load it; empty: every profile.
        #[serde(default)]
        profiles: Vec<String>,
        /// Serve it beside a newer version of the same plugin: each tool as
        /// `<tool>_v<schema_version>`, each action kind likewise (schema versioning: an old
        /// version stays available after a breaking release).
        #[serde(default)]
        side_by_side: bool,
    },
}

impl OciSource {
    /// The reference to pull.
    pub fn reference(&self) -> &str {
        match self {
            Self::Reference(r) | Self::Routed { reference: r, .. } => r,
        }
    }

    /// Whether it is served beside a newer version of its plugin (`side_by_side = true`).
    pub fn side_by_side(&self) -> bool {
        matches!(self, Self::Routed { side_by_side: true, .. })
    }

    /// Whether a host for profile `spec` (`trader` or `trader,vault`) loads it.
    pub fn routed_to(&self, spec: &str) -> bool {
        match self {
            Self::Reference(_) => true,
            Self::Routed { profiles, .. } => {
                profiles.is_empty() || spec.split(',').any(|p| profiles.iter().any(|q| q == p.trim()))
            }
        }
    }

    /// The profiles it is routed to (empty: all).
    pub fn profiles(&self) -> &[String] {
        match self {
            Self::Reference(_) => &[],
            Self::Routed { profiles, .. } => profiles,
        }
    }
}
