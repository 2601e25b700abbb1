//! Confirmation by policy over MCP, with the official Python SDK's client. By default an MCP
//! client's answer does not count (the client may be the agent): a commit held by the policy is
//! told to wait for the operator and nothing is asked. Where the operator opts in
//! (`[safety.confirm] via` names `mcp-elicitation`), a `commit_action` asks the client's user
//! through elicitation — a decline sends nothing and cancels the permit, an accept commits — and a
//! client that cannot elicit is told to confirm elsewhere (`bardo confirm`), after which its
//! commit goes through.

use super::mcp::{Workspace, one, tool_error, view};
use alloy::primitives::U256;
use bardo_devnet::CHAIN_ID;
use bardo_test_support::devnet;
use serde_json::json;

alloy::sol! {
    function balanceOf(address account) external view returns (uint256);
}

#[test]
fn an_mcp_clients_own_answer_confirms_nothing_unless_the_operator_opts_in() {
    let (node, d) = devnet();
    let w = Workspace::trader_with(&node, &d, "confirm = \"always\"");
    let server = w.server(&[]);
    let usdc = || view(&node.url(), d.tokens["USDC"].address, balanceOfCall { account: d.deployer });
    let swap =
        json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "100"}).to_string();
    let before = usdc();
    let itself = one(&["confirm", "--answer", "accept", "--args", &swap], &server);
    let e = tool_error(&itself["commit"]);
    assert_eq!((e["code"].as_str(), e["retryable"].as_bool()), (Some("confirmation-required"), Some(true)));
    let message = e["message"].as_str().expect("message");
    for hint in ["confirm = \"always\"", "[safety.confirm] via", "bardo confirm", "bardo tui"] {
        assert!(message.contains(hint), "{hint} in {message}");
    }
    assert_eq!(itself["asked"], json!([]), "the client was not asked");
    assert_eq!(usdc(), before, "nothing was sent");
    assert!(!w.audit().iter().any(|e| e["type"] == "PermitConfirmed"));

    // The operator confirms it from the shell, as who they are; the agent's commit goes through.
    let permit = itself["preview"]["permit_id"].as_str().expect("permit id");
    let confirmed = w.bardo(&["confirm", permit]);
    assert!(confirmed.status.success(), "{}", String::from_utf8_lossy(&confirmed.stderr));
    let args = json!({"permit_id": permit}).to_string();
    let commit = one(&["call", "--tool", "commit_action", "--args", &args], &server);
    assert_eq!(commit["isError"], false, "{commit}");
    assert_eq!(before - usdc(), U256::from(100_000_000u64));
    let events = w.audit();
    let on_record = events
        .iter()
        .find(|e| e["type"] == "PermitConfirmed" && e["permit_id"] == permit)
        .expect("the confirmation is audited");
    assert_eq!(on_record["channel"], "cli", "{on_record}");
    assert!(
        on_record["by"].as_str().is_some_and(|b| b.starts_with("operator (bardo confirm, uid ")),
        "{on_record}"
    );
}

#[test]
fn opted_in_the_python_client_is_asked_before_a_commit_declines_then_accepts_and_one_that_cannot_elicit_is_told_what_to_do()
 {
    let (node, d) = devnet();
    let opt_in = "[safety.confirm]\ndefault = \"always\"\nvia = [\"cli\", \"tui\", \"mcp-elicitation\"]";
    let w = Workspace::trader_with(&node, &d, opt_in);
    let server = w.server(&[]);
    let usdc = || view(&node.url(), d.tokens["USDC"].address, balanceOfCall { account: d.deployer });
    let swap =
        json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "100"}).to_string();

    // Declined: nothing sent, the permit cancelled, the decline audited.
    let before = usdc();
    let declined = one(&["confirm", "--answer", "decline", "--args", &swap], &server);
    let e = tool_error(&declined["commit"]);
    assert_eq!(e["code"], "denied", "{declined}");
    assert!(e["message"].as_str().expect("message").contains("declined"), "{declined}");
    assert_eq!(usdc(), before, "nothing was sent");
    let asked = &declined["asked"][0];
    let message = asked["message"].as_str().expect("the summary");
    for shown in ["Confirm `swap`", "-100 USDC", "USD", "risk", "expires in", "confirm = \"always\""] {
        assert!(message.contains(shown), "{shown} in {message}");
    }
    assert_eq!(asked["schema"]["properties"]["confirm"]["type"], "boolean", "{asked}");
    assert_eq!(asked["schema"]["required"], json!(["confirm"]), "{asked}");
    let permit = declined["preview"]["permit_id"].as_str().expect("permit id");
    let events = w.audit();
    assert!(
        events.iter().any(|e| e["type"] == "ConfirmationDeclined"
            && e["permit_id"] == permit
            && e["by"] == "mcp elicitation"
            && e["timed_out"] == false),
        "{events:?}"
    );
    assert!(events.iter().any(|e| e["type"] == "PermitCancelled" && e["permit_id"] == permit));

    // Answered with `confirm: false`: the same as a decline.
    let no = one(&["confirm", "--answer", "confirm-false", "--args", &swap], &server);
    assert_eq!(tool_error(&no["commit"])["code"], "denied", "{no}");
    assert_eq!(usdc(), before);

    // Accepted: committed, the confirmation audited.
    let accepted = one(&["confirm", "--answer", "accept", "--args", &swap], &server);
    assert_eq!(accepted["commit"]["isError"], false, "{accepted}");
    assert_eq!(accepted["commit"]["structured"]["tx_hashes"].as_array().map(Vec::len), Some(3), "{accepted}");
    assert_eq!(before - usdc(), U256::from(100_000_000u64), "100 USDC paid");
    let permit = accepted["preview"]["permit_id"].as_str().expect("permit id");
    assert!(w.audit().iter().any(|e| e["type"] == "PermitConfirmed"
        && e["permit_id"] == permit
        && e["channel"] == "mcp-elicitation"
        && e["by"].as_str().is_some_and(|b| b.starts_with("mcp client "))));

    // A client without the elicitation capability: told why and what to do, nothing sent.
    let paid = usdc();
    let cannot = one(&["confirm", "--answer", "none", "--args", &swap], &server);
    let e = tool_error(&cannot["commit"]);
    assert_eq!(e["code"], "confirmation-required", "{cannot}");
    assert_eq!(e["retryable"], true, "{cannot}");
    let message = e["message"].as_str().expect("message");
    for hint in ["confirm = \"always\"", "elicitation", "bardo tui", "bardo confirm"] {
        assert!(message.contains(hint), "{hint} in {message}");
    }
    assert_eq!(cannot["asked"], json!([]), "it was not asked");
    assert_eq!(usdc(), paid);
    // The operator confirms it from the shell; the same client's commit then goes through.
    let permit = cannot["preview"]["permit_id"].as_str().expect("permit id");
    let confirmed = w.bardo(&["confirm", permit]);
    assert!(confirmed.status.success(), "{}", String::from_utf8_lossy(&confirmed.stderr));
    let args = json!({"permit_id": permit}).to_string();
    let commit = one(&["call", "--tool", "commit_action", "--args", &args], &server);
    assert_eq!(commit["isError"], false, "{commit}");
    assert_eq!(paid - usdc(), U256::from(100_000_000u64));
    assert!(
        w.audit()
            .iter()
            .any(|e| e["type"] == "PermitConfirmed" && e["permit_id"] == permit && e["channel"] == "cli")
    );
}
