//! ERC-4626 vaults on the devnet: OpenZeppelin Contracts 4.9.6's published `ERC4626.sol`, made
//! deployable by a constructor (`devnet/contracts/BardoVault.sol`) and compiled with the pinned
//! solc-js (`devnet/compile.js`) — no npm package publishes deployable ERC-4626 bytecode. One
//! vault per asset (USDC, WETH), seeded by the deployer, then given a 5 % yield (assets sent to
//! the vault without shares) so that a share is worth more than one asset unit, as in a vault
//! that has earned.

use super::deployer::{DeployError, Deployer, Token};
use alloy::primitives::{Address, U256};
use alloy::sol;
use alloy::sol_types::{SolCall, SolValue};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

sol! {
    function approve(address spender, uint256 amount) external returns (bool);
    function transfer(address to, uint256 amount) external returns (bool);
    function deposit(uint256 assets, address receiver) external returns (uint256 shares);
}

/// The devnet's own Solidity sources (under `devnet/contracts/`), compiled at deploy time.
pub(crate) const SOURCES: &[&str] = &[
    "BardoVault.sol",
    "PriceFeed.sol",
    "Erc8004.sol",
    "MorphoFeedOracle.sol",
    "ForgingHook.sol",
    "FakePair.sol",
];

/// A seeded ERC-4626 vault.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Vault {
    /// The vault (also its share token).
    pub address: Address,
    /// Its share token's symbol (`bvUSDC`).
    pub symbol: String,
    /// The symbol of its asset (`USDC`).
    pub asset: String,
}

/// Compile the devnet's sources into `node_modules/.bardo-build/` with the pinned solc-js, and
/// Morpho Blue's with the solc its sources pin.
pub(super) fn compile(d: &Deployer) -> Result<(), DeployError> {
    (d.progress)(
        "compiling BardoVault (OpenZeppelin 4.9.6 ERC4626), BardoPriceFeed (Chainlink's MockV3Aggregator), the ERC-8004 registries and Morpho's feed oracle with solc-js",
    );
    node_compile(d, SOURCES)?;
    (d.progress)("compiling Morpho Blue 1.0.0 and its IrmMock with solc-js 0.8.19 (via IR)");
    let morpho = [&["--solc", "solc-0.8.19", "--via-ir"], super::morpho::SOURCES].concat();
    node_compile(d, &morpho)
}

/// `node compile.js ARGS` in the devnet's directory.
pub(super) fn node_compile(d: &Deployer, args: &[&str]) -> Result<(), DeployError> {
    let err = |message: String| DeployError::Tx { step: "compile the devnet's contracts".into(), message };
    let devnet = d.modules.parent().ok_or_else(|| err("node_modules has no parent".into()))?;
    let mut node = std::process::Command::new("node");
    bardo_core::secret::scrub_env(&mut node);
    let out = node
        .arg("compile.js")
        .args(args)
        .current_dir(devnet)
        .output()
        .map_err(|e| err(format!("cannot run node: {e}; install Node.js")))?;
    if !out.status.success() {
        return Err(err(format!(
            "node compile.js failed: {}; run `make setup`",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// Deploy and seed the vaults of USDC and WETH (keyed by share symbol), once [`compile`]d.
pub(super) async fn deploy_vaults(
    d: &Deployer,
    tokens: &BTreeMap<String, Token>,
) -> Result<BTreeMap<String, Vault>, DeployError> {
    let none = BTreeMap::new();
    let mut vaults = BTreeMap::new();
    for (asset, seed) in [("USDC", 1_000_000u64), ("WETH", 100)] {
        let token = &tokens[asset];
        let symbol = format!("bv{asset}");
        let args = (token.address, format!("Bardo {asset} Vault"), symbol.clone()).abi_encode_params();
        let vault = d.deploy(".bardo-build/BardoVault.json", args, &none).await?;
        let amount = U256::from(seed) * U256::from(10u64).pow(U256::from(token.decimals));
        let approve = approveCall { spender: vault, amount }.abi_encode();
        d.call(&format!("approve {asset} to {symbol}"), token.address, approve, U256::ZERO).await?;
        let deposit = depositCall { assets: amount, receiver: d.from }.abi_encode();
        d.call(&format!("seed {symbol}"), vault, deposit, U256::ZERO).await?;
        // The yield: assets the vault holds with no new shares (5 % of the seed).
        let earned = transferCall { to: vault, amount: amount / U256::from(20u64) }.abi_encode();
        d.call(&format!("{symbol} earns 5 %"), token.address, earned, U256::ZERO).await?;
        vaults.insert(symbol.clone(), Vault { address: vault, symbol, asset: asset.to_owned() });
    }
    Ok(vaults)
}
