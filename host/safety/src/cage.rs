//! The on-chain PolicyCage (`devnet/contracts/PolicyCage.sol`) as the host sees it: the guard
//! of the Safe it writes through, its rules read in one call and hashed into each permit's
//! `policy_hash`, and its refusals named by rule. The host does not re-implement the cage's
//! checks: a Safe transaction is simulated with its guard, so a plan the cage would revert is
//! refused at preview with the cage's own error, and a commit whose cage changed since the
//! preview is refused before it is sent.

use alloy::primitives::{Address, B256, Bytes, U256, b256};
use alloy::sol;
use alloy::sol_types::{SolCall, SolInterface};
use bardo_evm::ChainError;
use bardo_runtime::Services;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::time::{Duration, Instant};

sol! {
    /// The cage's rule read and its custom errors (one per rule).
    #[sol(all_derives)]
    interface PolicyCage {
        struct Asset { address source; uint8 kind; uint8 decimals; address feed; uint8 feedDecimals;
            bytes32 market; uint128 maxUnits; uint128 maxUsd; }
        struct Scope { address target; address[] assets; }
        function rules() external view returns (bytes32[] approvedCalls, address[] approvedCounterparties,
            Asset[] approvedAssets, Scope[] approvedScopes, uint256[6] limits);
        function operator() external view returns (address);
        error NotTheSafe(address caller);
        error OperatorOnly(address to, address executor);
        error DelegateCallRefused(address to);
        error CallNotApproved(address to, bytes4 selector);
        error CounterpartyNotApproved(address token, bytes4 selector, address counterparty);
        error SelfCallInBatch(address to);
        error MalformedBatch();
        error PositionAboveMax(address asset, uint256 units, uint256 max);
        error PositionUsdAboveMax(address asset, uint256 usd, uint256 max);
        error DrawdownPerTransaction(uint256 spentUsd, uint256 receivedUsd, uint256 maxBps);
        error DrawdownPerDay(uint256 dayStartUsd, uint256 lostUsd, uint256 maxBps);
        error TooFrequent(uint256 maxWrites, uint256 windowSecs);
        error BadFeed(address feed, int256 answer, uint256 updatedAt);
        error BadRule(string what);
        error NestedTransaction();
        error ApprovalOutsideScope(address token, address spender);
        error RulesNotPublished();
    }
    /// Safe 1.4.1's `StorageAccessible`.
    function getStorageAt(uint256 offset, uint256 length) external view returns (bytes);
}

/// Safe 1.4.1's guard slot: `keccak256("guard_manager.guard.address")`.
pub const GUARD_SLOT: B256 = b256!("4a204f620c8c5ccdca3fd54d003badd85ba500436a431f0cbda4f558c93c34c8");

/// Safe 1.4.1's fallback handler slot: `keccak256("fallback_manager.handler.address")`.
pub const FALLBACK_HANDLER_SLOT: B256 =
    b256!("6c9a6c4a39284e37ed1cf53d337577d14212a4870fb976a4366c693b939918d5");

/// How long one read of the cage may take.
const READ_BUDGET: Duration = Duration::from_secs(3);

/// A Safe's guard and, when it is a PolicyCage, its rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CageState {
    /// The Safe's guard (zero: none).
    pub guard: Address,
    /// The Safe's fallback handler (zero: none). With one such as `CompatibilityFallbackHandler`
    /// an owner's signature validates EIP-1271 messages — Permit2 and ERC-2612 permits that
    /// move tokens in another account's transaction, which no guard sees.
    pub fallback_handler: Address,
    /// SHA-256 of the guard's address, the fallback handler's and the guard's `rules()` answer
    /// (of the addresses alone when the guard has none): what a permit's `policy_hash` holds.
    pub hash: B256,
    /// The `rules()` and `operator()` answers, when the guard is a PolicyCage; decoded only for
    /// people ([`Self::rules`]): a preview needs the hash alone.
    answers: Option<(Bytes, Bytes)>,
}

