//! The Event Fabric: every step the host takes, as a typed event with a monotonic sequence
//! number, broadcast to live subscribers and kept in a ring of the last 10,000 for replay.
//!
//! A subscriber can resume from a sequence number: the ring is replayed and the live stream
//! continues after it without a gap or a duplicate at the seam (the receiver is created under
//! the same lock that orders emits). A subscriber that falls behind, or resumes from before the
//! ring, is told exactly which range it missed — never a silent drop. Events stay typed until a
//! consumer serializes them, so emitting with no subscriber serializes nothing.

use crate::sync::lock;
use crate::tool::SpriteTrigger;
use serde::Serialize;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// How many past events are kept for `resume_from`.
pub const RING: usize = 10_000;

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum GolemEvent {
    /// A tool started planning a write.
    ToolExecutionStart {
        /// The tool's name.
        tool: String,
        /// How many progress steps it names (a TUI's progress bar; 0: none named).
        total_steps: u32,
        /// Its tick budget, milliseconds (how long a TUI expects it to take).
        tick_budget_ms: u64,
    },
    /// A running tool reached a progress step.
    ToolExecutionUpdate {
        /// The tool's name.
        tool: String,
        /// The step's name, from the tool's `progress_steps` (its index if unnamed).
        step: String,
    },
    /// A tool call finished.
    ToolExecutionEnd {
        /// The tool's name.
        tool: String,
        /// Whether it succeeded.
        ok: bool,
        /// Fuel the guest consumed (≈ wasm instructions; a lower bound if it was interrupted).
        fuel: u64,
        /// Wall time of the call, milliseconds.
        duration_ms: u64,
    },
    /// A safety hook allowed or rejected a proposed write.
    HookDecision {
        /// The tool whose write was checked.
        tool: String,
        /// The hook's name.
        hook: String,
        /// Whether the hook let the write through.
        allowed: bool,
    },
    /// A write was simulated and an action permit issued for it.
    PermitCreated {
        /// The permit's id.
        permit_id: String,
        /// The tool that planned the write.
        tool: String,
    },
    /// A permit was redeemed to execute its write.
    PermitConsumed {
        /// The permit's id.
        permit_id: String,
    },
    /// A permit could not be used: expired, cancelled or refused.
    PermitRefused {
        /// The permit's id.
        permit_id: String,
        /// Why: `expired`, `cancelled`, or the refusal's error code.
        code: String,
    },
    /// A permitted write's transaction was sent and its receipt came back.
    ActionExecuted {
        /// The permit it redeemed.
        permit_id: String,
        /// The transaction's hash.
        tx_hash: String,
        /// Gas the transaction used.
        gas_used: u64,
    },
    /// The emergency halt: open permits revoked, later writes refused.
    Halted {
        /// Why the host was halted.
        reason: String,
    },
    /// An executed write changed the wallet otherwise than its plan declared.
    OutcomeMismatch {
        /// The permit it executed under.
        permit_id: String,
        /// Each difference.
        differences: Vec<String>,
    },
    /// An operator lifted the emergency halt (`bardo resume`): writes are allowed again.
    Resumed {
        /// Why the host had been halted.
        reason: String,
    },
    /// An A2A task changed state (`submitted`, `working`, `input-required`, `completed`,
    /// `canceled`, `failed`).
    TaskStatusChanged {
        /// The task's id.
        task_id: String,
        /// Its new state.
        state: String,
        /// The permit it waits on or executed, if it is a write.
        permit_id: Option<String>,
    },
    /// A pool's swap, mint or burn (`stream_pool_events`).
    PoolEventReceived(StreamData),
    /// A pool's slot0, liquidity and fee growth (`stream_pool_state`).
    PoolStateSnapshot(StreamData),
    /// A position left or re-entered its range, or its fees crossed a threshold.
    PositionAlert(StreamData),
    /// A pair's price moved (`stream_price_feed`).
    PriceUpdate(StreamData),
    /// A token jar's balances changed or it burned tokens (`stream_tokenjar`).
    TokenJarUpdate(StreamData),
    /// The wallet swapped (`stream_trades`).
    SwapExecuted(StreamData),
    /// An Aave account's health factor crossed a threshold.
    HealthFactorAlert(StreamData),
    /// A subscription could not take a step (node down, plugin error); it keeps running.
    StreamError {
        /// The subscription's id.
        subscription_id: String,
        /// The stream tool it runs.
        tool: String,
        /// What went wrong.
        message: String,
    },
    /// A subscription ended.
    StreamClosed {
        /// The subscription's id.
        subscription_id: String,
        /// The stream tool it ran.
        tool: String,
        /// How many events it delivered.
        events: u64,
    },
}

