//! Fleet subscriptions: every host of a fleet may run the same subscription (named by its tool
//! and params), and the holder of its lease — one host at a time — delivers it.
//!
//! The lease is a document on the cluster (`lease.<hash>`): its owner, when it expires, and
//! the subscription as delivered so far — each log source's first undelivered block and the
//! plugin's state as of those blocks. The owner renews it every third of its time to live;
//! a host that finds it expired takes it over and goes on from its cursors, so blocks mined
//! while nobody held it are back-filled.
//!
//! Delivery is block by block: the plugin's step for one block, its events published to the
//! fleet's stream with ids named by the block (subscription, chain, source, block, index), then
//! the cursor moved past the block together with the new state (compare-and-set, so only the
//! owner moves it). An owner that dies between publishing and moving the cursor leaves a block
//! its successor delivers again from the same state: the same events under the same ids, which
//! the stream stores once. Hence, fleet-wide, no event is lost or duplicated across a takeover
//! (given the plugin's steps are deterministic, as a stream step of logs is).

use super::{Feed, start_sources};
use crate::fleet_events::{FLEET_SUBSCRIPTION, FleetJournal};
use crate::plugin::Host;
use crate::plugin::streams::{Source, Step};
use alloy::rpc::types::Log;
use bardo_cluster::{Cluster, ClusterError};
use bardo_core::ToolError;
use bardo_core::fabric::now_ms;
use bardo_core::sync::lock;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::task::JoinHandle;

/// How a registry takes part in a fleet's subscriptions.
#[derive(Clone)]
pub struct FleetStreams {
    cluster: Cluster,
    journal: Arc<FleetJournal>,
    /// Who holds a lease: this registry's life on this host.
    owner: String,
    ttl: Duration,
}

impl FleetStreams {
    /// Take part as `host`; a lease lives `ttl` unless renewed (a dead owner's subscription
    /// is taken over within about that long).
    pub fn new(cluster: Cluster, host: &str, ttl: Duration) -> Self {
        let owner = format!("{host}-{}-{}", std::process::id(), now_ms());
        let journal = Arc::new(FleetJournal::new(cluster.clone(), host));
        Self { cluster, journal, owner, ttl: ttl.max(Duration::from_millis(300)) }
    }
}

/// The fleet's name for the subscription to `tool` with `params`: `fleet-<hash>`, equal on
/// every host (params compared as JSON, not as text).
pub(super) fn subscription_id(tool: &str, params: &str) -> String {
    let params = serde_json::from_str::<serde_json::Value>(params)
        .map_or_else(|_| params.to_owned(), |v| v.to_string());
    let hash = Sha256::digest(format!("{tool}\n{params}").as_bytes());
    format!("{FLEET_SUBSCRIPTION}{}", hex::encode(&hash[..8]))
}

/// The lease document.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct LeaseDoc {
    owner: String,
    expires_ms: u64,
    /// Each log source's first block not yet delivered, by the source's index.
    cursors: BTreeMap<usize, u64>,
    /// The plugin's subscription state as of the cursors.
    state: String,
}

/// One fleet subscription's lease, as this host sees it.
pub(super) struct Lease {
    fleet: FleetStreams,
    /// The subscription's fleet id (`fleet-<hash>`).
    id: String,
    key: String,
    lost: AtomicBool,
}

impl Lease {
    pub(super) fn new(fleet: FleetStreams, id: &str) -> Self {
        let key = format!("lease.{}", id.trim_start_matches(FLEET_SUBSCRIPTION));
        Self { fleet, id: id.to_owned(), key, lost: AtomicBool::new(false) }
    }

