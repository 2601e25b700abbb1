//! JSON-RPC batches on MCP sessions negotiated at 2025-03-26, the one revision that allows them
//! (later ones removed them; rmcp serves none). Each message of a batch is screened like a
//! message of its own and handed to rmcp on its own. Over HTTP each is its own POST on the same
//! session, and the answer is one SSE stream carrying every response (and whatever the server
//! sends meanwhile: progress, an elicitation) — or `202` when the batch holds no request. Over
//! stdio the responses are held ([`Pending`]) and written as one array when the last arrives.

use crate::screen::{self, Screened};
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header, request::Parts};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use tower_service::Service;

/// rmcp's streamable HTTP service, called once per message of a batch.
pub(crate) type Inner = StreamableHttpService<crate::server::Session, LocalSessionManager>;

/// The most messages one batch may hold.
const MAX_ITEMS: usize = 64;

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// One SSE event carrying `message`.
fn event(message: &Value) -> bytes::Bytes {
    bytes::Bytes::from(format!("data: {message}\n\n"))
}

/// Answer the batch `items` that arrived with `parts` on a 2025-03-26 session.
pub(crate) async fn serve(inner: Inner, parts: &Parts, items: Vec<Value>) -> Response {
    // Screened as over stdio; an HTTP batch's answers are one stream, so nothing waits here.
    let split = match split(items, &Pending::default(), |_| None) {
        Ok(split) => split,
        Err(e) => {
            return (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], e.to_string())
                .into_response();
        }
    };
    let mut answered: Vec<bytes::Bytes> = split.answered.iter().map(event).collect();
    let mut streams = Vec::new();
    for bytes in split.feed {
        let response = one(inner.clone(), parts, bytes.clone()).await;
        if response.status() == StatusCode::ACCEPTED {
            continue;
        }
        let sse = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let status = response.status();
        let body = response.into_body();
        if sse {
            streams.push(events(body).boxed());
        } else {
            // rmcp answered with a JSON body (an error): forwarded as one event.
            let answer = axum::body::to_bytes(body, 1 << 20).await.unwrap_or_default();
            let message = serde_json::from_slice::<Value>(&answer).unwrap_or_else(|_| {
                let id = serde_json::from_slice::<Value>(&bytes).map(|m| m["id"].clone()).unwrap_or_default();
                error(&id, -32603, &format!("{status}: {}", String::from_utf8_lossy(&answer)))
            });
            answered.push(event(&message));
        }
    }
    let requests = split.ids.len();
    if requests == 0 && answered.is_empty() {
        return StatusCode::ACCEPTED.into_response();
    }
    let first = futures_util::stream::iter(answered.into_iter().map(Ok::<_, std::convert::Infallible>));
    let merged = futures_util::stream::select_all(streams).map(Ok);
    let mut response = Body::from_stream(first.chain(merged)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// One message of the batch as its own POST, with the batch's headers.
async fn one(mut inner: Inner, parts: &Parts, bytes: Vec<u8>) -> Response {
    let mut request = axum::http::Request::builder().method(parts.method.clone()).uri(parts.uri.clone());
    for (name, value) in &parts.headers {
        if name != header::CONTENT_LENGTH {
            request = request.header(name, value);
        }
    }
    let Ok(request) = request.body(Body::from(bytes)) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    match inner.call(request).await {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    }
}

/// A response body's SSE events, whole (`…\n\n` each), whatever chunks they arrive in.
fn events(body: Body) -> impl futures_util::Stream<Item = bytes::Bytes> + Send {
    let chunks = body.into_data_stream();
    futures_util::stream::unfold(
        (chunks, Vec::<u8>::new(), false),
        |(mut chunks, mut buffer, mut done)| async move {
            loop {
                if let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
                    let rest = buffer.split_off(end + 2);
                    let whole = std::mem::replace(&mut buffer, rest);
                    return Some((bytes::Bytes::from(whole), (chunks, buffer, done)));
                }
                if done {
                    return None;
                }
                match chunks.next().await {
                    Some(Ok(chunk)) => buffer.extend_from_slice(&chunk),
                    _ => done = true,
                }
            }
        },
    )
}