/// What a stream subscription delivered, with how an agent UI shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamData {
    /// The subscription that delivered it.
    pub subscription_id: String,
    /// The stream tool the subscription runs.
    pub tool: String,
    /// The agent sprite's reaction.
    pub sprite_trigger: SpriteTrigger,
    /// The TUI pane that shows it.
    pub pane: &'static str,
    /// The plugin's decoded payload.
    pub data: serde_json::Value,
}

/// The event variants a stream may emit, by the kind a plugin names: constructor, default
/// sprite, pane.
type Variant = (&'static str, fn(StreamData) -> GolemEvent, SpriteTrigger, &'static str);
const STREAM_VARIANTS: &[Variant] = &[
    ("pool-event-received", GolemEvent::PoolEventReceived, SpriteTrigger::Thinking, "pools"),
    ("pool-state-snapshot", GolemEvent::PoolStateSnapshot, SpriteTrigger::Idle, "pools"),
    ("position-alert", GolemEvent::PositionAlert, SpriteTrigger::Alert, "positions"),
    ("price-update", GolemEvent::PriceUpdate, SpriteTrigger::Idle, "prices"),
    ("token-jar-update", GolemEvent::TokenJarUpdate, SpriteTrigger::Idle, "fees"),
    ("swap-executed", GolemEvent::SwapExecuted, SpriteTrigger::Success, "trades"),
    ("health-factor-alert", GolemEvent::HealthFactorAlert, SpriteTrigger::Alert, "positions"),
];

impl GolemEvent {
    /// The stream subscription this event belongs to, if it is a stream's.
    pub fn subscription_id(&self) -> Option<&str> {
        match self {
            Self::PoolEventReceived(d)
            | Self::PoolStateSnapshot(d)
            | Self::PositionAlert(d)
            | Self::PriceUpdate(d)
            | Self::TokenJarUpdate(d)
            | Self::SwapExecuted(d)
            | Self::HealthFactorAlert(d) => Some(&d.subscription_id),
            Self::StreamError { subscription_id, .. } | Self::StreamClosed { subscription_id, .. } => {
                Some(subscription_id)
            }
            _ => None,
        }
    }

    /// The typed event for a stream event of `kind`; the payload may raise the sprite with
    /// `"sprite_trigger"`. An unknown kind is an error, never passed through untyped.
    pub fn from_stream(
        kind: &str,
        mut data: serde_json::Value,
        subscription_id: &str,
        tool: &str,
    ) -> Result<Self, String> {
        let Some((_, make, sprite, pane)) = STREAM_VARIANTS.iter().find(|v| v.0 == kind) else {
            let known: Vec<&str> = STREAM_VARIANTS.iter().map(|v| v.0).collect();
            return Err(format!("unknown stream event kind {kind:?} (known: {})", known.join(", ")));
        };
        let sprite = match data.as_object_mut().and_then(|o| o.remove("sprite_trigger")) {
            None => *sprite,
            Some(s) => {
                serde_json::from_value(s.clone()).map_err(|_| format!("unknown sprite_trigger {s}"))?
            }
        };
        Ok(make(StreamData {
            subscription_id: subscription_id.into(),
            tool: tool.into(),
            sprite_trigger: sprite,
            pane,
            data,
        }))
    }

