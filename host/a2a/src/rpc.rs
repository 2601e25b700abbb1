//! JSON-RPC 2.0 at `/a2a`, with the A2A 1.0 methods the official SDKs call (`SendMessage`,
//! `SendStreamingMessage`, `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask`) and the
//! specification's error codes. Streams are server-sent events, one JSON-RPC response each.

use crate::A2a;
use crate::run::Ask;
use crate::tasks::{Record, State, new_id};
use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::sync::broadcast;

/// A JSON-RPC error with its code.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The JSON-RPC or A2A code.
    pub code: i64,
    /// What went wrong and what to send instead.
    pub message: String,
}

fn err(code: i64, message: impl Into<String>) -> RpcError {
    RpcError { code, message: message.into() }
}

/// JSON-RPC: not JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: not a request object.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: no such method.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: bad params.
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC: the server failed.
pub(crate) const INTERNAL: i64 = -32603;
/// A2A: no such task.
pub(crate) const TASK_NOT_FOUND: i64 = -32001;
/// A2A: the task cannot be cancelled now.
pub(crate) const TASK_NOT_CANCELABLE: i64 = -32002;
/// A2A: push notifications are not offered.
pub(crate) const PUSH_NOT_SUPPORTED: i64 = -32003;
/// A2A: the operation does not apply (e.g. a message to a finished task).
pub(crate) const UNSUPPORTED_OPERATION: i64 = -32004;
/// A2A: the content type is not accepted.
pub(crate) const CONTENT_TYPE_NOT_SUPPORTED: i64 = -32005;
/// A2A: no extended card.
pub(crate) const EXTENDED_CARD_NOT_CONFIGURED: i64 = -32007;
/// A2A: the protocol version asked for is not served.
pub(crate) const VERSION_NOT_SUPPORTED: i64 = -32009;

/// The message shapes a task accepts, for errors.
const SHAPES: &str = "send one data part: {\"tool\": \"query_state\", \"args\": {\"kind\": TOOL, \"params\": {...}}} \
                      (or another agent tool by name), {\"action\": KIND, \"params\": {...}} for a write, or \
                      {\"confirm\": true|false} on a task that waits for input (message.taskId set); the agent card \
                      lists the skills with examples";

fn reply(id: &Value, result: Result<Value, RpcError>) -> Value {
    match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": e.code, "message": e.message}}),
    }
}

fn json_response(value: Value) -> Response {
    axum::Json(value).into_response()
}

/// `value` with every integral number as an integer. A data part is a protobuf `Value`, whose
/// numbers are doubles: the official SDKs send `31337` as `31337.0`, which a tool's schema
/// (`"type": "integer"`) rightly refuses. Beyond 2^53 a double is not exact, so such numbers are
/// left as they are (send big amounts as strings, as the tools' schemas ask).
fn integral(value: Value) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() <= EXACT => json!(f as i64),
            _ => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(integral).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, integral(v))).collect()),
        other => other,
    }
}

/// The caller's ask in `message`'s data part.
pub(crate) fn parse_ask(message: &Value) -> Result<Ask, RpcError> {
    let parts = message["parts"]
        .as_array()
        .ok_or_else(|| err(INVALID_PARAMS, format!("message.parts is missing; {SHAPES}")))?;
    let Some(data) = parts.iter().find_map(|p| p.get("data")) else {
        let code = if parts.iter().any(|p| p.get("text").is_some()) {
            CONTENT_TYPE_NOT_SUPPORTED
        } else {
            INVALID_PARAMS
        };
        return Err(err(
            code,
            format!("text is not interpreted here (no natural-language parsing): {SHAPES}"),
        ));
    };
    let data = integral(data.clone());
    let obj = data
        .as_object()
        .ok_or_else(|| err(INVALID_PARAMS, format!("the data part is not an object; {SHAPES}")))?;
    if let Some(confirm) = obj.get("confirm") {
        return confirm
            .as_bool()
            .map(Ask::Confirm)
            .ok_or_else(|| err(INVALID_PARAMS, "`confirm` must be true or false"));
    }
    if let Some(kind) = obj.get("action") {
        let kind = kind
            .as_str()
            .ok_or_else(|| err(INVALID_PARAMS, "`action` must be an action kind, e.g. \"swap\""))?;
        let params = obj.get("params").filter(|p| p.is_object()).cloned().unwrap_or_else(|| json!({}));
        return Ok(Ask::Action { kind: kind.to_owned(), params });
    }
    if let Some(name) = obj.get("tool") {
        let name = name.as_str().ok_or_else(|| err(INVALID_PARAMS, "`tool` must be an agent tool's name"))?;
        let args = obj.get("args").cloned().unwrap_or_else(|| json!({}));
        return match name {
            "preview_action" => Ok(Ask::Action {
                kind: args["kind"].as_str().unwrap_or_default().to_owned(),
                params: args.get("params").cloned().unwrap_or_else(|| json!({})),
            }),
            "commit_action" | "cancel_action" => Err(err(
                INVALID_PARAMS,
                format!(
                    "`{name}` is not called directly here: a write's task waits for {{\"confirm\": true|false}}"
                ),
            )),
            _ => Ok(Ask::Tool { name: name.to_owned(), args }),
        };
    }
    Err(err(INVALID_PARAMS, format!("the data part names no tool, action or confirmation; {SHAPES}")))
}

