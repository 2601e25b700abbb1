//! `bardo:host/memory`: the Grimoire, for a plugin of `memory` tools under the `learning`
//! profile with memory on (see `caps::memory_grant`). It answers from the host's store; the
//! store's text is what agents wrote, and nothing on the write path reads it.

use super::view::{CallCtx, CapsView};
use crate::bindings::bardo::host::memory::Host;
use crate::bindings::bardo::host::types::Error;
use crate::caps::convert::wit_error;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_memory::{Exported, Memory, MemoryError, NewEpisode};
use serde::Serialize;
use wasmtime::component::{HasData, Linker};

/// The interface this module serves.
pub(crate) const INTERFACE: &str = "bardo:host/memory";

/// Most episodes one `import` takes.
const MAX_IMPORT: usize = 1_000;

/// The import as one call sees it.
pub struct MemoryView<'a> {
    memory: Option<&'a Memory>,
    call: &'a mut CallCtx,
}

struct HasMemory;
impl HasData for HasMemory {
    type Data<'a> = MemoryView<'a>;
}

pub(crate) fn add_to_linker<T: CapsView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    crate::bindings::bardo::host::memory::add_to_linker::<T, HasMemory>(linker, |t| {
        let caps = t.caps();
        MemoryView { memory: caps.memory, call: caps.call }
    })
}

/// How an operator grants it.
pub(crate) fn how_to_grant(_plugin: &str) -> String {
    "turn memory on (`[capabilities] memory = true`) and run the `learning` profile (`--profile learning`, or a profile that adds it: `trader,learning`)".into()
}

fn error(code: ErrorCode, message: impl Into<String>) -> Error {
    wit_error(ToolError::new(code, message))
}

fn memory_error(e: MemoryError) -> Error {
    match e {
        MemoryError::NotFound(m) => error(ErrorCode::NotFound, m),
        MemoryError::Invalid(m) => error(ErrorCode::InvalidParams, m),
        MemoryError::Denied(m) => error(ErrorCode::Denied, m),
        MemoryError::Store(e) => error(ErrorCode::Internal, format!("memory store: {e}")),
    }
}

fn to_json(value: &impl Serialize) -> Result<String, Error> {
    serde_json::to_string(value).map_err(|e| error(ErrorCode::Internal, e.to_string()))
}

fn limit(n: u32) -> Result<usize, Error> {
    let n = n as usize;
    if !(1..=bardo_memory::MAX_LIMIT).contains(&n) {
        return Err(error(
            ErrorCode::InvalidParams,
            format!("`limit` is {n}; 1 to {}", bardo_memory::MAX_LIMIT),
        ));
    }
    Ok(n)
}

impl<'a> MemoryView<'a> {
    /// The store, once the grant is checked.
    fn store(&self) -> Result<&'a Memory, Error> {
        if !self.call.granted.contains(INTERFACE) {
            return Err(error(
                ErrorCode::Denied,
                format!(
                    "plugin `{}`: memory (`bardo:host/memory`) is not granted to it; {}",
                    self.call.plugin,
                    how_to_grant(&self.call.plugin)
                ),
            ));
        }
        self.memory.ok_or_else(|| error(ErrorCode::Denied, format!("memory is off; {}", how_to_grant(""))))
    }

    /// [`Self::store`], warmed up for what embeds: loading the model (seconds in a short process
    /// on a loaded machine) and catching up on what another process left unembedded are the
    /// host's time, so the call's deadline moves by them, as for the sidecar's start.
    fn warm_store(&mut self) -> Result<&'a Memory, Error> {
        let store = self.store()?;
        let waited = store.warm_up().map_err(memory_error)?;
        self.call.extend(waited);
        Ok(store)
    }
}

impl Host for MemoryView<'_> {
    fn store_episode(&mut self, episode: String) -> Result<String, Error> {
        let store = self.warm_store()?;
        let episode: NewEpisode = serde_json::from_str(&episode)
            .map_err(|e| error(ErrorCode::InvalidParams, format!("the episode is not one: {e}")))?;
        to_json(&store.store(&episode).map_err(memory_error)?)
    }

    fn search(&mut self, query: String, n: u32) -> Result<String, Error> {
        let store = self.warm_store()?;
        to_json(&store.search(&query, limit(n)?).map_err(memory_error)?)
    }

    fn get_episode(&mut self, id: i64) -> Result<String, Error> {
        to_json(&self.store()?.get(id).map_err(memory_error)?)
    }

    fn reflect(&mut self, id: i64, critique: String) -> Result<String, Error> {
        to_json(&self.store()?.reflect(id, &critique).map_err(memory_error)?)
    }

    fn insights(&mut self, kind: Option<String>, n: u32) -> Result<String, Error> {
        let store = self.store()?;
        to_json(&store.insights(kind.as_deref(), limit(n)?).map_err(memory_error)?)
    }

    fn add_insight(
        &mut self,
        kind: Option<String>,
        text: String,
        evidence: Vec<i64>,
    ) -> Result<String, Error> {
        to_json(&self.store()?.add_insight(kind.as_deref(), &text, &evidence).map_err(memory_error)?)
    }

    fn forget(&mut self, ids: Vec<i64>, below: Option<f64>) -> Result<Vec<i64>, Error> {
        if below.is_some_and(|b| !(0.0..=1.0).contains(&b)) {
            return Err(error(ErrorCode::InvalidParams, "`below` is a retention, 0 to 1"));
        }
        self.store()?.forget(&ids, below).map_err(memory_error)
    }

    fn export_episodes(&mut self, after: i64, n: u32) -> Result<String, Error> {
        let store = self.store()?;
        to_json(&store.export(after, limit(n)?).map_err(memory_error)?)
    }

    fn import_episodes(&mut self, episodes: String) -> Result<Vec<i64>, Error> {
        let store = self.store()?;
        let episodes: Vec<Exported> = serde_json::from_str(&episodes)
            .map_err(|e| error(ErrorCode::InvalidParams, format!("not an export of episodes: {e}")))?;
        if episodes.len() > MAX_IMPORT {
            return Err(error(ErrorCode::InvalidParams, format!("at most {MAX_IMPORT} episodes an import")));
        }
        // The write path's episodes come only from the host (and the fleet's sealed feed).
        // (A uid in its form would also take the place of one the write path records next.)
        let claims =
            |e: &Exported| bardo_memory::is_write_path(&e.origin) || bardo_memory::is_write_path(&e.uid);
        if let Some(forged) = episodes.iter().find(|e| claims(e)) {
            return Err(error(
                ErrorCode::Denied,
                format!(
                    "episode `{}` claims the write path's origin `{}`: only the host records those; nothing was imported",
                    forged.uid, forged.origin
                ),
            ));
        }
        store.import(&episodes).map_err(memory_error)
    }

    fn status(&mut self) -> Result<String, Error> {
        to_json(&self.store()?.status().map_err(memory_error)?)
    }
}
