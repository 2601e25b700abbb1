//! The wallet plugin on the devnet: every read equals a direct read of the chain; open approvals
//! are found from the logs with their risks; approve / revoke / wrap / unwrap / transfer go
//! through preview → commit and move exactly what they declare; the host refuses what the
//! plugin would never plan (a transfer to a stranger, an approval to one); bad inputs are typed.

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, U256, address};
use alloy::providers::Provider;
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_core::ErrorCode;
use bardo_devnet::CHAIN_ID;
use bardo_devnet::deploy::Deployments;
use bardo_test_artifacts::WALLET;
use bardo_test_support::send;
use bardo_test_support::writes::{self as plugin_env, Env, u256};
use serde_json::{Value, json};
use std::collections::BTreeMap;

sol! {
    function allowance(address owner, address spender) external view returns (uint256);
    function approve(address spender, uint256 amount) external returns (bool);
}

/// An account nobody allowlisted.
const STRANGER: Address = address!("0x000000000000000000000000000000000000dEaD");

fn env() -> Env {
    let settings = |d: &Deployments| BTreeMap::from([("wallet".to_owned(), d.wallet_settings())]);
    plugin_env::env(&[WALLET], settings, Deployments::write_targets)
}

/// What the wallet tests do in their environment.
trait Wallets {
    fn token(&self, symbol: &str) -> Address;
    fn balance(&self, token: &str, who: Address) -> U256;
    fn approve_as_user(&self, token: &str, spender: Address, amount: U256);
    fn write_paid(&self, kind: &str, params: Value) -> (bardo_safety::WriteResult, U256);
}

impl Wallets for Env {
    fn token(&self, symbol: &str) -> Address {
        self.d.tokens[symbol].address
    }

    fn balance(&self, token: &str, who: Address) -> U256 {
        self.balance_of(self.token(token), who)
    }

    fn approve_as_user(&self, token: &str, spender: Address, amount: U256) {
        let tx = TransactionRequest::default()
            .from(self.user)
            .to(self.token(token))
            .with_input(approveCall { spender, amount }.abi_encode());
        assert!(self.rt.block_on(send(&self.provider, tx)).status());
    }

    /// Preview and commit `kind`; the ether the transactions paid in gas.
    fn write_paid(&self, kind: &str, params: Value) -> (bardo_safety::WriteResult, U256) {
        let result = self.write(kind, params);
        let gas = self.gas(&result);
        (result, gas)
    }
}

#[test]
fn reads_equal_direct_chain_reads() {
    let e = env();
    let b = e.tool("wallet_get_balances", json!({"chain_id": CHAIN_ID}));
    assert_eq!(b["account"], e.user.to_checksum(None));
    assert_eq!(u256(&b["native"]["base"]), e.eth(e.user));
    let tokens = b["tokens"].as_array().expect("tokens");
    assert_eq!(tokens.len(), e.d.tokens.len());
    for t in tokens {
        let symbol = t["token"]["symbol"].as_str().expect("symbol");
        assert_eq!(u256(&t["base"]), e.balance(symbol, e.user), "{symbol}");
    }
    let other = e.tool(
        "wallet_get_token_balance",
        json!({"chain_id": CHAIN_ID, "token": "USDC", "account": e.d.deployer.to_string()}),
    );
    assert_eq!(u256(&other["base"]), e.balance("USDC", e.d.deployer));
    let eth = e.tool("wallet_get_token_balance", json!({"chain_id": CHAIN_ID, "token": "ETH"}));
    assert!(eth["token"].is_null());
    assert_eq!(u256(&eth["base"]), e.eth(e.user));

    let router = e.d.uniswap_v3["swap_router"];
    e.approve_as_user("DAI", router, U256::from(777u64));
    let a = e.tool(
        "erc20_get_allowance",
        json!({"chain_id": CHAIN_ID, "token": "DAI", "spender": router.to_string()}),
    );
    assert_eq!(u256(&a["base"]), e.read(e.token("DAI"), allowanceCall { owner: e.user, spender: router }));
    assert_eq!(u256(&a["base"]), U256::from(777u64));
    assert_eq!(a["allowlisted"], "uniswap-v3-swap-router");
    assert_eq!(a["unlimited"], false);

    let gas = e.tool("wallet_get_gas_price", json!({"chain_id": CHAIN_ID}));
    let node: u128 = e.rt.block_on(e.provider.get_gas_price().into_future()).expect("gas price");
    assert_eq!(u256(&gas["gas_price_wei"]), U256::from(node));
    let history = e.tool(
        "wallet_get_fee_history",
        json!({"chain_id": CHAIN_ID, "blocks": 4, "percentiles": [25.0, 75.0]}),
    );
    let blocks = history["blocks"].as_array().expect("blocks");
    // anvil keeps fee history only for the blocks it mined itself (not for a loaded state's).
    let node =
        e.rt.block_on(e.provider.get_fee_history(4, alloy::eips::BlockNumberOrTag::Latest, &[25.0, 75.0]))
            .expect("fee history");
    assert!(!blocks.is_empty() && blocks.len() == node.gas_used_ratio.len(), "{history:#}");
    for (i, b) in blocks.iter().enumerate() {
        assert_eq!(b["block_number"], node.oldest_block + i as u64);
        assert_eq!(u256(&b["base_fee_wei"]), U256::from(node.base_fee_per_gas[i]));
        assert_eq!(b["priority_fees_wei"].as_array().expect("percentiles").len(), 2);
    }
}

