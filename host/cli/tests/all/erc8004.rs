//! The devnet's ERC-8004 registries against agent0-sdk, an ERC-8004 client nobody here wrote:
//! it registers an agent, moves its verified wallet, gives, reads and revokes feedback, and
//! requests and answers a validation; every value it reads back is held against the chain read
//! here with the ERC's own ABI, and the registries' refusals are checked on the contracts
//! themselves, not through the SDK's checks. Then the identity plugin reads the same agent:
//! identity → agentURI → registration file → services → card.

use super::mcp::{Workspace, clients, view};
use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, B256, address};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_test_support::{devnet, runtime};
use serde_json::Value;

sol! {
    function ownerOf(uint256 tokenId) external view returns (address);
    function tokenURI(uint256 tokenId) external view returns (string);
    function getAgentWallet(uint256 agentId) external view returns (address);
    function getMetadata(uint256 agentId, string metadataKey) external view returns (bytes);
    function setMetadata(uint256 agentId, string metadataKey, bytes metadataValue) external;
    function getIdentityRegistry() external view returns (address);
    function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex) external view
        returns (int128 value, uint8 valueDecimals, string tag1, string tag2, bool isRevoked);
    function getLastIndex(uint256 agentId, address clientAddress) external view returns (uint64);
    function getClients(uint256 agentId) external view returns (address[]);
    function getSummary(uint256 agentId, address[] clientAddresses, string tag1, string tag2) external view
        returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals);
    function giveFeedback(uint256 agentId, int128 value, uint8 valueDecimals, string tag1, string tag2,
        string endpoint, string feedbackURI, bytes32 feedbackHash) external;
    function getValidationStatus(bytes32 requestHash) external view returns (address validatorAddress,
        uint256 agentId, uint8 response, bytes32 responseHash, string tag, uint256 lastUpdate);
    function validationResponse(bytes32 requestHash, uint8 response, string responseURI, bytes32 responseHash,
        string tag) external;
    function validationRequest(address validatorAddress, uint256 agentId, string requestURI, bytes32 requestHash)
        external;
}

/// anvil's dev accounts 1-4: the agent's owner, a client, a validator, the agent's new wallet.
const OWNER: (&str, Address) = (
    "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
    address!("0x70997970C51812dc3A010C7d01b50e0d17dc79C8"),
);
const CLIENT: (&str, Address) = (
    "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
    address!("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"),
);
const VALIDATOR: (&str, Address) = (
    "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
    address!("0x90F79bf6EB2c4f870365E785982E1f101E93b906"),
);
const WALLET: (&str, Address) = (
    "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
    address!("0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65"),
);

/// agent0-sdk's environment; its absence fails the test (never a silent skip).
fn python() -> std::path::PathBuf {
    let p = clients().join(".venv-erc8004/bin/python");
    assert!(p.exists(), "{} is missing: run scripts/setup.sh (or `make setup`)", p.display());
    p
}

/// The revert reason of `call` sent by `from`, simulated on the node (an eth_call).
fn refused<C: SolCall>(url: &str, from: Address, to: Address, call: C) -> String {
    let provider = ProviderBuilder::new().connect_http(url.parse().expect("url"));
    let tx = TransactionRequest::default().from(from).to(to).with_input(call.abi_encode());
    match runtime().block_on(provider.call(tx).into_future()) {
        Ok(out) => panic!("the registry accepted it: {out}"),
        Err(e) => e.to_string(),
    }
}

/// Send `call` from the unlocked dev account `from`; it must succeed.
fn send<C: SolCall>(url: &str, from: Address, to: Address, call: C) {
    let provider = ProviderBuilder::new().connect_http(url.parse().expect("url"));
    let tx = TransactionRequest::default().from(from).to(to).with_input(call.abi_encode());
    let rt = runtime();
    let pending = rt.block_on(provider.send_transaction(tx)).expect("send");
    assert!(rt.block_on(pending.get_receipt()).expect("receipt").status(), "{}", C::SIGNATURE);
}

