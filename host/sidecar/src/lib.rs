//! The Uniswap sidecar: Uniswap's official TypeScript SDKs (`sidecar/`) in a Node process the
//! host starts on first use and talks JSON-RPC 2.0 to over a Unix socket (mode 0600, in the state
//! directory). A health ping finds a process that died or hangs; it is then restarted with
//! backoff, and a call caught in flight gets a retryable [`SidecarError::Unavailable`]. Stopped
//! with the host (dropping [`Sidecar`] kills it; the process also exits when the host's end of
//! its stdin closes).
//!
//! Its use is as an independent second opinion: the SDKs' math, not a plugin's, re-deriving
//! amounts and routes from state the host read itself.

pub mod book;
pub mod discover;
mod methods;
pub mod pool_read;
mod process;
pub mod route;
mod rpc;
pub mod settings;

pub use methods::{
    FeeGrowth, MorphoAction, MorphoDelta, MorphoMarketState, PoolState, PositionAmounts, SwapError,
    SwapResult, TickPrice, Ticks,
};
pub use settings::SidecarSettings;

use bardo_core::sync::lock;
use process::Process;
use rpc::{CallError, Connection};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

/// The protocol version both sides check at `hello`.
pub const PROTOCOL: u64 = 1;

/// Where the sidecar lives and how patiently it is treated.
#[derive(Debug, Clone)]
pub struct Config {
    /// The `sidecar/` directory: `server.cjs` and its `node_modules`.
    pub dir: PathBuf,
    /// The socket it listens on (in the state directory; at most ~100 bytes, a Unix limit).
    pub socket: PathBuf,
    /// The Node binary.
    pub node: PathBuf,
    /// How long a call may take before the process counts as hung.
    pub call_timeout: Duration,
    /// How long it may take to load the SDKs and listen.
    pub start_timeout: Duration,
    /// How often a started sidecar is pinged.
    pub ping_every: Duration,
    /// How long a ping may take.
    pub ping_timeout: Duration,
}

impl Config {
    /// The sidecar of `dir`, listening in `state_dir`.
    pub fn new(dir: impl Into<PathBuf>, state_dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            socket: state_dir.into().join("uniswap-sidecar.sock"),
            node: PathBuf::from("node"),
            call_timeout: Duration::from_secs(5),
            start_timeout: Duration::from_secs(20),
            ping_every: Duration::from_secs(5),
            ping_timeout: Duration::from_secs(1),
        }
    }
}

/// Why the sidecar did not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SidecarError {
    /// Node or the npm packages are missing: the message names the fix.
    #[error("the Uniswap sidecar cannot run: {0}")]
    NotInstalled(String),
    /// It crashed, hung or is restarting: try again.
    #[error("the Uniswap sidecar is unavailable: {0}")]
    Unavailable(String),
    /// It refused the call (bad params, or the SDK rejected the inputs).
    #[error("the Uniswap sidecar refused `{method}` (code {code}): {message}")]
    Refused {
        /// The method called.
        method: String,
        /// Its JSON-RPC error code (-32602: invalid params; -32000: the SDK rejected the inputs).
        code: i64,
        /// What it said.
        message: String,
        /// Its JSON-RPC error data, if any.
        data: Option<Value>,
    },
    /// It answered something this host does not understand.
    #[error("the Uniswap sidecar broke the protocol: {0}")]
    Protocol(String),
}

impl SidecarError {
    /// Whether the same call may succeed if made again.
    pub fn retryable(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }

    /// The host's error code for it.
    pub fn code(&self) -> bardo_core::ErrorCode {
        match self {
            Self::Refused { .. } => bardo_core::ErrorCode::InvalidParams,
            Self::Unavailable(_) => bardo_core::ErrorCode::Timeout,
            Self::NotInstalled(_) | Self::Protocol(_) => bardo_core::ErrorCode::Internal,
        }
    }
}

/// What the sidecar said at `hello`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Hello {
    /// Its protocol version.
    pub protocol: u64,
    /// Node's version.
    pub node: String,
    /// The Uniswap packages it loaded, by name.
    pub packages: std::collections::BTreeMap<String, String>,
}

