//! `bardo:host/testnet`: a devnet's cheat codes for the `dev` profile (and a bootstrap plugin).
//! Refused unless the plugin was granted it at load (see `caps::devnet_grant`)
//! and, below that, on any chain not marked `devnet = true` (`bardo_evm::cheats` checks it
//! again). Each change also drops the simulator's warm fork of the chain, whose state it made
//! stale.

use super::chain::{chain_error, parse_address, parse_u256};
use super::view::{CallCtx, CapsView};
use crate::bindings::bardo::host::testnet::Host;
use crate::bindings::bardo::host::types::Error;
use crate::caps::convert::wit_error;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_evm::Evm;
use bardo_evm::{ChainClient, ChainError};
use std::future::Future;
use wasmtime::component::{HasData, Linker};

/// The interface this module serves.
pub(crate) const INTERFACE: &str = "bardo:host/testnet";

/// The most blocks one `mine` may ask for.
const MAX_BLOCKS: u64 = 10_000;

/// The import as one call sees it.
pub struct TestnetView<'a> {
    evm: &'a Evm,
    call: &'a mut CallCtx,
}

struct HasTestnet;
impl HasData for HasTestnet {
    type Data<'a> = TestnetView<'a>;
}

pub(crate) fn add_to_linker<T: CapsView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    crate::bindings::bardo::host::testnet::add_to_linker::<T, HasTestnet>(linker, |t| {
        let caps = t.caps();
        TestnetView { evm: caps.evm, call: caps.call }
    })
}

/// How an operator grants the cheat codes (for the refusal and `bardo audit`).
pub(crate) fn how_to_grant(_plugin: &str) -> String {
    "run with the dev profile (`--profile dev`); a plugin of `bootstrap` tools only also gets them under a profile that selects `bootstrap`".into()
}

fn denied(message: String) -> Error {
    wit_error(ToolError::new(ErrorCode::Denied, message))
}

impl<'a> TestnetView<'a> {
    /// The chain's client, once the grant and the chain's `devnet` mark are checked.
    fn devnet(&self, chain: u64) -> Result<&'a ChainClient, Error> {
        let evm: &'a Evm = self.evm;
        if !self.call.granted.contains(INTERFACE) {
            return Err(denied(format!(
                "plugin `{}`: cheat codes (`bardo:host/testnet`) are not granted to it; {}",
                self.call.plugin,
                how_to_grant(&self.call.plugin)
            )));
        }
        let client = evm.chains.get(chain).map_err(chain_error)?;
        if !client.is_devnet() {
            return Err(denied(format!(
                "chain {chain} is not a devnet: cheat codes run only on a chain marked `devnet = true` under [chains.{chain}] in bardo.toml"
            )));
        }
        Ok(client)
    }

    /// Run one cheat on `chain`, then drop the simulator's fork of it.
    fn cheat<T, F: Future<Output = Result<T, ChainError>>>(
        &mut self,
        chain: u64,
        f: impl FnOnce(&'a ChainClient, std::time::Instant) -> F,
    ) -> Result<T, Error> {
        let client = self.devnet(chain)?;
        if !self.call.may_block() {
            return Err(super::view::would_block());
        }
        let out = self.evm.chains.block_on(f(client, self.call.deadline));
        self.evm.simulator.forget(chain);
        out.map_err(chain_error)
    }
}

impl Host for TestnetView<'_> {
    fn set_balance(&mut self, chain: u64, account: String, wei: String) -> Result<(), Error> {
        let account = parse_address("account", &account)?;
        let wei = parse_u256("wei", &wei)?;
        self.cheat(chain, |c, d| c.set_balance(account, wei, d))
    }

    fn deal(&mut self, chain: u64, token: String, account: String, amount: String) -> Result<u64, Error> {
        let token = parse_address("token", &token)?;
        let account = parse_address("account", &account)?;
        let amount = parse_u256("amount", &amount)?;
        self.cheat(chain, |c, d| c.deal(token, account, amount, d))
    }

    fn mine(&mut self, chain: u64, blocks: u64) -> Result<u64, Error> {
        if !(1..=MAX_BLOCKS).contains(&blocks) {
            return Err(wit_error(ToolError::new(
                ErrorCode::InvalidParams,
                format!("`blocks` is {blocks}; mine 1 to {MAX_BLOCKS} blocks at a time"),
            )));
        }
        self.cheat(chain, |c, d| c.mine(blocks, d))
    }

    fn increase_time(&mut self, chain: u64, seconds: u64) -> Result<u64, Error> {
        self.cheat(chain, |c, d| c.increase_time(seconds, d))
    }

    fn snapshot(&mut self, chain: u64) -> Result<String, Error> {
        self.cheat(chain, |c, d| c.snapshot(d)).map(|id| id.to_string())
    }

    fn revert(&mut self, chain: u64, id: String) -> Result<bool, Error> {
        let id = parse_u256("id", &id)?;
        self.cheat(chain, |c, d| c.revert(id, d))
    }
}
