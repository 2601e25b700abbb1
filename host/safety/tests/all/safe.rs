//! Writes through a Safe: the dev key owns the devnet's dev Safe (threshold 1) and the host
//! writes through it. Each plan is one Safe transaction (`execTransaction` delegatecalling
//! `MultiSendCallOnly`), simulated as such; the Safe is the wallet the change set, scopes and
//! guards judge; a call inside that fails on chain leaves nothing of the plan behind.

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, U256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol_types::SolCall;
use bardo_core::ErrorCode;
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_evm::SafeKey;
use bardo_safety::WritePath;
use bardo_safety::hooks::PolicyCage;
use bardo_test_artifacts::{AAVE, MORPHO, UNISWAP};
use bardo_test_support::safe::{dev_safe, devnet_safe_host, enable_module, fund_dev_safe};
use bardo_test_support::{devnet, runtime};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

alloy::sol! {
    function balanceOf(address account) external view returns (uint256);
    function position(bytes32 id, address user) external view returns (uint256 supplyShares, uint128 borrowShares,
        uint128 collateral);
    function allowance(address owner, address spender) external view returns (uint256);
    function nonce() external view returns (uint256);
    function getReserveTokensAddresses(address asset) external view returns (address aTokenAddress,
        address stableDebtTokenAddress, address variableDebtTokenAddress);
}

struct Env {
    node: Anvil,
    d: Deployments,
    path: WritePath,
    provider: DynProvider,
    rt: tokio::runtime::Runtime,
    /// The Safe: the wallet.
    safe: Address,
    /// The key that executes on it (an owner or a module), signs and pays gas.
    key: Address,
    _audit: tempfile::TempDir,
}

fn env() -> Env {
    env_as(bardo_devnet::DEV_KEY, SafeKey::Owner)
}

/// The dev Safe as the wallet, written through by `key` as an owner or a module.
fn env_as(key: &str, role: SafeKey) -> Env {
    let (node, d) = devnet();
    let settings = BTreeMap::from([
        ("aave".to_owned(), d.aave_settings()),
        ("uniswap".to_owned(), d.uniswap_settings()),
        ("morpho".to_owned(), d.morpho_settings()),
    ]);
    let guests = [UNISWAP, AAVE, MORPHO];
    let host = Arc::new(devnet_safe_host(&node.url(), key, dev_safe(&d, role), settings, &guests));
    let (path, audit) =
        bardo_test_support::writes::guarded_path(&host, &d, PolicyCage::default(), d.write_targets());
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased();
    let units = |n: u64, decimals: u32| U256::from(n) * U256::from(10u64).pow(U256::from(decimals));
    fund_dev_safe(&node.url(), &d, units(1, 18), &[("USDC", units(10_000, 6)), ("WETH", units(5, 18))]);
    let safe = d.safe.dev_safe;
    let key = key.parse::<alloy::signers::local::PrivateKeySigner>().expect("key").address();
    Env { node, d, path, provider, rt: runtime(), safe, key, _audit: audit }
}

impl Env {
    fn read<C: SolCall>(&self, to: Address, call: C) -> C::Return {
        let tx = TransactionRequest::default().to(to).with_input(call.abi_encode());
        let out = self.rt.block_on(self.provider.call(tx).into_future()).expect("eth_call");
        C::abi_decode_returns(&out).expect("decode")
    }

    fn token(&self, symbol: &str) -> Address {
        self.d.tokens[symbol].address
    }

    fn balance(&self, symbol: &str, who: Address) -> U256 {
        self.read(self.token(symbol), balanceOfCall { account: who })
    }

    fn eth(&self, who: Address) -> U256 {
        self.rt.block_on(self.provider.get_balance(who).into_future()).expect("balance")
    }

    fn raw(&self, method: &'static str, params: Value) -> Value {
        self.rt.block_on(self.provider.raw_request::<_, Value>(method.into(), params)).expect(method)
    }

    /// Preview and commit `kind` through the Safe: one transaction, from the key to the Safe,
    /// verified from its receipt exactly as declared; the ether the key paid for it.
    fn commit_one(&self, kind: &str, params: Value) -> (bardo_safety::WriteResult, U256) {
        let permit = self.path.preview(kind, &params).unwrap_or_else(|e| panic!("preview {kind}: {e}"));
        assert_eq!(permit.sender, self.safe, "the plan is the Safe's");
        assert!(permit.plan.calls.len() >= 2, "{kind} plans several calls: {:?}", permit.plan.calls);
        let key_before = self.eth(self.key);
        let result = self.path.commit(&permit.permit_id).unwrap_or_else(|e| panic!("commit {kind}: {e}"));
        assert_eq!(result.tx_hashes.len(), 1, "{kind}: every call in one Safe transaction");
        let hash = result.tx_hashes[0].parse().expect("hash");
        let receipt = self
            .rt
            .block_on(self.provider.get_transaction_receipt(hash).into_future())
            .expect("receipt")
            .expect("mined");
        assert!(receipt.status());
        assert_eq!((receipt.from, receipt.to), (self.key, Some(self.safe)), "the key sends to the Safe");
        assert_eq!(result.ground_truth, "receipt");
        assert!(result.outcome_mismatch.is_empty(), "{kind}: {:?}", result.outcome_mismatch);
        let gas = U256::from(receipt.gas_used) * U256::from(receipt.effective_gas_price);
        assert_eq!(key_before - self.eth(self.key), gas, "the key paid the gas and nothing else");
        (result, gas)
    }
}

