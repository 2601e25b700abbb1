//! `bardo stream` and `bardo events`: one subscription's events journaled, and the journal
//! followed from a sequence number. The journal is the events file, or with `[cluster]` the
//! fleet's NATS stream (every host's events in one order; `--resume-from` is its sequence).

use crate::write_cli::print_write;
use crate::{fleet_chain, report_refused};
use anyhow::Result;
use bardo_cluster::Cluster;
use bardo_core::Runtime;
use bardo_core::fabric::{Envelope, Fabric};
use bardo_core::journal::{self, Journal};
use bardo_runtime::config::Config;
use bardo_runtime::fleet_events;
use bardo_runtime::setup;
use bardo_runtime::subscriptions::{FleetStreams, SubscriptionRegistry};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Where `bardo stream` journals its events.
enum Sink {
    /// The events file.
    File(Journal, PathBuf),
    /// Nowhere here: a fleet subscription's holder published them to the fleet's stream.
    Fleet,
}

impl Sink {
    /// Journal `e`, then print it.
    fn write(&mut self, e: &Envelope, out: &mut impl Write) -> Result<()> {
        match self {
            Sink::File(journal, path) => writeln!(out, "{}", journal.append(e, path)?)?,
            Sink::Fleet => writeln!(out, "{}", serde_json::to_string(e)?)?,
        }
        out.flush()?;
        Ok(())
    }
}

/// `bardo stream`: one subscription, its events to stdout and the journal, until Ctrl-C.
pub fn stream(
    config: &Config,
    tool: &str,
    params: &str,
    profile: Option<&str>,
    rt: &Runtime,
) -> Result<ExitCode> {
    let (mut sink, first, journal, fleet) = match fleet_chain(config)? {
        Some(cluster) => {
            let host = crate::fleet_host(config);
            let named = format!(
                "the fleet's events stream (as host `{host}`; the host holding the subscription's lease delivers it)"
            );
            (Sink::Fleet, 1, named, Some(FleetStreams::new(cluster, &host, crate::fleet_lease(config))))
        }
        None => {
            let path = config.resolve(&config.events_journal);
            let (journal, first) = Journal::open(&path)?;
            let named = path.display().to_string();
            (Sink::File(journal, path), first, named, None)
        }
    };
    let opened = setup::open(config, profile, rt)?;
    report_refused(&opened.refused);
    let fabric = Arc::new(Fabric::starting_at(first));
    let mut events = fabric.subscribe(None);
    let mut registry = SubscriptionRegistry::new(Arc::new(opened.host), opened.services.clone(), fabric)?;
    if let Some(fleet) = fleet {
        registry = registry.with_fleet(fleet);
    }
    let info = match registry.subscribe(tool, params) {
        Ok(info) => info,
        Err(e) => return print_write::<()>(Err(e)),
    };
    eprintln!(
        "subscribed {} to {tool}; events go to stdout and {journal}; Ctrl-C stops",
        info.subscription_id
    );
    let mut out = std::io::stdout().lock();
    rt.block_on(async {
        loop {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => return Ok::<_, anyhow::Error>(()),
                next = events.recv() => match next {
                    Some(Ok(e)) => sink.write(&e, &mut out)?,
                    Some(Err(gap)) => eprintln!("warning: {gap}"),
                    None => return Ok(()),
                }
            }
        }
    })?;
    registry.unsubscribe_all();
    while let Some(Ok(e)) = events.try_recv() {
        sink.write(&e, &mut out)?;
    }
    eprintln!("unsubscribed {}", info.subscription_id);
    Ok(ExitCode::SUCCESS)
}

/// `bardo events`: the journal from a sequence number on, then new events as they come.
pub fn events(config: &Config, resume_from: Option<u64>, no_follow: bool, rt: &Runtime) -> Result<ExitCode> {
    if let Some(cluster) = fleet_chain(config)? {
        return fleet(cluster, resume_from, no_follow, rt);
    }
    let path = config.resolve(&config.events_journal);
    let mut out = std::io::stdout().lock();
    // `--no-follow` alone: everything the journal holds.
    if let Some(from) = resume_from.or(no_follow.then_some(0)) {
        let (gap, lines) = journal::read(&path, from)?;
        if let Some(gap) = gap {
            eprintln!("warning: {gap}: the journal starts at {}", gap.to + 1);
            writeln!(out, "{}", serde_json::json!({"gap": gap}))?;
        }
        for (_, line) in lines {
            writeln!(out, "{line}")?;
        }
        out.flush()?;
    }
    if no_follow {
        return Ok(ExitCode::SUCCESS);
    }
    let mut offset = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    rt.block_on(async {
        loop {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => return Ok::<_, anyhow::Error>(()),
                _ = tokio::time::sleep(Duration::from_millis(100)) => {
                    let (lines, next) = journal::tail(&path, offset)?;
                    offset = next;
                    for line in lines {
                        writeln!(out, "{line}")?;
                    }
                    out.flush()?;
                }
            }
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `bardo events` with `[cluster]`: the fleet's stream from `resume_from` (its sequence) on.
fn fleet(cluster: Cluster, resume_from: Option<u64>, no_follow: bool, rt: &Runtime) -> Result<ExitCode> {
    let (first, last) = cluster.events_bounds()?;
    // `--no-follow` alone: everything the stream holds.
    let resume_from = resume_from.or(no_follow.then_some(first));
    if no_follow && resume_from.is_none_or(|from| from > last) {
        return Ok(ExitCode::SUCCESS);
    }
    let mut feed = cluster.subscribe_events(resume_from)?;
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let follow = rt.handle().spawn_blocking(move || -> Result<()> {
        let mut out = std::io::stdout().lock();
        while !stopped.load(Ordering::Relaxed) {
            let reached = match feed.next(Duration::from_millis(200))? {
                Some(Ok(m)) => {
                    writeln!(out, "{}", serde_json::to_string(&fleet_events::decode(&m)?)?)?;
                    m.seq
                }
                Some(Err(gap)) => {
                    eprintln!("warning: {gap}");
                    writeln!(out, "{}", serde_json::json!({"gap": {"from": gap.from, "to": gap.to}}))?;
                    gap.to
                }
                None => continue,
            };
            out.flush()?;
            if no_follow && reached >= last {
                break;
            }
        }
        Ok(())
    });
    rt.block_on(async {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {
                stop.store(true, Ordering::Relaxed);
                Ok(())
            }
            done = follow => done?,
        }
    })?;
    Ok(ExitCode::SUCCESS)
}
