//! What this host saw of the fleet's shared streams, kept where NATS admin rights do not reach:
//! a local file, sealed with the fleet's key. For the state stream (permits, the spending
//! ledger, the halt, the phase) and the audit stream: when it was made and the last sequence
//! seen. JetStream never lowers a stream's last sequence, and a stream made again is made at
//! another time, so a stream deleted, recreated, cut shorter or replayed into (an older sealed
//! document written back at its old sequence in a new stream) does not extend the anchor.
//! That is tampering: the host halts itself — every call on the fleet fails closed, saying what
//! it saw — until an operator with the host key accepts the streams as they are now
//! (`bardo fleet reanchor`, audited). Also kept: that the fleet was founded, so its founding
//! marker found missing later is tampering too, never a new fleet.

use crate::{ClusterError, Sealer, Tampered};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A stream as this host last saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Seen {
    /// When the stream was made, as the server says.
    pub created: String,
    /// Its last sequence.
    pub last: u64,
}

/// The anchor's contents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Anchored {
    /// By stream name.
    streams: BTreeMap<String, Seen>,
    /// The fleet's founding marker was seen.
    founded: bool,
    /// Why this host halted itself, if it did.
    tampered: Option<String>,
}

/// The anchor file: the contents and their MAC under the fleet's key.
#[derive(Serialize, Deserialize)]
struct Sealed {
    anchored: Anchored,
    mac: String,
}

const DOMAIN: &[u8] = b"bardo-fleet-anchor\n";

/// This host's anchor on the fleet's streams (in memory only without a file).
pub(crate) struct Anchor {
    file: Option<PathBuf>,
    anchored: Mutex<Anchored>,
    sealer: Arc<dyn Sealer>,
    /// When a sequence's advance was last written (they are written at most every
    /// [`ADVANCE_EVERY`], unsynced: each state change moves one, and a file a moment behind
    /// still catches a stream made again or cut).
    written: Mutex<Option<Instant>>,
}

/// How often a stream's advancing sequence is written to the anchor file.
const ADVANCE_EVERY: Duration = Duration::from_millis(500);

fn mac_of(sealer: &dyn Sealer, anchored: &Anchored) -> Result<[u8; 32], String> {
    let mut message = DOMAIN.to_vec();
    message.extend(serde_json::to_vec(anchored).map_err(|e| e.to_string())?);
    Ok(sealer.mac(&message))
}

fn halted(reason: &str) -> ClusterError {
    ClusterError::Tampered(Tampered {
        key: "fleet anchor".into(),
        reason: format!(
            "this host halted itself: {reason}. Nothing runs on the fleet from this host until an operator who has checked the streams runs `bardo fleet reanchor` (it needs the host key, and is audited)"
        ),
    })
}

