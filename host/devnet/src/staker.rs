//! Uniswap's V3 Staker (`@uniswap/v3-staker` 1.0.2's published artifact, fetched by
//! `devnet/install-packed.sh`) and one incentive: USDC paid over two years to liquidity in range
//! of the WETH/USDC 0.3 % pool, as a protocol or a DAO runs liquidity mining on V3.

use super::deployer::{DeployError, Deployer, Token};
use super::deployments::{Incentive, Pool};
use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, U256};
use alloy::providers::Provider;
use alloy::rpc::types::TransactionRequest;
use alloy::sol_types::{SolCall, SolValue};
use std::collections::BTreeMap;

alloy::sol! {
    struct IncentiveKey { address rewardToken; address pool; uint256 startTime; uint256 endTime; address refundee; }
    function createIncentive(IncentiveKey key, uint256 reward) external;
    function approve(address spender, uint256 amount) external returns (bool);
}

const ARTIFACT: &str = "@uniswap/v3-staker/artifacts/contracts/UniswapV3Staker.sol/UniswapV3Staker.json";

/// How far ahead an incentive may be announced (the staker's `maxIncentiveStartLeadTime`): 30 days.
const MAX_LEAD_TIME_SECS: u64 = 30 * 86_400;
/// The longest incentive the staker takes (`maxIncentiveDuration`): two years.
const MAX_DURATION_SECS: u64 = 730 * 86_400;
/// The incentive's reward, whole USDC.
pub(crate) const INCENTIVE_REWARD_USDC: u64 = 100_000;

/// Deploy the staker for the V3 factory and position manager and create the incentive on
/// `pool`: it starts with the block that creates it and lasts the staker's longest duration, so a
/// snapshot stays in its window for two years.
pub(super) async fn deploy_staker(
    d: &Deployer,
    tokens: &BTreeMap<String, Token>,
    factory: Address,
    npm: Address,
    pool: &Pool,
) -> Result<(Address, Incentive), DeployError> {
    let none = BTreeMap::new();
    (d.progress)("deploying Uniswap's V3 Staker and its WETH/USDC incentive");
    let args =
        (factory, npm, U256::from(MAX_LEAD_TIME_SECS), U256::from(MAX_DURATION_SECS)).abi_encode_params();
    let staker = d.deploy(ARTIFACT, args, &none).await?;
    let usdc = tokens.get("USDC").ok_or_else(|| DeployError::Tx {
        step: "the incentive's reward token".into(),
        message: "the devnet has no USDC".into(),
    })?;
    let reward = U256::from(INCENTIVE_REWARD_USDC) * U256::from(10u64).pow(U256::from(usdc.decimals));
    d.call(
        "approve USDC to the staker",
        usdc.address,
        approveCall { spender: staker, amount: reward }.abi_encode(),
        U256::ZERO,
    )
    .await?;
    // The incentive must start no earlier than the block that creates it: that block's time is
    // fixed first, and the incentive starts then.
    let fail = |step: &str, e: String| DeployError::Tx { step: step.into(), message: e };
    let head = d
        .provider
        .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
        .await
        .map_err(|e| fail("reading the head", e.to_string()))?
        .map(|b| b.header.timestamp)
        .unwrap_or_default();
    let start = head + 1;
    d.provider
        .raw_request::<_, serde_json::Value>("evm_setNextBlockTimestamp".into(), (start,))
        .await
        .map_err(|e| fail("evm_setNextBlockTimestamp", e.to_string()))?;
    let key = IncentiveKey {
        rewardToken: usdc.address,
        pool: pool.address,
        startTime: U256::from(start),
        endTime: U256::from(start + MAX_DURATION_SECS),
        refundee: d.from,
    };
    let create = createIncentiveCall { key: key.clone(), reward };
    d.send(
        "create the V3 Staker incentive",
        TransactionRequest::default().to(staker).with_input(create.abi_encode()),
    )
    .await?;
    let incentive = Incentive {
        id: alloy::primitives::keccak256(key.abi_encode()),
        reward_token: "USDC".into(),
        pool: pool.address,
        start_time: start,
        end_time: start + MAX_DURATION_SECS,
        refundee: d.from,
        reward: reward.to_string(),
    };
    Ok((staker, incentive))
}
