//! The safety plugin on the devnet, with tokens deployed from published artifacts for the test:
//! Uniswap's `DeflatingERC20` (burns 1 % of every transfer) is failed for its taxes, OpenZeppelin's
//! `ERC20PresetMinterPauser` is warned about (mint, pause) and failed once paused, WETH and USDC
//! pass; simulations report what anvil would do; risky approvals and proxies are found.

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, Bytes, U256, address};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::{SolCall, SolValue};
use bardo_core::ErrorCode;
use bardo_devnet::CHAIN_ID;
use bardo_devnet::artifacts::Artifact;
use bardo_devnet::deploy::Deployments;
use bardo_runtime::plugin::Host;
use bardo_test_artifacts::SAFETY;
use bardo_test_support::devnet_host_with;
use bardo_test_support::{devnet, root, runtime, send};
use serde_json::{Value, json};
use std::collections::BTreeMap;

sol! {
    function approve(address spender, uint256 amount) external returns (bool);
    function transfer(address to, uint256 amount) external returns (bool);
    function mint(address to, uint256 amount) external;
    function pause() external;
    function deposit() external payable;
    function addLiquidity(address tokenA, address tokenB, uint256 amountADesired, uint256 amountBDesired,
        uint256 amountAMin, uint256 amountBMin, address to, uint256 deadline) external returns (uint256, uint256, uint256);
}

const USER_KEY: &str = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const STRANGER: Address = address!("0x000000000000000000000000000000000000dEaD");

struct Env {
    _node: bardo_devnet::Anvil,
    d: Deployments,
    host: Host,
    rt: tokio::runtime::Runtime,
    provider: DynProvider,
    user: Address,
}

fn env() -> Env {
    let (node, d) = devnet();
    let settings = BTreeMap::from([("safety".to_owned(), d.wallet_settings())]);
    let host = devnet_host_with(&node.url(), settings, Some(USER_KEY), &[SAFETY]);
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased();
    let user = d.accounts[1];
    Env { _node: node, d, host, rt: runtime(), provider, user }
}

impl Env {
    fn call(&self, tool: &str, params: Value) -> Result<Value, bardo_core::ToolError> {
        self.host.call(tool, &params.to_string()).result.map(|j| serde_json::from_str(&j).expect("json"))
    }

    fn send_as(&self, from: Address, to: Address, data: Vec<u8>, value: U256) {
        let tx = TransactionRequest::default().from(from).to(to).with_input(data).with_value(value);
        assert!(self.rt.block_on(send(&self.provider, tx)).status(), "a call to {to} reverted");
    }

    fn deploy(&self, rel: &str, args: Vec<u8>) -> Address {
        let mut code = Artifact::load(&root().join("devnet/node_modules"), rel)
            .expect("artifact")
            .link(&BTreeMap::new())
            .expect("link");
        code.extend(args);
        let tx = TransactionRequest::default().from(self.d.deployer).with_deploy_code(Bytes::from(code));
        self.rt.block_on(send(&self.provider, tx)).contract_address.expect("deployed")
    }

    /// A V2 pair of `token` with WETH, seeded by the deployer with 10 WETH and `amount` tokens.
    fn pair_with_weth(&self, token: Address, amount: U256) {
        let (dev, router, weth) =
            (self.d.deployer, self.d.uniswap_v2["router02"], self.d.tokens["WETH"].address);
        let ten = U256::from(10u64) * U256::from(10u64).pow(U256::from(18u8));
        self.send_as(dev, weth, depositCall {}.abi_encode(), ten);
        self.send_as(dev, weth, approveCall { spender: router, amount: ten }.abi_encode(), U256::ZERO);
        self.send_as(dev, token, approveCall { spender: router, amount }.abi_encode(), U256::ZERO);
        let add = addLiquidityCall {
            tokenA: weth,
            tokenB: token,
            amountADesired: ten,
            amountBDesired: amount,
            amountAMin: U256::ZERO,
            amountBMin: U256::ZERO,
            to: dev,
            deadline: U256::MAX,
        };
        self.send_as(dev, router, add.abi_encode(), U256::ZERO);
    }