#[test]
fn agent0_sdk_registers_rates_and_validates_on_the_devnets_registries() {
    let (node, d) = devnet();
    let r = d.erc8004;
    let url = node.url();
    assert_eq!(view(&url, r.reputation, getIdentityRegistryCall {}), r.identity);
    assert_eq!(view(&url, r.validation, getIdentityRegistryCall {}), r.identity);
    let card = "http://127.0.0.1:8080/.well-known/agent-card.json";
    let out = std::process::Command::new(python())
        .arg(clients().join("erc8004_client.py"))
        .args(["--rpc", &url, "--card", card])
        .args(["--identity", &r.identity.to_string(), "--reputation", &r.reputation.to_string()])
        .args(["--validation", &r.validation.to_string()])
        .args(["--owner-key", OWNER.0, "--client-key", CLIENT.0])
        .args(["--validator-key", VALIDATOR.0, "--wallet-key", WALLET.0])
        .output()
        .expect("run agent0-sdk");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let read: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");

    // Identity: the SDK's agent is the chain's token 1, owned by its signer, its registration
    // file on-chain naming the A2A card; the wallet verified by the new wallet's signature.
    assert_eq!(read["agent_id"], "31337:1", "{read}");
    let id = alloy::primitives::U256::from(1u8);
    assert_eq!(view(&url, r.identity, ownerOfCall { tokenId: id }), OWNER.1);
    assert_eq!(read["loaded"]["owner"], OWNER.1.to_checksum(None), "{read}");
    assert_eq!(read["loaded"]["a2a"], card, "{read}");
    assert_eq!(read["loaded"]["uri_is_data"], true, "{read}");
    let uri = view(&url, r.identity, tokenURICall { tokenId: id });
    assert!(uri.starts_with("data:application/json;base64,"), "{uri}");
    assert_eq!(read["loaded"]["wallet"], OWNER.1.to_checksum(None), "the wallet starts as the owner");
    assert_eq!(view(&url, r.identity, getAgentWalletCall { agentId: id }), WALLET.1);
    assert_eq!(read["wallet_after_set"], WALLET.1.to_checksum(None), "{read}");
    let stored = view(&url, r.identity, getMetadataCall { agentId: id, metadataKey: "agentWallet".into() });
    assert_eq!(stored.as_ref(), WALLET.1.as_slice(), "agentWallet is the reserved metadata key");

    // Reputation: what the SDK read is what the registry stores.
    assert_eq!(read["feedback"][0]["value"], 87.0, "{read}");
    assert_eq!(read["feedback"][0]["tags"], serde_json::json!(["starred", "week"]), "{read}");
    assert_eq!(read["feedback"][1]["value"], 99.77, "{read}");
    let second =
        view(&url, r.reputation, readFeedbackCall { agentId: id, clientAddress: CLIENT.1, feedbackIndex: 2 });
    assert_eq!((second.value, second.valueDecimals, second.tag1.as_str()), (9977, 2, "uptime"));
    assert!(!second.isRevoked);
    assert_eq!(read["revoked_first"], true, "{read}");
    let first =
        view(&url, r.reputation, readFeedbackCall { agentId: id, clientAddress: CLIENT.1, feedbackIndex: 1 });
    assert!(first.isRevoked && first.value == 87, "revoked, and still readable");
    assert_eq!(view(&url, r.reputation, getLastIndexCall { agentId: id, clientAddress: CLIENT.1 }), 2);
    assert_eq!(
        view(&url, r.reputation, getClientsCall { agentId: id }),
        vec![CLIENT.1],
        "the owner's feedback did not land"
    );
    assert!(read["owner_feedback"].as_str().expect("said").starts_with("refused"), "{read}");
    // The unrevoked 99.77, with 18 decimals.
    let summary = view(
        &url,
        r.reputation,
        getSummaryCall {
            agentId: id,
            clientAddresses: vec![CLIENT.1],
            tag1: String::new(),
            tag2: String::new(),
        },
    );
    assert_eq!((summary.count, summary.summaryValueDecimals), (1, 18));
    assert_eq!(summary.summaryValue, 99_770_000_000_000_000_000i128);

    // Validation: the request and the validator's answer, as the ERC's getValidationStatus has them.
    let hash: B256 = read["validation"]["request_hash"].as_str().expect("hash").parse().expect("hash");
    assert_eq!(read["validation"]["hashes"], serde_json::json!([hash.to_string()]), "{read}");
    assert_eq!(
        (read["validation"]["count"].as_u64(), read["validation"]["average"].as_u64()),
        (Some(1), Some(100))
    );
    let status = view(&url, r.validation, getValidationStatusCall { requestHash: hash });
    assert_eq!((status.validatorAddress, status.agentId, status.response), (VALIDATOR.1, id, 100));
    assert_eq!(status.tag, "soft");
    assert!(status.lastUpdate > alloy::primitives::U256::ZERO);

    // The registries' own refusals, whatever a client checks first.
    let e = refused(
        &url,
        OWNER.1,
        r.reputation,
        giveFeedbackCall {
            agentId: id,
            value: 100,
            valueDecimals: 0,
            tag1: String::new(),
            tag2: String::new(),
            endpoint: String::new(),
            feedbackURI: String::new(),
            feedbackHash: B256::ZERO,
        },
    );
    assert!(e.contains("owner cannot rate"), "{e}");
    let e = refused(
        &url,
        CLIENT.1,
        r.reputation,
        giveFeedbackCall {
            agentId: id,
            value: 1,
            valueDecimals: 19,
            tag1: String::new(),
            tag2: String::new(),
            endpoint: String::new(),
            feedbackURI: String::new(),
            feedbackHash: B256::ZERO,
        },
    );
    assert!(e.contains("valueDecimals"), "{e}");
    let reserved = setMetadataCall {
        agentId: id,
        metadataKey: "agentWallet".into(),
        metadataValue: CLIENT.1.to_vec().into(),
    };
    assert!(refused(&url, OWNER.1, r.identity, reserved).contains("reserved"));
    let not_owner =
        setMetadataCall { agentId: id, metadataKey: "agentName".into(), metadataValue: b"x".to_vec().into() };
    assert!(refused(&url, CLIENT.1, r.identity, not_owner).contains("not the agent's owner"));
    let answer = validationResponseCall {
        requestHash: hash,
        response: 0,
        responseURI: String::new(),
        responseHash: B256::ZERO,
        tag: String::new(),
    };
    assert!(refused(&url, CLIENT.1, r.validation, answer).contains("not the request's validator"));

    identity_plugin_reads_what_agent0_wrote(&node, &d, card, hash);
    host_writes_what_agent0_reads(&node, &d);
}

