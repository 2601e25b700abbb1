//! Agents: one agent with its registration file, a search over the registry's agents, and the
//! identity → card check.

use crate::registration::{self, Service};
use crate::registries::{
    self, Registered, agent_registry, getAgentWalletCall, getMetadataCall, ownerOfCall, tokenURICall,
};
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{decode_log, eth_call, wire};
use bardo_sdk::errors::not_found;
use bardo_sdk::logs;
use bardo_sdk::{Category, ChainId, Error, LogFilter, ReadTool, TickBudget, ToolDef, described, events};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most agents a search returns.
const MAX_RESULTS: usize = 50;

fn def<P: JsonSchema>(name: &str, description: &str, steps: &[&str]) -> ToolDef {
    described::<P>(name, description, Category::Identity, steps)
}

/// Params naming an agent.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The agent's id in the Identity Registry (its ERC-721 token id).
    pub agent_id: u64,
    /// On-chain metadata keys to read besides `agentWallet` (`["agentName"]`).
    #[serde(default)]
    pub metadata_keys: Vec<String>,
}

#[derive(Serialize)]
pub struct Metadata {
    key: String,
    /// The value as text when it is UTF-8, else none.
    text: Option<String>,
    hex: String,
}

#[derive(Serialize)]
pub struct Agent {
    agent_id: u64,
    /// `eip155:<chain>:<identity registry>`.
    agent_registry: String,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    owner: Address,
    agent_uri: String,
    /// The verified wallet (where the agent is paid); none when unset.
    agent_wallet: Option<String>,
    metadata: Vec<Metadata>,
    /// The registration file, when the agentURI holds it.
    registration: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    registration_note: Option<String>,
    services: Vec<Service>,
}

/// Read agent `id`: owner, agentURI, wallet, the named metadata and the registration file.
fn agent(chain_id: ChainId, id: u64, keys: &[String]) -> Result<Agent, Error> {
    let r = registries::of(chain_id)?;
    let token = U256::from(id);
    let owner = eth_call(chain_id, r.identity, &ownerOfCall { tokenId: token }).map_err(|e| {
        not_found(format!(
            "agent {id} is not registered in {}: {}",
            agent_registry(chain_id, r.identity),
            e.message
        ))
    })?;
    let agent_uri = eth_call(chain_id, r.identity, &tokenURICall { tokenId: token })?;
    let wallet = eth_call(chain_id, r.identity, &getAgentWalletCall { agentId: token })?;
    let mut metadata = Vec::new();
    for key in keys {
        let value =
            eth_call(chain_id, r.identity, &getMetadataCall { agentId: token, metadataKey: key.clone() })?;
        metadata.push(Metadata {
            key: key.clone(),
            text: String::from_utf8(value.to_vec()).ok(),
            hex: format!("0x{}", alloy_primitives::hex::encode(&value)),
        });
    }
    let read = registration::read(&agent_uri);
    let services = read.file.as_ref().map(registration::services).unwrap_or_default();
    Ok(Agent {
        agent_id: id,
        agent_registry: agent_registry(chain_id, r.identity),
        owner,
        agent_wallet: (wallet != Address::ZERO).then(|| wallet.to_checksum(None)),
        metadata,
        registration: read.file,
        registration_note: read.note,
        services,
        agent_uri,
    })
}

pub struct GetAgent;

impl ReadTool for GetAgent {
    const NAME: &'static str = "identity_get_agent";
    type Params = AgentParams;
    type Output = Agent;

    fn def() -> ToolDef {
        def::<AgentParams>(
            Self::NAME,
            "Read an ERC-8004 agent: its owner, agentURI, verified wallet, the named on-chain metadata, and its \
             registration file and services when the agentURI holds the file (a data: URI). Reads only.",
            &["identity registry"],
        )
    }

    fn run(p: AgentParams) -> Result<Agent, Error> {
        events::progress(0);
        agent(p.chain_id, p.agent_id, &p.metadata_keys)
    }
}

/// Params of `identity_search_agents`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// Part of the registration file's `name` (any case).
    #[serde(default)]
    pub name: Option<String>,
    /// A service the registration names (`A2A`, `MCP`, …; any case).
    #[serde(default)]
    pub service: Option<String>,
    /// An on-chain metadata key the agent must have…
    #[serde(default)]
    pub metadata_key: Option<String>,
    /// …with this value (UTF-8), when given.
    #[serde(default)]
    pub metadata_value: Option<String>,
    /// First block to scan for registrations (default: the last 200,000 blocks).
    #[serde(default)]
    pub from_block: Option<u64>,
}

