//! The write path `[safety]` configures, over a runtime host: the hook chain (policy cage,
//! allowlist, rate limit, approvals; then spending, the Uniswap cross-check, stranded value, the
//! price guard, the value guard and the health floor after the simulation), the host key, and where permits, the halt, the spending ledger and
//! the audit chain live — this machine's files, or with `[cluster]` the fleet's NATS, never
//! both. Each generation's hooks are built from the same policy over that generation's
//! services; what must outlive a generation (spend, the rate window) is shared.

use crate::audit_log::{AuditError, AuditLog};
use crate::config::SafetyConfig;
use crate::cross_check::{MorphoCrossCheck, UniswapCrossCheck};
use crate::generation::{HookFactory, Hooks};
use crate::health_floor::HealthFloor;
use crate::hooks::{AllowlistGuard, ApprovalGuard, MaxPosition, PolicyCage, RateLimiter, SafetyHook};
use crate::host_key::HostKey;
use crate::permit::Permits;
use crate::price_guard::PriceGuard;
use crate::spending::SpendingLimiter;
use crate::stranded::StrandedValue;
use crate::valuation::{PricingConfig, Valuer};
use crate::value_guard::ValueGuard;
use crate::{Clock, WritePath};
use alloy::primitives::Address;
use bardo_cluster::{Cluster, ClusterError, ClusterSettings};
use bardo_core::config::ConfigError;
use bardo_core::scope::Role;
use bardo_runtime::{Config, Host, Services};
use bardo_sidecar::SidecarSettings;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Why the write path could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// `[safety]`, `[cluster]`, `[sidecar]` or a file they name is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The audit log could not be opened.
    #[error(transparent)]
    Audit(#[from] AuditError),
    /// The host key (`[safety] host_key`) could not be read or created.
    #[error("{0}")]
    HostKey(String),
    /// `[cluster]` is set and its NATS servers cannot be used: nothing falls back to files.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
}

/// The fleet's cluster `[cluster]` names, connected, its state sealed with the host key (every
/// host of the fleet holds the same); none without `[cluster]`.
pub fn cluster(config: &Config) -> Result<Option<Cluster>, SetupError> {
    let Some(settings) = config.optional::<ClusterSettings>()? else { return Ok(None) };
    let key = Arc::new(host_key(config)?);
    Ok(Some(Cluster::connect(&settings.client_config(config.base()), key)?))
}

/// With `[cluster]` and memory on, replicate the agent's memory through the fleet (see
/// `bardo_runtime::fleet_memory`): every host then searches the fleet's episodes.
pub fn fleet_memory(config: &Config, services: &Services) -> Result<(), SetupError> {
    let Some(memory) = &services.memory else { return Ok(()) };
    let Some(settings) = config.optional::<ClusterSettings>()? else { return Ok(()) };
    let Some(cluster) = cluster(config)? else { return Ok(()) };
    bardo_runtime::fleet_memory::replicate(memory, &cluster, &settings.host_name())?;
    Ok(())
}

/// The host key `[safety] host_key` names (created 0600 on first use).
pub fn host_key(config: &Config) -> Result<HostKey, SetupError> {
    let safety: SafetyConfig = config.section()?;
    HostKey::load_or_create(&config.resolve(&safety.host_key)).map_err(SetupError::HostKey)
}

/// The write path over `host`, with the hook chain and stores `[safety]` (and `[cluster]`)
/// configure; later generations (`WritePath::reload`) get hooks built by the same policy.
pub fn write_path(config: &Config, host: Arc<Host>) -> Result<WritePath, SetupError> {
    let safety: SafetyConfig = config.section()?;
    let key = host_key(config)?;
    let cluster = cluster(config)?;
    let audit = match &cluster {
        // The fleet chain's head this host saw, kept beside where its file log would be.
        Some(cluster) => AuditLog::shared(cluster.clone(), &cluster.audit_label(), key.clone())
            .with_checkpoint(&config.resolve(&safety.audit_log).with_extension("fleet-head"))?,
        None => AuditLog::open(&config.resolve(&safety.audit_log), key.clone())?,
    };
    let ttl = Duration::from_secs(safety.ttl_secs);
    let clock: Clock = Arc::new(SystemTime::now);
    let policy = Arc::new(Policy::read(config, &safety, cluster.clone(), ttl, clock.clone())?);
    let services = host.services().clone();
    let services_memory = services.memory.clone();
    let profile = host.profile().name().to_owned();
    let first = policy.hooks(&services);
    let factory: HookFactory = Arc::new(move |services: &Arc<Services>| Ok(policy.hooks(services)));
    let mut path = WritePath::over(host, services, first, audit)
        .with_hook_factory(factory)
        .with_ttl(ttl)
        .with_clock(clock)
        .with_mismatch_phase(safety.mismatch_phase)
        .with_confirm_policy(safety.confirm.for_profile(&profile));
    if let (Some(memory), Some(cluster)) = (&services_memory, &cluster) {
        let host = config.optional::<ClusterSettings>()?.map(|s| s.host_name()).unwrap_or_default();
        bardo_runtime::fleet_memory::replicate(memory, cluster, &host)?;
    }
    path = match cluster {
        Some(cluster) => path.with_permits(Permits::shared(cluster, key)),
        None => path.with_permit_file(&config.resolve(&safety.permits), key),
    };
    if let Some(memory) = &services_memory {
        path = path.with_episodes(memory.recorder());
    }
    path.set_phase(safety.phase);
    // A previous process may have died mid-broadcast: settle its spend from the chain.
    match path.reconcile() {
        Ok(released) if !released.is_empty() => {
            tracing::info!("released the spend of interrupted permits that sent nothing: {released:?}")
        }
        Ok(_) => {}
        Err(e) => {
            tracing::warn!("cannot reconcile interrupted permits now ({e}); they stay spent until it can")
        }
    }
    Ok(path)
}

