//! What episodes teach: insights distilled from them (and stated by agents), and forgetting
//! what decayed.

use super::{MAX_FIELD, MAX_LIMIT, Memory, MemoryError, json};
use crate::decay;
use crate::episode::NewEpisode;
use crate::insights::{self, Case};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;

/// An insight as returned.
#[derive(Debug, Clone, Serialize)]
pub struct Insight {
    /// Its id.
    pub id: i64,
    /// `distilled` (from episodes) or `agent` (stated by an agent).
    pub source: String,
    /// The kind of episode it is about, if one.
    pub kind: Option<String>,
    /// The rule.
    pub text: String,
    /// How strongly episodes support it, 0..1 (an agent's own: 0.5).
    pub confidence: f64,
    /// The episodes behind it.
    pub evidence: Vec<i64>,
    /// Retention now (never under 0.1).
    pub retention: f64,
}

impl Memory {
    /// Insights: rules distilled anew from every episode with a known outcome (of `kind`, if
    /// given), with those agents stated; strongest first. Each one returned is reinforced.
    pub fn insights(&self, kind: Option<&str>, limit: usize) -> Result<Vec<Insight>, MemoryError> {
        let now = self.now();
        let cases = self.cases(kind)?;
        let rules = insights::distill(&cases);
        {
            let mut db = self.db();
            let tx = db.transaction()?;
            for r in &rules {
                let key = format!("distilled/{}/{}/{:?}", r.kind, r.feature, r.polarity);
                tx.execute(
                    "INSERT INTO memory_insights (key, source, kind, text, confidence, evidence, stability, last_ms)
                     VALUES (?1, 'distilled', ?2, ?3, ?4, ?5, ?6, ?7)
                     ON CONFLICT(key) DO UPDATE SET text = excluded.text, confidence = excluded.confidence,
                         evidence = excluded.evidence",
                    params![
                        key,
                        r.kind,
                        r.text,
                        r.confidence,
                        serde_json::to_string(&r.evidence).unwrap_or_default(),
                        decay::BASE_STABILITY_DAYS,
                        now
                    ],
                )?;
            }
            tx.commit()?;
        }
        let db = self.db();
        let mut stmt = db.prepare(
            "SELECT id, source, kind, text, confidence, evidence, stability, last_ms FROM memory_insights
             WHERE ?1 IS NULL OR kind = ?1",
        )?;
        let mut out = stmt
            .query_map([kind], |r| {
                let stability: f64 = r.get(6)?;
                let retention = decay::retention(now, r.get(7)?, stability).max(decay::INSIGHT_FLOOR);
                Ok(Insight {
                    id: r.get(0)?,
                    source: r.get(1)?,
                    kind: r.get(2)?,
                    text: r.get(3)?,
                    confidence: r.get(4)?,
                    evidence: serde_json::from_str(&r.get::<_, String>(5)?).unwrap_or_default(),
                    retention,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        out.sort_by(|a, b| (b.confidence * b.retention).total_cmp(&(a.confidence * a.retention)));
        out.truncate(limit.clamp(1, MAX_LIMIT));
        for i in &out {
            db.execute(
                "UPDATE memory_insights SET stability = stability * ?2, last_ms = ?3 WHERE id = ?1",
                params![i.id, decay::REINFORCEMENT, now],
            )?;
        }
        Ok(out)
    }

    fn cases(&self, kind: Option<&str>) -> Result<Vec<Case>, MemoryError> {
        let db = self.db();
        let mut stmt = db.prepare("SELECT id, body FROM memory_episodes WHERE ?1 IS NULL OR kind = ?1")?;
        let rows = stmt.query_map([kind], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        let mut cases = Vec::new();
        for row in rows {
            let (id, body) = row?;
            let e: NewEpisode = json(&body)?;
            if let Some(success) = e.outcome.succeeded() {
                cases.push(Case { id, kind: e.kind.clone(), success, features: e.features() });
            }
        }
        Ok(cases)
    }

    /// Keep an agent's own insight (ExpeL's "add"), citing the episodes behind it.
    pub fn add_insight(
        &self,
        kind: Option<&str>,
        text: &str,
        evidence: &[i64],
    ) -> Result<Insight, MemoryError> {
        let text = text.trim();
        if text.is_empty() || text.len() > MAX_FIELD {
            return Err(MemoryError::Invalid(format!("an insight is 1 to {MAX_FIELD} bytes")));
        }
        for id in evidence {
            self.episode(*id, false)?;
        }
        let now = self.now();
        let db = self.db();
        db.execute(
            "INSERT INTO memory_insights (key, source, kind, text, confidence, evidence, stability, last_ms)
             VALUES (?1, 'agent', ?2, ?3, 0.5, ?4, ?5, ?6)",
            params![
                format!("agent/{now}/{}", text.len()),
                kind,
                text,
                serde_json::to_string(evidence).unwrap_or_default(),
                decay::BASE_STABILITY_DAYS,
                now
            ],
        )?;
        let id = db.last_insert_rowid();
        Ok(Insight {
            id,
            source: "agent".into(),
            kind: kind.map(str::to_owned),
            text: text.to_owned(),
            confidence: 0.5,
            evidence: evidence.to_vec(),
            retention: 1.0,
        })
    }

    /// Forget episodes: those named, and every one whose retention fell under `below`; the
    /// ids forgotten. The write path's episodes are the record of what the host did: never
    /// forgotten by decay, and one named is refused.
    pub fn forget(&self, ids: &[i64], below: Option<f64>) -> Result<Vec<i64>, MemoryError> {
        let now = self.now();
        let mut gone: Vec<i64> = Vec::new();
        {
            let mut db = self.db();
            let tx = db.transaction()?;
            if let Some(threshold) = below {
                let mut stmt = tx.prepare("SELECT id, stability, last_ms, origin FROM memory_episodes")?;
                let rows = stmt.query_map([], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, f64>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                })?;
                for row in rows {
                    let (id, s, last, origin) = row?;
                    if decay::retention(now, last, s) < threshold && !crate::is_write_path(&origin) {
                        gone.push(id);
                    }
                }
            }
            for id in ids {
                let origin: Option<String> = tx
                    .query_row("SELECT origin FROM memory_episodes WHERE id = ?1", [id], |r| r.get(0))
                    .optional()?;
                match origin {
                    None => return Err(MemoryError::NotFound(format!("no episode {id} to forget"))),
                    Some(o) if crate::is_write_path(&o) => {
                        return Err(MemoryError::Denied(format!(
                            "episode {id} is the write path's record of a write ({o}); it is kept"
                        )));
                    }
                    Some(_) => gone.push(*id),
                }
            }
            gone.sort_unstable();
            gone.dedup();
            for id in &gone {
                tx.execute("DELETE FROM memory_episodes WHERE id = ?1", [id])?;
                tx.execute("DELETE FROM memory_reflections WHERE episode = ?1", [id])?;
            }
            tx.commit()?;
        }
        self.indexed(|ix| ix.remove(&gone));
        Ok(gone)
    }
}
