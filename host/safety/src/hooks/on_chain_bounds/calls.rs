//! What a call's own calldata makes the chain enforce: a swap's minimum out and maximum in, what
//! a router delivers or settles at least or at most, and the amounts a liquidity change must
//! keep within — read per role from the calldata the scopes already admit, nothing more.

use crate::scope::periphery;
use crate::scope::universal_router::{
    ExactInputParams, ExactInputSingleParams, ExactOutputParams, ExactOutputSingleParams, executeCall,
};
use crate::scope::v4_positions::{MintPosition, modifyLiquiditiesCall};
use crate::scope::{
    addLiquidityCall, decreaseLiquidityCall, exactInputCall, exactInputSingleCall, exactOutputCall,
    exactOutputSingleCall, increaseLiquidityCall, mintCall, multicallCall, removeLiquidityCall,
    swapETHForExactTokensCall, swapExactETHForTokensCall, swapExactTokensForETHCall,
    swapExactTokensForTokensCall, swapTokensForExactETHCall, swapTokensForExactTokensCall, unwrapWETH9Call,
};
use alloy::primitives::{Address, B256, Bytes, U256, keccak256};
use alloy::sol_types::{SolCall, SolValue};
use bardo_core::scope::Role;

/// Which way a bound holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Way {
    /// The wallet gets at least this much.
    Out,
    /// The wallet pays at most this much.
    In,
}

/// Where a bound is checked: by the swap itself, or by the router when it delivers (sweep,
/// unwrap, take) or settles. Each alone holds the whole amount, so the tighter one counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Layer {
    Swap,
    Delivery,
}

/// One amount the chain enforces; `asset` none is native ether (a V4 currency 0 too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Bound {
    pub asset: Option<Address>,
    pub way: Way,
    pub amount: U256,
    pub layer: Layer,
    /// The function or command and the parameter that carries it.
    pub what: String,
}

/// A liquidity change's bounds on its amounts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Liquidity {
    /// A V3 position manager's mint or increase (`IncreaseLiquidity`'s amounts must stay above
    /// the minimums) or decrease (`DecreaseLiquidity`'s).
    V3 { increase: bool, min: (U256, U256) },
    /// A V2 router's `addLiquidity` (what the wallet pays of each token) or `removeLiquidity`
    /// (what it gets back), against its minimums.
    V2 { add: bool, tokens: (Address, Address), min: (U256, U256) },
    /// A V4 PositionManager action: what a mint or increase may pay at most, what a decrease or
    /// burn pays at least (its principal, fees aside).
    V4(V4Action),
}

/// A V4 PositionManager action with its bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum V4Action {
    Mint { pool: B256, currencies: (Address, Address), ticks: (i32, i32), liquidity: U256, max: (u128, u128) },
    Increase { token_id: U256, liquidity: U256, max: (u128, u128) },
    Decrease { token_id: U256, liquidity: U256, min: (u128, u128) },
    Burn { token_id: U256, min: (u128, u128) },
}

/// What a call bounds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct CallBounds {
    /// Whether it swaps: every asset it gets must be bounded.
    pub swaps: bool,
    pub bounds: Vec<Bound>,
    pub liquidity: Vec<Liquidity>,
}

/// `asset` as a bound names it: the zero address (a V4 native currency) is ether.
fn asset(a: Address) -> Option<Address> {
    (!a.is_zero()).then_some(a)
}

pub(super) fn out(a: Option<Address>, amount: U256, layer: Layer, what: &str) -> Bound {
    Bound { asset: a, way: Way::Out, amount, layer, what: what.to_owned() }
}

pub(super) fn pay(a: Option<Address>, amount: U256, layer: Layer, what: &str) -> Bound {
    Bound { asset: a, way: Way::In, amount, layer, what: what.to_owned() }
}

/// A V3 path's first and last tokens (`token fee token fee … token`).
fn path_ends(path: &[u8]) -> Option<(Address, Address)> {
    (path.len() >= 43)
        .then(|| (Address::from_slice(&path[..20]), Address::from_slice(&path[path.len() - 20..])))
}