/// The demo's swap and Aave supply, each previewed and committed as one atomic Safe
/// transaction: the Safe's tokens move, the key's do not, and the change set is the Safe's.
#[test]
fn the_demo_swap_and_aave_supply_each_commit_as_one_safe_transaction() {
    let e = env();
    let (usdc, weth) = (e.token("USDC"), e.token("WETH"));
    let key_tokens = (e.balance("USDC", e.key), e.balance("WETH", e.key));
    let (safe_usdc, safe_weth, safe_eth) =
        (e.balance("USDC", e.safe), e.balance("WETH", e.safe), e.eth(e.safe));

    let swap = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1000",
        "slippage_bps": 50});
    let (swapped, _) = e.commit_one("swap", swap);
    let thousand = U256::from(1_000_000_000u64);
    assert_eq!(safe_usdc - e.balance("USDC", e.safe), thousand, "1,000 USDC left the Safe");
    let bought = e.balance("WETH", e.safe) - safe_weth;
    assert!(bought > U256::ZERO, "WETH arrived in the Safe");
    let changes = swapped.changes.as_ref().expect("derived from the receipt");
    assert_eq!(changes.balance(Some(usdc)), -alloy::primitives::I256::from_raw(thousand), "{changes:?}");
    assert_eq!(changes.balance(Some(weth)), alloy::primitives::I256::from_raw(bought), "{changes:?}");

    let supply = json!({"chain_id": CHAIN_ID, "asset": "USDC", "amount": "5000"});
    let data = e.d.aave_v3["protocol_data_provider"];
    let a_usdc = e.read(data, getReserveTokensAddressesCall { asset: usdc }).aTokenAddress;
    let a_before = e.read(a_usdc, balanceOfCall { account: e.safe });
    e.commit_one("supply", supply);
    let five_thousand = U256::from(5_000_000_000u64);
    assert_eq!(safe_usdc - thousand - e.balance("USDC", e.safe), five_thousand);
    let a_after = e.read(a_usdc, balanceOfCall { account: e.safe });
    assert!(a_after - a_before + U256::from(1) >= five_thousand, "the Safe holds the aUSDC: {a_after}");

    assert_eq!((e.balance("USDC", e.key), e.balance("WETH", e.key)), key_tokens, "the key's tokens stay");
    assert_eq!(e.eth(e.safe), safe_eth, "the Safe paid no gas");
    assert_eq!(e.read(e.safe, nonceCall {}), U256::from(2), "two Safe transactions");
}

/// A plan of three calls whose last one reverts on chain (the router's code replaced while the
/// Safe transaction waits to be mined) leaves nothing: the approvals of its first two calls are
/// undone with it, and the error is a revert, not a half-executed plan.
#[test]
fn a_safe_plan_whose_last_call_reverts_on_chain_leaves_nothing_changed() {
    last_call_reverting_on_chain_leaves_nothing(&env(), "reverted on chain");
}

