//! `reputation-guard`: feedback and validation are the operator's word on chain — they move no
//! value, but a plugin that could give them freely could sell the wallet's reputation (sixteen
//! feedbacks of 100 to an attacker's agent in one plan) or have the operator vouch for itself.
//! So a plan gives at most one (`giveFeedback`, `validationRequest`, `validationResponse`), the
//! wallet gives at most `[safety.reputation] per_day` in any 24 hours (a ledger every `bardo`
//! process shares), each waits for a person when `confirm` says so (the default), and no plan
//! rates or validates an agent that is the operator's own — owned by or paid to the wallet, its
//! Safe's signing key or any of the Safe's owners — read from the registries, not from the plan.

use super::{Decision, Findings, Proposal, SafetyHook, reject};
use crate::scope::decode;
use crate::scope::erc8004::{giveFeedbackCall, validationRequestCall, validationResponseCall};
use crate::valuation::Valuer;
use alloy::primitives::{Address, B256, U256};
use bardo_core::error::ErrorCode;
use bardo_core::scope::Role;
use bardo_runtime::Services;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

// The registries' write functions are the scopes' (`scope::erc8004`); these are the reads.
alloy::sol! {
    function getIdentityRegistry() external view returns (address);
    function getAgentWallet(uint256 agentId) external view returns (address);
    function getValidationStatus(bytes32 requestHash) external view returns (address validatorAddress,
        uint256 agentId, uint8 response, bytes32 responseHash, string tag, uint256 lastUpdate);
    function getOwners() external view returns (address[]);
}

/// The default of [`ReputationLimits::per_day`].
pub const DEFAULT_PER_DAY: u32 = 10;

/// `[safety.reputation]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReputationLimits {
    /// Most feedbacks, validation requests and answers the wallet gives in any 24 hours.
    pub per_day: u32,
    /// Whether each waits for a person's confirmation (default true: it speaks for the operator).
    pub confirm: bool,
    /// The ledger of what was given, shared by every `bardo` process of this host.
    pub ledger: PathBuf,
}

impl Default for ReputationLimits {
    fn default() -> Self {
        Self { per_day: DEFAULT_PER_DAY, confirm: true, ledger: PathBuf::from(".bardo/reputation.json") }
    }
}

/// What the operator's word was given for, by permit: when (unix seconds).
type Ledger = BTreeMap<String, u64>;

const DAY_SECS: u64 = 24 * 3600;

/// The hook.
pub struct ReputationGuard {
    /// The limits, with the ledger's path resolved.
    pub limits: ReputationLimits,
    /// The allowlist's roles per chain: which contracts are the registries.
    pub roles: BTreeMap<u64, BTreeMap<Address, Role>>,
    /// Reads of the registries (and a Safe's owners).
    pub valuer: Valuer,
    /// The wallet's signing key, when the wallet is a Safe.
    pub services: Arc<Services>,
}

/// One word the plan gives: what and about which agent.
enum Word {
    Feedback { registry: Address, agent: U256 },
    Request { agent: U256, validator: Address },
    Response { registry: Address, request: B256 },
}

impl ReputationGuard {
    /// The words `p`'s plan gives.
    fn words(&self, p: &Proposal<'_>) -> Vec<Word> {
        let roles = self.roles.get(&p.chain_id);
        let role = |a: &Address| roles.and_then(|r| r.get(a)).copied();
        p.plan
            .calls
            .iter()
            .filter_map(|c| match role(&c.to)? {
                Role::Erc8004ReputationRegistry => decode::<giveFeedbackCall>(&c.data)
                    .map(|f| Word::Feedback { registry: c.to, agent: f.agentId }),
                Role::Erc8004ValidationRegistry => decode::<validationRequestCall>(&c.data)
                    .map(|r| Word::Request { agent: r.agentId, validator: r.validatorAddress })
                    .or_else(|| {
                        decode::<validationResponseCall>(&c.data)
                            .map(|r| Word::Response { registry: c.to, request: r.requestHash })
                    }),
                _ => None,
            })
            .collect()
    }

    /// The operator's own accounts: the wallet, and for a Safe its signing key and its owners.
    fn own(&self, chain: u64, wallet: Address) -> Result<BTreeSet<Address>, String> {
        let mut own = BTreeSet::from([wallet]);
        if self.services.evm.safe_of(wallet).is_some() {
            own.insert(self.services.evm.signer_of(wallet));
            own.extend(self.valuer.read(chain, wallet, getOwnersCall {})?);
        }
        Ok(own)
    }

