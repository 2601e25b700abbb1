//! `bardo:host/simulate`: dry runs on a fork of a configured chain, over [`bardo_evm::simulate`].

use super::chain::{parse_address, parse_u256};
use super::view::{CallCtx, CapsView};
use crate::bindings::bardo::host::simulate::{BalanceDelta, CallOutcome, Host, Simulation};
use crate::bindings::bardo::host::types::{Error, Log, TxCall};
use crate::caps::convert::wit_error;
use alloy::primitives::Bytes;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_evm::chain::Chains;
use bardo_evm::simulate::{SimCall, Simulator};
use wasmtime::component::{HasData, Linker};

/// The interface this module serves.
pub(crate) const INTERFACE: &str = "bardo:host/simulate";

/// Most calls one simulation may run.
pub const MAX_CALLS: usize = 16;

/// The simulate import as one call sees it.
pub struct SimulateView<'a> {
    simulator: &'a Simulator,
    chains: &'a Chains,
    call: &'a mut CallCtx,
}

struct HasSimulate;
impl HasData for HasSimulate {
    type Data<'a> = SimulateView<'a>;
}

pub(crate) fn add_to_linker<T: CapsView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    crate::bindings::bardo::host::simulate::add_to_linker::<T, HasSimulate>(linker, |t| {
        let caps = t.caps();
        SimulateView { simulator: &caps.evm.simulator, chains: &caps.evm.chains, call: caps.call }
    })
}

fn wit_log(chain_id: u64, l: &alloy::primitives::Log) -> Log {
    Log {
        chain_id,
        address: l.address.to_checksum(None),
        topics: l.topics().iter().map(|t| t.to_string()).collect(),
        data: l.data.data.to_vec(),
        block_number: None,
        tx_hash: None,
        log_index: None,
    }
}

impl Host for SimulateView<'_> {
    fn run(&mut self, chain: u64, sender: String, calls: Vec<TxCall>) -> Result<Simulation, Error> {
        if calls.is_empty() || calls.len() > MAX_CALLS {
            return Err(wit_error(ToolError::new(
                ErrorCode::InvalidParams,
                format!("a simulation takes 1 to {MAX_CALLS} calls, not {}", calls.len()),
            )));
        }
        if !self.call.may_block() {
            return Err(super::view::would_block());
        }
        let sender = parse_address("sender", &sender)?;
        let mut sim_calls = Vec::with_capacity(calls.len());
        for c in calls {
            if c.chain_id != chain {
                return Err(wit_error(ToolError::new(
                    ErrorCode::InvalidParams,
                    format!("a call targets chain {} inside a simulation of chain {chain}", c.chain_id),
                )));
            }
            sim_calls.push(SimCall {
                to: parse_address("to", &c.to)?,
                data: Bytes::from(c.data),
                value: parse_u256("value", &c.value)?,
            });
        }
        let sim = self
            .simulator
            .run(self.chains, chain, sender, &sim_calls, None, self.call.deadline)
            .map_err(|e| wit_error(self.call.chain_error(e)))?;
        Ok(Simulation {
            block_number: sim.block_number,
            outcomes: sim
                .outcomes
                .iter()
                .map(|o| CallOutcome {
                    success: o.success,
                    gas_used: o.gas_used,
                    output: o.output.to_vec(),
                    logs: o.logs.iter().map(|l| wit_log(chain, l)).collect(),
                })
                .collect(),
            balance_deltas: sim
                .changes
                .balances()
                .map(|(token, delta)| BalanceDelta {
                    token: token.map(|t| t.to_checksum(None)),
                    delta: delta.to_string(),
                })
                .collect(),
        })
    }
}
