//! Every swap as one UniversalRouter `execute`, the way Uniswap's own interfaces trade: a V2, V3
//! or V4 swap command paying the wallet (inputs pulled from the wallet through Permit2), native
//! ETH wrapped in before and unwrapped out after, and any ETH an exact-out swap did not use
//! returned — so nothing stays in the router.

use crate::pools::Version;
use crate::quote::{Quote, Route, Side};
use crate::v4::{self, u128_amount};
use alloy_primitives::aliases::{I24, U24};
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
const SWEEP: u8 = 0x04;
const WRAP_ETH: u8 = 0x0b;
const UNWRAP_WETH: u8 = 0x0c;
const V4_SWAP: u8 = 0x10;

/// `Actions.sol` (the V4 router inside `V4_SWAP`).
const SWAP_EXACT_IN_SINGLE: u8 = 0x06;
const SWAP_EXACT_OUT: u8 = 0x09;
const SETTLE: u8 = 0x0b;
const SETTLE_ALL: u8 = 0x0c;
const TAKE: u8 = 0x0e;
const TAKE_ALL: u8 = 0x0f;

/// The router's placeholder for itself (`ActionConstants.ADDRESS_THIS`).
const ADDRESS_THIS: Address = address!("0x0000000000000000000000000000000000000002");
/// "All of it" in the V4 router's settle and take (`ActionConstants.OPEN_DELTA`).
const OPEN_DELTA: U256 = U256::ZERO;
/// "All the router holds" as an input amount (`ActionConstants.CONTRACT_BALANCE`).
const CONTRACT_BALANCE: U256 = U256::from_limbs([0, 0, 0, 1 << 63]);

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
fn v3_path(from: Address, fee: u32, to: Address) -> Bytes {
    let fee = fee.to_be_bytes();
    [from.as_slice(), &fee[1..], to.as_slice()].concat().into()
}

