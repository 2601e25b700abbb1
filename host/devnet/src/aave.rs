//! Deploys an Aave V3.0 market from `@aave/core-v3`'s artifacts: addresses provider and
//! registry, the logic libraries linked into Pool and PoolConfigurator, ACL, AaveOracle over
//! MockAggregator sources, token implementations, rate strategies, and reserves WETH, USDC and
//! DAI with collateral and variable borrowing enabled.

use super::deployer::{DeployError, Deployer, Token};
use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, Bytes, I256, U256};
use alloy::providers::Provider;
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::{SolCall, SolValue};
use std::collections::BTreeMap;

sol! {
    function getReserveTokensAddresses(address asset) external view returns (address aTokenAddress,
        address stableDebtTokenAddress, address variableDebtTokenAddress);
    function registerAddressesProvider(address provider, uint256 id) external;
    function setPoolDataProvider(address newDataProvider) external;
    function setPoolImpl(address newPoolImpl) external;
    function setPoolConfiguratorImpl(address newPoolConfiguratorImpl) external;
    function setACLAdmin(address newAclAdmin) external;
    function setACLManager(address newAclManager) external;
    function setPriceOracle(address newPriceOracle) external;
    function getPool() external view returns (address);
    function getPoolConfigurator() external view returns (address);
    function addPoolAdmin(address admin) external;
    function addAssetListingAdmin(address admin) external;
    function addRiskAdmin(address admin) external;
    struct InitReserveInput { address aTokenImpl; address stableDebtTokenImpl; address variableDebtTokenImpl;
        uint8 underlyingAssetDecimals; address interestRateStrategyAddress; address underlyingAsset; address treasury;
        address incentivesController; string aTokenName; string aTokenSymbol; string variableDebtTokenName;
        string variableDebtTokenSymbol; string stableDebtTokenName; string stableDebtTokenSymbol; bytes params; }
    function initReserves(InitReserveInput[] input) external;
    function configureReserveAsCollateral(address asset, uint256 ltv, uint256 liquidationThreshold, uint256 liquidationBonus) external;
    function setReserveBorrowing(address asset, bool enabled) external;
    function setReserveFactor(address asset, uint256 newReserveFactor) external;
    function approve(address spender, uint256 amount) external returns (bool);
    function supply(address asset, uint256 amount, address onBehalfOf, uint16 referralCode) external;
}

const ART: &str = "@aave/core-v3/artifacts/contracts";

fn ray(fraction_bps: u64) -> U256 {
    U256::from(fraction_bps) * U256::from(10u64).pow(U256::from(23))
}

async fn read_address(d: &Deployer, to: Address, data: Vec<u8>, step: &str) -> Result<Address, DeployError> {
    let raw = d
        .provider
        .call(TransactionRequest::default().to(to).with_input(Bytes::from(data)))
        .await
        .map_err(|e| DeployError::Tx { step: step.into(), message: e.to_string() })?;
    Address::abi_decode(&raw).map_err(|e| DeployError::Tx { step: step.into(), message: e.to_string() })
}

