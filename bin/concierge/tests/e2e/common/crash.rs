//! Crash loops: a server killed with SIGKILL at a random moment of a write storm, again and
//! again on the same state, each kill followed by a restart and a check of what it promised.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::Value;

use super::{Client, Server};

/// A reproducible sequence of kill moments (xorshift64; the seed is printed by the caller).
pub struct Moments(u64);

impl Moments {
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    /// A moment between `low` and `high`.
    pub fn next(&mut self, low: Duration, high: Duration) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        let span = (high - low).as_micros() as u64;
        low + Duration::from_micros(self.0 % span.max(1))
    }
}

/// SIGKILL now, and the state directory back for the next start.
pub fn kill(mut server: Server) -> tempfile::TempDir {
    kill_in_place(&mut server)
}

/// [`kill`] for a server held in a struct: it stays, dead, until replaced by the next start.
pub fn kill_in_place(server: &mut Server) -> tempfile::TempDir {
    server.child.kill().expect("SIGKILL");
    server.child.wait().expect("reaped");
    std::mem::replace(&mut server.dir, tempfile::tempdir().expect("temp dir"))
}

/// One call of a storm: `None` once the server is gone (a dead server's client may retry for
/// long; two seconds bound it).
pub async fn bounded_call(
    client: &Client,
    tool: &'static str,
    arguments: Value,
) -> Option<CallToolResult> {
    let params = CallToolRequestParams::new(tool)
        .with_arguments(arguments.as_object().cloned().unwrap_or_default());
    match tokio::time::timeout(Duration::from_secs(2), client.call_tool(params)).await {
        Ok(Ok(result)) => Some(result),
        _ => None,
    }
}

/// Stops a storm's workers after a kill: nothing more can be acknowledged by a dead process.
pub async fn stop_all(workers: Vec<tokio::task::JoinHandle<()>>) {
    for worker in workers {
        worker.abort();
        let _ = worker.await;
    }
}
