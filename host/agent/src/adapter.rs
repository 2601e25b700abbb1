//! The eight agent-facing tools. An agent never calls plugin tools directly: it previews and
//! commits actions (routed by action kind to the write tools of the profile), queries state
//! (routed to read tools), searches the operator's context, and keeps a grimoire.

pub mod context;
pub mod filter;
pub mod grimoire;

use crate::speculation::Speculator;
use bardo_core::control::CallControl;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::tool::{CapabilityTier, Category, Phase};
use bardo_runtime::Host;
use bardo_runtime::plugin::CallReport;
use bardo_safety::{WritePath, WriteResult};
use context::Context;
use grimoire::Grimoire;
use serde::Serialize;
use serde_json::{Value, json};
use std::sync::Arc;

/// The most an agent is shown from one tool call.
pub const MAX_RESULT_BYTES: usize = 64 * 1024;

/// An agent-facing tool: name, what it does, and its params' JSON Schema.
#[derive(Debug, Clone, Serialize)]
pub struct AgentTool {
    /// Its name, as the agent calls it.
    pub name: &'static str,
    /// What it does, for the agent.
    pub description: &'static str,
    /// JSON Schema of its arguments.
    pub input_schema: Value,
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// The adapter over one write path and the host of its generation: reads run on the host the
/// write path plans with when the adapter is made (a reload makes a new adapter).
pub struct Adapter {
    path: Arc<WritePath>,
    host: Arc<Host>,
    grimoire: Grimoire,
    /// The agent's memory, when the host keeps one: the write path records every write in it,
    /// and `query_grimoire` searches it by words and meaning.
    memory: Option<bardo_memory::Memory>,
    context: Context,
    /// What no answer or error may show (the services do not change under an adapter).
    redact: filter::Redact,
    /// Reads go through it when set (`[agent] speculation`).
    speculator: Option<Arc<Speculator>>,
    /// Only the tools that change nothing (a door without a token: `--no-auth`).
    reads_only: bool,
}

/// The agent tools that change something (the chain, the host's permits, directives or phase):
/// an unauthenticated door never offers them.
const CHANGING: [&str; 5] =
    ["preview_action", "commit_action", "cancel_action", "update_directive", "emergency_halt"];

/// The grimoire episode of an executed write: the result, a link to its action and outcome
/// records, and the `outcome-divergence` tag when what executed differs from the declaration
/// (the specification's Dream replay and heuristic revision start from those).
pub fn episode(result: &WriteResult, value: &Value) -> Value {
    let tags: &[&str] = if result.outcome_mismatch.is_empty() { &[] } else { &[DIVERGENCE_TAG] };
    json!({"write": value, "tags": tags, "records": {"permit_id": result.permit_id,
        "show": format!("bardo records --permit {}", result.permit_id)}})
}

/// The tag of an episode whose outcome diverged from its expectation.
pub const DIVERGENCE_TAG: &str = "outcome-divergence";

fn invalid(message: impl Into<String>) -> ToolError {
    ToolError::new(ErrorCode::InvalidParams, message)
}

fn field<'a>(args: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    args[name]
        .as_str()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid(format!("`{name}` (a string) is required")))
}

fn internal(e: impl std::fmt::Display) -> ToolError {
    ToolError::new(ErrorCode::Internal, e.to_string())
}

impl Adapter {
    /// An adapter over `path`'s current generation; `context_files` are the operator's
    /// PLAYBOOK.md / STRATEGY.md. Refused when the write path plans with no runtime host.
    pub fn new(
        path: Arc<WritePath>,
        grimoire: Grimoire,
        context_files: &[&std::path::Path],
    ) -> Result<Self, ToolError> {
        let generation = path.generation();
        let host = generation.host().ok_or_else(|| {
            internal("the write path plans with no runtime host; the agent's reads need one")
        })?;
        let tools: Vec<_> =
            host.catalog().values().map(|e| (e.def.name.clone(), e.def.description.clone())).collect();
        let context = Context::build(context_files, tools);
        let evm = &generation.services().evm;
        let redact = filter::Redact {
            secrets: evm.secret().into_iter().cloned().collect(),
            endpoints: evm.chains.endpoints(),
        };
        let memory = generation.services().memory.clone();
        Ok(Self { path, host, grimoire, memory, context, redact, speculator: None, reads_only: false })
    }

    /// Read calls go through `speculator`: learned, and the likely next ones prefetched.
    pub fn with_speculation(mut self, speculator: Arc<Speculator>) -> Self {
        self.speculator = Some(speculator);
        self
    }

    /// The speculation engine, if reads go through one.
    pub fn speculator(&self) -> Option<&Arc<Speculator>> {
        self.speculator.as_ref()
    }

