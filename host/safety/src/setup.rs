//! The write path `[safety]` configures, over a runtime host: the hook chain (built by
//! [`crate::hooks::chain`]), the host key, and where permits, the halt, the spending ledger and
//! the audit chain live — this machine's files, or with `[cluster]` the fleet's NATS, never
//! both. Each generation's hooks are built from the same policy over that generation's
//! services; what must outlive a generation (spend, the rate window) is shared.

use crate::audit_log::{AuditError, AuditLog};
use crate::config::SafetyConfig;
use crate::generation::HookFactory;
use crate::hooks::chain::Policy;
use crate::host_key::HostKey;
use crate::permit::Permits;
use crate::{Clock, WritePath};
use bardo_cluster::{Cluster, ClusterError, ClusterSettings};
use bardo_core::config::ConfigError;
use bardo_runtime::{Config, Host, Services};
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
    if services.memory.is_none() {
        return Ok(());
    }
    let Some(settings) = config.optional::<ClusterSettings>()? else { return Ok(()) };
    let Some(cluster) = cluster(config)? else { return Ok(()) };
    replicate_memory(services, &cluster, &settings.host_name());
    Ok(())
}

/// Replicate the agent's memory through the fleet, if the memory feed can be used now: it is
/// optional to a write, so a feed sealed, deleted or out of reach never stops one — it is said
/// in the log, and this host searches its own episodes until a later start replicates again.
fn replicate_memory(services: &Services, cluster: &Cluster, host: &str) {
    let Some(memory) = &services.memory else { return };
    if let Err(e) = bardo_runtime::fleet_memory::replicate(memory, cluster, host) {
        tracing::warn!(
            "the fleet's memory feed is unusable ({e}): this host's episodes stay local until a later start replicates them; writes go on"
        );
    }
}

/// The host key `[safety] host_key` names (created 0600 on first use).
pub fn host_key(config: &Config) -> Result<HostKey, SetupError> {
    let safety: SafetyConfig = config.section()?;
    HostKey::load_or_create(&config.resolve(&safety.host_key)).map_err(SetupError::HostKey)
}

/// The permits every process of this configuration shares: `[safety] permits`, or the fleet's.
pub fn permits(config: &Config) -> Result<Permits, SetupError> {
    let safety: SafetyConfig = config.section()?;
    Ok(permits_of(&safety, config, cluster(config)?, host_key(config)?))
}

fn permits_of(safety: &SafetyConfig, config: &Config, cluster: Option<Cluster>, key: HostKey) -> Permits {
    match cluster {
        Some(cluster) => Permits::shared(cluster, key),
        None => Permits::open(&config.resolve(&safety.permits), key),
    }
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
    let mut path = WritePath::over(host, services.clone(), first, audit)
        .with_hook_factory(factory)
        .with_ttl(ttl)
        .with_bridge_wait(Duration::from_secs(safety.bridge_fill_wait_secs))
        .with_clock(clock)
        .with_mismatch_phase(safety.mismatch_phase)
        .with_confirm_policy(safety.confirm.for_profile(&profile))
        .with_confirm_via(safety.confirm.via());
    if let Some(cluster) = &cluster {
        let host = config.optional::<ClusterSettings>()?.map(|s| s.host_name()).unwrap_or_default();
        replicate_memory(&services, cluster, &host);
    }
    path = path.with_permits(permits_of(&safety, config, cluster, key));
    if let Some(memory) = &services_memory {
        path = path.with_episodes(memory.recorder());
    }
    path.set_phase(safety.phase);
    // A previous process may have died mid-broadcast: every transaction it recorded is resolved
    // against the chain, and what it never sent is released.
    match path.recover() {
        Ok(r) => {
            for done in &r.resolved {
                tracing::info!("recovered an interrupted commit's transaction: {done}");
            }
            for pending in &r.pending {
                tracing::warn!(
                    "an interrupted commit's transaction is still pending (sent again): {pending}"
                );
            }
            if !r.released.is_empty() {
                tracing::info!(
                    "released the spend of interrupted permits that sent nothing: {:?}",
                    r.released
                )
            }
        }
        Err(e) => tracing::warn!(
            "cannot resolve interrupted commits now ({e}); their records stay unresolved until a start can"
        ),
    }
    Ok(path)
}
