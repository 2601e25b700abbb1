//! ActionPermits: a previewed plan that passed the hook chain, valid for a TTL, consumed once.
//! Each is sealed with the host key when issued, so a permit written into the shared file by
//! anyone else does not verify. The store also keeps the emergency halt, so every process
//! sharing the file sees it, and it outlives a restart.

mod action;
mod cluster;
mod error;
mod files;
mod journal;
mod outcome;
mod wallet;

use action::millis_since_epoch;
pub use action::{ActionPermit, BalanceChange, PlannedOn, whole_units};
pub use error::{Halt, PermitError, Reopened, utc};
pub use outcome::outcome_line;
pub use wallet::WalletLease;

use super::audit_log::RecordAt;
use super::host_key::HostKey;
use alloy::primitives::{Address, B256};
use bardo_core::sync::lock;
use bardo_core::tool::Phase;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

/// Whether `id` can name a permit file: `permit-` and hex digits, so no id reaches outside the
/// directory.
fn valid_id(id: &str) -> bool {
    id.strip_prefix("permit-")
        .is_some_and(|hex| !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum State {
    Open,
    Consumed,
    Cancelled,
    Expired,
    Revoked,
}

/// What the host MACs a permit's JSON under (kept apart from its other MACs).
const SEAL_DOMAIN: &str = "bardo-permit";

/// The host's seal on a permit: its JSON exactly as issued and the MAC of those bytes. The text
/// itself is kept, so verifying never depends on how a re-serialization orders or formats it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Seal {
    json: String,
    mac: B256,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    /// The permit, for reading the file; commit trusts only the sealed copy. (The in-memory book
    /// keeps only its [`header`].)
    permit: ActionPermit,
    state: State,
    /// Absent in files written before permits were sealed: such permits are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seal: Option<Seal>,
    /// Taken for execution and not yet finished: the wallet's pending nonce when it was taken
    /// (a crash mid-broadcast leaves this; the next start reconciles it from the chain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sending_from_nonce: Option<u64>,
    /// Who is sending it (a write path's instance) and until when that holds, Unix ms, renewed
    /// while it sends: no other process settles a permit whose sender's lease is live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sending_lease: Option<Lease>,
    /// A person confirmed it (see [`crate::confirm`]), sealed with the host key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    confirmed: Option<Confirmed>,
}

/// Who confirmed a permit and when, MACed with the host key over the permit's id, so a
/// confirmation written into the store by anyone else (or copied from another permit) does
/// not count.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Confirmed {
    by: String,
    at_ms: u64,
    mac: B256,
}

/// What the host MACs a confirmation under.
const CONFIRM_DOMAIN: &str = "bardo-permit-confirmed";

fn confirmation_bytes(id: &str, by: &str, at_ms: u64) -> Vec<u8> {
    format!("{id}\n{by}\n{at_ms}").into_bytes()
}

/// A sender's claim on a permit it is broadcasting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Lease {
    holder: String,
    until_ms: u64,
}

impl Lease {
    /// Whether the claim holds at `now_ms`: not past its time and, with `local` holders (the
    /// permit files: every holder runs on this machine), its process still running — a process
    /// killed mid-broadcast is recovered from at the next start, not its claim's time later.
    fn live(&self, now_ms: u64, local: bool) -> bool {
        self.until_ms > now_ms && (!local || process_running(&self.holder))
    }
}

/// Whether the process a write path's instance names (`<pid>-<random>`) is running here; true
/// when that cannot be told (no `/proc`, another format).
fn process_running(holder: &str) -> bool {
    let proc = std::path::Path::new("/proc");
    match holder.split('-').next().and_then(|pid| pid.parse::<u32>().ok()) {
        Some(pid) if proc.is_dir() => pid == std::process::id() || proc.join(pid.to_string()).exists(),
        _ => true,
    }
}

type Map = BTreeMap<String, Entry>;

