//! The [`SubscriptionRegistry`]: a session's stream subscriptions and the host tasks that feed
//! them. A plugin's stream tool only names its sources and decodes what arrives; the host owns
//! the connections, the timers and the bookkeeping, and publishes every decoded event on the
//! Event Fabric.
//!
//! A log source follows the chain head over a WebSocket `eth_subscribe("newHeads")` and reads
//! each new block range with `eth_getLogs`, from the first block not yet delivered. The same path
//! back-fills after a reconnect, so a node that goes away and comes back loses nothing, and a
//! block range is delivered once (the cursor moves only after the plugin took the logs).
//! A poll source ticks on a tokio interval.
//!
//! With a fleet ([`SubscriptionRegistry::with_fleet`]), every host runs the same subscription
//! and the holder of its lease delivers it (see `fleet`).

mod fleet;

pub use fleet::FleetStreams;

use crate::plugin::Host;
use crate::plugin::streams::{Source, Step};
use crate::services::Services;
use alloy::providers::{Provider, ProviderBuilder, WsConnect};
use alloy::rpc::types::Filter;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::fabric::{Fabric, GolemEvent, now_ms};
use bardo_core::sync::lock;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinHandle;

/// The most sources (log filters, polls) one subscription may start.
pub const MAX_SOURCES: usize = 32;
/// The host's own stream tool: cancel subscriptions.
pub const UNSUBSCRIBE: &str = "stream_unsubscribe";

/// The most blocks one `eth_getLogs` asks for while catching up.
const LOG_RANGE: u64 = 2_000;
/// Reconnect backoff: first wait and cap.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(50), Duration::from_secs(2));

/// One subscription as `bardo stream` and the agent see it.
#[derive(Debug, Clone, Serialize)]
pub struct SubscriptionInfo {
    /// `sub-N`, unique within the registry.
    pub subscription_id: String,
    /// The stream tool subscribed to.
    pub tool_name: String,
    /// The variant of the last event delivered (none before the first).
    pub event_variant: Option<&'static str>,
    /// sha256 of the params JSON: two subscriptions with equal params are recognisable.
    pub params_hash: String,
    /// When it started, Unix ms.
    pub started_at_ms: u64,
    /// When its last event was delivered, Unix ms.
    pub last_event_at_ms: Option<u64>,
    /// Events delivered so far.
    pub event_count: u64,
}

/// What `stream_unsubscribe` answers.
#[derive(Debug, Clone, Serialize)]
pub struct Unsubscribed {
    /// The subscriptions cancelled.
    pub unsubscribed: Vec<String>,
    /// The subscriptions still running.
    pub remaining: Vec<String>,
}

struct Subscription {
    info: Arc<Mutex<SubscriptionInfo>>,
    tasks: Vec<JoinHandle<()>>,
    /// A fleet subscription's lease, released when it is closed here.
    lease: Option<Arc<fleet::Lease>>,
}

/// A session's subscriptions. Dropping it cancels them all.
pub struct SubscriptionRegistry {
    host: Arc<Host>,
    services: Arc<Services>,
    book: Arc<Book>,
    next_id: AtomicU64,
    halt_watch: Option<JoinHandle<()>>,
    fleet: Option<FleetStreams>,
}

/// The subscriptions themselves, shared with the task that watches for an emergency halt.
struct Book {
    fabric: Arc<Fabric>,
    subs: Mutex<BTreeMap<String, Subscription>>,
    live_tasks: Arc<AtomicUsize>,
}

/// What every task of one subscription shares.
struct Feed {
    host: Arc<Host>,
    services: Arc<Services>,
    fabric: Arc<Fabric>,
    id: String,
    tool: String,
    params: String,
    /// The plugin's per-subscription state.
    state: Mutex<String>,
    /// Held across a step and its publication: steps of one subscription run one at a time,
    /// each on the state the previous one left (with a fleet, also its lease document's).
    turn: tokio::sync::Mutex<()>,
    info: Arc<Mutex<SubscriptionInfo>>,
    /// Set when the subscription is the fleet's: deliveries go through its lease.
    lease: Option<Arc<fleet::Lease>>,
}

