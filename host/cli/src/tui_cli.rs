//! `bardo tui`: the dashboard, live on this process's Event Fabric (the subscriptions `[tui]
//! follow` names, journaled like `bardo stream`'s) or following the events journal another
//! process writes. Permits come from the permit store every process shares; `c` and `x` go
//! through this process's write path, exactly as `bardo commit` and `bardo cancel` do.

use crate::journaling::journaled_fabric;
use crate::{fleet_chain, report_refused};
use anyhow::{Context, Result};
use bardo_cluster::Cluster;
use bardo_core::Runtime;
use bardo_core::fabric::Fabric;
use bardo_core::journal::{Journal, JournalError, JournalTask};
use bardo_runtime::config::Config;
use bardo_runtime::fleet_events;
use bardo_runtime::setup;
use bardo_runtime::subscriptions::{FleetStreams, SubscriptionRegistry};
use bardo_safety::WritePath;
use bardo_tui::Operator;
use bardo_tui::config::{TuiFollow, TuiSettings};
use bardo_tui::feed::{Feed, Item, JournalFeed, LiveFeed};
use bardo_tui::model::{PermitRow, clean};
use std::process::ExitCode;
use std::sync::{Arc, mpsc};
use std::time::Duration;

/// The write path, as the dashboard's operator.
struct Writes(Arc<WritePath>);

impl Operator for Writes {
    fn open_permits(&self) -> Result<Vec<PermitRow>, String> {
        let permits = self.0.open_permits().map_err(|e| e.to_string())?;
        Ok(permits
            .into_iter()
            .map(|p| {
                let created = p.created_at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                let held = self.0.pending_confirmation(&p.permit_id).ok().flatten();
                PermitRow {
                    permit_id: p.permit_id,
                    kind: p.kind,
                    tool: p.tool,
                    // What the simulation showed, as amounts; else the plugin's own account of it
                    // (control characters are not let through).
                    expected: bardo_safety::permit::outcome_line(&p.balance_changes)
                        .unwrap_or_else(|| clean(p.expected_outcome).to_string()),
                    risk_tier: serde_json::to_value(p.risk_tier)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    expires_at_ms: (created + p.ttl).as_millis() as u64,
                    held_by: held.map(|held| held.policy.to_string()),
                }
            })
            .collect())
    }

    fn commit(&self, permit_id: &str) -> Result<String, String> {
        // The person at the dashboard said yes to this commit: that is the confirmation.
        // (Not open any more: the commit itself refuses it, on the record.)
        if matches!(self.0.pending_confirmation(permit_id), Ok(Some(_))) {
            self.confirm(permit_id)?;
        }
        let done = self.0.commit(permit_id).map_err(|e| e.to_string())?;
        Ok(format!("{} transaction(s), {}", done.tx_hashes.len(), done.ground_truth))
    }

    fn cancel(&self, permit_id: &str) -> Result<(), String> {
        self.0.cancel(permit_id).map_err(|e| e.to_string())
    }

    fn confirm(&self, permit_id: &str) -> Result<(), String> {
        let by = crate::write_cli::operator("bardo tui");
        self.0.confirm(permit_id, bardo_safety::confirm::Channel::Tui, &by).map_err(|e| e.to_string())
    }
}

/// Stderr pointed at a log file while the dashboard owns the terminal (a warning written to the
/// terminal would draw over it); put back when dropped.
struct StderrTo(std::os::fd::OwnedFd);

impl StderrTo {
    fn file(log: &std::path::Path) -> Result<Self> {
        use std::os::fd::AsFd;
        if let Some(dir) = log.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::OpenOptions::new().create(true).append(true).open(log)?;
        let saved = rustix::io::dup(std::io::stderr().as_fd())?;
        rustix::stdio::dup2_stderr(&file)?;
        Ok(Self(saved))
    }
}

impl Drop for StderrTo {
    fn drop(&mut self) {
        let _ = rustix::stdio::dup2_stderr(&self.0);
    }
}

