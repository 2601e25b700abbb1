//! `bardo:host/chain` against a real anvil: every function's answer equals a direct RPC call;
//! faults a real node cannot produce (down, silent, malformed) come from tiny local servers.

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, Bytes, U256};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::{SolCall, SolValue};
use bardo_core::{ErrorCode, ToolError};
use bardo_devnet::{CHAIN_ID, DEV_ACCOUNT};
use bardo_test_artifacts::{CHAIN_READER, HELLO};
use bardo_test_support::{anvil, host_on, root, runtime, send};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

sol! {
    function balanceOf(address account) external view returns (uint256);
    function mint(address to, uint256 amount) external;
}

/// Deploy OpenZeppelin's ERC20PresetMinterPauser from its published artifact and mint to the
/// dev account; returns the token.
async fn deploy_token(url: &str, minted: U256) -> Address {
    let provider = ProviderBuilder::new().connect_http(url.parse().expect("url"));
    let path = root()
        .join("devnet/node_modules/@openzeppelin/contracts/build/contracts/ERC20PresetMinterPauser.json");
    let artifact: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("artifact")).expect("json");
    let mut code = alloy::hex::decode(artifact["bytecode"].as_str().expect("bytecode")).expect("hex");
    code.extend(("Test USD".to_owned(), "TUSD".to_owned()).abi_encode_params());
    let dev: Address = DEV_ACCOUNT.parse().expect("address");
    let tx = TransactionRequest::default().from(dev).with_deploy_code(Bytes::from(code));
    let receipt = send(&provider, tx).await;
    let token = receipt.contract_address.expect("created");
    let call = mintCall { to: dev, amount: minted }.abi_encode();
    let tx = TransactionRequest::default().from(dev).to(token).with_input(call);
    send(&provider, tx).await;
    token
}

#[test]
fn every_chain_function_matches_a_direct_rpc_call() {
    let node = anvil();
    let rt = runtime();
    let minted = U256::from(1_234_567_890u64);
    let token = rt.block_on(deploy_token(&node.url(), minted));
    let host = host_on(&node.url(), &[CHAIN_READER]);
    let params =
        serde_json::json!({"chain_id": CHAIN_ID, "token": token.to_string(), "account": DEV_ACCOUNT})
            .to_string();
    let r = host.call("reader_snapshot", &params);
    let got: serde_json::Value = serde_json::from_str(&r.result.expect("snapshot")).expect("json");

    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url"));
    let dev: Address = DEV_ACCOUNT.parse().expect("address");
    let (block, balance, native, code, slot0, head) = rt.block_on(async {
        let tx =
            TransactionRequest::default().to(token).with_input(balanceOfCall { account: dev }.abi_encode());
        let raw = provider.call(tx).await.expect("eth_call");
        (
            provider.get_block_number().await.expect("block"),
            U256::abi_decode(&raw).expect("uint"),
            provider.get_balance(dev).await.expect("balance"),
            provider.get_code_at(token).await.expect("code"),
            provider.get_storage_at(token, U256::ZERO).await.expect("storage"),
            provider.get_block_by_number(Default::default()).await.expect("block").expect("latest"),
        )
    });
    assert_eq!(balance, minted);
    assert_eq!(got["token_balance"], minted.to_string());
    assert_eq!(got["block_number"], block);
    assert_eq!(got["native_balance"], native.to_string());
    assert_eq!(got["code_size"], code.len());
    assert_eq!(got["slot0"], format!("0x{:064x}", slot0));
    assert_eq!(got["block_timestamp"], head.header.timestamp);
    assert_eq!(got["transfer_logs"], 1, "the mint's Transfer");
    assert!(got["last_receipt_gas"].as_u64().is_some_and(|g| g > 21_000), "{got}");
}

#[test]
fn hello_reads_the_block_number() {
    let node = anvil();
    let rt = runtime();
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url"));
    rt.block_on(provider.raw_request::<_, ()>("anvil_mine".into(), (7u64,))).expect("mine");
    let host = host_on(&node.url(), &[HELLO]);
    let r = host.call("hello_greet", &format!(r#"{{"name":"n","chain_id":{CHAIN_ID}}}"#));
    assert_eq!(r.result.as_deref(), Ok(r#"{"greeting":"hello, n","block_number":7}"#));
    let e =
        host.call("hello_greet", r#"{"name":"n","chain_id":1}"#).result.expect_err("chain 1 not configured");
    assert_eq!(e.code, ErrorCode::ChainNotSupported);
}

#[test]
fn a_revert_is_a_typed_error_with_the_decoded_reason() {
    let node = anvil();
    let token = runtime().block_on(deploy_token(&node.url(), U256::from(5)));
    let host = host_on(&node.url(), &[CHAIN_READER]);
    let params =
        serde_json::json!({"chain_id": CHAIN_ID, "token": token.to_string(), "account": DEV_ACCOUNT})
            .to_string();
    let e = host.call("reader_revert", &params).result.expect_err("reverts");
    assert_eq!(e.code, ErrorCode::Reverted, "{e}");
    assert!(e.message.contains("ERC20: insufficient allowance"), "{e}");
}

#[test]
fn malformed_addresses_are_invalid_params() {
    let node = anvil();
    let host = host_on(&node.url(), &[CHAIN_READER]);
    let params =
        serde_json::json!({"chain_id": CHAIN_ID, "token": "0x1234", "account": DEV_ACCOUNT}).to_string();
    let e = host.call("reader_snapshot", &params).result.expect_err("bad token");
    assert_eq!(e.code, ErrorCode::InvalidParams);
    assert!(e.message.contains("`token` is not an address"), "{e}");
}

fn block_number_error(url: &str) -> (ToolError, Duration) {
    let host = host_on(url, &[HELLO]);
    let started = Instant::now();
    let r = host.call("hello_greet", &format!(r#"{{"name":"n","chain_id":{CHAIN_ID}}}"#));
    (r.result.expect_err("the node fails"), started.elapsed())
}

#[test]
fn node_down_is_a_retryable_rpc_error() {
    let port = TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let (e, took) = block_number_error(&format!("http://127.0.0.1:{port}"));
    assert_eq!(e.code, ErrorCode::Rpc, "{e}");
    assert!(e.retryable);
    assert!(took < Duration::from_millis(900), "retries stay within the budget: {took:?}");
}

/// Fault injection: a server that accepts connections and never answers.
#[test]
fn silent_node_times_out_within_the_budget() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().take(16) {
            held.push(conn);
        }
    });
    let (e, took) = block_number_error(&url);
    assert_eq!(e.code, ErrorCode::Timeout, "{e}");
    assert!(e.retryable);
    assert!(took >= Duration::from_millis(900) && took < Duration::from_millis(1_500), "{took:?}");
}

/// Fault injection: a server that answers HTTP 200 with a body that is not JSON-RPC.
#[test]
fn malformed_response_is_a_typed_rpc_error() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for mut conn in listener.incoming().take(16).flatten() {
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let body = "{this is not json";
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let (e, _) = block_number_error(&url);
    assert_eq!(e.code, ErrorCode::Rpc, "{e}");
    assert!(e.message.contains("malformed JSON-RPC response"), "{e}");
}
