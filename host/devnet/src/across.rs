//! Across V3 on every devnet chain, from `@across-protocol/contracts` 5.0.27's artifacts
//! (`devnet/install-packed.sh`): a SpokePool behind OpenZeppelin's `ERC1967Proxy`, initialized
//! through the proxy as Across deploys its spokes. The variant is `Ethereum_SpokePool`, the one
//! whose admin is an owner account rather than a canonical bridge's messenger — the only one a
//! chain without an L1 messenger can run; deposits and fills, all the devnet uses, are the
//! shared `SpokePool`'s code. Who fills deposits is the devnet's relayer ([`crate::relayer`]),
//! from an account of its own with its own inventory.

use super::deployer::{DeployError, Deployer};
use alloy::primitives::Address;
use alloy::sol_types::{SolCall, SolValue};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

alloy::sol! {
    function initialize(uint32 _initialDepositId, address _withdrawalRecipient) external;
}

const ARTIFACTS: &str = "@across-protocol/contracts/dist/evm/artifacts";

/// How long after its quote timestamp a deposit is accepted, seconds (Across's mainnet spokes: 3,600).
pub const DEPOSIT_QUOTE_TIME_BUFFER: u32 = 3_600;
/// How far in the future a deposit's fill deadline may be, seconds (Across's: 6 hours).
pub const FILL_DEADLINE_BUFFER: u32 = 21_600;
/// Which of anvil's funded dev accounts the relayer fills from (each holds $1M of every token).
pub const RELAYER_ACCOUNT: usize = 5;
/// What the devnet's relayer charges, basis points of the input amount: it fills a deposit only
/// if the output is at most the input less this fee (it publishes it in the settings).
pub const RELAYER_FEE_BPS: u32 = 10;

/// Across on one chain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Across {
    /// The SpokePool (its proxy: the address deposits go to and fills come from).
    pub spoke_pool: Address,
    /// The implementation behind the proxy.
    pub implementation: Address,
    /// The devnet relayer's account.
    pub relayer: Address,
    /// The relayer's fee, basis points of the input.
    pub relayer_fee_bps: u32,
}

/// Deploy the SpokePool behind its proxy, owned by the deployer.
pub(super) async fn deploy_across(
    d: &Deployer,
    weth: Address,
    accounts: &[Address],
) -> Result<Across, DeployError> {
    let none = BTreeMap::new();
    (d.progress)("deploying Across V3's SpokePool behind its ERC-1967 proxy");
    let args = (weth, DEPOSIT_QUOTE_TIME_BUFFER, FILL_DEADLINE_BUFFER, Address::ZERO).abi_encode_params();
    let implementation =
        d.deploy(&format!("{ARTIFACTS}/Ethereum_SpokePool.sol/Ethereum_SpokePool.json"), args, &none).await?;
    let init = initializeCall { _initialDepositId: 0, _withdrawalRecipient: d.from }.abi_encode();
    let spoke_pool = d
        .deploy(
            &format!("{ARTIFACTS}/ERC1967Proxy.sol/ERC1967Proxy.json"),
            (implementation, alloy::primitives::Bytes::from(init)).abi_encode_params(),
            &none,
        )
        .await?;
    let relayer = *accounts.get(RELAYER_ACCOUNT).ok_or_else(|| DeployError::Tx {
        step: "the relayer's account".into(),
        message: format!("the node has fewer than {} accounts", RELAYER_ACCOUNT + 1),
    })?;
    Ok(Across { spoke_pool, implementation, relayer, relayer_fee_bps: RELAYER_FEE_BPS })
}
