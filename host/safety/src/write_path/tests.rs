//! Preview and commit with a fake planner: what runs in which order, what is audited, which
//! generation a preview plans on and a commit executes on. The chain is configured but never
//! answers (a closed port), so everything up to the simulation runs for real and the simulation
//! fails as a dead node makes it fail; what happens on a live chain is the integration tests'.

use super::*;
use crate::hooks::{Decision, Findings, Proposal};
use crate::permit::PlannedOn;
use crate::planner::{PluginRef, WriteTool};
use alloy::primitives::{Address, B256, U256};
use alloy::rpc::types::TransactionReceipt;
use bardo_core::tool::{
    CallEvents, CapabilityTier, Category, PlannedCall, RiskTier, SpriteTrigger, TickBudget, ToolDef,
    WritePlan,
};
use bardo_evm::chain::{ChainConfig, Chains};
use bardo_evm::{Evm, Wallet};
use bardo_runtime::plugin::{CallControl, CallReport, CallStats};
use std::collections::BTreeMap;

const CHAIN: u64 = 31337;
/// anvil's first account's key: only its address matters here, nothing is ever signed.
const KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

/// A planner with one write tool, `demo_do_swap` (kind `swap`), served by a component whose
/// digest is `sha`; it plans `plan` and counts the plans it was asked for.
struct FakePlanner {
    def: ToolDef,
    sha256: String,
    plan: Result<WritePlan, ToolError>,
    asked: Mutex<Vec<String>>,
}

impl FakePlanner {
    fn new(sha256: &str, plan: Result<WritePlan, ToolError>) -> Arc<Self> {
        Arc::new(Self { def: tool(), sha256: sha256.into(), plan, asked: Mutex::default() })
    }

    fn asked(&self) -> Vec<String> {
        lock(&self.asked).clone()
    }

    fn this(&self) -> WriteTool<'_> {
        WriteTool {
            def: &self.def,
            plugin: PluginRef { name: "demo", version: "1.0.0", sha256: &self.sha256 },
        }
    }
}

impl Planner for FakePlanner {
    fn write_tool(&self, kind: &str) -> Option<WriteTool<'_>> {
        (kind.replace('-', "_") == "swap").then(|| self.this())
    }

    fn write_tool_named(&self, name: &str) -> Option<WriteTool<'_>> {
        (name == self.def.name).then(|| self.this())
    }

    fn plan(&self, _: &str, params_json: &str, _: &Arc<CallControl>) -> CallReport<WritePlan> {
        lock(&self.asked).push(params_json.to_owned());
        CallReport {
            result: self.plan.clone(),
            stats: CallStats::default(),
            events: CallEvents::default(),
            schema_version: 1,
        }
    }

    fn verify(&self, _: &str, _: &str, _: u64, _: &[TransactionReceipt]) -> CallReport<serde_json::Value> {
        CallReport::refused(ToolError::new(ErrorCode::Internal, "never reached without a chain"))
    }
}

/// A planner serving no tool at all (a reload that unloaded the plugin).
struct NoTools;

impl Planner for NoTools {
    fn write_tool(&self, _: &str) -> Option<WriteTool<'_>> {
        None
    }
    fn write_tool_named(&self, _: &str) -> Option<WriteTool<'_>> {
        None
    }
    fn plan(&self, _: &str, _: &str, _: &Arc<CallControl>) -> CallReport<WritePlan> {
        CallReport::refused(ToolError::new(ErrorCode::NotFound, "no tools"))
    }
    fn verify(&self, _: &str, _: &str, _: u64, _: &[TransactionReceipt]) -> CallReport<serde_json::Value> {
        CallReport::refused(ToolError::new(ErrorCode::NotFound, "no tools"))
    }
}

fn tool() -> ToolDef {
    ToolDef {
        name: "demo_do_swap".into(),
        description: String::new(),
        category: Category::Trading,
        capability_tier: CapabilityTier::Write,
        risk_tier: RiskTier::Low,
        tick_budget: TickBudget::Fast,
        progress_steps: vec![],
        sprite_trigger: SpriteTrigger::Executing,
        prompt_snippet: String::new(),
        prompt_guidelines: vec![],
        input_schema: serde_json::json!({}),
        supported_chains: vec![CHAIN],
        action_kinds: vec!["swap".into()],
        requires: vec![],
        schema_version: 1,
    }
}

