//! `bardo audit-log show` and `verify`: the hash-linked log, and whether it is whole — its links
//! and checkpoint intact, and every transaction it says was sent resolved against the chain.

use crate::{fleet_chain, host_key_if_present, safety_of, write_cli};
use anyhow::{Context, Result};
use bardo_cluster::Cluster;
use bardo_core::Runtime;
use bardo_runtime::Config;
use bardo_safety::sends::unresolved;
use std::path::PathBuf;
use std::process::ExitCode;

/// The records of the log `file` (default: the configured one, or the fleet's stream).
fn lines(config: &Config, fleet: Option<&Cluster>, file: Option<&PathBuf>) -> Result<Vec<String>> {
    match (file, fleet) {
        (None, Some(cluster)) => {
            Ok(bardo_safety::audit_log::shared::lines_of(cluster, cluster.audit_label().as_ref())?)
        }
        _ => {
            let file = file.cloned().unwrap_or_else(|| config.resolve(&safety_of(config).audit_log));
            let text =
                std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
            Ok(text.lines().map(str::to_owned).collect())
        }
    }
}

/// `bardo audit-log show`.
pub(crate) fn show(config: &Config, file: Option<PathBuf>, json: bool) -> Result<ExitCode> {
    for line in &lines(config, fleet_chain(config)?.as_ref(), file.as_ref())? {
        let v: serde_json::Value = serde_json::from_str(line)?;
        if json {
            println!("{v}");
            continue;
        }
        let mut event = v["event"].clone();
        let kind = event["type"].as_str().unwrap_or("?").to_owned();
        if let Some(o) = event.as_object_mut() {
            o.remove("type");
        }
        let at = v["time_ms"].as_u64().map_or_else(|| "-".to_owned(), bardo_safety::permit::utc);
        println!("{:>4}  {at}  {kind:<17} {event}", v["seq"]);
    }
    Ok(ExitCode::SUCCESS)
}

/// `bardo audit-log verify`: exit 1 when a link or the checkpoint is broken (TAMPERED) or a
/// transaction the log says was sent has no outcome the chain could give it (UNRESOLVED). The
/// host's own log (no `file`) is first recovered: each such send is resolved from the chain and
/// recorded, as every start does.
pub(crate) fn verify(config: &Config, file: Option<PathBuf>, rt: &Runtime) -> Result<ExitCode> {
    let key = host_key_if_present(config)?;
    // A fleet out of reach is `unavailable`, as for every command: not a verdict on the log.
    let fleet = fleet_chain(config)?;
    let chain = || -> Result<(String, u64), String> {
        let verified = match (&file, fleet.clone()) {
            (None, Some(cluster)) => {
                let label = cluster.audit_label();
                let v = bardo_safety::audit_log::shared::verify(&cluster, label.as_ref(), key.as_ref());
                v.map(|(records, _)| (label.clone(), records))
            }
            _ => {
                let file = file.clone().unwrap_or_else(|| config.resolve(&safety_of(config).audit_log));
                let v = bardo_safety::audit_log::verify(&file, key.as_ref());
                v.map(|(records, _)| (file.display().to_string(), records))
            }
        };
        verified.map_err(|e| e.to_string())
    };
    if let Err(e) = chain() {
        println!("TAMPERED: {e}");
        return Ok(ExitCode::from(1));
    }
    let before = unresolved(&lines(config, fleet.as_ref(), file.as_ref())?).len();
    let mut in_flight = Vec::new();
    if file.is_none() && before > 0 {
        // Opening the write path recovers; asked again, it says what is left and in flight.
        let recovered = write_cli::with_write_path(config, None, rt, |path| {
            in_flight = path.recover()?.in_flight;
            Ok(ExitCode::SUCCESS)
        });
        if let Err(e) = recovered {
            eprintln!("bardo: cannot resolve the log's sends from the chain now: {e:#}");
        }
    }
    // Read again: the recovery's records are links of the same chain.
    let (name, records) = match chain() {
        Ok(verified) => verified,
        Err(e) => {
            println!("TAMPERED: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let flying = |id: &str| in_flight.iter().any(|f| f.starts_with(&format!("{id}:")));
    let left: Vec<_> = unresolved(&lines(config, fleet.as_ref(), file.as_ref())?)
        .into_iter()
        .filter(|s| !flying(&s.permit_id))
        .collect();
    let resolved = before.saturating_sub(left.len() + in_flight.len());
    if resolved > 0 {
        println!("resolved from the chain and recorded: {resolved} transactions sent without an outcome");
    }
    if !left.is_empty() {
        println!("UNRESOLVED: {} transactions were sent with no outcome on record:", left.len());
        for s in &left {
            println!(
                "  {}  step {}/{}  nonce {}  transaction {}",
                s.permit_id,
                s.step + 1,
                s.steps,
                s.nonce,
                s.hash
            );
        }
        println!(
            "run `bardo audit-log verify` with the chain reachable to resolve them (one still pending is sent again)"
        );
        return Ok(ExitCode::from(1));
    }
    let sealed = if key.is_some() { "authenticated" } else { "not authenticated: no host key" };
    println!("{name}: intact, {records} records ({sealed})");
    for f in &in_flight {
        println!("  in flight (a commit is sending it now): {f}");
    }
    Ok(ExitCode::SUCCESS)
}
