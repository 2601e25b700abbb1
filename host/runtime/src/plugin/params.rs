//! A tool's params checked against its declared JSON Schema by the host, before any instance
//! runs: a plugin never sees params its own schema refuses, and the caller learns which path is
//! wrong. The schema is compiled once, when the plugin loads: to a validator that reads the text
//! without building a document ([`streaming`]) where it can, and by `jsonschema`, which decides
//! every document the first refuses and names what is wrong.

mod streaming;

use bardo_core::error::{ErrorCode, ToolError};
use serde_json::Value;

/// Errors named in one refusal; the rest are counted.
const MAX_NAMED: usize = 3;
/// The longest description of one error (they quote the offending value).
const MAX_ERROR_CHARS: usize = 200;

/// A tool's compiled input schema, and its top-level property names (for "did you mean").
pub struct ParamsSchema {
    validator: jsonschema::Validator,
    /// The same schema read in one pass over the text, when it uses only what that reads.
    streaming: Option<streaming::Compiled>,
    names: Vec<String>,
}

impl std::fmt::Debug for ParamsSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ParamsSchema")
    }
}

impl ParamsSchema {
    /// Compile `schema`; the error says why it is not a usable JSON Schema. References are
    /// resolved only inside the schema: nothing is fetched.
    pub fn compile(schema: &Value) -> Result<Self, String> {
        let names = schema["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default();
        let validator =
            jsonschema::options().with_retriever(NoRetrieval).build(schema).map_err(|e| e.to_string())?;
        Ok(Self { validator, streaming: streaming::Compiled::compile(schema), names })
    }

    /// Whether the one-pass validator reads this schema (else every check builds a document).
    pub fn is_streamed(&self) -> bool {
        self.streaming.is_some()
    }

    /// What the one-pass validator alone says of `params_json` (`None`: it does not read this
    /// schema); for tests that hold it to `jsonschema`.
    pub fn accepted_in_one_pass(&self, params_json: &str) -> Option<bool> {
        self.streaming.as_ref().map(|s| s.accepts(params_json))
    }

    /// `params_json` parsed and checked; an `invalid-params` error naming what is wrong where.
    pub fn check(&self, tool: &str, params_json: &str) -> Result<(), ToolError> {
        // The common case: valid params, read once, nothing allocated.
        if self.streaming.as_ref().is_some_and(|s| s.accepts(params_json)) {
            return Ok(());
        }
        self.check_document(tool, params_json)
    }

    /// [`Self::check`] by `jsonschema` alone, on the params parsed to a document.
    pub fn check_document(&self, tool: &str, params_json: &str) -> Result<(), ToolError> {
        let mut params: Value = serde_json::from_str(params_json).map_err(|e| {
            ToolError::new(ErrorCode::InvalidParams, format!("params of `{tool}` are not JSON: {e}"))
        })?;
        // A field given as `null` is a field left out, as the plugin reads it: schemas say an
        // optional field's own type (no `["integer", "null"]` arrays, which clients' dialects
        // refuse), and clients that send every field with `null` for "none" stay served.
        if let Some(fields) = params.as_object_mut() {
            fields.retain(|_, v| !v.is_null());
        }
        // The common case first: a valid document is checked without building error reports.
        if self.validator.is_valid(&params) {
            return Ok(());
        }
        let errors: Vec<String> = self
            .validator
            .iter_errors(&params)
            .map(|e| {
                let path = e.instance_path().to_string();
                let path = if path.is_empty() { "/".to_owned() } else { path };
                let what: String = e.to_string().chars().take(MAX_ERROR_CHARS).collect();
                format!("at {path}: {what}")
            })
            .collect();
        if errors.is_empty() {
            return Ok(());
        }
        let more = errors.len().saturating_sub(MAX_NAMED);
        let mut message =
            format!("params of `{tool}` are invalid {}", errors[..errors.len().min(MAX_NAMED)].join("; "));
        if more > 0 {
            message.push_str(&format!(" (and {more} more)"));
        }
        // A misspelt name is the likeliest cause: say which was meant.
        for key in params.as_object().into_iter().flat_map(|o| o.keys()).filter(|k| !self.names.contains(k)) {
            if let Some(meant) = bardo_core::suggest::closest(key, self.names.iter().map(String::as_str)) {
                message.push_str(&format!("; `{key}`: did you mean `{meant}`?"));
            }
        }
        Err(ToolError::new(ErrorCode::InvalidParams, message))
    }
}

/// Refuses every external reference: a plugin's schema cannot make the host fetch anything.
struct NoRetrieval;

impl jsonschema::Retrieve for NoRetrieval {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("external schema references are not fetched ({uri})").into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> ParamsSchema {
        ParamsSchema::compile(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"amount": {"type": "string"}, "chain_id": {"type": "integer", "minimum": 1}},
            "required": ["amount"],
            "additionalProperties": false
        }))
        .expect("compiles offline")
    }

    #[test]
    fn names_the_failing_path_and_refuses_non_json() {
        let s = schema();
        assert!(s.check("t", r#"{"amount":"5","chain_id":1}"#).is_ok());
        let e = s.check("t", r#"{"amount":5}"#).expect_err("wrong type");
        assert_eq!(e.code, ErrorCode::InvalidParams);
        assert!(e.message.contains("at /amount") && e.message.contains("string"), "{}", e.message);
        let e = s.check("t", r#"{"chain_id":0}"#).expect_err("missing and out of range");
        assert!(e.message.contains("at /:") && e.message.contains("amount"), "{}", e.message);
        assert!(e.message.contains("at /chain_id"), "{}", e.message);
        let e = s.check("t", r#"{"amout":"5","chainId":1}"#).expect_err("misspelt");
        assert!(e.message.contains("`amout`: did you mean `amount`?"), "{}", e.message);
        assert!(e.message.contains("`chainId`: did you mean `chain_id`?"), "{}", e.message);
        let e = s.check("t", "not json").expect_err("not json");
        assert!(e.message.contains("not JSON"), "{}", e.message);
    }

    #[test]
    fn a_null_field_is_a_field_left_out() {
        let s = schema();
        assert!(s.check("t", r#"{"amount":"5","chain_id":null}"#).is_ok(), "optional, given as null");
        let e = s.check("t", r#"{"amount":null}"#).expect_err("required, given as null");
        assert!(e.message.contains("amount"), "{}", e.message);
    }

    #[test]
    fn a_schema_that_points_elsewhere_does_not_compile() {
        let e = ParamsSchema::compile(&json!({"$ref": "https://example.com/schema.json"}))
            .expect_err("external reference");
        assert!(e.contains("not fetched"), "{e}");
    }
}
