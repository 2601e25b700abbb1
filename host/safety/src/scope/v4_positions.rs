//! V4 PositionManager's scope: `modifyLiquidities(unlockData, deadline)` whose actions only mint
//! a position to the wallet, increase, decrease or burn one (the contract itself requires the
//! caller to own or be approved for it), settle what they owe from the wallet, and take, sweep
//! or close what they are owed back to the wallet. Swaps, donations, transfers of positions,
//! wraps and the `*_FROM_DELTAS` variants are refused. The hooks of minted pools are named, for
//! the same return-delta rule as swaps.

use super::periphery::{MSG_SENDER, Parties, PoolKey, decode};
use alloy::primitives::{Address, Bytes, U256};
use alloy::sol_types::{SolCall, SolValue};

alloy::sol! {
    function modifyLiquidities(bytes unlockData, uint256 deadline) external payable;

    /// MINT_POSITION's parameters, encoded as `abi.encode(poolKey, tickLower, …, hookData)`.
    struct MintPosition { PoolKey poolKey; int24 tickLower; int24 tickUpper; uint256 liquidity; uint128 amount0Max;
        uint128 amount1Max; address owner; bytes hookData; }
}

/// The parties of a PositionManager call, or why it is out of scope. `None`: not
/// `modifyLiquidities`.
pub(super) fn parties(data: &[u8]) -> Option<Result<Parties, String>> {
    if data.len() < 4 || data[..4] != modifyLiquiditiesCall::SELECTOR {
        return None;
    }
    Some(actions_parties(data))
}

fn actions_parties(data: &[u8]) -> Result<Parties, String> {
    let call = modifyLiquiditiesCall::abi_decode(data)
        .map_err(|e| format!("modifyLiquidities(bytes,uint256): {e}"))?;
    let (actions, params) = decode::<(Bytes, Vec<Bytes>)>("unlockData", &call.unlockData)?;
    if actions.len() != params.len() {
        return Err(format!("{} actions with {} params", actions.len(), params.len()));
    }
    let mut out = Parties::default();
    for (action, p) in actions.iter().zip(&params) {
        match action {
            // INCREASE_LIQUIDITY / DECREASE_LIQUIDITY (tokenId, liquidity, amount0, amount1, hookData).
            0x00 => drop(decode::<(U256, U256, u128, u128, Bytes)>("INCREASE_LIQUIDITY", p)?),
            0x01 => drop(decode::<(U256, U256, u128, u128, Bytes)>("DECREASE_LIQUIDITY", p)?),
            0x02 => {
                let mint = MintPosition::abi_decode_params(p).map_err(|e| format!("MINT_POSITION: {e}"))?;
                out.hooks.push(mint.poolKey.hooks);
                out.recipients.push(("MINT_POSITION owner", mint.owner));
            }
            // BURN_POSITION (tokenId, amount0Min, amount1Min, hookData).
            0x03 => drop(decode::<(U256, u128, u128, Bytes)>("BURN_POSITION", p)?),
            // SETTLE (currency, amount, payerIsUser) and SETTLE_PAIR pay the pool manager from the
            // wallet (through Permit2) or from the position manager's own balance.
            0x0b => drop(decode::<(Address, U256, bool)>("SETTLE", p)?),
            0x0d => drop(decode::<(Address, Address)>("SETTLE_PAIR", p)?),
            0x0e => out.recipients.push(("TAKE recipient", decode::<(Address, Address, U256)>("TAKE", p)?.1)),
            0x11 => out
                .recipients
                .push(("TAKE_PAIR recipient", decode::<(Address, Address, Address)>("TAKE_PAIR", p)?.2)),
            // CLOSE_CURRENCY settles or takes one currency's balance with the caller.
            0x12 => drop(decode::<(Address,)>("CLOSE_CURRENCY", p)?),
            0x14 => out.recipients.push(("SWEEP recipient", decode::<(Address, Address)>("SWEEP", p)?.1)),
            other => {
                return Err(format!("PositionManager action 0x{other:02x} is not in the scope of liquidity"));
            }
        }
    }
    Ok(out)
}