/// `bardo tui`.
pub fn tui(
    config: &Config,
    profile: Option<&str>,
    resume_from: Option<u64>,
    rt: &Runtime,
) -> Result<ExitCode> {
    let fleet = fleet_chain(config)?;
    let opened = setup::open(config, profile, rt)?;
    report_refused(&opened.refused);
    let (host, services) = (Arc::new(opened.host), opened.services);
    let path = config.resolve(&config.events_journal);
    let log = path.with_file_name("tui.log");
    if let Some(cluster) = fleet {
        return fleet_tui(config, cluster, host, services, resume_from, &log, rt);
    }
    let settings: TuiSettings = config.section()?;
    let follow = &settings.follow;
    if follow.is_empty() {
        // Only the permit store is needed; a configuration that cannot write still shows events.
        let operator = bardo_safety::setup::write_path(config, host)
            .map(|p| Arc::new(Writes(Arc::new(p))) as Arc<dyn Operator>)
            .map_err(|e| format!("read-only: {e}"));
        let source = format!("following {}", path.display());
        let _stderr = StderrTo::file(&log)?;
        bardo_tui::run(JournalFeed::new(path, resume_from), operator, source)?;
        return Ok(ExitCode::SUCCESS);
    }
    let (journal, first) = Journal::open(&path).map_err(|e| match e {
        JournalError::Busy(_) => anyhow::anyhow!(
            "{e}; or run `bardo tui` without [tui] follow, and it follows that process's journal"
        ),
        e => e.into(),
    })?;
    let fabric = Arc::new(Fabric::starting_at(first));
    // The journal's copy and the dashboard's are separate subscriptions: the dashboard falling
    // behind neither slows the fabric nor loses the journal anything.
    let dashboard = fabric.subscribe(None);
    let write_path =
        Arc::new(bardo_safety::setup::write_path(config, host.clone())?.with_fabric(fabric.clone()));
    let registry = SubscriptionRegistry::new(host, services, fabric.clone())?;
    subscribe_all(&registry, follow)?;
    let journaled = JournalTask::spawn(&fabric, journal, path.clone(), rt.handle());
    let source = format!("live: {} subscription(s), journal {}", follow.len(), path.display());
    let operator: Arc<dyn Operator> = Arc::new(Writes(write_path));
    let stderr = StderrTo::file(&log)?;
    let shown = bardo_tui::run(LiveFeed::new(dashboard, path, resume_from), Ok(operator), source);
    registry.unsubscribe_all();
    // Every event emitted so far (the subscriptions' StreamClosed too) reaches the journal.
    rt.block_on(journaled.finish());
    drop(stderr);
    shown.context("drawing the dashboard")?;
    Ok(ExitCode::SUCCESS)
}

fn subscribe_all(registry: &SubscriptionRegistry, follow: &[TuiFollow]) -> Result<()> {
    for f in follow {
        registry
            .subscribe(&f.tool, &f.params.to_string())
            .map_err(|e| anyhow::anyhow!("[tui] follow {}: {e}", f.tool))?;
    }
    Ok(())
}

/// The fleet's events stream, read by a thread of its own into a bounded queue: a dashboard
/// that falls behind leaves the events in the stream (where they stay), not in memory.
struct FleetFeed(mpsc::Receiver<Item>);

impl FleetFeed {
    fn open(cluster: &Cluster, resume_from: Option<u64>) -> Result<Self> {
        let mut feed = cluster.subscribe_events(resume_from)?;
        let (tx, rx) = mpsc::sync_channel(10_000);
        std::thread::Builder::new().name("bardo-tui-fleet".into()).spawn(move || {
            loop {
                let item = match feed.next(Duration::from_millis(200)) {
                    Ok(Some(Ok(m))) => match fleet_events::decode(&m) {
                        Ok(e) => Item::Event(serde_json::to_value(e).unwrap_or_default()),
                        Err(e) => Item::Trouble(e.to_string()),
                    },
                    Ok(Some(Err(gap))) => Item::Gap { from: gap.from, to: gap.to },
                    Ok(None) => continue,
                    Err(e) => {
                        std::thread::sleep(Duration::from_secs(1));
                        Item::Trouble(e.to_string())
                    }
                };
                if tx.send(item).is_err() {
                    return;
                }
            }
        })?;
        Ok(Self(rx))
    }
}

impl Feed for FleetFeed {
    fn poll(&mut self, max: usize) -> Vec<Item> {
        self.0.try_iter().take(max).collect()
    }
}

/// With `[cluster]`: the fleet's events stream is the journal. `[tui] follow` subscriptions are
/// fleet subscriptions (delivered by whichever host holds each one's lease), and this process's
/// own events (a commit from the dashboard) are forwarded to the stream like any host's.
fn fleet_tui(
    config: &Config,
    cluster: Cluster,
    host: Arc<bardo_runtime::Host>,
    services: Arc<bardo_runtime::Services>,
    resume_from: Option<u64>,
    log: &std::path::Path,
    rt: &Runtime,
) -> Result<ExitCode> {
    let name = crate::fleet_host(config);
    let (fabric, journaling) = journaled_fabric(config, Some(cluster.clone()), rt)?;
    let operator = bardo_safety::setup::write_path(config, host.clone())
        .map(|p| Arc::new(Writes(Arc::new(p.with_fabric(fabric.clone())))) as Arc<dyn Operator>)
        .map_err(|e| format!("read-only: {e}"));
    let fleet = FleetStreams::new(cluster.clone(), &name, crate::fleet_lease(config));
    let registry = SubscriptionRegistry::new(host, services, fabric.clone())?.with_fleet(fleet);
    let follow = config.section::<TuiSettings>()?.follow;
    subscribe_all(&registry, &follow)?;
    let feed = FleetFeed::open(&cluster, resume_from)?;
    let fleet_name = crate::cluster_of(config).map_or_else(|| "bardo".to_owned(), |c| c.name);
    let source = format!("fleet `{fleet_name}` as host `{name}`, {} subscription(s)", follow.len());
    let stderr = StderrTo::file(log)?;
    let shown = bardo_tui::run(feed, operator, source);
    // Releases the leases: another host takes the subscriptions over at once.
    registry.unsubscribe_all();
    journaling.finish(rt, &fabric);
    drop(stderr);
    shown.context("drawing the dashboard")?;
    Ok(ExitCode::SUCCESS)
}
