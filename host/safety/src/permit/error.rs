//! Why a permit cannot be issued, committed or cancelled, and the halt that stops them all.

use serde::{Deserialize, Serialize};

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
