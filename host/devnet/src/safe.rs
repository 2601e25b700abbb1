//! Safe on the devnet: the published `@safe-global/safe-contracts` 1.4.1 artifacts — the
//! `SafeL2` singleton, `SafeProxyFactory`, `MultiSendCallOnly` and the
//! `CompatibilityFallbackHandler` — and a Safe owned by the dev wallet (threshold 1).

use super::deployer::{DeployError, Deployer};
use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, Bytes, U256};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::{SolCall, SolEvent};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

sol! {
    function setup(address[] _owners, uint256 _threshold, address to, bytes data, address fallbackHandler,
        address paymentToken, uint256 payment, address paymentReceiver) external;
    function createProxyWithNonce(address _singleton, bytes initializer, uint256 saltNonce) external returns (address);
    event ProxyCreation(address indexed proxy, address singleton);
}

const ARTIFACTS: &str = "@safe-global/safe-contracts/build/artifacts/contracts";

/// The Safe contracts and the dev wallet's Safe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Safe {
    /// The `SafeL2` singleton every Safe proxy delegates to.
    pub singleton: Address,
    /// `SafeProxyFactory`, which creates Safes.
    pub proxy_factory: Address,
    /// `MultiSendCallOnly`: a batch of calls (never a delegatecall) in one Safe transaction.
    pub multi_send_call_only: Address,
    /// `CompatibilityFallbackHandler`, every new Safe's fallback handler.
    pub fallback_handler: Address,
    /// A Safe whose one owner is the dev wallet, threshold 1.
    pub dev_safe: Address,
}

/// Deploy the contracts and the dev wallet's Safe.
pub(super) async fn deploy_safe(d: &Deployer) -> Result<Safe, DeployError> {
    let none = BTreeMap::new();
    let at = |rel: &str| format!("{ARTIFACTS}/{rel}");
    let singleton = d.deploy(&at("SafeL2.sol/SafeL2.json"), Vec::new(), &none).await?;
    let proxy_factory =
        d.deploy(&at("proxies/SafeProxyFactory.sol/SafeProxyFactory.json"), Vec::new(), &none).await?;
    let multi_send_call_only =
        d.deploy(&at("libraries/MultiSendCallOnly.sol/MultiSendCallOnly.json"), Vec::new(), &none).await?;
    let fallback_handler = d
        .deploy(
            &at("handler/CompatibilityFallbackHandler.sol/CompatibilityFallbackHandler.json"),
            Vec::new(),
            &none,
        )
        .await?;
    let contracts =
        Safe { singleton, proxy_factory, multi_send_call_only, fallback_handler, dev_safe: Address::ZERO };
    let dev_safe = create_safe(d, &contracts, &[d.from], contracts.fallback_handler, 0).await?;
    Ok(Safe { singleton, proxy_factory, multi_send_call_only, fallback_handler, dev_safe })
}

/// A new Safe of `owners` with threshold 1 and `fallback_handler` (zero: none), from the Safe
/// contracts `s`; `salt` tells Safes of the same owners apart.
pub(super) async fn create_safe(
    d: &Deployer,
    s: &Safe,
    owners: &[Address],
    fallback_handler: Address,
    salt: u64,
) -> Result<Address, DeployError> {
    let initializer = setupCall {
        _owners: owners.to_vec(),
        _threshold: U256::from(1),
        to: Address::ZERO,
        data: Bytes::new(),
        fallbackHandler: fallback_handler,
        paymentToken: Address::ZERO,
        payment: U256::ZERO,
        paymentReceiver: Address::ZERO,
    }
    .abi_encode();
    let create = createProxyWithNonceCall {
        _singleton: s.singleton,
        initializer: initializer.into(),
        saltNonce: U256::from(salt),
    };
    let tx = TransactionRequest::default().to(s.proxy_factory).with_input(Bytes::from(create.abi_encode()));
    let step = format!("create a Safe of {} owners", owners.len());
    let receipt = d.send(&step, tx).await?;
    receipt
        .inner
        .logs()
        .iter()
        .find_map(|l| ProxyCreation::decode_log(&l.inner).ok().map(|e| e.proxy))
        .ok_or_else(|| DeployError::Tx { step, message: "the receipt holds no ProxyCreation".into() })
}
