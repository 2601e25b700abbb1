//! The sidecar's round trip for a cheap method beside the same math in Rust, in one run.

use bardo_sidecar::{Config, Sidecar};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::PathBuf;

fn round_trips(c: &mut Criterion) {
    let state = tempfile::tempdir().expect("tempdir");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sidecar");
    let sidecar = Sidecar::new(Config::new(dir, state.path()));
    sidecar.hello().expect("the sidecar starts (run `make setup`)");
    let mut group = c.benchmark_group("sidecar");
    group.bench_function("tick_to_sqrt_price_round_trip", |b| {
        b.iter(|| sidecar.tick_to_sqrt_price(black_box(-200_000)).expect("sidecar"))
    });
    group.bench_function("tick_to_price_round_trip", |b| {
        b.iter(|| sidecar.tick_to_price(black_box(-200_000), 6, 18).expect("sidecar"))
    });
    group.bench_function("native_sqrt_price_at_tick", |b| {
        b.iter(|| bardo_sdk::uniswap::math::sqrt_price_at_tick(black_box(-200_000)).expect("tick"))
    });
    group.finish();
}

criterion_group!(benches, round_trips);
criterion_main!(benches);
