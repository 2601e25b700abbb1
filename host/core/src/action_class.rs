//! Phase gating by action class (pi-integration, "Phase-based gating"): what a write does to the
//! wallet's exposure, and which phases allow it.
//!
//! | action class      | thriving | cautious | defensive | survival | terminal |
//! |-------------------|----------|----------|-----------|----------|----------|
//! | new-position      | yes      | yes      | no        | no       | no       |
//! | increase-position | yes      | yes      | no        | no       | no       |
//! | rebalance         | yes      | yes      | yes       | no       | no       |
//! | decrease-position | yes      | yes      | yes       | yes      | no       |
//! | close-position    | yes      | yes      | yes       | yes      | yes      |
//! | read-only         | yes      | yes      | yes       | yes      | yes      |
//!
//! A write's class is the stricter of two readings: its action kind's (a fixed table; a kind not
//! in it is a new position), and its balance changes' — the plan's declaration, which the
//! hallucination detector holds to the simulation, read conservatively (a change whose tolerance
//! reaches above zero may be a gain), with each token typed by the host's own reads (a dollar
//! token, an Aave or vault or LP share, a debt token, anything else). A plugin cannot make a
//! write look safer than its changes are by naming a gentler kind.

use crate::tool::Phase;
use serde::Serialize;

/// What a write does to the wallet's positions. Ordered from the least to the most restricted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActionClass {
    /// No state change.
    ReadOnly,
    /// Ends a position (all of a holding, debt or LP position).
    ClosePosition,
    /// Reduces a position or a debt without ending it.
    DecreasePosition,
    /// Exchanges one exposure for another of the same weight (a token for a token, ether for WETH).
    Rebalance,
    /// Adds to a position the wallet has.
    IncreasePosition,
    /// Opens a position the wallet does not have.
    NewPosition,
}

impl ActionClass {
    /// Every class, in the table's order.
    pub const ALL: [ActionClass; 6] = [
        Self::NewPosition,
        Self::IncreasePosition,
        Self::Rebalance,
        Self::DecreasePosition,
        Self::ClosePosition,
        Self::ReadOnly,
    ];

    /// Its name in the table (`new-position`).
    pub fn name(self) -> &'static str {
        match self {
            Self::NewPosition => "new-position",
            Self::IncreasePosition => "increase-position",
            Self::Rebalance => "rebalance",
            Self::DecreasePosition => "decrease-position",
            Self::ClosePosition => "close-position",
            Self::ReadOnly => "read-only",
        }
    }

    /// Whether `phase` allows it: the specification's table.
    pub fn allowed_in(self, phase: Phase) -> bool {
        use Phase::*;
        match self {
            Self::NewPosition | Self::IncreasePosition => matches!(phase, Thriving | Cautious),
            Self::Rebalance => matches!(phase, Thriving | Cautious | Defensive),
            Self::DecreasePosition => !matches!(phase, Terminal),
            Self::ClosePosition | Self::ReadOnly => true,
        }
    }

    /// The stricter of two classes (new-position and increase-position gate alike; new wins).
    pub fn stricter(self, other: Self) -> Self {
        self.max(other)
    }
}

/// What the class of an action kind is before its changes are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KindClass {
    /// The kind's class, which its changes may only make stricter.
    Fixed(ActionClass),
    /// A swap: its changes decide (cash for a token opens, a token for cash reduces).
    ByChanges,
}