/// Whether `who` may receive from a PositionManager plan of `wallet`: the wallet, or the
/// caller placeholder that stands for it. (`ADDRESS_THIS` would leave tokens or a position in
/// the position manager, where anyone could sweep them.)
pub(super) fn may_receive(who: Address, wallet: Address) -> bool {
    who == wallet || who == MSG_SENDER
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::periphery::ADDRESS_THIS;
    use super::*;
    use alloy::primitives::address;
    use alloy::primitives::aliases::{I24, U24};
    use alloy::sol_types::SolValue;

    const WALLET: Address = address!("0x00000000000000000000000000000000000000aa");
    const STRANGER: Address = address!("0x00000000000000000000000000000000000000e1");
    const TOKEN0: Address = address!("0x00000000000000000000000000000000000000b0");
    const TOKEN1: Address = address!("0x00000000000000000000000000000000000000b1");

    fn modify(actions: &[u8], params: Vec<Vec<u8>>) -> Vec<u8> {
        let params: Vec<Bytes> = params.into_iter().map(Bytes::from).collect();
        let unlock = (Bytes::copy_from_slice(actions), params).abi_encode_params();
        modifyLiquiditiesCall { unlockData: unlock.into(), deadline: U256::from(1) }.abi_encode()
    }

    pub(in crate::scope) fn mint(owner: Address, hooks: Address) -> Vec<u8> {
        let key = PoolKey {
            currency0: TOKEN0,
            currency1: TOKEN1,
            fee: U24::from(3000),
            tickSpacing: I24::try_from(60).expect("spacing"),
            hooks,
        };
        let mint = MintPosition {
            poolKey: key,
            tickLower: I24::try_from(-600).expect("tick"),
            tickUpper: I24::try_from(600).expect("tick"),
            liquidity: U256::from(1000),
            amount0Max: 10,
            amount1Max: 10,
            owner,
            hookData: Bytes::new(),
        };
        modify(
            &[0x02, 0x0d, 0x14],
            vec![
                mint.abi_encode_params(),
                (TOKEN0, TOKEN1).abi_encode_params(),
                (Address::ZERO, MSG_SENDER).abi_encode_params(),
            ],
        )
    }

    fn within(data: &[u8]) -> Result<Parties, String> {
        let parties = parties(data).expect("modifyLiquidities")?;
        match parties.recipients.iter().find(|(_, who)| !may_receive(*who, WALLET)) {
            None => Ok(parties),
            Some((name, who)) => Err(format!("{name} {who}")),
        }
    }

    #[test]
    fn mint_increase_decrease_collect_and_burn_to_the_wallet_are_in_scope() {
        let plain = within(&mint(WALLET, Address::ZERO)).expect("mint");
        assert_eq!(plain.hooks, [Address::ZERO]);
        let id = U256::from(7);
        let change = (id, U256::from(5), 1u128, 1u128, Bytes::new()).abi_encode_params();
        let take = (TOKEN0, TOKEN1, WALLET).abi_encode_params();
        let burn = (id, 0u128, 0u128, Bytes::new()).abi_encode_params();
        let data = modify(&[0x00, 0x01, 0x11, 0x03], vec![change.clone(), change, take, burn]);
        assert_eq!(within(&data).expect("in scope").recipients, [("TAKE_PAIR recipient", WALLET)]);
    }

    #[test]
    fn a_position_or_tokens_for_anyone_else_are_refused() {
        assert!(within(&mint(STRANGER, Address::ZERO)).expect_err("mint").contains("MINT_POSITION owner"));
        assert!(within(&mint(ADDRESS_THIS, Address::ZERO)).is_err(), "left in the position manager");
        let take = (TOKEN0, TOKEN1, STRANGER).abi_encode_params();
        assert!(within(&modify(&[0x11], vec![take])).expect_err("take").contains("TAKE_PAIR"));
        let sweep = (TOKEN0, ADDRESS_THIS).abi_encode_params();
        assert!(within(&modify(&[0x14], vec![sweep])).expect_err("sweep").contains("SWEEP"));
    }

    #[test]
    fn swaps_deltas_malformed_params_and_other_functions_are_refused() {
        // SWAP_EXACT_IN_SINGLE is the router's, MINT_POSITION_FROM_DELTAS mints from credit.
        for action in [0x06u8, 0x05, 0x0a, 0x17] {
            let e = within(&modify(&[action], vec![vec![0; 32]])).expect_err("action");
            assert!(e.contains("not in the scope of liquidity"), "{e}");
        }
        assert!(within(&modify(&[0x00], vec![vec![1, 2]])).expect_err("short").contains("INCREASE"));
        assert!(within(&modify(&[0x00, 0x01], vec![vec![]])).expect_err("count").contains("params"));
        assert!(parties(&[0xde, 0xad, 0xbe, 0xef]).is_none());
    }
}
