//! The write plans: register an agent, update its agentURI, give feedback, request and answer a
//! validation. None moves value; registering mints the agent (an ERC-721) to the wallet, which
//! the plan declares. The registries are the host's to allowlist (roles
//! `erc8004-identity-registry`, `-reputation-registry`, `-validation-registry`), and each
//! plan fails early where the registry would refuse it.

use crate::registration::{self, Describe};
use crate::registries::{self, agent_registry, ownerOfCall};
use alloy_primitives::{Address, B256, U256, keccak256};
use bardo_sdk::abi::{decode_log, eth_call, landed, tx_call, wallet};
use bardo_sdk::erc20::NftChange;
use bardo_sdk::errors::{error, internal, invalid_params};
use bardo_sdk::tokens::parse_address;
use bardo_sdk::{
    CapabilityTier, Category, ChainId, Error, ErrorCode, PlannedCall, Receipt, RiskTier, SpriteTrigger,
    TickBudget, ToolDef, WritePlan, WriteTool, snippet, tool_def,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

alloy_sol_types::sol! {
    struct MetadataEntry { string metadataKey; bytes metadataValue; }
    function register(string agentURI, MetadataEntry[] metadata) external returns (uint256);
    function setAgentURI(uint256 agentId, string newURI) external;
    function giveFeedback(uint256 agentId, int128 value, uint8 valueDecimals, string tag1, string tag2,
        string endpoint, string feedbackURI, bytes32 feedbackHash) external;
    function validationRequest(address validatorAddress, uint256 agentId, string requestURI, bytes32 requestHash)
        external;
    function validationResponse(bytes32 requestHash, uint8 response, string responseURI, bytes32 responseHash,
        string tag) external;
    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);
    event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy);
    event NewFeedback(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex, int128 value,
        uint8 valueDecimals, string indexed indexedTag1, string tag1, string tag2, string endpoint,
        string feedbackURI, bytes32 feedbackHash);
    event ValidationRequest(address indexed validatorAddress, uint256 indexed agentId, string requestURI,
        bytes32 indexed requestHash);
    event ValidationResponse(address indexed validatorAddress, uint256 indexed agentId, bytes32 indexed requestHash,
        uint8 response, string responseURI, bytes32 responseHash, string tag);
}

fn def<P: JsonSchema>(name: &str, kind: &str, description: &str) -> ToolDef {
    ToolDef {
        capability_tier: CapabilityTier::Write,
        risk_tier: RiskTier::Low,
        tick_budget: TickBudget::Medium,
        sprite_trigger: SpriteTrigger::Executing,
        progress_steps: vec!["read the registry".into(), "build the call".into()],
        action_kinds: vec![kind.into()],
        prompt_snippet: snippet(name, description),
        ..tool_def::<P>(name, description, Category::Identity)
    }
}

/// One call, moving nothing but what `nfts` says.
fn plan(call: PlannedCall, mut outcome: Value, nfts: Vec<NftChange>) -> Result<WritePlan, Error> {
    outcome["balance_changes"] = json!([]);
    outcome["nfts"] = serde_json::to_value(nfts).map_err(|e| internal(e.to_string()))?;
    Ok(WritePlan { calls: vec![call], expected_outcome_json: outcome.to_string() })
}

/// The last receipt's first `E` from `registry`.
fn event<E: alloy_sol_types::SolEvent>(
    receipts: &[Receipt],
    registry: Address,
) -> Result<(E, String), Error> {
    let (last, _) = landed(receipts)?;
    let found = last
        .logs
        .iter()
        .filter(|l| l.address.parse::<Address>().ok() == Some(registry))
        .find_map(decode_log::<E>)
        .ok_or_else(|| internal(format!("the receipt holds no {} from {registry}", E::SIGNATURE)))?;
    Ok((found, last.tx_hash.clone()))
}

/// `agent_id`'s owner must be the wallet (the registry would refuse anyone else).
fn require_owner(chain_id: ChainId, identity: Address, agent_id: u64, me: Address) -> Result<(), Error> {
    let owner = eth_call(chain_id, identity, &ownerOfCall { tokenId: U256::from(agent_id) })
        .map_err(|e| invalid_params(format!("agent {agent_id} is not registered: {}", e.message)))?;
    if owner != me {
        return Err(error(
            ErrorCode::Denied,
            format!(
                "agent {agent_id} is owned by {}, not the wallet {}",
                owner.to_checksum(None),
                me.to_checksum(None)
            ),
        ));
    }
    Ok(())
}

/// Params of `identity_register`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The registration file's contents (`{"name", "description", "a2a_card", "mcp", "image"}`),
    /// written on-chain as a data: URI.
    pub registration: Describe,
    /// On-chain metadata to set at registration (`{"agentName": "bardo.eth"}`); `agentWallet` is
    /// reserved: it starts as the wallet.
    #[serde(default)]
    pub metadata: std::collections::BTreeMap<String, String>,
}

