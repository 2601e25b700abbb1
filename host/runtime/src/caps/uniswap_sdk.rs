//! `bardo:host/uniswap-sdk`: Uniswap's official SDKs (the sidecar) over pool state the host
//! reads itself, for the plugins the operator granted it to (`[sidecar] grant`). The host finds
//! the pools from the operator's Uniswap book and reads them all at one block; the plugin gives
//! only the trade.

use super::chain::{parse_address, parse_u256};
use super::view::{CallCtx, CapsView};
use crate::bindings::bardo::host::types::Error;
use crate::bindings::bardo::host::uniswap_sdk::{
    Host, Protocol, Route, RouteLeg, RoutePool as WitPool, RouteRequest, TradeType as WitTradeType,
};
use crate::caps::convert::wit_error;
use crate::services::UniswapSdk;
use alloy::primitives::{Address, Bytes, U256};
use bardo_core::error::{ErrorCode, ToolError};
use bardo_evm::{ChainError, Evm};
use bardo_sidecar::discover::{Calls, Discovery, Found};
use bardo_sidecar::route::{RoutePool, RouteRequest as SdkRequest, SwapTerms, TradeType};
use bardo_sidecar::{SidecarError, SwapError};
use std::cell::RefCell;
use wasmtime::component::{HasData, Linker};

/// The interface this module serves.
pub(crate) const INTERFACE: &str = "bardo:host/uniswap-sdk";

/// How an operator grants it to plugin `name`.
pub(crate) fn how_to_grant(name: &str) -> String {
    format!("[sidecar] grant = [\"{name}\"]")
}

/// The import as one call sees it.
pub struct UniswapSdkView<'a> {
    evm: &'a Evm,
    sdk: Option<&'a UniswapSdk>,
    call: &'a mut CallCtx,
}

struct HasUniswapSdk;
impl HasData for HasUniswapSdk {
    type Data<'a> = UniswapSdkView<'a>;
}

pub(crate) fn add_to_linker<T: CapsView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    crate::bindings::bardo::host::uniswap_sdk::add_to_linker::<T, HasUniswapSdk>(linker, |t| {
        let caps = t.caps();
        UniswapSdkView { evm: caps.evm, sdk: caps.uniswap_sdk, call: caps.call }
    })
}

fn error(code: ErrorCode, message: impl Into<String>) -> Error {
    wit_error(ToolError::new(code, message))
}

/// The host's error for a sidecar that gave no route: its own code, except that finding no
/// route is `not-found`.
fn sidecar_error(e: SidecarError) -> Error {
    if let SidecarError::Refused { code: bardo_sidecar::route::NO_ROUTE, message, .. } = &e {
        return error(ErrorCode::NotFound, format!("no Uniswap route: {message}"));
    }
    wit_error(ToolError { code: e.code(), message: e.to_string(), retryable: e.retryable() })
}

/// The request's limits, checked before anything is read.
fn checked(r: &RouteRequest) -> Result<(Address, Address, U256, Vec<Address>), Error> {
    let token_in = parse_address("token-in", &r.token_in)?;
    let token_out = parse_address("token-out", &r.token_out)?;
    let amount = parse_u256("amount", &r.amount)?;
    let invalid = |m: String| error(ErrorCode::InvalidParams, m);
    if token_in == token_out {
        return Err(invalid("`token-in` and `token-out` are the same token".into()));
    }
    if token_in.is_zero() || token_out.is_zero() {
        return Err(invalid("routes trade ERC-20s: give wrapped ether rather than ether (address 0)".into()));
    }
    if amount.is_zero() {
        return Err(invalid("`amount` must be above 0".into()));
    }
    if !(1..=3).contains(&r.max_hops) || !(1..=4).contains(&r.max_splits) {
        return Err(invalid(format!(
            "`max-hops` must be 1 to 3 and `max-splits` 1 to 4 (got {} and {})",
            r.max_hops, r.max_splits
        )));
    }
    if r.slippage_bps > 5000 {
        return Err(invalid(format!("`slippage-bps` {} is over 5000 (50 %)", r.slippage_bps)));
    }
    if r.via.len() > 4 {
        return Err(invalid(format!("`via` names {} tokens; at most 4", r.via.len())));
    }
    let via = r.via.iter().map(|a| parse_address("via", a)).collect::<Result<Vec<_>, _>>()?;
    Ok((token_in, token_out, amount, via))
}

