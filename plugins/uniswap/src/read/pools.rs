//! `uniswap_get_pool_info` and `uniswap_get_pools_by_token_pair`: V2 pairs, V3 and V4 pools.

use super::*;

/// A pool as the read tools report it.
#[derive(Debug, Serialize)]
pub struct PoolInfo {
    pub version: Version,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub address: Address,
    pub token0: Token,
    pub token1: Token,
    /// Fee in hundredths of a bip.
    pub fee: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sqrt_price_x96: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick_spacing: Option<i32>,
    /// V4: the pool's id in the PoolManager (`address` is the PoolManager).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_id: Option<String>,
    /// V4: the pool's hooks contract (the zero address: none).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "bardo_sdk::abi::some_checksummed")]
    pub hooks: Option<Address>,
    /// V4: what the hook may do, by name (from its address bits); a `…ReturnDelta` permission
    /// lets it change what a swap pays or delivers, which the host refuses unless the operator
    /// allowlists the hook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_permissions: Option<Vec<&'static str>>,
    /// In-range liquidity (V3, V4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liquidity: Option<String>,
    /// Reserves in base units (V2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserve0: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserve1: Option<String>,
    /// How many token1 one token0 buys, in human units.
    pub price_token1_per_token0: String,
    /// How many token0 one token1 buys, in human units.
    pub price_token0_per_token1: String,
}

impl From<V3Pool> for PoolInfo {
    fn from(p: V3Pool) -> Self {
        let (p10, p01) = v3_prices(p.sqrt_price_x96, p.token0.decimals, p.token1.decimals);
        Self {
            version: Version::V3,
            address: p.address,
            fee: p.fee,
            sqrt_price_x96: Some(p.sqrt_price_x96.to_string()),
            tick: Some(p.tick),
            tick_spacing: Some(p.tick_spacing),
            pool_id: None,
            hooks: None,
            hook_permissions: None,
            liquidity: Some(p.liquidity.to_string()),
            reserve0: None,
            reserve1: None,
            price_token1_per_token0: p10,
            price_token0_per_token1: p01,
            token0: p.token0,
            token1: p.token1,
        }
    }
}

impl PoolInfo {
    fn v4(p: V4Pool, manager: Address) -> Self {
        Self {
            version: Version::V4,
            address: manager,
            pool_id: Some(p.key.pool_id.to_string()),
            hooks: Some(p.key.hooks),
            hook_permissions: Some(v4::hook_permissions(p.key.hooks)),
            ..Self::from(V3Pool {
                address: manager,
                token0: p.token0,
                token1: p.token1,
                fee: p.fee,
                tick_spacing: p.key.tick_spacing,
                sqrt_price_x96: p.sqrt_price_x96,
                tick: p.tick,
                liquidity: p.liquidity,
            })
        }
    }
}

impl From<V2Pair> for PoolInfo {
    fn from(p: V2Pair) -> Self {
        let (p10, p01) = v2_prices(p.reserve0, p.reserve1, p.token0.decimals, p.token1.decimals);
        Self {
            version: Version::V2,
            address: p.address,
            fee: 3000,
            sqrt_price_x96: None,
            tick: None,
            tick_spacing: None,
            pool_id: None,
            hooks: None,
            hook_permissions: None,
            liquidity: None,
            reserve0: Some(p.reserve0.to_string()),
            reserve1: Some(p.reserve1.to_string()),
            price_token1_per_token0: p10,
            price_token0_per_token1: p01,
            token0: p.token0,
            token1: p.token1,
        }
    }
}

/// Params of `uniswap_get_pool_info`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoolInfoParams {
    /// Chain id, e.g. 1 or 31337.
    pub chain_id: u64,
    /// One token of the pool: a symbol from the configured token list (`WETH`) or an address.
    pub token_a: String,
    /// The other token.
    pub token_b: String,
    /// `v3` (default), `v2` or `v4`.
    #[serde(default)]
    pub version: Option<Version>,
    /// Fee tier in hundredths of a bip (100, 500, 3000, 10000). Default: the tier with the most
    /// in-range liquidity.
    #[serde(default)]
    pub fee: Option<u32>,
    /// V4: the pool key's tick spacing (with `fee`; default the tier's standard one).
    #[serde(default)]
    pub tick_spacing: Option<i32>,
    /// V4: the pool key's hooks contract (with `fee`; default none).
    #[serde(default)]
    pub hooks: Option<String>,
}

