//! The operator's word on chain — ERC-8004 feedback and validation — given by a hostile plugin's
//! plans on the devnet's registries: sixteen feedbacks of 100 in one plan, one a minute past the
//! daily limit, one rating the operator's own agent from its Safe. The reputation guard refuses
//! each, reading who owns the agent from the registries; what it lets through waits for a
//! person and then lands on chain.

use crate::attacks::STRANGER;
use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, U256};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol_types::SolCall;
use bardo_core::ErrorCode;
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_runtime::plugin::Host;
use bardo_safety::WritePath;
use bardo_safety::audit_log::AuditLog;
use bardo_safety::confirm::Channel;
use bardo_safety::hooks::{AllowlistGuard, PolicyCage, ReputationGuard, ReputationLimits, SafetyHook};
use bardo_safety::host_key::HostKey;
use bardo_test_artifacts::ATTACK;
use bardo_test_support::{devnet, devnet_host, runtime};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;

alloy::sol! {
    function register(string agentURI) external returns (uint256);
    function getLastIndex(uint256 agentId, address clientAddress) external view returns (uint64);
}

struct Env {
    node: Anvil,
    d: Deployments,
    host: Arc<Host>,
    dir: tempfile::TempDir,
}

fn env(host: impl FnOnce(&Anvil, &Deployments) -> Host) -> Env {
    let (node, d) = devnet();
    let host = Arc::new(host(&node, &d));
    Env { node, d, host, dir: tempfile::tempdir().expect("tempdir") }
}

impl Env {
    /// A write path with the reputation guard at `per_day`, its ledger in the test's directory
    /// (every path of one test shares it, as every `bardo` process of a host does).
    fn path(&self, name: &str, per_day: u32) -> WritePath {
        let roles = self.d.write_targets();
        let guard = ReputationGuard {
            limits: ReputationLimits {
                per_day,
                ledger: self.dir.path().join("reputation.json"),
                confirm: true,
            },
            roles: BTreeMap::from([(CHAIN_ID, roles.clone())]),
            valuer: bardo_test_support::writes::valuer(&self.host, &self.d),
            services: self.host.services().clone(),
        };
        let hooks: Vec<Box<dyn SafetyHook>> = vec![
            Box::new(PolicyCage::default()),
            Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, roles)]))),
            Box::new(guard),
        ];
        let log = AuditLog::open(&self.dir.path().join(format!("{name}.jsonl")), HostKey::ephemeral())
            .expect("log");
        WritePath::new(self.host.clone(), self.host.services().clone(), hooks, log)
            .with_valuer(bardo_test_support::writes::valuer(&self.host, &self.d))
            .with_after_simulation(bardo_test_support::writes::guards(&self.host, &self.d))
    }

    /// Agent registered by the unlocked dev account `owner` (its id).
    fn register(&self, owner: Address) -> U256 {
        let provider = ProviderBuilder::new().connect_http(self.node.url().parse().expect("url"));
        let identity = self.d.erc8004.identity;
        let call = registerCall { agentURI: "data:,{}".into() };
        let tx = TransactionRequest::default().from(owner).to(identity).with_input(call.abi_encode());
        let rt = runtime();
        let id = rt.block_on(provider.call(tx.clone()).into_future()).expect("register simulates");
        let id = registerCall::abi_decode_returns(&id).expect("id");
        let pending = rt.block_on(provider.send_transaction(tx)).expect("send");
        assert!(rt.block_on(pending.get_receipt()).expect("receipt").status());
        id
    }

    fn feedbacks_from(&self, agent: U256, client: Address) -> u64 {
        let provider = ProviderBuilder::new().connect_http(self.node.url().parse().expect("url"));
        let call = getLastIndexCall { agentId: agent, clientAddress: client };
        let tx = TransactionRequest::default().to(self.d.erc8004.reputation).with_input(call.abi_encode());
        let out = runtime().block_on(provider.call(tx).into_future()).expect("eth_call");
        getLastIndexCall::abi_decode_returns(&out).expect("decode")
    }

    fn rate(&self, agent: U256, times: usize) -> serde_json::Value {
        json!({"chain_id": CHAIN_ID, "target": self.d.erc8004.reputation.to_string(),
            "stranger": STRANGER.to_string(), "amount": agent.to_string(), "description_bytes": times})
    }
}