pub(super) fn decoded<C: SolCall>(data: &[u8]) -> Option<C> {
    (data.len() >= 4 && data[..4] == C::SELECTOR).then(|| C::abi_decode(data).ok()).flatten()
}

/// The bounds of a call to a contract of `role` (a role the scopes admitted it under).
pub(super) fn of_call(role: Role, data: &[u8]) -> Result<CallBounds, String> {
    Ok(match role {
        Role::UniversalRouter => match decoded::<executeCall>(data) {
            Some(call) => universal_router(&call)?,
            None => CallBounds::default(),
        },
        Role::UniswapV3SwapRouter => swap_router(data),
        Role::UniswapV2Router => v2_router(data),
        Role::UniswapV3PositionManager => v3_positions(data),
        Role::UniswapV4PositionManager => match decoded::<modifyLiquiditiesCall>(data) {
            Some(call) => v4_positions(&call.unlockData)?,
            None => CallBounds::default(),
        },
        _ => CallBounds::default(),
    })
}

fn swap_router(data: &[u8]) -> CallBounds {
    let mut b = CallBounds { swaps: true, ..CallBounds::default() };
    if let Some(c) = decoded::<exactInputSingleCall>(data) {
        b.bounds.push(out(
            asset(c.params.tokenOut),
            c.params.amountOutMinimum,
            Layer::Swap,
            "exactInputSingle amountOutMinimum",
        ));
    } else if let Some(c) = decoded::<exactInputCall>(data) {
        let last = path_ends(&c.params.path).map(|(_, last)| last);
        b.bounds.push(out(
            last.and_then(asset),
            c.params.amountOutMinimum,
            Layer::Swap,
            "exactInput amountOutMinimum",
        ));
    } else if let Some(c) = decoded::<exactOutputSingleCall>(data) {
        b.bounds.push(out(
            asset(c.params.tokenOut),
            c.params.amountOut,
            Layer::Swap,
            "exactOutputSingle amountOut",
        ));
        b.bounds.push(pay(
            asset(c.params.tokenIn),
            c.params.amountInMaximum,
            Layer::Swap,
            "exactOutputSingle amountInMaximum",
        ));
    } else if let Some(c) = decoded::<exactOutputCall>(data) {
        // An exact-out path runs backwards: the token out first, the token in last.
        let (first, last) = path_ends(&c.params.path).unzip();
        b.bounds.push(out(first.and_then(asset), c.params.amountOut, Layer::Swap, "exactOutput amountOut"));
        b.bounds.push(pay(
            last.and_then(asset),
            c.params.amountInMaximum,
            Layer::Swap,
            "exactOutput amountInMaximum",
        ));
    } else if let Some(c) = decoded::<unwrapWETH9Call>(data) {
        b.bounds.push(out(None, c.amountMinimum, Layer::Delivery, "unwrapWETH9 amountMinimum"));
    } else {
        b.swaps = false;
    }
    b
}