    /// Offer only the tools that change nothing: no preview/commit/cancel, no directive change,
    /// no halt (for a door anyone on the machine can reach).
    pub fn reads_only(mut self) -> Self {
        self.reads_only = true;
        self
    }

    /// The profile's write tools (by name): what only an authenticated door may plan.
    pub fn write_tools(&self) -> Vec<String> {
        let catalog = self.host.catalog();
        catalog
            .values()
            .filter(|e| e.def.capability_tier == CapabilityTier::Write)
            .map(|e| e.def.name.clone())
            .collect()
    }

    fn writes(&self) -> bool {
        self.host.catalog().values().any(|e| e.def.capability_tier == CapabilityTier::Write)
    }

    /// The tools this profile offers: without write tools there is no preview/commit/cancel;
    /// [`Self::reads_only`] leaves only the reads.
    pub fn tools(&self) -> Vec<AgentTool> {
        let mut tools = self.all_tools();
        if self.reads_only {
            tools.retain(|t| !CHANGING.contains(&t.name));
        }
        tools
    }

    fn all_tools(&self) -> Vec<AgentTool> {
        let mut tools = Vec::new();
        if self.writes() {
            tools.push(AgentTool {
                name: "preview_action",
                description: "Plan an on-chain action (swap, add-liquidity, remove-liquidity, collect-fees, ...), run \
                              the safety checks and a simulation, and get a permit to commit within its TTL. Nothing \
                              is sent.",
                input_schema: object(
                    json!({"kind": {"type": "string", "description": "Action kind, e.g. `swap`."},
                           "params": {"type": "object", "description": "Params of the write tool for that kind."}}),
                    &["kind", "params"],
                ),
            });
            tools.push(AgentTool {
                name: "commit_action",
                description: "Execute a permit once: re-simulate, sign, send, wait for the receipt, verify the outcome.",
                input_schema: object(json!({"permit_id": {"type": "string"}}), &["permit_id"]),
            });
            tools.push(AgentTool {
                name: "cancel_action",
                description: "Cancel an open permit.",
                input_schema: object(json!({"permit_id": {"type": "string"}}), &["permit_id"]),
            });
        }
        tools.extend([
            AgentTool {
                name: "query_state",
                description: "Read chain state through a read tool: `kind` is the tool's name or its \
                              `<action>_<subject>` part (e.g. `get_pool_info`).",
                input_schema: object(
                    json!({"kind": {"type": "string"}, "params": {"type": "object"}}),
                    &["kind", "params"],
                ),
            },
            AgentTool {
                name: "search_context",
                description: "Search the operator's playbook, strategy and the tool catalog; ranked by relevance.",
                input_schema: object(json!({"query": {"type": "string"}}), &["query"]),
            },
            AgentTool {
                name: "query_grimoire",
                description: "Find past episodes (executed and blocked writes, and what agents stored): with memory on, \
                              by words and by meaning, best first; otherwise those mentioning every word of the query.",
                input_schema: object(json!({"query": {"type": "string"}}), &["query"]),
            },
            AgentTool {
                name: "update_directive",
                description: "Change standing directives (a JSON object; null removes a key). `phase` (thriving, \
                              cautious, defensive, survival) gates which actions are allowed; it can only be \
                              lowered (towards survival): only the operator raises it.",
                input_schema: object(json!({"delta": {"type": "object"}}), &["delta"]),
            },
            AgentTool {
                name: "emergency_halt",
                description: "Stop all writes now: terminal phase, every open permit revoked, until an operator \
                              resumes.",
                input_schema: object(json!({"reason": {"type": "string"}}), &["reason"]),
            },
        ]);
        tools
    }

    /// Call agent tool `name` with `args`; the answer, or the error, passes the result filter.
    pub fn call(&self, name: &str, args: &Value) -> Result<Value, ToolError> {
        self.call_with(name, args, &Arc::new(CallControl::new()))
    }

    /// [`Self::call`] whose plugin call (query_state's read, preview_action's plan) reports
    /// progress to, and can be cancelled through, `control`.
    pub fn call_with(
        &self,
        name: &str,
        args: &Value,
        control: &Arc<CallControl>,
    ) -> Result<Value, ToolError> {
        self.screen(self.dispatch(name, args, control))
    }

    /// Call the profile's read tool `tool` directly (an MCP client's `--expose concrete`);
    /// the answer, or the error, passes the result filter like every agent tool's.
    pub fn call_read(
        &self,
        tool: &str,
        args: &Value,
        control: &Arc<CallControl>,
    ) -> Result<Value, ToolError> {
        self.screen(self.read(tool, args, control))
    }

