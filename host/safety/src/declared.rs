//! What a plan declares it will do to the wallet (its `expected_outcome`), and the comparison
//! with the change set the host derived from a simulation or from receipts.
//!
//! A plan declares, in `expected_outcome`:
//! - `balance_changes`: `[{token, delta, tolerance?}]` — every balance it changes: ERC-20s,
//!   aTokens, debt tokens, an NFT collection's count, or the native coin (`token: "native"`).
//!   The derived delta must lie in `[delta, delta + tolerance]`: never worse than declared.
//! - `authorities`: `[{token, spender, amount, permit2?, expiration?}]` — the most each spender
//!   may move of the wallet's token after the plan (an ERC-20 allowance, or with `permit2` a
//!   Permit2 allowance expiring no later than `expiration`). An upper bound, not a claim.
//! - `nfts`: `[{collection, id?, gained}]` — each NFT that arrives (`id` may be omitted for a
//!   position minted by the plan) or leaves (with its `id`).
//! - `positions`: `[{venue, market, part, delta, tolerance?}]` — each part of a Morpho Blue
//!   position it changes (`supply_shares`, `borrow_shares`, `collateral`), in the same range as
//!   a balance: `[delta, delta + tolerance]`.
//!
//! Anything derived that is not declared is refused; operators and single-NFT approvals,
//! credit delegation, Morpho authorizations and ERC-1155 moves cannot be declared at all.

use alloy::primitives::{Address, B256, I256, U256};
use bardo_evm::changes::{Change, ChangeSet, PositionPart};
use std::collections::BTreeMap;

/// An authority a plan may leave behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authority {
    /// The ERC-20.
    pub token: Address,
    /// Who may move it.
    pub spender: Address,
    /// The most the allowance may be after the plan.
    pub amount: U256,
    /// A Permit2 allowance (with its latest expiration), not an ERC-20 one.
    pub permit2_expiration: Option<u64>,
}

/// An NFT a plan moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nft {
    /// The ERC-721.
    pub collection: Address,
    /// The id; none: any one id (a position the plan mints).
    pub id: Option<U256>,
    /// Arrives (true) or leaves.
    pub gained: bool,
}

/// A plan's declaration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declared {
    /// Per asset (none: the native coin): the delta and how much better off the wallet may be.
    pub balances: BTreeMap<Option<Address>, (I256, I256)>,
    /// Authorities the wallet may grant.
    pub authorities: Vec<Authority>,
    /// NFTs that move.
    pub nfts: Vec<Nft>,
    /// Per Morpho position part (singleton, market, part): the delta and the tolerance above it.
    pub positions: BTreeMap<(Address, B256, PositionPart), (I256, I256)>,
}

fn asset(text: &str) -> Option<Option<Address>> {
    if text.eq_ignore_ascii_case("native") {
        return Some(None);
    }
    let a: Address = text.parse().ok()?;
    Some((!a.is_zero()).then_some(a))
}

fn address(v: &serde_json::Value, key: &str) -> Result<Address, String> {
    v[key].as_str().and_then(|t| t.parse().ok()).ok_or_else(|| format!("`{key}` must be an address in {v}"))
}

fn number<T: std::str::FromStr>(v: &serde_json::Value, key: &str) -> Result<T, String> {
    match &v[key] {
        serde_json::Value::String(t) => t.parse().ok(),
        serde_json::Value::Number(n) => n.to_string().parse().ok(),
        _ => None,
    }
    .ok_or_else(|| format!("`{key}` must be a decimal integer in {v}"))
}

fn list<'a>(expected: &'a serde_json::Value, key: &str) -> Result<&'a [serde_json::Value], String> {
    match expected.get(key) {
        None | Some(serde_json::Value::Null) => Ok(&[]),
        Some(serde_json::Value::Array(items)) => Ok(items),
        Some(other) => Err(format!("`{key}` must be a list, not {other}")),
    }
}

