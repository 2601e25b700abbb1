//! A fleet's shared state on a real NATS JetStream cluster started for the test.

use bardo_cluster::{Cluster, ClusterConfig, Sealer};
use bardo_devnet::nats::NatsCluster;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::sync::Arc;
use std::time::Duration;

/// The seal of a test fleet whose hosts hold no write path's host key: HMAC-SHA256 under a
/// fixed key (a real MAC, so a document without it is refused as a fleet's would be).
pub struct TestFleetKey;

impl TestFleetKey {
    fn hmac() -> Hmac<Sha256> {
        Hmac::<Sha256>::new_from_slice(b"bardo test fleet").expect("HMAC takes any key length")
    }
}

impl Sealer for TestFleetKey {
    fn mac(&self, message: &[u8]) -> [u8; 32] {
        let mut mac = Self::hmac();
        mac.update(message);
        mac.finalize().into_bytes().into()
    }

    fn verify(&self, message: &[u8], tag: &[u8; 32]) -> bool {
        let mut mac = Self::hmac();
        mac.update(message);
        mac.verify_slice(tag).is_ok()
    }
}

/// A connection to fleet `name` on `nats` with `replicas` copies of each stream, sealed with
/// [`TestFleetKey`], once the new cluster has elected its streams' leaders (at most 20 s).
pub fn connect(nats: &NatsCluster, name: &str, replicas: usize) -> Cluster {
    connect_sealed(nats, name, replicas, Arc::new(TestFleetKey))
}

/// [`connect`] with the fleet's own key (the hosts' `[safety] host_key`).
pub fn connect_sealed(nats: &NatsCluster, name: &str, replicas: usize, key: Arc<dyn Sealer>) -> Cluster {
    connect_with(nats, name, replicas, key, None)
}

/// [`connect`], anchoring what it sees of the fleet in the file `anchor`, as `bardo` does.
pub fn connect_anchored(
    nats: &NatsCluster,
    name: &str,
    replicas: usize,
    anchor: &std::path::Path,
) -> Cluster {
    connect_with(nats, name, replicas, Arc::new(TestFleetKey), Some(anchor))
}

fn connect_with(
    nats: &NatsCluster,
    name: &str,
    replicas: usize,
    key: Arc<dyn Sealer>,
    anchor: Option<&std::path::Path>,
) -> Cluster {
    let config = ClusterConfig {
        servers: nats.urls(),
        name: name.to_owned(),
        creds: None,
        token: None,
        replicas,
        timeout: Duration::from_secs(5),
        anchor: anchor.map(std::path::Path::to_owned),
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        match Cluster::connect(&config, key.clone()) {
            Ok(c) => return c,
            Err(e) if std::time::Instant::now() > deadline => panic!("{e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// Someone with publish rights on the fleet's subjects and no key: what they can do to a
/// fleet's stored state (a fault no host produces, injected through the real server).
pub struct Intruder {
    js: async_nats::jetstream::Context,
    /// The client's connection runs here.
    rt: tokio::runtime::Runtime,
}

impl Intruder {
    /// Connected to `nats`.
    pub fn connect(nats: &NatsCluster) -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let addrs: Vec<async_nats::ServerAddr> =
            nats.urls().iter().map(|u| u.parse().expect("a server url")).collect();
        let client = rt.block_on(async_nats::connect(addrs)).expect("a raw client");
        let js = rt.block_on(async move { async_nats::jetstream::new(client) });
        Self { js, rt }
    }

    /// Publish `payload` on `subject` and wait for the stream's ack.
    pub fn publish(&self, subject: &str, payload: &[u8]) {
        let js = self.js.clone();
        let (subject, payload) = (subject.to_owned(), payload.to_vec());
        self.rt.block_on(async move {
            js.publish(subject, payload.into()).await.expect("publish").await.expect("stored")
        });
    }

    /// The last message stored on `subject` in `stream`, as it is.
    pub fn last(&self, stream: &str, subject: &str) -> Vec<u8> {
        let js = self.js.clone();
        let (stream, subject) = (stream.to_owned(), subject.to_owned());
        self.rt.block_on(async move {
            let stream = js.get_stream(stream).await.expect("stream");
            stream.get_last_raw_message_by_subject(&subject).await.expect("a message").payload.to_vec()
        })
    }

    /// Message `seq` of `stream`, as it is.
    pub fn message(&self, stream: &str, seq: u64) -> Vec<u8> {
        let js = self.js.clone();
        let stream = stream.to_owned();
        self.rt.block_on(async move {
            let stream = js.get_stream(stream).await.expect("stream");
            stream.get_raw_message(seq).await.expect("a message").payload.to_vec()
        })
    }

    /// Remove every message on `subject` from `stream` (JetStream admin rights).
    pub fn purge(&self, stream: &str, subject: &str) {
        let js = self.js.clone();
        let (stream, subject) = (stream.to_owned(), subject.to_owned());
        self.rt.block_on(async move {
            let stream = js.get_stream(stream).await.expect("stream");
            stream.purge().filter(subject).await.expect("purged")
        });
    }

    /// Delete `stream` (JetStream admin rights, which a fleet's operator may not be alone in holding).
    pub fn delete_stream(&self, stream: &str) {
        let js = self.js.clone();
        let stream = stream.to_owned();
        self.rt.block_on(async move { js.delete_stream(stream).await.expect("deleted") });
    }

    /// Delete `stream` and make it again, empty, as it was configured.
    pub fn recreate_stream(&self, stream: &str) {
        let js = self.js.clone();
        let stream = stream.to_owned();
        self.rt.block_on(async move {
            let config = js.get_stream(&stream).await.expect("stream").cached_info().config.clone();
            js.delete_stream(&stream).await.expect("deleted");
            js.create_stream(config).await.expect("made again");
        });
    }

    /// Delete `stream` and make `squatter` on its subjects: the fleet cannot make it again.
    pub fn squat(&self, stream: &str, squatter: &str) {
        let js = self.js.clone();
        let (stream, squatter) = (stream.to_owned(), squatter.to_owned());
        self.rt.block_on(async move {
            let config = js.get_stream(&stream).await.expect("stream").cached_info().config.clone();
            js.delete_stream(&stream).await.expect("deleted");
            let taken = async_nats::jetstream::stream::Config { name: squatter, ..config };
            js.create_stream(taken).await.expect("made on its subjects");
        });
    }

    /// The last sequence `stream` holds.
    pub fn last_seq(&self, stream: &str) -> u64 {
        let js = self.js.clone();
        let stream = stream.to_owned();
        self.rt.block_on(async move {
            js.get_stream(stream).await.expect("stream").info().await.expect("info").state.last_sequence
        })
    }

    /// Seal `stream`: it takes no more messages (JetStream admin rights). Tried again for 30 s
    /// while JetStream is electing (after a node's stall).
    pub fn seal_stream(&self, stream: &str) {
        let js = self.js.clone();
        let stream = stream.to_owned();
        self.rt.block_on(async move {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            loop {
                let sealed = async {
                    let mut config = js.get_stream(&stream).await?.cached_info().config.clone();
                    config.sealed = true;
                    js.update_stream(config).await.map(drop).map_err(Into::into)
                };
                match sealed.await {
                    Ok(()) => return,
                    Err::<(), Box<dyn std::error::Error + Send + Sync>>(e)
                        if std::time::Instant::now() > deadline =>
                    {
                        panic!("sealing {stream}: {e}")
                    }
                    Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
                }
            }
        });
    }
}
