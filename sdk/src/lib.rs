//! # bardo-sdk
//!
//! Write a Bardo tool plugin — a WebAssembly component the Bardo host loads — in a few dozen
//! lines: a params struct, a `ToolDef`, a function, and one `plugin!` line. See `README.md` and
//! `plugins/hello` for a complete example.
//!
//! The host owns everything dangerous (RPC, keys, simulation, policy); a plugin reads through
//! [`chain`], reports through [`events`] and, for write tools, returns a [`WritePlan`] that the
//! host checks, simulates and signs.

pub mod aave;
pub mod abi;
pub mod approvals;
mod bindings;
pub mod chains;
pub mod decode;
mod def;
mod dispatch;
pub mod erc20;
pub mod erc4626;
pub mod errors;
pub mod logs;
pub mod operator;
pub mod permit2;
pub mod settings;
pub mod slippage;
pub mod tokens;
pub mod uniswap;
pub mod units;

pub use bindings::imports::bardo::host::types::{
    Address, B256, ChainId, Error, ErrorCode, Log, LogFilter, Receipt, TxCall, U256,
};
pub use bindings::imports::bardo::host::{
    chain, config, events, memory, signer, simulate, testnet, uniswap_sdk,
};
pub use bindings::imports::bardo::plugin::types::{
    Capability, CapabilityTier, Category, Manifest, Phase, PhaseGuideline, PlannedCall, RiskTier, Source,
    SpriteTrigger, StreamEvent, StreamStep, TickBudget, ToolDef, WritePlan,
};
#[doc(hidden)]
pub use bindings::{reader, stream_part, write_part};
pub use def::{described, guidelines, schema, snippet, tool_def, write_def};
#[doc(hidden)]
pub use dispatch::{
    dispatch_on_logs, dispatch_on_tick, dispatch_open, dispatch_plan, dispatch_read, dispatch_verify,
};

// Re-exported so that plugins need no direct dependency on them to use the macro.
pub use schemars;
pub use serde;
pub use serde_json;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Params naming only a chain.
#[derive(serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChainParams {
    /// Chain id.
    pub chain_id: ChainId,
}

/// A read tool: typed params in, a JSON-serializable value out, no side effects.
pub trait ReadTool {
    /// The tool's unique name, `<prefix>_<action>_<subject>`.
    const NAME: &'static str;
    /// The params object; its JSON Schema (doc comments included) becomes the input schema.
    type Params: DeserializeOwned + JsonSchema;
    /// The result; serialized to JSON for the caller.
    type Output: Serialize;
    /// The tool's metadata; start from [`tool_def`].
    fn def() -> ToolDef;
    /// Run the tool.
    fn run(params: Self::Params) -> Result<Self::Output, Error>;
}

