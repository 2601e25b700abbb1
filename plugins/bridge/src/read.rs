//! The read tools: the routes, a quote, a deposit's status.

use crate::across::{FilledRelay, FundsDeposited};
use crate::settings::{self, route};
use alloy_primitives::{Address, B256, U256};
use bardo_sdk::abi::{decode_log, wire};
use bardo_sdk::erc20::Token;
use bardo_sdk::errors::{invalid_params, not_found};
use bardo_sdk::units::{Amount, parse_units};
use bardo_sdk::{Category, ChainId, ChainParams, Error, LogFilter, ReadTool, ToolDef, chain};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(crate) use bardo_sdk::described as def;

/// One route.
#[derive(Serialize)]
pub struct RouteRow {
    symbol: String,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    input_token: Address,
    destination_chain_id: ChainId,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    output_token: Address,
}

#[derive(Serialize)]
pub struct Routes {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    spoke_pool: Address,
    relayer_fee_bps: u32,
    fill_deadline_secs: u32,
    routes: Vec<RouteRow>,
}

pub struct GetRoutes;

impl ReadTool for GetRoutes {
    const NAME: &'static str = "bridge_get_routes";
    type Params = ChainParams;
    type Output = Routes;

    fn def() -> ToolDef {
        def::<ChainParams>(
            Self::NAME,
            "The Across routes from a chain the operator lists: each token, the chains it can be bridged to \
             and the token it arrives as there, the chain's SpokePool, its relayers' fee and fill deadline. Reads \
             only the settings.",
            Category::Trading,
            &["read the settings"],
        )
    }

    fn run(p: ChainParams) -> Result<Routes, Error> {
        let c = settings::chain(p.chain_id)?;
        let mut routes = Vec::new();
        for (symbol, to) in &c.routes {
            let Some(listed) = c.tokens.iter().find(|t| &t.symbol == symbol) else { continue };
            for (chain, output) in to {
                let destination_chain_id = chain.parse().map_err(|_| {
                    invalid_params(format!(
                        "routes.{symbol}.{chain} in this plugin's settings is not a chain id"
                    ))
                })?;
                routes.push(RouteRow {
                    symbol: symbol.clone(),
                    input_token: listed.address,
                    destination_chain_id,
                    output_token: *output,
                });
            }
        }
        Ok(Routes {
            spoke_pool: c.spoke_pool,
            relayer_fee_bps: c.relayer_fee_bps,
            fill_deadline_secs: c.fill_deadline_secs,
            routes,
        })
    }
}

/// Params of `bridge_quote` and `bridge_deposit`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BridgeParams {
    /// The origin chain's id (where the tokens leave).
    pub chain_id: ChainId,
    /// The destination chain's id (where they arrive, at the wallet).
    pub destination_chain_id: ChainId,
    /// The token: a listed symbol (`USDC`) or its address on the origin.
    pub token: String,
    /// Token units, decimal.
    pub amount: String,
}

/// A token with an amount of it.
#[derive(Serialize)]
pub struct TokenAmount {
    chain_id: ChainId,
    token: Token,
    #[serde(flatten)]
    amount: Amount,
}

impl TokenAmount {
    pub fn new(chain_id: ChainId, token: &Token, amount: U256) -> Self {
        Self { chain_id, token: token.clone(), amount: Amount::of(amount, token.decimals) }
    }
}

#[derive(Serialize)]
pub struct QuoteOut {
    /// What leaves the wallet on the origin.
    input: TokenAmount,
    /// What arrives at the wallet on the destination: the deposit's output amount, which the
    /// filling relayer must deliver exactly.
    output: TokenAmount,
    /// The relayer's fee, in the input token.
    fee: TokenAmount,
    relayer_fee_bps: u32,
    /// How long the deposit may wait for its fill, seconds.
    fill_deadline_secs: u32,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    spoke_pool: Address,
}

/// The quote of `p`: the route, the input amount, and the quote's parts.
pub fn quote(p: &BridgeParams) -> Result<(settings::Route, U256, QuoteOut), Error> {
    let r = route(p.chain_id, p.destination_chain_id, &p.token)?;
    let amount = parse_units("amount", &p.amount, r.input.decimals)?;
    let (out, fee) = r.quote(amount);
    if out.is_zero() {
        return Err(invalid_params(format!(
            "{} {} delivers nothing after the relayer's {} bps; raise `amount`",
            p.amount, r.input.symbol, r.origin.relayer_fee_bps
        )));
    }
    let q = QuoteOut {
        input: TokenAmount::new(p.chain_id, &r.input, amount),
        output: TokenAmount::new(r.destination, &r.output, out),
        fee: TokenAmount::new(p.chain_id, &r.input, fee),
        relayer_fee_bps: r.origin.relayer_fee_bps,
        fill_deadline_secs: r.origin.fill_deadline_secs,
        spoke_pool: r.origin.spoke_pool,
    };
    Ok((r, amount, q))
}

pub struct Quote;

impl ReadTool for Quote {
    const NAME: &'static str = "bridge_quote";
    type Params = BridgeParams;
    type Output = QuoteOut;