    /// Whose agent `agent` of the identity registry `registry` names is: its owner and the
    /// wallet it is paid to.
    fn agent_accounts(&self, chain: u64, registry: Address, agent: U256) -> Result<[Address; 2], String> {
        let identity = self.valuer.read(chain, registry, getIdentityRegistryCall {})?;
        // An agent that does not exist has no owner: the registry refuses the plan itself.
        let owner = self.valuer.owner_of(chain, identity, agent)?.unwrap_or_default();
        let paid = self.valuer.read(chain, identity, getAgentWalletCall { agentId: agent })?;
        Ok([owner, paid])
    }

    /// Why the word is refused, if it is about the operator's own agent or names the operator
    /// as the validator of its own; an error when the registries cannot be read.
    fn judge(&self, chain: u64, own: &BTreeSet<Address>, word: &Word) -> Result<Option<String>, String> {
        let mine = |accounts: [Address; 2]| accounts.iter().any(|a| *a != Address::ZERO && own.contains(a));
        match word {
            Word::Feedback { registry, agent } => {
                if mine(self.agent_accounts(chain, *registry, *agent)?) {
                    return Ok(Some(format!(
                        "self-rating: agent {agent} is owned by or paid to the operator's own account; feedback is for others' agents"
                    )));
                }
            }
            Word::Request { validator, agent, .. } => {
                if own.contains(validator) {
                    return Ok(Some(format!(
                        "self-validation: the validator {validator} of agent {agent} is the operator's own account; name an independent validator"
                    )));
                }
            }
            Word::Response { registry, request } => {
                let status =
                    self.valuer.read(chain, *registry, getValidationStatusCall { requestHash: *request })?;
                if mine(self.agent_accounts(chain, *registry, status.agentId)?) {
                    return Ok(Some(format!(
                        "self-validation: request {request} is about agent {}, the operator's own; its validation must come from someone else",
                        status.agentId
                    )));
                }
            }
        }
        Ok(None)
    }

    /// Book `permit_id` in the ledger if fewer than `per_day` were given in the last 24 hours.
    fn book(&self, permit_id: &str) -> Result<Result<(), usize>, String> {
        let now = unix_now();
        crate::store::with_locked(&self.limits.ledger, |ledger: &mut Ledger| {
            ledger.retain(|_, at| now.saturating_sub(*at) < DAY_SECS);
            if ledger.len() >= self.limits.per_day as usize {
                return Err(ledger.len());
            }
            ledger.insert(permit_id.to_owned(), now);
            Ok(())
        })
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl SafetyHook for ReputationGuard {
    fn name(&self) -> &'static str {
        "reputation-guard"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let words = self.words(p);
        match words.len() {
            0 => return Decision::Allow,
            1 => {}
            n => {
                return reject(
                    ErrorCode::Denied,
                    format!("the plan gives {n} feedbacks or validations; a plan gives at most one"),
                );
            }
        }
        let judged = self.own(p.chain_id, p.sender).and_then(|own| self.judge(p.chain_id, &own, &words[0]));
        match judged {
            Ok(None) => {}
            Ok(Some(refusal)) => return reject(ErrorCode::Denied, refusal),
            Err(e) => return reject(ErrorCode::Rpc, format!("cannot read the registries: {e}")),
        }
        match self.book(p.permit_id) {
            Ok(Ok(())) => {}
            Ok(Err(given)) => {
                return reject(
                    ErrorCode::LimitExceeded,
                    format!(
                        "{given} feedbacks and validations in the last 24 hours ([safety.reputation] per_day = {}); wait, or raise the limit",
                        self.limits.per_day
                    ),
                );
            }
            Err(e) => return reject(ErrorCode::Internal, format!("the reputation ledger: {e}")),
        }
        if self.limits.confirm {
            found.hold = Some(
                "[safety.reputation] confirm = true: feedback and validations speak for the operator".into(),
            );
        }
        Decision::Allow
    }

    fn settle(&self, permit_id: &str, executed: bool) {
        if !executed {
            let _ = crate::store::with_locked(&self.limits.ledger, |ledger: &mut Ledger| {
                ledger.remove(permit_id);
            });
        }
    }
}
