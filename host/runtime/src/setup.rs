//! Open a host from `bardo.toml`: the services (chains, simulator, wallet, settings, sidecar)
//! on the host's runtime, the engine with its cache, the profile with its overrides and
//! capabilities, and every configured plugin checked against `bardo.lock` or pulled and pinned
//! by `distribution`. A plugin refused here is reported and skipped; the host serves the others.
//! The write path and the agent are opened over the host by their own crates.

use crate::config::{Config, ConfigError, Section};
use crate::distribution::lock::{LockError, Lockfile, Pin};
use crate::distribution::{self, DistributionError, Outcome, Puller};
use crate::engine::{Engine, EngineError};
use crate::plugin::{Host, LoadError};
use crate::services::Services;
use bardo_core::Runtime;
use bardo_core::profile::{Profile, ProfileError};
use bardo_evm::Evm;
use bardo_evm::chain::{ChainError, Chains};
use bardo_evm::signer::SignerError;
use bardo_sidecar::SidecarSettings;
use std::collections::BTreeMap;
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
    /// The archetype asked for does not exist.
    #[error("{0}")]
    Archetype(String),
    /// The agent's memory could not be opened.
    #[error("[memory]: {0}")]
    Memory(String),
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
    open_with(config, profile, engine, runtime, None)
}

/// The services `config` describes: its chains on `runtime`, the wallet, the plugins' settings,
/// the sidecar. Each context `previous` has that was built from the same sections is kept (a
/// reload): the EVM context unless `[chains]` or the signer changed, the sidecar unless
/// `[sidecar]` or the Uniswap settings it routes over changed; settings are read anew.
pub fn services(
    config: &Config,
    runtime: &Runtime,
    previous: Option<&Services>,
) -> Result<Services, SetupError> {
    let evm_key = config.evm_key();
    let evm = match previous.filter(|p| p.evm_key() == evm_key) {
        Some(previous) => previous.evm.clone(),
        None => {
            let chains = Chains::new(&config.chain_configs()?, runtime)?;
            // Files named in bardo.toml are relative to it, wherever bardo runs.
            let mut signer = config.signer.clone();
            signer.keystore = signer.keystore.map(|k| config.resolve(&k));
            signer.password_file = signer.password_file.map(|f| config.resolve(&f));
            Arc::new(Evm::open(chains, &signer)?)
        }
    };
    let settings = config.plugin_settings()?;
    let sidecar_key = sidecar_key(config, &settings)?;
    let uniswap_sdk = match previous.filter(|p| p.sidecar_key() == sidecar_key) {
        Some(previous) => previous.uniswap_sdk.clone(),
        None => uniswap_sdk(config, &settings)?.map(Arc::new),
    };
    let memory = memory(config, previous)?;
    Ok(Services::over(evm)
        .with_settings(settings, config.missing_settings())
        .with_shared_uniswap_sdk(uniswap_sdk)
        .with_memory(memory)
        .built_from(evm_key, sidecar_key))
}

/// The agent's memory when `[capabilities] memory` is on: a reload keeps the store it had for
/// the same file.
fn memory(config: &Config, previous: Option<&Services>) -> Result<Option<bardo_memory::Memory>, SetupError> {
    if !config.capabilities.memory {
        return Ok(None);
    }
    let settings: bardo_memory::MemorySettings = config.section()?;
    let path = config.resolve(&settings.path);
    if let Some(kept) = previous.and_then(|p| p.memory.as_ref()).filter(|m| m.path() == path) {
        return Ok(Some(kept.clone()));
    }
    // The fleet's name for this host, so episodes say which host of a fleet recorded them.
    let fleet_host = config.optional::<bardo_cluster::ClusterSettings>()?.map(|c| c.host_name());
    let origin = settings.origin.or(fleet_host).unwrap_or_else(bardo_cluster::default_host);
    let model = settings.model.map(|m| config.resolve(&m));
    bardo_memory::Memory::open(&path, model, &origin).map(Some).map_err(|e| SetupError::Memory(e.to_string()))
}

/// What the sidecar context is built from: `[sidecar]` and the Uniswap settings it routes over.
fn sidecar_key(
    config: &Config,
    settings: &BTreeMap<String, serde_json::Value>,
) -> Result<String, SetupError> {
    let section = config.sections().raw(SidecarSettings::NAME).map(|v| v.to_string()).unwrap_or_default();
    Ok(format!("{section}\n{}", settings.get("uniswap").map(|v| v.to_string()).unwrap_or_default()))
}

/// The sidecar `[sidecar]` configures, over the Uniswap contracts the operator gave the uniswap
/// plugin (`[settings] uniswap`): one process, for the plugins granted it and the cross-check.
fn uniswap_sdk(
    config: &Config,
    settings: &BTreeMap<String, serde_json::Value>,
) -> Result<Option<crate::services::UniswapSdk>, SetupError> {
    let sidecar: SidecarSettings = config.section()?;
    let Some(dir) = sidecar.dir.as_ref() else { return Ok(None) };
    let uniswap = settings.get("uniswap").cloned().unwrap_or_default();
    let books = bardo_sidecar::book::UniswapBook::from_settings(&uniswap).map_err(|message| {
        SetupError::Config(ConfigError::Parse {
            path: config.file(),
            message: format!("[settings] uniswap, for the sidecar: {message}"),
        })
    })?;
    let process = bardo_sidecar::Sidecar::new(bardo_sidecar::Config::new(
        config.resolve(dir),
        config.resolve(&sidecar.state_dir),
    ));
    Ok(Some(crate::services::UniswapSdk::new(process, books, sidecar.grant)))
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

/// Open the host on an existing engine (a reload keeps its engine and pool), keeping what it
/// can of `previous` services (see [`services`]).
pub fn open_with(
    config: &Config,
    profile: Option<&str>,
    engine: Engine,
    runtime: &Runtime,
    previous: Option<&Services>,
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
    let services = Arc::new(services(config, runtime, previous)?);
    let profile = parsed
        .with_overrides(&config.tools.enable, &config.tools.disable)
        .with_capabilities(config.capabilities(services.evm.wallet.is_some()));
    let mut host =
        Host::new(engine, services.clone(), profile, config.limits_for(spec), config.wasi.clone())?;
    let lock_path = config.resolve(&config.lock);
    let mut lock = Lockfile::read(&lock_path)?;
    let mut pinned_new = false;
    let mut refused = Vec::new();
    let files = config.plugin_files()?;
    for (n, file) in files.iter().enumerate() {
        let loaded = std::fs::read(file)
            .map_err(|source| Refused::Load(LoadError::Io { path: file.clone(), source }))
            .and_then(|bytes| {
                let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let digest = crate::engine::sha256_hex(&bytes);
                if !host.engine().is_cached(&digest) {
                    let mib = bytes.len() as f64 / (1 << 20) as f64;
                    tracing::info!(
                        target: crate::PROGRESS,
                        "compiling {name} ({}/{}, {mib:.1} MiB): seconds, once; later starts load it from the cache",
                        n + 1,
                        files.len()
                    );
                }
                pinned_new |= lock.verify(&name, &digest, &lock_path)? == Pin::Added;
                Ok(host.load_verified(file, &bytes, digest)?)
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
        lock.pin(&name, &crate::engine::sha256_hex(&bytes));
    }
    lock.write(&lock_path)?;
    Ok(lock)
}