    fn usdc_of(&self, who: Address) -> U256 {
        let tx = TransactionRequest::default()
            .to(self.d.tokens["USDC"].address)
            .with_input(balanceOfCall { account: who }.abi_encode());
        U256::from_be_slice(&self.rt.block_on(self.provider.call(tx).into_future()).expect("read"))
    }

    fn check(&self, token: &str) -> Value {
        self.call("safety_check_token", json!({"chain_id": CHAIN_ID, "token": token}))
            .unwrap_or_else(|e| panic!("{token}: {e}"))
    }
}

fn e18(n: u64) -> U256 {
    U256::from(n) * U256::from(10u64).pow(U256::from(18u8))
}

#[test]
fn check_token_fails_taxes_and_pauses_and_passes_weth_and_usdc() {
    let e = env();
    let deflating = e.deploy("@uniswap/v2-periphery/build/DeflatingERC20.json", e18(1_000_000).abi_encode());
    e.pair_with_weth(deflating, e18(100_000));
    let r = e.check(&deflating.to_string());
    assert_eq!(r["passed"], false, "{r:#}");
    let trip = &r["round_trip"];
    // DeflatingERC20 burns 1 % of every transfer: the pair's transfer to the buyer, the plain
    // transfer, and the seller's transfer into the pair.
    for tax in ["buy_tax", "transfer_tax", "sell_tax"] {
        let v = trip[tax].as_f64().unwrap_or_else(|| panic!("{tax}: {trip}"));
        assert!((v - 0.01).abs() < 0.0005, "{tax} = {v}");
    }
    assert_eq!(trip["honeypot"], false);
    assert!(r["failures"].to_string().contains("transfer tax of 1.00 %"), "{r:#}");

    let pausable = e.deploy(
        "@openzeppelin/contracts/build/contracts/ERC20PresetMinterPauser.json",
        ("Pausable Test Token".to_owned(), "PAWS".to_owned()).abi_encode_params(),
    );
    e.send_as(
        e.d.deployer,
        pausable,
        mintCall { to: e.d.deployer, amount: e18(1_000_000) }.abi_encode(),
        U256::ZERO,
    );
    e.pair_with_weth(pausable, e18(100_000));
    let r = e.check(&pausable.to_string());
    assert_eq!(r["passed"], true, "no tax, not paused: {r:#}");
    let powers = r["contract"]["powers"].to_string();
    assert!(powers.contains("pause") && powers.contains("mint") && powers.contains("roles"), "{powers}");
    assert!(r["warnings"].to_string().contains("pause transfers"), "{r:#}");
    e.send_as(e.d.deployer, pausable, pauseCall {}.abi_encode(), U256::ZERO);
    let r = e.check(&pausable.to_string());
    assert_eq!(r["passed"], false);
    assert_eq!(r["contract"]["paused"], true);
    assert!(r["failures"].to_string().contains("paused"), "{r:#}");

    let weth = e.check("WETH");
    assert_eq!(weth["passed"], true, "{weth:#}");
    assert!(
        weth["round_trip"].is_null() && weth["round_trip_skipped"].as_str().expect("why").contains("WETH")
    );
    let usdc = e.check("USDC");
    assert_eq!(usdc["passed"], true, "{usdc:#}");
    assert!(usdc["round_trip"]["buy_tax"].as_f64().expect("tax") < 0.001);
    assert!(usdc["round_trip"]["sell_tax"].as_f64().expect("tax") < 0.001);

    let none = e.call("safety_check_token", json!({"chain_id": CHAIN_ID, "token": STRANGER.to_string()}));
    assert_eq!(none.expect_err("an account").code, ErrorCode::InvalidParams);
}

