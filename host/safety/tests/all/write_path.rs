//! The write path on the devnet: preview → hooks → permit → commit → signed, broadcast, verified;
//! and the attacks, each refused with its code, balances unchanged, the refusal audited.

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, U256};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_core::fabric::{Fabric, GolemEvent};
use bardo_core::scope::Role;
use bardo_core::tool::Phase;
use bardo_core::{ErrorCode, ToolError};
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_safety::audit_log::{AuditLog, verify};
use bardo_safety::hooks::spending_limiter::{SpendingLimiter, SpendingLimits};
use bardo_safety::hooks::{AllowlistGuard, ApprovalGuard, PolicyCage, RateLimiter, SafetyHook};
use bardo_safety::host_key::HostKey;
use bardo_safety::{Clock, WritePath};
use bardo_test_artifacts::{EVIL_WRITER, UNISWAP};
use bardo_test_support::devnet_host;
use bardo_test_support::writes::valuer;
use bardo_test_support::{devnet, runtime};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

sol! {
    function balanceOf(address account) external view returns (uint256);
    function approve(address spender, uint256 amount) external returns (bool);
    function transfer(address to, uint256 amount) external returns (bool);
    struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient; uint256 deadline;
        uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }
    function exactInputSingle(ExactInputSingleParams params) external payable returns (uint256 amountOut);
}

pub(crate) struct Env {
    node: Anvil,
    pub(crate) d: Deployments,
    pub(crate) path: Arc<WritePath>,
    audit: tempfile::TempDir,
    /// The audit log's key, to verify its checkpoint.
    key: HostKey,
    skew_ms: Arc<AtomicU64>,
    fabric: Arc<Fabric>,
}

fn env_with(wallet: bool, allow: impl FnOnce(&Deployments) -> BTreeMap<Address, Role>) -> Env {
    env_full(wallet, allow, None, None)
}

pub(crate) fn env_full(
    wallet: bool,
    allow: impl FnOnce(&Deployments) -> BTreeMap<Address, Role>,
    spending: Option<SpendingLimits>,
    previews_per_minute: Option<usize>,
) -> Env {
    let (node, d) = devnet();
    let host = Arc::new(devnet_host(&node.url(), d.uniswap_settings(), wallet, &[UNISWAP, EVIL_WRITER]));
    let mut hooks: Vec<Box<dyn SafetyHook>> = vec![
        Box::new(PolicyCage { valuer: Some(valuer(&host, &d)), ..PolicyCage::default() }),
        Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, allow(&d))]))),
        Box::new(ApprovalGuard),
    ];
    if let Some(n) = previews_per_minute {
        hooks.push(Box::new(RateLimiter::new(n)));
    }
    let audit = tempfile::tempdir().expect("tempdir");
    let key = HostKey::ephemeral();
    let log = AuditLog::open(&audit.path().join("audit.jsonl"), key.clone()).expect("audit log");
    // A clock the test can move forward.
    let skew_ms = Arc::new(AtomicU64::new(0));
    let skew = skew_ms.clone();
    let clock: Clock =
        Arc::new(move || SystemTime::now() + Duration::from_millis(skew.load(Ordering::SeqCst)));
    let fabric = Arc::new(Fabric::new());
    let mut path = WritePath::new(host.clone(), host.services().clone(), hooks, log)
        .with_clock(clock)
        .with_fabric(fabric.clone())
        .with_valuer(valuer(&host, &d));
    let mut after: Vec<Box<dyn SafetyHook>> = Vec::new();
    if let Some(limits) = spending {
        after.push(Box::new(SpendingLimiter::new(limits, valuer(&host, &d), path.ttl(), path.clock())));
    }
    after.extend(bardo_test_support::writes::guards(&host, &d));
    path = path.with_after_simulation(after);
    Env { node, d, path: Arc::new(path), audit, key, skew_ms, fabric }
}

fn env() -> Env {
    env_with(true, Deployments::write_targets)
}

impl Env {
    fn balance(&self, symbol: &str) -> U256 {
        let provider = ProviderBuilder::new().connect_http(self.node.url().parse().expect("url"));
        let call = balanceOfCall { account: self.d.deployer }.abi_encode();
        let tx = TransactionRequest::default().to(self.d.tokens[symbol].address).with_input(call);
        let out = runtime().block_on(provider.call(tx).into_future()).expect("eth_call");
        balanceOfCall::abi_decode_returns(&out).expect("uint")
    }

    fn balances(&self) -> (U256, U256) {
        (self.balance("WETH"), self.balance("USDC"))
    }

