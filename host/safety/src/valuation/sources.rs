//! Where a token's price comes from: the trusted sources its chain's pricing config lists — a
//! Chainlink-style feed (fresh: [`DEFAULT_MAX_FEED_AGE_SECS`] unless configured), the Aave
//! oracle (a source of its own only when it reads another aggregator than the feed), a
//! canonical pool's time-weighted price — every one that answers agreeing within
//! `max_divergence_bps`; and how many independent sources that was, so that a volatile token
//! priced by one source alone is valued only up to `single_source_max_usd`.

use super::{CanonicalPool, PricingConfig, Valuer, pow10, price_from_sqrt, price_text};
use alloy::primitives::{Address, U512};

alloy::sol! {
    function latestRoundData() external view returns (uint80 roundId, int256 answer, uint256 startedAt,
        uint256 updatedAt, uint80 answeredInRound);
    function decimals() external view returns (uint8);
    function liquidity() external view returns (uint128);
    function observe(uint32[] secondsAgos) external view returns (int56[] tickCumulatives,
        uint160[] secondsPerLiquidityCumulativeX128s);
    function getAssetPrice(address asset) external view returns (uint256);
    function getSourceOfAsset(address asset) external view returns (address);
    function BASE_CURRENCY_UNIT() external view returns (uint256);
}

/// Default `max_feed_age_secs`: a feed's answer older than an hour is stale (Chainlink's
/// volatile USD feeds update at least hourly).
pub const DEFAULT_MAX_FEED_AGE_SECS: u64 = 3_600;

/// Default `single_source_max_usd`: the most of a volatile token one source alone may value.
pub const DEFAULT_SINGLE_SOURCE_MAX_USD: u64 = 1_000;

/// How a token's price is vouched for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sources {
    /// A dollar token the operator lists: $1 by definition.
    Dollar,
    /// One source alone (named): nothing could catch it lying.
    One(String),
    /// Several independent sources, all agreeing.
    Agreeing(u8),
}

impl Valuer {
    /// USD per whole `token`, 18 decimals: $1 for a dollar token; else what its trusted sources
    /// say (feed, Aave oracle, canonical pool), all of them agreeing; a token none prices is
    /// unpriced, an error.
    pub(crate) fn price(&self, chain: u64, config: &PricingConfig, token: Address) -> Result<U512, String> {
        self.priced(chain, config, token, 0).map(|(price, _)| price)
    }

    /// [`Self::price`] and the sources that gave it; `depth` 1 inside a canonical pool's quote.
    pub(crate) fn priced(
        &self,
        chain: u64,
        config: &PricingConfig,
        token: Address,
        depth: u8,
    ) -> Result<(U512, Sources), String> {
        if config.usd_tokens.contains(&token) {
            return Ok((pow10(18), Sources::Dollar));
        }
        let mut sources: Vec<(String, U512)> = Vec::new();
        let feed = config.feeds.get(&token).copied();
        if let Some(feed) = feed {
            sources.push((format!("feed {feed}"), self.feed_price(chain, config, feed)?));
        }
        if let Some(price) = self.oracle_price(chain, config, token, feed) {
            sources.push(("the Aave oracle".into(), price));
        }
        if let Some(canonical) = config.canonical_pools.get(&token) {
            // One level deep: the pool's other token is priced by a feed, the oracle or $1.
            if depth > 0 {
                return Err(format!(
                    "{token} is priced by canonical pool {} against a token that is itself priced by a canonical pool; list a feed for one of them",
                    canonical.pool
                ));
            }
            let price = self.canonical_price(chain, config, token, canonical)?;
            sources.push((format!("canonical pool {}", canonical.pool), price));
        }
        let Some((first, price)) = sources.first().cloned() else {
            return Err(format!(
                "{token} is unpriced on chain {chain}: no trusted source prices it (no feed, Aave oracle price or canonical pool in its pricing config); a write that cannot be valued is refused. If the operator trusts this token, list a price source for it under [safety.pricing.{chain}]"
            ));
        };
        for (name, other) in &sources[1..] {
            agree(token, (&first, price), (name, *other), config.max_divergence_bps)?;
        }
        let vouched = match sources.len() {
            1 => Sources::One(first),
            n => Sources::Agreeing(u8::try_from(n).unwrap_or(u8::MAX)),
        };
        Ok((price, vouched))
    }

