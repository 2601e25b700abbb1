//! The UniversalRouter's scope: `execute(commands, inputs, deadline)` in which every command is
//! a V2 / V3 / V4 swap, a wrap, an unwrap or a sweep, and every address that receives anything
//! is the wallet or one of the router's placeholders for it (`MSG_SENDER`) or for itself between
//! steps (`ADDRESS_THIS`). Transfers, portions, signed permits, sub-plans and commands allowed
//! to revert are refused. Inside `V4_SWAP` the same holds for the V4 router's actions: swaps,
//! settles, and takes to the wallet. A V3 → V4 migration's position-manager calls are in scope:
//! the V3 manager's decrease, burn and collect (to the wallet or V4's PositionManager), and V4's
//! `modifyLiquidities` under its own scope with every recipient the wallet itself.

use super::periphery::{ADDRESS_THIS, MSG_SENDER, Parties, PoolKey, decode, decode_struct};
use alloy::primitives::{Address, U256};
use alloy::sol_types::SolCall;

alloy::sol! {
    function execute(bytes commands, bytes[] inputs, uint256 deadline) external payable;

    struct PathKey { address intermediateCurrency; uint24 fee; int24 tickSpacing; address hooks; bytes hookData; }
    struct ExactInputSingleParams { PoolKey poolKey; bool zeroForOne; uint128 amountIn; uint128 amountOutMinimum;
        bytes hookData; }
    // The multi-pool params as the deployed UniversalRouter 2.1 (v4-periphery 2.1) decodes them,
    // with per-hop price limits after the path: decoded any other way, a path's hooks would be
    // read from the wrong words.
    struct ExactInputParams { address currencyIn; PathKey[] path; uint256[] maxHopSlippage; uint128 amountIn;
        uint128 amountOutMinimum; }
    struct ExactOutputSingleParams { PoolKey poolKey; bool zeroForOne; uint128 amountOut; uint128 amountInMaximum;
        bytes hookData; }
    struct ExactOutputParams { address currencyOut; PathKey[] path; uint256[] maxHopSlippage; uint128 amountOut;
        uint128 amountInMaximum; }
}

/// The hook permissions that let a hook change what a swapper or a liquidity provider pays or
/// receives (`Hooks.sol`: the `*_RETURNS_DELTA` flags in the address's low bits).
const RETURNS_DELTA_FLAGS: u16 = 0b1111;

/// Whether the hook at `hook` may change the amounts of a swap or liquidity change in its pool.
pub(super) fn returns_delta(hook: Address) -> bool {
    u16::from_be_bytes([hook[18], hook[19]]) & RETURNS_DELTA_FLAGS != 0
}

/// The permissions a V4 hook's address grants (`Hooks.sol`: one flag per low bit, from bit 13).
const PERMISSIONS: [&str; 14] = [
    "before-initialize",
    "after-initialize",
    "before-add-liquidity",
    "after-add-liquidity",
    "before-remove-liquidity",
    "after-remove-liquidity",
    "before-swap",
    "after-swap",
    "before-donate",
    "after-donate",
    "before-swap-returns-delta",
    "after-swap-returns-delta",
    "after-add-liquidity-returns-delta",
    "after-remove-liquidity-returns-delta",
];

/// The permissions `hook`'s address grants, named (`none` for none).
pub(super) fn permissions(hook: Address) -> String {
    let bits = u16::from_be_bytes([hook[18], hook[19]]);
    let named: Vec<&str> = PERMISSIONS
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << (13 - i)) != 0)
        .map(|(_, n)| *n)
        .collect();
    if named.is_empty() { "none".into() } else { named.join(", ") }
}

const FLAG_ALLOW_REVERT: u8 = 0x80;

/// The parties of a UniversalRouter call, or why it is out of scope. `None`: not `execute`.
pub(super) fn parties(data: &[u8]) -> Option<Result<Parties, String>> {
    if data.len() < 4 || data[..4] != executeCall::SELECTOR {
        return None;
    }
    Some(execute_recipients(data))
}