pub struct Register;

impl WriteTool for Register {
    const NAME: &'static str = "identity_register";
    type Params = RegisterParams;

    fn def() -> ToolDef {
        def::<RegisterParams>(
            Self::NAME,
            "identity-register",
            "Register the wallet as an ERC-8004 agent: the registration file (name, description, A2A card, MCP \
             endpoint) written on-chain as its agentURI, the agent minted to the wallet. Write: returns a plan.",
        )
    }

    fn plan(p: RegisterParams) -> Result<WritePlan, Error> {
        let r = registries::of(p.chain_id)?;
        wallet(p.chain_id)?;
        bardo_sdk::events::progress(0);
        if p.metadata.keys().any(|k| k == "agentWallet") {
            return Err(invalid_params(
                "`agentWallet` is reserved: it starts as the wallet and moves only by signature",
            ));
        }
        let uri = registration::build(&p.registration, None)?;
        let metadata = p
            .metadata
            .iter()
            .map(|(k, v)| MetadataEntry {
                metadataKey: k.clone(),
                metadataValue: v.as_bytes().to_vec().into(),
            })
            .collect();
        bardo_sdk::events::progress(1);
        let call = PlannedCall {
            call: tx_call(p.chain_id, r.identity, &registerCall { agentURI: uri.clone(), metadata }),
            description: format!(
                "register agent `{}` in {}",
                p.registration.name,
                agent_registry(p.chain_id, r.identity)
            ),
        };
        let outcome = json!({"action": "identity-register", "name": p.registration.name, "agent_uri": uri});
        plan(call, outcome, vec![NftChange::minted(r.identity)])
    }

    fn verify(p: RegisterParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
        let r = registries::of(p.chain_id)?;
        let (e, tx_hash) = event::<Registered>(&receipts, r.identity)?;
        Ok(json!({
            "action": "identity-register",
            "agent_id": e.agentId.to_string(),
            "agent_registry": agent_registry(p.chain_id, r.identity),
            "owner": e.owner.to_checksum(None),
            "tx_hash": tx_hash,
        }))
    }
}

/// Params of `identity_set_agent_uri`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetUriParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The wallet's agent.
    pub agent_id: u64,
    /// The new registration file (`{"name", "description", "a2a_card", "mcp", "image"}`),
    /// written on-chain and naming this registration.
    pub registration: Describe,
}

pub struct SetUri;

impl WriteTool for SetUri {
    const NAME: &'static str = "identity_set_agent_uri";
    type Params = SetUriParams;

    fn def() -> ToolDef {
        def::<SetUriParams>(
            Self::NAME,
            "identity-set-uri",
            "Replace the registration file of one of the wallet's ERC-8004 agents (written on-chain as its \
             agentURI, naming its own registration). Write: returns a plan.",
        )
    }

    fn plan(p: SetUriParams) -> Result<WritePlan, Error> {
        let r = registries::of(p.chain_id)?;
        let me = wallet(p.chain_id)?;
        bardo_sdk::events::progress(0);
        require_owner(p.chain_id, r.identity, p.agent_id, me)?;
        let registry = agent_registry(p.chain_id, r.identity);
        let uri = registration::build(&p.registration, Some((p.agent_id, &registry)))?;
        bardo_sdk::events::progress(1);
        let call = PlannedCall {
            call: tx_call(
                p.chain_id,
                r.identity,
                &setAgentURICall { agentId: U256::from(p.agent_id), newURI: uri.clone() },
            ),
            description: format!("set agent {}'s registration file", p.agent_id),
        };
        plan(
            call,
            json!({"action": "identity-set-uri", "agent_id": p.agent_id, "agent_uri": uri}),
            Vec::new(),
        )
    }

    fn verify(p: SetUriParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
        let r = registries::of(p.chain_id)?;
        let (e, tx_hash) = event::<URIUpdated>(&receipts, r.identity)?;
        Ok(
            json!({"action": "identity-set-uri", "agent_id": e.agentId.to_string(), "agent_uri": e.newURI, "tx_hash": tx_hash}),
        )
    }
}

/// Params of `identity_give_feedback`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The agent rated (not one of the wallet's own).
    pub agent_id: u64,
    /// The value, a signed decimal with at most 18 decimals (`"87"`, `"99.77"`, `"-3.2"`).
    pub value: String,
    /// What it measures (`starred`, `uptime`, `successRate`, …).
    #[serde(default)]
    pub tag1: String,
    #[serde(default)]
    pub tag2: String,
    /// The endpoint the feedback is about.
    #[serde(default)]
    pub endpoint: String,
    /// An off-chain feedback file.
    #[serde(default)]
    pub feedback_uri: String,
    /// keccak256 of that file's content.
    #[serde(default)]
    pub feedback_hash: Option<String>,
}

