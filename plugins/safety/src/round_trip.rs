//! A token's transfer tax and honeypot behaviour, measured by a simulated round trip as the
//! wallet on the host's fork: buy with a little WETH through the token's Uniswap V2 pair, send
//! half to a fresh address, sell the rest back. Each tax is what the router's quote (which knows
//! no taxes) or the amount sent says should arrive, against what does.

use alloy_primitives::{Address, U256, address};
use alloy_sol_types::SolCall;
use bardo_sdk::abi::{revert_reason, tx_call, wallet, wire};
use bardo_sdk::{ChainId, Error, TxCall, chain, simulate};
use serde::Serialize;

alloy_sol_types::sol! {
    function balanceOf(address account) external view returns (uint256);
    function approve(address spender, uint256 amount) external returns (bool);
    function transfer(address to, uint256 amount) external returns (bool);
    function deposit() external payable;
    function getAmountsOut(uint256 amountIn, address[] path) external view returns (uint256[] amounts);
    function swapExactTokensForTokensSupportingFeeOnTransferTokens(uint256 amountIn, uint256 amountOutMin,
        address[] path, address to, uint256 deadline) external;
}

/// Where half the bought tokens are sent (an address nobody holds a key to).
const PROBE: Address = address!("0x00000000000000000000000000000000000Bad0B");
/// 0.01 ether: enough to measure a tax to a hundredth of a percent, little enough for any pool.
const SPEND: u64 = 10_000_000_000_000_000;

/// What the round trip found.
#[derive(Debug, Clone, Serialize)]
pub struct RoundTrip {
    /// Fraction of the quoted purchase that did not arrive.
    pub buy_tax: f64,
    /// Fraction of a plain transfer that did not arrive.
    pub transfer_tax: Option<f64>,
    /// Fraction of the quoted sale that did not arrive.
    pub sell_tax: Option<f64>,
    /// The token cannot be sold (or moved) once bought.
    pub honeypot: bool,
    /// Why, when something reverted.
    pub reverted: Option<String>,
}

fn call<C: SolCall>(chain_id: ChainId, to: Address, c: &C) -> TxCall {
    tx_call(chain_id, to, c)
}

fn ret<C: SolCall>(outcome: Option<&bardo_sdk::simulate::CallOutcome>) -> Option<C::Return> {
    outcome.filter(|o| o.success).and_then(|o| C::abi_decode_returns(&o.output).ok())
}

fn fraction_missing(expected: U256, got: U256) -> f64 {
    let f = |v: U256| v.to_string().parse::<f64>().unwrap_or(0.0);
    if expected.is_zero() { 0.0 } else { (1.0 - f(got) / f(expected)).max(0.0) }
}

/// Run the round trip for `token` through `router` with `weth`.
pub fn measure(
    chain_id: ChainId,
    token: Address,
    weth: Address,
    router: Address,
) -> Result<RoundTrip, Error> {
    let me = wallet(chain_id)?;
    let deadline = U256::from(chain::block_timestamp(chain_id, None)? + 600);
    let spend = U256::from(SPEND);
    let buy = vec![
        call(chain_id, token, &balanceOfCall { account: me }),
        TxCall { value: spend.to_string(), ..call(chain_id, weth, &depositCall {}) },
        call(chain_id, weth, &approveCall { spender: router, amount: spend }),
        call(chain_id, router, &getAmountsOutCall { amountIn: spend, path: vec![weth, token] }),
        call(
            chain_id,
            router,
            &swapExactTokensForTokensSupportingFeeOnTransferTokensCall {
                amountIn: spend,
                amountOutMin: U256::ZERO,
                path: vec![weth, token],
                to: me,
                deadline,
            },
        ),
        call(chain_id, token, &balanceOfCall { account: me }),
    ];
    let first = simulate::run(chain_id, &wire(&me), &buy)?;
    let o = &first.outcomes;
    if let Some(reason) = failed(&first) {
        let honeypot = o.len() > 5;
        return Ok(RoundTrip {
            buy_tax: 0.0,
            transfer_tax: None,
            sell_tax: None,
            honeypot,
            reverted: Some(reason),
        });
    }
    let before = ret::<balanceOfCall>(o.first()).unwrap_or_default();
    let quoted = ret::<getAmountsOutCall>(o.get(3)).and_then(|a| a.get(1).copied()).unwrap_or_default();
    let bought = ret::<balanceOfCall>(o.get(5)).unwrap_or_default().saturating_sub(before);
    let buy_tax = fraction_missing(quoted, bought);
    if bought < U256::from(2u8) {
        return Ok(RoundTrip { buy_tax, transfer_tax: None, sell_tax: None, honeypot: true, reverted: None });
    }
    let (half, rest) = (bought / U256::from(2u8), bought - bought / U256::from(2u8));
    let mut trip = buy;
    trip.extend([
        call(chain_id, token, &transferCall { to: PROBE, amount: half }),
        call(chain_id, token, &balanceOfCall { account: PROBE }),
        call(chain_id, token, &approveCall { spender: router, amount: rest }),
        call(chain_id, router, &getAmountsOutCall { amountIn: rest, path: vec![token, weth] }),
        call(chain_id, weth, &balanceOfCall { account: me }),
        call(
            chain_id,
            router,
            &swapExactTokensForTokensSupportingFeeOnTransferTokensCall {
                amountIn: rest,
                amountOutMin: U256::ZERO,
                path: vec![token, weth],
                to: me,
                deadline,
            },
        ),
        call(chain_id, weth, &balanceOfCall { account: me }),
    ]);
    let second = simulate::run(chain_id, &wire(&me), &trip)?;
    let o = &second.outcomes;
    let probe_before = erc_balance(chain_id, token, PROBE)?;
    let transfer_tax =
        ret::<balanceOfCall>(o.get(7)).map(|got| fraction_missing(half, got.saturating_sub(probe_before)));
    let quoted_sale = ret::<getAmountsOutCall>(o.get(9)).and_then(|a| a.get(1).copied());
    let weth_before = ret::<balanceOfCall>(o.get(10));
    let weth_after = ret::<balanceOfCall>(o.get(12));
    let sell_tax = match (quoted_sale, weth_before, weth_after) {
        (Some(q), Some(b), Some(a)) => Some(fraction_missing(q, a.saturating_sub(b))),
        _ => None,
    };
    let reverted = failed(&second);
    Ok(RoundTrip { buy_tax, transfer_tax, sell_tax, honeypot: reverted.is_some(), reverted })
}

/// Which step of a simulation reverted, and why.
fn failed(sim: &bardo_sdk::simulate::Simulation) -> Option<String> {
    const STEPS: [&str; 13] = [
        "reading the balance",
        "wrapping ether",
        "approving the router",
        "quoting the purchase",
        "buying",
        "reading the balance",
        "sending half",
        "reading the probe",
        "approving the router",
        "quoting the sale",
        "reading WETH",
        "selling",
        "reading WETH",
    ];
    let i = sim.outcomes.iter().position(|o| !o.success)?;
    Some(format!("{} reverts: {}", STEPS.get(i).unwrap_or(&"a step"), revert_reason(&sim.outcomes[i].output)))
}

fn erc_balance(chain_id: ChainId, token: Address, who: Address) -> Result<U256, Error> {
    bardo_sdk::abi::eth_call(chain_id, token, &balanceOfCall { account: who })
}
