//! The read tools: the listed markets, one market, an account's positions, and quotes from
//! Pendle's static router.

use crate::abi::{RouterStatic, TokenAmount};
use crate::market::{MarketRef, State, Venue, in_asset, ln_to_percent, venue, wad_decimal};
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{account_or_wallet, eth_call};
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::errors::invalid_params;
use bardo_sdk::units::{Amount, parse_units};
use bardo_sdk::{
    Category, ChainId, ChainParams, Error, Phase, ReadTool, TickBudget, ToolDef, guidelines, tool_def,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn def<P: JsonSchema>(name: &str, description: &str, snippet: &str) -> ToolDef {
    ToolDef {
        tick_budget: TickBudget::Medium,
        progress_steps: vec![
            "read the listed markets".into(),
            "read Pendle's static router and oracle".into(),
        ],
        prompt_snippet: format!("{name}: {snippet}"),
        prompt_guidelines: guidelines(&[(
            Phase::Defensive,
            "A PT's fixed yield holds only to maturity; check the days left and the implied APY against the \
             underlying's own yield before buying, and YT's value falls to zero at maturity.",
        )]),
        ..tool_def::<P>(name, description, Category::Yield)
    }
}

/// Params naming one market.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MarketParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// A listed market: its name (`PT-bvUSDC`) or address.
    pub market: String,
}

/// Prices of one market's tokens in its asset.
#[derive(Debug, Serialize)]
pub struct Prices {
    /// Asset per PT.
    pub pt: String,
    /// Asset per YT.
    pub yt: String,
    /// Asset per LP token.
    pub lp: String,
}

/// A market with its state.
#[derive(Debug, Serialize)]
pub struct MarketInfo {
    #[serde(flatten)]
    pub market: MarketRef,
    /// Whole days to maturity (0 once matured).
    pub days_to_maturity: u64,
    pub expired: bool,
    /// The yearly fixed yield a PT bought now earns to maturity (percent, compounded), from the
    /// last trade's rate.
    pub implied_apy: String,
    /// At the last trade's rate.
    pub spot: Prices,
    /// Averaged by the PT/YT/LP oracle over `twap_secs` (what the host values positions at).
    pub twap: Prices,
    pub twap_secs: u32,
    /// Asset per SY (the vault's share price).
    pub sy_exchange_rate: String,
    /// Reserves.
    pub total_pt: Amount,
    pub total_sy: Amount,
    pub total_lp: Amount,
    /// Both reserves in the asset, at spot.
    pub liquidity: Amount,
    /// The fee rate on a trade's implied rate, yearly percent.
    pub fee_rate: String,
    /// The share of fees the treasury keeps, percent.
    pub reserve_fee_percent: String,
}

fn info(v: &Venue, m: MarketRef, s: &State) -> MarketInfo {
    let prices = |pt, yt, lp| Prices { pt: wad_decimal(pt), yt: wad_decimal(yt), lp: wad_decimal(lp) };
    let liquidity = in_asset(s.total_pt, s.pt_spot) + in_asset(s.total_sy, s.sy_rate);
    MarketInfo {
        days_to_maturity: m.expiry.saturating_sub(s.now) / 86_400,
        expired: s.expired,
        implied_apy: ln_to_percent(s.ln_implied_rate),
        spot: prices(s.pt_spot, s.yt_spot, s.lp_spot),
        twap: prices(s.pt_twap, s.yt_twap, s.lp_twap),
        twap_secs: v.twap_secs,
        sy_exchange_rate: wad_decimal(s.sy_rate),
        total_pt: Amount::of(s.total_pt, m.pt.decimals),
        total_sy: Amount::of(s.total_sy, m.sy.decimals),
        total_lp: Amount::of(s.total_lp, 18),
        liquidity: Amount::of(liquidity, m.asset.decimals),
        fee_rate: ln_to_percent(s.ln_fee_rate_root),
        reserve_fee_percent: s.reserve_fee_percent.to_string(),
        market: m,
    }
}