#[test]
fn open_approvals_are_found_with_their_risks_and_revoked_through_the_write_path() {
    let e = env();
    let router = e.d.uniswap_v3["swap_router"];
    e.approve_as_user("USDC", STRANGER, U256::MAX);
    e.approve_as_user("DAI", router, U256::from(5u64) * U256::from(10u64).pow(U256::from(18u8)));
    e.approve_as_user("WBTC", router, U256::from(1u8));
    e.approve_as_user("WBTC", router, U256::ZERO); // approved, then revoked: not open
    let found = e.tool("wallet_get_approvals", json!({"chain_id": CHAIN_ID}));
    let list = found["approvals"].as_array().expect("approvals");
    assert_eq!(list.len(), 2, "{found:#}");
    let first = &list[0];
    assert_eq!(first["token"]["symbol"], "USDC");
    assert_eq!(first["spender"], STRANGER.to_checksum(None));
    assert_eq!(first["unlimited"], true, "the riskiest first");
    assert!(first["allowlisted"].is_null());
    assert_eq!(first["spender_has_code"], false);
    assert_eq!(list[1]["token"]["symbol"], "DAI");
    assert_eq!(list[1]["amount"], "5");
    assert_eq!(list[1]["allowlisted"], "uniswap-v3-swap-router");
    assert_eq!(list[1]["spender_has_code"], true);

    // A revocation goes to any spender, allowlisted or not.
    let (result, _) = e.write_paid(
        "revoke",
        json!({"chain_id": CHAIN_ID, "token": "USDC", "spender": STRANGER.to_string()}),
    );
    assert_eq!(result.actual["allowance_now_base"], "0");
    assert_eq!(e.read(e.token("USDC"), allowanceCall { owner: e.user, spender: STRANGER }), U256::ZERO);
    let after = e.tool("wallet_get_approvals", json!({"chain_id": CHAIN_ID}));
    assert_eq!(after["approvals"].as_array().expect("approvals").len(), 1);
    // Nothing left to revoke: a typed error, not an empty transaction.
    let again = e
        .path
        .preview("revoke", &json!({"chain_id": CHAIN_ID, "token": "USDC", "spender": STRANGER.to_string()}));
    assert_eq!(again.expect_err("nothing to revoke").code, ErrorCode::InvalidParams);

    // The decoded transaction names the call and its log.
    let tx = &result.tx_hashes[0];
    let d = e.tool("wallet_decode_transaction", json!({"chain_id": CHAIN_ID, "tx_hash": tx}));
    assert_eq!(d["call"]["function"], "approve(address,uint256)");
    assert_eq!(d["call"]["args"]["spender"], STRANGER.to_checksum(None));
    assert_eq!(d["call"]["args"]["amount"], "0");
    assert_eq!(d["to_name"], "USDC");
    assert_eq!(d["status"], "success");
    let log = &d["logs"][0];
    assert_eq!(log["address_name"], "USDC");
    assert_eq!(log["decoded"]["event"], "Approval(address,address,uint256)");
    assert_eq!(log["decoded"]["fields"]["owner"], e.user.to_checksum(None));
    assert_eq!(log["decoded"]["fields"]["value"], "0");
}

