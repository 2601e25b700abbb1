//! Each incoming JSON-RPC message screened before rmcp reads it, on both transports: what rmcp
//! would drop without a word or answer oddly — malformed JSON, invalid UTF-8, nesting deeper than
//! the parser's limit, a batch (except on an HTTP session at 2025-03-26: `crate::batch`), a body
//! that is no request, `tools/call` without params, an
//! unknown method of any length, `initialize` twice — gets the JSON-RPC 2.0 error the
//! specifications name, with the request's `id` (or `null` when there is none to tell).

use serde_json::{Value, json};

/// The one revision whose sessions may send batches (`crate::batch` serves them).
pub(crate) const BATCH_REVISION: &str = "2025-03-26";

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// The longest method name any MCP revision uses, with room to spare: a longer one is unknown
/// and is not echoed back whole.
const LONGEST_METHOD: usize = 64;

/// What to do with one incoming message.
#[derive(Debug, PartialEq)]
pub enum Screened {
    /// Hand it to the server.
    Pass,
    /// Answer it with this error response; the server never sees it.
    Reply(Value),
    /// A notification nobody can act on: no answer (JSON-RPC answers no notification).
    Drop,
}

/// The parts of a message the checks need, once it parsed.
pub struct Message<'a> {
    /// Its `method`, for a request or notification.
    pub method: Option<&'a str>,
    /// Whether it has an `id` (a request; a response has one too).
    pub is_request: bool,
    /// The revision an `initialize` asks for.
    pub protocol_version: Option<&'a str>,
    /// For an `initialize`: whether its params have the shape every revision asks for
    /// (`protocolVersion`, `capabilities`, `clientInfo` with `name` and `version`).
    pub well_formed: bool,
}

/// Whether `params` are an `initialize`'s: rmcp refuses others, and such a refusal must not
/// count as the session's one handshake.
fn initialize_params(params: Option<&Value>) -> bool {
    let Some(p) = params else { return false };
    let text = |v: Option<&Value>| v.is_some_and(Value::is_string);
    text(p.get("protocolVersion"))
        && p.get("capabilities").is_some_and(Value::is_object)
        && p.get("clientInfo").is_some_and(|c| text(c.get("name")) && text(c.get("version")))
}

fn error(id: &Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

/// Screen one message, `bytes` as it arrived; `seen` says what the message is when it passes.
pub fn screen(bytes: &[u8], seen: impl FnOnce(&Message) -> Option<(i64, String)>) -> Screened {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Screened::Reply(error(&Value::Null, PARSE_ERROR, "the message is not UTF-8"));
    };
    // serde_json refuses nesting deeper than 128 levels: a parse error, not a crash.
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Screened::Reply(error(&Value::Null, PARSE_ERROR, format!("not JSON: {e}"))),
    };
    let Value::Object(message) = &value else {
        let what = if value.is_array() {
            "a batch: send one request per message (batches are served only on HTTP sessions negotiated at 2025-03-26, the revision that allows them)"
        } else {
            "not a JSON-RPC request: send one JSON object"
        };
        return Screened::Reply(error(&Value::Null, INVALID_REQUEST, what));
    };
    // MCP's ids are strings or integers, never null: any other is answered (with id null, as
    // JSON-RPC says when the id cannot be read), not passed on as a notification or echoed.
    let id = match message.get("id") {
        Some(id @ Value::String(_)) => Some(id.clone()),
        Some(id @ Value::Number(n)) if n.is_i64() || n.is_u64() => Some(id.clone()),
        None => None,
        Some(_) => {
            return Screened::Reply(error(
                &Value::Null,
                INVALID_REQUEST,
                "\"id\" must be a string or an integer",
            ));
        }
    };
    let answer_id = id.clone().unwrap_or(Value::Null);
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Screened::Reply(error(&answer_id, INVALID_REQUEST, "a message needs \"jsonrpc\": \"2.0\""));
    }
    let method = match message.get("method") {
        Some(Value::String(m)) => Some(m.as_str()),
        Some(_) => return Screened::Reply(error(&answer_id, INVALID_REQUEST, "\"method\" must be a string")),
        // A response to the server's own request (elicitation, sampling, roots).
        None if id.is_some() && (message.contains_key("result") || message.contains_key("error")) => None,
        None => {
            return Screened::Reply(error(
                &answer_id,
                INVALID_REQUEST,
                "neither a request (\"method\") nor a response (\"result\" or \"error\")",
            ));
        }
    };
    let is_request = id.is_some();
    let refuse = |code: i64, text: String| {
        if is_request { Screened::Reply(error(&answer_id, code, text)) } else { Screened::Drop }
    };
    if let Some(m) = method {
        if m.len() > LONGEST_METHOD {
            let shown: String = m.chars().take(LONGEST_METHOD).collect();
            return refuse(METHOD_NOT_FOUND, format!("method not found: `{shown}…`"));
        }
        if m == "tools/call" && !message.get("params").is_some_and(Value::is_object) {
            return refuse(
                INVALID_PARAMS,
                "tools/call needs params: {\"name\": TOOL, \"arguments\": {...}}".into(),
            );
        }
    }
    let protocol_version =
        message.get("params").and_then(|p| p.get("protocolVersion")).and_then(Value::as_str);
    let well_formed = method != Some("initialize") || initialize_params(message.get("params"));
    match seen(&Message { method, is_request, protocol_version, well_formed }) {
        Some((code, text)) => refuse(code, text),
        None => Screened::Pass,
    }
}

