//! The store: episodes, reflections and insights in SQLite (the grimoire's file); their words
//! ([`WordIndex`]) and embeddings ([`VectorIndex`], kept as quantized blobs) indexed in memory.

use crate::decay;
use crate::embed::{EmbedError, Embedder};
use crate::episode::{Episode, Exported, NewEpisode, Reflection};
use crate::index::Quantized;
use bardo_core::sync::lock;
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak, mpsc};

mod exchange;
mod learned;
mod search;

pub use learned::Insight;
use search::Indexes;
pub use search::{Found, Hit};

/// Memory failures.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The SQLite file.
    #[error("memory store: {0}")]
    Store(#[from] rusqlite::Error),
    /// What was asked for does not exist.
    #[error("{0}")]
    NotFound(String),
    /// What was given is unusable.
    #[error("{0}")]
    Invalid(String),
    /// Not the caller's to change: the write path's own episodes.
    #[error("{0}")]
    Denied(String),
}

/// The origin of the write path's episodes begins with this, then the host's origin: only the
/// host records such episodes (and the fleet's sealed feed carries them between hosts); no
/// plugin forgets or imports one.
pub const WRITE_PATH: &str = "write-path@";

/// Whether `origin` is the write path's.
pub fn is_write_path(origin: &str) -> bool {
    origin.starts_with(WRITE_PATH)
}

/// Unix milliseconds now; a test's clock can be simulated.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// Longest text one field of an episode may hold.
pub const MAX_FIELD: usize = 4_096;
/// Most episodes one search returns.
pub const MAX_LIMIT: usize = 100;
/// What the store holds and whether it searches by meaning.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// The SQLite file.
    pub path: PathBuf,
    /// This host's name in the fleet and in exported episodes.
    pub origin: String,
    /// Episodes held.
    pub episodes: u64,
    /// Of which embedded.
    pub embedded: u64,
    /// Insights held.
    pub insights: u64,
    /// The model directory, once loaded.
    pub model: Option<PathBuf>,
    /// Why search is by words only, if it is.
    pub lexical_because: Option<String>,
}

/// What is told of each episode first stored here.
type OnNew = Box<dyn Fn(&Memory, &Exported) + Send + Sync>;

pub(crate) struct Inner {
    db: Mutex<Connection>,
    /// Built on the first search, not at open: a command that never searches never reads
    /// every episode.
    indexes: OnceLock<Indexes>,
    model_dir: Option<PathBuf>,
    embedder: OnceLock<Result<Embedder, EmbedError>>,
    origin: String,
    path: PathBuf,
    clock: Clock,
    /// Episodes recorded without waiting, to embed in the background.
    pending: Mutex<Option<mpsc::Sender<i64>>>,
    /// Told of every episode stored here first (the fleet's replication).
    on_new: OnceLock<OnNew>,
}

/// The memory store (cheap to clone: one store).
#[derive(Clone)]
pub struct Memory(Arc<Inner>);

impl std::fmt::Debug for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memory")
            .field("path", &self.0.path)
            .field("origin", &self.0.origin)
            .finish_non_exhaustive()
    }
}

/// A store's handle that does not keep it open.
#[derive(Clone)]
pub struct WeakMemory(Weak<Inner>);

impl WeakMemory {
    /// The store, while someone else holds it.
    pub fn upgrade(&self) -> Option<Memory> {
        self.0.upgrade().map(Memory)
    }
}

/// The one thing the write path may do with memory: add an episode. It cannot read.
#[derive(Clone)]
pub struct Recorder(WeakMemory);

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Recorder")
    }
}