/// Deploy the market; returns its addresses by name (`pool`, `pool_configurator`, `oracle`, ...).
pub(super) async fn deploy_aave(
    d: &Deployer,
    tokens: &BTreeMap<String, Token>,
) -> Result<BTreeMap<String, Address>, DeployError> {
    let none = BTreeMap::new();
    let from = d.from;
    let provider = d
        .deploy(
            &format!("{ART}/protocol/configuration/PoolAddressesProvider.sol/PoolAddressesProvider.json"),
            ("Bardo Devnet".to_owned(), from).abi_encode_params(),
            &none,
        )
        .await?;
    let registry = d
        .deploy(
            &format!("{ART}/protocol/configuration/PoolAddressesProviderRegistry.sol/PoolAddressesProviderRegistry.json"),
            from.abi_encode(),
            &none,
        )
        .await?;
    let call = |to: Address, data: Vec<u8>, step: &'static str| d.call(step, to, data, U256::ZERO);
    call(
        registry,
        registerAddressesProviderCall { provider, id: U256::from(1) }.abi_encode(),
        "register provider",
    )
    .await?;

    let mut libs = BTreeMap::new();
    for name in [
        "BorrowLogic",
        "BridgeLogic",
        "EModeLogic",
        "LiquidationLogic",
        "PoolLogic",
        "SupplyLogic",
        "FlashLoanLogic",
        "ConfiguratorLogic",
    ] {
        let rel = format!("{ART}/protocol/libraries/logic/{name}.sol/{name}.json");
        let address = d.deploy(&rel, vec![], &libs).await?;
        libs.insert(name.to_owned(), address);
    }
    let data_provider = d
        .deploy(
            &format!("{ART}/misc/AaveProtocolDataProvider.sol/AaveProtocolDataProvider.json"),
            provider.abi_encode(),
            &none,
        )
        .await?;
    call(
        provider,
        setPoolDataProviderCall { newDataProvider: data_provider }.abi_encode(),
        "set data provider",
    )
    .await?;
    let pool_impl =
        d.deploy(&format!("{ART}/protocol/pool/Pool.sol/Pool.json"), provider.abi_encode(), &libs).await?;
    let configurator_impl = d
        .deploy(&format!("{ART}/protocol/pool/PoolConfigurator.sol/PoolConfigurator.json"), vec![], &libs)
        .await?;

    call(provider, setACLAdminCall { newAclAdmin: from }.abi_encode(), "set ACL admin").await?;
    let acl = d
        .deploy(
            &format!("{ART}/protocol/configuration/ACLManager.sol/ACLManager.json"),
            provider.abi_encode(),
            &none,
        )
        .await?;
    call(provider, setACLManagerCall { newAclManager: acl }.abi_encode(), "set ACL manager").await?;
    call(acl, addPoolAdminCall { admin: from }.abi_encode(), "add pool admin").await?;
    call(acl, addAssetListingAdminCall { admin: from }.abi_encode(), "add listing admin").await?;
    call(acl, addRiskAdminCall { admin: from }.abi_encode(), "add risk admin").await?;

    // Prices in USD with 8 decimals, like Chainlink.
    let reserves: Vec<&Token> = ["WETH", "USDC", "DAI"].iter().map(|s| &tokens[*s]).collect();
    let mut sources = Vec::new();
    for t in &reserves {
        let answer = I256::try_from((t.usd * 1e8) as i128).unwrap_or_default();
        let rel = format!("{ART}/mocks/oracle/CLAggregators/MockAggregator.sol/MockAggregator.json");
        sources.push(d.deploy(&rel, answer.abi_encode(), &none).await?);
    }
    let assets: Vec<Address> = reserves.iter().map(|t| t.address).collect();
    let oracle_args =
        (provider, assets.clone(), sources.clone(), Address::ZERO, Address::ZERO, U256::from(100_000_000u64));
    let oracle = d
        .deploy(&format!("{ART}/misc/AaveOracle.sol/AaveOracle.json"), oracle_args.abi_encode_params(), &none)
        .await?;
    call(provider, setPriceOracleCall { newPriceOracle: oracle }.abi_encode(), "set price oracle").await?;

    (d.progress)("creating the Aave Pool and PoolConfigurator proxies");
    call(provider, setPoolImplCall { newPoolImpl: pool_impl }.abi_encode(), "set pool impl").await?;
    call(
        provider,
        setPoolConfiguratorImplCall { newPoolConfiguratorImpl: configurator_impl }.abi_encode(),
        "set configurator impl",
    )
    .await?;
    let pool = read_address(d, provider, getPoolCall {}.abi_encode(), "getPool").await?;
    let configurator =
        read_address(d, provider, getPoolConfiguratorCall {}.abi_encode(), "getPoolConfigurator").await?;

    let a_token = d
        .deploy(&format!("{ART}/protocol/tokenization/AToken.sol/AToken.json"), pool.abi_encode(), &none)
        .await?;
    let stable = d
        .deploy(
            &format!("{ART}/protocol/tokenization/StableDebtToken.sol/StableDebtToken.json"),
            pool.abi_encode(),
            &none,
        )
        .await?;
    let variable = d
        .deploy(
            &format!("{ART}/protocol/tokenization/VariableDebtToken.sol/VariableDebtToken.json"),
            pool.abi_encode(),
            &none,
        )
        .await?;
    // 80% optimal usage, 0% base, 4% / 75% slopes (variable), 2% / 75% (stable).
    let strategy_args = (
        provider,
        ray(8_000),
        U256::ZERO,
        ray(400),
        ray(7_500),
        ray(200),
        ray(7_500),
        ray(200),
        ray(500),
        ray(2_000),
    );
    let strategy = d
        .deploy(
            &format!("{ART}/protocol/pool/DefaultReserveInterestRateStrategy.sol/DefaultReserveInterestRateStrategy.json"),
            strategy_args.abi_encode_params(),
            &none,
        )
        .await?;
    let input: Vec<InitReserveInput> = reserves
        .iter()
        .map(|t| InitReserveInput {
            aTokenImpl: a_token,
            stableDebtTokenImpl: stable,
            variableDebtTokenImpl: variable,
            underlyingAssetDecimals: t.decimals,
            interestRateStrategyAddress: strategy,
            underlyingAsset: t.address,
            treasury: from,
            incentivesController: Address::ZERO,
            aTokenName: format!("Aave Devnet {}", t.symbol),
            aTokenSymbol: format!("a{}", t.symbol),
            variableDebtTokenName: format!("Aave Devnet Variable Debt {}", t.symbol),
            variableDebtTokenSymbol: format!("variableDebt{}", t.symbol),
            stableDebtTokenName: format!("Aave Devnet Stable Debt {}", t.symbol),
            stableDebtTokenSymbol: format!("stableDebt{}", t.symbol),
            params: Bytes::new(),
        })
        .collect();
    (d.progress)("initializing the Aave reserves WETH, USDC, DAI");
    call(configurator, initReservesCall { input }.abi_encode(), "init reserves").await?;
    for t in &reserves {
        let (ltv, threshold) = if t.symbol == "WETH" { (8_000u64, 8_250u64) } else { (7_500, 8_000) };
        let collateral = configureReserveAsCollateralCall {
            asset: t.address,
            ltv: U256::from(ltv),
            liquidationThreshold: U256::from(threshold),
            liquidationBonus: U256::from(10_500u64),
        };
        call(configurator, collateral.abi_encode(), "configure collateral").await?;
        call(
            configurator,
            setReserveBorrowingCall { asset: t.address, enabled: true }.abi_encode(),
            "enable borrowing",
        )
        .await?;
        call(
            configurator,
            setReserveFactorCall { asset: t.address, newReserveFactor: U256::from(1_000u64) }.abi_encode(),
            "reserve factor",
        )
        .await?;
    }
    // Seed each reserve with $1M supplied by the deployer, so there is something to borrow.
    for t in &reserves {
        let amount =
            U256::from((1_000_000.0 / t.usd) as u128) * U256::from(10u64).pow(U256::from(t.decimals));
        d.call(
            "approve the Aave pool",
            t.address,
            approveCall { spender: pool, amount }.abi_encode(),
            U256::ZERO,
        )
        .await?;
        let supply = supplyCall { asset: t.address, amount, onBehalfOf: from, referralCode: 0 };
        d.call("seed an Aave reserve", pool, supply.abi_encode(), U256::ZERO).await?;
    }
    let mut out = BTreeMap::from([
        ("pool_addresses_provider".to_owned(), provider),
        ("pool_addresses_provider_registry".to_owned(), registry),
        ("pool".to_owned(), pool),
        ("pool_configurator".to_owned(), configurator),
        ("acl_manager".to_owned(), acl),
        ("oracle".to_owned(), oracle),
        ("protocol_data_provider".to_owned(), data_provider),
        ("interest_rate_strategy".to_owned(), strategy),
    ]);
    for (t, source) in reserves.iter().zip(&sources) {
        out.insert(format!("price_source_{}", t.symbol), *source);
        // Each reserve's aToken and variable debt token: what a supply and a borrow acquire.
        let read = getReserveTokensAddressesCall { asset: t.address }.abi_encode();
        let tx = TransactionRequest::default().to(data_provider).with_input(Bytes::from(read));
        let raw = d.provider.call(tx).await.map_err(|e| DeployError::Tx {
            step: format!("read {}'s reserve tokens", t.symbol),
            message: e.to_string(),
        })?;
        let tokens = getReserveTokensAddressesCall::abi_decode_returns(&raw).map_err(|e| {
            DeployError::Tx { step: format!("read {}'s reserve tokens", t.symbol), message: e.to_string() }
        })?;
        out.insert(format!("a_token_{}", t.symbol), tokens.aTokenAddress);
        out.insert(format!("variable_debt_{}", t.symbol), tokens.variableDebtTokenAddress);
    }
    Ok(out)
}