fn task_id(params: &Value) -> Result<String, RpcError> {
    params["id"]
        .as_str()
        .map(String::from)
        .ok_or_else(|| err(INVALID_PARAMS, "params.id (the task id) is required"))
}

fn not_found(id: &str) -> RpcError {
    let shown: String = id.chars().take(80).collect();
    err(TASK_NOT_FOUND, format!("no task `{shown}`"))
}

fn history_length(params: &Value) -> Option<usize> {
    params["historyLength"].as_u64().map(|n| n as usize)
}

/// `historyLength`, if given, is a whole number of at least 0 (protobuf may send `5.0`).
fn checked_history_length(params: &Value) -> Result<(), RpcError> {
    match &params["historyLength"] {
        Value::Null => Ok(()),
        v if v.as_f64().is_some_and(|n| n >= 0.0 && n.fract() == 0.0) => Ok(()),
        v => Err(err(INVALID_PARAMS, format!("historyLength {v}: a whole number of messages, 0 or more"))),
    }
}

/// A request read from `headers` and `body`: its id, method and params; or the error response
/// that answers it whole (the caller sends it as it is, with `415` when the media type is wrong).
pub fn request(headers: &HeaderMap, body: &[u8]) -> Result<(Value, String, Value), (Value, bool)> {
    let content_type =
        headers.get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let media = content_type.split(';').next().unwrap_or("").trim();
    if !media.eq_ignore_ascii_case("application/json") {
        let shown: String = content_type.chars().take(80).collect();
        let e = err(INVALID_REQUEST, format!("send `Content-Type: application/json` (got `{shown}`)"));
        return Err((reply(&Value::Null, Err(e)), true));
    }
    let request: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return Err((reply(&Value::Null, Err(err(PARSE_ERROR, format!("not JSON: {e}")))), false)),
    };
    if !request.is_object() {
        let e = err(INVALID_REQUEST, "a request is one JSON-RPC object (no batches)");
        return Err((reply(&Value::Null, Err(e)), false));
    }
    // JSON-RPC ids are strings, numbers or null: another is refused, not echoed.
    let id = match request.get("id") {
        None => Value::Null,
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => id.clone(),
        Some(_) => {
            let e = err(INVALID_REQUEST, "a request's \"id\" is a string, a number or null");
            return Err((reply(&Value::Null, Err(e)), false));
        }
    };
    let (Some("2.0"), Some(method)) = (request["jsonrpc"].as_str(), request["method"].as_str()) else {
        let e = err(INVALID_REQUEST, "a request needs \"jsonrpc\": \"2.0\" and a string \"method\"");
        return Err((reply(&id, Err(e)), false));
    };
    if let Some(v) = headers.get("a2a-version").and_then(|v| v.to_str().ok()) {
        let major_minor: Vec<&str> = v.trim().split('.').take(2).collect();
        if major_minor != ["1", "0"] {
            let e = err(
                VERSION_NOT_SUPPORTED,
                format!("A2A-Version {v} is not served; this server speaks A2A 1.0"),
            );
            return Err((reply(&id, Err(e)), false));
        }
    }
    let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
    Ok((id, method.to_owned(), params))
}

