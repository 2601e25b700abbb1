//! Stream tools as MCP resources. Each stream tool of the profile is a resource template
//! `bardo://streams/{tool}{?params}`; `resources/subscribe` on a concrete URI starts the host's
//! subscription, every event it delivers sends `notifications/resources/updated`, and
//! `resources/read` returns the events buffered since the last read. Unsubscribing, or the
//! session ending, cancels the host's tasks as `stream_unsubscribe` does.

use bardo_agent::Adapter;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::fabric::Fabric;
use bardo_core::sync::lock;
use bardo_runtime::subscriptions::SubscriptionRegistry;
use percent_encoding::{NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use rmcp::model::ResourceTemplate;
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

/// The URI scheme and path of stream resources.
const PREFIX: &str = "bardo://streams/";
/// Events kept per subscribed URI between reads; older ones are dropped and counted.
pub(crate) const MAX_BUFFERED: usize = 1_000;

/// A stream resource: the tool and its params as JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StreamUri {
    pub tool: String,
    pub params: String,
}

impl StreamUri {
    /// Parse `bardo://streams/<tool>[?params=<percent-encoded JSON>]`.
    pub(crate) fn parse(uri: &str) -> Result<Self, ToolError> {
        let invalid = |why: &str| {
            ToolError::new(
                ErrorCode::InvalidParams,
                format!(
                    "`{uri}` is not a stream resource ({why}); the form is {PREFIX}<tool>?params=<percent-encoded JSON>"
                ),
            )
        };
        let rest = uri.strip_prefix(PREFIX).ok_or_else(|| invalid("wrong scheme or path"))?;
        let (tool, query) = rest.split_once('?').unwrap_or((rest, ""));
        if tool.is_empty() || !tool.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(invalid("no tool name"));
        }
        let mut params = "{}".to_owned();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("params", value)) => {
                    params = percent_decode_str(value)
                        .decode_utf8()
                        .map_err(|_| invalid("params are not UTF-8"))?
                        .into_owned();
                }
                _ => return Err(invalid("the only query parameter is `params`")),
            }
        }
        Ok(Self { tool: tool.to_owned(), params })
    }

    /// The URI of `tool` with `params` (JSON text).
    #[cfg(test)]
    pub(crate) fn format(tool: &str, params: &str) -> String {
        format!("{PREFIX}{tool}?params={}", utf8_percent_encode(params, NON_ALPHANUMERIC))
    }
}

/// The resource templates of `adapter`'s stream tools.
pub(crate) fn templates(adapter: &Adapter) -> Vec<ResourceTemplate> {
    let host = adapter.host();
    host.catalog()
        .iter()
        .filter(|(name, _)| host.is_stream(name))
        .map(|(name, e)| {
            let example = utf8_percent_encode("{\"chain_id\":1}", NON_ALPHANUMERIC);
            ResourceTemplate::new(format!("{PREFIX}{name}{{?params}}"), name.clone())
                .with_description(format!(
                    "{} Subscribe to `{PREFIX}{name}?params=<percent-encoded JSON params>` (e.g. params={example}); \
                     each event sends notifications/resources/updated and resources/read returns the events \
                     since the last read.",
                    e.def.description
                ))
                .with_mime_type("application/json")
        })
        .collect()
}

/// Events buffered for one subscribed URI.
#[derive(Default)]
struct Feed {
    subscription_id: String,
    events: VecDeque<Value>,
    dropped: u64,
}

/// One session's stream subscriptions.
pub(crate) struct Streams {
    registry: SubscriptionRegistry,
    feeds: Arc<Mutex<BTreeMap<String, Feed>>>,
    pump: tokio::task::JoinHandle<()>,
}

