//! ERC-8004 (Trustless Agents) on the devnet: the Identity, Reputation and Validation
//! registries, written from the ERC's text (`devnet/contracts/Erc8004.sol`) and compiled with
//! the pinned solc-js, the latter two linked to the first by `initialize` as the ERC has it.

use super::deployer::{DeployError, Deployer};
use alloy::primitives::{Address, U256};
use alloy::sol;
use alloy::sol_types::SolCall;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

sol! {
    function initialize(address identityRegistry_) external;
}

/// The three registries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Erc8004 {
    /// The Identity Registry (ERC-721 agents, agentURI, metadata, the verified agentWallet).
    pub identity: Address,
    /// The Reputation Registry (feedback, revocations, responses).
    pub reputation: Address,
    /// The Validation Registry (requests and validators' responses).
    pub validation: Address,
}

/// Deploy the registries, once the devnet's sources are compiled.
pub(super) async fn deploy_registries(d: &Deployer) -> Result<Erc8004, DeployError> {
    let none = BTreeMap::new();
    let identity = d.deploy(".bardo-build/IdentityRegistry.json", Vec::new(), &none).await?;
    let reputation = d.deploy(".bardo-build/ReputationRegistry.json", Vec::new(), &none).await?;
    let validation = d.deploy(".bardo-build/ValidationRegistry.json", Vec::new(), &none).await?;
    let link = initializeCall { identityRegistry_: identity }.abi_encode();
    d.call("link the Reputation Registry to the Identity Registry", reputation, link.clone(), U256::ZERO)
        .await?;
    d.call("link the Validation Registry to the Identity Registry", validation, link, U256::ZERO).await?;
    Ok(Erc8004 { identity, reputation, validation })
}