    /// The name of the variant (`PoolEventReceived`).
    pub fn variant(&self) -> &'static str {
        match self {
            Self::ToolExecutionStart { .. } => "ToolExecutionStart",
            Self::ToolExecutionUpdate { .. } => "ToolExecutionUpdate",
            Self::ToolExecutionEnd { .. } => "ToolExecutionEnd",
            Self::HookDecision { .. } => "HookDecision",
            Self::PermitCreated { .. } => "PermitCreated",
            Self::PermitConsumed { .. } => "PermitConsumed",
            Self::PermitRefused { .. } => "PermitRefused",
            Self::ActionExecuted { .. } => "ActionExecuted",
            Self::Halted { .. } => "Halted",
            Self::Resumed { .. } => "Resumed",
            Self::OutcomeMismatch { .. } => "OutcomeMismatch",
            Self::TaskStatusChanged { .. } => "TaskStatusChanged",
            Self::PoolEventReceived(_) => "PoolEventReceived",
            Self::PoolStateSnapshot(_) => "PoolStateSnapshot",
            Self::PositionAlert(_) => "PositionAlert",
            Self::PriceUpdate(_) => "PriceUpdate",
            Self::TokenJarUpdate(_) => "TokenJarUpdate",
            Self::SwapExecuted(_) => "SwapExecuted",
            Self::HealthFactorAlert(_) => "HealthFactorAlert",
            Self::StreamError { .. } => "StreamError",
            Self::StreamClosed { .. } => "StreamClosed",
        }
    }
}

/// An event with its place in the sequence.
#[derive(Debug, Clone, Serialize)]
pub struct Envelope {
    /// Its sequence number (monotonic, from 1).
    pub seq: u64,
    /// When it was emitted, in Unix milliseconds.
    pub at_ms: u64,
    /// The event.
    pub event: Arc<GolemEvent>,
}

/// Events a subscriber did not get: `from..=to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("events {from}..={to} were missed (the subscriber fell behind or resumed past the ring)")]
pub struct Gap {
    /// The first missed sequence number.
    pub from: u64,
    /// The last missed sequence number (inclusive).
    pub to: u64,
}

/// A ring slot's event: by value while no subscriber has seen it (an unwatched emit allocates
/// and shares nothing), an `Arc` once one has.
enum Stored {
    Empty,
    Owned(GolemEvent),
    Shared(Arc<GolemEvent>),
}

struct Slot {
    seq: u64,
    at_ms: u64,
    event: Stored,
}

impl Slot {
    /// The slot as an envelope, sharing its event from now on.
    fn share(&mut self) -> Envelope {
        let event = match std::mem::replace(&mut self.event, Stored::Empty) {
            Stored::Owned(e) => Arc::new(e),
            Stored::Shared(a) => a,
            Stored::Empty => unreachable!("only written slots are shared"),
        };
        self.event = Stored::Shared(event.clone());
        Envelope { seq: self.seq, at_ms: self.at_ms, event }
    }
}

/// The last [`RING`] events: event `seq` lives in slot `seq % RING`, overwritten in place.
struct Ring {
    next_seq: u64,
    /// The first sequence number this fabric assigned.
    first: u64,
    slots: Box<[Slot]>,
}

impl Ring {
    fn oldest_seq(&self) -> u64 {
        self.first.max(self.next_seq.saturating_sub(RING as u64))
    }

    fn slot(&mut self, seq: u64) -> &mut Slot {
        &mut self.slots[(seq % RING as u64) as usize]
    }
}

/// The fabric.
pub struct Fabric {
    ring: Mutex<Ring>,
    tx: broadcast::Sender<Envelope>,
    /// Live subscriptions (changed under the ring lock when added; read by `emit` under it).
    subscribers: Arc<AtomicUsize>,
}

