//! SpendingLimiter: what a plan spends, in USD, against per-transaction and rolling-day limits.
//!
//! Spend is read from the simulation's change set (the wallet's outflows) and the allowances it
//! leaves behind — an allowance counts as spend even if the plan does not use it — so it runs
//! after the simulator, not before it as a static check could. Tokens are valued by the host's
//! own pool and oracle reads (`valuation`, configured by `[safety] pricing_file` /
//! `[safety.pricing]`), never by a plugin; a token that cannot be valued is refused, never
//! waved through. Previews reserve their spend under one lock, so concurrent previews cannot
//! together exceed the day's limit; a reservation becomes spend at commit and is released when
//! the permit is cancelled, refused or expires. With `[safety] spending_ledger` the ledger is a
//! file every `bardo` process shares under a lock, so separate `bardo preview` runs add up.
//! The hot lane bounds the spend of any short window (an hour by default) below the day's.

use super::{Decision, Findings, Proposal, SafetyHook};
use crate::valuation::{MicroUsd, Valuer, usd};
use alloy::primitives::{Address, U256};
use bardo_core::error::ErrorCode;
use bardo_core::sync::lock;
use bardo_evm::changes::Change;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// `[safety.spending]` limits, whole US dollars: across every chain, and (`chains`) per chain.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpendingLimits {
    /// Most one write may spend, whole USD.
    pub per_tx_usd: u64,
    /// Most all writes may spend in a rolling 24 h, whole USD.
    pub per_day_usd: u64,
    /// The hot lane: at most this much within any `hot_lane_secs` window, so the day's budget
    /// cannot be drained in minutes by a looping agent. None: no hot lane.
    #[serde(default)]
    pub hot_lane_usd: Option<u64>,
    /// The hot lane's window, seconds (default one hour).
    #[serde(default = "default_hot_lane_secs")]
    pub hot_lane_secs: u64,
    /// Tighter limits for one chain (`[safety.spending.chains.<id>]`), besides those above,
    /// which count every chain's spend together.
    #[serde(default, deserialize_with = "by_chain_id")]
    pub chains: BTreeMap<u64, ChainLimits>,
}

/// TOML table keys are strings: `[safety.spending.chains.8453]` is chain 8453.
fn by_chain_id<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<u64, ChainLimits>, D::Error> {
    let by_key: BTreeMap<String, ChainLimits> = Deserialize::deserialize(d)?;
    by_key
        .into_iter()
        .map(|(k, v)| {
            let id = k.parse::<u64>().map_err(|_| {
                serde::de::Error::custom(format!("[safety.spending.chains] key {k:?} must be a chain id"))
            })?;
            Ok((id, v))
        })
        .collect()
}

/// One chain's own spending limits, whole US dollars; unset: only the limits across chains.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainLimits {
    /// Most one write on this chain may spend.
    #[serde(default)]
    pub per_tx_usd: Option<u64>,
    /// Most this chain's writes may spend in a rolling 24 h.
    #[serde(default)]
    pub per_day_usd: Option<u64>,
}

fn default_hot_lane_secs() -> u64 {
    3600
}

impl SpendingLimits {
    /// Per-transaction and per-day limits, no hot lane.
    pub fn new(per_tx_usd: u64, per_day_usd: u64) -> Self {
        let hot_lane_secs = default_hot_lane_secs();
        Self { per_tx_usd, per_day_usd, hot_lane_usd: None, hot_lane_secs, chains: BTreeMap::new() }
    }

    /// With chain `chain`'s own limits.
    pub fn with_chain(mut self, chain: u64, limits: ChainLimits) -> Self {
        self.chains.insert(chain, limits);
        self
    }