/// One stdio session's handshake, as its messages pass: `initialize` first (pings and the
/// 2026-07-28 revision's `server/discover` probe excepted) and once.
#[derive(Debug, Default)]
pub struct Handshake {
    initialized: bool,
    /// Initialized at 2025-03-26, the revision that allows batches.
    batching: bool,
}

impl Handshake {
    /// Why `message` is out of order, if it is.
    pub fn check(&mut self, message: &Message) -> Option<(i64, String)> {
        let method = message.method?;
        if method == "initialize" {
            if self.initialized {
                return Some((INVALID_REQUEST, "the session is initialized already: initialize once".into()));
            }
            if !message.well_formed {
                // Refused, and not the handshake: the corrected one is still the first.
                return Some((
                    INVALID_PARAMS,
                    "initialize needs params {\"protocolVersion\": \"2025-11-25\", \"capabilities\": {}, \
                     \"clientInfo\": {\"name\": …, \"version\": …}}"
                        .into(),
                ));
            }
            self.initialized = true;
            // rmcp agrees to a revision it serves, which 2025-03-26 is.
            self.batching = message.protocol_version == Some(BATCH_REVISION);
            return None;
        }
        // A notification before it is dropped unanswered (rmcp would end the session on it).
        let early = !self.initialized && !matches!(method, "ping" | "server/discover");
        early.then(|| (INVALID_REQUEST, format!("send initialize before `{method}`")))
    }
}

impl Handshake {
    /// Whether the session may send batches.
    pub(crate) fn batching(&self) -> bool {
        self.batching
    }
}

/// An `initialize` on an HTTP session that has one already (its `Mcp-Session-Id` is set).
pub(crate) fn initialize_again(message: &Message) -> Option<(i64, String)> {
    (message.method == Some("initialize")).then(|| {
        (
            INVALID_REQUEST,
            "this session is initialized already: start a new one without Mcp-Session-Id".into(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(s: &Screened) -> (Option<i64>, Value) {
        match s {
            Screened::Reply(v) => (v["error"]["code"].as_i64(), v["id"].clone()),
            other => panic!("no reply: {other:?}"),
        }
    }

    fn pass(_: &Message) -> Option<(i64, String)> {
        None
    }

    #[test]
    fn ids_that_are_not_strings_or_integers_are_answered_with_null() {
        for id in ["null", "{}", "true", "1.5", "[1]"] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            assert_eq!(code(&screen(text.as_bytes(), pass)), (Some(INVALID_REQUEST), Value::Null), "{id}");
        }
        assert_eq!(screen(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#, pass), Screened::Pass);
        assert_eq!(screen(br#"{"jsonrpc":"2.0","id":"x","method":"ping"}"#, pass), Screened::Pass);
    }

    #[test]
    fn malformed_messages_get_the_json_rpc_error_with_their_id() {
        assert_eq!(code(&screen(b"{not json", pass)), (Some(PARSE_ERROR), Value::Null));
        assert_eq!(code(&screen(b"\xff\xfe{}", pass)), (Some(PARSE_ERROR), Value::Null));
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(code(&screen(deep.as_bytes(), pass)), (Some(PARSE_ERROR), Value::Null));
        assert_eq!(
            code(&screen(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, pass)).0,
            Some(INVALID_REQUEST)
        );
        assert_eq!(code(&screen(br#""text""#, pass)).0, Some(INVALID_REQUEST));
        assert_eq!(code(&screen(br#"{"id":7,"method":"ping"}"#, pass)), (Some(INVALID_REQUEST), json!(7)));
        assert_eq!(
            code(&screen(br#"{"jsonrpc":"2.0","id":"a"}"#, pass)),
            (Some(INVALID_REQUEST), json!("a"))
        );
        assert_eq!(
            code(&screen(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#, pass)),
            (Some(INVALID_PARAMS), json!(3))
        );
        let long = format!(r#"{{"jsonrpc":"2.0","id":4,"method":"{}"}}"#, "x".repeat(100_000));
        let Screened::Reply(reply) = screen(long.as_bytes(), pass) else { panic!("no reply") };
        assert_eq!(reply["error"]["code"], METHOD_NOT_FOUND);
        assert!(reply.to_string().len() < 300, "the unknown method is not echoed whole");
        // Notifications get no answer; requests and responses pass.
        assert_eq!(screen(br#"{"jsonrpc":"2.0","method":"tools/call"}"#, pass), Screened::Drop);
        assert_eq!(screen(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, pass), Screened::Pass);
        assert_eq!(screen(br#"{"jsonrpc":"2.0","id":9,"result":{}}"#, pass), Screened::Pass);
    }

    #[test]
    fn initialize_comes_first_and_once() {
        let mut h = Handshake::default();
        let mut run = |text: &[u8]| screen(text, |m| h.check(m));
        assert_eq!(run(br#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#), Screened::Pass);
        assert_eq!(code(&run(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)).0, Some(INVALID_REQUEST));
        assert_eq!(
            run(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Screened::Drop,
            "early"
        );
        assert_eq!(
            code(&run(br#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}"#)).0,
            Some(INVALID_PARAMS)
        );
        let init = br#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
        assert_eq!(run(init), Screened::Pass, "the corrected one is the handshake");
        assert_eq!(run(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), Screened::Pass);
        assert_eq!(run(br#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#), Screened::Pass);
        assert_eq!(
            code(&run(br#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}"#)).0,
            Some(INVALID_REQUEST)
        );
    }
}
