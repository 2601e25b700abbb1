//! Search: the word and vector indexes (built on the first search, kept current by every
//! change after), and hybrid search fused by reciprocal rank.

use super::{MAX_LIMIT, Memory, MemoryError, json, words};
use crate::episode::{Episode, NewEpisode, Reflection};
use crate::index::{Quantized, VectorIndex};
use crate::words::WordIndex;
use rusqlite::Connection;
use serde::Serialize;
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// Episodes still without an embedding that a search embeds first (the newest).
const PENDING_AT_SEARCH: usize = 64;
/// The constant of reciprocal-rank fusion (Cormack et al.): ranks from words and from meaning
/// add as `1 / (K + rank)`.
const RRF_K: f64 = 60.0;

/// One found episode.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// The episode.
    pub episode: Episode,
    /// Its fused score.
    pub score: f64,
    /// Its rank by words (1 = best), if the words matched.
    pub lexical_rank: Option<usize>,
    /// Its cosine to the query, if it was among the nearest by meaning.
    pub similarity: Option<f32>,
}

/// A search's answer.
#[derive(Debug, Clone, Serialize)]
pub struct Found {
    /// `hybrid` (words and meaning) or `lexical` (words only: no model).
    pub mode: &'static str,
    /// Why meaning was not searched, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexical_because: Option<String>,
    /// The episodes, best first.
    pub hits: Vec<Hit>,
}

/// The search indexes over a store's episodes.
pub(super) struct Indexes {
    vectors: RwLock<VectorIndex>,
    words: RwLock<WordIndex>,
}

impl Indexes {
    /// Episode `id`, its embedding (if any) and its words.
    pub(super) fn add(&self, id: i64, vector: Option<&Quantized>, text: &str) {
        if let Some(q) = vector {
            self.set_vector(id, q);
        }
        self.set_words(id, text);
    }

    /// Episode `id`'s embedding, new or replaced.
    pub(super) fn set_vector(&self, id: i64, q: &Quantized) {
        self.vectors.write().unwrap_or_else(|p| p.into_inner()).insert(id, q);
    }

    /// Episode `id`'s words, new or replaced (a reflection adds to them).
    pub(super) fn set_words(&self, id: i64, text: &str) {
        self.words.write().unwrap_or_else(|p| p.into_inner()).insert(id, text);
    }

    /// Forget episodes `ids`.
    pub(super) fn remove(&self, ids: &[i64]) {
        let gone: std::collections::HashSet<i64> = ids.iter().copied().collect();
        self.vectors.write().unwrap_or_else(|p| p.into_inner()).retain(|id| !gone.contains(&id));
        let mut words = self.words.write().unwrap_or_else(|p| p.into_inner());
        ids.iter().for_each(|id| words.remove(*id));
    }
}

/// The word and vector indexes, from every episode in the store.
fn build_indexes(db: &Connection) -> Result<Indexes, MemoryError> {
    let (mut vectors, mut word_index) = (VectorIndex::default(), WordIndex::default());
    let mut stmt = db.prepare(
        "SELECT e.id, e.vector, e.body, group_concat(r.critique, '. ') FROM memory_episodes e
         LEFT JOIN memory_reflections r ON r.episode = e.id GROUP BY e.id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, Option<Vec<u8>>>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Option<String>>(3)?,
        ))
    })?;
    for row in rows {
        let (id, blob, body, critiques) = row?;
        if let Some(v) = blob.as_deref().and_then(Quantized::from_bytes) {
            vectors.insert(id, &v);
        }
        let episode: NewEpisode = json(&body)?;
        let reflections: Vec<Reflection> =
            critiques.into_iter().map(|critique| Reflection { at_ms: 0, critique }).collect();
        word_index.insert(id, &words(&episode, &reflections));
    }
    Ok(Indexes { vectors: RwLock::new(vectors), words: RwLock::new(word_index) })
}

impl Memory {
    /// The indexes, built on first use under the store's lock and published before it is
    /// released: a change committed after the build read the rows finds them built and applies
    /// itself ([`Self::indexed`]); one committed before is in what the build read.
    pub(super) fn indexes(&self) -> Result<&Indexes, MemoryError> {
        if let Some(built) = self.0.indexes.get() {
            return Ok(built);
        }
        let db = self.db();
        if self.0.indexes.get().is_none() {
            let _ = self.0.indexes.set(build_indexes(&db)?);
        }
        drop(db);
        self.0.indexes.get().ok_or_else(|| MemoryError::Invalid("the indexes were not built".into()))
    }

