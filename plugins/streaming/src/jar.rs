//! `stream_tokenjar`: a token jar (a contract or account that accumulates protocol fees, such
//! as Uniswap's fee TokenJar) — its balances of the watched tokens after every transfer in or
//! out, and burns (transfers to the zero or dead address) called out.

use crate::config::{LogRef, event, logs, stream_def, uniswap};
use alloy_primitives::{Address, address};
use alloy_sol_types::SolEvent;
use bardo_sdk::abi::decode_log;
use bardo_sdk::erc20::{self, Transfer};
use bardo_sdk::errors::invalid_params;
use bardo_sdk::tokens::parse_address;
use bardo_sdk::units::format_units;
use bardo_sdk::{ChainId, Error, Log, Source, SpriteTrigger, StreamEvent, StreamTool, ToolDef};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const DEAD: Address = address!("0x000000000000000000000000000000000000dEaD");

/// Params of `stream_tokenjar`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JarParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The jar's address.
    pub jar: String,
    /// Tokens watched: listed symbols or addresses (1 to 20).
    pub tokens: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct JarState {
    jar: Address,
    /// Symbol and decimals per watched token.
    tokens: BTreeMap<Address, (String, u8)>,
}

#[derive(Debug, Serialize)]
struct JarUpdate {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    jar: Address,
    /// `deposit`, `withdrawal` or `burn`.
    movement: &'static str,
    token: String,
    amount: String,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    counterparty: Address,
    /// The jar's balance of every watched token after this block (token units).
    balances: BTreeMap<String, String>,
    #[serde(flatten)]
    at: LogRef,
}

pub struct TokenJar;

impl StreamTool for TokenJar {
    const NAME: &'static str = "stream_tokenjar";
    type Params = JarParams;
    type State = JarState;

    fn def() -> ToolDef {
        stream_def::<JarParams>(
            Self::NAME,
            "Streams a token jar's movements of the watched tokens — deposits, withdrawals and burns \
                 (to the zero or dead address) — each with the jar's balances of every watched token. \
                 Emits TokenJarUpdate.",
            "stream_tokenjar: a fee jar's balances and burns as tokens move",
            SpriteTrigger::Idle,
        )
    }

    fn open(p: &JarParams) -> Result<(Vec<Source>, JarState), Error> {
        if p.tokens.is_empty() || p.tokens.len() > 20 {
            return Err(invalid_params("`tokens` must name 1 to 20 tokens"));
        }
        let jar = parse_address("jar", &p.jar)?;
        let book = uniswap(p.chain_id)?;
        let mut tokens = BTreeMap::new();
        for t in &p.tokens {
            let t = book.token(p.chain_id, "tokens", t)?;
            tokens.insert(t.address, (t.symbol, t.decimals));
        }
        let addresses: Vec<Address> = tokens.keys().copied().collect();
        let sig = Transfer::SIGNATURE_HASH;
        // Out of the jar, and into it: one filter cannot match either position.
        let sources = vec![
            logs(p.chain_id, &addresses, vec![vec![sig], vec![jar.into_word()]]),
            logs(p.chain_id, &addresses, vec![vec![sig], vec![], vec![jar.into_word()]]),
        ];
        Ok((sources, JarState { jar, tokens }))
    }

    fn on_logs(p: &JarParams, logs: Vec<Log>, s: JarState) -> Result<(Vec<StreamEvent>, JarState), Error> {
        let mut out = Vec::new();
        for log in &logs {
            let Some(t) = decode_log::<Transfer>(log) else { continue };
            let token = parse_address("log address", &log.address)?;
            let Some((symbol, decimals)) = s.tokens.get(&token) else { continue };
            let (movement, counterparty) = match (t.from == s.jar, t.to == s.jar) {
                (true, false) if t.to == Address::ZERO || t.to == DEAD => ("burn", t.to),
                (true, false) => ("withdrawal", t.to),
                (false, true) => ("deposit", t.from),
                _ => continue,
            };
            let mut balances = BTreeMap::new();
            for (address, (sym, dec)) in &s.tokens {
                balances
                    .insert(sym.clone(), format_units(erc20::balance_of(p.chain_id, *address, s.jar)?, *dec));
            }
            out.push(event(
                "token-jar-update",
                &JarUpdate {
                    jar: s.jar,
                    movement,
                    token: symbol.clone(),
                    amount: format_units(t.value, *decimals),
                    counterparty,
                    balances,
                    at: LogRef::from(log),
                },
            )?);
        }
        Ok((out, s))
    }
}
