//! Confirmation by policy on the devnet: a permit `[safety] confirm` holds is refused at commit
//! (`confirmation-required`, nothing sent, still open) until a person confirms it — in this
//! process or another sharing the permit file — and a decline cancels it; both are audited.

use alloy::network::TransactionBuilder;
use alloy::primitives::U256;
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_core::ErrorCode;
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_safety::WritePath;
use bardo_safety::audit_log::AuditLog;
use bardo_safety::confirm::{Channel, ConfirmPolicy};
use bardo_safety::hooks::{AllowlistGuard, ApprovalGuard, PolicyCage, SafetyHook};
use bardo_safety::host_key::HostKey;
use bardo_test_artifacts::UNISWAP;
use bardo_test_support::writes::{guards, valuer};
use bardo_test_support::{devnet, devnet_host, runtime};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

sol! {
    function balanceOf(address account) external view returns (uint256);
}

/// A `bardo` process on the devnet holding commits to `policy`, its permits in `dir` (shared
/// with every other process given the same `dir` and `key`), its audit log `audit-{name}`.
fn process(
    node: &Anvil,
    d: &Deployments,
    dir: &Path,
    key: &HostKey,
    name: &str,
    policy: ConfirmPolicy,
) -> WritePath {
    let host = Arc::new(devnet_host(&node.url(), d.uniswap_settings(), true, &[UNISWAP]));
    let hooks: Vec<Box<dyn SafetyHook>> = vec![
        Box::new(PolicyCage::default()),
        Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, d.write_targets())]))),
        Box::new(ApprovalGuard),
    ];
    let log = AuditLog::open(&dir.join(format!("audit-{name}.jsonl")), key.clone()).expect("audit log");
    WritePath::new(host.clone(), host.services().clone(), hooks, log)
        .with_valuer(valuer(&host, d))
        .with_after_simulation(guards(&host, d))
        .with_permit_file(&dir.join("permits.json"), key.clone())
        .with_confirm_policy(policy)
}

fn usdc(node: &Anvil, d: &Deployments) -> U256 {
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url"));
    let call = balanceOfCall { account: d.deployer }.abi_encode();
    let tx = TransactionRequest::default().to(d.tokens["USDC"].address).with_input(call);
    let out = runtime().block_on(provider.call(tx).into_future()).expect("eth_call");
    balanceOfCall::abi_decode_returns(&out).expect("uint")
}

fn audit_types(dir: &Path, name: &str) -> Vec<Value> {
    std::fs::read_to_string(dir.join(format!("audit-{name}.jsonl")))
        .expect("audit log")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json")["event"].clone())
        .collect()
}

fn swap(amount: &str) -> Value {
    json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": amount})
}

