// SPDX-License-Identifier: MIT
pragma solidity 0.8.24;

// An attack fixture for the host's tests (deployed on the devnet, used by nothing else): a
// contract that answers like a Uniswap V2 pair — token0, token1, reserves — and emits a pair's
// `Sync` when asked, but is no pair of any factory. Tokens sent to it are lost to whoever owns
// it; a host that took its `Sync` for a pool's would count it as a counterparty that paid.
interface IERC20Balance {
    function balanceOf(address) external view returns (uint256);
}

contract FakePair {
    address public immutable token0;
    address public immutable token1;

    event Sync(uint112 reserve0, uint112 reserve1);

    constructor(address a, address b) {
        (token0, token1) = a < b ? (a, b) : (b, a);
    }

    function getReserves() public view returns (uint112, uint112, uint32) {
        return (
            uint112(IERC20Balance(token0).balanceOf(address(this))),
            uint112(IERC20Balance(token1).balanceOf(address(this))),
            uint32(block.timestamp)
        );
    }

    function sync() external {
        (uint112 r0, uint112 r1,) = getReserves();
        emit Sync(r0, r1);
    }
}