pub struct GetMarkets;

impl ReadTool for GetMarkets {
    const NAME: &'static str = "pendle_get_markets";
    type Params = ChainParams;
    type Output = Vec<MarketInfo>;

    fn def() -> ToolDef {
        def::<ChainParams>(
            Self::NAME,
            "The operator's Pendle V2 markets on a chain: each one's SY, PT and YT, the asset, maturity and days \
             left, implied APY, PT/YT/LP prices in the asset (spot and the oracle's TWAP), the SY exchange \
             rate, reserves, liquidity and fees.",
            "the operator's Pendle fixed-yield markets with implied APY, prices and maturity",
        )
    }

    fn run(p: ChainParams) -> Result<Vec<MarketInfo>, Error> {
        let v = venue(p.chain_id)?;
        v.markets()?.into_iter().map(|m| Ok(info(&v, m.clone(), &v.state(&m)?))).collect()
    }
}

pub struct GetMarket;

impl ReadTool for GetMarket {
    const NAME: &'static str = "pendle_get_market";
    type Params = MarketParams;
    type Output = MarketInfo;

    fn def() -> ToolDef {
        def::<MarketParams>(
            Self::NAME,
            "One Pendle V2 market: its SY, PT and YT, maturity, implied APY, PT/YT/LP prices in the asset (spot \
             and TWAP), SY exchange rate, reserves, liquidity and fees.",
            "one Pendle market's implied APY, prices and liquidity",
        )
    }

    fn run(p: MarketParams) -> Result<MarketInfo, Error> {
        let v = venue(p.chain_id)?;
        let m = v.find(&p.market)?;
        let s = v.state(&m)?;
        Ok(info(&v, m, &s))
    }
}

/// Params naming an account.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The account (an address); default: the wallet.
    #[serde(default)]
    pub account: Option<String>,
    /// Only this market (name or address); default: every listed market.
    #[serde(default)]
    pub market: Option<String>,
}

/// A token amount an account may claim.
#[derive(Debug, Serialize)]
pub struct Claimable {
    pub token: Token,
    pub amount: Amount,
}

/// An account's holdings in one market.
#[derive(Debug, Serialize)]
pub struct Position {
    /// The market's name.
    pub market: String,
    pub expired: bool,
    pub pt: Amount,
    pub yt: Amount,
    pub lp: Amount,
    pub sy: Amount,
    /// SY interest the YT has earned and not yet claimed.
    pub yt_interest: Amount,
    /// Rewards the LP (PENDLE and the SY's own) and the YT have earned and not yet claimed.
    pub rewards: Vec<Claimable>,
    /// All four in the asset at the oracle's TWAP (PT, YT, LP) and the SY rate, with the unclaimed
    /// interest; rewards not included.
    pub value: Amount,
}

/// Every listed market's position of an account.
#[derive(Debug, Serialize)]
pub struct Positions {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub account: Address,
    pub positions: Vec<Position>,
}

fn claimable(chain_id: ChainId, list: &[TokenAmount]) -> Result<Vec<Claimable>, Error> {
    let mut out: Vec<Claimable> = Vec::new();
    for r in list.iter().filter(|r| !r.amount.is_zero()) {
        if let Some(same) = out.iter_mut().find(|c| c.token.address == r.token) {
            let sum = U256::from_str_radix(&same.amount.base, 10).unwrap_or_default() + r.amount;
            same.amount = Amount::of(sum, same.token.decimals);
            continue;
        }
        let token = erc20::token(chain_id, r.token)?;
        out.push(Claimable { amount: Amount::of(r.amount, token.decimals), token });
    }
    Ok(out)
}

