//! A fleet's shared state on a real NATS JetStream cluster started for the test.

use bardo_cluster::{Cluster, ClusterConfig};
use bardo_devnet::nats::NatsCluster;
use std::time::Duration;

/// A connection to fleet `name` on `nats` with `replicas` copies of each stream, once the new
/// cluster has elected its streams' leaders (at most 20 s).
pub fn connect(nats: &NatsCluster, name: &str, replicas: usize) -> Cluster {
    let config = ClusterConfig {
        servers: nats.urls(),
        name: name.to_owned(),
        creds: None,
        token: None,
        replicas,
        timeout: Duration::from_secs(5),
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        match Cluster::connect(&config) {
            Ok(c) => return c,
            Err(e) if std::time::Instant::now() > deadline => panic!("{e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}
