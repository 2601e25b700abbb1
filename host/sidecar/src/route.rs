//! The sidecar's `route`: the best route for a trade over pools the host read — multi-hop and
//! split, by the SDKs' pool math — and its UniversalRouter calldata by the universal-router SDK.

use crate::methods::{NEED_TICKS, SwapError, field, uint};
use crate::{PoolState, Sidecar, SidecarError, Ticks};
use alloy_primitives::{Address, B256, U256};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The sidecar's code for "no route of these pools fills the trade".
pub const NO_ROUTE: i64 = -32003;

/// Passes of reading the tick words a route reaches before giving up (each pass reads every word
/// the last one lacked; a swap across the whole price range of a sparse pool needs ~60).
const MAX_PASSES: usize = 96;

/// Which side of the trade is fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TradeType {
    /// `amount` of the input is sold.
    ExactIn,
    /// `amount` of the output is bought.
    ExactOut,
}

/// One pool as the host read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoutePool {
    /// A V2 pair and its reserves.
    V2 {
        /// The pair.
        pair: Address,
        /// Its tokens, sorted.
        tokens: (Address, Address),
        /// Its reserves of each.
        reserves: (U256, U256),
    },
    /// A V3 pool.
    V3 {
        /// The pool.
        pool: Address,
        /// Its tokens, sorted.
        tokens: (Address, Address),
        /// Its price, liquidity, fee and spacing.
        state: PoolState,
        /// The bitmap words read so far.
        ticks: Ticks,
    },
    /// A V4 pool without hooks.
    V4 {
        /// Its id.
        id: B256,
        /// Its currencies, sorted.
        tokens: (Address, Address),
        /// Its price, liquidity, fee and spacing.
        state: PoolState,
        /// The bitmap words read so far.
        ticks: Ticks,
    },
}

impl RoutePool {
    /// Which pool to read tick words of, and its tick spacing; none for a V2 pair (no ticks).
    /// `state_view` is the chain's V4 StateView lens.
    pub fn reader(&self, state_view: Address) -> Option<(crate::pool_read::Pool, i32)> {
        use crate::pool_read::Pool;
        match self {
            Self::V2 { .. } => None,
            Self::V3 { pool, state, .. } => Some((Pool::V3(*pool), state.tick_spacing)),
            Self::V4 { id, state, .. } => {
                Some((Pool::V4 { state_view, id: *id, tick_spacing: state.tick_spacing }, state.tick_spacing))
            }
        }
    }

    /// How the sidecar and the route name it: the pair's or pool's address, or the V4 id.
    pub fn id(&self) -> String {
        match self {
            RoutePool::V2 { pair: a, .. } | RoutePool::V3 { pool: a, .. } => a.to_string().to_lowercase(),
            RoutePool::V4 { id, .. } => id.to_string(),
        }
    }

    /// `v2`, `v3` or `v4`.
    pub fn protocol(&self) -> &'static str {
        match self {
            RoutePool::V2 { .. } => "v2",
            RoutePool::V3 { .. } => "v3",
            RoutePool::V4 { .. } => "v4",
        }
    }

    /// Its two tokens, sorted.
    pub fn tokens(&self) -> (Address, Address) {
        match self {
            RoutePool::V2 { tokens, .. } | RoutePool::V3 { tokens, .. } | RoutePool::V4 { tokens, .. } => {
                *tokens
            }
        }
    }

    /// The swap state and tick words of a concentrated-liquidity pool.
    pub fn concentrated(&mut self) -> Option<(&PoolState, &mut Ticks)> {
        match self {
            RoutePool::V2 { .. } => None,
            RoutePool::V3 { state, ticks, .. } | RoutePool::V4 { state, ticks, .. } => Some((state, ticks)),
        }
    }

    fn to_json(&self) -> Value {
        let (t0, t1) = self.tokens();
        let mut out = json!({ "id": self.id(), "protocol": self.protocol(), "token0": t0.to_string(), "token1": t1.to_string() });
        match self {
            RoutePool::V2 { reserves, .. } => {
                out["reserve0"] = reserves.0.to_string().into();
                out["reserve1"] = reserves.1.to_string().into();
            }
            RoutePool::V3 { state, ticks, .. } | RoutePool::V4 { state, ticks, .. } => {
                out["fee"] = state.fee.into();
                out["tick_spacing"] = state.tick_spacing.into();
                out["sqrt_price_x96"] = state.sqrt_price_x96.to_string().into();
                out["tick"] = state.tick.into();
                out["liquidity"] = state.liquidity.to_string().into();
                out["words"] = ticks
                    .words
                    .iter()
                    .map(|(pos, w)| (pos.to_string(), Value::from(w.to_string())))
                    .collect::<Map<_, _>>()
                    .into();
                out["ticks"] = ticks
                    .nets
                    .iter()
                    .map(|(t, n)| (t.to_string(), Value::from(n.to_string())))
                    .collect::<Map<_, _>>()
                    .into();
                if matches!(self, RoutePool::V4 { .. }) {
                    out["hooks"] = Address::ZERO.to_string().into();
                }
            }
        }
        out
    }
}