impl Anchor {
    /// The anchor kept in `file` (read now; none yet: a host that saw nothing).
    pub(crate) fn open(file: Option<&Path>, sealer: Arc<dyn Sealer>) -> Result<Self, ClusterError> {
        let mut anchored = Anchored::default();
        if let Some(path) = file {
            match std::fs::read(path) {
                Ok(bytes) => {
                    let sealed: Sealed = serde_json::from_slice(&bytes)
                        .map_err(|e| ClusterError::Config(format!("{}: {e}", path.display())))?;
                    let mut message = DOMAIN.to_vec();
                    message.extend(
                        serde_json::to_vec(&sealed.anchored)
                            .map_err(|e| ClusterError::Config(e.to_string()))?,
                    );
                    let tag = crate::seal::unhex(&sealed.mac);
                    if !tag.is_some_and(|tag| sealer.verify(&message, &tag)) {
                        return Err(halted(&format!(
                            "its anchor {} does not verify under the fleet's key: it was edited",
                            path.display()
                        )));
                    }
                    anchored = sealed.anchored;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(ClusterError::Config(format!("{}: {e}", path.display()))),
            }
        }
        Ok(Self {
            file: file.map(Path::to_owned),
            anchored: Mutex::new(anchored),
            sealer,
            written: Mutex::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Anchored> {
        self.anchored.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keep `anchored` in the file (written whole, synced, then renamed over the old one).
    fn keep(&self, anchored: &Anchored) -> Result<(), ClusterError> {
        self.write(anchored, true)
    }

    /// Keep a sequence's advance: at most every [`ADVANCE_EVERY`], unsynced.
    fn keep_advance(&self, anchored: &Anchored) {
        let mut written = self.written.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if written.is_some_and(|at| at.elapsed() < ADVANCE_EVERY) {
            return;
        }
        *written = Some(Instant::now());
        if let Err(e) = self.write(anchored, false) {
            tracing::warn!("{e}");
        }
    }

    fn write(&self, anchored: &Anchored, sync: bool) -> Result<(), ClusterError> {
        let Some(path) = &self.file else { return Ok(()) };
        let mac = mac_of(&*self.sealer, anchored).map_err(ClusterError::Config)?;
        let sealed = Sealed { anchored: anchored.clone(), mac: crate::seal::hex(&mac) };
        let bytes = serde_json::to_vec_pretty(&sealed).map_err(|e| ClusterError::Config(e.to_string()))?;
        // Each process its own: several `bardo` processes of one host share the anchor.
        let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
        let written = (|| {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&tmp, &bytes)?;
            if sync {
                std::fs::File::open(&tmp)?.sync_all()?;
            }
            std::fs::rename(&tmp, path)
        })();
        written.map_err(|e| ClusterError::Config(format!("keeping the fleet anchor {}: {e}", path.display())))
    }

    /// Fail closed if this host halted itself.
    pub(crate) fn check_running(&self) -> Result<(), ClusterError> {
        match &self.lock().tampered {
            Some(reason) => Err(halted(reason)),
            None => Ok(()),
        }
    }

    /// Stream `name` as read now: made at `created`, at last sequence `last`. Tampering (see
    /// the module's doc) halts this host; a stream further on moves the anchor. A stream short
    /// of the anchor is `Ok(false)` while `may_be_behind` (a replica a moment behind may have
    /// answered, or this host's own append landed after the read: read again), tampering after.
    /// Decided under one lock: an append of another thread between a read and its check is
    /// seen as such, not as a cut.
    pub(crate) fn check(
        &self,
        name: &str,
        created: &str,
        last: u64,
        may_be_behind: bool,
    ) -> Result<bool, ClusterError> {
        let mut anchored = self.lock();
        if let Some(reason) = &anchored.tampered {
            return Err(halted(reason));
        }
        let problem = match anchored.streams.get(name) {
            Some(seen) if seen.created != created => Some(format!(
                "the fleet's stream {name} was made again (at {created}; this host anchored it made at {}, at sequence {}): deleted and recreated by someone with JetStream admin rights",
                seen.created, seen.last
            )),
            Some(seen) if last < seen.last && may_be_behind => return Ok(false),
            Some(seen) if last < seen.last => Some(format!(
                "the fleet's stream {name} ends at sequence {last}, but this host saw it at {}: cut or replaced",
                seen.last
            )),
            Some(seen) if seen.last == last => return Ok(true),
            _ => None,
        };
        let mut next = anchored.clone();
        match problem {
            Some(reason) => {
                tracing::error!("{reason}: this host halts itself");
                next.tampered = Some(reason.clone());
                // Halted in memory whatever the disk says; kept if it can be.
                let kept = self.keep(&next);
                *anchored = next;
                kept?;
                Err(halted(&reason))
            }
            None => {
                let new = !next.streams.contains_key(name);
                next.streams.insert(name.to_owned(), Seen { created: created.to_owned(), last });
                match new {
                    true => self.keep(&next)?,
                    false => self.keep_advance(&next),
                }
                *anchored = next;
                Ok(true)
            }
        }
    }

    /// Stream `name` reached `last` by this host's own append (its making time was checked on
    /// the read before it).
    pub(crate) fn advance(&self, name: &str, last: u64) {
        let mut anchored = self.lock();
        let Some(seen) = anchored.streams.get(name).filter(|s| s.last < last) else { return };
        let mut next = anchored.clone();
        next.streams.insert(name.to_owned(), Seen { created: seen.created.clone(), last });
        self.keep_advance(&next);
        *anchored = next;
    }

    /// Whether this host saw the fleet founded.
    pub(crate) fn founded(&self) -> bool {
        self.lock().founded
    }

    /// The fleet's founding marker was seen.
    pub(crate) fn mark_founded(&self) -> Result<(), ClusterError> {
        let mut anchored = self.lock();
        if anchored.founded {
            return Ok(());
        }
        let mut next = anchored.clone();
        next.founded = true;
        self.keep(&next)?;
        *anchored = next;
        Ok(())
    }

    /// Halt this host for `reason` (tampering seen elsewhere: a used permit found open).
    pub(crate) fn halt(&self, reason: &str) -> ClusterError {
        let mut anchored = self.lock();
        let mut next = anchored.clone();
        next.tampered = Some(reason.to_owned());
        if let Err(e) = self.keep(&next) {
            tracing::error!("{e}");
        }
        *anchored = next;
        halted(reason)
    }

    /// Drop the anchor (the streams are anchored again as they are read next): what it said
    /// before, and why this host had halted, if it had.
    pub(crate) fn reanchor(&self) -> Result<String, ClusterError> {
        let mut anchored = self.lock();
        let before = serde_json::to_string(&*anchored).unwrap_or_default();
        let next = Anchored::default();
        self.keep(&next)?;
        *anchored = next;
        Ok(before)
    }

    /// An anchor that saw nothing, kept in `file`.
    pub(crate) fn empty(file: Option<&Path>, sealer: Arc<dyn Sealer>) -> Self {
        Self {
            file: file.map(Path::to_owned),
            anchored: Mutex::new(Anchored::default()),
            sealer,
            written: Mutex::default(),
        }
    }

    /// What it anchors now, as JSON.
    pub(crate) fn describe(&self) -> String {
        serde_json::to_string(&*self.lock()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The anchor's rules need no MAC of worth: no file is kept here.
    struct NoKey;
    impl Sealer for NoKey {
        fn mac(&self, _: &[u8]) -> [u8; 32] {
            [0; 32]
        }
        fn verify(&self, _: &[u8], tag: &[u8; 32]) -> bool {
            tag == &[0; 32]
        }
    }

    /// A read taken before this host's own append (another thread's) is checked after the
    /// append moved the anchor: short while it may be behind — read again — and a cut only on
    /// the last look. It was a halt at once when the look and the check were two steps.
    #[test]
    fn a_read_short_of_this_hosts_own_append_is_read_again_not_a_cut() {
        let anchor = Anchor::open(None, Arc::new(NoKey)).expect("anchor");
        assert!(anchor.check("S", "t0", 26, true).expect("first sight"));
        anchor.advance("S", 27);
        assert!(!anchor.check("S", "t0", 26, true).expect("behind, not tampered"));
        anchor.check_running().expect("still running");
        assert!(anchor.check("S", "t0", 27, true).expect("caught up"));
        assert!(anchor.check("S", "t0", 28, false).expect("further on"));
        let cut = anchor.check("S", "t0", 27, false).expect_err("short on the last look");
        assert!(cut.to_string().contains("ends at sequence 27, but this host saw it at 28"), "{cut}");
        anchor.check_running().expect_err("halted");
        let again = anchor.check("S", "t1", 28, true).expect_err("a halted host checks nothing");
        assert!(again.to_string().contains("halted itself"), "{again}");
    }
}