    fn audit_types(&self) -> Vec<String> {
        std::fs::read_to_string(self.audit.path().join("audit.jsonl"))
            .expect("audit log")
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).expect("json")["event"]["type"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned()
            })
            .collect()
    }

    /// Another `bardo` process on this devnet: its own host and memory, its audit log
    /// `audit-{name}.jsonl`, the permit file `permits` shared, permits sealed with `key`.
    fn process(&self, name: &str, permits: &std::path::Path, key: &HostKey) -> WritePath {
        let host = Arc::new(devnet_host(&self.node.url(), self.d.uniswap_settings(), true, &[UNISWAP]));
        let hooks: Vec<Box<dyn SafetyHook>> = vec![
            Box::new(PolicyCage::default()),
            Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, self.d.write_targets())]))),
            Box::new(ApprovalGuard),
        ];
        let log = self.audit.path().join(format!("audit-{name}.jsonl"));
        let log = AuditLog::open(&log, key.clone()).expect("audit log");
        WritePath::new(host.clone(), host.services().clone(), hooks, log)
            .with_permit_file(permits, key.clone())
    }

    pub(crate) fn refused(&self, r: Result<impl std::fmt::Debug, ToolError>, code: ErrorCode, hint: &str) {
        let e = r.expect_err("must be refused");
        assert_eq!(e.code, code, "{e}");
        assert!(e.message.contains(hint), "{:?} should mention {hint:?}", e.message);
    }
}

pub(crate) fn swap(amount: &str) -> Value {
    json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": amount})
}

fn sell_weth(amount: &str) -> Value {
    json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": amount})
}

/// Every write's action record (and an executed one's outcome record), read back from the
/// audit log: executed with gas and P&L in USD, blocked at preview and at commit, deferred
/// (expired, cancelled).
#[test]
fn records_of_executed_blocked_and_deferred_writes() {
    use bardo_safety::records::{self, ActionStatus};
    let e = env();
    let executed = e.path.preview("swap", &swap("1000")).expect("preview");
    let result = e.path.commit(&executed.permit_id).expect("commit");
    e.path.set_phase(Phase::Survival);
    e.refused(e.path.preview("swap", &swap("10")), ErrorCode::Denied, "Survival");
    e.path.set_phase(Phase::Thriving);
    let refused_at_commit = e.path.preview("swap", &swap("10")).expect("preview");
    e.path.set_phase(Phase::Survival);
    e.refused(e.path.commit(&refused_at_commit.permit_id), ErrorCode::Denied, "at commit");
    e.path.set_phase(Phase::Thriving);
    let cancelled = e.path.preview("swap", &swap("10")).expect("preview");
    e.path.cancel(&cancelled.permit_id).expect("cancel");
    let expired = e.path.preview("swap", &swap("10")).expect("preview");
    e.skew_ms.store(61_000, Ordering::SeqCst);
    e.refused(e.path.commit(&expired.permit_id), ErrorCode::Expired, "expired");
    let open = e.path.preview("swap", &swap("10")).expect("preview");

    let all = records::read(&e.audit.path().join("audit.jsonl")).expect("records");
    assert_eq!(all.len(), 6, "{all:#?}");
    let by = |id: &str| all.iter().find(|r| r.permit_id == id).unwrap_or_else(|| panic!("no record of {id}"));
    let r = by(&executed.permit_id);
    assert_eq!(
        (r.status, r.action_type.as_str(), r.tool_name.as_deref()),
        (ActionStatus::Executed, "swap", Some("uniswap_execute_swap"))
    );
    assert_eq!(r.tx_hashes, result.tx_hashes);
    assert_eq!(r.tx_hash.as_ref(), result.tx_hashes.last());
    // Priced (the devnet's base fee has decayed to a few wei: cents at most).
    let gas = r.gas_cost.expect("gas priced");
    assert!((0.0..1.0).contains(&gas) && gas.is_sign_positive(), "gas ${gas}");
    let o = r.outcome.as_ref().expect("outcome");
    assert!(o.verified && o.divergence.is_empty() && o.ground_truth_source == "receipt", "{o:?}");
    assert_eq!(o.expected, executed.expected_outcome);
    assert_eq!(o.actual, result.actual);
    // 1000 USDC into WETH at the pools' own prices: the P&L is the fee, the price impact and gas.
    let pnl = o.pnl_impact.expect("priced");
    assert!(pnl < 0.0 && pnl > -40.0, "p&l ${pnl}");
    let blocked: Vec<_> = all.iter().filter(|r| r.status == ActionStatus::Blocked).collect();
    assert_eq!(blocked.len(), 1);
    assert!(
        blocked[0].block_reason.as_deref().is_some_and(|b| b.starts_with("policy-cage:")),
        "{:?}",
        blocked[0]
    );
    assert_eq!(blocked[0].tool_name.as_deref(), Some("uniswap_execute_swap"));
    // Refused at commit before anything was sent: given back, open (the refusal is in the log).
    let given_back = by(&refused_at_commit.permit_id);
    assert_eq!((given_back.status, given_back.block_reason.as_deref()), (ActionStatus::Deferred, None));
    let log = std::fs::read_to_string(e.audit.path().join("audit.jsonl")).expect("log");
    assert!(log.contains("(at commit)") && log.contains("PermitReopened"));
    assert_eq!(by(&cancelled.permit_id).block_reason.as_deref(), Some("cancelled"));
    assert_eq!(by(&expired.permit_id).block_reason.as_deref(), Some("expired unused"));
    assert_eq!(
        (by(&open.permit_id).status, by(&open.permit_id).block_reason.as_deref()),
        (ActionStatus::Deferred, None)
    );
    assert!(all.iter().all(|r| r.status == ActionStatus::Executed || r.outcome.is_none()));
}

