//! JSON in and out of the typed tool traits. Used by the `plugin!` macro.

use crate::errors::{internal, invalid_params};
use crate::{Error, Log, ReadTool, Receipt, Source, StreamStep, StreamTool, WritePlan, WriteTool};
use serde::Serialize;
use serde::de::DeserializeOwned;

fn parse<P: DeserializeOwned>(tool: &str, json: &str) -> Result<P, Error> {
    serde_json::from_str(json).map_err(|e| {
        invalid_params(format!(
            "params of `{tool}` do not match its input schema: {e}; see `bardo tools --json` for the schema"
        ))
    })
}

fn to_json<T: Serialize>(tool: &str, value: &T) -> Result<String, Error> {
    serde_json::to_string(value)
        .map_err(|e| internal(format!("`{tool}` produced a result that is not JSON: {e}")))
}

fn parse_state<S: DeserializeOwned>(tool: &str, json: &str) -> Result<S, Error> {
    serde_json::from_str(json)
        .map_err(|e| internal(format!("state of stream `{tool}` is corrupt: {e}; reopen the stream")))
}

/// Run read tool `T` on JSON params.
pub fn dispatch_read<T: ReadTool>(params: &str) -> Result<String, Error> {
    let out = T::run(parse(T::NAME, params)?)?;
    to_json(T::NAME, &out)
}

/// Plan write tool `T` on JSON params.
pub fn dispatch_plan<T: WriteTool>(params: &str) -> Result<WritePlan, Error> {
    T::plan(parse(T::NAME, params)?)
}

/// Verify write tool `T`'s receipts.
pub fn dispatch_verify<T: WriteTool>(params: &str, receipts: Vec<Receipt>) -> Result<String, Error> {
    let out = T::verify(parse(T::NAME, params)?, receipts)?;
    to_json(T::NAME, &out)
}

/// Open stream tool `T`.
pub fn dispatch_open<T: StreamTool>(params: &str) -> Result<(Vec<Source>, String), Error> {
    let (source, state) = T::open(&parse(T::NAME, params)?)?;
    Ok((source, to_json(T::NAME, &state)?))
}

fn step<T: StreamTool>(result: (Vec<crate::StreamEvent>, T::State)) -> Result<StreamStep, Error> {
    let (events, state) = result;
    Ok(StreamStep { events, state_json: to_json(T::NAME, &state)? })
}

/// Logs for stream tool `T`.
pub fn dispatch_on_logs<T: StreamTool>(
    params: &str,
    logs: Vec<Log>,
    state: &str,
) -> Result<StreamStep, Error> {
    let params = parse(T::NAME, params)?;
    step::<T>(T::on_logs(&params, logs, parse_state(T::NAME, state)?)?)
}

/// A tick for stream tool `T`.
pub fn dispatch_on_tick<T: StreamTool>(params: &str, state: &str) -> Result<StreamStep, Error> {
    let params = parse(T::NAME, params)?;
    step::<T>(T::on_tick(&params, parse_state(T::NAME, state)?)?)
}