fn v2_router(data: &[u8]) -> CallBounds {
    let mut b = CallBounds { swaps: true, ..CallBounds::default() };
    let last = |path: &[Address]| path.last().copied().and_then(asset);
    let first = |path: &[Address]| path.first().copied().and_then(asset);
    if let Some(c) = decoded::<swapExactTokensForTokensCall>(data) {
        b.bounds.push(out(
            last(&c.path),
            c.amountOutMin,
            Layer::Swap,
            "swapExactTokensForTokens amountOutMin",
        ));
    } else if let Some(c) = decoded::<swapTokensForExactTokensCall>(data) {
        b.bounds.push(out(last(&c.path), c.amountOut, Layer::Swap, "swapTokensForExactTokens amountOut"));
        b.bounds.push(pay(
            first(&c.path),
            c.amountInMax,
            Layer::Swap,
            "swapTokensForExactTokens amountInMax",
        ));
    } else if let Some(c) = decoded::<swapExactETHForTokensCall>(data) {
        b.bounds.push(out(last(&c.path), c.amountOutMin, Layer::Swap, "swapExactETHForTokens amountOutMin"));
    } else if let Some(c) = decoded::<swapETHForExactTokensCall>(data) {
        // The ether it may take is the call's value, which the call states.
        b.bounds.push(out(last(&c.path), c.amountOut, Layer::Swap, "swapETHForExactTokens amountOut"));
    } else if let Some(c) = decoded::<swapExactTokensForETHCall>(data) {
        b.bounds.push(out(None, c.amountOutMin, Layer::Swap, "swapExactTokensForETH amountOutMin"));
    } else if let Some(c) = decoded::<swapTokensForExactETHCall>(data) {
        b.bounds.push(out(None, c.amountOut, Layer::Swap, "swapTokensForExactETH amountOut"));
        b.bounds.push(pay(first(&c.path), c.amountInMax, Layer::Swap, "swapTokensForExactETH amountInMax"));
    } else if let Some(c) = decoded::<addLiquidityCall>(data) {
        b.swaps = false;
        b.liquidity.push(Liquidity::V2 {
            add: true,
            tokens: (c.tokenA, c.tokenB),
            min: (c.amountAMin, c.amountBMin),
        });
    } else if let Some(c) = decoded::<removeLiquidityCall>(data) {
        b.swaps = false;
        b.liquidity.push(Liquidity::V2 {
            add: false,
            tokens: (c.tokenA, c.tokenB),
            min: (c.amountAMin, c.amountBMin),
        });
    } else {
        b.swaps = false;
    }
    b
}

fn v3_positions(data: &[u8]) -> CallBounds {
    let mut b = CallBounds::default();
    // A batch (the scope admits one of its own calls only): each call's bounds, in order.
    if let Some(batch) = decoded::<multicallCall>(data) {
        for call in &batch.data {
            b.liquidity.extend(v3_positions(call).liquidity);
        }
        return b;
    }
    if let Some(c) = decoded::<mintCall>(data) {
        b.liquidity.push(Liquidity::V3 { increase: true, min: (c.params.amount0Min, c.params.amount1Min) });
    } else if let Some(c) = decoded::<increaseLiquidityCall>(data) {
        b.liquidity.push(Liquidity::V3 { increase: true, min: (c.params.amount0Min, c.params.amount1Min) });
    } else if let Some(c) = decoded::<decreaseLiquidityCall>(data) {
        b.liquidity.push(Liquidity::V3 { increase: false, min: (c.params.amount0Min, c.params.amount1Min) });
    }
    b
}

/// `OPEN_DELTA`: a V4 `TAKE` or `SETTLE` of whatever is owed — no bound.
const OPEN_DELTA: U256 = U256::ZERO;

