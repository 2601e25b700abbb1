//! The grimoire: episodes (what the agent did and what came of it) and directives (the
//! operator's or agent's standing instructions), in an embedded SQLite file.

use bardo_core::sync::lock;
use rusqlite::{Connection, params};
use serde::Serialize;
use std::path::Path;
use std::sync::Mutex;

/// Grimoire failures.
#[derive(Debug, thiserror::Error)]
#[error("grimoire: {0}")]
pub struct GrimoireError(String);

impl From<rusqlite::Error> for GrimoireError {
    fn from(e: rusqlite::Error) -> Self {
        Self(e.to_string())
    }
}

/// One remembered episode.
#[derive(Debug, Clone, Serialize)]
pub struct Episode {
    /// Its row id.
    pub id: i64,
    /// When it was recorded, Unix ms.
    pub at_ms: i64,
    /// What kind of episode (a preview, a commit, ...).
    pub kind: String,
    /// What happened, as JSON.
    pub summary: serde_json::Value,
}

/// The store.
pub struct Grimoire {
    db: Mutex<Connection>,
}

impl Grimoire {
    /// Open (or create) the store at `path`; `:memory:` for a throwaway one.
    pub fn open(path: &Path) -> Result<Self, GrimoireError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| GrimoireError(e.to_string()))?;
        }
        let db = Connection::open(path)?;
        db.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE IF NOT EXISTS episodes (
                 id INTEGER PRIMARY KEY AUTOINCREMENT, at_ms INTEGER NOT NULL,
                 kind TEXT NOT NULL, summary TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS directives (
                 key TEXT PRIMARY KEY, value TEXT NOT NULL, at_ms INTEGER NOT NULL);",
        )?;
        Ok(Self { db: Mutex::new(db) })
    }

    fn db(&self) -> std::sync::MutexGuard<'_, Connection> {
        lock(&self.db)
    }

    /// Remember an episode.
    pub fn record(&self, kind: &str, summary: &serde_json::Value) -> Result<i64, GrimoireError> {
        let db = self.db();
        db.execute(
            "INSERT INTO episodes (at_ms, kind, summary) VALUES (?1, ?2, ?3)",
            params![now_ms(), kind, summary.to_string()],
        )?;
        Ok(db.last_insert_rowid())
    }

    /// Episodes whose kind or content mentions every word of `query`, newest first.
    pub fn query(&self, query: &str, limit: usize) -> Result<Vec<Episode>, GrimoireError> {
        let db = self.db();
        let mut stmt = db.prepare("SELECT id, at_ms, kind, summary FROM episodes ORDER BY id DESC")?;
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, at_ms, kind, summary) = row?;
            let text = format!("{kind} {summary}").to_lowercase();
            if words.iter().all(|w| text.contains(w.as_str())) {
                let summary = serde_json::from_str(&summary).unwrap_or(serde_json::Value::String(summary));
                out.push(Episode { id, at_ms, kind, summary });
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }

    /// Merge `delta` into the directives (a null value removes a key); returns them all.
    pub fn update_directives(
        &self,
        delta: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<serde_json::Map<String, serde_json::Value>, GrimoireError> {
        {
            let mut db = self.db();
            let tx = db.transaction()?;
            for (key, value) in delta {
                if value.is_null() {
                    tx.execute("DELETE FROM directives WHERE key = ?1", params![key])?;
                } else {
                    tx.execute(
                        "INSERT INTO directives (key, value, at_ms) VALUES (?1, ?2, ?3)
                         ON CONFLICT(key) DO UPDATE SET value = excluded.value, at_ms = excluded.at_ms",
                        params![key, value.to_string(), now_ms()],
                    )?;
                }
            }
            tx.commit()?;
        }
        self.directives()
    }

    /// Every directive.
    pub fn directives(&self) -> Result<serde_json::Map<String, serde_json::Value>, GrimoireError> {
        let db = self.db();
        let mut stmt = db.prepare("SELECT key, value FROM directives ORDER BY key")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = serde_json::Map::new();
        for row in rows {
            let (k, v) = row?;
            out.insert(k, serde_json::from_str(&v).unwrap_or(serde_json::Value::String(v)));
        }
        Ok(out)
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
