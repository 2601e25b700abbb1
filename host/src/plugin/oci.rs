//! Components from OCI registries: pull (signature policy, import check before the layer is
//! downloaded, every digest verified), the local cache (re-verified before each use), and updates
//! held for approval when their capability surface grew.

use crate::audit::{self, Diff, Report};
use crate::config::Config;
use crate::engine::Engine;
use crate::plugin::LoadError;
use crate::plugin::lock::{Lockfile, OciPin};
use crate::plugin::surface::{self, Surface, World};
use bardo_registry::{Credential, Reference, Registry, RegistryError, Transfer, credentials, sign};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Why a component could not be pulled, or a pull not applied.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("{reference} refused before download: {reason}")]
    Imports { reference: String, reason: String },
    #[error("{reference}: {reason}")]
    Invalid { reference: String, reason: String },
    #[error(
        "cached component {path} does not match its pin {expected} (it is {actual}); it was altered — delete it and run `bardo plugin pull` again"
    )]
    CacheTampered { path: PathBuf, expected: String, actual: String },
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("no update of `{0}` is waiting for approval; `bardo plugin list` shows pins and pending updates")]
    NoPending(String),
    #[error("{reference}: {source}")]
    Audit { reference: String, source: Box<LoadError> },
}

/// A pulled component, verified and cached.
pub struct Pulled {
    pub pin: OciPin,
    pub bytes: Vec<u8>,
    /// The trusted key file that signed it, if a policy covered it.
    pub signed_by: Option<String>,
}

/// What `sync` did.
pub enum Outcome {
    /// The registry has what is pinned already.
    Unchanged(OciPin),
    /// Pinned (the first version, or an update whose surface did not grow).
    Pinned { pin: OciPin, previous: Option<OciPin>, diff: Option<Diff> },
    /// An update whose surface grew: pending until `bardo plugin approve`; the old pin stays.
    Held { pin: OciPin, active: OciPin, diff: Diff },
    /// The registry is unreachable: the cached pinned version is used.
    Offline { pin: OciPin, reason: String },
}

/// A registry client as `[registry]` configures it: plain HTTP for the insecure registries,
/// and logins from `[[registry.auth]]` (password from the environment) over those `docker login`
/// left in Docker's `config.json`.
pub fn registry_client(config: &Config) -> Registry {
    let mut registry = Registry::new(&config.registry.insecure);
    if let Some(path) = credentials::docker_config_path() {
        match credentials::docker_logins(&path) {
            Ok(logins) => {
                for (host, login) in logins {
                    registry = registry.with_credential(host, login);
                }
            }
            Err(e) => tracing::warn!("{e}; its registry logins are not used"),
        }
    }
    for login in &config.registry.auth {
        let credential = match std::env::var(&login.password_env) {
            Ok(password) if !password.is_empty() => {
                Credential::Basic { username: login.username.clone(), password }
            }
            _ => Credential::Unavailable(format!(
                "its [[registry.auth]] login reads the password from ${}, which is not set",
                login.password_env
            )),
        };
        registry = registry.with_credential(&login.registry, credential);
    }
    registry
}

/// The keys a trust policy accepts for a reference, and their files (to name them).
type Signers = (Vec<sign::PublicKey>, Vec<String>);

/// Pulls components as `[registry]` configures, into `cache_dir/oci`.
pub struct Puller<'a> {
    /// Built on first use: loading a cached pin reads no logins and reaches no registry.
    registry: std::sync::OnceLock<Registry>,
    config: &'a Config,
    cache: PathBuf,
}

impl<'a> Puller<'a> {
    pub fn new(config: &'a Config) -> Self {
        Self {
            registry: std::sync::OnceLock::new(),
            config,
            cache: config.resolve(&config.cache_dir).join("oci"),
        }
    }

    /// The registry client.
    pub fn registry(&self) -> &Registry {
        self.registry.get_or_init(|| registry_client(self.config))
    }

    /// Where the component with layer digest `layer` is cached.
    pub fn cache_path(&self, layer: &str) -> PathBuf {
        self.cache.join(format!("{}.wasm", layer.replace(':', "-")))
    }

