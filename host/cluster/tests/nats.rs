//! The primitives against a real nats-server: compare-and-set documents, a chain
//! appended at an expected sequence, and the fleet's event stream.

use bardo_cluster::{Cluster, ClusterConfig, ClusterError, Conflict, FleetMessage, StreamGap};
use bardo_devnet::nats::NatsCluster;
use std::time::Duration;

fn connect(servers: Vec<String>) -> Result<Cluster, ClusterError> {
    connect_with(servers, 1)
}

fn connect_with(servers: Vec<String>, replicas: usize) -> Result<Cluster, ClusterError> {
    Cluster::connect(
        &ClusterConfig {
            servers,
            name: "unit".into(),
            creds: None,
            token: None,
            replicas,
            timeout: Duration::from_secs(3),
            anchor: None,
        },
        std::sync::Arc::new(bardo_test_support::nats::TestFleetKey),
    )
}

/// Three hosts on three nodes adding to one counter and to their own documents at once, on a
/// stream with three replicas: no update lost (nats-server 2.9's per-subject check alone loses
/// some; see the crate's note).
#[test]
fn no_update_is_lost_on_a_replicated_stream_under_contention() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nats = NatsCluster::start(dir.path(), 3).expect("three nodes");
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let first = loop {
        match connect_with(vec![nats.url(0)], 3) {
            Ok(c) => break c,
            Err(e) if std::time::Instant::now() > deadline => panic!("{e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    };
    let hosts = [
        first,
        connect_with(vec![nats.url(1)], 3).expect("1"),
        connect_with(vec![nats.url(2)], 3).expect("2"),
    ];
    std::thread::scope(|s| {
        for (i, c) in hosts.iter().enumerate() {
            s.spawn(move || {
                for _ in 0..30 {
                    c.update_json("counter", |n: &mut Option<u64>| *n = Some(n.unwrap_or(0) + 1))
                        .expect("update");
                    c.update_json(&format!("own.h{i}"), |n: &mut Option<u64>| *n = Some(n.unwrap_or(0) + 1))
                        .expect("update");
                }
            });
        }
    });
    assert_eq!(hosts[0].read_json::<u64>("counter").expect("read"), Some(90));
    let mut own = hosts[1].keys("own").expect("keys");
    own.sort();
    assert_eq!(own, ["own.h0", "own.h1", "own.h2"]);
    for k in own {
        assert_eq!(hosts[2].read_json::<u64>(&k).expect("read"), Some(30), "{k}");
    }
}

#[test]
fn a_document_changes_only_at_the_sequence_read_and_a_chain_only_at_its_tail() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nats = NatsCluster::start(dir.path(), 1).expect("nats-server");
    let (a, b) = (connect(nats.urls()).expect("a"), connect(nats.urls()).expect("b"));
    // The state holds three documents from the start: the fleet's halt and phase (sealed as
    // none) and the marker that the fleet was made.
    assert_eq!(a.read("doc").expect("read"), (3, None));
    let first = a.write("doc", 3, Some(b"1".to_vec())).expect("write").expect("created");
    assert_eq!(b.write("doc", 3, Some(b"2".to_vec())).expect("write"), Err(Conflict), "exists already");
    assert_eq!(b.read("doc").expect("read"), (first, Some(b"1".to_vec())));
    let second = b.write("doc", first, Some(b"2".to_vec())).expect("write").expect("at the sequence read");
    assert_eq!(a.write("doc", first, Some(b"3".to_vec())).expect("write"), Err(Conflict), "stale");
    assert_eq!(a.write("doc", second, None).expect("delete").map(|_| ()), Ok(()));
    assert_eq!(a.read("doc").expect("read").1, None);

    // Two hosts adding to one counter 50 times each: no update lost.
    std::thread::scope(|s| {
        for c in [&a, &b] {
            s.spawn(move || {
                for _ in 0..50 {
                    c.update_json("counter", |n: &mut Option<u64>| *n = Some(n.unwrap_or(0) + 1))
                        .expect("update");
                }
            });
        }
    });
    assert_eq!(a.read_json::<u64>("counter").expect("read"), Some(100));

    assert_eq!(a.chain_last().expect("tail"), None);
    let one = a.chain_append(0, b"r1".to_vec()).expect("append").expect("at the empty tail");
    assert_eq!(b.chain_append(0, b"r1'".to_vec()).expect("append"), Err(Conflict));
    b.chain_append(one, b"r2".to_vec()).expect("append").expect("at the tail");
    assert_eq!(a.chain_last().expect("tail").map(|(_, e)| e), Some(b"r2".to_vec()));
    assert_eq!(a.chain_entry(one).expect("entry"), Some(b"r1".to_vec()));

    // The server gone: a typed, retryable error within the deadline.
    drop(nats);
    let e = a.read("doc").expect_err("no server");
    assert!(e.retryable(), "{e}");
    assert!(e.to_string().contains("never falls back"), "{e}");
}

/// Two hosts publish batches at once; subscribers read the fleet's sequence from the start and
/// from the middle: every event once, in each host's order, sequences contiguous; a batch
/// retried with the same message ids is stored once.
#[test]
fn fleet_events_resume_from_a_sequence_with_no_gap_or_duplicate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nats = NatsCluster::start(dir.path(), 1).expect("nats-server");
    let (a, b) = (connect(nats.urls()).expect("a"), connect(nats.urls()).expect("b"));
    assert_eq!(a.events_bounds().expect("bounds"), (1, 0), "empty");
    let mut live = a.subscribe_events(None).expect("live");
    let batch = |host: &str, from: u64, n: u64| -> Vec<(String, Vec<u8>)> {
        (from..from + n).map(|i| (format!("{host}-{i}"), format!("{host}:{i}").into_bytes())).collect()
    };
    std::thread::scope(|s| {
        for (c, host) in [(&a, "ha"), (&b, "hb")] {
            s.spawn(move || {
                for k in 0..10 {
                    let seqs = c.publish_events(host, batch(host, k * 50, 50)).expect("published");
                    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "a batch is stored in order");
                }
            });
        }
    });
    // The last batch again (an ack lost, say): stored once, answered with the same sequences.
    let again = a.publish_events("ha", batch("ha", 450, 50)).expect("republished");
    assert_eq!(a.events_bounds().expect("bounds"), (1, 1000));
    assert!(again.iter().all(|s| *s <= 1000), "{again:?}");

    let read_all = |from: u64| -> Vec<FleetMessage> {
        let mut feed = b.subscribe_events(Some(from)).expect("subscribed");
        let mut got = Vec::new();
        while got.len() < (1001 - from) as usize {
            match feed.next(Duration::from_secs(5)).expect("feed") {
                Some(Ok(m)) => got.push(m),
                other => panic!("after {} events: {other:?}", got.len()),
            }
        }
        assert_eq!(feed.next(Duration::from_millis(200)).expect("feed"), None, "nothing more");
        got
    };
    let all = read_all(1);
    assert_eq!(all.iter().map(|m| m.seq).collect::<Vec<_>>(), (1..=1000).collect::<Vec<_>>());
    for host in ["ha", "hb"] {
        let mine: Vec<String> = all
            .iter()
            .filter(|m| m.host == host)
            .map(|m| String::from_utf8(m.payload.clone()).expect("utf8"))
            .collect();
        assert_eq!(
            mine,
            (0..500).map(|i| format!("{host}:{i}")).collect::<Vec<_>>(),
            "{host}, in order, once"
        );
    }
    let tail = read_all(601);
    assert_eq!(tail, all[600..], "resumed from 601: the same events");
    // The live subscriber saw them all too.
    let mut seen = 0;
    while let Some(Ok(m)) = live.next(Duration::from_secs(5)).expect("live") {
        seen += 1;
        assert_eq!(m.seq, seen);
        if seen == 1000 {
            break;
        }
    }
    assert_eq!(seen, 1000);
    assert!(matches!(a.publish_events("no.dots", vec![]), Err(ClusterError::Config(_))));
}

