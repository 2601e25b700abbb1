//! Permits shared by a fleet through NATS JetStream (`[cluster]`): the emergency halt in the
//! document `halt`, each permit in `permit.<id>`. Each change reads the halt and the permits it
//! touches at one version of the state and writes at that version (compare-and-set), so of two
//! hosts taking one permit exactly one succeeds and the other re-reads it consumed, and no
//! permit is issued or taken past a halt another host set meanwhile.
//!
//! Every document carries the fleet's seal (see `bardo_cluster::Sealer`). One without it fails
//! closed: a halt document reads as a halt in force (until `bardo resume` seals a new one), the
//! fleet's phase as `terminal`, a permit as forged (never taken, and skipped by fleet-wide
//! changes such as a halt). The halt and the phase are sealed when the fleet is made, so either
//! found missing later reads the same way: a missing halt is not "running".

use super::valid_id;
use super::wallet::Holder;
use super::{Entry, Halt, Map, PermitError, keep};
use bardo_cluster::{Checked, Cluster, ClusterError, Tampered};
use bardo_core::tool::Phase;
use std::time::SystemTime;

use bardo_cluster::{HALT_DOC as HALT, PHASE_DOC as PHASE};

fn key(id: &str) -> String {
    format!("permit.{id}")
}

#[derive(Debug)]
pub(super) struct Shared {
    cluster: Cluster,
}

/// Most tries of one change before giving up as contended.
const MAX_TRIES: usize = 200;

fn contended(what: &str) -> ClusterError {
    ClusterError::Contended(what.to_owned())
}

impl Shared {
    pub(super) fn new(cluster: Cluster) -> Self {
        Self { cluster }
    }

    pub(super) fn halted(&self) -> Result<Option<Halt>, ClusterError> {
        halt_of(self.cluster.read_many(&[HALT])?.swap_remove(0))
    }

    /// The halt and the fleet's lowered phase, read at once.
    pub(super) fn controls(&self) -> Result<(Option<Halt>, Option<Phase>), ClusterError> {
        let mut docs = self.cluster.read_many(&[HALT, PHASE])?;
        let phase = match docs.swap_remove(1) {
            Ok(doc) => doc.as_deref().map(|b| parse(PHASE, b)).transpose()?,
            Err(t) => tampered_phase(t)?,
        };
        Ok((halt_of(docs.swap_remove(0))?, phase))
    }

    pub(super) fn change_fleet_phase<R>(
        &self,
        f: impl FnMut(&mut Option<Phase>) -> R,
    ) -> Result<R, ClusterError> {
        self.cluster.update_json_or(PHASE, tampered_phase, f)
    }

    /// Store a new open permit unless a halt is in force.
    pub(super) fn insert(&self, id: &str, entry: &Entry) -> Result<(), PermitError> {
        let bytes = json(entry)?;
        for _ in 0..MAX_TRIES {
            let (version, mut docs) = self.cluster.read_docs(&[HALT, &key(id)])?;
            let taken = !matches!(docs.swap_remove(1), Ok(None));
            if let Some(halt) = halt_of(docs.swap_remove(0))? {
                return Err(halt.refusal());
            }
            if taken {
                return Err(PermitError::Store(format!("a permit `{id}` exists already")));
            }
            if self.cluster.write(&key(id), version, Some(bytes.clone()))?.is_ok() {
                return Ok(());
            }
        }
        Err(contended("the permit book").into())
    }

    /// Apply `f` to the halt and permit `id` as of one version, writing the permit back at it;
    /// `f` runs again when another host changed the state first.
    pub(super) fn with_entry<R>(
        &self,
        id: &str,
        mut f: impl FnMut(Option<&Halt>, &mut Option<Entry>) -> R,
    ) -> Result<R, ClusterError> {
        if !valid_id(id) {
            return Ok(f(self.halted()?.as_ref(), &mut None));
        }
        let k = key(id);
        for _ in 0..MAX_TRIES {
            let (version, mut docs) = self.cluster.read_docs(&[HALT, &k])?;
            // A permit document without the seal is refused and left as it is.
            let before = docs.swap_remove(1)?;
            let halt = halt_of(docs.swap_remove(0))?;
            let mut entry: Option<Entry> = before.as_deref().map(|b| parse(&k, b)).transpose()?;
            let out = f(halt.as_ref(), &mut entry);
            let after = entry.as_ref().map(json).transpose()?;
            if after == before || self.cluster.write(&k, version, after)?.is_ok() {
                return Ok(out);
            }
        }
        Err(contended(&k))
    }

