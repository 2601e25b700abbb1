//! One generation per reload, on the devnet: two anvils started from the same snapshot stand for
//! the chain before and after a reload that changed `[chains]`. A preview plans, simulates and
//! signs on the generation current when it starts; a permit commits on the generation that
//! planned it, even when a reload lands between its preview and its commit or in the middle of
//! its broadcast; and the audit records name the generation of each step.

use alloy::primitives::U256;
use alloy::providers::{Provider, ProviderBuilder};
use bardo_core::fabric::{Fabric, GolemEvent};
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_runtime::{Host, Services};
use bardo_safety::WritePath;
use bardo_safety::audit_log::AuditLog;
use bardo_safety::generation::{HookFactory, Hooks};
use bardo_safety::hooks::{AllowlistGuard, ApprovalGuard, PolicyCage, SafetyHook};
use bardo_safety::host_key::HostKey;
use bardo_safety::valuation::Valuer;
use bardo_test_artifacts::UNISWAP;
use bardo_test_support::writes::{guards_on, pricing};
use bardo_test_support::{balance_of, devnet_host, runtime, snapshot};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

struct Env {
    a: Anvil,
    b: Anvil,
    d: Deployments,
    path: Arc<WritePath>,
    fabric: Arc<Fabric>,
    audit: tempfile::TempDir,
}

/// A host on `node`'s chain with the Uniswap plugin and the dev wallet.
fn host_on(node: &Anvil, d: &Deployments) -> Arc<Host> {
    Arc::new(devnet_host(&node.url(), d.uniswap_settings(), true, &[UNISWAP]))
}

/// The write path's hooks over `services`, as `bardo` builds them for the devnet: the policy
/// cage, the allowlist, the approval guard; the value guard on prices read from those chains.
fn hooks(d: &Deployments) -> HookFactory {
    let d = d.clone();
    Arc::new(move |services: &Arc<Services>| {
        let valuer = Valuer::new(services, pricing(&d));
        let before: Vec<Box<dyn SafetyHook>> = vec![
            Box::new(PolicyCage { valuer: Some(valuer.clone()), ..PolicyCage::default() }),
            Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, d.write_targets())]))),
            Box::new(ApprovalGuard),
        ];
        let after = guards_on(services, &d);
        Ok(Hooks { after, valuer: Some(valuer), ..Hooks::new(services, before) })
    })
}

fn env() -> Env {
    let s = snapshot();
    let spawn = || s.spawn(bardo_test_support::host_runtime(), &Anvil::binary(&bardo_test_support::root()));
    let (a, b) = (spawn().expect("anvil a"), spawn().expect("anvil b"));
    let d = s.deployments.clone();
    let host = host_on(&a, &d);
    let factory = hooks(&d);
    let first = factory(host.services()).expect("hooks");
    let audit = tempfile::tempdir().expect("tempdir");
    let log = AuditLog::open(&audit.path().join("audit.jsonl"), HostKey::ephemeral()).expect("audit log");
    let fabric = Arc::new(Fabric::new());
    let path = WritePath::over(host.clone(), host.services().clone(), first, log)
        .with_hook_factory(factory)
        .with_fabric(fabric.clone());
    Env { a, b, d, path: Arc::new(path), fabric, audit }
}

fn swap() -> Value {
    json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1000"})
}

impl Env {
    fn usdc(&self, node: &Anvil) -> U256 {
        balance_of(node, self.d.tokens["USDC"].address, self.d.deployer)
    }

    /// Install a generation planning on node `b`'s chain (a reload that changed `[chains]`).
    fn reload_to_b(&self) -> u64 {
        let host = host_on(&self.b, &self.d);
        let services = host.services().clone();
        self.path.reload(host, services).expect("reload").number()
    }

    /// The audit records' events, in order.
    fn records(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.audit.path().join("audit.jsonl")).expect("audit log");
        text.lines().map(|l| serde_json::from_str::<Value>(l).expect("json")["event"].clone()).collect()
    }

    fn record(&self, kind: &str) -> Value {
        self.records().into_iter().find(|r| r["type"] == kind).unwrap_or_else(|| panic!("no {kind} record"))
    }
}

const SPENT: u64 = 1_000_000_000; // 1,000 USDC, 6 decimals