impl UniswapSdkView<'_> {
    fn route(&mut self, r: RouteRequest) -> Result<Route, Error> {
        let Some(sdk) = self.sdk else {
            return Err(error(
                ErrorCode::Denied,
                "this host runs no Uniswap sidecar: set `[sidecar] dir = \"sidecar\"` in bardo.toml and run `make setup`",
            ));
        };
        if !self.call.granted.contains(INTERFACE) {
            return Err(error(
                ErrorCode::Denied,
                format!(
                    "the operator has not granted `bardo:host/uniswap-sdk` to plugin `{}`: add it to `[sidecar] grant` in bardo.toml",
                    self.call.plugin
                ),
            ));
        }
        let (token_in, token_out, amount, via) = checked(&r)?;
        let book = sdk.books.get(&r.chain).ok_or_else(|| {
            error(
                ErrorCode::ChainNotSupported,
                format!("no Uniswap contracts for chain {} under `[settings] uniswap`", r.chain),
            )
        })?;
        let router = book.universal_router.ok_or_else(|| {
            error(
                ErrorCode::ChainNotSupported,
                format!("no `universal_router` for chain {} under `[settings] uniswap`", r.chain),
            )
        })?;
        let recipient = parse_address("recipient", &r.recipient)?;
        if !self.call.may_block() {
            return Err(super::view::would_block());
        }
        // The sidecar's start is not the plugin's time: it has its own timeout and error, and
        // the call's deadline moves by what the start took (a cold Node process on a loaded
        // machine took seconds, and the reads after it then met a spent budget).
        let waited = sdk.sidecar.ready().map_err(sidecar_error)?;
        self.call.extend(waited);
        let chains = &self.evm.chains;
        let typed = |e| wit_error(self.call.chain_error(e));
        let client = chains.get(r.chain).map_err(typed)?;
        let deadline = self.call.deadline;
        // The head within the chain's `head_ttl_ms` (what every read at "latest" uses), else the node's.
        let block = match chains.block_on(client.latest(deadline)).map_err(typed)? {
            Some(block) => block,
            None => chains.block_on(client.block_number(deadline)).map_err(typed)?,
        };
        // The readers below speak in strings; the chain's own error is kept to answer with its
        // code (a budget spent is the tool's limit, a node timing out is retryable).
        let failure: RefCell<Option<ChainError>> = RefCell::new(None);
        // Every read at one block — the route is the SDK's answer about that block's pools —
        // and each round of independent reads in one batch.
        let read = |calls: &Calls| -> Vec<Result<Bytes, String>> {
            let answers = chains.block_on(client.call_many(calls, block, deadline));
            answers
                .into_iter()
                .zip(calls)
                .map(|(answer, (to, _))| {
                    answer.map_err(|e| {
                        let message = format!("reading {to} at block {block}: {e}");
                        *failure.borrow_mut() = Some(e);
                        message
                    })
                })
                .collect()
        };
        let mut tokens = vec![token_in, token_out];
        for t in via.into_iter().chain(book.weth) {
            if !t.is_zero() && !tokens.contains(&t) {
                tokens.push(t);
            }
        }
        let rpc = |m: String| match failure.borrow_mut().take().map(|e| self.call.chain_error(e)) {
            Some(e) if e.code == ErrorCode::LimitExceeded => wit_error(e),
            Some(e) => wit_error(ToolError { message: m, ..e }),
            None => error(ErrorCode::Rpc, m),
        };
        let mut discovery = Discovery::new(read);
        // A block's pools, and the tick words routes at it read, are read once.
        let key = (r.chain, block, tokens.clone());
        let found = match sdk.pools.get(&key) {
            Some(found) => found,
            None => discovery.pools(book, &tokens).map_err(rpc)?,
        };
        let Found { mut pools, decimals } = found;
        if pools.is_empty() {
            return Err(error(
                ErrorCode::NotFound,
                format!("no Uniswap pool on chain {} joins these tokens", r.chain),
            ));
        }
        let request = SdkRequest {
            chain_id: r.chain,
            trade_type: match r.trade_type {
                WitTradeType::ExactInput => TradeType::ExactIn,
                WitTradeType::ExactOutput => TradeType::ExactOut,
            },
            token_in,
            token_out,
            amount,
            decimals: decimals.clone(),
            max_hops: r.max_hops,
            max_splits: r.max_splits,
            step_percent: 10,
            swap: Some(SwapTerms { recipient, slippage_bps: r.slippage_bps, deadline: r.deadline }),
        };
        let state_view = book.v4_state_view.unwrap_or_default();
        let routed =
            sdk.sidecar.route(&request, &mut pools, |pools, needs| discovery.words(pools, state_view, needs));
        sdk.pools.put(key, Found { pools: pools.clone(), decimals });
        let route = routed.map_err(|e| match e {
            SwapError::Sidecar(e) => sidecar_error(e),
            SwapError::Read(e) => rpc(format!("cannot read a pool's ticks for the route: {e}")),
        })?;
        let calldata =
            route.calldata.ok_or_else(|| error(ErrorCode::Internal, "the sidecar made no calldata"))?;
        Ok(Route {
            block_number: block,
            amount_in: route.amount_in.to_string(),
            amount_out: route.amount_out.to_string(),
            minimum_out: calldata.minimum_out.to_string(),
            maximum_in: calldata.maximum_in.to_string(),
            legs: route
                .legs
                .iter()
                .map(|leg| RouteLeg {
                    percent: leg.percent,
                    pools: leg
                        .pools
                        .iter()
                        .zip(leg.path.windows(2))
                        .map(|(i, hop)| wit_pool(&pools[*i], hop[0], hop[1]))
                        .collect(),
                    amount_in: leg.amount_in.to_string(),
                    amount_out: leg.amount_out.to_string(),
                })
                .collect(),
            paths_quoted: u32::try_from(route.paths_quoted).unwrap_or(u32::MAX),
            router: router.to_checksum(None),
            calldata: calldata.data,
            value: calldata.value.to_string(),
        })
    }
}

fn wit_pool(p: &RoutePool, token_in: Address, token_out: Address) -> WitPool {
    let (protocol, fee) = match p {
        RoutePool::V2 { .. } => (Protocol::V2, 3000),
        RoutePool::V3 { state, .. } => (Protocol::V3, state.fee),
        RoutePool::V4 { state, .. } => (Protocol::V4, state.fee),
    };
    WitPool {
        protocol,
        id: p.id(),
        fee,
        token_in: token_in.to_checksum(None),
        token_out: token_out.to_checksum(None),
    }
}

impl Host for UniswapSdkView<'_> {
    fn best_route(&mut self, request: RouteRequest) -> Result<Route, Error> {
        self.route(request)
    }
}
