//! Plugin distribution: components from OCI registries — pull (signature policy, import check
//! before the layer is downloaded, every digest verified), the local cache (re-verified before
//! each use), updates held for approval when their capability surface grew — and the lock that
//! pins every plugin. Depends on `plugin` and `surface_audit`; nothing there depends on it.

pub mod config;
pub mod lock;

use crate::config::Config;
use crate::engine::Engine;
use crate::plugin::LoadError;
use crate::plugin::surface::{self, Surface, World};
use crate::surface_audit::{self, SurfaceDiff, SurfaceReport};
use bardo_core::Runtime;
use bardo_core::secret::{TaintLabel, TaintedString};
use bardo_registry::{Credential, Reference, RegistryClient, RegistryError, Transfer, credentials, sign};
use lock::{Lockfile, OciPin};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Why a component could not be pulled, or a pull not applied.
#[derive(Debug, thiserror::Error)]
pub enum DistributionError {
    /// The registry failed, or what it served did not verify.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The component's declared imports exceed what its profiles grant; nothing was downloaded.
    #[error("{reference} refused before download: {reason}")]
    Imports {
        /// The reference asked for.
        reference: String,
        /// Which import, and why.
        reason: String,
    },
    /// The artifact or the policy is unusable as it stands.
    #[error("{reference}: {reason}")]
    Invalid {
        /// The reference asked for.
        reference: String,
        /// What is wrong, and what to do.
        reason: String,
    },
    /// The cached copy no longer matches its pin.
    #[error(
        "cached component {path} does not match its pin {expected} (it is {actual}); it was altered — delete it and run `bardo plugin pull` again"
    )]
    CacheTampered {
        /// The cached file.
        path: PathBuf,
        /// The layer digest pinned.
        expected: String,
        /// The digest of what is there.
        actual: String,
    },
    /// The cache could not be written or read.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// `bardo plugin approve` named a plugin with no held update.
    #[error("no update of `{0}` is waiting for approval; `bardo plugin list` shows pins and pending updates")]
    NoPending(String),
    /// The registry offers a version at or below the one pinned: a registry (or whoever controls
    /// it) can serve an old signed release under a new tag.
    #[error(
        "`{name}`: {reference} is version {offered}, not newer than the active {active}; downgrades are refused — pass --allow-downgrade to `bardo plugin pull` if you mean it"
    )]
    Downgrade {
        /// The plugin.
        name: String,
        /// The reference pulled.
        reference: String,
        /// The component's own version.
        offered: String,
        /// The active pin's version.
        active: String,
    },
    /// The update breaks callers of the active version's tools without saying so in its
    /// version numbers (schema versioning): refused, the active pin stays.
    #[error(
        "`{name}`: {reference} cannot replace the active {active}: {}; keep {active}, or publish a new major version (and pin both to serve the old tools beside the new: `bardo plugin pull REF --as NAME`); `bardo audit OLD NEW` shows the diff",
        reasons.join("; ")
    )]
    Incompatible {
        /// The plugin.
        name: String,
        /// The reference pulled.
        reference: String,
        /// The active pin's version.
        active: String,
        /// Each incompatibility, named.
        reasons: Vec<String>,
    },
    /// The pulled component's surface could not be read.
    #[error("{reference}: {source}")]
    Audit {
        /// The reference pulled.
        reference: String,
        /// Why its manifest or surface could not be read.
        source: Box<LoadError>,
    },
}

/// A pulled component, verified and cached.
pub struct Pulled {
    /// What to pin it as (reference, digests, version).
    pub pin: OciPin,
    /// The component, verified against its digests.
    pub bytes: Vec<u8>,
    /// The trusted key file that signed it, if a policy covered it.
    pub signed_by: Option<String>,
}

/// What `sync` did.
#[derive(Debug)]
pub enum Outcome {
    /// The registry has what is pinned already.
    Unchanged(OciPin),
    /// Pinned (the first version, or an update whose surface did not grow).
    Pinned {
        /// The new pin.
        pin: OciPin,
        /// The pin it replaced, if any.
        previous: Option<OciPin>,
        /// How the surface changed from `previous`.
        diff: Option<SurfaceDiff>,
    },
    /// An update whose surface grew: pending until `bardo plugin approve`; the old pin stays.
    Held {
        /// The held update.
        pin: OciPin,
        /// The pin that keeps serving.
        active: OciPin,
        /// What grew.
        diff: SurfaceDiff,
    },
    /// The registry is unreachable: the cached pinned version is used.
    Offline {
        /// The cached pin in use.
        pin: OciPin,
        /// Why the registry could not be reached.
        reason: String,
    },
}