impl Default for Fabric {
    fn default() -> Self {
        Self::new()
    }
}

impl Fabric {
    /// An empty fabric; sequence numbers start at 1.
    pub fn new() -> Self {
        Self::starting_at(1)
    }

    /// An empty fabric whose first event gets sequence number `first` (continuing a journal).
    pub fn starting_at(first: u64) -> Self {
        let (tx, _) = broadcast::channel(RING);
        let first = first.max(1);
        let slots = (0..RING).map(|_| Slot { seq: 0, at_ms: 0, event: Stored::Empty }).collect();
        let ring = Ring { next_seq: first, first, slots };
        Self { ring: Mutex::new(ring), tx, subscribers: Arc::default() }
    }

    /// Publish `event`; returns its sequence number.
    pub fn emit(&self, event: GolemEvent) -> u64 {
        let at_ms = now_ms();
        let mut ring = lock(&self.ring);
        let seq = ring.next_seq;
        ring.next_seq += 1;
        let slot = ring.slot(seq);
        if self.subscribers.load(Ordering::Relaxed) == 0 {
            // Fields written in place: the event is copied once, straight into the ring.
            slot.seq = seq;
            slot.at_ms = at_ms;
            slot.event = Stored::Owned(event);
        } else {
            let shared = Arc::new(event);
            *slot = Slot { seq, at_ms, event: Stored::Shared(shared.clone()) };
            // Under the ring lock, so live order = sequence order.
            let _ = self.tx.send(Envelope { seq, at_ms, event: shared });
        }
        seq
    }

    /// The last sequence number emitted (0 before the first).
    pub fn last_seq(&self) -> u64 {
        lock(&self.ring).next_seq - 1
    }

    /// Subscribe to events from `resume_from` on (none: only new events).
    pub fn subscribe(&self, resume_from: Option<u64>) -> Subscription {
        let mut ring = lock(&self.ring);
        let rx = self.tx.subscribe();
        self.subscribers.fetch_add(1, Ordering::Relaxed);
        let from = resume_from.unwrap_or(ring.next_seq).max(1);
        let oldest = ring.oldest_seq();
        let gap = (from < oldest).then(|| Gap { from, to: oldest - 1 });
        let start = from.max(oldest);
        let backlog: VecDeque<Envelope> = (start..ring.next_seq).map(|s| ring.slot(s).share()).collect();
        Subscription {
            backlog,
            rx,
            next: from.max(oldest).min(ring.next_seq),
            gap,
            _counted: Counted(self.subscribers.clone()),
        }
    }
}

/// Decrements the fabric's subscriber count when a subscription is dropped.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One subscriber's stream: the replayed backlog, then live events.
pub struct Subscription {
    backlog: VecDeque<Envelope>,
    rx: broadcast::Receiver<Envelope>,
    next: u64,
    gap: Option<Gap>,
    _counted: Counted,
}

impl Subscription {
    /// What to hand out for live event `e`: nothing if it was already replayed, the missed range
    /// if it skips ahead (then `e` itself on the next call), else `e`.
    fn accept(&mut self, e: Envelope) -> Option<Result<Envelope, Gap>> {
        if e.seq < self.next {
            return None;
        }
        if e.seq > self.next {
            let gap = Gap { from: self.next, to: e.seq - 1 };
            self.next = e.seq;
            self.backlog.push_back(e);
            return Some(Err(gap));
        }
        self.next = e.seq + 1;
        Some(Ok(e))
    }

    fn pending(&mut self) -> Option<Result<Envelope, Gap>> {
        if let Some(gap) = self.gap.take() {
            return Some(Err(gap));
        }
        let e = self.backlog.pop_front()?;
        self.next = e.seq + 1;
        Some(Ok(e))
    }

