//! One plugin on a fresh devnet behind the host's write path — policy cage, an allowlist, the
//! approval guard and the value guard — signing as anvil's second dev account: the environment
//! the wallet, vault and scaffold tests share; and the devnet's prices and value guard as
//! `bardo` builds them.

use crate::{devnet, devnet_host_with, runtime};
use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, U256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol_types::SolCall;
use bardo_core::scope::Role;
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_runtime::plugin::Host;
use bardo_safety::audit_log::AuditLog;
use bardo_safety::hooks::{AllowlistGuard, ApprovalGuard, PolicyCage, SafetyHook};
use bardo_safety::host_key::HostKey;
use bardo_safety::valuation::{PricingConfig, Valuer};
use bardo_safety::{WritePath, WriteResult};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

alloy::sol! {
    function balanceOf(address account) external view returns (uint256);
}

/// anvil's second dev account: the wallet here.
pub const USER_KEY: &str = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

/// A plugin behind the write path on a fresh devnet.
pub struct Env {
    _node: Anvil,
    /// Where everything is.
    pub d: Deployments,
    /// The host (its reads).
    pub host: Arc<Host>,
    /// Its write path.
    pub path: WritePath,
    /// For the test's own RPC calls.
    pub rt: tokio::runtime::Runtime,
    /// The node.
    pub provider: DynProvider,
    /// The wallet (anvil's second account).
    pub user: Address,
    _audit: tempfile::TempDir,
}

/// `guests` on a fresh devnet with plugin `settings` (by plugin name) and the host allowlist
/// `allowed`, both made from the deployments.
pub fn env(
    guests: &[&str],
    settings: impl FnOnce(&Deployments) -> BTreeMap<String, Value>,
    allowed: impl FnOnce(&Deployments) -> BTreeMap<Address, Role>,
) -> Env {
    env_deviating(
        guests,
        settings,
        allowed,
        bardo_safety::hooks::price_guard::DEFAULT_MAX_PRICE_DEVIATION_BPS,
    )
}

/// [`env`] with `[safety] max_price_deviation_bps` set to `bps`.
pub fn env_deviating(
    guests: &[&str],
    settings: impl FnOnce(&Deployments) -> BTreeMap<String, Value>,
    allowed: impl FnOnce(&Deployments) -> BTreeMap<Address, Role>,
    bps: u32,
) -> Env {
    let (node, d) = devnet();
    let host = Arc::new(devnet_host_with(&node.url(), settings(&d), Some(USER_KEY), guests));
    let (path, audit) = guarded_path_deviating(&host, &d, PolicyCage::default(), allowed(&d), bps);
    let provider = ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased();
    let user = d.accounts[1];
    Env { _node: node, d, host, path, rt: runtime(), provider, user, _audit: audit }
}

impl Env {
    /// The test's own hands on the node, with their own runtime (a provider serves only the
    /// runtime it was first driven on: its pooled connections are tasks of that runtime).
    pub fn chain(&self) -> crate::chain::Chain {
        crate::chain::Chain::connect(&self._node.url())
    }
}

pub use crate::u256;

/// The write path of these environments over `host`: `cage`, the allowlist `allowed` on the
/// devnet's chain, the approval guard and, after simulation, the devnet's value guards
/// ([`guards`]); auditing into a new temporary directory, which lives as long as the handle.
pub fn guarded_path(
    host: &Arc<Host>,
    d: &Deployments,
    cage: PolicyCage,
    allowed: BTreeMap<Address, Role>,
) -> (WritePath, tempfile::TempDir) {
    let bps = bardo_safety::hooks::price_guard::DEFAULT_MAX_PRICE_DEVIATION_BPS;
    guarded_path_deviating(host, d, cage, allowed, bps)
}

/// [`guarded_path`] with `[safety] max_price_deviation_bps` set to `bps`.
pub fn guarded_path_deviating(
    host: &Arc<Host>,
    d: &Deployments,
    cage: PolicyCage,
    allowed: BTreeMap<Address, Role>,
    bps: u32,
) -> (WritePath, tempfile::TempDir) {
    let hooks: Vec<Box<dyn SafetyHook>> = vec![
        Box::new(cage),
        Box::new(
            AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, allowed)]))
                .with_morpho_markets(bardo_safety::morpho::ids(&morpho_markets(d))),
        ),
        Box::new(ApprovalGuard),
    ];
    let audit = tempfile::tempdir().expect("tempdir");
    let log = AuditLog::open(&audit.path().join("audit.jsonl"), HostKey::ephemeral()).expect("audit log");
    let path = WritePath::new(host.clone(), host.services().clone(), hooks, log)
        .with_valuer(valuer(host, d))
        .with_after_simulation(deviating(host.services(), d, d.write_targets(), bps));
    (path, audit)
}

