//! Every swap as one UniversalRouter `execute`, the way Uniswap's own interfaces trade: a V2, V3
//! or V4 swap command paying the wallet (inputs pulled from the wallet through Permit2), native
//! ETH wrapped in before and unwrapped out after, and any ETH an exact-out swap did not use
//! returned — so nothing stays in the router.

use crate::pools::Version;
use crate::quote::{Quote, Side};
use crate::v4::{self, V4Key, u128_amount};
use alloy_primitives::{Address, Bytes, U256, address};
use alloy_sol_types::SolValue;
use bardo_sdk::Error;
use bardo_sdk::erc20::Token;

alloy_sol_types::sol! {
    function execute(bytes commands, bytes[] inputs, uint256 deadline) external payable;
}

/// `Commands.sol`.
const V3_SWAP_EXACT_IN: u8 = 0x00;
const V3_SWAP_EXACT_OUT: u8 = 0x01;
const V2_SWAP_EXACT_IN: u8 = 0x08;
const V2_SWAP_EXACT_OUT: u8 = 0x09;
const WRAP_ETH: u8 = 0x0b;
const UNWRAP_WETH: u8 = 0x0c;
const V4_SWAP: u8 = 0x10;

/// `Actions.sol` (the V4 router inside `V4_SWAP`).
const SWAP_EXACT_IN_SINGLE: u8 = 0x06;
const SWAP_EXACT_OUT_SINGLE: u8 = 0x08;
const SETTLE: u8 = 0x0b;
const SETTLE_ALL: u8 = 0x0c;
const TAKE: u8 = 0x0e;
const TAKE_ALL: u8 = 0x0f;

/// The router's placeholder for itself (`ActionConstants.ADDRESS_THIS`).
const ADDRESS_THIS: Address = address!("0x0000000000000000000000000000000000000002");
/// "All of it" in the V4 router's settle and take (`ActionConstants.OPEN_DELTA`).
const OPEN_DELTA: U256 = U256::ZERO;

/// One swap, in the pools' tokens (WETH where the wallet pays or receives native ETH).
pub struct Swap<'a> {
    pub tin: &'a Token,
    pub tout: &'a Token,
    /// The wallet pays native ETH (wrapped by the router), not `tin`.
    pub native_in: bool,
    /// The wallet receives native ETH (unwrapped by the router), not `tout`.
    pub native_out: bool,
    pub quote: &'a Quote,
    pub side: Side,
    /// Exact-in: the least out; exact-out: the most in.
    pub bound: U256,
    pub wallet: Address,
    pub deadline: U256,
}

/// A Uniswap V3 path: token, fee, token, … packed.
fn v3_path(from: &Token, fee: u32, to: &Token) -> Bytes {
    let fee = fee.to_be_bytes();
    [from.address.as_slice(), &fee[1..], to.address.as_slice()].concat().into()
}