impl Swap<'_> {
    /// What the wallet sends: exact-in the amount, exact-out the most it may pay.
    pub fn spend(&self) -> U256 {
        match self.side {
            Side::ExactIn => self.quote.amount_in,
            Side::ExactOut => self.bound,
        }
    }

    /// Whether the route is one V4 pool of native ether: the router then pays or takes ether
    /// itself, with no wrap or unwrap.
    fn native_route(&self) -> bool {
        self.quote.then.is_none() && self.quote.route.v4.is_some_and(|k| k.native)
    }

    /// The currencies the first pool trades: WETH is ether (the zero address) in a native pool.
    fn currencies(&self) -> (Address, Address) {
        let native = self.native_route();
        let cur = |t: &Token, is_native: bool| if native && is_native { Address::ZERO } else { t.address };
        (cur(self.tin, self.native_in), cur(self.tout, self.native_out))
    }

    /// The `execute` call and the wei sent with it.
    pub fn execute(&self) -> Result<(executeCall, U256), Error> {
        let q = self.quote;
        let mut commands = Vec::new();
        let mut inputs: Vec<Bytes> = Vec::new();
        let mut push = |command: u8, input: Vec<u8>| {
            commands.push(command);
            inputs.push(input.into());
        };
        let native_route = self.native_route();
        let (wrap, unwrap) = (self.native_in && !native_route, self.native_out && !native_route);
        if wrap {
            push(WRAP_ETH, (ADDRESS_THIS, self.spend()).abi_encode_params());
        }
        // Output goes to the wallet, or stays with the router to be unwrapped.
        let recipient = if unwrap { ADDRESS_THIS } else { self.wallet };
        let (tin, tout) = self.currencies();
        match (q.then, self.side) {
            (None, Side::ExactIn) => {
                let leg = Leg {
                    route: q.route,
                    tin,
                    tout,
                    amount_in: q.amount_in,
                    min_out: self.bound,
                    payer_is_user: !self.native_in,
                    recipient,
                };
                let (command, input) = leg.exact_in()?;
                push(command, input);
            }
            // The first pool pays the router, which pays the second all it holds of the
            // intermediate token; anything left (nothing, in a simulation) goes back to the wallet.
            (Some(hop), Side::ExactIn) => {
                let first = Leg {
                    route: q.route,
                    tin: self.tin.address,
                    tout: hop.via,
                    amount_in: q.amount_in,
                    min_out: U256::ZERO,
                    payer_is_user: !self.native_in,
                    recipient: ADDRESS_THIS,
                };
                // Whatever the first pool delivered: the slippage bound is on the final output.
                let second = Leg {
                    route: hop.route,
                    tin: hop.via,
                    tout: self.tout.address,
                    amount_in: CONTRACT_BALANCE,
                    min_out: self.bound,
                    payer_is_user: false,
                    recipient,
                };
                for leg in [first, second] {
                    let (command, input) = leg.exact_in()?;
                    push(command, input);
                }
                push(SWEEP, (hop.via, self.wallet, U256::ZERO).abi_encode_params());
            }
            (_, Side::ExactOut) => {
                let (command, input) = self.exact_out(recipient)?;
                push(command, input);
            }
        }
        if unwrap {
            let least = match self.side {
                Side::ExactIn => self.bound,
                Side::ExactOut => q.amount_out,
            };
            push(UNWRAP_WETH, (self.wallet, least).abi_encode_params());
        } else if self.native_in && self.side == Side::ExactOut {
            // The ETH the swap did not need, back to the wallet (wrapped: unwrap it first).
            match native_route {
                true => push(SWEEP, (Address::ZERO, self.wallet, U256::ZERO).abi_encode_params()),
                false => push(UNWRAP_WETH, (self.wallet, U256::ZERO).abi_encode_params()),
            }
        }
        let value = if self.native_in { self.spend() } else { U256::ZERO };
        Ok((executeCall { commands: commands.into(), inputs, deadline: self.deadline }, value))
    }

    /// The exact-out swap command: one pool, or two of one version through the intermediate
    /// token (the router asks the last pool first, each pool for exactly what the next needs).
    fn exact_out(&self, recipient: Address) -> Result<(u8, Vec<u8>), Error> {
        let q = self.quote;
        let payer_is_user = !self.native_in;
        let (tin, tout) = self.currencies();
        if q.then.is_some_and(|hop| hop.route.version != q.route.version) {
            return Err(bardo_sdk::errors::internal("an exact-out route through two versions"));
        }
        // The pools' tokens in order, from the input to the output.
        let tokens: Vec<Address> = match q.then {
            Some(hop) => vec![tin, hop.via, tout],
            None => vec![tin, tout],
        };
        let routes: Vec<Route> = std::iter::once(q.route).chain(q.then.map(|hop| hop.route)).collect();
        Ok(match q.route.version {
            Version::V2 => (
                V2_SWAP_EXACT_OUT,
                (recipient, q.amount_out, self.bound, tokens, payer_is_user).abi_encode_params(),
            ),
            // An exact-out path runs from the output back to the input.
            Version::V3 => {
                let mut path = tout.to_vec();
                for (i, route) in routes.iter().enumerate().rev() {
                    path.extend_from_slice(&route.fee.to_be_bytes()[1..]);
                    path.extend_from_slice(tokens[i].as_slice());
                }
                (
                    V3_SWAP_EXACT_OUT,
                    (recipient, q.amount_out, self.bound, Bytes::from(path), payer_is_user)
                        .abi_encode_params(),
                )
            }
            Version::V4 => {
                let mut path = Vec::new();
                for (i, route) in routes.iter().enumerate() {
                    let key =
                        route.v4.ok_or_else(|| bardo_sdk::errors::internal("a V4 route without its key"))?;
                    path.push(v4::PathKey {
                        intermediateCurrency: tokens[i],
                        fee: U24::from(route.fee),
                        tickSpacing: I24::try_from(key.tick_spacing).unwrap_or_default(),
                        hooks: key.hooks,
                        hookData: Bytes::new(),
                    });
                }
                let swap = v4::ExactOutputParams {
                    currencyOut: tout,
                    path,
                    // The bound is on the whole path's input, not hop by hop.
                    maxHopSlippage: Vec::new(),
                    amountOut: u128_amount(q.amount_out)?,
                    amountInMaximum: u128_amount(self.bound)?,
                };
                let settle = settle(tin, self.bound, payer_is_user);
                let take = take(tout, recipient, q.amount_out);
                (V4_SWAP, v4_input([(SWAP_EXACT_OUT, swap.abi_encode()), settle, take]))
            }
        })
    }
}

