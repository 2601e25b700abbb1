//! Well-formed calls with random parties, generated from the fuzzer's bytes: UniversalRouter
//! `execute` with V2/V3 swaps, wraps, unwraps, sweeps and V4 swaps (swap, settle, take), and the
//! plain routers, tokens, Aave and vaults. Oracles: the scope accepts the call iff every party
//! is one it allows (the wallet, a router placeholder, an allowlisted spender or recipient), and
//! a refusal names the first party that is not — the decoder read back what was encoded.

use crate::calldata::WALLET;
use alloy::primitives::aliases::{I24, U24};
use alloy::primitives::{Address, B256, Bytes, U256, address};
use alloy::sol_types::{SolCall, SolValue};
use arbitrary::{Result, Unstructured};
use bardo_core::scope::Role;
use std::collections::BTreeSet;

alloy::sol! {
    function execute(bytes commands, bytes[] inputs, uint256 deadline) external payable;
    struct PoolKey { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; }
    struct ExactInputSingleParams { PoolKey poolKey; bool zeroForOne; uint128 amountIn; uint128 amountOutMinimum;
        bytes hookData; }
    function approve(address spender, uint256 amount) external returns (bool);
    function transfer(address to, uint256 amount) external returns (bool);
    function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) external returns (uint256[]);
    function supply(address asset, uint256 amount, address onBehalfOf, uint16 referralCode) external;
    function withdraw(uint256 assets, address receiver, address owner) external returns (uint256);
}

const STRANGER: Address = address!("0x00000000000000000000000000000000000000e1");
/// Allowlisted as a `recipient` (a treasury).
const TREASURY: Address = address!("0x00000000000000000000000000000000000000a1");
/// Allowlisted as a router (a spender).
const ROUTER: Address = address!("0x00000000000000000000000000000000000000b1");
const MSG_SENDER: Address = address!("0x0000000000000000000000000000000000000001");
const ADDRESS_THIS: Address = address!("0x0000000000000000000000000000000000000002");
const PARTIES: [Address; 6] = [WALLET, STRANGER, TREASURY, ROUTER, MSG_SENDER, ADDRESS_THIS];

fn roles(a: Address) -> Option<Role> {
    match a {
        TREASURY => Some(Role::Recipient),
        ROUTER => Some(Role::UniswapV2Router),
        _ => None,
    }
}

fn party(u: &mut Unstructured) -> Result<Address> {
    u.choose(&PARTIES).copied()
}

/// A call, the role it is sent to, the ether sent, and the party a correct scope refuses
/// (`None`: it must pass), or `Err(())` for a call that must be refused without naming one.
struct Case {
    role: Role,
    data: Vec<u8>,
    value: U256,
    refused: Option<std::result::Result<Address, ()>>,
}

/// The first of `parties` not in `allowed`.
fn first_not(parties: &[Address], allowed: &[Address]) -> Option<std::result::Result<Address, ()>> {
    parties.iter().find(|p| !allowed.contains(p)).map(|p| Ok(*p))
}

