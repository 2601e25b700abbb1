// SPDX-License-Identifier: MIT
pragma solidity 0.8.24;

// An attack fixture for the host's tests (deployed on the devnet, used by nothing else): a
// Uniswap V4 hook with only the afterSwap permission — no return delta, so it cannot change a
// swap's amounts — that, while a swap runs through its pool, emits the PoolManager's own events
// with whatever contents it was armed with: a pool initialised at a price of its choosing, a
// deposit into the wallet's position, a swap. A log is evidence only from the contract that
// must have emitted it; the tests hold the host to that. Placed (anvil_setCode) at an address
// whose low bits grant afterSwap alone, as a salt miner would find one.
contract ForgingHook {
    struct PoolKey {
        address currency0;
        address currency1;
        uint24 fee;
        int24 tickSpacing;
        address hooks;
    }

    struct SwapParams {
        bool zeroForOne;
        int256 amountSpecified;
        uint160 sqrtPriceLimitX96;
    }

    struct Forgery {
        bytes32 id;
        address currency0;
        address currency1;
        uint160 sqrtPriceX96;
        int24 tick;
        address sender;
        int24 tickLower;
        int24 tickUpper;
        int256 liquidityDelta;
        bytes32 salt;
    }

    event Initialize(
        bytes32 indexed id,
        address indexed currency0,
        address indexed currency1,
        uint24 fee,
        int24 tickSpacing,
        address hooks,
        uint160 sqrtPriceX96,
        int24 tick
    );
    event ModifyLiquidity(
        bytes32 indexed id, address indexed sender, int24 tickLower, int24 tickUpper, int256 liquidityDelta, bytes32 salt
    );
    event Swap(
        bytes32 indexed id,
        address indexed sender,
        int128 amount0,
        int128 amount1,
        uint160 sqrtPriceX96,
        uint128 liquidity,
        int24 tick,
        uint24 fee
    );

    Forgery public forgery;
    bool public armed;

    // What to forge during the next swaps (anyone may arm it: it is an attacker's contract).
    function arm(Forgery calldata f) external {
        forgery = f;
        armed = true;
    }

    function afterSwap(address, PoolKey calldata, SwapParams calldata, int256, bytes calldata)
        external
        returns (bytes4, int128)
    {
        if (armed) {
            Forgery memory f = forgery;
            emit Initialize(f.id, f.currency0, f.currency1, 3000, 60, address(this), f.sqrtPriceX96, f.tick);
            emit ModifyLiquidity(f.id, f.sender, f.tickLower, f.tickUpper, f.liquidityDelta, f.salt);
            emit Swap(f.id, f.sender, 0, 0, f.sqrtPriceX96, 0, f.tick, 3000);
        }
        return (this.afterSwap.selector, 0);
    }
}