fn position(v: &Venue, m: &MarketRef, account: Address) -> Result<Position, Error> {
    let c = v.chain_id;
    let py =
        eth_call(c, v.router_static, &RouterStatic::getUserPYInfoCall { py: m.yt.address, user: account })?;
    let lp = eth_call(
        c,
        v.router_static,
        &RouterStatic::getUserMarketInfoCall { market: m.market, user: account },
    )?;
    let sy = erc20::balance_of(c, m.sy.address, account)?;
    let s = v.state(m)?;
    let (pt_rate, yt_rate) =
        if s.expired { (crate::market::WAD, U256::ZERO) } else { (s.pt_twap, s.yt_twap) };
    let interest = py.unclaimedInterest.amount;
    let value = in_asset(py.ptBalance.amount, pt_rate)
        + in_asset(py.ytBalance.amount, yt_rate)
        + in_asset(lp.lpBalance.amount, s.lp_twap)
        + in_asset(sy + interest, s.sy_rate);
    let rewards = [py.unclaimedRewards, lp.unclaimedRewards].concat();
    Ok(Position {
        market: m.name.clone(),
        expired: s.expired,
        pt: Amount::of(py.ptBalance.amount, m.pt.decimals),
        yt: Amount::of(py.ytBalance.amount, m.yt.decimals),
        lp: Amount::of(lp.lpBalance.amount, 18),
        sy: Amount::of(sy, m.sy.decimals),
        yt_interest: Amount::of(interest, m.sy.decimals),
        rewards: claimable(c, &rewards)?,
        value: Amount::of(value, m.asset.decimals),
    })
}

pub struct GetPosition;

impl ReadTool for GetPosition {
    const NAME: &'static str = "pendle_get_position";
    type Params = PositionParams;
    type Output = Positions;

    fn def() -> ToolDef {
        def::<PositionParams>(
            Self::NAME,
            "An account's Pendle holdings in each listed market (or one): PT, YT, LP and SY, the YT's \
             unclaimed interest, unclaimed rewards (PENDLE and the SY's), and their value in the asset at the \
             oracle's TWAP.",
            "an account's Pendle PT/YT/LP positions, accrued yield and rewards",
        )
    }

    fn run(p: PositionParams) -> Result<Positions, Error> {
        let v = venue(p.chain_id)?;
        let account = account_or_wallet(p.chain_id, p.account.as_deref(), "account")?;
        let markets = match &p.market {
            Some(name) => vec![v.find(name)?],
            None => v.markets()?,
        };
        let positions = markets.iter().map(|m| position(&v, m, account)).collect::<Result<_, _>>()?;
        Ok(Positions { account, positions })
    }
}

/// What a quote is of.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Exact `amount` of the token in, PT out.
    BuyPt,
    /// Exact `amount` of PT in, the token out.
    SellPt,
    /// Exact token in, YT out.
    BuyYt,
    /// Exact YT in, the token out.
    SellYt,
    /// Exact token in, LP out (part of it swapped to PT inside the market).
    AddLiquidity,
    /// Exact LP in, the token out (the PT sold inside the market).
    RemoveLiquidity,
    /// Exact token in, as much PT and as much YT out.
    MintPy,
    /// Exact PT and YT (each `amount`; after maturity PT alone) in, the token out.
    RedeemPy,
}

/// Params of a quote.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuoteParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// A listed market: its name (`PT-bvUSDC`) or address.
    pub market: String,
    /// What to quote.
    pub action: Action,
    /// Units of what goes in (the token, PT, YT or LP), decimal.
    pub amount: String,
    /// The token paid or received: the SY's asset or yield token, by symbol or address; default
    /// the asset.
    #[serde(default)]
    pub token: Option<String>,
}

/// A quote.
#[derive(Debug, Serialize)]
pub struct QuoteOut {
    pub market: String,
    pub action: Action,
    pub token_in: Token,
    pub amount_in: Amount,
    pub token_out: Token,
    pub amount_out: Amount,
    /// The trade's fee, in SY (none for mint and redeem).
    pub fee_sy: Option<Amount>,
    /// How far the trade moves the market's rate, percent.
    pub price_impact: Option<String>,
    /// The implied APY after the trade, percent.
    pub implied_apy_after: Option<String>,
    /// Asset paid per unit received (buys) or received per unit paid (sells), at this size.
    pub effective_price: Option<String>,
}

