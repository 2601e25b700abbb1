//! What the write path asks of the plugins, and nothing more: which write tool serves an action
//! kind, a plan from it, and its reading of the receipts. The runtime's [`Host`] is the planner
//! of a real host; the write path's unit tests plan with a fake. Everything else a plan does is
//! decided here from the simulation and the chain, never from the planner's word.

use alloy::rpc::types::TransactionReceipt;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::tool::{CapabilityTier, ToolDef, WritePlan};
use bardo_runtime::plugin::{CallControl, CallReport, Host, action_kind};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Which component planned a write: a permit names it, and a commit on another generation (a
/// reload, another process) executes only if the same component still serves the tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginId {
    /// The plugin's manifest name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// sha256 of its component bytes, hex.
    pub sha256: String,
}

impl std::fmt::Display for PluginId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let short = self.sha256.get(..12).unwrap_or(&self.sha256);
        write!(f, "{} {} (sha256 {short}…)", self.name, self.version)
    }
}

/// A write tool as the write path sees it: its definition and the plugin that serves it.
#[derive(Debug, Clone, Copy)]
pub struct WriteTool<'a> {
    /// Its definition, as its plugin's manifest declares it.
    pub def: &'a ToolDef,
    /// The plugin serving it.
    pub plugin: PluginRef<'a>,
}

/// The identity of a loaded plugin, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct PluginRef<'a> {
    /// The plugin's name.
    pub name: &'a str,
    /// Its version.
    pub version: &'a str,
    /// sha256 of its component, hex.
    pub sha256: &'a str,
}

impl PluginRef<'_> {
    /// Owned, for a permit.
    pub fn to_owned_id(&self) -> PluginId {
        PluginId {
            name: self.name.to_owned(),
            version: self.version.to_owned(),
            sha256: self.sha256.to_owned(),
        }
    }

    /// Whether this is the component `id` names.
    pub fn is(&self, id: &PluginId) -> bool {
        self.sha256 == id.sha256 && self.name == id.name
    }
}

/// The plugins, as the write path uses them.
pub trait Planner: std::any::Any + Send + Sync {
    /// The write tool serving action kind `kind` (`add-liquidity` and `add_liquidity` are one
    /// kind), if one does.
    fn write_tool(&self, kind: &str) -> Option<WriteTool<'_>>;
    /// Write tool `name`, if it is loaded and serves writes.
    fn write_tool_named(&self, name: &str) -> Option<WriteTool<'_>>;
    /// Why no write tool serves `kind` here though a loaded plugin declares one (another
    /// profile runs it, it was skipped or disabled, no wallet), and what to do, as the error a
    /// preview answers; None when none declares it.
    fn unserved(&self, kind: &str) -> Option<ToolError> {
        let _ = kind;
        None
    }
    /// Ask write tool `tool` for a plan for `params_json`; `control` watches and can cancel it.
    fn plan(&self, tool: &str, params_json: &str, control: &Arc<CallControl>) -> CallReport<WritePlan>;
    /// Let write tool `tool` read what its executed plan did from `receipts`.
    fn verify(
        &self,
        tool: &str,
        params_json: &str,
        chain_id: u64,
        receipts: &[TransactionReceipt],
    ) -> CallReport<serde_json::Value>;
}

/// `no write tool implements KIND in this profile: WHY` (not-found).
fn not_served(why: String) -> ToolError {
    ToolError::new(ErrorCode::NotFound, why)
}

fn write_tool(entry: &bardo_runtime::plugin::CatalogEntry) -> Option<WriteTool<'_>> {
    (entry.def.capability_tier == CapabilityTier::Write).then(|| WriteTool {
        def: &entry.def,
        plugin: PluginRef {
            name: &entry.plugin.name,
            version: &entry.plugin.manifest.version,
            sha256: &entry.plugin.sha256,
        },
    })
}

impl Planner for Host {
    fn write_tool(&self, kind: &str) -> Option<WriteTool<'_>> {
        // Unique by construction: the host refuses to load a second tool claiming a kind.
        let kind = action_kind(kind);
        self.catalog()
            .values()
            .filter(|e| e.def.action_kinds.iter().any(|k| action_kind(k) == kind))
            .find_map(write_tool)
    }

    fn write_tool_named(&self, name: &str) -> Option<WriteTool<'_>> {
        self.catalog().get(name).and_then(write_tool)
    }

    fn unserved(&self, kind: &str) -> Option<ToolError> {
        let kind = action_kind(kind);
        let writes = || {
            self.plugins().iter().flat_map(|p| {
                p.manifest
                    .tools
                    .iter()
                    .filter(|t| t.capability_tier == CapabilityTier::Write)
                    .map(move |t| (p, t))
            })
        };
        let Some((plugin, def)) =
            writes().find(|(_, t)| t.action_kinds.iter().any(|k| action_kind(k) == kind))
        else {
            let kinds: Vec<String> =
                writes().flat_map(|(_, t)| t.action_kinds.iter().map(|k| action_kind(k))).collect();
            let meant = bardo_core::suggest::closest(&kind, kinds.iter().map(String::as_str))?;
            return Some(not_served(format!("no loaded plugin declares `{kind}`; did you mean `{meant}`?")));
        };
        let served_by = format!("`{}` of plugin `{}` serves it", def.name, plugin.name);
        if let Some(skipped) = self.skipped().iter().find(|s| s.tool == def.name) {
            if skipped.needs_wallet {
                return Some(ToolError::new(
                    ErrorCode::WalletNotConfigured,
                    format!(
                        "no wallet is configured, and `{kind}` is a write ({served_by}): export \
                         BARDO_PRIVATE_KEY (a hex key), or run `bardo init --profile {}` for an encrypted keystore",
                        self.profile().name()
                    ),
                ));
            }
            return Some(not_served(format!("{served_by} but was not loaded: {}", skipped.reason)));
        }
        let profile = self.profile().name();
        if self.profile().disables(&plugin.name, &def.name) {
            return Some(not_served(format!("{served_by} but [tools] disable turns it off in bardo.toml")));
        }
        let running = bardo_core::profile::profiles_running(def);
        let first = running.first()?;
        Some(not_served(format!(
            "{served_by} in profiles {}, not in `{profile}`: run with --profile {first} (or compose: --profile {profile},{first})",
            running.join(", ")
        )))
    }

    fn plan(&self, tool: &str, params_json: &str, control: &Arc<CallControl>) -> CallReport<WritePlan> {
        self.plan_with(tool, params_json, control)
    }

    fn verify(
        &self,
        tool: &str,
        params_json: &str,
        chain_id: u64,
        receipts: &[TransactionReceipt],
    ) -> CallReport<serde_json::Value> {
        Host::verify(self, tool, params_json, chain_id, receipts)
    }
}
