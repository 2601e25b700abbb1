//! The write path's episodes: every write it executed and every write it blocked, recorded in
//! the agent's memory as it is audited, without an agent asking. One way only: the write path
//! holds a [`Recorder`], which adds episodes and cannot read them, so nothing in memory reaches
//! a hook, a scope, a price or a limit.

use crate::audit_log::AuditEvent;
use bardo_core::sync::lock;
use bardo_memory::{NewEpisode, Outcome, Recorder};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// Permits whose action and tool are remembered until their outcome: more than any host has
/// open at once; the oldest are dropped past it.
const OPEN_MAX: usize = 4_096;

/// Turns audit records into episodes.
#[derive(Debug)]
pub(crate) struct Episodes {
    recorder: Recorder,
    /// permit → (action kind, tool), from the permit's creation to its outcome.
    open: Mutex<HashMap<String, (String, String)>>,
}

impl Episodes {
    /// Record into `recorder`.
    pub(crate) fn new(recorder: Recorder) -> Self {
        Self { recorder, open: Mutex::default() }
    }

    /// Remember what permit `permit_id` does, for its outcome's episode (a commit in another
    /// process than its preview).
    pub(crate) fn note(&self, permit_id: &str, kind: &str, tool: &str) {
        let mut open = lock(&self.open);
        if open.len() >= OPEN_MAX {
            open.clear();
        }
        open.insert(permit_id.to_owned(), (kind.to_owned(), tool.to_owned()));
    }

    /// Record the episodes `events` complete.
    pub(crate) fn observe(&self, events: &[AuditEvent]) {
        for e in events {
            if let Some(episode) = self.episode(e) {
                self.recorder.record(episode);
            }
        }
    }

    fn episode(&self, e: &AuditEvent) -> Option<NewEpisode> {
        let mut open = lock(&self.open);
        match e {
            AuditEvent::PermitCreated { permit_id, kind, tool, .. } => {
                drop(open);
                self.note(permit_id, kind, tool);
                None
            }
            AuditEvent::ActionBlocked { permit_id, kind, tool, code, reason } => {
                Some(blocked(permit_id, kind, tool.as_deref().unwrap_or("none"), code, reason, "preview"))
            }
            AuditEvent::PermitRefused { permit_id, code, reason } => {
                let (kind, tool) = open.remove(permit_id)?;
                Some(blocked(permit_id, &kind, &tool, code, reason, "commit"))
            }
            AuditEvent::OutcomeRecorded { permit_id, gas_cost_usd, outcome } => {
                let (kind, tool) =
                    open.remove(permit_id).unwrap_or_else(|| ("unknown".into(), "unknown".into()));
                let diverged = !outcome.divergence.is_empty();
                let success = outcome.verified && !diverged;
                let money = |v: Option<f64>| v.map_or("unpriced".to_owned(), |v| format!("{v:.2} USD"));
                Some(NewEpisode {
                    kind: "write.executed".into(),
                    decided: format!("`{kind}` planned by `{tool}`, checked, simulated and permitted"),
                    done: format!("executed `{kind}` under permit {permit_id}"),
                    outcome: if success { Outcome::Success } else { Outcome::Failure },
                    result: format!(
                        "value change {} (gas {}); {}",
                        money(outcome.pnl_impact),
                        money(*gas_cost_usd),
                        if diverged {
                            format!("diverged from the declaration: {}", outcome.divergence.join("; "))
                        } else if outcome.verified {
                            "as declared".to_owned()
                        } else {
                            "not verified against the receipts".to_owned()
                        }
                    ),
                    tags: if diverged { vec!["outcome-divergence".into()] } else { Vec::new() },
                    context: BTreeMap::from([("action".into(), kind), ("tool".into(), tool)]),
                    links: links(permit_id),
                    ..Default::default()
                })
            }
            AuditEvent::PermitCancelled { permit_id } | AuditEvent::PermitExpired { permit_id } => {
                open.remove(permit_id);
                None
            }
            _ => None,
        }
    }
}

fn links(permit_id: &str) -> serde_json::Value {
    json!({"permit_id": permit_id, "show": format!("bardo records --permit {permit_id}")})
}

fn blocked(permit_id: &str, kind: &str, tool: &str, code: &str, reason: &str, at: &str) -> NewEpisode {
    NewEpisode {
        kind: "write.blocked".into(),
        decided: format!("asked to `{kind}` (tool `{tool}`)"),
        done: format!("the safety chain refused it at {at}"),
        outcome: Outcome::Blocked,
        result: format!("{code}: {}", reason.chars().take(bardo_memory::MAX_FIELD / 2).collect::<String>()),
        context: BTreeMap::from([
            ("action".into(), kind.to_owned()),
            ("tool".into(), tool.to_owned()),
            ("code".into(), code.to_owned()),
            ("at".into(), at.to_owned()),
        ]),
        links: links(permit_id),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    /// Memory never steers safety, by construction: of the memory crate, the safety chain names
    /// only what adds an episode — no store, no search, nothing that reads.
    #[test]
    fn the_safety_chain_can_only_write_to_memory() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut named = std::collections::BTreeSet::new();
        let mut stack = vec![src];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("src") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("source");
                // Tests aside (this one names the crate in its own text).
                let text = text.split("#[cfg(test)]").next().unwrap_or_default();
                for (i, _) in text.match_indices("bardo_memory::") {
                    let rest = &text[i + "bardo_memory::".len()..];
                    let item: String =
                        rest.chars().take_while(|c| c.is_alphanumeric() || "_{}, ".contains(*c)).collect();
                    named.insert(item.trim().trim_end_matches(';').to_owned());
                }
            }
        }
        let allowed = ["Recorder", "MAX_FIELD", "{NewEpisode, Outcome, Recorder}"];
        for item in &named {
            assert!(allowed.contains(&item.as_str()), "the safety chain names bardo_memory::{item}");
        }
        assert!(named.iter().any(|n| n.contains("Recorder")), "{named:?}");
    }
}
