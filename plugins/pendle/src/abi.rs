//! The Pendle V2 views the tools read — the market, SY and YT, the static router (Pendle's
//! on-chain quoter) and the PT/YT/LP oracle — and the router functions the write plans call.

use alloy_primitives::{Address, Bytes, U256};

alloy_sol_types::sol! {
    struct MarketState { int256 totalPt; int256 totalSy; int256 totalLp; address treasury; int256 scalarRoot;
        uint256 expiry; uint256 lnFeeRateRoot; uint256 reserveFeePercent; uint256 lastLnImpliedRate; }
    struct TokenAmount { address token; uint256 amount; }
    struct UserPYInfo { TokenAmount ptBalance; TokenAmount ytBalance; TokenAmount unclaimedInterest;
        TokenAmount[] unclaimedRewards; }
    struct UserMarketInfo { TokenAmount lpBalance; TokenAmount ptBalance; TokenAmount syBalance;
        TokenAmount[] unclaimedRewards; }
    struct UserSYInfo { TokenAmount syBalance; TokenAmount[] unclaimedRewards; }

    // The market and the SY
    function readTokens() external view returns (address SY, address PT, address YT);
    function exchangeRate() external view returns (uint256);

    /// Pendle's static router: its quotes and views.
    interface RouterStatic {
    function getMarketState(address market) external view returns (address pt, address yt, address sy,
        int256 impliedYield, uint256 marketExchangeRateExcludeFee, MarketState state);
    function getPtToAssetRate(address market) external view returns (uint256);
    function getYtToAssetRate(address market) external view returns (uint256);
    function getLpToAssetRate(address market) external view returns (uint256);
    function getUserPYInfo(address py, address user) external returns (UserPYInfo res);
    function getUserMarketInfo(address market, address user) external returns (UserMarketInfo res);
    function getUserSYInfo(address sy, address user) external returns (UserSYInfo res);
    function swapExactTokenForPtStatic(address market, address tokenIn, uint256 amountTokenIn) external view
        returns (uint256 netPtOut, uint256 netSyMinted, uint256 netSyFee, uint256 priceImpact, uint256 exchangeRateAfter);
    function swapExactPtForTokenStatic(address market, uint256 exactPtIn, address tokenOut) external view
        returns (uint256 netTokenOut, uint256 netSyToRedeem, uint256 netSyFee, uint256 priceImpact, uint256 exchangeRateAfter);
    function swapExactTokenForYtStatic(address market, address tokenIn, uint256 amountTokenIn) external view
        returns (uint256 netYtOut, uint256 netSyMinted, uint256 netSyFee, uint256 priceImpact, uint256 exchangeRateAfter);
    function swapExactYtForTokenStatic(address market, uint256 exactYtIn, address tokenOut) external view
        returns (uint256 netTokenOut, uint256 netSyFee, uint256 priceImpact, uint256 exchangeRateAfter, uint256 netSyOut,
            uint256 netSyOwedInt, uint256 netPYToRepaySyOwedInt, uint256 netPYToRedeemSyOutInt);
    function addLiquiditySingleTokenStatic(address market, address tokenIn, uint256 netTokenIn) external view
        returns (uint256 netLpOut, uint256 netPtFromSwap, uint256 netSyFee, uint256 priceImpact, uint256 exchangeRateAfter,
            uint256 netSyMinted, uint256 netSyToSwap);
    function removeLiquiditySingleTokenStatic(address market, uint256 netLpToRemove, address tokenOut) external view
        returns (uint256 netTokenOut, uint256 netSyFee, uint256 priceImpact, uint256 exchangeRateAfter, uint256 netSyOut,
            uint256 netSyFromBurn, uint256 netPtFromBurn, uint256 netSyFromSwap);
    function mintPyFromTokenStatic(address YT, address tokenIn, uint256 netTokenIn) external view returns (uint256 netPyOut);
    function redeemPyToTokenStatic(address YT, uint256 netPYToRedeem, address tokenOut) external view
        returns (uint256 netTokenOut);
    function addLiquidityDualTokenAndPtStatic(address market, address tokenIn, uint256 netTokenDesired,
        uint256 netPtDesired) external view
        returns (uint256 netLpOut, uint256 netTokenUsed, uint256 netPtUsed, uint256 netSyUsed, uint256 netSyDesired);
    function removeLiquidityDualTokenAndPtStatic(address market, uint256 netLpToRemove, address tokenOut)
        external view returns (uint256 netTokenOut, uint256 netPtOut, uint256 netSyToRedeem);
    }

    /// The PT/YT/LP oracle: time-weighted rates in the asset.
    interface Oracle {
        function getPtToAssetRate(address market, uint32 duration) external view returns (uint256);
        function getYtToAssetRate(address market, uint32 duration) external view returns (uint256);
        function getLpToAssetRate(address market, uint32 duration) external view returns (uint256);
    }
}

