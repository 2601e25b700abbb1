//! The hook chain, in one place: which hooks a generation's write path runs, in which order,
//! each built from `[safety]` over that generation's services. Prices come from the sources the
//! operator trusts, read on those services' chains, never from a plugin or a pool found by
//! searching: every write is valued (the value guard); a chain without a pricing config cannot
//! be written to. What must outlive a generation (the spending ledger, the rate window) is
//! shared by the clones each generation gets.

use super::{
    AllowlistGuard, ApprovalExposure, ApprovalGuard, HealthFloor, MaxPosition, MorphoCrossCheck,
    OnChainBounds, PolicyCage, PriceGuard, RateLimiter, ReputationGuard, ReputationLimits, SafetyHook,
    SpendingLimiter, StrandedValue, UniswapCrossCheck, ValueGuard,
};
use crate::Clock;
use crate::config::SafetyConfig;
use crate::generation::Hooks;
use crate::scope::AllowedContracts;
use crate::valuation::{PricingConfig, Valuer};
use alloy::primitives::Address;
use bardo_cluster::Cluster;
use bardo_core::config::ConfigError;
use bardo_core::scope::Role;
use bardo_runtime::{Config, Services};
use bardo_sidecar::SidecarSettings;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

/// `[safety]` as the hooks use it, read once; [`Policy::hooks`] builds a generation's hooks.
pub(crate) struct Policy {
    pricing: BTreeMap<u64, PricingConfig>,
    allowed: BTreeMap<u64, AllowedContracts>,
    morpho_markets: crate::morpho::TrustedMarkets,
    approved_assets: BTreeMap<u64, BTreeSet<Address>>,
    bridge_routes: super::bridge_guard::ByChain,
    max_position_usd: Option<u64>,
    max_value_loss_bps: u32,
    min_health_factor: f64,
    max_price_deviation_bps: u32,
    max_slippage_bps: u32,
    approval_high_risk_usd: u64,
    /// One window for every generation.
    rate: Option<RateLimiter>,
    /// Feedback and validation limits, the ledger's path resolved.
    reputation: ReputationLimits,
    spending: Option<Spending>,
    cross_check: bool,
}

/// The spending limits and where their ledger lives (shared by every generation's limiter).
struct Spending {
    limits: super::SpendingLimits,
    ledger: Ledger,
    ttl: Duration,
    clock: Clock,
}

enum Ledger {
    File(std::path::PathBuf),
    Cluster(Cluster),
}

impl Policy {
    /// `[safety]` (and `[sidecar]`'s cross-check switch) of `config`.
    pub(crate) fn read(
        config: &Config,
        safety: &SafetyConfig,
        cluster: Option<Cluster>,
        ttl: Duration,
        clock: Clock,
    ) -> Result<Self, ConfigError> {
        let sidecar: SidecarSettings = config.section()?;
        let spending = safety.spending.clone().map(|limits| Spending {
            limits,
            ledger: match cluster {
                Some(cluster) => Ledger::Cluster(cluster),
                None => Ledger::File(config.resolve(&safety.spending_ledger)),
            },
            ttl,
            clock,
        });
        Ok(Self {
            pricing: safety.pricing(config)?,
            allowed: safety.allowlist(config)?,
            morpho_markets: safety.morpho_markets(config)?,
            approved_assets: safety.approved_assets(config)?,
            bridge_routes: safety.bridge_routes(config)?,
            max_position_usd: safety.max_position_usd,
            max_value_loss_bps: safety.max_value_loss_bps,
            min_health_factor: safety.min_health_factor,
            max_price_deviation_bps: safety.max_price_deviation_bps,
            max_slippage_bps: safety.max_slippage_bps,
            approval_high_risk_usd: safety.approval_high_risk_usd,
            rate: safety.previews_per_minute.map(RateLimiter::new),
            reputation: ReputationLimits {
                ledger: config.resolve(&safety.reputation.ledger),
                ..safety.reputation.clone()
            },
            spending,
            cross_check: sidecar.cross_check,
        })
    }

    /// The accounts of one role, per chain.
    fn with_role(&self, want: Role) -> BTreeMap<u64, BTreeSet<Address>> {
        let of_role = |roles: &AllowedContracts| {
            roles.iter().filter(|(_, role)| **role == want).map(|(a, _)| *a).collect()
        };
        self.allowed.iter().map(|(chain, roles)| (*chain, of_role(roles))).collect()
    }

