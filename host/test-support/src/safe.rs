//! The devnet's dev Safe (threshold 1, owned by the dev key) as the wallet: a host whose dev key
//! writes through it, and the Safe funded from the dev account.

use crate::{devnet_chains, host_over, runtime};
use alloy::network::TransactionBuilder as _;
use alloy::primitives::{Address, U256};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol_types::SolCall;
use bardo_devnet::deploy::Deployments;
use bardo_evm::{Evm, SafeKey, SafeWallet, SimCall, Wallet};
use bardo_runtime::Services;
use bardo_runtime::plugin::Host;
use serde_json::Value;
use std::collections::BTreeMap;

alloy::sol! {
    function transfer(address to, uint256 amount) external returns (bool);
    function enableModule(address module) external;
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

/// The devnet's caged Safe (owners: the dev key and the operator; guard: the PolicyCage),
/// written through by the dev key as an owner.
pub fn caged_safe(d: &Deployments) -> SafeWallet {
    SafeWallet { safe: d.cage.safe, multi_send: d.safe.multi_send_call_only, key: SafeKey::Owner }
}

/// Give the dev Safe `eth` wei and, from the dev account, `tokens` (symbol, base units).
pub fn fund_dev_safe(url: &str, d: &Deployments, eth: U256, tokens: &[(&str, U256)]) {
    fund_safe(url, d, d.safe.dev_safe, eth, tokens)
}

/// Give `safe` `eth` wei and, from the dev account, `tokens` (symbol, base units).
pub fn fund_safe(url: &str, d: &Deployments, safe: Address, eth: U256, tokens: &[(&str, U256)]) {
    let provider = ProviderBuilder::new().connect_http(url.parse().expect("url"));
    let rt = runtime();
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
/// transaction of the dev key's (the host's own encoding, [`SafeWallet::wrap`]) whose one call
/// is the Safe's `enableModule`.
pub fn enable_module(provider: &impl Provider, d: &Deployments, module: Address) {
    let call = SimCall {
        to: d.safe.dev_safe,
        data: enableModuleCall { module }.abi_encode().into(),
        value: U256::ZERO,
    };
    let tx = dev_safe(d, SafeKey::Owner).wrap(d.deployer, &[call]);
    let tx = TransactionRequest::default().from(d.deployer).to(tx.to).with_input(tx.data);
    let receipt = runtime()
        .block_on(async { provider.send_transaction(tx).await?.get_receipt().await })
        .expect("enableModule");
    assert!(receipt.status(), "the owner enabled {module}");
}