/// Handle one POST to `/a2a`.
/// `operator`: the request carries the operator's token (only it confirms a permit the
/// confirmation policy holds for a person).
pub(crate) async fn handle(a2a: Arc<A2a>, headers: HeaderMap, body: Bytes, operator: bool) -> Response {
    let (id, method, params) = match request(&headers, &body) {
        Ok(request) => request,
        Err((answer, unsupported_media)) => {
            let mut response = json_response(answer);
            if unsupported_media {
                *response.status_mut() = axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE;
            }
            return response;
        }
    };
    let method = method.as_str();
    // A history length is a count: a negative or fractional one is refused, not read as "all".
    let history = if method.starts_with("Send") { &params["configuration"] } else { &params };
    if let Err(e) = checked_history_length(history) {
        return json_response(reply(&id, Err(e)));
    }
    let result = match method {
        "SendMessage" => send(&a2a, &params, false, operator).await.map(|(task, _)| json!({"task": task})),
        "SendStreamingMessage" => match send(&a2a, &params, true, operator).await {
            Ok((task, Some(rx))) => return stream_response(a2a, id, task, rx),
            Ok((task, None)) => Ok(json!({"task": task})),
            Err(e) => Err(e),
        },
        "SubscribeToTask" => match subscribe(&a2a, &params) {
            Ok((task, rx)) => return stream_response(a2a, id, task, rx),
            Err(e) => Err(e),
        },
        "GetTask" => task_id(&params)
            .and_then(|t| a2a.runner.tasks.get(&t).ok_or_else(|| not_found(&t)))
            .map(|r| r.task(history_length(&params))),
        "ListTasks" => list(&a2a, &params),
        "CancelTask" => cancel(&a2a, &params).await,
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => Err(err(
            PUSH_NOT_SUPPORTED,
            "push notifications are not supported: stream the task (SubscribeToTask) instead",
        )),
        "GetExtendedAgentCard" => Err(err(EXTENDED_CARD_NOT_CONFIGURED, "there is no extended agent card")),
        "message/send" | "message/stream" | "tasks/get" | "tasks/cancel" | "tasks/resubscribe" => Err(err(
            METHOD_NOT_FOUND,
            format!(
                "`{method}` is an A2A 0.3 name; this server speaks A2A 1.0: SendMessage, SendStreamingMessage, GetTask, CancelTask, SubscribeToTask"
            ),
        )),
        other => {
            let shown: String = other.chars().take(64).collect();
            Err(err(METHOD_NOT_FOUND, format!("no method `{shown}`")))
        }
    };
    json_response(reply(&id, result))
}

/// `SendMessage` / `SendStreamingMessage`: a new task, or the confirmation of a waiting one.
/// The task when it settles (or at once with `returnImmediately`), or for a stream its
/// snapshot and changes.
async fn send(
    a2a: &Arc<A2a>,
    params: &Value,
    streaming: bool,
    operator: bool,
) -> Result<(Value, Option<broadcast::Receiver<Value>>), RpcError> {
    let message = params
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| err(INVALID_PARAMS, "params.message is required"))?;
    let ask = parse_ask(message)?;
    let tasks = &a2a.runner.tasks;
    let store = |e: crate::tasks::StoreError| err(INTERNAL, e.to_string());
    let id = match message["taskId"].as_str().filter(|t| !t.is_empty()) {
        Some(task) => {
            let r = tasks.get(task).ok_or_else(|| not_found(task))?;
            let Ask::Confirm(commit) = ask else {
                return Err(err(
                    UNSUPPORTED_OPERATION,
                    format!(
                        "task {task} is {}: only {{\"confirm\": true|false}} continues a task; start a new task (no taskId) for a new ask",
                        r.state.name()
                    ),
                ));
            };
            if r.state != State::InputRequired {
                return Err(err(
                    UNSUPPORTED_OPERATION,
                    format!("task {task} is {}, not waiting for a confirmation", r.state.name()),
                ));
            }
            if commit {
                let permit_id = r.permit_id.clone().unwrap_or_default();
                confirm_held(a2a, task, &permit_id, operator).await?;
            }
            if !a2a.runner.take_answer(task) {
                let now = tasks.get(task).map_or_else(|| "gone".to_owned(), |r| r.state.name());
                return Err(err(
                    UNSUPPORTED_OPERATION,
                    format!(
                        "task {task} is answered already (it is {now}): follow it with GetTask or SubscribeToTask"
                    ),
                ));
            }
            if let Err(e) = tasks.add_message(task, message.clone()) {
                a2a.runner.release(task);
                return Err(store(e));
            }
            let Some((_, rx)) = tasks.watch(task) else {
                a2a.runner.release(task);
                return Err(not_found(task));
            };
            a2a.runner.confirm(task, commit);
            return settle(a2a, task, rx, streaming, params).await;
        }
        None => {
            if matches!(ask, Ask::Confirm(_)) {
                return Err(err(
                    INVALID_PARAMS,
                    "a confirmation continues a task: set message.taskId to the waiting task's id",
                ));
            }
            let context = message["contextId"]
                .as_str()
                .filter(|c| !c.is_empty())
                .map(String::from)
                .unwrap_or_else(|| new_id("ctx-"));
            let mut message = message.clone();
            message["contextId"] = json!(context);
            let write = matches!(ask, Ask::Action { .. });
            let r = tasks.create(context, message, write).map_err(store)?;
            r.id
        }
    };
    let (_, rx) = tasks.watch(&id).ok_or_else(|| not_found(&id))?;
    a2a.runner.start(&id, ask);
    settle(a2a, &id, rx, streaming, params).await
}

