//! Drawing: the header, the seven panes and the footer. A wide terminal (≥ 100×30) shows every
//! pane at once; a smaller one shows the focused pane alone under a tab bar, so 80×24 stays
//! readable instead of squeezing seven boxes into it. `now_ms` is passed in, never read, so a
//! rendering is a function of the model (snapshot tests).

use crate::app::{App, Mode, Pane};
use crate::model::{Position, short};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Cell, Chart, Clear, Dataset, GraphType, Paragraph, Row, Table, Wrap};
use std::collections::VecDeque;

/// The smallest terminal that shows every pane at once.
pub const FULL: (u16, u16) = (100, 30);

/// The keys, as `?` shows them (and docs/operators.md lists them).
pub const KEYS: &[(&str, &str)] = &[
    ("tab / shift-tab", "next / previous pane"),
    ("↑ ↓ (k j)", "select a row; in Events, scroll"),
    ("/", "filter the events log (enter keeps, esc clears)"),
    ("c", "commit the selected permit (asks y/n first)"),
    ("x", "cancel the selected permit"),
    ("y", "confirm the selected permit for whoever waits on it"),
    ("esc", "clear the filter and the status line"),
    ("?", "this help"),
    ("q", "quit"),
];

const GREEN: Style = Style::new().fg(Color::Green);
const RED: Style = Style::new().fg(Color::Red);
const DIM: Style = Style::new().fg(Color::DarkGray);
const BOLD: Style = Style::new().add_modifier(Modifier::BOLD);
/// A severe alert: white on red, so it cannot be missed (and shows in a plain capture's escapes).
const ALARM: Style = Style::new().fg(Color::White).bg(Color::Red).add_modifier(Modifier::BOLD);
const SELECTED: Style = Style::new().add_modifier(Modifier::REVERSED);

/// Draw the whole dashboard.
pub fn draw(frame: &mut Frame, app: &App, now_ms: u64) {
    let area = frame.area();
    let [header, body, footer] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(0), Constraint::Length(1)]).areas(area);
    frame.render_widget(Paragraph::new(header_line(app, now_ms)), header);
    frame.render_widget(Paragraph::new(footer_line(app)), footer);
    if area.width >= FULL.0 && area.height >= FULL.1 {
        let [top, middle, lower, bottom] = Layout::vertical([
            Constraint::Percentage(28),
            Constraint::Percentage(22),
            Constraint::Percentage(20),
            Constraint::Percentage(30),
        ])
        .areas(body);
        let halves = |r: Rect, left: u16| -> [Rect; 2] {
            Layout::horizontal([Constraint::Percentage(left), Constraint::Percentage(100 - left)]).areas(r)
        };
        let [pools, prices] = halves(top, 58);
        let [positions, permits] = halves(middle, 50);
        let [tools, alerts] = halves(lower, 50);
        for (pane, area) in [
            (Pane::Pools, pools),
            (Pane::Prices, prices),
            (Pane::Positions, positions),
            (Pane::Permits, permits),
            (Pane::Tools, tools),
            (Pane::Alerts, alerts),
            (Pane::Events, bottom),
        ] {
            draw_pane(frame, app, pane, area, now_ms);
        }
    } else {
        let [tabs, rest] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(body);
        let names: Vec<Span> = Pane::ALL
            .iter()
            .flat_map(|p| {
                let style = if *p == app.focus { SELECTED.add_modifier(Modifier::BOLD) } else { DIM };
                [Span::styled(format!(" {} ", p.short()), style), Span::raw(" ")]
            })
            .collect();
        frame.render_widget(Paragraph::new(Line::from(names)), tabs);
        draw_pane(frame, app, app.focus, rest, now_ms);
    }
    match &app.mode {
        Mode::Help => draw_help(frame, area),
        Mode::Confirm(id) => draw_confirm(frame, app, id, area, now_ms),
        _ => {}
    }
}