    /// Apply a change just committed to the indexes, if they are built (else their build reads it).
    pub(super) fn indexed(&self, f: impl FnOnce(&Indexes)) {
        if let Some(built) = self.0.indexes.get() {
            f(built);
        }
    }

    /// Make ready what searching and storing work with, once per process: the indexes, the
    /// model, and the embeddings of what a process that ended too soon left unembedded. Returns
    /// how long that took: the host's time, which a caller with a time budget (a plugin's tool
    /// call) gives back. A model that does not load is no error here: a search says why it
    /// matched by words alone.
    pub fn warm_up(&self) -> Result<Duration, MemoryError> {
        let started = Instant::now();
        self.indexes()?;
        if self.embedder().is_ok() {
            self.embed_pending(PENDING_AT_SEARCH)?;
        }
        Ok(started.elapsed())
    }

    /// Episodes matching `query` by words and, with the model, by meaning; fused by reciprocal
    /// rank. Each one returned is reinforced.
    pub fn search(&self, query: &str, limit: usize) -> Result<Found, MemoryError> {
        let embedded = self.embedder().and_then(|m| m.embed(query));
        if embedded.is_ok() {
            // What a process that ended too soon left unembedded is searched by meaning too.
            self.embed_pending(PENDING_AT_SEARCH)?;
        }
        self.search_embedded(query, embedded.map_err(|e| e.0), limit)
    }

    /// [`Self::search`] with the query's embedding already computed (or why there is none).
    pub fn search_embedded(
        &self,
        query: &str,
        embedded: Result<Vec<f32>, String>,
        limit: usize,
    ) -> Result<Found, MemoryError> {
        let limit = limit.clamp(1, MAX_LIMIT);
        let depth = (limit * 4).max(40);
        let lexical = self.lexical(query, depth)?;
        let (semantic, because) = match embedded {
            Ok(q) => {
                (self.indexes()?.vectors.read().unwrap_or_else(|p| p.into_inner()).nearest(&q, depth), None)
            }
            Err(e) => (Vec::new(), Some(e)),
        };
        let mut fused: std::collections::HashMap<i64, (f64, Option<usize>, Option<f32>)> = Default::default();
        for (rank, id) in lexical.iter().enumerate() {
            let e = fused.entry(*id).or_default();
            e.0 += 1.0 / (RRF_K + rank as f64 + 1.0);
            e.1 = Some(rank + 1);
        }
        for (rank, (id, sim)) in semantic.iter().enumerate() {
            let e = fused.entry(*id).or_default();
            e.0 += 1.0 / (RRF_K + rank as f64 + 1.0);
            e.2 = Some(*sim);
        }
        let mut ranked: Vec<_> = fused.into_iter().collect();
        ranked.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then(b.0.cmp(&a.0)));
        let mut hits = Vec::new();
        for (id, (score, lexical_rank, similarity)) in ranked.into_iter().take(limit) {
            hits.push(Hit { episode: self.episode(id, true)?, score, lexical_rank, similarity });
        }
        Ok(Found {
            mode: if because.is_none() { "hybrid" } else { "lexical" },
            lexical_because: because,
            hits,
        })
    }

    /// Episode ids by BM25 over their words, best first.
    fn lexical(&self, query: &str, depth: usize) -> Result<Vec<i64>, MemoryError> {
        let words = self.indexes()?.words.read().unwrap_or_else(|p| p.into_inner());
        Ok(words.search(query, depth).into_iter().map(|(id, _)| id).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn episode(done: &str) -> NewEpisode {
        serde_json::from_value(serde_json::json!({"kind": "swap", "done": done, "outcome": "success"}))
            .expect("episode")
    }

    /// Opening reads no episode into the indexes; the first search builds them, and what is
    /// recorded before and after is found.
    #[test]
    fn the_indexes_are_built_on_the_first_search_and_kept_current() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("grimoire.sqlite");
        Memory::open(&path, None, "a")
            .expect("open")
            .insert(&episode("swapped USDC for WETH"), None, "host")
            .expect("insert");
        let memory = Memory::open(&path, None, "a").expect("reopen");
        assert!(memory.0.indexes.get().is_none(), "not built at open");
        let found = memory.search("USDC", 5).expect("search");
        assert_eq!(found.hits.len(), 1);
        assert!(memory.0.indexes.get().is_some(), "built by the search");
        memory.insert(&episode("supplied USDC to Aave"), None, "host").expect("insert");
        assert_eq!(memory.search("USDC", 5).expect("search").hits.len(), 2, "kept current");
    }
}