    /// USD per whole token (18 decimals) from a Chainlink-style feed: a positive answer of the
    /// round it reports, no older than `max_feed_age_secs` — by the later of this machine's
    /// clock and the chain's head, so a chain moved forward in time ages its feeds too.
    fn feed_price(&self, chain: u64, config: &PricingConfig, feed: Address) -> Result<U512, String> {
        let round = self.read(chain, feed, latestRoundDataCall {})?;
        let decimals = self.read(chain, feed, decimalsCall {})?;
        let max = config.max_feed_age_secs.unwrap_or(DEFAULT_MAX_FEED_AGE_SECS);
        let updated = round.updatedAt.saturating_to::<u64>();
        let age = self.now(chain)?.saturating_sub(updated);
        let setting = format!("max_feed_age_secs = {max} ([safety] or [safety.pricing.{chain}])");
        if !round.answer.is_positive() {
            return Err(format!(
                "feed {feed} answers {} (updated {age} s ago): a zero or negative price cannot value anything; the feed is broken — fix it or list another source under [safety.pricing.{chain}]",
                round.answer
            ));
        }
        if updated == 0 || age > max || round.answeredInRound < round.roundId {
            return Err(format!(
                "feed {feed} last answered {age} s ago, older than {setting}: its price is stale, and nothing is valued by it until the feed updates"
            ));
        }
        if decimals > 36 {
            return Err(format!("feed {feed} reports {decimals} decimals; the valuer handles at most 36"));
        }
        Ok(U512::from(round.answer.unsigned_abs()) * pow10(18) / pow10(decimals))
    }

    /// Unix seconds now on `chain`: the later of this machine's clock and its head's timestamp.
    fn now(&self, chain: u64) -> Result<u64, String> {
        let chains = &self.services.evm.chains;
        let client = chains.get(chain).map_err(|e| e.to_string())?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        let head = chains
            .block_on(client.block_timestamp(None, deadline))
            .map_err(|e| format!("reading the head's timestamp: {e}"))?;
        let clock =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        Ok(head.max(clock))
    }

    /// USD per whole `token` (18 decimals) from its canonical pool's time-weighted price over
    /// the window, times the pool's other token's trusted price.
    fn canonical_price(
        &self,
        chain: u64,
        config: &PricingConfig,
        token: Address,
        canonical: &CanonicalPool,
    ) -> Result<U512, String> {
        let pool = canonical.pool;
        let (token0, token1) = self.pool_tokens(chain, pool)?;
        let quote = match token {
            t if t == token0 => token1,
            t if t == token1 => token0,
            _ => return Err(format!("canonical pool {pool} of {token} does not hold {token}")),
        };
        let liquidity = self.read(chain, pool, liquidityCall {})?;
        if liquidity < canonical.min_liquidity {
            return Err(format!(
                "canonical pool {pool} of {token} has {liquidity} liquidity in range, under its min_liquidity {}",
                canonical.min_liquidity
            ));
        }
        let window = canonical.window_secs.max(1);
        let observed = self
            .read(chain, pool, observeCall { secondsAgos: vec![window, 0] })
            .map_err(|e| format!("{e}; the canonical pool needs observations {window} s old (increaseObservationCardinalityNext)"))?;
        let cumulatives: Vec<i64> = observed.tickCumulatives.iter().map(|c| c.as_i64()).collect();
        let mean = mean_tick(&cumulatives, window)
            .ok_or_else(|| format!("canonical pool {pool} returned no tick cumulatives"))?;
        let sqrt = bardo_uniswap_math::sqrt_price_at_tick(mean).map_err(|e| e.to_string())?;
        let quote_usd = self.priced(chain, config, quote, 1)?.0;
        let (decimals, quote_decimals) = (self.decimals(chain, token)?, self.decimals(chain, quote)?);
        price_from_sqrt(U512::from(sqrt), token == token0, decimals, quote_decimals, quote_usd)
            .filter(|p| !p.is_zero())
            .ok_or_else(|| {
                format!("canonical pool {pool} prices {token} at zero or beyond the valuer's range")
            })
    }