#[test]
fn simulations_approvals_and_contracts_are_reported_from_the_chain() {
    let e = env();
    let usdc = e.d.tokens["USDC"].address;
    let treasury = e.d.treasury().expect("treasury");
    let send_usdc = |to: Address, amount: u64| json!({"to": usdc.to_string(), "data": format!("0x{}", alloy::hex::encode(transferCall { to, amount: U256::from(amount) }.abi_encode()))});
    let held = e.usdc_of(treasury);
    let sim = e
        .call(
            "safety_simulate_transaction",
            json!({"chain_id": CHAIN_ID, "calls": [send_usdc(treasury, 1_500_000)]}),
        )
        .expect("simulate");
    assert_eq!(sim["success"], true);
    assert_eq!(sim["balance_changes"][0]["symbol"], "USDC");
    assert_eq!(sim["balance_changes"][0]["delta"], "-1500000");
    assert_eq!(sim["calls"][0]["logs"][0]["decoded"]["event"], "Transfer(address,address,uint256)");
    let too_much = e
        .call(
            "safety_simulate_transaction",
            json!({"chain_id": CHAIN_ID, "calls": [send_usdc(treasury, u64::MAX)]}),
        )
        .expect("simulate");
    assert_eq!(too_much["success"], false);
    assert!(
        too_much["calls"][0]["revert_reason"].as_str().expect("reason").contains("exceeds balance"),
        "{too_much:#}"
    );
    assert_eq!(e.usdc_of(treasury), held, "nothing was sent");

    // Approvals: an unlimited one to a codeless stranger is risky; a bounded one to the router is not.
    let router = e.d.uniswap_v3["swap_router"];
    e.send_as(e.user, usdc, approveCall { spender: STRANGER, amount: U256::MAX }.abi_encode(), U256::ZERO);
    e.send_as(
        e.user,
        e.d.tokens["DAI"].address,
        approveCall { spender: router, amount: e18(5) }.abi_encode(),
        U256::ZERO,
    );
    let a = e.call("safety_check_approvals", json!({"chain_id": CHAIN_ID})).expect("approvals");
    assert_eq!(a["open"], 2);
    let risky = a["risky"].as_array().expect("risky");
    assert_eq!(risky.len(), 1, "{a:#}");
    assert_eq!(risky[0]["spender"], STRANGER.to_checksum(None));
    assert_eq!(risky[0]["risks"], json!(["unlimited", "not-allowlisted", "no-code"]));

    // Contracts: an allowlisted router, an account, and a proxy deployed for the test.
    let c = e
        .call("safety_check_contract", json!({"chain_id": CHAIN_ID, "address": router.to_string()}))
        .expect("router");
    assert_eq!(c["allowlisted"], "uniswap-v3-swap-router");
    assert!(c["proxy"].is_null() && c["has_code"] == true);
    let eoa = e
        .call("safety_check_contract", json!({"chain_id": CHAIN_ID, "address": STRANGER.to_string()}))
        .expect("eoa");
    assert_eq!(eoa["has_code"], false);
    let admin = e.d.accounts[3];
    let proxy = e.deploy(
        "@openzeppelin/contracts/build/contracts/TransparentUpgradeableProxy.json",
        (usdc, admin, Bytes::new()).abi_encode_params(),
    );
    let p = e
        .call("safety_check_contract", json!({"chain_id": CHAIN_ID, "address": proxy.to_string()}))
        .expect("proxy");
    assert_eq!(p["proxy"]["kind"], "eip-1967");
    assert_eq!(p["proxy"]["implementation"], usdc.to_checksum(None));
    assert_eq!(p["proxy"]["admin"], admin.to_checksum(None));
    assert_eq!(p["implementation_allowlisted"], "erc20");
    assert!(p["allowlisted"].is_null());

    let bad = e.call("safety_simulate_transaction", json!({"chain_id": CHAIN_ID, "calls": []}));
    assert_eq!(bad.expect_err("no calls").code, ErrorCode::InvalidParams);
    let bad = e.call(
        "safety_simulate_transaction",
        json!({"chain_id": CHAIN_ID, "calls": [{"to": usdc.to_string(), "data": "0xzz"}]}),
    );
    assert_eq!(bad.expect_err("not hex").code, ErrorCode::InvalidParams);
}

sol! {
    function balanceOf(address account) external view returns (uint256);
}
