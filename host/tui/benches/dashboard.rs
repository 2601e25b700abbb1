//! What the dashboard can absorb: journal lines parsed alone (the floor: reading the journal),
//! parsed and folded into the model, and one full 120×40 frame drawn over a busy model. The
//! fabric never waits for the dashboard; these say how fast it catches up.

use bardo_tui::app::App;
use bardo_tui::ui;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};
use std::hint::black_box;

const POOL: &str = "0xC31E54c7a869B9FcBEcc14363CF510d1c41fa443";

/// A journal's worth of lines: swaps, price updates and snapshots of one pool, in turn.
fn lines(n: u64) -> Vec<String> {
    (1..=n)
        .map(|seq| {
            let data = match seq % 3 {
                0 => json!({"type": "PoolEventReceived", "data": {"type": "swap", "pool": POOL, "amount0": "-1.5",
                    "amount1": "3000", "sqrt_price_x96": "3543191142285914327220224", "tick": -200312,
                    "liquidity": "1517882343751509868544", "block_number": seq}}),
                1 => json!({"type": "PriceUpdate", "data": {"pool": POOL, "fee": 500, "base": "WETH", "quote": "USDC",
                    "price": format!("{}.5", 2000 + seq % 50), "change_bps": 3, "block_number": seq}}),
                _ => json!({"type": "PoolStateSnapshot", "data": {"pool": POOL, "tick": -200312,
                    "liquidity": "1517882343751509868544", "price_token1_per_token0": "2000.1",
                    "token0": {"symbol": "WETH", "decimals": 18}, "token1": {"symbol": "USDC", "decimals": 6},
                    "fee": 3000, "version": "v3"}}),
            };
            let mut event = data;
            event["subscription_id"] = json!("sub-1");
            event["sprite_trigger"] = json!("thinking");
            json!({"seq": seq, "at_ms": 1_790_000_000_000u64 + seq, "event": event}).to_string()
        })
        .collect()
}

fn dashboard(c: &mut Criterion) {
    const BATCH: u64 = 1_000;
    let batch = lines(BATCH);
    let mut g = c.benchmark_group("tui");
    g.throughput(Throughput::Elements(BATCH));
    g.bench_function("parse_journal_lines", |b| {
        b.iter(|| {
            for l in &batch {
                black_box(serde_json::from_str::<Value>(l).ok());
            }
        })
    });
    let mut app = App::new("bench");
    let mut next = 0u64;
    g.bench_function("parse_and_apply", |b| {
        b.iter(|| {
            for l in &batch {
                let mut v: Value = serde_json::from_str(l).unwrap_or_default();
                // Fresh sequence numbers: the model ignores an envelope it has seen.
                next += 1;
                v["seq"] = json!(next);
                app.model.apply(v);
            }
        })
    });
    g.finish();
    let mut g = c.benchmark_group("tui");
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    g.bench_function("draw_120x40", |b| {
        b.iter(|| {
            terminal.draw(|f| ui::draw(f, &app, 1_790_000_100_000)).expect("draw");
        })
    });
    g.finish();
}

criterion_group!(benches, dashboard);
criterion_main!(benches);
