//! Plugins: the host that holds them and its catalog, and calls to tools in fresh instances;
//! loading a component (compile or cache, check its surface, read its manifest) is in `load`.

mod call;
mod code;
mod instances;
mod listing;
mod load;
mod params;
mod plan;
pub mod streams;
pub mod surface;

pub use crate::caps::{Preopen, WasiPolicy};
pub use bardo_core::control::{CallControl, Progress};
pub use call::{CallReport, CallStats, INLINE_SLICE, step_name};
pub use instances::InstanceStats;
pub use params::ParamsSchema;
pub use surface::{Surface, World};

use crate::bindings::exports::bardo::plugin::{catalog, read, stream, write};
use crate::caps::state::CallState;
use crate::caps::{self, convert};
use crate::engine::{CacheOutcome, Engine, EngineError, Limits};
use crate::services::Services;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::profile::{Profile, Selection};
use bardo_core::tool::{CapabilityTier, Manifest, TickBudget, ToolDef};
use instances::CallEnv;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasmtime::component::Linker;

/// Why a plugin was not loaded. Each names the plugin and the cause.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read plugin {path}: {source}")]
    Io {
        /// The plugin file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The bytes are not a WebAssembly component (a core module, or not wasm at all).
    #[error("plugin `{plugin}` is not a WebAssembly component: {reason}")]
    NotAComponent {
        /// The plugin (its file name until the manifest is read).
        plugin: String,
        /// What it is instead.
        reason: String,
    },
    /// Its surface is outside the policy (an import not granted, a missing export).
    #[error("plugin `{plugin}` refused: {reason}")]
    Refused {
        /// The plugin.
        plugin: String,
        /// Which import or export, and why.
        reason: String,
    },
    /// Its manifest could not be read or is invalid.
    #[error("plugin `{plugin}` has an unusable manifest: {reason}")]
    Manifest {
        /// The plugin.
        plugin: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Another copy of the same plugin (by manifest name) is loaded already.
    #[error("plugin `{plugin}` is loaded twice: {} and {}; keep one of the two files", copies.0, copies.1)]
    DuplicatePlugin {
        /// The plugin's name.
        plugin: String,
        /// The copy being loaded and the one loaded already, each `file (version v)`.
        copies: Box<(String, String)>,
    },
    /// It declares a tool another loaded plugin already provides (neither of the two disabled).
    #[error(
        "plugin `{plugin}` declares tool `{tool}`, which plugin `{other}` already provides; disable one of the two in bardo.toml: [tools] disable = [\"{plugin}:{tool}\"] (or \"{other}:{tool}\")"
    )]
    DuplicateTool {
        /// The plugin being loaded.
        plugin: String,
        /// The tool both declare.
        tool: String,
        /// The plugin that provides it already.
        other: String,
    },
    /// One of its write tools claims an action kind another loaded write tool serves: the
    /// agent's `preview KIND` must reach one tool, never whichever plugin loaded first.
    #[error(
        "plugin `{plugin}`'s tool `{tool}` claims action kind `{kind}`, which `{other_tool}` of plugin `{other_plugin}` already serves; one tool serves each kind: disable one of the two in bardo.toml: [tools] disable = [\"{plugin}:{tool}\"] (or \"{other_plugin}:{other_tool}\")"
    )]
    ActionKindTaken {
        /// The plugin being loaded.
        plugin: String,
        /// Its tool that claims the kind.
        tool: String,
        /// The action kind.
        kind: String,
        /// The plugin that serves it already.
        other_plugin: String,
        /// The tool that serves it.
        other_tool: String,
    },
    /// The engine failed (compiling, caching).
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// A loaded plugin: compiled, checked, ready to instantiate per call.
pub struct LoadedPlugin {
    /// Manifest name (also used in errors and logs).
    pub name: Arc<str>,
    /// Where it was loaded from (its file name, or the registry reference).
    pub source: String,
    /// Its manifest.
    pub manifest: Manifest,
    /// Its world.
    pub world: World,
    /// Its imports and exports.
    pub surface: Surface,
    /// sha256 of the component bytes, hex.
    pub sha256: String,
    /// Whether it came from the compiled-artifact cache.
    pub cache: CacheOutcome,
    code: code::LazyCode,
}