#[test]
fn always_holds_a_commit_until_a_person_in_any_process_confirms_it() {
    let (node, d) = devnet();
    let dir = tempfile::tempdir().expect("tempdir");
    let key = HostKey::ephemeral();
    let agent = process(&node, &d, dir.path(), &key, "agent", ConfirmPolicy::Always);
    let before = usdc(&node, &d);
    let permit = agent.preview("swap", &swap("1000")).expect("preview");
    // Valued by the host from its own simulation: 1000 USDC leave, at ~$1 each.
    let spend = permit.spend_usd.expect("valued");
    assert!((999.0..=1001.0).contains(&spend), "{spend}");
    let usdc_change = permit
        .balance_changes
        .iter()
        .find(|c| c.asset == Some(d.tokens["USDC"].address))
        .expect("USDC leaves the wallet");
    assert_eq!(usdc_change.delta, "-1000000000");

    let held = agent.commit(&permit.permit_id).expect_err("held for a person");
    assert_eq!(held.code, ErrorCode::ConfirmationRequired, "{held}");
    assert!(held.retryable, "confirmable, then committable");
    assert!(
        held.message.contains("confirm = \"always\"") && held.message.contains("bardo confirm"),
        "{held}"
    );
    assert_eq!(usdc(&node, &d), before, "nothing was sent");
    let pending = agent.pending_confirmation(&permit.permit_id).expect("open").expect("pending");
    let summary = pending.summary();
    for shown in ["swap", "-1000 USDC", "USD", "risk", "expires in", "confirm = \"always\"", "token 0x"] {
        assert!(summary.contains(shown), "{shown} in {summary}");
    }

    // The operator's dashboard is another process on the same permit file and key.
    let operator = process(&node, &d, dir.path(), &key, "operator", ConfirmPolicy::Always);
    operator.confirm(&permit.permit_id, Channel::Tui, "tui").expect("confirm");
    assert!(agent.pending_confirmation(&permit.permit_id).expect("open").is_none());
    assert_eq!(agent.confirmed_by(&permit.permit_id).expect("open").as_deref(), Some("tui"));
    let done = agent.commit(&permit.permit_id).expect("confirmed: commits");
    assert_eq!(done.tx_hashes.len(), 3);
    assert_eq!(before - usdc(&node, &d), U256::from(1_000_000_000u64));
    assert!(audit_types(dir.path(), "operator").iter().any(|e| e["type"] == "PermitConfirmed"
        && e["permit_id"] == permit.permit_id.as_str()
        && e["by"] == "tui"
        && e["channel"] == "tui"));
    // A process whose key is not the host's cannot confirm anything.
    let stranger = process(&node, &d, dir.path(), &HostKey::ephemeral(), "stranger", ConfirmPolicy::Always);
    let next = agent.preview("swap", &swap("10")).expect("preview");
    assert_eq!(
        stranger.confirm(&next.permit_id, Channel::Tui, "tui").expect_err("forged").code,
        ErrorCode::Denied
    );
    assert_eq!(agent.commit(&next.permit_id).expect_err("still held").code, ErrorCode::ConfirmationRequired);
}

#[test]
fn above_usd_holds_only_larger_spends_and_a_decline_cancels_the_permit() {
    let (node, d) = devnet();
    let dir = tempfile::tempdir().expect("tempdir");
    let key = HostKey::ephemeral();
    let agent = process(&node, &d, dir.path(), &key, "agent", ConfirmPolicy::AboveUsd(500));
    let small = agent.preview("swap", &swap("100")).expect("preview");
    assert!(agent.pending_confirmation(&small.permit_id).expect("open").is_none());
    agent.commit(&small.permit_id).expect("$100 is under the threshold");

    let before = usdc(&node, &d);
    let large = agent.preview("swap", &swap("600")).expect("preview");
    assert_eq!(agent.commit(&large.permit_id).expect_err("held").code, ErrorCode::ConfirmationRequired);
    // No answer in time: audited, the permit stays open.
    let late = agent.declined(&large.permit_id, "mcp elicitation", true);
    assert_eq!((late.code, late.retryable), (ErrorCode::ConfirmationRequired, true), "{late}");
    assert!(agent.pending_confirmation(&large.permit_id).expect("still open").is_some());
    // Declined: cancelled, nothing sent, and no commit can use it any more.
    let declined = agent.declined(&large.permit_id, "mcp elicitation", false);
    assert_eq!(declined.code, ErrorCode::Denied);
    assert!(declined.message.contains("declined"), "{declined}");
    let gone = agent.commit(&large.permit_id).expect_err("cancelled");
    assert!(gone.message.contains("cancelled"), "{gone}");
    assert_eq!(usdc(&node, &d), before);
    let events = audit_types(dir.path(), "agent");
    let declines: Vec<bool> = events
        .iter()
        .filter(|e| e["type"] == "ConfirmationDeclined" && e["permit_id"] == large.permit_id.as_str())
        .map(|e| e["timed_out"].as_bool().expect("bool"))
        .collect();
    assert_eq!(declines, [true, false]);
    assert!(
        events.iter().any(|e| e["type"] == "PermitCancelled" && e["permit_id"] == large.permit_id.as_str())
    );
}

