//! The benchmark plugin: a realistic small read tool (parse ~1 KB of JSON, one host call,
//! return JSON), the peers benchmark's work (`bench_eth_call`, the same code Extism runs) and a
//! no-op.

use bardo_sdk::{Category, Error, ReadTool, ToolDef, events, tool_def};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One order of a book.
#[derive(Deserialize, Serialize, JsonSchema)]
struct Order {
    token: String,
    amount: String,
    price: f64,
}

/// Params of `bench_summarize`.
#[derive(Deserialize, JsonSchema)]
struct BookParams {
    /// The orders.
    orders: Vec<Order>,
}

#[derive(Serialize)]
struct Summary {
    count: usize,
    best: Option<Order>,
}

struct Summarize;
impl ReadTool for Summarize {
    const NAME: &'static str = "bench_summarize";
    type Params = BookParams;
    type Output = Summary;
    fn def() -> ToolDef {
        tool_def::<BookParams>(
            Self::NAME,
            "Summarizes an order book (benchmark workload).",
            Category::Testnet,
        )
    }
    fn run(p: BookParams) -> Result<Summary, Error> {
        events::progress(0);
        let count = p.orders.len();
        let best = p.orders.into_iter().max_by(|a, b| a.price.total_cmp(&b.price));
        Ok(Summary { count, best })
    }
}

struct BuildCall;
impl ReadTool for BuildCall {
    const NAME: &'static str = "bench_eth_call";
    type Params = bench_work::Params;
    type Output = bench_work::EthCall;
    fn def() -> ToolDef {
        tool_def::<bench_work::Params>(
            Self::NAME,
            "Builds the eth_call an order book asks for (peers benchmark workload).",
            Category::Testnet,
        )
    }
    fn run(p: bench_work::Params) -> Result<bench_work::EthCall, Error> {
        bench_work::build(&p).map_err(bardo_sdk::errors::invalid_params)
    }
}

#[derive(Deserialize, JsonSchema)]
struct NoParams {}

struct Noop;
impl ReadTool for Noop {
    const NAME: &'static str = "bench_noop";
    type Params = NoParams;
    type Output = ();
    fn def() -> ToolDef {
        tool_def::<NoParams>(Self::NAME, "Does nothing (benchmark baseline).", Category::Testnet)
    }
    fn run(_: NoParams) -> Result<(), Error> {
        Ok(())
    }
}

bardo_sdk::plugin! { name: "bench", read: [Summarize, BuildCall, Noop] }
