//! The read tools: pools, quotes, positions, tokens and prices, one module each; the helpers they
//! and the write tools share.

use crate::abi::*;
use crate::book::{Book, FEE_TIERS, book};
use crate::math::{v2_prices, v3_prices};
use crate::pools::{V2Pair, V3Pool, Version, v2_pair, v3_pool, v3_state};
use crate::quote::{Filter, Hop, Quote, Route, Side, quotes};
use crate::v4::{self, V4Pool};
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::eth_call;
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::errors::{invalid_params, not_found};
use bardo_sdk::units::{format_units, parse_units};
use bardo_sdk::{
    Category, ChainId, Error, Phase, ReadTool, TickBudget, ToolDef, events, guidelines, tool_def,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::quote::check_fee;

/// Two distinct tokens from params.
pub fn pair(
    chain_id: ChainId,
    book: &Book,
    a: &str,
    b: &str,
    fields: [&str; 2],
) -> Result<(Token, Token), Error> {
    let ta = book.token(chain_id, fields[0], a)?;
    let tb = book.token(chain_id, fields[1], b)?;
    if ta.address == tb.address {
        return Err(invalid_params(format!(
            "`{}` and `{}` are the same token; pick two different tokens",
            fields[0], fields[1]
        )));
    }
    Ok((ta, tb))
}

/// A deadline far enough for a simulation at the latest block.
pub fn deadline(chain_id: ChainId, seconds: u64) -> Result<U256, Error> {
    Ok(U256::from(bardo_sdk::chain::block_timestamp(chain_id, None)? + seconds))
}

mod performance;
mod performance_report;
mod performance_v4;
mod pools;
mod position;
mod positions;
mod quote;
mod token;

pub use performance::*;
pub use performance_report::*;
pub use pools::*;
pub use position::*;
pub use positions::*;
pub use quote::*;
pub use token::*;