/// The calldata's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwapTerms {
    /// Who receives the output.
    pub recipient: Address,
    /// The slippage the calldata allows, in basis points.
    pub slippage_bps: u32,
    /// Unix seconds after which the router refuses it.
    pub deadline: u64,
}

/// What to route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteRequest {
    /// The chain id the SDK's tokens carry.
    pub chain_id: u64,
    /// Which side is fixed.
    pub trade_type: TradeType,
    /// The token sold.
    pub token_in: Address,
    /// The token bought.
    pub token_out: Address,
    /// Of `token_in` for exact-in, of `token_out` for exact-out, in base units.
    pub amount: U256,
    /// Every token's decimals (the pools' and the two traded).
    pub decimals: BTreeMap<Address, u8>,
    /// At most this many pools in a path (1 to 3).
    pub max_hops: u8,
    /// At most this many paths the amount is split over (1 to 4).
    pub max_splits: u8,
    /// The split search's step, in percent (divides 100).
    pub step_percent: u8,
    /// When set, the UniversalRouter calldata is made too.
    pub swap: Option<SwapTerms>,
}

/// One path of a route and its share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leg {
    /// Its share of the amount, in percent.
    pub percent: u8,
    /// Its pools in order, by index into the pools given.
    pub pools: Vec<usize>,
    /// The tokens it passes, from the input.
    pub path: Vec<Address>,
    /// What goes in.
    pub amount_in: U256,
    /// What comes out.
    pub amount_out: U256,
}

/// The calldata of a route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Calldata {
    /// `execute(commands, inputs, deadline)` of the UniversalRouter.
    pub data: Vec<u8>,
    /// Ether to send with it.
    pub value: U256,
    /// The least output the calldata accepts (exact-in) — or the output (exact-out).
    pub minimum_out: U256,
    /// The most input it may take (exact-out) — or the input (exact-in).
    pub maximum_in: U256,
}

/// The best route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The whole input.
    pub amount_in: U256,
    /// The whole output.
    pub amount_out: U256,
    /// Its paths.
    pub legs: Vec<Leg>,
    /// How many paths were quoted to find it.
    pub paths_quoted: u64,
    /// The calldata, when terms were given.
    pub calldata: Option<Calldata>,
}

