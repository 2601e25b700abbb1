//! What a permit is: the plan, its simulation and what it may do at worst, sealed with it.

use crate::audit_log::RecordAt;
use alloy::primitives::{Address, B256};
use bardo_core::tool::{RiskTier, WritePlan};
use serde::{Deserialize, Serialize};
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
    /// The bridge deposits it makes (the bridge guard's findings): the commit follows each to
    /// its fill on the destination.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bridged: Vec<crate::hooks::bridge_guard::Bridged>,
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

pub(super) fn millis_since_epoch(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
