//! Open a host from `bardo.toml`: the services (chains, simulator, wallet, settings) on the
//! host's runtime, the engine with its cache, the profile with its overrides and capabilities,
//! and every configured plugin checked against `bardo.lock` or pulled and pinned by
//! `distribution`. A plugin refused here is reported and skipped; the host serves the others.

use crate::config::{Config, ConfigError};
use crate::distribution::lock::{LockError, Lockfile, Pin};
use crate::distribution::{self, DistributionError, Outcome, Puller};
use crate::engine::{Engine, EngineError};
use crate::plugin::{Host, LoadError};
use crate::services::Services;
use bardo_core::Runtime;
use bardo_core::profile::{Profile, ProfileError};
use bardo_evm::chain::{ChainError, Chains};
use bardo_evm::signer::{SignerError, Wallet};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// Why a host could not be opened at all (a single plugin failing is not one of these).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// `bardo.toml` could not be read or is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The profile asked for does not exist.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// The engine could not be built.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A plugin file could not be read while re-pinning.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A `[chains]` entry is unusable.
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// The configured wallet could not be opened.
    #[error(transparent)]
    Signer(#[from] SignerError),
    /// `bardo.lock` could not be read or written.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The audit log could not be opened.
    #[error(transparent)]
    Audit(#[from] crate::safety::audit_log::AuditError),
    /// The archetype asked for does not exist.
    #[error("{0}")]
    Archetype(String),
    /// The host key (`[safety] host_key`) could not be read or created.
    #[error("{0}")]
    HostKey(String),
    /// The agent's grimoire could not be opened.
    #[error(transparent)]
    Grimoire(#[from] crate::adapter::grimoire::GrimoireError),
    /// The speculation engine's settings or file are unusable.
    #[error("{0}")]
    Speculation(String),
    /// `[cluster]` is set and its NATS servers cannot be used: nothing falls back to files.
    #[error(transparent)]
    Cluster(#[from] bardo_cluster::ClusterError),
}

/// Why one configured plugin was not loaded (the host serves the others).
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The component itself was refused.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// Its bytes no longer match their pin in `bardo.lock`.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// It could not be pulled, or its cached copy could not be used.
    #[error("plugin `{plugin}`: {source}")]
    Distribution {
        /// The name it is configured under.
        plugin: String,
        /// What went wrong.
        source: Box<DistributionError>,
    },
}

/// A host, the services it was opened with, and the plugins it refused (it serves the others).
pub struct Opened {
    /// The host.
    pub host: Host,
    /// Its chains, simulator, wallet and settings (the write path and streams share them).
    pub services: Arc<Services>,
    /// The plugins that were not loaded, and why.
    pub refused: Vec<Refused>,
}

/// Open the host for `profile` (default: the configuration's), its I/O on `runtime`.
pub fn open(config: &Config, profile: Option<&str>, runtime: &Runtime) -> Result<Opened, SetupError> {
    let engine = Engine::new(Some(config.resolve(&config.cache_dir)))?;
    open_with(config, profile, engine, runtime)
}

/// The services `config` describes: its chains on `runtime`, the wallet, the plugins' settings.
pub fn services(config: &Config, runtime: &Runtime) -> Result<Services, SetupError> {
    let chains = Chains::new(&config.chain_configs()?, runtime)?;
    Ok(Services::new(chains)
        .with_wallet(Wallet::open(&config.signer)?)
        .with_settings(config.plugin_settings()?)
        .with_missing_settings(config.missing_settings())
        .with_uniswap_sdk(uniswap_sdk(config)?))
}

/// The sidecar `[sidecar]` configures, over the Uniswap contracts the operator gave the uniswap
/// plugin (`[settings] uniswap`): one process, for the plugins granted it and the cross-check.
fn uniswap_sdk(config: &Config) -> Result<Option<crate::caps::uniswap_sdk::UniswapSdk>, SetupError> {
    let settings = &config.sidecar;
    let Some(dir) = settings.dir.as_ref() else { return Ok(None) };
    let uniswap = config.plugin_settings()?.remove("uniswap").unwrap_or_default();
    let books = bardo_sidecar::book::UniswapBook::from_settings(&uniswap).map_err(|message| {
        SetupError::Config(ConfigError::Parse {
            path: config.resolve(std::path::Path::new("bardo.toml")),
            message: format!("[settings] uniswap, for the sidecar: {message}"),
        })
    })?;
    let sidecar = bardo_sidecar::Sidecar::new(bardo_sidecar::Config::new(
        config.resolve(dir),
        config.resolve(&settings.state_dir),
    ));
    Ok(Some(crate::caps::uniswap_sdk::UniswapSdk {
        sidecar,
        books,
        grants: settings.grant.iter().cloned().collect(),
    }))
}

/// The profile spec prefix that names an archetype (`archetype:trade-executor`).
pub const ARCHETYPE: &str = "archetype:";

/// The profile archetype `name` runs with.
fn archetype_profile(config: &Config, name: &str) -> Result<Profile, SetupError> {
    let set = config.archetypes()?;
    let archetype = set.get(name).ok_or_else(|| {
        let known: Vec<&str> = set.iter().map(|a| a.name.as_str()).collect();
        SetupError::Archetype(format!("unknown archetype `{name}`; known: {}", known.join(", ")))
    })?;
    Ok(archetype.profile.clone())
}

/// Open the host on an existing engine (a reload keeps its engine and pool).
pub fn open_with(
    config: &Config,
    profile: Option<&str>,
    engine: Engine,
    runtime: &Runtime,
) -> Result<Opened, SetupError> {
    let asked = profile.unwrap_or(&config.profile);
    // `archetype:NAME` runs with that archetype's profile (`bardo … --archetype NAME`).
    let parsed = match asked.strip_prefix(ARCHETYPE) {
        Some(name) => archetype_profile(config, name)?,
        None => Profile::parse(asked)?,
    };
    // Limits and `[oci]` routing go by the profile's own name (an archetype's `trader`).
    let spec = if asked.starts_with(ARCHETYPE) { parsed.name().to_owned() } else { asked.to_owned() };
    let spec = spec.as_str();
    let dev = parsed.categories().contains(&bardo_core::tool::Category::Testnet);
    let services = Arc::new(services(config, runtime)?.with_testnet(dev));
    let profile = parsed
        .with_overrides(&config.tools.enable, &config.tools.disable)
        .with_capabilities(config.capabilities(services.wallet.is_some()));
    let mut host =
        Host::new(engine, services.clone(), profile, config.limits_for(spec), config.wasi.clone())?;
    let lock_path = config.resolve(&config.lock);
    let mut lock = Lockfile::read(&lock_path)?;
    let mut pinned_new = false;
    let mut refused = Vec::new();
    for file in config.plugin_files()? {
        let loaded = std::fs::read(&file)
            .map_err(|source| Refused::Load(LoadError::Io { path: file.clone(), source }))
            .and_then(|bytes| {
                let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let digest = hex::encode(Sha256::digest(&bytes));
                pinned_new |= lock.verify(&name, &digest, &lock_path)? == Pin::Added;
                Ok(host.load_bytes(&name, &bytes)?)
            });
        if let Err(e) = loaded {
            tracing::debug!("{e}");
            refused.push(e);
        }
    }
    pinned_new |= load_oci(&Puller::new(config, runtime), spec, &mut host, &mut lock, &mut refused);
    if pinned_new {
        lock.write(&lock_path)?;
        tracing::info!(lock = %lock_path.display(), "pinned new plugins");
    }
    Ok(Opened { host, services, refused })
}

/// Pull the `[oci]` components routed to `spec` that are not pinned at their reference yet, then
/// load every pinned component routed to it from the cache (re-verified). Returns whether the
/// lock changed.
fn load_oci(
    puller: &Puller<'_>,
    spec: &str,
    host: &mut Host,
    lock: &mut Lockfile,
    refused: &mut Vec<Refused>,
) -> bool {
    let config = puller.config();
    let mut changed = false;
    for (name, source) in config.oci.iter().filter(|(_, s)| s.routed_to(spec)) {
        let reference = source.reference();
        let settled = lock.oci_pin(name).is_some_and(|p| p.reference == reference)
            || lock.pending.iter().any(|p| p.name == *name && p.reference == reference);
        if settled {
            continue;
        }
        match distribution::sync(puller, host.engine(), lock, name, reference, source.profiles(), &|_| {}) {
            Ok(Outcome::Held { pin, active, diff }) => {
                changed = true;
                tracing::warn!(
                    plugin = %name,
                    "{reference} ({}) grew its capability surface ({}); it stays inactive and {} ({}) serves until `bardo plugin approve {name}`",
                    pin.version,
                    crate::surface_audit::summary(&diff),
                    active.version,
                    active.digest
                );
            }
            Ok(Outcome::Offline { .. }) => {}
            Ok(_) => changed = true,
            Err(source) => {
                refused.push(Refused::Distribution { plugin: name.clone(), source: Box::new(source) })
            }
        }
    }
    for pin in &lock.oci {
        if config.oci.get(&pin.name).is_some_and(|s| !s.routed_to(spec)) {
            continue;
        }
        let loaded = puller
            .load(pin)
            .map_err(|source| Refused::Distribution { plugin: pin.name.clone(), source: Box::new(source) })
            .and_then(|bytes| match config.oci.get(&pin.name).is_some_and(|s| s.side_by_side()) {
                true => Ok(host.load_bytes_side_by_side(&pin.name, &bytes)?),
                false => Ok(host.load_bytes(&pin.name, &bytes)?),
            });
        if let Err(e) = loaded {
            tracing::warn!("{e}");
            refused.push(e);
        }
    }
    changed
}

/// Re-pin every configured plugin file to its current digest.
pub fn relock(config: &Config) -> Result<Lockfile, SetupError> {
    let lock_path = config.resolve(&config.lock);
    let mut lock = Lockfile::read(&lock_path)?;
    lock.clear_files();
    for file in config.plugin_files()? {
        let bytes = std::fs::read(&file).map_err(|source| LoadError::Io { path: file.clone(), source })?;
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        lock.pin(&name, &hex::encode(Sha256::digest(&bytes)));
    }
    lock.write(&lock_path)?;
    Ok(lock)
}

/// The Uniswap cross-check, on the services' sidecar, unless `[sidecar] cross_check = false`.
fn cross_check(
    config: &Config,
    services: &Arc<Services>,
) -> Option<crate::safety::cross_check::UniswapCrossCheck> {
    let sdk = services.uniswap_sdk.as_ref().filter(|_| config.sidecar.cross_check)?;
    Some(crate::safety::cross_check::UniswapCrossCheck {
        services: services.clone(),
        sidecar: sdk.sidecar.clone(),
        books: sdk.books.clone(),
    })
}

/// The write path over an opened host, with the hook chain and files `[safety]` configures.
pub fn write_path(config: &Config, opened: Opened) -> Result<crate::safety::WritePath, SetupError> {
    let Opened { host, services, .. } = opened;
    write_path_over(config, Arc::new(host), services)
}

/// [`write_path`] over a host already shared (a `bardo mcp` host that reloads swaps its own in).
pub fn write_path_over(
    config: &Config,
    host: Arc<Host>,
    services: Arc<Services>,
) -> Result<crate::safety::WritePath, SetupError> {
    use crate::safety::hooks::{
        AllowlistGuard, ApprovalGuard, MaxPosition, PolicyCage, RateLimiter, SafetyHook,
    };
    use crate::safety::valuation::Valuer;
    // Prices come from the host's own pool and oracle reads, never from a plugin. Every write
    // is valued (the value guard); a chain without a pricing config cannot be written to.
    let valuer = Valuer::new(&services, config.pricing()?);
    let max_position = config.safety.max_position_usd.map(|usd| MaxPosition { usd, valuer: valuer.clone() });
    let allowed = config.allowlist()?;
    let with_role = |want: bardo_core::scope::Role| {
        allowed
            .iter()
            .map(|(chain, roles)| {
                (*chain, roles.iter().filter(|(_, role)| **role == want).map(|(a, _)| *a).collect())
            })
            .collect()
    };
    let position_managers = with_role(bardo_core::scope::Role::UniswapV3PositionManager);
    let v4_position_managers = with_role(bardo_core::scope::Role::UniswapV4PositionManager);
    let recipients = with_role(bardo_core::scope::Role::Recipient);
    let mut hooks: Vec<Box<dyn SafetyHook>> = vec![
        Box::new(PolicyCage {
            approved_assets: config.approved_assets()?,
            max_position,
            valuer: Some(valuer.clone()),
        }),
        Box::new(AllowlistGuard { allowed }),
    ];
    if let Some(n) = config.safety.previews_per_minute {
        hooks.push(Box::new(RateLimiter::new(n)));
    }
    hooks.push(Box::new(ApprovalGuard));
    let key_path = config.resolve(&config.safety.host_key);
    let key = crate::safety::host_key::HostKey::load_or_create(&key_path).map_err(SetupError::HostKey)?;
    // With `[cluster]`, the fleet's NATS holds what the files hold otherwise; never both.
    let cluster = config.cluster_config().map(|c| bardo_cluster::Cluster::connect(&c)).transpose()?;
    let audit = match &cluster {
        Some(cluster) => {
            crate::safety::audit_log::AuditLog::shared(cluster.clone(), &cluster.audit_label(), key.clone())
        }
        None => {
            crate::safety::audit_log::AuditLog::open(&config.resolve(&config.safety.audit_log), key.clone())?
        }
    };
    let mut path = crate::safety::WritePath::new(host.clone(), services.clone(), hooks, audit)
        .with_valuer(valuer.clone())
        .with_ttl(std::time::Duration::from_secs(config.safety.ttl_secs));
    path = match &cluster {
        Some(cluster) => path.with_permits(crate::safety::permit::Permits::shared(cluster.clone(), key)),
        None => path.with_permit_file(&config.resolve(&config.safety.permits), key),
    };
    let mut after: Vec<Box<dyn SafetyHook>> = Vec::new();
    if let Some(limits) = config.safety.spending {
        let limiter =
            crate::safety::spending::SpendingLimiter::new(limits, valuer.clone(), path.ttl(), path.clock());
        let limiter = match &cluster {
            Some(cluster) => limiter.with_cluster(cluster.clone()),
            None => limiter.with_ledger_file(&config.resolve(&config.safety.spending_ledger)),
        };
        after.push(Box::new(limiter));
    }
    if let Some(check) = cross_check(config, &services) {
        after.push(Box::new(check));
    }
    after.push(Box::new(crate::safety::value_guard::ValueGuard {
        valuer,
        position_managers,
        v4_position_managers,
        recipients,
        max_loss_bps: config.safety.max_value_loss_bps,
    }));
    path = path.with_after_simulation(after);
    path = path.with_mismatch_phase(config.safety.mismatch_phase);
    path.set_phase(config.safety.phase);
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

/// The agent-facing tools over `path`: the grimoire and context files `[agent]` names (context
/// files that do not exist are skipped).
pub fn adapter(
    config: &Config,
    path: Arc<crate::safety::WritePath>,
) -> Result<crate::adapter::Adapter, SetupError> {
    let grimoire_path = config.resolve(&config.agent.grimoire);
    if let Some(dir) = grimoire_path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let grimoire = crate::adapter::grimoire::Grimoire::open(&grimoire_path)?;
    let files: Vec<std::path::PathBuf> =
        config.agent.context.iter().map(|f| config.resolve(f)).filter(|f| f.exists()).collect();
    let files: Vec<&std::path::Path> = files.iter().map(|f| f.as_path()).collect();
    let adapter = crate::adapter::Adapter::new(path, grimoire, &files);
    if !config.agent.speculation {
        return Ok(adapter);
    }
    let a = &config.agent;
    if !(0.0..=1.0).contains(&a.speculation_threshold) || a.speculation_threshold == 0.0 {
        return Err(SetupError::Speculation(format!(
            "[agent] speculation_threshold is {}; it is a probability in (0, 1]",
            a.speculation_threshold
        )));
    }
    let tick = std::time::Duration::from_secs(a.tick_secs.max(1));
    let speculator = crate::speculation::Speculator::new(Default::default(), tick, a.speculation_threshold)
        .persisted(config.resolve(&a.speculation_file))
        .map_err(SetupError::Speculation)?;
    Ok(adapter.with_speculation(Arc::new(speculator)))
}
