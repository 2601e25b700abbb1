//! Stream tools, plugin side: open a subscription's sources, decode logs that arrived, run a
//! poll tick. Each is one call in a fresh instance under the same limits as any other; the
//! subscription's state travels in and out as JSON. The tasks that run them are the host's.

use super::{Host, call, check_params};
use crate::bindings::bardo::plugin::types as wit;
use crate::caps::chain::{alloy_filter, wit_log};
use crate::caps::convert;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::tool::{CapabilityTier, Category};
use std::time::Duration;

/// Where a subscription's input comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// Logs matching `filter` on `chain_id` (its block range is the host's to set).
    Logs {
        /// The chain the logs come from.
        chain_id: u64,
        /// Addresses and topics; the host sets the block range.
        filter: Box<alloy::rpc::types::Filter>,
    },
    /// A tick every `interval`.
    Poll {
        /// Time between ticks.
        interval: Duration,
    },
}

/// One event a stream step produced.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamEvent {
    /// The event's kind, as the plugin named it.
    pub kind: String,
    /// Its payload, a JSON object.
    pub payload: serde_json::Value,
}

/// What one step returned.
#[derive(Debug, Clone)]
pub struct Step {
    /// The events to publish, in order.
    pub events: Vec<StreamEvent>,
    /// The subscription's state for the next step, JSON.
    pub state: String,
}

impl Host {
    /// The catalog entry and stream exports serving stream tool `tool`, params size checked.
    fn streamer(
        &self,
        tool: &str,
        params_json: &str,
    ) -> Result<(&super::CatalogEntry, &super::stream::GuestIndices), ToolError> {
        let entry = self.entry(tool, CapabilityTier::Read)?;
        check_params(entry, tool, params_json)?;
        if !self.is_stream(tool) {
            return Err(ToolError::new(
                ErrorCode::Denied,
                format!("`{tool}` is not a stream tool; call it with `bardo call`"),
            ));
        }
        let indices = entry.plugin.code()?.stream.as_ref().ok_or_else(|| {
            ToolError::new(ErrorCode::Internal, format!("plugin `{}` exports no `stream`", entry.plugin.name))
        })?;
        Ok((entry, indices))
    }

    /// Whether `tool` is a stream tool in this profile.
    pub fn is_stream(&self, tool: &str) -> bool {
        self.catalog
            .get(tool)
            .is_some_and(|e| e.plugin.exports_stream() && e.def.category == Category::Streaming)
    }

    /// Open stream `tool`: its sources and initial state.
    pub fn stream_open(&self, tool: &str, params_json: &str) -> call::CallReport<(Vec<Source>, String)> {
        let (entry, indices) = match self.streamer(tool, params_json) {
            Ok(found) => found,
            Err(e) => return call::CallReport::refused(e),
        };
        let plugin = &entry.plugin;
        self.run_entry(entry, tool, |store, instance| {
            let guest = indices.load(&mut *store, instance)?;
            let answer = guest.call_open(&mut *store, &entry.guest_name, params_json)?;
            Ok(answer.map_err(convert::tool_error).and_then(|(sources, state)| {
                if sources.is_empty() {
                    return Err(ToolError::new(
                        ErrorCode::Internal,
                        format!("plugin `{}` opened `{tool}` without a source", plugin.name),
                    ));
                }
                let sources = sources.into_iter().map(source).collect::<Result<Vec<_>, _>>()?;
                Ok((sources, state))
            }))
        })
    }

    /// Decode `logs` (of chain `chain_id`) for a subscription of `tool` in `state`.
    pub fn stream_logs(
        &self,
        tool: &str,
        params_json: &str,
        chain_id: u64,
        logs: &[alloy::rpc::types::Log],
        state: &str,
    ) -> call::CallReport<Step> {
        let (entry, indices) = match self.streamer(tool, params_json) {
            Ok(found) => found,
            Err(e) => return call::CallReport::refused(e),
        };
        let (plugin, limits) = (&entry.plugin, &self.limits);
        let logs: Vec<_> = logs.iter().map(|l| wit_log(chain_id, l)).collect();
        self.run_entry(entry, tool, |store, instance| {
            let guest = indices.load(&mut *store, instance)?;
            let answer = guest.call_on_logs(&mut *store, &entry.guest_name, params_json, &logs, state)?;
            Ok(answer.map_err(convert::tool_error).and_then(|s| step(s, limits, &plugin.name, tool)))
        })
    }

    /// A poll tick for a subscription of `tool` in `state`.
    pub fn stream_tick(&self, tool: &str, params_json: &str, state: &str) -> call::CallReport<Step> {
        let (entry, indices) = match self.streamer(tool, params_json) {
            Ok(found) => found,
            Err(e) => return call::CallReport::refused(e),
        };
        let (plugin, limits) = (&entry.plugin, &self.limits);
        self.run_entry(entry, tool, |store, instance| {
            let guest = indices.load(&mut *store, instance)?;
            let answer = guest.call_on_tick(&mut *store, &entry.guest_name, params_json, state)?;
            Ok(answer.map_err(convert::tool_error).and_then(|s| step(s, limits, &plugin.name, tool)))
        })
    }
}

/// The shortest poll interval a plugin may ask for.
const MIN_POLL: Duration = Duration::from_millis(100);

fn source(s: wit::Source) -> Result<Source, ToolError> {
    match s {
        wit::Source::Logs(f) => {
            let chain_id = f.chain_id;
            let filter = alloy_filter(&f).map_err(convert::tool_error)?;
            Ok(Source::Logs { chain_id, filter: Box::new(filter) })
        }
        wit::Source::Poll(ms) => {
            Ok(Source::Poll { interval: Duration::from_millis(u64::from(ms)).max(MIN_POLL) })
        }
    }
}

fn step(
    s: wit::StreamStep,
    limits: &crate::engine::Limits,
    plugin: &str,
    tool: &str,
) -> Result<Step, ToolError> {
    // One step's events and state together are held to the result limit of any call.
    let size =
        s.state_json.len() + s.events.iter().map(|e| e.kind.len() + e.payload_json.len()).sum::<usize>();
    if size > limits.result_max_bytes {
        return Err(ToolError::new(
            ErrorCode::LimitExceeded,
            format!(
                "plugin `{plugin}` stream `{tool}` produced {size} bytes in one step, over the {} byte limit",
                limits.result_max_bytes
            ),
        ));
    }
    let events = s
        .events
        .into_iter()
        .map(|e| {
            let payload = serde_json::from_str(&e.payload_json).map_err(|err| {
                ToolError::new(
                    ErrorCode::Internal,
                    format!(
                        "plugin `{plugin}` emitted a `{}` event from `{tool}` that is not JSON: {err}",
                        e.kind
                    ),
                )
            })?;
            Ok(StreamEvent { kind: e.kind, payload })
        })
        .collect::<Result<Vec<_>, ToolError>>()?;
    Ok(Step { events, state: s.state_json })
}