/// The token `text` names among the SY's asset and yield token; the asset by default.
pub(crate) fn side_token(v: &Venue, m: &MarketRef, text: Option<&str>) -> Result<Token, Error> {
    let Some(text) = text.map(str::trim) else { return Ok(m.asset.clone()) };
    alloy_sol_types::sol! { function yieldToken() external view returns (address); }
    let yield_token = erc20::token(v.chain_id, eth_call(v.chain_id, m.sy.address, &yieldTokenCall {})?)?;
    [m.asset.clone(), yield_token]
        .into_iter()
        .find(|t| t.symbol.eq_ignore_ascii_case(text) || text.parse::<Address>().ok() == Some(t.address))
        .ok_or_else(|| {
            invalid_params(format!(
                "`token` {text:?} is neither {}'s asset ({}) nor its yield token; Pendle's SY takes only those",
                m.name, m.asset.symbol
            ))
        })
}

/// What goes in and what comes out of `action` with `token` on the token side.
pub(crate) fn sides(m: &MarketRef, action: Action, token: &Token) -> (Token, Token) {
    let lp = m.lp();
    let token_in = match action {
        Action::BuyPt | Action::BuyYt | Action::AddLiquidity | Action::MintPy => token.clone(),
        Action::SellPt | Action::RedeemPy => m.pt.clone(),
        Action::SellYt => m.yt.clone(),
        Action::RemoveLiquidity => lp.clone(),
    };
    let token_out = match action {
        Action::BuyPt | Action::MintPy => m.pt.clone(),
        Action::BuyYt => m.yt.clone(),
        Action::AddLiquidity => lp,
        Action::SellPt | Action::SellYt | Action::RemoveLiquidity | Action::RedeemPy => token.clone(),
    };
    (token_in, token_out)
}

/// The static router's answer to `action` with `x` in: (out, fee in SY, price impact, the
/// market's exchange rate after).
pub(crate) type Static = (U256, Option<U256>, Option<U256>, Option<U256>);

/// What the static router says `action` with `x` base units in pays at the latest block.
pub(crate) fn static_out(
    v: &Venue,
    m: &MarketRef,
    action: Action,
    x: U256,
    token: &Token,
) -> Result<Static, Error> {
    let (c, rs, market, t) = (v.chain_id, v.router_static, m.market, token.address);
    Ok(match action {
        Action::BuyPt => {
            let r = eth_call(
                c,
                rs,
                &RouterStatic::swapExactTokenForPtStaticCall { market, tokenIn: t, amountTokenIn: x },
            )?;
            (r.netPtOut, Some(r.netSyFee), Some(r.priceImpact), Some(r.exchangeRateAfter))
        }
        Action::SellPt => {
            let r = eth_call(
                c,
                rs,
                &RouterStatic::swapExactPtForTokenStaticCall { market, exactPtIn: x, tokenOut: t },
            )?;
            (r.netTokenOut, Some(r.netSyFee), Some(r.priceImpact), Some(r.exchangeRateAfter))
        }
        Action::BuyYt => {
            let r = eth_call(
                c,
                rs,
                &RouterStatic::swapExactTokenForYtStaticCall { market, tokenIn: t, amountTokenIn: x },
            )?;
            (r.netYtOut, Some(r.netSyFee), Some(r.priceImpact), Some(r.exchangeRateAfter))
        }
        Action::SellYt => {
            let r = eth_call(
                c,
                rs,
                &RouterStatic::swapExactYtForTokenStaticCall { market, exactYtIn: x, tokenOut: t },
            )?;
            (r.netTokenOut, Some(r.netSyFee), Some(r.priceImpact), Some(r.exchangeRateAfter))
        }
        Action::AddLiquidity => {
            let r = eth_call(
                c,
                rs,
                &RouterStatic::addLiquiditySingleTokenStaticCall { market, tokenIn: t, netTokenIn: x },
            )?;
            (r.netLpOut, Some(r.netSyFee), Some(r.priceImpact), Some(r.exchangeRateAfter))
        }
        Action::RemoveLiquidity => {
            let call =
                RouterStatic::removeLiquiditySingleTokenStaticCall { market, netLpToRemove: x, tokenOut: t };
            let r = eth_call(c, rs, &call)?;
            (r.netTokenOut, Some(r.netSyFee), Some(r.priceImpact), Some(r.exchangeRateAfter))
        }
        Action::MintPy => {
            let call =
                RouterStatic::mintPyFromTokenStaticCall { YT: m.yt.address, tokenIn: t, netTokenIn: x };
            (eth_call(c, rs, &call)?, None, None, None)
        }
        Action::RedeemPy => {
            let call =
                RouterStatic::redeemPyToTokenStaticCall { YT: m.yt.address, netPYToRedeem: x, tokenOut: t };
            (eth_call(c, rs, &call)?, None, None, None)
        }
    })
}