/// A stranger's agent, rated by a plugin's plans from the operator's wallet: sixteen in one plan
/// refused; one waits for a person, then lands; past `per_day` — counted across write paths
/// through the shared ledger — refused; a refused or cancelled one gives its place back.
#[test]
fn feedback_from_the_wallet_is_one_a_plan_a_few_a_day_and_waits_for_a_person() {
    let e = env(|node, d| devnet_host(&node.url(), d.uniswap_settings(), true, &[ATTACK]));
    let wallet = e.d.deployer;
    let strangers_agent = e.register(e.d.accounts[2]);
    let path = e.path("first", 2);

    let flood =
        path.preview("attack-feedback", &e.rate(strangers_agent, 16)).expect_err("sixteen in one plan");
    assert_eq!(flood.code, ErrorCode::Denied, "{flood}");
    assert!(flood.message.contains("reputation-guard") && flood.message.contains("16 feedbacks"), "{flood}");

    let permit = path.preview("attack-feedback", &e.rate(strangers_agent, 1)).expect("one feedback");
    let held = permit.confirmation.as_deref().expect("held for a person");
    assert!(held.contains("[safety.reputation]"), "{held}");
    let unconfirmed = path.commit(&permit.permit_id).expect_err("not confirmed");
    assert_eq!(unconfirmed.code, ErrorCode::ConfirmationRequired, "{unconfirmed}");
    assert_eq!(e.feedbacks_from(strangers_agent, wallet), 0, "nothing sent");
    path.confirm(&permit.permit_id, Channel::Cli, "operator").expect("a person confirms");
    path.commit(&permit.permit_id).expect("commit");
    assert_eq!(e.feedbacks_from(strangers_agent, wallet), 1, "on chain");

    // Another process of the same host: the ledger is shared.
    let other = e.path("second", 2);
    let second = other.preview("attack-feedback", &e.rate(strangers_agent, 1)).expect("the second of two");
    let third = path.preview("attack-feedback", &e.rate(strangers_agent, 1)).expect_err("the third");
    assert_eq!(third.code, ErrorCode::LimitExceeded, "{third}");
    assert!(third.message.contains("per_day = 2"), "{third}");
    other.cancel(&second.permit_id).expect("cancel");
    path.preview("attack-feedback", &e.rate(strangers_agent, 1))
        .expect("a cancelled one gives its place back");
}

/// The operator's own agent: the wallet may not rate it (the registry would refuse too), and
/// through a Safe — which the registry does not know as the owner — the Safe may not rate the
/// agent its signing key owns.
#[test]
fn the_operator_does_not_rate_its_own_agent_directly_or_through_its_safe() {
    let e = env(|node, d| devnet_host(&node.url(), d.uniswap_settings(), true, &[ATTACK]));
    let own = e.register(e.d.deployer);
    let refused = e.path("direct", 10).preview("attack-feedback", &e.rate(own, 1)).expect_err("self-rating");
    assert_eq!(refused.code, ErrorCode::Denied, "{refused}");
    assert!(refused.message.contains("self-rating"), "{refused}");

    let e = env(|node, d| {
        let settings = BTreeMap::from([("uniswap".to_owned(), d.uniswap_settings())]);
        let safe = bardo_test_support::safe::dev_safe(d, bardo_evm::SafeKey::Owner);
        bardo_test_support::safe::devnet_safe_host(
            &node.url(),
            bardo_devnet::DEV_KEY,
            safe,
            settings,
            &[ATTACK],
        )
    });
    let keys_agent = e.register(e.d.deployer);
    let strangers_agent = e.register(e.d.accounts[2]);
    let path = e.path("safe", 10);
    let refused =
        path.preview("attack-feedback", &e.rate(keys_agent, 1)).expect_err("the Safe rates its key's agent");
    assert_eq!(refused.code, ErrorCode::Denied, "{refused}");
    assert!(refused.message.contains("self-rating"), "{refused}");
    let permit = path.preview("attack-feedback", &e.rate(strangers_agent, 1)).expect("another's agent");
    assert_eq!(permit.sender, e.d.safe.dev_safe);
}
