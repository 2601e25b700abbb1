//! `policy-cage`: the operator's policy — phase gating by action class, approved assets, the
//! position cap.

use super::{Decision, Findings, NOTHING_DECLARED, Proposal, SafetyHook, reject};
use crate::declared::Declared;
use alloy::primitives::{Address, I256};
use bardo_core::action_class::{ActionClass, Asset, Changes, Move, classify};
use bardo_core::error::ErrorCode;
use std::collections::{BTreeMap, BTreeSet};

/// The operator's policy. Phase gating by action class (`bardo_core::action_class`): each write
/// is classed by its kind and its declared balance changes (typed and compared with the wallet's
/// holdings by the host's own reads), and the phase's row of the specification's table decides.
/// Approved assets: on a chain with a list, a plan may only acquire listed tokens (read from its
/// declared balance changes, which the hallucination detector later holds it to).
#[derive(Debug, Clone, Default)]
pub struct PolicyCage {
    /// Tokens a plan may acquire, per chain; a chain not listed is not restricted.
    pub approved_assets: BTreeMap<u64, BTreeSet<Address>>,
    /// The most any single token holding may be worth after a write (`[safety] max_position_usd`).
    pub max_position: Option<MaxPosition>,
    /// What types tokens and reads the wallet's holdings for the classes; without it every
    /// token is `Liquid` and no holding is known (stricter, never looser).
    pub valuer: Option<crate::valuation::Valuer>,
    /// Contracts that keep the wallet's positions in custody, per chain (the allowlist's
    /// `uniswap-v3-staker`s): a position back from its deposit there is the wallet's own, no new
    /// position (an unstake stays allowed where a decrease is).
    pub custodians: BTreeMap<u64, BTreeSet<Address>>,
}

impl PolicyCage {
    /// The plan's declared changes as the classifier reads them.
    fn changes(&self, p: &Proposal<'_>, declared: &Declared) -> Changes {
        let moves = declared
            .balances
            .iter()
            .map(|(asset, (delta, extra))| {
                let most = delta.saturating_add(*extra);
                let (asset, held) = match (asset, &self.valuer) {
                    (Some(token), Some(v)) => (
                        v.asset(p.chain_id, *token),
                        (most.is_positive() || most.is_negative())
                            .then(|| v.balance(p.chain_id, *token, p.sender).ok())
                            .flatten(),
                    ),
                    // The native coin: a position in it, always held (it pays for gas).
                    _ => (Asset::Liquid, None),
                };
                Move {
                    asset,
                    may_rise: most.is_positive(),
                    may_fall: delta.is_negative(),
                    surely_falls: most.is_negative(),
                    was_empty: held.is_some_and(|h| h.is_zero()),
                    ends_empty: held.is_some_and(|h| {
                        I256::try_from(h).is_ok_and(|h| h.saturating_add(most) <= I256::ZERO)
                    }),
                }
            })
            .collect();
        Changes {
            moves,
            nft_gained: declared.nfts.iter().any(|n| n.gained && !self.returns(p, n)),
            nft_lost: declared.nfts.iter().any(|n| !n.gained),
        }
    }

    /// Whether `nft`, arriving, is the wallet's own position back from a custodian's deposit:
    /// held now by a listed custodian that records the wallet as its depositor. A read that
    /// fails counts it as new (stricter).
    fn returns(&self, p: &Proposal<'_>, nft: &crate::declared::Nft) -> bool {
        let (Some(id), Some(valuer), Some(custodians)) =
            (nft.id, &self.valuer, self.custodians.get(&p.chain_id))
        else {
            return false;
        };
        match valuer.owner_of(p.chain_id, nft.collection, id) {
            Ok(Some(holder)) if custodians.contains(&holder) => {
                valuer.staker_deposit_owner(p.chain_id, holder, id).is_ok_and(|owner| owner == p.sender)
            }
            _ => false,
        }
    }

    /// The class of the proposal's write.
    pub fn class(&self, p: &Proposal<'_>, declared: &Declared) -> ActionClass {
        classify(p.kind, &self.changes(p, declared))
    }
}

/// A cap on the USD value of the wallet's holding of each token a write acquires.
#[derive(Debug, Clone)]
pub struct MaxPosition {
    /// The most one token holding may be worth after the write, whole USD.
    pub usd: u64,
    /// What prices the holding.
    pub valuer: crate::valuation::Valuer,
}

impl MaxPosition {
    /// Refuse when the wallet's holding of an acquired token would exceed the cap. A token the
    /// host cannot price (or whose price sources disagree) is refused, never waved through.
    fn check(&self, p: &Proposal<'_>, declared: &Declared) -> Decision {
        use crate::valuation::{MicroUsd, usd};
        let acquired: Vec<(Address, I256)> = declared.acquired().collect();
        let cap = MicroUsd::from(self.usd) * 1_000_000;
        for &(token, delta) in &acquired {
            let held = match self.valuer.balance(p.chain_id, token, p.sender) {
                Ok(b) => b,
                Err(reason) => return reject(ErrorCode::Denied, reason),
            };
            let after = held.saturating_add(delta.unsigned_abs());
            let value = match self.valuer.usd(p.chain_id, token, after) {
                Ok(v) => v,
                Err(reason) => return reject(ErrorCode::Denied, reason),
            };
            if value > cap {
                return reject(
                    ErrorCode::LimitExceeded,
                    format!(
                        "after this write the wallet would hold {} of {token}, over the {} position limit ([safety] max_position_usd)",
                        usd(value),
                        usd(cap)
                    ),
                );
            }
        }
        Decision::Allow
    }
}