    /// Whether this host lost the lease while delivering.
    pub(super) fn lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }

    /// Hold the lease (new, expired, or already ours): the document as held, or the owner
    /// holding it.
    fn acquire(&self, starts: &[u64], state: &str) -> Result<Result<LeaseDoc, String>, ClusterError> {
        let (me, now, ttl) = (&self.fleet.owner, now_ms(), self.fleet.ttl.as_millis() as u64);
        self.fleet.cluster.update_json(&self.key, |doc: &mut Option<LeaseDoc>| match doc {
            None => {
                let cursors = starts.iter().copied().enumerate().collect();
                let held =
                    LeaseDoc { owner: me.clone(), expires_ms: now + ttl, cursors, state: state.to_owned() };
                *doc = Some(held.clone());
                Ok(held)
            }
            Some(d) if d.owner == *me || d.expires_ms < now => {
                d.owner = me.clone();
                d.expires_ms = now + ttl;
                Ok(d.clone())
            }
            Some(d) => Err(d.owner.clone()),
        })
    }

    /// Change the document if this host still holds it (renewing it); false if another does.
    fn change(&self, f: impl Fn(&mut LeaseDoc)) -> Result<bool, ClusterError> {
        let (me, ttl) = (&self.fleet.owner, self.fleet.ttl.as_millis() as u64);
        self.fleet.cluster.update_json(&self.key, |doc: &mut Option<LeaseDoc>| match doc {
            Some(d) if d.owner == *me => {
                f(d);
                d.expires_ms = now_ms() + ttl;
                true
            }
            _ => false,
        })
    }

    /// Let another host take over at once (this one stops delivering it).
    pub(super) fn release(&self) {
        self.lost.store(true, Ordering::SeqCst);
        let me = &self.fleet.owner;
        let released = self.fleet.cluster.update_json(&self.key, |doc: &mut Option<LeaseDoc>| {
            if let Some(d) = doc.as_mut().filter(|d| d.owner == *me) {
                d.expires_ms = 0;
            }
        });
        if let Err(e) = released {
            tracing::warn!(subscription = %self.id, "the fleet lease was not released ({e}); it expires on its own");
        }
    }
}

/// Kills the tasks it holds when dropped.
struct Tasks(Vec<JoinHandle<()>>);

impl Drop for Tasks {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

async fn blocking<R: Send + 'static>(
    lease: &Arc<Lease>,
    f: impl FnOnce(&Lease) -> R + Send + 'static,
) -> Result<R, String> {
    let lease = lease.clone();
    tokio::task::spawn_blocking(move || f(&lease)).await.map_err(|e| e.to_string())
}

/// A fleet subscription's life on this host: stand by until the lease is free, then deliver
/// its sources from the lease's cursors and renew it, until it is lost (then stand by again).
pub(super) async fn lead(feed: Arc<Feed>, sources: Vec<Source>, starts: Vec<u64>, counter: Arc<AtomicUsize>) {
    let lease = feed.lease.clone().expect("a fleet feed has a lease");
    let beat = lease.fleet.ttl / 3;
    let initial = lock(&feed.state).clone();
    let mut standing_by_for: Option<String> = None;
    loop {
        let (s, st) = (starts.clone(), initial.clone());
        let doc = match blocking(&lease, move |l| l.acquire(&s, &st)).await {
            Ok(Ok(Ok(doc))) => doc,
            Ok(Ok(Err(owner))) => {
                if standing_by_for.as_deref() != Some(owner.as_str()) {
                    tracing::info!(subscription = %lease.id, %owner, "standing by: another host delivers it");
                    standing_by_for = Some(owner);
                }
                tokio::time::sleep(beat).await;
                continue;
            }
            Ok(Err(e)) => {
                feed.error(format!("the fleet lease of {}: {e}", lease.id));
                tokio::time::sleep(beat).await;
                continue;
            }
            Err(why) => return feed.error(why),
        };
        standing_by_for = None;
        lease.lost.store(false, Ordering::SeqCst);
        *lock(&feed.state) = doc.state.clone();
        let from: Vec<u64> =
            starts.iter().enumerate().map(|(i, s)| doc.cursors.get(&i).copied().unwrap_or(*s)).collect();
        tracing::info!(subscription = %lease.id, cursors = ?from, "holding the fleet lease: delivering");
        let _tasks = Tasks(start_sources(&feed, sources.clone(), &from, &counter));
        let mut renewed = std::time::Instant::now();
        loop {
            tokio::time::sleep(beat).await;
            if lease.lost() {
                break;
            }
            match blocking(&lease, |l| l.change(|_| {})).await {
                Ok(Ok(true)) => renewed = std::time::Instant::now(),
                Ok(Ok(false)) => break,
                Ok(Err(e)) => {
                    feed.error(format!("the fleet lease of {} was not renewed: {e}", lease.id));
                    // Past its time to live another host may hold it: stop delivering.
                    if renewed.elapsed() >= lease.fleet.ttl {
                        break;
                    }
                }
                Err(why) => return feed.error(why),
            }
        }
        lease.lost.store(true, Ordering::SeqCst);
        tracing::info!(subscription = %lease.id, "lost the fleet lease: standing by");
    }
}

