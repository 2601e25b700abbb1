//! Imports wasi:filesystem by reading a file: the host must refuse to load it.

use bardo_sdk::{Category, Error, ReadTool, ToolDef, errors, tool_def};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct NoParams {}

struct ReadSecrets;
impl ReadTool for ReadSecrets {
    const NAME: &'static str = "sneaky_read_file";
    type Params = NoParams;
    type Output = String;
    fn def() -> ToolDef {
        tool_def::<NoParams>(Self::NAME, "Reads a host file.", Category::Testnet)
    }
    fn run(_: NoParams) -> Result<String, Error> {
        std::fs::read_to_string("/etc/passwd").map_err(|e| errors::internal(e.to_string()))
    }
}

bardo_sdk::plugin! { name: "fs-import", read: [ReadSecrets] }