alloy_sol_types::sol! {
    struct SwapData { uint8 swapType; address extRouter; bytes extCalldata; bool needScale; }
    /// A token going into the SY: `tokenMintSy` is `tokenIn` (no aggregator: `pendleSwap` zero).
    struct TokenInput { address tokenIn; uint256 netTokenIn; address tokenMintSy; address pendleSwap; SwapData swapData; }
    /// A token coming out of the SY, at least `minTokenOut`.
    struct TokenOutput { address tokenOut; uint256 minTokenOut; address tokenRedeemSy; address pendleSwap; SwapData swapData; }
    struct Order { uint256 salt; uint256 expiry; uint256 nonce; uint8 orderType; address token; address YT;
        address maker; address receiver; uint256 makingAmount; uint256 lnImpliedRate; uint256 failSafeRate; bytes permit; }
    struct FillOrderParams { Order order; bytes signature; uint256 makingAmount; }
    /// Limit orders to fill on the way; the plans fill none.
    struct LimitOrderData { address limitRouter; uint256 epsSkipMarket; FillOrderParams[] normalFills;
        FillOrderParams[] flashFills; bytes optData; }

    /// `PendleRouterV4`: the functions the plans call (the host's scope admits these).
    interface Router {
    function swapExactTokenForPtSimple(address receiver, address market, uint256 minPtOut, TokenInput input)
        external payable returns (uint256, uint256, uint256);
    function swapExactTokenForYtSimple(address receiver, address market, uint256 minYtOut, TokenInput input)
        external payable returns (uint256, uint256, uint256);
    function swapExactPtForToken(address receiver, address market, uint256 exactPtIn, TokenOutput output,
        LimitOrderData limit) external returns (uint256, uint256, uint256);
    function swapExactYtForToken(address receiver, address market, uint256 exactYtIn, TokenOutput output,
        LimitOrderData limit) external returns (uint256, uint256, uint256);
    function addLiquiditySingleTokenSimple(address receiver, address market, uint256 minLpOut, TokenInput input)
        external payable returns (uint256, uint256, uint256);
    function removeLiquiditySingleToken(address receiver, address market, uint256 netLpToRemove, TokenOutput output,
        LimitOrderData limit) external returns (uint256, uint256, uint256);
    function addLiquidityDualTokenAndPt(address receiver, address market, TokenInput input, uint256 netPtDesired,
        uint256 minLpOut) external payable returns (uint256, uint256, uint256);
    function removeLiquidityDualTokenAndPt(address receiver, address market, uint256 netLpToRemove,
        TokenOutput output, uint256 minPtOut) external returns (uint256, uint256, uint256);
    function mintPyFromToken(address receiver, address YT, uint256 minPyOut, TokenInput input)
        external payable returns (uint256, uint256);
    function redeemPyToToken(address receiver, address YT, uint256 netPyIn, TokenOutput output)
        external returns (uint256, uint256);
    function redeemDueInterestAndRewards(address user, address[] sys, address[] yts, address[] markets) external;
    }
}

/// No aggregator swap: the SY takes or pays the token itself.
fn direct() -> SwapData {
    SwapData { swapType: 0, extRouter: Address::ZERO, extCalldata: Bytes::new(), needScale: false }
}

/// Exactly `amount` of `token` into the SY.
pub fn input(token: Address, amount: U256) -> TokenInput {
    TokenInput {
        tokenIn: token,
        netTokenIn: amount,
        tokenMintSy: token,
        pendleSwap: Address::ZERO,
        swapData: direct(),
    }
}

/// At least `min` of `token` out of the SY.
pub fn output(token: Address, min: U256) -> TokenOutput {
    TokenOutput {
        tokenOut: token,
        minTokenOut: min,
        tokenRedeemSy: token,
        pendleSwap: Address::ZERO,
        swapData: direct(),
    }
}

/// No limit order.
pub fn no_limit_orders() -> LimitOrderData {
    LimitOrderData {
        limitRouter: Address::ZERO,
        epsSkipMarket: U256::ZERO,
        normalFills: Vec::new(),
        flashFills: Vec::new(),
        optData: Bytes::new(),
    }
}