/// The V4 pools of `a`/`b` a read names: a pool key when `tick_spacing` or `hooks` is given
/// (`fee` then required), else every standard tier without hooks. `ETH` is native ether, the
/// zero address in V4 keys.
fn v4_pools_of(
    chain_id: ChainId,
    book: &Book,
    (a, b): (&str, &str),
    fee: Option<u32>,
    key: (Option<i32>, Option<&str>),
) -> Result<Vec<V4Pool>, Error> {
    let side = |field: &str, input: &str| {
        if crate::native::is_native(input) {
            Ok(crate::native::eth())
        } else {
            book.token(chain_id, field, input)
        }
    };
    let (ta, tb) = (side("token_a", a)?, side("token_b", b)?);
    if ta.address == tb.address {
        return Err(invalid_params("`token_a` and `token_b` are the same token; pick two different tokens"));
    }
    if key == (None, None) {
        return v4::pools(chain_id, book, &ta, &tb, fee);
    }
    let fee = fee.ok_or_else(|| invalid_params("a V4 pool key needs `fee` with `tick_spacing` / `hooks`"))?;
    let key = v4::key_params(fee, key.0, key.1)?;
    Ok(v4::hooked_pool(chain_id, book, &ta, &tb, key)?.into_iter().collect())
}

pub struct GetPoolInfo;

impl ReadTool for GetPoolInfo {
    const NAME: &'static str = "uniswap_get_pool_info";
    type Params = PoolInfoParams;
    type Output = PoolInfo;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet:
                "uniswap_get_pool_info: one Uniswap pool's tokens, fee, price, tick and liquidity".into(),
            progress_steps: vec!["resolve tokens".into(), "read pool".into()],
            prompt_guidelines: guidelines(&[
                (Phase::Cautious, "Check liquidity before sizing a trade against a pool."),
                (Phase::Survival, "Read only what the next exit needs."),
            ]),
            ..tool_def::<PoolInfoParams>(
                Self::NAME,
                "Reads one Uniswap pool (V3 by default, the V2 pair, or a V4 pool by its key): its tokens with symbol and decimals, \
                 fee tier, sqrtPriceX96, tick, in-range liquidity (V2: reserves), and the price both ways in \
                 human units. Use it to inspect a market before quoting or trading. It does not quote an \
                 amount (use uniswap_get_quote) and does not list every fee tier (use \
                 uniswap_get_pools_by_token_pair).",
                Category::Data,
            )
        }
    }

    fn run(p: PoolInfoParams) -> Result<PoolInfo, Error> {
        let book = book(p.chain_id)?;
        if p.version == Some(Version::V4) {
            events::progress(1);
            let manager = book.v4_pool_manager.unwrap_or_default();
            let key = (p.tick_spacing, p.hooks.as_deref());
            let pools = v4_pools_of(p.chain_id, &book, (&p.token_a, &p.token_b), p.fee, key)?;
            let best = pools.into_iter().max_by_key(|pool| pool.liquidity);
            return best.map(|pool| PoolInfo::v4(pool, manager)).ok_or_else(|| {
                not_found(format!(
                    "no V4 pool of {}/{}{} on chain {}; list the pools with uniswap_get_pools_by_token_pair",
                    p.token_a,
                    p.token_b,
                    match (p.fee, p.tick_spacing, &p.hooks) {
                        (Some(f), None, None) => format!(" at fee {f}"),
                        (Some(f), s, h) => format!(
                            " with fee {f}, tick spacing {}, hooks {}",
                            s.map_or("standard".into(), |s| s.to_string()),
                            h.as_deref().unwrap_or("none")
                        ),
                        _ => String::new(),
                    },
                    p.chain_id
                ))
            });
        }
        if p.tick_spacing.is_some() || p.hooks.is_some() {
            return Err(invalid_params(
                "`tick_spacing` and `hooks` name a V4 pool; add `\"version\": \"v4\"`",
            ));
        }
        check_fee(p.fee)?;
        events::progress(0);
        let (a, b) = pair(p.chain_id, &book, &p.token_a, &p.token_b, ["token_a", "token_b"])?;
        events::progress(1);
        let missing = || {
            not_found(format!(
                "no {} pool of {}/{} on chain {}; list the pools with uniswap_get_pools_by_token_pair",
                p.version.unwrap_or(Version::V3).name(),
                a.symbol,
                b.symbol,
                p.chain_id
            ))
        };
        if p.version == Some(Version::V2) {
            return v2_pair(p.chain_id, &book, &a, &b)?.map(PoolInfo::from).ok_or_else(missing);
        }
        let mut best: Option<V3Pool> = None;
        for fee in FEE_TIERS.into_iter().filter(|f| p.fee.is_none_or(|want| want == *f)) {
            if let Some(pool) = v3_pool(p.chain_id, &book, &a, &b, fee)?
                && best.as_ref().is_none_or(|b| pool.liquidity > b.liquidity)
            {
                best = Some(pool);
            }
        }
        best.map(PoolInfo::from).ok_or_else(missing)
    }
}

