//! Open a host from `bardo.toml`: engine with the cache, the profile with its overrides and
//! capabilities, and every configured plugin checked against `bardo.lock`.

use crate::caps::Caps;
use crate::caps::chain::ChainCaps;
use crate::caps::config::ConfigCaps;
use crate::caps::signer::SignerCaps;
use crate::chain::{ChainError, Chains};
use crate::config::{Config, ConfigError};
use crate::engine::{Engine, EngineError};
use crate::plugin::lock::{Lockfile, Pin};
use crate::plugin::{Host, LoadError};
use crate::profile::{Profile, ProfileError};
use crate::signer::{SignerError, Wallet};
use sha2::{Digest, Sha256};

/// Why a host could not be opened at all (a single plugin failing is not one of these).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Chain(#[from] ChainError),
    #[error(transparent)]
    Signer(#[from] SignerError),
    #[error(transparent)]
    Audit(#[from] crate::safety::audit_log::AuditError),
}

/// A host and the plugins it refused (it serves the others).
pub struct Opened {
    pub host: Host,
    pub refused: Vec<LoadError>,
}

/// Open the host for `profile` (default: the configuration's).
pub fn open(config: &Config, profile: Option<&str>) -> Result<Opened, SetupError> {
    let engine = Engine::new(Some(config.resolve(&config.cache_dir)))?;
    open_with(config, profile, engine)
}

/// Open the host on an existing engine (a reload keeps its engine and pool).
pub fn open_with(config: &Config, profile: Option<&str>, engine: Engine) -> Result<Opened, SetupError> {
    let spec = profile.unwrap_or(&config.profile);
    let chain_configs = config.chain_configs()?;
    let wallet = Wallet::open(&config.signer)?;
    let profile = Profile::parse(spec)?
        .with_overrides(&config.tools.enable, &config.tools.disable)
        .with_capabilities(config.capabilities(wallet.is_some()));
    let caps = Caps {
        chain: ChainCaps::new(Chains::new(&chain_configs)?),
        simulate: Default::default(),
        signer: SignerCaps::new(wallet, chain_configs.keys().copied()),
        config: ConfigCaps::new(config.plugin_settings()?),
    };
    let mut host = Host::new(engine, profile, config.limits_for(spec), config.wasi.clone())?.with_caps(caps);
    let lock_path = config.resolve(&config.lock);
    let mut lock = Lockfile::read(&lock_path).map_err(LoadError::from)?;
    let mut pinned_new = false;
    let mut refused = Vec::new();
    for file in config.plugin_files()? {
        let loaded = std::fs::read(&file)
            .map_err(|source| LoadError::Io { path: file.clone(), source })
            .and_then(|bytes| {
                let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let digest = hex::encode(Sha256::digest(&bytes));
                pinned_new |= lock.verify(&name, &digest, &lock_path)? == Pin::Added;
                host.load_bytes(&name, &bytes)
            });
        if let Err(e) = loaded {
            tracing::debug!("{e}");
            refused.push(e);
        }
    }
    pinned_new |= load_oci(config, spec, &mut host, &mut lock, &mut refused);
    if pinned_new {
        lock.write(&lock_path).map_err(LoadError::from)?;
        tracing::info!(lock = %lock_path.display(), "pinned new plugins");
    }
    Ok(Opened { host, refused })
}

/// Pull the `[oci]` components routed to `spec` that are not pinned at their reference yet, then
/// load every pinned component routed to it from the cache (re-verified). Returns whether the
/// lock changed.
fn load_oci(
    config: &Config,
    spec: &str,
    host: &mut Host,
    lock: &mut Lockfile,
    refused: &mut Vec<LoadError>,
) -> bool {
    use crate::plugin::oci::{self, Outcome};
    let mut changed = false;
    for (name, source) in config.oci.iter().filter(|(_, s)| s.routed_to(spec)) {
        let reference = source.reference();
        let settled = lock.oci_pin(name).is_some_and(|p| p.reference == reference)
            || lock.pending.iter().any(|p| p.name == *name && p.reference == reference);
        if settled {
            continue;
        }
        match oci::sync(config, host.engine(), lock, name, reference, source.profiles(), &|_| {}) {
            Ok(Outcome::Held { pin, active, diff }) => {
                changed = true;
                tracing::warn!(
                    plugin = %name,
                    "{reference} ({}) grew its capability surface ({}); it stays inactive and {} ({}) serves until `bardo plugin approve {name}`",
                    pin.version,
                    crate::audit::summary(&diff),
                    active.version,
                    active.digest
                );
            }
            Ok(Outcome::Offline { .. }) => {}
            Ok(_) => changed = true,
            Err(source) => refused.push(LoadError::Oci { plugin: name.clone(), source }),
        }
    }
    let puller = oci::Puller::new(config);
    for pin in &lock.oci {
        if config.oci.get(&pin.name).is_some_and(|s| !s.routed_to(spec)) {
            continue;
        }
        let loaded = puller
            .load(pin)
            .map_err(|source| LoadError::Oci { plugin: pin.name.clone(), source })
            .and_then(|bytes| host.load_bytes(&pin.name, &bytes));
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
    let mut lock = Lockfile::read(&lock_path).map_err(LoadError::from)?;
    lock.clear_files();
    for file in config.plugin_files()? {
        let bytes = std::fs::read(&file).map_err(|source| LoadError::Io { path: file.clone(), source })?;
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        lock.pin(&name, &hex::encode(Sha256::digest(&bytes)));
    }
    lock.write(&lock_path).map_err(LoadError::from)?;
    Ok(lock)
}

/// The write path over an opened host, with the hook chain and files `[safety]` configures.
pub fn write_path(config: &Config, host: Host) -> Result<crate::safety::WritePath, SetupError> {
    use crate::safety::hooks::{
        AllowlistGuard, ApprovalGuard, MaxPosition, PolicyCage, RateLimiter, SafetyHook,
    };
    let host = std::sync::Arc::new(host);
    let max_position = config
        .safety
        .max_position_usd
        .map(|usd| MaxPosition { usd, valuer: crate::safety::valuation::Valuer::new(&host) });
    let mut hooks: Vec<Box<dyn SafetyHook>> = vec![
        Box::new(PolicyCage { approved_assets: config.approved_assets()?, max_position }),
        Box::new(AllowlistGuard { allowed: config.allowlist()? }),
    ];
    if let Some(n) = config.safety.previews_per_minute {
        hooks.push(Box::new(RateLimiter::new(n)));
    }
    hooks.push(Box::new(ApprovalGuard));
    let audit = crate::safety::audit_log::AuditLog::open(&config.resolve(&config.safety.audit_log))?;
    let mut path = crate::safety::WritePath::new(host.clone(), hooks, audit)
        .with_ttl(std::time::Duration::from_secs(config.safety.ttl_secs))
        .with_permit_file(&config.resolve(&config.safety.permits));
    if let Some(limits) = config.safety.spending {
        let limiter = crate::safety::spending::SpendingLimiter::new(limits, &host, path.ttl(), path.clock())
            .with_ledger_file(&config.resolve(&config.safety.spending_ledger));
        path = path.with_after_simulation(vec![Box::new(limiter)]);
    }
    path.set_phase(config.safety.phase);
    Ok(path)
}