#[derive(Serialize)]
pub struct Found {
    agent_id: u64,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    owner: Address,
    name: Option<String>,
    agent_uri: String,
    services: Vec<Service>,
}

#[derive(Serialize)]
pub struct Search {
    agent_registry: String,
    from_block: u64,
    to_block: u64,
    /// Registrations scanned.
    scanned: usize,
    agents: Vec<Found>,
    /// True when more agents matched than are returned.
    truncated: bool,
}

pub struct SearchAgents;

impl ReadTool for SearchAgents {
    const NAME: &'static str = "identity_search_agents";
    type Params = SearchParams;
    type Output = Search;

    fn def() -> ToolDef {
        ToolDef {
            tick_budget: TickBudget::Medium,
            ..def::<SearchParams>(
                Self::NAME,
                "Search the Identity Registry's agents by registration name, a service they name (A2A, MCP) or an \
                 on-chain metadata key and value: the registrations in a block range, each agent read as it is now. \
                 Reads only; at most 50 agents.",
                &["registrations", "agents"],
            )
        }
    }

    fn run(p: SearchParams) -> Result<Search, Error> {
        let r = registries::of(p.chain_id)?;
        events::progress(0);
        let (from_block, to_block) = logs::range(p.chain_id, p.from_block, logs::MAX_SCAN)?;
        let filter = LogFilter {
            chain_id: p.chain_id,
            addresses: vec![wire(&r.identity)],
            topics: vec![vec![<Registered as alloy_sol_types::SolEvent>::SIGNATURE_HASH.to_string()]],
            from_block: None,
            to_block: None,
        };
        let ids: Vec<_> = logs::scan(filter, from_block, to_block)?
            .iter()
            .filter_map(decode_log::<Registered>)
            .map(|e| e.agentId)
            .collect();
        events::progress(1);
        let lower = |s: &Option<String>| s.as_ref().map(|s| s.to_lowercase());
        let (name, service) = (lower(&p.name), lower(&p.service));
        let keys: Vec<String> = p.metadata_key.iter().cloned().collect();
        let mut agents = Vec::new();
        let mut truncated = false;
        for id in &ids {
            let Ok(id) = u64::try_from(*id) else { continue };
            let a = agent(p.chain_id, id, &keys)?;
            let registered_name = a.registration.as_ref().and_then(|f| f["name"].as_str()).map(str::to_owned);
            let name_ok = name.as_ref().is_none_or(|n| {
                registered_name.as_ref().is_some_and(|r| r.to_lowercase().contains(n.as_str()))
            });
            let service_ok =
                service.as_ref().is_none_or(|s| a.services.iter().any(|x| x.name.to_lowercase() == *s));
            let metadata_ok = a.metadata.first().is_none_or(|m| {
                !m.hex.eq("0x")
                    && p.metadata_value.as_ref().is_none_or(|v| m.text.as_deref() == Some(v.as_str()))
            });
            if !(name_ok && service_ok && metadata_ok) {
                continue;
            }
            if agents.len() == MAX_RESULTS {
                truncated = true;
                break;
            }
            agents.push(Found {
                agent_id: a.agent_id,
                owner: a.owner,
                name: registered_name,
                agent_uri: a.agent_uri,
                services: a.services,
            });
        }
        Ok(Search {
            agent_registry: agent_registry(p.chain_id, r.identity),
            from_block,
            to_block,
            scanned: ids.len(),
            agents,
            truncated,
        })
    }
}

/// Params of `identity_verify_agent`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The agent's id.
    pub agent_id: u64,
    /// The A2A agent card URL the agent should name (`https://…/.well-known/agent-card.json`).
    pub card_url: String,
    /// The card itself, as fetched from `card_url` (a plugin has no network): it must name this
    /// agent back (its ERC-8004 extension). Without it only one direction is checked and the
    /// agent is not `verified`.
    #[serde(default)]
    pub card: Option<Value>,
}

#[derive(Serialize)]
pub struct Verified {
    /// True when the chain's agent names `card_url` as its A2A service and the card names the
    /// same agent back: identity → card → the same identity.
    verified: bool,
    /// The first direction alone: the registration names `card_url`.
    names_card: bool,
    /// Each link followed: identity, agentURI, registration file, services, card.
    path: Vec<String>,
    /// Why not, when not.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

pub struct VerifyAgent;

impl ReadTool for VerifyAgent {
    const NAME: &'static str = "identity_verify_agent";
    type Params = VerifyParams;
    type Output = Verified;