/// A `{"confirm": true}` on task `task`, whose permit `permit_id` the confirmation policy may
/// hold for a person: with the operator's token it is that person's confirmation (recorded and
/// audited); with an agent's, refused (the task keeps waiting) unless the operator confirmed it
/// already (`bardo tui`, `bardo confirm`).
async fn confirm_held(a2a: &Arc<A2a>, task: &str, permit_id: &str, operator: bool) -> Result<(), RpcError> {
    let path = (a2a.adapter)().write_path().clone();
    let id = permit_id.to_owned();
    let held = tokio::task::spawn_blocking(move || match path.pending_confirmation(&id) {
        Ok(Some(_)) if operator => {
            path.confirm(&id, bardo_safety::confirm::Channel::A2aOperator, "operator token").map(|()| None)
        }
        Ok(Some(pending)) => Ok(Some(pending.policy)),
        Ok(None) => Ok(None),
        // Not open any more: the commit itself says why (expired, cancelled, …).
        Err(_) => Ok(None),
    })
    .await
    .map_err(|e| err(INTERNAL, format!("checking the permit's confirmation failed: {e}")))?;
    match held {
        Ok(None) => Ok(()),
        Ok(Some(policy)) => Err(RpcError {
            code: UNSUPPORTED_OPERATION,
            message: format!(
                "task {task}'s permit `{permit_id}` waits for a person to confirm it ({policy} in [safety]); an agent's \
                 token cannot confirm it: the operator replies {{\"confirm\": true}} with the operator's token \
                 (operator.token beside the host key), or confirms it in `bardo tui` (y) or with `bardo confirm \
                 {permit_id}`; the task keeps waiting until the permit expires"
            ),
        }),
        // Refused by `[safety.confirm] via`: the message says what the operator does instead.
        Err(e) if e.code == bardo_core::ErrorCode::Denied => Err(err(UNSUPPORTED_OPERATION, e.message)),
        Err(e) => Err(err(INTERNAL, e.to_string())),
    }
}

/// Streaming: the task now and its receiver. Otherwise: the task once it settles (terminal or
/// waiting for input), or now if the caller asked to return immediately.
async fn settle(
    a2a: &Arc<A2a>,
    id: &str,
    mut rx: broadcast::Receiver<Value>,
    streaming: bool,
    params: &Value,
) -> Result<(Value, Option<broadcast::Receiver<Value>>), RpcError> {
    let now = || a2a.runner.tasks.get(id).ok_or_else(|| not_found(id));
    if streaming {
        return Ok((now()?.task(history_length(&params["configuration"])), Some(rx)));
    }
    if params["configuration"]["returnImmediately"].as_bool() != Some(true) {
        while !now()?.state.ends_stream() {
            if let Err(broadcast::error::RecvError::Closed) = rx.recv().await {
                break;
            }
        }
    }
    Ok((now()?.task(history_length(&params["configuration"])), None))
}

fn subscribe(a2a: &A2a, params: &Value) -> Result<(Value, broadcast::Receiver<Value>), RpcError> {
    let id = task_id(params)?;
    let (r, rx) = a2a.runner.tasks.watch(&id).ok_or_else(|| not_found(&id))?;
    if r.state.is_terminal() {
        return Err(err(
            UNSUPPORTED_OPERATION,
            format!("task {id} is {}: nothing more will happen; GetTask reads it", r.state.name()),
        ));
    }
    Ok((r.task(None), rx))
}