    /// The hook chain over `services`, in order. Before the simulation: the policy, the
    /// allowlist's scopes, the rate, the approvals' calldata. After it (the hallucination
    /// detector always first, see `WritePath::preview`): approvals at their worth, spend, value
    /// left behind, pool prices (before the bounds and the SDKs' second opinions, so a deposit
    /// at a price the plan pushed is named for that), the bounds the chain enforces, the SDKs,
    /// value, health.
    pub(crate) fn hooks(&self, services: &Arc<Services>) -> Hooks {
        let valuer = Valuer::new(services, self.pricing.clone());
        let max_position = self.max_position_usd.map(|usd| MaxPosition { usd, valuer: valuer.clone() });
        let mut before: Vec<Box<dyn SafetyHook>> = vec![
            Box::new(PolicyCage {
                approved_assets: self.approved_assets.clone(),
                max_position,
                valuer: Some(valuer.clone()),
                custodians: self.with_role(Role::UniswapV3Staker),
            }),
            Box::new(
                AllowlistGuard::new(self.allowed.clone())
                    .with_morpho_markets(crate::morpho::ids(&self.morpho_markets)),
            ),
        ];
        // After the scopes: a deposit's other chain, recipient, output and worth.
        before.push(Box::new(super::bridge_guard::BridgeGuard {
            valuer: valuer.clone(),
            routes: self.bridge_routes.clone(),
            roles: self.allowed.clone(),
            services: services.clone(),
            max_loss_bps: self.max_value_loss_bps,
        }));
        if let Some(rate) = &self.rate {
            before.push(Box::new(rate.clone()));
        }
        before.push(Box::new(ReputationGuard {
            limits: self.reputation.clone(),
            roles: self.allowed.clone(),
            valuer: valuer.clone(),
            services: services.clone(),
        }));
        before.push(Box::new(ApprovalGuard));
        let mut after: Vec<Box<dyn SafetyHook>> = vec![Box::new(ApprovalExposure {
            valuer: valuer.clone(),
            high_risk_usd: self.approval_high_risk_usd,
        })];
        if let Some(s) = &self.spending {
            let limiter = SpendingLimiter::new(s.limits.clone(), valuer.clone(), s.ttl, s.clock.clone());
            after.push(Box::new(match &s.ledger {
                Ledger::Cluster(cluster) => limiter.with_cluster(cluster.clone()),
                Ledger::File(path) => limiter.with_ledger_file(path),
            }));
        }
        // Before the value guard: value left behind is named for what it is, not as a loss.
        after.push(Box::new(StrandedValue {
            valuer: valuer.clone(),
            roles: self.allowed.clone(),
            morpho_markets: self.morpho_markets.clone(),
        }));
        after.push(Box::new(PriceGuard { valuer: valuer.clone(), max_bps: self.max_price_deviation_bps }));
        after.push(Box::new(OnChainBounds {
            valuer: valuer.clone(),
            roles: self.allowed.clone(),
            max_slippage_bps: self.max_slippage_bps,
        }));
        if let Some(sdk) = services.uniswap_sdk.as_ref().filter(|_| self.cross_check) {
            after.push(Box::new(UniswapCrossCheck {
                services: services.clone(),
                sidecar: sdk.sidecar.clone(),
                books: sdk.books.clone(),
                valuer: valuer.clone(),
            }));
            after.push(Box::new(MorphoCrossCheck {
                services: services.clone(),
                sidecar: sdk.sidecar.clone(),
                morphos: self.with_role(Role::MorphoBlue),
                markets: self.morpho_markets.clone(),
            }));
        }
        after.push(Box::new(ValueGuard {
            valuer: valuer.clone(),
            position_managers: self.with_role(Role::UniswapV3PositionManager),
            v4_position_managers: self.with_role(Role::UniswapV4PositionManager),
            recipients: self.with_role(Role::Recipient),
            max_loss_bps: self.max_value_loss_bps,
            max_price_deviation_bps: self.max_price_deviation_bps,
            morpho_markets: self.morpho_markets.clone(),
        }));
        let floor = HealthFloor::new(self.with_role(Role::AaveV3Pool), self.min_health_factor)
            .with_morpho(self.with_role(Role::MorphoBlue), self.morpho_markets.clone());
        after.push(Box::new(floor));
        Hooks { after, valuer: Some(valuer), ..Hooks::new(services, before) }
    }
}