/// The sprite's face for a trigger.
fn face(trigger: &str) -> (&'static str, Style) {
    match trigger {
        "thinking" => ("(o.o)? thinking", Style::new().fg(Color::Cyan)),
        "executing" => ("(>_<)! executing", Style::new().fg(Color::Yellow)),
        "success" => ("(^_^) success", GREEN),
        "failure" => ("(x_x) failure", RED),
        "alert" => ("(O_O)! alert", RED),
        _ => ("(-_-) idle", DIM),
    }
}

fn header_line(app: &App, now_ms: u64) -> Line<'static> {
    let m = &app.model;
    let (trigger, until) = m.sprite;
    let running = m.runs.back().is_some_and(|r| r.ok.is_none());
    let trigger = if now_ms < until {
        trigger
    } else if running {
        "executing"
    } else {
        "idle"
    };
    let (face, style) = face(trigger);
    let mut spans = vec![
        Span::styled(" bardo tui ", BOLD.add_modifier(Modifier::REVERSED)),
        Span::raw(" golem "),
        Span::styled(face, style),
        Span::raw(format!(" │ seq {}", m.last_seq)),
    ];
    if m.lag_missed > 0 {
        spans.push(Span::styled(
            format!(" │ lagging: {} missed, {} from the journal", m.lag_missed, m.recovered),
            Style::new().fg(Color::Yellow),
        ));
    }
    if m.missed > 0 {
        spans.push(Span::styled(format!(" │ gaps: {} missing", m.missed), RED));
    }
    // Last: a narrow terminal cuts the source's description, not the state.
    spans.push(Span::styled(format!(" │ {}", app.source), DIM));
    Line::from(spans)
}

fn footer_line(app: &App) -> Line<'static> {
    match (&app.mode, &app.status) {
        (Mode::Filter, _) => Line::from(vec![
            Span::styled(" filter /", BOLD),
            Span::raw(app.filter.clone()),
            Span::styled("█", DIM),
            Span::styled("   enter keeps it · esc clears it", DIM),
        ]),
        (_, Some(status)) => Line::from(Span::styled(format!(" {status}"), BOLD)),
        _ => {
            let filter =
                if app.filter.is_empty() { String::new() } else { format!("   filter: \"{}\"", app.filter) };
            Line::from(Span::styled(
                format!(
                    " tab/↑↓ move · / filter · c commit · x cancel · y confirm · ? help · q quit{filter}"
                ),
                DIM,
            ))
        }
    }
}

fn pane_block(app: &App, pane: Pane, extra: String) -> Block<'static> {
    let focused = app.focus == pane;
    let title = format!(" {}{extra} ", pane.title());
    let block = Block::bordered().title(Span::styled(title, if focused { BOLD } else { Style::new() }));
    if focused { block.border_style(Style::new().fg(Color::Cyan)) } else { block.border_style(DIM) }
}

fn draw_pane(frame: &mut Frame, app: &App, pane: Pane, area: Rect, now_ms: u64) {
    match pane {
        Pane::Pools => pools(frame, app, area),
        Pane::Prices => prices(frame, app, area),
        Pane::Positions => positions(frame, app, area),
        Pane::Permits => permits(frame, app, area, now_ms),
        Pane::Tools => tools(frame, app, area, now_ms),
        Pane::Alerts => alerts(frame, app, area),
        Pane::Events => events(frame, app, area),
    }
}