/// The store's contents: the halt in force, if any, and every permit by id.
#[derive(Debug, Default, Serialize)]
struct Book {
    halted: Option<Halt>,
    permits: Map,
}

/// A book, or the bare map of permits that earlier versions wrote (read as a book without a
/// halt; its permits are unsealed and so refused).
impl<'de> Deserialize<'de> for Book {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Current {
            #[serde(default)]
            halted: Option<Halt>,
            permits: Map,
        }
        let value = serde_json::Value::deserialize(d)?;
        // Permit ids are `permit-…`: a bare map never has a `permits` key.
        if value.get("permits").is_some() {
            let Current { halted, permits } =
                serde_json::from_value::<Current>(value).map_err(serde::de::Error::custom)?;
            Ok(Self { halted, permits })
        } else {
            let permits = serde_json::from_value::<Map>(value).map_err(serde::de::Error::custom)?;
            Ok(Self { halted: None, permits })
        }
    }
}

/// Every permit this host issued, by id, and the emergency halt: in memory, or in files shared
/// by every `bardo` process (`bardo preview` in one, `bardo commit` in another; see [`files`]),
/// changed only under an exclusive file lock so that a permit is consumed once across processes
/// too.
#[derive(Debug)]
pub struct Permits {
    store: Store,
    key: HostKey,
    /// When this process last removed settled permits, Unix ms (0: not yet).
    swept_ms: AtomicU64,
    /// The length of the last permit's JSON: the next one's is written into that much room
    /// (and an eighth more) instead of growing from serde_json's 128 bytes by copies.
    json_len: AtomicUsize,
    /// The wallets this process's commits are sending for (see [`WalletLease`]).
    busy: wallet::Busy,
}

/// Where the book lives.
#[derive(Debug)]
enum Store {
    /// This process only.
    Memory(Mutex<Book>),
    /// Files every process on this machine shares.
    Files(files::Files),
    /// NATS JetStream, which every host of a fleet shares.
    Cluster(cluster::Shared),
}

/// Settled permits are kept this long (for "already used" answers), then removed.
const KEEP_SETTLED: Duration = Duration::from_secs(24 * 3600);
/// How often a process removes them.
const SWEEP_EVERY: Duration = Duration::from_secs(3600);

/// What the in-memory book keeps of a permit beside its seal: what the book reads itself (its
/// id, chain, wallet, times, state's records). The plan's calls, params, outcomes and bounds are
/// read from the seal, as every permit taken, listed or confirmed is: kept twice, they grew the
/// heap by each permit previewed, and a warm preview paid the page faults (~4 %).
fn header(permit: ActionPermit) -> ActionPermit {
    ActionPermit {
        params: serde_json::Value::Null,
        plan: bardo_core::tool::WritePlan { calls: Vec::new(), expected_outcome: serde_json::Value::Null },
        expected_outcome: serde_json::Value::Null,
        balance_changes: Vec::new(),
        worst_case: Vec::new(),
        bridged: Vec::new(),
        ..permit
    }
}

/// Whether a permit is still worth keeping: open and unexpired, executing, or settled within
/// [`KEEP_SETTLED`].
fn keep(entry: &Entry, now: SystemTime) -> bool {
    (entry.state == State::Open && !expired(&entry.permit, now))
        || entry.sending_from_nonce.is_some()
        || now.duration_since(entry.permit.created_at).is_ok_and(|age| age < KEEP_SETTLED)
}

impl Permits {
    /// Permits kept in this process only, sealed with `key`.
    pub fn in_memory(key: HostKey) -> Self {
        Self {
            store: Store::Memory(Mutex::default()),
            key,
            swept_ms: AtomicU64::new(0),
            json_len: AtomicUsize::new(0),
            busy: wallet::Busy::default(),
        }
    }