#[test]
fn a_reload_moves_previews_and_commits_to_the_new_chains() {
    let e = env();
    let (a0, b0) = (e.usdc(&e.a), e.usdc(&e.b));
    assert_eq!(e.reload_to_b(), 2);
    let permit = e.path.preview("swap", &swap()).expect("preview on the new generation");
    let result = e.path.commit(&permit.permit_id).expect("commit");
    assert_eq!(result.ground_truth, "receipt");
    assert!(result.outcome_mismatch.is_empty(), "{:?}", result.outcome_mismatch);
    // Planned, simulated, signed and sent on the new chain; the old one untouched.
    assert_eq!(b0 - e.usdc(&e.b), U256::from(SPENT), "the swap executed on the chain the reload named");
    assert_eq!(e.usdc(&e.a), a0, "nothing was sent to the chain the reload replaced");
    assert_eq!(e.record("PermitCreated")["generation"], 2);
    assert_eq!(e.record("PermitConsumed")["generation"], 2);
    let planned_by = &e.record("PermitCreated")["planned_by"];
    assert_eq!(planned_by["name"], "uniswap", "{planned_by}");
    assert_eq!(planned_by["sha256"].as_str().map(str::len), Some(64), "{planned_by}");
}

#[test]
fn a_permit_planned_before_a_reload_commits_on_the_generation_that_planned_it() {
    let e = env();
    let (a0, b0) = (e.usdc(&e.a), e.usdc(&e.b));
    let permit = e.path.preview("swap", &swap()).expect("preview on generation 1");
    e.reload_to_b();
    let result = e.path.commit(&permit.permit_id).expect("commit");
    assert!(result.outcome_mismatch.is_empty(), "{:?}", result.outcome_mismatch);
    assert_eq!(a0 - e.usdc(&e.a), U256::from(SPENT), "executed where it was planned and simulated");
    assert_eq!(e.usdc(&e.b), b0, "the new generation's chain untouched");
    assert_eq!(e.record("PermitConsumed")["generation"], 1);
    let verify =
        e.records().into_iter().find(|r| r["type"] == "ToolCall" && r["phase"] == "verify").expect("verify");
    assert_eq!(verify["generation"], 1, "verified by the generation that planned: {verify}");
    // New previews plan on the new generation meanwhile.
    let next = e.path.preview("swap", &swap()).expect("preview");
    assert_eq!(next.planned_on.as_ref().map(|on| on.generation), Some(2));
}

#[test]
fn a_reload_during_the_broadcast_does_not_change_who_verifies() {
    let e = env();
    // A block a second on `a`: each transaction of the plan waits for its block, so the reload
    // lands between the first receipt and the verify.
    let rt = runtime();
    let provider = ProviderBuilder::new().connect_http(e.a.url().parse().expect("url"));
    rt.block_on(async {
        let _: () = provider.raw_request("evm_setAutomine".into(), (false,)).await.expect("automine off");
        let _: () = provider.raw_request("evm_setIntervalMining".into(), (1,)).await.expect("interval");
    });
    let a0 = e.usdc(&e.a);
    let permit = e.path.preview("swap", &swap()).expect("preview");
    assert!(permit.plan.calls.len() >= 2, "a plan of several transactions: {:?}", permit.plan.calls.len());
    let mut events = e.fabric.subscribe(None);
    let path = e.path.clone();
    let id = permit.permit_id.clone();
    let commit = std::thread::spawn(move || path.commit(&id));
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        assert!(std::time::Instant::now() < deadline, "no transaction within 60 s");
        match events.try_recv() {
            Some(Ok(env)) if matches!(*env.event, GolemEvent::ActionExecuted { .. }) => break,
            Some(_) => {}
            None => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    e.reload_to_b();
    let result = commit.join().expect("commit thread").expect("commit");
    assert!(result.outcome_mismatch.is_empty(), "{:?}", result.outcome_mismatch);
    assert_eq!(a0 - e.usdc(&e.a), U256::from(SPENT));
    // In the log: a transaction, the reload, the rest of the broadcast, then the verify — by
    // the generation that planned.
    let records = e.records();
    let at = |kind: &str| records.iter().position(|r| r["type"] == kind).unwrap_or_else(|| panic!("{kind}"));
    let reloaded = at("Reloaded");
    let last_tx = records.iter().rposition(|r| r["type"] == "ActionExecuted").expect("sent");
    let verify =
        records.iter().position(|r| r["type"] == "ToolCall" && r["phase"] == "verify").expect("verify");
    assert!(
        at("ActionExecuted") < reloaded && reloaded < last_tx,
        "the reload landed mid-broadcast: {records:#?}"
    );
    assert!(reloaded < verify);
    assert_eq!(records[verify]["generation"], 1, "{}", records[verify]);
    assert_eq!(records[reloaded]["generation"], 2);
}
