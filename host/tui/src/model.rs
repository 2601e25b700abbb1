//! What the dashboard knows: the Event Fabric's envelopes folded into per-pane state. Pure (no
//! terminal, no clock): `apply` takes one envelope as JSON — the shape the journal, the fleet's
//! stream and an in-process subscription all give — so each pane's rendering is a function of a
//! fixed event sequence.

use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};

/// Lines kept in the events log.
pub const LOG_KEEP: usize = 2_000;
/// Swaps kept per pool.
pub const SWAPS_KEEP: usize = 50;
/// Points kept per price series.
pub const POINTS_KEEP: usize = 240;
/// Tool runs kept.
pub const RUNS_KEEP: usize = 100;
/// Alerts kept.
pub const ALERTS_KEEP: usize = 200;

/// A pool seen in snapshots, swaps or price updates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pool {
    /// The pool's address (a V4 pool's: the PoolManager's).
    pub address: String,
    /// `v3` or `v4`.
    pub version: &'static str,
    /// `WETH/USDC` when a snapshot or price update named the tokens.
    pub pair: Option<String>,
    /// Fee tier, hundredths of a basis point.
    pub fee: Option<u64>,
    /// token1 per token0.
    pub price: Option<f64>,
    /// The price before the last change.
    pub previous_price: Option<f64>,
    /// Current tick.
    pub tick: Option<i64>,
    /// In-range liquidity.
    pub liquidity: Option<String>,
    /// Token decimals (from a snapshot), to price a swap's `sqrt_price_x96`.
    pub decimals: Option<(u32, u32)>,
    /// Recent swaps, mints and burns, newest last.
    pub swaps: VecDeque<PoolEvent>,
}

/// A swap, mint or burn of a pool.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolEvent {
    /// The event's sequence number.
    pub seq: u64,
    /// `swap`, `mint` or `burn`.
    pub kind: String,
    /// token0 amount (signed from the pool's side).
    pub amount0: String,
    /// token1 amount.
    pub amount1: String,
    /// Block number.
    pub block: Option<u64>,
}

/// A price series (one followed pair).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// (event sequence, price), oldest first.
    pub points: VecDeque<(u64, f64)>,
    /// The last change, basis points.
    pub change_bps: Option<i64>,
}

/// A position as its alerts describe it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Position {
    /// The chain it is on, when the alert said (token ids repeat across chains).
    pub chain_id: Option<u64>,
    /// The position's token id.
    pub token_id: String,
    /// Its pool.
    pub pool: String,
    /// The range's lower tick.
    pub tick_lower: i64,
    /// The range's upper tick (exclusive).
    pub tick_upper: i64,
    /// The pool's current tick, as last seen.
    pub tick: i64,
    /// Uncollected fees, as the last fee alert reported them (`fees0 / fees1`, USD).
    pub fees: Option<String>,
}

impl Position {
    /// Whether the current tick is inside the range.
    pub fn in_range(&self) -> bool {
        self.tick_lower <= self.tick && self.tick < self.tick_upper
    }
}

/// One tool call as the fabric told it: start, progress steps, end.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRun {
    /// The tool.
    pub tool: String,
    /// Steps reached, in order.
    pub steps: Vec<String>,
    /// How many steps the tool names (0: unknown).
    pub total_steps: u32,
    /// Its tick budget, milliseconds (0: unknown).
    pub budget_ms: u64,
    /// When it started, Unix ms (0: its start was not seen).
    pub started_ms: u64,
    /// None while running; then whether it succeeded.
    pub ok: Option<bool>,
    /// Fuel the guest used.
    pub fuel: Option<u64>,
    /// Wall time, milliseconds.
    pub duration_ms: Option<u64>,
    /// The sprite this run shows.
    pub sprite: &'static str,
}