    /// Permits kept with `path` (its halt in it, each permit in `<path>.d/`, created on first
    /// use), sealed with `key`: every process sharing them must hold the same key
    /// (`[safety] host_key`), or it refuses the others' permits.
    pub fn open(path: &Path, key: HostKey) -> Self {
        Self {
            store: Store::Files(files::Files::new(path)),
            key,
            swept_ms: AtomicU64::new(0),
            json_len: AtomicUsize::new(0),
            busy: wallet::Busy::default(),
        }
    }

    /// Permits kept in the fleet's NATS cluster, sealed with `key`, which every host of the
    /// fleet must hold. When the cluster does not answer, every operation fails with
    /// [`PermitError::Unavailable`]: nothing falls back to local files.
    pub fn shared(cluster: bardo_cluster::Cluster, key: HostKey) -> Self {
        Self {
            store: Store::Cluster(cluster::Shared::new(cluster)),
            key,
            swept_ms: AtomicU64::new(0),
            json_len: AtomicUsize::new(0),
            busy: wallet::Busy::default(),
        }
    }

    /// Apply `f` to the halt in force and permit `id` (None when there is none; set it to store
    /// one).
    /// With a cluster `f` runs again when another host changed the permit first.
    fn with_entry<R>(
        &self,
        id: &str,
        f: impl FnMut(Option<&Halt>, &mut Option<Entry>) -> R,
    ) -> Result<R, PermitError> {
        let mem = match &self.store {
            Store::Files(files) => return files.with_entry(id, f).map_err(PermitError::Store),
            Store::Cluster(shared) => return Ok(shared.with_entry(id, f)?),
            Store::Memory(mem) => mem,
        };
        let mut f = f;
        let mut book = lock(mem);
        let mut entry = book.permits.remove(id);
        let out = f(book.halted.as_ref(), &mut entry);
        if let Some(entry) = entry {
            book.permits.insert(id.to_owned(), entry);
        }
        Ok(out)
    }

    /// Apply `f` to the halt and every permit at once.
    /// With a cluster `f` runs again when another host changed any of them first.
    fn with_all<R>(&self, f: impl FnMut(&mut Option<Halt>, &mut Map) -> R) -> Result<R, PermitError> {
        let mem = match &self.store {
            Store::Files(files) => return files.with_all(f).map_err(PermitError::Store),
            Store::Cluster(shared) => return Ok(shared.with_all(f)?),
            Store::Memory(mem) => mem,
        };
        let mut f = f;
        let mut book = lock(mem);
        let Book { halted, permits } = &mut *book;
        Ok(f(halted, permits))
    }

    /// Seal a new permit with the host key and record it open; refused while halted.
    pub fn insert(&self, permit: ActionPermit) -> Result<(), PermitError> {
        self.sweep(permit.created_at);
        let room = self.json_len.load(Ordering::Relaxed);
        let mut bytes = Vec::with_capacity(room + room / 8);
        serde_json::to_writer(&mut bytes, &permit)
            .map_err(|e| PermitError::Store(format!("cannot serialize permit: {e}")))?;
        self.json_len.store(bytes.len(), Ordering::Relaxed);
        let json = String::from_utf8(bytes).map_err(|e| PermitError::Store(e.to_string()))?;
        let seal = Seal { mac: self.key.mac(SEAL_DOMAIN, json.as_bytes()), json };
        let (id, now) = (permit.permit_id.clone(), permit.created_at);
        let open = |halted: Option<&Halt>| match halted {
            Some(halt) => Err(halt.refusal()),
            None => Ok(Entry {
                permit,
                state: State::Open,
                seal: Some(seal),
                sending_from_nonce: None,
                sending_lease: None,
                confirmed: None,
            }),
        };
        match &self.store {
            Store::Files(files) => files.insert(&id, now, open).map_err(PermitError::Store)?,
            Store::Cluster(shared) => shared.insert(&id, &open(None)?),
            Store::Memory(mem) => {
                let mut book = lock(mem);
                let mut entry = open(book.halted.as_ref())?;
                entry.permit = header(entry.permit);
                book.permits.insert(id, entry);
                Ok(())
            }
        }
    }

