//! The agent card (A2A 1.0): who this agent is, where its JSON-RPC endpoint is, how to
//! authenticate, and one skill per action kind and per group of read tools of the profile.

use bardo_agent::Adapter;
use bardo_core::tool::{CapabilityTier, ToolDef};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The A2A protocol version served.
pub const PROTOCOL_VERSION: &str = "1.0";

/// A placeholder for each required param of `def`, by its JSON type: an example an agent
/// can fill in.
fn example_params(def: &ToolDef) -> Value {
    let schema = &def.input_schema;
    let mut params = serde_json::Map::new();
    for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        let prop = &schema["properties"][name];
        let example = match prop["type"].as_str() {
            Some("integer") | Some("number") => json!(0),
            Some("boolean") => json!(false),
            Some("object") => json!({}),
            Some("array") => json!([]),
            _ => json!(format!("<{name}>")),
        };
        params.insert(name.to_owned(), example);
    }
    Value::Object(params)
}

fn modes() -> Value {
    json!(["application/json"])
}

/// The card for `adapter`'s profile `profile`, its endpoint at `url`; `bearer`: requests need a
/// bearer token.
pub(crate) fn card(adapter: &Adapter, profile: &str, url: &str, bearer: bool) -> Value {
    let host = adapter.host();
    let mut skills = Vec::new();
    let mut reads: BTreeMap<String, Vec<&ToolDef>> = BTreeMap::new();
    for entry in host.catalog().values() {
        let def = &entry.def;
        let category = serde_json::to_value(def.category).ok().and_then(|v| v.as_str().map(String::from));
        let category = category.unwrap_or_else(|| "other".into());
        match def.capability_tier {
            CapabilityTier::Write => {
                for kind in &def.action_kinds {
                    let example = json!({"action": kind, "params": example_params(def)});
                    skills.push(json!({
                        "id": format!("action-{kind}"),
                        "name": format!("{kind} (preview, confirm, commit)"),
                        "description": format!(
                            "{} Planned, checked by the safety hooks and simulated first; the task then waits \
                             (input-required) with the permit until you reply {{\"confirm\": true}} or \
                             {{\"confirm\": false}}. Nothing is sent before.",
                            def.description
                        ),
                        "tags": ["write", category, def.name],
                        "examples": [example.to_string()],
                        "inputModes": modes(), "outputModes": modes(),
                    }));
                }
            }
            _ => reads.entry(category).or_default().push(def),
        }
    }
    for (category, defs) in reads {
        let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
        let first = defs[0];
        let example =
            json!({"tool": "query_state", "args": {"kind": first.name, "params": example_params(first)}});
        skills.push(json!({
            "id": format!("read-{category}"),
            "name": format!("{category} reads"),
            "description": format!("Read tools ({}): answered at once, the result as an artifact.", names.join(", ")),
            "tags": ["read", category],
            "examples": [example.to_string()],
            "inputModes": modes(), "outputModes": modes(),
        }));
    }
    // The agent tools this door offers (a door without a token: no directives, no halt).
    let agent_tools: Vec<&str> = adapter
        .tools()
        .iter()
        .map(|t| t.name)
        .filter(|n| !n.ends_with("_action") && *n != "query_state")
        .collect();
    skills.push(json!({
        "id": "agent-tools",
        "name": "context, memory and directives",
        "description": format!("{}, by name with their args.", agent_tools.join(", ")),
        "tags": ["agent"],
        "examples": [json!({"tool": "search_context", "args": {"query": "swap"}}).to_string()],
        "inputModes": modes(), "outputModes": modes(),
    }));
    let mut card = json!({
        "name": format!("Bardo Tools ({profile})"),
        "description": "DeFi tools for agents: chain reads, and writes that are previewed, simulated and \
                        permitted before the caller confirms them. Send a message with one data part: \
                        {\"tool\": NAME, \"args\": {...}} for an agent tool, {\"action\": KIND, \"params\": {...}} for a \
                        write, or {\"confirm\": true|false} on a task that waits for input.",
        "version": env!("CARGO_PKG_VERSION"),
        "supportedInterfaces": [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": PROTOCOL_VERSION}],
        "provider": {"organization": "Bardo Tools", "url": url},
        "capabilities": {"streaming": true, "pushNotifications": false, "extendedAgentCard": false},
        "defaultInputModes": modes(),
        "defaultOutputModes": modes(),
        "skills": skills,
    });
    if bearer {
        card["securitySchemes"] = json!({"bearer": {"httpAuthSecurityScheme": {
            "scheme": "Bearer",
            "description": "A token from the operator: [mcp] tokens_env or token_file, or the host's own (.bardo/http.token)."}}});
        card["securityRequirements"] = json!([{"schemes": {"bearer": {"list": []}}}]);
    }
    card
}
