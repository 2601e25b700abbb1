//! An agent's reputation (feedback) and validations.

use crate::registries::validation::{getAgentValidationsCall, getValidationStatusCall};
use crate::registries::{self, getClientsCall, getSummaryCall, readAllFeedbackCall};
use alloy_primitives::{Address, B256, I256, U256};
use bardo_sdk::abi::eth_call;
use bardo_sdk::tokens::parse_address;
use bardo_sdk::{Category, ChainId, Error, ReadTool, ToolDef, described, events};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `identity_get_reputation`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReputationParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The agent's id.
    pub agent_id: u64,
    /// The clients to count (default: every client that gave feedback — open to Sybil spam, so
    /// name the clients you trust).
    #[serde(default)]
    pub clients: Vec<String>,
    /// Only feedback with this tag1 (`starred`, `uptime`, …).
    #[serde(default)]
    pub tag1: Option<String>,
    /// Only feedback with this tag2.
    #[serde(default)]
    pub tag2: Option<String>,
    /// List revoked feedback too (never counted in the summary).
    #[serde(default)]
    pub include_revoked: bool,
}

#[derive(Serialize)]
pub struct Feedback {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    client: Address,
    index: u64,
    /// The value with its decimals applied (`"99.77"`).
    value: String,
    tag1: String,
    tag2: String,
    revoked: bool,
}

#[derive(Serialize)]
pub struct Reputation {
    agent_id: u64,
    /// Whether `clients` was named (else every client counted).
    clients_named: bool,
    /// Unrevoked feedback counted, and its mean (18 decimals applied).
    count: u64,
    mean: Option<String>,
    feedback: Vec<Feedback>,
}

pub struct GetReputation;

impl ReadTool for GetReputation {
    const NAME: &'static str = "identity_get_reputation";
    type Params = ReputationParams;
    type Output = Reputation;

    fn def() -> ToolDef {
        described::<ReputationParams>(
            Self::NAME,
            "Read an ERC-8004 agent's reputation: the feedback its clients gave (value, tags, revoked) and the \
             count and mean of the unrevoked feedback, filtered by client and tags. Name the clients you trust: \
             unfiltered feedback is open to Sybil spam. Reads only.",
            Category::Identity,
            &["reputation registry"],
        )
    }

    fn run(p: ReputationParams) -> Result<Reputation, Error> {
        let r = registries::of(p.chain_id)?;
        let id = U256::from(p.agent_id);
        events::progress(0);
        let named =
            p.clients.iter().map(|c| parse_address("clients", c)).collect::<Result<Vec<Address>, Error>>()?;
        let clients = match named.is_empty() {
            true => eth_call(p.chain_id, r.reputation, &getClientsCall { agentId: id })?,
            false => named.clone(),
        };
        let (tag1, tag2) = (p.tag1.unwrap_or_default(), p.tag2.unwrap_or_default());
        let all = eth_call(
            p.chain_id,
            r.reputation,
            &readAllFeedbackCall {
                agentId: id,
                clientAddresses: clients.clone(),
                tag1: tag1.clone(),
                tag2: tag2.clone(),
                includeRevoked: p.include_revoked,
            },
        )?;
        let feedback = (0..all.clients.len())
            .map(|i| Feedback {
                client: all.clients[i],
                index: all.feedbackIndexes[i],
                value: fixed(all.values[i], all.valueDecimals[i]),
                tag1: all.tag1s[i].clone(),
                tag2: all.tag2s[i].clone(),
                revoked: all.revokedStatuses[i],
            })
            .collect();
        // The registry refuses a summary of no clients: an agent nobody rated has none.
        let (count, mean) = match clients.is_empty() {
            true => (0, None),
            false => {
                let s = eth_call(
                    p.chain_id,
                    r.reputation,
                    &getSummaryCall { agentId: id, clientAddresses: clients, tag1, tag2 },
                )?;
                (s.count, (s.count > 0).then(|| fixed(s.summaryValue, s.summaryValueDecimals)))
            }
        };
        Ok(Reputation { agent_id: p.agent_id, clients_named: !named.is_empty(), count, mean, feedback })
    }
}

/// A signed fixed-point value as decimal text, trailing zeros dropped (`9977`, 2 → `99.77`).
fn fixed(value: i128, decimals: u8) -> String {
    let v = I256::try_from(value).unwrap_or_default();
    let (sign, abs) = if v.is_negative() { ("-", v.unsigned_abs()) } else { ("", v.unsigned_abs()) };
    let text = bardo_sdk::units::format_units(abs, decimals);
    format!("{sign}{text}")
}

/// Params naming an agent.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidationsParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The agent's id.
    pub agent_id: u64,
}

#[derive(Serialize)]
pub struct Validation {
    request_hash: B256,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    validator: Address,
    /// 0-100; none until the validator answers.
    response: Option<u8>,
    tag: String,
    response_hash: B256,
    /// When the last answer landed (unix seconds); none before one.
    last_update: Option<u64>,
}

#[derive(Serialize)]
pub struct Validations {
    agent_id: u64,
    /// Answered requests, and their mean response.
    answered: u64,
    mean_response: Option<u8>,
    validations: Vec<Validation>,
}

pub struct GetValidations;

impl ReadTool for GetValidations {
    const NAME: &'static str = "identity_get_validations";
    type Params = ValidationsParams;
    type Output = Validations;

    fn def() -> ToolDef {
        described::<ValidationsParams>(
            Self::NAME,
            "Read an ERC-8004 agent's validation requests and each validator's latest response (0-100, tag, when), \
             with the count and mean of the answered ones. Reads only.",
            Category::Identity,
            &["validation registry"],
        )
    }

    fn run(p: ValidationsParams) -> Result<Validations, Error> {
        let r = registries::of(p.chain_id)?;
        let id = U256::from(p.agent_id);
        events::progress(0);
        let hashes = eth_call(p.chain_id, r.validation, &getAgentValidationsCall { agentId: id })?;
        let mut validations = Vec::new();
        for hash in hashes {
            let s = eth_call(p.chain_id, r.validation, &getValidationStatusCall { requestHash: hash })?;
            let answered = !s.lastUpdate.is_zero();
            validations.push(Validation {
                request_hash: hash,
                validator: s.validatorAddress,
                response: answered.then_some(s.response),
                tag: s.tag,
                response_hash: s.responseHash,
                last_update: answered.then(|| u64::try_from(s.lastUpdate).unwrap_or(u64::MAX)),
            });
        }
        let summary = eth_call(
            p.chain_id,
            r.validation,
            &crate::registries::validation::getSummaryCall {
                agentId: id,
                validatorAddresses: Vec::new(),
                tag: String::new(),
            },
        )?;
        Ok(Validations {
            agent_id: p.agent_id,
            answered: summary.count,
            mean_response: (summary.count > 0).then_some(summary.averageResponse),
            validations,
        })
    }
}