fn router(u: &mut Unstructured) -> Result<Case> {
    let mut commands = Vec::new();
    let mut inputs: Vec<Bytes> = Vec::new();
    let mut receivers = Vec::new();
    let mut out_of_scope = false;
    for _ in 0..u.int_in_range(1..=5)? {
        let to = party(u)?;
        let amount = U256::from(u.int_in_range(0..=u64::MAX)?);
        let command: u8 = *u.choose(&[0x00, 0x01, 0x04, 0x08, 0x09, 0x0b, 0x0c, 0x10, 0x05, 0x06])?;
        let input = match command {
            0x00 | 0x01 => (to, amount, amount, Bytes::new(), u.arbitrary::<bool>()?).abi_encode_params(),
            0x04 => (STRANGER, to, amount).abi_encode_params(),
            0x08 | 0x09 => (to, amount, amount, vec![STRANGER, WALLET], true).abi_encode_params(),
            0x0b | 0x0c => (to, amount).abi_encode_params(),
            0x10 => {
                let key = PoolKey {
                    currency0: Address::ZERO,
                    currency1: STRANGER,
                    fee: U24::from(3000),
                    tickSpacing: I24::try_from(60).expect("in range"),
                    hooks: Address::ZERO,
                };
                let swap = ExactInputSingleParams {
                    poolKey: key,
                    zeroForOne: true,
                    amountIn: 5,
                    amountOutMinimum: 1,
                    hookData: Bytes::new(),
                };
                let params: Vec<Bytes> = vec![
                    swap.abi_encode().into(),
                    (Address::ZERO, amount).abi_encode_params().into(),
                    (STRANGER, to, U256::ZERO).abi_encode_params().into(),
                ];
                (Bytes::from(vec![0x06, 0x0c, 0x0e]), params).abi_encode_params()
            }
            // TRANSFER and PAY_PORTION: never in scope, whoever they pay.
            _ => {
                out_of_scope = true;
                (STRANGER, to, amount).abi_encode_params()
            }
        };
        commands.push(command);
        inputs.push(input.into());
        if out_of_scope {
            break;
        }
        receivers.push(to);
    }
    let data = executeCall { commands: commands.into(), inputs, deadline: U256::from(1) }.abi_encode();
    // Every command is read before any receiver is judged: one out of scope refuses the call.
    let refused =
        if out_of_scope { Some(Err(())) } else { first_not(&receivers, &[WALLET, MSG_SENDER, ADDRESS_THIS]) };
    Ok(Case { role: Role::UniversalRouter, data, value: U256::from(u.int_in_range(0..=1u8)?), refused })
}

fn simple(u: &mut Unstructured) -> Result<Case> {
    let who = party(u)?;
    let other = party(u)?;
    let amount = U256::from(u.int_in_range(0..=2u8)?);
    let value = U256::from(u.int_in_range(0..=1u8)?);
    let (role, data, refused) = match u.int_in_range(0..=4u8)? {
        0 => {
            let data = approveCall { spender: who, amount }.abi_encode();
            let ok = amount.is_zero() || who == WALLET || roles(who).is_some();
            (Role::Erc20, data, (!ok).then_some(Ok(who)))
        }
        1 => {
            let data = transferCall { to: who, amount }.abi_encode();
            (Role::Erc20, data, first_not(&[who], &[WALLET, TREASURY]))
        }
        2 => {
            let data = swapExactTokensForTokensCall {
                amountIn: amount,
                amountOutMin: amount,
                path: vec![STRANGER, WALLET],
                to: who,
                deadline: U256::from(1),
            }
            .abi_encode();
            (Role::UniswapV2Router, data, first_not(&[who], &[WALLET]))
        }
        3 => {
            let data = supplyCall { asset: STRANGER, amount, onBehalfOf: who, referralCode: 0 }.abi_encode();
            (Role::AaveV3Pool, data, first_not(&[who], &[WALLET]))
        }
        _ => {
            let data = withdrawCall { assets: amount, receiver: who, owner: other }.abi_encode();
            (Role::Erc4626Vault, data, first_not(&[who, other], &[WALLET]))
        }
    };
    // Ether goes only to functions that take it (of these only the V2 router's), checked first.
    let refused = if !value.is_zero() && role != Role::UniswapV2Router { Some(Err(())) } else { refused };
    Ok(Case { role, data, value, refused })
}

/// One input; panics when an oracle fails.
pub fn run(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let case = match u.arbitrary::<bool>().and_then(|r| if r { router(&mut u) } else { simple(&mut u) }) {
        Ok(case) => case,
        Err(_) => return,
    };
    let markets: BTreeSet<B256> = BTreeSet::new();
    let verdict = bardo_safety::scope::check(case.role, &case.data, case.value, WALLET, &roles, &markets);
    match (case.refused, verdict) {
        (None, Ok(())) | (Some(Err(())), Err(_)) => {}
        (Some(Ok(who)), Err(reason)) => {
            assert!(reason.contains(&who.to_string()), "the refusal names {who}: {reason}")
        }
        (expected, verdict) => panic!(
            "a {} call 0x{} with {} wei: expected {expected:?}, the scope said {verdict:?}",
            case.role,
            alloy::hex::encode(&case.data),
            case.value
        ),
    }
}
