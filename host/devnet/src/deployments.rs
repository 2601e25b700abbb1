//! What the devnet's deployment leaves behind, as `.bardo/deployments.json` holds it: where
//! every contract, pool, token and feed is. Plain data: [`crate::deploy`] fills it, the
//! settings, the cage and the tests read it.

use super::across::Across;
use super::deployer::Token;
use super::erc8004::Erc8004;
use super::morpho::Morpho;
use super::pendle::Pendle;
use super::safe::Safe;
use super::vaults::Vault;
use alloy::primitives::Address;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A seeded pool.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pool {
    /// The pair's or pool's contract.
    pub address: Address,
    /// Symbol of the token sorted first by address.
    pub token0: String,
    /// Symbol of the other token.
    pub token1: String,
    /// V3 fee in hundredths of a bip; 3000 for V2.
    pub fee: u32,
}

/// A seeded V4 pool (V4 pools live inside the PoolManager; they are named by id).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct V4Pool {
    /// The pool id: keccak256 of its ABI-encoded `PoolKey`.
    pub id: alloy::primitives::B256,
    /// Symbol of `currency0`.
    pub token0: String,
    /// Symbol of `currency1`.
    pub token1: String,
    /// Fee in hundredths of a bip.
    pub fee: u32,
    /// The pool's tick spacing.
    pub tick_spacing: i32,
    /// Its hooks contract (zero: none).
    #[serde(default)]
    pub hooks: Address,
}

/// A V3 Staker incentive the devnet created (its `IncentiveKey`, and the id the staker keys it by).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Incentive {
    /// `keccak256(abi.encode(key))`: the staker's `incentives` key.
    pub id: alloy::primitives::B256,
    /// Symbol of the reward token.
    pub reward_token: String,
    /// The V3 pool whose in-range liquidity earns it.
    pub pool: Address,
    /// Unix seconds it starts and ends.
    pub start_time: u64,
    /// Unix seconds it ends.
    pub end_time: u64,
    /// Who gets what is left when it ends.
    pub refundee: Address,
    /// The reward, base units of the reward token.
    pub reward: String,
}

/// Where everything is.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Deployments {
    /// The node's chain id.
    pub chain_id: u64,
    /// The account that deployed everything (anvil's first dev account).
    pub deployer: Address,
    /// The funded test accounts (each holds every test token).
    pub accounts: Vec<Address>,
    /// The test tokens by symbol.
    pub tokens: BTreeMap<String, Token>,
    /// Uniswap V2 contracts by role (`factory`, `router02`).
    pub uniswap_v2: BTreeMap<String, Address>,
    /// The seeded V2 pairs.
    pub uniswap_v2_pairs: Vec<Pool>,
    /// Uniswap V3 contracts by role (`factory`, `swap_router`, `position_manager`, `quoter_v2`, ...).
    pub uniswap_v3: BTreeMap<String, Address>,
    /// The seeded V3 pools.
    pub uniswap_v3_pools: Vec<Pool>,
    /// The V3 Staker's incentives (`uniswap_v3["staker"]`).
    #[serde(default)]
    pub uniswap_v3_incentives: Vec<Incentive>,
    /// Uniswap V4 contracts by role (`pool_manager`, `universal_router`, `permit2`, ...).
    pub uniswap_v4: BTreeMap<String, Address>,
    /// The seeded V4 pools.
    pub uniswap_v4_pools: Vec<V4Pool>,
    /// Aave V3 contracts by role (`pool`, `pool_addresses_provider`, `oracle`, ...).
    pub aave_v3: BTreeMap<String, Address>,
    /// The seeded ERC-4626 vaults by share symbol (`bvUSDC`).
    #[serde(default)]
    pub vaults: BTreeMap<String, Vault>,
    /// Chainlink-style USD feeds by token symbol (8 decimals; see [`crate::feeds`]).
    #[serde(default)]
    pub feeds: BTreeMap<String, Address>,
    /// The ERC-8004 Identity, Reputation and Validation registries.
    pub erc8004: Erc8004,
    /// The Safe 1.4.1 contracts and the dev wallet's Safe.
    pub safe: Safe,
    /// The caged Safe: a Safe of the dev key and the operator whose guard is the PolicyCage.
    #[serde(default)]
    pub cage: Cage,
    /// Morpho Blue, its IRM and its markets (`WETH/USDC`, `WBTC/USDC`).
    pub morpho: Morpho,
    /// Pendle V2: its router, oracle and factories, and a market per vault (`PT-bvUSDC`).
    #[serde(default)]
    pub pendle: Pendle,
    /// Across V3: the SpokePool and the devnet relayer's account and fee.
    #[serde(default)]
    pub across: Across,
    /// The attack fixtures the host's tests use (`forging_hook`, `fake_pair`; see
    /// [`crate::fixtures`]): never allowlisted, never priced.
    #[serde(default)]
    pub fixtures: BTreeMap<String, Address>,
}

/// The caged Safe and its cage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cage {
    /// The Safe the cage guards (owners: the dev key and the operator's account; threshold 1).
    pub safe: Address,
    /// The `PolicyCage` set as its guard.
    pub cage: Address,
    /// The owner whose key alone changes the rules.
    pub operator: Address,
}
