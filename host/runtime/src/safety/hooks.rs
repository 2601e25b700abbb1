//! The safety hooks a write plan passes, in order, before it becomes a permit. Each is small and
//! says why it refuses.

use crate::services::Services;
use alloy::primitives::{Address, B256, I256, U256};
use alloy::sol_types::SolCall;
use bardo_core::error::ErrorCode;
use bardo_core::tool::{Phase, ToolDef, WritePlan};
use bardo_evm::simulate::{SimCall, Simulation};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

alloy::sol! {
    function approve(address spender, uint256 amount) external returns (bool);
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// What a hook looks at.
pub struct Proposal<'a> {
    /// The id the permit will have if every hook allows it.
    pub permit_id: &'a str,
    /// The action kind asked for (`swap`, `supply`, ...).
    pub kind: &'a str,
    /// The write tool that planned it.
    pub tool: &'a ToolDef,
    /// The chain it runs on.
    pub chain_id: u64,
    /// The wallet that would sign it.
    pub sender: Address,
    /// The plan: calls and expected outcome.
    pub plan: &'a WritePlan,
    /// The agent's phase now.
    pub phase: Phase,
}

/// A hook's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The plan may go on to the next hook.
    Allow,
    /// The plan is refused.
    Reject {
        /// The error code the caller sees (`denied`, `limit-exceeded`, ...).
        code: ErrorCode,
        /// Why, naming what to change.
        reason: String,
    },
}

fn reject(code: ErrorCode, reason: impl Into<String>) -> Decision {
    Decision::Reject { code, reason: reason.into() }
}

/// What hooks learn along the chain (the simulation, for the permit's hash).
#[derive(Debug, Default)]
pub struct Findings {
    /// The simulation of the plan, once the simulator has run.
    pub simulation: Option<Simulation>,
}

/// One check of the chain.
pub trait SafetyHook: Send + Sync {
    /// Its name in decisions and the audit log.
    fn name(&self) -> &'static str;
    /// Allow, or reject with a code and a reason that says what to do.
    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision;
    /// The permit a check allowed was executed (`true`) or will never be (`false`: rejected
    /// later in the chain, cancelled, expired, refused at commit). Hooks that reserve release.
    fn settle(&self, permit_id: &str, executed: bool) {
        let _ = (permit_id, executed);
    }
}

/// At most `per_minute` previews in any 60 s window: a runaway agent loop stops here.
pub struct RateLimiter {
    /// Most previews in any 60 s.
    pub per_minute: usize,
    recent: std::sync::Mutex<std::collections::VecDeque<Instant>>,
}

impl RateLimiter {
    /// A limiter allowing `per_minute` previews in any 60 s.
    pub fn new(per_minute: usize) -> Self {
        Self { per_minute, recent: std::sync::Mutex::default() }
    }
}

impl SafetyHook for RateLimiter {
    fn name(&self) -> &'static str {
        "rate-limiter"
    }

    fn check(&self, _: &Proposal<'_>, _: &mut Findings) -> Decision {
        let now = Instant::now();
        let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        while recent.front().is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60)) {
            recent.pop_front();
        }
        if recent.len() >= self.per_minute {
            let wait = recent.front().map(|t| 60 - now.duration_since(*t).as_secs()).unwrap_or(60);
            return reject(
                ErrorCode::LimitExceeded,
                format!("{} write previews in the last minute (the limit); wait {wait} s", recent.len()),
            );
        }
        recent.push_back(now);
        Decision::Allow
    }
}

/// The operator's policy. Phase gating: actions that add exposure stop first, actions that
/// reduce it stay allowed longest, terminal allows nothing. Approved assets: on a chain with a
/// list, a plan may only acquire listed tokens (read from its declared balance changes, which
/// the hallucination detector later holds it to).
#[derive(Debug, Clone, Default)]
pub struct PolicyCage {
    /// Tokens a plan may acquire, per chain; a chain not listed is not restricted.
    pub approved_assets: BTreeMap<u64, BTreeSet<Address>>,
    /// The most any single token holding may be worth after a write (`[safety] max_position_usd`).
    pub max_position: Option<MaxPosition>,
}

/// A cap on the USD value of the wallet's holding of each token a write acquires.
#[derive(Debug, Clone)]
pub struct MaxPosition {
    /// The most one token holding may be worth after the write, whole USD.
    pub usd: u64,
    /// What prices the holding.
    pub valuer: super::valuation::Valuer,
}