    /// The next event, or the range that was missed before it. `None` when the fabric is gone.
    pub async fn recv(&mut self) -> Option<Result<Envelope, Gap>> {
        if let Some(ready) = self.pending() {
            return Some(ready);
        }
        loop {
            match self.rx.recv().await {
                Ok(e) => {
                    if let Some(out) = self.accept(e) {
                        return Some(out);
                    }
                }
                // The next event received shows the gap with exact bounds.
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// The next event if one is ready now.
    pub fn try_recv(&mut self) -> Option<Result<Envelope, Gap>> {
        if let Some(ready) = self.pending() {
            return Some(ready);
        }
        loop {
            match self.rx.try_recv() {
                Ok(e) => {
                    if let Some(out) = self.accept(e) {
                        return Some(out);
                    }
                }
                Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                Err(_) => return None,
            }
        }
    }
}

/// Wall-clock milliseconds from the coarse clock (a few ns instead of tens; resolution is the
/// kernel tick, 1–4 ms, which is what `at_ms` promises).
#[cfg(target_os = "linux")]
pub fn now_ms() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
    (t.tv_sec as u64) * 1_000 + (t.tv_nsec as u64) / 1_000_000
}

/// Wall-clock Unix milliseconds.
#[cfg(not(target_os = "linux"))]
pub fn now_ms() -> u64 {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    d.as_secs() * 1_000 + u64::from(d.subsec_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(i: u64) -> GolemEvent {
        GolemEvent::PermitConsumed { permit_id: i.to_string() }
    }

    fn drain(sub: &mut Subscription) -> Vec<Result<u64, Gap>> {
        std::iter::from_fn(|| sub.try_recv()).map(|r| r.map(|e| e.seq)).collect()
    }

    #[test]
    fn resume_replays_then_continues_live_without_gap_or_duplicate() {
        let fabric = Fabric::new();
        for i in 0..5 {
            fabric.emit(ev(i));
        }
        let mut sub = fabric.subscribe(Some(3));
        fabric.emit(ev(5));
        assert_eq!(drain(&mut sub), vec![Ok(3), Ok(4), Ok(5), Ok(6)]);
        fabric.emit(ev(6));
        assert_eq!(drain(&mut sub), vec![Ok(7)]);
        let mut fresh = fabric.subscribe(None);
        assert!(drain(&mut fresh).is_empty(), "no backlog without resume_from");
    }

    #[test]
    fn a_fabric_continuing_a_journal_reports_what_came_before_it_as_missed() {
        let fabric = Fabric::starting_at(100);
        for i in 0..3 {
            fabric.emit(ev(i));
        }
        assert_eq!(fabric.last_seq(), 102);
        let mut sub = fabric.subscribe(Some(50));
        assert_eq!(drain(&mut sub), vec![Err(Gap { from: 50, to: 99 }), Ok(100), Ok(101), Ok(102)]);
    }

    #[test]
    fn resuming_past_the_ring_and_lagging_report_the_missed_range() {
        let fabric = Fabric::new();
        for i in 0..(RING as u64 + 50) {
            fabric.emit(ev(i));
        }
        let mut sub = fabric.subscribe(Some(1));
        let first = sub.try_recv().expect("something");
        assert_eq!(first.map(|e| e.seq), Err(Gap { from: 1, to: 50 }));
        assert_eq!(sub.try_recv().and_then(Result::ok).map(|e| e.seq), Some(51));

        // A live subscriber that falls more than the channel's capacity behind (the capacity is
        // RING rounded up to a power of two).
        let mut slow = fabric.subscribe(None);
        let start = fabric.last_seq() + 1;
        for i in 0..(2 * RING as u64 + 10) {
            fabric.emit(ev(i));
        }
        match slow.try_recv() {
            Some(Err(gap)) => {
                assert_eq!(gap.from, start);
                let next = slow.try_recv().and_then(Result::ok).expect("continues after the gap");
                assert_eq!(next.seq, gap.to + 1, "contiguous after the reported gap");
            }
            other => panic!("expected a gap, got {other:?}"),
        }
    }
}