impl Recorder {
    /// Record `episode`; it is embedded in the background. Failures are logged, never raised:
    /// the write it describes has happened whether or not memory keeps it.
    pub fn record(&self, episode: NewEpisode) {
        let Some(memory) = self.0.upgrade() else { return };
        let origin = format!("{WRITE_PATH}{}", memory.origin());
        match memory.insert(&episode, None, &origin) {
            Ok(id) => memory.embed_later(id),
            Err(e) => tracing::warn!(error = %e, "memory: an episode of the write path was not kept"),
        }
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, MemoryError> {
    serde_json::from_str(text).map_err(|e| MemoryError::Invalid(format!("a stored row is not valid: {e}")))
}

impl Memory {
    /// Open (or create) the store in the SQLite file `path`, embedding with the model in
    /// `model` (loaded on first use; `None`: search by words only), as host `origin`.
    pub fn open(path: &Path, model: Option<PathBuf>, origin: &str) -> Result<Self, MemoryError> {
        Self::open_with_clock(path, model, origin, Arc::new(now_ms))
    }

    /// [`Self::open`] on `clock` (a simulated one: tests of decay).
    pub fn open_with_clock(
        path: &Path,
        model: Option<PathBuf>,
        origin: &str,
        clock: Clock,
    ) -> Result<Self, MemoryError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| MemoryError::Invalid(format!("{}: {e}", dir.display())))?;
        }
        let db = Connection::open(path)?;
        db.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
             CREATE TABLE IF NOT EXISTS memory_episodes (
                 id INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE, origin TEXT NOT NULL,
                 at_ms INTEGER NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
                 stability REAL NOT NULL, last_ms INTEGER NOT NULL, uses INTEGER NOT NULL DEFAULT 0,
                 vector BLOB);
             CREATE TABLE IF NOT EXISTS memory_reflections (
                 id INTEGER PRIMARY KEY AUTOINCREMENT, episode INTEGER NOT NULL, at_ms INTEGER NOT NULL,
                 critique TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS memory_cursors (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
             CREATE TABLE IF NOT EXISTS memory_insights (
                 id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE, source TEXT NOT NULL,
                 kind TEXT, text TEXT NOT NULL, confidence REAL NOT NULL, evidence TEXT NOT NULL,
                 stability REAL NOT NULL, last_ms INTEGER NOT NULL);",
        )?;
        let inner = Arc::new(Inner {
            db: Mutex::new(db),
            indexes: OnceLock::new(),
            model_dir: model,
            embedder: OnceLock::new(),
            origin: origin.to_owned(),
            path: path.to_owned(),
            clock,
            pending: Mutex::new(None),
            on_new: OnceLock::new(),
        });
        let memory = Self(inner);
        memory.start_embedding();
        memory.embed_unembedded()?;
        Ok(memory)
    }

    /// Queue what a process that ended too soon left unembedded (the newest thousand), when
    /// there is a model to embed it with.
    fn embed_unembedded(&self) -> Result<(), MemoryError> {
        if self.0.model_dir.is_none() {
            return Ok(());
        }
        self.unembedded(1_000)?.into_iter().for_each(|id| self.embed_later(id));
        Ok(())
    }

    /// The newest `n` episodes without an embedding.
    fn unembedded(&self, n: usize) -> Result<Vec<i64>, MemoryError> {
        let db = self.db();
        let mut stmt = db.prepare_cached(
            "SELECT id FROM memory_episodes WHERE vector IS NULL ORDER BY id DESC LIMIT ?1",
        )?;
        Ok(stmt.query_map([n as i64], |r| r.get(0))?.collect::<Result<_, _>>()?)
    }

    /// Embed now the newest `n` episodes still without an embedding.
    fn embed_pending(&self, n: usize) -> Result<(), MemoryError> {
        for id in self.unembedded(n)? {
            if let Err(e) = self.embed_stored(id) {
                tracing::debug!(error = %e, "memory: episode {id} stays searchable by words only");
            }
        }
        Ok(())
    }

    /// Call `f` with the store and every episode first stored here (not imported): the fleet
    /// publishes them. `f` is handed the store rather than holding it, so the store can go.
    pub fn on_new(&self, f: impl Fn(&Memory, &Exported) + Send + Sync + 'static) {
        let _ = self.0.on_new.set(Box::new(f));
    }