    /// With a hot lane of `usd` per `window`.
    pub fn with_hot_lane(self, usd: u64, window: Duration) -> Self {
        Self { hot_lane_usd: Some(usd), hot_lane_secs: window.as_secs().max(1), ..self }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum State {
    Reserved,
    Spent,
}

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    /// Micro-dollars.
    usd: MicroUsd,
    /// Unix milliseconds: reservation time, or spending time once spent.
    at_ms: u64,
    state: State,
    /// The chain it was spent on (none in a ledger written before chains were told apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chain: Option<u64>,
}

type Ledger = BTreeMap<String, Entry>;

/// The limiter and its ledger (in memory, or a file every `bardo` process shares).
pub struct SpendingLimiter {
    limits: SpendingLimits,
    valuer: Valuer,
    ttl: Duration,
    clock: crate::Clock,
    ledger: LedgerStore,
}

/// Where the ledger lives.
enum LedgerStore {
    /// This process only.
    Memory(Mutex<Ledger>),
    /// A file every process on this machine shares.
    File(PathBuf),
    /// The document `spending` in the fleet's NATS cluster: one day limit for every host.
    Cluster(bardo_cluster::Cluster),
}

const DAY: Duration = Duration::from_secs(24 * 3600);

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl SpendingLimiter {
    /// A limiter valuing tokens with `valuer`; reservations older than `ttl` (the permit TTL)
    /// lapse.
    pub fn new(limits: SpendingLimits, valuer: Valuer, ttl: Duration, clock: crate::Clock) -> Self {
        Self { limits, valuer, ttl, clock, ledger: LedgerStore::Memory(Mutex::default()) }
    }

    /// Keep the ledger in `path`, shared with other `bardo` processes (`bardo preview` reserves,
    /// `bardo commit` spends, in different processes).
    pub fn with_ledger_file(mut self, path: &Path) -> Self {
        self.ledger = LedgerStore::File(path.to_owned());
        self
    }

    /// Keep the ledger in the fleet's NATS cluster, shared by every host: each change a
    /// compare-and-set, so hosts racing one day's limit cannot both spend its last dollar.
    pub fn with_cluster(mut self, cluster: bardo_cluster::Cluster) -> Self {
        self.ledger = LedgerStore::Cluster(cluster);
        self
    }

    /// Apply `f` to the ledger: under the in-process lock, the file lock, or by compare-and-set
    /// (then `f` runs again when another host changed it first). Fails with the code to report.
    fn with_ledger<R>(&self, mut f: impl FnMut(&mut Ledger) -> R) -> Result<R, (ErrorCode, String)> {
        match &self.ledger {
            LedgerStore::Memory(mem) => Ok(f(&mut lock(mem))),
            LedgerStore::File(path) => {
                crate::store::with_locked(path, f).map_err(|e| (ErrorCode::Internal, e))
            }
            LedgerStore::Cluster(cluster) => cluster
                .update_json("spending", |ledger: &mut Option<Ledger>| f(ledger.get_or_insert_default()))
                .map_err(|e| {
                    let code = match &e {
                        // Someone without the fleet's key changed it: nothing can be counted on it.
                        bardo_cluster::ClusterError::Tampered(_) => ErrorCode::Denied,
                        e if e.retryable() => ErrorCode::Unavailable,
                        _ => ErrorCode::Internal,
                    };
                    (code, e.to_string())
                }),
        }
    }

    /// What the plan spends per token, from the simulation's change set: what leaves the
    /// wallet, plus what the allowances it leaves behind could move (a spender can pull it
    /// later) — their exposure when the approval-exposure hook measured it, else their whole
    /// amounts. The native coin is keyed by `None`.
    pub(crate) fn spend(found: &Findings) -> BTreeMap<Option<Address>, U256> {
        let mut spend: BTreeMap<Option<Address>, U256> = BTreeMap::new();
        let Some(sim) = &found.simulation else { return spend };
        let mut add = |asset: Option<Address>, amount: U256| {
            let e = spend.entry(asset).or_default();
            *e = e.saturating_add(amount);
        };
        for change in &sim.changes.changes {
            match change {
                Change::Balance { asset, delta } if delta.is_negative() => add(*asset, delta.unsigned_abs()),
                Change::Allowance { token, after, .. } if found.exposure.is_none() => {
                    add(Some(*token), *after)
                }
                Change::Permit2Allowance { token, amount, .. } if found.exposure.is_none() => {
                    add(Some(*token), *amount)
                }
                _ => {}
            }
        }
        if let Some(exposure) = &found.exposure {
            for (token, units) in &exposure.units {
                add(Some(*token), *units);
            }
        }
        spend
    }

    /// Spent and reserved within `window` of `now` (reservations count while their permit lives),
    /// on `chain` or (none) on every chain.
    fn total_within(&self, ledger: &Ledger, now_ms: u64, window: Duration, chain: Option<u64>) -> MicroUsd {
        let live = |e: &Entry, keep: Duration| now_ms.saturating_sub(e.at_ms) < keep.as_millis() as u64;
        ledger
            .values()
            .filter(|e| chain.is_none() || e.chain == chain)
            .filter(|e| match e.state {
                State::Spent => live(e, window),
                State::Reserved => live(e, self.ttl),
            })
            .map(|e| e.usd)
            .sum()
    }
}

/// What a simulated plan spends in USD at the host's prices (see [`SpendingLimiter::spend`]);
/// why not, when a token (or the native coin) cannot be valued.
pub(crate) fn valued_spend(valuer: &Valuer, chain_id: u64, found: &Findings) -> Result<MicroUsd, String> {
    let mut total: MicroUsd = 0;
    for (asset, amount) in SpendingLimiter::spend(found) {
        let Some(token) = asset else {
            return Err(format!(
                "the plan spends {amount} wei of the native coin, which the limiter cannot value"
            ));
        };
        total = total.saturating_add(valuer.usd(chain_id, token, amount)?);
    }
    Ok(total)
}

impl SafetyHook for SpendingLimiter {
    fn name(&self) -> &'static str {
        "spending-limiter"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let over = |reason: String| Decision::Reject { code: ErrorCode::LimitExceeded, reason };
        let total = match valued_spend(&self.valuer, p.chain_id, found) {
            Ok(total) => total,
            Err(reason) => return Decision::Reject { code: ErrorCode::Denied, reason },
        };
        let per_tx = MicroUsd::from(self.limits.per_tx_usd) * 1_000_000;
        if total > per_tx {
            return over(format!("spends {} but the per-transaction limit is {}", usd(total), usd(per_tx)));
        }
        let chain = self.limits.chains.get(&p.chain_id).copied().unwrap_or_default();
        let dollars = |u: u64| MicroUsd::from(u) * 1_000_000;
        if let Some(limit) = chain.per_tx_usd.map(dollars).filter(|l| total > *l) {
            return over(format!(
                "spends {} but chain {}'s per-transaction limit is {} ([safety.spending.chains.{}])",
                usd(total),
                p.chain_id,
                usd(limit),
                p.chain_id
            ));
        }
        let now = unix_ms((self.clock)());
        let per_day = MicroUsd::from(self.limits.per_day_usd) * 1_000_000;
        let hot_lane = self.limits.hot_lane_usd.map(|u| MicroUsd::from(u) * 1_000_000);
        let window = Duration::from_secs(self.limits.hot_lane_secs);
        let decided = self.with_ledger(|ledger| {
            ledger.retain(|_, e| now.saturating_sub(e.at_ms) < DAY.as_millis() as u64);
            let used = self.total_within(ledger, now, DAY, None);
            if let Some(limit) = chain.per_day_usd.map(dollars) {
                let on_chain = self.total_within(ledger, now, DAY, Some(p.chain_id));
                if on_chain.saturating_add(total) > limit {
                    return over(format!(
                        "spends {} but only {} of chain {}'s daily {} is left ([safety.spending.chains.{}]; spent or reserved by open permits)",
                        usd(total),
                        usd(limit.saturating_sub(on_chain)),
                        p.chain_id,
                        usd(limit),
                        p.chain_id
                    ));
                }
            }
            if used.saturating_add(total) > per_day {
                return over(format!(
                    "spends {} but only {} of the daily {} across every chain is left (spent or reserved by open permits)",
                    usd(total),
                    usd(per_day.saturating_sub(used)),
                    usd(per_day)
                ));
            }
            if let Some(lane) = hot_lane {
                let recent = self.total_within(ledger, now, window, None);
                if recent.saturating_add(total) > lane {
                    return over(format!(
                        "spends {} but the hot lane allows {} per {} s and {} of it is used; wait or preview less",
                        usd(total),
                        usd(lane),
                        window.as_secs(),
                        usd(recent)
                    ));
                }
            }
            let entry = Entry { usd: total, at_ms: now, state: State::Reserved, chain: Some(p.chain_id) };
            ledger.insert(p.permit_id.to_owned(), entry);
            Decision::Allow
        });
        decided.unwrap_or_else(|(code, e)| Decision::Reject {
            code,
            reason: format!("the spending ledger is unusable: {e}"),
        })
    }

    fn settle(&self, permit_id: &str, executed: bool) {
        let now = unix_ms((self.clock)());
        let settled = self.with_ledger(|ledger| {
            if executed {
                if let Some(e) = ledger.get_mut(permit_id) {
                    e.state = State::Spent;
                    e.at_ms = now;
                }
            } else {
                ledger.remove(permit_id);
            }
        });
        if let Err((_, e)) = settled {
            tracing::error!("settling {permit_id} in the spending ledger: {e}");
        }
    }

    fn reopen(&self, permit_id: &str) {
        let now = unix_ms((self.clock)());
        let reserved = self.with_ledger(|ledger| {
            if let Some(e) = ledger.get_mut(permit_id).filter(|e| e.state == State::Spent) {
                e.state = State::Reserved;
                e.at_ms = now;
            }
        });
        if let Err((_, e)) = reserved {
            tracing::error!("holding {permit_id}'s spend again in the spending ledger: {e}");
        }
    }
}
