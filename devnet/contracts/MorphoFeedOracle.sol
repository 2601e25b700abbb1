// SPDX-License-Identifier: MIT
pragma solidity 0.8.24;

import {AggregatorV3Interface} from "@chainlink/contracts/src/v0.8/shared/interfaces/AggregatorV3Interface.sol";

// A Morpho Blue oracle (IOracle.price: one unit of collateral quoted in units of the loan token,
// scaled by 1e36) over two of the devnet's Chainlink-style USD feeds, composed as Morpho's own
// ChainlinkOracle composes a base and a quote feed:
//   price = base / quote * 10^(36 + loan decimals - collateral decimals)
// (both feeds have the same decimals, so theirs cancel). A feed answering zero or less reverts:
// a market must not lend against a price that is not there.
contract MorphoFeedOracle {
    AggregatorV3Interface public immutable BASE_FEED;
    AggregatorV3Interface public immutable QUOTE_FEED;
    uint256 public immutable SCALE_FACTOR;

    constructor(address baseFeed, address quoteFeed, uint8 collateralDecimals, uint8 loanDecimals) {
        require(
            AggregatorV3Interface(baseFeed).decimals() == AggregatorV3Interface(quoteFeed).decimals(),
            "feeds of different decimals"
        );
        BASE_FEED = AggregatorV3Interface(baseFeed);
        QUOTE_FEED = AggregatorV3Interface(quoteFeed);
        SCALE_FACTOR = 10 ** (36 + uint256(loanDecimals) - uint256(collateralDecimals));
    }

    function price() external view returns (uint256) {
        (, int256 base,,,) = BASE_FEED.latestRoundData();
        (, int256 quote,,,) = QUOTE_FEED.latestRoundData();
        require(base > 0 && quote > 0, "no price");
        return uint256(base) * SCALE_FACTOR / uint256(quote);
    }
}