fn plan(chain_id: u64, calls: usize) -> WritePlan {
    let call = PlannedCall {
        chain_id,
        to: Address::repeat_byte(7),
        data: vec![1, 2, 3].into(),
        value: U256::ZERO,
        description: "do it".into(),
    };
    WritePlan { calls: vec![call; calls], expected_outcome: serde_json::json!({"balance_changes": []}) }
}

/// A hook that allows or rejects, and writes down what it checked and settled.
struct Recorder {
    name: &'static str,
    reject: bool,
    seen: Arc<Mutex<Vec<String>>>,
}

impl SafetyHook for Recorder {
    fn name(&self) -> &'static str {
        self.name
    }

    fn check(&self, p: &Proposal<'_>, _: &mut Findings) -> Decision {
        lock(&self.seen).push(format!("{} checked {}", self.name, p.tool.name));
        match self.reject {
            true => Decision::Reject { code: ErrorCode::LimitExceeded, reason: "no".into() },
            false => Decision::Allow,
        }
    }

    fn settle(&self, permit_id: &str, executed: bool) {
        lock(&self.seen).push(format!("{} settled {} {executed}", self.name, &permit_id[..7]));
    }

    fn reopen(&self, permit_id: &str) {
        lock(&self.seen).push(format!("{} reopened {}", self.name, &permit_id[..7]));
    }

    fn at_commit(&self) -> bool {
        true
    }
}

struct Bench {
    path: WritePath,
    services: Arc<Services>,
    seen: Arc<Mutex<Vec<String>>>,
    audit: tempfile::TempDir,
    _runtime: bardo_core::Runtime,
}

impl Bench {
    /// A write path whose hooks are `hooks` (name, rejects) over a chain that never answers.
    fn new(planner: Arc<dyn Planner>, hooks: &[(&'static str, bool)]) -> Self {
        let runtime = bardo_core::Runtime::new().expect("runtime");
        let services = Arc::new(services(&runtime));
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let hooks = hooks
            .iter()
            .map(|(name, reject)| {
                Box::new(Recorder { name, reject: *reject, seen: seen.clone() }) as Box<dyn SafetyHook>
            })
            .collect();
        let audit = tempfile::tempdir().expect("tempdir");
        let log =
            AuditLog::open(&audit.path().join("audit.jsonl"), host_key::HostKey::ephemeral()).expect("log");
        let path = WritePath::new(planner, services.clone(), hooks, log);
        Self { path, services, seen, audit, _runtime: runtime }
    }

    fn seen(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.seen))
    }

    /// The audit records' events, in order.
    fn records(&self) -> Vec<serde_json::Value> {
        // No file: nothing was ever recorded.
        let text = std::fs::read_to_string(self.audit.path().join("audit.jsonl")).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json")["event"].clone())
            .collect()
    }

    fn types(&self) -> Vec<String> {
        self.records().iter().map(|e| e["type"].as_str().unwrap_or("").to_owned()).collect()
    }

    /// A sealed permit for `demo_do_swap`, as if previewed `on` some generation.
    fn permit(&self, on: Option<PlannedOn>) -> String {
        let id = new_id();
        let permit = ActionPermit {
            permit_id: id.clone(),
            kind: "swap".into(),
            tool: "demo_do_swap".into(),
            params: serde_json::json!({"chain_id": CHAIN}),
            chain_id: CHAIN,
            sender: self.services.address(CHAIN).expect("wallet"),
            plan: plan(CHAIN, 1),
            simulation_hash: B256::repeat_byte(9),
            simulated_at: Some(1),
            expected_outcome: serde_json::json!({}),
            risk_tier: RiskTier::Low,
            created_at: SystemTime::now(),
            ttl: DEFAULT_TTL,
            audit_record: None,
            planned_on: on,
            spend_usd: None,
            balance_changes: Vec::new(),
            worst_case: Vec::new(),
            bridged: Vec::new(),
            confirmation: None,
            operator: false,
            policy_hash: None,
        };
        self.path.permits.insert(permit).expect("insert");
        id
    }

    fn planned_on(&self, generation: u64, sha256: &str) -> PlannedOn {
        PlannedOn {
            instance: self.path.instance.clone(),
            generation,
            plugin: crate::PluginId { name: "demo".into(), version: "1.0.0".into(), sha256: sha256.into() },
            profile: None,
        }
    }
}

