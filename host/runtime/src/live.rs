//! `bardo run` (and the host under `bardo mcp`): a host per profile, rebuilt when `bardo.toml` or
//! `bardo.lock` changes and swapped in atomically. A call holds the host it started on, so calls
//! in flight finish on the old version while new calls go to the new one; two versions of a
//! plugin can serve side by side in different profiles (`[oci.NAME] profiles = [...]`, a canary).
//! A rebuilt host keeps its predecessor's services unless their sections changed (see
//! `setup::services`): the chains, the warm fork and the sidecar survive a plugin update.

use crate::config::Config;
use crate::engine::Engine;
use crate::plugin::{CallReport, Host};
use crate::setup::{self, SetupError};
use bardo_core::Runtime;
use bardo_core::sync::{lock, read, write};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

/// Hosts by profile, swapped as a whole.
type Hosts = BTreeMap<String, Arc<Host>>;

/// The live hosts of a `bardo run`.
pub struct Live {
    config_path: PathBuf,
    profiles: Vec<String>,
    engine: Engine,
    runtime: Runtime,
    hosts: RwLock<Arc<Hosts>>,
    /// sha256 of the configuration and lock contents the current hosts were built from.
    seen: Mutex<[u8; 32]>,
    reloads: AtomicU64,
}

impl Live {
    /// Open hosts for `profiles` (none: the configuration's default profile), their I/O on
    /// `runtime`.
    pub fn open(config_path: &Path, profiles: &[String], runtime: &Runtime) -> Result<Self, SetupError> {
        let config = Config::load(config_path, true)?;
        let profiles = if profiles.is_empty() { vec![config.profile.clone()] } else { profiles.to_vec() };
        let engine = Engine::new(Some(config.resolve(&config.cache_dir)))?;
        let live = Self {
            config_path: config_path.to_owned(),
            profiles,
            engine,
            runtime: runtime.clone(),
            hosts: RwLock::new(Arc::new(BTreeMap::new())),
            seen: Mutex::new([0; 32]),
            reloads: AtomicU64::new(0),
        };
        live.reload()?;
        live.reloads.store(0, Ordering::Relaxed);
        Ok(live)
    }

    /// The profiles served.
    pub fn profiles(&self) -> &[String] {
        &self.profiles
    }

    /// The current host of `profile`.
    pub fn host(&self, profile: &str) -> Option<Arc<Host>> {
        read(&self.hosts).get(profile).cloned()
    }

    /// Call read tool `tool` in `profile` on the current host.
    pub fn call(&self, profile: &str, tool: &str, params_json: &str) -> CallReport {
        match self.host(profile) {
            Some(host) => host.call(tool, params_json),
            None => CallReport::refused(bardo_core::ToolError::new(
                bardo_core::ErrorCode::NotFound,
                format!("profile `{profile}` is not served; serve it with `bardo run --profile {profile}`"),
            )),
        }
    }

    /// How many times the hosts were rebuilt since opening.
    pub fn reloads(&self) -> u64 {
        self.reloads.load(Ordering::Relaxed)
    }

    /// Rebuild the hosts if the configuration or the lock changed. A failed rebuild keeps the
    /// current hosts serving and reports why.
    pub fn reload_if_changed(&self) -> Result<bool, SetupError> {
        let now = self.fingerprint();
        if now == *lock(&self.seen) {
            return Ok(false);
        }
        self.reload()?;
        Ok(true)
    }

    /// Rebuild every profile's host from the files as they are now, then swap them in at once.
    pub fn reload(&self) -> Result<(), SetupError> {
        // Taken first: a change made while rebuilding triggers the next reload.
        let fingerprint = self.fingerprint();
        let config = Config::load(&self.config_path, true)?;
        let mut hosts = BTreeMap::new();
        let previous = read(&self.hosts).clone();
        for profile in &self.profiles {
            let kept = previous.get(profile).map(|host| host.services().as_ref());
            let opened = setup::open_with(&config, Some(profile), self.engine.clone(), &self.runtime, kept)?;
            for e in &opened.refused {
                tracing::warn!(%profile, "plugin not loaded: {e}");
            }
            hosts.insert(profile.clone(), Arc::new(opened.host));
        }
        *write(&self.hosts) = Arc::new(hosts);
        *lock(&self.seen) = fingerprint;
        self.reloads.fetch_add(1, Ordering::Relaxed);
        tracing::info!(profiles = ?self.profiles, "plugins (re)loaded");
        Ok(())
    }

    /// Watch the configuration and lock every `every`, reloading on a change, until the
    /// returned guard is dropped.
    pub fn watch(self: &Arc<Self>, every: Duration) -> Watcher {
        let stop = Arc::new(AtomicBool::new(false));
        let (live, flag) = (self.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("bardo-watch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    if let Err(e) = live.reload_if_changed() {
                        tracing::error!("reload failed, the previous plugins keep serving: {e}");
                        // Do not retry the same broken files in a loop.
                        *lock(&live.seen) = live.fingerprint();
                    }
                    std::thread::sleep(every);
                }
            })
            .ok();
        Watcher { stop, thread }
    }

    /// sha256 over the configuration's and the lock's contents (missing files hash as empty).
    fn fingerprint(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        let text = std::fs::read(&self.config_path).unwrap_or_default();
        h.update(&text);
        if let Ok(config) = Config::load(&self.config_path, true) {
            h.update([0xff]);
            h.update(std::fs::read(config.resolve(&config.lock)).unwrap_or_default());
        }
        h.finalize().into()
    }
}

/// Stops the watcher thread when dropped.
pub struct Watcher {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
