//! `approval-guard`: the approvals a plan's calls make, judged from their calldata whatever the
//! action is called — an ERC-20 `approve` or `increaseAllowance`, a Permit2 `approve` — never an
//! unlimited amount. What an approval left behind is worth, and whether the wallet holds that
//! much, is judged after the simulation by [`super::approval_exposure`]; which spender may be
//! approved, by the allowlist's scopes.

use super::{Decision, Findings, Proposal, SafetyHook, reject};
use alloy::primitives::{Address, U256};
use alloy::sol_types::SolCall;
use bardo_core::error::ErrorCode;

alloy::sol! {
    function approve(address spender, uint256 amount) external returns (bool);
    function increaseAllowance(address spender, uint256 addedValue) external returns (bool);
}

mod permit2 {
    alloy::sol! {
        function approve(address token, address spender, uint160 amount, uint48 expiration) external;
    }
}

/// Approvals are bounded, never "unlimited".
pub struct ApprovalGuard;

/// Anything at or above 2^128 base units is an unlimited approval in disguise.
pub(crate) const UNLIMITED: U256 = U256::from_limbs([0, 0, 1, 0]);

/// The approval a call's calldata makes: (token, spender, amount).
fn approval(to: Address, data: &[u8]) -> Option<(Address, Address, U256)> {
    let selector = data.get(..4)?;
    if selector == approveCall::SELECTOR {
        approveCall::abi_decode(data).ok().map(|c| (to, c.spender, c.amount))
    } else if selector == increaseAllowanceCall::SELECTOR {
        increaseAllowanceCall::abi_decode(data).ok().map(|c| (to, c.spender, c.addedValue))
    } else if selector == permit2::approveCall::SELECTOR {
        permit2::approveCall::abi_decode(data).ok().map(|c| (c.token, c.spender, U256::from(c.amount)))
    } else {
        None
    }
}

impl SafetyHook for ApprovalGuard {
    fn name(&self) -> &'static str {
        "approval-guard"
    }

    fn check(&self, p: &Proposal<'_>, _: &mut Findings) -> Decision {
        for (i, call) in p.plan.calls.iter().enumerate() {
            let Some((token, spender, amount)) = approval(call.to, &call.data) else { continue };
            if amount >= UNLIMITED {
                return reject(
                    ErrorCode::Denied,
                    format!(
                        "call {} approves an unlimited amount of {token} ({amount} base units) to {spender}; approve only what will be spent",
                        i + 1
                    ),
                );
            }
        }
        Decision::Allow
    }

    fn at_commit(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::test_support::*;
    use serde_json::json;

    #[test]
    fn the_approval_guard_refuses_unlimited_approvals_whatever_the_kind() {
        let mut found = Findings::default();
        let mut d = |kind, calls| decide(&ApprovalGuard, kind, Phase::Thriving, calls, json!({}), &mut found);
        assert_eq!(d("swap", vec![approve(ROUTER, U256::from(10)), call(ROUTER, vec![])]), Decision::Allow);
        for kind in ["swap", "approve", "grant"] {
            assert!(reason(&d(kind, vec![approve(ROUTER, UNLIMITED)])).contains("unlimited"), "{kind}");
        }
        // A standing approval is judged by what it is worth, after the simulation, not here.
        assert_eq!(d("grant", vec![approve(ROUTER, UNLIMITED - U256::from(1))]), Decision::Allow);
        let raise = increaseAllowanceCall { spender: ROUTER, addedValue: U256::MAX }.abi_encode();
        assert!(reason(&d("grant", vec![call(TOKEN, raise)])).contains("unlimited"));
    }
}