fn list(a2a: &A2a, params: &Value) -> Result<Value, RpcError> {
    let state = match params["status"].as_str() {
        None | Some("TASK_STATE_UNSPECIFIED") => None,
        Some(s) => {
            Some(State::from_wire(s).ok_or_else(|| err(INVALID_PARAMS, format!("unknown task state {s}")))?)
        }
    };
    let all: Vec<Record> = a2a.runner.tasks.list(params["contextId"].as_str(), state);
    let size = match &params["pageSize"] {
        Value::Null => 50,
        // Integers may arrive as protobuf doubles (`5.0`).
        v => v
            .as_f64()
            .filter(|n| n.fract() == 0.0 && (1.0..=100.0).contains(n))
            .map(|n| n as usize)
            .ok_or_else(|| err(INVALID_PARAMS, format!("pageSize {v}: an integer from 1 to 100")))?,
    };
    let start: usize = match params["pageToken"].as_str() {
        None | Some("") => 0,
        Some(token) => token.parse().ok().filter(|n| *n <= all.len()).ok_or_else(|| {
            let shown: String = token.chars().take(40).collect();
            err(
                INVALID_PARAMS,
                format!("pageToken `{shown}` is not one this server gave; list from the start without it"),
            )
        })?,
    };
    let page: Vec<Value> =
        all.iter().skip(start).take(size).map(|r| r.task(history_length(params))).collect();
    let next = if start + size < all.len() { (start + size).to_string() } else { String::new() };
    Ok(json!({"tasks": page, "nextPageToken": next, "pageSize": size, "totalSize": all.len()}))
}

async fn cancel(a2a: &Arc<A2a>, params: &Value) -> Result<Value, RpcError> {
    let id = task_id(params)?;
    let tasks = &a2a.runner.tasks;
    let (r, mut rx) = tasks.watch(&id).ok_or_else(|| not_found(&id))?;
    match r.state {
        s if s.is_terminal() => {
            return Err(err(
                TASK_NOT_CANCELABLE,
                format!("task {id} is {}: it cannot be cancelled", s.name()),
            ));
        }
        State::InputRequired => {
            a2a.runner
                .cancel_waiting(&id)
                .map_err(|e| err(TASK_NOT_CANCELABLE, format!("{}: {}", e.code.as_str(), e.message)))?;
        }
        _ => {
            // Running: its instance is interrupted at the next epoch tick; a commit already
            // broadcasting is not stopped and completes.
            if let Some(control) = tasks.control(&id) {
                control.cancel();
            }
            while !tasks.get(&id).ok_or_else(|| not_found(&id))?.state.ends_stream() {
                if let Err(broadcast::error::RecvError::Closed) = rx.recv().await {
                    break;
                }
            }
        }
    }
    let r = tasks.get(&id).ok_or_else(|| not_found(&id))?;
    if r.state != State::Canceled {
        return Err(err(
            TASK_NOT_CANCELABLE,
            format!("task {id} finished as {} before it could be cancelled", r.state.name()),
        ));
    }
    Ok(r.task(None))
}

/// Server-sent events: `task` first, then each change, until the task settles.
fn stream_response(a2a: Arc<A2a>, id: Value, task: Value, rx: broadcast::Receiver<Value>) -> Response {
    let task_id = task["id"].as_str().unwrap_or_default().to_owned();
    let first = reply(&id, Ok(json!({"task": task.clone()})));
    let done = State::from_wire(task["status"]["state"].as_str().unwrap_or_default())
        .is_some_and(|s| s.is_terminal());
    let state = (Some(first), rx, done, a2a, id, task_id);
    let events = stream::unfold(state, |(first, mut rx, done, a2a, id, task_id)| async move {
        if let Some(first) = first {
            return Some((event(&first), (None, rx, done, a2a, id, task_id)));
        }
        if done {
            return None;
        }
        match rx.recv().await {
            Ok(update) => {
                let ends = update["statusUpdate"]["status"]["state"]
                    .as_str()
                    .and_then(State::from_wire)
                    .is_some_and(State::ends_stream);
                Some((event(&reply(&id, Ok(update))), (None, rx, ends, a2a, id, task_id)))
            }
            // Fell behind: the task as it is now stands for what was missed.
            Err(broadcast::error::RecvError::Lagged(_)) => {
                let r = a2a.runner.tasks.get(&task_id)?;
                let ends = r.state.ends_stream();
                let now = event(&reply(&id, Ok(json!({"task": r.task(None)}))));
                Some((now, (None, rx, ends, a2a, id, task_id)))
            }
            Err(broadcast::error::RecvError::Closed) => None,
        }
    });
    Sse::new(events).keep_alive(KeepAlive::default()).into_response()
}

