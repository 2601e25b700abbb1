//! `[signer] mode = "safe"` through the binary: the dev key writes through the devnet's dev
//! Safe, a swap is one Safe transaction paid from the Safe; a Safe configured by half is refused
//! at start with what to write.

use super::mcp::{Workspace, balanceOfCall, view};
use alloy::primitives::U256;

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