/// A component compiled and its surface read, not yet checked or instantiated.
pub(crate) struct Compiled {
    component: wasmtime::component::Component,
    cache: CacheOutcome,
    /// sha256 of the component bytes, hex.
    pub(crate) sha256: String,
    /// Its imports and exports.
    pub(crate) surface: Surface,
}

/// A tool in the catalog: which plugin serves it and its definition.
#[derive(Clone)]
pub struct CatalogEntry {
    /// The plugin that serves it.
    pub plugin: Arc<LoadedPlugin>,
    /// Its definition, as the manifest declares it.
    pub def: ToolDef,
    /// Its input schema, compiled: the host checks params with it before any instance runs.
    pub params: Arc<ParamsSchema>,
    /// The name the plugin declares it under, which calls use (it differs from `def.name` only
    /// for a plugin served side by side with a newer version).
    pub guest_name: String,
}

/// A tool the profile did not select, and why (for `bardo tools` and the log).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Skipped {
    /// The tool skipped.
    pub tool: String,
    /// The plugin that declares it.
    pub plugin: String,
    /// Why, for the operator.
    pub reason: String,
    /// Skipped because no wallet is configured (a write tool): calling it is
    /// `wallet-not-configured`, not `not-found`.
    #[serde(skip)]
    pub needs_wallet: bool,
}

/// The host: engine, imports, loaded plugins and the profile's catalog.
pub struct Host {
    engine: Engine,
    linker: Arc<Linker<CallState>>,
    services: Arc<Services>,
    wasi: Arc<WasiPolicy>,
    grants: BTreeSet<String>,
    limits: Limits,
    profile: Profile,
    plugins: Vec<Arc<LoadedPlugin>>,
    catalog: BTreeMap<String, CatalogEntry>,
    skipped: Vec<Skipped>,
}

/// Limits for reading a manifest at load time.
static LOAD_LIMITS: std::sync::LazyLock<Limits> =
    std::sync::LazyLock::new(|| Limits { ready_instances: 0, ..Limits::default() });

/// Params larger than this are refused before any plugin code runs.
const MAX_PARAMS: usize = 1 << 20;

impl Host {
    /// A host with no plugins yet, serving the host imports from `services`.
    pub fn new(
        engine: Engine,
        services: Arc<Services>,
        profile: Profile,
        limits: Limits,
        wasi: WasiPolicy,
    ) -> Result<Self, LoadError> {
        let mut linker = Linker::new(engine.wasmtime());
        let linked = caps::add_to_linker(&mut linker)
            .and_then(|()| wasmtime_wasi::p2::add_to_linker_sync(&mut linker))
            .and_then(|()| crate::caps::state::shadow_wasi_poll(&mut linker));
        linked.map_err(|e| EngineError::Config(format!("linking host imports: {e:#}")))?;
        Ok(Self {
            engine,
            linker: Arc::new(linker),
            services,
            grants: wasi.grant.iter().cloned().collect(),
            wasi: Arc::new(wasi),
            limits,
            profile,
            plugins: Vec::new(),
            catalog: BTreeMap::new(),
            skipped: Vec::new(),
        })
    }

    /// Run `f` on a fresh instance of the plugin serving `entry`, under the tool's budget.
    fn run_entry<R>(
        &self,
        entry: &CatalogEntry,
        tool: &str,
        f: impl FnOnce(
            &mut wasmtime::Store<CallState>,
            &wasmtime::component::Instance,
        ) -> wasmtime::Result<Result<R, ToolError>>,
    ) -> CallReport<R> {
        let plugin = &entry.plugin;
        match plugin.code() {
            Ok(code) => call::run(&self.env(), &code.instances, &plugin.name, tool, entry.def.tick_budget, f),
            Err(e) => CallReport::refused(e),
        }
    }

