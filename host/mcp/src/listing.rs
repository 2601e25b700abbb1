//! What `tools/list` shows: the agent-facing tools, and with [`Exposure::Concrete`] the
//! profile's read tools; each with its JSON Schema, description and annotations. Write tools
//! are never listed: a client reaches them only through `preview_action`/`commit_action`.

use bardo_agent::Adapter;
use bardo_core::tool::CapabilityTier;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::Value;
use std::sync::Arc;

/// Which tools a client sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Exposure {
    /// The agent-facing tools only.
    #[default]
    Agent,
    /// The agent-facing tools and the profile's concrete read tools.
    Concrete,
}

/// How a listed tool is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// An agent-facing tool of the adapter.
    Agent,
    /// A read tool of the profile, called directly.
    Read,
}

/// The tools listed, and how each is served.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Listing {
    pub tools: Vec<Tool>,
    pub routes: std::collections::BTreeMap<String, Route>,
}

/// MCP hints from what each agent tool does (all are hints for the client's UI and policy; the
/// host enforces the real rules).
fn agent_annotations(name: &str) -> ToolAnnotations {
    let a = ToolAnnotations::new();
    match name {
        // Simulates and issues a permit: no on-chain effect, but host state (a permit) changes.
        "preview_action" => a.read_only(false).destructive(false).idempotent(false).open_world(true),
        "commit_action" => a.read_only(false).destructive(true).idempotent(false).open_world(true),
        "cancel_action" => a.read_only(false).destructive(false).idempotent(true).open_world(false),
        "query_state" => a.read_only(true).idempotent(true).open_world(true),
        "search_context" | "query_grimoire" => a.read_only(true).idempotent(true).open_world(false),
        "update_directive" => a.read_only(false).destructive(false).idempotent(true).open_world(false),
        "emergency_halt" => a.read_only(false).destructive(true).idempotent(true).open_world(false),
        _ => a,
    }
}

fn schema(value: &Value) -> Arc<JsonObject> {
    Arc::new(value.as_object().cloned().unwrap_or_else(|| {
        let mut o = JsonObject::new();
        o.insert("type".into(), Value::String("object".into()));
        o
    }))
}

/// The listing for `adapter`'s profile.
pub(crate) fn listing(adapter: &Adapter, exposure: Exposure) -> Listing {
    let mut tools = Vec::new();
    let mut routes = std::collections::BTreeMap::new();
    for t in adapter.tools() {
        tools.push(
            Tool::new(t.name, t.description, schema(&t.input_schema))
                .with_annotations(agent_annotations(t.name)),
        );
        routes.insert(t.name.to_owned(), Route::Agent);
    }
    if exposure == Exposure::Concrete {
        let host = adapter.host();
        for (name, entry) in host.catalog() {
            let def = &entry.def;
            if def.capability_tier != CapabilityTier::Read || host.is_stream(name) {
                continue;
            }
            if routes.contains_key(name) {
                // A plugin tool may not shadow an agent-facing one.
                tracing::warn!(tool = %name, plugin = %entry.plugin.name, "not exposed: the name is an agent tool's");
                continue;
            }
            let description =
                if def.prompt_snippet.is_empty() || def.description.contains(&def.prompt_snippet) {
                    def.description.clone()
                } else {
                    format!("{}\n\n{}", def.description, def.prompt_snippet)
                };
            let annotations = ToolAnnotations::new().read_only(true).idempotent(true).open_world(true);
            tools.push(
                Tool::new(name.clone(), description, schema(&def.input_schema)).with_annotations(annotations),
            );
            routes.insert(name.clone(), Route::Read);
        }
    }
    Listing { tools, routes }
}
