// Shared by the echo-v2-1 and echo-v4 test programs: `echo_get_version` whose `n` is now a
// string — a breaking change of its params. v2-1 ships it in a patch release (refused as an
// update of 0.2.0), v4 in a new major version with schema version 2 (accepted).

use bardo_sdk::{Category, Error, ReadTool, ToolDef, tool_def};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `echo_get_version`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VersionParams {
    /// Echoed back, now as text.
    pub n: String,
}

/// Which version answered, and the echoed text.
#[derive(Serialize)]
pub struct VersionAnswer {
    pub version: &'static str,
    pub n: String,
}

pub struct Version;

impl ReadTool for Version {
    const NAME: &'static str = "echo_get_version";
    type Params = VersionParams;
    type Output = VersionAnswer;

    fn def() -> ToolDef {
        ToolDef {
            schema_version: 2,
            ..tool_def::<VersionParams>(Self::NAME, "Answers with the plugin's version.", Category::Data)
        }
    }

    fn run(p: VersionParams) -> Result<VersionAnswer, Error> {
        Ok(VersionAnswer { version: env!("CARGO_PKG_VERSION"), n: p.n })
    }
}