    fn def() -> ToolDef {
        def::<BridgeParams>(
            Self::NAME,
            "Quote bridging `amount` of a token from `chain_id` to `destination_chain_id` through Across: what \
             arrives at the wallet there (the input less the relayer's published fee, in the destination's token) \
             and the fee. Reads only.",
            Category::Trading,
            &["read the route", "read the tokens"],
        )
    }

    fn run(p: BridgeParams) -> Result<QuoteOut, Error> {
        quote(&p).map(|(_, _, q)| q)
    }
}

/// Params of `bridge_get_status`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusParams {
    /// The origin chain's id (where the deposit was made).
    pub chain_id: ChainId,
    /// The deposit's id (`deposit_id` in `bridge_deposit`'s outcome).
    pub deposit_id: String,
    /// First block of the origin to search; default its last 10,000 (the destination's last
    /// 10,000 are searched for the fill).
    #[serde(default)]
    pub from_block: Option<u64>,
}

#[derive(Serialize)]
pub struct Status {
    /// `filled`, `pending` (its fill deadline not passed) or `expired` (unfilled past it: Across
    /// refunds the depositor on the origin).
    status: &'static str,
    origin_chain_id: ChainId,
    destination_chain_id: ChainId,
    deposit_id: String,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    recipient: Address,
    output_amount: String,
    fill_deadline: u32,
    /// The fill's transaction on the destination, when filled.
    #[serde(skip_serializing_if = "Option::is_none")]
    fill_tx: Option<String>,
    /// Who filled it.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "bardo_sdk::abi::some_checksummed")]
    relayer: Option<Address>,
}

pub struct GetStatus;

const LOOKBACK: u64 = 10_000;

impl ReadTool for GetStatus {
    const NAME: &'static str = "bridge_get_status";
    type Params = StatusParams;
    type Output = Status;

    fn def() -> ToolDef {
        def::<StatusParams>(
            Self::NAME,
            "A deposit's status: read from the origin SpokePool's `FundsDeposited` and the destination \
             SpokePool's `FilledRelay` (only the SpokePools the operator lists are believed): filled (by which \
             relayer, in which transaction), pending, or expired. Reads only.",
            Category::Trading,
            &["read the deposit", "read the fill"],
        )
    }

    fn run(p: StatusParams) -> Result<Status, Error> {
        let id: U256 =
            p.deposit_id.trim().parse().map_err(|_| {
                invalid_params(format!("`deposit_id` {:?} is not a whole number", p.deposit_id))
            })?;
        let origin = settings::chain(p.chain_id)?;
        let (from, to) = bardo_sdk::logs::range(p.chain_id, p.from_block, LOOKBACK)?;
        let deposited = bardo_sdk::logs::scan(
            LogFilter {
                chain_id: p.chain_id,
                addresses: vec![wire(&origin.spoke_pool)],
                topics: vec![
                    vec![<FundsDeposited as alloy_sol_types::SolEvent>::SIGNATURE_HASH.to_string()],
                    vec![],
                    vec![B256::from(id).to_string()],
                ],
                from_block: None,
                to_block: None,
            },
            from,
            to,
        )?;
        let d = deposited.iter().find_map(decode_log::<FundsDeposited>).ok_or_else(|| {
            not_found(format!(
                "no deposit {id} in chain {}'s SpokePool {} from block {from}; give `from_block`",
                p.chain_id, origin.spoke_pool
            ))
        })?;
        let destination: ChainId = d.destinationChainId.saturating_to();
        let dest = settings::chain(destination)?;
        // Block numbers are the origin's: the destination is searched over its own last blocks.
        let (dfrom, dto) = bardo_sdk::logs::range(destination, None, LOOKBACK)?;
        let fills = bardo_sdk::logs::scan(
            LogFilter {
                chain_id: destination,
                addresses: vec![wire(&dest.spoke_pool)],
                topics: vec![
                    vec![<FilledRelay as alloy_sol_types::SolEvent>::SIGNATURE_HASH.to_string()],
                    vec![B256::from(U256::from(p.chain_id)).to_string()],
                    vec![B256::from(id).to_string()],
                ],
                from_block: None,
                to_block: None,
            },
            dfrom,
            dto,
        )?;
        let fill = fills.iter().find_map(|l| decode_log::<FilledRelay>(l).map(|f| (l.tx_hash.clone(), f)));
        let now = chain::block_timestamp(destination, None)?;
        let status = match &fill {
            Some(_) => "filled",
            None if now > u64::from(d.fillDeadline) => "expired",
            None => "pending",
        };
        Ok(Status {
            status,
            origin_chain_id: p.chain_id,
            destination_chain_id: destination,
            deposit_id: id.to_string(),
            recipient: Address::from_word(d.recipient),
            output_amount: d.outputAmount.to_string(),
            fill_deadline: d.fillDeadline,
            relayer: fill.as_ref().map(|(_, f)| Address::from_word(f.relayer)),
            fill_tx: fill.and_then(|(tx, _)| tx),
        })
    }
}