/// A 32-byte hash param (`0x` and 64 hex digits).
fn hash(field: &str, text: &str) -> Result<B256, Error> {
    text.trim().parse().map_err(|_| {
        invalid_params(format!("`{field}` {text:?} is not a 32-byte hash (0x and 64 hex digits)"))
    })
}

/// An optional hash param; zero when absent.
fn hash_or_zero(field: &str, text: &Option<String>) -> Result<B256, Error> {
    text.as_deref().map_or(Ok(B256::ZERO), |t| hash(field, t))
}

/// `"-3.20"` → (-320, 2): a signed fixed-point value and its decimals.
fn fixed(text: &str) -> Result<(i128, u8), Error> {
    let bad = || invalid_params(format!("`value` {text:?} is not a decimal number with at most 18 decimals"));
    let (neg, digits) = match text.trim().strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.trim()),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() || frac.len() > 18 || !(whole.chars().chain(frac.chars())).all(|c| c.is_ascii_digit())
    {
        return Err(bad());
    }
    let v: i128 = format!("{whole}{frac}").parse().map_err(|_| bad())?;
    Ok((if neg { -v } else { v }, frac.len() as u8))
}

pub struct GiveFeedback;

impl WriteTool for GiveFeedback {
    const NAME: &'static str = "identity_give_feedback";
    type Params = FeedbackParams;

    fn def() -> ToolDef {
        def::<FeedbackParams>(
            Self::NAME,
            "identity-feedback",
            "Give an ERC-8004 agent feedback from the wallet: a signed decimal value with tags (`starred` 87, \
             `uptime` 99.77), optionally an endpoint and a feedback file. Not for the wallet's own agents. Write: \
             returns a plan.",
        )
    }

    fn plan(p: FeedbackParams) -> Result<WritePlan, Error> {
        let r = registries::of(p.chain_id)?;
        let me = wallet(p.chain_id)?;
        let (value, decimals) = fixed(&p.value)?;
        bardo_sdk::events::progress(0);
        let owner = eth_call(p.chain_id, r.identity, &ownerOfCall { tokenId: U256::from(p.agent_id) })
            .map_err(|e| invalid_params(format!("agent {} is not registered: {}", p.agent_id, e.message)))?;
        if owner == me {
            return Err(error(
                ErrorCode::Denied,
                format!("agent {} is the wallet's own: an owner cannot rate it", p.agent_id),
            ));
        }
        bardo_sdk::events::progress(1);
        let call = giveFeedbackCall {
            agentId: U256::from(p.agent_id),
            value,
            valueDecimals: decimals,
            tag1: p.tag1.clone(),
            tag2: p.tag2.clone(),
            endpoint: p.endpoint.clone(),
            feedbackURI: p.feedback_uri.clone(),
            feedbackHash: hash_or_zero("feedback_hash", &p.feedback_hash)?,
        };
        let call = PlannedCall {
            call: tx_call(p.chain_id, r.reputation, &call),
            description: format!("rate agent {} {} {}", p.agent_id, p.tag1, p.value),
        };
        plan(
            call,
            json!({"action": "identity-feedback", "agent_id": p.agent_id, "value": p.value, "tag1": p.tag1}),
            Vec::new(),
        )
    }

    fn verify(p: FeedbackParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
        let r = registries::of(p.chain_id)?;
        let (e, tx_hash) = event::<NewFeedback>(&receipts, r.reputation)?;
        Ok(json!({
            "action": "identity-feedback",
            "agent_id": e.agentId.to_string(),
            "client": e.clientAddress.to_checksum(None),
            "feedback_index": e.feedbackIndex,
            "tx_hash": tx_hash,
        }))
    }
}

/// Params of `identity_request_validation`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The wallet's agent whose work is to be validated.
    pub agent_id: u64,
    /// The validator (a contract or an account) asked.
    pub validator: String,
    /// What the validator needs: inputs, outputs, how to check.
    pub request_uri: String,
    /// The commitment identifying the request; default keccak256 of `request_uri`.
    #[serde(default)]
    pub request_hash: Option<String>,
}

pub struct RequestValidation;

impl WriteTool for RequestValidation {
    const NAME: &'static str = "identity_request_validation";
    type Params = RequestParams;

    fn def() -> ToolDef {
        def::<RequestParams>(
            Self::NAME,
            "identity-validation-request",
            "Ask a validator to check work of one of the wallet's ERC-8004 agents: the request's URI and its \
             hash, which identifies it. Write: returns a plan.",
        )
    }