fn execute_recipients(data: &[u8]) -> Result<Parties, String> {
    let call = executeCall::abi_decode(data).map_err(|e| format!("execute(bytes,bytes[],uint256): {e}"))?;
    if call.commands.len() != call.inputs.len() {
        return Err(format!("{} commands with {} inputs", call.commands.len(), call.inputs.len()));
    }
    let mut out = Parties::default();
    for (command, input) in call.commands.iter().zip(&call.inputs) {
        if command & FLAG_ALLOW_REVERT != 0 {
            return Err(format!("command 0x{command:02x} may revert without failing the plan"));
        }
        command_parties(*command, input, &mut out)?;
    }
    Ok(out)
}

fn command_parties(command: u8, input: &[u8], out: &mut Parties) -> Result<(), String> {
    type Swap3 = (Address, U256, U256, alloy::primitives::Bytes, bool);
    type Swap2 = (Address, U256, U256, Vec<Address>, bool);
    let recipient = match command {
        0x00 => ("V3_SWAP_EXACT_IN recipient", decode::<Swap3>("V3_SWAP_EXACT_IN", input)?.0),
        0x01 => ("V3_SWAP_EXACT_OUT recipient", decode::<Swap3>("V3_SWAP_EXACT_OUT", input)?.0),
        0x04 => ("SWEEP recipient", decode::<(Address, Address, U256)>("SWEEP", input)?.1),
        0x08 => ("V2_SWAP_EXACT_IN recipient", decode::<Swap2>("V2_SWAP_EXACT_IN", input)?.0),
        0x09 => ("V2_SWAP_EXACT_OUT recipient", decode::<Swap2>("V2_SWAP_EXACT_OUT", input)?.0),
        0x0b => ("WRAP_ETH recipient", decode::<(Address, U256)>("WRAP_ETH", input)?.0),
        0x0c => ("UNWRAP_WETH recipient", decode::<(Address, U256)>("UNWRAP_WETH", input)?.0),
        0x10 => return v4_parties(input, out),
        0x12 => return v3_position_call(input, out),
        0x14 => return v4_position_call(input, out),
        other => return Err(format!("UniversalRouter command 0x{other:02x} is not in the scope of a swap")),
    };
    out.recipients.push(recipient);
    Ok(())
}

/// `V3_POSITION_MANAGER_CALL` (a migration's first half): the V3 position manager's
/// `decreaseLiquidity`, `collect` (to the wallet or V4's PositionManager) or `burn`, which the
/// router makes only for a position its caller owns or is approved for.
fn v3_position_call(input: &[u8], out: &mut Parties) -> Result<(), String> {
    use super::{burnCall, collectCall, decreaseLiquidityCall};
    if super::decode::<decreaseLiquidityCall>(input).is_some() || super::decode::<burnCall>(input).is_some() {
        return Ok(());
    }
    match super::decode::<collectCall>(input) {
        Some(c) => {
            out.to_v4_manager.push(("V3_POSITION_MANAGER_CALL collect recipient", c.params.recipient));
            Ok(())
        }
        None => Err("V3_POSITION_MANAGER_CALL may only decrease, collect or burn".into()),
    }
}

/// `V4_POSITION_MANAGER_CALL` (a migration's second half): the PositionManager's
/// `modifyLiquidities` in its own scope, called by the router — so the caller placeholder would
/// name the router, and every recipient must be the wallet itself.
fn v4_position_call(input: &[u8], out: &mut Parties) -> Result<(), String> {
    match super::v4_positions::parties(input) {
        Some(Ok(p)) => {
            out.hooks.extend(p.hooks);
            out.wallet_only.extend(p.recipients);
            Ok(())
        }
        Some(Err(e)) => Err(format!("V4_POSITION_MANAGER_CALL: {e}")),
        None => Err("V4_POSITION_MANAGER_CALL may only call modifyLiquidities".into()),
    }
}

