//! Starting the Node process: checks that name the setup command, its readiness line, its
//! stderr into the host's log, and stopping it.

use crate::{Config, SidecarError};
use bardo_core::sync::lock;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// A running sidecar process.
pub(crate) struct Process {
    child: Child,
}

/// The last lines the process wrote to stderr, for the error when it fails to start.
type Tail = Arc<Mutex<VecDeque<String>>>;

const TAIL_LINES: usize = 8;

/// A package the sidecar cannot start without: its absence means setup never ran here.
const MARKER: &str = "node_modules/@uniswap/v3-sdk/package.json";

impl Process {
    /// Start `node server.cjs <socket>` and wait until it listens.
    pub(crate) fn start(config: &Config) -> Result<Self, SidecarError> {
        // Absolute: the process runs in the sidecar's directory, the host anywhere.
        let absolute = |p: &std::path::Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
        let (dir, socket) = (absolute(&config.dir), absolute(&config.socket));
        let script = dir.join("server.cjs");
        if !script.is_file() {
            return Err(SidecarError::NotInstalled(format!(
                "the sidecar program {} is missing; point `[sidecar] dir` at the repository's sidecar/",
                script.display()
            )));
        }
        if !dir.join(MARKER).is_file() {
            return Err(SidecarError::NotInstalled(format!(
                "the sidecar's npm packages are not installed in {}; run `make setup`",
                dir.join("node_modules").display()
            )));
        }
        let mut cmd = Command::new(&config.node);
        // Node needs none of the host's secrets (the signing key, passwords, tokens).
        bardo_core::secret::scrub_env(&mut cmd);
        let mut child = cmd
            .arg(&script)
            .arg(&socket)
            .current_dir(&dir)
            // Its stdin is its lifeline: when the host goes, the pipe closes and it exits.
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => SidecarError::NotInstalled(format!(
                    "Node.js (`{}`) is not installed or not on PATH; install Node 18 or newer, then run `make setup`",
                    config.node.display()
                )),
                _ => SidecarError::Unavailable(format!("could not start `{}`: {e}", config.node.display())),
            })?;
        let pid = child.id();
        let tail: Tail = Arc::default();
        if let Some(stderr) = child.stderr.take() {
            let tail = tail.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    tracing::warn!(target: "bardo::sidecar", pid, "{line}");
                    let mut tail = lock(&tail);
                    if tail.len() == TAIL_LINES {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            });
        }
        let (ready_tx, ready) = mpsc::channel();
        if let Some(stdout) = child.stdout.take() {
            std::thread::spawn(move || {
                let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
                if let Some(first) = lines.next() {
                    let _ = ready_tx.send(first);
                }
                for line in lines {
                    tracing::info!(target: "bardo::sidecar", pid, "{line}");
                }
            });
        }
        let mut process = Process { child };
        match ready.recv_timeout(config.start_timeout) {
            Ok(line) if line.contains("\"listening\"") => Ok(process),
            Ok(line) => {
                process.stop();
                Err(SidecarError::Protocol(format!(
                    "it started with {line:?} instead of its `listening` line"
                )))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                process.stop();
                Err(SidecarError::Unavailable(format!(
                    "it did not listen within {} ms",
                    config.start_timeout.as_millis()
                )))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = process.stop();
                // Give the stderr reader a moment to catch the last lines.
                std::thread::sleep(Duration::from_millis(50));
                let said = lock(&tail).iter().cloned().collect::<Vec<_>>();
                let said = said.join(" | ");
                if said.contains("Cannot find module") {
                    return Err(SidecarError::NotInstalled(format!(
                        "the sidecar's npm packages are incomplete ({said}); run `make setup`"
                    )));
                }
                Err(SidecarError::Unavailable(format!("it exited at start ({status}): {said}")))
            }
        }
    }

    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// Whether it has exited, and how.
    pub(crate) fn exited(&mut self) -> Option<String> {
        self.child.try_wait().ok().flatten().map(|s| s.to_string())
    }

    /// Kill it (if it still runs) and reap it: how it ended.
    pub(crate) fn stop(&mut self) -> String {
        let _ = self.child.kill();
        self.child.wait().map(|s| s.to_string()).unwrap_or_else(|e| e.to_string())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop();
    }
}
