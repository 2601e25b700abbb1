//! Event Fabric: emit with no subscriber (target <= 20 ns), and emit + delivery throughput with
//! 1 and 8 subscribers (target >= 5 M events/s with one), in one run; then the fleet's fabric
//! (`[cluster]`): emitted on a host, forwarded into NATS JetStream (1 node; 3 nodes, 3 replicas)
//! and received by one subscriber of the fleet's stream.

use bardo_core::fabric::{Fabric, GolemEvent};
use bardo_devnet::nats::NatsCluster;
use bardo_runtime::fleet_events::{FleetJournal, forward};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

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

fn fleet(c: &mut Criterion) {
    let dirs = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
    let one = NatsCluster::start(dirs.0.path(), 1).expect("nats-server (run `make setup`)");
    let three = NatsCluster::start(dirs.1.path(), 3).expect("three nats-servers");
    let mut g = c.benchmark_group("fleet_fabric");
    const BATCH: u64 = 1_000;
    g.throughput(Throughput::Elements(BATCH));
    g.sample_size(20);
    for (label, nats, replicas) in [("1_node", &one, 1), ("3_nodes_r3", &three, 3)] {
        let cluster = bardo_test_support::nats::connect(nats, &format!("fabric{replicas}"), replicas);
        let fabric = Fabric::new();
        let _forwarder = forward(&fabric, FleetJournal::new(cluster.clone(), "bench"));
        // Where the time goes: publishing alone (a batch of envelopes, one round trip), then the
        // whole path with a subscriber.
        // (Fresh envelopes each time: a repeated message id would not be stored again.)
        let journal = FleetJournal::new(cluster.clone(), "publisher");
        let source = Fabric::new();
        let mut emitted = source.subscribe(None);
        g.bench_function(format!("publish_only_{label}"), |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    source.emit(event());
                }
                let batch: Vec<_> = std::iter::from_fn(|| emitted.try_recv().and_then(Result::ok)).collect();
                black_box(journal.append(&batch).expect("published"))
            })
        });
        let mut feed = cluster.subscribe_events(None).expect("subscribe");
        g.bench_function(format!("emit_forward_deliver_{label}"), |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    fabric.emit(event());
                }
                for _ in 0..BATCH {
                    match feed.next(Duration::from_secs(10)).expect("feed") {
                        Some(Ok(m)) => drop(black_box(m)),
                        other => panic!("{other:?}"),
                    }
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, fabric, fleet);
criterion_main!(benches);