pub(crate) fn quote(
    v: &Venue,
    m: &MarketRef,
    action: Action,
    x: U256,
    token: &Token,
) -> Result<QuoteOut, Error> {
    let c = v.chain_id;
    let (token_in, token_out) = sides(m, action, token);
    if x.is_zero() {
        return Err(invalid_params("`amount` must be more than 0"));
    }
    let (out, fee, impact, after) = static_out(v, m, action, x, token)?;
    let now = bardo_sdk::chain::block_timestamp(c, None)?;
    let years = m.expiry.saturating_sub(now) as f64 / 31_536_000.0;
    // Pendle's exchange rate is e^(ln(1 + APY) × years): asset per PT's inverse.
    let apy_after = after.filter(|_| years > 0.0).map(|r| {
        let rate = f64::from(r) / 1e18;
        format!("{:.4}", (rate.powf(1.0 / years) - 1.0) * 100.0)
    });
    let (paid, got) = (
        f64::from(x) / 10f64.powi(token_in.decimals.into()),
        f64::from(out) / 10f64.powi(token_out.decimals.into()),
    );
    let effective = match action {
        Action::BuyPt | Action::BuyYt => (got > 0.0).then(|| format!("{:.8}", paid / got)),
        Action::SellPt | Action::SellYt => (paid > 0.0).then(|| format!("{:.8}", got / paid)),
        _ => None,
    };
    Ok(QuoteOut {
        market: m.name.clone(),
        action,
        amount_in: Amount::of(x, token_in.decimals),
        amount_out: Amount::of(out, token_out.decimals),
        fee_sy: fee.map(|f| Amount::of(f, m.sy.decimals)),
        price_impact: impact.map(|i| format!("{:.4}", f64::from(i) / 1e16)),
        implied_apy_after: apy_after,
        effective_price: effective,
        token_in,
        token_out,
    })
}

pub struct Quote;

impl ReadTool for Quote {
    const NAME: &'static str = "pendle_quote";
    type Params = QuoteParams;
    type Output = QuoteOut;

    fn def() -> ToolDef {
        def::<QuoteParams>(
            Self::NAME,
            "Quote a Pendle trade from Pendle's static router at the latest block: buy or sell PT, buy or sell \
             YT, add or remove single-token liquidity, mint or redeem PT+YT — what comes out, the fee, the price \
             impact, the implied APY after and the effective price.",
            "quote a Pendle PT/YT trade or liquidity change",
        )
    }

    fn run(p: QuoteParams) -> Result<QuoteOut, Error> {
        let v = venue(p.chain_id)?;
        let m = v.find(&p.market)?;
        let token = side_token(&v, &m, p.token.as_deref())?;
        let (token_in, _) = sides(&m, p.action, &token);
        quote(&v, &m, p.action, parse_units("amount", &p.amount, token_in.decimals)?, &token)
    }
}