    /// A handle that does not keep the store open (a background thread's).
    pub fn weak(&self) -> WeakMemory {
        WeakMemory(Arc::downgrade(&self.0))
    }

    /// The SQLite file.
    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// This host's name on the episodes it records.
    pub fn origin(&self) -> &str {
        &self.0.origin
    }

    /// A named position kept with the store (the fleet's replication cursors); 0 when unset.
    pub fn cursor(&self, name: &str) -> Result<i64, MemoryError> {
        let value = self
            .db()
            .query_row("SELECT value FROM memory_cursors WHERE name = ?1", [name], |r| r.get(0))
            .optional()?;
        Ok(value.unwrap_or(0))
    }

    /// Set cursor `name` to `value`.
    pub fn set_cursor(&self, name: &str, value: i64) -> Result<(), MemoryError> {
        self.db().execute(
            "INSERT INTO memory_cursors (name, value) VALUES (?1, ?2)
             ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            params![name, value],
        )?;
        Ok(())
    }

    /// The handle the write path records with.
    pub fn recorder(&self) -> Recorder {
        Recorder(self.weak())
    }

    fn now(&self) -> i64 {
        (self.0.clock)()
    }

    fn db(&self) -> std::sync::MutexGuard<'_, Connection> {
        lock(&self.0.db)
    }

    /// A background thread embeds what [`Recorder`] keeps, so no write waits on the model.
    fn start_embedding(&self) {
        let (tx, rx) = mpsc::channel::<i64>();
        *lock(&self.0.pending) = Some(tx);
        let weak = Arc::downgrade(&self.0);
        let spawned = std::thread::Builder::new().name("memory-embed".into()).spawn(move || {
            while let Ok(id) = rx.recv() {
                let Some(inner) = weak.upgrade() else { return };
                if let Err(e) = Memory(inner).embed_stored(id) {
                    tracing::debug!(error = %e, "memory: episode {id} stays searchable by words only");
                }
            }
        });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "memory: no embedding thread; recorded episodes are searched by words");
        }
    }

    fn embed_later(&self, id: i64) {
        if let Some(tx) = lock(&self.0.pending).as_ref() {
            let _ = tx.send(id);
        }
    }

    /// The model, loaded on first use; why not, if it cannot be.
    pub fn embedder(&self) -> Result<&Embedder, EmbedError> {
        self.0
            .embedder
            .get_or_init(|| match &self.0.model_dir {
                Some(dir) => Embedder::load(dir),
                None => Err(EmbedError("no model configured ([memory] model)".into())),
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    fn embed_stored(&self, id: i64) -> Result<(), MemoryError> {
        let body: Option<String> = self
            .db()
            .query_row("SELECT body FROM memory_episodes WHERE id = ?1", [id], |r| r.get(0))
            .optional()?;
        let Some(body) = body else { return Ok(()) };
        let episode: NewEpisode = json(&body)?;
        let vector =
            self.embedder().and_then(|e| e.embed(&episode.text())).map_err(|e| MemoryError::Invalid(e.0))?;
        self.set_vector(id, &vector)
    }

    fn set_vector(&self, id: i64, vector: &[f32]) -> Result<(), MemoryError> {
        let q = Quantized::of(vector);
        let changed = self
            .db()
            .execute("UPDATE memory_episodes SET vector = ?2 WHERE id = ?1", params![id, q.to_bytes()])?;
        if changed == 1 {
            self.indexed(|ix| ix.set_vector(id, &q));
        }
        Ok(())
    }

    /// Insert an episode first recorded here, as `origin` (this store's, or the write path's);
    /// its id. `vector`: its embedding, if computed.
    fn insert(&self, e: &NewEpisode, vector: Option<&[f32]>, origin: &str) -> Result<i64, MemoryError> {
        let now = self.now();
        let q = vector.map(Quantized::of);
        let id = {
            let mut db = self.db();
            let tx = db.transaction()?;
            let id = insert_row(&tx, e, None, origin, now, q.as_ref(), &[])?;
            tx.commit()?;
            id
        };
        self.indexed(|ix| ix.add(id, q.as_ref(), &words(e, &[])));
        if let Some(f) = self.0.on_new.get() {
            f(
                self,
                &Exported {
                    uid: format!("{origin}/{id}"),
                    origin: origin.to_owned(),
                    at_ms: now,
                    episode: e.clone(),
                    reflections: Vec::new(),
                    vector: vector.map(<[f32]>::to_vec),
                },
            );
        }
        Ok(id)
    }

    /// Store an episode, embedded now when the model loads (else searchable by words only).
    pub fn store(&self, e: &NewEpisode) -> Result<Episode, MemoryError> {
        let vector = self.embedder().ok().and_then(|m| m.embed(&e.text()).ok());
        let id = self.insert(e, vector.as_deref(), &self.0.origin)?;
        self.episode(id, false)
    }

    /// Episode `id` (its retrieval reinforces it).
    pub fn get(&self, id: i64) -> Result<Episode, MemoryError> {
        self.episode(id, true)
    }

    fn episode(&self, id: i64, reinforce: bool) -> Result<Episode, MemoryError> {
        let now = self.now();
        let db = self.db();
        let row = db
            .query_row(
                "SELECT uid, origin, at_ms, body, stability, last_ms, uses, vector IS NOT NULL
                 FROM memory_episodes WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, f64>(4)?,
                        r.get::<_, i64>(5)?,
                        r.get::<_, u32>(6)?,
                        r.get::<_, bool>(7)?,
                    ))
                },
            )
            .optional()?;
        let Some((uid, origin, at_ms, body, stability, last, uses, embedded)) = row else {
            return Err(MemoryError::NotFound(format!(
                "no episode {id}: search memory for the episodes it holds"
            )));
        };
        // The retention it had when retrieved; the retrieval then strengthens it.
        let retention = decay::retention(now, last, stability);
        if reinforce {
            db.execute(
                "UPDATE memory_episodes SET stability = stability * ?2, last_ms = ?3, uses = uses + 1 WHERE id = ?1",
                params![id, decay::REINFORCEMENT, now],
            )?;
        }
        let mut stmt = db.prepare_cached(
            "SELECT at_ms, critique FROM memory_reflections WHERE episode = ?1 ORDER BY id",
        )?;
        let reflections = stmt
            .query_map([id], |r| Ok(Reflection { at_ms: r.get(0)?, critique: r.get(1)? }))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Episode {
            id,
            uid,
            origin,
            at_ms,
            body: json(&body)?,
            reflections,
            retention,
            stability_days: if reinforce { decay::reinforced(stability) } else { stability },
            uses: uses + u32::from(reinforce),
            embedded,
        })
    }

    /// Attach a critique to episode `id` (Reflexion); the episode as it now is.
    pub fn reflect(&self, id: i64, critique: &str) -> Result<Episode, MemoryError> {
        let critique = critique.trim();
        if critique.is_empty() || critique.len() > MAX_FIELD {
            return Err(MemoryError::Invalid(format!("a critique is 1 to {MAX_FIELD} bytes")));
        }
        let episode = self.episode(id, false)?;
        {
            let db = self.db();
            db.execute(
                "INSERT INTO memory_reflections (episode, at_ms, critique) VALUES (?1, ?2, ?3)",
                params![id, self.now(), critique],
            )?;
            let mut reflections = episode.reflections.clone();
            reflections.push(Reflection { at_ms: 0, critique: critique.to_owned() });
            self.indexed(|ix| ix.set_words(id, &words(&episode.body, &reflections)));
        }
        self.episode(id, true)
    }

    /// What the store holds.
    pub fn status(&self) -> Result<Status, MemoryError> {
        let lexical_because = self.embedder().err().map(|e| e.0);
        let db = self.db();
        let count = |sql: &str| db.query_row(sql, [], |r| r.get::<_, u64>(0));
        Ok(Status {
            path: self.0.path.clone(),
            origin: self.0.origin.clone(),
            episodes: count("SELECT count(*) FROM memory_episodes")?,
            embedded: count("SELECT count(*) FROM memory_episodes WHERE vector IS NOT NULL")?,
            insights: count("SELECT count(*) FROM memory_insights")?,
            model: self.0.embedder.get().and_then(|e| e.as_ref().ok()).map(|e| e.dir().to_owned()),
            lexical_because,
        })
    }

    /// Wait until every episode recorded so far is embedded (or `timeout` passes); whether it
    /// finished.
    pub fn settle(&self, timeout: std::time::Duration) -> bool {
        let until = std::time::Instant::now() + timeout;
        loop {
            let waiting: u64 = self
                .db()
                .query_row("SELECT count(*) FROM memory_episodes WHERE vector IS NULL", [], |r| r.get(0))
                .unwrap_or(0);
            if waiting == 0 || self.embedder().is_err() {
                return true;
            }
            if std::time::Instant::now() > until {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// One episode's rows: the episode (a fresh one's uid is `<origin>/<id>`), its reflections and
/// its words.
fn insert_row(
    tx: &rusqlite::Transaction<'_>,
    e: &NewEpisode,
    imported: Option<(&str, i64)>,
    origin: &str,
    now: i64,
    vector: Option<&Quantized>,
    reflections: &[Reflection],
) -> Result<i64, MemoryError> {
    check(e)?;
    let body = serde_json::to_string(e).map_err(|e| MemoryError::Invalid(e.to_string()))?;
    let (uid, at) = imported.unwrap_or(("", now));
    let placeholder = if uid.is_empty() { format!("pending-{now}") } else { uid.to_owned() };
    tx.execute(
        "INSERT INTO memory_episodes (uid, origin, at_ms, kind, body, stability, last_ms, vector)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            placeholder,
            origin,
            at,
            e.kind,
            body,
            decay::initial_stability(&e.tags),
            now,
            vector.map(Quantized::to_bytes)
        ],
    )?;
    let id = tx.last_insert_rowid();
    if uid.is_empty() {
        tx.execute(
            "UPDATE memory_episodes SET uid = ?2 WHERE id = ?1",
            params![id, format!("{origin}/{id}")],
        )?;
    }
    for r in reflections {
        tx.execute(
            "INSERT INTO memory_reflections (episode, at_ms, critique) VALUES (?1, ?2, ?3)",
            params![id, r.at_ms, r.critique],
        )?;
    }
    Ok(id)
}

fn words(e: &NewEpisode, reflections: &[Reflection]) -> String {
    let mut text = e.text();
    for r in reflections {
        text.push_str(". ");
        text.push_str(&r.critique);
    }
    text
}

/// An episode's fields are bounded: memory is not a file store.
fn check(e: &NewEpisode) -> Result<(), MemoryError> {
    if e.kind.trim().is_empty() || e.kind.len() > 64 {
        return Err(MemoryError::Invalid("`kind` is 1 to 64 bytes".into()));
    }
    for (name, value) in
        [("observed", &e.observed), ("decided", &e.decided), ("done", &e.done), ("result", &e.result)]
    {
        if value.len() > MAX_FIELD {
            return Err(MemoryError::Invalid(format!(
                "`{name}` is {} bytes; at most {MAX_FIELD}",
                value.len()
            )));
        }
    }
    if e.tags.len() > 32 || e.context.len() > 32 || e.links.to_string().len() > MAX_FIELD {
        return Err(MemoryError::Invalid("at most 32 tags, 32 context entries and 4 KiB of links".into()));
    }
    Ok(())
}