/// The specification's phase table on real plans, classed by their simulated-and-declared
/// changes with the host's own token types and balances: buying WETH with USDC opens exposure,
/// selling some WETH decreases it, selling all of it closes it, WBTC for WETH rebalances.
#[test]
fn phases_allow_the_action_classes_of_the_specification_table() {
    let e = env();
    let preview = |kind: &str, params: &Value| e.path.preview(kind, params);
    let class_refused = |r: Result<_, ToolError>, class: &str, phase: &str| {
        e.refused(
            r,
            ErrorCode::Denied,
            &format!("classed {class} by its kind and balance changes, which the {phase} phase"),
        )
    };
    // The wallet (the deployer) holds every devnet token: buying WETH is increase-position.
    e.path.set_phase(Phase::Cautious);
    preview("swap", &swap("10")).expect("cautious allows increase-position");
    e.path.set_phase(Phase::Defensive);
    class_refused(preview("swap", &swap("10")), "increase-position", "Defensive");
    let rebalance = json!({"chain_id": CHAIN_ID, "token_in": "WBTC", "token_out": "WETH", "amount": "0.001"});
    preview("swap", &rebalance).expect("defensive allows rebalance");
    let sold = preview("swap", &sell_weth("0.1")).expect("defensive allows decrease-position");
    e.path.set_phase(Phase::Survival);
    class_refused(preview("swap", &rebalance), "rebalance", "Survival");
    // Committed in survival: the decrease re-checked at commit, executed.
    let (weth, usdc) = e.balances();
    e.path.commit(&sold.permit_id).expect("survival allows decrease-position");
    let (weth_after, usdc_after) = e.balances();
    assert_eq!(weth - weth_after, U256::from(10u64).pow(U256::from(17u64)), "0.1 WETH sold");
    assert!(usdc_after > usdc, "USDC bought");
    // Terminal: only what closes a position. Leave the wallet 0.25 WETH, then sell some, then all.
    let provider = ProviderBuilder::new().connect_http(e.node.url().parse().expect("url"));
    let keep = U256::from(25u64) * U256::from(10u64).pow(U256::from(16u64));
    let transfer = transferCall { to: e.d.accounts[5], amount: weth_after - keep }.abi_encode();
    let tx =
        TransactionRequest::default().from(e.d.deployer).to(e.d.tokens["WETH"].address).with_input(transfer);
    runtime().block_on(bardo_test_support::send(&provider, tx));
    assert_eq!(e.balance("WETH"), keep);
    e.path.set_phase(Phase::Terminal);
    class_refused(preview("swap", &sell_weth("0.1")), "decrease-position", "Terminal");
    let all = preview("swap", &sell_weth("0.25")).expect("terminal allows close-position");
    e.path.commit(&all.permit_id).expect("commit in terminal");
    assert_eq!(e.balance("WETH"), U256::ZERO, "the position is closed");
    // The refusals are audited with their reasons.
    let log = std::fs::read_to_string(e.audit.path().join("audit.jsonl")).expect("audit log");
    assert!(log.contains("classed rebalance") && log.contains("classed decrease-position"), "{log}");
}

