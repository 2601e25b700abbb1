//! A serving process's own fabric, journaled for `bardo events` and `bardo tui`: to the events
//! file, or with `[cluster]` to the fleet's stream.

use anyhow::Result;
use bardo_cluster::Cluster;
use bardo_core::Runtime;
use bardo_core::fabric::Fabric;
use bardo_core::journal::{self, Journal, JournalTask};
use bardo_runtime::config::Config;
use bardo_runtime::fleet_events;
use std::sync::Arc;
use std::time::Duration;

/// Where a serving process's own fabric goes: the events file, or the fleet's stream.
pub(crate) enum Journaling {
    /// Appended to the events journal.
    File(JournalTask),
    /// Forwarded to the fleet's events stream (`[cluster]`).
    Fleet(fleet_events::Forwarder),
    /// Nowhere: another process holds the journal (said on stderr).
    Off,
}

impl Journaling {
    /// Write what was emitted so far.
    pub(crate) fn finish(self, rt: &Runtime, fabric: &Fabric) {
        match self {
            Journaling::File(task) => rt.block_on(task.finish()),
            Journaling::Fleet(forwarder) => {
                forwarder.wait_for(fabric.last_seq(), Duration::from_secs(5));
            }
            Journaling::Off => {}
        }
    }
}

/// A fabric for a serving process (`bardo mcp`, a fleet's `bardo tui`), journaled for `bardo
/// events` and `bardo tui`: to the events file, or with `fleet` (`[cluster]`) to the fleet's
/// stream. A journal another process writes is not shared: this process's events then go
/// unjournaled, and stderr says so.
pub(crate) fn journaled_fabric(
    config: &Config,
    fleet: Option<Cluster>,
    rt: &Runtime,
) -> Result<(Arc<Fabric>, Journaling)> {
    if let Some(cluster) = fleet {
        let host = crate::fleet_host(config);
        let fabric = Arc::new(Fabric::new());
        let forwarder = fleet_events::forward(&fabric, fleet_events::FleetJournal::new(cluster, &host));
        return Ok((fabric, Journaling::Fleet(forwarder)));
    }
    let path = config.resolve(&config.events_journal);
    match Journal::open(&path) {
        Ok((journal, first)) => {
            let fabric = Arc::new(Fabric::starting_at(first));
            let task = JournalTask::spawn(&fabric, journal, path, rt.handle());
            Ok((fabric, Journaling::File(task)))
        }
        Err(e @ journal::JournalError::Busy(_)) => {
            eprintln!("warning: {e}: this process's events are not journaled");
            Ok((Arc::new(Fabric::new()), Journaling::Off))
        }
        Err(e) => Err(e.into()),
    }
}

/// [`journaled_fabric`] for a command that only reads: journaling is best effort, so a fleet
/// out of reach leaves the read unjournaled (stderr says so) instead of failing it.
pub(crate) fn reads_fabric(config: &Config, rt: &Runtime) -> (Arc<Fabric>, Journaling) {
    match crate::fleet_chain(config).and_then(|fleet| journaled_fabric(config, fleet, rt)) {
        Ok(journaled) => journaled,
        Err(e) => {
            eprintln!("warning: {e:#}: this read is not journaled");
            (Arc::new(Fabric::new()), Journaling::Off)
        }
    }
}