    fn plan(p: RequestParams) -> Result<WritePlan, Error> {
        let r = registries::of(p.chain_id)?;
        let me = wallet(p.chain_id)?;
        let validator = parse_address("validator", &p.validator)?;
        bardo_sdk::events::progress(0);
        require_owner(p.chain_id, r.identity, p.agent_id, me)?;
        let hash = match &p.request_hash {
            Some(h) => hash("request_hash", h)?,
            None => keccak256(p.request_uri.as_bytes()),
        };
        bardo_sdk::events::progress(1);
        let call = validationRequestCall {
            validatorAddress: validator,
            agentId: U256::from(p.agent_id),
            requestURI: p.request_uri.clone(),
            requestHash: hash,
        };
        let call = PlannedCall {
            call: tx_call(p.chain_id, r.validation, &call),
            description: format!("ask {} to validate agent {}", validator.to_checksum(None), p.agent_id),
        };
        let outcome =
            json!({"action": "identity-validation-request", "agent_id": p.agent_id, "request_hash": hash});
        plan(call, outcome, Vec::new())
    }

    fn verify(p: RequestParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
        let r = registries::of(p.chain_id)?;
        let (e, tx_hash) = event::<ValidationRequest>(&receipts, r.validation)?;
        Ok(json!({
            "action": "identity-validation-request",
            "agent_id": e.agentId.to_string(),
            "validator": e.validatorAddress.to_checksum(None),
            "request_hash": e.requestHash,
            "tx_hash": tx_hash,
        }))
    }
}

/// Params of `identity_respond_validation`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RespondParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The request answered (the wallet must be its validator).
    pub request_hash: String,
    /// 0 (failed) to 100 (passed).
    pub response: u8,
    /// Evidence of the validation.
    #[serde(default)]
    pub response_uri: String,
    /// keccak256 of that evidence.
    #[serde(default)]
    pub response_hash: Option<String>,
    /// A label (`soft-finality`, `hard-finality`, …).
    #[serde(default)]
    pub tag: String,
}

pub struct RespondValidation;

impl WriteTool for RespondValidation {
    const NAME: &'static str = "identity_respond_validation";
    type Params = RespondParams;

    fn def() -> ToolDef {
        def::<RespondParams>(
            Self::NAME,
            "identity-validation-response",
            "Answer a validation request addressed to the wallet: a response from 0 (failed) to 100 (passed), \
             with evidence and a tag; a later answer replaces it. Write: returns a plan.",
        )
    }

    fn plan(p: RespondParams) -> Result<WritePlan, Error> {
        let r = registries::of(p.chain_id)?;
        let me = wallet(p.chain_id)?;
        if p.response > 100 {
            return Err(invalid_params(format!("`response` {} is above 100", p.response)));
        }
        let request = hash("request_hash", &p.request_hash)?;
        bardo_sdk::events::progress(0);
        let status = eth_call(
            p.chain_id,
            r.validation,
            &registries::validation::getValidationStatusCall { requestHash: request },
        )
        .map_err(|e| invalid_params(format!("no validation request {request}: {}", e.message)))?;
        if status.validatorAddress != me {
            return Err(error(
                ErrorCode::Denied,
                format!(
                    "request {request} asks {}, not the wallet {}",
                    status.validatorAddress.to_checksum(None),
                    me.to_checksum(None)
                ),
            ));
        }
        bardo_sdk::events::progress(1);
        let call = validationResponseCall {
            requestHash: request,
            response: p.response,
            responseURI: p.response_uri.clone(),
            responseHash: hash_or_zero("response_hash", &p.response_hash)?,
            tag: p.tag.clone(),
        };
        let call = PlannedCall {
            call: tx_call(p.chain_id, r.validation, &call),
            description: format!("answer validation {request} with {}", p.response),
        };
        let outcome = json!({"action": "identity-validation-response", "request_hash": request, "response": p.response});
        plan(call, outcome, Vec::new())
    }

    fn verify(p: RespondParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
        let r = registries::of(p.chain_id)?;
        let (e, tx_hash) = event::<ValidationResponse>(&receipts, r.validation)?;
        Ok(json!({
            "action": "identity-validation-response",
            "agent_id": e.agentId.to_string(),
            "request_hash": e.requestHash,
            "response": e.response,
            "tx_hash": tx_hash,
        }))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_are_signed_fixed_point() {
        assert_eq!(super::fixed("87").ok(), Some((87, 0)));
        assert_eq!(super::fixed("99.77").ok(), Some((9977, 2)));
        assert_eq!(super::fixed("-3.2").ok(), Some((-32, 1)));
        for bad in ["", "-", ".5", "1e3", "1.0000000000000000001", "x"] {
            assert!(super::fixed(bad).is_err(), "{bad:?}");
        }
    }
}