#[test]
fn preview_commit_executes_once_and_verifies_from_the_receipt() {
    let e = env();
    let mut events = e.fabric.subscribe(None);
    let before = e.balances();
    let permit = e.path.preview("swap", &swap("1000")).expect("preview");
    assert_eq!(permit.tool, "uniswap_execute_swap");
    assert_eq!(e.balances(), before, "a preview sends nothing");
    let result = e.path.commit(&permit.permit_id).expect("commit");
    assert_eq!(result.ground_truth, "receipt");
    assert_eq!(result.actual["amount_out_base"], result.expected["amount_out_base"], "{result:?}");
    let out: U256 = result.actual["amount_out_base"].as_str().expect("amount").parse().expect("u256");
    let after = e.balances();
    assert_eq!(after.0 - before.0, out, "the WETH the receipt reports reached the wallet");
    assert_eq!(before.1 - after.1, U256::from(1_000_000_000u64), "exactly 1000 USDC left");
    assert_eq!(result.tx_hashes.len(), 3, "USDC → Permit2, Permit2 → router, swap");

    // The same permit again: refused, nothing moves, the refusal is audited.
    e.refused(e.path.commit(&permit.permit_id), ErrorCode::Denied, "already used");
    assert_eq!(e.balances(), after);
    assert_eq!(e.audit_types().last().map(String::as_str), Some("PermitRefused"));

    // The same steps, in order, on the Event Fabric, sequence numbers contiguous.
    let seen: Vec<_> = std::iter::from_fn(|| events.try_recv()).map(|r| r.expect("no gap")).collect();
    assert!(seen.windows(2).all(|w| w[1].seq == w[0].seq + 1));
    let kinds: Vec<&str> = seen
        .iter()
        .map(|e| match &*e.event {
            GolemEvent::ToolExecutionStart { .. } => "start",
            GolemEvent::ToolExecutionUpdate { .. } => "update",
            GolemEvent::ToolExecutionEnd { .. } => "tool",
            GolemEvent::HookDecision { .. } => "hook",
            GolemEvent::PermitCreated { .. } => "created",
            GolemEvent::PermitConsumed { .. } => "consumed",
            GolemEvent::ActionExecuted { .. } => "executed",
            GolemEvent::PermitRefused { .. } => "refused",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "start", "update", "update", "update", "tool", "hook", "hook", "hook", "hook", "hook", "hook",
            "hook", "hook", "hook", "hook", "hook", "created", "consumed", "executed", "executed",
            "executed", "tool", "refused"
        ]
    );
    let steps: Vec<&str> = seen
        .iter()
        .filter_map(|e| match &*e.event {
            GolemEvent::ToolExecutionUpdate { step, .. } => Some(step.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        steps,
        ["quote", "check balance and allowance", "build calls"],
        "the ToolDef's progress steps"
    );

    let types = e.audit_types();
    for t in ["ToolCall", "HookDecision", "PermitCreated", "PermitConsumed", "ActionExecuted"] {
        assert!(types.iter().any(|x| x == t), "{t} in {types:?}");
    }
    assert_eq!(
        types.iter().filter(|t| *t == "HookDecision").count(),
        11,
        "policy, allowlist, approvals, simulation, hallucination detector, approval exposure, stranded value, price guard, on-chain bounds, value guard, health floor"
    );
    let verified = verify(&e.audit.path().join("audit.jsonl"), Some(&e.key)).expect("intact");
    assert_eq!(verified.0 as usize, types.len());
}

#[test]
fn two_concurrent_commits_of_one_permit_execute_exactly_once() {
    let e = env();
    let permit = e.path.preview("swap", &swap("500")).expect("preview");
    let before = e.balance("USDC");
    let results: Vec<Result<_, ToolError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2).map(|_| s.spawn(|| e.path.commit(&permit.permit_id))).collect();
        handles.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1, "{results:?}");
    assert_eq!(before - e.balance("USDC"), U256::from(500_000_000u64), "spent once");
}

#[test]
fn an_expired_permit_is_refused_and_audited() {
    let e = env();
    let permit = e.path.preview("swap", &swap("100")).expect("preview");
    e.skew_ms.store(61_000, Ordering::SeqCst);
    let before = e.balances();
    e.refused(e.path.commit(&permit.permit_id), ErrorCode::Expired, "expired");
    assert_eq!(e.balances(), before);
    assert!(e.audit_types().iter().any(|t| t == "PermitExpired"));
}

