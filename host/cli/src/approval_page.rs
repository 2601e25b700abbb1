//! The approval page of `bardo serve` (`/operator`): the open permits as a person reads them —
//! what each does in words (symbols, amounts, USD, the contracts it calls, expiry, risk, the
//! policy that holds it) — approve or decline with a reason, live updates (SSE), the recent
//! audit records. Server-rendered HTML and a few lines of script; nothing to build.
//!
//! Who gets in: the operator's token (`Authorization: Bearer`, `.bardo/operator.token`), or a
//! browser session opened by a one-time link `bardo confirm --open` prints — MACed with the host
//! key, valid 2 minutes, used once — as an HttpOnly, SameSite=Strict cookie. An agent holding
//! the agent token has neither. A form post must come from this page's own origin.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use bardo_core::error::ToolError;
use bardo_safety::WritePath;
use bardo_safety::confirm::Channel;
use bardo_safety::host_key::HostKey;
use bardo_safety::permit::ActionPermit;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What a login link is MACed under.
const LOGIN_DOMAIN: &str = "bardo-operator-login";
/// How long a login link is good for.
pub(crate) const LOGIN_TTL: Duration = Duration::from_secs(120);
/// How long a browser session lasts.
const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);
/// The session cookie's name.
const COOKIE: &str = "bardo_operator";
/// How often a live page's permits are looked at.
const POLL: Duration = Duration::from_millis(500);
/// Audit records shown, and how far back they are looked for (each hook's decision and each
/// plugin call is a record of its own: not shown).
const AUDIT_SHOWN: usize = 20;
const AUDIT_READ: usize = 400;
/// Who confirms through the page, on record.
const PRINCIPAL: &str = "operator (approval page)";

/// The write path the page acts on, as the server holds it now (it changes on reload).
pub(crate) type PathSource = Arc<dyn Fn() -> Arc<WritePath> + Send + Sync>;

/// Browser sessions (id → when it ends) and the login codes used already.
#[derive(Default)]
struct Sessions {
    live: HashMap<String, SystemTime>,
    used: HashSet<String>,
}

#[derive(Clone)]
struct Page {
    path: PathSource,
    key: HostKey,
    access: bardo_mcp::http::Access,
    sessions: Arc<Mutex<Sessions>>,
}

/// The routes under `/operator`.
pub(crate) fn router(path: PathSource, key: HostKey, access: bardo_mcp::http::Access) -> Router {
    let page = Page { path, key, access, sessions: Arc::default() };
    Router::new()
        .route("/operator", get(index))
        .route("/operator/login", get(login))
        .route("/operator/events", get(events))
        .route("/operator/permits/{id}/approve", post(approve))
        .route("/operator/permits/{id}/decline", post(decline))
        .with_state(page)
}

/// The one-time link to the page at `base` (`http://127.0.0.1:8765`), for someone holding the
/// host key.
pub(crate) fn login_link(base: &str, key: &HostKey) -> String {
    let expires =
        (SystemTime::now() + LOGIN_TTL).duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let code = key.mac(LOGIN_DOMAIN, expires.to_string().as_bytes());
    format!("{}/operator/login?expires={expires}&code={}", base.trim_end_matches('/'), hex::encode(code))
}

impl Page {
    /// Whether the request is the operator's: their token, or a live session cookie.
    fn admits(&self, headers: &HeaderMap) -> bool {
        // A Host the door serves (no DNS rebinding), then the operator's token or session.
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        if !host.is_some_and(|h| self.access.admits_host(h)) {
            return false;
        }
        if self.access.is_operator(headers.get(header::AUTHORIZATION)) {
            return true;
        }
        let Some(session) = cookie(headers) else { return false };
        let mut guard = self.sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = SystemTime::now();
        guard.live.retain(|_, ends| *ends > now);
        guard.live.contains_key(&session)
    }

    /// Whether a form post comes from a page this server serves (no cross-site form).
    /// Exactly this page's origin: a cookie is SameSite across ports, so a page another local
    /// process serves (an agent's, on 127.0.0.1:other) must not post here in the operator's name.
    fn same_origin(&self, headers: &HeaderMap) -> bool {
        let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        match (origin, host) {
            (Some(origin), Some(host)) => {
                origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) == Some(host)
            }
            // Not a browser's form (a script with the operator's token).
            (None, _) => self.access.is_operator(headers.get(header::AUTHORIZATION)),
            _ => false,
        }
    }
}

fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_owned())
}

fn refused() -> Response {
    let body = "The approval page is the operator's: open the link `bardo confirm --open --url URL` prints \
                (it needs the host key), or send the operator's token (.bardo/operator.token) as a bearer token.";
    (StatusCode::UNAUTHORIZED, body).into_response()
}

fn params(query: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(query).into_owned().collect()
}

async fn login(State(page): State<Page>, uri: Uri) -> Response {
    let q = params(uri.query().unwrap_or("").as_bytes());
    let (Some(expires), Some(code)) = (q.get("expires"), q.get("code")) else { return refused() };
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(u64::MAX);
    let fresh = expires.parse::<u64>().is_ok_and(|e| e >= now && e <= now + LOGIN_TTL.as_secs());
    let genuine = hex::decode(code)
        .ok()
        .and_then(|c| <[u8; 32]>::try_from(c).ok())
        .is_some_and(|c| page.key.verify(LOGIN_DOMAIN, expires.as_bytes(), &c.into()));
    if !fresh || !genuine {
        return (
            StatusCode::UNAUTHORIZED,
            "this link is not valid or has expired: run `bardo confirm --open` again",
        )
            .into_response();
    }
    let mut bytes = [0u8; 32];
    if getrandom::getrandom(&mut bytes).is_err() {
        return (StatusCode::INTERNAL_SERVER_ERROR, "no randomness for a session").into_response();
    }
    let session = hex::encode(bytes);
    {
        let mut guard = page.sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !guard.used.insert(code.clone()) {
            return (
                StatusCode::UNAUTHORIZED,
                "this link was used already: run `bardo confirm --open` again",
            )
                .into_response();
        }
        guard.live.insert(session.clone(), SystemTime::now() + SESSION_TTL);
    }
    let cookie = format!("{COOKIE}={session}; HttpOnly; SameSite=Strict; Path=/operator");
    ([(header::SET_COOKIE, cookie)], Redirect::to("/operator")).into_response()
}

/// `f` on the write path, off the async threads (the permit store is files or NATS).
async fn blocking<T: Send + 'static>(
    page: &Page,
    f: impl FnOnce(&WritePath) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let path = (page.path)();
    tokio::task::spawn_blocking(move || f(&path)).await.unwrap_or_else(|e| {
        Err(ToolError::new(
            bardo_core::error::ErrorCode::Internal,
            format!("the write path call failed: {e}"),
        ))
    })
}

/// An open permit as the page shows it.
struct Row {
    permit: ActionPermit,
    /// The policy that holds it, if one does and no one confirmed it yet.
    held_by: Option<String>,
    confirmed_by: Option<String>,
}

fn rows(path: &WritePath) -> Result<Vec<Row>, ToolError> {
    let mut rows = Vec::new();
    for permit in path.open_permits()? {
        // Gone meanwhile (committed, expired): not shown.
        let Ok(held) = path.pending_confirmation(&permit.permit_id) else { continue };
        let confirmed_by = path.confirmed_by(&permit.permit_id).ok().flatten();
        rows.push(Row { held_by: held.map(|p| p.policy), confirmed_by, permit });
    }
    rows.sort_by_key(|r| r.permit.created_at);
    Ok(rows)
}

async fn index(State(page): State<Page>, headers: HeaderMap) -> Response {
    if !page.admits(&headers) {
        return refused();
    }
    let shown = blocking(&page, |p| {
        let mut audit = p.recent_audit(AUDIT_READ)?;
        audit.retain(|r| !matches!(r["event"]["type"].as_str(), Some("HookDecision" | "ToolCall")));
        let from = audit.len().saturating_sub(AUDIT_SHOWN);
        Ok((rows(p)?, audit.split_off(from)))
    })
    .await;
    match shown {
        Ok((rows, audit)) => Html(render(&rows, &audit)).into_response(),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, format!("the write path: {e}")).into_response(),
    }
}

async fn approve(State(page): State<Page>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    if !page.admits(&headers) || !page.same_origin(&headers) {
        return refused();
    }
    let done = blocking(&page, move |p| p.confirm(&id, Channel::Page, PRINCIPAL)).await;
    answered(done.map(|()| "approved"))
}

