//! Morpho Blue's scope: the six position functions, each for the wallet and paying it, with no
//! callback, in a market the operator trusts. A market is trusted by id — the hash of its loan
//! and collateral tokens, oracle, IRM and LLTV — because anyone can create a market, and an
//! allowlisted oracle paired with another collateral token lies as well as a new one.

use super::Party;
use alloy::primitives::{B256, Bytes, keccak256};
use alloy::sol_types::{SolCall, SolValue};
use std::collections::BTreeSet;

alloy::sol! {
    struct MarketParams { address loanToken; address collateralToken; address oracle; address irm; uint256 lltv; }
    function supply(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf, bytes data)
        external returns (uint256, uint256);
    function withdraw(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf, address receiver)
        external returns (uint256, uint256);
    function borrow(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf, address receiver)
        external returns (uint256, uint256);
    function repay(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf, bytes data)
        external returns (uint256, uint256);
    function supplyCollateral(MarketParams marketParams, uint256 assets, address onBehalf, bytes data) external;
    function withdrawCollateral(MarketParams marketParams, uint256 assets, address onBehalf, address receiver)
        external;
}

/// A Morpho call's function and parties, once its market is trusted and it asks no callback;
/// `Ok(None)` for a function outside the scope.
pub(super) fn parties(
    data: &[u8],
    trusted: &BTreeSet<B256>,
) -> Result<Option<(&'static str, Party)>, String> {
    let Some(selector) = data.get(..4) else { return Ok(None) };
    let decoded = |e: alloy::sol_types::Error| format!("Morpho call data does not decode: {e}");
    let (function, market, callback, party): (_, MarketParams, Option<Bytes>, Party) = match selector {
        s if s == supplyCall::SELECTOR => {
            let c = supplyCall::abi_decode(data).map_err(decoded)?;
            (supplyCall::SIGNATURE, c.marketParams, Some(c.data), Party::Wallet("onBehalf", c.onBehalf))
        }
        s if s == repayCall::SELECTOR => {
            let c = repayCall::abi_decode(data).map_err(decoded)?;
            (repayCall::SIGNATURE, c.marketParams, Some(c.data), Party::Wallet("onBehalf", c.onBehalf))
        }
        s if s == supplyCollateralCall::SELECTOR => {
            let c = supplyCollateralCall::abi_decode(data).map_err(decoded)?;
            let party = Party::Wallet("onBehalf", c.onBehalf);
            (supplyCollateralCall::SIGNATURE, c.marketParams, Some(c.data), party)
        }
        s if s == withdrawCall::SELECTOR => {
            let c = withdrawCall::abi_decode(data).map_err(decoded)?;
            let party = Party::Wallets([("onBehalf", c.onBehalf), ("receiver", c.receiver)]);
            (withdrawCall::SIGNATURE, c.marketParams, None, party)
        }
        s if s == borrowCall::SELECTOR => {
            let c = borrowCall::abi_decode(data).map_err(decoded)?;
            let party = Party::Wallets([("onBehalf", c.onBehalf), ("receiver", c.receiver)]);
            (borrowCall::SIGNATURE, c.marketParams, None, party)
        }
        s if s == withdrawCollateralCall::SELECTOR => {
            let c = withdrawCollateralCall::abi_decode(data).map_err(decoded)?;
            let party = Party::Wallets([("onBehalf", c.onBehalf), ("receiver", c.receiver)]);
            (withdrawCollateralCall::SIGNATURE, c.marketParams, None, party)
        }
        _ => return Ok(None),
    };
    // A callback calls back the sender — the wallet — with Morpho's tokens in flight.
    if callback.is_some_and(|data| !data.is_empty()) {
        return Err(format!("{function} asks Morpho for a callback (non-empty `data`); plans never do"));
    }
    let id = keccak256(market.abi_encode());
    if !trusted.contains(&id) {
        return Err(format!(
            "{function} is in Morpho market {id} (loan {}, collateral {}, oracle {}, IRM {}, LLTV {}), \
             which is not one the operator trusts ([safety.morpho_markets])",
            market.loanToken, market.collateralToken, market.oracle, market.irm, market.lltv
        ));
    }
    Ok(Some((function, party)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::check;
    use alloy::primitives::{Address, U256, address};
    use bardo_core::scope::Role;

    const WALLET: Address = address!("0x00000000000000000000000000000000000000aa");
    const STRANGER: Address = address!("0x00000000000000000000000000000000000000e1");

    fn market(oracle: u8) -> MarketParams {
        MarketParams {
            loanToken: Address::repeat_byte(1),
            collateralToken: Address::repeat_byte(2),
            oracle: Address::repeat_byte(oracle),
            irm: Address::repeat_byte(4),
            lltv: U256::from(860_000_000_000_000_000u128),
        }
    }

    fn scoped(data: Vec<u8>) -> Result<(), String> {
        let trusted = BTreeSet::from([keccak256(market(3).abi_encode())]);
        check(Role::MorphoBlue, &data, U256::ZERO, WALLET, &|_| None, &trusted)
    }

    fn borrow(oracle: u8, receiver: Address) -> Vec<u8> {
        let (assets, shares) = (U256::from(5), U256::ZERO);
        borrowCall { marketParams: market(oracle), assets, shares, onBehalf: WALLET, receiver }.abi_encode()
    }

    #[test]
    fn positions_are_the_wallets_in_trusted_markets_only() {
        assert_eq!(scoped(borrow(3, WALLET)), Ok(()));
        assert!(scoped(borrow(3, STRANGER)).expect_err("receiver").contains("`receiver`"));
        let lying = scoped(borrow(9, WALLET)).expect_err("untrusted market");
        assert!(
            lying.contains("not one the operator trusts")
                && lying.contains(&Address::repeat_byte(9).to_string())
        );
        let (assets, shares) = (U256::from(5), U256::ZERO);
        let supply = |on_behalf, data: Vec<u8>| {
            let market = market(3);
            supplyCall { marketParams: market, assets, shares, onBehalf: on_behalf, data: data.into() }
                .abi_encode()
        };
        assert_eq!(scoped(supply(WALLET, Vec::new())), Ok(()));
        assert!(scoped(supply(STRANGER, Vec::new())).is_err(), "a supply credits the wallet");
        assert!(scoped(supply(WALLET, vec![1])).expect_err("callback").contains("callback"));
        let collateral =
            withdrawCollateralCall { marketParams: market(3), assets, onBehalf: WALLET, receiver: STRANGER };
        assert!(scoped(collateral.abi_encode()).is_err());
    }

    #[test]
    fn authorizations_and_flash_loans_are_out_of_scope() {
        alloy::sol! {
            function setAuthorization(address authorized, bool newIsAuthorized) external;
            function flashLoan(address token, uint256 assets, bytes data) external;
        }
        let grant = setAuthorizationCall { authorized: STRANGER, newIsAuthorized: true }.abi_encode();
        assert!(scoped(grant).expect_err("authorization").contains("not in the scope"));
        let flash = flashLoanCall { token: STRANGER, assets: U256::from(1), data: Bytes::new() }.abi_encode();
        assert!(scoped(flash).is_err());
    }
}
