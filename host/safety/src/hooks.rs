//! The safety hooks a write plan passes, in order, before it becomes a permit. Each is small and
//! says why it refuses.

use super::declared::Declared;
use alloy::primitives::{Address, B256, I256, U256};
use alloy::sol_types::SolCall;
use bardo_core::action_class::{ActionClass, Asset, Changes, Move, classify};
use bardo_core::error::ErrorCode;
use bardo_core::scope::Role;
use bardo_core::tool::{Phase, ToolDef, WritePlan};
use bardo_evm::simulate::{Probe, SimCall, Simulation};
use bardo_runtime::Services;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

alloy::sol! {
    function approve(address spender, uint256 amount) external returns (bool);
}

/// A plan that declares nothing.
static NOTHING_DECLARED: std::sync::LazyLock<Declared> = std::sync::LazyLock::new(Declared::default);

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
    /// Its expected outcome's declaration, parsed once for every hook (none: it declares no
    /// `balance_changes`; an error names the malformed entry).
    pub declared: &'a Result<Option<Declared>, String>,
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
    /// What the hooks after the simulation asked it to read before and after the calls.
    pub probes: Vec<Probe>,
}

impl Findings {
    /// The plan's simulation, for a hook after the simulator; a refusal (`internal`) when the
    /// chain put the hook before it.
    pub fn simulated(&self) -> Result<&Simulation, Decision> {
        self.simulation.as_ref().ok_or_else(|| {
            reject(ErrorCode::Internal, "runs after the simulator; the plan was not simulated")
        })
    }
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
    /// Whether commit runs this check again before it re-simulates: true for checks that are
    /// pure functions of the plan and the configuration (phase, allowlist, scope, approvals),
    /// so a permit written into the shared file by someone else still meets today's policy.
    fn at_commit(&self) -> bool {
        false
    }
    /// Whether commit runs this check again on its re-simulation (a check after the simulator
    /// that only reads it, such as the health floor: prices can move while the logs do not).
    fn on_resimulation(&self) -> bool {
        false
    }
    /// Views the simulator should answer before and after the calls for this check.
    fn probes(&self, p: &Proposal<'_>) -> Vec<Probe> {
        let _ = p;
        Vec::new()
    }
}

/// At most `per_minute` previews in any 60 s window: a runaway agent loop stops here. Its
/// clones count in one window, so a reload that builds new hooks does not reset it.
#[derive(Clone)]
pub struct RateLimiter {
    /// Most previews in any 60 s.
    pub per_minute: usize,
    recent: Arc<std::sync::Mutex<std::collections::VecDeque<Instant>>>,
}

impl RateLimiter {
    /// A limiter allowing `per_minute` previews in any 60 s.
    pub fn new(per_minute: usize) -> Self {
        Self { per_minute, recent: Arc::default() }
    }
}