impl Env {
    /// A view of `to`, read directly from the node.
    pub fn read<C: SolCall>(&self, to: Address, call: C) -> C::Return {
        let tx = TransactionRequest::default().to(to).with_input(call.abi_encode());
        let out = self.rt.block_on(self.provider.call(tx).into_future()).expect("eth_call");
        C::abi_decode_returns(&out).expect("decode")
    }

    /// `who`'s balance of the ERC-20 `token`, read directly.
    pub fn balance_of(&self, token: Address, who: Address) -> U256 {
        self.read(token, balanceOfCall { account: who })
    }

    /// `who`'s ether.
    pub fn eth(&self, who: Address) -> U256 {
        self.rt.block_on(self.provider.get_balance(who).into_future()).expect("balance")
    }

    /// A tool's answer, which must succeed.
    pub fn tool(&self, tool: &str, params: Value) -> Value {
        let json = self.host.call(tool, &params.to_string()).result.unwrap_or_else(|e| panic!("{tool}: {e}"));
        serde_json::from_str(&json).expect("json")
    }

    /// A tool's error, which there must be.
    pub fn tool_error(&self, tool: &str, params: Value) -> bardo_core::ToolError {
        self.host.call(tool, &params.to_string()).result.expect_err(&format!("{tool} {params} must fail"))
    }

    /// Preview and commit `kind`: verified from the receipts, exactly as declared.
    pub fn write(&self, kind: &str, params: Value) -> WriteResult {
        let permit =
            self.path.preview(kind, &params).unwrap_or_else(|e| panic!("preview {kind} {params}: {e}"));
        let result = self.path.commit(&permit.permit_id).unwrap_or_else(|e| panic!("commit {kind}: {e}"));
        assert_eq!(result.ground_truth, "receipt");
        assert!(result.outcome_mismatch.is_empty(), "{:?}", result.outcome_mismatch);
        result
    }

    /// Re-stamp the devnet's price feeds, as `bardo devnet up`'s keeper does after the clock
    /// moves (a test's time travel would leave them stale).
    pub fn restamp_feeds(&self) {
        self.rt
            .block_on(bardo_devnet::feeds::restamp(&self._node.url(), &self.d.feeds, 0))
            .expect("restamp feeds");
    }

    /// The ether `result`'s transactions paid in gas.
    pub fn gas(&self, result: &WriteResult) -> U256 {
        result
            .tx_hashes
            .iter()
            .map(|hash| {
                let r = self
                    .rt
                    .block_on(
                        self.provider.get_transaction_receipt(hash.parse().expect("hash")).into_future(),
                    )
                    .expect("receipt")
                    .expect("mined");
                U256::from(r.gas_used) * U256::from(r.effective_gas_price)
            })
            .sum()
    }
}

/// The devnet's Morpho markets as the operator's trusted ones, read from what `bardo devnet up`
/// writes to `morpho_markets.json`.
pub fn morpho_markets(d: &Deployments) -> bardo_safety::morpho::TrustedMarkets {
    let file: BTreeMap<String, BTreeMap<String, bardo_safety::morpho::MorphoMarket>> =
        serde_json::from_value(d.morpho_markets_json()).expect("the devnet's Morpho markets parse");
    file.into_iter()
        .map(|(chain, named)| {
            let markets =
                bardo_safety::morpho::by_id(named).expect("the devnet's ids are the markets' hashes");
            (chain.parse().expect("chain id"), markets)
        })
        .collect()
}

/// The devnet's pricing config, as `bardo devnet up` writes it to `pricing.json`.
pub fn pricing(d: &Deployments) -> BTreeMap<u64, PricingConfig> {
    PricingConfig::from_json(d.pricing_json()).expect("the devnet's pricing config parses")
}

/// The checks after the simulation as `bardo` builds them for the devnet (without the spending
/// limiter and the SDK cross-checks, which tests add where they need them): approvals at their
/// worth, the bounds the chain enforces, stranded value, the price guard, the value guard
/// (trusted prices, the position managers, the treasury) and the health floor.
pub fn guards(host: &Host, d: &Deployments) -> Vec<Box<dyn bardo_safety::hooks::SafetyHook>> {
    guards_on(host.services(), d)
}

/// [`guards`] on `services`' chains.
pub fn guards_on(
    services: &Arc<bardo_runtime::Services>,
    d: &Deployments,
) -> Vec<Box<dyn bardo_safety::hooks::SafetyHook>> {
    guards_with(services, d, d.write_targets(), bardo_safety::hooks::value_guard::DEFAULT_MAX_LOSS_BPS)
}