impl MaxPosition {
    /// Refuse when the wallet's holding of an acquired token would exceed the cap. A token the
    /// price tool cannot value (an Aave aToken, an LP share) is valued at what the plan pays for
    /// it, if it acquires exactly one token; otherwise it is refused, never waved through.
    fn check(&self, p: &Proposal<'_>, changes: &[Change]) -> Decision {
        use super::valuation::{MicroUsd, usd};
        let acquired: Vec<_> = changes.iter().filter(|c| c.delta.is_positive()).collect();
        let cap = MicroUsd::from(self.usd) * 1_000_000;
        for &&Change { token, delta, .. } in &acquired {
            let held = match self.valuer.balance(p.chain_id, token, p.sender) {
                Ok(b) => b,
                Err(reason) => return reject(ErrorCode::Denied, reason),
            };
            let after = held.saturating_add(delta.unsigned_abs());
            let value = match self.valuer.usd(p.chain_id, token, after) {
                Ok(v) => v,
                Err(no_price) if acquired.len() == 1 => {
                    // Its price is what this plan pays per unit: the USD value of its outflows.
                    let mut paid: MicroUsd = 0;
                    for c in changes.iter().filter(|c| c.delta.is_negative()) {
                        match self.valuer.usd(p.chain_id, c.token, c.delta.unsigned_abs()) {
                            Ok(v) => paid = paid.saturating_add(v),
                            Err(_) => return reject(ErrorCode::Denied, no_price),
                        }
                    }
                    if paid == 0 {
                        return reject(ErrorCode::Denied, no_price);
                    }
                    let per_unit = alloy::primitives::U256::from(paid);
                    let v = after.saturating_mul(per_unit)
                        / delta.unsigned_abs().max(alloy::primitives::U256::from(1));
                    u128::try_from(v).unwrap_or(u128::MAX)
                }
                Err(reason) => return reject(ErrorCode::Denied, reason),
            };
            if value > cap {
                return reject(
                    ErrorCode::LimitExceeded,
                    format!(
                        "after this write the wallet would hold {} of {token}, over the {} position limit ([safety] max_position_usd)",
                        usd(value),
                        usd(cap)
                    ),
                );
            }
        }
        Decision::Allow
    }
}

/// Action kinds that reduce exposure.
const REDUCING: &[&str] = &["remove_liquidity", "collect_fees", "repay", "withdraw"];

impl SafetyHook for PolicyCage {
    fn name(&self) -> &'static str {
        "policy-cage"
    }

    fn check(&self, p: &Proposal<'_>, _: &mut Findings) -> Decision {
        let reducing = REDUCING.contains(&p.kind);
        let allowed = match p.phase {
            Phase::Thriving | Phase::Cautious => true,
            Phase::Defensive => reducing || p.kind == "swap",
            Phase::Survival => reducing,
            Phase::Terminal => false,
        };
        if !allowed {
            return reject(
                ErrorCode::Denied,
                format!("`{}` is not allowed in the {:?} phase", p.kind, p.phase),
            );
        }
        let changes = match declared_changes(p) {
            Ok(changes) => changes.unwrap_or_default(),
            Err(reason) => return reject(ErrorCode::Denied, reason),
        };
        if let Some(approved) = self.approved_assets.get(&p.chain_id) {
            for token in changes.iter().filter(|c| c.delta.is_positive()).map(|c| c.token) {
                if !approved.contains(&token) {
                    return reject(
                        ErrorCode::Denied,
                        format!(
                            "{token} is not an approved asset on chain {}; see [safety.approved_assets]",
                            p.chain_id
                        ),
                    );
                }
            }
        }
        match &self.max_position {
            // Reducing exposure is always allowed, whatever a holding is worth.
            Some(cap) if !reducing => cap.check(p, &changes),
            _ => Decision::Allow,
        }
    }
}

/// Contracts, approval spenders and transfer recipients allowed per chain: exact address match.
pub struct AllowlistGuard {
    /// Contracts a plan may call, approve or pay, per chain.
    pub allowed: BTreeMap<u64, BTreeSet<Address>>,
}