impl SafetyHook for RateLimiter {
    fn name(&self) -> &'static str {
        "rate-limiter"
    }

    fn check(&self, _: &Proposal<'_>, _: &mut Findings) -> Decision {
        let now = Instant::now();
        let mut recent = bardo_core::sync::lock(&self.recent);
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

/// The operator's policy. Phase gating by action class (`bardo_core::action_class`): each write
/// is classed by its kind and its declared balance changes (typed and compared with the wallet's
/// holdings by the host's own reads), and the phase's row of the specification's table decides.
/// Approved assets: on a chain with a list, a plan may only acquire listed tokens (read from its
/// declared balance changes, which the hallucination detector later holds it to).
#[derive(Debug, Clone, Default)]
pub struct PolicyCage {
    /// Tokens a plan may acquire, per chain; a chain not listed is not restricted.
    pub approved_assets: BTreeMap<u64, BTreeSet<Address>>,
    /// The most any single token holding may be worth after a write (`[safety] max_position_usd`).
    pub max_position: Option<MaxPosition>,
    /// What types tokens and reads the wallet's holdings for the classes; without it every
    /// token is `Liquid` and no holding is known (stricter, never looser).
    pub valuer: Option<super::valuation::Valuer>,
}

impl PolicyCage {
    /// The plan's declared changes as the classifier reads them.
    fn changes(&self, p: &Proposal<'_>, declared: &Declared) -> Changes {
        let moves = declared
            .balances
            .iter()
            .map(|(asset, (delta, extra))| {
                let most = delta.saturating_add(*extra);
                let (asset, held) = match (asset, &self.valuer) {
                    (Some(token), Some(v)) => (
                        v.asset(p.chain_id, *token),
                        (most.is_positive() || most.is_negative())
                            .then(|| v.balance(p.chain_id, *token, p.sender).ok())
                            .flatten(),
                    ),
                    // The native coin: a position in it, always held (it pays for gas).
                    _ => (Asset::Liquid, None),
                };
                Move {
                    asset,
                    may_rise: most.is_positive(),
                    may_fall: delta.is_negative(),
                    surely_falls: most.is_negative(),
                    was_empty: held.is_some_and(|h| h.is_zero()),
                    ends_empty: held.is_some_and(|h| {
                        I256::try_from(h).is_ok_and(|h| h.saturating_add(most) <= I256::ZERO)
                    }),
                }
            })
            .collect();
        Changes {
            moves,
            nft_gained: declared.nfts.iter().any(|n| n.gained),
            nft_lost: declared.nfts.iter().any(|n| !n.gained),
        }
    }

    /// The class of the proposal's write.
    pub fn class(&self, p: &Proposal<'_>, declared: &Declared) -> ActionClass {
        classify(p.kind, &self.changes(p, declared))
    }
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
    /// host cannot price (or whose price sources disagree) is refused, never waved through.
    fn check(&self, p: &Proposal<'_>, declared: &Declared) -> Decision {
        use super::valuation::{MicroUsd, usd};
        let acquired: Vec<(Address, I256)> = declared.acquired().collect();
        let cap = MicroUsd::from(self.usd) * 1_000_000;
        for &(token, delta) in &acquired {
            let held = match self.valuer.balance(p.chain_id, token, p.sender) {
                Ok(b) => b,
                Err(reason) => return reject(ErrorCode::Denied, reason),
            };
            let after = held.saturating_add(delta.unsigned_abs());
            let value = match self.valuer.usd(p.chain_id, token, after) {
                Ok(v) => v,
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

impl SafetyHook for PolicyCage {
    fn name(&self) -> &'static str {
        "policy-cage"
    }

    fn check(&self, p: &Proposal<'_>, _: &mut Findings) -> Decision {
        let declared = match p.declared {
            Ok(declared) => declared.as_ref().unwrap_or(&NOTHING_DECLARED),
            Err(reason) => return reject(ErrorCode::Denied, reason.clone()),
        };
        let class = self.class(p, declared);
        if !class.allowed_in(p.phase) {
            let allowed: Vec<&str> =
                ActionClass::ALL.iter().filter(|c| c.allowed_in(p.phase)).map(|c| c.name()).collect();
            return reject(
                ErrorCode::Denied,
                format!(
                    "`{}` is classed {} by its kind and balance changes, which the {:?} phase does not allow (it allows {})",
                    p.kind,
                    class.name(),
                    p.phase,
                    allowed.join(", ")
                ),
            );
        }
        if let Some(approved) = self.approved_assets.get(&p.chain_id) {
            for (token, _) in declared.acquired() {
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
            Some(cap) if class > ActionClass::DecreasePosition => cap.check(p, declared),
            _ => Decision::Allow,
        }
    }

    fn at_commit(&self) -> bool {
        true
    }
}

/// No Morpho market trusted.
static NO_MARKETS: BTreeSet<B256> = BTreeSet::new();

/// Contracts a plan may call, per chain, each with its role: every call must go to an
/// allowlisted contract and stay within its role's scope (functions, and parameters that must be
/// the wallet or allowlisted — see [`super::scope`]); a Morpho call's market must be trusted.
pub struct AllowlistGuard {
    /// Contracts a plan may call, approve or pay, and their roles, per chain.
    pub allowed: BTreeMap<u64, BTreeMap<Address, Role>>,
    /// The Morpho Blue markets (by id) a plan may use, per chain.
    pub morpho_markets: BTreeMap<u64, BTreeSet<B256>>,
}

impl AllowlistGuard {
    /// A guard allowing `allowed` and no Morpho market.
    pub fn new(allowed: BTreeMap<u64, BTreeMap<Address, Role>>) -> Self {
        Self { allowed, morpho_markets: BTreeMap::new() }
    }

    /// This guard, allowing the Morpho markets `markets` too.
    pub fn with_morpho_markets(self, markets: BTreeMap<u64, BTreeSet<B256>>) -> Self {
        Self { morpho_markets: markets, ..self }
    }
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
        let listed = |a: Address| allowed.contains_key(&a);
        let roles = |a: Address| allowed.get(&a).copied();
        for (i, call) in p.plan.calls.iter().enumerate() {
            // The wallet's own settings — a Safe's owners, threshold, modules, guard, fallback
            // handler — are the operator's: a call from the Safe to itself could hand a plugin
            // a way around the write path, whatever the allowlist says.
            if call.to == p.sender {
                return reject(
                    ErrorCode::Denied,
                    format!(
                        "call {} is to the wallet {} itself: a wallet's own settings (a Safe's owners, modules, guard) are changed by its owners, never through a plan",
                        i + 1,
                        call.to
                    ),
                );
            }
            let Some(role) = allowed.get(&call.to) else {
                return reject(
                    ErrorCode::Denied,
                    format!("{} is not on the allowlist of chain {}", call.to, p.chain_id),
                );
            };
            let markets = self.morpho_markets.get(&p.chain_id).unwrap_or(&NO_MARKETS);
            if let Err(reason) = super::scope::check(*role, &call.data, call.value, p.sender, &roles, markets)
            {
                return reject(
                    ErrorCode::Denied,
                    format!("call {} to {} is out of scope: {reason}", i + 1, call.to),
                );
            }
        }
        // The authorities a plan may leave behind go to allowlisted spenders, bounded.
        let declared = match p.declared {
            Ok(declared) => declared.as_ref().unwrap_or(&NOTHING_DECLARED),
            Err(reason) => return reject(ErrorCode::Denied, reason.clone()),
        };
        for a in &declared.authorities {
            if !listed(a.spender) {
                return reject(
                    ErrorCode::Denied,
                    format!(
                        "authority spender {} is not on the allowlist of chain {}",
                        a.spender, p.chain_id
                    ),
                );
            }
            if a.amount >= UNLIMITED {
                return reject(
                    ErrorCode::Denied,
                    format!("the plan declares an unlimited authority of {} to {}", a.token, a.spender),
                );
            }
        }
        Decision::Allow
    }

    fn at_commit(&self) -> bool {
        true
    }
}

/// Approvals are bounded (never "unlimited") and only to a contract the plan itself calls
/// (except a revocation, and the approval an `approve` plan is for).
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
            // A revocation is always welcome; an `approve` plan exists to approve (its spender
            // is allowlisted and its amount declared, which the other hooks hold it to).
            if !targets.contains(&a.spender) && !a.amount.is_zero() && p.kind != "approve" {
                return reject(
                    ErrorCode::Denied,
                    format!("the plan approves {} but never calls it", a.spender),
                );
            }
        }
        Decision::Allow
    }

    fn at_commit(&self) -> bool {
        true
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
    /// Simulate `plan` from `sender`, at the next block's timestamp or at `at`, answering
    /// `probes` before and after it.
    pub fn run(
        &self,
        chain_id: u64,
        sender: Address,
        plan: &WritePlan,
        probes: &[Probe],
        at: Option<u64>,
    ) -> Result<Simulation, bardo_evm::chain::ChainError> {
        let calls: Vec<SimCall> = plan.calls.iter().map(SimCall::from).collect();
        // What will be sent: the calls, or through a Safe one transaction of them all.
        self.services.evm.simulate_sent(chain_id, sender, &calls, probes, at, Instant::now() + self.budget)
    }
}

impl SafetyHook for RevmSimulator {
    fn name(&self) -> &'static str {
        "revm-simulator"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let sim = match self.run(p.chain_id, p.sender, p.plan, &found.probes, None) {
            Ok(sim) => sim,
            Err(e) => return reject(ErrorCode::Rpc, format!("cannot simulate: {e}")),
        };
        if let Some((i, failed)) = sim.outcomes.iter().enumerate().find(|(_, o)| !o.success) {
            let reason = alloy::sol_types::decode_revert_reason(&failed.output)
                .unwrap_or_else(|| format!("0x{}", hex::encode(&failed.output)));
            if let Some(safe) = self.services.evm.safe_of(p.sender) {
                let why = bardo_evm::safe::explain(&reason).map(|w| format!(" ({w})")).unwrap_or_default();
                return reject(
                    ErrorCode::Reverted,
                    format!(
                        "the Safe transaction of {} calls (Safe {}) reverts in simulation: {reason}{why}",
                        p.plan.calls.len(),
                        safe.safe
                    ),
                );
            }
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
/// wallet's derived change set. Raw storage diffs are left out on purpose: they include block
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
    // The derived change set, canonically: sorted, serialized the same way every time.
    h.update(serde_json::to_vec(&sim.changes).unwrap_or_default());
    B256::from_slice(&h.finalize())
}

/// The plugin's claims against the simulation: the wallet's whole change set, derived by the
/// host (balances of every touched contract, the native coin, allowances, operators, NFTs), must
/// be what the plan declares (see [`super::declared`]) — no undeclared outflow or authority, no
/// invented gain.
pub struct HallucinationDetector;

impl SafetyHook for HallucinationDetector {
    fn name(&self) -> &'static str {
        "hallucination-detector"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let sim = match found.simulated() {
            Ok(sim) => sim,
            Err(refused) => return refused,
        };
        let declared = match p.declared {
            Ok(Some(declared)) => declared,
            Ok(None) => {
                return reject(
                    ErrorCode::Denied,
                    format!(
                        "`{}` declares no balance_changes in its expected outcome; its effect cannot be checked",
                        p.tool.name
                    ),
                );
            }
            Err(reason) => return reject(ErrorCode::Denied, reason.clone()),
        };
        let off = declared.mismatches(&sim.changes);
        if !off.is_empty() {
            return reject(
                ErrorCode::Denied,
                format!("the plan's claims do not match its simulation: {}", off.join("; ")),
            );
        }
        Decision::Allow
    }
}

#[cfg(test)]
mod tests {
    //! Each hook as a pure function of a proposal and its findings (no chain, no plugin).
    use super::*;
    use alloy::primitives::{Bytes, address};
    use bardo_core::tool::{CapabilityTier, Category, PlannedCall, RiskTier, SpriteTrigger, TickBudget};
    use bardo_evm::changes::{Change, ChangeSet};
    use bardo_evm::simulate::CallOutcome;
    use serde_json::json;

    const WALLET: Address = address!("0x00000000000000000000000000000000000000aa");
    const TOKEN: Address = address!("0x00000000000000000000000000000000000000c1");
    const ROUTER: Address = address!("0x00000000000000000000000000000000000000d1");
    const STRANGER: Address = address!("0x00000000000000000000000000000000000000e1");

    fn tool() -> ToolDef {
        ToolDef {
            name: "test_write".into(),
            description: String::new(),
            category: Category::Testnet,
            capability_tier: CapabilityTier::Write,
            risk_tier: RiskTier::Low,
            tick_budget: TickBudget::Fast,
            progress_steps: Vec::new(),
            sprite_trigger: SpriteTrigger::Executing,
            prompt_snippet: String::new(),
            prompt_guidelines: Vec::new(),
            input_schema: json!({}),
            supported_chains: Vec::new(),
            action_kinds: vec!["swap".into()],
            requires: Vec::new(),
            schema_version: 1,
        }
    }

    fn call(to: Address, data: Vec<u8>) -> PlannedCall {
        PlannedCall {
            chain_id: 1,
            to,
            data: Bytes::from(data),
            value: U256::ZERO,
            description: String::new(),
        }
    }

    fn approve(spender: Address, amount: U256) -> PlannedCall {
        call(TOKEN, approveCall { spender, amount }.abi_encode())
    }

    /// Run `hook` on a plan of `calls` declaring `expected`, in `phase`, as action `kind`.
    fn decide(
        hook: &dyn SafetyHook,
        kind: &str,
        phase: Phase,
        calls: Vec<PlannedCall>,
        expected: serde_json::Value,
        found: &mut Findings,
    ) -> Decision {
        let tool = tool();
        let plan = WritePlan { calls, expected_outcome: expected };
        let declared = Declared::parse(&plan.expected_outcome);
        let p = Proposal {
            declared: &declared,
            permit_id: "permit-test",
            kind,
            tool: &tool,
            chain_id: 1,
            sender: WALLET,
            plan: &plan,
            phase,
        };
        hook.check(&p, found)
    }

    fn code(d: &Decision) -> Option<ErrorCode> {
        match d {
            Decision::Allow => None,
            Decision::Reject { code, .. } => Some(*code),
        }
    }

    fn reason(d: &Decision) -> &str {
        match d {
            Decision::Allow => "",
            Decision::Reject { reason, .. } => reason,
        }
    }

    #[test]
    fn the_policy_cage_gates_classes_by_phase_and_acquisitions_by_list() {
        // No valuer: every token is `Liquid` and no holding is known (the devnet tests cover the
        // typed classes); the table itself is tested cell by cell in bardo_core::action_class.
        let cage = PolicyCage::default();
        let d =
            |kind, phase, expected| decide(&cage, kind, phase, vec![], expected, &mut Findings::default());
        let nothing = || json!({});
        let token_for_token = || {
            json!({"balance_changes": [
                {"token": TOKEN.to_string(), "delta": "-5"}, {"token": ROUTER.to_string(), "delta": "7"}
            ]})
        };
        assert_eq!(d("swap", Phase::Cautious, nothing()), Decision::Allow);
        let supply = d("supply", Phase::Defensive, nothing());
        assert!(reason(&supply).contains("`supply` is classed increase-position"), "{supply:?}");
        assert!(reason(&supply).contains("Defensive phase does not allow"), "{supply:?}");
        assert_eq!(
            code(&d("swap", Phase::Defensive, nothing())),
            Some(ErrorCode::Denied),
            "declares nothing: new"
        );
        assert_eq!(d("swap", Phase::Defensive, token_for_token()), Decision::Allow, "a rebalance");
        assert_eq!(code(&d("swap", Phase::Survival, token_for_token())), Some(ErrorCode::Denied));
        assert_eq!(d("repay", Phase::Survival, nothing()), Decision::Allow, "reduces exposure");
        assert_eq!(d("revoke", Phase::Terminal, nothing()), Decision::Allow, "close-position: every phase");
        assert_eq!(code(&d("unwrap", Phase::Terminal, token_for_token())), Some(ErrorCode::Denied));
        // A "repay" whose changes buy a token is not a reduction.
        let buys_with =
            json!({"balance_changes": [{"token": TOKEN.to_string(), "delta": "-5", "tolerance": "9"}]});
        assert_eq!(code(&d("repay", Phase::Survival, buys_with)), Some(ErrorCode::Denied));
        let listed = PolicyCage {
            approved_assets: BTreeMap::from([(1, BTreeSet::from([TOKEN]))]),
            max_position: None,
            valuer: None,
        };
        let buys = |token: Address| json!({"balance_changes": [{"token": token.to_string(), "delta": "5"}]});
        let mut found = Findings::default();
        assert_eq!(
            decide(&listed, "swap", Phase::Thriving, vec![], buys(TOKEN), &mut found),
            Decision::Allow
        );
        let other = decide(&listed, "swap", Phase::Thriving, vec![], buys(ROUTER), &mut found);
        assert!(reason(&other).contains("not an approved asset"), "{other:?}");
        // A loss whose tolerance reaches above zero may be a gain: it must be an approved asset.
        let hidden =
            json!({"balance_changes": [{"token": ROUTER.to_string(), "delta": "-1", "tolerance": "3"}]});
        let hidden = decide(&listed, "swap", Phase::Thriving, vec![], hidden, &mut found);
        assert!(reason(&hidden).contains("not an approved asset"), "{hidden:?}");
    }

    #[test]
    fn the_allowlist_guard_scopes_calls_and_authorities() {
        let roles = BTreeMap::from([(TOKEN, Role::Erc20), (ROUTER, Role::UniswapV3SwapRouter)]);
        let guard = AllowlistGuard::new(BTreeMap::from([(1, roles)]));
        let mut found = Findings::default();
        let mut d = |calls, expected| decide(&guard, "swap", Phase::Thriving, calls, expected, &mut found);
        assert_eq!(d(vec![approve(ROUTER, U256::from(5))], json!({})), Decision::Allow);
        assert!(reason(&d(vec![approve(STRANGER, U256::from(5))], json!({}))).contains("not allowlisted"));
        assert!(reason(&d(vec![call(STRANGER, vec![])], json!({}))).contains("not on the allowlist"));
        assert!(
            reason(&d(vec![call(TOKEN, vec![0xa9, 0x05, 0x9c, 0xbb])], json!({}))).contains("out of scope")
        );
        let grant = |spender: Address, amount: &str| json!({"balance_changes": [], "authorities": [{"token": TOKEN.to_string(), "spender": spender.to_string(), "amount": amount}]});
        assert_eq!(d(vec![], grant(ROUTER, "10")), Decision::Allow);
        assert!(reason(&d(vec![], grant(STRANGER, "10"))).contains("not on the allowlist"));
        assert!(reason(&d(vec![], grant(ROUTER, &U256::MAX.to_string()))).contains("unlimited"));
        let unknown_chain = AllowlistGuard::new(BTreeMap::new());
        let none =
            decide(&unknown_chain, "swap", Phase::Thriving, vec![], json!({}), &mut Findings::default());
        assert!(reason(&none).contains("no allowlist for chain 1"));
    }

    #[test]
    fn the_approval_guard_refuses_unlimited_and_unused_approvals() {
        let mut found = Findings::default();
        let mut d = |calls| decide(&ApprovalGuard, "swap", Phase::Thriving, calls, json!({}), &mut found);
        let used = |amount| vec![approve(ROUTER, amount), call(ROUTER, vec![])];
        assert_eq!(d(used(U256::from(10))), Decision::Allow);
        assert!(reason(&d(used(UNLIMITED))).contains("unlimited"), "2^128 is unlimited in disguise");
        assert!(reason(&d(vec![approve(ROUTER, U256::from(10))])).contains("never calls it"));
    }

    #[test]
    fn the_rate_limiter_counts_previews_in_a_minute() {
        let limiter = RateLimiter::new(2);
        let d = || decide(&limiter, "swap", Phase::Thriving, vec![], json!({}), &mut Findings::default());
        assert_eq!(d(), Decision::Allow);
        assert_eq!(d(), Decision::Allow);
        assert_eq!(code(&d()), Some(ErrorCode::LimitExceeded));
    }

    fn simulated(changes: Vec<Change>) -> Findings {
        let outcome = CallOutcome { success: true, gas_used: 1, output: Bytes::new(), logs: Vec::new() };
        let simulation = Simulation {
            block_number: 1,
            timestamp: 1,
            outcomes: vec![outcome],
            changes: ChangeSet { changes },
            native: Vec::new(),
            probes: Vec::new(),
        };
        Findings { simulation: Some(simulation), probes: Vec::new() }
    }

    #[test]
    fn the_hallucination_detector_holds_the_plan_to_the_derived_change_set() {
        let i = |v: i64| I256::try_from(v).expect("i256");
        let spend = json!({"balance_changes": [{"token": TOKEN.to_string(), "delta": "-5"}]});
        let d = |expected: serde_json::Value, changes| {
            decide(&HallucinationDetector, "swap", Phase::Thriving, vec![], expected, &mut simulated(changes))
        };
        assert_eq!(
            d(spend.clone(), vec![Change::Balance { asset: Some(TOKEN), delta: i(-5) }]),
            Decision::Allow
        );
        let more = d(spend.clone(), vec![Change::Balance { asset: Some(TOKEN), delta: i(-6) }]);
        assert!(reason(&more).contains("declared -5, moves -6"), "{more:?}");
        let grant =
            Change::Allowance { token: TOKEN, spender: STRANGER, before: U256::ZERO, after: U256::from(1) };
        let hidden = d(spend.clone(), vec![Change::Balance { asset: Some(TOKEN), delta: i(-5) }, grant]);
        assert!(reason(&hidden).contains("undeclared authority"), "{hidden:?}");
        assert!(reason(&d(json!({}), vec![])).contains("declares no balance_changes"));
        let unsimulated =
            decide(&HallucinationDetector, "swap", Phase::Thriving, vec![], spend, &mut Findings::default());
        assert_eq!(code(&unsimulated), Some(ErrorCode::Internal));
    }
}