    fn def() -> ToolDef {
        def::<VerifyParams>(
            Self::NAME,
            "Check that an ERC-8004 agent and an A2A agent card name each other: follows identity → agentURI → \
             registration file → services → card on the chain, then the card (pass its JSON as `card`; a \
             plugin has no network) back to the same identity, and says where either breaks. Reads only.",
            &["identity registry"],
        )
    }

    fn run(p: VerifyParams) -> Result<Verified, Error> {
        events::progress(0);
        let a = agent(p.chain_id, p.agent_id, &[])?;
        let mut path = vec![
            format!("{}#{} owned by {}", a.agent_registry, a.agent_id, a.owner.to_checksum(None)),
            format!("agentURI {}", short(&a.agent_uri)),
        ];
        let no = |path: Vec<String>, reason: String| {
            Ok(Verified { verified: false, names_card: false, path, reason: Some(reason) })
        };
        let Some(file) = &a.registration else {
            return no(path, a.registration_note.unwrap_or_default());
        };
        path.push(format!("registration file `{}`", file["name"].as_str().unwrap_or("(no name)")));
        // A file that lists registrations must list this one: a file copied from another agent
        // names that agent. An empty list (a file written before its agent was minted) says
        // nothing either way; the ERC makes registrations a SHOULD.
        let registrations: Vec<&serde_json::Value> =
            file["registrations"].as_array().into_iter().flatten().collect();
        let registered_here = registrations.iter().any(|r| {
            r["agentId"].as_u64() == Some(a.agent_id)
                && r["agentRegistry"].as_str().is_some_and(|s| s.eq_ignore_ascii_case(&a.agent_registry))
        });
        if !registrations.is_empty() && !registered_here {
            return no(
                path,
                format!("its `registrations` do not name agent {} of {}", a.agent_id, a.agent_registry),
            );
        }
        let a2a: Vec<&Service> = a.services.iter().filter(|s| s.name.eq_ignore_ascii_case("a2a")).collect();
        path.push(format!(
            "services: {}",
            a.services.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
        ));
        match a2a.iter().find(|s| s.endpoint == p.card_url) {
            Some(s) => {
                path.push(format!("A2A card {}", s.endpoint));
                let back = names_back(p.card.as_ref(), &a.agent_registry, a.agent_id);
                if back.is_ok() {
                    path.push(format!("the card names agent {} of {}", a.agent_id, a.agent_registry));
                }
                Ok(Verified { verified: back.is_ok(), names_card: true, path, reason: back.err() })
            }
            None if a2a.is_empty() => no(path, "the registration names no A2A service".into()),
            None => no(
                path,
                format!(
                    "its A2A service is {}, not {}",
                    a2a.iter().map(|s| s.endpoint.as_str()).collect::<Vec<_>>().join(", "),
                    p.card_url
                ),
            ),
        }
    }
}

/// The ERC-8004 extension's URI in an A2A card.
const EXTENSION_URI: &str = "https://eips.ethereum.org/EIPS/eip-8004";

/// Whether `card` names agent `id` of `registry` (`eip155:…`) in its ERC-8004 extension: a
/// registration naming a card proves nothing alone — an impersonator's registration can name
/// anyone's card, and only the card's own claim closes the loop.
fn names_back(card: Option<&Value>, registry: &str, id: u64) -> Result<(), String> {
    let Some(card) = card else {
        return Err(format!(
            "only one direction checked: the registration names the card; pass the card's JSON as `card` to check it names agent {id} back"
        ));
    };
    let extensions = card["capabilities"]["extensions"].as_array().into_iter().flatten();
    let claims: Vec<&Value> =
        extensions.filter(|e| e["uri"] == EXTENSION_URI).map(|e| &e["params"]).collect();
    // A client that reads JSON numbers as floats hands on `1.0`.
    let ours = |p: &Value| {
        p["agentId"].as_f64() == Some(id as f64)
            && p["agentRegistry"].as_str().is_some_and(|r| r.eq_ignore_ascii_case(registry))
    };
    match claims.iter().any(|p| ours(p)) {
        true => Ok(()),
        false if claims.is_empty() => {
            Err(format!("the card names no ERC-8004 identity (no extension {EXTENSION_URI})"))
        }
        false => Err(format!(
            "the card names another identity: {}",
            claims
                .iter()
                .map(|p| format!("agent {} of {}", p["agentId"], p["agentRegistry"]))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// A long URI (a data: URI holds the whole file) cut for a path line.
fn short(uri: &str) -> String {
    match uri.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &uri[..i]),
        None => uri.to_owned(),
    }
}