/// The action kinds the repo's plugins and the specification's ACTION_KIND_MAP name.
const KINDS: &[(&str, KindClass)] = {
    use ActionClass::*;
    use KindClass::*;
    &[
        ("swap", ByChanges),
        ("add_liquidity", Fixed(IncreasePosition)),
        ("compound_fees", Fixed(IncreasePosition)),
        ("supply", Fixed(IncreasePosition)),
        ("borrow", Fixed(IncreasePosition)),
        ("vault_deposit", Fixed(IncreasePosition)),
        ("vault_mint", Fixed(IncreasePosition)),
        ("deposit", Fixed(IncreasePosition)),
        ("approve", Fixed(IncreasePosition)),
        ("wrap", Fixed(Rebalance)),
        ("unwrap", Fixed(Rebalance)),
        ("rebalance", Fixed(Rebalance)),
        // A liquidity position moved to another range of its pool.
        ("rebalance_liquidity", Fixed(Rebalance)),
        // A position into a staker's custody, still the wallet's: the same exposure.
        ("stake_liquidity", Fixed(Rebalance)),
        // A position moved to another version's pool of the same tokens (its changes, a new
        // position NFT, class it as a new position).
        ("migrate_liquidity", Fixed(Rebalance)),
        // The same asset moved to the wallet on another chain.
        ("bridge", Fixed(Rebalance)),
        ("transfer", Fixed(DecreasePosition)),
        ("remove_liquidity", Fixed(ClosePosition)),
        ("close_liquidity", Fixed(ClosePosition)),
        ("collect_fees", Fixed(ClosePosition)),
        ("collect_all_fees", Fixed(ClosePosition)),
        ("claim_staking_rewards", Fixed(ClosePosition)),
        ("unstake_liquidity", Fixed(ClosePosition)),
        ("repay", Fixed(ClosePosition)),
        ("withdraw", Fixed(ClosePosition)),
        ("vault_withdraw", Fixed(ClosePosition)),
        ("vault_redeem", Fixed(ClosePosition)),
        // Taking an authority away ends a risk: allowed in every phase.
        ("revoke", Fixed(ClosePosition)),
    ]
};

/// The class an action kind starts from; a kind not in the table is a new position.
pub fn kind_class(kind: &str) -> KindClass {
    KINDS.iter().find(|(k, _)| *k == kind).map_or(KindClass::Fixed(ActionClass::NewPosition), |(_, c)| *c)
}

/// What a token is to the wallet's exposure, by the host's reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asset {
    /// A dollar token (the pricing config's `usd_tokens`): holding it is no position.
    Cash,
    /// Any other token, or the native coin: holding it is a position in it.
    Liquid,
    /// A claim on a position: an aToken, a vault share, an LP token.
    Share,
    /// A debt token: holding more is owing more.
    Debt,
}

/// One declared balance change, read conservatively.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Move {
    /// What the token is.
    pub asset: Asset,
    /// The balance may rise (delta + tolerance above zero).
    pub may_rise: bool,
    /// The balance may fall (delta below zero).
    pub may_fall: bool,
    /// The balance surely falls (delta + tolerance below zero).
    pub surely_falls: bool,
    /// The wallet held none before (a rise opens a new position).
    pub was_empty: bool,
    /// It surely ends at zero (a fall closes the position).
    pub ends_empty: bool,
}

/// A plan's declared changes, as the classifier reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// One per asset whose balance the plan changes.
    pub moves: Vec<Move>,
    /// An NFT (a position) arrives.
    pub nft_gained: bool,
    /// An NFT (a position) leaves or is burned.
    pub nft_lost: bool,
}

impl Changes {
    fn any(&self, f: impl Fn(&Move) -> bool) -> bool {
        self.moves.iter().any(f)
    }

