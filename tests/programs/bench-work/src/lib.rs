//! The guest work of the peers benchmark, the same in every runtime: about 1 KB of JSON params
//! parsed into a typed struct, the `eth_call` they ask for built (the best-priced order's token,
//! `balanceOf(owner)` ABI-encoded), and JSON out.

use alloy_primitives::Address;
use alloy_sol_types::{SolCall, sol};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

sol! {
    function balanceOf(address owner) external view returns (uint256);
}

/// One order of a book.
#[derive(Deserialize, Serialize, JsonSchema)]
pub struct Order {
    /// The token, `0x…`.
    pub token: String,
    /// Its amount, in base units.
    pub amount: String,
    /// Its price.
    pub price: f64,
}

/// Params: whose balance to read, and the orders.
#[derive(Deserialize, JsonSchema)]
pub struct Params {
    /// The account, `0x…`.
    pub owner: String,
    /// The orders.
    pub orders: Vec<Order>,
}

/// The call built.
#[derive(Serialize)]
pub struct EthCall {
    /// The contract, `0x…`.
    pub to: String,
    /// The call data, `0x…`.
    pub data: String,
    /// The orders read.
    pub orders: usize,
}

/// The call `p` asks for; an error names the field that does not parse.
pub fn build(p: &Params) -> Result<EthCall, String> {
    let best = p.orders.iter().max_by(|a, b| a.price.total_cmp(&b.price)).ok_or("no orders")?;
    let to: Address =
        best.token.parse().map_err(|_| format!("`token` {:?} is not an address", best.token))?;
    let owner: Address = p.owner.parse().map_err(|_| format!("`owner` {:?} is not an address", p.owner))?;
    let data = balanceOfCall { owner }.abi_encode();
    Ok(EthCall {
        to: format!("{to:#x}"),
        data: format!("0x{}", alloy_primitives::hex::encode(data)),
        orders: p.orders.len(),
    })
}

/// JSON in, JSON out: [`build`] for a runtime that passes bytes.
pub fn run(json: &[u8]) -> Result<Vec<u8>, String> {
    let p: Params = serde_json::from_slice(json).map_err(|e| format!("params: {e}"))?;
    serde_json::to_vec(&build(&p)?).map_err(|e| e.to_string())
}

/// About 1 KB of params.
pub fn params_1kb() -> String {
    let orders: Vec<Order> = (0..12)
        .map(|i| Order {
            token: format!("0x{:040x}", 0xa0b8_6991u64 + i),
            amount: format!("{}", 1_000_000 * (i + 1)),
            price: 1.0 + i as f64 / 7.0,
        })
        .collect();
    let owner = format!("0x{:040x}", 0xf39f_d6e5u64);
    serde_json::json!({ "owner": owner, "orders": orders }).to_string()
}
