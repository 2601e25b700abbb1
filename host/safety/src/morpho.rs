//! The Morpho Blue markets the operator trusts. Anyone can create a market — with any oracle —
//! so the operator lists each market by what it is made of (loan and collateral tokens, oracle,
//! IRM, LLTV); its id is the hash Morpho gives those, derived here, never taken on trust.
//! Scope accepts a Morpho call only in one of them; the health floor, the value guard and the
//! cross-check read the wallet's positions in them. Here too: Morpho's ABI as the host uses it,
//! and the one decoder of a plan's Morpho calls.

use alloy::primitives::{Address, B256, Bytes, U256, keccak256};
use alloy::sol_types::{SolCall, SolValue};
use bardo_morpho_math::{Position, Totals};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Morpho Blue's position functions and views, its IRM's rate and an oracle's price.
pub(crate) mod abi {
    alloy::sol! {
        struct MarketParams { address loanToken; address collateralToken; address oracle; address irm; uint256 lltv; }
        /// `market(id)`'s totals (a static struct: encoded as its six words).
        struct Market { uint128 totalSupplyAssets; uint128 totalSupplyShares; uint128 totalBorrowAssets;
            uint128 totalBorrowShares; uint128 lastUpdate; uint128 fee; }
        function supply(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf, bytes data)
            external returns (uint256, uint256);
        function withdraw(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf,
            address receiver) external returns (uint256, uint256);
        function borrow(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf,
            address receiver) external returns (uint256, uint256);
        function repay(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf, bytes data)
            external returns (uint256, uint256);
        function supplyCollateral(MarketParams marketParams, uint256 assets, address onBehalf, bytes data) external;
        function withdrawCollateral(MarketParams marketParams, uint256 assets, address onBehalf, address receiver)
            external;
        function position(bytes32 id, address user) external view returns (uint256 supplyShares,
            uint128 borrowShares, uint128 collateral);
        function market(bytes32 id) external view returns (Market totals);
        function borrowRateView(MarketParams marketParams, Market market) external view returns (uint256);
        function price() external view returns (uint256);
    }
}

impl abi::Market {
    /// The totals in the math's terms.
    pub(crate) fn totals(&self) -> Totals {
        Totals {
            supply_assets: U256::from(self.totalSupplyAssets),
            supply_shares: U256::from(self.totalSupplyShares),
            borrow_assets: U256::from(self.totalBorrowAssets),
            borrow_shares: U256::from(self.totalBorrowShares),
            last_update: u64::try_from(self.lastUpdate).unwrap_or(u64::MAX),
            fee: U256::from(self.fee),
        }
    }
}

impl abi::positionReturn {
    /// The position in the math's terms.
    pub(crate) fn position(&self) -> Position {
        Position {
            supply_shares: self.supplyShares,
            borrow_shares: U256::from(self.borrowShares),
            collateral: U256::from(self.collateral),
        }
    }
}

/// One of the six position functions, decoded.
pub(crate) struct Call {
    /// Its signature.
    pub function: &'static str,
    /// Its name for Morpho's SDK: `supply`, `withdraw`, `borrow`, `repay`, `supply_collateral`,
    /// `withdraw_collateral`.
    pub kind: &'static str,
    /// The market.
    pub market: abi::MarketParams,
    /// Assets (collateral for the collateral functions), or zero when by shares.
    pub assets: U256,
    /// Shares, or zero.
    pub shares: U256,
    /// Whose position it is.
    pub on_behalf: Address,
    /// Who is paid, for the functions that pay.
    pub receiver: Option<Address>,
    /// The callback data, for the functions that take tokens.
    pub callback: Option<Bytes>,
}

impl Call {
    /// The market's id.
    pub(crate) fn id(&self) -> B256 {
        keccak256(self.market.abi_encode())
    }
}

/// `data` as one of Morpho's position functions; `Ok(None)` for any other function.
pub(crate) fn decode(data: &[u8]) -> Result<Option<Call>, String> {
    use abi::*;
    let Some(selector) = data.get(..4) else { return Ok(None) };
    let decoded = |e: alloy::sol_types::Error| format!("Morpho call data does not decode: {e}");
    let call = |function, kind, market, (assets, shares), on_behalf, receiver, callback| Call {
        function,
        kind,
        market,
        assets,
        shares,
        on_behalf,
        receiver,
        callback,
    };
    Ok(Some(match selector {
        s if s == supplyCall::SELECTOR => {
            let c = supplyCall::abi_decode(data).map_err(decoded)?;
            let amounts = (c.assets, c.shares);
            call(supplyCall::SIGNATURE, "supply", c.marketParams, amounts, c.onBehalf, None, Some(c.data))
        }
        s if s == repayCall::SELECTOR => {
            let c = repayCall::abi_decode(data).map_err(decoded)?;
            let amounts = (c.assets, c.shares);
            call(repayCall::SIGNATURE, "repay", c.marketParams, amounts, c.onBehalf, None, Some(c.data))
        }
        s if s == supplyCollateralCall::SELECTOR => {
            let c = supplyCollateralCall::abi_decode(data).map_err(decoded)?;
            let (amounts, kind) = ((c.assets, U256::ZERO), "supply_collateral");
            call(
                supplyCollateralCall::SIGNATURE,
                kind,
                c.marketParams,
                amounts,
                c.onBehalf,
                None,
                Some(c.data),
            )
        }
        s if s == withdrawCall::SELECTOR => {
            let c = withdrawCall::abi_decode(data).map_err(decoded)?;
            let amounts = (c.assets, c.shares);
            call(
                withdrawCall::SIGNATURE,
                "withdraw",
                c.marketParams,
                amounts,
                c.onBehalf,
                Some(c.receiver),
                None,
            )
        }
        s if s == borrowCall::SELECTOR => {
            let c = borrowCall::abi_decode(data).map_err(decoded)?;
            let amounts = (c.assets, c.shares);
            call(borrowCall::SIGNATURE, "borrow", c.marketParams, amounts, c.onBehalf, Some(c.receiver), None)
        }
        s if s == withdrawCollateralCall::SELECTOR => {
            let c = withdrawCollateralCall::abi_decode(data).map_err(decoded)?;
            let (amounts, kind) = ((c.assets, U256::ZERO), "withdraw_collateral");
            let receiver = Some(c.receiver);
            call(withdrawCollateralCall::SIGNATURE, kind, c.marketParams, amounts, c.onBehalf, receiver, None)
        }
        _ => return Ok(None),
    }))
}

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
        keccak256(self.params().abi_encode())
    }

    /// The market as Morpho takes it.
    pub(crate) fn params(&self) -> abi::MarketParams {
        abi::MarketParams {
            loanToken: self.loan_token,
            collateralToken: self.collateral_token,
            oracle: self.oracle,
            irm: self.irm,
            lltv: self.lltv,
        }
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