struct Running {
    process: Process,
    conn: Connection,
    hello: Hello,
}

#[derive(Default)]
struct State {
    running: Option<Running>,
    /// Set at the first call: only then does the pinger keep it alive.
    wanted: bool,
    /// Failed starts and deaths in a row, for the backoff.
    failures: u32,
    /// No start before this.
    not_before: Option<Instant>,
    starts: u64,
}

/// The supervised sidecar. Calls are served one at a time.
pub struct Sidecar {
    config: Config,
    state: Mutex<State>,
}

/// The wait before the next start after `failures` in a row: 100 ms doubling to 5 s.
fn backoff(failures: u32) -> Duration {
    Duration::from_millis(100u64.saturating_mul(1 << failures.min(6))).min(Duration::from_secs(5))
}

impl Sidecar {
    /// A sidecar that starts on its first call, pinged every `config.ping_every` from then on.
    pub fn new(config: Config) -> Arc<Self> {
        let sidecar = Arc::new(Self { config, state: Mutex::default() });
        let weak = Arc::downgrade(&sidecar);
        let every = sidecar.config.ping_every;
        std::thread::Builder::new()
            .name("bardo-sidecar-ping".into())
            .spawn(move || pinger(weak, every))
            .expect("spawn the sidecar's pinger");
        sidecar
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Call `method` with `params`: its JSON result.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, SidecarError> {
        let mut state = self.lock();
        state.wanted = true;
        self.call_locked(&mut state, method, &params, self.config.call_timeout)
    }

    fn call_locked(
        &self,
        state: &mut State,
        method: &str,
        params: &Value,
        timeout: Duration,
    ) -> Result<Value, SidecarError> {
        let running = self.ensure(state)?;
        match running.conn.call(method, params, timeout) {
            Ok(result) => {
                state.failures = 0;
                Ok(result)
            }
            Err(CallError::Rpc { code, message, data }) => {
                Err(SidecarError::Refused { method: method.to_owned(), code, message, data })
            }
            Err(CallError::Timeout) => {
                self.lost(state);
                Err(SidecarError::Unavailable(format!(
                    "no answer to `{method}` within {} ms; the hung process was stopped and a new one is starting",
                    timeout.as_millis()
                )))
            }
            Err(CallError::Closed(why) | CallError::Garbled(why)) => {
                let ended = self.lost(state);
                Err(SidecarError::Unavailable(format!(
                    "it died during `{method}` ({ended}; {why}); a new one is starting"
                )))
            }
        }
    }

    /// Stop the process that failed and schedule the next start: how it ended.
    fn lost(&self, state: &mut State) -> String {
        let ended = state.running.take().map(|mut r| r.process.stop()).unwrap_or_default();
        tracing::warn!(target: "bardo::sidecar", "the sidecar was lost ({ended}); restarting");
        state.failures += 1;
        state.not_before = Some(Instant::now() + backoff(state.failures));
        ended
    }

    /// The running sidecar, started (after any backoff) if there is none.
    fn ensure<'a>(&self, state: &'a mut State) -> Result<&'a mut Running, SidecarError> {
        if let Some(running) = state.running.as_mut()
            && let Some(status) = running.process.exited()
        {
            tracing::warn!(target: "bardo::sidecar", "the sidecar exited ({status}); restarting");
            state.running = None;
            state.failures += 1;
            state.not_before = Some(Instant::now() + backoff(state.failures));
        }
        if state.running.is_none() {
            if let Some(wait) = state.not_before.map(|t| t.saturating_duration_since(Instant::now())) {
                std::thread::sleep(wait);
            }
            match self.start() {
                Ok(running) => {
                    state.starts += 1;
                    state.running = Some(running);
                }
                Err(e) => {
                    if e.retryable() {
                        state.failures += 1;
                        state.not_before = Some(Instant::now() + backoff(state.failures));
                    }
                    return Err(e);
                }
            }
        }
        state.running.as_mut().ok_or_else(|| SidecarError::Unavailable("not running".into()))
    }

    fn start(&self) -> Result<Running, SidecarError> {
        let config = &self.config;
        if let Some(dir) = config.socket.parent() {
            std::fs::create_dir_all(dir).map_err(|e| {
                SidecarError::Unavailable(format!(
                    "cannot create the socket's directory {}: {e}",
                    dir.display()
                ))
            })?;
        }
        let process = Process::start(config)?;
        // Only the host's user may talk to it: refuse a socket anyone else could reach.
        let mode = std::fs::metadata(&config.socket)
            .map_err(|e| SidecarError::Unavailable(format!("no socket at {}: {e}", config.socket.display())))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(SidecarError::Protocol(format!(
                "its socket {} is mode {:o}, open to other users",
                config.socket.display(),
                mode & 0o777
            )));
        }
        let mut conn = Connection::open(&config.socket).map_err(|e| {
            SidecarError::Unavailable(format!("cannot connect to {}: {e}", config.socket.display()))
        })?;
        let hello = conn
            .call("hello", &serde_json::json!({ "protocol": PROTOCOL }), config.start_timeout)
            .map_err(|e| SidecarError::Protocol(format!("the `hello` handshake failed: {e:?}")))?;
        let hello: Hello = serde_json::from_value(hello)
            .map_err(|e| SidecarError::Protocol(format!("an unreadable `hello`: {e}")))?;
        if hello.protocol != PROTOCOL {
            return Err(SidecarError::Protocol(format!(
                "it speaks protocol {}, this host {PROTOCOL}; run `make setup`",
                hello.protocol
            )));
        }
        tracing::info!(target: "bardo::sidecar", pid = process.id(), node = %hello.node, "the Uniswap sidecar is up");
        Ok(Running { process, conn, hello })
    }

    /// Start it if it does not run (waiting out a backoff first): how long that took, zero
    /// when it was running. A caller with a deadline moves it by this: a start has its own
    /// timeout (`start_timeout`) and error.
    pub fn ready(&self) -> Result<Duration, SidecarError> {
        let started = Instant::now();
        let mut state = self.lock();
        state.wanted = true;
        let running = state.running.as_mut().is_some_and(|r| r.process.exited().is_none());
        self.ensure(&mut state)?;
        Ok(if running { Duration::ZERO } else { started.elapsed() })
    }

    /// The handshake of the running sidecar (starting it if needed).
    pub fn hello(&self) -> Result<Hello, SidecarError> {
        let mut state = self.lock();
        state.wanted = true;
        Ok(self.ensure(&mut state)?.hello.clone())
    }

    /// The running process's id, if one runs.
    pub fn pid(&self) -> Option<u32> {
        self.lock().running.as_ref().map(|r| r.process.id())
    }

    /// How many times a process was started.
    pub fn starts(&self) -> u64 {
        self.lock().starts
    }

    /// One health check: ping the running sidecar, replace it if it does not answer in time, and
    /// start one if it is wanted and none runs.
    fn check(&self) {
        let mut state = self.lock();
        if !state.wanted {
            return;
        }
        if state.running.is_some()
            && let Err(e) = self.call_locked(
                &mut state,
                "ping",
                &Value::Object(Default::default()),
                self.config.ping_timeout,
            )
        {
            tracing::warn!(target: "bardo::sidecar", "health ping failed: {e}");
        }
        if state.running.is_none()
            && let Err(e) = self.ensure(&mut state)
        {
            tracing::warn!(target: "bardo::sidecar", "restart failed: {e}");
        }
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(mut running) = state.running.take() {
            running.process.stop();
        }
        let _ = std::fs::remove_file(&self.config.socket);
    }
}

/// Ping until the sidecar is dropped.
fn pinger(sidecar: Weak<Sidecar>, every: Duration) {
    loop {
        std::thread::sleep(every);
        match sidecar.upgrade() {
            Some(s) => s.check(),
            None => return,
        }
    }
}
