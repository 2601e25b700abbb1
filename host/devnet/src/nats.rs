//! Local NATS JetStream clusters for tests and benchmarks: Debian's `nats-server` (installed by
//! `make setup`), each node on free loopback ports with its storage under a directory the
//! caller owns. Nodes can be killed and restarted to inject the faults a cluster must survive.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One node: its client and route ports and its process while it runs.
struct Node {
    name: String,
    port: u16,
    route: u16,
    store: PathBuf,
    child: Option<Child>,
}

/// A JetStream cluster of `nats-server` processes on loopback, killed on drop.
pub struct NatsCluster {
    nodes: Vec<Node>,
}

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl NatsCluster {
    /// Start `n` nodes (1: a single server, no routes) storing under `dir`; waits until each
    /// accepts clients, then until JetStream has a meta leader (at most 20 s).
    pub fn start(dir: &Path, n: usize) -> std::io::Result<Self> {
        let mut nodes = Vec::new();
        for i in 0..n {
            nodes.push(Node {
                name: format!("n{i}"),
                port: free_port()?,
                route: free_port()?,
                store: dir.join(format!("n{i}")),
                child: None,
            });
        }
        let mut cluster = Self { nodes };
        for i in 0..n {
            cluster.spawn(i)?;
        }
        for i in 0..n {
            cluster.wait_up(i)?;
        }
        Ok(cluster)
    }

    fn spawn(&mut self, i: usize) -> std::io::Result<()> {
        let routes: Vec<String> =
            self.nodes.iter().map(|n| format!("nats://127.0.0.1:{}", n.route)).collect();
        let node = &self.nodes[i];
        let mut cmd = Command::new("nats-server");
        cmd.args(["-js", "-a", "127.0.0.1", "-p", &node.port.to_string(), "--server_name", &node.name])
            .arg("-sd")
            .arg(&node.store);
        if self.nodes.len() > 1 {
            // Clients keep to the URLs they were given, so a host can be cut from the cluster by
            // killing the one node it knows.
            cmd.args(["--cluster_name", "bardo-test", "--no_advertise=true"])
                .args(["--cluster", &format!("nats://127.0.0.1:{}", node.route)])
                .args(["--routes", &routes.join(",")]);
        }
        let child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot start nats-server ({e}); `make setup` installs it"))
        })?;
        self.nodes[i].child = Some(child);
        Ok(())
    }

    fn wait_up(&mut self, i: usize) -> std::io::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(20);
        let addr = format!("127.0.0.1:{}", self.nodes[i].port);
        while TcpStream::connect(&addr).is_err() {
            let exited = match self.nodes[i].child.as_mut() {
                Some(child) => child.try_wait()?.is_some(),
                None => true,
            };
            if Instant::now() > deadline || exited {
                return Err(std::io::Error::other(format!(
                    "nats-server {} did not accept clients within 20 s",
                    self.nodes[i].name
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Every node's client URL, `nats://127.0.0.1:PORT`.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(|n| format!("nats://127.0.0.1:{}", n.port)).collect()
    }

    /// Node `i`'s client URL.
    pub fn url(&self, i: usize) -> String {
        format!("nats://127.0.0.1:{}", self.nodes[i].port)
    }

    /// Kill node `i` (its storage stays).
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.nodes[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start node `i` again on its ports and storage.
    pub fn restart(&mut self, i: usize) -> std::io::Result<()> {
        self.kill(i);
        self.spawn(i)?;
        self.wait_up(i)
    }
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
        }
    }
}