    /// The trusted keys for `reference` and how to name them, or None when no policy covers it.
    fn signers(&self, reference: &str) -> Result<Option<Signers>, OciError> {
        let policies: Vec<_> =
            self.config.registry.trust.iter().filter(|t| reference.starts_with(&t.prefix)).collect();
        if policies.is_empty() {
            if self.config.registry.require_signatures {
                return Err(OciError::Invalid {
                    reference: reference.to_owned(),
                    reason: "no [[registry.trust]] policy covers it and [registry] require_signatures is on; add a policy with its publisher's key".into(),
                });
            }
            return Ok(None);
        }
        let mut keys = Vec::new();
        let mut names = Vec::new();
        for path in policies.iter().flat_map(|p| &p.keys) {
            let path = self.config.resolve(path);
            keys.push(sign::read_verifying_key(&path)?);
            names.push(path.display().to_string());
        }
        Ok(Some((keys, names)))
    }

    /// Pull `reference` for a plugin routed to `profiles` (empty: all): resolve and verify the
    /// manifest and config, check the signature the trust policy asks for, refuse imports beyond
    /// the grants before the layer is fetched, fetch and verify the layer, cache it.
    pub async fn pull(
        &self,
        name: &str,
        reference: &str,
        profiles: &[String],
        progress: &(dyn Fn(Transfer) + Sync),
    ) -> Result<Pulled, OciError> {
        let parsed: Reference = bardo_registry::parse_reference(reference)?;
        let resolved = self.registry().resolve(&parsed).await?;
        let signed_by = match self.signers(reference)? {
            None => {
                tracing::warn!(%reference, "no trust policy covers this reference: its signature is not checked");
                None
            }
            Some((keys, names)) => {
                let i = self.registry().verify_signature(&resolved, &keys, &names.join(", ")).await?;
                Some(names[i].clone())
            }
        };
        let declared = Surface { imports: resolved.imports().to_vec(), exports: resolved.exports().to_vec() };
        self.check_imports(reference, &declared, profiles)?;
        let bytes = self.registry().fetch(&resolved, progress).await?;
        let version = resolved.version().unwrap_or_default().to_owned();
        let pin = OciPin {
            name: name.to_owned(),
            reference: reference.to_owned(),
            digest: resolved.digest.clone(),
            layer: resolved.layer().digest.clone(),
            version,
        };
        self.store(&pin, &bytes)?;
        Ok(Pulled { pin, bytes, signed_by })
    }

    /// Refuse a component whose declared imports exceed what its profiles grant: the WASI
    /// grants, the interfaces of its world, and no `signer`/`simulate` if every profile it is
    /// routed to is read-only.
    fn check_imports(
        &self,
        reference: &str,
        declared: &Surface,
        profiles: &[String],
    ) -> Result<(), OciError> {
        let refused = |reason: String| OciError::Imports { reference: reference.to_owned(), reason };
        let world = declared.world().map_err(refused)?;
        let grants: BTreeSet<String> = self.config.wasi.grant.iter().cloned().collect();
        surface::check_imports(declared, world, &grants).map_err(refused)?;
        let read_only = !profiles.is_empty()
            && profiles.iter().all(|p| crate::profile::Profile::parse(p).is_ok_and(|p| p.read_only()));
        if read_only && world == World::Writer {
            return Err(refused(format!(
                "it is a writer (imports `signer` and `simulate`), but it is routed only to read-only profiles {profiles:?}"
            )));
        }
        Ok(())
    }

    /// The pinned component's bytes: the cached copy, re-verified, with no network and no
    /// runtime; pulled by digest only when it is not cached.
    pub fn load(&self, pin: &OciPin) -> Result<Vec<u8>, OciError> {
        if let Some(bytes) = self.cached(pin)? {
            return Ok(bytes);
        }
        Ok(block_on(self.pull(&pin.name, &pin.pinned_reference(), &[], &|_| {}))?.bytes)
    }

    /// The cached copy of `pin`, checked against its layer digest; None when not cached.
    pub fn cached(&self, pin: &OciPin) -> Result<Option<Vec<u8>>, OciError> {
        let path = self.cache_path(&pin.layer);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(OciError::Io { path, source }),
        };
        let actual = bardo_registry::sha256_digest(&bytes);
        if actual != pin.layer {
            return Err(OciError::CacheTampered { path, expected: pin.layer.clone(), actual });
        }
        Ok(Some(bytes))
    }

    fn store(&self, pin: &OciPin, bytes: &[u8]) -> Result<(), OciError> {
        let path = self.cache_path(&pin.layer);
        let io = |source| OciError::Io { path: path.clone(), source };
        std::fs::create_dir_all(&self.cache).map_err(io)?;
        // Write then rename: a reader never sees half a component.
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, bytes).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    }
}