/// Publish `events` of a delivery to the fleet under `ids`, then move the lease with `change`
/// and apply `state` here; an error leaves the cursor where it was (the delivery is redone).
async fn commit(
    feed: &Arc<Feed>,
    lease: &Arc<Lease>,
    events: Vec<bardo_core::fabric::GolemEvent>,
    ids: impl Fn(usize) -> String,
    state: String,
    change: impl Fn(&mut LeaseDoc) + Send + 'static,
) -> Result<(), String> {
    if !events.is_empty() {
        let batch: Vec<(String, bardo_core::fabric::GolemEvent)> =
            events.iter().enumerate().map(|(i, e)| (ids(i), e.clone())).collect();
        blocking(lease, move |l| l.fleet.journal.publish_delivered(&batch))
            .await?
            .map_err(|e| e.to_string())?;
    }
    let saved = state.clone();
    let held = blocking(lease, move |l| {
        l.change(|d| {
            change(d);
            d.state.clone_from(&saved);
        })
    })
    .await?
    .map_err(|e| e.to_string())?;
    if !held {
        lease.lost.store(true, Ordering::SeqCst);
        return Err(format!("another host holds the fleet lease of {} now", lease.id));
    }
    *lock(&feed.state) = state;
    feed.publish(events);
    Ok(())
}

/// Deliver log source `index`'s logs up to block `to`, block by block (see the module's note);
/// `next` moves past each block as it is committed, so a delivery cut short resumes after the
/// last committed block, never re-running a block on a later state.
pub(super) async fn deliver(
    feed: &Arc<Feed>,
    lease: &Arc<Lease>,
    index: usize,
    chain_id: u64,
    logs: Vec<Log>,
    to: u64,
    next: &mut u64,
) -> Result<(), String> {
    let _turn = feed.turn.lock().await;
    let mut blocks: BTreeMap<u64, Vec<Log>> = BTreeMap::new();
    for log in logs {
        blocks.entry(log.block_number.unwrap_or(to)).or_default().push(log);
    }
    let mut delivered_to = None;
    for (block, logs) in blocks {
        let tool = feed.tool.clone();
        let step = feed
            .run_step(move |host: &Host, params: &str, state: &str| {
                host.stream_logs(&tool, params, chain_id, &logs, state).result
            })
            .await;
        let (events, state) = match step {
            Ok(Step { events, state }) => (feed.typed(events), state),
            Err(why) => {
                feed.error(why);
                (Vec::new(), lock(&feed.state).clone())
            }
        };
        let id = lease.id.clone();
        let ids = move |i: usize| format!("{id}-{chain_id}-{index}-{block}-{i}");
        commit(feed, lease, events, ids, state, move |d| {
            d.cursors.insert(index, block + 1);
        })
        .await?;
        *next = block + 1;
        delivered_to = Some(block);
    }
    if delivered_to != Some(to) {
        let state = lock(&feed.state).clone();
        commit(
            feed,
            lease,
            Vec::new(),
            |_| String::new(),
            state,
            move |d| {
                d.cursors.insert(index, to + 1);
            },
        )
        .await?;
    }
    Ok(())
}

/// Poll source `index`'s tick `n` on the lease's owner (ticks have no chain position: a
/// takeover goes on from the state, not from a tick).
pub(super) async fn tick(
    feed: &Arc<Feed>,
    lease: &Arc<Lease>,
    index: usize,
    n: u64,
    run: impl FnOnce(&Host, &str, &str) -> Result<Step, ToolError> + Send + 'static,
) -> Result<(), String> {
    let _turn = feed.turn.lock().await;
    let Step { events, state } = feed.run_step(run).await?;
    let events = feed.typed(events);
    let (id, owner) = (lease.id.clone(), lease.fleet.owner.clone());
    commit(feed, lease, events, move |i| format!("{id}-{index}-tick-{owner}-{n}-{i}"), state, |_| {}).await
}

#[cfg(test)]
mod tests {
    use super::subscription_id;

    #[test]
    fn a_fleet_subscription_is_named_by_its_tool_and_params_as_json() {
        let a = subscription_id("stream_tokenjar", r#"{"chain_id":1,"jar":"0xab"}"#);
        assert_eq!(a, subscription_id("stream_tokenjar", r#"{ "chain_id": 1, "jar": "0xab" }"#));
        assert_ne!(a, subscription_id("stream_tokenjar", r#"{"chain_id":2,"jar":"0xab"}"#));
        assert_ne!(a, subscription_id("stream_trades", r#"{"chain_id":1,"jar":"0xab"}"#));
        assert!(a.starts_with("fleet-") && a.len() == 22, "{a}");
    }
}
