//! `uniswap_get_token_info` and `data_get_token_price`.

use super::*;

/// Params of `uniswap_get_token_info`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenParams {
    /// Chain id.
    pub chain_id: u64,
    /// A listed symbol or an address.
    pub token: String,
}

/// Result of `uniswap_get_token_info`.
#[derive(Debug, Serialize)]
pub struct TokenInfo {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub address: Address,
    pub symbol: String,
    pub name: String,
    pub decimals: u8,
    pub total_supply: String,
    pub total_supply_base: String,
    /// Whether the operator's token list for this chain contains the address.
    pub listed: bool,
}

pub struct GetTokenInfo;

impl ReadTool for GetTokenInfo {
    const NAME: &'static str = "uniswap_get_token_info";
    type Params = TokenParams;
    type Output = TokenInfo;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet: "uniswap_get_token_info: a token's symbol, name, decimals, supply".into(),
            progress_steps: vec!["resolve token".into(), "read metadata".into()],
            prompt_guidelines: guidelines(&[(
                Phase::Cautious,
                "Prefer listed tokens; an unlisted token may be a lookalike.",
            )]),
            ..tool_def::<TokenParams>(
                Self::NAME,
                "Reads an ERC-20 token on chain: symbol, name, decimals and total supply, and whether the \
                 operator's token list includes it. Use it to check a token before trading it. It does not \
                 price the token (use data_get_token_price).",
                Category::Data,
            )
        }
    }

    fn run(p: TokenParams) -> Result<TokenInfo, Error> {
        let book = book(p.chain_id)?;
        events::progress(0);
        let t = book.token(p.chain_id, "token", &p.token)?;
        events::progress(1);
        let supply = erc20::total_supply(p.chain_id, t.address)?;
        Ok(TokenInfo {
            name: erc20::name(p.chain_id, t.address)?,
            listed: book.tokens.iter().any(|l| l.address == t.address),
            total_supply: format_units(supply, t.decimals),
            total_supply_base: supply.to_string(),
            address: t.address,
            symbol: t.symbol,
            decimals: t.decimals,
        })
    }
}

/// Params of `data_get_token_price`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PriceParams {
    /// Chain id.
    pub chain_id: u64,
    /// The token to price: a listed symbol or an address.
    pub token: String,
    /// What to price it in; default: the chain's configured quote token (USDC).
    #[serde(default)]
    pub quote_token: Option<String>,
}

/// Result of `data_get_token_price`.
#[derive(Debug, Serialize)]
pub struct PriceOutput {
    pub token: Token,
    pub quote_token: Token,
    /// Quote-token units per one token, from the pool's spot price.
    pub price: String,
    /// The deepest pool, which the price comes from (absent when the token is the quote token).
    pub source: Option<Route>,
    /// How much quote token that pool holds, human units.
    pub pool_quote_balance: Option<String>,
}

pub struct GetTokenPrice;

impl ReadTool for GetTokenPrice {
    const NAME: &'static str = "data_get_token_price";
    type Params = PriceParams;
    type Output = PriceOutput;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet: "data_get_token_price: a token's spot price from its deepest Uniswap pool".into(),
            progress_steps: vec!["resolve tokens".into(), "find deepest pool".into()],
            tick_budget: TickBudget::Medium,
            prompt_guidelines: guidelines(&[(
                Phase::Cautious,
                "Spot prices move; value positions with a margin.",
            )]),
            ..tool_def::<PriceParams>(
                Self::NAME,
                "Prices a token in the configured quote token (USDC unless set) from the spot price of its \
                 deepest Uniswap pool (V3 fee tiers and V2, by quote-token balance). Use it for valuations. \
                 It is a spot price, not an execution price: for a trade, use uniswap_get_quote.",
                Category::Data,
            )
        }
    }

    fn run(p: PriceParams) -> Result<PriceOutput, Error> {
        let book = book(p.chain_id)?;
        events::progress(0);
        let token = book.token(p.chain_id, "token", &p.token)?;
        let quote =
            book.token(p.chain_id, "quote_token", p.quote_token.as_deref().unwrap_or(&book.quote_token))?;
        if token.address == quote.address {
            return Ok(PriceOutput {
                token,
                quote_token: quote,
                price: "1".into(),
                source: None,
                pool_quote_balance: None,
            });
        }
        events::progress(1);
        // (quote balance of the pool, route, price in quote per token)
        let mut best: Option<(U256, Route, String)> = None;
        let mut consider = |balance: U256, route: Route, price: String| {
            if best.as_ref().is_none_or(|(b, _, _)| balance > *b) {
                best = Some((balance, route, price));
            }
        };
        let quote_is_1 = quote.address > token.address;
        for fee in FEE_TIERS {
            if let Some(pool) = v3_pool(p.chain_id, &book, &token, &quote, fee)? {
                let balance = erc20::balance_of(p.chain_id, quote.address, pool.address)?;
                let (p10, p01) = v3_prices(pool.sqrt_price_x96, pool.token0.decimals, pool.token1.decimals);
                let route = Route { version: Version::V3, fee, pool: pool.address, v4: None };
                consider(balance, route, if quote_is_1 { p10 } else { p01 });
            }
        }
        if let Some(pair) = v2_pair(p.chain_id, &book, &token, &quote)? {
            let balance = if quote_is_1 { pair.reserve1 } else { pair.reserve0 };
            let (p10, p01) =
                v2_prices(pair.reserve0, pair.reserve1, pair.token0.decimals, pair.token1.decimals);
            let route = Route { version: Version::V2, fee: 3000, pool: pair.address, v4: None };
            consider(balance, route, if quote_is_1 { p10 } else { p01 });
        }
        let (balance, route, price) = best.ok_or_else(|| {
            not_found(format!(
                "no Uniswap pool pairs {} with {} on chain {}; price it against another quote_token",
                token.symbol, quote.symbol, p.chain_id
            ))
        })?;
        Ok(PriceOutput {
            pool_quote_balance: Some(format_units(balance, quote.decimals)),
            token,
            quote_token: quote,
            price,
            source: Some(route),
        })
    }
}