impl CageState {
    /// The rules, decoded; none when the guard is not a PolicyCage.
    pub fn rules(&self) -> Option<Rules> {
        self.answers.as_ref().and_then(|(rules, operator)| decode(self.guard, rules, operator))
    }
}

/// A PolicyCage's rules, for people (`bardo policy show`, `bardo audit`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rules {
    /// The cage.
    pub cage: Address,
    /// The owner whose key alone changes them.
    pub operator: Address,
    /// Approved calls: target and selector (`0x00000000`: a plain ether transfer).
    pub calls: Vec<(Address, String)>,
    /// Accounts approvals and transfers may name.
    pub counterparties: Vec<Address>,
    /// Approved positions.
    pub assets: Vec<AssetRule>,
    /// Each scoped target and the approved assets (by source) its calls may move besides those
    /// held in it; the cage reads only the positions a transaction's targets reach.
    pub scopes: Vec<(Address, Vec<Address>)>,
    /// The most a transaction may lose of what it spends, bps.
    pub max_drawdown_tx_bps: u64,
    /// The most the day's writes may lose of the holdings at its start, bps.
    pub max_drawdown_day_bps: u64,
    /// Writes per window (0: no limit).
    pub max_writes: u64,
    /// The window, seconds.
    pub window_secs: u64,
    /// The oldest a feed's answer may be, seconds.
    pub max_feed_age_secs: u64,
    /// How many times the rules changed.
    pub version: u64,
}

/// One approved position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AssetRule {
    /// `token` (address 0: ether), `vault`, `morpho-supply` or `aave-token`.
    pub kind: &'static str,
    /// The token, vault or Morpho singleton.
    pub source: Address,
    /// The Morpho market (zero otherwise).
    pub market: B256,
    /// The Chainlink-style USD feed that prices it.
    pub feed: Address,
    /// The most held, in its units (decimal in JSON: u128 does not fit a JSON number).
    #[serde(serialize_with = "decimal")]
    pub max_units: u128,
    /// The most held, USD with 8 decimals (0: no cap).
    #[serde(serialize_with = "decimal")]
    pub max_usd: u128,
}

/// The guard of `safe` on `chain` and its rules, at the latest block (`fresh`: asked of the node
/// now; otherwise the head the chain client caches, so previews within a block read it once).
pub fn read(services: &Services, chain: u64, safe: Address, fresh: bool) -> Result<CageState, ChainError> {
    let chains = &services.evm.chains;
    let client = chains.get(chain)?;
    let deadline = Instant::now() + READ_BUDGET;
    chains.block_on(async {
        // One block for both reads: the node's head now, or the one the client caches.
        let cached = if fresh { None } else { client.latest(deadline).await? };
        let block = match cached {
            Some(b) => b,
            None => client.block_number(deadline).await?,
        };
        // The guard and the fallback handler in one batch, at one block.
        let slot = |s: B256| {
            (
                safe,
                Bytes::from(
                    getStorageAtCall { offset: U256::from_be_bytes(s.0), length: U256::from(1) }.abi_encode(),
                ),
            )
        };
        let mut words = client
            .call_many(&[slot(GUARD_SLOT), slot(FALLBACK_HANDLER_SLOT)], block, deadline)
            .await
            .into_iter();
        let mut address = |what: &str| -> Result<Address, ChainError> {
            let raw = words.next().unwrap_or_else(|| Err(ChainError::InvalidParams("no answer".into())))?;
            let word = getStorageAtCall::abi_decode_returns(&raw)
                .map_err(|e| ChainError::InvalidParams(format!("the Safe {safe}'s {what} slot: {e}")))?;
            Ok(Address::from_slice(word.get(12..32).unwrap_or(&[0u8; 20])))
        };
        let (guard, fallback_handler) = (address("guard")?, address("fallback handler")?);
        // The handler decides whether the guard sees every way the Safe's tokens can move.
        let mut h = Sha256::new();
        h.update(guard);
        h.update(fallback_handler);
        if guard == Address::ZERO {
            return Ok(CageState {
                guard,
                fallback_handler,
                hash: B256::from_slice(&h.finalize()),
                answers: None,
            });
        }
        let calls = [
            (guard, Bytes::from(PolicyCage::rulesCall {}.abi_encode())),
            (guard, Bytes::from(PolicyCage::operatorCall {}.abi_encode())),
        ];
        let mut answers = client.call_many(&calls, block, deadline).await.into_iter();
        let (rules, operator) = (answers.next(), answers.next());
        let answers = match (rules, operator) {
            (Some(Ok(rules)), Some(Ok(operator))) => {
                h.update(&rules);
                Some((rules, operator))
            }
            // A guard that is not a PolicyCage: the host hashes what it is, and names no rules.
            (Some(Err(ChainError::Reverted { .. })), _) | (_, Some(Err(ChainError::Reverted { .. }))) => None,
            (Some(Err(e)), _) | (_, Some(Err(e))) => return Err(e),
            _ => None,
        };
        Ok(CageState { guard, fallback_handler, hash: B256::from_slice(&h.finalize()), answers })
    })
}