    /// The class the changes alone show; none when nothing moves (an approval, a revoke).
    pub fn class(&self, swap: bool) -> Option<ActionClass> {
        use ActionClass::*;
        use Asset::*;
        if self.moves.is_empty() && !self.nft_gained && !self.nft_lost {
            return None;
        }
        let rises = |a: Asset| self.any(|m| m.asset == a && m.may_rise);
        let falls = |a: Asset| self.any(|m| m.asset == a && m.may_fall);
        // Exposure added: a share or a debt grows, a position arrives, or cash buys a token.
        let opens = self.nft_gained || rises(Share) || rises(Debt) || (rises(Liquid) && falls(Cash));
        // Value leaves and nothing comes back, and no share, debt or position shrinks: it went
        // into a position the balances do not show (liquidity added to a position it has).
        let reduced_claim = self.nft_lost || self.any(|m| matches!(m.asset, Share | Debt) && m.surely_falls);
        let drained = !self.any(|m| m.may_rise) && !reduced_claim && (falls(Cash) || falls(Liquid));
        if opens || drained {
            let new = self.nft_gained || self.any(|m| m.may_rise && m.asset != Cash && m.was_empty);
            return Some(if new { NewPosition } else { IncreasePosition });
        }
        let tokens_for_tokens = self.moves.iter().enumerate().any(|(i, a)| {
            a.asset == Liquid
                && a.may_rise
                && self.moves.iter().enumerate().any(|(j, b)| i != j && b.asset == Liquid && b.may_fall)
        }) || self.any(|m| m.asset == Liquid && m.may_rise && m.may_fall);
        let cash_for_cash = swap && rises(Cash) && falls(Cash) && !rises(Liquid) && !falls(Liquid);
        if tokens_for_tokens || cash_for_cash {
            return Some(Rebalance);
        }
        let closes = self.nft_lost || self.any(|m| m.asset != Cash && m.surely_falls && m.ends_empty);
        Some(if closes { ClosePosition } else { DecreasePosition })
    }
}