/// The case: with `trader = "always"` and `default = "never"`, a permit previewed under
/// `trader` went through a `full` door with no confirmation. The policy is sealed at preview.
#[test]
fn a_permit_waits_under_the_policy_it_was_previewed_with_whichever_door_commits_it() {
    let (node, d) = devnet();
    let dir = tempfile::tempdir().expect("tempdir");
    let key = HostKey::ephemeral();
    let trader = process(&node, &d, dir.path(), &key, "trader", ConfirmPolicy::Always);
    let full = process(&node, &d, dir.path(), &key, "full", ConfirmPolicy::Never);
    let before = usdc(&node, &d);
    let permit = trader.preview("swap", &swap("100")).expect("preview");
    assert_eq!(permit.confirmation.as_deref(), Some("confirm = \"always\""), "sealed into the permit");

    let held = full.commit(&permit.permit_id).expect_err("the permit's policy, not the door's");
    assert_eq!(held.code, ErrorCode::ConfirmationRequired, "{held}");
    assert!(held.message.contains("confirm = \"always\""), "{held}");
    assert_eq!(usdc(&node, &d), before, "nothing was sent");
    let pending = full.pending_confirmation(&permit.permit_id).expect("open").expect("held here too");
    assert_eq!(pending.policy, "confirm = \"always\"");

    // Confirmed by the operator (any process): the lax door commits it.
    full.confirm(&permit.permit_id, Channel::Cli, "operator (bardo confirm, uid 0)").expect("confirm");
    full.commit(&permit.permit_id).expect("confirmed");
    assert_eq!(before - usdc(&node, &d), U256::from(100_000_000u64));

    // The door's own policy still applies to what the preview's did not hold.
    let lax = full.preview("swap", &swap("10")).expect("preview");
    assert_eq!(lax.confirmation, None);
    assert_eq!(
        trader.commit(&lax.permit_id).expect_err("held by the door").code,
        ErrorCode::ConfirmationRequired
    );
}

/// MCP elicitation is answered by the MCP client, which is the agent: it counts only where the
/// operator names it in `[safety.confirm] via`, and the audit names the channel.
#[test]
fn a_confirmation_counts_only_through_a_channel_the_operator_names() {
    let (node, d) = devnet();
    let dir = tempfile::tempdir().expect("tempdir");
    let key = HostKey::ephemeral();
    let host = process(&node, &d, dir.path(), &key, "host", ConfirmPolicy::Always);
    let permit = host.preview("swap", &swap("100")).expect("preview");
    let refused = host
        .confirm(&permit.permit_id, Channel::McpElicitation, "mcp client \"agent\"")
        .expect_err("not in via");
    assert_eq!(refused.code, ErrorCode::Denied, "{refused}");
    assert!(refused.message.contains("bardo confirm") && refused.message.contains("via"), "{refused}");
    assert!(host.pending_confirmation(&permit.permit_id).expect("open").is_some(), "still waiting");
    assert_eq!(host.commit(&permit.permit_id).expect_err("held").code, ErrorCode::ConfirmationRequired);
    assert!(!audit_types(dir.path(), "host").iter().any(|e| e["type"] == "PermitConfirmed"));

    // Where a person faces the MCP client, the operator opts in; the channel is on record.
    let desktop = process(&node, &d, dir.path(), &key, "desktop", ConfirmPolicy::Always)
        .with_confirm_via(vec![Channel::Cli, Channel::McpElicitation]);
    desktop
        .confirm(&permit.permit_id, Channel::McpElicitation, "mcp client \"claude-desktop\"")
        .expect("opted in");
    host.commit(&permit.permit_id).expect("confirmed");
    assert!(audit_types(dir.path(), "desktop").iter().any(|e| e["type"] == "PermitConfirmed"
        && e["channel"] == "mcp-elicitation"
        && e["by"] == "mcp client \"claude-desktop\""));
    // And a channel left out of via is refused there.
    let next = host.preview("swap", &swap("10")).expect("preview");
    assert_eq!(
        desktop.confirm(&next.permit_id, Channel::Tui, "tui").expect_err("not in via").code,
        ErrorCode::Denied
    );
}