impl SafetyHook for AllowlistGuard {
    fn name(&self) -> &'static str {
        "allowlist-guard"
    }

    fn check(&self, p: &Proposal<'_>, _: &mut Findings) -> Decision {
        let Some(allowed) = self.allowed.get(&p.chain_id) else {
            return reject(
                ErrorCode::Denied,
                format!(
                    "no allowlist for chain {}; add [safety.allowlist] entries to bardo.toml",
                    p.chain_id
                ),
            );
        };
        for call in &p.plan.calls {
            if !allowed.contains(&call.to) {
                return reject(
                    ErrorCode::Denied,
                    format!("{} is not on the allowlist of chain {}", call.to, p.chain_id),
                );
            }
            // Value can also leave through a token call's argument: the spender of an approval,
            // the recipient of a transfer. Those must be allowlisted (or the wallet itself) too.
            let party = approveCall::abi_decode(&call.data)
                .map(|a| ("approval spender", a.spender))
                .or_else(|_| transferCall::abi_decode(&call.data).map(|t| ("transfer recipient", t.to)))
                .or_else(|_| transferFromCall::abi_decode(&call.data).map(|t| ("transfer recipient", t.to)));
            if let Ok((role, who)) = party
                && who != p.sender
                && !allowed.contains(&who)
            {
                return reject(
                    ErrorCode::Denied,
                    format!("{role} {who} is not on the allowlist of chain {}", p.chain_id),
                );
            }
        }
        Decision::Allow
    }
}

/// Approvals are bounded (never "unlimited") and only to a contract the plan itself calls.
pub struct ApprovalGuard;

/// Anything at or above 2^128 base units is an unlimited approval in disguise.
const UNLIMITED: U256 = U256::from_limbs([0, 0, 1, 0]);

impl SafetyHook for ApprovalGuard {
    fn name(&self) -> &'static str {
        "approval-guard"
    }

    fn check(&self, p: &Proposal<'_>, _: &mut Findings) -> Decision {
        let targets: BTreeSet<Address> = p.plan.calls.iter().map(|c| c.to).collect();
        for call in &p.plan.calls {
            let Ok(a) = approveCall::abi_decode(&call.data) else { continue };
            if a.amount >= UNLIMITED {
                return reject(
                    ErrorCode::Denied,
                    format!("the plan approves an unlimited amount of {} to {}", call.to, a.spender),
                );
            }
            if !targets.contains(&a.spender) {
                return reject(
                    ErrorCode::Denied,
                    format!("the plan approves {} but never calls it", a.spender),
                );
            }
        }
        Decision::Allow
    }
}

/// The plan run on a fork of the latest block, as the wallet: any revert rejects it.
pub struct RevmSimulator {
    /// Chains and the fork simulator.
    pub services: Arc<Services>,
    /// The longest one simulation may take.
    pub budget: Duration,
}

impl RevmSimulator {
    /// Simulate `plan` from `sender`, at the next block's timestamp or at `at`.
    pub fn run(
        &self,
        chain_id: u64,
        sender: Address,
        plan: &WritePlan,
        at: Option<u64>,
    ) -> Result<Simulation, bardo_evm::chain::ChainError> {
        let calls: Vec<SimCall> =
            plan.calls.iter().map(|c| SimCall { to: c.to, data: c.data.clone(), value: c.value }).collect();
        self.services.simulator.run(
            &self.services.chains,
            chain_id,
            sender,
            &calls,
            at,
            Instant::now() + self.budget,
        )
    }
}

impl SafetyHook for RevmSimulator {
    fn name(&self) -> &'static str {
        "revm-simulator"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let sim = match self.run(p.chain_id, p.sender, p.plan, None) {
            Ok(sim) => sim,
            Err(e) => return reject(ErrorCode::Rpc, format!("cannot simulate: {e}")),
        };
        if let Some((i, failed)) = sim.outcomes.iter().enumerate().find(|(_, o)| !o.success) {
            let reason = alloy::sol_types::decode_revert_reason(&failed.output)
                .unwrap_or_else(|| format!("0x{}", hex::encode(&failed.output)));
            return reject(
                ErrorCode::Reverted,
                format!(
                    "call {} of {} ({}) reverts in simulation: {reason}",
                    i + 1,
                    p.plan.calls.len(),
                    p.plan.calls[i].description
                ),
            );
        }
        found.simulation = Some(sim);
        Decision::Allow
    }
}