impl Sidecar {
    /// The best route for `request` over `pools`. When a route reaches bitmap words not read
    /// yet, `read_words(pools, [(pool index, word)])` adds them all (see
    /// [`crate::discover::Discovery::words`]) and the sidecar is asked again.
    pub fn route<E>(
        &self,
        request: &RouteRequest,
        pools: &mut [RoutePool],
        mut read_words: impl FnMut(&mut [RoutePool], &[(usize, i16)]) -> Result<(), E>,
    ) -> Result<Route, SwapError<E>> {
        let method = "route";
        let decimals: Map<String, Value> =
            request.decimals.iter().map(|(a, d)| (a.to_string(), Value::from(*d))).collect();
        for _ in 0..MAX_PASSES {
            let mut params = json!({
                "chain_id": request.chain_id,
                "trade_type": match request.trade_type { TradeType::ExactIn => "exact_in", TradeType::ExactOut => "exact_out" },
                "token_in": request.token_in.to_string(), "token_out": request.token_out.to_string(),
                "amount": request.amount.to_string(), "tokens": decimals,
                "max_hops": request.max_hops, "max_splits": request.max_splits, "step_percent": request.step_percent,
                "pools": pools.iter().map(RoutePool::to_json).collect::<Vec<_>>(),
            });
            if let Some(terms) = request.swap {
                params["swap"] = json!({
                    "recipient": terms.recipient.to_string(), "slippage_bps": terms.slippage_bps,
                    "deadline": terms.deadline,
                });
            }
            match self.call(method, params) {
                Ok(result) => return Ok(parse(&result, pools)?),
                Err(SidecarError::Refused { code: NEED_TICKS, data, message, .. }) => {
                    let needs = data.as_ref().and_then(|d| d["needs"].as_array()).ok_or_else(|| {
                        SidecarError::Protocol(format!("`route` needs ticks but says not which: {message}"))
                    })?;
                    // Every word this pass lacked, read together.
                    let mut wanted = Vec::with_capacity(needs.len());
                    for need in needs {
                        let (index, pos) = needed(need, pools)?;
                        let Some((_, ticks)) = pools[index].concentrated() else {
                            return Err(SidecarError::Protocol(
                                "`route` asked for ticks of a V2 pair".into(),
                            )
                            .into());
                        };
                        if ticks.words.contains_key(&pos) || wanted.contains(&(index, pos)) {
                            return Err(SidecarError::Protocol(format!(
                                "`route` asked again for word {pos}"
                            ))
                            .into());
                        }
                        wanted.push((index, pos));
                    }
                    read_words(pools, &wanted).map_err(SwapError::Read)?;
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(SidecarError::Protocol(format!("`route` still lacked tick words after {MAX_PASSES} passes"))
            .into())
    }
}

/// The pool index and word of one `needs` entry.
fn needed(need: &Value, pools: &mut [RoutePool]) -> Result<(usize, i16), SidecarError> {
    let bad = || SidecarError::Protocol(format!("`route` asked for ticks as {need}"));
    let id = need["pool"].as_str().ok_or_else(bad)?;
    let index = pools.iter().position(|p| p.id() == id).ok_or_else(bad)?;
    let pos = match (need["word"].as_i64(), need["tick"].as_i64()) {
        (Some(word), _) => word,
        (None, Some(tick)) => {
            let (state, _) = pools[index].concentrated().ok_or_else(bad)?;
            i64::from(Ticks::word_of(i32::try_from(tick).map_err(|_| bad())?, state.tick_spacing))
        }
        _ => return Err(bad()),
    };
    Ok((index, i16::try_from(pos).map_err(|_| bad())?))
}

fn address(method: &str, v: &Value) -> Result<Address, SidecarError> {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| SidecarError::Protocol(format!("`{method}` answered {v} for an address")))
}

fn parse(result: &Value, pools: &[RoutePool]) -> Result<Route, SidecarError> {
    let method = "route";
    let ids: Vec<String> = pools.iter().map(RoutePool::id).collect();
    let routes = field(method, result, "routes")?
        .as_array()
        .ok_or_else(|| SidecarError::Protocol("`route`'s `routes` is not a list".into()))?;
    let legs = routes
        .iter()
        .map(|r| {
            let percent = r["percent"]
                .as_u64()
                .and_then(|p| u8::try_from(p).ok())
                .filter(|p| (1..=100).contains(p))
                .ok_or_else(|| SidecarError::Protocol("a leg's `percent` is not 1 to 100".into()))?;
            let pools = field(method, r, "pools")?
                .as_array()
                .into_iter()
                .flatten()
                .map(|id| {
                    ids.iter().position(|known| Some(known.as_str()) == id.as_str()).ok_or_else(|| {
                        SidecarError::Protocol(format!("a leg names pool {id}, which was not given"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let path = field(method, r, "path")?
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| address(method, a))
                .collect::<Result<Vec<_>, _>>()?;
            if pools.is_empty() || path.len() != pools.len() + 1 {
                return Err(SidecarError::Protocol("a leg's path does not match its pools".into()));
            }
            Ok(Leg {
                percent,
                pools,
                path,
                amount_in: uint(method, r, "amount_in")?,
                amount_out: uint(method, r, "amount_out")?,
            })
        })
        .collect::<Result<Vec<_>, SidecarError>>()?;
    if legs.is_empty() || legs.iter().map(|l| u32::from(l.percent)).sum::<u32>() != 100 {
        return Err(SidecarError::Protocol("`route`'s legs do not make 100 %".into()));
    }
    let calldata = match result.get("calldata") {
        None => None,
        Some(data) => {
            let hex = data.as_str().and_then(|s| s.strip_prefix("0x")).unwrap_or_default();
            Some(Calldata {
                data: alloy_primitives::hex::decode(hex)
                    .map_err(|_| SidecarError::Protocol("`route`'s `calldata` is not hex".into()))?,
                value: uint(method, result, "value")?,
                minimum_out: uint(method, result, "minimum_out")?,
                maximum_in: uint(method, result, "maximum_in")?,
            })
        }
    };
    Ok(Route {
        amount_in: uint(method, result, "amount_in")?,
        amount_out: uint(method, result, "amount_out")?,
        legs,
        paths_quoted: field(method, result, "paths_quoted")?.as_u64().unwrap_or(0),
        calldata,
    })
}
