//! `[identity]`: this host's ERC-8004 registration, which its agent card names (an A2A
//! extension), closing the loop the registration opens — identity → agentURI → registration
//! file → services → card → identity. `bardo identity register` prints the section to add.

use bardo_core::config::Section;
use serde::Deserialize;
use serde_json::{Value, json};

/// The extension's URI: the ERC itself.
pub const EXTENSION_URI: &str = "https://eips.ethereum.org/EIPS/eip-8004";

/// `[identity]` in bardo.toml.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdentityConfig {
    /// `eip155:<chain id>:<Identity Registry>`, the ERC's agentRegistry.
    pub agent_registry: String,
    /// This host's agent id in that registry.
    pub agent_id: u64,
}

impl Section for IdentityConfig {
    const NAME: &'static str = "identity";
}

impl IdentityConfig {
    /// The card's extension naming the registration.
    pub(crate) fn extension(&self) -> Value {
        json!({
            "uri": EXTENSION_URI,
            "description": "This agent's ERC-8004 identity: its registration file names this card.",
            "required": false,
            "params": {"agentRegistry": self.agent_registry, "agentId": self.agent_id},
        })
    }
}