impl ToolRun {
    /// A run whose start was not seen (a verify call, or a start before the journal's range).
    fn unseen(tool: &str) -> Self {
        Self {
            tool: tool.into(),
            steps: Vec::new(),
            total_steps: 0,
            budget_ms: 0,
            started_ms: 0,
            ok: None,
            fuel: None,
            duration_ms: None,
            sprite: "thinking",
        }
    }
}

/// A position or health-factor alert.
#[derive(Debug, Clone, PartialEq)]
pub struct Alert {
    /// The event's sequence number.
    pub seq: u64,
    /// The line shown.
    pub text: String,
    /// Bad news (shown red) rather than good (green).
    pub severe: bool,
}

/// One line of the events log.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Sequence number (0 for a gap line).
    pub seq: u64,
    /// When, Unix ms.
    pub at_ms: u64,
    /// The variant (`PoolEventReceived`), or `gap`.
    pub kind: String,
    /// A one-line summary of the payload.
    pub text: String,
}

/// An open permit, as the permit store has it.
#[derive(Debug, Clone, PartialEq)]
pub struct PermitRow {
    /// The permit's id.
    pub permit_id: String,
    /// The action kind previewed (`swap`).
    pub kind: String,
    /// The write tool that planned it.
    pub tool: String,
    /// The expected outcome, one line.
    pub expected: String,
    /// The tool's risk tier.
    pub risk_tier: String,
    /// When it expires, Unix ms.
    pub expires_at_ms: u64,
    /// The confirmation policy that holds it for a person (`confirm = "always"`), until someone
    /// confirms it; None when it is not held.
    pub held_by: Option<String>,
}

