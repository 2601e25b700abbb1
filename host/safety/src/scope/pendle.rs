//! Pendle's router scope: the functions a plan may call on `PendleRouterV4` — buy and sell PT
//! and YT, add and remove liquidity, mint and redeem PT+YT, claim — each paying the wallet, in
//! a market (or with a YT) the operator lists, with no aggregator swap and no limit-order fill.
//! Anyone can create a Pendle market over an SY of their own; an aggregator call runs an
//! arbitrary router's calldata with the wallet's tokens; a limit order pays its maker.

use super::Party;
use alloy::primitives::{Address, Bytes};
use alloy::sol_types::SolCall;
use bardo_core::scope::Role;

alloy::sol! {
    struct SwapData { uint8 swapType; address extRouter; bytes extCalldata; bool needScale; }
    struct TokenInput { address tokenIn; uint256 netTokenIn; address tokenMintSy; address pendleSwap; SwapData swapData; }
    struct TokenOutput { address tokenOut; uint256 minTokenOut; address tokenRedeemSy; address pendleSwap; SwapData swapData; }
    struct Order { uint256 salt; uint256 expiry; uint256 nonce; uint8 orderType; address token; address YT;
        address maker; address receiver; uint256 makingAmount; uint256 lnImpliedRate; uint256 failSafeRate; bytes permit; }
    struct FillOrderParams { Order order; bytes signature; uint256 makingAmount; }
    struct LimitOrderData { address limitRouter; uint256 epsSkipMarket; FillOrderParams[] normalFills;
        FillOrderParams[] flashFills; bytes optData; }

    function swapExactTokenForPtSimple(address receiver, address market, uint256 minPtOut, TokenInput input)
        external payable returns (uint256, uint256, uint256);
    function swapExactSyForPtSimple(address receiver, address market, uint256 exactSyIn, uint256 minPtOut)
        external returns (uint256, uint256);
    function swapExactTokenForYtSimple(address receiver, address market, uint256 minYtOut, TokenInput input)
        external payable returns (uint256, uint256, uint256);
    function swapExactSyForYtSimple(address receiver, address market, uint256 exactSyIn, uint256 minYtOut)
        external returns (uint256, uint256);
    function addLiquiditySingleTokenSimple(address receiver, address market, uint256 minLpOut, TokenInput input)
        external payable returns (uint256, uint256, uint256);
    function addLiquiditySinglePtSimple(address receiver, address market, uint256 netPtIn, uint256 minLpOut)
        external returns (uint256, uint256);
    function addLiquiditySingleSySimple(address receiver, address market, uint256 netSyIn, uint256 minLpOut)
        external returns (uint256, uint256);
    function removeLiquiditySinglePtSimple(address receiver, address market, uint256 netLpToRemove, uint256 minPtOut)
        external returns (uint256, uint256);
    function swapExactPtForToken(address receiver, address market, uint256 exactPtIn, TokenOutput output,
        LimitOrderData limit) external returns (uint256, uint256, uint256);
    function swapExactYtForToken(address receiver, address market, uint256 exactYtIn, TokenOutput output,
        LimitOrderData limit) external returns (uint256, uint256, uint256);
    function removeLiquiditySingleToken(address receiver, address market, uint256 netLpToRemove, TokenOutput output,
        LimitOrderData limit) external returns (uint256, uint256, uint256);
    function addLiquidityDualTokenAndPt(address receiver, address market, TokenInput input, uint256 netPtDesired,
        uint256 minLpOut) external payable returns (uint256, uint256, uint256, uint256);
    function removeLiquidityDualTokenAndPt(address receiver, address market, uint256 netLpToRemove,
        TokenOutput output, uint256 minPtOut) external returns (uint256, uint256, uint256);
    function mintPyFromToken(address receiver, address YT, uint256 minPyOut, TokenInput input)
        external payable returns (uint256, uint256);
    function redeemPyToToken(address receiver, address YT, uint256 netPyIn, TokenOutput output)
        external returns (uint256, uint256);
    function redeemDueInterestAndRewards(address user, address[] sys, address[] yts, address[] markets) external;
}