async fn decline(
    State(page): State<Page>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !page.admits(&headers) || !page.same_origin(&headers) {
        return refused();
    }
    let reason = params(&body).remove("reason").map(|r| r.trim().chars().take(500).collect::<String>());
    let reason = reason.filter(|r| !r.is_empty());
    let done = blocking(&page, move |p| {
        p.confirmed_by(&id)?; // open, or the error that says why not
        // Refused as a decline is: the permit is cancelled, nothing sent.
        let e = p.declined_because(&id, PRINCIPAL, false, reason.as_deref());
        if e.code == bardo_core::error::ErrorCode::Denied { Ok(()) } else { Err(e) }
    })
    .await;
    answered(done.map(|()| "declined"))
}

/// Back to the page, or the error in words.
fn answered(done: Result<&str, ToolError>) -> Response {
    match done {
        Ok(_) => Redirect::to("/operator").into_response(),
        Err(e) => {
            let page = format!(
                "<!doctype html><meta charset=utf-8><title>Bardo: refused</title><p>{}</p><p><a href=/operator>Back</a></p>",
                esc(&e.message)
            );
            (StatusCode::CONFLICT, Html(page)).into_response()
        }
    }
}

/// One `changed` event whenever the open permits or their confirmations change.
async fn events(State(page): State<Page>, headers: HeaderMap) -> Response {
    if !page.admits(&headers) {
        return refused();
    }
    let fingerprint = |page: Page| async move {
        blocking(&page, |p| {
            Ok(rows(p)?
                .iter()
                .map(|r| format!("{}:{:?}", r.permit.permit_id, r.confirmed_by))
                .collect::<Vec<_>>()
                .join(","))
        })
        .await
        .unwrap_or_default()
    };
    let first = fingerprint(page.clone()).await;
    let stream = futures_util::stream::unfold((page, first), move |(page, last)| async move {
        loop {
            tokio::time::sleep(POLL).await;
            let now = fingerprint(page.clone()).await;
            if now != last {
                let event = Event::default().event("changed").data(now.clone());
                return Some((Ok::<_, std::convert::Infallible>(event), (page, now)));
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default()).into_response()
}

/// HTML-escaped: every string a plugin, the chain or a person supplied.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `HH:MM:SS UTC` of a Unix time in milliseconds.
fn time_of_day(ms: u64) -> String {
    let s = (ms / 1000) % 86_400;
    format!("{:02}:{:02}:{:02} UTC", s / 3600, s / 60 % 60, s % 60)
}

fn render(rows: &[Row], audit: &[serde_json::Value]) -> String {
    let mut html = String::from(
        "<!doctype html><html lang=en><meta charset=utf-8><title>Bardo: approvals</title>\
         <meta name=viewport content='width=device-width'>\
         <style>body{font:15px system-ui,sans-serif;margin:2em;max-width:60em;color:#222}\
         .permit{border:1px solid #ccc;border-radius:6px;padding:1em;margin:1em 0}\
         .held{border-color:#c80}.meta{color:#555}.out{color:#a00}.in{color:#070}\
         code{font-size:13px}h2 code{font-size:inherit}table{border-collapse:collapse}\
         td{padding:2px 8px;vertical-align:top}#audit td{white-space:nowrap}#audit td:last-child{white-space:normal;word-break:break-all}\
         button{font-size:15px;margin-right:.5em}</style>\
         <h1>Open permits</h1>",
    );
    if rows.is_empty() {
        html.push_str("<p id=none>No open permits.</p>");
    }
    let now = SystemTime::now();
    for row in rows {
        let p = &row.permit;
        let id = esc(&p.permit_id);
        let risk = serde_json::to_value(p.risk_tier).ok().and_then(|v| v.as_str().map(str::to_owned));
        let expires = (p.created_at + p.ttl).duration_since(now).map(|d| d.as_secs()).unwrap_or(0);
        let _ = write!(
            html,
            "<section class='permit{}' data-permit='{id}'><h2><code>{}</code> on chain {}</h2>\
             <p class=meta>permit <code>{id}</code>, planned by <code>{}</code>, risk {}, expires in {expires} s</p><table>",
            if row.held_by.is_some() { " held" } else { "" },
            esc(&p.kind),
            p.chain_id,
            esc(&p.tool),
            esc(risk.as_deref().unwrap_or("unknown")),
        );
        for change in &p.balance_changes {
            let asset = match (&change.symbol, change.asset) {
                (Some(symbol), Some(a)) => format!("{} <code>{}</code>", esc(symbol), a.to_checksum(None)),
                (None, Some(a)) => format!("<code>{}</code>", a.to_checksum(None)),
                (_, None) => "ETH (native)".to_owned(),
            };
            let way = if change.delta.starts_with('-') { "out" } else { "in" };
            let usd = change.usd.map_or_else(|| "no trusted price".to_owned(), |u| format!("{u:+.2} USD"));
            let decimals = if change.asset.is_none() { Some(18) } else { change.decimals };
            let amount = bardo_safety::permit::whole_units(&change.delta, decimals);
            let _ = write!(
                html,
                "<tr class={way}><td>{way}</td><td>{} {asset}</td><td>{}</td></tr>",
                esc(&amount),
                esc(&usd)
            );
        }
        let spend = p
            .spend_usd
            .map_or_else(|| "could not be valued at the host's prices".to_owned(), |u| format!("{u:.2} USD"));
        let mut targets: Vec<String> = p.plan.calls.iter().map(|c| c.to.to_checksum(None)).collect();
        targets.dedup();
        let _ = write!(
            html,
            "</table><p>spends <b class=spend>{}</b> (outflows and allowances left, at the host's prices)</p>\
             <p class=meta>calls {}</p>",
            esc(&spend),
            targets.iter().map(|t| format!("<code>{t}</code>")).collect::<Vec<_>>().join(", "),
        );
        match (&row.held_by, &row.confirmed_by) {
            (_, Some(by)) => {
                let _ = write!(html, "<p class=state>confirmed by {}</p>", esc(by));
            }
            (Some(policy), None) => {
                let _ = write!(
                    html,
                    "<p class=state>waits for a person: {} in [safety]</p>\
                     <form method=post action='/operator/permits/{id}/approve'><button name=approve>Approve</button></form>",
                    esc(policy)
                );
            }
            (None, None) => html.push_str("<p class=state>no policy holds it</p>"),
        }
        let _ = write!(
            html,
            "<form method=post action='/operator/permits/{id}/decline'>\
             <input name=reason placeholder='why (recorded)' maxlength=500> <button name=decline>Decline</button></form></section>"
        );
    }
    html.push_str("<h2>Recent audit records</h2><table id=audit>");
    for record in audit.iter().rev() {
        let event = &record["event"];
        let kind = event["type"].as_str().unwrap_or("?");
        let mut detail = event.clone();
        if let Some(map) = detail.as_object_mut() {
            map.remove("type");
        }
        let _ = write!(
            html,
            "<tr><td>{}</td><td><b>{}</b></td><td><code>{}</code></td></tr>",
            record["time_ms"].as_u64().map(time_of_day).unwrap_or_default(),
            esc(kind),
            esc(&detail.to_string().chars().take(300).collect::<String>())
        );
    }
    html.push_str(
        "</table><script>new EventSource('/operator/events').addEventListener('changed', () => location.reload());</script></html>",
    );
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_in_whole_units_and_text_is_escaped() {
        use bardo_safety::permit::whole_units;
        assert_eq!(whole_units("-100000000", Some(6)), "-100");
        assert_eq!(whole_units("2481234500000000000", Some(18)), "+2.4812345");
        assert_eq!(whole_units("5", Some(6)), "+0.000005");
        assert_eq!(whole_units("-7", None), "-7 base units");
        assert_eq!(whole_units("-7x", Some(6)), "-7x base units");
        assert_eq!(esc("<b onclick=\"x\">'&'\n"), "&lt;b onclick=&quot;x&quot;&gt;&#39;&amp;&#39; ");
    }

    #[test]
    fn a_login_link_verifies_under_the_host_key_only() {
        let key = HostKey::ephemeral();
        let link = login_link("http://127.0.0.1:1/", &key);
        let q = params(link.split_once('?').expect("query").1.as_bytes());
        let code: [u8; 32] = hex::decode(&q["code"]).expect("hex").try_into().expect("32 bytes");
        assert!(key.verify(LOGIN_DOMAIN, q["expires"].as_bytes(), &code.into()));
        assert!(!HostKey::ephemeral().verify(LOGIN_DOMAIN, q["expires"].as_bytes(), &code.into()));
    }
}
