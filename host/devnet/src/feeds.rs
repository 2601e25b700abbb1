//! Chainlink-style USD price feeds on the devnet, one per token at the devnet's prices:
//! Chainlink's `MockV3Aggregator` from the published `@chainlink/contracts` sources
//! (`devnet/contracts/PriceFeed.sol`), 8 decimals like Chainlink's USD feeds. The host's valuer
//! reads them as the operator's trusted prices (`pricing.json` → `feeds`) and refuses an answer
//! older than [`MAX_FEED_AGE_SECS`], as it would a real feed that stopped updating. So the devnet
//! keeps them fresh the way a real feed's heartbeat does: every devnet started from the snapshot
//! re-stamps each feed with its own answer ([`restamp`]), and a devnet left running re-stamps
//! whatever grew half that old ([`keep_fresh`]; a chain moved forward in time ages its feeds
//! too). The re-stamps come from a keeper account of their own, never the wallet's: its nonces
//! stay the host's. A test moves a price with `updateAnswer`.

use super::deployer::{DeployError, Deployer, Token};
use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, I256, U256, address};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol_types::{SolCall, SolValue};
use std::collections::BTreeMap;
use std::time::Duration;

alloy::sol! {
    function latestRoundData() external view returns (uint80 roundId, int256 answer, uint256 startedAt,
        uint256 updatedAt, uint80 answeredInRound);
    function updateAnswer(int256 answer) external;
}

/// Decimals of every devnet feed's answer (Chainlink's USD feeds use 8).
pub const FEED_DECIMALS: u8 = 8;

/// The oldest a feed's answer may be on the devnet (`pricing.json`'s `max_feed_age_secs`).
pub const MAX_FEED_AGE_SECS: u64 = 3_600;

/// The account that re-stamps the feeds (impersonated: it has no key).
pub const FEED_KEEPER: Address = address!("0x000000000000000000000000000000000000fee5");

/// How often a running devnet's keeper looks at its feeds.
pub const KEEPER_EVERY: Duration = Duration::from_secs(15);

/// Deploy one feed per token (keyed by the token's symbol), once compiled.
pub(super) async fn deploy_feeds(
    d: &Deployer,
    tokens: &BTreeMap<String, Token>,
) -> Result<BTreeMap<String, Address>, DeployError> {
    let mut feeds = BTreeMap::new();
    for (symbol, token) in tokens {
        feeds.insert(symbol.clone(), deploy_feed(d, token.usd).await?);
    }
    Ok(feeds)
}

/// One feed answering `usd`.
pub(super) async fn deploy_feed(d: &Deployer, usd: f64) -> Result<Address, DeployError> {
    let answer = I256::try_from((usd * 1e8).round() as i128).unwrap_or_default();
    let args = (U256::from(FEED_DECIMALS), answer).abi_encode_params();
    d.deploy(".bardo-build/BardoPriceFeed.json", args, &BTreeMap::new()).await
}

/// Re-stamp every feed of `feeds` older than `older_than` seconds (by the head's timestamp)
/// with its own answer, from [`FEED_KEEPER`]; how many were re-stamped. `older_than` 0: all.
pub async fn restamp(rpc: &str, feeds: &BTreeMap<String, Address>, older_than: u64) -> Result<usize, String> {
    let url = rpc.parse().map_err(|e| format!("{rpc}: {e}"))?;
    let provider = ProviderBuilder::new().connect_http(url);
    let head = provider
        .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
        .await
        .map_err(|e| format!("reading the head: {e}"))?
        .ok_or("the node has no head")?
        .header
        .timestamp;
    let mut stamped = 0;
    for (symbol, feed) in feeds {
        let read = TransactionRequest::default().to(*feed).with_input(latestRoundDataCall {}.abi_encode());
        let raw = provider.call(read).await.map_err(|e| format!("reading feed {symbol}: {e}"))?;
        let round =
            latestRoundDataCall::abi_decode_returns(&raw).map_err(|e| format!("feed {symbol}: {e}"))?;
        let age = head.saturating_sub(round.updatedAt.saturating_to::<u64>());
        if older_than > 0 && age <= older_than {
            continue;
        }
        if stamped == 0 {
            provider
                .raw_request::<_, ()>("anvil_impersonateAccount".into(), (FEED_KEEPER,))
                .await
                .map_err(|e| format!("impersonating the feed keeper: {e}"))?;
            let ether = U256::from(10u64).pow(U256::from(18u64));
            provider
                .raw_request::<_, ()>("anvil_setBalance".into(), (FEED_KEEPER, ether))
                .await
                .map_err(|e| format!("funding the feed keeper: {e}"))?;
        }
        let tx = TransactionRequest::default()
            .from(FEED_KEEPER)
            .to(*feed)
            .with_input(updateAnswerCall { answer: round.answer }.abi_encode())
            .with_gas_limit(200_000);
        let receipt = provider
            .send_transaction(tx)
            .await
            .map_err(|e| format!("re-stamping feed {symbol}: {e}"))?
            .get_receipt()
            .await
            .map_err(|e| format!("re-stamping feed {symbol}: {e}"))?;
        if !receipt.status() {
            return Err(format!("re-stamping feed {symbol} reverted"));
        }
        stamped += 1;
    }
    Ok(stamped)
}

/// Keep `feeds` fresh on the devnet at `rpc` until `stop` says so: every [`KEEPER_EVERY`],
/// re-stamp each feed older than half of [`MAX_FEED_AGE_SECS`]. A failure is logged through
/// `note` and retried at the next look (a devnet that went away ends it through `stop`).
pub async fn keep_fresh(
    rpc: &str,
    feeds: &BTreeMap<String, Address>,
    stop: impl Fn() -> bool,
    note: impl Fn(&str),
) {
    while !stop() {
        match restamp(rpc, feeds, MAX_FEED_AGE_SECS / 2).await {
            Ok(0) => {}
            Ok(n) => note(&format!("re-stamped {n} price feed(s)")),
            Err(e) => note(&format!("cannot re-stamp the price feeds now: {e}")),
        }
        tokio::time::sleep(KEEPER_EVERY).await;
    }
}
