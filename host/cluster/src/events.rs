//! The fleet's Event Fabric: every host's events in one stream, `BARDO_<cluster>_EVENTS`, each
//! host on its own subject (`bardo.<cluster>.events.<host>`). The stream's sequence numbers are
//! the fleet's: a subscriber resumes from one, and a range the stream no longer holds (or
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

/// The events stream's configuration: a host's subject per host, the newest million kept.
pub(crate) fn stream_config(name: &str, prefix: &str, replicas: usize) -> stream::Config {
    stream::Config {
        name: format!("BARDO_{name}_EVENTS"),
        subjects: vec![format!("{prefix}.events.>")],
        max_messages: 1_000_000,
        discard: stream::DiscardPolicy::Old,
        num_replicas: replicas,
        storage: stream::StorageType::File,
        // A batch retried after a lost ack is stored once (message ids, two minutes).
        duplicate_window: Duration::from_secs(120),
        ..Default::default()
    }
}

impl Cluster {
    fn events_subject(&self, host: &str) -> Result<String, ClusterError> {
        if !crate::is_token(host) {
            return Err(ClusterError::Config(format!(
                "host `{host}`: use letters, digits, `_` and `-` (it names the host's event subject)"
            )));
        }
        Ok(format!("{}.events.{host}", self.inner.prefix))
    }

    /// Publish host `host`'s events `(message id, payload)` in order; returns their fleet
    /// sequences. Every message is sent before the first acknowledgement is awaited (a batch
    /// costs one round trip, not one per event); a message id already stored within two minutes
    /// is not stored again, so retrying a batch whose answer was lost never duplicates.
    pub fn publish_events(
        &self,
        host: &str,
        batch: Vec<(String, Vec<u8>)>,
    ) -> Result<Vec<u64>, ClusterError> {
        let subject = self.events_subject(host)?;
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

    /// The first and last sequence the events stream holds (`(last + 1, last)` when it holds none).
    pub fn events_bounds(&self) -> Result<(u64, u64), ClusterError> {
        let mut events = self.inner.events.clone();
        self.run(async move {
            let state = &events.info().await.map_err(|e| e.to_string())?.state;
            Ok(if state.messages == 0 {
                (state.last_sequence + 1, state.last_sequence)
            } else {
                (state.first_sequence, state.last_sequence)
            })
        })
    }

    /// Follow the fleet's events from sequence `from` on (None: only those published from now).
    /// If the stream no longer holds `from`, the missed range comes first.
    pub fn subscribe_events(&self, from: Option<u64>) -> Result<EventFeed, ClusterError> {
        let (policy, gap, next) = match from {
            None => (consumer::DeliverPolicy::New, None, None),
            Some(from) => {
                let from = from.max(1);
                let (first, _) = self.events_bounds()?;
                let gap = (from < first).then(|| StreamGap { from, to: first - 1 });
                let start = from.max(first);
                (consumer::DeliverPolicy::ByStartSequence { start_sequence: start }, gap, Some(start))
            }
        };
        let events = self.inner.events.clone();
        let strip = format!("{}.events.", self.inner.prefix);
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