/// Pull `reference` as plugin `name` and apply it to `lock`: pin a first version or an update
/// whose surface did not grow; hold a grown one for approval; fall back to the cached pin when
/// the registry is unreachable. The caller writes the lock.
pub fn sync(
    config: &Config,
    engine: &Engine,
    lock: &mut Lockfile,
    name: &str,
    reference: &str,
    profiles: &[String],
    progress: &(dyn Fn(Transfer) + Sync),
) -> Result<Outcome, OciError> {
    let puller = Puller::new(config);
    let active = lock.oci_pin(name).cloned();
    let pulled = match block_on(puller.pull(name, reference, profiles, progress)) {
        Ok(p) => p,
        Err(OciError::Registry(e)) if e.is_unreachable() => {
            let Some(pin) = active.filter(|p| puller.cached(p).is_ok_and(|c| c.is_some())) else {
                return Err(e.into());
            };
            tracing::warn!("{e}; using the cached pinned version {} ({})", pin.version, pin.digest);
            return Ok(Outcome::Offline { pin, reason: e.to_string() });
        }
        Err(e) => return Err(e),
    };
    let new = report(engine, &pulled.pin, &pulled.bytes)?;
    if !pulled.pin.version.is_empty() && new.version != pulled.pin.version {
        return Err(OciError::Invalid {
            reference: reference.to_owned(),
            reason: format!(
                "published as version {} but the component says {}; republish it under its own version",
                pulled.pin.version, new.version
            ),
        });
    }
    let mut pin = pulled.pin;
    pin.version = new.version.clone();
    let Some(active) = active else {
        lock.set_oci(pin.clone());
        return Ok(Outcome::Pinned { pin, previous: None, diff: None });
    };
    if active.digest == pin.digest {
        lock.set_oci(pin.clone());
        return Ok(Outcome::Unchanged(pin));
    }
    let old_bytes = puller.load(&active)?;
    let diff = audit::diff(&report(engine, &active, &old_bytes)?, &new);
    if diff.grew {
        lock.set_pending(pin.clone());
        return Ok(Outcome::Held { pin, active, diff });
    }
    lock.set_oci(pin.clone());
    Ok(Outcome::Pinned { pin, previous: Some(active), diff: Some(diff) })
}

/// Approve the pending update of `name`: it becomes the pin. Returns it and the surface diff.
pub fn approve(
    config: &Config,
    engine: &Engine,
    lock: &mut Lockfile,
    name: &str,
) -> Result<(OciPin, Option<Diff>), OciError> {
    let pending = lock
        .pending
        .iter()
        .find(|p| p.name == name)
        .cloned()
        .ok_or_else(|| OciError::NoPending(name.to_owned()))?;
    let puller = Puller::new(config);
    let new_bytes = puller.load(&pending)?;
    let new = report(engine, &pending, &new_bytes)?;
    let diff = match lock.oci_pin(name).cloned() {
        Some(active) => {
            let old = puller.load(&active)?;
            Some(audit::diff(&report(engine, &active, &old)?, &new))
        }
        None => None,
    };
    lock.set_oci(pending.clone());
    Ok((pending, diff))
}

/// The capability surface of a pulled component (its manifest read in a sandbox).
pub fn report(engine: &Engine, pin: &OciPin, bytes: &[u8]) -> Result<Report, OciError> {
    audit::audit(engine.clone(), &pin.name, bytes)
        .map_err(|e| OciError::Audit { reference: pin.reference.clone(), source: Box::new(e) })
}

/// Run a registry future to completion on its own thread and runtime, so callers may be sync
/// or inside another runtime.
pub fn block_on<F>(future: F) -> F::Output
where
    F: std::future::Future + Send,
    F::Output: Send,
{
    std::thread::scope(|s| {
        s.spawn(|| match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(rt) => rt.block_on(future),
            Err(e) => panic!("cannot start a runtime for the registry client: {e}"),
        })
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
