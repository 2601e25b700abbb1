//! Memory across a fleet: each host publishes the episodes it records first on the fleet's
//! memory feed (`BARDO_<cluster>_MEMORY`) and imports the others', so every host searches the
//! fleet's episodes in its own index. Nothing is lost: a host publishes from a cursor kept in
//! its store (what failed to go out goes at the next attempt, or the next start), and follows
//! the feed from another (a host that was away catches up from where it stopped); the stream
//! refuses a message id it already holds, and a store one episode it already holds.

use bardo_cluster::{Cluster, ClusterError, Feed, FleetMessage};
use bardo_memory::{Exported, Memory, WeakMemory};
use std::time::Duration;

/// The cursors in the store: the last own episode published, the last fleet sequence applied.
const PUBLISHED: &str = "fleet-published";
const APPLIED: &str = "fleet-applied";

/// Episodes published in one batch.
const BATCH: usize = 100;

/// Replicate `memory` through `cluster` as host `host`: publish what is not yet published, catch
/// up with the feed (within the cluster's timeout), then keep following it and publishing new
/// episodes in the background.
pub fn replicate(memory: &Memory, cluster: &Cluster, host: &str) -> Result<(), ClusterError> {
    publish_pending(memory, cluster, host)?;
    let (_, last) = cluster.bounds(Feed::Memory)?;
    let mut feed = cluster.subscribe(Feed::Memory, Some(applied(memory) + 1))?;
    // Catch up before answering anything: a search right after start sees the fleet's episodes.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while applied(memory) < last && std::time::Instant::now() < deadline {
        match feed.next(Duration::from_millis(200))? {
            Some(Ok(m)) => apply(memory, host, &m),
            Some(Err(gap)) => tracing::warn!("fleet memory: {gap}"),
            None => {}
        }
    }
    // Publish each new episode as it is stored, before the call that stored it returns (a
    // process may end right after); a failure is retried from the cursor. Neither the publisher
    // nor the follower keeps the store open: it closes when its last user drops it.
    let (publisher, name) = (cluster.clone(), host.to_owned());
    memory.on_new(move |own, _| {
        if let Err(e) = publish_pending(own, &publisher, &name) {
            tracing::warn!("fleet memory: not published yet ({e}); retried");
        }
    });
    let (memory, cluster, host) = (memory.weak(), cluster.clone(), host.to_owned());
    std::thread::Builder::new()
        .name("fleet-memory".into())
        .spawn(move || follow(&memory, &cluster, &host, feed))
        .map_err(|e| ClusterError::Config(format!("cannot start the fleet memory thread: {e}")))?;
    Ok(())
}

/// Follow the feed while the store is open.
fn follow(memory: &WeakMemory, cluster: &Cluster, host: &str, mut feed: bardo_cluster::EventFeed) {
    loop {
        let next = feed.next(Duration::from_millis(250));
        let Some(memory) = memory.upgrade() else { return };
        match next {
            Ok(Some(Ok(m))) => apply(&memory, host, &m),
            Ok(Some(Err(gap))) => tracing::warn!("fleet memory: {gap}"),
            Ok(None) => {
                // Quiet: a good time to retry what failed to go out.
                let _ = publish_pending(&memory, cluster, host);
            }
            Err(e) => {
                tracing::warn!("fleet memory: the feed broke ({e}); following again");
                std::thread::sleep(Duration::from_secs(1));
                match cluster.subscribe(Feed::Memory, Some(applied(&memory) + 1)) {
                    Ok(f) => feed = f,
                    Err(e) => tracing::warn!("fleet memory: {e}"),
                }
            }
        }
    }
}

fn cursor(memory: &Memory, name: &str) -> i64 {
    memory.cursor(name).unwrap_or(0)
}

/// The last fleet sequence applied.
fn applied(memory: &Memory) -> u64 {
    u64::try_from(cursor(memory, APPLIED)).unwrap_or(0)
}

/// Publish this host's own episodes after the published cursor.
fn publish_pending(memory: &Memory, cluster: &Cluster, host: &str) -> Result<(), ClusterError> {
    let store = |e: bardo_memory::MemoryError| ClusterError::Config(format!("memory: {e}"));
    loop {
        let after = cursor(memory, PUBLISHED);
        let page = memory.export_page(after, BATCH).map_err(store)?;
        let Some(last) = page.last().map(|(id, _)| *id) else { return Ok(()) };
        let batch: Vec<(String, Vec<u8>)> = page
            .into_iter()
            .filter(|(_, e)| e.origin == memory.origin())
            .map(|(_, e)| (e.uid.clone(), serde_json::to_vec(&e).unwrap_or_default()))
            .collect();
        if !batch.is_empty() {
            cluster.publish_to(Feed::Memory, host, batch)?;
        }
        memory.set_cursor(PUBLISHED, last).map_err(store)?;
    }
}

/// Import another host's episode, and move the applied cursor past it.
fn apply(memory: &Memory, host: &str, m: &FleetMessage) {
    if m.host != host {
        match serde_json::from_slice::<Exported>(&m.payload) {
            Ok(e) => {
                if let Err(err) = memory.import(std::slice::from_ref(&e)) {
                    tracing::warn!("fleet memory: episode {} from {} not kept: {err}", e.uid, m.host);
                }
            }
            Err(e) => tracing::warn!("fleet memory: message {} from {} is no episode: {e}", m.seq, m.host),
        }
    }
    if let Err(e) = memory.set_cursor(APPLIED, m.seq as i64) {
        tracing::warn!("fleet memory: {e}");
    }
}
