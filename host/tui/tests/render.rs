//! Each pane drawn by ratatui's test backend from a fixed event sequence, compared with the
//! text kept in `tests/snapshots/` (`BARDO_UPDATE_SNAPSHOTS=1` rewrites them; review the diff).

use bardo_tui::app::{App, Mode, Pane};
use bardo_tui::model::PermitRow;
use bardo_tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use serde_json::{Value, json};

const NOW: u64 = 1_790_000_100_000;
const POOL: &str = "0xC31E54c7a869B9FcBEcc14363CF510d1c41fa443";

fn envelope(seq: u64, event: Value) -> Value {
    json!({"seq": seq, "at_ms": NOW - 60_000 + seq * 1_000, "event": event})
}

fn stream(kind: &str, tool: &str, sprite: &str, data: Value) -> Value {
    json!({"type": kind, "subscription_id": "sub-1", "tool": tool, "sprite_trigger": sprite, "pane": "", "data": data})
}

/// A session: a pool snapshot, three swaps moving the price, a price feed, a position pushed out
/// of its range, a health-factor alert, a previewed swap (tool steps, hooks, permit), a gap.
fn session() -> App {
    let mut app = App::new("live: 4 subscriptions, journal .bardo/events.jsonl");
    let mut seq = 0;
    let mut push = |app: &mut App, e: Value| {
        seq += 1;
        app.model.apply(envelope(seq, e));
    };
    let snapshot = json!({"pool": POOL, "block_number": 40, "sqrt_price_x96": "3543191142285914327220224",
        "tick": -200312, "liquidity": "1517882343751509868544", "price_token1_per_token0": "2000.000000",
        "token0": {"symbol": "WETH", "decimals": 18}, "token1": {"symbol": "USDC", "decimals": 6},
        "fee": 500, "version": "v3"});
    push(&mut app, stream("PoolStateSnapshot", "stream_pool_state", "idle", snapshot));
    push(
        &mut app,
        stream(
            "PositionAlert",
            "stream_position_alerts",
            "alert",
            json!({"alert": "out_of_range", "chain_id": 8453,
        "token_id": "12", "pool": POOL, "tick": -200312, "tick_lower": -200200, "tick_upper": -200000}),
        ),
    );
    for (i, (sqrt, tick, price)) in [
        ("3544962295179475450593280", -200302, "2002.0"),
        ("3547617366550442091216896", -200287, "2005.0"),
        ("3556541537361499726544896", -200236, "2015.1"),
    ]
    .into_iter()
    .enumerate()
    {
        push(
            &mut app,
            stream(
                "PoolEventReceived",
                "stream_pool_events",
                "thinking",
                json!({"type": "swap",
            "pool": POOL, "block_number": 41 + i, "amount0": format!("-{}", i + 1), "amount1": format!("{}", 2000 * (i + 1)),
            "sqrt_price_x96": sqrt, "tick": tick, "liquidity": "1517882343751509868544"}),
            ),
        );
        push(
            &mut app,
            stream(
                "PriceUpdate",
                "stream_price_feed",
                "idle",
                json!({"pool": POOL, "fee": 500,
            "base": "WETH", "quote": "USDC", "price": price, "change_bps": 10 + 15 * i as i64, "block_number": 41 + i}),
            ),
        );
    }
    push(
        &mut app,
        stream(
            "HealthFactorAlert",
            "stream_health_factor",
            "alert",
            json!({"alert": "below",
        "user": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "health_factor": "1.42", "threshold": "1.5"}),
        ),
    );
    push(
        &mut app,
        json!({"type": "ToolExecutionStart", "tool": "uniswap_swap", "total_steps": 3, "tick_budget_ms": 1000}),
    );
    for step in ["quote", "check balance and allowance", "build calls"] {
        push(&mut app, json!({"type": "ToolExecutionUpdate", "tool": "uniswap_swap", "step": step}));
    }
    push(
        &mut app,
        json!({"type": "ToolExecutionEnd", "tool": "uniswap_swap", "ok": true, "fuel": 1843201, "duration_ms": 7}),
    );
    push(
        &mut app,
        json!({"type": "HookDecision", "tool": "uniswap_swap", "hook": "policy_cage", "allowed": true}),
    );
    push(
        &mut app,
        json!({"type": "PermitCreated", "permit_id": "permit-5f0c2d9e8a7b6c5d4e3f2a1b0c9d8e7f", "tool": "uniswap_swap"}),
    );
    push(
        &mut app,
        json!({"type": "ToolExecutionStart", "tool": "aave_supply", "total_steps": 4, "tick_budget_ms": 5000}),
    );
    push(&mut app, json!({"type": "ToolExecutionUpdate", "tool": "aave_supply", "step": "reserve"}));
    // The journal lost two events here.
    app.model.apply(envelope(seq + 3, json!({"type": "PermitConsumed", "permit_id": "permit-0000"})));
    app.model.permits = vec![
        PermitRow {
            permit_id: "permit-5f0c2d9e8a7b6c5d4e3f2a1b0c9d8e7f".into(),
            kind: "swap".into(),
            tool: "uniswap_swap".into(),
            expected: "{\"amount_in\":\"1000 USDC\",\"amount_out\":\"0.496 WETH\"}".into(),
            risk_tier: "medium".into(),
            expires_at_ms: NOW + 272_000,
            held_by: None,
        },
        PermitRow {
            permit_id: "permit-aa00bb11cc22dd33ee44ff5566778899".into(),
            kind: "add-liquidity".into(),
            tool: "uniswap_add_liquidity".into(),
            expected: "{\"liquidity\":\"1200\"}".into(),
            risk_tier: "high".into(),
            expires_at_ms: NOW + 12_000,
            held_by: Some("confirm = \"always\"".into()),
        },
    ];
    app
}

