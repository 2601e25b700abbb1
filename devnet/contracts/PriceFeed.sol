// SPDX-License-Identifier: MIT
pragma solidity 0.8.24;

// A Chainlink-style USD price feed per devnet token: Chainlink's own MockV3Aggregator from the
// published @chainlink/contracts sources (latestRoundData, decimals, updateAnswer), under a name
// of ours so that compile.js writes its artifact.
import "@chainlink/contracts/src/v0.8/tests/MockV3Aggregator.sol";

contract BardoPriceFeed is MockV3Aggregator {
    constructor(uint8 decimals_, int256 initialAnswer) MockV3Aggregator(decimals_, initialAnswer) {}
}
