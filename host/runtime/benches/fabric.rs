//! Event Fabric: emit with no subscriber (target <= 20 ns), and emit + delivery throughput with
//! 1 and 8 subscribers (target >= 5 M events/s with one), in one run.

use bardo_core::fabric::{Fabric, GolemEvent};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn event() -> GolemEvent {
    GolemEvent::PermitConsumed { permit_id: String::new() }
}

fn fabric(c: &mut Criterion) {
    let mut g = c.benchmark_group("fabric");
    let idle = Fabric::new();
    g.bench_function("emit_zero_subscribers", |b| b.iter(|| black_box(idle.emit(event()))));
    const BATCH: u64 = 1_000;
    g.throughput(Throughput::Elements(BATCH));
    for subscribers in [1usize, 8] {
        let f = Fabric::new();
        let mut subs: Vec<_> = (0..subscribers).map(|_| f.subscribe(None)).collect();
        g.bench_function(format!("emit_and_deliver_{subscribers}_subscribers"), |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    f.emit(event());
                }
                for s in &mut subs {
                    let mut n = 0;
                    while let Some(e) = s.try_recv() {
                        black_box(e.ok());
                        n += 1;
                    }
                    assert_eq!(n, BATCH);
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, fabric);
criterion_main!(benches);
