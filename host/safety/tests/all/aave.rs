//! The Aave plugin on the devnet's Aave V3.0 market: reads equal direct Pool / data-provider
//! reads; a lending cycle through preview → commit with real receipts (supply, borrow, an oracle
//! price drop, repay max, withdraw max); the health-factor floor and bad inputs, each a typed error.

use alloy::network::TransactionBuilder;
use alloy::primitives::utils::parse_units;
use alloy::primitives::{Address, Bytes, U256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::{SolCall, SolValue};
use bardo_core::fabric::{Fabric, GolemEvent};
use bardo_core::{ErrorCode, ToolError};
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_runtime::plugin::Host;
use bardo_runtime::subscriptions::SubscriptionRegistry;
use bardo_safety::hooks::{MaxPosition, PolicyCage};
use bardo_safety::{WritePath, WriteResult};
use bardo_test_artifacts::{AAVE, ATTACK, STREAMING, UNISWAP};
use bardo_test_support::devnet_host_with;
use bardo_test_support::{devnet, runtime, send};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

sol! {
    function getUserAccountData(address user) external view returns (uint256 totalCollateralBase,
        uint256 totalDebtBase, uint256 availableBorrowsBase, uint256 currentLiquidationThreshold,
        uint256 ltv, uint256 healthFactor);
    function getReserveConfigurationData(address asset) external view returns (uint256 decimals,
        uint256 ltv, uint256 liquidationThreshold, uint256 liquidationBonus, uint256 reserveFactor,
        bool usageAsCollateralEnabled, bool borrowingEnabled, bool stableBorrowRateEnabled,
        bool isActive, bool isFrozen);
    function getReserveData(address asset) external view returns (uint256 unbacked,
        uint256 accruedToTreasuryScaled, uint256 totalAToken, uint256 totalStableDebt,
        uint256 totalVariableDebt, uint256 liquidityRate, uint256 variableBorrowRate,
        uint256 stableBorrowRate, uint256 averageStableBorrowRate, uint256 liquidityIndex,
        uint256 variableBorrowIndex, uint40 lastUpdateTimestamp);
    function getUserReserveData(address asset, address user) external view returns (
        uint256 currentATokenBalance, uint256 currentStableDebt, uint256 currentVariableDebt,
        uint256 principalStableDebt, uint256 scaledVariableDebt, uint256 stableBorrowRate,
        uint256 liquidityRate, uint40 stableRateLastUpdated, bool usageAsCollateralEnabled);
    function getReserveTokensAddresses(address asset) external view returns (address aTokenAddress,
        address stableDebtTokenAddress, address variableDebtTokenAddress);
    function getAssetPrice(address asset) external view returns (uint256);
    function balanceOf(address account) external view returns (uint256);
    function deposit() external payable;
    function setAssetSources(address[] assets, address[] sources) external;
    function setReserveFreeze(address asset, bool freeze) external;
}

/// anvil's second default account: the wallet in these tests (the deployer already has a large
/// position in every reserve).
const USER_KEY: &str = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

struct Env {
    node: Anvil,
    d: Deployments,
    host: Arc<Host>,
    path: WritePath,
    rt: tokio::runtime::Runtime,
    provider: DynProvider,
    user: Address,
    _audit: tempfile::TempDir,
}

fn env() -> Env {
    env_with(|_| PolicyCage::default(), &[AAVE, STREAMING])
}

/// An environment with the policy cage `cage` builds and the plugins `guests`.
fn env_with(cage: impl FnOnce(&Arc<Host>) -> PolicyCage, guests: &[&str]) -> Env {
    let (node, d) = devnet();
    let settings = BTreeMap::from([
        ("aave".to_owned(), d.aave_settings()),
        ("uniswap".to_owned(), d.uniswap_settings()),
        ("streaming".to_owned(), d.streaming_settings()),
    ]);
    let host = Arc::new(devnet_host_with(&node.url(), settings, Some(USER_KEY), guests));
    let (path, audit) = bardo_test_support::writes::guarded_path(&host, &d, cage(&host), d.write_targets());
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased();
    let user = d.accounts[1];
    Env { node, d, host, path, rt: runtime(), provider, user, _audit: audit }
}

fn u256(v: &Value) -> U256 {
    v.as_str().unwrap_or_else(|| panic!("{v} is not a string")).parse().expect("decimal")
}

/// A decimal string in token units, as base units.
fn units(v: &Value, decimals: u8) -> U256 {
    parse_units(v.as_str().unwrap_or_else(|| panic!("{v} is not a string")), decimals).expect("units").into()
}

impl Env {
    fn aave(&self, name: &str) -> Address {
        self.d.aave_v3[name]
    }

    fn token(&self, symbol: &str) -> Address {
        self.d.tokens[symbol].address
    }

    fn read<C: SolCall>(&self, to: Address, call: C) -> C::Return {
        let tx = TransactionRequest::default().to(to).with_input(call.abi_encode());
        let out = self.rt.block_on(self.provider.call(tx).into_future()).expect("eth_call");
        C::abi_decode_returns(&out).expect("decode")
    }

    fn balance(&self, token: Address) -> U256 {
        self.read(token, balanceOfCall { account: self.user })
    }

    /// Send a transaction from an (unlocked) anvil account.
    fn send_as(&self, from: Address, to: Address, data: Vec<u8>, value: U256) {
        let tx = TransactionRequest::default().from(from).to(to).with_input(data).with_value(value);
        let receipt = self.rt.block_on(send(&self.provider, tx));
        assert!(receipt.status(), "transaction to {to} reverted");
    }

    fn tool(&self, tool: &str, params: Value) -> Value {
        let json = self.host.call(tool, &params.to_string()).result.unwrap_or_else(|e| panic!("{tool}: {e}"));
        serde_json::from_str(&json).expect("json")
    }

    fn write(&self, kind: &str, params: Value) -> WriteResult {
        let permit =
            self.path.preview(kind, &params).unwrap_or_else(|e| panic!("preview {kind} {params}: {e}"));
        let result = self.path.commit(&permit.permit_id).unwrap_or_else(|e| panic!("commit {kind}: {e}"));
        assert_eq!(result.ground_truth, "receipt");
        result
    }

    fn plan_error(&self, tool: &str, params: Value) -> ToolError {
        self.host
            .plan(tool, &params.to_string())
            .result
            .map(|_| ())
            .expect_err(&format!("{tool} {params} must fail"))
    }

    fn health_factor(&self) -> U256 {
        self.read(self.aave("pool"), getUserAccountDataCall { user: self.user }).healthFactor
    }

    /// Point the oracle's `symbol` price at a new MockAggregator answering `usd` (8 decimals).
    fn set_price(&self, symbol: &str, usd: u64) {
        let artifact = self.node_modules("@aave/core-v3/artifacts/contracts/mocks/oracle/CLAggregators/MockAggregator.sol/MockAggregator.json");
        let mut code = alloy::hex::decode(artifact["bytecode"].as_str().expect("bytecode")).expect("hex");
        code.extend(alloy::primitives::I256::try_from(usd * 100_000_000).expect("price").abi_encode());
        let tx = TransactionRequest::default().from(self.d.deployer).with_deploy_code(Bytes::from(code));
        let receipt = self.rt.block_on(send(&self.provider, tx));
        let aggregator = receipt.contract_address.expect("aggregator deployed");
        let call = setAssetSourcesCall { assets: vec![self.token(symbol)], sources: vec![aggregator] };
        self.send_as(self.d.deployer, self.aave("oracle"), call.abi_encode(), U256::ZERO);
        assert_eq!(
            self.read(self.aave("oracle"), getAssetPriceCall { asset: self.token(symbol) }),
            U256::from(usd * 100_000_000)
        );
    }

    fn node_modules(&self, rel: &str) -> Value {
        let path = bardo_test_support::root().join("devnet/node_modules").join(rel);
        serde_json::from_slice(&std::fs::read(path).expect("artifact")).expect("json")
    }
}

fn refused(r: Result<impl std::fmt::Debug, ToolError>, code: ErrorCode, hint: &str) {
    let e = r.expect_err("must be refused");
    assert_eq!(e.code, code, "{e}");
    assert!(e.message.contains(hint), "{:?} should mention {hint:?}", e.message);
}

#[test]
fn reads_equal_direct_pool_and_data_provider_reads() {
    let e = env();
    let (pool, data) = (e.aave("pool"), e.aave("protocol_data_provider"));
    let reserves = e.tool("aave_get_reserves", json!({"chain_id": CHAIN_ID}));
    let list = reserves.as_array().expect("list");
    let mut symbols: Vec<&str> =
        list.iter().map(|r| r["asset"]["symbol"].as_str().expect("symbol")).collect();
    symbols.sort_unstable();
    assert_eq!(symbols, ["DAI", "USDC", "WETH"]);
    for r in list {
        let asset: Address = r["asset"]["address"].as_str().expect("address").parse().expect("address");
        let decimals = r["asset"]["decimals"].as_u64().expect("decimals") as u8;
        let cfg = e.read(data, getReserveConfigurationDataCall { asset });
        assert_eq!(U256::from(decimals), cfg.decimals);
        assert_eq!(r["ltv_bps"], json!(cfg.ltv.to::<u64>()));
        assert_eq!(r["liquidation_threshold_bps"], json!(cfg.liquidationThreshold.to::<u64>()));
        assert_eq!(r["liquidation_bonus_bps"], json!(cfg.liquidationBonus.to::<u64>()));
        assert_eq!(r["reserve_factor_bps"], json!(cfg.reserveFactor.to::<u64>()));
        assert_eq!(r["active"], json!(cfg.isActive));
        assert_eq!(r["frozen"], json!(cfg.isFrozen));
        assert_eq!(r["borrowing_enabled"], json!(cfg.borrowingEnabled));
        let reserve = e.read(data, getReserveDataCall { asset });
        assert_eq!(u256(&r["liquidity_rate_ray"]), reserve.liquidityRate);
        assert_eq!(u256(&r["variable_borrow_rate_ray"]), reserve.variableBorrowRate);
        assert_eq!(units(&r["total_supplied"], decimals), reserve.totalAToken);
        assert_eq!(units(&r["total_variable_debt"], decimals), reserve.totalVariableDebt);
        let tokens = e.read(data, getReserveTokensAddressesCall { asset });
        assert_eq!(r["a_token"], json!(tokens.aTokenAddress.to_checksum(None)));
        assert_eq!(r["variable_debt_token"], json!(tokens.variableDebtTokenAddress.to_checksum(None)));
        let price = e.read(e.aave("oracle"), getAssetPriceCall { asset });
        assert_eq!(units(&r["price"], 8), price);
    }
    // The devnet seeds every reserve with $1M: WETH at $2,000 is 500 WETH.
    let weth = list.iter().find(|r| r["asset"]["symbol"] == "WETH").expect("WETH");
    assert_eq!(weth["total_supplied"], "500");
    assert_eq!(weth["ltv_bps"], 8_000);
    let one = e.tool("aave_get_reserve_data", json!({"chain_id": CHAIN_ID, "asset": "WETH"}));
    assert_eq!(&one, weth, "one reserve reads the same as in the list");

    // The deployer supplied to every reserve; the wallet (account 1) to none.
    let dev = e.d.deployer;
    let account = e.tool("aave_get_user_account_data", json!({"chain_id": CHAIN_ID, "user": dev}));
    let direct = e.read(pool, getUserAccountDataCall { user: dev });
    assert_eq!(units(&account["total_collateral"], 8), direct.totalCollateralBase);
    assert_eq!(units(&account["total_collateral"], 8), U256::from(3_000_000u64 * 100_000_000));
    assert_eq!(units(&account["total_debt"], 8), direct.totalDebtBase);
    assert_eq!(units(&account["available_borrows"], 8), direct.availableBorrowsBase);
    assert_eq!(account["ltv_bps"], json!(direct.ltv.to::<u64>()));
    assert_eq!(u256(&account["health_factor_raw"]), direct.healthFactor);
    assert_eq!(account["health_factor"], "infinite", "no debt");
    let positions = e.tool("aave_get_user_reserves", json!({"chain_id": CHAIN_ID, "user": dev}));
    let positions = positions.as_array().expect("list");
    assert_eq!(positions.len(), 3);
    for p in positions {
        let asset: Address = p["asset"]["address"].as_str().expect("address").parse().expect("address");
        let direct = e.read(data, getUserReserveDataCall { asset, user: dev });
        assert_eq!(u256(&p["supplied_base"]), direct.currentATokenBalance);
        assert_eq!(u256(&p["variable_debt_base"]), direct.currentVariableDebt);
        assert_eq!(p["usage_as_collateral_enabled"], json!(direct.usageAsCollateralEnabled));
    }
    assert_eq!(
        e.tool("aave_get_user_reserves", json!({"chain_id": CHAIN_ID})),
        json!([]),
        "the wallet has none"
    );
}

#[test]
fn lending_cycle_through_preview_and_commit() {
    let e = env();
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let data = e.aave("protocol_data_provider");
    let a_weth = e.read(data, getReserveTokensAddressesCall { asset: weth }).aTokenAddress;
    let debt_usdc = e.read(data, getReserveTokensAddressesCall { asset: usdc }).variableDebtTokenAddress;
    let ten = U256::from(10u64) * U256::from(10u64).pow(U256::from(18u64));
    e.send_as(e.user, weth, depositCall {}.abi_encode(), ten);
    let usdc_before = e.balance(usdc);
    let lend = |asset: &str, amount: &str| json!({"chain_id": CHAIN_ID, "asset": asset, "amount": amount});

    // Supply 10 WETH ($20,000): the WETH leaves, the aWETH arrives.
    let supplied = e.write("supply", lend("WETH", "10"));
    assert_eq!(supplied.tool, "aave_supply");
    assert_eq!(supplied.actual["amount_base"], ten.to_string());
    assert_eq!(e.balance(weth), U256::ZERO);
    assert_eq!(e.balance(a_weth), ten, "nobody borrows WETH: no interest yet");
    assert_eq!(supplied.actual["health_factor_after"], "infinite");
    assert_eq!(supplied.expected["balance_changes"][0], supplied.actual["balance_changes"][0]);

    // Borrow 10,000 USDC: health factor 20,000 × 0.825 / 10,000 = 1.65.
    let borrowed = e.write("borrow", lend("USDC", "10000"));
    let borrowed_base = U256::from(10_000_000_000u64);
    assert_eq!(e.balance(usdc), usdc_before + borrowed_base);
    assert!(e.balance(debt_usdc) >= borrowed_base);
    let hf = e.health_factor();
    assert!(
        hf > U256::from(1_649u64) * U256::from(10u64).pow(U256::from(15u64))
            && hf <= U256::from(1_650u64) * U256::from(10u64).pow(U256::from(15u64)),
        "{hf}"
    );
    assert!(borrowed.actual["health_factor_after"].as_str().expect("hf").starts_with("1.6"));

    // 3,000 more would leave 16,500 / 13,000 = 1.27 < the floor 1.5: refused by simulation.
    let before = (e.balance(usdc), e.balance(debt_usdc));
    refused(e.path.preview("borrow", &lend("USDC", "3000")), ErrorCode::Denied, "below the policy minimum");
    // 100,000 is beyond what the collateral allows at all.
    refused(e.path.preview("borrow", &lend("USDC", "100000")), ErrorCode::InvalidParams, "capacity");

    // A health-factor alert stream, threshold 1.5, checking every second.
    let fabric = Arc::new(Fabric::new());
    let mut events = fabric.subscribe(None);
    let registry = SubscriptionRegistry::new(e.host.clone(), e.host.services().clone(), fabric.clone())
        .expect("registry");
    let params = json!({"chain_id": CHAIN_ID, "user": e.user.to_checksum(None), "threshold": "1.5", "interval_ms": 1000});
    registry.subscribe("stream_health_factor_alerts", &params.to_string()).expect("subscribe");
    let alerts = |events: &mut bardo_core::fabric::Subscription, within: Duration, stop: bool| {
        bardo_test_support::streams::collect(&e.rt, events, within, |x| {
            stop && x.event.variant() == "HealthFactorAlert"
        })
        .into_iter()
        .filter_map(|x| match &*x.event {
            GolemEvent::HealthFactorAlert(d) => Some(d.data["alert"].as_str().unwrap_or("").to_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
    };
    assert_eq!(
        alerts(&mut events, Duration::from_millis(1500), false),
        Vec::<String>::new(),
        "1.65 is above 1.5"
    );

    // WETH falls to $1,800: health factor 18,000 × 0.825 / 10,000 ≈ 1.485.
    e.set_price("WETH", 1_800);
    assert_eq!(alerts(&mut events, Duration::from_secs(5), true), ["below"]);
    assert_eq!(
        alerts(&mut events, Duration::from_millis(2500), false),
        Vec::<String>::new(),
        "once per crossing"
    );
    let account = e.tool("aave_get_user_account_data", json!({"chain_id": CHAIN_ID}));
    let hf = u256(&account["health_factor_raw"]);
    assert!(hf < U256::from(15u64) * U256::from(10u64).pow(U256::from(17u64)), "{account}");
    // anvil evaluates calls at "latest" with the wall clock: seconds of interest apart at most.
    assert!(hf.abs_diff(e.health_factor()) < U256::from(10u64).pow(U256::from(12u64)), "{account}");
    // Withdrawing collateral now would go further below the floor.
    refused(e.path.preview("withdraw", &lend("WETH", "1")), ErrorCode::Denied, "below the policy minimum");
    // Refusals move nothing; the debt only grows by its interest.
    assert_eq!(e.balance(usdc), before.0, "refusals move nothing");
    assert!(e.balance(debt_usdc) - before.1 < U256::from(1_000u64), "only interest accrued on the debt");

    // Repay everything (interest included), then withdraw everything. Half a minute passes
    // between preview and commit: interest accrues, the state does not change, the commit goes
    // through (the re-simulation runs at the preview's timestamp).
    let permit = e.path.preview("repay", &lend("USDC", "max")).expect("preview repay");
    e.rt.block_on(async {
        let _: Value = e.provider.raw_request("evm_increaseTime".into(), [30]).await.expect("increase time");
        let _: Value = e.provider.raw_request("evm_mine".into(), ()).await.expect("mine");
    });
    let repaid = e.path.commit(&permit.permit_id).expect("commit repay");
    assert_eq!(alerts(&mut events, Duration::from_secs(5), true), ["recovered"]);
    drop(registry);
    assert_eq!(e.balance(debt_usdc), U256::ZERO, "debt cleared");
    let paid = u256(&repaid.actual["amount_base"]);
    assert!(
        paid >= borrowed_base && paid < borrowed_base + U256::from(1_000_000u64),
        "{paid}: the debt plus a little interest"
    );
    assert_eq!(e.balance(usdc), usdc_before + borrowed_base - paid);
    // While the oracle says $1,800 and the pools $2,000, WETH cannot be valued and a write that
    // moves it is refused; with the oracle back in line, the withdrawal is valued and goes.
    refused(e.path.preview("withdraw", &lend("WETH", "max")), ErrorCode::Denied, "disagree");
    e.set_price("WETH", 2_000);
    let withdrawn = e.write("withdraw", lend("WETH", "max"));
    assert_eq!(e.balance(a_weth), U256::ZERO);
    assert_eq!(e.balance(weth), ten);
    assert_eq!(withdrawn.actual["amount_base"], ten.to_string());
    assert_eq!(withdrawn.actual["health_factor_after"], "infinite");
    assert_eq!(e.health_factor(), U256::MAX);
    drop(e.node);
}

#[test]
fn bad_lending_inputs_are_typed_errors() {
    let e = env();
    let p = |asset: &str, amount: &str| json!({"chain_id": CHAIN_ID, "asset": asset, "amount": amount});
    let cases: &[(&str, Value, ErrorCode, &str)] = &[
        ("aave_supply", p("WBTC", "1"), ErrorCode::NotFound, "not an Aave reserve"),
        (
            "aave_supply",
            json!({"chain_id": 8453, "asset": "USDC", "amount": "1"}),
            ErrorCode::ChainNotSupported,
            // Aave is on Base, but the host has no node for it: its own configuration is named.
            "[chains.8453]",
        ),
        (
            "aave_supply",
            json!({"chain_id": 999, "asset": "USDC", "amount": "1"}),
            ErrorCode::ChainNotSupported,
            // Aave is not on chain 999 at all: the tool's chains are named.
            "supported_chains",
        ),
        ("aave_repay", p("USDC", "10"), ErrorCode::InvalidParams, "owes no USDC"),
        ("aave_repay", p("USDC", "max"), ErrorCode::InvalidParams, "owes no USDC"),
        ("aave_withdraw", p("DAI", "max"), ErrorCode::InvalidParams, "nothing to withdraw"),
        ("aave_borrow", p("USDC", "10"), ErrorCode::InvalidParams, "capacity"),
        ("aave_supply", p("USDC", "max"), ErrorCode::InvalidParams, "`max` works only"),
        ("aave_supply", p("USDC", "0"), ErrorCode::InvalidParams, "more than 0"),
        ("aave_supply", p("USDC", "1.0000001"), ErrorCode::InvalidParams, "decimals"),
        ("aave_supply", p("USDC", "5000000"), ErrorCode::InvalidParams, "holds"),
        ("aave_supply", p("NOPE", "1"), ErrorCode::NotFound, "no token"),
    ];
    for (tool, params, code, hint) in cases {
        let err = e.plan_error(tool, params.clone());
        assert_eq!(err.code, *code, "{tool} {params}: {err}");
        assert!(err.message.contains(hint), "{tool} {params}: {:?} should mention {hint:?}", err.message);
    }
    // A frozen reserve takes no new supply; an unknown user address is refused by name.
    let freeze = setReserveFreezeCall { asset: e.token("DAI"), freeze: true };
    e.send_as(e.d.deployer, e.aave("pool_configurator"), freeze.abi_encode(), U256::ZERO);
    let err = e.plan_error("aave_supply", p("DAI", "1"));
    assert_eq!((err.code, err.message.contains("frozen")), (ErrorCode::InvalidParams, true), "{err}");
    let err =
        e.host.call("aave_get_reserves", &json!({"chain_id": 999}).to_string()).result.expect_err("chain");
    assert_eq!(err.code, ErrorCode::ChainNotSupported, "{err}");
    let err = e
        .host
        .call("aave_get_user_account_data", &json!({"chain_id": CHAIN_ID, "user": "0x12"}).to_string())
        .result
        .expect_err("bad user");
    assert_eq!(err.code, ErrorCode::InvalidParams, "{err}");
}

#[test]
fn a_position_cap_values_an_atoken_as_its_underlying() {
    let e = env_with(
        |host| PolicyCage {
            max_position: Some(MaxPosition {
                usd: 15_000,
                valuer: bardo_test_support::writes::valuer(host, &bardo_test_support::snapshot().deployments),
            }),
            ..Default::default()
        },
        &[AAVE, UNISWAP],
    );
    let ten = U256::from(10u64) * U256::from(10u64).pow(U256::from(18u64));
    e.send_as(e.user, e.token("WETH"), depositCall {}.abi_encode(), ten);
    let supply = |amount: &str| json!({"chain_id": CHAIN_ID, "asset": "WETH", "amount": amount});
    // aWETH is valued as the WETH it redeems for: ~$20,000 for 10.
    let err = e.path.preview("supply", &supply("10")).expect_err("over the $15,000 cap");
    assert_eq!(err.code, ErrorCode::LimitExceeded, "{err}");
    assert!(err.message.contains("position limit"), "{err}");
    e.path.preview("supply", &supply("5")).expect("~$10,000 is under the cap");
}

#[test]
fn no_plugin_may_leave_the_wallet_under_the_health_floor() {
    // The attack plugin borrows and switches collateral without looking at health: the host's
    // floor (1.5, read from the pool on the simulated state) stops it, not the Aave plugin's.
    let e = env_with(|_| PolicyCage::default(), &[AAVE, ATTACK]);
    let (weth, usdc, dai) = (e.token("WETH"), e.token("USDC"), e.token("DAI"));
    let data = e.aave("protocol_data_provider");
    let debt_usdc = e.read(data, getReserveTokensAddressesCall { asset: usdc }).variableDebtTokenAddress;
    let ten = U256::from(10u64) * U256::from(10u64).pow(U256::from(18u64));
    e.send_as(e.user, weth, depositCall {}.abi_encode(), ten);
    let lend = |asset: &str, amount: &str| json!({"chain_id": CHAIN_ID, "asset": asset, "amount": amount});
    // Collateral 10 WETH × $2,000 × 0.825 + 10,000 DAI × 0.80 = 24,500; debt 12,000: 2.04.
    e.write("supply", lend("WETH", "10"));
    e.write("supply", lend("DAI", "10000"));
    e.write("borrow", lend("USDC", "12000"));
    let attack = |extra: Value| {
        let mut p = json!({"chain_id": CHAIN_ID, "target": e.aave("pool").to_string(),
            "stranger": e.user.to_string(), "owner": e.user.to_string()});
        p.as_object_mut().expect("object").extend(extra.as_object().expect("object").clone());
        p
    };
    let before = (e.balance(usdc), e.balance(debt_usdc), e.health_factor());
    // 5,000 USDC more: 24,500 / 17,000 = 1.44 — within what Aave itself lends (LTV), under the floor.
    let outcome = json!({"balance_changes": [
        {"token": usdc.to_string(), "delta": "5000000000"},
        {"token": debt_usdc.to_string(), "delta": "4999999990", "tolerance": "20"}]});
    let borrow =
        attack(json!({"token": usdc.to_string(), "amount": "5000000000", "outcome": outcome.to_string()}));
    let e1 = e.path.preview("attack-borrow", &borrow).expect_err("under the floor");
    assert_eq!(e1.code, ErrorCode::Denied, "{e1}");
    assert!(e1.message.starts_with("health-floor: ") && e1.message.contains("at 1.44"), "{e1}");
    assert!(e1.message.contains("(from 2.04") && e1.message.contains("floor of 1.500"), "{e1}");
    // DAI off as collateral: 16,500 / 12,000 = 1.375 — Aave allows it (LTV 16,000 ≥ 12,000).
    let switch = attack(json!({"token": dai.to_string()}));
    let e2 = e.path.preview("attack-collateral-off", &switch).expect_err("under the floor");
    assert!(e2.message.starts_with("health-floor: ") && e2.message.contains("at 1.37"), "{e2}");
    assert_eq!((e.balance(usdc), e.balance(debt_usdc), e.health_factor()), before, "nothing moved");
    // A smaller borrow that stays above the floor is the same plugin's plan, allowed:
    // 24,500 / 14,000 = 1.75.
    let outcome = json!({"balance_changes": [
        {"token": usdc.to_string(), "delta": "2000000000"},
        {"token": debt_usdc.to_string(), "delta": "1999999990", "tolerance": "20"}]});
    let small =
        attack(json!({"token": usdc.to_string(), "amount": "2000000000", "outcome": outcome.to_string()}));
    let permit = e.path.preview("attack-borrow", &small).expect("above the floor");
    e.path.commit(&permit.permit_id).expect("commit");
    assert_eq!(e.balance(usdc), before.0 + U256::from(2_000_000_000u64));
}
