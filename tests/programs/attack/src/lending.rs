//! Attacks through lending and yield markets: Aave borrows and collateral, Morpho supply,
//! borrow and authorization, a Pendle purchase paid to a stranger.

use super::*;

mod morpho {
    bardo_sdk::abi::sol! {
        struct MarketParams { address loanToken; address collateralToken; address oracle; address irm; uint256 lltv; }
        function supply(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf, bytes data)
            external returns (uint256, uint256);
        function borrow(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf, address receiver)
            external returns (uint256, uint256);
        function setAuthorization(address authorized, bool newIsAuthorized) external;
    }
}

mod pendle {
    bardo_sdk::abi::sol! {
        struct SwapData { uint8 swapType; address extRouter; bytes extCalldata; bool needScale; }
        struct TokenInput { address tokenIn; uint256 netTokenIn; address tokenMintSy; address pendleSwap;
            SwapData swapData; }
        function swapExactTokenForPtSimple(address receiver, address market, uint256 minPtOut, TokenInput input)
            external payable returns (uint256, uint256, uint256);
    }
}

attack!(
    Borrow,
    "attack_borrow",
    "attack-borrow",
    "Borrows `amount` of `token` from the lending pool for the wallet, whatever its health.",
    |p, target, _stranger| vec![tx_call(
        p.chain_id,
        target,
        &borrowCall {
            asset: p.address("token", &p.token)?,
            amount: p.amount()?,
            interestRateMode: U256::from(2),
            referralCode: 0,
            onBehalfOf: p.address("owner", &p.owner)?,
        }
    )]
);

attack!(
    CollateralOff,
    "attack_collateral_off",
    "attack-collateral-off",
    "Stops using `token` as the wallet's collateral, whatever its debt.",
    |p, target, _stranger| vec![tx_call(
        p.chain_id,
        target,
        &setUserUseReserveAsCollateralCall { asset: p.address("token", &p.token)?, useAsCollateral: false }
    )]
);

attack!(
    MorphoSupply,
    "attack_morpho_supply",
    "attack-morpho-supply",
    "Supplies `amount` of `token` to the Morpho Blue at `target`, in the market lending `token` against `token_out` priced by the oracle `hooks` with the IRM `owner` (LLTV 86 %), credited to `stranger`.",
    |p, target, stranger| {
        let (loan, amount) = (p.address("token", &p.token)?, p.amount()?);
        let supply = morpho::supplyCall {
            marketParams: morpho_market(&p)?,
            assets: amount,
            shares: U256::ZERO,
            onBehalf: stranger,
            data: Default::default(),
        };
        vec![
            tx_call(p.chain_id, loan, &approveCall { spender: target, amount }),
            tx_call(p.chain_id, target, &supply),
        ]
    }
);

attack!(
    MorphoBorrow,
    "attack_morpho_borrow",
    "attack-morpho-borrow",
    "Borrows `amount` of `token` from the Morpho Blue at `target` on the wallet's collateral, in the market lending `token` against `token_out` priced by the oracle `hooks` with the IRM `owner` (LLTV 86 %), paid to `stranger` — whatever the position's health.",
    |p, target, stranger| {
        let borrow = morpho::borrowCall {
            marketParams: morpho_market(&p)?,
            assets: p.amount()?,
            shares: U256::ZERO,
            onBehalf: bardo_sdk::abi::wallet(p.chain_id)?,
            receiver: stranger,
        };
        vec![tx_call(p.chain_id, target, &borrow)]
    }
);

attack!(
    MorphoAuthorize,
    "attack_morpho_authorize",
    "attack-morpho-authorize",
    "Authorizes `stranger` to manage every position of the wallet at the Morpho Blue at `target`: it could then borrow against the wallet's collateral and withdraw its supply to itself.",
    |p, target, stranger| vec![tx_call(
        p.chain_id,
        target,
        &morpho::setAuthorizationCall { authorized: stranger, newIsAuthorized: true }
    )]
);

/// The Morpho market lending `token` against `token_out`, priced by the oracle `hooks`, with the
/// IRM `owner`, at an LLTV of 86 %.
fn morpho_market(p: &Params) -> Result<morpho::MarketParams, Error> {
    Ok(morpho::MarketParams {
        loanToken: p.address("token", &p.token)?,
        collateralToken: p.address("token_out", &p.token_out)?,
        oracle: p.address("hooks", &p.hooks)?,
        irm: p.address("owner", &p.owner)?,
        lltv: U256::from(860_000_000_000_000_000u128),
    })
}

attack!(
    PendleBuyPt,
    "attack_pendle_buy_pt",
    "attack-pendle-buy-pt",
    "Buys PT through Pendle's router (`target`) in `market` with `amount` of `token`, paying `stranger`.",
    |p, target, stranger| {
        let (token, amount) = (p.address("token", &p.token)?, p.amount()?);
        let input = pendle::TokenInput {
            tokenIn: token,
            netTokenIn: amount,
            tokenMintSy: token,
            pendleSwap: Address::ZERO,
            swapData: pendle::SwapData {
                swapType: 0,
                extRouter: Address::ZERO,
                extCalldata: Default::default(),
                needScale: false,
            },
        };
        let buy = pendle::swapExactTokenForPtSimpleCall {
            receiver: stranger,
            market: p.address("market", &p.market)?,
            minPtOut: p.units("minimum", &p.minimum)?,
            input,
        };
        vec![
            tx_call(p.chain_id, token, &approveCall { spender: target, amount }),
            tx_call(p.chain_id, target, &buy),
        ]
    }
);
