//! Chainlink-style USD price feeds on the devnet, one per token at the devnet's prices:
//! Chainlink's `MockV3Aggregator` from the published `@chainlink/contracts` sources
//! (`devnet/contracts/PriceFeed.sol`), 8 decimals like Chainlink's USD feeds. The host's valuer
//! reads them as the operator's trusted prices (`pricing.json` → `feeds`); a test moves a price
//! with `updateAnswer`.

use super::deployer::{DeployError, Deployer, Token};
use alloy::primitives::{Address, I256, U256};
use alloy::sol_types::SolValue;
use std::collections::BTreeMap;

/// Decimals of every devnet feed's answer (Chainlink's USD feeds use 8).
pub const FEED_DECIMALS: u8 = 8;

/// Deploy one feed per token (keyed by the token's symbol), once compiled.
pub(super) async fn deploy_feeds(
    d: &Deployer,
    tokens: &BTreeMap<String, Token>,
) -> Result<BTreeMap<String, Address>, DeployError> {
    let none = BTreeMap::new();
    let mut feeds = BTreeMap::new();
    for (symbol, token) in tokens {
        let answer = I256::try_from((token.usd * 1e8).round() as i128).unwrap_or_default();
        let args = (U256::from(FEED_DECIMALS), answer).abi_encode_params();
        let feed = d.deploy(".bardo-build/BardoPriceFeed.json", args, &none).await?;
        feeds.insert(symbol.clone(), feed);
    }
    Ok(feeds)
}
