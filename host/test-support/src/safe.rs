//! The devnet's dev Safe (threshold 1, owned by the dev key) as the wallet: a host whose dev key
//! writes through it, and the Safe funded from the dev account.

use crate::{devnet_chains, host_over, runtime};
use alloy::network::TransactionBuilder as _;
use alloy::primitives::{Address, Bytes, U256};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol_types::SolCall;
use bardo_devnet::deploy::Deployments;
use bardo_evm::{Evm, SafeKey, SafeWallet, Wallet};
use bardo_runtime::Services;
use bardo_runtime::plugin::Host;
use serde_json::Value;
use std::collections::BTreeMap;

alloy::sol! {
    function transfer(address to, uint256 amount) external returns (bool);
    function enableModule(address module) external;
    function execTransaction(address to, uint256 value, bytes data, uint8 operation, uint256 safeTxGas,
        uint256 baseGas, uint256 gasPrice, address gasToken, address refundReceiver, bytes signatures)
        external payable returns (bool success);
}

/// The devnet's dev Safe and its `MultiSendCallOnly`, written through by `key`, an owner or a
/// module.
pub fn dev_safe(d: &Deployments, key: SafeKey) -> SafeWallet {
    SafeWallet { safe: d.safe.dev_safe, multi_send: d.safe.multi_send_call_only, key }
}

/// A `dev`-profile host on the devnet at `url` whose `key` writes through `safe`: plugins see
/// the Safe as the wallet. Plugin `settings` by plugin name.
pub fn devnet_safe_host(
    url: &str,
    key: &str,
    safe: SafeWallet,
    settings: BTreeMap<String, Value>,
    guests: &[&str],
) -> Host {
    let key = Wallet::from_signer(key.parse().expect("key"));
    let evm = Evm::new(devnet_chains(url), Some(key)).through(safe);
    host_over(Services::new(evm).with_settings(settings, BTreeMap::new()), guests)
}

/// Give the dev Safe `eth` wei and, from the dev account, `tokens` (symbol, base units).
pub fn fund_dev_safe(url: &str, d: &Deployments, eth: U256, tokens: &[(&str, U256)]) {
    let provider = ProviderBuilder::new().connect_http(url.parse().expect("url"));
    let rt = runtime();
    let safe = d.safe.dev_safe;
    rt.block_on(provider.raw_request::<_, Value>("anvil_setBalance".into(), (safe, eth)))
        .expect("set balance");
    for (symbol, amount) in tokens {
        let tx = TransactionRequest::default()
            .from(d.deployer)
            .to(d.tokens[*symbol].address)
            .with_input(transferCall { to: safe, amount: *amount }.abi_encode());
        let receipt = rt
            .block_on(async { provider.send_transaction(tx).await?.get_receipt().await })
            .unwrap_or_else(|e| panic!("fund the Safe with {symbol}: {e}"));
        assert!(receipt.status(), "the dev account holds {amount} {symbol}");
    }
}

/// The dev key, the dev Safe's owner, enables `module` on it through `provider`: one Safe
/// transaction, signed by being its sender (an approved hash: r = the owner, v = 1).
pub fn enable_module(provider: &impl Provider, d: &Deployments, module: Address) {
    let mut signature = vec![0u8; 65];
    signature[12..32].copy_from_slice(d.deployer.as_slice());
    signature[64] = 1;
    let exec = execTransactionCall {
        to: d.safe.dev_safe,
        value: U256::ZERO,
        data: enableModuleCall { module }.abi_encode().into(),
        operation: 0,
        safeTxGas: U256::ZERO,
        baseGas: U256::ZERO,
        gasPrice: U256::ZERO,
        gasToken: Address::ZERO,
        refundReceiver: Address::ZERO,
        signatures: Bytes::from(signature),
    };
    let tx = TransactionRequest::default().from(d.deployer).to(d.safe.dev_safe).with_input(exec.abi_encode());
    let receipt = runtime()
        .block_on(async { provider.send_transaction(tx).await?.get_receipt().await })
        .expect("enableModule");
    assert!(receipt.status(), "the owner enabled {module}");
}
