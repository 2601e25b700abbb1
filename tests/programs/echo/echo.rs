// Shared by the echo-v1/v2/v3 test programs: one plugin, `echo`, in three versions, for the
// registry tests (v2 keeps v1's surface; v3 grows it with a write tool).

use bardo_sdk::{Category, Error, ReadTool, ToolDef, tool_def};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `echo_get_version`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VersionParams {
    /// Echoed back.
    pub n: u64,
}

/// Which version answered, and the echoed number.
#[derive(Serialize)]
pub struct VersionAnswer {
    pub version: &'static str,
    pub n: u64,
}

pub struct Version;

impl ReadTool for Version {
    const NAME: &'static str = "echo_get_version";
    type Params = VersionParams;
    type Output = VersionAnswer;

    fn def() -> ToolDef {
        tool_def::<VersionParams>(Self::NAME, "Answers with the plugin's version.", Category::Data)
    }

    fn run(p: VersionParams) -> Result<VersionAnswer, Error> {
        Ok(VersionAnswer { version: env!("CARGO_PKG_VERSION"), n: p.n })
    }
}