/// `price` with about six significant digits.
fn price_text(p: f64) -> String {
    if p == 0.0 {
        return "0".into();
    }
    let digits = (5 - p.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let text = format!("{:.digits$}", p.abs());
    let (whole, fraction) = text.split_at(text.find('.').unwrap_or(text.len()));
    // Thousands grouped as people read them: 2,000.10.
    let mut grouped = String::from(if p < 0.0 { "-" } else { "" });
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    grouped + fraction
}

/// A fee tier (hundredths of a basis point) as a percentage: `0.05 %`.
fn fee_text(fee: u64) -> String {
    format!("{:.2} %", fee as f64 / 10_000.0)
}

fn empty(frame: &mut Frame, block: Block<'static>, area: Rect, text: &str) {
    frame.render_widget(
        Paragraph::new(Span::styled(text.to_owned(), DIM)).wrap(Wrap { trim: true }).block(block),
        area,
    );
}

fn pools(frame: &mut Frame, app: &App, area: Rect) {
    let m = &app.model;
    let block = pane_block(app, Pane::Pools, String::new());
    if m.pools.is_empty() {
        return empty(
            frame,
            block,
            area,
            "no pool yet — stream_pool_state / stream_pool_events fill it: a [[tui.follow]] entry in bardo.toml, or `bardo stream` in another terminal",
        );
    }
    let chosen = app.selection(Pane::Pools).min(m.pools.len() - 1);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let table_rows = (m.pools.len() as u16 + 1).min(inner.height / 2).max(2);
    let [table_area, swaps_area] =
        Layout::vertical([Constraint::Length(table_rows), Constraint::Min(0)]).areas(inner);
    let rows = m.pools.values().enumerate().map(|(i, p)| {
        let (arrow, style) = match (p.price, p.previous_price) {
            (Some(now), Some(before)) if now > before => ("▲", GREEN),
            (Some(now), Some(before)) if now < before => ("▼", RED),
            _ => (" ", Style::new()),
        };
        let row = Row::new([
            Cell::from(p.pair.clone().unwrap_or_else(|| short(&p.address))),
            Cell::from(p.version),
            Cell::from(p.fee.map(fee_text).unwrap_or_else(|| "—".into())),
            Cell::from(Line::from(vec![
                Span::raw(p.price.map(price_text).unwrap_or_else(|| "—".into())),
                Span::styled(arrow, style),
            ])),
            Cell::from(p.tick.map(|t| t.to_string()).unwrap_or_else(|| "—".into())),
            Cell::from(p.liquidity.clone().unwrap_or_else(|| "—".into())),
        ]);
        if i == chosen && app.focus == Pane::Pools { row.style(SELECTED) } else { row }
    });
    let widths = [
        Constraint::Length(13),
        Constraint::Length(3),
        Constraint::Length(7),
        Constraint::Length(16),
        Constraint::Length(8),
        Constraint::Min(6),
    ];
    let header = Row::new(["pool", "ver", "fee", "price", "tick", "liquidity"]).style(BOLD);
    frame.render_widget(Table::new(rows, widths).header(header), table_area);
    let pool = m.pools.values().nth(chosen).expect("chosen < len");
    let name = pool.pair.clone().unwrap_or_else(|| short(&pool.address));
    let mut lines = vec![Line::styled(format!("recent swaps of {name}"), DIM)];
    let room = swaps_area.height.saturating_sub(1) as usize;
    lines.extend(pool.swaps.iter().rev().take(room).map(|s| {
        Line::from(format!(
            "#{:<5} {:<4} amount0 {:>14} amount1 {:>14}{}",
            s.seq,
            s.kind,
            s.amount0,
            s.amount1,
            s.block.map(|b| format!("  block {b}")).unwrap_or_default()
        ))
    }));
    frame.render_widget(Paragraph::new(lines), swaps_area);
}

fn prices(frame: &mut Frame, app: &App, area: Rect) {
    let m = &app.model;
    if m.prices.is_empty() {
        let block = pane_block(app, Pane::Prices, String::new());
        return empty(
            frame,
            block,
            area,
            "no price yet — stream_price_feed fills it: a [[tui.follow]] entry in bardo.toml, or `bardo stream` in another terminal",
        );
    }
    let chosen = app.selection(Pane::Prices).min(m.prices.len() - 1);
    let (pair, series) = m.prices.iter().nth(chosen).expect("chosen < len");
    let last = series.points.back().map(|p| price_text(p.1)).unwrap_or_default();
    let change = series.change_bps.map(|b| format!(" {:+.2}%", b as f64 / 100.0)).unwrap_or_default();
    let others = if m.prices.len() > 1 {
        format!(" ({}/{}, ↑↓)", chosen + 1, m.prices.len())
    } else {
        String::new()
    };
    let block = pane_block(app, Pane::Prices, format!(": {pair} {last}{change}{others}"));
    let points: Vec<(f64, f64)> = series.points.iter().enumerate().map(|(i, p)| (i as f64, p.1)).collect();
    let (lo, hi) = points.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
    let pad = ((hi - lo) * 0.1).max(hi.abs() * 1e-6).max(1e-12);
    let dataset = Dataset::default()
        .marker(Marker::Braille)
        .graph_type(GraphType::Line)
        .style(Style::new().fg(Color::Cyan))
        .data(&points);
    let chart = Chart::new(vec![dataset])
        .block(block)
        .x_axis(Axis::default().bounds([0.0, (points.len().max(2) - 1) as f64]))
        .y_axis(
            Axis::default()
                .bounds([lo - pad, hi + pad])
                .labels([Span::raw(price_text(lo)), Span::raw(price_text(hi))])
                .style(DIM),
        );
    frame.render_widget(chart, area);
}

/// A position's range drawn against the current tick in `width` cells: `[` and `]` at the
/// range's ends, `●` at the current tick, the range filled between.
pub fn range_bar(p: &Position, width: usize) -> String {
    if width < 5 {
        return String::new();
    }
    let lo = p.tick_lower.min(p.tick);
    let hi = p.tick_upper.max(p.tick + 1);
    let span = (hi - lo).max(1) as f64;
    let pad = span * 0.15;
    let (start, end) = (lo as f64 - pad, hi as f64 + pad);
    let at = |t: i64| (((t as f64 - start) / (end - start)) * (width - 1) as f64).round() as usize;
    let (l, u, now) = (at(p.tick_lower), at(p.tick_upper).max(at(p.tick_lower) + 1), at(p.tick));
    (0..width)
        .map(|i| match i {
            _ if i == now => '●',
            _ if i == l => '[',
            _ if i == u => ']',
            _ if i > l && i < u => '━',
            _ => '·',
        })
        .collect()
}

fn positions(frame: &mut Frame, app: &App, area: Rect) {
    let m = &app.model;
    let block = pane_block(app, Pane::Positions, String::new());
    if m.positions.is_empty() {
        return empty(
            frame,
            block,
            area,
            "no position yet — stream_position_alerts fills it: a [[tui.follow]] entry in bardo.toml, or `bardo stream` in another terminal",
        );
    }
    let width = block.inner(area).width as usize;
    let chosen = app.selection(Pane::Positions);
    let lines: Vec<Line> = m
        .positions
        .values()
        .enumerate()
        .flat_map(|(i, p)| {
            let (state, style) = if p.in_range() { ("IN RANGE", GREEN) } else { ("OUT OF RANGE", RED) };
            let fees = p.fees.clone().unwrap_or_else(|| "—".into());
            let on = p.chain_id.map(|c| format!("chain {c} ")).unwrap_or_default();
            let head = Line::from(vec![
                Span::styled(format!("{on}#{} ", p.token_id), if i == chosen { SELECTED } else { BOLD }),
                Span::styled(state, style.add_modifier(Modifier::BOLD)),
                Span::raw(format!(
                    " tick {} [{}, {}) fees {fees} {}",
                    p.tick,
                    p.tick_lower,
                    p.tick_upper,
                    short(&p.pool)
                )),
            ]);
            [head, Line::styled(range_bar(p, width.saturating_sub(2)), style)]
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// `m:ss` until `at_ms`, or `expired`.
pub fn countdown(at_ms: u64, now_ms: u64) -> String {
    if now_ms >= at_ms {
        return "expired".into();
    }
    let s = (at_ms - now_ms).div_ceil(1_000);
    format!("{}:{:02}", s / 60, s % 60)
}

fn permits(frame: &mut Frame, app: &App, area: Rect, now_ms: u64) {
    let m = &app.model;
    let mut block = pane_block(
        app,
        Pane::Permits,
        format!(" ({} open) c commit · x cancel · y confirm", m.permits.len()),
    );
    if let Some(e) = &m.permits_error {
        block = block.title_bottom(Span::styled(format!(" store: {e} "), RED));
    }
    if m.permits.is_empty() {
        return empty(
            frame,
            block,
            area,
            "no open permit — `bardo preview KIND --params …` in another terminal, or an agent over MCP or A2A, issues them",
        );
    }
    let chosen = app.selection(Pane::Permits).min(m.permits.len() - 1);
    let rows = m.permits.iter().enumerate().map(|(i, p)| {
        let left = countdown(p.expires_at_ms, now_ms);
        let urgent = p.expires_at_ms.saturating_sub(now_ms) < 30_000;
        let row = Row::new([
            Cell::from(short(&p.permit_id)),
            Cell::from(match p.held_by {
                // Held for a person: `y` releases it to whoever waits on it.
                Some(_) => Span::styled(format!("⏸ {}", p.kind), RED),
                None => Span::raw(p.kind.clone()),
            }),
            Cell::from(p.risk_tier.clone()),
            Cell::from(Span::styled(left, if urgent { RED } else { GREEN })),
            Cell::from(p.expected.clone()),
        ]);
        if i == chosen && app.focus == Pane::Permits { row.style(SELECTED) } else { row }
    });
    let widths = [
        Constraint::Length(15),
        Constraint::Length(16),
        Constraint::Length(6),
        Constraint::Length(7),
        Constraint::Min(10),
    ];
    let header = Row::new(["permit", "kind", "risk", "expires", "expected outcome"]).style(BOLD);
    frame.render_widget(Table::new(rows, widths).header(header).block(block), area);
}

/// A run's progress: `[██░░] 2/4` over the steps the tool names, and while it runs, how much of
/// its tick budget has gone (the specification's loading state).
fn progress(r: &crate::model::ToolRun, now_ms: u64) -> String {
    let mut out = String::new();
    if r.total_steps > 0 {
        let done = (r.steps.len() as u32).min(r.total_steps);
        let bar: String =
            (0..r.total_steps).map(|i| if i < done || r.ok == Some(true) { '█' } else { '░' }).collect();
        out.push_str(&format!(" [{bar}] {done}/{}", r.total_steps));
    }
    if r.ok.is_none() && r.budget_ms > 0 && r.started_ms > 0 {
        let spent = now_ms.saturating_sub(r.started_ms);
        let over = if spent > r.budget_ms { " OVER" } else { "" };
        out.push_str(&format!(" {spent}/{} ms budget{over}", r.budget_ms));
    }
    out
}

/// `items` newest first, as many as fit, each drawn by `line`; `none` when there are none.
fn newest_first<T>(
    frame: &mut Frame,
    block: Block<'static>,
    area: Rect,
    items: &VecDeque<T>,
    none: &str,
    line: impl Fn(&T) -> Line<'static>,
) {
    if items.is_empty() {
        return empty(frame, block, area, none);
    }
    let room = block.inner(area).height as usize;
    let lines: Vec<Line> = items.iter().rev().take(room).map(line).collect();
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn tools(frame: &mut Frame, app: &App, area: Rect, now_ms: u64) {
    let block = pane_block(app, Pane::Tools, String::new());
    newest_first(frame, block, area, &app.model.runs, "no tool call yet", |r| {
        let (mark, style) = match r.ok {
            None => ("…", Style::new().fg(Color::Yellow)),
            Some(true) => ("✓", GREEN),
            Some(false) => ("✗", RED),
        };
        let cost = match (r.fuel, r.duration_ms) {
            (Some(f), Some(ms)) => format!("  fuel {f}  {ms} ms"),
            _ => String::new(),
        };
        Line::from(vec![
            Span::styled(format!("{mark} "), style),
            Span::styled(r.tool.clone(), BOLD),
            Span::styled(format!(" [{}]", r.sprite), face(r.sprite).1),
            Span::raw(format!("{cost}{} {}", progress(r, now_ms), r.steps.join(" › "))),
        ])
    });
}

fn alerts(frame: &mut Frame, app: &App, area: Rect) {
    let block = pane_block(app, Pane::Alerts, String::new());
    newest_first(
        frame,
        block,
        area,
        &app.model.alerts,
        "no alert — stream_position_alerts raises them: a [[tui.follow]] entry in bardo.toml",
        |a| Line::styled(format!("#{} {}", a.seq, a.text), if a.severe { ALARM } else { GREEN }),
    );
}

/// `HH:MM:SS` (UTC) of a Unix ms time.
fn clock(at_ms: u64) -> String {
    let s = at_ms / 1_000 % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn events(frame: &mut Frame, app: &App, area: Rect) {
    let lines: Vec<&crate::model::Line> = app.filtered_log().collect();
    let filter = if app.filter.is_empty() { String::new() } else { format!(" /{}", app.filter) };
    let block = pane_block(app, Pane::Events, format!(" ({}){filter}", lines.len()));
    let room = block.inner(area).height as usize;
    let up = app.selection(Pane::Events).min(lines.len().saturating_sub(room));
    let shown = &lines[lines.len().saturating_sub(room + up)..lines.len() - up];
    let text: Vec<Line> = shown
        .iter()
        .map(|l| {
            if l.kind == "gap" {
                return Line::styled(format!("  ── gap: {} ──", l.text), Style::new().fg(Color::Yellow));
            }
            Line::from(vec![
                Span::styled(format!("{:>6} {} ", l.seq, clock(l.at_ms)), DIM),
                Span::styled(format!("{:<19} ", l.kind), BOLD),
                Span::raw(l.text.clone()),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(text).block(block), area);
}

/// A box of `w`×`h` centred in `area` (clipped to it).
fn centred(area: Rect, w: u16, h: u16) -> Rect {
    let (w, h) = (w.min(area.width), h.min(area.height));
    Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h }
}

fn draw_help(frame: &mut Frame, area: Rect) {
    let lines: Vec<Line> = KEYS
        .iter()
        .map(|(k, what)| Line::from(vec![Span::styled(format!("{k:>16}  "), BOLD), Span::raw(*what)]))
        .collect();
    let rect = centred(area, 72, KEYS.len() as u16 + 2);
    frame.render_widget(Clear, rect);
    frame
        .render_widget(Paragraph::new(lines).block(Block::bordered().title(" keys (any key closes) ")), rect);
}

fn draw_confirm(frame: &mut Frame, app: &App, id: &str, area: Rect, now_ms: u64) {
    let permit = app.model.permits.iter().find(|p| p.permit_id == id);
    let mut lines = vec![Line::styled(format!("Commit {id}?"), BOLD)];
    if let Some(p) = permit {
        lines.push(Line::raw(format!("{} by {}, risk {}", p.kind, p.tool, p.risk_tier)));
        lines.push(Line::raw(format!("expected: {}", p.expected)));
        lines.push(Line::raw(format!("expires in {}", countdown(p.expires_at_ms, now_ms))));
        if let Some(policy) = &p.held_by {
            lines.push(Line::raw(format!("held for a person by {policy}: y confirms it as you")));
        }
    }
    lines.push(Line::raw("It is signed and sent after a fresh simulation. [y]es / [n]o"));
    let rect = centred(area, 76, lines.len() as u16 + 2);
    frame.render_widget(Clear, rect);
    let p = Paragraph::new(lines).wrap(Wrap { trim: true }).block(Block::bordered().title(" commit "));
    frame.render_widget(p, rect);
}
