//! Morpho Blue's scope: the six position functions, each for the wallet and paying it, with no
//! callback, in a market the operator trusts. A market is trusted by id — the hash of its loan
//! and collateral tokens, oracle, IRM and LLTV — because anyone can create a market, and an
//! allowlisted oracle paired with another collateral token lies as well as a new one.

use super::Party;
use crate::morpho::decode;
use alloy::primitives::B256;
use std::collections::BTreeSet;

/// A Morpho call's function and parties, once its market is trusted and it asks no callback;
/// `Ok(None)` for a function outside the scope.
pub(super) fn parties(
    data: &[u8],
    trusted: &BTreeSet<B256>,
) -> Result<Option<(&'static str, Party)>, String> {
    let Some(call) = decode(data)? else { return Ok(None) };
    let function = call.function;
    // A callback calls back the sender — the wallet — with Morpho's tokens in flight.
    if call.callback.as_ref().is_some_and(|data| !data.is_empty()) {
        return Err(format!("{function} asks Morpho for a callback (non-empty `data`); plans never do"));
    }
    let id = call.id();
    if !trusted.contains(&id) {
        let m = &call.market;
        return Err(format!(
            "{function} is in Morpho market {id} (loan {}, collateral {}, oracle {}, IRM {}, LLTV {}), \
             which is not one the operator trusts ([safety.morpho_markets])",
            m.loanToken, m.collateralToken, m.oracle, m.irm, m.lltv
        ));
    }
    let party = match call.receiver {
        Some(receiver) => Party::Wallets([("onBehalf", call.on_behalf), ("receiver", receiver)]),
        None => Party::Wallet("onBehalf", call.on_behalf),
    };
    Ok(Some((function, party)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::morpho::abi::{MarketParams, borrowCall, supplyCall, withdrawCollateralCall};
    use crate::scope::check;
    use alloy::primitives::{Address, Bytes, U256, address, keccak256};
    use alloy::sol_types::{SolCall, SolValue};
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