fn render(app: &App, w: u16, h: u16) -> (String, ratatui::buffer::Buffer) {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    terminal.draw(|f| ui::draw(f, app, NOW)).expect("draw");
    let buffer = terminal.backend().buffer().clone();
    let mut text = String::new();
    for y in 0..h {
        let line: String = (0..w).map(|x| buffer[(x, y)].symbol().to_owned()).collect();
        text.push_str(line.trim_end());
        text.push('\n');
    }
    (text, buffer)
}

fn check(name: &str, text: &str) {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(format!("{name}.txt"));
    if std::env::var_os("BARDO_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, text).expect("write snapshot");
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("no snapshot {}: run with BARDO_UPDATE_SNAPSHOTS=1", path.display()));
    if want != text {
        panic!("{name} differs from {}:\n--- want\n{want}\n--- got\n{text}", path.display());
    }
}

#[test]
fn the_main_screen_at_120_by_40_shows_every_pane() {
    let app = session();
    let (text, buffer) = render(&app, 120, 40);
    check("main_120x40", &text);
    for want in [
        "Pool Explorer",
        "WETH/USDC",
        "WETH/USDC     v3  0.05 %  2,015.10▲",
        "Position Monitor",
        "OUT OF RANGE",
        "Permits (2 open)",
        "⏸ add-liquidity",
        "4:32",
        "0:12",
        "Tool Activity",
        "fuel 1843201",
        "Alerts",
        "Events",
        "gap",
        "lagging",
    ] {
        if want == "lagging" {
            assert!(!text.contains(want), "no lag in this session");
            continue;
        }
        assert!(text.contains(want), "{want} missing:\n{text}");
    }
    // The out-of-range alert is highlighted: white on red.
    let y = (0..40).find(|y| {
        let row: String = (0..120).map(|x| buffer[(x, *y)].symbol().to_owned()).collect();
        row.contains("out_of_range") && row.contains("#2 position")
    });
    let y = y.expect("alert row");
    let x =
        (0..120).find(|x| buffer[(*x, y)].symbol() == "#" && buffer[(*x + 1, y)].symbol() == "2").expect("x");
    assert_eq!(buffer[(x, y)].bg, Color::Red);
}

#[test]
fn each_pane_alone_at_80_by_24() {
    let mut app = session();
    for pane in Pane::ALL {
        app.focus = pane;
        let (text, _) = render(&app, 80, 24);
        assert!(text.contains(pane.title()), "{text}");
        let name = format!("pane_{}_80x24", pane.title().to_lowercase().replace(' ', "_"));
        check(&name, &text);
    }
}

#[test]
fn the_filter_help_and_commit_prompt() {
    let mut app = session();
    app.filter = "swap".into();
    app.focus = Pane::Events;
    let (text, _) = render(&app, 120, 40);
    assert!(text.contains("/swap") && !text.contains("HealthFactorAlert"), "{text}");
    app.mode = Mode::Help;
    let (text, _) = render(&app, 80, 24);
    check("help_80x24", &text);
    app.mode = Mode::Confirm("permit-5f0c2d9e8a7b6c5d4e3f2a1b0c9d8e7f".into());
    let (text, _) = render(&app, 120, 40);
    assert!(
        text.contains("Commit permit-5f0c2d9e8a7b6c5d4e3f2a1b0c9d8e7f?") && text.contains("[y]es / [n]o"),
        "{text}"
    );
}

#[test]
fn a_dashboard_that_fell_behind_says_so_and_what_the_journal_gave_back() {
    let mut app = session();
    bardo_tui::apply(
        &mut app,
        vec![
            bardo_tui::feed::Item::Lagged { missed: 500, recovered: 498 },
            bardo_tui::feed::Item::Gap { from: 30, to: 31 },
        ],
    );
    let (text, _) = render(&app, 120, 40);
    let header = text.lines().next().expect("header");
    assert!(header.contains("lagging: 500 missed, 498 from the journal"), "{header}");
    assert!(header.contains("gaps: 4 missing"), "two before, two now: {header}");
    assert!(text.contains("events 30..=31 were missed"), "{text}");
}

#[test]
fn tiny_and_odd_sizes_draw_without_panicking() {
    let app = session();
    for (w, h) in [(1, 1), (10, 3), (20, 5), (40, 12), (79, 23), (99, 29), (100, 30), (300, 90)] {
        render(&app, w, h);
    }
}

#[test]
fn an_empty_dashboard_says_what_fills_each_pane() {
    let app = App::new("following .bardo/events.jsonl");
    let (text, _) = render(&app, 160, 48);
    // Words wrap inside a pane: join the screen into one line of words.
    let words = text
        .split(|c: char| c.is_whitespace() || c == '│')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    for hint in [
        "stream_pool_state / stream_pool_events fill it",
        "stream_price_feed fills it",
        "stream_position_alerts fills it",
        "[[tui.follow]] entry in bardo.toml",
        "`bardo preview KIND --params …` in another terminal",
    ] {
        assert!(words.contains(hint), "{hint}:\n{text}");
    }
}