/// Events the stream no longer holds (purged here, as its limits would drop them) come out as
/// a gap of exactly their range, then the events it holds.
#[test]
fn fleet_events_the_stream_no_longer_holds_are_reported_as_a_gap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nats = NatsCluster::start(dir.path(), 1).expect("nats-server");
    let c = connect(nats.urls()).expect("connect");
    let batch: Vec<(String, Vec<u8>)> = (1..=20).map(|i| (format!("e{i}"), vec![i as u8])).collect();
    c.publish_events("h", batch).expect("published");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let client = async_nats::connect(nats.url(0)).await.expect("a raw client");
        let stream =
            async_nats::jetstream::new(client).get_stream("BARDO_unit_EVENTS").await.expect("stream");
        stream.purge().sequence(11).await.expect("purged up to 11");
    });
    assert_eq!(c.events_bounds().expect("bounds"), (11, 20));
    let mut feed = c.subscribe_events(Some(5)).expect("subscribe");
    let next = |feed: &mut bardo_cluster::EventFeed| feed.next(Duration::from_secs(5)).expect("feed");
    assert_eq!(next(&mut feed), Some(Err(StreamGap { from: 5, to: 10 })));
    let rest: Vec<u64> = (11..=20).map(|_| next(&mut feed).expect("an event").expect("no gap").seq).collect();
    assert_eq!(rest, (11..=20).collect::<Vec<_>>());
    let quiet = |feed: &mut bardo_cluster::EventFeed| feed.next(Duration::from_millis(300)).expect("feed");
    assert_eq!(quiet(&mut feed), None, "nothing more");
    // Resumed after the last: nothing yet, and no gap.
    let mut fresh = c.subscribe_events(Some(21)).expect("subscribe");
    assert_eq!(quiet(&mut fresh), None);
}

/// Twelve hosts starting a new fleet at once on three nodes (replicas 3): each connects, the
/// streams made once.
#[test]
fn twelve_hosts_starting_a_new_fleet_at_once_all_connect() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nats = NatsCluster::start(dir.path(), 3).expect("three nodes");
    let results: Vec<Result<Cluster, ClusterError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..12)
            .map(|i| {
                let servers = vec![nats.url(i % 3)];
                s.spawn(move || connect_with(servers, 3))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    for r in &results {
        assert!(r.is_ok(), "{:?}", r.as_ref().err());
    }
    let first = results.into_iter().next().expect("twelve").expect("connected");
    assert_eq!(first.chain_len().expect("the audit stream"), 0, "made once, empty");
}
