//! `[signer] mode = "safe"` through the binary: the dev key writes through the devnet's dev
//! Safe, a swap is one Safe transaction paid from the Safe; a Safe configured by half is refused
//! at start with what to write.

use super::mcp::{Workspace, balanceOfCall, view};
use alloy::primitives::{Address, U256};

#[test]
fn a_swap_commits_through_the_safe_named_in_signer() {
    let (node, d) = bardo_test_support::devnet();
    let w = Workspace::trader(&node, &d);
    let config = std::fs::read_to_string(w.path().join("bardo.toml")).expect("config");
    let swap = r#"{"chain_id":31337,"token_in":"USDC","token_out":"WETH","amount":"100"}"#;

    // Half a Safe: refused before anything is read or sent, saying what is missing.
    std::fs::write(w.path().join("bardo.toml"), format!("{config}\n[signer]\nmode = \"safe\"\n"))
        .expect("config");
    let o = w.bardo(&["preview", "swap", "--params", swap]);
    let said = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && said.contains("needs safe ="), "{said}");

    let (safe, multi_send) = (d.safe.dev_safe, d.safe.multi_send_call_only);
    let signer = format!("\n[signer]\nmode = \"safe\"\nsafe = \"{safe}\"\nmulti_send = \"{multi_send}\"\n");
    std::fs::write(w.path().join("bardo.toml"), format!("{config}{signer}")).expect("config");
    let thousand = U256::from(1_000_000_000u64);
    bardo_test_support::safe::fund_dev_safe(&node.url(), &d, U256::ZERO, &[("USDC", thousand)]);
    let usdc = |who| view(&node.url(), d.tokens["USDC"].address, balanceOfCall { account: who });
    let key_before = usdc(d.deployer);

    let preview = w.bardo(&["preview", "swap", "--params", swap]);
    assert!(preview.status.success(), "{preview:?}");
    let permit: serde_json::Value = serde_json::from_slice(&preview.stdout).expect("json");
    assert_eq!(permit["sender"], serde_json::json!(safe), "the Safe is the wallet: {permit}");
    let commit = w.bardo(&["commit", permit["permit_id"].as_str().expect("id")]);
    assert!(commit.status.success(), "{commit:?}");
    let result: serde_json::Value = serde_json::from_slice(&commit.stdout).expect("json");
    assert_eq!(result["tx_hashes"].as_array().map(Vec::len), Some(1), "one Safe transaction: {result}");
    assert_eq!(thousand - usdc(safe), U256::from(100_000_000u64), "100 USDC paid by the Safe");
    assert_eq!(usdc(d.deployer), key_before, "the key's own USDC stays");
}

/// `bardo policy show` prints the caged Safe's rules as the chain holds them; `bardo policy
/// propose` prints a change for the owners, which the operator's own key executes — and then
/// `show` says the new rule and a new policy hash; `bardo audit --safe` sets the rules beside a
/// plugin's surface with what only the host checks.
#[test]
fn the_cage_is_shown_and_a_change_proposed_for_the_operator_to_execute() {
    use alloy::network::TransactionBuilder as _;
    use alloy::primitives::Bytes;
    use alloy::providers::{Provider, ProviderBuilder};
    let (node, d) = bardo_test_support::devnet();
    let w = Workspace::trader(&node, &d);
    let caged = d.cage.safe.to_string();
    let show = |json: bool| {
        let args: Vec<&str> =
            ["policy", "show", "--safe", &caged].into_iter().chain(json.then_some("--json")).collect();
        let o = w.bardo(&args);
        assert!(o.status.success(), "{o:?}");
        String::from_utf8(o.stdout).expect("utf-8")
    };
    let text = show(false);
    assert!(text.contains(&format!("PolicyCage {}", d.cage.cage)), "{text}");
    assert!(text.contains(&format!("changed only by the operator {}", d.cage.operator)), "{text}");
    assert!(text.contains("drawdown per transaction  300 bps"), "{text}");
    assert!(text.contains("at most 120 per 3600 s"), "{text}");
    assert!(text.contains("no fallback handler: the Safe validates no EIP-1271 signature"), "{text}");
    let before: serde_json::Value = serde_json::from_str(&show(true)).expect("json");
    assert_eq!(before["fallback_handler"], serde_json::json!(Address::ZERO), "{before}");
    // Each target's scope: the V3 router may move USDC, WETH and ether.
    let router = d.uniswap_v3["swap_router"];
    let scopes = before["rules"]["scopes"].as_array().expect("scopes");
    let scope = scopes.iter().find(|s| s[0] == serde_json::json!(router)).expect("the router's scope");
    let usdc = d.tokens["USDC"].address;
    assert!(scope[1].as_array().expect("assets").contains(&serde_json::json!(usdc)), "{scope}");
    assert!(text.contains(&format!("    {router} {usdc}, ")), "{text}");

    let o = w.bardo(&["policy", "propose", "--safe", &caged, "drawdown", "200", "1000"]);
    assert!(o.status.success(), "{o:?}");
    let proposal: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(proposal["to"], serde_json::json!(d.cage.cage), "{proposal}");
    assert_eq!(proposal["executor"], serde_json::json!(d.cage.operator), "{proposal}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("execTransaction"), "how to execute it");
    let unchanged: serde_json::Value = serde_json::from_str(&show(true)).expect("json");
    assert_eq!(unchanged, before, "nothing was sent");

    // The operator executes it with their own key (a signature of type 1: the sender).
    let data: Bytes = proposal["data"].as_str().expect("data").parse().expect("hex");
    let caged_wallet = bardo_test_support::safe::caged_safe(&d);
    let exec = caged_wallet.single(d.cage.operator, d.cage.cage, data, 0);
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url"));
    let tx = alloy::rpc::types::TransactionRequest::default()
        .from(d.cage.operator)
        .to(d.cage.safe)
        .with_input(exec.data);
    let receipt = bardo_test_support::runtime()
        .block_on(async { provider.send_transaction(tx).await?.get_receipt().await })
        .expect("executed");
    assert!(receipt.status(), "the operator's change");
    let text = show(false);
    assert!(text.contains("drawdown per transaction  200 bps"), "{text}");
    let after: serde_json::Value = serde_json::from_str(&show(true)).expect("json");
    assert_ne!(after["policy_hash"], before["policy_hash"], "a new policy hash");

    let audit = w.bardo(&["audit", bardo_test_artifacts::UNISWAP, "--safe", &caged]);
    let said = String::from_utf8_lossy(&audit.stdout);
    assert!(audit.status.success() && said.contains("only the host checks"), "{audit:?}");
    assert!(said.contains("drawdown per transaction  200 bps"), "{said}");
}
