//! A plugin's code: its pre-instantiated component, its instances and the indices of its
//! exports. Made at load — or, for a component whose surface and manifest an earlier load left
//! in the cache (`listing`), on its first call: a command that only lists tools maps no
//! component and runs no plugin code.

use super::instances::Instances;
use super::{World, catalog, read, stream, write};
use crate::caps::state::CallState;
use crate::engine::{Engine, sha256_hex};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use wasmtime::component::{Component, Linker};

/// What calls into a plugin need.
pub(crate) struct Code {
    pub(crate) instances: Arc<Instances>,
    pub(crate) read: read::GuestIndices,
    pub(crate) write: Option<write::GuestIndices>,
    pub(crate) stream: Option<stream::GuestIndices>,
}

impl Code {
    /// Pre-instantiate `component` against the host's imports and find the exports of its
    /// `world`, with the catalog's (which only a load that reads the manifest uses).
    pub(crate) fn link(
        linker: &Linker<CallState>,
        component: &Component,
        world: World,
    ) -> Result<(Self, catalog::GuestIndices), String> {
        let text = |e: wasmtime::Error| format!("{e:#}");
        let pre = linker.instantiate_pre(component).map_err(text)?;
        let read = read::GuestIndices::new(&pre).map_err(text)?;
        let write =
            (world == World::Writer).then(|| write::GuestIndices::new(&pre)).transpose().map_err(text)?;
        let stream =
            (world == World::Streamer).then(|| stream::GuestIndices::new(&pre)).transpose().map_err(text)?;
        let catalog = catalog::GuestIndices::new(&pre).map_err(text)?;
        Ok((Self { instances: Instances::new(pre), read, write, stream }, catalog))
    }
}

/// A plugin's code, made at load or on first use.
pub(crate) struct LazyCode {
    code: OnceLock<Result<Code, String>>,
    deferred: Option<Deferred>,
}

/// How to make a listed plugin's code when it is first called.
pub(crate) struct Deferred {
    pub(crate) engine: Engine,
    pub(crate) linker: Arc<Linker<CallState>>,
    /// The file it was loaded from: compiled again should the cache lose its compiled code,
    /// once its bytes are checked against `sha256` (never code other than what was verified).
    pub(crate) origin: PathBuf,
    pub(crate) sha256: String,
    pub(crate) world: World,
    /// The operator-granted interfaces its calls may use, decided at load.
    pub(crate) grants: BTreeSet<&'static str>,
}

impl LazyCode {
    /// Code made at load.
    pub(crate) fn ready(code: Code) -> Self {
        Self { code: OnceLock::from(Ok(code)), deferred: None }
    }

    /// Code to make on first use.
    pub(crate) fn deferred(deferred: Deferred) -> Self {
        Self { code: OnceLock::new(), deferred: Some(deferred) }
    }

    /// The code, made now if it was deferred (once: concurrent first calls wait for one
    /// another); why it cannot be made, for good (a restart loads the plugin again).
    pub(crate) fn get(&self) -> Result<&Code, &str> {
        let made = self.code.get_or_init(|| match &self.deferred {
            Some(deferred) => deferred.make(),
            None => Err("its code was never made".into()),
        });
        made.as_ref().map_err(String::as_str)
    }

    /// The code if it is made already.
    pub(crate) fn made(&self) -> Option<&Code> {
        self.code.get().and_then(|made| made.as_ref().ok())
    }
}

impl Deferred {
    fn make(&self) -> Result<Code, String> {
        let component = match self.engine.cached(&self.sha256) {
            Some(component) => component,
            None => {
                let origin = self.origin.display();
                let bytes = std::fs::read(&self.origin).map_err(|e| {
                    format!("its compiled code left the cache and {origin} cannot be read again: {e}")
                })?;
                if sha256_hex(&bytes) != self.sha256 {
                    return Err(format!(
                        "{origin} changed since bardo verified it (sha256 {}); restart bardo to load and verify the new file",
                        self.sha256
                    ));
                }
                self.engine.compile_digested(&bytes, &self.sha256).map_err(|e| e.to_string())?.0
            }
        };
        let (code, _) = Code::link(&self.linker, &component, self.world)?;
        code.instances.grant(self.grants.clone());
        Ok(code)
    }
}
