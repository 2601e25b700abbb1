//! `bardo fleet reanchor`: after this host halted on tampering with the fleet's streams (a
//! stream deleted, recreated, cut, replayed into, its founding marker removed — see
//! `bardo_cluster`'s anchor), the operator who checked them accepts them as they are now. It
//! needs the host key, and the audit chain records who re-anchored, why, and what the host had
//! anchored before.

use crate::{host_key_if_present, safety_of};
use anyhow::{Context, Result, anyhow};
use bardo_cluster::{Cluster, ClusterSettings};
use bardo_runtime::Config;
use bardo_safety::audit_log::{AuditEvent, AuditLog};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Subcommand)]
pub(crate) enum FleetAction {
    /// Accept the fleet's streams as they are now, after this host halted on tampering with
    /// them and you checked them (a fleet whose founding marker is gone is founded again; its
    /// spending ledger then counts from what the state holds). Needs the host key; audited.
    Reanchor {
        /// Why (recorded in the audit chain).
        #[arg(long)]
        reason: String,
    },
}

pub(crate) fn run(config: &Config, action: FleetAction) -> Result<ExitCode> {
    let FleetAction::Reanchor { reason } = action;
    let settings = config
        .optional::<ClusterSettings>()?
        .ok_or_else(|| anyhow!("bardo.toml has no [cluster]: there is no fleet to re-anchor"))?;
    let key = host_key_if_present(config)?.ok_or_else(|| {
        anyhow!("the host key ([safety] host_key) is not here: only an operator who holds it re-anchors")
    })?;
    let (cluster, before) =
        Cluster::connect_reanchoring(&settings.client_config(config.base()), Arc::new(key.clone()))
            .context("re-anchoring on the fleet's streams")?;
    // The audit chain's head seen before goes too (kept aside): the chain is accepted as it is.
    let head = config.resolve(&safety_of(config).audit_log).with_extension("fleet-head");
    if head.exists() {
        let aside = head.with_extension(format!("fleet-head.before-reanchor-{}", unix_secs()));
        std::fs::rename(&head, &aside).with_context(|| format!("moving {} aside", head.display()))?;
    }
    let audit = AuditLog::shared(cluster.clone(), &cluster.audit_label(), key).with_checkpoint(&head)?;
    let now = cluster.anchored();
    audit.append(AuditEvent::FleetReanchored {
        reason: reason.clone(),
        before: before.clone(),
        now: now.clone(),
    })?;
    println!("re-anchored on the fleet's streams as they are now: {now}");
    println!("anchored before: {before}");
    println!("recorded in {}; this host runs on the fleet again", cluster.audit_label());
    Ok(ExitCode::SUCCESS)
}

fn unix_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