impl Declared {
    /// Parse `expected_outcome`; none when it declares no `balance_changes` at all (its effect
    /// then cannot be checked). Malformed entries are errors naming the entry.
    pub fn parse(expected: &serde_json::Value) -> Result<Option<Self>, String> {
        if expected.get("balance_changes").and_then(|v| v.as_array()).is_none() {
            return Ok(None);
        }
        let mut declared = Self::default();
        for item in list(expected, "balance_changes")? {
            let token = item["token"]
                .as_str()
                .and_then(asset)
                .ok_or_else(|| format!("malformed balance change {item}"))?;
            let delta: I256 =
                number(item, "delta").map_err(|_| format!("malformed balance change {item}"))?;
            let tolerance: I256 = match item.get("tolerance") {
                None | Some(serde_json::Value::Null) => I256::ZERO,
                Some(_) => {
                    number(item, "tolerance").map_err(|_| format!("malformed balance change {item}"))?
                }
            };
            if tolerance.is_negative() {
                return Err(format!("malformed balance change {item}: a negative tolerance"));
            }
            let entry = declared.balances.entry(token).or_default();
            *entry = (entry.0.saturating_add(delta), entry.1.saturating_add(tolerance));
        }
        for item in list(expected, "positions")? {
            let malformed = || format!("malformed position change {item}");
            let market: B256 = item["market"].as_str().and_then(|t| t.parse().ok()).ok_or_else(malformed)?;
            let part: PositionPart = serde_json::from_value(item["part"].clone()).map_err(|_| malformed())?;
            let delta: I256 = number(item, "delta").map_err(|_| malformed())?;
            let tolerance: I256 = match item.get("tolerance") {
                None | Some(serde_json::Value::Null) => I256::ZERO,
                Some(_) => number(item, "tolerance").map_err(|_| malformed())?,
            };
            if tolerance.is_negative() {
                return Err(format!("{}: a negative tolerance", malformed()));
            }
            let key = (address(item, "venue")?, market, part);
            let entry = declared.positions.entry(key).or_default();
            *entry = (entry.0.saturating_add(delta), entry.1.saturating_add(tolerance));
        }
        for item in list(expected, "authorities")? {
            let permit2 = item["permit2"].as_bool().unwrap_or(false);
            declared.authorities.push(Authority {
                token: address(item, "token")?,
                spender: address(item, "spender")?,
                amount: number(item, "amount")?,
                permit2_expiration: if permit2 { Some(number(item, "expiration")?) } else { None },
            });
        }
        for item in list(expected, "nfts")? {
            let id = match item.get("id") {
                None | Some(serde_json::Value::Null) => None,
                Some(_) => Some(number(item, "id")?),
            };
            let gained = item["gained"]
                .as_bool()
                .ok_or_else(|| format!("`gained` must be true or false in {item}"))?;
            if !gained && id.is_none() {
                return Err(format!("an NFT that leaves the wallet must name its `id`: {item}"));
            }
            declared.nfts.push(Nft { collection: address(item, "collection")?, id, gained });
        }
        Ok(Some(declared))
    }

