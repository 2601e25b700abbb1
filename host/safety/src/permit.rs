//! ActionPermits: a previewed plan that passed the hook chain, valid for a TTL, consumed once.
//! Each is sealed with the host key when issued, so a permit written into the shared file by
//! anyone else does not verify. The store also keeps the emergency halt, so every process
//! sharing the file sees it, and it outlives a restart.

mod cluster;
mod files;
mod journal;
mod outcome;
mod wallet;

pub use outcome::outcome_line;
pub use wallet::WalletLease;

use super::audit_log::RecordAt;
use super::host_key::HostKey;
use alloy::primitives::{Address, B256};
use bardo_core::sync::lock;
use bardo_core::tool::{Phase, RiskTier, WritePlan};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// Whether `id` can name a permit file: `permit-` and hex digits, so no id reaches outside the
/// directory.
fn valid_id(id: &str) -> bool {
    id.strip_prefix("permit-")
        .is_some_and(|hex| !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

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
    /// Where its preview's `PermitCreated` record was written (absent before previews stopped
    /// waiting for the disk): a commit takes the permit only with that record on disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_record: Option<RecordAt>,
    /// Which write path, generation and component planned it (absent in permits stored by
    /// earlier versions): a commit runs on that generation while its write path holds it, and
    /// elsewhere only if the same component serves the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_on: Option<PlannedOn>,
    /// What the plan spends in USD at the host's trusted prices (outflows and allowances left),
    /// from the preview's simulation; None when it could not be valued (or no prices are
    /// configured). The confirmation policy's `above_usd` reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend_usd: Option<f64>,
    /// The wallet's balance changes the preview's simulation showed, each valued where the host
    /// can: what a person confirming it is shown, never the plugin's own account of it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub balance_changes: Vec<BalanceChange>,
    /// What the chain lets the plan do at worst, whatever happens before it is mined: the least
    /// the wallet receives and the most it pays of each asset, by the calls' own bounds (see
    /// `hooks::on_chain_bounds`). A commit whose receipts show worse is an outcome mismatch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worst_case: Vec<crate::hooks::on_chain_bounds::WorstCase>,
    /// Why it waits for a person: the confirmation policy that held it at preview (`confirm =
    /// "always"` under profile `trader`); None when none did. Sealed with it, so every door and
    /// process holds it, whatever its own profile's policy (which is applied too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<String>,
    /// Previewed at the operator's own command (sealed): its plan may change an identity.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub operator: bool,
    /// SHA-256 of the on-chain PolicyCage's state at preview (the Safe's guard and its rules;
    /// see [`crate::cage`]); none when the wallet is no Safe. A commit whose cage changed since
    /// is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_hash: Option<alloy::primitives::B256>,
}

/// One change of the wallet's balance in a preview's simulation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BalanceChange {
    /// The token; None for the native coin.
    pub asset: Option<Address>,
    /// Signed, in the token's base units (decimal).
    pub delta: String,
    /// Its USD value at the host's prices, signed; None when it cannot be valued.
    pub usd: Option<f64>,
    /// The token's symbol as it reports it (checked to be a plain short word), for display only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// The token's decimals, for display; None when they could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decimals: Option<u8>,
}

impl BalanceChange {
    /// Its amount as a person reads it: signed whole units and the symbol (`-100 USDC`,
    /// `+0.0499 WETH`), the native coin as ETH; base units where the decimals are not known.
    pub fn amount(&self) -> String {
        let decimals = if self.asset.is_none() { Some(18) } else { self.decimals };
        let symbol = match (&self.symbol, self.asset) {
            (_, None) => "ETH".to_owned(),
            (Some(symbol), Some(_)) => symbol.clone(),
            (None, Some(asset)) => format!("of {}", asset.to_checksum(None)),
        };
        format!("{} {symbol}", whole_units(&self.delta, decimals))
    }
}

/// `delta` (signed base units, decimal) in whole units of a token with `decimals`; base units,
/// said so, where they are not known.
pub fn whole_units(delta: &str, decimals: Option<u8>) -> String {
    let (sign, digits) = match delta.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("+", delta.strip_prefix('+').unwrap_or(delta)),
    };
    let decimals = decimals
        .map(usize::from)
        .filter(|_| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()));
    let Some(decimals) = decimals else { return format!("{sign}{digits} base units") };
    let padded = format!("{digits:0>width$}", width = decimals + 1);
    let (whole, fraction) = padded.split_at(padded.len() - decimals);
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() { format!("{sign}{whole}") } else { format!("{sign}{whole}.{fraction}") }
}