    fn env(&self) -> CallEnv<'_> {
        CallEnv { engine: &self.engine, services: &self.services, wasi: &self.wasi, limits: &self.limits }
    }

    /// Reading a manifest is the host's own call: default limits, whatever the profile's.
    fn load_env(&self) -> CallEnv<'_> {
        CallEnv { limits: &LOAD_LIMITS, ..self.env() }
    }

    /// The services its imports are served from: what a write path or a subscription registry
    /// over this host is built with (they take them explicitly; nothing reaches through here).
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }

    /// The engine plugins are compiled and run on.
    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The profile's tools, by name.
    pub fn catalog(&self) -> &BTreeMap<String, CatalogEntry> {
        &self.catalog
    }

    /// Tools the profile skipped for a missing capability.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// Every loaded plugin.
    pub fn plugins(&self) -> &[Arc<LoadedPlugin>] {
        &self.plugins
    }

    /// The profile the host serves.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The limits every call runs under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Why `tool` is not served, pointing the right way: no wallet for a write tool, the reason
    /// it was skipped, the `[tools] disable` line, the profiles that run it when a loaded plugin
    /// declares it, else the closest name served.
    pub fn not_found(&self, tool: &str) -> ToolError {
        let profile = self.profile.name();
        let declared = self
            .plugins
            .iter()
            .find_map(|p| p.manifest.tools.iter().find(|d| d.name == tool).map(|d| (&p.name, d)));
        if let Some(skipped) = self.skipped.iter().find(|s| s.tool == tool) {
            if skipped.needs_wallet {
                return ToolError::new(
                    ErrorCode::WalletNotConfigured,
                    format!(
                        "`{tool}` plans writes and no wallet is configured; set BARDO_PRIVATE_KEY or \
                         [signer] keystore in bardo.toml"
                    ),
                );
            }
            let message = format!("`{tool}` ({}) was not loaded: {}", skipped.plugin, skipped.reason);
            return ToolError::new(ErrorCode::NotFound, message);
        }
        let message = match declared {
            Some((plugin, _)) if self.profile.disables(plugin, tool) => {
                format!("`{tool}` ({plugin}) is disabled by `[tools] disable` in bardo.toml")
            }
            Some((_, def)) => {
                let running = bardo_core::profile::profiles_running(def);
                let which = match running.first() {
                    Some(first) => {
                        format!("profiles that run it: {}; e.g. `--profile {first}`", running.join(", "))
                    }
                    None => "no profile of the table runs it; [tools] enable it in bardo.toml".into(),
                };
                format!("`{tool}` is not in profile `{profile}`; {which}")
            }
            None => {
                let served = self.catalog.keys().map(String::as_str);
                let hint = bardo_core::suggest::hint(tool, served);
                format!("no tool `{tool}` in profile `{profile}`{hint}; list the tools with `bardo tools`")
            }
        };
        ToolError::new(ErrorCode::NotFound, message)
    }

    /// The catalog entry for `tool` if it has `tier`; else the error the caller should see.
    fn entry(&self, tool: &str, tier: CapabilityTier) -> Result<&CatalogEntry, ToolError> {
        let Some(entry) = self.catalog.get(tool) else {
            return Err(self.not_found(tool));
        };
        if let Some(path) = self.services.settings.missing(&entry.plugin.name) {
            return Err(ToolError::new(
                ErrorCode::Denied,
                format!(
                    "plugin `{}` is not configured: its settings file {} does not exist; create it \
                     (`bardo devnet up` writes the devnet's) or point `[settings] {}` in bardo.toml elsewhere",
                    entry.plugin.name,
                    path.display(),
                    entry.plugin.name
                ),
            ));
        }
        if entry.def.capability_tier != tier {
            let how = match entry.def.capability_tier {
                CapabilityTier::Read => "call it with `bardo call`",
                _ => "plan it with `bardo plan`; the host executes writes",
            };
            return Err(ToolError::new(
                ErrorCode::Denied,
                format!("`{tool}` is a {:?} tool; {how}", entry.def.capability_tier),
            ));
        }
        Ok(entry)
    }

    /// Call read tool `tool` with JSON params, in a fresh instance under the limits.
    pub fn call(&self, tool: &str, params_json: &str) -> CallReport {
        self.call_control(tool, params_json, None)
    }

    /// [`Self::call`] with a caller's control: progress is reported as it happens and
    /// `control.cancel()` stops the instance at its next epoch tick.
    pub fn call_with(&self, tool: &str, params_json: &str, control: &Arc<CallControl>) -> CallReport {
        self.call_control(tool, params_json, Some(control))
    }

    /// [`Self::call_with`] on a thread that must not block, such as an MCP session's protocol
    /// thread: a call that only computes then needs no hop to another thread. `None` when the
    /// attempt gave up — it would have waited (RPC, a simulation, a WASI poll) or ran past
    /// [`INLINE_SLICE`] — and left no trace: run the call with [`Self::call_with`] on a
    /// thread that may wait. Call it outside any async runtime (WASI's sync imports enter
    /// their own). Isolation is the same: a fresh instance under the same limits.
    pub fn try_call_inline(
        &self,
        tool: &str,
        params_json: &str,
        control: &Arc<CallControl>,
    ) -> Option<CallReport> {
        self.read_call(tool, params_json, Some(control), true)
    }

    fn call_control(&self, tool: &str, params_json: &str, control: Option<&Arc<CallControl>>) -> CallReport {
        match self.read_call(tool, params_json, control, false) {
            Some(report) => report,
            None => CallReport::refused(ToolError::new(
                ErrorCode::Internal,
                "a call gave up without being inline",
            )),
        }
    }

    fn read_call(
        &self,
        tool: &str,
        params_json: &str,
        control: Option<&Arc<CallControl>>,
        inline: bool,
    ) -> Option<CallReport> {
        let entry = match self.entry(tool, CapabilityTier::Read) {
            Ok(entry) => entry,
            Err(e) => return Some(CallReport::refused(e)),
        };
        if let Err(e) = check_params(entry, tool, params_json) {
            return Some(CallReport::refused(e));
        }
        if self.is_stream(tool) {
            return Some(CallReport::refused(ToolError::new(
                ErrorCode::Denied,
                format!("`{tool}` is a stream tool; subscribe to it with `bardo stream {tool}`"),
            )));
        }
        let plugin = &entry.plugin;
        let code = match plugin.code() {
            Ok(code) => code,
            Err(e) => return Some(CallReport::refused(e)),
        };
        let limits = &self.limits;
        let steps = entry.def.progress_steps.as_slice();
        let run = |store: &mut wasmtime::Store<CallState>, instance: &wasmtime::component::Instance| {
            let guest = code.read.load(&mut *store, instance)?;
            let answer = guest.call_call(&mut *store, &entry.guest_name, params_json)?;
            Ok(answer
                .map_err(convert::tool_error)
                .and_then(|json| call::cap_result(json, limits, &plugin.name, tool)))
        };
        let (env, budget) = (self.env(), entry.def.tick_budget);
        let report = match control {
            Some(control) if inline => {
                call::run_inline(&env, &code.instances, &plugin.name, tool, budget, (control, steps), run)
            }
            control => Some(call::run_with(
                &env,
                &code.instances,
                &plugin.name,
                tool,
                budget,
                control.map(|c| (c, steps)),
                run,
            )),
        };
        report.map(|r| {
            CallReport { schema_version: entry.def.schema_version, ..r }
                .host_chain_first(&self.services, params_json)
        })
    }
}