/// `[safety]` as the hooks use it, read once; [`Policy::hooks`] builds a generation's hooks.
struct Policy {
    pricing: BTreeMap<u64, PricingConfig>,
    allowed: BTreeMap<u64, crate::config::AllowedContracts>,
    morpho_markets: crate::morpho::TrustedMarkets,
    approved_assets: BTreeMap<u64, BTreeSet<Address>>,
    max_position_usd: Option<u64>,
    max_value_loss_bps: u32,
    min_health_factor: f64,
    max_price_deviation_bps: u32,
    /// One window for every generation.
    rate: Option<RateLimiter>,
    spending: Option<Spending>,
    cross_check: bool,
}

/// The spending limits and where their ledger lives (shared by every generation's limiter).
struct Spending {
    limits: crate::spending::SpendingLimits,
    ledger: Ledger,
    ttl: Duration,
    clock: Clock,
}

enum Ledger {
    File(std::path::PathBuf),
    Cluster(Cluster),
}

impl Policy {
    fn read(
        config: &Config,
        safety: &SafetyConfig,
        cluster: Option<Cluster>,
        ttl: Duration,
        clock: Clock,
    ) -> Result<Self, SetupError> {
        let sidecar: SidecarSettings = config.section()?;
        let spending = safety.spending.map(|limits| Spending {
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
            max_position_usd: safety.max_position_usd,
            max_value_loss_bps: safety.max_value_loss_bps,
            min_health_factor: safety.min_health_factor,
            max_price_deviation_bps: safety.max_price_deviation_bps,
            rate: safety.previews_per_minute.map(RateLimiter::new),
            spending,
            cross_check: sidecar.cross_check,
        })
    }

    /// The accounts of one role, per chain.
    fn with_role(&self, want: Role) -> BTreeMap<u64, BTreeSet<Address>> {
        let of_role = |roles: &crate::config::AllowedContracts| {
            roles.iter().filter(|(_, role)| **role == want).map(|(a, _)| *a).collect()
        };
        self.allowed.iter().map(|(chain, roles)| (*chain, of_role(roles))).collect()
    }

    /// The hook chain over `services`. Prices come from the sources the operator trusts, read
    /// on those services' chains, never from a plugin or a pool found by searching: every write
    /// is valued (the value guard); a chain without a pricing config cannot be written to.
    fn hooks(&self, services: &Arc<Services>) -> Hooks {
        let valuer = Valuer::new(services, self.pricing.clone());
        let max_position = self.max_position_usd.map(|usd| MaxPosition { usd, valuer: valuer.clone() });
        let mut before: Vec<Box<dyn SafetyHook>> = vec![
            Box::new(PolicyCage {
                approved_assets: self.approved_assets.clone(),
                max_position,
                valuer: Some(valuer.clone()),
            }),
            Box::new(
                AllowlistGuard::new(self.allowed.clone())
                    .with_morpho_markets(crate::morpho::ids(&self.morpho_markets)),
            ),
        ];
        if let Some(rate) = &self.rate {
            before.push(Box::new(rate.clone()));
        }
        before.push(Box::new(ApprovalGuard));
        let mut after: Vec<Box<dyn SafetyHook>> = Vec::new();
        if let Some(s) = &self.spending {
            let limiter = SpendingLimiter::new(s.limits, valuer.clone(), s.ttl, s.clock.clone());
            after.push(Box::new(match &s.ledger {
                Ledger::Cluster(cluster) => limiter.with_cluster(cluster.clone()),
                Ledger::File(path) => limiter.with_ledger_file(path),
            }));
        }
        if let Some(sdk) = services.uniswap_sdk.as_ref().filter(|_| self.cross_check) {
            after.push(Box::new(UniswapCrossCheck {
                services: services.clone(),
                sidecar: sdk.sidecar.clone(),
                books: sdk.books.clone(),
            }));
            after.push(Box::new(MorphoCrossCheck {
                services: services.clone(),
                sidecar: sdk.sidecar.clone(),
                morphos: self.with_role(Role::MorphoBlue),
                markets: self.morpho_markets.clone(),
            }));
        }
        // Before the value guard: value left behind is named for what it is, not as a loss.
        after.push(Box::new(StrandedValue {
            valuer: valuer.clone(),
            roles: self.allowed.clone(),
            morpho_markets: self.morpho_markets.clone(),
        }));
        after.push(Box::new(PriceGuard { valuer: valuer.clone(), max_bps: self.max_price_deviation_bps }));
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
