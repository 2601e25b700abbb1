//! A fleet's shared state on NATS JetStream, for hosts that must agree without a consensus of
//! our own: JetStream replicates and orders, this crate only asks it for two things.
//!
//! - **Documents** (`bardo.<cluster>.state.<key>` in the stream `BARDO_<cluster>_STATE`, one
//!   message kept per subject): read from the stream's leader after noting the stream's last
//!   sequence, changed by publishing at that expected last sequence, so of two hosts changing
//!   state at once exactly one wins and the other re-reads and retries ([`Cluster::update_json`]).
//! - **Chains** (`BARDO_<cluster>_AUDIT`): appends at the expected last sequence, so every host
//!   extends one linear chain ([`Cluster::chain_append`]); deletes and purges are denied.
//! - **Events** (`BARDO_<cluster>_EVENTS`): every host's Event Fabric, one subject per host,
//!   followed by any subscriber from a fleet sequence number ([`Cluster::subscribe_events`]);
//!   **memory** (`BARDO_<cluster>_MEMORY`) likewise, every host's memory episodes.
//!
//! Both check the *stream's* last sequence, not the subject's: nats-server 2.9 (Debian's)
//! checks an expected per-subject sequence against stored messages only, so two clustered
//! publishes in flight at once could both pass it (measured here: lost updates with replicas 3);
//! the stream-wide check counts in-flight proposals. The cost is that any two changes to the
//! state conflict, not only two changes to one document: one retry, never a lost update.
//!
//! Calls block (the safety chain's stores are synchronous) on a private runtime thread, each
//! with a deadline: a host cut from NATS gets [`ClusterError::Unavailable`], retryable, and never
//! falls back to local files.

mod anchor;
mod bridge;
mod events;
mod seal;
pub mod settings;

pub use events::{EventFeed, Feed, FleetMessage, StreamGap};
pub use seal::{Sealer, Tampered};
pub use settings::{ClusterSettings, default_host};

/// The seal, for the fuzz targets (`fuzz/`): not an API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::seal::{open, seal};
}

use async_nats::jetstream::{self, stream};
use bridge::Bridge;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::PathBuf;
use std::time::Duration;

/// Where the fleet's NATS servers are and how to reach them (`[cluster]` in bardo.toml).
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// Server URLs (`nats://127.0.0.1:4222`); the client fails over between them.
    pub servers: Vec<String>,
    /// The fleet's name: its streams are `BARDO_<name>_…`; letters, digits, `_` and `-`.
    pub name: String,
    /// A NATS credentials file (`.creds`), if the servers require one.
    pub creds: Option<PathBuf>,
    /// A token, if the servers require one.
    pub token: Option<String>,
    /// Copies JetStream keeps of each stream (3 on a three-node cluster survives one loss).
    pub replicas: usize,
    /// How long one operation may take before it fails closed.
    pub timeout: Duration,
    /// Where this host anchors what it saw of the fleet's streams (see `anchor`); None: in
    /// memory only, for this process's life.
    pub anchor: Option<PathBuf>,
}

/// Why the cluster could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClusterError {
    /// The servers did not answer in time or the connection is down: retry when they are back.
    /// The host does not fall back to its local files.
    #[error(
        "the NATS cluster ({servers}) is unavailable: {reason}; retry when it is reachable (this host never falls back to local files)"
    )]
    Unavailable {
        /// The servers configured.
        servers: String,
        /// What failed.
        reason: String,
    },
    /// `[cluster]` is not usable as written.
    #[error("[cluster] {0}")]
    Config(String),
    /// A stored document or record does not parse.
    #[error("cluster data `{what}` is unreadable: {reason}")]
    Corrupt {
        /// The document or record.
        what: String,
        /// Why.
        reason: String,
    },
    /// A change kept conflicting with other hosts' changes.
    #[error("`{0}` kept changing under this host (too much contention); retry")]
    Contended(String),
    /// A state document without the fleet's seal for where it is (see [`Sealer`]).
    #[error(transparent)]
    Tampered(#[from] Tampered),
}