    /// The Aave oracle's USD price of `token` (18 decimals); None without an oracle, when it has
    /// no source for the token (`getAssetPrice` reverts) or answers zero — and when its source
    /// is `feed` itself, which would count one aggregator twice.
    fn oracle_price(
        &self,
        chain: u64,
        config: &PricingConfig,
        token: Address,
        feed: Option<Address>,
    ) -> Option<U512> {
        let oracle = config.aave_oracle?;
        let price =
            self.read(chain, oracle, getAssetPriceCall { asset: token }).ok().filter(|p| !p.is_zero())?;
        if feed.is_some() && self.read(chain, oracle, getSourceOfAssetCall { asset: token }).ok() == feed {
            return None;
        }
        // Aave's USD markets quote in 8 decimals; read the unit rather than assume it.
        let unit = self.read(chain, oracle, BASE_CURRENCY_UNITCall {}).ok().filter(|u| !u.is_zero())?;
        U512::from(price).checked_mul(pow10(18))?.checked_div(U512::from(unit))
    }
}

/// Nothing when the second source is within `max_bps` of the first; otherwise an error naming both.
fn agree(token: Address, first: (&str, U512), second: (&str, U512), max_bps: u32) -> Result<(), String> {
    let ((a_name, a), (b_name, b)) = (first, second);
    let bps = a.abs_diff(b).saturating_mul(U512::from(10_000u32)).checked_div(b).unwrap_or(U512::MAX);
    if bps > U512::from(max_bps) {
        return Err(format!(
            "price sources disagree: {a_name} prices {token} at {} but {b_name} at {} ({bps} bps apart, over max_divergence_bps {max_bps}); valuing it is refused until they agree",
            price_text(a),
            price_text(b)
        ));
    }
    Ok(())
}
/// The arithmetic mean tick over `window` seconds from `observe([window, 0])`'s cumulatives,
/// rounded toward negative infinity as Uniswap's `OracleLibrary.consult` does.
fn mean_tick(cumulatives: &[i64], window: u32) -> Option<i32> {
    let (then, now) = (*cumulatives.first()?, *cumulatives.get(1)?);
    let delta = i128::from(now) - i128::from(then);
    let window = i128::from(window);
    let mut tick = delta / window;
    if delta < 0 && delta % window != 0 {
        tick -= 1;
    }
    i32::try_from(tick).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::valuation::usd;

    #[test]
    fn prices_that_drift_apart_are_refused() {
        let t = Address::ZERO;
        let dollars = |d: u64| pow10(18) * U512::from(d);
        assert!(agree(t, ("feed", dollars(2_000)), ("oracle", dollars(1_950)), 500).is_ok());
        let err = agree(t, ("feed", dollars(2_000)), ("oracle", dollars(1_000)), 500).expect_err("50% apart");
        assert!(
            err.contains("disagree") && err.contains("feed prices") && err.contains("$2000.000000"),
            "{err}"
        );
        assert!(err.contains("but oracle at $1000.000000"), "{err}");
        assert_eq!(price_text(pow10(15)), "$0.001000");
        assert_eq!(usd(1_234_560_000), "$1234.56");
    }

    #[test]
    fn a_mean_tick_rounds_toward_negative_infinity() {
        assert_eq!(mean_tick(&[0, 1_800 * 200], 1_800), Some(200));
        assert_eq!(mean_tick(&[1_000, 1_000 - 1_800 * 200], 1_800), Some(-200));
        assert_eq!(mean_tick(&[0, -1], 1_800), Some(-1), "a fraction below zero is the tick below");
        assert_eq!(mean_tick(&[0, 1], 1_800), Some(0));
        assert_eq!(mean_tick(&[0], 1_800), None);
    }
}