/// The class of a write of `kind` with `changes`: the stricter of the kind's and the changes'.
pub fn classify(kind: &str, changes: &Changes) -> ActionClass {
    match kind_class(kind) {
        KindClass::ByChanges => changes.class(true).unwrap_or(ActionClass::NewPosition),
        KindClass::Fixed(c) => changes.class(false).map_or(c, |by| c.stricter(by)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ActionClass::*;
    use Asset::*;
    use Phase::*;

    #[test]
    fn the_phase_table_cell_by_cell() {
        // Rows in the specification's order; columns thriving, cautious, defensive, survival, terminal.
        let table: [(ActionClass, [bool; 5]); 6] = [
            (NewPosition, [true, true, false, false, false]),
            (IncreasePosition, [true, true, false, false, false]),
            (Rebalance, [true, true, true, false, false]),
            (DecreasePosition, [true, true, true, true, false]),
            (ClosePosition, [true, true, true, true, true]),
            (ReadOnly, [true, true, true, true, true]),
        ];
        for (class, row) in table {
            for (phase, want) in [Thriving, Cautious, Defensive, Survival, Terminal].into_iter().zip(row) {
                assert_eq!(class.allowed_in(phase), want, "{} in {phase:?}", class.name());
            }
        }
        assert_eq!(ActionClass::ALL.map(|c| c.name()).len(), 6);
        assert_eq!(serde_json::to_value(IncreasePosition).expect("json"), "increase-position");
    }

    fn up(asset: Asset, was_empty: bool) -> Move {
        Move { asset, may_rise: true, may_fall: false, surely_falls: false, was_empty, ends_empty: false }
    }
    fn down(asset: Asset, ends_empty: bool) -> Move {
        Move { asset, may_rise: false, may_fall: true, surely_falls: true, was_empty: false, ends_empty }
    }
    fn changes(moves: &[Move]) -> Changes {
        Changes { moves: moves.to_vec(), ..Changes::default() }
    }

    #[test]
    fn swaps_are_classed_by_what_they_buy_and_sell() {
        let c = |m: &[Move]| classify("swap", &changes(m));
        assert_eq!(c(&[down(Cash, false), up(Liquid, true)]), NewPosition, "USDC for WETH, none held");
        assert_eq!(c(&[down(Cash, false), up(Liquid, false)]), IncreasePosition, "USDC for more WETH");
        assert_eq!(c(&[down(Liquid, false), up(Cash, false)]), DecreasePosition, "some WETH for USDC");
        assert_eq!(c(&[down(Liquid, true), up(Cash, false)]), ClosePosition, "all the WETH for USDC");
        assert_eq!(c(&[down(Liquid, false), up(Liquid, false)]), Rebalance, "WETH for WBTC");
        assert_eq!(c(&[down(Cash, false), up(Cash, false)]), Rebalance, "USDC for DAI");
        assert_eq!(c(&[down(Cash, false)]), IncreasePosition, "paying and getting nothing back");
        assert_eq!(c(&[]), NewPosition, "a swap that declares nothing is held to the strictest");
    }

    #[test]
    fn lending_vaults_and_liquidity() {
        let c = |kind, m: &[Move]| classify(kind, &changes(m));
        assert_eq!(c("supply", &[down(Cash, false), up(Share, true)]), NewPosition);
        assert_eq!(c("supply", &[down(Cash, false), up(Share, false)]), IncreasePosition);
        assert_eq!(c("borrow", &[up(Debt, false), up(Cash, false)]), IncreasePosition);
        assert_eq!(c("repay", &[down(Cash, false), down(Debt, false)]), DecreasePosition);
        assert_eq!(c("repay", &[down(Cash, false), down(Debt, true)]), ClosePosition);
        assert_eq!(c("withdraw", &[down(Share, false), up(Liquid, false)]), DecreasePosition);
        assert_eq!(c("vault_redeem", &[down(Share, true), up(Cash, false)]), ClosePosition);
        assert_eq!(c("vault_deposit", &[down(Cash, false), up(Share, true)]), NewPosition);
        let minted = Changes { nft_gained: true, ..changes(&[down(Cash, false), down(Liquid, false)]) };
        assert_eq!(classify("add_liquidity", &minted), NewPosition, "a position NFT arrives");
        // Liquidity added to a position the wallet has: tokens leave, nothing arrives.
        assert_eq!(c("add_liquidity", &[down(Cash, false), down(Liquid, false)]), IncreasePosition);
        assert_eq!(c("remove_liquidity", &[up(Cash, false), up(Liquid, false)]), DecreasePosition);
        let burned = Changes { nft_lost: true, ..changes(&[up(Cash, false), up(Liquid, false)]) };
        assert_eq!(classify("remove_liquidity", &burned), ClosePosition);
        assert_eq!(c("collect_fees", &[up(Liquid, false)]), DecreasePosition);
        assert_eq!(c("add_liquidity", &[down(Liquid, false), up(Share, true)]), NewPosition, "a V2 LP token");
    }

    #[test]
    fn a_gentle_kind_does_not_hide_what_the_changes_do() {
        let c = |kind, m: &[Move]| classify(kind, &changes(m));
        // A "repay" that buys WETH with USDC is a swap into a position.
        assert_eq!(c("repay", &[down(Cash, false), up(Liquid, true)]), NewPosition);
        // A "collect_fees" that puts tokens into a position it already has.
        assert_eq!(c("collect_fees", &[down(Liquid, false), down(Cash, false)]), IncreasePosition);
        // A "withdraw" that borrows.
        assert_eq!(c("withdraw", &[up(Debt, false), up(Cash, false)]), IncreasePosition);
        // A "revoke" that mints a position.
        assert_eq!(classify("revoke", &Changes { nft_gained: true, ..Changes::default() }), NewPosition);
        // A kind nobody declared is a new position; a revoke that moves nothing closes a risk.
        assert_eq!(c("teleport", &[]), NewPosition);
        assert_eq!(c("revoke", &[]), ClosePosition);
        assert_eq!(c("approve", &[]), IncreasePosition);
        // A tolerance reaching above zero may hide a purchase: the change counts as one.
        let straddle = Move {
            asset: Liquid,
            may_rise: true,
            may_fall: true,
            surely_falls: false,
            was_empty: false,
            ends_empty: false,
        };
        assert_eq!(c("swap", &[down(Liquid, false), straddle]), Rebalance);
        assert_eq!(
            c("remove_liquidity", &[down(Cash, false), straddle]),
            IncreasePosition,
            "cash may buy a token"
        );
    }

    #[test]
    fn wrapping_and_transfers() {
        let c = |kind, m: &[Move]| classify(kind, &changes(m));
        assert_eq!(c("wrap", &[down(Liquid, false), up(Liquid, false)]), Rebalance);
        assert_eq!(c("unwrap", &[down(Liquid, true), up(Liquid, false)]), Rebalance);
        // Value that leaves for an account is indistinguishable from value put into a position.
        assert_eq!(c("transfer", &[down(Cash, false)]), IncreasePosition);
    }
}