fn event(value: &Value) -> Result<Event, Infallible> {
    Ok(Event::default().data(value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(parts: Value) -> Value {
        json!({"messageId": "m", "role": "ROLE_USER", "parts": parts})
    }

    /// `historyLength` is a count: `-3` was read as "the whole history".
    #[test]
    fn a_history_length_is_a_count() {
        for ok in [
            json!({}),
            json!({"historyLength": 0}),
            json!({"historyLength": 3}),
            json!({"historyLength": 2.0}),
        ] {
            assert!(checked_history_length(&ok).is_ok(), "{ok}");
        }
        for bad in
            [json!({"historyLength": -3}), json!({"historyLength": 1.5}), json!({"historyLength": "2"})]
        {
            assert_eq!(checked_history_length(&bad).expect_err("refused").code, INVALID_PARAMS, "{bad}");
        }
    }

    /// JSON-RPC ids are strings, numbers or null: an object or array is refused with a `null`
    /// id, never echoed (an answer must be valid JSON-RPC whatever was sent).
    #[test]
    fn requests_are_answered_with_their_id_or_null() {
        let mut headers = HeaderMap::new();
        headers.insert(axum::http::header::CONTENT_TYPE, "application/json".parse().expect("header"));
        let read = |body: &str| request(&headers, body.as_bytes());
        let (id, method, params) = read(r#"{"jsonrpc":"2.0","id":"a","method":"GetTask"}"#).expect("read");
        assert_eq!((id, method.as_str(), params), (json!("a"), "GetTask", json!({})));
        for id in [r#"{"x":1}"#, "[1]", "true"] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"GetTask"}}"#);
            let (answer, _) = read(&body).expect_err("refused");
            assert_eq!(
                (answer["id"].clone(), answer["error"]["code"].clone()),
                (Value::Null, json!(INVALID_REQUEST))
            );
        }
        let (answer, _) = read(r#"{"jsonrpc":"2.0","id":9}"#).expect_err("no method");
        assert_eq!(answer["id"], 9);
        let (answer, _) = read("[").expect_err("not JSON");
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (Value::Null, json!(PARSE_ERROR))
        );
    }

    #[test]
    fn asks_are_read_from_the_data_part_only() {
        let read = message(
            json!([{"data": {"tool": "query_state", "args": {"kind": "get_pool_info", "params": {}}}}]),
        );
        assert_eq!(
            parse_ask(&read),
            Ok(Ask::Tool {
                name: "query_state".into(),
                args: json!({"kind": "get_pool_info", "params": {}})
            })
        );
        let write =
            message(json!([{"text": "please"}, {"data": {"action": "swap", "params": {"amount_in": "1"}}}]));
        assert_eq!(
            parse_ask(&write),
            Ok(Ask::Action { kind: "swap".into(), params: json!({"amount_in": "1"}) })
        );
        assert_eq!(parse_ask(&message(json!([{"data": {"confirm": false}}]))), Ok(Ask::Confirm(false)));
        let text = parse_ask(&message(json!([{"text": "swap 1 ETH for USDC"}]))).expect_err("text only");
        assert_eq!(text.code, CONTENT_TYPE_NOT_SUPPORTED);
        assert!(text.message.contains("\"action\""), "{}", text.message);
        assert_eq!(
            parse_ask(&message(json!([{"data": {"tool": "commit_action"}}]))).expect_err("direct").code,
            INVALID_PARAMS
        );
        assert_eq!(
            parse_ask(&message(json!([{"data": {"confirm": "yes"}}]))).expect_err("bool").code,
            INVALID_PARAMS
        );
        assert_eq!(parse_ask(&message(json!([{"data": [1]}]))).expect_err("object").code, INVALID_PARAMS);
        // Protobuf's doubles become integers again where they are integral and exact.
        let floats = message(
            json!([{"data": {"action": "swap", "params": {"chain_id": 31337.0, "slippage": 0.5,
                                                                          "path": [1.0, 2.5], "big": 1e300}}}]),
        );
        assert_eq!(
            parse_ask(&floats),
            Ok(Ask::Action {
                kind: "swap".into(),
                params: json!({"chain_id": 31337, "slippage": 0.5, "path": [1, 2.5], "big": 1e300})
            })
        );
    }
}
