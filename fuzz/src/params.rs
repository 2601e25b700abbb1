//! A tool's params checked against the schema its plugin declares (`ParamsSchema`): both are
//! hostile input — the schema comes from a plugin, the params from an agent.
//! Oracles: compiling any schema fetches nothing and never panics; params the check accepts
//! are JSON the compiled schema accepts; the one-pass validator accepts nothing `jsonschema`
//! refuses; a refusal is `invalid-params` and short (it quotes the offending value, cut).

use bardo_core::error::ErrorCode;
use bardo_runtime::plugin::ParamsSchema;

/// A swap's schema, as the SDK derives it for the Uniswap plugin.
const SWAP: &str = r#"{"type":"object","additionalProperties":false,
  "required":["chain_id","token_in","token_out","amount"],
  "properties":{"chain_id":{"type":"integer","minimum":1},
    "token_in":{"type":"string","minLength":1},"token_out":{"type":"string","minLength":1},
    "amount":{"type":"string","pattern":"^[0-9]+(\\.[0-9]+)?$"},
    "slippage_bps":{"type":"integer","minimum":0,"maximum":10000},
    "route":{"type":"array","maxItems":4,"items":{"type":"object","properties":{"pool":{"type":"string"}}}}}}"#;

/// One input; panics when an oracle fails.
pub fn run(data: &[u8]) {
    // The first byte: the swap schema, or the first line of the input as the schema.
    let Some((&head, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let (schema, params) = if head & 1 == 0 {
        (SWAP.to_owned(), text.into_owned())
    } else {
        let (schema, params) = text.split_once('\n').unwrap_or((&text, "{}"));
        (schema.to_owned(), params.to_owned())
    };
    let Ok(schema) = serde_json::from_str::<serde_json::Value>(&schema) else { return };
    let Ok(compiled) = ParamsSchema::compile(&schema) else { return };
    if compiled.accepted_in_one_pass(&params) == Some(true) {
        let reference = compiled.check_document("fuzz_tool", &params);
        assert!(reference.is_ok(), "accepted in one pass, refused by jsonschema: {params}: {reference:?}");
    }
    match compiled.check("fuzz_tool", &params) {
        Ok(()) => {
            assert!(serde_json::from_str::<serde_json::Value>(&params).is_ok(), "accepted params are JSON")
        }
        Err(e) => {
            assert_eq!(e.code, ErrorCode::InvalidParams, "{e}");
            assert!(
                e.message.len() < 4096 + params.len().min(1024),
                "a refusal is short: {} bytes",
                e.message.len()
            );
        }
    }
}