    /// Assets the plan may acquire, each with the most it may gain.
    pub fn acquired(&self) -> impl Iterator<Item = (Address, I256)> + '_ {
        // The most the plan may gain: a tolerance reaching above zero may hide a purchase.
        self.balances.iter().filter_map(|(a, (d, extra))| {
            let most = d.saturating_add(*extra);
            a.filter(|_| most.is_positive()).map(|a| (a, most))
        })
    }

    /// Every way `actual` differs from this declaration; empty when it matches.
    pub fn mismatches(&self, actual: &ChangeSet) -> Vec<String> {
        let mut off = Vec::new();
        let mut moved: BTreeMap<Option<Address>, I256> =
            self.balances.keys().map(|a| (*a, I256::ZERO)).collect();
        moved.extend(actual.balances());
        for (asset, got) in moved {
            let (want, extra) = self.balances.get(&asset).copied().unwrap_or_default();
            if got < want || got - want > extra {
                let name = asset.map_or_else(|| "the native coin".to_owned(), |a| a.to_string());
                let allowed =
                    if extra.is_zero() { String::new() } else { format!(" (up to {extra} more allowed)") };
                off.push(format!("{name}: declared {want}{allowed}, moves {got}"));
            }
        }
        let mut parts: BTreeMap<(Address, B256, PositionPart), I256> =
            self.positions.keys().map(|k| (*k, I256::ZERO)).collect();
        parts.extend(actual.changes.iter().filter_map(|c| match c {
            Change::Position { venue, market, part, delta } => Some(((*venue, *market, *part), *delta)),
            _ => None,
        }));
        for ((venue, market, part), got) in parts {
            let (want, extra) = self.positions.get(&(venue, market, part)).copied().unwrap_or_default();
            if got < want || got - want > extra {
                let allowed =
                    if extra.is_zero() { String::new() } else { format!(" (up to {extra} more allowed)") };
                off.push(format!(
                    "{part} of Morpho market {market} (at {venue}): declared {want}{allowed}, moves {got}"
                ));
            }
        }
        let mut nfts = self.nfts.clone();
        for change in &actual.changes {
            match change {
                Change::Balance { .. } | Change::Position { .. } => {}
                Change::Allowance { token, spender, after, .. } => {
                    let bound = self.authorities.iter().find(|a| {
                        a.permit2_expiration.is_none() && a.token == *token && a.spender == *spender
                    });
                    if bound.is_none_or(|a| *after > a.amount) {
                        off.push(format!(
                            "undeclared authority: {change}; declare it in the expected outcome's \
                             `authorities` (bardo-sdk: `Authority::erc20(&token, spender, amount)`, \
                             amount at least what the plan leaves approved)"
                        ));
                    }
                }
                Change::Permit2Allowance { token, spender, amount, expiration, .. } => {
                    let bound = self.authorities.iter().find(|a| a.token == *token && a.spender == *spender);
                    let within = bound.is_some_and(|a| {
                        *amount <= a.amount && a.permit2_expiration.is_some_and(|until| *expiration <= until)
                    });
                    if !within {
                        off.push(format!(
                            "undeclared authority: {change}; declare it in the expected outcome's \
                             `authorities` (bardo-sdk: `Authority::permit2(&token, spender, amount, \
                             expiration)`, amount and expiration at least the plan's)"
                        ));
                    }
                }
                Change::Operator { .. }
                | Change::TokenApproval { .. }
                | Change::Delegation { .. }
                | Change::Authorization { .. }
                | Change::MultiToken { .. } => {
                    off.push(format!("{change}: a plan may not do this"));
                }
                Change::Nft { collection, id, gained } => {
                    let matches = |n: &Nft| {
                        n.collection == *collection && n.gained == *gained && n.id.is_none_or(|d| d == *id)
                    };
                    // An exact id first, so a wildcard is left for a minted one.
                    let at = nfts
                        .iter()
                        .position(|n| matches(n) && n.id.is_some())
                        .or_else(|| nfts.iter().position(matches));
                    match at {
                        Some(i) => {
                            nfts.remove(i);
                        }
                        None => off.push(format!("undeclared: {change}")),
                    }
                }
            }
        }
        for n in nfts {
            let id = n.id.map_or_else(|| "a new id".to_owned(), |i| i.to_string());
            let verb = if n.gained { "receives" } else { "gives away" };
            off.push(format!(
                "declared that the wallet {verb} {} NFT {id}, which does not happen",
                n.collection
            ));
        }
        off
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::address;
    use serde_json::json;

    const TOKEN: Address = address!("0x00000000000000000000000000000000000000c1");
    const ROUTER: Address = address!("0x00000000000000000000000000000000000000d1");
    const STRANGER: Address = address!("0x00000000000000000000000000000000000000e1");

    fn i(v: i64) -> I256 {
        I256::try_from(v).expect("i256")
    }

    fn declared(v: serde_json::Value) -> Declared {
        Declared::parse(&v).expect("parse").expect("declares")
    }

    #[test]
    fn balances_may_only_be_better_by_the_tolerance() {
        let d = declared(json!({"balance_changes": [
            {"token": TOKEN.to_string(), "delta": "-100"},
            {"token": "native", "delta": "5", "tolerance": "2"},
        ]}));
        let set = |changes| ChangeSet { changes };
        let ok = set(vec![
            Change::Balance { asset: None, delta: i(6) },
            Change::Balance { asset: Some(TOKEN), delta: i(-100) },
        ]);
        assert!(d.mismatches(&ok).is_empty());
        let worse = set(vec![
            Change::Balance { asset: None, delta: i(5) },
            Change::Balance { asset: Some(TOKEN), delta: i(-101) },
        ]);
        assert_eq!(d.mismatches(&worse).len(), 1, "{:?}", d.mismatches(&worse));
        let undeclared = set(vec![
            Change::Balance { asset: None, delta: i(5) },
            Change::Balance { asset: Some(TOKEN), delta: i(-100) },
            Change::Balance { asset: Some(ROUTER), delta: i(-1) },
        ]);
        assert!(d.mismatches(&undeclared)[0].contains(&ROUTER.to_string()));
        let missing = set(vec![Change::Balance { asset: Some(TOKEN), delta: i(-100) }]);
        assert!(d.mismatches(&missing)[0].contains("native"), "a declared gain that does not happen");
    }

    #[test]
    fn authorities_must_be_declared_and_within_their_bound() {
        let d = declared(json!({"balance_changes": [], "authorities": [
            {"token": TOKEN.to_string(), "spender": ROUTER.to_string(), "amount": "50"},
        ]}));
        let grant = |spender, after| ChangeSet {
            changes: vec![Change::Allowance {
                token: TOKEN,
                spender,
                before: U256::ZERO,
                after: U256::from(after),
            }],
        };
        assert!(d.mismatches(&grant(ROUTER, 50)).is_empty());
        assert!(d.mismatches(&grant(ROUTER, 51))[0].contains("undeclared authority"));
        let stranger = &d.mismatches(&grant(STRANGER, 1))[0];
        // The refusal says what a plugin author declares to fix it.
        assert!(
            stranger.contains("undeclared authority") && stranger.contains("Authority::erc20"),
            "{stranger}"
        );
        let permit2 = ChangeSet {
            changes: vec![Change::Permit2Allowance {
                permit2: STRANGER,
                token: TOKEN,
                spender: ROUTER,
                amount: U256::from(1),
                expiration: 10,
            }],
        };
        let permit2 = &d.mismatches(&permit2)[0];
        assert!(
            permit2.contains("Authority::permit2"),
            "an ERC-20 declaration does not cover Permit2: {permit2}"
        );
        let operator = ChangeSet { changes: vec![Change::Operator { collection: TOKEN, operator: ROUTER }] };
        assert!(d.mismatches(&operator)[0].contains("may not"));
    }

    #[test]
    fn nfts_match_by_id_or_as_a_new_position() {
        let d = declared(json!({"balance_changes": [], "nfts": [
            {"collection": TOKEN.to_string(), "gained": true},
        ]}));
        let nft = |id: u64, gained| ChangeSet {
            changes: vec![Change::Nft { collection: TOKEN, id: U256::from(id), gained }],
        };
        assert!(d.mismatches(&nft(7, true)).is_empty());
        assert_eq!(
            d.mismatches(&nft(7, false)).len(),
            2,
            "a loss is not a gain, and the gain did not happen"
        );
        assert!(
            Declared::parse(&json!({"balance_changes": [], "nfts": [
                {"collection": TOKEN.to_string(), "gained": false},
            ]}))
            .is_err()
        );
        assert_eq!(Declared::parse(&json!({"amount": "1"})), Ok(None));
    }

    #[test]
    fn morpho_positions_are_declared_per_part_and_authorizations_never() {
        let market = B256::repeat_byte(7);
        let d = declared(json!({"balance_changes": [], "positions": [
            {"venue": ROUTER.to_string(), "market": market.to_string(), "part": "supply_shares",
             "delta": "1000", "tolerance": "5"},
        ]}));
        let part = |part, delta| Change::Position { venue: ROUTER, market, part, delta: i(delta) };
        let set = |changes| ChangeSet { changes };
        assert!(d.mismatches(&set(vec![part(PositionPart::SupplyShares, 1004)])).is_empty());
        assert_eq!(d.mismatches(&set(vec![part(PositionPart::SupplyShares, 999)])).len(), 1);
        let borrowed = d.mismatches(&set(vec![
            part(PositionPart::SupplyShares, 1000),
            part(PositionPart::BorrowShares, 1),
        ]));
        assert!(borrowed.len() == 1 && borrowed[0].contains("borrow shares"), "{borrowed:?}");
        assert!(
            d.mismatches(&set(vec![]))[0].contains("declared 1000"),
            "a declared supply that does not happen"
        );
        let granted = set(vec![
            part(PositionPart::SupplyShares, 1000),
            Change::Authorization { venue: ROUTER, authorized: STRANGER },
        ]);
        assert!(d.mismatches(&granted)[0].contains("may not do this"));
        let bad = json!({"balance_changes": [], "positions": [{"venue": ROUTER.to_string(),
            "market": market.to_string(), "part": "debt", "delta": "1"}]});
        assert!(Declared::parse(&bad).is_err());
    }
}
