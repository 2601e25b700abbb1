//! The Pendle V2 views the tools read: the market, SY and YT, the static router (Pendle's
//! on-chain quoter) and the PT/YT/LP oracle.

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
    }

    /// The PT/YT/LP oracle: time-weighted rates in the asset.
    interface Oracle {
        function getPtToAssetRate(address market, uint32 duration) external view returns (uint256);
        function getYtToAssetRate(address market, uint32 duration) external view returns (uint256);
        function getLpToAssetRate(address market, uint32 duration) external view returns (uint256);
    }
}