/// One exact-in swap through one pool.
struct Leg {
    route: Route,
    tin: Address,
    tout: Address,
    amount_in: U256,
    min_out: U256,
    /// The wallet pays (through Permit2), or the router from what it holds.
    payer_is_user: bool,
    recipient: Address,
}

impl Leg {
    fn exact_in(&self) -> Result<(u8, Vec<u8>), Error> {
        Ok(match self.route.version {
            Version::V2 => (
                V2_SWAP_EXACT_IN,
                (self.recipient, self.amount_in, self.min_out, vec![self.tin, self.tout], self.payer_is_user)
                    .abi_encode_params(),
            ),
            Version::V3 => (
                V3_SWAP_EXACT_IN,
                (
                    self.recipient,
                    self.amount_in,
                    self.min_out,
                    v3_path(self.tin, self.route.fee, self.tout),
                    self.payer_is_user,
                )
                    .abi_encode_params(),
            ),
            Version::V4 => {
                let key =
                    self.route.v4.ok_or_else(|| bardo_sdk::errors::internal("a V4 route without its key"))?;
                let pool_key = v4::pool_key_of(self.tin, self.tout, self.route.fee, key);
                // The router's whole balance: settle it first, then swap the credit it opened.
                let (settled, amount_in) = match self.amount_in == CONTRACT_BALANCE {
                    true => ((SETTLE, (self.tin, CONTRACT_BALANCE, false).abi_encode_params()), 0),
                    false => {
                        (settle(self.tin, self.amount_in, self.payer_is_user), u128_amount(self.amount_in)?)
                    }
                };
                let swap = v4::ExactInputSingleParams {
                    zeroForOne: self.tin == pool_key.currency0,
                    poolKey: pool_key,
                    amountIn: amount_in,
                    amountOutMinimum: u128_amount(self.min_out)?,
                    hookData: Bytes::new(),
                };
                let take = take(self.tout, self.recipient, self.min_out);
                let (first, second) = match self.amount_in == CONTRACT_BALANCE {
                    true => (settled, (SWAP_EXACT_IN_SINGLE, swap.abi_encode())),
                    false => ((SWAP_EXACT_IN_SINGLE, swap.abi_encode()), settled),
                };
                (V4_SWAP, v4_input([first, second, take]))
            }
        })
    }
}

/// Pay the pool: from the wallet through Permit2 (up to `max`), or from the router.
fn settle(currency: Address, max: U256, payer_is_user: bool) -> (u8, Vec<u8>) {
    match payer_is_user {
        true => (SETTLE_ALL, (currency, max).abi_encode_params()),
        false => (SETTLE, (currency, OPEN_DELTA, false).abi_encode_params()),
    }
}

/// Take the output: all of it to the wallet (at least `least`), or to the router for a later
/// command.
fn take(currency: Address, recipient: Address, least: U256) -> (u8, Vec<u8>) {
    match recipient == ADDRESS_THIS {
        true => (TAKE, (currency, ADDRESS_THIS, OPEN_DELTA).abi_encode_params()),
        false => (TAKE_ALL, (currency, least).abi_encode_params()),
    }
}

