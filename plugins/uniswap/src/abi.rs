//! The Uniswap V2 / V3 contract functions and events the tools use (from the published ABIs);
//! the pool and position views shared with other plugins are in `bardo_sdk::uniswap`.

pub use bardo_sdk::uniswap::{feeCall, getPoolCall, ownerOfCall, positionsCall};

alloy_sol_types::sol! {
    // V2 factory, pair and router
    function getAmountsOut(uint256 amountIn, address[] path) external view returns (uint256[] amounts);
    function getAmountsIn(uint256 amountOut, address[] path) external view returns (uint256[] amounts);
    function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to,
        uint256 deadline) external returns (uint256[] amounts);
    function swapTokensForExactTokens(uint256 amountOut, uint256 amountInMax, address[] path, address to,
        uint256 deadline) external returns (uint256[] amounts);

    // V3 QuoterV2
    struct QuoteExactInputSingleParams { address tokenIn; address tokenOut; uint256 amountIn; uint24 fee;
        uint160 sqrtPriceLimitX96; }
    function quoteExactInputSingle(QuoteExactInputSingleParams params) external returns (uint256 amountOut,
        uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate);
    struct QuoteExactOutputSingleParams { address tokenIn; address tokenOut; uint256 amount; uint24 fee;
        uint160 sqrtPriceLimitX96; }
    function quoteExactOutputSingle(QuoteExactOutputSingleParams params) external returns (uint256 amountIn,
        uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate);

    // V3 SwapRouter
    struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient;
        uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }
    function exactInputSingle(ExactInputSingleParams params) external payable returns (uint256 amountOut);
    struct ExactOutputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient;
        uint256 deadline; uint256 amountOut; uint256 amountInMaximum; uint160 sqrtPriceLimitX96; }
    function exactOutputSingle(ExactOutputSingleParams params) external payable returns (uint256 amountIn);

    // V3 NonfungiblePositionManager
    struct MintParams { address token0; address token1; uint24 fee; int24 tickLower; int24 tickUpper;
        uint256 amount0Desired; uint256 amount1Desired; uint256 amount0Min; uint256 amount1Min; address recipient;
        uint256 deadline; }
    function mint(MintParams params) external payable returns (uint256 tokenId, uint128 liquidity, uint256 amount0,
        uint256 amount1);
    struct IncreaseLiquidityParams { uint256 tokenId; uint256 amount0Desired; uint256 amount1Desired;
        uint256 amount0Min; uint256 amount1Min; uint256 deadline; }
    function increaseLiquidity(IncreaseLiquidityParams params) external payable returns (uint128 liquidity,
        uint256 amount0, uint256 amount1);
    struct DecreaseLiquidityParams { uint256 tokenId; uint128 liquidity; uint256 amount0Min; uint256 amount1Min;
        uint256 deadline; }
    function decreaseLiquidity(DecreaseLiquidityParams params) external payable returns (uint256 amount0,
        uint256 amount1);
    struct CollectParams { uint256 tokenId; address recipient; uint128 amount0Max; uint128 amount1Max; }
    function collect(CollectParams params) external payable returns (uint256 amount0, uint256 amount1);
    function burn(uint256 tokenId) external payable;
    function multicall(bytes[] data) external payable returns (bytes[] results);
    function balanceOf(address owner) external view returns (uint256);
    function tokenOfOwnerByIndex(address owner, uint256 index) external view returns (uint256);
    event IncreaseLiquidity(uint256 indexed tokenId, uint128 liquidity, uint256 amount0, uint256 amount1);
    event DecreaseLiquidity(uint256 indexed tokenId, uint128 liquidity, uint256 amount0, uint256 amount1);
    event Collect(uint256 indexed tokenId, address recipient, uint256 amount0, uint256 amount1);
}

/// A V3 pool's own events (named as the manager's are).
pub mod pool {
    alloy_sol_types::sol! {
        event Collect(address indexed owner, address recipient, int24 indexed tickLower, int24 indexed tickUpper,
            uint128 amount0, uint128 amount1);
    }
}