impl Streams {
    /// Subscriptions on `adapter`'s host, their updates sent to `peer`.
    pub(crate) fn new(adapter: &Adapter, peer: Peer<RoleServer>) -> Result<Self, ToolError> {
        let host = adapter.host();
        let fabric = Arc::new(Fabric::new());
        let registry = SubscriptionRegistry::new(host.clone(), host.services().clone(), fabric.clone())?;
        let feeds: Arc<Mutex<BTreeMap<String, Feed>>> = Arc::default();
        let mut events = fabric.subscribe(None);
        let fed = feeds.clone();
        let pump = host.services().runtime().spawn(async move {
            while let Some(next) = events.recv().await {
                let Ok(envelope) = next else { continue };
                let Some(id) = envelope.event.subscription_id() else { continue };
                let uri = {
                    let mut feeds = lock(&fed);
                    let Some((uri, feed)) = feeds.iter_mut().find(|(_, f)| f.subscription_id == id) else {
                        continue;
                    };
                    if feed.events.len() == MAX_BUFFERED {
                        feed.events.pop_front();
                        feed.dropped += 1;
                    }
                    feed.events.push_back(serde_json::to_value(&envelope).unwrap_or(Value::Null));
                    uri.clone()
                };
                let updated = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
                if peer.notify_resource_updated(updated).await.is_err() {
                    break; // the session is gone; Drop cancels the subscriptions
                }
            }
        });
        Ok(Self { registry, feeds, pump })
    }

    /// Start the host's subscription for `uri` (a second subscribe of the same URI is a no-op).
    pub(crate) fn subscribe(&self, uri: &str) -> Result<(), ToolError> {
        let parsed = StreamUri::parse(uri)?;
        if lock(&self.feeds).contains_key(uri) {
            return Ok(());
        }
        // Registered before the first event can arrive: the pump looks the id up.
        let info = self.registry.subscribe(&parsed.tool, &parsed.params)?;
        lock(&self.feeds)
            .insert(uri.to_owned(), Feed { subscription_id: info.subscription_id, ..Feed::default() });
        Ok(())
    }

    /// Cancel the host's subscription for `uri`; false if there was none.
    pub(crate) fn unsubscribe(&self, uri: &str) -> bool {
        let feed = lock(&self.feeds).remove(uri);
        feed.is_some_and(|f| self.registry.unsubscribe(&f.subscription_id))
    }

    /// The events buffered for `uri` since the last read, oldest first.
    pub(crate) fn read(&self, uri: &str) -> Result<Value, ToolError> {
        let mut feeds = lock(&self.feeds);
        let feed = feeds.get_mut(uri).ok_or_else(|| {
            ToolError::new(
                ErrorCode::NotFound,
                format!("not subscribed to `{uri}`; resources/subscribe first, then read after notifications/resources/updated"),
            )
        })?;
        let events: Vec<Value> = feed.events.drain(..).collect();
        let dropped = std::mem::take(&mut feed.dropped);
        Ok(json!({"subscription_id": feed.subscription_id, "events": events, "dropped": dropped}))
    }
}

impl Drop for Streams {
    fn drop(&mut self) {
        // The session ended: stop the host's tasks for it, as `stream_unsubscribe` would.
        self.registry.unsubscribe_all();
        self.pump.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_and_refuse_other_shapes() {
        let params = r#"{"chain_id":31337,"pool":"0xab"}"#;
        let uri = StreamUri::format("stream_pool_events", params);
        assert!(uri.starts_with("bardo://streams/stream_pool_events?params=%7B"));
        assert_eq!(
            StreamUri::parse(&uri).expect("parse"),
            StreamUri { tool: "stream_pool_events".into(), params: params.into() }
        );
        assert_eq!(StreamUri::parse("bardo://streams/stream_x").expect("no params").params, "{}");
        for bad in
            ["file:///etc/passwd", "bardo://streams/", "bardo://streams/x?other=1", "bardo://streams/../x"]
        {
            let e = StreamUri::parse(bad).expect_err(bad);
            assert_eq!(e.code, ErrorCode::InvalidParams, "{bad}");
        }
    }
}