fn services(runtime: &bardo_core::Runtime) -> Services {
    // A closed port: the chain is configured (the wallet has an address on it), never reached.
    let config = ChainConfig { retries: 0, timeout_ms: 2_000, ..ChainConfig::new("http://127.0.0.1:1") };
    let chains = Chains::new(&BTreeMap::from([(CHAIN, config)]), runtime).expect("chains");
    Services::new(Evm::new(chains, Some(Wallet::from_signer(KEY.parse().expect("key")))))
}

fn new_id() -> String {
    let mut bytes = [0u8; 16];
    rand_bytes(&mut bytes);
    format!("permit-{}", hex::encode(bytes))
}

fn params() -> serde_json::Value {
    serde_json::json!({"chain_id": CHAIN, "amount": "1"})
}

#[test]
fn an_unknown_kind_is_not_found_and_no_write_decision() {
    let planner = FakePlanner::new("aa", Ok(plan(CHAIN, 1)));
    let b = Bench::new(planner.clone(), &[("first", false)]);
    let e = b.path.preview("mint-nft", &params()).expect_err("no such kind");
    assert_eq!(e.code, ErrorCode::NotFound, "{e}");
    assert!(e.message.contains("`mint_nft`"), "{e}");
    assert!(planner.asked().is_empty(), "nothing was planned");
    assert!(b.types().is_empty(), "a typo is not a refused write: no record, no permit id");
}

#[test]
fn hooks_run_in_order_and_the_first_refusal_stops_the_chain_and_releases_the_others() {
    let planner = FakePlanner::new("aa", Ok(plan(CHAIN, 1)));
    let b = Bench::new(planner.clone(), &[("first", false), ("second", true), ("third", false)]);
    let e = b.path.preview("swap", &params()).expect_err("refused");
    assert_eq!(e.code, ErrorCode::LimitExceeded);
    assert!(e.message.starts_with("second: no"), "{e}");
    assert_eq!(planner.asked(), [params().to_string()], "one plan, with the params as given");
    let seen = b.seen();
    assert_eq!(&seen[..2], ["first checked demo_do_swap", "second checked demo_do_swap"], "{seen:?}");
    assert!(!seen.iter().any(|s| s.starts_with("third checked")), "the chain stopped: {seen:?}");
    // Every hook releases what it may have held for the refused permit.
    assert_eq!(seen.iter().filter(|s| s.ends_with("false") && s.contains("settled")).count(), 3, "{seen:?}");
    assert_eq!(b.types(), ["ToolCall", "HookDecision", "HookDecision", "ActionBlocked"]);
    let records = b.records();
    assert_eq!(records[0]["generation"], 1, "the plan names its generation: {:?}", records[0]);
    assert_eq!((records[1]["hook"].as_str(), records[1]["allowed"].as_bool()), (Some("first"), Some(true)));
    assert_eq!((records[2]["hook"].as_str(), records[2]["allowed"].as_bool()), (Some("second"), Some(false)));
}

#[test]
fn a_plan_too_large_or_for_another_chain_is_denied_before_any_hook() {
    for (plan, why) in
        [(plan(CHAIN, MAX_PLAN_CALLS + 1), "calls"), (plan(1, 1), "a call for chain 1, not 31337")]
    {
        let b = Bench::new(FakePlanner::new("aa", Ok(plan)), &[("first", false)]);
        let e = b.path.preview("swap", &params()).expect_err("denied");
        assert_eq!(e.code, ErrorCode::Denied);
        assert!(e.message.contains(why), "{e}");
        assert!(!b.seen().iter().any(|s| s.contains("checked")), "no hook ran");
        assert_eq!(b.types(), ["ToolCall", "ActionBlocked"]);
    }
}