/// `V4_SWAP`: `(bytes actions, bytes[] params)` for the V4 router.
fn v4_parties(input: &[u8], out: &mut Parties) -> Result<(), String> {
    let (actions, params) =
        decode::<(alloy::primitives::Bytes, Vec<alloy::primitives::Bytes>)>("V4_SWAP", input)?;
    if actions.len() != params.len() {
        return Err(format!("V4_SWAP: {} actions with {} params", actions.len(), params.len()));
    }
    for (action, p) in actions.iter().zip(&params) {
        match action {
            0x06 => out
                .hooks
                .push(decode_struct::<ExactInputSingleParams>("SWAP_EXACT_IN_SINGLE", p)?.poolKey.hooks),
            0x07 => out
                .hooks
                .extend(decode_struct::<ExactInputParams>("SWAP_EXACT_IN", p)?.path.iter().map(|k| k.hooks)),
            0x08 => out
                .hooks
                .push(decode_struct::<ExactOutputSingleParams>("SWAP_EXACT_OUT_SINGLE", p)?.poolKey.hooks),
            0x09 => out.hooks.extend(
                decode_struct::<ExactOutputParams>("SWAP_EXACT_OUT", p)?.path.iter().map(|k| k.hooks),
            ),
            // SETTLE (currency, amount, payerIsUser) and SETTLE_ALL (currency, maxAmount) pay the
            // pool from the wallet or the router; TAKE_ALL (currency, minAmount) pays the caller.
            0x0b => drop(decode::<(Address, U256, bool)>("SETTLE", p)?),
            0x0c => drop(decode::<(Address, U256)>("SETTLE_ALL", p)?),
            0x0f => drop(decode::<(Address, U256)>("TAKE_ALL", p)?),
            0x0e => out.recipients.push(("TAKE recipient", decode::<(Address, Address, U256)>("TAKE", p)?.1)),
            other => return Err(format!("V4 router action 0x{other:02x} is not in the scope of a swap")),
        }
    }
    Ok(())
}

