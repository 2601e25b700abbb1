//! A POST to the A2A endpoint: its headers (media type, `A2A-Version`) and body through the
//! request parser (`bardo_a2a::fuzzing::request`), then the ask in a message's parts.
//! Oracles: a request is read (a string method, params an object or what was sent) or answered
//! by one valid JSON-RPC 2.0 error whose id is the request's (a string or number) or `null`.

use axum::http::{HeaderMap, HeaderValue, header};
use serde_json::Value;

const CODES: [i64; 4] = [-32700, -32600, -32009, -32602];

/// One input; panics when an oracle fails.
pub fn run(data: &[u8]) {
    let Some((&head, body)) = data.split_first() else { return };
    let mut headers = HeaderMap::new();
    let media = ["application/json", "application/json; charset=utf-8", "text/plain", "APPLICATION/JSON"];
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media[head as usize % 4]));
    if head & 4 != 0 {
        let version = if head & 8 != 0 { "1.0" } else { "0.3" };
        headers.insert("a2a-version", HeaderValue::from_static(version));
    }
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let sent_id =
        parsed.as_ref().and_then(|v| v.get("id")).filter(|id| id.is_string() || id.is_number()).cloned();
    let sent_id = sent_id.as_ref();
    match bardo_a2a::fuzzing::request(&headers, body) {
        Ok((id, method, params)) => {
            let request = parsed.expect("a read request is JSON");
            assert_eq!(request["jsonrpc"], "2.0");
            assert_eq!(request["method"].as_str(), Some(method.as_str()));
            assert_eq!(&id, sent_id.unwrap_or(&Value::Null));
            if let Some(message) = params.get("message")
                && let Err(e) = bardo_a2a::fuzzing::ask(message)
            {
                assert!(e.code < 0 && !e.message.is_empty());
            }
        }
        Err((answer, _)) => {
            let wire: Value = serde_json::from_str(&answer.to_string()).expect("the answer is JSON");
            assert_eq!(wire["jsonrpc"], "2.0");
            let code = wire["error"]["code"].as_i64().expect("an integer code");
            assert!(CODES.contains(&code), "code {code}");
            let id = &wire["id"];
            assert!(id.is_null() || Some(id) == sent_id, "the answer's id {id} is the request's or null");
        }
    }
}