/// sha256 over the simulated calls and what they did: per call success, output and logs, and the
/// sender's balance deltas. Raw storage diffs are left out on purpose: they include block
/// timestamps (V3 oracle observations), which would change the hash on every block even when
/// the trade itself is unchanged.
pub fn simulation_hash(chain_id: u64, sender: Address, plan: &WritePlan, sim: &Simulation) -> B256 {
    let mut h = Sha256::new();
    h.update(chain_id.to_be_bytes());
    h.update(sender);
    for c in &plan.calls {
        h.update(c.to);
        h.update(&c.data);
        h.update(c.value.to_be_bytes::<32>());
    }
    for o in &sim.outcomes {
        h.update([o.success as u8]);
        h.update(&o.output);
        for log in &o.logs {
            h.update(log.address);
            for t in log.topics() {
                h.update(t);
            }
            h.update(&log.data.data);
        }
    }
    for (token, delta) in &sim.balance_deltas {
        h.update(token.unwrap_or_default());
        h.update(delta.to_be_bytes::<32>());
    }
    B256::from_slice(&h.finalize())
}

/// One balance change a plan declares (`expected_outcome.balance_changes[i]`).
struct Change {
    token: Address,
    /// Base units; positive is acquired.
    delta: I256,
    /// How much better off than `delta` the wallet may end up (never negative).
    tolerance: I256,
}

/// The plan's declared balance changes (None: it declares none); a malformed entry is an error.
fn declared_changes(p: &Proposal<'_>) -> Result<Option<Vec<Change>>, String> {
    let Some(list) = p.plan.expected_outcome.get("balance_changes").and_then(|v| v.as_array()) else {
        return Ok(None);
    };
    let change = |item: &serde_json::Value| {
        let tolerance = match item.get("tolerance") {
            None => Some(I256::ZERO),
            Some(t) => t.as_str().and_then(|t| t.parse::<I256>().ok()).filter(|t| !t.is_negative()),
        };
        Some(Change {
            token: item["token"].as_str()?.parse().ok()?,
            delta: item["delta"].as_str()?.parse().ok()?,
            tolerance: tolerance?,
        })
    };
    list.iter()
        .map(|item| change(item).ok_or_else(|| format!("malformed balance change {item}")))
        .collect::<Result<_, _>>()
        .map(Some)
}

/// The plugin's claims against the simulation: a plan declares the wallet's token balance
/// changes (`expected_outcome.balance_changes`), and the simulation must move exactly those
/// amounts of exactly those tokens — no undeclared outflow, no invented gain.
pub struct HallucinationDetector;

impl SafetyHook for HallucinationDetector {
    fn name(&self) -> &'static str {
        "hallucination-detector"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let Some(sim) = &found.simulation else {
            return reject(ErrorCode::Internal, "runs after the simulator; the plan was not simulated");
        };
        let list = match declared_changes(p) {
            Ok(Some(list)) => list,
            Ok(None) => {
                return reject(
                    ErrorCode::Denied,
                    format!(
                        "`{}` declares no balance_changes in its expected outcome; its effect cannot be checked",
                        p.tool.name
                    ),
                );
            }
            Err(reason) => return reject(ErrorCode::Denied, reason),
        };
        // Per token: the declared delta and how much better off the wallet may end up.
        let mut declared: BTreeMap<Address, (I256, I256)> = BTreeMap::new();
        for c in list {
            let entry = declared.entry(c.token).or_default();
            *entry = (entry.0 + c.delta, entry.1 + c.tolerance);
        }
        let mut simulated: BTreeMap<Address, I256> = BTreeMap::new();
        for (token, delta) in &sim.balance_deltas {
            match token {
                Some(t) => {
                    simulated.insert(*t, *delta);
                }
                None => {
                    return reject(
                        ErrorCode::Denied,
                        format!("the plan moves {delta} wei of the native coin"),
                    );
                }
            }
        }
        let tokens: BTreeSet<&Address> = declared.keys().chain(simulated.keys()).collect();
        let off: Vec<String> = tokens
            .into_iter()
            .filter_map(|t| {
                let (want, extra) = declared.get(t).copied().unwrap_or_default();
                let got = simulated.get(t).copied().unwrap_or_default();
                // Never worse than declared; better only by the declared tolerance.
                (got < want || got - want > extra).then(|| {
                    let allowed = if extra.is_zero() {
                        String::new()
                    } else {
                        format!(" (up to {extra} more allowed)")
                    };
                    format!("{t}: claims {want}{allowed}, simulation moves {got}")
                })
            })
            .collect();
        if !off.is_empty() {
            return reject(
                ErrorCode::Denied,
                format!("the plan's claims do not match its simulation: {}", off.join("; ")),
            );
        }
        Decision::Allow
    }
}
