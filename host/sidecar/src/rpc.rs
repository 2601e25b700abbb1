//! One JSON-RPC 2.0 connection to the sidecar: a request per line, its answer per line, each
//! waited for no longer than its deadline.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// Why a call got no result.
#[derive(Debug)]
pub(crate) enum CallError {
    /// The sidecar answered with a JSON-RPC error.
    Rpc { code: i64, message: String, data: Option<Value> },
    /// No answer before the deadline.
    Timeout,
    /// The connection closed or failed: the process is gone.
    Closed(String),
    /// An answer that is not JSON-RPC.
    Garbled(String),
}

pub(crate) struct Connection {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    next_id: u64,
}

impl Connection {
    pub(crate) fn open(socket: &Path) -> std::io::Result<Self> {
        let writer = UnixStream::connect(socket)?;
        let reader = BufReader::new(writer.try_clone()?);
        Ok(Self { writer, reader, next_id: 1 })
    }

    /// Call `method` and wait up to `timeout` for its result.
    pub(crate) fn call(
        &mut self,
        method: &str,
        params: &Value,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        let id = self.next_id;
        self.next_id += 1;
        let mut line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        line.push('\n');
        let deadline = Instant::now() + timeout;
        self.writer.set_write_timeout(Some(timeout)).map_err(|e| CallError::Closed(e.to_string()))?;
        self.writer.write_all(line.as_bytes()).map_err(|e| match e.kind() {
            ErrorKind::WouldBlock | ErrorKind::TimedOut => CallError::Timeout,
            _ => CallError::Closed(e.to_string()),
        })?;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(CallError::Timeout);
            }
            self.reader
                .get_ref()
                .set_read_timeout(Some(left))
                .map_err(|e| CallError::Closed(e.to_string()))?;
            let mut answer = String::new();
            match self.reader.read_line(&mut answer) {
                Ok(0) => return Err(CallError::Closed("the sidecar closed the connection".into())),
                Ok(_) => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Err(CallError::Timeout);
                }
                Err(e) => return Err(CallError::Closed(e.to_string())),
            }
            let reply: Value = serde_json::from_str(&answer)
                .map_err(|e| CallError::Garbled(format!("an answer that is not JSON ({e})")))?;
            // An answer to an earlier call that timed out is stale: skip it.
            if reply["id"].as_u64() != Some(id) {
                continue;
            }
            if let Some(error) = reply.get("error") {
                return Err(CallError::Rpc {
                    code: error["code"].as_i64().unwrap_or(0),
                    message: error["message"].as_str().unwrap_or("no message").to_owned(),
                    data: error.get("data").cloned(),
                });
            }
            return reply
                .get("result")
                .cloned()
                .ok_or_else(|| CallError::Garbled("an answer with neither result nor error".into()));
        }
    }
}
