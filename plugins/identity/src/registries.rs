//! The registries' addresses from settings, and their ABI (ERC-8004's text).

use alloy_primitives::Address;
use bardo_sdk::errors::chain_not_supported;
use bardo_sdk::{ChainId, Error, settings};
use serde::Deserialize;

alloy_sol_types::sol! {
    function ownerOf(uint256 tokenId) external view returns (address);
    function tokenURI(uint256 tokenId) external view returns (string);
    function getAgentWallet(uint256 agentId) external view returns (address);
    function getMetadata(uint256 agentId, string metadataKey) external view returns (bytes);
    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);

    function getClients(uint256 agentId) external view returns (address[]);
    function getSummary(uint256 agentId, address[] clientAddresses, string tag1, string tag2) external view
        returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals);
    function readAllFeedback(uint256 agentId, address[] clientAddresses, string tag1, string tag2, bool includeRevoked)
        external view returns (address[] clients, uint64[] feedbackIndexes, int128[] values, uint8[] valueDecimals,
        string[] tag1s, string[] tag2s, bool[] revokedStatuses);
}

/// The Validation Registry's functions (its `getSummary` overloads the Reputation Registry's).
pub mod validation {
    alloy_sol_types::sol! {
        function getAgentValidations(uint256 agentId) external view returns (bytes32[] requestHashes);
        function getValidationStatus(bytes32 requestHash) external view returns (address validatorAddress,
            uint256 agentId, uint8 response, bytes32 responseHash, string tag, uint256 lastUpdate);
        function getSummary(uint256 agentId, address[] validatorAddresses, string tag) external view
            returns (uint64 count, uint8 averageResponse);
    }
}

/// One chain's registries.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Registries {
    pub identity: Address,
    pub reputation: Address,
    pub validation: Address,
}

/// The registries of `chain_id`.
pub fn of(chain_id: ChainId) -> Result<Registries, Error> {
    settings::of_chain(chain_id)?.ok_or_else(|| {
        chain_not_supported(format!(
            "no ERC-8004 registries for chain {chain_id} in `[settings] identity` (chains.{chain_id}: identity, \
             reputation, validation); `bardo devnet up` writes the devnet's"
        ))
    })
}

/// `eip155:<chain>:<registry>`, the ERC's agentRegistry.
pub fn agent_registry(chain_id: ChainId, identity: Address) -> String {
    format!("eip155:{chain_id}:{}", identity.to_checksum(None))
}
