//! The fleet's feeds: every host's Event Fabric in one stream, `BARDO_<cluster>_EVENTS`, and
//! every host's memory episodes in another, `BARDO_<cluster>_MEMORY`; each host on its own
//! subject (`bardo.<cluster>.events.<host>`, `….memory.<host>`). The stream's sequence numbers
//! are the fleet's: a subscriber resumes from one, and a range the stream no longer holds (or
//! skipped) is reported as missed, never dropped silently.

use crate::{Cluster, ClusterError};
use async_nats::jetstream::{self, consumer, stream};
use futures_util::StreamExt;
use std::time::Duration;

/// One event as the fleet sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetMessage {
    /// Its place in the fleet's stream (from 1, contiguous).
    pub seq: u64,
    /// The host that published it.
    pub host: String,
    /// What the host published.
    pub payload: Vec<u8>,
}

/// Fleet events a subscriber did not get: `from..=to`, stream sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("fleet events {from}..={to} were missed (the stream no longer holds them)")]
pub struct StreamGap {
    /// The first missed sequence.
    pub from: u64,
    /// The last missed sequence (inclusive).
    pub to: u64,
}

/// One of the fleet's feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed {
    /// Every host's Event Fabric: the newest million events kept.
    Events,
    /// Every host's memory episodes: all kept (a fleet's memory is forgotten by its hosts,
    /// episode by episode, not by the stream).
    Memory,
}

impl Feed {
    fn token(self) -> &'static str {
        match self {
            Self::Events => "events",
            Self::Memory => "memory",
        }
    }
}

/// A feed's stream configuration: a subject per host.
pub(crate) fn stream_config(feed: Feed, name: &str, prefix: &str, replicas: usize) -> stream::Config {
    let token = feed.token();
    stream::Config {
        name: format!("BARDO_{name}_{}", token.to_uppercase()),
        subjects: vec![format!("{prefix}.{token}.>")],
        max_messages: if feed == Feed::Events { 1_000_000 } else { -1 },
        discard: stream::DiscardPolicy::Old,
        num_replicas: replicas,
        storage: stream::StorageType::File,
        // A batch retried after a lost ack is stored once (message ids, two minutes).
        duplicate_window: Duration::from_secs(120),
        ..Default::default()
    }
}

impl Cluster {
    fn subject(&self, feed: Feed, host: &str) -> Result<String, ClusterError> {
        if !crate::is_token(host) {
            return Err(ClusterError::Config(format!(
                "host `{host}`: use letters, digits, `_` and `-` (it names the host's event subject)"
            )));
        }
        Ok(format!("{}.{}.{host}", self.inner.prefix, feed.token()))
    }

    fn stream(&self, feed: Feed) -> Result<stream::Stream, ClusterError> {
        let opened = match feed {
            Feed::Events => &self.inner.events,
            Feed::Memory => &self.inner.memory,
        };
        opened.clone().map_err(|e| ClusterError::Unavailable {
            servers: self.inner.servers.clone(),
            reason: format!("{e} (when this host connected; it is opened again at its next start)"),
        })
    }

    /// [`Self::publish_to`] the events feed.
    pub fn publish_events(
        &self,
        host: &str,
        batch: Vec<(String, Vec<u8>)>,
    ) -> Result<Vec<u64>, ClusterError> {
        self.publish_to(Feed::Events, host, batch)
    }

    /// [`Self::bounds`] of the events feed.
    pub fn events_bounds(&self) -> Result<(u64, u64), ClusterError> {
        self.bounds(Feed::Events)
    }

    /// [`Self::subscribe`] to the events feed.
    pub fn subscribe_events(&self, from: Option<u64>) -> Result<EventFeed, ClusterError> {
        self.subscribe(Feed::Events, from)
    }

    /// Publish host `host`'s messages `(message id, payload)` on `feed` in order; returns their
    /// fleet sequences. Every message is sent before the first acknowledgement is awaited (a batch
    /// costs one round trip, not one per event); a message id already stored within two minutes
    /// is not stored again, so retrying a batch whose answer was lost never duplicates.
    pub fn publish_to(
        &self,
        feed: Feed,
        host: &str,
        batch: Vec<(String, Vec<u8>)>,
    ) -> Result<Vec<u64>, ClusterError> {
        let subject = self.subject(feed, host)?;
        let context = self.inner.context.clone();
        self.run(async move {
            let mut acks = Vec::with_capacity(batch.len());
            for (id, payload) in batch {
                let message =
                    jetstream::message::PublishMessage::build().payload(payload.into()).message_id(id);
                acks.push(context.send_publish(subject.clone(), message).await.map_err(|e| e.to_string())?);
            }
            let mut seqs = Vec::with_capacity(acks.len());
            for ack in acks {
                seqs.push(ack.await.map_err(|e| e.to_string())?.sequence);
            }
            Ok(seqs)
        })
    }