/// A batch split: the messages to hand to rmcp, the ids it must answer, and the answers
/// the screen gave already.
pub(crate) struct Split {
    /// Each message that passed, as bytes.
    pub feed: Vec<Vec<u8>>,
    /// The ids of the requests among them.
    pub ids: Vec<Value>,
    /// Errors for the messages that did not pass.
    pub answered: Vec<Value>,
}

/// Split a batch, screening each message with `check` (the session's handshake); the one
/// error that answers it whole when it is empty or too long.
pub(crate) fn split(
    items: Vec<Value>,
    pending: &Pending,
    mut check: impl FnMut(&screen::Message) -> Option<(i64, String)>,
) -> Result<Split, Value> {
    // An empty batch is answered with one error, not an array (JSON-RPC 2.0, "Batch").
    if items.is_empty() || items.len() > MAX_ITEMS {
        return Err(error(&Value::Null, -32600, &format!("a batch holds 1 to {MAX_ITEMS} messages")));
    }
    let mut out = Split { feed: Vec::new(), ids: Vec::new(), answered: Vec::new() };
    for item in items {
        let bytes = serde_json::to_vec(&item).unwrap_or_default();
        let mut is_request = false;
        let screened = screen::screen(&bytes, |m| {
            is_request = m.is_request && m.method.is_some();
            if m.method == Some("initialize") {
                return Some((-32600, "initialize may not be part of a batch".into()));
            }
            check(m)
        });
        match screened {
            Screened::Reply(e) => out.answered.push(e),
            Screened::Drop => {}
            Screened::Pass
                if is_request && (out.ids.contains(&item["id"]) || pending.waits_for(&item["id"])) =>
            {
                out.answered.push(error(
                    &item["id"],
                    -32600,
                    "this id is already in use by a request not yet answered",
                ));
            }
            Screened::Pass => {
                if is_request {
                    out.ids.push(item["id"].clone());
                }
                out.feed.push(bytes);
            }
        }
    }
    Ok(out)
}

/// The stdio batches whose answers are not all in yet.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    batches: Mutex<Vec<Waiting>>,
    /// Whether any batch waits (read for every line rmcp writes, so it is cheap).
    any: AtomicBool,
}

#[derive(Debug)]
struct Waiting {
    ids: Vec<Value>,
    answers: Vec<Value>,
}

impl Pending {
    /// A batch whose requests `ids` were handed to rmcp, with the answers it has already; the
    /// array to write now when it waits for nothing.
    pub(crate) fn open(&self, ids: Vec<Value>, answers: Vec<Value>) -> Option<Vec<u8>> {
        if ids.is_empty() {
            return (!answers.is_empty()).then(|| line(&answers));
        }
        bardo_core::sync::lock(&self.batches).push(Waiting { ids, answers });
        self.any.store(true, Ordering::SeqCst);
        None
    }

    fn waits_for(&self, id: &Value) -> bool {
        self.any.load(Ordering::SeqCst)
            && bardo_core::sync::lock(&self.batches).iter().any(|b| b.ids.contains(id))
    }

    /// What to write for `line`, which rmcp wrote: the line itself (None), nothing yet (it
    /// answers a batch that waits for more), or the whole batch's answers.
    pub(crate) fn answer(&self, out: &[u8]) -> Option<Option<Vec<u8>>> {
        if !self.any.load(Ordering::SeqCst) {
            return None;
        }
        let message: Value = serde_json::from_slice(out).ok()?;
        if message.get("method").is_some() {
            return None;
        }
        let id = message.get("id")?;
        let mut batches = bardo_core::sync::lock(&self.batches);
        let at = batches.iter().position(|b| b.ids.contains(id))?;
        let batch = &mut batches[at];
        batch.ids.retain(|i| i != id);
        batch.answers.push(message);
        if !batch.ids.is_empty() {
            return Some(None);
        }
        let done = batches.remove(at);
        self.any.store(!batches.is_empty(), Ordering::SeqCst);
        Some(Some(line(&done.answers)))
    }
}

/// Answers as one array on one line.
fn line(answers: &[Value]) -> Vec<u8> {
    format!("{}\n", Value::Array(answers.to_vec())).into_bytes()
}