/// Where a permit was planned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedOn {
    /// The write path that planned it (an id of its process's, not a secret).
    pub instance: String,
    /// Its generation number there.
    pub generation: u64,
    /// The component that planned it.
    pub plugin: crate::planner::PluginId,
    /// The profile its write path ran (absent in permits stored by earlier versions): a commit,
    /// cancel or confirmation from the command line runs under it, and a different one is
    /// refused with it named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
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

fn millis_since_epoch(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// Why a permit cannot be issued, committed or cancelled.
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
    /// Its seal does not verify under the host key: written into the store by someone else,
    /// edited there, copied under another id, or stored by a version that did not seal permits.
    #[error("permit `{0}` does not verify under the host key: it was not issued by this host; preview again")]
    Forged(String),
    /// An emergency halt is in force: nothing is issued or executed until an operator resumes.
    #[error(
        "the host is halted since {since} for: {reason}; an operator must run `bardo resume` before any write"
    )]
    Halted {
        /// When it was halted, UTC.
        since: String,
        /// Why, as the agent or operator said.
        reason: String,
    },
    /// Its preview's audit record is not in the log where it was written: lost with a crash
    /// before it reached the disk, or the log was replaced. A permit is executed only with its
    /// record.
    #[error(
        "permit `{0}` has no audit record of its preview in the log (lost in a crash, or the log was replaced); preview again"
    )]
    Unrecorded(String),
    /// The confirmation policy holds it until a person confirms it; nothing changed.
    #[error(
        "permit `{id}` waits for a person to confirm it ({policy} in [safety]): confirm it in `bardo tui` (y) or with `bardo confirm {id}`, or commit through a client that can ask its user (MCP elicitation; A2A with the operator's token), then commit again before it expires"
    )]
    Unconfirmed {
        /// The permit.
        id: String,
        /// The policy that holds it, as configured.
        policy: String,
    },
    /// The shared permit file could not be read or written.
    #[error("permit store {0}")]
    Store(String),
    /// The fleet's shared store (`[cluster]`) did not answer: nothing changed; retry.
    #[error("{0}")]
    Unavailable(String),
    /// A shared document does not carry the fleet's seal for where it is (`[cluster]`): written
    /// by something without the fleet's key, or an older copy written back. Left as it is.
    #[error("{0}")]
    Tampered(String),
    /// The commit's claim on it lapsed before it sent anything, and a recovery gave it back.
    #[error(
        "permit `{0}` is no longer this commit's: its claim lapsed while it waited, and it was given back open; nothing was sent, commit it again"
    )]
    ClaimLost(String),
    /// The store shows it open, but the audit log records its commit since its preview: the
    /// store was rolled back behind the host. Single use is the log's word, not the store's.
    #[error(
        "permit `{id}` was already used: the audit log records its commit (record {record}) though the permit store showed it open — the store was changed behind this host, which halts as tampered"
    )]
    UsedOnRecord {
        /// The permit.
        id: String,
        /// The audit record of its commit.
        record: u64,
    },
}

/// What [`Permits::reopen`] made of a permit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reopened {
    /// Open again.
    Open,
    /// Past its TTL: it can never run, so what it held can go.
    Expired,
    /// Left as it was (not taken, or a halt is in force): what it holds stays held.
    Kept,
}

/// An emergency halt in force: in every process sharing the store, no permit is issued or
/// executed until an operator runs `bardo resume`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Halt {
    /// Why, as the agent or operator said.
    pub reason: String,
    /// When, Unix milliseconds.
    pub at_ms: u64,
}

impl Halt {
    /// When it was halted, as UTC text (`2000-02-29 01:02:03 UTC`).
    pub fn since(&self) -> String {
        utc(self.at_ms)
    }

    /// The refusal of a write while it is in force.
    pub fn refusal(&self) -> PermitError {
        PermitError::Halted { since: self.since(), reason: self.reason.clone() }
    }
}

/// Unix milliseconds as `YYYY-MM-DD hh:mm:ss UTC` (days to a civil date: H. Hinnant's algorithm).
pub fn utc(at_ms: u64) -> String {
    let secs = at_ms / 1000;
    let (days, time) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (time / 3600, time % 3600 / 60, time % 60);
    format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02} UTC")
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
    /// The permit, for reading the file; commit trusts only the sealed copy.
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
        let json = serde_json::to_string(&permit)
            .map_err(|e| PermitError::Store(format!("cannot serialize permit: {e}")))?;
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
                let entry = open(book.halted.as_ref())?;
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
    pub fn cancel(&self, id: &str, now: SystemTime) -> Result<ActionPermit, PermitError> {
        self.with_entry(id, |_, entry| {
            let entry = entry.as_mut().ok_or_else(|| PermitError::Unknown(id.to_owned()))?;
            settle_open(id, &mut entry.state, &entry.permit, now, State::Cancelled)?;
            Ok(entry.permit.clone())
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