fn decode(cage: Address, rules: &[u8], operator: &[u8]) -> Option<Rules> {
    let r = PolicyCage::rulesCall::abi_decode_returns(rules).ok()?;
    let operator = PolicyCage::operatorCall::abi_decode_returns(operator).ok()?;
    let calls = r
        .approvedCalls
        .iter()
        .map(|k| (Address::from_slice(&k[..20]), format!("0x{}", hex::encode(&k[20..24]))))
        .collect();
    let assets = r
        .approvedAssets
        .iter()
        .map(|a| AssetRule {
            kind: match a.kind {
                0 => "token",
                1 => "vault",
                2 => "morpho-supply",
                _ => "aave-token",
            },
            source: a.source,
            market: a.market,
            feed: a.feed,
            max_units: a.maxUnits,
            max_usd: a.maxUsd,
        })
        .collect();
    let [tx, day, writes, window, feed_age, version] = r.limits.map(|v| u64::try_from(v).unwrap_or(u64::MAX));
    Some(Rules {
        cage,
        operator,
        calls,
        counterparties: r.approvedCounterparties,
        assets,
        scopes: r.approvedScopes.into_iter().map(|s| (s.target, s.assets)).collect(),
        max_drawdown_tx_bps: tx,
        max_drawdown_day_bps: day,
        max_writes: writes,
        window_secs: window,
        max_feed_age_secs: feed_age,
        version,
    })
}

fn decimal<S: serde::Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.to_string())
}

/// The cage's rule a revert names, when `output` is one of its errors: `DrawdownPerTransaction
/// { spentUsd: …, receivedUsd: …, maxBps: 300 }`.
pub fn explain(output: &[u8]) -> Option<String> {
    let error = PolicyCage::PolicyCageErrors::abi_decode(output).ok()?;
    let debug = format!("{error:?}");
    // `Variant(Variant { fields })` → `Variant { fields }`.
    Some(debug.split_once('(').map_or(debug.clone(), |(_, rest)| rest.trim_end_matches(')').to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::sol_types::SolError;

    #[test]
    fn the_guard_and_handler_slots_are_safes() {
        assert_eq!(GUARD_SLOT, alloy::primitives::keccak256("guard_manager.guard.address"));
        assert_eq!(FALLBACK_HANDLER_SLOT, alloy::primitives::keccak256("fallback_manager.handler.address"));
    }

    #[test]
    fn a_cage_refusal_is_named_by_its_rule() {
        let e = PolicyCage::TooFrequent { maxWrites: U256::from(2), windowSecs: U256::from(600) };
        let named = explain(&e.abi_encode()).expect("a cage error");
        assert!(named.starts_with("TooFrequent {"), "{named}");
        assert!(named.contains("maxWrites: 2"), "{named}");
        assert_eq!(explain(b"\x08\xc3\x79\xa0"), None, "not a cage error");
    }
}
