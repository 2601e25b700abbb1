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

/// The path every agent card is served at.
const CARD_PATH: &str = "/.well-known/agent-card.json";

impl IdentityConfig {
    /// The chain and the Identity Registry of `agent_registry` (`eip155:<chain>:<address>`).
    pub fn registry(&self) -> Result<(u64, String), String> {
        let mut parts = self.agent_registry.splitn(3, ':');
        match (parts.next(), parts.next().map(str::parse::<u64>), parts.next()) {
            (Some("eip155"), Some(Ok(chain)), Some(address)) => Ok((chain, address.to_owned())),
            _ => Err(format!(
                "[identity] agent_registry = \"{}\" is not `eip155:<chain id>:<registry address>`",
                self.agent_registry
            )),
        }
    }

    /// Whether this host may claim the identity whose agentURI is `agent_uri`: its registration
    /// file must name this host's card — an A2A service at `/.well-known/agent-card.json` on a
    /// host `admits` (and, if it names a port, on `port`) — and, when it lists registrations,
    /// this one. Else a card naming the identity would vouch for whoever configured it: the
    /// identity's owner points its registration at the card it runs, not the other way round.
    pub fn check_registration(
        &self,
        agent_uri: &str,
        admits: &dyn Fn(&str) -> bool,
        port: u16,
    ) -> Result<(), String> {
        let claim = format!("[identity] claims agent {} of {}", self.agent_id, self.agent_registry);
        let file = registration_file(agent_uri).map_err(|e| format!("{claim}, but its agentURI {e}"))?;
        let registrations: Vec<&Value> = file["registrations"].as_array().into_iter().flatten().collect();
        let named = registrations.iter().any(|r| {
            r["agentId"].as_u64() == Some(self.agent_id)
                && r["agentRegistry"].as_str().is_some_and(|s| s.eq_ignore_ascii_case(&self.agent_registry))
        });
        if !registrations.is_empty() && !named {
            return Err(format!("{claim}, but its registration file's `registrations` name another agent"));
        }
        let cards: Vec<&str> = file["services"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case("a2a")))
            .filter_map(|s| s["endpoint"].as_str())
            .collect();
        let ours = |card: &&str| {
            let rest = card.strip_prefix("https://").or_else(|| card.strip_prefix("http://"));
            let Some((authority, path)) = rest.and_then(|r| r.find('/').map(|i| r.split_at(i))) else {
                return false;
            };
            let named_port = authority.rsplit_once(':').and_then(|(_, p)| p.parse::<u16>().ok());
            path == CARD_PATH && admits(authority) && named_port.is_none_or(|p| p == port)
        };
        if cards.iter().any(ours) {
            return Ok(());
        }
        Err(format!(
            "{claim}, whose registration names {} as its A2A card — not this host's (a host this door admits, port {port}, {CARD_PATH}); \
             run `bardo identity set-uri --agent-id {} --card-url <this host's card URL>` as the identity's owner, or remove [identity]",
            if cards.is_empty() { "nothing".to_owned() } else { cards.join(", ") },
            self.agent_id
        ))
    }
}

/// The JSON registration file a `data:` agentURI holds.
fn registration_file(uri: &str) -> Result<Value, String> {
    use base64::Engine;
    let Some((meta, body)) = uri.strip_prefix("data:").and_then(|rest| rest.split_once(',')) else {
        return Err(
            "is not a data: URI holding the registration file (the host reads only on-chain files)".into()
        );
    };
    let bytes = if meta.ends_with(";base64") {
        base64::engine::general_purpose::STANDARD.decode(body).map_err(|e| format!("does not decode: {e}"))?
    } else {
        body.as_bytes().to_vec()
    };
    serde_json::from_slice(&bytes).map_err(|e| format!("holds no JSON registration file: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    fn uri(file: Value) -> String {
        format!(
            "data:application/json;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(file.to_string())
        )
    }

    #[test]
    fn a_host_claims_only_an_identity_whose_registration_names_its_card() {
        let me = IdentityConfig { agent_registry: "eip155:31337:0xAbC".into(), agent_id: 1 };
        let loopback = |h: &str| h.starts_with("127.0.0.1");
        let card = |url: &str| json!({"services": [{"name": "A2A", "endpoint": url}]});
        let ok = uri(card("http://127.0.0.1:9090/.well-known/agent-card.json"));
        assert_eq!(me.check_registration(&ok, &loopback, 9090), Ok(()));
        let e = me.check_registration(&ok, &loopback, 9091).expect_err("another port");
        assert!(
            e.contains("http://127.0.0.1:9090/.well-known/agent-card.json") && e.contains("set-uri"),
            "{e}"
        );
        let elsewhere = uri(card("https://operator.example/.well-known/agent-card.json"));
        assert!(
            me.check_registration(&elsewhere, &loopback, 9090).is_err(),
            "a host this door does not admit"
        );
        let other = uri(
            json!({"services": [{"name": "A2A", "endpoint": "http://127.0.0.1:9090/.well-known/agent-card.json"}],
            "registrations": [{"agentId": 7, "agentRegistry": "eip155:31337:0xabc"}]}),
        );
        assert!(
            me.check_registration(&other, &loopback, 9090).expect_err("agent 7's").contains("another agent")
        );
        assert!(me.check_registration("https://x.example/reg.json", &loopback, 9090).is_err());
        assert_eq!(me.registry(), Ok((31337, "0xAbC".into())));
        let bad = IdentityConfig { agent_registry: "31337:0xabc".into(), agent_id: 1 };
        assert!(bad.registry().is_err());
    }
}
