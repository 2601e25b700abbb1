//! `bardo records`: the action and outcome records of writes, from the audit log.

use anyhow::Result;
use std::path::Path;
use std::process::ExitCode;

/// `bardo records`: one line per write, or JSON.
pub(crate) fn records(
    file: &Path,
    permit: Option<&str>,
    status: Option<&str>,
    json: bool,
) -> Result<ExitCode> {
    use bardo_safety::records::{self, ActionStatus};
    let wanted = match status {
        None => None,
        Some(s) => Some(serde_json::from_value::<ActionStatus>(serde_json::json!(s)).map_err(|_| {
            anyhow::anyhow!(
                "unknown status `{s}`; use executed, partially-executed, sent, blocked or deferred"
            )
        })?),
    };
    let all = records::read(file).map_err(|e| anyhow::anyhow!(e))?;
    let shown: Vec<_> = all
        .into_iter()
        .filter(|r| permit.is_none_or(|p| r.permit_id == p) && wanted.is_none_or(|w| r.status == w))
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&shown)?);
        return Ok(ExitCode::SUCCESS);
    }
    let money = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.4}"));
    let header = ["time", "permit", "action", "status", "tool", "gas $", "p&l $", "detail"];
    let mut rows = vec![header.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>()];
    for r in &shown {
        let transactions = || {
            let each: Vec<String> = r
                .transactions
                .iter()
                .map(|t| format!("{}/{} {} {}", t.step + 1, t.steps, t.state, t.tx_hash))
                .collect();
            each.join("; ")
        };
        let detail = match (&r.block_reason, &r.outcome) {
            _ if r.status == ActionStatus::Sent => {
                format!(
                    "sent, no outcome on record (`bardo audit-log verify` resolves it): {}",
                    transactions()
                )
            }
            _ if r.status == ActionStatus::PartiallyExecuted => format!("HALF DONE: {}", transactions()),
            (Some(why), _) => why.clone(),
            (None, Some(o)) if o.verified => format!(
                "verified from the {}; tx {}",
                o.ground_truth_source,
                r.tx_hash.as_deref().unwrap_or("-")
            ),
            (None, Some(o)) => format!("DIVERGED: {}", o.divergence.join("; ")),
            (None, None) => "open".into(),
        };
        rows.push(vec![
            bardo_safety::permit::utc(r.time_ms),
            r.permit_id.clone(),
            r.action_type.clone(),
            serde_json::to_value(r.status)?.as_str().unwrap_or_default().to_owned(),
            r.tool_name.clone().unwrap_or_else(|| "-".into()),
            money(r.gas_cost),
            money(r.outcome.as_ref().and_then(|o| o.pnl_impact)),
            detail,
        ]);
    }
    print!("{}", crate::human::table(&rows));
    println!("{} records in {}", shown.len(), file.display());
    Ok(ExitCode::SUCCESS)
}
