//! `bardo:host/events`: progress, domain events and log lines from a running tool. Bounded per
//! call, so a chatty or hostile plugin cannot flood the host; what is dropped is counted.

use super::view::{CallCtx, CapsView};
use crate::bindings::bardo::host::events::{Host, Level};
use bardo_core::tool::ToolEvent;
use wasmtime::component::{HasData, Linker};

/// The interface this module serves.
pub(crate) const INTERFACE: &str = "bardo:host/events";

/// Largest event payload, bytes.
pub const MAX_PAYLOAD: usize = 64 << 10;
/// Log lines per call forwarded to the host log.
pub const MAX_LOG_LINES: u32 = 1_000;
/// Longest log line kept, bytes.
const MAX_LOG_LINE: usize = 4 << 10;

/// The events import as one call sees it.
pub struct EventsView<'a> {
    call: &'a mut CallCtx,
}

struct HasEvents;
impl HasData for HasEvents {
    type Data<'a> = EventsView<'a>;
}

pub(crate) fn add_to_linker<T: CapsView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    crate::bindings::bardo::host::events::add_to_linker::<T, HasEvents>(linker, |t| EventsView {
        call: t.caps().call,
    })
}

impl Host for EventsView<'_> {
    fn progress(&mut self, step: u32) {
        let elapsed_us = self.call.started.elapsed().as_micros() as u64;
        let kept = self.call.events.events.len();
        self.call.events.push(ToolEvent::Progress { step, elapsed_us });
        // The caller hears only the steps that were kept: a plugin looping on `progress` must
        // not flood it (an MCP client gets a notification per step).
        if self.call.events.events.len() > kept {
            if let Some(attempt) = &mut self.call.inline {
                attempt.progress.push((step, elapsed_us));
            } else if let Some((control, steps)) = &self.call.control {
                control.progress(steps, step, elapsed_us);
            }
        }
    }

    fn emit(&mut self, kind: String, payload_json: String) {
        let payload = (payload_json.len() <= MAX_PAYLOAD && kind.len() <= 128)
            .then(|| serde_json::from_str::<serde_json::Value>(&payload_json).ok())
            .flatten()
            .filter(serde_json::Value::is_object);
        match payload {
            Some(payload) => self.call.events.push(ToolEvent::Emit { kind, payload }),
            None => {
                self.call.events.dropped += 1;
                tracing::warn!(plugin = %self.call.plugin, tool = %self.call.tool, %kind,
                    "dropped an event whose payload is not a JSON object of at most {MAX_PAYLOAD} bytes");
            }
        }
    }

    fn log(&mut self, level: Level, message: String) {
        let events = &mut self.call.events;
        events.log_lines += 1;
        if events.log_lines > MAX_LOG_LINES {
            events.dropped += 1;
            return;
        }
        let mut message = message;
        if message.len() > MAX_LOG_LINE {
            let mut cut = MAX_LOG_LINE;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
        }
        let (plugin, tool) = (&*self.call.plugin, self.call.tool.as_str());
        match level {
            Level::Trace => tracing::trace!(target: "plugin", plugin, tool, "{message}"),
            Level::Debug => tracing::debug!(target: "plugin", plugin, tool, "{message}"),
            Level::Info => tracing::info!(target: "plugin", plugin, tool, "{message}"),
            Level::Warn => tracing::warn!(target: "plugin", plugin, tool, "{message}"),
            Level::Error => tracing::error!(target: "plugin", plugin, tool, "{message}"),
        }
    }
}
