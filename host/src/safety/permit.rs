//! ActionPermits: a previewed plan that passed the hook chain, valid for a TTL, consumed once.

use crate::tool::{RiskTier, WritePlan};
use alloy::primitives::{Address, B256};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// A permitted plan, waiting for `commit_action`.
#[derive(Debug, Clone, Serialize)]
pub struct ActionPermit {
    pub permit_id: String,
    pub kind: String,
    pub tool: String,
    pub params: serde_json::Value,
    pub chain_id: u64,
    #[serde(serialize_with = "crate::tool::checksummed")]
    pub sender: Address,
    pub plan: WritePlan,
    /// sha256 over the simulated calls and their outcomes (see `hooks::simulation_hash`).
    pub simulation_hash: B256,
    pub expected_outcome: serde_json::Value,
    pub risk_tier: RiskTier,
    #[serde(serialize_with = "unix_ms")]
    pub created_at: SystemTime,
    #[serde(serialize_with = "millis")]
    pub ttl: Duration,
}

fn unix_ms<S: serde::Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(t.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0))
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

/// Why a permit cannot be committed or cancelled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PermitError {
    #[error("no permit `{0}`; preview the action first")]
    Unknown(String),
    #[error("permit `{0}` expired; preview the action again")]
    Expired(String),
    #[error("permit `{0}` was cancelled")]
    Cancelled(String),
    #[error("permit `{0}` was already used; each permit executes once")]
    Consumed(String),
    #[error("permit `{0}` was revoked by an emergency halt")]
    Revoked(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    Consumed,
    Cancelled,
    Expired,
    Revoked,
}

/// Every permit this host issued, by id.
#[derive(Debug, Default)]
pub struct Permits {
    entries: Mutex<HashMap<String, (ActionPermit, State)>>,
}

impl Permits {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (ActionPermit, State)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn insert(&self, permit: ActionPermit) {
        self.lock().insert(permit.permit_id.clone(), (permit, State::Open));
    }

    /// Take an open permit for execution: the state changes to consumed under the lock, so of
    /// two concurrent commits exactly one gets it.
    pub fn take(&self, id: &str, now: SystemTime) -> Result<ActionPermit, PermitError> {
        let mut entries = self.lock();
        let (permit, state) = entries.get_mut(id).ok_or_else(|| PermitError::Unknown(id.to_owned()))?;
        match *state {
            State::Open if expired(permit, now) => {
                *state = State::Expired;
                Err(PermitError::Expired(id.to_owned()))
            }
            State::Open => {
                *state = State::Consumed;
                Ok(permit.clone())
            }
            State::Consumed => Err(PermitError::Consumed(id.to_owned())),
            State::Cancelled => Err(PermitError::Cancelled(id.to_owned())),
            State::Expired => Err(PermitError::Expired(id.to_owned())),
            State::Revoked => Err(PermitError::Revoked(id.to_owned())),
        }
    }

    /// Cancel an open permit.
    pub fn cancel(&self, id: &str, now: SystemTime) -> Result<ActionPermit, PermitError> {
        let permit = self.take(id, now)?;
        if let Some(entry) = self.lock().get_mut(id) {
            entry.1 = State::Cancelled;
        }
        Ok(permit)
    }

    /// Revoke every open permit; returns their ids.
    pub fn revoke_all(&self) -> Vec<String> {
        let mut revoked = Vec::new();
        for (id, (_, state)) in self.lock().iter_mut() {
            if *state == State::Open {
                *state = State::Revoked;
                revoked.push(id.clone());
            }
        }
        revoked
    }
}

fn expired(p: &ActionPermit, now: SystemTime) -> bool {
    now.duration_since(p.created_at).is_ok_and(|age| age >= p.ttl)
}