#[test]
fn a_pool_moved_by_someone_else_between_preview_and_commit_is_refused() {
    let e = env();
    let permit = e.path.preview("swap", &swap("1000")).expect("preview");
    // Another account trades the same pool before the commit.
    let other =
        Address::from_slice(&alloy::hex::decode("70997970C51812dc3A010C7d01b50e0d17dc79C8").expect("hex"));
    let router = e.d.uniswap_v3["swap_router"];
    let (weth, usdc) = (e.d.tokens["WETH"].address, e.d.tokens["USDC"].address);
    let provider = ProviderBuilder::new().connect_http(e.node.url().parse().expect("url"));
    let rt = runtime();
    let send = |to: Address, data: Vec<u8>| {
        let tx = TransactionRequest::default().from(other).to(to).with_input(data);
        let r = rt.block_on(bardo_test_support::send(&provider, tx));
        assert!(r.status());
    };
    send(usdc, approveCall { spender: router, amount: U256::from(10u64).pow(U256::from(12)) }.abi_encode());
    let route = permit.expected_outcome["route"]["fee"].as_u64().expect("fee");
    send(
        router,
        exactInputSingleCall {
            params: ExactInputSingleParams {
                tokenIn: usdc,
                tokenOut: weth,
                fee: alloy::primitives::aliases::U24::from(route),
                recipient: other,
                deadline: U256::MAX,
                amountIn: U256::from(50_000_000_000u64),
                amountOutMinimum: U256::from(1),
                sqrtPriceLimitX96: alloy::primitives::aliases::U160::ZERO,
            },
        }
        .abi_encode(),
    );
    let before = e.balances();
    e.refused(e.path.commit(&permit.permit_id), ErrorCode::Denied, "chain changed");
    assert_eq!(e.balances(), before, "nothing executed");
    assert!(e.audit_types().iter().any(|t| t == "PermitRefused"));
}

#[test]
fn hostile_plans_are_refused_by_the_hooks() {
    let e = env();
    let usdc = e.d.tokens["USDC"].address.to_checksum(None);
    let router = e.d.uniswap_v3["swap_router"].to_checksum(None);
    let stranger = "0x000000000000000000000000000000000000dEaD";
    let evil = |mode: &str, target: &str| json!({"chain_id": CHAIN_ID, "mode": mode, "token": usdc, "target": target});
    let before = e.balances();
    e.refused(e.path.preview("evil", &evil("unlimited", &router)), ErrorCode::Denied, "unlimited");
    e.refused(e.path.preview("evil", &evil("max_minus_one", &router)), ErrorCode::Denied, "unlimited");
    e.refused(e.path.preview("evil", &evil("transfer_all", stranger)), ErrorCode::Denied, "allowlist");
    e.refused(e.path.preview("evil", &evil("unlimited", stranger)), ErrorCode::Denied, "allowlist");
    // A lookalike: the router's address with its last digit changed (in lowercase, which has no
    // checksum to fail: the SDK's parser would refuse a mixed-case one before the host saw it).
    let mut lookalike = router.to_lowercase();
    lookalike.pop();
    lookalike.push(if router.ends_with('0') { '1' } else { '0' });
    e.refused(e.path.preview("evil", &evil("unlimited", &lookalike)), ErrorCode::Denied, "allowlist");
    // A plan is a few calls, not a program for the host to simulate.
    e.refused(e.path.preview("evil", &evil("many", &router)), ErrorCode::Denied, "at most 16 calls");
    // A token's `transfer` is out of its scope: no plan may send tokens away directly.
    e.refused(e.path.preview("evil", &evil("transfer_all", &router)), ErrorCode::Denied, "out of scope");
    assert_eq!(e.balances(), before);
    // With USDC unscoped by the operator, the simulation still holds the plan to its claims.
    let e = env_with(true, |d| {
        let mut roles = d.write_targets();
        roles.insert(d.tokens["USDC"].address, Role::Unscoped);
        roles
    });
    let before = e.balances();
    e.refused(e.path.preview("evil", &evil("revert", &router)), ErrorCode::Reverted, "reverts in simulation");
    // Moving tokens the plan does not declare, or declaring what the simulation does not do.
    e.refused(
        e.path.preview("evil", &evil("transfer_all", &router)),
        ErrorCode::Denied,
        "declares no balance_changes",
    );
    let mut lying = evil("transfer_all", &router);
    lying["outcome"] = json!(json!({"balance_changes": [{"token": usdc, "delta": "5"}]}).to_string());
    e.refused(e.path.preview("evil", &lying), ErrorCode::Denied, "do not match its simulation");
    // A tolerance only lets the wallet end up better off than declared: it cannot hide an outflow.
    lying["outcome"] = json!(
        json!({"balance_changes": [{"token": usdc, "delta": "0", "tolerance": "1000000000000000000000000"}]})
            .to_string()
    );
    e.refused(e.path.preview("evil", &lying), ErrorCode::Denied, "do not match its simulation");
    // A minimum of 0 cannot be asked for: the swap tool's params have no such field.
    let mut zero_min = swap("10");
    zero_min["amount_out_minimum"] = json!("0");
    e.refused(e.path.preview("swap", &zero_min), ErrorCode::InvalidParams, "amount_out_minimum");
    assert_eq!(e.balances(), before);
    let refusals = std::fs::read_to_string(e.audit.path().join("audit.jsonl")).expect("log");
    assert!(refusals.matches("\"allowed\":false").count() >= 4, "every refusal is audited");
}