    /// At most once per [`SWEEP_EVERY`] per process: remove the permits [`keep`] lets go.
    fn sweep(&self, now: SystemTime) {
        let now_ms = millis_since_epoch(now);
        let last = self.swept_ms.load(Ordering::Relaxed);
        if last != 0 && now_ms.saturating_sub(last) < SWEEP_EVERY.as_millis() as u64 {
            return;
        }
        self.swept_ms.store(now_ms, Ordering::Relaxed);
        let swept = match &self.store {
            Store::Files(files) => files.sweep(now),
            Store::Cluster(shared) => shared.sweep(now).map_err(|e| e.to_string()),
            Store::Memory(mem) => {
                lock(mem).permits.retain(|_, e| keep(e, now));
                Ok(())
            }
        };
        if let Err(e) = swept {
            tracing::warn!("cannot remove settled permits: {e}");
        }
    }

    /// Take an open permit for execution, as it was sealed. Refused while halted, or if its seal
    /// does not verify under this host's key; otherwise its state changes to consumed under the
    /// lock, so of two concurrent commits exactly one gets it.
    pub fn take(&self, id: &str, now: SystemTime) -> Result<ActionPermit, PermitError> {
        self.take_then(id, now, None, |_| Ok(()), |_| None, |_| {})
    }

    /// [`Self::take`], first asking `recorded` whether the sealed permit's audit record is on
    /// disk where it was written and nothing after it records its commit (a permit it refuses
    /// is left as it is), then
    /// running `then` on it in the same locked step (commit counts the spend there: no process
    /// can see the permit taken and its spend not yet counted). A permit for which
    /// `unconfirmed` names a policy (the confirmation policy holds it) is taken only once a
    /// person confirmed it ([`Self::confirm`]); before, it is refused and stays open. With
    /// `claim` (a write path's instance and until when), the taker's claim on it is recorded in
    /// the same step: a taker that dies before it sends anything is seen by the next start
    /// (see [`Self::unfinished`]), which gives the permit back.
    pub fn take_then(
        &self,
        id: &str,
        now: SystemTime,
        claim: Option<(&str, SystemTime)>,
        recorded: impl FnOnce(&RecordAt) -> Result<(), PermitError>,
        unconfirmed: impl Fn(&ActionPermit) -> Option<String>,
        then: impl FnOnce(&ActionPermit),
    ) -> Result<ActionPermit, PermitError> {
        // Run at most once each, though a cluster store may run this step again after another
        // host's change (settling a spend twice as spent changes nothing).
        let (mut recorded, mut then) = (Some(recorded), Some(then));
        self.with_entry(id, |halted, entry| {
            if let Some(halt) = halted {
                return Err(halt.refusal());
            }
            let entry = entry.as_mut().ok_or_else(|| PermitError::Unknown(id.to_owned()))?;
            // Verified before anything changes: a forged entry is refused and left as it is.
            let permit = self.unseal(id, entry.seal.as_ref())?;
            // Used, cancelled or revoked: said as such, before the log is asked anything.
            if entry.state != State::Open {
                settle_open(id, &mut entry.state, &permit, now, State::Consumed)?;
            }
            if let (Some(at), Some(recorded)) = (&permit.audit_record, recorded.take()) {
                recorded(at)?;
            }
            if let Some(policy) = unconfirmed(&permit)
                && self.confirmation(id, entry.confirmed.as_ref()).is_none()
            {
                // Not consumed: it waits, open, for a person (or its expiry).
                check_open(id, &entry.state, &permit, now)?;
                return Err(PermitError::Unconfirmed { id: id.to_owned(), policy });
            }
            settle_open(id, &mut entry.state, &permit, now, State::Consumed)?;
            if let Some((holder, until)) = claim {
                entry.sending_lease =
                    Some(Lease { holder: holder.to_owned(), until_ms: millis_since_epoch(until) });
            }
            if let Some(then) = then.take() {
                then(&permit);
            }
            Ok(permit)
        })?
    }