#[test]
fn approve_wrap_unwrap_and_transfer_move_exactly_what_they_declare() {
    let e = env();
    let router = e.d.uniswap_v3["swap_router"];
    let (approved, _) = e.write_paid(
        "approve",
        json!({"chain_id": CHAIN_ID, "token": "USDC", "spender": router.to_string(), "amount": "123.45"}),
    );
    assert_eq!(approved.actual["approved_base"], "123450000");
    assert_eq!(
        e.read(e.token("USDC"), allowanceCall { owner: e.user, spender: router }),
        U256::from(123_450_000u64)
    );

    let one_and_half = U256::from(15u64) * U256::from(10u64).pow(U256::from(17u8));
    let (eth0, weth0) = (e.eth(e.user), e.balance("WETH", e.user));
    let (_, gas) = e.write_paid("wrap", json!({"chain_id": CHAIN_ID, "amount": "1.5"}));
    assert_eq!(e.balance("WETH", e.user), weth0 + one_and_half);
    assert_eq!(e.eth(e.user), eth0 - one_and_half - gas);
    let (eth1, weth1) = (e.eth(e.user), e.balance("WETH", e.user));
    let (unwrapped, gas) = e.write_paid("unwrap", json!({"chain_id": CHAIN_ID, "amount": "0.5"}));
    let half = one_and_half / U256::from(3u8);
    assert_eq!(u256(&unwrapped.actual["amount_base"]), half);
    assert_eq!(e.balance("WETH", e.user), weth1 - half);
    assert_eq!(e.eth(e.user), eth1 + half - gas);

    let treasury = e.d.treasury().expect("treasury");
    let (usdc0, t0) = (e.balance("USDC", e.user), e.balance("USDC", treasury));
    e.write_paid(
        "transfer",
        json!({"chain_id": CHAIN_ID, "token": "USDC", "to": treasury.to_string(), "amount": "100"}),
    );
    assert_eq!(e.balance("USDC", e.user), usdc0 - U256::from(100_000_000u64));
    assert_eq!(e.balance("USDC", treasury), t0 + U256::from(100_000_000u64));
    let (eth2, teth) = (e.eth(e.user), e.eth(treasury));
    let (_, gas) = e.write_paid(
        "transfer",
        json!({"chain_id": CHAIN_ID, "token": "ETH", "to": treasury.to_string(), "amount": "2"}),
    );
    let two = U256::from(2u64) * U256::from(10u64).pow(U256::from(18u8));
    assert_eq!(e.eth(treasury), teth + two);
    assert_eq!(e.eth(e.user), eth2 - two - gas);
}

#[test]
fn the_host_refuses_what_is_not_allowlisted_and_bad_inputs_are_typed() {
    let e = env();
    let plan = |tool: &str, params: Value| {
        e.host.plan(tool, &params.to_string()).result.map(|_| ()).expect_err(&format!("{tool} {params}"))
    };
    let stranger = STRANGER.to_string();
    let e1 = plan(
        "wallet_transfer",
        json!({"chain_id": CHAIN_ID, "token": "USDC", "to": stranger, "amount": "1"}),
    );
    assert_eq!(e1.code, ErrorCode::Denied);
    assert!(e1.message.contains("recipient"), "{e1}");
    let router = e.d.uniswap_v3["swap_router"].to_string();
    let e2 =
        plan("wallet_transfer", json!({"chain_id": CHAIN_ID, "token": "USDC", "to": router, "amount": "1"}));
    assert_eq!(e2.code, ErrorCode::Denied, "a router is allowlisted, but not as a recipient");
    let e3 = plan(
        "wallet_approve",
        json!({"chain_id": CHAIN_ID, "token": "USDC", "spender": stranger, "amount": "1"}),
    );
    assert_eq!(e3.code, ErrorCode::Denied);
    let e4 = plan(
        "wallet_approve",
        json!({"chain_id": CHAIN_ID, "token": "USDC", "spender": router, "amount": "0"}),
    );
    assert_eq!(e4.code, ErrorCode::InvalidParams);
    let e5 = plan("wallet_wrap_eth", json!({"chain_id": CHAIN_ID, "amount": "1000000000"}));
    assert_eq!(e5.code, ErrorCode::InvalidParams);
    assert!(e5.message.contains("holds"), "{e5}");

    let bad = e.tool_error("wallet_decode_transaction", json!({"chain_id": CHAIN_ID, "tx_hash": "0x1234"}));
    assert_eq!(bad.code, ErrorCode::InvalidParams);
    let unknown = e.tool_error(
        "wallet_decode_transaction",
        json!({"chain_id": CHAIN_ID, "tx_hash": format!("0x{}", "ab".repeat(32))}),
    );
    assert_eq!(unknown.code, ErrorCode::NotFound);
    let future =
        e.tool_error("wallet_get_approvals", json!({"chain_id": CHAIN_ID, "from_block": 1u64 << 40}));
    assert_eq!(future.code, ErrorCode::InvalidParams);
    let history =
        e.tool_error("wallet_get_fee_history", json!({"chain_id": CHAIN_ID, "percentiles": [90.0, 10.0]}));
    assert_eq!(history.code, ErrorCode::InvalidParams);
    let chain = e.tool_error("wallet_get_balances", json!({"chain_id": 999}));
    assert_eq!(chain.code, ErrorCode::ChainNotSupported);
    let symbol = e
        .tool_error("erc20_get_allowance", json!({"chain_id": CHAIN_ID, "token": "NOPE", "spender": router}));
    assert_eq!(symbol.code, ErrorCode::NotFound);
}