/// A registry client as `[registry]` configures it: plain HTTP for the insecure registries,
/// and logins from `[[registry.auth]]` (password from the environment) over those `docker login`
/// left in Docker's `config.json`.
pub fn registry_client(config: &Config) -> RegistryClient {
    let mut registry = RegistryClient::new(&config.registry.insecure);
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
        let password = TaintedString::from_env(&login.password_env, &[TaintLabel::OwnerSecret]);
        let credential = match password {
            Some(password) => Credential::Basic { username: login.username.clone(), password },
            None => Credential::Unavailable(format!(
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

/// Pulls components as `[registry]` configures, into `cache_dir/oci`, on the host's runtime.
pub struct Puller<'a> {
    /// Built on first use: loading a cached pin reads no logins and reaches no registry.
    registry: std::sync::OnceLock<RegistryClient>,
    config: &'a Config,
    runtime: &'a Runtime,
    cache: PathBuf,
    allow_downgrade: bool,
}

impl<'a> Puller<'a> {
    /// A puller for `config`'s registries and cache, transferring on `runtime`.
    pub fn new(config: &'a Config, runtime: &'a Runtime) -> Self {
        Self {
            registry: std::sync::OnceLock::new(),
            config,
            runtime,
            cache: config.resolve(&config.cache_dir).join("oci"),
            allow_downgrade: false,
        }
    }

    /// Let `sync` pin a version at or below the active one (the operator's explicit choice).
    pub fn allow_downgrade(mut self, allow: bool) -> Self {
        self.allow_downgrade = allow;
        self
    }

    /// The configuration it pulls for.
    pub fn config(&self) -> &'a Config {
        self.config
    }

    /// The runtime transfers run on.
    pub fn runtime(&self) -> &Runtime {
        self.runtime
    }

    /// The registry client.
    pub fn registry(&self) -> &RegistryClient {
        self.registry.get_or_init(|| registry_client(self.config))
    }

    /// Where the component with layer digest `layer` is cached.
    pub fn cache_path(&self, layer: &str) -> PathBuf {
        self.cache.join(format!("{}.wasm", layer.replace(':', "-")))
    }

    /// The trusted keys for `reference` and how to name them, or None when no policy covers it.
    fn signers(&self, reference: &str) -> Result<Option<Signers>, DistributionError> {
        let policies: Vec<_> =
            self.config.registry.trust.iter().filter(|t| reference.starts_with(&t.prefix)).collect();
        if policies.is_empty() {
            if self.config.registry.require_signatures {
                return Err(DistributionError::Invalid {
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
    ) -> Result<Pulled, DistributionError> {
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
    ) -> Result<(), DistributionError> {
        let refused = |reason: String| DistributionError::Imports { reference: reference.to_owned(), reason };
        let world = declared.world().map_err(refused)?;
        let grants: BTreeSet<String> = self.config.wasi.grant.iter().cloned().collect();
        surface::check_imports(declared, world, &grants).map_err(refused)?;
        let read_only = !profiles.is_empty()
            && profiles.iter().all(|p| bardo_core::profile::Profile::parse(p).is_ok_and(|p| p.read_only()));
        if read_only && world == World::Writer {
            return Err(refused(format!(
                "it is a writer (imports `signer` and `simulate`), but it is routed only to read-only profiles {profiles:?}"
            )));
        }
        Ok(())
    }

    /// The pinned component's bytes: the cached copy, re-verified, with no network and no
    /// runtime; pulled by digest only when it is not cached.
    pub fn load(&self, pin: &OciPin) -> Result<Vec<u8>, DistributionError> {
        if let Some(bytes) = self.cached(pin)? {
            return Ok(bytes);
        }
        Ok(self.runtime.block_on_anywhere(self.pull(&pin.name, &pin.pinned_reference(), &[], &|_| {}))?.bytes)
    }

    /// The cached copy of `pin`, checked against its layer digest; None when not cached.
    pub fn cached(&self, pin: &OciPin) -> Result<Option<Vec<u8>>, DistributionError> {
        let path = self.cache_path(&pin.layer);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(DistributionError::Io { path, source }),
        };
        let actual = bardo_registry::sha256_digest(&bytes);
        if actual != pin.layer {
            return Err(DistributionError::CacheTampered { path, expected: pin.layer.clone(), actual });
        }
        Ok(Some(bytes))
    }

    fn store(&self, pin: &OciPin, bytes: &[u8]) -> Result<(), DistributionError> {
        let path = self.cache_path(&pin.layer);
        let io = |source| DistributionError::Io { path: path.clone(), source };
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
    puller: &Puller<'_>,
    engine: &Engine,
    lock: &mut Lockfile,
    name: &str,
    reference: &str,
    profiles: &[String],
    progress: &(dyn Fn(Transfer) + Sync),
) -> Result<Outcome, DistributionError> {
    let active = lock.oci_pin(name).cloned();
    let pulled = match puller.runtime.block_on_anywhere(puller.pull(name, reference, profiles, progress)) {
        Ok(p) => p,
        Err(DistributionError::Registry(e)) if e.is_unreachable() => {
            let Some(pin) = active.filter(|p| puller.cached(p).is_ok_and(|c| c.is_some())) else {
                return Err(e.into());
            };
            tracing::warn!("{e}; using the cached pinned version {} ({})", pin.version, pin.digest);
            return Ok(Outcome::Offline { pin, reason: e.to_string() });
        }
        Err(e) => return Err(e),
    };
    let new = report(engine, puller.runtime, &pulled.pin, &pulled.bytes)?;
    if !pulled.pin.version.is_empty() && new.version != pulled.pin.version {
        return Err(DistributionError::Invalid {
            reference: reference.to_owned(),
            reason: format!(
                "published as version {} but the component says {}; republish it under its own version",
                pulled.pin.version, new.version
            ),
        });
    }
    // The tag is not signed (the manifest is): a semver tag must name the component's version.
    if let Some(tag) = semver_tag(reference)
        && semver::Version::parse(&new.version).ok() != Some(tag.clone())
    {
        return Err(DistributionError::Invalid {
            reference: reference.to_owned(),
            reason: format!(
                "tagged {tag} but the component is version {}; it was re-tagged — pull it by its own version",
                new.version
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
    let newer = match (semver::Version::parse(&pin.version), semver::Version::parse(&active.version)) {
        (Ok(offered), Ok(pinned)) => offered > pinned,
        _ => false,
    };
    if !newer && !puller.allow_downgrade {
        return Err(DistributionError::Downgrade {
            name: name.to_owned(),
            reference: reference.to_owned(),
            offered: pin.version,
            active: active.version,
        });
    }
    let old_bytes = puller.load(&active)?;
    let diff = surface_audit::diff(&report(engine, puller.runtime, &active, &old_bytes)?, &new);
    if !diff.incompatible.is_empty() {
        return Err(DistributionError::Incompatible {
            name: name.to_owned(),
            reference: reference.to_owned(),
            active: active.version,
            reasons: diff.incompatible,
        });
    }
    if diff.grew {
        lock.set_pending(pin.clone());
        return Ok(Outcome::Held { pin, active, diff });
    }
    lock.set_oci(pin.clone());
    Ok(Outcome::Pinned { pin, previous: Some(active), diff: Some(diff) })
}

/// The version a reference's tag names, when the tag is a semantic version (`1.2.0`, `v1.2.0`).
fn semver_tag(reference: &str) -> Option<semver::Version> {
    let parsed = bardo_registry::parse_reference(reference).ok()?;
    let tag = parsed.tag()?;
    semver::Version::parse(tag.strip_prefix('v').unwrap_or(tag)).ok()
}

/// Approve the pending update of `name`: it becomes the pin. Returns it and the surface diff.
pub fn approve(
    puller: &Puller<'_>,
    engine: &Engine,
    lock: &mut Lockfile,
    name: &str,
) -> Result<(OciPin, Option<SurfaceDiff>), DistributionError> {
    let pending = lock
        .pending
        .iter()
        .find(|p| p.name == name)
        .cloned()
        .ok_or_else(|| DistributionError::NoPending(name.to_owned()))?;
    let new_bytes = puller.load(&pending)?;
    let new = report(engine, puller.runtime, &pending, &new_bytes)?;
    let diff = match lock.oci_pin(name).cloned() {
        Some(active) => {
            let old = puller.load(&active)?;
            Some(surface_audit::diff(&report(engine, puller.runtime, &active, &old)?, &new))
        }
        None => None,
    };
    lock.set_oci(pending.clone());
    Ok((pending, diff))
}

/// The capability surface of a pulled component (its manifest read in a sandbox).
pub fn report(
    engine: &Engine,
    runtime: &Runtime,
    pin: &OciPin,
    bytes: &[u8],
) -> Result<SurfaceReport, DistributionError> {
    let report = surface_audit::audit(engine.clone(), runtime, &pin.name, bytes)
        .map_err(|e| DistributionError::Audit { reference: pin.reference.clone(), source: Box::new(e) })?;
    if report.world.is_none() {
        return Err(DistributionError::Invalid {
            reference: pin.reference.clone(),
            reason: report.policy_refusal.unwrap_or_else(|| "it exports no plugin world".into()),
        });
    }
    Ok(report)
}