    /// Apply `f` to the halt and every permit as of one version, writing back what changed
    /// (each write at the version the previous one made); if another host changed the state
    /// first, read everything again and apply `f` again.
    pub(super) fn with_all<R>(
        &self,
        mut f: impl FnMut(&mut Option<Halt>, &mut Map) -> R,
    ) -> Result<R, ClusterError> {
        'pass: for _ in 0..MAX_TRIES {
            let keys: Vec<String> = self.cluster.keys("permit")?;
            let mut names: Vec<&str> = vec![HALT];
            names.extend(keys.iter().map(String::as_str));
            let (mut version, mut docs) = self.cluster.read_docs(&names)?;
            let permit_docs = docs.split_off(1);
            let halt_doc = docs.swap_remove(0);
            // A halt document without the seal reads as a halt in force, and is sealed anew by
            // whatever `f` makes of it (a `bardo resume` lifts it; a halt keeps it).
            let resealed = halt_doc.is_err();
            let mut halt = halt_of(halt_doc)?;
            let mut permits = Map::new();
            let mut sealed: Vec<(&String, Vec<u8>)> = Vec::new();
            for (k, doc) in keys.iter().zip(permit_docs) {
                match doc {
                    Ok(Some(bytes)) => {
                        if let Some(id) = k.strip_prefix("permit.") {
                            permits.insert(id.to_owned(), parse(k, &bytes)?);
                            sealed.push((k, bytes));
                        }
                    }
                    Ok(None) => {}
                    // Not the fleet's: never taken, never changed by a fleet-wide step.
                    Err(t) => tracing::warn!("{t}; skipped"),
                }
            }
            let halt_before = halt.clone();
            let out = f(&mut halt, &mut permits);
            let mut changes: Vec<(String, Option<Vec<u8>>)> = Vec::new();
            if halt != halt_before || resealed {
                changes.push((HALT.into(), halt.as_ref().map(json).transpose()?));
            }
            for (k, before) in sealed {
                let Some(entry) = k.strip_prefix("permit.").and_then(|id| permits.get(id)) else { continue };
                let bytes = json(entry)?;
                if before != bytes {
                    changes.push((k.clone(), Some(bytes)));
                }
            }
            for (k, bytes) in changes {
                match self.cluster.write(&k, version, bytes)? {
                    Ok(next) => version = next,
                    Err(_conflict) => continue 'pass,
                }
            }
            return Ok(out);
        }
        Err(contended("the permit book"))
    }

    /// Name `claim`'s holder as wallet `name`'s sender if nobody holds it, its holder's lease
    /// lapsed by `now_ms`, or it is the holder already; false when another holds it.
    pub(super) fn claim_wallet(&self, name: &str, claim: &Holder, now_ms: u64) -> Result<bool, ClusterError> {
        self.cluster.update_json(&format!("wallet.{name}"), |doc: &mut Option<Holder>| match doc {
            Some(h) if h.holder != claim.holder && h.until_ms > now_ms => false,
            _ => {
                *doc = Some(claim.clone());
                true
            }
        })
    }

    /// Extend the lease on wallet `name` if `claim`'s holder still holds it.
    pub(super) fn renew_wallet(&self, name: &str, claim: &Holder) -> Result<(), ClusterError> {
        self.cluster.update_json(&format!("wallet.{name}"), |doc: &mut Option<Holder>| {
            if let Some(h) = doc.as_mut().filter(|h| h.holder == claim.holder) {
                h.until_ms = claim.until_ms;
            }
        })
    }

    /// Give up wallet `name` if `holder` holds it.
    pub(super) fn release_wallet(&self, name: &str, holder: &str) -> Result<(), ClusterError> {
        self.cluster.update_json(&format!("wallet.{name}"), |doc: &mut Option<Holder>| {
            if doc.as_ref().is_some_and(|h| h.holder == holder) {
                *doc = None;
            }
        })
    }

    /// Remove the permits [`keep`] lets go.
    pub(super) fn sweep(&self, now: SystemTime) -> Result<(), ClusterError> {
        for k in self.cluster.keys("permit")? {
            // Not the fleet's (tampered): nothing any host will take; removed with the rest. Any
            // other failure stops the sweep: a permit that could not be read is not removed.
            let entry: Option<Entry> = match self.cluster.read_json(&k) {
                Ok(entry) => entry,
                Err(ClusterError::Tampered(_)) => None,
                Err(e) => return Err(e),
            };
            if entry.is_none_or(|e| !keep(&e, now)) {
                self.cluster.purge(&k)?;
            }
        }
        Ok(())
    }
}

/// The halt a document holds; one without the fleet's seal is a halt in force (fail closed).
fn halt_of(doc: Checked) -> Result<Option<Halt>, ClusterError> {
    match doc {
        Ok(doc) => doc.as_deref().map(|b| parse(HALT, b)).transpose(),
        // When is unknown: it reads as halted since it was found.
        Err(t) => Ok(Some(Halt {
            reason: format!("{t}; check the fleet's NATS rights, then `bardo resume` seals a new one"),
            at_ms: super::millis_since_epoch(std::time::SystemTime::now()),
        })),
    }
}

/// The fleet's phase when its document lost its seal: the most careful one (fail closed).
fn tampered_phase(t: Tampered) -> Result<Option<Phase>, Tampered> {
    tracing::error!("{t}; the fleet is held at `terminal` until an operator raises it");
    Ok(Some(Phase::Terminal))
}

fn parse<T: serde::de::DeserializeOwned>(what: &str, bytes: &[u8]) -> Result<T, ClusterError> {
    serde_json::from_slice(bytes)
        .map_err(|e| ClusterError::Corrupt { what: what.to_owned(), reason: e.to_string() })
}

fn json<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, ClusterError> {
    serde_json::to_vec(value)
        .map_err(|e| ClusterError::Corrupt { what: "permit".into(), reason: e.to_string() })
}

impl From<ClusterError> for PermitError {
    fn from(e: ClusterError) -> Self {
        if let ClusterError::Tampered(t) = e {
            return PermitError::Tampered(t.to_string());
        }
        if e.retryable() {
            PermitError::Unavailable(e.to_string())
        } else {
            PermitError::Store(e.to_string())
        }
    }
}