#[test]
fn a_plugin_that_cannot_plan_issues_nothing_and_says_why() {
    let refusal = ToolError::new(ErrorCode::InvalidParams, "`amount` must be above 0");
    let b = Bench::new(FakePlanner::new("aa", Err(refusal)), &[("first", false)]);
    let e = b.path.preview("swap", &params()).expect_err("refused");
    assert_eq!((e.code, e.message.as_str()), (ErrorCode::InvalidParams, "`amount` must be above 0"));
    assert!(b.types().is_empty(), "refused for its input, before a plan: no record");
    // A plugin that fails otherwise (its node, its own bug) is a blocked write, recorded.
    let failed = ToolError::new(ErrorCode::Rpc, "the node is down");
    let b = Bench::new(FakePlanner::new("aa", Err(failed)), &[("first", false)]);
    assert_eq!(b.path.preview("swap", &params()).expect_err("refused").code, ErrorCode::Rpc);
    assert_eq!(b.types(), ["ToolCall", "ActionBlocked"]);
    assert_eq!(b.records()[0]["ok"], false);
}

#[test]
fn the_simulation_runs_after_the_hooks_on_the_generations_chain() {
    let b = Bench::new(FakePlanner::new("aa", Ok(plan(CHAIN, 1))), &[("first", false)]);
    let e = b.path.preview("swap", &params()).expect_err("the node never answers");
    assert!(e.message.starts_with("revm-simulator:"), "the simulator refused it: {e}");
    assert_eq!(b.types(), ["ToolCall", "HookDecision", "HookDecision", "ActionBlocked"]);
    assert!(b.path.open_permits().expect("permits").is_empty(), "no permit");
}

#[test]
fn previews_plan_on_the_generation_installed_last() {
    let (a, z) = (FakePlanner::new("aa", Ok(plan(1, 1))), FakePlanner::new("bb", Ok(plan(1, 1))));
    let b = Bench::new(a.clone(), &[]);
    let second = b.path.reload(z.clone(), b.services.clone()).expect("reload");
    assert_eq!(second.number(), 2);
    assert!(Arc::ptr_eq(second.hooks(), &b.path.generation().hooks().clone()), "same services, same hooks");
    let _ = b.path.preview("swap", &params()).expect_err("chain 1 is not 31337");
    assert!(a.asked().is_empty(), "the replaced generation plans nothing");
    assert_eq!(z.asked().len(), 1);
    assert_eq!(b.types(), ["Reloaded", "ToolCall", "ActionBlocked"]);
    assert_eq!(b.records()[1]["generation"], 2);
}

#[test]
fn new_services_need_new_hooks() {
    let b = Bench::new(FakePlanner::new("aa", Ok(plan(CHAIN, 1))), &[("first", false)]);
    let runtime = bardo_core::Runtime::new().expect("runtime");
    let other = Arc::new(services(&runtime));
    let e = b.path.reload(FakePlanner::new("aa", Ok(plan(CHAIN, 1))), other.clone()).expect_err("no factory");
    assert!(e.message.contains("cannot move to new ones"), "{e}");
    assert_eq!(b.path.generation().number(), 1, "a refused reload changes nothing");
    let built = Arc::new(Mutex::new(0));
    let count = built.clone();
    let Bench { path, audit: _kept, .. } = Bench::new(FakePlanner::new("aa", Ok(plan(CHAIN, 1))), &[]);
    let path = path.with_hook_factory(Arc::new(move |services: &Arc<Services>| {
        *lock(&count) += 1;
        Ok(Hooks::new(services, Vec::new()))
    }));
    let next = path.reload(FakePlanner::new("aa", Ok(plan(CHAIN, 1))), other.clone()).expect("reload");
    assert_eq!(*lock(&built), 1, "hooks built for the new services");
    assert!(Arc::ptr_eq(next.services(), &other));
    assert!(Arc::ptr_eq(&next.hooks().simulator.services, &other), "the simulator simulates on them");
}

#[test]
fn a_commit_runs_on_the_generation_that_planned_it() {
    let (a, z) = (FakePlanner::new("aa", Ok(plan(CHAIN, 1))), FakePlanner::new("bb", Ok(plan(CHAIN, 1))));
    let b = Bench::new(a, &[("first", false)]);
    let id = b.permit(Some(b.planned_on(1, "aa")));
    b.path.reload(z, b.services.clone()).expect("reload");
    let e = b.path.commit(&id).expect_err("the node never answers");
    // Past the check that the planning component executes it: it re-simulated, on generation 1.
    assert_eq!(e.code, ErrorCode::Rpc, "{e}");
    assert!(e.message.starts_with("cannot re-simulate"), "{e}");
    let records = b.records();
    let consumed = records.iter().find(|r| r["type"] == "PermitConsumed").expect("consumed");
    assert_eq!(consumed["generation"], 1, "{consumed}");
    // Nothing was sent: the permit is open again, its spend held for it again.
    assert!(e.message.contains("open again"), "{e}");
    assert!(b.seen().iter().any(|s| s == "first reopened permit-"), "{:?}", b.seen());
    assert_eq!(b.types()[b.types().len() - 2..], ["PermitRefused", "PermitReopened"]);
    assert_eq!(b.path.commit(&id).expect_err("the retry runs").code, ErrorCode::Rpc);
}