fn universal_router(call: &executeCall) -> Result<CallBounds, String> {
    type Swap3 = (Address, U256, U256, Bytes, bool);
    type Swap2 = (Address, U256, U256, Vec<Address>, bool);
    let mut b = CallBounds::default();
    for (command, input) in call.commands.iter().zip(&call.inputs) {
        match command & 0x3f {
            0x00 => {
                let (_, _, min, path, _) = periphery::decode::<Swap3>("V3_SWAP_EXACT_IN", input)?;
                b.swaps = true;
                b.bounds.push(out(
                    path_ends(&path).and_then(|(_, l)| asset(l)),
                    min,
                    Layer::Swap,
                    "V3_SWAP_EXACT_IN amountOutMin",
                ));
            }
            0x01 => {
                let (_, amount_out, max, path, payer_is_user) =
                    periphery::decode::<Swap3>("V3_SWAP_EXACT_OUT", input)?;
                b.swaps = true;
                let (first, last) = path_ends(&path).unzip();
                b.bounds.push(out(
                    first.and_then(asset),
                    amount_out,
                    Layer::Swap,
                    "V3_SWAP_EXACT_OUT amountOut",
                ));
                if payer_is_user {
                    b.bounds.push(pay(
                        last.and_then(asset),
                        max,
                        Layer::Swap,
                        "V3_SWAP_EXACT_OUT amountInMax",
                    ));
                }
            }
            0x08 => {
                let (_, _, min, path, _) = periphery::decode::<Swap2>("V2_SWAP_EXACT_IN", input)?;
                b.swaps = true;
                b.bounds.push(out(
                    path.last().copied().and_then(asset),
                    min,
                    Layer::Swap,
                    "V2_SWAP_EXACT_IN amountOutMin",
                ));
            }
            0x09 => {
                let (_, amount_out, max, path, payer_is_user) =
                    periphery::decode::<Swap2>("V2_SWAP_EXACT_OUT", input)?;
                b.swaps = true;
                b.bounds.push(out(
                    path.last().copied().and_then(asset),
                    amount_out,
                    Layer::Swap,
                    "V2_SWAP_EXACT_OUT amountOut",
                ));
                if payer_is_user {
                    b.bounds.push(pay(
                        path.first().copied().and_then(asset),
                        max,
                        Layer::Swap,
                        "V2_SWAP_EXACT_OUT amountInMax",
                    ));
                }
            }
            0x04 => {
                let (token, _, min) = periphery::decode::<(Address, Address, U256)>("SWEEP", input)?;
                b.bounds.push(out(asset(token), min, Layer::Delivery, "SWEEP amountMin"));
            }
            0x0c => {
                let (_, min) = periphery::decode::<(Address, U256)>("UNWRAP_WETH", input)?;
                b.bounds.push(out(None, min, Layer::Delivery, "UNWRAP_WETH amountMin"));
            }
            0x10 => {
                b.swaps = true;
                v4_swap(input, &mut b.bounds)?;
            }
            // A migration: the V3 manager's decrease, then V4's mint (the managers are the
            // router's, `super::OnChainBounds::manager`).
            0x12 => b.liquidity.extend(v3_positions(input).liquidity),
            0x14 => {
                let call = decoded::<modifyLiquiditiesCall>(input)
                    .ok_or("V4_POSITION_MANAGER_CALL is not modifyLiquidities")?;
                b.liquidity.extend(v4_positions(&call.unlockData)?.liquidity);
            }
            _ => {}
        }
    }
    Ok(b)
}