/// The dev wallet's Safe (the published 1.4.1 contracts on the devnet) as the chain has it;
/// a module enabled by a Safe transaction shows, with its warning.
#[test]
fn a_safe_reads_as_the_chain_has_it_and_a_module_is_a_warning() {
    let e = env();
    let s = e.d.safe;
    let params = json!({"chain_id": CHAIN_ID, "safe": s.dev_safe.to_string()});
    let read = e.tool("wallet_get_safe", params.clone());
    assert_eq!(read["version"], "1.4.1", "{read}");
    assert_eq!(read["owners"], json!([e.d.deployer]), "{read}");
    assert_eq!((read["threshold"].as_u64(), read["nonce"].as_u64()), (Some(1), Some(0)), "{read}");
    assert_eq!(read["modules"], json!([]), "{read}");
    assert_eq!(read["guard"], Value::Null, "{read}");
    assert_eq!(read["fallback_handler"], json!(s.fallback_handler), "{read}");
    assert_eq!(read["singleton"], json!(s.singleton), "{read}");
    assert_eq!(read["wallet_is_owner"], json!(e.user == e.d.deployer), "{read}");
    assert_eq!(read["warnings"], json!([]), "{read}");

    // The owner enables a module: one Safe transaction, its signature the owner's own call.
    bardo_test_support::safe::enable_module(&e.provider, &e.d, STRANGER);
    let read = e.tool("wallet_get_safe", params);
    assert_eq!(read["modules"], json!([STRANGER]), "{read}");
    assert_eq!(read["nonce"].as_u64(), Some(1), "{read}");
    assert!(
        read["warnings"][0].as_str().expect("warning").contains("without the owners' signatures"),
        "{read}"
    );

    let e2 = e.tool_error("wallet_get_safe", json!({"chain_id": CHAIN_ID, "safe": STRANGER.to_string()}));
    assert_eq!(e2.code, ErrorCode::InvalidParams, "{e2}");
}

#[test]
fn an_approval_is_worth_what_it_can_move_whatever_its_kind() {
    let e = env();
    let router = e.d.uniswap_v4["universal_router"].to_string();
    let approve =
        |amount: &str| json!({"chain_id": CHAIN_ID, "token": "USDC", "spender": router, "amount": amount});
    // 2^128 - 1 base units, just under what the calldata check calls unlimited, and $1B: more
    // than the wallet holds ($1M), whatever the spender.
    for amount in ["340282366920938463463374607431768.211455", "1000000000"] {
        let err = e.path.preview("approve", &approve(amount)).expect_err(amount);
        assert_eq!(err.code, ErrorCode::Denied, "{err}");
        assert!(err.message.starts_with("approval-exposure"), "{err}");
        assert!(err.message.contains("more than the wallet holds"), "{err}");
    }
    // What the wallet holds, bounded: a Low permit (the tool's tier, as docs/plugin-authors.md
    // tells an approve tool to declare) worth its amount; above $1,000 High.
    let small = e.path.preview("approve", &approve("500")).expect("$500");
    assert_eq!(small.risk_tier, bardo_core::tool::RiskTier::Low);
    assert_eq!(small.spend_usd, Some(500.0), "an approval is spend at its worth");
    let large = e.path.preview("approve", &approve("5000")).expect("$5,000");
    assert_eq!(large.risk_tier, bardo_core::tool::RiskTier::High, "over [safety] approval_high_risk_usd");
    assert_eq!(large.spend_usd, Some(5000.0));
}
