//! ResultFilter: what an agent reads passes through here. Results are capped in size, secrets
//! are redacted, and strings that come from the chain — a token's name or symbol, which anyone
//! deploying a token chooses — are reduced to plain characters, so they cannot carry markup or
//! instructions into the model's context.

use bardo_core::error::{ErrorCode, ToolError};
use serde_json::Value;

/// Keys whose values are chain-controlled text.
const CHAIN_TEXT: &[&str] = &["name", "symbol"];
/// Longest chain-controlled string kept.
const CHAIN_TEXT_MAX: usize = 48;

/// Filter `value` for an agent: at most `max_bytes` serialized, `secrets` redacted.
pub fn filter(value: Value, secrets: &[String], max_bytes: usize) -> Result<Value, ToolError> {
    let value = walk(value, None, secrets);
    let size = value.to_string().len();
    if size > max_bytes {
        return Err(ToolError::new(
            ErrorCode::LimitExceeded,
            format!(
                "the result is {size} bytes, over the {max_bytes} bytes an agent is shown; narrow the query"
            ),
        ));
    }
    Ok(value)
}

fn walk(value: Value, key: Option<&str>, secrets: &[String]) -> Value {
    match value {
        Value::String(s) => {
            let lower = s.to_lowercase();
            if secrets.iter().any(|secret| !secret.is_empty() && lower.contains(&secret.to_lowercase())) {
                return Value::String("[redacted]".into());
            }
            if key.is_some_and(|k| CHAIN_TEXT.contains(&k)) {
                Value::String(neutralize(&s))
            } else {
                Value::String(s)
            }
        }
        Value::Array(items) => Value::Array(items.into_iter().map(|v| walk(v, key, secrets)).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let v = walk(v, Some(&k), secrets);
                    (k, v)
                })
                .collect(),
        ),
        other => other,
    }
}

/// Letters, digits, spaces and `.-_+/()` only; anything else becomes `_`; capped in length.
fn neutralize(s: &str) -> String {
    s.chars()
        .take(CHAIN_TEXT_MAX)
        .map(|c| if c.is_alphanumeric() || " .-_+/()".contains(c) { c } else { '_' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn caps_redacts_and_neutralizes() {
        let secret = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80".to_owned();
        let v = json!({"token": {"name": "USD Coin <script>alert(1)</script>", "symbol": "USDC"},
                       "note": format!("key 0x{}", secret.to_uppercase()), "n": 5});
        let out = filter(v, &[secret], 10_000).expect("fits");
        assert_eq!(out["token"]["name"], "USD Coin _script_alert(1)_/script_");
        assert_eq!(out["token"]["symbol"], "USDC");
        assert_eq!(out["note"], "[redacted]");
        assert_eq!(out["n"], 5);
        let big = json!({"data": "x".repeat(2_000)});
        assert_eq!(filter(big, &[], 1_000).expect_err("too big").code, ErrorCode::LimitExceeded);
    }
}
