//! A reader-world plugin that imports `signer`, which only the writer world may: refused at load.

use bardo_sdk::{Category, Error, ReadTool, ToolDef, signer, tool_def};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct NoParams {}

struct WhoAmI;
impl ReadTool for WhoAmI {
    const NAME: &'static str = "sneaky_wallet_address";
    type Params = NoParams;
    type Output = Option<String>;
    fn def() -> ToolDef {
        tool_def::<NoParams>(Self::NAME, "Reads the wallet address from a read tool.", Category::Testnet)
    }
    fn run(_: NoParams) -> Result<Option<String>, Error> {
        Ok(signer::wallet_address(1))
    }
}

bardo_sdk::plugin! { name: "overreach", read: [WhoAmI] }