    /// Record that permit `id` is being executed by `holder` (a write path's instance), the
    /// wallet's pending nonce being `nonce`, its claim holding until `until` unless renewed.
    /// Refused when the permit is no longer taken by `holder` (its claim lapsed meanwhile and a
    /// recovery gave it back): nothing may be sent for it then.
    pub fn mark_sending(
        &self,
        id: &str,
        nonce: u64,
        holder: &str,
        until: SystemTime,
    ) -> Result<(), PermitError> {
        let lease = Lease { holder: holder.to_owned(), until_ms: millis_since_epoch(until) };
        self.with_entry(id, |_, entry| {
            let Some(e) = entry.as_mut().filter(|e| {
                e.state == State::Consumed && e.sending_lease.as_ref().is_none_or(|l| l.holder == holder)
            }) else {
                return Err(PermitError::ClaimLost(id.to_owned()));
            };
            e.sending_from_nonce = Some(nonce);
            e.sending_lease = Some(lease.clone());
            Ok(())
        })?
    }

    /// Extend `holder`'s claim on permit `id` to `until`, if it still holds it.
    pub fn renew_sending(&self, id: &str, holder: &str, until: SystemTime) -> Result<(), PermitError> {
        let until_ms = millis_since_epoch(until);
        self.with_entry(id, |_, entry| {
            if let Some(lease) =
                entry.as_mut().and_then(|e| e.sending_lease.as_mut()).filter(|l| l.holder == holder)
            {
                lease.until_ms = until_ms;
            }
        })
    }

    /// Give back permit `id`, taken for a commit that sent nothing (refused or cancelled before
    /// its first transaction was recorded): open again, until it expires, for a retry.
    pub fn reopen(&self, id: &str, now: SystemTime) -> Result<Reopened, PermitError> {
        self.with_entry(id, |halted, entry| {
            let Some(entry) = entry.as_mut().filter(|e| e.state == State::Consumed) else {
                return Reopened::Kept;
            };
            if expired(&entry.permit, now) {
                return Reopened::Expired;
            }
            if halted.is_some() {
                return Reopened::Kept;
            }
            entry.state = State::Open;
            entry.sending_from_nonce = None;
            entry.sending_lease = None;
            Reopened::Open
        })
    }

    /// Record that permit `id`'s execution finished (whatever its outcome).
    pub fn mark_finished(&self, id: &str) -> Result<(), PermitError> {
        self.with_entry(id, |_, entry| {
            entry.iter_mut().for_each(|e| {
                e.sending_from_nonce = None;
                e.sending_lease = None;
            })
        })
    }

    /// Permits whose execution never finished and whose sender's claim lapsed by `now` (it
    /// crashed mid-broadcast, or stopped renewing): id, chain, wallet and the wallet's pending
    /// nonce when they were taken. A permit another process is still sending is not listed.
    pub fn unfinished(&self, now: SystemTime) -> Result<Vec<(String, u64, Address, u64)>, PermitError> {
        let (now_ms, local) = (millis_since_epoch(now), self.local());
        self.with_all(|_, permits| {
            permits
                .iter()
                .filter(|(_, e)| e.sending_lease.as_ref().is_none_or(|l| !l.live(now_ms, local)))
                .filter(|(_, e)| e.sending_from_nonce.is_some() || e.sending_lease.is_some())
                .map(|(id, e)| {
                    (id.clone(), e.permit.chain_id, e.permit.sender, e.sending_from_nonce.unwrap_or_default())
                })
                .collect()
        })
    }

    /// Whether every claim's holder runs on this machine (the permit files).
    fn local(&self) -> bool {
        matches!(self.store, Store::Files(_))
    }