/// [`guards`] on `services`' chains for an allowlist of `roles` (routers keep nothing, trusted
/// hooks take their fees, recipients may be paid) and a loss bound of `max_loss_bps`.
pub fn guards_with(
    services: &Arc<bardo_runtime::Services>,
    d: &Deployments,
    roles: BTreeMap<Address, Role>,
    max_loss_bps: u32,
) -> Vec<Box<dyn bardo_safety::hooks::SafetyHook>> {
    let slippage = bardo_safety::hooks::on_chain_bounds::DEFAULT_MAX_SLIPPAGE_BPS;
    guards_allowing(services, d, roles, max_loss_bps, slippage)
}

/// [`guards_with`], the chain's bounds allowed `max_slippage_bps` below (or above) what a plan
/// simulates.
pub fn guards_allowing(
    services: &Arc<bardo_runtime::Services>,
    d: &Deployments,
    roles: BTreeMap<Address, Role>,
    max_loss_bps: u32,
    max_slippage_bps: u32,
) -> Vec<Box<dyn bardo_safety::hooks::SafetyHook>> {
    let deviation = bardo_safety::hooks::price_guard::DEFAULT_MAX_PRICE_DEVIATION_BPS;
    after_simulation(services, d, roles, (max_loss_bps, max_slippage_bps, deviation))
}

/// [`guards_on`] with `[safety] max_price_deviation_bps` set to `bps`.
fn deviating(
    services: &Arc<bardo_runtime::Services>,
    d: &Deployments,
    roles: BTreeMap<Address, Role>,
    bps: u32,
) -> Vec<Box<dyn bardo_safety::hooks::SafetyHook>> {
    let (loss, slippage) = (
        bardo_safety::hooks::value_guard::DEFAULT_MAX_LOSS_BPS,
        bardo_safety::hooks::on_chain_bounds::DEFAULT_MAX_SLIPPAGE_BPS,
    );
    after_simulation(services, d, roles, (loss, slippage, bps))
}

/// The checks after the simulation with (max loss, max slippage, max price deviation) in bps.
fn after_simulation(
    services: &Arc<bardo_runtime::Services>,
    d: &Deployments,
    roles: BTreeMap<Address, Role>,
    (max_loss_bps, max_slippage_bps, deviation): (u32, u32, u32),
) -> Vec<Box<dyn bardo_safety::hooks::SafetyHook>> {
    let valuer = Valuer::new(services, pricing(d));
    let of_role = |want: bardo_core::scope::Role| -> BTreeMap<u64, std::collections::BTreeSet<Address>> {
        BTreeMap::from([(d.chain_id, roles.iter().filter(|(_, r)| **r == want).map(|(a, _)| *a).collect())])
    };
    vec![
        Box::new(bardo_safety::hooks::ApprovalExposure {
            valuer: valuer.clone(),
            high_risk_usd: bardo_safety::hooks::approval_exposure::DEFAULT_HIGH_RISK_USD,
        }),
        Box::new(bardo_safety::hooks::stranded_value::StrandedValue {
            valuer: valuer.clone(),
            roles: BTreeMap::from([(d.chain_id, roles.clone())]),
            morpho_markets: morpho_markets(d),
        }),
        Box::new(bardo_safety::hooks::price_guard::PriceGuard { valuer: valuer.clone(), max_bps: deviation }),
        Box::new(bardo_safety::hooks::OnChainBounds {
            valuer: valuer.clone(),
            roles: BTreeMap::from([(d.chain_id, roles.clone())]),
            max_slippage_bps,
        }),
        Box::new(bardo_safety::hooks::value_guard::ValueGuard {
            valuer: valuer.clone(),
            position_managers: BTreeMap::from([(d.chain_id, [d.uniswap_v3["position_manager"]].into())]),
            v4_position_managers: BTreeMap::from([(d.chain_id, [d.uniswap_v4["position_manager"]].into())]),
            recipients: BTreeMap::from([(d.chain_id, d.treasury().into_iter().collect())]),
            max_loss_bps,
            max_price_deviation_bps: deviation,
            morpho_markets: morpho_markets(d),
        }),
        Box::new(
            bardo_safety::hooks::health_floor::HealthFloor::new(
                of_role(bardo_core::scope::Role::AaveV3Pool),
                bardo_safety::hooks::health_floor::DEFAULT_MIN_HEALTH_FACTOR,
            )
            .with_morpho(of_role(bardo_core::scope::Role::MorphoBlue), morpho_markets(d)),
        ),
    ]
}

/// A valuer on `host`'s chains with the devnet's pricing config.
pub fn valuer(host: &Host, d: &Deployments) -> Valuer {
    Valuer::new(host.services(), pricing(d))
}
