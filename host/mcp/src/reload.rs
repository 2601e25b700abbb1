//! Hot reload under `bardo mcp`: the [`Live`](bardo_runtime::live::Live) watcher rebuilds the
//! profile's host when `bardo.toml` or `bardo.lock` changes; this task swaps it into the write
//! path and adapter and, when the listing changed, sends `notifications/tools/list_changed`.

#![allow(deprecated)] // LoggingLevel: see server.rs

use crate::server::Served;
use bardo_core::Runtime;
use rmcp::model::LoggingLevel;
use std::sync::Weak;
use std::time::Duration;

/// Follow `served`'s reloads every `every` until the server is dropped.
pub(crate) fn spawn(served: Weak<Served>, every: Duration, runtime: &Runtime) {
    let mut seen = served.upgrade().map_or(0, |s| s.live.reloads());
    runtime.spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let Some(served) = served.upgrade() else { return };
            let now = served.live.reloads();
            if now == seen {
                continue;
            }
            seen = now;
            let applied = {
                let served = served.clone();
                tokio::task::spawn_blocking(move || served.apply_reload()).await
            };
            match applied {
                Ok(Ok(changed)) => {
                    let tools = served.tool_names().len();
                    tracing::info!(changed, tools, "plugins reloaded");
                    if changed {
                        served.notify_tools_changed().await;
                        served
                            .log_all(LoggingLevel::Info, format!("plugins reloaded: {tools} tools listed"))
                            .await;
                    }
                }
                Ok(Err(e)) => {
                    let message =
                        format!("plugins reloaded but not applied, the previous ones keep serving: {e}");
                    tracing::error!("{message}");
                    served.log_all(LoggingLevel::Error, message).await;
                }
                Err(e) => tracing::error!("reload task failed: {e}"),
            }
        }
    });
}
