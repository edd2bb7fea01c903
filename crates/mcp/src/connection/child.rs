//! An upstream's child process: started with only `PATH` and its `env`, in a process group of
//! its own (killed whole when the connection ends), its stdout read in bounded lines as rmcp's
//! transport, its stderr logged within a line length and a rate.

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::AsyncBufReadExt;

use crate::lines::BoundedLines;
use crate::settings::McpSettings;

/// Lines of a child's stderr logged per [`STDERR_WINDOW`]; more are counted, not logged.
const STDERR_LINES: u32 = 100;
const STDERR_WINDOW: Duration = Duration::from_secs(10);
/// The longest stderr line logged (longer ones are cut).
const STDERR_LINE_BYTES: usize = 2048;

/// The child process of `command`: its environment `PATH` and `env` only, in a process group of
/// its own (killed whole when the connection ends), its stdout read in lines of at most `line`
/// bytes, its stderr logged line by line under `label`.
pub(super) fn spawn(
    command: &[String],
    settings: &McpSettings,
    label: &str,
    line: usize,
) -> Result<ChildTransport, String> {
    let mut child = tokio::process::Command::new(&command[0]);
    child
        .args(&command[1..])
        .env_clear()
        .envs(std::env::var_os("PATH").map(|path| ("PATH", path)))
        .envs(&settings.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(cwd) = &settings.cwd {
        child.current_dir(cwd);
    }
    let mut child = child
        .spawn()
        .map_err(|error| format!("cannot start `{}`: {error}", command[0]))?;
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err("the child's stdin or stdout is missing".into());
    };
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(log_stderr(label.to_string(), stderr));
    }
    let stdout = BoundedLines::new(stdout, line, label.to_string());
    Ok(ChildTransport {
        transport: AsyncRwTransport::new(stdout, stdin).with_max_line_length(line),
        group: ProcessGroup(child),
    })
}

/// The child's stderr in the log, line by line, within a rate: a chatty or hostile server
/// cannot flood the log.
async fn log_stderr(label: String, stderr: tokio::process::ChildStderr) {
    let mut lines = tokio::io::BufReader::new(stderr);
    let mut line = Vec::new();
    let mut window = Instant::now();
    let (mut logged, mut dropped) = (0u32, 0u64);
    loop {
        line.clear();
        match tokio::io::AsyncReadExt::take(&mut lines, STDERR_LINE_BYTES as u64 * 16)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if window.elapsed() >= STDERR_WINDOW {
            if dropped > 0 {
                tracing::warn!(upstream = %label, dropped, "MCP server stderr lines not logged");
            }
            (window, logged, dropped) = (Instant::now(), 0, 0);
        }
        if logged >= STDERR_LINES {
            dropped += 1;
            continue;
        }
        logged += 1;
        let text = String::from_utf8_lossy(&line[..line.len().min(STDERR_LINE_BYTES)]);
        tracing::info!(upstream = %label, line = %text.trim_end(), "MCP server stderr");
    }
}

/// The child and its process group: dropped, the whole group is killed (a server that started
/// helpers of its own leaves none behind).
struct ProcessGroup(tokio::process::Child);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if let Some(pid) = self.0.id() {
            // SAFETY: killpg only sends a signal; the group is the child's own (process_group(0)).
            unsafe {
                libc::killpg(pid as libc::pid_t, libc::SIGKILL);
            }
        }
    }
}

/// The child's stdio as rmcp's transport, holding the child for as long as the transport lives.
pub(super) struct ChildTransport {
    transport: AsyncRwTransport<
        RoleClient,
        BoundedLines<tokio::process::ChildStdout>,
        tokio::process::ChildStdin,
    >,
    group: ProcessGroup,
}

impl rmcp::transport::Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        let _ = self.group.0.start_kill();
        self.transport.close()
    }
}