fn last_call_reverting_on_chain_leaves_nothing(e: &Env, said: &str) {
    let nonce = e.read(e.safe, nonceCall {});
    let weth = e.token("WETH");
    let permit2 = e.d.uniswap_v4["permit2"];
    let params = json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "DAI", "amount": "2"});
    let permit = e.path.preview("swap", &params).expect("preview");
    assert_eq!(permit.plan.calls.len(), 3, "WETH → Permit2, Permit2 → router, execute");
    let router = e.d.uniswap_v4["universal_router"];
    let before = (
        e.balance("WETH", e.safe),
        e.balance("DAI", e.safe),
        e.read(weth, allowanceCall { owner: e.safe, spender: permit2 }),
    );
    e.raw("evm_setAutomine", json!([false]));
    let result = std::thread::scope(|s| {
        let miner = s.spawn(|| {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            while e.raw("txpool_status", json!([]))["pending"].as_str().unwrap_or("0x0") == "0x0" {
                if std::time::Instant::now() > deadline {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            e.raw("anvil_setCode", json!([router, "0x60006000fd"]));
            e.raw("evm_mine", json!([]));
        });
        let result = e.path.commit(&permit.permit_id);
        miner.join().expect("miner thread");
        e.raw("evm_setAutomine", json!([true]));
        result
    });
    let err = result.expect_err("the Safe transaction reverted");
    assert_eq!(err.code, ErrorCode::Reverted, "{err}");
    assert!(err.message.contains("the Safe transaction of 3 calls") && err.message.contains(said), "{err}");
    let after = (
        e.balance("WETH", e.safe),
        e.balance("DAI", e.safe),
        e.read(weth, allowanceCall { owner: e.safe, spender: permit2 }),
    );
    assert_eq!(after, before, "no approval, no swap: nothing of the plan is on chain");
    assert_eq!(e.read(e.safe, nonceCall {}), nonce, "the Safe transaction itself was undone");
    assert_eq!(
        e.path.phase(),
        bardo_core::tool::Phase::Thriving,
        "nothing diverged: the host stays as it was"
    );
}

/// A key that is not the Safe's owner is refused at preview with the Safe's own reason,
/// explained: the simulation ran the Safe transaction it would have sent.
#[test]
fn a_key_that_does_not_own_the_safe_is_refused_at_preview_with_the_safes_reason() {
    let e = env_as(bardo_test_support::writes::USER_KEY, SafeKey::Owner);
    let swap = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "100"});
    let err =
        e.path.preview("swap", &swap).expect_err("anvil's second account owns no share of the dev Safe");
    assert_eq!(err.code, ErrorCode::Reverted, "{err}");
    assert!(err.message.contains("the Safe transaction of") && err.message.contains("GS026"), "{err}");
    assert!(err.message.contains("not an owner of the Safe"), "{err}");
    assert_eq!(e.read(e.safe, nonceCall {}), U256::ZERO);
    let _ = &e.node;
}

/// A key that is an enabled module of the Safe (not an owner) writes through it the same way:
/// refused with the Safe's reason until the owner enables it, then one transaction per plan; a
/// batch that fails on chain is mined as a module's failure (not a revert) and leaves nothing.
#[test]
fn a_module_key_writes_through_the_safe_and_a_failed_batch_leaves_nothing() {
    let e = env_as(bardo_test_support::writes::USER_KEY, SafeKey::Module);
    let swap = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "100"});
    let err = e.path.preview("swap", &swap).expect_err("not a module yet");
    assert!(err.message.contains("GS104") && err.message.contains("not an enabled module"), "{err}");
    enable_module(&e.provider, &e.d, e.key);
    let usdc = e.balance("USDC", e.safe);
    e.commit_one("swap", swap);
    assert_eq!(usdc - e.balance("USDC", e.safe), U256::from(100_000_000u64), "100 USDC paid by the Safe");
    last_call_reverting_on_chain_leaves_nothing(&e, "ExecutionFromModuleFailure");
}

/// Morpho through the Safe: the Safe is `onBehalf` and `receiver`, so the position and the
/// borrowed USDC are the Safe's, the key only sends and pays gas; collateral and its approval go
/// in one Safe transaction.
#[test]
fn a_morpho_position_through_the_safe_is_the_safes() {
    let e = env();
    let market = &e.d.morpho.markets["WETH/USDC"];
    let lend = |amount: &str| json!({"chain_id": CHAIN_ID, "market": "WETH/USDC", "amount": amount});
    let (weth, usdc) = (e.balance("WETH", e.safe), e.balance("USDC", e.safe));
    let key_usdc = e.balance("USDC", e.key);
    e.commit_one("morpho-supply-collateral", lend("1"));
    let one = U256::from(10u64).pow(U256::from(18u8));
    assert_eq!(e.balance("WETH", e.safe), weth - one);
    let permit = e.path.preview("morpho-borrow", &lend("500")).unwrap_or_else(|err| panic!("borrow: {err}"));
    assert_eq!(permit.sender, e.safe);
    let done = e.path.commit(&permit.permit_id).expect("commit");
    assert!(done.outcome_mismatch.is_empty(), "{:?}", done.outcome_mismatch);
    assert_eq!(e.balance("USDC", e.safe), usdc + U256::from(500_000_000u64), "borrowed into the Safe");
    assert_eq!(e.balance("USDC", e.key), key_usdc, "the key's own USDC untouched");
    let safe = e.read(e.d.morpho.morpho, positionCall { id: market.id, user: e.safe });
    assert_eq!(U256::from(safe.collateral), one);
    assert!(safe.borrowShares > 0);
    let key = e.read(e.d.morpho.morpho, positionCall { id: market.id, user: e.key });
    assert_eq!((key.collateral, key.borrowShares), (0, 0), "the key has no position");
}
