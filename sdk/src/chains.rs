//! The chains each protocol's write tools work on: the specification's chain-support matrix
//! (golem-tools-architecture, "Chain support by tool category"), plus the local devnet. A write
//! tool declares one of these as its `supported_chains`, and the host refuses a call naming any
//! other chain with `chain-not-supported` before the plugin runs. Reads work on every chain the
//! host has a node for, so they declare none.

use crate::ChainId;

/// Ethereum mainnet.
pub const ETHEREUM: ChainId = 1;
/// Optimism.
pub const OPTIMISM: ChainId = 10;
/// BNB Smart Chain.
pub const BNB: ChainId = 56;
/// Unichain.
pub const UNICHAIN: ChainId = 130;
/// Polygon PoS.
pub const POLYGON: ChainId = 137;
/// Base.
pub const BASE: ChainId = 8453;
/// Anvil's default chain id: the devnet `bardo devnet up` runs, where every protocol is deployed.
pub const LOCAL_DEVNET: ChainId = 31337;
/// Arbitrum One.
pub const ARBITRUM: ChainId = 42161;
/// Avalanche C-Chain.
pub const AVALANCHE: ChainId = 43114;

/// Uniswap (V3 on every chain of the matrix; V2 and V4 on fewer, routed by the UniversalRouter).
pub const UNISWAP: &[ChainId] =
    &[ETHEREUM, BASE, UNICHAIN, ARBITRUM, OPTIMISM, POLYGON, BNB, AVALANCHE, LOCAL_DEVNET];
/// Aave V3.
pub const AAVE: &[ChainId] = &[ETHEREUM, BASE, ARBITRUM, OPTIMISM, POLYGON, AVALANCHE, LOCAL_DEVNET];
/// Morpho Blue.
pub const MORPHO: &[ChainId] = &[ETHEREUM, BASE, LOCAL_DEVNET];
/// Pendle V2.
pub const PENDLE: &[ChainId] = &[ETHEREUM, ARBITRUM, LOCAL_DEVNET];
/// ERC-4626 vaults.
pub const VAULT: &[ChainId] = &[ETHEREUM, BASE, UNICHAIN, LOCAL_DEVNET];

/// Across V3's SpokePools among the specification's chains (every one but Avalanche), and the
/// local devnet.
pub const ACROSS: &[ChainId] = &[ETHEREUM, OPTIMISM, BNB, UNICHAIN, POLYGON, BASE, ARBITRUM, LOCAL_DEVNET];