/// The number of a registry's tasks still running.
#[derive(Debug, Clone)]
pub struct TaskCounter(Arc<AtomicUsize>);

impl TaskCounter {
    /// Tasks still running.
    pub fn live(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Counts a task as live until it finishes or is aborted (its future dropped).
struct Live(Arc<AtomicUsize>);

impl Live {
    fn new(counter: &Arc<AtomicUsize>) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        Self(counter.clone())
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl SubscriptionRegistry {
    /// A registry calling stream tools of `host`, reading chains and running its tasks through
    /// `services` (the host's), and publishing on `fabric`. An emergency halt published on the
    /// fabric cancels every subscription.
    pub fn new(host: Arc<Host>, services: Arc<Services>, fabric: Arc<Fabric>) -> Result<Self, ToolError> {
        let book =
            Arc::new(Book { fabric: fabric.clone(), subs: Mutex::default(), live_tasks: Arc::default() });
        let mut halted = fabric.subscribe(None);
        let watched = book.clone();
        let halt_watch = services.runtime().spawn(async move {
            while let Some(next) = halted.recv().await {
                if let Ok(e) = next
                    && matches!(*e.event, GolemEvent::Halted { .. })
                {
                    watched.unsubscribe_all();
                }
            }
        });
        Ok(SubscriptionRegistry {
            host,
            services,
            book,
            next_id: AtomicU64::new(1),
            halt_watch: Some(halt_watch),
            fleet: None,
        })
    }

    /// Share subscriptions with a fleet: a subscription is named by its tool and params
    /// (`fleet-<hash>`), every host of the fleet may run it, and the one holding its lease
    /// delivers it — into the fleet's event stream first, then this host's fabric.
    pub fn with_fleet(mut self, fleet: FleetStreams) -> Self {
        self.fleet = Some(fleet);
        self
    }

    fn runtime(&self) -> &bardo_core::Runtime {
        self.services.runtime()
    }

    /// Subscribe to stream tool `tool` with JSON params (at most [`MAX_SOURCES`] sources): the plugin names its sources, the host
    /// starts one task per source. Events flow from the blocks after this call.
    pub fn subscribe(&self, tool: &str, params_json: &str) -> Result<SubscriptionInfo, ToolError> {
        let (sources, state) = self.host.stream_open(tool, params_json).result?;
        // Each source is a host task with its own RPC traffic: a plugin asks for a few.
        if sources.len() > MAX_SOURCES {
            return Err(ToolError::new(
                ErrorCode::LimitExceeded,
                format!(
                    "`{tool}` asks for {} sources; a subscription may have at most {MAX_SOURCES}: subscribe to fewer pools or accounts at once",
                    sources.len()
                ),
            ));
        }
        // Log sources start after the current head: fetched now, so nothing between this call
        // and the first notification is missed.
        let mut starts = Vec::with_capacity(sources.len());
        for source in &sources {
            starts.push(match source {
                Source::Logs { chain_id, .. } => {
                    let chains = &self.services.evm.chains;
                    let client = chains.get(*chain_id).map_err(ToolError::from)?;
                    let head = chains
                        .block_on(client.block_number(std::time::Instant::now() + Duration::from_secs(5)))
                        .map_err(ToolError::from)?;
                    head + 1
                }
                Source::Poll { .. } => 0,
            });
        }
        let id = match &self.fleet {
            Some(_) => fleet::subscription_id(tool, params_json),
            None => format!("sub-{}", self.next_id.fetch_add(1, Ordering::SeqCst)),
        };
        if lock(&self.book.subs).contains_key(&id) {
            return Err(ToolError::new(
                ErrorCode::InvalidParams,
                format!("this host already runs the fleet subscription {id} ({tool} with these params)"),
            ));
        }
        let lease = self.fleet.as_ref().map(|f| Arc::new(fleet::Lease::new(f.clone(), &id)));
        let info = Arc::new(Mutex::new(SubscriptionInfo {
            subscription_id: id.clone(),
            tool_name: tool.to_owned(),
            event_variant: None,
            params_hash: format!("{:x}", Sha256::digest(params_json.as_bytes())),
            started_at_ms: now_ms(),
            last_event_at_ms: None,
            event_count: 0,
        }));
        let feed = Arc::new(Feed {
            host: self.host.clone(),
            services: self.services.clone(),
            fabric: self.book.fabric.clone(),
            id: id.clone(),
            tool: tool.to_owned(),
            params: params_json.to_owned(),
            state: Mutex::new(state),
            turn: tokio::sync::Mutex::new(()),
            info: info.clone(),
            lease: lease.clone(),
        });
        let tasks = match &lease {
            None => start_sources(&feed, sources, &starts, &self.book.live_tasks),
            Some(_) => {
                let live = Live::new(&self.book.live_tasks);
                let counter = self.book.live_tasks.clone();
                vec![self.runtime().spawn(async move {
                    let _live = live;
                    fleet::lead(feed, sources, starts, counter).await;
                })]
            }
        };
        let snapshot = lock(&info).clone();
        lock(&self.book.subs).insert(id, Subscription { info, tasks, lease });
        Ok(snapshot)
    }

    /// The agent-facing entry point: a stream tool's name subscribes to it (the answer is the
    /// subscription); `stream_unsubscribe` with `{"ids": [...]}` or `{}` (all) cancels and
    /// answers `{unsubscribed, remaining}`.
    pub fn call(&self, tool: &str, params_json: &str) -> Result<serde_json::Value, ToolError> {
        if tool == UNSUBSCRIBE {
            #[derive(serde::Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Params {
                ids: Option<Vec<String>>,
            }
            let p: Params = serde_json::from_str(params_json).map_err(|e| {
                ToolError::new(
                    ErrorCode::InvalidParams,
                    format!("params of `{UNSUBSCRIBE}`: {e}; pass {{\"ids\": [\"sub-1\"]}} or {{}} for all"),
                )
            })?;
            return to_json(&self.unsubscribe_many(p.ids.as_deref())?);
        }
        to_json(&self.subscribe(tool, params_json)?)
    }

    /// The current subscriptions.
    pub fn list(&self) -> Vec<SubscriptionInfo> {
        let subs = lock(&self.book.subs);
        subs.values().map(|s| lock(&s.info).clone()).collect()
    }

    /// Cancel subscription `id`; false if there is none.
    pub fn unsubscribe(&self, id: &str) -> bool {
        self.book.unsubscribe(id)
    }

    /// Cancel the subscriptions `ids`, or all of them (`None`).
    pub fn unsubscribe_many(&self, ids: Option<&[String]>) -> Result<Unsubscribed, ToolError> {
        let unsubscribed = match ids {
            None => self.unsubscribe_all(),
            Some(ids) => {
                let known = self.book.ids();
                let unknown: Vec<&String> = ids.iter().filter(|id| !known.contains(id)).collect();
                if !unknown.is_empty() {
                    return Err(ToolError::new(
                        ErrorCode::NotFound,
                        format!("no subscription {unknown:?}; the current ones are {known:?}"),
                    ));
                }
                ids.iter().filter(|id| self.unsubscribe(id)).cloned().collect()
            }
        };
        Ok(Unsubscribed { unsubscribed, remaining: self.book.ids() })
    }

    /// Cancel every subscription (session end, emergency halt); returns their ids.
    pub fn unsubscribe_all(&self) -> Vec<String> {
        self.book.unsubscribe_all()
    }

    /// Tasks still running (aborted ones stop at their next await).
    pub fn live_tasks(&self) -> usize {
        self.book.live_tasks.load(Ordering::SeqCst)
    }

    /// A handle on the live-task count that outlives the registry (to see a session end).
    pub fn task_counter(&self) -> TaskCounter {
        TaskCounter(self.book.live_tasks.clone())
    }
}

impl Book {
    fn ids(&self) -> Vec<String> {
        lock(&self.subs).keys().cloned().collect()
    }

    fn unsubscribe(&self, id: &str) -> bool {
        let removed = lock(&self.subs).remove(id);
        removed.map(|s| self.close(s)).is_some()
    }

    fn unsubscribe_all(&self) -> Vec<String> {
        let subs = std::mem::take(&mut *lock(&self.subs));
        subs.into_iter()
            .map(|(id, s)| {
                self.close(s);
                id
            })
            .collect()
    }

    fn close(&self, s: Subscription) {
        for task in &s.tasks {
            task.abort();
        }
        if let Some(lease) = &s.lease {
            lease.release();
        }
        let info = lock(&s.info).clone();
        self.fabric.emit(GolemEvent::StreamClosed {
            subscription_id: info.subscription_id,
            tool: info.tool_name,
            events: info.event_count,
        });
    }
}

impl Drop for SubscriptionRegistry {
    fn drop(&mut self) {
        self.unsubscribe_all();
        if let Some(watch) = self.halt_watch.take() {
            watch.abort();
        }
        // The runtime is the host's and outlives this registry: wait (bounded) until the aborted
        // tasks are gone, so none of them outlives its session.
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while self.book.live_tasks.load(Ordering::SeqCst) != 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// One task per source: log sources from their first block in `starts`.
fn start_sources(
    feed: &Arc<Feed>,
    sources: Vec<Source>,
    starts: &[u64],
    counter: &Arc<AtomicUsize>,
) -> Vec<JoinHandle<()>> {
    let runtime = feed.services.runtime();
    sources
        .into_iter()
        .zip(starts.iter().copied())
        .enumerate()
        .map(|(index, (source, start))| {
            let (feed, live) = (feed.clone(), Live::new(counter));
            match source {
                Source::Logs { chain_id, filter } => runtime.spawn(async move {
                    let _live = live;
                    follow_logs(feed, index, chain_id, *filter, start).await;
                }),
                Source::Poll { interval } => runtime.spawn(async move {
                    let _live = live;
                    poll(feed, index, interval).await;
                }),
            }
        })
        .collect()
}

impl Feed {
    /// Run one plugin step off the async threads on the current state; the state is not
    /// changed (the caller applies the step).
    async fn run_step(
        self: &Arc<Self>,
        run: impl FnOnce(&Host, &str, &str) -> Result<Step, ToolError> + Send + 'static,
    ) -> Result<Step, String> {
        let feed = self.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            let state = lock(&feed.state).clone();
            run(&feed.host, &feed.params, &state)
        })
        .await;
        match outcome {
            Ok(Ok(step)) => Ok(step),
            Ok(Err(e)) => Err(format!("the plugin failed a step: {e}")),
            Err(e) => Err(format!("a step did not finish: {e}")),
        }
    }

    /// Run one plugin step and publish what it produced. A failed step is published as a
    /// `StreamError`; the subscription goes on.
    async fn step(
        self: &Arc<Self>,
        run: impl FnOnce(&Host, &str, &str) -> Result<Step, ToolError> + Send + 'static,
    ) {
        let _turn = self.turn.lock().await;
        match self.run_step(run).await {
            Ok(Step { events, state }) => {
                *lock(&self.state) = state;
                let events = self.typed(events);
                self.publish(events);
            }
            Err(why) => self.error(why),
        }
    }

    /// The plugin's events as fabric events; an unknown kind is reported, not passed on.
    fn typed(&self, events: Vec<crate::plugin::streams::StreamEvent>) -> Vec<GolemEvent> {
        events
            .into_iter()
            .filter_map(|e| match GolemEvent::from_stream(&e.kind, e.payload, &self.id, &self.tool) {
                Ok(event) => Some(event),
                Err(why) => {
                    self.error(format!("the plugin emitted an event the host does not know: {why}"));
                    None
                }
            })
            .collect()
    }

    fn publish(&self, events: Vec<GolemEvent>) {
        for event in events {
            let variant = event.variant();
            self.fabric.emit(event);
            let mut info = lock(&self.info);
            info.event_count += 1;
            info.event_variant = Some(variant);
            info.last_event_at_ms = Some(now_ms());
        }
    }

    fn error(&self, message: String) {
        self.fabric.emit(GolemEvent::StreamError {
            subscription_id: self.id.clone(),
            tool: self.tool.clone(),
            message,
        });
    }
}

/// Deliver `filter`'s logs from block `next` on, following the head; reconnect and back-fill
/// whenever the node goes away.
async fn follow_logs(feed: Arc<Feed>, index: usize, chain_id: u64, filter: Filter, mut next: u64) {
    let (http, ws_url) = {
        let Ok(client) = feed.services.evm.chains.get(chain_id) else {
            return feed.error(format!("chain {chain_id} is not configured"));
        };
        (client.provider().clone(), client.ws_url())
    };
    let mut backoff = BACKOFF.0;
    let mut down_since: Option<String> = None;
    loop {
        let connected = async {
            let ws =
                ProviderBuilder::new().connect_ws(WsConnect::new(ws_url.clone()).with_max_retries(0)).await?;
            let heads = ws.subscribe_blocks().await?;
            Ok::<_, alloy::transports::TransportError>((ws, heads))
        }
        .await;
        let (_ws, mut heads) = match connected {
            Ok(c) => c,
            Err(e) => {
                if down_since.is_none() {
                    feed.error(format!("cannot follow chain {chain_id} at {ws_url}: {e}; retrying"));
                    down_since = Some(e.to_string());
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(BACKOFF.1);
                continue;
            }
        };
        // Catch up to the head first: blocks mined while disconnected.
        let caught_up = match http.get_block_number().await {
            Ok(head) => catch_up(&feed, index, chain_id, &http, &filter, &mut next, head).await,
            Err(e) => Err(e.to_string()),
        };
        if caught_up.is_ok() {
            backoff = BACKOFF.0;
            down_since = None;
            loop {
                let Ok(head) = heads.recv().await else { break };
                if let Err(e) = catch_up(&feed, index, chain_id, &http, &filter, &mut next, head.number).await
                {
                    feed.error(format!("reading logs of chain {chain_id}: {e}; reconnecting"));
                    break;
                }
            }
        }
        if feed.lease.as_ref().is_some_and(|l| l.lost()) {
            return;
        }
        if down_since.is_none() {
            down_since = Some("disconnected".into());
            feed.error(format!(
                "lost chain {chain_id} at {ws_url}; reconnecting and back-filling from block {next}"
            ));
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(BACKOFF.1);
    }
}

/// Deliver blocks `next..=head` in ranges; `next` moves past a range once the plugin has it.
async fn catch_up(
    feed: &Arc<Feed>,
    index: usize,
    chain_id: u64,
    http: &alloy::providers::DynProvider,
    filter: &Filter,
    next: &mut u64,
    head: u64,
) -> Result<(), String> {
    while *next <= head {
        let to = head.min(*next + LOG_RANGE - 1);
        let logs =
            http.get_logs(&filter.clone().from_block(*next).to_block(to)).await.map_err(|e| e.to_string())?;
        match &feed.lease {
            Some(lease) => fleet::deliver(feed, lease, index, chain_id, logs, to, next).await?,
            None if !logs.is_empty() => {
                let tool = feed.tool.clone();
                feed.step(move |host, params, state| {
                    host.stream_logs(&tool, params, chain_id, &logs, state).result
                })
                .await;
            }
            None => {}
        }
        *next = to + 1;
    }
    Ok(())
}

async fn poll(feed: Arc<Feed>, index: usize, interval: Duration) {
    let mut timer = tokio::time::interval(interval);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut ticks = 0u64;
    loop {
        timer.tick().await;
        ticks += 1;
        let tool = feed.tool.clone();
        let run = move |host: &Host, params: &str, state: &str| host.stream_tick(&tool, params, state).result;
        match &feed.lease {
            Some(lease) => {
                if let Err(why) = fleet::tick(&feed, lease, index, ticks, run).await {
                    if lease.lost() {
                        return;
                    }
                    feed.error(why);
                }
            }
            None => feed.step(run).await,
        }
    }
}

fn to_json<T: Serialize>(v: &T) -> Result<serde_json::Value, ToolError> {
    serde_json::to_value(v).map_err(|e| ToolError::new(ErrorCode::Internal, e.to_string()))
}
