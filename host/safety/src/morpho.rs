//! The Morpho Blue markets the operator trusts. Anyone can create a market — with any oracle —
//! so the operator lists each market by what it is made of (loan and collateral tokens, oracle,
//! IRM, LLTV); its id is the hash Morpho gives those, derived here, never taken on trust.
//! Scope accepts a Morpho call only in one of them; the health floor watches the wallet's
//! positions in them.

use alloy::primitives::{Address, B256, U256, keccak256};
use alloy::sol_types::SolValue;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One trusted market (`[safety.morpho_markets.<chain id>.<name>]`, or the file's entries).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MorphoMarket {
    /// What is lent and borrowed.
    pub loan_token: Address,
    /// What secures a borrow.
    pub collateral_token: Address,
    /// The collateral's price in the loan token, scaled 10^36.
    pub oracle: Address,
    /// The interest-rate model.
    pub irm: Address,
    /// Liquidation loan-to-value, WAD (`"860000000000000000"` is 86 %).
    pub lltv: U256,
    /// The market's id, if given: it must be the hash of the fields above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<B256>,
}

impl MorphoMarket {
    /// `keccak256(abi.encode(marketParams))`, Morpho's `Id`.
    pub fn derived_id(&self) -> B256 {
        keccak256((self.loan_token, self.collateral_token, self.oracle, self.irm, self.lltv).abi_encode())
    }
}

/// Trusted markets by chain id, by market id.
pub type TrustedMarkets = BTreeMap<u64, BTreeMap<B256, MorphoMarket>>;

/// `named` markets by id; a stated id that is not the hash of the market is an error naming it.
pub fn by_id(named: BTreeMap<String, MorphoMarket>) -> Result<BTreeMap<B256, MorphoMarket>, String> {
    named
        .into_iter()
        .map(|(name, market)| {
            let id = market.derived_id();
            match market.id {
                Some(stated) if stated != id => Err(format!(
                    "Morpho market {name:?} states id {stated}, but its tokens, oracle, IRM and LLTV hash to {id}"
                )),
                _ => Ok((id, market)),
            }
        })
        .collect()
}

/// Only the ids, per chain (what scope needs).
pub fn ids(markets: &TrustedMarkets) -> BTreeMap<u64, BTreeSet<B256>> {
    markets.iter().map(|(chain, m)| (*chain, m.keys().copied().collect())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::{address, b256};

    #[test]
    fn the_id_is_the_hash_morpho_gives_the_params() {
        // The devnet's WETH/USDC market as `bardo devnet up` deployed it (Morpho's own id).
        let market = MorphoMarket {
            loan_token: address!("0x0000000000000000000000000000000000000001"),
            collateral_token: address!("0x0000000000000000000000000000000000000002"),
            oracle: address!("0x0000000000000000000000000000000000000003"),
            irm: address!("0x0000000000000000000000000000000000000004"),
            lltv: U256::from(860_000_000_000_000_000u128),
            id: None,
        };
        let id = market.derived_id();
        let mut words = Vec::new();
        for a in [1u8, 2, 3, 4] {
            words.extend([0u8; 31]);
            words.push(a);
        }
        words.extend(U256::from(860_000_000_000_000_000u128).to_be_bytes::<32>());
        assert_eq!(id, keccak256(&words));
        let named = |id| BTreeMap::from([("m".to_owned(), MorphoMarket { id, ..market.clone() })]);
        assert_eq!(by_id(named(Some(id))).expect("matches").keys().next(), Some(&id));
        let wrong = b256!("0x00000000000000000000000000000000000000000000000000000000000000ff");
        assert!(by_id(named(Some(wrong))).expect_err("mismatch").contains("hash to"));
    }
}