/// The dashboard's state.
#[derive(Debug, Default)]
pub struct Model {
    /// The last sequence number applied.
    pub last_seq: u64,
    /// Pools by address (and V4 pool id).
    pub pools: BTreeMap<String, Pool>,
    /// Price series by pair (`WETH/USDC`).
    pub prices: BTreeMap<String, Series>,
    /// Positions by token id.
    pub positions: BTreeMap<String, Position>,
    /// Tool runs, newest last.
    pub runs: VecDeque<ToolRun>,
    /// Alerts, newest last.
    pub alerts: VecDeque<Alert>,
    /// The events log, newest last.
    pub log: VecDeque<Line>,
    /// Events never seen (gaps in the journal or the stream).
    pub missed: u64,
    /// Events the live subscription missed because the dashboard fell behind.
    pub lag_missed: u64,
    /// Of those, the ones read back from the journal.
    pub recovered: u64,
    /// The sprite: its trigger and until when (Unix ms) it plays.
    pub sprite: (&'static str, u64),
    /// Open permits (replaced whole by each poll of the store).
    pub permits: Vec<PermitRow>,
    /// Why the permit store could not be read, if it could not.
    pub permits_error: Option<String>,
}

/// How long a sprite trigger plays, from the specification's table (streaming-tools.txt,
/// "Sprite animation triggers").
pub fn sprite_duration_ms(trigger: &str, kind: &str) -> u64 {
    match (trigger, kind) {
        (_, "out_of_range") => 2_000,
        (_, "back_in_range") => 1_000,
        ("thinking", _) => 500,
        ("success" | "failure", _) => 1_500,
        ("executing", _) => 1_000,
        ("alert", _) => 2_000,
        _ => 0,
    }
}

fn str_of(v: &Value, key: &str) -> String {
    match &v[key] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn push_bounded<T>(q: &mut VecDeque<T>, item: T, keep: usize) {
    if q.len() == keep {
        q.pop_front();
    }
    q.push_back(item);
}

/// token1 per token0 from a `sqrtPriceX96` and the tokens' decimals.
pub fn price_from_sqrt(sqrt_x96: &str, decimals: (u32, u32)) -> Option<f64> {
    let sqrt: f64 = sqrt_x96.parse().ok()?;
    let ratio = sqrt / 2f64.powi(96);
    Some(ratio * ratio * 10f64.powi(decimals.0 as i32 - decimals.1 as i32))
}

/// Parse a decimal string (`"2000.5"`) as a float for charts.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// A short, readable form of an address or id: `0x1234…abcd`.
pub fn short(s: &str) -> String {
    if s.len() > 14 { format!("{}…{}", &s[..6], &s[s.len() - 4..]) } else { s.to_owned() }
}

impl Model {
    /// A gap: events `from..=to` were never seen.
    pub fn gap(&mut self, from: u64, to: u64) {
        self.missed += to.saturating_sub(from) + 1;
        self.last_seq = self.last_seq.max(to);
        let text = format!("events {from}..={to} were missed (not in the journal)");
        push_bounded(&mut self.log, Line { seq: 0, at_ms: 0, kind: "gap".into(), text }, LOG_KEEP);
    }

    /// Apply one envelope (`{seq, at_ms, event: {type, …}}`); an envelope already applied is
    /// ignored, and one past the next expected shows the gap before it.
    pub fn apply(&mut self, mut envelope: Value) {
        clean_in_place(&mut envelope);
        let envelope = &envelope;
        let Some(seq) = envelope["seq"].as_u64() else {
            return;
        };
        if seq <= self.last_seq && self.last_seq > 0 {
            return;
        }
        if self.last_seq > 0 && seq > self.last_seq + 1 {
            self.gap(self.last_seq + 1, seq - 1);
        }
        self.last_seq = seq;
        let at_ms = envelope["at_ms"].as_u64().unwrap_or(0);
        let e = &envelope["event"];
        let kind = e["type"].as_str().unwrap_or("?").to_owned();
        let data = &e["data"];
        let text = match kind.as_str() {
            "PoolEventReceived" => self.pool_event(seq, data),
            "PoolStateSnapshot" => self.snapshot(data),
            "PriceUpdate" => self.price(seq, data),
            "PositionAlert" => self.position_alert(seq, data),
            "HealthFactorAlert" => self.health_alert(seq, data),
            "TokenJarUpdate" => {
                format!(
                    "{} {} {} (jar {}: {})",
                    str_of(data, "movement"),
                    str_of(data, "amount"),
                    str_of(data, "token"),
                    short(&str_of(data, "jar")),
                    data["balances"]
                )
            }
            "SwapExecuted" => format!(
                "sold {} {} for {} {}",
                str_of(&data["sold"], "amount"),
                str_of(&data["sold"], "symbol"),
                str_of(&data["bought"], "amount"),
                str_of(&data["bought"], "symbol")
            ),
            "ToolExecutionStart" => self.tool_start(e, at_ms),
            "ToolExecutionUpdate" => self.tool_step(e),
            "ToolExecutionEnd" => self.tool_end(e),
            "HookDecision" => format!(
                "{} {} {}",
                str_of(e, "hook"),
                if e["allowed"] == true { "allowed" } else { "REFUSED" },
                str_of(e, "tool")
            ),
            "PermitCreated" => format!("{} by {}", str_of(e, "permit_id"), str_of(e, "tool")),
            "PermitConsumed" => str_of(e, "permit_id"),
            "PermitRefused" => format!("{}: {}", str_of(e, "permit_id"), str_of(e, "code")),
            "ActionExecuted" => {
                format!(
                    "{} tx {} gas {}",
                    str_of(e, "permit_id"),
                    short(&str_of(e, "tx_hash")),
                    e["gas_used"]
                )
            }
            "Halted" | "Resumed" => str_of(e, "reason"),
            "OutcomeMismatch" => format!("{}: {}", str_of(e, "permit_id"), e["differences"]),
            "TaskStatusChanged" => format!("{} {}", str_of(e, "task_id"), str_of(e, "state")),
            "StreamError" => {
                format!("{} {}: {}", str_of(e, "subscription_id"), str_of(e, "tool"), str_of(e, "message"))
            }
            "StreamClosed" => {
                format!("{} {} after {} events", str_of(e, "subscription_id"), str_of(e, "tool"), e["events"])
            }
            _ => e.to_string(),
        };
        if let Some(trigger) = e["sprite_trigger"].as_str() {
            let ms = sprite_duration_ms(trigger, data["alert"].as_str().unwrap_or(""));
            if ms > 0 {
                self.sprite = (static_trigger(trigger), at_ms + ms);
            }
        }
        push_bounded(&mut self.log, Line { seq, at_ms, kind, text }, LOG_KEEP);
    }

    fn pool_mut(&mut self, data: &Value) -> &mut Pool {
        let address = str_of(data, "pool");
        let id = data["pool_id"].as_str().map(str::to_owned);
        let key = match &id {
            Some(id) => format!("{address}/{id}"),
            None => address.clone(),
        };
        self.pools.entry(key).or_insert_with(|| Pool {
            address: id.unwrap_or(address),
            version: if data["pool_id"].is_string() { "v4" } else { "v3" },
            ..Pool::default()
        })
    }

    fn pool_event(&mut self, seq: u64, data: &Value) -> String {
        let kind = str_of(data, "type");
        let event = PoolEvent {
            seq,
            kind: kind.clone(),
            amount0: str_of(data, "amount0"),
            amount1: str_of(data, "amount1"),
            block: data["block_number"].as_u64(),
        };
        let tick = data["tick"].as_i64();
        let pool = self.pool_mut(data);
        describe(pool, data);
        let text = format!(
            "{kind} {} amount0 {} amount1 {}",
            pool.pair.clone().unwrap_or_else(|| short(&str_of(data, "pool"))),
            event.amount0,
            event.amount1
        );
        if let (Some(sqrt), Some(d)) = (data["sqrt_price_x96"].as_str(), pool.decimals)
            && let Some(price) = price_from_sqrt(sqrt, d)
        {
            set_price(pool, price);
        }
        if let Some(t) = tick {
            pool.tick = Some(t);
        }
        if let Some(l) = data["liquidity"].as_str().filter(|_| kind == "swap") {
            pool.liquidity = Some(l.to_owned());
        }
        push_bounded(&mut pool.swaps, event, SWAPS_KEEP);
        let address = pool.address.clone();
        if let Some(t) = tick {
            self.move_positions(&address, t);
        }
        text
    }

    fn snapshot(&mut self, data: &Value) -> String {
        let pool = self.pool_mut(data);
        describe(pool, data);
        if let Some(p) = number(&data["price_token1_per_token0"]) {
            set_price(pool, p);
        }
        pool.tick = data["tick"].as_i64().or(pool.tick);
        pool.liquidity = data["liquidity"].as_str().map(str::to_owned).or(pool.liquidity.take());
        let text = format!(
            "{} price {} tick {} liquidity {}",
            pool.pair.clone().unwrap_or_else(|| short(&pool.address)),
            str_of(data, "price_token1_per_token0"),
            str_of(data, "tick"),
            str_of(data, "liquidity")
        );
        if let Some(t) = data["tick"].as_i64() {
            let address = pool.address.clone();
            self.move_positions(&address, t);
        }
        text
    }

    fn price(&mut self, seq: u64, data: &Value) -> String {
        let pair = format!("{}/{}", str_of(data, "base"), str_of(data, "quote"));
        let pool = self.pool_mut(data);
        pool.fee = data["fee"].as_u64().or(pool.fee);
        // `X/Y` always reads "price of X in Y": a pool no snapshot named takes the feed's pair
        // and price; a snapshot's pool takes the price only if it names the pair the same way.
        if pool.pair.is_none() {
            pool.pair = Some(pair.clone());
        }
        if pool.pair.as_deref() == Some(pair.as_str())
            && let Some(p) = number(&data["price"])
        {
            set_price(pool, p);
        }
        let series = self.prices.entry(pair.clone()).or_default();
        if let Some(p) = number(&data["price"]) {
            push_bounded(&mut series.points, (seq, p), POINTS_KEEP);
        }
        series.change_bps = data["change_bps"].as_i64();
        let change = series.change_bps.map(|b| format!(" ({:+.2}%)", b as f64 / 100.0)).unwrap_or_default();
        format!("{pair} {}{change}", str_of(data, "price"))
    }

    fn move_positions(&mut self, pool: &str, tick: i64) {
        for p in self.positions.values_mut().filter(|p| p.pool.eq_ignore_ascii_case(pool)) {
            p.tick = tick;
        }
    }

    fn position_alert(&mut self, seq: u64, data: &Value) -> String {
        let kind = str_of(data, "alert");
        let id = str_of(data, "token_id");
        let chain_id = data["chain_id"].as_u64();
        // By chain and token id: each chain's position manager counts from 1.
        let key = chain_id.map_or_else(|| id.clone(), |c| format!("{c}:{id}"));
        let p = self.positions.entry(key).or_default();
        p.chain_id = chain_id;
        p.token_id = id.clone();
        p.pool = str_of(data, "pool");
        p.tick_lower = data["tick_lower"].as_i64().unwrap_or(p.tick_lower);
        p.tick_upper = data["tick_upper"].as_i64().unwrap_or(p.tick_upper);
        p.tick = data["tick"].as_i64().unwrap_or(p.tick);
        if data["fees0"].is_string() {
            p.fees = Some(format!(
                "{} / {} (${})",
                str_of(data, "fees0"),
                str_of(data, "fees1"),
                str_of(data, "fees_usd")
            ));
        }
        let on = chain_id.map(|c| format!(" on chain {c}")).unwrap_or_default();
        let text =
            format!("position #{id}{on} {kind}: tick {} range [{}, {})", p.tick, p.tick_lower, p.tick_upper);
        let severe = kind != "back_in_range";
        push_bounded(&mut self.alerts, Alert { seq, text: text.clone(), severe }, ALERTS_KEEP);
        text
    }

    fn health_alert(&mut self, seq: u64, data: &Value) -> String {
        let kind = str_of(data, "alert");
        let text = format!(
            "health factor of {} {kind}: {} (threshold {})",
            short(&str_of(data, "user")),
            str_of(data, "health_factor"),
            str_of(data, "threshold")
        );
        let severe = !kind.contains("above") && !kind.contains("recovered");
        push_bounded(&mut self.alerts, Alert { seq, text: text.clone(), severe }, ALERTS_KEEP);
        text
    }

    fn tool_start(&mut self, e: &Value, at_ms: u64) -> String {
        let tool = str_of(e, "tool");
        let run = ToolRun {
            total_steps: e["total_steps"].as_u64().unwrap_or(0) as u32,
            budget_ms: e["tick_budget_ms"].as_u64().unwrap_or(0),
            started_ms: at_ms,
            sprite: "executing",
            ..ToolRun::unseen(&tool)
        };
        push_bounded(&mut self.runs, run, RUNS_KEEP);
        format!("{tool} started")
    }

    /// The newest unfinished run of `tool`, started now if the start was not seen.
    fn run_of(&mut self, tool: &str) -> &mut ToolRun {
        let open = self.runs.iter().rposition(|r| r.tool == tool && r.ok.is_none());
        match open {
            Some(i) => &mut self.runs[i],
            None => {
                push_bounded(&mut self.runs, ToolRun::unseen(tool), RUNS_KEEP);
                self.runs.back_mut().expect("just pushed")
            }
        }
    }

    fn tool_step(&mut self, e: &Value) -> String {
        let (tool, step) = (str_of(e, "tool"), str_of(e, "step"));
        self.run_of(&tool).steps.push(step.clone());
        format!("{tool}: {step}")
    }

    fn tool_end(&mut self, e: &Value) -> String {
        let tool = str_of(e, "tool");
        let ok = e["ok"] == true;
        let run = self.run_of(&tool);
        run.ok = Some(ok);
        run.fuel = e["fuel"].as_u64();
        run.duration_ms = e["duration_ms"].as_u64();
        run.sprite = if ok { "success" } else { "failure" };
        format!("{tool} {}", if ok { "ok" } else { "FAILED" })
    }
}

/// `v` with every control character in its strings replaced: chain data and plugin text reach
/// the terminal, and an escape sequence in them must not.
pub fn clean(mut v: Value) -> Value {
    clean_in_place(&mut v);
    v
}

/// [`clean`] without a copy.
pub fn clean_in_place(v: &mut Value) {
    match v {
        Value::String(s) if s.chars().any(char::is_control) => {
            *s = s.chars().map(|c| if c.is_control() { '·' } else { c }).collect();
        }
        Value::Array(a) => a.iter_mut().for_each(clean_in_place),
        Value::Object(o) => o.values_mut().for_each(clean_in_place),
        _ => {}
    }
}

/// What a snapshot or pool event says about the pool itself: its tokens (the pair and their
/// decimals), fee tier and version.
fn describe(pool: &mut Pool, data: &Value) {
    let (t0, t1) = (&data["token0"], &data["token1"]);
    if let (Some(a), Some(b)) = (t0["symbol"].as_str(), t1["symbol"].as_str()) {
        pool.pair = Some(format!("{a}/{b}"));
    }
    if let (Some(a), Some(b)) = (t0["decimals"].as_u64(), t1["decimals"].as_u64()) {
        pool.decimals = Some((a as u32, b as u32));
    }
    if let Some(fee) = data["fee"].as_u64() {
        pool.fee = Some(fee);
    }
    if let Some(v) = data["version"].as_str() {
        pool.version = if v == "v4" { "v4" } else { "v3" };
    }
}

fn set_price(pool: &mut Pool, price: f64) {
    if pool.price != Some(price) {
        pool.previous_price = pool.price;
        pool.price = Some(price);
    }
}

/// The trigger names the fabric uses, as static strings.
fn static_trigger(name: &str) -> &'static str {
    match name {
        "thinking" => "thinking",
        "executing" => "executing",
        "success" => "success",
        "failure" => "failure",
        "alert" => "alert",
        _ => "idle",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(seq: u64, event: Value) -> Value {
        json!({"seq": seq, "at_ms": 1_000 * seq, "event": event})
    }

    #[test]
    fn a_jump_in_sequence_is_a_gap_and_a_repeat_is_ignored() {
        let mut m = Model::default();
        m.apply(env(1, json!({"type": "PermitConsumed", "permit_id": "permit-1"})));
        m.apply(env(5, json!({"type": "PermitConsumed", "permit_id": "permit-5"})));
        m.apply(env(5, json!({"type": "PermitConsumed", "permit_id": "permit-5"})));
        assert_eq!(m.missed, 3);
        let kinds: Vec<&str> = m.log.iter().map(|l| l.kind.as_str()).collect();
        assert_eq!(kinds, ["PermitConsumed", "gap", "PermitConsumed"]);
        assert!(m.log[1].text.contains("2..=4"));
    }

    #[test]
    fn a_swap_moves_the_pool_price_and_the_positions_in_it() {
        let mut m = Model::default();
        let pool = "0x1111111111111111111111111111111111111111";
        m.apply(env(1, json!({"type": "PoolStateSnapshot", "sprite_trigger": "idle", "data": {
            "pool": pool, "tick": 10, "liquidity": "5", "price_token1_per_token0": "1.0",
            "token0": {"symbol": "A", "decimals": 18}, "token1": {"symbol": "B", "decimals": 18}, "fee": 3000}})));
        m.apply(env(2, json!({"type": "PositionAlert", "sprite_trigger": "alert", "data": {
            "alert": "out_of_range", "token_id": "7", "pool": pool, "tick": 10, "tick_lower": 20, "tick_upper": 40}})));
        assert!(!m.positions["7"].in_range());
        // sqrtPriceX96 of price 4 = 2 * 2^96.
        let sqrt = (2f64 * 2f64.powi(96)).to_string();
        let sqrt = sqrt.split('.').next().expect("integer part").to_owned();
        m.apply(env(3, json!({"type": "PoolEventReceived", "sprite_trigger": "thinking", "data": {
            "type": "swap", "pool": pool, "amount0": "-1", "amount1": "4", "sqrt_price_x96": sqrt, "tick": 25}})));
        let p = &m.pools[pool];
        assert_eq!((p.pair.as_deref(), p.fee, p.version), (Some("A/B"), Some(3000), "v3"));
        assert!((p.price.expect("price") - 4.0).abs() < 1e-9 && p.previous_price == Some(1.0));
        assert_eq!(p.swaps.len(), 1);
        assert!(m.positions["7"].in_range(), "the swap's tick moved the position back into range");
        assert_eq!(m.sprite, ("thinking", 3_500), "a swap thinks for 500 ms");
        assert!(m.alerts[0].severe);
        // The same token id on another chain is another position.
        m.apply(env(4, json!({"type": "PositionAlert", "sprite_trigger": "alert", "data": {
            "alert": "out_of_range", "chain_id": 8453, "token_id": "7", "pool": "0x3333333333333333333333333333333333333333",
            "tick": 10, "tick_lower": 20, "tick_upper": 40}})));
        assert_eq!(m.positions.len(), 2, "{:?}", m.positions.keys());
        assert!(!m.positions["8453:7"].in_range() && m.positions["7"].in_range());
        assert!(m.log.back().expect("logged").text.contains("position #7 on chain 8453"));
    }

    #[test]
    fn a_pool_known_only_from_its_events_is_named_and_priced_by_them() {
        let mut m = Model::default();
        let pool = "0x2222222222222222222222222222222222222222";
        // sqrtPriceX96 of 2,000 USDC (6 decimals) per WETH (18): sqrt(2000e-12) * 2^96.
        let sqrt = format!("{:.0}", (2000e-12f64).sqrt() * 2f64.powi(96));
        m.apply(env(
            1,
            json!({"type": "PoolEventReceived", "sprite_trigger": "thinking", "data": {
            "type": "swap", "pool": pool, "amount0": "1", "amount1": "-2000", "sqrt_price_x96": sqrt,
            "token0": {"symbol": "WETH", "decimals": 18}, "token1": {"symbol": "USDC", "decimals": 6},
            "fee": 500, "version": "v3"}}),
        ));
        let p = &m.pools[pool];
        assert_eq!((p.pair.as_deref(), p.fee, p.decimals), (Some("WETH/USDC"), Some(500), Some((18, 6))));
        assert!((p.price.expect("priced by the swap") - 2000.0).abs() < 1e-6, "{:?}", p.price);
        assert!(m.log[0].text.starts_with("swap WETH/USDC amount0 1"), "{}", m.log[0].text);
    }

    #[test]
    fn a_tool_run_collects_its_steps_and_its_end() {
        let mut m = Model::default();
        m.apply(env(1, json!({"type": "ToolExecutionStart", "tool": "uniswap_swap", "total_steps": 3, "tick_budget_ms": 1000})));
        m.apply(env(2, json!({"type": "ToolExecutionUpdate", "tool": "uniswap_swap", "step": "quote"})));
        m.apply(env(3, json!({"type": "ToolExecutionEnd", "tool": "uniswap_swap", "ok": true, "fuel": 900, "duration_ms": 4})));
        let r = &m.runs[0];
        assert_eq!(
            (r.steps.len(), r.ok, r.fuel, r.duration_ms, r.sprite),
            (1, Some(true), Some(900), Some(4), "success")
        );
        assert_eq!((r.total_steps, r.budget_ms, r.started_ms), (3, 1000, 1000));
    }

    #[test]
    fn hostile_text_cannot_break_a_line() {
        let mut m = Model::default();
        m.apply(env(1, json!({"type": "Halted", "reason": "a\nb\u{1b}[2Jc"})));
        assert!(!m.log[0].text.chars().any(char::is_control), "{:?}", m.log[0].text);
    }
}