#[test]
fn a_token_off_the_allowlist_is_refused() {
    let e = env_with(true, |d| {
        let mut set = d.write_targets();
        set.remove(&d.tokens["USDC"].address);
        set
    });
    e.refused(e.path.preview("swap", &swap("10")), ErrorCode::Denied, "not on the allowlist");
}

#[test]
fn a_v4_swap_through_the_universal_router_passes_the_chain_and_moves_what_it_simulated() {
    let e = env();
    let params = json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "DAI", "amount": "2"});
    let (weth, dai) = (e.balance("WETH"), e.balance("DAI"));
    let permit = e.path.preview("swap", &params).expect("preview: scope, Permit2 authorities, simulation");
    assert_eq!(permit.plan.calls.len(), 3, "WETH → Permit2, Permit2 → router, execute");
    assert_eq!(permit.expected_outcome["route"]["version"], "v4");
    let done = e.path.commit(&permit.permit_id).expect("commit");
    assert_eq!(done.actual["balance_changes"], done.expected["balance_changes"], "declared = executed");
    let out: U256 = done.actual["amount_out_base"].as_str().expect("amount").parse().expect("u256");
    assert_eq!(e.balance("DAI") - dai, out);
    assert_eq!(weth - e.balance("WETH"), U256::from(2) * U256::from(10).pow(U256::from(18)));
    // Two hops, V3 then V4, through WETH: in scope, and declared = executed.
    let two_hops = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "DAI", "amount": "500"});
    let permit = e.path.preview("swap", &two_hops).expect("preview two hops");
    assert!(permit.expected_outcome["then"].is_object(), "{}", permit.expected_outcome);
    let done = e.path.commit(&permit.permit_id).expect("commit two hops");
    assert_eq!(done.actual["balance_changes"], done.expected["balance_changes"]);
    // Without the router on the allowlist, the same plan is refused before it is simulated.
    let e = env_with(true, |d| {
        let mut set = d.write_targets();
        set.remove(&d.uniswap_v4["universal_router"]);
        set
    });
    e.refused(e.path.preview("swap", &params), ErrorCode::Denied, "is not allowlisted");
}

#[test]
fn native_eth_swaps_pass_the_chain_and_move_exactly_what_they_simulated() {
    let e = env();
    let provider = ProviderBuilder::new().connect_http(e.node.url().parse().expect("url"));
    let eth = || runtime().block_on(provider.get_balance(e.d.deployer).into_future()).expect("balance");
    for params in [
        json!({"chain_id": CHAIN_ID, "token_in": "ETH", "token_out": "USDC", "amount": "1"}),
        json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "ETH", "amount": "0.3", "side": "exact_out"}),
    ] {
        let (eth_before, usdc_before) = (eth(), e.balance("USDC"));
        let permit = e.path.preview("swap", &params).expect("preview: value, native change set");
        let done = e.path.commit(&permit.permit_id).expect("commit");
        assert_eq!(done.actual["balance_changes"], done.expected["balance_changes"], "declared = executed");
        let base = |k: &str| done.actual[k].as_str().expect("amount").parse::<U256>().expect("u256");
        let (eth_after, usdc_after) = (eth(), e.balance("USDC"));
        if params["token_in"] == "ETH" {
            assert!(eth_before - eth_after >= base("amount_in_base"), "the ETH left (and gas)");
            assert_eq!(usdc_after - usdc_before, base("amount_out_base"));
        } else {
            assert_eq!(usdc_before - usdc_after, base("amount_in_base"));
            assert!(eth_after > eth_before, "ETH arrived, more than the gas");
        }
    }
}

#[test]
fn phases_gate_writes_and_a_halt_revokes_permits() {
    let e = env();
    e.path.set_phase(Phase::Survival);
    e.refused(e.path.preview("swap", &swap("10")), ErrorCode::Denied, "Survival");
    e.path.set_phase(Phase::Thriving);
    // The policy is checked again at commit: a permit from thriving does not execute in survival.
    let early = e.path.preview("swap", &swap("10")).expect("preview");
    e.path.lower_phase(Phase::Survival).expect("lower");
    let before = e.balances();
    e.refused(e.path.commit(&early.permit_id), ErrorCode::Denied, "at commit");
    assert_eq!(e.balances(), before);
    e.path.set_phase(Phase::Thriving);
    let permit = e.path.preview("swap", &swap("10")).expect("preview");
    let revoked = e.path.halt("operator pressed the button").expect("halt");
    // The one refused at commit sent nothing and was open again: revoked too.
    let mut expected = vec![early.permit_id.clone(), permit.permit_id.clone()];
    expected.sort();
    let mut revoked = revoked;
    revoked.sort();
    assert_eq!(revoked, expected);
    assert_eq!(e.path.phase(), Phase::Terminal);
    e.refused(e.path.commit(&permit.permit_id), ErrorCode::Denied, "halted");
    e.refused(e.path.preview("swap", &swap("10")), ErrorCode::Denied, "bardo resume");
    assert_eq!(e.balances(), before);
    // The operator resumes: writes work again, the revoked permit stays revoked.
    assert!(e.path.resume().expect("resume"), "a halt was in force");
    assert_eq!(e.path.phase(), Phase::Thriving);
    e.refused(e.path.commit(&permit.permit_id), ErrorCode::Denied, "revoked");
    assert_eq!(e.balances(), before);
    e.path.preview("swap", &swap("10")).expect("a preview after resume");
    assert!(e.audit_types().iter().any(|t| t == "Resumed"));
}

