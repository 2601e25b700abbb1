//! The Event Fabric of a fleet: with `[cluster]`, `bardo stream` journals its events into the
//! fleet's NATS stream instead of the events file, and `bardo events` follows that stream from
//! a fleet sequence number — every host's events, in one order, resumable without a gap or a
//! duplicate (a range the stream no longer holds is reported as missed).

use bardo_cluster::{Cluster, ClusterError, FleetMessage};
use bardo_core::fabric::{Envelope, Fabric, GolemEvent, now_ms};
use bardo_core::sync::lock;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Condvar, Mutex};

/// How a fleet subscription's id begins: its events reach the fleet's stream from the holder
/// of its lease, not through [`forward`].
pub const FLEET_SUBSCRIPTION: &str = "fleet-";

/// What a host publishes for one envelope.
#[derive(Serialize)]
struct Published<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    host_seq: Option<u64>,
    at_ms: u64,
    event: &'a GolemEvent,
}

/// One fleet event as `bardo events` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetEnvelope {
    /// Its place in the fleet's stream: what `--resume-from` takes.
    pub seq: u64,
    /// The host that emitted it (`[cluster] host`).
    pub host: String,
    /// Its sequence number on that host's fabric (none for a fleet subscription's events, which
    /// the subscription's lease holder publishes before its fabric has them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_seq: Option<u64>,
    /// When it was emitted, Unix milliseconds.
    pub at_ms: u64,
    /// The event, as the fabric serializes it.
    pub event: serde_json::Value,
}

/// One host's writer into the fleet's events stream.
pub struct FleetJournal {
    cluster: Cluster,
    host: String,
    /// Unique to this writer's life: with the host sequence it makes each message's id, so a
    /// batch retried after a lost answer is stored once, and two lives of one host never clash.
    writer: String,
}

impl FleetJournal {
    /// A writer publishing as `host`.
    pub fn new(cluster: Cluster, host: &str) -> Self {
        let writer = format!("{host}-{}-{}", std::process::id(), now_ms());
        Self { cluster, host: host.to_owned(), writer }
    }

    /// Publish `batch` (in fabric order); returns their fleet sequences. One round trip.
    pub fn append(&self, batch: &[Envelope]) -> Result<Vec<u64>, ClusterError> {
        let messages = batch
            .iter()
            .map(|e| {
                let published = Published { host_seq: Some(e.seq), at_ms: e.at_ms, event: &e.event };
                Ok((format!("{}-{}", self.writer, e.seq), encode(&published)?))
            })
            .collect::<Result<Vec<_>, ClusterError>>()?;
        self.cluster.publish_events(&self.host, messages)
    }

    /// Publish events not (yet) on a fabric under ids the caller chose: the same id published
    /// again within two minutes, by any host, is stored once.
    pub fn publish_delivered(&self, batch: &[(String, GolemEvent)]) -> Result<Vec<u64>, ClusterError> {
        let at_ms = now_ms();
        let messages = batch
            .iter()
            .map(|(id, event)| Ok((id.clone(), encode(&Published { host_seq: None, at_ms, event })?)))
            .collect::<Result<Vec<_>, ClusterError>>()?;
        self.cluster.publish_events(&self.host, messages)
    }
}

fn encode(p: &Published) -> Result<Vec<u8>, ClusterError> {
    serde_json::to_vec(p).map_err(|e| ClusterError::Corrupt {
        what: format!("a {} event", p.event.variant()),
        reason: e.to_string(),
    })
}

/// A fleet message as the envelope `bardo events` prints.
pub fn decode(m: &FleetMessage) -> Result<FleetEnvelope, ClusterError> {
    #[derive(Deserialize)]
    struct Stored {
        #[serde(default)]
        host_seq: Option<u64>,
        at_ms: u64,
        event: serde_json::Value,
    }
    let s: Stored = serde_json::from_slice(&m.payload).map_err(|e| ClusterError::Corrupt {
        what: format!("fleet event {}", m.seq),
        reason: e.to_string(),
    })?;
    Ok(FleetEnvelope {
        seq: m.seq,
        host: m.host.clone(),
        host_seq: s.host_seq,
        at_ms: s.at_ms,
        event: s.event,
    })
}

pub use bardo_cluster::default_host;

/// A host's fabric forwarded into the fleet's stream by a thread of its own (see [`forward`]).
pub struct Forwarder {
    published: Arc<(Mutex<u64>, Condvar)>,
}

/// Publish every event `fabric` emits from now on through `journal` (but a fleet
/// subscription's), in order, in batches of what is ready (one round trip each). While the
/// servers are unreachable the batch is retried (stored once, by its message ids) and the
/// fabric's ring holds what comes meanwhile; if the ring overflows, the missed range is logged
/// — the fleet sees that host's `host_seq` jump. The thread ends when the fabric is dropped.
pub fn forward(fabric: &Fabric, journal: FleetJournal) -> Forwarder {
    let mut events = fabric.subscribe(None);
    let published = Arc::new((Mutex::new(0u64), Condvar::new()));
    let done = published.clone();
    std::thread::Builder::new()
        .name("bardo-fleet-events".into())
        .spawn(move || {
            // The thread waits on the fabric through a runtime of its own (no timers or I/O).
            let waiter = tokio::runtime::Builder::new_current_thread().build().expect("a waiter runtime");
            while let Some(next) = waiter.block_on(events.recv()) {
                let first = match next {
                    Ok(e) => e,
                    Err(gap) => {
                        tracing::error!(host = %journal.host, "{gap}: not published to the fleet");
                        continue;
                    }
                };
                let mut batch = vec![first];
                while batch.len() < 1_000 {
                    match events.try_recv() {
                        Some(Ok(e)) => batch.push(e),
                        Some(Err(gap)) => {
                            tracing::error!(host = %journal.host, "{gap}: not published to the fleet")
                        }
                        None => break,
                    }
                }
                let last = batch.last().map_or(0, |e| e.seq);
                batch.retain(|e| {
                    !e.event.subscription_id().is_some_and(|id| id.starts_with(FLEET_SUBSCRIPTION))
                });
                let mut warned = false;
                while !batch.is_empty()
                    && let Err(e) = journal.append(&batch)
                {
                    if !warned {
                        tracing::warn!(host = %journal.host, "fleet events held until NATS takes them: {e}");
                        warned = true;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(200));
                }
                *lock(&done.0) = last;
                done.1.notify_all();
            }
        })
        .expect("cannot start the fleet events thread");
    Forwarder { published }
}

impl Forwarder {
    /// Wait until the fabric's events up to `seq` are in the fleet's stream; false if they are
    /// not within `timeout`.
    pub fn wait_for(&self, seq: u64, timeout: std::time::Duration) -> bool {
        let (published, cvar) = &*self.published;
        let guard = lock(published);
        let (guard, _) = cvar
            .wait_timeout_while(guard, timeout, |published| *published < seq)
            .unwrap_or_else(|p| p.into_inner());
        *guard >= seq
    }
}
