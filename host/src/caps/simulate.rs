//! `bardo:host/simulate`: dry runs on a fork. Forking is not implemented in this version of the
//! host: every run answers `denied`, never invented results.

use super::CapsView;
use crate::bindings::bardo::host::simulate::{Host, Simulation};
use crate::bindings::bardo::host::types::{Error, TxCall};
use crate::caps::convert::wit_error;
use crate::error::{ErrorCode, ToolError};
use wasmtime::component::{HasData, Linker};

/// The simulation service (no forkable chain yet).
#[derive(Debug, Default)]
pub struct SimulateCaps {}

/// The simulate import as one call sees it.
pub struct SimulateView<'a> {
    caps: &'a SimulateCaps,
}

struct HasSimulate;
impl HasData for HasSimulate {
    type Data<'a> = SimulateView<'a>;
}

pub(crate) fn add_to_linker<T: CapsView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    crate::bindings::bardo::host::simulate::add_to_linker::<T, HasSimulate>(linker, |t| SimulateView {
        caps: &t.parts().0.simulate,
    })
}

impl Host for SimulateView<'_> {
    fn run(&mut self, chain: u64, _sender: String, _calls: Vec<TxCall>) -> Result<Simulation, Error> {
        let _ = self.caps;
        Err(wit_error(ToolError::new(
            ErrorCode::Denied,
            format!(
                "cannot simulate on chain {chain}: this host version has no fork simulator; plan without simulating"
            ),
        )))
    }
}
