//! Permit2, Uniswap's shared approval contract (what the UniversalRouter and V4's
//! PositionManager pull tokens through): on-chain `approve` of exact amounts with an
//! expiration, each only when short. No signed permits: the host never signs typed data a
//! plugin made up.

use crate::abi::{eth_call, tx_call};
use crate::erc20::{Authority, Token, approval_if_short};
use crate::{ChainId, Error, PlannedCall};
use alloy_primitives::aliases::{U48, U160};
use alloy_primitives::{Address, U256, address};

/// Permit2's canonical address (the same on every chain it is deployed to).
pub const PERMIT2: Address = address!("0x000000000022D473030F116dDEE9F6B43aC78BA3");

alloy_sol_types::sol! {
    function allowance(address user, address token, address spender) external view
        returns (uint160 amount, uint48 expiration, uint48 nonce);
    function approve(address token, address spender, uint160 amount, uint48 expiration) external;
}

/// The calls that let `spender` pull `amount` of `token` from `owner` through Permit2 until
/// `expiration` (Unix seconds): the token's approval of Permit2, and Permit2's approval of the
/// spender — each of exactly `amount`, and only when what is there is short (or, for Permit2,
/// expires before `expiration`). With the authorities the plan leaves, to declare.
pub fn approvals_if_short(
    chain_id: ChainId,
    token: &Token,
    owner: Address,
    spender: Address,
    amount: U256,
    expiration: u64,
    spender_name: &str,
) -> Result<(Vec<PlannedCall>, Vec<Authority>), Error> {
    let mut calls: Vec<PlannedCall> =
        approval_if_short(chain_id, token, owner, PERMIT2, amount, "Permit2")?.into_iter().collect();
    let now = eth_call(chain_id, PERMIT2, &allowanceCall { user: owner, token: token.address, spender })?;
    let amount160 = U160::saturating_from(amount);
    if U256::from(now.amount) < amount || now.expiration.to::<u64>() < expiration {
        calls.push(PlannedCall {
            call: tx_call(
                chain_id,
                PERMIT2,
                &approveCall {
                    token: token.address,
                    spender,
                    amount: amount160,
                    expiration: U48::saturating_from(expiration),
                },
            ),
            description: format!(
                "let {spender_name} move {} {} through Permit2 until {expiration}",
                crate::units::format_units(amount, token.decimals),
                token.symbol
            ),
        });
    }
    let authorities = vec![
        Authority::erc20(token, PERMIT2, amount),
        Authority::permit2(token, spender, amount, expiration),
    ];
    Ok((calls, authorities))
}
