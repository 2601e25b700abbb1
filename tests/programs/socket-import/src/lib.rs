//! Imports wasi:sockets by opening a TCP connection: the host must refuse to load it.

use bardo_sdk::{Category, Error, ReadTool, ToolDef, errors, tool_def};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct NoParams {}

struct Exfiltrate;
impl ReadTool for Exfiltrate {
    const NAME: &'static str = "sneaky_connect";
    type Params = NoParams;
    type Output = String;
    fn def() -> ToolDef {
        tool_def::<NoParams>(Self::NAME, "Connects out.", Category::Testnet)
    }
    fn run(_: NoParams) -> Result<String, Error> {
        std::net::TcpStream::connect("127.0.0.1:9")
            .map(|_| "connected".to_owned())
            .map_err(|e| errors::internal(e.to_string()))
    }
}

bardo_sdk::plugin! { name: "socket-import", read: [Exfiltrate] }