#[test]
fn a_commit_elsewhere_needs_the_component_that_planned_it() {
    let b = Bench::new(FakePlanner::new("bb", Ok(plan(CHAIN, 1))), &[("first", false)]);
    // Planned by another process, with another build of the plugin.
    let on = PlannedOn { instance: "elsewhere".into(), ..b.planned_on(1, "aa") };
    let id = b.permit(Some(on));
    let e = b.path.commit(&id).expect_err("another component");
    assert_eq!(e.code, ErrorCode::Denied);
    assert!(e.message.contains("was planned by demo 1.0.0 (sha256 aa…)"), "{e}");
    assert!(e.message.contains("now served by demo 1.0.0 (sha256 bb…); preview again"), "{e}");
    assert_eq!(b.types(), ["PermitConsumed", "PermitRefused", "PermitReopened"]);
    // The same component in another process executes it (here: up to the dead node).
    let same = PlannedOn { instance: "elsewhere".into(), ..b.planned_on(1, "bb") };
    let id = b.permit(Some(same));
    assert_eq!(b.path.commit(&id).expect_err("dead node").code, ErrorCode::Rpc);
}

#[test]
fn a_commit_stops_when_the_operator_unloaded_its_tool() {
    let b = Bench::new(FakePlanner::new("aa", Ok(plan(CHAIN, 1))), &[("first", false)]);
    let id = b.permit(Some(b.planned_on(1, "aa")));
    b.path.reload(Arc::new(NoTools), b.services.clone()).expect("reload");
    let e = b.path.commit(&id).expect_err("unloaded");
    assert_eq!(e.code, ErrorCode::Denied);
    assert!(e.message.contains("is no longer loaded"), "{e}");
}

#[test]
fn a_commit_rechecks_the_policy_hooks_before_anything_else() {
    let b = Bench::new(FakePlanner::new("aa", Ok(plan(CHAIN, 1))), &[("first", false), ("second", true)]);
    let id = b.permit(Some(b.planned_on(1, "aa")));
    let e = b.path.commit(&id).expect_err("second refuses");
    assert_eq!(e.code, ErrorCode::LimitExceeded);
    assert!(e.message.starts_with("second (at commit): no"), "{e}");
    let seen = b.seen();
    // Spent when taken, checked, then given back by the refusal: held for the open permit again.
    assert_eq!(seen[..2], ["first settled permit- true", "second settled permit- true"], "{seen:?}");
    assert_eq!(seen[2..4], ["first checked demo_do_swap", "second checked demo_do_swap"], "{seen:?}");
    assert_eq!(seen[4..], ["first reopened permit-", "second reopened permit-"], "{seen:?}");
}

#[test]
fn a_halt_refuses_previews_and_commits_until_the_operator_resumes() {
    let planner = FakePlanner::new("aa", Ok(plan(CHAIN, 1)));
    let b = Bench::new(planner.clone(), &[("first", false)]);
    let id = b.permit(Some(b.planned_on(1, "aa")));
    assert_eq!(b.path.halt("test").expect("halt"), std::slice::from_ref(&id), "the open permit is revoked");
    assert_eq!(b.path.phase(), Phase::Terminal);
    let e = b.path.preview("swap", &params()).expect_err("halted");
    assert!(e.message.contains("halted"), "{e}");
    assert!(planner.asked().is_empty(), "nothing planned while halted");
    let e = b.path.commit(&id).expect_err("halted");
    assert!(e.message.contains("halted") && e.message.contains("bardo resume"), "{e}");
    assert!(b.path.resume().expect("resume"));
    assert_eq!(b.path.phase(), Phase::Thriving);
    let e = b.path.commit(&id).expect_err("revoked");
    assert!(e.message.contains("revoked by an emergency halt"), "{e}");
}
