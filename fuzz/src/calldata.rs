//! Arbitrary calldata to every scoped role (`bardo_safety::scope::check`): the UniversalRouter's
//! commands and V4 actions, the PositionManager's, Morpho's, ABI parameters of every function.
//! Oracle: no panic, and nothing but well-formed calls to known functions passes — a call that
//! passes decodes as one of the role's functions (its selector is one the scope names) — and
//! what the scope admits, the on-chain-bounds hook reads too (its decoder never fails where the
//! scope's succeeded, and never panics).

use alloy::primitives::{Address, B256, U256, address};
use bardo_core::scope::Role;
use std::collections::BTreeSet;

/// Every role a contract can be allowlisted as.
pub const ROLES: [Role; 18] = [
    Role::Erc20,
    Role::Weth,
    Role::UniswapV3SwapRouter,
    Role::UniswapV2Router,
    Role::UniswapV3PositionManager,
    Role::UniswapV4PositionManager,
    Role::UniswapV3Staker,
    Role::AaveV3Pool,
    Role::Erc4626Vault,
    Role::Permit2,
    Role::Erc8004IdentityRegistry,
    Role::Erc8004ReputationRegistry,
    Role::Erc8004ValidationRegistry,
    Role::MorphoBlue,
    Role::UniversalRouter,
    Role::V4Hook,
    Role::Recipient,
    Role::Unscoped,
];

/// The wallet the scopes protect.
pub const WALLET: Address = address!("0x00000000000000000000000000000000000000aa");

/// One input; panics when an oracle fails.
pub fn run(data: &[u8]) {
    // The first byte picks the role and the ether sent; the rest is the calldata.
    let Some((&head, calldata)) = data.split_first() else { return };
    let role = ROLES[head as usize % ROLES.len()];
    let value = U256::from(head >> 7);
    let roles =
        |a: Address| (a == address!("0x00000000000000000000000000000000000000b1")).then_some(Role::Erc20);
    let markets: BTreeSet<B256> = BTreeSet::new();
    let verdict = bardo_safety::scope::check(role, calldata, value, WALLET, &roles, &markets);
    let bounds = bardo_safety::fuzzing::call_bounds(role, calldata);
    if verdict.is_ok() {
        assert!(bounds.is_ok(), "a call in scope has readable bounds: {bounds:?}");
    }
    match (role, verdict) {
        (Role::Unscoped, verdict) => assert_eq!(verdict, Ok(()), "an unscoped contract takes any call"),
        // A hook or a recipient is never called.
        (Role::V4Hook, verdict) => assert!(verdict.is_err(), "a hook is never called"),
        (Role::Recipient, Ok(())) => assert!(calldata.is_empty(), "a recipient gets plain ether only"),
        (_, Ok(())) => assert!(calldata.len() >= 4, "a call in scope names its function"),
        (_, Err(reason)) => assert!(!reason.is_empty()),
    }
}