    /// The first and last sequence `feed`'s stream holds (`(last + 1, last)` when it holds none).
    pub fn bounds(&self, feed: Feed) -> Result<(u64, u64), ClusterError> {
        let mut events = self.stream(feed)?;
        self.run(async move {
            let state = &events.info().await.map_err(|e| e.to_string())?.state;
            Ok(if state.messages == 0 {
                (state.last_sequence + 1, state.last_sequence)
            } else {
                (state.first_sequence, state.last_sequence)
            })
        })
    }

    /// Follow `feed` from sequence `from` on (None: only what is published from now). If the
    /// stream no longer holds `from`, the missed range comes first.
    pub fn subscribe(&self, feed: Feed, from: Option<u64>) -> Result<EventFeed, ClusterError> {
        let (policy, gap, next) = match from {
            None => (consumer::DeliverPolicy::New, None, None),
            Some(from) => {
                let from = from.max(1);
                let (first, _) = self.bounds(feed)?;
                let gap = (from < first).then(|| StreamGap { from, to: first - 1 });
                let start = from.max(first);
                (consumer::DeliverPolicy::ByStartSequence { start_sequence: start }, gap, Some(start))
            }
        };
        let events = self.stream(feed)?;
        let strip = format!("{}.{}.", self.inner.prefix, feed.token());
        let messages = self.run(async move {
            let consumer = events
                .create_consumer(consumer::pull::OrderedConfig {
                    deliver_policy: policy,
                    ..Default::default()
                })
                .await
                .map_err(|e| e.to_string())?;
            consumer.messages().await.map_err(|e| e.to_string())
        })?;
        // A pump on the cluster's runtime feeds a channel the caller waits on with a timeout.
        let (tx, rx) = tokio::sync::mpsc::channel(1024);
        let pump = self.inner.bridge.spawn(async move {
            let mut messages = messages;
            while let Some(next) = messages.next().await {
                let item = next.map_err(|e| e.to_string()).and_then(|m| {
                    let seq = m.info().map_err(|e| e.to_string())?.stream_sequence;
                    let host =
                        m.subject.as_str().strip_prefix(&strip).unwrap_or(m.subject.as_str()).to_owned();
                    Ok(FleetMessage { seq, host, payload: m.payload.to_vec() })
                });
                let failed = item.is_err();
                if tx.send(item).await.is_err() || failed {
                    break;
                }
            }
        });
        Ok(EventFeed { rx, pump, next, gap, held: None, cluster: self.clone() })
    }
}

/// A subscriber's view of the fleet's events; dropping it ends the subscription.
pub struct EventFeed {
    rx: tokio::sync::mpsc::Receiver<Result<FleetMessage, String>>,
    pump: Option<tokio::task::JoinHandle<()>>,
    /// The sequence expected next (None until the first, when following only new events).
    next: Option<u64>,
    gap: Option<StreamGap>,
    /// An event received after a gap, handed out on the call after the gap.
    held: Option<FleetMessage>,
    cluster: Cluster,
}

impl EventFeed {
    /// The next event, or the range missed before it; `Ok(None)` when nothing arrived within
    /// `wait`. An error means the subscription broke (the servers went away): subscribe again
    /// from the sequence after the last one received. It blocks: call it off async threads.
    pub fn next(&mut self, wait: Duration) -> Result<Option<Result<FleetMessage, StreamGap>>, ClusterError> {
        if let Some(gap) = self.gap.take() {
            return Ok(Some(Err(gap)));
        }
        let message = match self.held.take() {
            Some(m) => m,
            None => match self.cluster.inner.bridge.wait(wait, self.rx.recv()) {
                Ok(Some(Ok(m))) => m,
                Ok(Some(Err(reason))) => return Err(self.cluster.unavailable(reason)),
                Err(_) => return Ok(None),
                Ok(None) => return Err(self.cluster.unavailable("the event subscription ended")),
            },
        };
        match self.next {
            Some(next) if message.seq < next => self.next(wait),
            Some(next) if message.seq > next => {
                self.next = Some(message.seq);
                let gap = StreamGap { from: next, to: message.seq - 1 };
                self.held = Some(message);
                Ok(Some(Err(gap)))
            }
            _ => {
                self.next = Some(message.seq + 1);
                Ok(Some(Ok(message)))
            }
        }
    }
}

impl Drop for EventFeed {
    fn drop(&mut self) {
        if let Some(pump) = self.pump.take() {
            pump.abort();
        }
    }
}