impl ClusterError {
    /// Whether trying again later may succeed.
    pub fn retryable(&self) -> bool {
        matches!(self, Self::Unavailable { .. } | Self::Contended(_))
    }
}

/// A document's bytes; None when it was never written or was deleted.
pub type Doc = Option<Vec<u8>>;

/// A document as read: its bytes, or why its seal does not hold.
pub type Checked = Result<Doc, Tampered>;

/// A stored message as it is: its stream sequence and payload.
type Raw = (u64, Vec<u8>);

/// Another host changed the document or chain first: re-read and retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict;

/// A connection to the fleet's NATS cluster and its streams. Cheap to clone.
#[derive(Clone)]
pub struct Cluster {
    inner: std::sync::Arc<Inner>,
}

struct Inner {
    bridge: Bridge,
    state: stream::Stream,
    audit: stream::Stream,
    /// Optional to a write: a feed that could not be opened says why when it is used.
    events: Result<stream::Stream, String>,
    memory: Result<stream::Stream, String>,
    anchor: anchor::Anchor,
    context: jetstream::Context,
    sealer: std::sync::Arc<dyn Sealer>,
    prefix: String,
    servers: String,
    timeout: Duration,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("servers", &self.inner.servers)
            .field("prefix", &self.inner.prefix)
            .finish()
    }
}

/// Most tries of one compare-and-set change before giving up as contended.
const MAX_TRIES: usize = 200;

/// How long connecting may wait for a new fleet's streams (made by this host or by others
/// starting at the same time) to be made and elect their leaders.
const CONNECT_WAIT: Duration = Duration::from_secs(20);

/// The state document saying the fleet made its audit stream (see [`Cluster::connect`]); written
/// last when a fleet is made, after its [`FOUNDED`] documents.
const AUDIT_MARKER: &str = "audit-stream";

/// The fleet-wide emergency halt (a sealed deletion while none is in force).
pub const HALT_DOC: &str = "halt";
/// The phase an agent lowered the whole fleet to (a sealed deletion while none is).
pub const PHASE_DOC: &str = "phase";

/// The fleet's controls, sealed (as deleted) when the fleet is made: from then on each always
/// has a message, so one found missing was removed outside the fleet (JetStream admin rights) and
/// reads as tampered — a missing halt is never "running".
pub const FOUNDED: &[&str] = &[HALT_DOC, PHASE_DOC];

impl Cluster {
    /// Connect and make sure the fleet's streams exist (created with `replicas` copies); every
    /// state document is sealed and checked with `sealer` (the key every host of the fleet holds).
    pub fn connect(config: &ClusterConfig, sealer: std::sync::Arc<dyn Sealer>) -> Result<Self, ClusterError> {
        Self::open(config, sealer, false).map(|(cluster, _)| cluster)
    }

    /// [`Self::connect`] for an operator who checked the fleet's streams after this host halted
    /// on tampering (`bardo fleet reanchor`, with the host key): the anchor is dropped and taken
    /// again from the streams as they are now — a fleet whose founding marker is gone is founded
    /// again. Returns the connection and what the host anchored before (JSON).
    pub fn connect_reanchoring(
        config: &ClusterConfig,
        sealer: std::sync::Arc<dyn Sealer>,
    ) -> Result<(Self, String), ClusterError> {
        Self::open(config, sealer, true)
    }

