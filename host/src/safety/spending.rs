//! SpendingLimiter: what a plan spends, in USD, against per-transaction and rolling-day limits.
//!
//! Spend is read from the simulation (the wallet's outflows) and from the plan's approvals — an
//! approval counts as spend even if the plan does not use it all — so it runs after the
//! simulator, not before it as a static check could. Tokens are valued from on-chain pool prices
//! through the `data_get_token_price` tool; a token that cannot be valued is refused, never
//! waved through. Previews reserve their spend under one lock, so concurrent previews cannot
//! together exceed the day's limit; a reservation becomes spend at commit and is released when
//! the permit is cancelled, refused or expires.

use super::hooks::{Decision, Findings, Proposal, SafetyHook};
use crate::error::ErrorCode;
use crate::plugin::Host;
use alloy::primitives::{Address, U256};
use alloy::sol_types::SolCall;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

alloy::sol! {
    function approve(address spender, uint256 amount) external returns (bool);
    function decimals() external view returns (uint8);
}

/// Micro-dollars (1e-6 USD): integer money, no floats.
pub type MicroUsd = u128;

/// `[safety.spending]` limits, whole US dollars.
#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpendingLimits {
    pub per_tx_usd: u64,
    pub per_day_usd: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Reserved,
    Spent,
}

#[derive(Debug)]
struct Entry {
    usd: MicroUsd,
    at: SystemTime,
    state: State,
}

/// The limiter and its ledger.
pub struct SpendingLimiter {
    limits: SpendingLimits,
    host: Weak<Host>,
    ttl: Duration,
    clock: super::Clock,
    ledger: Mutex<BTreeMap<String, Entry>>,
}

const DAY: Duration = Duration::from_secs(24 * 3600);

impl SpendingLimiter {
    /// A limiter valuing tokens through `host`'s price tool; reservations older than `ttl`
    /// (the permit TTL) lapse.
    pub fn new(limits: SpendingLimits, host: &Arc<Host>, ttl: Duration, clock: super::Clock) -> Self {
        Self { limits, host: Arc::downgrade(host), ttl, clock, ledger: Mutex::default() }
    }

    /// The USD value of `amount` base units of `token` on `chain`.
    fn value(&self, host: &Host, chain: u64, token: Address, amount: U256) -> Result<MicroUsd, String> {
        let caps = host.caps();
        let client = caps.chain.chains.get(chain).map_err(|e| e.to_string())?;
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        let raw = caps
            .chain
            .chains
            .block_on(client.call(token, decimalsCall {}.abi_encode().into(), U256::ZERO, None, deadline))
            .map_err(|e| format!("reading decimals of {token}: {e}"))?;
        let decimals =
            decimalsCall::abi_decode_returns(&raw).map_err(|e| format!("{token} decimals: {e}"))?;
        let params = serde_json::json!({"chain_id": chain, "token": token.to_checksum(None)});
        let answer = host.call("data_get_token_price", &params.to_string()).result.map_err(|e| {
            format!(
                "cannot value {token} in USD ({}); a write that cannot be valued is not allowed",
                e.message
            )
        })?;
        let price: serde_json::Value = serde_json::from_str(&answer).map_err(|e| e.to_string())?;
        let price = price["price"].as_str().ok_or("the price tool answered without a price")?;
        let micro_price = parse_micro(price).ok_or_else(|| format!("price {price:?} is not a decimal"))?;
        let usd = amount.saturating_mul(U256::from(micro_price)) / U256::from(10u8).pow(U256::from(decimals));
        Ok(u128::try_from(usd).unwrap_or(u128::MAX))
    }

    /// What the plan spends per token: outflows in the simulation, or approvals if larger.
    fn spend(p: &Proposal<'_>, found: &Findings) -> BTreeMap<Address, U256> {
        let mut spend: BTreeMap<Address, U256> = BTreeMap::new();
        if let Some(sim) = &found.simulation {
            for (token, delta) in &sim.balance_deltas {
                if let Some(token) = token
                    && delta.is_negative()
                {
                    *spend.entry(*token).or_default() += delta.unsigned_abs();
                }
            }
        }
        for call in &p.plan.calls {
            if let Ok(a) = approveCall::abi_decode(&call.data) {
                let e = spend.entry(call.to).or_default();
                *e = (*e).max(a.amount);
            }
        }
        spend
    }

    fn day_total(&self, ledger: &BTreeMap<String, Entry>, now: SystemTime) -> MicroUsd {
        ledger
            .values()
            .filter(|e| match e.state {
                State::Spent => now.duration_since(e.at).is_ok_and(|a| a < DAY),
                State::Reserved => now.duration_since(e.at).is_ok_and(|a| a < self.ttl),
            })
            .map(|e| e.usd)
            .sum()
    }
}

/// "1999.123456789" → 1_999_123_456 micro (truncated).
fn parse_micro(text: &str) -> Option<u128> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    let frac: String = frac.chars().chain(std::iter::repeat('0')).take(6).collect();
    Some(whole.parse::<u128>().ok()?.checked_mul(1_000_000)? + frac.parse::<u128>().ok()?)
}

fn usd(m: MicroUsd) -> String {
    format!("${}.{:02}", m / 1_000_000, (m % 1_000_000) / 10_000)
}

impl SafetyHook for SpendingLimiter {
    fn name(&self) -> &'static str {
        "spending-limiter"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let Some(host) = self.host.upgrade() else {
            return Decision::Reject { code: ErrorCode::Internal, reason: "the host is gone".into() };
        };
        let mut total: MicroUsd = 0;
        for (token, amount) in Self::spend(p, found) {
            match self.value(&host, p.chain_id, token, amount) {
                Ok(v) => total = total.saturating_add(v),
                Err(reason) => return Decision::Reject { code: ErrorCode::Denied, reason },
            }
        }
        let per_tx = MicroUsd::from(self.limits.per_tx_usd) * 1_000_000;
        if total > per_tx {
            return Decision::Reject {
                code: ErrorCode::LimitExceeded,
                reason: format!("spends {} but the per-transaction limit is {}", usd(total), usd(per_tx)),
            };
        }
        let now = (self.clock)();
        let mut ledger = self.ledger.lock().unwrap_or_else(|e| e.into_inner());
        let per_day = MicroUsd::from(self.limits.per_day_usd) * 1_000_000;
        let used = self.day_total(&ledger, now);
        if used.saturating_add(total) > per_day {
            return Decision::Reject {
                code: ErrorCode::LimitExceeded,
                reason: format!(
                    "spends {} but only {} of the daily {} is left (spent or reserved by open permits)",
                    usd(total),
                    usd(per_day.saturating_sub(used)),
                    usd(per_day)
                ),
            };
        }
        ledger.insert(p.permit_id.to_owned(), Entry { usd: total, at: now, state: State::Reserved });
        Decision::Allow
    }

    fn settle(&self, permit_id: &str, executed: bool) {
        let mut ledger = self.ledger.lock().unwrap_or_else(|e| e.into_inner());
        if executed {
            if let Some(e) = ledger.get_mut(permit_id) {
                e.state = State::Spent;
                e.at = (self.clock)();
            }
        } else {
            ledger.remove(permit_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_parse_to_micro_dollars() {
        assert_eq!(parse_micro("1999.999999744536"), Some(1_999_999_999));
        assert_eq!(parse_micro("1"), Some(1_000_000));
        assert_eq!(parse_micro("0.0005"), Some(500));
        assert_eq!(parse_micro("x"), None);
        assert_eq!(usd(1_234_560_000), "$1234.56");
    }
}