    /// Permits some write path is sending now (its claim live at `now`): their transactions
    /// are that sender's to record, not a recovery's.
    pub fn sending(&self, now: SystemTime) -> Result<std::collections::BTreeSet<String>, PermitError> {
        let (now_ms, local) = (millis_since_epoch(now), self.local());
        self.with_all(|_, permits| {
            permits
                .iter()
                .filter(|(_, e)| e.sending_lease.as_ref().is_some_and(|l| l.live(now_ms, local)))
                .map(|(id, _)| id.clone())
                .collect()
        })
    }

    /// The open, unexpired permits whose seal verifies under this host's key (a permit
    /// written into the store by anyone else is not listed), oldest first.
    pub fn open_permits(&self, now: SystemTime) -> Result<Vec<ActionPermit>, PermitError> {
        let mut open = self.with_all(|_, permits| {
            permits
                .iter()
                .filter(|(_, e)| e.state == State::Open && !expired(&e.permit, now))
                .filter_map(|(id, e)| self.unseal(id, e.seal.as_ref()).ok())
                .collect::<Vec<_>>()
        })?;
        open.sort_by_key(|p| p.created_at);
        Ok(open)
    }

    /// Permit `id` as sealed, if it is open and unexpired, and who confirmed it (if anyone did).
    pub fn open_permit(
        &self,
        id: &str,
        now: SystemTime,
    ) -> Result<(ActionPermit, Option<String>), PermitError> {
        self.with_entry(id, |_, entry| {
            let entry = entry.as_ref().ok_or_else(|| PermitError::Unknown(id.to_owned()))?;
            let permit = self.unseal(id, entry.seal.as_ref())?;
            check_open(id, &entry.state, &permit, now)?;
            Ok((permit, self.confirmation(id, entry.confirmed.as_ref())))
        })?
    }

    /// Record that a person (`by`: the front end and how) confirmed open permit `id`; a second
    /// confirmation changes nothing. Refused while halted.
    pub fn confirm(&self, id: &str, by: &str, now: SystemTime) -> Result<ActionPermit, PermitError> {
        let at_ms = millis_since_epoch(now);
        self.with_entry(id, |halted, entry| {
            if let Some(halt) = halted {
                return Err(halt.refusal());
            }
            let entry = entry.as_mut().ok_or_else(|| PermitError::Unknown(id.to_owned()))?;
            let permit = self.unseal(id, entry.seal.as_ref())?;
            check_open(id, &entry.state, &permit, now)?;
            if self.confirmation(id, entry.confirmed.as_ref()).is_none() {
                let mac = self.key.mac(CONFIRM_DOMAIN, &confirmation_bytes(id, by, at_ms));
                entry.confirmed = Some(Confirmed { by: by.to_owned(), at_ms, mac });
            }
            Ok(permit)
        })?
    }

    /// Who confirmed permit `id`, if `confirmed` verifies under the host key for it.
    fn confirmation(&self, id: &str, confirmed: Option<&Confirmed>) -> Option<String> {
        confirmed
            .filter(|c| self.key.verify(CONFIRM_DOMAIN, &confirmation_bytes(id, &c.by, c.at_ms), &c.mac))
            .map(|c| c.by.clone())
    }

    /// Cancel an open permit.
    pub fn cancel(&self, id: &str, now: SystemTime) -> Result<(), PermitError> {
        self.with_entry(id, |_, entry| {
            let entry = entry.as_mut().ok_or_else(|| PermitError::Unknown(id.to_owned()))?;
            settle_open(id, &mut entry.state, &entry.permit, now, State::Cancelled)
        })?
    }

    /// The permit `seal` holds, if the seal verifies under this host's key and names `id`.
    fn unseal(&self, id: &str, seal: Option<&Seal>) -> Result<ActionPermit, PermitError> {
        let forged = || PermitError::Forged(id.to_owned());
        let seal = seal.ok_or_else(forged)?;
        if !self.key.verify(SEAL_DOMAIN, seal.json.as_bytes(), &seal.mac) {
            return Err(forged());
        }
        let permit: ActionPermit = serde_json::from_str(&seal.json)
            .map_err(|e| PermitError::Store(format!("sealed permit `{id}` cannot be read: {e}")))?;
        // A genuine permit copied under another id is refused too: its id is sealed with it.
        if permit.permit_id != id {
            return Err(forged());
        }
        Ok(permit)
    }