/// A write tool: plans calls for the host to execute, then verifies the receipts.
pub trait WriteTool {
    /// The tool's unique name.
    const NAME: &'static str;
    /// The params object.
    type Params: DeserializeOwned + JsonSchema;
    /// The tool's metadata; its capability tier must be `write`.
    fn def() -> ToolDef;
    /// Plan the write. Nothing is signed or sent here.
    fn plan(params: Self::Params) -> Result<WritePlan, Error>;
    /// The actual outcome, read from the receipts of the executed plan.
    fn verify(params: Self::Params, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error>;
}

/// A stream tool: tells the host what to subscribe to and decodes what arrives.
pub trait StreamTool {
    /// The tool's unique name.
    const NAME: &'static str;
    /// The params object.
    type Params: DeserializeOwned + JsonSchema;
    /// Per-subscription state the host keeps between steps.
    type State: Serialize + DeserializeOwned;
    /// The tool's metadata.
    fn def() -> ToolDef;
    /// The sources to subscribe to (one per chain watched) and the initial state.
    fn open(params: &Self::Params) -> Result<(Vec<Source>, Self::State), Error>;
    /// Logs arrived for the subscription.
    fn on_logs(
        params: &Self::Params,
        logs: Vec<Log>,
        state: Self::State,
    ) -> Result<(Vec<StreamEvent>, Self::State), Error> {
        let _ = (params, logs);
        Ok((Vec::new(), state))
    }
    /// A poll tick for the subscription.
    fn on_tick(params: &Self::Params, state: Self::State) -> Result<(Vec<StreamEvent>, Self::State), Error> {
        let _ = params;
        Ok((Vec::new(), state))
    }
}

/// Export a plugin: its name and the tools it implements. The world (reader, writer or
/// streamer) follows from which tool lists are present.
///
/// ```ignore
/// bardo_sdk::plugin! { name: "hello", read: [Greet] }
/// bardo_sdk::plugin! { name: "uniswap", read: [GetPool], write: [Swap] }
/// bardo_sdk::plugin! { name: "streaming", read: [], stream: [PoolEvents] }
/// ```
#[macro_export]
macro_rules! plugin {
    (name: $name:expr, read: [$($r:ty),* $(,)?] $(,)?) => {
        $crate::__plugin_common!($name, [$($r),*], [], []);
        $crate::reader::__export_reader!(__BardoPlugin with_types_in $crate::reader);
    };
    (name: $name:expr, read: [$($r:ty),* $(,)?], write: [$($w:ty),* $(,)?] $(,)?) => {
        $crate::__plugin_common!($name, [$($r),*], [$($w),*], []);
        $crate::reader::__export_reader!(__BardoPlugin with_types_in $crate::reader);
        impl $crate::write_part::exports::bardo::plugin::write::Guest for __BardoPlugin {
            fn plan(tool: String, params: String) -> Result<$crate::WritePlan, $crate::Error> {
                $( if tool == <$w as $crate::WriteTool>::NAME { return $crate::dispatch_plan::<$w>(&params); } )*
                Err($crate::errors::unknown_tool(&tool))
            }
            fn verify(tool: String, params: String, receipts: Vec<$crate::Receipt>) -> Result<String, $crate::Error> {
                $( if tool == <$w as $crate::WriteTool>::NAME { return $crate::dispatch_verify::<$w>(&params, receipts); } )*
                Err($crate::errors::unknown_tool(&tool))
            }
        }
        $crate::write_part::__export_write_part!(__BardoPlugin with_types_in $crate::write_part);
    };
    (name: $name:expr, read: [$($r:ty),* $(,)?], stream: [$($s:ty),* $(,)?] $(,)?) => {
        $crate::__plugin_common!($name, [$($r),*], [], [$($s),*]);
        $crate::reader::__export_reader!(__BardoPlugin with_types_in $crate::reader);
        impl $crate::stream_part::exports::bardo::plugin::stream::Guest for __BardoPlugin {
            fn open(tool: String, params: String) -> Result<(Vec<$crate::Source>, String), $crate::Error> {
                $( if tool == <$s as $crate::StreamTool>::NAME { return $crate::dispatch_open::<$s>(&params); } )*
                Err($crate::errors::unknown_tool(&tool))
            }
            fn on_logs(tool: String, params: String, logs: Vec<$crate::Log>, state: String) -> Result<$crate::StreamStep, $crate::Error> {
                $( if tool == <$s as $crate::StreamTool>::NAME { return $crate::dispatch_on_logs::<$s>(&params, logs, &state); } )*
                Err($crate::errors::unknown_tool(&tool))
            }
            fn on_tick(tool: String, params: String, state: String) -> Result<$crate::StreamStep, $crate::Error> {
                $( if tool == <$s as $crate::StreamTool>::NAME { return $crate::dispatch_on_tick::<$s>(&params, &state); } )*
                Err($crate::errors::unknown_tool(&tool))
            }
        }
        $crate::stream_part::__export_stream_part!(__BardoPlugin with_types_in $crate::stream_part);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __plugin_common {
    ($name:expr, [$($r:ty),*], [$($w:ty),*], [$($s:ty),*]) => {
        /// The exported plugin.
        struct __BardoPlugin;
        impl $crate::reader::exports::bardo::plugin::catalog::Guest for __BardoPlugin {
            fn get_manifest() -> $crate::Manifest {
                $crate::Manifest {
                    name: ::std::string::String::from($name),
                    version: ::std::string::String::from(env!("CARGO_PKG_VERSION")),
                    tools: vec![
                        $(<$r as $crate::ReadTool>::def(),)*
                        $(<$w as $crate::WriteTool>::def(),)*
                        $(<$s as $crate::StreamTool>::def(),)*
                    ],
                }
            }
        }
        impl $crate::reader::exports::bardo::plugin::read::Guest for __BardoPlugin {
            fn call(tool: String, params: String) -> Result<String, $crate::Error> {
                $( if tool == <$r as $crate::ReadTool>::NAME { return $crate::dispatch_read::<$r>(&params); } )*
                Err($crate::errors::unknown_tool(&tool))
            }
        }
    };
}
