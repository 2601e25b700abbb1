//! Local NATS JetStream clusters for tests and benchmarks: Debian's `nats-server` (installed by
//! `make setup`), each node on free loopback ports with its storage under a directory the
//! caller owns. Nodes can be killed and restarted to inject the faults a cluster must survive.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One node: its client, route and monitoring ports and its process while it runs.
struct Node {
    name: String,
    port: u16,
    route: u16,
    monitor: u16,
    store: PathBuf,
    log: PathBuf,
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
    /// accepts clients and reports JetStream healthy (a meta leader elected). Each node logs to
    /// `dir/try<k>/n<i>.log`. Ports are picked free, but another process may take one before the node
    /// binds it: then the whole cluster starts again on new ports (three tries).
    pub fn start(dir: &Path, n: usize) -> std::io::Result<Self> {
        let mut tries = 0;
        loop {
            tries += 1;
            match Self::start_once(&dir.join(format!("try{tries}")), n) {
                Ok(cluster) => return Ok(cluster),
                Err(e) if tries >= 3 => return Err(e),
                Err(e) => eprintln!("nats cluster: {e}; starting again on other ports"),
            }
        }
    }

    fn start_once(dir: &Path, n: usize) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let mut nodes = Vec::new();
        for i in 0..n {
            nodes.push(Node {
                name: format!("n{i}"),
                port: free_port()?,
                route: free_port()?,
                monitor: free_port()?,
                store: dir.join(format!("n{i}")),
                log: dir.join(format!("n{i}.log")),
                child: None,
            });
        }
        // Dropped on an error: its nodes are killed.
        let mut cluster = Self { nodes };
        for i in 0..n {
            cluster.spawn(i)?;
        }
        for i in 0..n {
            cluster.wait_up(i)?;
        }
        for i in 0..n {
            cluster.wait_healthy(i)?;
        }
        Ok(cluster)
    }

    /// The end of node `i`'s log, for an error message.
    fn log_tail(&self, i: usize) -> String {
        let log = std::fs::read_to_string(&self.nodes[i].log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(5)..].join("\n")
    }

    fn spawn(&mut self, i: usize) -> std::io::Result<()> {
        let routes: Vec<String> =
            self.nodes.iter().map(|n| format!("nats://127.0.0.1:{}", n.route)).collect();
        let node = &self.nodes[i];
        let mut cmd = Command::new("nats-server");
        cmd.args(["-js", "-a", "127.0.0.1", "-p", &node.port.to_string(), "--server_name", &node.name])
            .args(["-m", &node.monitor.to_string()])
            .arg("-sd")
            .arg(&node.store);
        if self.nodes.len() > 1 {
            // Clients keep to the URLs they were given, so a host can be cut from the cluster by
            // killing the one node it knows.
            cmd.args(["--cluster_name", "bardo-test", "--no_advertise=true"])
                .args(["--cluster", &format!("nats://127.0.0.1:{}", node.route)])
                .args(["--routes", &routes.join(",")]);
        }
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&node.log)?;
        let child = cmd.stdout(Stdio::null()).stderr(log).spawn().map_err(|e| {
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
                    "nats-server {} did not accept clients within 20 s (exited: {exited}); its log ends:\n{}",
                    self.nodes[i].name,
                    self.log_tail(i)
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Wait until node `i`'s `/healthz` answers 200: JetStream has a meta leader and every stream
    /// replica on the node is current. A restarted node answers clients long before it has
    /// caught up; killing another node meanwhile would leave its streams without a quorum.
    fn wait_healthy(&self, i: usize) -> std::io::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let addr = format!("127.0.0.1:{}", self.nodes[i].monitor);
        loop {
            let status = healthz(&addr);
            match status {
                Ok(ref line) if line.contains(" 200 ") => return Ok(()),
                _ if Instant::now() > deadline => {
                    return Err(std::io::Error::other(format!(
                        "nats-server {} not healthy within 60 s: {status:?}; its log ends:\n{}",
                        self.nodes[i].name,
                        self.log_tail(i)
                    )));
                }
                _ => std::thread::sleep(Duration::from_millis(100)),
            }
        }
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

    /// Stall node `i` (SIGSTOP): it holds its connections and answers nothing, as a node stuck
    /// on its disk or scheduler does, until [`Self::unstall`].
    pub fn stall(&self, i: usize) {
        self.signal(i, "-STOP");
    }

    /// Let the stalled `nodes` run again (SIGCONT); returns once every node reports healthy:
    /// a node back from a stall rejoins the meta group, and until it has caught up the cluster
    /// answers JetStream requests "temporarily unavailable" (503).
    pub fn unstall(&self, nodes: &[usize]) -> std::io::Result<()> {
        nodes.iter().for_each(|&i| self.signal(i, "-CONT"));
        (0..self.nodes.len()).try_for_each(|n| self.wait_healthy(n))
    }

    fn signal(&self, i: usize, signal: &str) {
        if let Some(child) = &self.nodes[i].child {
            let _ = Command::new("kill").args([signal, &child.id().to_string()]).status();
        }
    }

    /// Start node `i` again on its ports and storage; returns once it has caught up (healthy).
    pub fn restart(&mut self, i: usize) -> std::io::Result<()> {
        self.kill(i);
        self.spawn(i)?;
        self.wait_up(i)?;
        self.wait_healthy(i)
    }
}

/// The status line of the monitoring endpoint's `GET /healthz` (loopback, HTTP/1.0).
fn healthz(addr: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(b"GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    Ok(response.lines().next().unwrap_or_default().to_string())
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
        }
    }
}