impl Swap<'_> {
    /// What the wallet sends: exact-in the amount, exact-out the most it may pay.
    pub fn spend(&self) -> U256 {
        match self.side {
            Side::ExactIn => self.quote.amount_in,
            Side::ExactOut => self.bound,
        }
    }

    /// The `execute` call and the wei sent with it.
    pub fn execute(&self) -> Result<(executeCall, U256), Error> {
        let q = self.quote;
        let payer_is_user = !self.native_in;
        // Output goes to the wallet, or stays with the router to be unwrapped.
        let recipient = if self.native_out { ADDRESS_THIS } else { self.wallet };
        let mut commands = Vec::new();
        let mut inputs: Vec<Bytes> = Vec::new();
        if self.native_in {
            commands.push(WRAP_ETH);
            inputs.push((ADDRESS_THIS, self.spend()).abi_encode_params().into());
        }
        let path2 = vec![self.tin.address, self.tout.address];
        let (command, input) = match (q.route.version, self.side) {
            (Version::V2, Side::ExactIn) => (
                V2_SWAP_EXACT_IN,
                (recipient, q.amount_in, self.bound, path2, payer_is_user).abi_encode_params(),
            ),
            (Version::V2, Side::ExactOut) => (
                V2_SWAP_EXACT_OUT,
                (recipient, q.amount_out, self.bound, path2, payer_is_user).abi_encode_params(),
            ),
            (Version::V3, Side::ExactIn) => (
                V3_SWAP_EXACT_IN,
                (
                    recipient,
                    q.amount_in,
                    self.bound,
                    v3_path(self.tin, q.route.fee, self.tout),
                    payer_is_user,
                )
                    .abi_encode_params(),
            ),
            // An exact-out path runs from the output back to the input.
            (Version::V3, Side::ExactOut) => (
                V3_SWAP_EXACT_OUT,
                (
                    recipient,
                    q.amount_out,
                    self.bound,
                    v3_path(self.tout, q.route.fee, self.tin),
                    payer_is_user,
                )
                    .abi_encode_params(),
            ),
            (Version::V4, _) => {
                let key =
                    q.route.v4.ok_or_else(|| bardo_sdk::errors::internal("a V4 route without its key"))?;
                (V4_SWAP, self.v4_actions(key)?)
            }
        };
        commands.push(command);
        inputs.push(input.into());
        if self.native_out {
            let least = match self.side {
                Side::ExactIn => self.bound,
                Side::ExactOut => q.amount_out,
            };
            commands.push(UNWRAP_WETH);
            inputs.push((self.wallet, least).abi_encode_params().into());
        } else if self.native_in && self.side == Side::ExactOut {
            // The ETH the swap did not need, back to the wallet.
            commands.push(UNWRAP_WETH);
            inputs.push((self.wallet, U256::ZERO).abi_encode_params().into());
        }
        let value = if self.native_in { self.spend() } else { U256::ZERO };
        Ok((executeCall { commands: commands.into(), inputs, deadline: self.deadline }, value))
    }

    /// `V4_SWAP`'s input: the swap, then pay the pool (from the wallet through Permit2, or from
    /// the router's wrapped ETH), then take the output (to the wallet, or to the router to unwrap).
    fn v4_actions(&self, key: V4Key) -> Result<Vec<u8>, Error> {
        let q = self.quote;
        let pool_key = v4::pool_key(self.tin, self.tout, q.route.fee, key.tick_spacing, key.hooks);
        let zero_for_one = self.tin.address == pool_key.currency0;
        let (action, swap) = match self.side {
            Side::ExactIn => (
                SWAP_EXACT_IN_SINGLE,
                v4::ExactInputSingleParams {
                    poolKey: pool_key,
                    zeroForOne: zero_for_one,
                    amountIn: u128_amount(q.amount_in)?,
                    amountOutMinimum: u128_amount(self.bound)?,
                    hookData: Bytes::new(),
                }
                .abi_encode(),
            ),
            Side::ExactOut => (
                SWAP_EXACT_OUT_SINGLE,
                v4::ExactOutputSingleParams {
                    poolKey: pool_key,
                    zeroForOne: zero_for_one,
                    amountOut: u128_amount(q.amount_out)?,
                    amountInMaximum: u128_amount(self.bound)?,
                    hookData: Bytes::new(),
                }
                .abi_encode(),
            ),
        };
        let (settle, settle_params) = if self.native_in {
            (SETTLE, (self.tin.address, OPEN_DELTA, false).abi_encode_params())
        } else {
            (SETTLE_ALL, (self.tin.address, self.spend()).abi_encode_params())
        };
        let least_out = match self.side {
            Side::ExactIn => self.bound,
            Side::ExactOut => q.amount_out,
        };
        let (take, take_params) = if self.native_out {
            (TAKE, (self.tout.address, ADDRESS_THIS, OPEN_DELTA).abi_encode_params())
        } else {
            (TAKE_ALL, (self.tout.address, least_out).abi_encode_params())
        };
        let params: Vec<Bytes> = vec![swap.into(), settle_params.into(), take_params.into()];
        Ok((Bytes::from(vec![action, settle, take]), params).abi_encode_params())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quote::Route;

    fn token(byte: u8, symbol: &str) -> Token {
        Token { address: Address::repeat_byte(byte), symbol: symbol.into(), decimals: 18 }
    }

    #[test]
    fn an_exact_out_v3_path_runs_backwards_and_eth_in_is_wrapped_then_refunded() {
        let (weth, usdc) = (token(1, "WETH"), token(2, "USDC"));
        let route = Route { version: Version::V3, fee: 500, pool: Address::ZERO, v4: None };
        let quote = Quote { route, amount_in: U256::from(7), amount_out: U256::from(5) };
        let wallet = Address::repeat_byte(0xaa);
        let swap = Swap {
            tin: &weth,
            tout: &usdc,
            native_in: true,
            native_out: false,
            quote: &quote,
            side: Side::ExactOut,
            bound: U256::from(8),
            wallet,
            deadline: U256::from(1),
        };
        let (call, value) = swap.execute().expect("execute");
        assert_eq!(value, U256::from(8), "the most it may pay, in ETH");
        assert_eq!(call.commands.to_vec(), [WRAP_ETH, V3_SWAP_EXACT_OUT, UNWRAP_WETH]);
        type V3 = (Address, U256, U256, Bytes, bool);
        let (recipient, out, max, path, payer_is_user) = V3::abi_decode_params(&call.inputs[1]).expect("v3");
        assert_eq!((recipient, out, max, payer_is_user), (wallet, U256::from(5), U256::from(8), false));
        assert_eq!(path.to_vec(), [usdc.address.as_slice(), &[0, 1, 0xf4], weth.address.as_slice()].concat());
        let (to, least) = <(Address, U256)>::abi_decode_params(&call.inputs[2]).expect("unwrap");
        assert_eq!((to, least), (wallet, U256::ZERO), "the unused ETH goes back");
    }
}