/// What one router call names, to be checked.
struct Call {
    function: &'static str,
    receiver: (&'static str, Address),
    /// (parameter, address, the role it must have)
    listed: Vec<(&'static str, Address, Role)>,
    inputs: Vec<TokenInput>,
    outputs: Vec<TokenOutput>,
    limit: Option<LimitOrderData>,
}

fn call<C: SolCall>(data: &[u8], f: impl FnOnce(C) -> Call) -> Option<Call> {
    super::decode::<C>(data).map(f)
}

fn in_market(function: &'static str, receiver: Address, market: Address) -> Call {
    Call {
        function,
        receiver: ("receiver", receiver),
        listed: vec![("market", market, Role::PendleMarket)],
        inputs: Vec::new(),
        outputs: Vec::new(),
        limit: None,
    }
}

fn decode(data: &[u8]) -> Option<Call> {
    let with_input = |mut c: Call, input: TokenInput| {
        c.inputs.push(input);
        c
    };
    let with_output = |mut c: Call, output: TokenOutput, limit: Option<LimitOrderData>| {
        c.outputs.push(output);
        c.limit = limit;
        c
    };
    call::<swapExactTokenForPtSimpleCall>(data, |c| {
        with_input(in_market(swapExactTokenForPtSimpleCall::SIGNATURE, c.receiver, c.market), c.input)
    })
    .or_else(|| {
        call::<swapExactSyForPtSimpleCall>(data, |c| {
            in_market(swapExactSyForPtSimpleCall::SIGNATURE, c.receiver, c.market)
        })
    })
    .or_else(|| {
        call::<swapExactTokenForYtSimpleCall>(data, |c| {
            with_input(in_market(swapExactTokenForYtSimpleCall::SIGNATURE, c.receiver, c.market), c.input)
        })
    })
    .or_else(|| {
        call::<swapExactSyForYtSimpleCall>(data, |c| {
            in_market(swapExactSyForYtSimpleCall::SIGNATURE, c.receiver, c.market)
        })
    })
    .or_else(|| {
        call::<addLiquiditySingleTokenSimpleCall>(data, |c| {
            with_input(in_market(addLiquiditySingleTokenSimpleCall::SIGNATURE, c.receiver, c.market), c.input)
        })
    })
    .or_else(|| {
        call::<addLiquiditySinglePtSimpleCall>(data, |c| {
            in_market(addLiquiditySinglePtSimpleCall::SIGNATURE, c.receiver, c.market)
        })
    })
    .or_else(|| {
        call::<addLiquiditySingleSySimpleCall>(data, |c| {
            in_market(addLiquiditySingleSySimpleCall::SIGNATURE, c.receiver, c.market)
        })
    })
    .or_else(|| {
        call::<removeLiquiditySinglePtSimpleCall>(data, |c| {
            in_market(removeLiquiditySinglePtSimpleCall::SIGNATURE, c.receiver, c.market)
        })
    })
    .or_else(|| {
        call::<swapExactPtForTokenCall>(data, |c| {
            with_output(
                in_market(swapExactPtForTokenCall::SIGNATURE, c.receiver, c.market),
                c.output,
                Some(c.limit),
            )
        })
    })
    .or_else(|| {
        call::<swapExactYtForTokenCall>(data, |c| {
            with_output(
                in_market(swapExactYtForTokenCall::SIGNATURE, c.receiver, c.market),
                c.output,
                Some(c.limit),
            )
        })
    })
    .or_else(|| {
        call::<removeLiquiditySingleTokenCall>(data, |c| {
            let f = removeLiquiditySingleTokenCall::SIGNATURE;
            with_output(in_market(f, c.receiver, c.market), c.output, Some(c.limit))
        })
    })
    .or_else(|| {
        call::<addLiquidityDualTokenAndPtCall>(data, |c| {
            with_input(in_market(addLiquidityDualTokenAndPtCall::SIGNATURE, c.receiver, c.market), c.input)
        })
    })
    .or_else(|| {
        call::<removeLiquidityDualTokenAndPtCall>(data, |c| {
            let f = removeLiquidityDualTokenAndPtCall::SIGNATURE;
            with_output(in_market(f, c.receiver, c.market), c.output, None)
        })
    })
    .or_else(|| {
        call::<mintPyFromTokenCall>(data, |c| Call {
            listed: vec![("YT", c.YT, Role::PendleYieldToken)],
            ..with_input(in_market(mintPyFromTokenCall::SIGNATURE, c.receiver, Address::ZERO), c.input)
        })
    })
    .or_else(|| {
        call::<redeemPyToTokenCall>(data, |c| Call {
            listed: vec![("YT", c.YT, Role::PendleYieldToken)],
            ..with_output(
                in_market(redeemPyToTokenCall::SIGNATURE, c.receiver, Address::ZERO),
                c.output,
                None,
            )
        })
    })
    .or_else(|| {
        call::<redeemDueInterestAndRewardsCall>(data, |c| {
            let listed = (c.sys.iter().map(|a| ("sys", *a, Role::PendleSy)))
                .chain(c.yts.iter().map(|a| ("yts", *a, Role::PendleYieldToken)))
                .chain(c.markets.iter().map(|a| ("markets", *a, Role::PendleMarket)))
                .collect();
            Call {
                function: redeemDueInterestAndRewardsCall::SIGNATURE,
                receiver: ("user", c.user),
                listed,
                inputs: Vec::new(),
                outputs: Vec::new(),
                limit: None,
            }
        })
    })
}

/// No aggregator: the token goes straight into the SY (or comes straight out of it).
fn direct(swap: Address, data: &SwapData, token: Address, sy_side: Address) -> Result<(), String> {
    if !swap.is_zero() || data.swapType != 0 || !data.extRouter.is_zero() || !data.extCalldata.is_empty() {
        return Err(format!(
            "swaps through an aggregator (pendleSwap {swap}, router {}, type {}); plans only use the SY's own \
             tokens",
            data.extRouter, data.swapType
        ));
    }
    if token != sy_side {
        return Err(format!(
            "names {token} but mints or redeems the SY with {sy_side} (an aggregator's swap)"
        ));
    }
    Ok(())
}

/// A Pendle router call's function and the party it pays, once every market and YT it names is
/// listed and it swaps through no aggregator and fills no limit order; `Ok(None)` for a function
/// outside the scope.
pub(super) fn parties(
    data: &[u8],
    roles: &dyn Fn(Address) -> Option<Role>,
) -> Result<Option<(&'static str, Party)>, String> {
    let Some(c) = decode(data) else { return Ok(None) };
    let function = c.function;
    for (name, address, role) in &c.listed {
        if roles(*address) != Some(*role) && roles(*address) != Some(Role::Unscoped) {
            return Err(format!(
                "{function} names {address} as `{name}`, which the operator does not list as a `{role}` (anyone \
                 can create a Pendle market over an SY of their own)"
            ));
        }
    }
    for i in &c.inputs {
        direct(i.pendleSwap, &i.swapData, i.tokenIn, i.tokenMintSy)
            .map_err(|e| format!("{function} input {e}"))?;
    }
    for o in &c.outputs {
        direct(o.pendleSwap, &o.swapData, o.tokenOut, o.tokenRedeemSy)
            .map_err(|e| format!("{function} output {e}"))?;
    }
    if let Some(limit) = &c.limit
        && (!limit.limitRouter.is_zero()
            || !limit.normalFills.is_empty()
            || !limit.flashFills.is_empty()
            || limit.optData != Bytes::new())
    {
        return Err(format!(
            "{function} fills limit orders (router {}); plans trade with the market only",
            limit.limitRouter
        ));
    }
    Ok(Some((function, Party::Wallet(c.receiver.0, c.receiver.1))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::check;
    use alloy::primitives::{U256, address};
    use std::collections::BTreeSet;

    const WALLET: Address = address!("0x00000000000000000000000000000000000000aa");
    const STRANGER: Address = address!("0x00000000000000000000000000000000000000e1");
    const MARKET: Address = address!("0x00000000000000000000000000000000000000b1");
    const YT: Address = address!("0x00000000000000000000000000000000000000b2");
    const SY: Address = address!("0x00000000000000000000000000000000000000b3");
    const USDC: Address = address!("0x00000000000000000000000000000000000000c1");
    const ATTACKERS: Address = address!("0x00000000000000000000000000000000000000e2");

    fn roles(a: Address) -> Option<Role> {
        match a {
            MARKET => Some(Role::PendleMarket),
            YT => Some(Role::PendleYieldToken),
            SY => Some(Role::PendleSy),
            _ => None,
        }
    }

    fn scoped(data: Vec<u8>) -> Result<(), String> {
        check(Role::PendleRouter, &data, U256::ZERO, WALLET, &roles, &BTreeSet::new())
    }

    fn input(token: Address, via: Address) -> TokenInput {
        TokenInput {
            tokenIn: token,
            netTokenIn: U256::from(1_000u64),
            tokenMintSy: token,
            pendleSwap: via,
            swapData: SwapData {
                swapType: 0,
                extRouter: Address::ZERO,
                extCalldata: Bytes::new(),
                needScale: false,
            },
        }
    }

    fn buy(receiver: Address, market: Address, input: TokenInput) -> Vec<u8> {
        swapExactTokenForPtSimpleCall { receiver, market, minPtOut: U256::from(1u8), input }.abi_encode()
    }

    fn no_limit() -> LimitOrderData {
        LimitOrderData {
            limitRouter: Address::ZERO,
            epsSkipMarket: U256::ZERO,
            normalFills: vec![],
            flashFills: vec![],
            optData: Bytes::new(),
        }
    }

    fn output(token: Address) -> TokenOutput {
        TokenOutput {
            tokenOut: token,
            minTokenOut: U256::from(1u8),
            tokenRedeemSy: token,
            pendleSwap: Address::ZERO,
            swapData: SwapData {
                swapType: 0,
                extRouter: Address::ZERO,
                extCalldata: Bytes::new(),
                needScale: false,
            },
        }
    }

    #[test]
    fn trades_pay_the_wallet_in_listed_markets_only() {
        assert_eq!(scoped(buy(WALLET, MARKET, input(USDC, Address::ZERO))), Ok(()));
        let stranger = scoped(buy(STRANGER, MARKET, input(USDC, Address::ZERO))).expect_err("receiver");
        assert!(stranger.contains("`receiver`") && stranger.contains("must be the wallet"), "{stranger}");
        let unlisted = scoped(buy(WALLET, ATTACKERS, input(USDC, Address::ZERO))).expect_err("market");
        assert!(unlisted.contains("does not list as a `pendle-market`"), "{unlisted}");
        let sell = |receiver| {
            swapExactPtForTokenCall {
                receiver,
                market: MARKET,
                exactPtIn: U256::from(5u8),
                output: output(USDC),
                limit: no_limit(),
            }
            .abi_encode()
        };
        assert_eq!(scoped(sell(WALLET)), Ok(()));
        assert!(scoped(sell(STRANGER)).is_err());
        let redeem = |yt| redeemPyToTokenCall {
            receiver: WALLET,
            YT: yt,
            netPyIn: U256::from(5u8),
            output: output(USDC),
        };
        assert_eq!(scoped(redeem(YT).abi_encode()), Ok(()));
        assert!(scoped(redeem(ATTACKERS).abi_encode()).expect_err("yt").contains("pendle-yield-token"));
        let claim = |user, markets| {
            redeemDueInterestAndRewardsCall { user, sys: vec![SY], yts: vec![YT], markets }.abi_encode()
        };
        assert_eq!(scoped(claim(WALLET, vec![MARKET])), Ok(()));
        assert!(scoped(claim(STRANGER, vec![MARKET])).expect_err("user").contains("`user`"));
        assert!(scoped(claim(WALLET, vec![MARKET, ATTACKERS])).is_err(), "every market listed");
    }

    #[test]
    fn aggregators_and_limit_orders_are_out_of_scope() {
        let via = scoped(buy(WALLET, MARKET, input(USDC, STRANGER))).expect_err("aggregator");
        assert!(via.contains("aggregator"), "{via}");
        let mut swapped = input(USDC, Address::ZERO);
        swapped.tokenMintSy = SY;
        assert!(scoped(buy(WALLET, MARKET, swapped)).expect_err("a swap first").contains("aggregator"));
        let mut calldata = input(USDC, Address::ZERO);
        calldata.swapData.extCalldata = Bytes::from(vec![1u8]);
        assert!(scoped(buy(WALLET, MARKET, calldata)).is_err());
        let mut limit = no_limit();
        limit.limitRouter = STRANGER;
        let sell = swapExactYtForTokenCall {
            receiver: WALLET,
            market: MARKET,
            exactYtIn: U256::from(5u8),
            output: output(USDC),
            limit,
        };
        assert!(scoped(sell.abi_encode()).expect_err("limit").contains("limit orders"));
        alloy::sol! { function setSelectorToFacets(address[] arr) external; }
        let admin = setSelectorToFacetsCall { arr: vec![STRANGER] }.abi_encode();
        assert!(scoped(admin).expect_err("admin").contains("not in the scope"));
    }
}