/// Params of `uniswap_get_pools_by_token_pair`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PairParams {
    /// Chain id.
    pub chain_id: u64,
    /// One token: a listed symbol or an address.
    pub token_a: String,
    /// The other token.
    pub token_b: String,
}

pub struct GetPoolsByTokenPair;

impl ReadTool for GetPoolsByTokenPair {
    const NAME: &'static str = "uniswap_get_pools_by_token_pair";
    type Params = PairParams;
    type Output = Vec<PoolInfo>;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet: "uniswap_get_pools_by_token_pair: every Uniswap pool of a token pair".into(),
            progress_steps: vec!["resolve tokens".into(), "query factories".into()],
            prompt_guidelines: guidelines(&[(
                Phase::Thriving,
                "Compare fee tiers: deep low-fee pools are cheapest for large trades.",
            )]),
            ..tool_def::<PairParams>(
                Self::NAME,
                "Lists every Uniswap pool of a token pair: each V3 fee tier that exists (100, 500, 3000, \
                 10000), the V2 pair, and the V4 pools without hooks at those tiers (by pool id; with `ETH`, \
                 the pools of WETH and of native ether), with price and liquidity. Use it to pick a \
                 fee tier or compare depth. It does not quote amounts.",
                Category::Data,
            )
        }
    }

    fn run(p: PairParams) -> Result<Vec<PoolInfo>, Error> {
        let book = book(p.chain_id)?;
        events::progress(0);
        // `ETH`: V2 and V3 pools of WETH, V4 pools of WETH and of ether itself.
        let (a, native_a) = crate::native::pool_token(p.chain_id, &book, "token_a", &p.token_a)?;
        let (b, native_b) = crate::native::pool_token(p.chain_id, &book, "token_b", &p.token_b)?;
        if a.address == b.address {
            return Err(invalid_params(
                "`token_a` and `token_b` are the same token; pick two different tokens",
            ));
        }
        events::progress(1);
        let mut pools = Vec::new();
        for fee in FEE_TIERS {
            if let Some(pool) = v3_pool(p.chain_id, &book, &a, &b, fee)? {
                pools.push(PoolInfo::from(pool));
            }
        }
        if let Some(pair) = v2_pair(p.chain_id, &book, &a, &b)? {
            pools.push(PoolInfo::from(pair));
        }
        let manager = book.v4_pool_manager.unwrap_or_default();
        let mut v4_pools = v4::pools(p.chain_id, &book, &a, &b, None)?;
        if native_a || native_b {
            let weth = if native_a { a.address } else { b.address };
            v4_pools.extend(v4::native_pools(p.chain_id, &book, (&a, &b), weth, (None, None))?);
        }
        pools.extend(v4_pools.into_iter().map(|pool| PoolInfo::v4(pool, manager)));
        Ok(pools)
    }
}
