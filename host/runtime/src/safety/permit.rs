//! ActionPermits: a previewed plan that passed the hook chain, valid for a TTL, consumed once.

use alloy::primitives::{Address, B256};
use bardo_core::tool::{RiskTier, WritePlan};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// A permitted plan, waiting for `commit_action`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ActionPermit {
    /// `permit-` and 32 hex digits, unguessable.
    pub permit_id: String,
    /// The action kind previewed.
    pub kind: String,
    /// The write tool that planned it.
    pub tool: String,
    /// The params the plan was made with.
    pub params: serde_json::Value,
    /// The chain it runs on.
    pub chain_id: u64,
    /// The wallet that signs it.
    #[serde(serialize_with = "bardo_core::tool::checksummed")]
    pub sender: Address,
    /// The calls, exactly as they will be signed.
    pub plan: WritePlan,
    /// sha256 over the simulated calls and their outcomes (see `hooks::simulation_hash`).
    pub simulation_hash: B256,
    /// The block timestamp the preview simulated at; commit re-simulates at the same one
    /// (absent in permits stored by earlier versions: then at the next block's).
    #[serde(default)]
    pub simulated_at: Option<u64>,
    /// What the plugin expects, for the agent to read.
    pub expected_outcome: serde_json::Value,
    /// The tool's risk tier.
    pub risk_tier: RiskTier,
    /// When it was issued.
    #[serde(serialize_with = "unix_ms", deserialize_with = "from_unix_ms")]
    pub created_at: SystemTime,
    /// How long it stays valid.
    #[serde(rename = "ttl_ms", serialize_with = "millis", deserialize_with = "from_millis")]
    pub ttl: Duration,
}

fn unix_ms<S: serde::Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(t.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0))
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

fn from_unix_ms<'de, D: serde::Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
    Ok(SystemTime::UNIX_EPOCH + Duration::from_millis(u64::deserialize(d)?))
}

fn from_millis<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    Ok(Duration::from_millis(u64::deserialize(d)?))
}

/// Why a permit cannot be committed or cancelled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PermitError {
    /// No permit has this id.
    #[error("no permit `{0}`; preview the action first")]
    Unknown(String),
    /// Its TTL ran out.
    #[error("permit `{0}` expired; preview the action again")]
    Expired(String),
    /// It was cancelled.
    #[error("permit `{0}` was cancelled")]
    Cancelled(String),
    /// It was committed already.
    #[error("permit `{0}` was already used; each permit executes once")]
    Consumed(String),
    /// An emergency halt revoked it.
    #[error("permit `{0}` was revoked by an emergency halt")]
    Revoked(String),
    /// The shared permit file could not be read or written.
    #[error("permit store {0}")]
    Store(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum State {
    Open,
    Consumed,
    Cancelled,
    Expired,
    Revoked,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    permit: ActionPermit,
    state: State,
}

type Map = BTreeMap<String, Entry>;

/// Every permit this host issued, by id: in memory, or in a JSON file shared by every `bardo`
/// process (`bardo preview` in one, `bardo commit` in another), changed only under an exclusive
/// file lock so that a permit is consumed once across processes too.
#[derive(Debug, Default)]
pub struct Permits {
    file: Option<PathBuf>,
    mem: Mutex<Map>,
}

/// Settled permits are kept this long (for "already used" answers), then dropped from the file.
const KEEP_SETTLED: Duration = Duration::from_secs(24 * 3600);

impl Permits {
    /// Permits kept in `path` (created on first use).
    pub fn open(path: &Path) -> Self {
        Self { file: Some(path.to_owned()), mem: Mutex::default() }
    }

    fn with<R>(&self, now: SystemTime, f: impl FnOnce(&mut Map) -> R) -> Result<R, PermitError> {
        let mut mem = self.mem.lock().unwrap_or_else(|p| p.into_inner());
        let Some(path) = &self.file else { return Ok(f(&mut mem)) };
        super::store::with_locked(path, |map: &mut Map| {
            let out = f(map);
            map.retain(|_, e| {
                e.state == State::Open
                    || now.duration_since(e.permit.created_at).is_ok_and(|a| a < KEEP_SETTLED)
            });
            out
        })
        .map_err(PermitError::Store)
    }

    /// Record a new open permit.
    pub fn insert(&self, permit: ActionPermit) -> Result<(), PermitError> {
        let now = permit.created_at;
        self.with(now, |m| {
            m.insert(permit.permit_id.clone(), Entry { permit, state: State::Open });
        })
    }

    /// Take an open permit for execution: its state changes to consumed under the lock, so of
    /// two concurrent commits exactly one gets it.
    pub fn take(&self, id: &str, now: SystemTime) -> Result<ActionPermit, PermitError> {
        self.settle_open(id, now, State::Consumed)
    }

    /// Cancel an open permit.
    pub fn cancel(&self, id: &str, now: SystemTime) -> Result<ActionPermit, PermitError> {
        self.settle_open(id, now, State::Cancelled)
    }

    /// Move open permit `id` to `to` in one locked step; any other state is the error it names.
    fn settle_open(&self, id: &str, now: SystemTime, to: State) -> Result<ActionPermit, PermitError> {
        self.with(now, |m| {
            let entry = m.get_mut(id).ok_or_else(|| PermitError::Unknown(id.to_owned()))?;
            match entry.state {
                State::Open if expired(&entry.permit, now) => {
                    entry.state = State::Expired;
                    Err(PermitError::Expired(id.to_owned()))
                }
                State::Open => {
                    entry.state = to;
                    Ok(entry.permit.clone())
                }
                State::Consumed => Err(PermitError::Consumed(id.to_owned())),
                State::Cancelled => Err(PermitError::Cancelled(id.to_owned())),
                State::Expired => Err(PermitError::Expired(id.to_owned())),
                State::Revoked => Err(PermitError::Revoked(id.to_owned())),
            }
        })?
    }

    /// Revoke every open permit; returns their ids.
    pub fn revoke_all(&self, now: SystemTime) -> Result<Vec<String>, PermitError> {
        self.with(now, |m| {
            let mut revoked = Vec::new();
            for (id, entry) in m.iter_mut() {
                if entry.state == State::Open {
                    entry.state = State::Revoked;
                    revoked.push(id.clone());
                }
            }
            revoked
        })
    }
}

fn expired(p: &ActionPermit, now: SystemTime) -> bool {
    now.duration_since(p.created_at).is_ok_and(|age| age >= p.ttl)
}