    fn open(
        config: &ClusterConfig,
        sealer: std::sync::Arc<dyn Sealer>,
        reanchor: bool,
    ) -> Result<(Self, String), ClusterError> {
        let name = &config.name;
        if !is_token(name) {
            return Err(ClusterError::Config(format!(
                "name `{name}`: use letters, digits, `_` and `-` (it names the fleet's streams)"
            )));
        }
        if config.servers.is_empty() {
            return Err(ClusterError::Config("nats: list at least one server URL".into()));
        }
        if config.replicas == 0 || config.replicas > 5 {
            return Err(ClusterError::Config(format!(
                "replicas = {}: JetStream keeps 1 to 5",
                config.replicas
            )));
        }
        let bridge =
            Bridge::new().map_err(|e| ClusterError::Config(format!("cannot start its runtime: {e}")))?;
        let servers = config.servers.join(", ");
        let unavailable = |reason: String| ClusterError::Unavailable { servers: servers.clone(), reason };
        let (urls, creds, token, replicas) =
            (config.servers.clone(), config.creds.clone(), config.token.clone(), config.replicas);
        let prefix = format!("bardo.{name}");
        let (state_name, audit_name) = (format!("BARDO_{name}_STATE"), format!("BARDO_{name}_AUDIT"));
        let (state_subjects, audit_subject) = (format!("{prefix}.state.>"), format!("{prefix}.audit"));
        let events_config = events::stream_config(events::Feed::Events, name, &prefix, replicas);
        let memory_config = events::stream_config(events::Feed::Memory, name, &prefix, replicas);
        let timeout = config.timeout;
        let (marker_sealer, state_subjects_prefix) = (sealer.clone(), format!("{prefix}.state"));
        let opened = bridge.run(timeout.max(CONNECT_WAIT), async move {
            // A node that hangs (stopped, not dead) keeps its TCP connection open: pings are
            // what tell, and three unanswered ones move the client to another node.
            let ping = (timeout / 4).clamp(Duration::from_millis(500), Duration::from_secs(5));
            let mut options = async_nats::ConnectOptions::new()
                .name("bardo")
                .connection_timeout(timeout)
                .request_timeout(Some(timeout))
                .ping_interval(ping);
            if let Some(creds) = creds {
                options = options
                    .credentials_file(&creds)
                    .await
                    .map_err(|e| format!("{}: {e}", creds.display()))?;
            }
            if let Some(token) = token {
                options = options.token(token);
            }
            let addrs: Vec<async_nats::ServerAddr> =
                urls.iter().map(|u| u.parse()).collect::<Result<_, _>>().map_err(|e| format!("{e}"))?;
            let client = options.connect(addrs).await.map_err(|e| e.to_string())?;
            let context = jetstream::new(client);
            let state_config = stream::Config {
                name: state_name,
                subjects: vec![state_subjects],
                max_messages_per_subject: 1,
                num_replicas: replicas,
                storage: stream::StorageType::File,
                ..Default::default()
            };
            // The events and memory feeds are optional to a write: one that cannot be opened
            // (an admin sealed, or took its subjects) is said when it is used, never fatal.
            let (state, events, memory) = futures_util::future::join3(
                ensure_stream(&context, state_config, "the state stream"),
                optional_stream(&context, events_config, "the events stream"),
                optional_stream(&context, memory_config, "the memory stream"),
            )
            .await;
            let state = state?;
            let marker_subject = format!("{state_subjects_prefix}.{AUDIT_MARKER}");
            let audit_config = stream::Config {
                name: audit_name,
                subjects: vec![audit_subject],
                num_replicas: replicas,
                storage: stream::StorageType::File,
                deny_delete: true,
                deny_purge: true,
                ..Default::default()
            };
            let audit =
                match open_audit(&context, &state, audit_config, &marker_subject, &*marker_sealer).await? {
                    Ok(audit) => audit,
                    Err(tampered) => return Ok(Err(tampered)),
                };
            Ok::<_, String>(Ok((context, state, audit, events, memory)))
        });
        let (context, state, audit, events, memory) =
            opened.map_err(|_| unavailable("no answer in time".into()))?.map_err(unavailable)??;
        let anchor = match reanchor {
            // An anchor file that does not verify is replaced too: the operator holds the key.
            true => anchor::Anchor::open(config.anchor.as_deref(), sealer.clone())
                .unwrap_or_else(|_| anchor::Anchor::empty(config.anchor.as_deref(), sealer.clone())),
            false => anchor::Anchor::open(config.anchor.as_deref(), sealer.clone())?,
        };
        let before = match reanchor {
            true => anchor.reanchor()?,
            false => {
                anchor.check_running()?;
                String::new()
            }
        };
        let cluster = Self {
            inner: std::sync::Arc::new(Inner {
                bridge,
                state,
                audit,
                events,
                memory,
                anchor,
                context,
                sealer,
                prefix,
                servers,
                timeout,
            }),
        };
        // Streams just made elect their leaders meanwhile: their first reads may time out.
        let deadline = std::time::Instant::now() + CONNECT_WAIT.max(timeout);
        loop {
            match cluster.found().and_then(|()| cluster.chain_len().map(drop)) {
                Ok(()) => return Ok((cluster, before)),
                Err(e) if e.retryable() && std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Make a new fleet's [`FOUNDED`] documents, then its marker; nothing once the marker is
    /// there (a founded document missing then is not made again: it reads as tampered).
    fn found(&self) -> Result<(), ClusterError> {
        let keys: Vec<&str> = std::iter::once(AUDIT_MARKER).chain(FOUNDED.iter().copied()).collect();
        let marker = serde_json::to_vec("the fleet and its audit stream were made")
            .map_err(|e| corrupt(AUDIT_MARKER, e))?;
        for _ in 0..MAX_TRIES {
            let (version, raw) = self.read_raw(&keys)?;
            if raw[0].is_some() {
                return self.inner.anchor.mark_founded();
            }
            if self.inner.anchor.founded() {
                return Err(self.inner.anchor.halt(
                    "the fleet's founding marker is gone though this host saw the fleet founded: removed by someone with JetStream admin rights (a fleet is founded once; it is not made again)",
                ));
            }
            let missing = keys[1..].iter().zip(&raw[1..]).find(|(_, r)| r.is_none()).map(|(k, _)| *k);
            let (key, doc) = match missing {
                Some(key) => (key, None),
                None => (AUDIT_MARKER, Some(marker.clone())),
            };
            // Another host founding the fleet at once wins or loses the same race: read again.
            let _ = self.write(key, version, doc)?;
        }
        Err(ClusterError::Contended("the fleet's founding documents".into()))
    }

    fn unavailable(&self, reason: impl std::fmt::Display) -> ClusterError {
        ClusterError::Unavailable { servers: self.inner.servers.clone(), reason: reason.to_string() }
    }

    /// Run `fut` on the cluster's runtime within the deadline.
    fn run<R: Send + 'static>(
        &self,
        fut: impl std::future::Future<Output = Result<R, String>> + Send + 'static,
    ) -> Result<R, ClusterError> {
        self.inner
            .bridge
            .run(self.inner.timeout, fut)
            .map_err(|_| self.unavailable("no answer in time"))?
            .map_err(|e| self.unavailable(e))
    }

    fn doc_subject(&self, key: &str) -> Result<String, ClusterError> {
        if !key.split('.').all(is_token) {
            return Err(ClusterError::Config(format!("`{key}` cannot name a document")));
        }
        Ok(format!("{}.state.{key}", self.inner.prefix))
    }

    /// Document `key` and the version of the state it was read at (see [`Self::read_docs`]);
    /// a document without the fleet's seal is an error.
    pub fn read(&self, key: &str) -> Result<(u64, Option<Vec<u8>>), ClusterError> {
        let (version, mut docs) = self.read_docs(&[key])?;
        Ok((version, docs.pop().transpose()?.flatten()))
    }

    /// Documents `keys` as of one version of the state: the stream's last sequence, noted
    /// before they are read (a change after it makes a write at it conflict), and each
    /// document's bytes (None: never written, or deleted) or why its seal does not hold. Read
    /// from the stream's leader, so a change acknowledged to any host is seen.
    pub fn read_docs(&self, keys: &[&str]) -> Result<(u64, Vec<Checked>), ClusterError> {
        let (version, raw) = self.read_raw(keys)?;
        Ok((version, self.open_all(keys, raw)))
    }

    /// [`Self::read_docs`] before the seals are checked: each document's last message.
    fn read_raw(&self, keys: &[&str]) -> Result<(u64, Vec<Option<Raw>>), ClusterError> {
        let subjects = keys.iter().map(|k| self.doc_subject(k)).collect::<Result<Vec<_>, _>>()?;
        let mut state = self.inner.state.clone();
        let (version, created, raw) = self.run(async move {
            let info = state.info().await.map_err(|e| e.to_string())?;
            let (version, created) = (info.state.last_sequence, info.created.to_string());
            // Read at once, after the version was noted.
            let raw =
                futures_util::future::try_join_all(subjects.iter().map(|s| last_raw(&state, s))).await?;
            Ok((version, created, raw))
        })?;
        self.check_anchor(&self.inner.state, created, version)?;
        Ok((version, raw))
    }

    /// Check stream `stream`, read made at `created` and at `last`, against the anchor; a stream
    /// short of it is read again for two seconds first (a new leader may answer a moment behind).
    fn check_anchor(&self, stream: &stream::Stream, created: String, last: u64) -> Result<(), ClusterError> {
        let name = stream.cached_info().config.name.clone();
        let (mut created, mut last) = (created, last);
        for _ in 0..10 {
            if self.inner.anchor.check(&name, &created, last, true)? {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
            let mut again = stream.clone();
            (last, created) = self.run(async move {
                again
                    .info()
                    .await
                    .map(|i| (i.state.last_sequence, i.created.to_string()))
                    .map_err(|e| e.to_string())
            })?;
        }
        self.inner.anchor.check(&name, &created, last, false).map(|_| ())
    }

    fn state_name(&self) -> String {
        self.inner.state.cached_info().config.name.clone()
    }

    fn audit_name(&self) -> String {
        self.inner.audit.cached_info().config.name.clone()
    }

    /// Each raw message checked against the fleet's seal for its subject and sequence.
    fn open_all(&self, keys: &[&str], raw: Vec<Option<Raw>>) -> Vec<Checked> {
        keys.iter()
            .zip(raw)
            .map(|(key, raw)| match raw {
                None if FOUNDED.contains(key) => Err(Tampered {
                    key: (*key).to_owned(),
                    reason: "it is missing though the fleet sealed it when it was made: removed by someone with JetStream admin rights".into(),
                }),
                None => Ok(None),
                Some((seq, payload)) => {
                    // The keys were checked as subject tokens when they were read.
                    let subject = format!("{}.state.{key}", self.inner.prefix);
                    seal::open(&*self.inner.sealer, key, &subject, seq, &payload)
                }
            })
            .collect()
    }

    /// Write document `key` (None deletes it) if the state is still at `version` (from
    /// [`Self::read_docs`]); [`Conflict`] if any host changed any document since. Returns the
    /// state's new version (a further write of the same change goes at it).
    pub fn write(
        &self,
        key: &str,
        version: u64,
        value: Option<Vec<u8>>,
    ) -> Result<Result<u64, Conflict>, ClusterError> {
        let subject = self.doc_subject(key)?;
        // Published at `version`, the message lands at `version + 1`: sealed for that place.
        let payload = seal::seal(&*self.inner.sealer, &subject, version + 1, &value.unwrap_or_default());
        let written = self.publish(subject, version, payload)?;
        if let Ok(seq) = written {
            self.inner.anchor.advance(&self.state_name(), seq);
        }
        Ok(written)
    }

    /// Publish at the stream's expected last sequence (see the module's note on why not the
    /// subject's).
    fn publish(
        &self,
        subject: String,
        expected: u64,
        payload: Vec<u8>,
    ) -> Result<Result<u64, Conflict>, ClusterError> {
        let context = self.inner.context.clone();
        self.run(async move {
            let publish = jetstream::message::PublishMessage::build()
                .payload(payload.into())
                .expected_last_sequence(expected);
            let ack = context.send_publish(subject, publish).await.map_err(|e| e.to_string())?;
            match ack.await {
                Ok(ack) => Ok(Ok(ack.sequence)),
                Err(e) if e.kind() == jetstream::context::PublishErrorKind::WrongLastSequence => {
                    Ok(Err(Conflict))
                }
                Err(e) => Err(e.to_string()),
            }
        })
    }

    /// Documents `keys` (None: absent or deleted; or why a seal does not hold), read from the
    /// stream's leader at once — one round trip's latency — without a version (to change one,
    /// [`Self::update_json`]).
    pub fn read_many(&self, keys: &[&str]) -> Result<Vec<Checked>, ClusterError> {
        let subjects = keys.iter().map(|k| self.doc_subject(k)).collect::<Result<Vec<_>, _>>()?;
        let state = self.inner.state.clone();
        // The stream's info beside the documents (one round trip): checked against the anchor.
        let (version, created, raw) = self.run(async move {
            let mut info_of = state.clone();
            let (info, raw) = futures_util::future::try_join(
                async {
                    info_of
                        .info()
                        .await
                        .map(|i| (i.state.last_sequence, i.created.to_string()))
                        .map_err(|e| e.to_string())
                },
                futures_util::future::try_join_all(subjects.iter().map(|s| last_raw(&state, s))),
            )
            .await?;
            Ok((info.0, info.1, raw))
        })?;
        self.check_anchor(&self.inner.state, created, version)?;
        Ok(self.open_all(keys, raw))
    }

    /// Document `key` as JSON (None when absent), see [`Self::read_many`]; a document without the
    /// fleet's seal is an error.
    pub fn read_json<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, ClusterError> {
        let bytes = self.read_many(&[key])?.pop().transpose()?.flatten();
        bytes.map(|b| parse(key, &b)).transpose()
    }

    /// Change document `key` with `f` (which may set it to None to delete it) by compare-and-set:
    /// read, apply, write at the sequence read; when another host wrote first, re-read and apply
    /// `f` again. Nothing is written when `f` leaves it as it was. Returns `f`'s last result. A
    /// document without the fleet's seal is an error, and stays as it is.
    pub fn update_json<T, R>(&self, key: &str, f: impl FnMut(&mut Option<T>) -> R) -> Result<R, ClusterError>
    where
        T: Serialize + DeserializeOwned,
    {
        self.update_json_or(key, Err, f)
    }

    /// [`Self::update_json`], where a document without the fleet's seal is read as what
    /// `tampered` makes of it (fail closed: a halt, the most careful phase), then sealed again
    /// with `f`'s result.
    pub fn update_json_or<T, R>(
        &self,
        key: &str,
        mut tampered: impl FnMut(Tampered) -> Result<Option<T>, Tampered>,
        mut f: impl FnMut(&mut Option<T>) -> R,
    ) -> Result<R, ClusterError>
    where
        T: Serialize + DeserializeOwned,
    {
        for _ in 0..MAX_TRIES {
            let (seq, mut docs) = self.read_docs(&[key])?;
            let (before, mut value) = match docs.pop().unwrap_or(Ok(None)) {
                Ok(bytes) => {
                    let value = bytes.as_deref().map(|b| parse(key, b)).transpose()?;
                    (Some(bytes), value)
                }
                // Always rewritten: whatever `f` makes of it, sealed.
                Err(t) => (None, tampered(t)?),
            };
            let out = f(&mut value);
            let after = value.as_ref().map(serde_json::to_vec).transpose().map_err(|e| corrupt(key, e))?;
            if before.as_ref() == Some(&after) {
                return Ok(out);
            }
            if self.write(key, seq, after)?.is_ok() {
                return Ok(out);
            }
        }
        Err(ClusterError::Contended(key.to_owned()))
    }

    /// The keys of the documents under `prefix.` (deleted ones included until swept).
    pub fn keys(&self, prefix: &str) -> Result<Vec<String>, ClusterError> {
        use futures_util::TryStreamExt;
        let filter = format!("{}.>", self.doc_subject(prefix)?);
        let strip = format!("{}.state.", self.inner.prefix);
        let state = self.inner.state.clone();
        self.run(async move {
            let subjects = state.info_with_subjects(filter).await.map_err(|e| e.to_string())?;
            let found: Vec<(String, usize)> = subjects.try_collect().await.map_err(|e| e.to_string())?;
            Ok(found.into_iter().filter_map(|(s, _)| s.strip_prefix(&strip).map(str::to_owned)).collect())
        })
    }

    /// Remove document `key` and its history for good (a delete leaves a marker).
    pub fn purge(&self, key: &str) -> Result<(), ClusterError> {
        let (state, subject) = (self.inner.state.clone(), self.doc_subject(key)?);
        self.run(async move { state.purge().filter(subject).await.map(drop).map_err(|e| e.to_string()) })
    }

    /// The chain's last entry: its sequence and bytes (None when it is empty).
    pub fn chain_last(&self) -> Result<Option<(u64, Vec<u8>)>, ClusterError> {
        self.inner.anchor.check_running()?;
        let (audit, subject) = (self.inner.audit.clone(), format!("{}.audit", self.inner.prefix));
        self.run(async move {
            match audit.get_last_raw_message_by_subject(&subject).await {
                Ok(m) => Ok(Some((m.sequence, m.payload.to_vec()))),
                Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => Ok(None),
                Err(e) => Err(e.to_string()),
            }
        })
    }

    /// Append `entry` to the chain if its last entry is still `expected` (0: empty; the chain's
    /// stream holds nothing else, so its last sequence is the chain's).
    pub fn chain_append(&self, expected: u64, entry: Vec<u8>) -> Result<Result<u64, Conflict>, ClusterError> {
        self.inner.anchor.check_running()?;
        let appended = self.publish(format!("{}.audit", self.inner.prefix), expected, entry)?;
        if let Ok(seq) = appended {
            self.inner.anchor.advance(&self.audit_name(), seq);
        }
        Ok(appended)
    }

    /// Chain entry `seq`, if it is there.
    pub fn chain_entry(&self, seq: u64) -> Result<Option<Vec<u8>>, ClusterError> {
        let audit = self.inner.audit.clone();
        self.run(async move {
            match audit.get_raw_message(seq).await {
                Ok(m) => Ok(Some(m.payload.to_vec())),
                Err(e) if e.kind() == stream::RawMessageErrorKind::NoMessageFound => Ok(None),
                Err(e) => Err(e.to_string()),
            }
        })
    }

    /// The chain's last sequence number (0: empty).
    pub fn chain_len(&self) -> Result<u64, ClusterError> {
        let mut audit = self.inner.audit.clone();
        let (last, created) = self.run(async move {
            audit
                .info()
                .await
                .map(|i| (i.state.last_sequence, i.created.to_string()))
                .map_err(|e| e.to_string())
        })?;
        self.check_anchor(&self.inner.audit, created, last)?;
        Ok(last)
    }

    /// Halt this host for tampering seen outside this crate (a permit the audit chain shows
    /// used, found open in the state): every later call fails closed, saying `reason`, until
    /// [`Self::reanchor`].
    pub fn halt_tampered(&self, reason: &str) -> ClusterError {
        tracing::error!("{reason}: this host halts itself");
        self.inner.anchor.halt(reason)
    }

    /// What this host anchors now (JSON), for the record of a re-anchoring.
    pub fn anchored(&self) -> String {
        self.inner.anchor.describe()
    }

    /// How the audit chain is named in errors and records: `nats:BARDO_<name>_AUDIT`.
    pub fn audit_label(&self) -> String {
        format!("nats:{}", self.inner.audit.cached_info().config.name)
    }

    /// The servers, as configured.
    pub fn servers(&self) -> &str {
        &self.inner.servers
    }
}

/// Whether `t` is one subject token this crate builds names from: letters, digits, `_`, `-`.
pub(crate) fn is_token(t: &str) -> bool {
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The fleet's audit stream, made once: once the fleet's sealed marker is in the state
/// (`marker_subject`), a missing stream was deleted, and is refused as tampered rather than made
/// again empty.
async fn open_audit(
    context: &jetstream::Context,
    state: &stream::Stream,
    config: stream::Config,
    marker_subject: &str,
    sealer: &dyn Sealer,
) -> Result<Result<stream::Stream, Tampered>, String> {
    let not_found = |e: &jetstream::context::GetStreamError| {
        matches!(e.kind(), jetstream::context::GetStreamErrorKind::JetStream(j)
            if j.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND)
    };
    match context.get_stream(&config.name).await {
        Ok(audit) => return Ok(Ok(audit)),
        Err(e) if not_found(&e) => {}
        Err(e) => return Err(format!("the audit stream: {e}")),
    }
    // The state stream may be electing its leader (made a moment ago).
    let marker = loop {
        match last_raw(state, marker_subject).await {
            Ok(marker) => break marker,
            Err(e) if e.contains("timed out") => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(e) => return Err(e),
        }
    };
    let marked = marker.is_some_and(|(seq, payload)| {
        seal::open(sealer, AUDIT_MARKER, marker_subject, seq, &payload).is_ok()
    });
    if !marked {
        return ensure_stream(context, config, "the audit stream").await.map(Ok);
    }
    // Another host may have made it a moment ago (the marker is written once the stream
    // exists): looked for again before it is called deleted.
    for _ in 0..10 {
        if let Ok(audit) = context.get_stream(&config.name).await {
            return Ok(Ok(audit));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(Err(Tampered {
        key: config.name,
        reason: "the fleet's audit stream is gone though the fleet made it: deleted by someone with JetStream admin rights; restore it from a backup, it is not made again empty".into(),
    }))
}

/// [`ensure_stream`] for a feed no write depends on: why it could not be opened, instead of
/// failing the connection.
async fn optional_stream(
    context: &jetstream::Context,
    config: stream::Config,
    what: &str,
) -> Result<stream::Stream, String> {
    let name = config.name.clone();
    let opened = tokio::time::timeout(CONNECT_WAIT / 2, ensure_stream(context, config, what)).await;
    let opened = opened.unwrap_or_else(|_| Err(format!("{what} ({name}) did not answer")));
    if let Err(e) = &opened {
        tracing::warn!("{e}: the fleet runs without it (writes do not depend on it)");
    }
    opened
}

/// Stream `config.name`, made if missing: another host making it at the same moment, or a new
/// stream without a leader yet, is waited for (the caller's deadline bounds it).
async fn ensure_stream(
    context: &jetstream::Context,
    config: stream::Config,
    what: &str,
) -> Result<stream::Stream, String> {
    loop {
        match context.get_or_create_stream(config.clone()).await {
            Ok(stream) => return Ok(stream),
            Err(e)
                if e.kind() == jetstream::context::CreateStreamErrorKind::TimedOut
                    || e.to_string().contains("already in use") =>
            {
                tracing::debug!("{what}: {e}; trying again");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => return Err(format!("{what}: {e}")),
        }
    }
}

/// The last message on `subject` (its stream sequence and payload), None if there is none.
async fn last_raw(state: &stream::Stream, subject: &str) -> Result<Option<Raw>, String> {
    match state.get_last_raw_message_by_subject(subject).await {
        Ok(m) => Ok(Some((m.sequence, m.payload.to_vec()))),
        Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

fn corrupt(what: &str, e: impl std::fmt::Display) -> ClusterError {
    ClusterError::Corrupt { what: what.to_owned(), reason: e.to_string() }
}

fn parse<T: DeserializeOwned>(key: &str, bytes: &[u8]) -> Result<T, ClusterError> {
    serde_json::from_slice(bytes).map_err(|e| corrupt(key, e))
}