/// One instance kept across calls: the baseline an isolated call is measured against. Calls
/// share the instance's memory, so this is for benchmarks of trusted plugins only; the host
/// itself always uses a fresh instance per call.
pub struct ReusedInstance {
    store: wasmtime::Store<CallState>,
    guest: read::Guest,
    limits: Limits,
    entry: CatalogEntry,
}

impl ReusedInstance {
    /// Call `tool` on the kept instance, refuelled to the full budget, with the host's own
    /// checks around it (params against the schema, the result cap): the only difference from
    /// [`Host::call`] is the instance.
    pub fn call(&mut self, tool: &str, params_json: &str) -> Result<String, ToolError> {
        check_params(&self.entry, tool, params_json)?;
        let _ = self.store.set_fuel(self.limits.fuel);
        self.store.set_epoch_deadline(crate::engine::deadline_ticks(TickBudget::Fast));
        match self.guest.call_call(&mut self.store, tool, params_json) {
            Ok(answer) => answer
                .map_err(convert::tool_error)
                .and_then(|json| call::cap_result(json, &self.limits, &self.entry.plugin.name, tool)),
            Err(trap) => Err(ToolError::new(ErrorCode::Internal, format!("{trap:#}"))),
        }
    }
}

impl Host {
    /// A kept instance of the plugin serving `tool` (see [`ReusedInstance`]).
    pub fn reused_instance(&self, tool: &str) -> Result<ReusedInstance, ToolError> {
        let entry = self
            .catalog
            .get(tool)
            .ok_or_else(|| ToolError::new(ErrorCode::NotFound, format!("no tool `{tool}`")))?;
        let plugin = &entry.plugin;
        let code = plugin.code()?;
        let call = caps::CallCtx {
            plugin: plugin.name.clone(),
            tool: tool.to_owned(),
            started: std::time::Instant::now(),
            deadline: std::time::Instant::now(),
            events: Default::default(),
            control: None,
            inline: None,
            granted: code.instances.granted(),
        };
        let state = CallState::new(self.services.clone(), call, self.wasi.clone());
        let mut store = self.engine.store(state, &self.limits, TickBudget::Fast);
        let internal = |e: wasmtime::Error| ToolError::new(ErrorCode::Internal, format!("{e:#}"));
        let instance = code.instances.pre().instantiate(&mut store).map_err(internal)?;
        let guest = code.read.load(&mut store, &instance).map_err(internal)?;
        Ok(ReusedInstance { store, guest, limits: self.limits.clone(), entry: entry.clone() })
    }
}