/// A UniversalRouter `V4_SWAP` command's bounds: each swap action's own, and those of the
/// settles and takes around it.
fn v4_swap(input: &[u8], bounds: &mut Vec<Bound>) -> Result<(), String> {
    let (actions, params) = periphery::decode::<(Bytes, Vec<Bytes>)>("V4_SWAP", input)?;
    for (action, p) in actions.iter().zip(&params) {
        match action {
            0x06 => {
                let s = periphery::decode_struct::<ExactInputSingleParams>("SWAP_EXACT_IN_SINGLE", p)?;
                let got = if s.zeroForOne { s.poolKey.currency1 } else { s.poolKey.currency0 };
                bounds.push(out(
                    asset(got),
                    U256::from(s.amountOutMinimum),
                    Layer::Swap,
                    "SWAP_EXACT_IN_SINGLE amountOutMinimum",
                ));
            }
            0x07 => {
                let s = periphery::decode_struct::<ExactInputParams>("SWAP_EXACT_IN", p)?;
                let got = s.path.last().map(|k| k.intermediateCurrency).unwrap_or(s.currencyIn);
                bounds.push(out(
                    asset(got),
                    U256::from(s.amountOutMinimum),
                    Layer::Swap,
                    "SWAP_EXACT_IN amountOutMinimum",
                ));
            }
            0x08 => {
                let s = periphery::decode_struct::<ExactOutputSingleParams>("SWAP_EXACT_OUT_SINGLE", p)?;
                let (paid, got) = match s.zeroForOne {
                    true => (s.poolKey.currency0, s.poolKey.currency1),
                    false => (s.poolKey.currency1, s.poolKey.currency0),
                };
                bounds.push(out(
                    asset(got),
                    U256::from(s.amountOut),
                    Layer::Swap,
                    "SWAP_EXACT_OUT_SINGLE amountOut",
                ));
                bounds.push(pay(
                    asset(paid),
                    U256::from(s.amountInMaximum),
                    Layer::Swap,
                    "SWAP_EXACT_OUT_SINGLE amountInMaximum",
                ));
            }
            0x09 => {
                let s = periphery::decode_struct::<ExactOutputParams>("SWAP_EXACT_OUT", p)?;
                let paid = s.path.first().map(|k| k.intermediateCurrency).unwrap_or(s.currencyOut);
                bounds.push(out(
                    asset(s.currencyOut),
                    U256::from(s.amountOut),
                    Layer::Swap,
                    "SWAP_EXACT_OUT amountOut",
                ));
                bounds.push(pay(
                    asset(paid),
                    U256::from(s.amountInMaximum),
                    Layer::Swap,
                    "SWAP_EXACT_OUT amountInMaximum",
                ));
            }
            0x0b => {
                let (currency, amount, payer_is_user) =
                    periphery::decode::<(Address, U256, bool)>("SETTLE", p)?;
                if payer_is_user && amount != OPEN_DELTA {
                    bounds.push(pay(asset(currency), amount, Layer::Delivery, "SETTLE amount"));
                }
            }
            0x0c => {
                let (currency, max) = periphery::decode::<(Address, U256)>("SETTLE_ALL", p)?;
                bounds.push(pay(asset(currency), max, Layer::Delivery, "SETTLE_ALL maxAmount"));
            }
            0x0e => {
                let (currency, _, amount) = periphery::decode::<(Address, Address, U256)>("TAKE", p)?;
                bounds.push(out(asset(currency), amount, Layer::Delivery, "TAKE amount"));
            }
            0x0f => {
                let (currency, min) = periphery::decode::<(Address, U256)>("TAKE_ALL", p)?;
                bounds.push(out(asset(currency), min, Layer::Delivery, "TAKE_ALL minAmount"));
            }
            _ => {}
        }
    }
    Ok(())
}