    /// [`Self::call_read`] on a thread that must not block (see
    /// [`Host::try_call_inline`]): `None` when the attempt gave up — run
    /// [`Self::call_read`] on a thread that may wait.
    pub fn try_call_read_inline(
        &self,
        tool: &str,
        args: &Value,
        control: &Arc<CallControl>,
    ) -> Option<Result<Value, ToolError>> {
        // Every read goes through the speculation engine when there is one (it learns from all).
        if self.speculator.is_some() {
            return None;
        }
        let report = self.host.try_call_inline(tool, &args.to_string(), control)?;
        Some(self.screen(self.answered(tool, report)))
    }

    /// [`Self::call_with`] on a thread that must not block: only `query_state` is tried there
    /// (the other agent tools wait on the chain, the disk or the safety chain); `None` for them
    /// and when the attempt gave up — run [`Self::call_with`] on a thread that may wait.
    pub fn try_call_inline(
        &self,
        name: &str,
        args: &Value,
        control: &Arc<CallControl>,
    ) -> Option<Result<Value, ToolError>> {
        if name != "query_state" || self.speculator.is_some() || !self.tools().iter().any(|t| t.name == name)
        {
            return None;
        }
        let tool = match field(args, "kind").and_then(|kind| self.read_tool_for(kind)) {
            Ok(tool) => tool,
            Err(e) => return Some(self.screen(Err(e))),
        };
        let params = args.get("params").unwrap_or(&Value::Null).to_string();
        let report = self.host.try_call_inline(&tool, &params, control)?;
        Some(self.screen(self.answered(&tool, report)))
    }

    /// `answer` as an agent may see it: chain strings neutralized, secrets and node URLs
    /// redacted, at most [`MAX_RESULT_BYTES`] (stream events an MCP client reads).
    pub fn screen(&self, answer: Result<Value, ToolError>) -> Result<Value, ToolError> {
        answer
            .and_then(|value| filter::filter(value, &self.redact, MAX_RESULT_BYTES))
            .map_err(|e| self.screen_error(e))
    }

    /// `e` as an agent may see it (see [`Self::screen`]).
    pub fn screen_error(&self, e: ToolError) -> ToolError {
        filter::error(e, &self.redact)
    }

    /// The host the adapter reads with (its write path's generation when it was made).
    pub fn host(&self) -> Arc<Host> {
        self.host.clone()
    }

    /// The write path under the adapter.
    pub fn write_path(&self) -> &Arc<WritePath> {
        &self.path
    }

    fn dispatch(&self, name: &str, args: &Value, control: &Arc<CallControl>) -> Result<Value, ToolError> {
        if !self.tools().iter().any(|t| t.name == name) {
            return Err(ToolError::new(
                ErrorCode::NotFound,
                format!("no agent tool `{name}` in this profile; list them with `tools`"),
            ));
        }
        match name {
            "preview_action" => {
                let params = args
                    .get("params")
                    .filter(|p| p.is_object())
                    .ok_or_else(|| invalid("`params` must be an object"))?;
                let p = self.path.preview_with(field(args, "kind")?, params, control)?;
                Ok(json!({"permit_id": p.permit_id, "tool": p.tool, "expected_outcome": p.expected_outcome,
                          "calls": p.plan.calls.iter().map(|c| &c.description).collect::<Vec<_>>(),
                          "risk_tier": p.risk_tier, "expires_in_s": p.ttl.as_secs(),
                          "confirmation": p.confirmation}))
            }
            "commit_action" => {
                let result = self.path.commit_with(field(args, "permit_id")?, control)?;
                let value = serde_json::to_value(&result).map_err(internal)?;
                // With memory on, the write path itself recorded the episode.
                if self.memory.is_none() {
                    self.grimoire.record(&result.tool, &episode(&result, &value)).map_err(internal)?;
                }
                Ok(value)
            }
            "cancel_action" => {
                let id = field(args, "permit_id")?;
                self.path.cancel(id)?;
                Ok(json!({"cancelled": id}))
            }
            "query_state" => {
                self.query_state(field(args, "kind")?, args.get("params").unwrap_or(&Value::Null), control)
            }
            "search_context" => Ok(json!(self.context.search(field(args, "query")?, 5))),
            "query_grimoire" => {
                let query = field(args, "query")?;
                let found = match &self.memory {
                    Some(memory) => json!(memory.search(query, 20).map_err(internal)?),
                    None => json!(self.grimoire.query(query, 20).map_err(internal)?),
                };
                Ok(filter::untrusted(found))
            }
            "update_directive" => {
                let delta = args["delta"].as_object().ok_or_else(|| invalid("`delta` must be an object"))?;
                if let Some(phase) = delta.get("phase") {
                    let phase: Phase = serde_json::from_value(phase.clone()).map_err(|_| {
                        invalid("`phase` must be thriving, cautious, defensive or survival (halt with emergency_halt)")
                    })?;
                    if phase == Phase::Terminal {
                        return Err(ToolError::new(
                            ErrorCode::Denied,
                            "terminal is entered by emergency_halt, and left only by an operator's `bardo resume`",
                        ));
                    }
                    // Lower only: raising the phase is the operator's, so a directive cannot undo it.
                    self.path.lower_phase(phase)?;
                }
                Ok(Value::Object(self.grimoire.update_directives(delta).map_err(internal)?))
            }
            "emergency_halt" => {
                let revoked = self.path.halt(field(args, "reason")?)?;
                Ok(json!({"phase": "terminal", "revoked_permits": revoked}))
            }
            _ => Err(ToolError::new(ErrorCode::NotFound, format!("no agent tool `{name}`"))),
        }
    }