    /// Halt and revoke every open permit, in one locked step; returns the ids revoked. A halt
    /// already in force stands, with its time and reason.
    pub fn halt(&self, reason: &str, now: SystemTime) -> Result<Vec<String>, PermitError> {
        self.with_all(|halted, permits| {
            if halted.is_none() {
                *halted = Some(Halt { reason: reason.to_owned(), at_ms: millis_since_epoch(now) });
            }
            let mut revoked = Vec::new();
            for (id, entry) in permits.iter_mut().filter(|(_, e)| e.state == State::Open) {
                entry.state = State::Revoked;
                revoked.push(id.clone());
            }
            revoked
        })
    }

    /// Lift the halt; returns the one lifted, or `None` if there was none.
    pub fn resume(&self) -> Result<Option<Halt>, PermitError> {
        self.with_all(|halted, _| halted.take())
    }

    /// The halt in force and the phase agents lowered the whole fleet to (`[cluster]`; None
    /// when none did, or when the store is not shared: a host's phase is then its own), read
    /// at once.
    pub fn controls(&self) -> Result<(Option<Halt>, Option<Phase>), PermitError> {
        match &self.store {
            Store::Cluster(shared) => Ok(shared.controls()?),
            Store::Files(_) | Store::Memory(_) => Ok((self.halted()?, None)),
        }
    }

    /// Change the fleet's lowered phase with `f` (compare-and-set, `[cluster]` only); None when
    /// the store is not shared.
    pub fn change_fleet_phase<R>(
        &self,
        f: impl FnMut(&mut Option<Phase>) -> R,
    ) -> Result<Option<R>, PermitError> {
        match &self.store {
            Store::Cluster(shared) => Ok(Some(shared.change_fleet_phase(f)?)),
            Store::Files(_) | Store::Memory(_) => Ok(None),
        }
    }

    /// The halt in force, if any.
    pub fn halted(&self) -> Result<Option<Halt>, PermitError> {
        match &self.store {
            // Without the file lock: writers replace the file whole.
            Store::Files(files) => files.halted().map_err(PermitError::Store),
            Store::Cluster(shared) => Ok(shared.halted()?),
            Store::Memory(mem) => Ok(lock(mem).halted.clone()),
        }
    }
}

/// Move an open permit's `state` to `to`; any other state is the error it names. Expiry is
/// judged on `permit`.
fn settle_open(
    id: &str,
    state: &mut State,
    permit: &ActionPermit,
    now: SystemTime,
    to: State,
) -> Result<(), PermitError> {
    match *state {
        State::Open if expired(permit, now) => {
            *state = State::Expired;
            Err(PermitError::Expired(id.to_owned()))
        }
        State::Open => {
            *state = to;
            Ok(())
        }
        State::Consumed => Err(PermitError::Consumed(id.to_owned())),
        State::Cancelled => Err(PermitError::Cancelled(id.to_owned())),
        State::Expired => Err(PermitError::Expired(id.to_owned())),
        State::Revoked => Err(PermitError::Revoked(id.to_owned())),
    }
}

/// Whether a permit in `state` is still open and unexpired, changing nothing.
fn check_open(id: &str, state: &State, permit: &ActionPermit, now: SystemTime) -> Result<(), PermitError> {
    let mut state = *state;
    settle_open(id, &mut state, permit, now, State::Open)
}

fn expired(p: &ActionPermit, now: SystemTime) -> bool {
    now.duration_since(p.created_at).is_ok_and(|age| age >= p.ttl)
}

#[cfg(test)]
mod tests;