/// A V4 PositionManager `modifyLiquidities` unlock data's liquidity actions.
fn v4_positions(unlock: &[u8]) -> Result<CallBounds, String> {
    let (actions, params) = periphery::decode::<(Bytes, Vec<Bytes>)>("unlockData", unlock)?;
    let mut b = CallBounds::default();
    for (action, p) in actions.iter().zip(&params) {
        let found = match action {
            0x00 => {
                let (token_id, liquidity, max0, max1, _) =
                    periphery::decode::<(U256, U256, u128, u128, Bytes)>("INCREASE_LIQUIDITY", p)?;
                V4Action::Increase { token_id, liquidity, max: (max0, max1) }
            }
            0x01 => {
                let (token_id, liquidity, min0, min1, _) =
                    periphery::decode::<(U256, U256, u128, u128, Bytes)>("DECREASE_LIQUIDITY", p)?;
                V4Action::Decrease { token_id, liquidity, min: (min0, min1) }
            }
            0x02 => {
                let m = MintPosition::abi_decode_params(p).map_err(|e| format!("MINT_POSITION: {e}"))?;
                let ticks = (m.tickLower.as_i32(), m.tickUpper.as_i32());
                let (pool, currencies) =
                    (keccak256(m.poolKey.abi_encode()), (m.poolKey.currency0, m.poolKey.currency1));
                V4Action::Mint {
                    pool,
                    currencies,
                    ticks,
                    liquidity: m.liquidity,
                    max: (m.amount0Max, m.amount1Max),
                }
            }
            0x03 => {
                let (token_id, min0, min1, _) =
                    periphery::decode::<(U256, u128, u128, Bytes)>("BURN_POSITION", p)?;
                V4Action::Burn { token_id, min: (min0, min1) }
            }
            _ => continue,
        };
        b.liquidity.push(Liquidity::V4(found));
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::address;
    use alloy::sol_types::SolValue;

    const WETH: Address = address!("0x00000000000000000000000000000000000000c2");
    const USDC: Address = address!("0x00000000000000000000000000000000000000c1");

    fn v3_path(a: Address, b: Address) -> Bytes {
        [a.as_slice(), &[0x00, 0x0b, 0xb8], b.as_slice()].concat().into()
    }

    fn execute(commands: &[u8], inputs: Vec<Vec<u8>>) -> executeCall {
        executeCall {
            commands: Bytes::copy_from_slice(commands),
            inputs: inputs.into_iter().map(Bytes::from).collect(),
            deadline: U256::from(1),
        }
    }

    #[test]
    fn a_universal_router_swap_names_its_minimum_and_its_deliveries() {
        let swap = (periphery::ADDRESS_THIS, U256::from(100), U256::from(7), v3_path(USDC, WETH), true)
            .abi_encode_params();
        let unwrap = (periphery::MSG_SENDER, U256::from(6)).abi_encode_params();
        let b = universal_router(&execute(&[0x00, 0x0c], vec![swap, unwrap])).expect("decodes");
        assert!(b.swaps);
        assert_eq!(
            b.bounds,
            [
                out(Some(WETH), U256::from(7), Layer::Swap, "V3_SWAP_EXACT_IN amountOutMin"),
                out(None, U256::from(6), Layer::Delivery, "UNWRAP_WETH amountMin"),
            ]
        );
        // Exact out: the path runs backwards, and the most it pays is bounded only when the
        // wallet pays.
        let exact_out = (periphery::MSG_SENDER, U256::from(5), U256::from(99), v3_path(WETH, USDC), true)
            .abi_encode_params();
        let b = universal_router(&execute(&[0x01], vec![exact_out])).expect("decodes");
        assert_eq!(b.bounds[0], out(Some(WETH), U256::from(5), Layer::Swap, "V3_SWAP_EXACT_OUT amountOut"));
        assert_eq!(
            b.bounds[1],
            pay(Some(USDC), U256::from(99), Layer::Swap, "V3_SWAP_EXACT_OUT amountInMax")
        );
    }

    #[test]
    fn a_v4_swap_bounds_its_output_by_the_swap_and_by_the_take() {
        let key = periphery::PoolKey {
            currency0: Address::ZERO,
            currency1: USDC,
            fee: alloy::primitives::aliases::U24::from(500),
            tickSpacing: alloy::primitives::aliases::I24::try_from(10).expect("spacing"),
            hooks: Address::ZERO,
        };
        let swap = ExactInputSingleParams {
            poolKey: key,
            zeroForOne: false,
            amountIn: 1_000,
            amountOutMinimum: 3,
            hookData: Bytes::new(),
        };
        let params: Vec<Bytes> = vec![
            swap.abi_encode().into(),
            (USDC, U256::from(1_000)).abi_encode_params().into(),
            (Address::ZERO, U256::from(2)).abi_encode_params().into(),
        ];
        let input = (Bytes::from(vec![0x06, 0x0c, 0x0f]), params).abi_encode_params();
        let b = universal_router(&execute(&[0x10], vec![input])).expect("decodes");
        assert_eq!(
            b.bounds,
            [
                out(None, U256::from(3), Layer::Swap, "SWAP_EXACT_IN_SINGLE amountOutMinimum"),
                pay(Some(USDC), U256::from(1_000), Layer::Delivery, "SETTLE_ALL maxAmount"),
                out(None, U256::from(2), Layer::Delivery, "TAKE_ALL minAmount"),
            ]
        );
    }

    #[test]
    fn other_calls_bound_nothing() {
        assert_eq!(of_call(Role::Erc20, &[1, 2, 3, 4]), Ok(CallBounds::default()));
        assert_eq!(of_call(Role::UniversalRouter, &[1, 2, 3, 4]), Ok(CallBounds::default()));
    }
}