/// The identity plugin, under the `erc8004` profile, over the agent agent0-sdk registered.
fn identity_plugin_reads_what_agent0_wrote(
    node: &bardo_devnet::Anvil,
    d: &bardo_devnet::deploy::Deployments,
    card: &str,
    hash: B256,
) {
    let extra = format!(
        "[chains.31337]\nrpc = \"{}\"\nhead_ttl_ms = 0\n[settings]\nidentity = \"identity.json\"\n",
        node.url()
    );
    let w = Workspace::new("erc8004", &[("identity.wasm", bardo_test_artifacts::IDENTITY)], &extra);
    std::fs::write(w.path().join("identity.json"), d.identity_settings().to_string()).expect("settings");
    let call = |tool: &str, params: serde_json::Value| -> Value {
        let o = w.bardo(&["call", tool, "--params", &params.to_string()]);
        assert!(o.status.success(), "{tool}: {o:?}");
        serde_json::from_slice(&o.stdout).expect("json")
    };
    let tools = w.bardo(&["tools", "--json"]);
    let listed: Value = serde_json::from_slice(&tools.stdout).expect("json");
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["tool"]["name"].as_str())
        .collect();
    for tool in [
        "identity_get_agent",
        "identity_search_agents",
        "identity_verify_agent",
        "identity_get_reputation",
        "identity_get_validations",
    ] {
        assert!(names.contains(&tool), "the erc8004 profile lists {tool}: {names:?}");
    }

    let agent = call(
        "identity_get_agent",
        serde_json::json!({"chain_id": 31337, "agent_id": 1, "metadata_keys": ["agentWallet"]}),
    );
    assert_eq!(agent["owner"], OWNER.1.to_checksum(None), "{agent}");
    assert_eq!(agent["agent_wallet"], WALLET.1.to_checksum(None), "{agent}");
    assert_eq!(
        agent["metadata"][0]["hex"],
        format!("0x{}", alloy::primitives::hex::encode(WALLET.1)),
        "{agent}"
    );
    assert_eq!(agent["registration"]["name"], "bardo-devnet", "{agent}");
    assert_eq!(agent["registration"]["type"], "https://eips.ethereum.org/EIPS/eip-8004#registration-v1");
    let a2a = agent["services"].as_array().expect("services").iter().find(|s| s["name"] == "A2A").cloned();
    assert_eq!(a2a.expect("an A2A service")["endpoint"], card, "{agent}");

    // One direction is not a verification: the card must name the agent back.
    let one_way = call(
        "identity_verify_agent",
        serde_json::json!({"chain_id": 31337, "agent_id": 1, "card_url": card}),
    );
    assert_eq!(
        (&one_way["verified"], &one_way["names_card"]),
        (&Value::Bool(false), &Value::Bool(true)),
        "{one_way}"
    );
    assert!(one_way["reason"].as_str().expect("reason").contains("only one direction"), "{one_way}");
    let registry = format!("eip155:31337:{}", d.erc8004.identity.to_checksum(None));
    let card_naming = |id: u64| {
        serde_json::json!({"name": "bardo-devnet", "capabilities": {"extensions": [{
            "uri": "https://eips.ethereum.org/EIPS/eip-8004", "params": {"agentRegistry": registry, "agentId": id}}]}})
    };
    let verified = call(
        "identity_verify_agent",
        serde_json::json!({"chain_id": 31337, "agent_id": 1, "card_url": card, "card": card_naming(1)}),
    );
    assert_eq!(verified["verified"], true, "{verified}");
    assert_eq!(
        verified["path"].as_array().expect("path").len(),
        6,
        "identity, URI, file, services, card, back to the identity: {verified}"
    );
    // The card of another agent (an impersonator's registration naming it): not verified.
    let theirs = call(
        "identity_verify_agent",
        serde_json::json!({"chain_id": 31337, "agent_id": 1, "card_url": card, "card": card_naming(2)}),
    );
    assert_eq!(theirs["verified"], false, "{theirs}");
    assert!(theirs["reason"].as_str().expect("reason").contains("another identity"), "{theirs}");
    let other = "https://elsewhere.example/.well-known/agent-card.json";
    let refused = call(
        "identity_verify_agent",
        serde_json::json!({"chain_id": 31337, "agent_id": 1, "card_url": other}),
    );
    assert_eq!(refused["verified"], false, "{refused}");
    assert!(refused["reason"].as_str().expect("reason").contains(card), "names the card it has: {refused}");
    let o = w.bardo(&["call", "identity_get_agent", "--params", r#"{"chain_id":31337,"agent_id":99}"#]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stdout).contains("not registered"), "{o:?}");

    let found = call(
        "identity_search_agents",
        serde_json::json!({"chain_id": 31337, "service": "a2a", "name": "BARDO"}),
    );
    assert_eq!(found["agents"][0]["agent_id"], 1, "{found}");
    assert_eq!(found["scanned"], 1, "{found}");
    let none = call("identity_search_agents", serde_json::json!({"chain_id": 31337, "name": "nobody"}));
    assert_eq!(none["agents"], serde_json::json!([]), "{none}");

    let client = CLIENT.1.to_checksum(None);
    let rep = call(
        "identity_get_reputation",
        serde_json::json!({"chain_id": 31337, "agent_id": 1, "clients": [client]}),
    );
    assert_eq!((rep["count"].as_u64(), rep["mean"].as_str()), (Some(1), Some("99.77")), "{rep}");
    assert_eq!(rep["feedback"].as_array().expect("feedback").len(), 1, "the revoked one is left out: {rep}");
    let all = call(
        "identity_get_reputation",
        serde_json::json!({"chain_id": 31337, "agent_id": 1, "include_revoked": true}),
    );
    assert_eq!(all["feedback"][0]["value"], "87", "{all}");
    assert_eq!(all["feedback"][0]["revoked"], true, "{all}");
    assert_eq!(all["clients_named"], false, "{all}");

    let v = call("identity_get_validations", serde_json::json!({"chain_id": 31337, "agent_id": 1}));
    assert_eq!((v["answered"].as_u64(), v["mean_response"].as_u64()), (Some(1), Some(100)), "{v}");
    assert_eq!(v["validations"][0]["request_hash"], hash.to_string(), "{v}");
    assert_eq!(v["validations"][0]["validator"], VALIDATOR.1.to_checksum(None), "{v}");
    assert_eq!(v["validations"][0]["tag"], "soft", "{v}");
}

/// A trader workspace (the devnet's allowlist, which lists the registries by role) with the
/// identity plugin and its settings.
pub(super) fn identity_workspace(
    node: &bardo_devnet::Anvil,
    d: &bardo_devnet::deploy::Deployments,
) -> Workspace {
    let w = Workspace::trader(node, d);
    std::fs::copy(bardo_test_artifacts::IDENTITY, w.path().join("plugins/identity.wasm")).expect("plugin");
    std::fs::write(w.path().join("identity.json"), d.identity_settings().to_string()).expect("settings");
    let config = std::fs::read_to_string(w.path().join("bardo.toml")).expect("config");
    let config = config.replace("[settings]\n", "[settings]\nidentity = \"identity.json\"\n");
    std::fs::write(w.path().join("bardo.toml"), config).expect("config");
    w
}

/// agent0-sdk reading what the host wrote (`--read-agent` mode).
pub(super) fn agent0_reads(
    node: &bardo_devnet::Anvil,
    d: &bardo_devnet::deploy::Deployments,
    args: &[&str],
) -> Value {
    let r = d.erc8004;
    let out = std::process::Command::new(python())
        .arg(clients().join("erc8004_client.py"))
        .args(["--rpc", &node.url()])
        .args(["--identity", &r.identity.to_string(), "--reputation", &r.reputation.to_string()])
        .args(["--validation", &r.validation.to_string()])
        .args(args)
        .output()
        .expect("run agent0-sdk");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// The identity plugin's writes through the host's write path (the wallet: the devnet's
/// deployer), each read back by agent0-sdk or the chain: register, replace the registration
/// file, rate another's agent (not its own), request and answer a validation.
fn host_writes_what_agent0_reads(node: &bardo_devnet::Anvil, d: &bardo_devnet::deploy::Deployments) {
    let w = identity_workspace(node, d);
    // Three feedbacks and validations a day: each `bardo` below is its own process.
    let config = std::fs::read_to_string(w.path().join("bardo.toml")).expect("config");
    std::fs::write(w.path().join("bardo.toml"), format!("{config}\n[safety.reputation]\nper_day = 3\n"))
        .expect("config");
    let preview = |kind: &str, params: &Value| -> Value {
        let o = w.bardo(&["preview", kind, "--profile", "erc8004", "--params", &params.to_string()]);
        serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{kind}: {o:?}"))
    };
    let commit_id = |kind: &str, id: &str| -> Value {
        let o = w.bardo(&["commit", id, "--profile", "erc8004"]);
        assert!(o.status.success(), "{kind}: {o:?}");
        serde_json::from_slice(&o.stdout).expect("outcome")
    };
    let commit = |kind: &str, params: Value| -> Value {
        let permit = preview(kind, &params);
        let id = permit["permit_id"].as_str().unwrap_or_else(|| panic!("{kind}: {permit}"));
        commit_id(kind, id)
    };
    // Feedback and validation speak for the operator: each waits for `bardo confirm`.
    let confirmed = |kind: &str, params: Value| -> Value {
        let permit = preview(kind, &params);
        let id = permit["permit_id"].as_str().unwrap_or_else(|| panic!("{kind}: {permit}"));
        assert!(
            permit["confirmation"].as_str().is_some_and(|c| c.contains("[safety.reputation]")),
            "{permit}"
        );
        let o = w.bardo(&["commit", id, "--profile", "erc8004"]);
        let said: Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(said["error"]["code"], "confirmation-required", "{kind}: {said}");
        let o = w.bardo(&["confirm", id]);
        assert!(o.status.success(), "{kind}: {o:?}");
        commit_id(kind, id)
    };
    let call = |tool: &str, params: Value| -> Value {
        let o = w.bardo(&["call", tool, "--profile", "erc8004", "--params", &params.to_string()]);
        assert!(o.status.success(), "{tool}: {o:?}");
        serde_json::from_slice(&o.stdout).expect("json")
    };
    let me = d.deployer;
    let card = "http://127.0.0.1:9090/.well-known/agent-card.json";
    let done = commit(
        "identity-register",
        serde_json::json!({"chain_id": 31337, "registration": {"name": "bardo-host", "description": "Bardo over A2A",
            "a2a_card": card}, "metadata": {"agentName": "bardo.eth"}}),
    );
    let text = done.to_string();
    assert!(text.contains("\"agent_id\":\"2\""), "agent0's was 1, the host's is 2: {text}");
    assert_eq!(
        view(&node.url(), d.erc8004.identity, ownerOfCall { tokenId: alloy::primitives::U256::from(2) }),
        me
    );
    let read = agent0_reads(node, d, &["--read-agent", "2"]);
    assert_eq!(read["agent"]["name"], "bardo-host", "{read}");
    assert_eq!(read["agent"]["a2a"], card, "{read}");
    assert_eq!(read["agent"]["owner"], me.to_checksum(None), "{read}");
    assert_eq!(read["agent"]["wallet"], me.to_checksum(None), "the wallet verified from the start: {read}");

    // A plan that repoints the agent at another card — any plugin's, the identity plugin's too —
    // is refused: what an identity says is the operator's to change.
    let moved = "http://127.0.0.1:9091/.well-known/agent-card.json";
    let params = serde_json::json!({"chain_id": 31337, "agent_id": 2, "registration": {"name": "bardo-host",
        "description": "Bardo over A2A, moved", "a2a_card": moved}});
    let o =
        w.bardo(&["preview", "identity-set-uri", "--profile", "erc8004", "--params", &params.to_string()]);
    let refused: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(refused["error"]["code"], "denied", "{refused}");
    let message = refused["error"]["message"].as_str().expect("message");
    assert!(message.contains("setAgentURI") && message.contains("bardo identity set-uri"), "{message}");
    assert_eq!(agent0_reads(node, d, &["--read-agent", "2"])["agent"]["a2a"], card, "unchanged");
    // The operator's command: a new registration file, naming its own registration this time.
    let o = w.bardo(&[
        "identity",
        "set-uri",
        "--agent-id",
        "2",
        "--card-url",
        moved,
        "--name",
        "bardo-host",
        "--description",
        "Bardo over A2A, moved",
    ]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(agent0_reads(node, d, &["--read-agent", "2"])["agent"]["a2a"], moved);
    let v = call(
        "identity_verify_agent",
        serde_json::json!({"chain_id": 31337, "agent_id": 2, "card_url": moved}),
    );
    assert_eq!(v["names_card"], true, "{v}");
    let old = call(
        "identity_verify_agent",
        serde_json::json!({"chain_id": 31337, "agent_id": 2, "card_url": card}),
    );
    assert_eq!(old["names_card"], false, "{old}");

    // Feedback on agent0's agent, read back by agent0; the host's own agent it may not rate.
    confirmed(
        "identity-feedback",
        serde_json::json!({"chain_id": 31337, "agent_id": 1, "value": "4.5", "tag1": "starred"}),
    );
    let me_text = me.to_checksum(None);
    let read = agent0_reads(
        node,
        d,
        &[
            "--read-agent",
            "1",
            "--feedback-agent",
            "1",
            "--feedback-client",
            &me_text,
            "--feedback-index",
            "1",
        ],
    );
    assert_eq!(read["feedback"]["value"], 4.5, "{read}");
    assert_eq!(read["feedback"]["tags"], serde_json::json!(["starred"]), "{read}");
    let own = serde_json::json!({"chain_id": 31337, "agent_id": 2, "value": "100"}).to_string();
    let o = w.bardo(&["preview", "identity-feedback", "--profile", "erc8004", "--params", &own]);
    let said = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && said.contains("cannot rate"), "{said}");

    // The wallet validating its own agent, asked through the plugin: refused.
    let own_validation = serde_json::json!({"chain_id": 31337, "agent_id": 2, "validator": me_text,
        "request_uri": "data:,swap 42"});
    let refused = preview("identity-validation-request", &own_validation);
    assert_eq!(refused["error"]["code"], "denied", "{refused}");
    assert!(refused["error"]["message"].as_str().expect("message").contains("self-validation"), "{refused}");
    // An independent validator for the host's agent: asked (confirmed), answered by the validator.
    let validator = VALIDATOR.1.to_checksum(None);
    let asked = confirmed(
        "identity-validation-request",
        serde_json::json!({"chain_id": 31337, "agent_id": 2, "validator": validator, "request_uri": "data:,swap 42"}),
    );
    let hash = asked.to_string();
    let hash: B256 =
        hash[hash.find("\"request_hash\":\"").expect("hash") + 16..][..66].parse().expect("hash");
    let answer = validationResponseCall {
        requestHash: hash,
        response: 90,
        responseURI: String::new(),
        responseHash: B256::ZERO,
        tag: "hard".into(),
    };
    send(&node.url(), VALIDATOR.1, d.erc8004.validation, answer);
    // A request sent by `from` outside the host asking the wallet to validate `agent`.
    let ask_me = |from: Address, agent: u64, hash: B256| {
        let request = validationRequestCall {
            validatorAddress: me,
            agentId: alloy::primitives::U256::from(agent),
            requestURI: format!("data:,{agent}"),
            requestHash: hash,
        };
        send(&node.url(), from, d.erc8004.validation, request);
    };
    // The wallet's own, naming itself: the host will not answer it.
    let own_hash = B256::repeat_byte(0x42);
    ask_me(me, 2, own_hash);
    let params =
        serde_json::json!({"chain_id": 31337, "request_hash": own_hash.to_string(), "response": 100});
    let refused = preview("identity-validation-response", &params);
    assert_eq!(refused["error"]["code"], "denied", "{refused}");
    assert!(refused["error"]["message"].as_str().expect("message").contains("self-validation"), "{refused}");
    // agent0's owner asks the wallet to validate agent 1: the host answers (confirmed), the
    // third of the day's three; a fourth is refused until tomorrow.
    let theirs = B256::repeat_byte(0x17);
    ask_me(OWNER.1, 1, theirs);
    confirmed(
        "identity-validation-response",
        serde_json::json!({"chain_id": 31337, "request_hash": theirs.to_string(), "response": 80, "tag": "soft"}),
    );
    let fourth = preview(
        "identity-feedback",
        &serde_json::json!({"chain_id": 31337, "agent_id": 1, "value": "5", "tag1": "starred"}),
    );
    assert_eq!(fourth["error"]["code"], "limit-exceeded", "{fourth}");
    assert!(fourth["error"]["message"].as_str().expect("message").contains("per_day = 3"), "{fourth}");
    let v = call("identity_get_validations", serde_json::json!({"chain_id": 31337, "agent_id": 2}));
    assert_eq!((v["answered"].as_u64(), v["mean_response"].as_u64()), (Some(1), Some(90)), "{v}");
    assert_eq!(v["validations"][0]["tag"], "hard", "{v}");
}