impl SafetyHook for PolicyCage {
    fn name(&self) -> &'static str {
        "policy-cage"
    }

    fn check(&self, p: &Proposal<'_>, _: &mut Findings) -> Decision {
        let declared = match p.declared {
            Ok(declared) => declared.as_ref().unwrap_or(&NOTHING_DECLARED),
            Err(reason) => return reject(ErrorCode::Denied, reason.clone()),
        };
        let class = self.class(p, declared);
        if !class.allowed_in(p.phase) {
            let allowed: Vec<&str> =
                ActionClass::ALL.iter().filter(|c| c.allowed_in(p.phase)).map(|c| c.name()).collect();
            return reject(
                ErrorCode::Denied,
                format!(
                    "`{}` is classed {} by its kind and balance changes, which the {:?} phase does not allow (it allows {})",
                    p.kind,
                    class.name(),
                    p.phase,
                    allowed.join(", ")
                ),
            );
        }
        if let Some(approved) = self.approved_assets.get(&p.chain_id) {
            for (token, _) in declared.acquired() {
                if !approved.contains(&token) {
                    return reject(
                        ErrorCode::Denied,
                        format!(
                            "{token} is not an approved asset on chain {}; see [safety.approved_assets]",
                            p.chain_id
                        ),
                    );
                }
            }
        }
        match &self.max_position {
            // Reducing exposure is always allowed, whatever a holding is worth.
            Some(cap) if class > ActionClass::DecreasePosition => cap.check(p, declared),
            _ => Decision::Allow,
        }
    }

    fn at_commit(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::test_support::*;
    use bardo_core::tool::Phase;
    use serde_json::json;

    #[test]
    fn the_policy_cage_gates_classes_by_phase_and_acquisitions_by_list() {
        // No valuer: every token is `Liquid` and no holding is known (the devnet tests cover the
        // typed classes); the table itself is tested cell by cell in bardo_core::action_class.
        let cage = PolicyCage::default();
        let d =
            |kind, phase, expected| decide(&cage, kind, phase, vec![], expected, &mut Findings::default());
        let nothing = || json!({});
        let token_for_token = || {
            json!({"balance_changes": [
                {"token": TOKEN.to_string(), "delta": "-5"}, {"token": ROUTER.to_string(), "delta": "7"}
            ]})
        };
        assert_eq!(d("swap", Phase::Cautious, nothing()), Decision::Allow);
        let supply = d("supply", Phase::Defensive, nothing());
        assert!(reason(&supply).contains("`supply` is classed increase-position"), "{supply:?}");
        assert!(reason(&supply).contains("Defensive phase does not allow"), "{supply:?}");
        assert_eq!(
            code(&d("swap", Phase::Defensive, nothing())),
            Some(ErrorCode::Denied),
            "declares nothing: new"
        );
        assert_eq!(d("swap", Phase::Defensive, token_for_token()), Decision::Allow, "a rebalance");
        assert_eq!(code(&d("swap", Phase::Survival, token_for_token())), Some(ErrorCode::Denied));
        assert_eq!(d("repay", Phase::Survival, nothing()), Decision::Allow, "reduces exposure");
        assert_eq!(d("revoke", Phase::Terminal, nothing()), Decision::Allow, "close-position: every phase");
        assert_eq!(code(&d("unwrap", Phase::Terminal, token_for_token())), Some(ErrorCode::Denied));
        // A "repay" whose changes buy a token is not a reduction.
        let buys_with =
            json!({"balance_changes": [{"token": TOKEN.to_string(), "delta": "-5", "tolerance": "9"}]});
        assert_eq!(code(&d("repay", Phase::Survival, buys_with)), Some(ErrorCode::Denied));
        let listed = PolicyCage {
            approved_assets: BTreeMap::from([(1, BTreeSet::from([TOKEN]))]),
            max_position: None,
            valuer: None,
            custodians: BTreeMap::new(),
        };
        let buys = |token: Address| json!({"balance_changes": [{"token": token.to_string(), "delta": "5"}]});
        let mut found = Findings::default();
        assert_eq!(
            decide(&listed, "swap", Phase::Thriving, vec![], buys(TOKEN), &mut found),
            Decision::Allow
        );
        let other = decide(&listed, "swap", Phase::Thriving, vec![], buys(ROUTER), &mut found);
        assert!(reason(&other).contains("not an approved asset"), "{other:?}");
        // A loss whose tolerance reaches above zero may be a gain: it must be an approved asset.
        let hidden =
            json!({"balance_changes": [{"token": ROUTER.to_string(), "delta": "-1", "tolerance": "3"}]});
        let hidden = decide(&listed, "swap", Phase::Thriving, vec![], hidden, &mut found);
        assert!(reason(&hidden).contains("not an approved asset"), "{hidden:?}");
    }
}