/// Whether `who` may receive in a UniversalRouter plan of `wallet`.
pub(super) fn may_receive(who: Address, wallet: Address) -> bool {
    who == wallet || who == MSG_SENDER || who == ADDRESS_THIS
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use alloy::primitives::aliases::{I24, U24};
    use alloy::primitives::{Bytes, address};
    use alloy::sol_types::SolValue;

    pub(in crate::scope) const WALLET: Address = address!("0x00000000000000000000000000000000000000aa");
    const STRANGER: Address = address!("0x00000000000000000000000000000000000000e1");

    pub(in crate::scope) fn execute(commands: &[u8], inputs: Vec<Vec<u8>>) -> Vec<u8> {
        let inputs = inputs.into_iter().map(Bytes::from).collect();
        executeCall { commands: Bytes::copy_from_slice(commands), inputs, deadline: U256::from(1) }
            .abi_encode()
    }

    fn v4_swap(take_to: Address) -> Vec<u8> {
        v4_swap_hooked(take_to, Address::ZERO)
    }

    pub(in crate::scope) fn v4_swap_hooked(take_to: Address, hooks: Address) -> Vec<u8> {
        let key = PoolKey {
            currency0: Address::ZERO,
            currency1: STRANGER,
            fee: U24::from(3000),
            tickSpacing: I24::try_from(60).expect("spacing"),
            hooks,
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
            (Address::ZERO, U256::from(5)).abi_encode_params().into(),
            (STRANGER, take_to, U256::ZERO).abi_encode_params().into(),
        ];
        (Bytes::from(vec![0x06, 0x0c, 0x0e]), params).abi_encode_params()
    }

    fn within(data: &[u8]) -> Result<(), String> {
        let parties = parties(data).expect("execute")?;
        match parties.recipients.iter().find(|(_, who)| !may_receive(*who, WALLET)) {
            None => Ok(()),
            Some((name, who)) => Err(format!("{name} {who}")),
        }
    }

    #[test]
    fn swaps_wraps_and_sweeps_to_the_wallet_are_in_scope() {
        let wrap = (ADDRESS_THIS, U256::from(5)).abi_encode_params();
        let unwrap = (MSG_SENDER, U256::from(1)).abi_encode_params();
        let sweep = (STRANGER, WALLET, U256::ZERO).abi_encode_params();
        let data = execute(&[0x0b, 0x10, 0x0c, 0x04], vec![wrap, v4_swap(ADDRESS_THIS), unwrap, sweep]);
        assert_eq!(within(&data), Ok(()));
        let v3 = (WALLET, U256::from(1), U256::from(1), Bytes::new(), true).abi_encode_params();
        assert_eq!(within(&execute(&[0x00], vec![v3])), Ok(()));
    }

    #[test]
    fn a_stranger_receiving_anything_is_refused() {
        let e = within(&execute(&[0x10], vec![v4_swap(STRANGER)])).expect_err("take to a stranger");
        assert!(e.contains("TAKE recipient"), "{e}");
        let v2 = (STRANGER, U256::from(1), U256::from(1), vec![WALLET], true).abi_encode_params();
        assert!(within(&execute(&[0x08], vec![v2])).expect_err("v2").contains("V2_SWAP_EXACT_IN"));
        let sweep = (WALLET, STRANGER, U256::ZERO).abi_encode_params();
        assert!(within(&execute(&[0x04], vec![sweep])).is_err());
    }

    #[test]
    fn other_commands_reverting_ones_and_malformed_inputs_are_refused() {
        let transfer = (WALLET, WALLET, U256::from(1)).abi_encode_params();
        let e = within(&execute(&[0x05], vec![transfer])).expect_err("TRANSFER");
        assert!(e.contains("0x05") && e.contains("not in the scope"), "{e}");
        let v3 = (WALLET, U256::from(1), U256::from(1), Bytes::new(), true).abi_encode_params();
        assert!(
            within(&execute(&[0x80], vec![v3.clone()])).expect_err("allow revert").contains("may revert")
        );
        assert!(within(&execute(&[0x00, 0x00], vec![v3])).expect_err("count").contains("inputs"));
        assert!(within(&execute(&[0x10], vec![vec![1, 2, 3]])).expect_err("garbage").contains("V4_SWAP"));
        // A V4 action outside swaps and settlement: TAKE_PORTION.
        let portion = (
            Bytes::from(vec![0x10]),
            vec![Bytes::from((WALLET, STRANGER, U256::from(1)).abi_encode_params())],
        );
        let e = within(&execute(&[0x10], vec![portion.abi_encode_params()])).expect_err("portion");
        assert!(e.contains("0x10") && e.contains("V4 router action"), "{e}");
        assert!(parties(&[1, 2, 3, 4]).is_none(), "not execute");
    }

    #[test]
    fn the_hooks_of_v4_pools_are_named_and_return_delta_permissions_read_from_their_address() {
        let plain = address!("0x0000000000000000000000000000000000000cc0"); // before/after add, swap
        let skimming = address!("0x0000000000000000000000000000000000000044"); // after swap, returns delta
        let data = execute(&[0x10], vec![v4_swap_hooked(WALLET, skimming)]);
        assert_eq!(parties(&data).expect("execute").expect("in scope").hooks, [skimming]);
        assert!(!returns_delta(plain) && !returns_delta(Address::ZERO));
        assert!(returns_delta(skimming));
        assert!(returns_delta(address!("0x0000000000000000000000000000000000000001")));
    }

    #[test]
    fn every_pool_of_a_v4_path_is_named() {
        let key = |hooks| PathKey {
            intermediateCurrency: STRANGER,
            fee: Default::default(),
            tickSpacing: Default::default(),
            hooks,
            hookData: Bytes::new(),
        };
        let (first, second) = (address!("0x00000000000000000000000000000000000000c0"), Address::ZERO);
        let swap = ExactOutputParams {
            currencyOut: WALLET,
            path: vec![key(first), key(second)],
            maxHopSlippage: Vec::new(),
            amountOut: 1,
            amountInMaximum: 2,
        };
        let settle = (WALLET, U256::from(2)).abi_encode_params();
        let take = (WALLET, U256::from(1)).abi_encode_params();
        let params = vec![Bytes::from(swap.abi_encode()), Bytes::from(settle), Bytes::from(take)];
        let input = (Bytes::from(vec![0x09, 0x0c, 0x0f]), params).abi_encode_params();
        let parties = parties(&execute(&[0x10], vec![input])).expect("execute").expect("in scope");
        assert_eq!(parties.hooks, [first, second]);
    }
}