/// `V4_SWAP`'s input: its actions with their params, in order.
fn v4_input(actions: [(u8, Vec<u8>); 3]) -> Vec<u8> {
    let (codes, params): (Vec<u8>, Vec<Bytes>) =
        actions.into_iter().map(|(a, p)| (a, Bytes::from(p))).unzip();
    (Bytes::from(codes), params).abi_encode_params()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::B256;

    fn token(byte: u8, symbol: &str) -> Token {
        Token { address: Address::repeat_byte(byte), symbol: symbol.into(), decimals: 18 }
    }

    #[test]
    fn an_exact_out_v3_path_runs_backwards_and_eth_in_is_wrapped_then_refunded() {
        let (weth, usdc) = (token(1, "WETH"), token(2, "USDC"));
        let route = Route { version: Version::V3, fee: 500, pool: Address::ZERO, v4: None };
        let quote = Quote { route, amount_in: U256::from(7), amount_out: U256::from(5), then: None };
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

    fn two_hop(first: Route, second: Route) -> Quote {
        let hop =
            crate::quote::Hop { route: second, via: Address::repeat_byte(3), amount_mid: U256::from(6) };
        Quote { route: first, amount_in: U256::from(7), amount_out: U256::from(5), then: Some(hop) }
    }

    fn exact_out_of(quote: &Quote) -> Result<executeCall, Error> {
        let (usdc, dai) = (token(1, "USDC"), token(4, "DAI"));
        let swap = Swap {
            tin: &usdc,
            tout: &dai,
            native_in: false,
            native_out: false,
            quote,
            side: Side::ExactOut,
            bound: U256::from(8),
            wallet: Address::repeat_byte(0xaa),
            deadline: U256::from(1),
        };
        Ok(swap.execute()?.0)
    }

    #[test]
    fn a_two_hop_exact_out_is_one_path_asked_from_the_output_back() {
        let v3 = |fee| Route { version: Version::V3, fee, pool: Address::ZERO, v4: None };
        let call = exact_out_of(&two_hop(v3(500), v3(3000))).expect("v3");
        assert_eq!(call.commands.to_vec(), [V3_SWAP_EXACT_OUT]);
        type V3 = (Address, U256, U256, Bytes, bool);
        let (_, out, max, path, payer_is_user) = V3::abi_decode_params(&call.inputs[0]).expect("v3");
        assert_eq!((out, max, payer_is_user), (U256::from(5), U256::from(8), true));
        let expected = [&[4u8; 20][..], &[0, 0x0b, 0xb8], &[3; 20], &[0, 0x01, 0xf4], &[1; 20]].concat();
        assert_eq!(path.to_vec(), expected, "DAI, 0.3 %, WETH, 0.05 %, USDC");

        let key =
            |pool_id| crate::v4::V4Key { pool_id, tick_spacing: 10, hooks: Address::ZERO, native: false };
        let v4 = |fee, id| Route { version: Version::V4, fee, pool: Address::ZERO, v4: Some(key(id)) };
        let call = exact_out_of(&two_hop(v4(500, B256::ZERO), v4(3000, B256::ZERO))).expect("v4");
        assert_eq!(call.commands.to_vec(), [V4_SWAP]);
        let (actions, params) = <(Bytes, Vec<Bytes>)>::abi_decode_params(&call.inputs[0]).expect("v4 input");
        assert_eq!(actions.to_vec(), [SWAP_EXACT_OUT, SETTLE_ALL, TAKE_ALL]);
        let swap = v4::ExactOutputParams::abi_decode(&params[0]).expect("params");
        assert_eq!(swap.currencyOut, Address::repeat_byte(4));
        let hops: Vec<(Address, u32)> =
            swap.path.iter().map(|k| (k.intermediateCurrency, k.fee.to::<u32>())).collect();
        assert_eq!(hops, [(Address::repeat_byte(1), 500), (Address::repeat_byte(3), 3000)]);
        assert_eq!((swap.amountOut, swap.amountInMaximum), (5, 8));

        let mixed = exact_out_of(&two_hop(v3(500), v4(3000, B256::ZERO))).err().expect("two versions");
        assert!(mixed.message.contains("two versions"), "{}", mixed.message);
    }
}