#[test]
fn an_agent_lowers_the_phase_but_only_the_operator_raises_it() {
    let e = env();
    e.path.lower_phase(Phase::Defensive).expect("lower");
    e.path.lower_phase(Phase::Defensive).expect("the same phase");
    e.refused(e.path.lower_phase(Phase::Thriving), ErrorCode::Denied, "only the operator");
    assert_eq!(e.path.phase(), Phase::Defensive);
    e.path.lower_phase(Phase::Survival).expect("lower");
    e.refused(e.path.lower_phase(Phase::Cautious), ErrorCode::Denied, "only the operator");
    assert_eq!(e.path.phase(), Phase::Survival);
    // The operator (`[safety] phase` at start) sets it either way.
    e.path.set_phase(Phase::Thriving);
    assert_eq!(e.path.phase(), Phase::Thriving);
}

#[test]
fn a_permit_written_into_the_file_by_anyone_else_is_refused() {
    let e = env();
    let file = e.audit.path().join("permits.json");
    let key = HostKey::ephemeral();
    let a = e.process("a", &file, &key);
    let permit = a.preview("swap", &swap("100")).expect("preview");
    // Whoever can write the files copies the open permit (a line in a's journal) under a new id.
    let entry = |id: &str| e.audit.path().join(format!("permits.json.d/{id}.json"));
    let journal = std::fs::read_dir(e.audit.path().join("permits.json.d/journal")).expect("journal");
    let mut copy = journal
        .flat_map(|f| {
            std::fs::read_to_string(f.expect("journal").path())
                .expect("read")
                .lines()
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .map(|line| serde_json::from_str::<Value>(&line).expect("line"))
        .find(|line| line["id"] == json!(permit.permit_id))
        .map(|line| line["entry"].clone())
        .expect("the open permit's line");
    let copied = format!("{}0", permit.permit_id);
    copy["permit"]["permit_id"] = json!(copied);
    std::fs::write(entry(&copied), copy.to_string()).expect("write");
    let before = e.balances();
    e.refused(a.commit(&copied), ErrorCode::Denied, "host key");
    // A process holding another host key on the same file: its permits are not this host's.
    let stranger = e.process("b", &file, &HostKey::ephemeral());
    let theirs = stranger.preview("swap", &swap("100")).expect("preview under another key");
    e.refused(a.commit(&theirs.permit_id), ErrorCode::Denied, "host key");
    assert_eq!(e.balances(), before, "nothing executed");
    let audit = std::fs::read_to_string(e.audit.path().join("audit-a.jsonl")).expect("audit");
    assert_eq!(audit.matches("\"PermitRefused\"").count(), 2, "both refusals audited");
    // The genuine permit still executes.
    a.commit(&permit.permit_id).expect("the permit this host sealed");
    assert_ne!(e.balances(), before);
}

#[test]
fn a_permit_executes_in_another_process_only_with_its_preview_record_on_disk() {
    let e = env();
    let file = e.audit.path().join("permits.json");
    let key = HostKey::ephemeral();
    let (a, b) = (e.process("a", &file, &key), e.process("b", &file, &key));
    // The preview did not wait for the disk; the permit says where its record went.
    let kept = a.preview("swap", &swap("10")).expect("preview");
    let at = kept.audit_record.clone().expect("where the preview's record is");
    assert_eq!(at.log, e.audit.path().canonicalize().expect("dir").join("audit-a.jsonl"));
    let lost = a.preview("swap", &swap("10")).expect("preview");
    let before = e.balances();
    // As a crash that kept the permit files and lost the log's tail would leave it (a fault no
    // real disk produces on demand): a's log ends before the second preview's records.
    let log = std::fs::read(&at.log).expect("log");
    let end = (at.offset + at.len + 1) as usize;
    std::fs::write(&at.log, &log[..end]).expect("cut the log");
    e.refused(b.commit(&lost.permit_id), ErrorCode::Denied, "no audit record of its preview");
    assert_eq!(e.balances(), before, "nothing executed");
    // The permit whose record is on disk executes in the other process.
    b.commit(&kept.permit_id).expect("commit with its record on disk");
    assert_ne!(e.balances(), before);
}

#[test]
fn a_halt_reaches_every_process_on_the_permit_file_and_outlives_them_until_resumed() {
    let e = env();
    let file = e.audit.path().join("permits.json");
    let key = HostKey::ephemeral();
    let (a, b) = (e.process("a", &file, &key), e.process("b", &file, &key));
    let open = b.preview("swap", &swap("10")).expect("preview");
    assert_eq!(a.halt("operator pressed the button").expect("halt"), vec![open.permit_id.clone()]);
    let before = e.balances();
    // The other process: previews and commits refused, its phase terminal.
    e.refused(b.preview("swap", &swap("10")), ErrorCode::Denied, "bardo resume");
    e.refused(b.commit(&open.permit_id), ErrorCode::Denied, "halted");
    assert_eq!(b.phase(), Phase::Terminal);
    assert_eq!(e.balances(), before);
    // Both gone; the next process on the file is still halted, for the same reason.
    drop((a, b));
    let c = e.process("c", &file, &key);
    e.refused(c.preview("swap", &swap("10")), ErrorCode::Denied, "operator pressed the button");
    assert_eq!(e.balances(), before);
    assert!(c.resume().expect("resume"), "a halt was in force");
    assert!(!c.resume().expect("resume again"), "nothing left to lift");
    assert_eq!(c.phase(), Phase::Thriving);
    e.refused(c.commit(&open.permit_id), ErrorCode::Denied, "revoked");
    c.preview("swap", &swap("10")).expect("previews work again");
    let audit = std::fs::read_to_string(e.audit.path().join("audit-c.jsonl")).expect("audit");
    assert!(audit.contains("\"Resumed\""), "{audit}");
}

#[test]
fn no_signer_means_wallet_not_configured() {
    let e = env_with(false, Deployments::write_targets);
    e.refused(e.path.preview("swap", &swap("10")), ErrorCode::WalletNotConfigured, "BARDO_PRIVATE_KEY");
}

#[test]
fn the_audit_chain_detects_edits_deletions_and_reordering() {
    let e = env();
    let permit = e.path.preview("swap", &swap("10")).expect("preview");
    e.path.cancel(&permit.permit_id).expect("cancel");
    e.refused(e.path.commit(&permit.permit_id), ErrorCode::Denied, "");
    let file = e.audit.path().join("audit.jsonl");
    let good = std::fs::read_to_string(&file).expect("log");
    let lines: Vec<&str> = good.lines().collect();
    assert!(lines.len() >= 6);
    assert!(verify(&file, Some(&e.key)).is_ok());
    let tamper = |text: String| {
        std::fs::write(&file, text).expect("write");
        verify(&file, Some(&e.key)).expect_err("tampering must be detected").to_string()
    };
    let edited = good.replacen("\"allowed\":true", "\"allowed\":false", 1);
    assert!(tamper(edited).contains("record"));
    let mut deleted = lines.clone();
    deleted.remove(2);
    assert!(tamper(deleted.join("\n") + "\n").contains("record 3"));
    let mut swapped = lines.clone();
    swapped.swap(1, 2);
    assert!(tamper(swapped.join("\n") + "\n").contains("record 2"));
    // The last record deleted: the chain still holds, the checkpoint does not.
    let truncated = &lines[..lines.len() - 1];
    let reason = tamper(truncated.join("\n") + "\n");
    assert!(reason.contains("deleted from the end"), "{reason}");
}

#[test]
fn liquidity_plans_pass_the_hallucination_detector_and_execute() {
    let e = env();
    let add = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000,
        "amount_a": "0.5", "amount_b": "1000", "full_range": true});
    let permit = e.path.preview("add-liquidity", &add).expect("preview add");
    let added = e.path.commit(&permit.permit_id).expect("commit add");
    assert_eq!(added.actual["balance_changes"], added.expected["balance_changes"], "declared = executed");
    let id = added.actual["position_id"].as_str().expect("id").to_owned();
    let remove = json!({"chain_id": CHAIN_ID, "position_id": id});
    let permit = e.path.preview("remove-liquidity", &remove).expect("preview remove");
    let removed = e.path.commit(&permit.permit_id).expect("commit remove");
    assert_eq!(removed.actual["balance_changes"], removed.expected["balance_changes"]);
}
