//! `uniswap_get_quote`: every route's quote and the best.

use super::*;

/// Params of `uniswap_get_quote`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuoteParams {
    /// Chain id.
    pub chain_id: u64,
    /// Token sold: a listed symbol, an address, or `ETH` (quoted as WETH).
    pub token_in: String,
    /// Token bought.
    pub token_out: String,
    /// Amount in token units as a decimal string ("1.5"): of `token_in` for `exact_in`, of
    /// `token_out` for `exact_out`.
    pub amount: String,
    /// `exact_in` (default) or `exact_out`.
    #[serde(default)]
    pub side: Side,
    /// Restrict to `v4`, `v3` or `v2`; default: the best of all.
    #[serde(default)]
    pub version: Option<Version>,
    /// Restrict to one fee tier (hundredths of a bip).
    #[serde(default)]
    pub fee: Option<u32>,
    /// Quote one V4 pool with a hook: the hook's address (with `fee`; the pool key's
    /// `tick_spacing` if not the fee's standard one).
    #[serde(default)]
    pub hooks: Option<String>,
    /// A V4 pool key's tick spacing (with `fee`).
    #[serde(default)]
    pub tick_spacing: Option<i32>,
}

/// A route's quote for output.
#[derive(Debug, Serialize)]
pub struct RouteQuote {
    pub route: Route,
    /// A two-hop route's second pool, after `route`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub then: Option<Hop>,
    pub amount_in: String,
    pub amount_out: String,
    pub amount_in_base: String,
    pub amount_out_base: String,
}

impl RouteQuote {
    pub fn new(q: &Quote, tin: &Token, tout: &Token) -> Self {
        Self {
            route: q.route,
            then: q.then,
            amount_in: format_units(q.amount_in, tin.decimals),
            amount_out: format_units(q.amount_out, tout.decimals),
            amount_in_base: q.amount_in.to_string(),
            amount_out_base: q.amount_out.to_string(),
        }
    }
}

/// Result of `uniswap_get_quote`.
#[derive(Debug, Serialize)]
pub struct QuoteOutput {
    pub token_in: Token,
    pub token_out: Token,
    pub side: Side,
    /// The best route.
    pub best: RouteQuote,
    /// Every route that can fill the amount, best first.
    pub routes: Vec<RouteQuote>,
    /// Routes that can fill only part of it: what each would really take and give.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partial: Vec<RouteQuote>,
}

/// Parse and check the amount of a quote or swap: positive, in the fixed side's token units.
pub fn fixed_amount(p_amount: &str, side: Side, tin: &Token, tout: &Token) -> Result<U256, Error> {
    let token = if side == Side::ExactIn { tin } else { tout };
    let amount = parse_units("amount", p_amount, token.decimals)?;
    if amount.is_zero() {
        return Err(invalid_params("`amount` is zero; give a positive amount"));
    }
    Ok(amount)
}

pub struct GetQuote;

impl ReadTool for GetQuote {
    const NAME: &'static str = "uniswap_get_quote";
    type Params = QuoteParams;
    type Output = QuoteOutput;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet: "uniswap_get_quote: how much a Uniswap swap would give or cost, best route"
                .into(),
            progress_steps: vec!["resolve tokens".into(), "quote routes".into()],
            tick_budget: TickBudget::Medium,
            prompt_guidelines: guidelines(&[
                (Phase::Cautious, "Quote before every swap and compare with data_get_token_price."),
                (Phase::Terminal, "Quote only exits to the quote token."),
            ]),
            ..tool_def::<QuoteParams>(
                Self::NAME,
                "Quotes a swap exact-in or exact-out through the contracts (V4Quoter and V3 QuoterV2 per fee \
                 tier, V2 Router02 getAmountsOut/In) and picks the best route among fee tiers and versions, \
                 directly or through WETH. Use it \
                 before uniswap_execute_swap to see the price and route. It does not trade and does not \
                 include gas costs.",
                Category::Data,
            )
        }
    }

    fn run(p: QuoteParams) -> Result<QuoteOutput, Error> {
        let filter = Filter::of(p.version, p.fee, (p.tick_spacing, p.hooks.as_deref()), None)?;
        let book = book(p.chain_id)?;
        events::progress(0);
        // ETH quotes as WETH (the router wraps and unwraps it).
        let (tin, native_in) = crate::native::pool_token(p.chain_id, &book, "token_in", &p.token_in)?;
        let (tout, native_out) = crate::native::pool_token(p.chain_id, &book, "token_out", &p.token_out)?;
        if tin.address == tout.address {
            return Err(invalid_params(
                "`token_in` and `token_out` are the same token (ETH trades as WETH); pick two different tokens",
            ));
        }
        let amount = fixed_amount(&p.amount, p.side, &tin, &tout)?;
        events::progress(1);
        let native = match (native_in, native_out) {
            (true, _) => Some(tin.address),
            (_, true) => Some(tout.address),
            _ => None,
        };
        let filter = Filter { native, ..filter };
        let all = quotes(p.chain_id, &book, &tin, &tout, amount, p.side, filter)?;
        let routes: Vec<RouteQuote> = all.full.iter().map(|q| RouteQuote::new(q, &tin, &tout)).collect();
        let partial: Vec<RouteQuote> = all.partial.iter().map(|q| RouteQuote::new(q, &tin, &tout)).collect();
        let best = RouteQuote::new(&all.full[0], &tin, &tout);
        let show = |t: Token, native: bool| if native { crate::native::eth() } else { t };
        Ok(QuoteOutput {
            token_in: show(tin, native_in),
            token_out: show(tout, native_out),
            side: p.side,
            best,
            routes,
            partial,
        })
    }
}
