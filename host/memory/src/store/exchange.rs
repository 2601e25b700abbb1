//! Episodes between stores: export pages (with their embeddings) and import held-once by uid.

use super::{Memory, MemoryError, insert_row, words};
use crate::episode::Exported;
use crate::index::Quantized;
use rusqlite::params;

impl Memory {
    /// Up to `limit` episodes after id `after`, oldest first, as another store imports them.
    pub fn export(&self, after: i64, limit: usize) -> Result<Vec<Exported>, MemoryError> {
        Ok(self.export_page(after, limit)?.into_iter().map(|(_, e)| e).collect())
    }

    /// [`Self::export`] with each episode's id in this store.
    pub fn export_page(&self, after: i64, limit: usize) -> Result<Vec<(i64, Exported)>, MemoryError> {
        let ids: Vec<i64> = {
            let db = self.db();
            let mut stmt = db.prepare("SELECT id FROM memory_episodes WHERE id > ?1 ORDER BY id LIMIT ?2")?;
            stmt.query_map(params![after, limit as i64], |r| r.get(0))?.collect::<Result<_, _>>()?
        };
        ids.into_iter()
            .map(|id| {
                let e = self.episode(id, false)?;
                let exported = Exported {
                    uid: e.uid,
                    origin: e.origin,
                    at_ms: e.at_ms,
                    episode: e.body,
                    reflections: e.reflections,
                    vector: self.vector(id)?,
                };
                Ok((id, exported))
            })
            .collect()
    }

    /// Import episodes (an export, or the fleet's) in one transaction; those already held (by
    /// uid) are skipped. The ids of those added; those that came without an embedding are
    /// embedded in the background.
    pub fn import(&self, episodes: &[Exported]) -> Result<Vec<i64>, MemoryError> {
        let now = self.now();
        let mut added = Vec::new();
        let mut fresh: Vec<&Exported> = Vec::new();
        let mut later = Vec::new();
        {
            let mut db = self.db();
            let tx = db.transaction()?;
            for x in episodes {
                if x.uid.is_empty() || x.uid.len() > 256 || x.origin.len() > 256 {
                    return Err(MemoryError::Invalid(
                        "an imported episode's `uid` and `origin` are 1 to 256 bytes".into(),
                    ));
                }
                let held: bool =
                    tx.query_row("SELECT count(*) FROM memory_episodes WHERE uid = ?1", [&x.uid], |r| {
                        r.get(0)
                    })?;
                if held {
                    continue;
                }
                // A vector that is not a finite one of the model's size is recomputed here.
                let q = x
                    .vector
                    .as_deref()
                    .filter(|v| v.len() == crate::embed::DIM && v.iter().all(|c| c.is_finite()))
                    .map(|v| Quantized::of(&crate::embed::normalized(v.to_vec())));
                let id = insert_row(
                    &tx,
                    &x.episode,
                    Some((&x.uid, x.at_ms)),
                    &x.origin,
                    now,
                    q.as_ref(),
                    &x.reflections,
                )?;
                fresh.push(x);
                match q {
                    Some(q) => added.push((id, Some(q))),
                    None => {
                        later.push(id);
                        added.push((id, None));
                    }
                }
            }
            tx.commit()?;
        }
        self.indexed(|ix| {
            for ((id, q), x) in added.iter().zip(fresh) {
                ix.add(*id, q.as_ref(), &words(&x.episode, &x.reflections));
            }
        });
        later.into_iter().for_each(|id| self.embed_later(id));
        Ok(added.into_iter().map(|(id, _)| id).collect())
    }

    /// Episode `id`'s embedding as stored (quantized), if it has one.
    fn vector(&self, id: i64) -> Result<Option<Vec<f32>>, MemoryError> {
        let blob: Option<Vec<u8>> =
            self.db().query_row("SELECT vector FROM memory_episodes WHERE id = ?1", [id], |r| r.get(0))?;
        Ok(blob
            .and_then(|b| Quantized::from_bytes(&b))
            .map(|q| q.q.iter().map(|c| f32::from(*c) * q.scale).collect()))
    }
}