impl LoadedPlugin {
    /// How its calls got their fresh instances: ready ones made ahead, or made on the call.
    pub fn instance_stats(&self) -> InstanceStats {
        self.code.made().map(|code| code.instances.stats()).unwrap_or_default()
    }

    /// Whether the plugin exports `write` / `stream` handlers (checked at load).
    pub fn exports_write(&self) -> bool {
        self.world == World::Writer
    }

    /// Whether the plugin exports stream handlers.
    pub fn exports_stream(&self) -> bool {
        self.world == World::Streamer
    }

    /// Whether its code is made: at load, or on the first call of a plugin whose listing came
    /// from the cache.
    pub fn code_made(&self) -> bool {
        self.code.made().is_some()
    }

    /// Its code, made now if its load was listed from the cache.
    fn code(&self) -> Result<&code::Code, ToolError> {
        self.code.get().map_err(|why| {
            ToolError::new(ErrorCode::Internal, format!("plugin `{}` cannot run: {why}", self.name))
        })
    }
}

/// Params larger than [`MAX_PARAMS`], off the tool's schema, or naming a chain the tool does not
/// declare in `supported_chains` are refused before any plugin code runs (so before any RPC).
fn check_params(entry: &CatalogEntry, tool: &str, params_json: &str) -> Result<(), ToolError> {
    if params_json.len() > MAX_PARAMS {
        return Err(ToolError::new(
            ErrorCode::InvalidParams,
            format!("params are {} bytes, over the {MAX_PARAMS} byte limit", params_json.len()),
        ));
    }
    entry.params.check(tool, params_json)?;
    check_chain(&entry.def, tool, params_json)
}

/// A tool with `supported_chains` runs only on those (the specification's chain-support matrix);
/// none declared means every chain the host has a node for.
fn check_chain(def: &ToolDef, tool: &str, params_json: &str) -> Result<(), ToolError> {
    if def.supported_chains.is_empty() {
        return Ok(());
    }
    match chain_of(params_json) {
        Some(chain) if !def.supported_chains.contains(&chain) => {
            let chains: Vec<String> = def.supported_chains.iter().map(u64::to_string).collect();
            Err(ToolError::new(
                ErrorCode::ChainNotSupported,
                format!(
                    "`{tool}` works on chains {} (its plugin's supported_chains); chain {chain} is not one of them",
                    chains.join(", ")
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// The `chain_id` params name, if it is a number a chain id can be — read without building the
/// params as a document (every call of a tool with `supported_chains` reads it).
pub(crate) fn chain_of(params_json: &str) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Params {
        chain_id: Option<u64>,
    }
    serde_json::from_str::<Params>(params_json).ok()?.chain_id
}

/// An action kind as routed: `add-liquidity` and `add_liquidity` are one kind.
pub fn action_kind(kind: &str) -> String {
    kind.replace('-', "_")
}