    fn query_state(
        &self,
        kind: &str,
        params: &Value,
        control: &Arc<CallControl>,
    ) -> Result<Value, ToolError> {
        self.read(&self.read_tool_for(kind)?, params, control)
    }

    /// The read tool `query_state` runs for `kind`: a full tool name or the part after the
    /// plugin's prefix, when one tool matches.
    fn read_tool_for(&self, kind: &str) -> Result<String, ToolError> {
        let host = &self.host;
        let matches: Vec<&String> = host
            .catalog()
            .iter()
            .filter(|(name, e)| {
                e.def.capability_tier == CapabilityTier::Read
                    && (name.as_str() == kind || name.split_once('_').is_some_and(|(_, rest)| rest == kind))
            })
            .map(|(name, _)| name)
            .collect();
        match matches.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(ToolError::new(
                ErrorCode::NotFound,
                format!("no read tool for `{kind}`; see search_context"),
            )),
            many => {
                let names: Vec<&str> = many.iter().map(|s| s.as_str()).collect();
                Err(invalid(format!("`{kind}` matches {}; use the full tool name", names.join(", "))))
            }
        }
    }

    fn read(&self, tool: &str, params: &Value, control: &Arc<CallControl>) -> Result<Value, ToolError> {
        let host = &self.host;
        // Memory's tools change the agent's memory: never through a door without a token, and
        // never prefetched (a speculative `memory_store_episode` would store an episode).
        let memory = host.catalog().get(tool).is_some_and(|e| e.def.category == Category::Memory);
        if memory && self.reads_only {
            return Err(ToolError::new(
                ErrorCode::Denied,
                format!("`{tool}` reads and changes the agent's memory: this door has no token (--no-auth)"),
            ));
        }
        let report = match (&self.speculator, params.as_object()) {
            (Some(s), Some(params)) if !memory => s.call(host, tool, params, control),
            _ => host.call_with(tool, &params.to_string(), control),
        };
        self.answered(tool, report)
    }

    /// A read's answer, its call published on the write path's fabric (for `bardo tui`).
    fn answered(&self, tool: &str, report: CallReport) -> Result<Value, ToolError> {
        let def = self.host.catalog().get(tool).map(|e| &e.def);
        self.path.publish_read(tool, def, &report);
        let memory = def.is_some_and(|d| d.category == bardo_core::tool::Category::Memory);
        // Memory is text agents and plugins wrote, every field of it.
        answer(report.result).map(|v| if memory { filter::untrusted(v) } else { v })
    }
}

/// A read tool's JSON answer as a value.
fn answer(result: Result<String, ToolError>) -> Result<Value, ToolError> {
    serde_json::from_str(&result?).map_err(internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_episode_of_a_write_that_diverged_is_tagged_for_replay_and_links_its_records() {
        let result = WriteResult {
            permit_id: "permit-1".into(),
            tool: "uniswap_execute_swap".into(),
            schema_version: 1,
            expected: json!({}),
            actual: json!({}),
            ground_truth: "receipt",
            tx_hashes: vec![],
            gas_used: 0,
            changes: None,
            outcome_mismatch: vec!["WETH: declared +1, executed +0.9".into()],
            unrecorded: vec![],
            bridge: vec![],
        };
        let value = serde_json::to_value(&result).expect("json");
        let episode = episode(&result, &value);
        assert_eq!(episode["tags"], json!([DIVERGENCE_TAG]));
        assert_eq!(episode["records"]["permit_id"], json!("permit-1"));
        assert_eq!(episode["records"]["show"], json!("bardo records --permit permit-1"));
        assert_eq!(episode["write"], value);
        let matched = WriteResult { outcome_mismatch: vec![], ..result };
        assert_eq!(super::episode(&matched, &value)["tags"], json!([]), "a write that matched is not tagged");
    }
}
