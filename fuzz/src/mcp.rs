//! A session's incoming MCP messages (one per line, as over stdio) through the screen every
//! message passes before rmcp reads it (`bardo_mcp::fuzzing::screen`) and the handshake's order.
//! Oracles: each message is passed on (a JSON-RPC 2.0 object), dropped (a notification) or
//! answered by one valid JSON-RPC 2.0 error carrying the request's id — or `null` when it has
//! none that can be told (MCP's ids are strings or integers) — with a code the specification
//! names.

use bardo_mcp::fuzzing::{Handshake, Screened, screen};
use serde_json::Value;

const CODES: [i64; 4] = [-32700, -32600, -32601, -32602];

/// One input; panics when an oracle fails.
pub fn run(data: &[u8]) {
    let mut handshake = Handshake::default();
    for line in data.split(|b| *b == b'\n') {
        let parsed: Option<Value> = std::str::from_utf8(line).ok().and_then(|t| serde_json::from_str(t).ok());
        let object = parsed.as_ref().and_then(Value::as_object);
        // MCP's ids are strings or integers: any other (null, a fraction, an object) is answered
        // with null.
        let id = object.and_then(|o| o.get("id")).filter(|id| id.is_string() || id.is_i64() || id.is_u64());
        match screen(line, |m| handshake.check(m)) {
            Screened::Pass => {
                let o = object.expect("only an object passes");
                assert_eq!(o.get("jsonrpc").and_then(Value::as_str), Some("2.0"));
            }
            Screened::Drop => assert!(id.is_none(), "a request is answered, never dropped"),
            Screened::Reply(answer) => {
                // What goes back on the wire, read back.
                let wire: Value = serde_json::from_str(&answer.to_string()).expect("the answer is JSON");
                assert_eq!(wire["jsonrpc"], "2.0");
                assert!(wire.get("result").is_none());
                let code = wire["error"]["code"].as_i64().expect("an integer code");
                assert!(CODES.contains(&code), "code {code}");
                assert!(wire["error"]["message"].is_string());
                assert_eq!(&wire["id"], id.unwrap_or(&Value::Null), "the answer carries the request's id");
            }
        }
    }
}
