//! The template plugin: one read tool, complete. Copy this crate to start a new plugin.

use bardo_sdk::{Category, Error, ReadTool, ToolDef, chain, errors, events, tool_def};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `hello_greet`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GreetParams {
    /// Who to greet, 1 to 64 characters.
    name: String,
    /// A chain to report the latest block of (optional).
    chain_id: Option<u64>,
}

/// Result of `hello_greet`.
#[derive(Serialize)]
struct Greeting {
    greeting: String,
    block_number: Option<u64>,
}

struct Greet;

impl ReadTool for Greet {
    const NAME: &'static str = "hello_greet";
    type Params = GreetParams;
    type Output = Greeting;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet: "hello_greet: greet someone; shows how a tool reads the chain".into(),
            progress_steps: vec!["greet".into(), "read block".into()],
            ..tool_def::<GreetParams>(
                Self::NAME,
                "Greets `name`, and reports the latest block of `chain_id` when given. \
                 A template for plugin authors; it reads nothing else and changes nothing.",
                Category::Data,
            )
        }
    }

    fn run(p: GreetParams) -> Result<Greeting, Error> {
        if p.name.is_empty() || p.name.chars().count() > 64 {
            return Err(errors::invalid_params("`name` must be 1 to 64 characters"));
        }
        events::progress(0);
        let block_number = match p.chain_id {
            Some(id) => {
                events::progress(1);
                Some(chain::block_number(id)?)
            }
            None => None,
        };
        Ok(Greeting { greeting: format!("hello, {}", p.name), block_number })
    }
}

bardo_sdk::plugin! { name: "hello", read: [Greet] }
