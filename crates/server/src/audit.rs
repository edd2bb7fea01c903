//! The audit sink: JSON Lines, one event per call or refusal, written off the request path.
//!
//! `record` never waits: events go into a bounded queue that a writer task drains in batches. If
//! the disk cannot keep up the queue fills and further events are counted and dropped (with a
//! warning), because slowing every answer to protect a log would punish the clients, not the fault.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use concierge_core::AuditEvent;
use tokio::sync::mpsc;

pub use crate::audit_sql::{AuditQuery, query, read_back};

const QUEUE: usize = 16 * 1024;

/// A `--since` / `--until` of `concierge audit`: an RFC 3339 time (`2026-12-01T08:00:00Z`, any
/// offset) or a duration before `now` as humantime writes it (`30m`, `1h`, `2d`, `1h 30m`).
/// Answers the time in UTC with milliseconds, the form the audit table stores.
pub fn parse_time(text: &str, now: std::time::SystemTime) -> Result<String, String> {
    let text = text.trim();
    let time = match chrono::DateTime::parse_from_rfc3339(text) {
        Ok(time) => time.with_timezone(&chrono::Utc),
        Err(_) => {
            let ago = humantime::parse_duration(text)
                .ok()
                .and_then(|ago| now.checked_sub(ago))
                .ok_or_else(|| {
                    format!(
                        "`{text}` is neither a time like 2026-12-01T08:00:00Z nor a duration \
                         before now like 30m, 1h or 2d"
                    )
                })?;
            chrono::DateTime::<chrono::Utc>::from(ago)
        }
    };
    Ok(time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

enum Message {
    Event(Box<AuditEvent>),
    /// Answered once everything queued before it is on disk.
    Flush(std::sync::mpsc::Sender<()>),
}

#[derive(Clone)]
pub struct AuditSink {
    sender: mpsc::Sender<Message>,
    dropped: Arc<AtomicU64>,
    /// The SQL table's writer, when the sink has a `database`.
    sql: Option<mpsc::Sender<crate::audit_sql::Message>>,
}

impl AuditSink {
    /// Opens (creating directories) the file for appending and starts the writer task.
    pub fn open(path: PathBuf) -> std::io::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        let (sender, receiver) = mpsc::channel(QUEUE);
        std::thread::Builder::new()
            .name("audit-writer".into())
            .spawn(move || write_events(file, receiver, path))?;
        Ok(Self {
            sender,
            dropped: Arc::new(AtomicU64::new(0)),
            sql: None,
        })
    }

    /// Also writes every event to the `audit_event` table of this SQLite database.
    pub async fn with_database(mut self, target: &str) -> Result<Self, String> {
        self.sql = Some(crate::audit_sql::open(target).await?);
        Ok(self)
    }

    pub fn record(&self, event: AuditEvent) {
        if let Some(sql) = &self.sql
            && sql
                .try_send(crate::audit_sql::Message::Event(Box::new(event.clone())))
                .is_err()
        {
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if dropped.is_power_of_two() {
                tracing::warn!(dropped, "audit database queue full; events dropped");
            }
        }
        if self
            .sender
            .try_send(Message::Event(Box::new(event)))
            .is_err()
        {
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if dropped.is_power_of_two() {
                tracing::warn!(dropped, "audit queue full; events dropped");
            }
        }
    }

    /// Events waiting for the file's writer.
    pub fn queued(&self) -> usize {
        self.sender.max_capacity() - self.sender.capacity()
    }

    /// Events dropped so far because a queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Waits (at most `limit`) until every event recorded so far is written: called at shutdown,
    /// so the last calls before a stop are not lost with the process.
    pub fn flush(&self, limit: Duration) {
        let (done, wait) = std::sync::mpsc::channel();
        if self.sender.try_send(Message::Flush(done)).is_ok() {
            let _ = wait.recv_timeout(limit);
        }
        if let Some(sql) = &self.sql {
            let (done, wait) = std::sync::mpsc::channel();
            if sql.try_send(crate::audit_sql::Message::Flush(done)).is_ok() {
                let _ = wait.recv_timeout(limit);
            }
        }
    }
}

/// How long the writer sleeps between drains. Sleeping (rather than waiting on the queue) means a
/// request never has to wake the writer: at thousands of calls a second, one futex wake per event
/// cost more CPU than the audit line itself. Lines reach the file within this delay; a shutdown
/// flush waits for it.
const TICK: std::time::Duration = std::time::Duration::from_millis(20);

/// Lines held while the disk refuses them (full, or failing); past this the writer stops
/// taking events, the queue fills, and `record` counts what it drops.
const PENDING_LIMIT: usize = 4 << 20;

/// Runs on its own thread so a slow disk never occupies a runtime worker.
///
/// Whole lines are staged in `pending` and written with plain `write`s, keeping whatever a
/// write did not take for the next tick: the file is always a prefix of the event stream. A full
/// disk leaves at most an unfinished last line, which the next write completes once space
/// returns, never an event cut in two with another after it (a buffered writer's failed flush
/// can leave half an event in its buffer that the next event then follows).
fn write_events(mut file: std::fs::File, mut receiver: mpsc::Receiver<Message>, path: PathBuf) {
    use tokio::sync::mpsc::error::TryRecvError;
    let mut pending: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut flushed = Vec::new();
    let mut failing = false;
    loop {
        let mut open = true;
        while pending.len() < PENDING_LIMIT {
            match receiver.try_recv() {
                Ok(Message::Event(event)) => {
                    let start = pending.len();
                    match serde_json::to_writer(&mut pending, &event) {
                        Ok(()) => pending.push(b'\n'),
                        Err(_) => pending.truncate(start),
                    }
                }
                Ok(Message::Flush(done)) => flushed.push(done),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        let mut written = 0;
        while written < pending.len() {
            match file.write(&pending[written..]) {
                Ok(0) => break,
                Ok(n) => written += n,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => {
                    if !failing {
                        tracing::error!(path = %path.display(), %error, "cannot write the audit log; holding its lines");
                        failing = true;
                    }
                    break;
                }
            }
        }
        pending.drain(..written);
        if pending.is_empty() && pending.capacity() > 1 << 20 {
            // A backlog held through an outage is not kept as idle memory.
            pending.shrink_to(64 * 1024);
        }
        if failing && pending.is_empty() {
            tracing::info!(path = %path.display(), "the audit log is written again");
            failing = false;
        }
        for done in flushed.drain(..) {
            let _ = done.send(());
        }
        if !open && (pending.is_empty() || failing) {
            return;
        }
        std::thread::sleep(TICK);
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::parse_time;

    #[test]
    fn times_are_rfc3339_or_a_duration_before_now() {
        // 2026-12-01T12:00:00Z
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_126_400);
        assert_eq!(parse_time("1h", now).unwrap(), "2026-12-01T11:00:00.000Z");
        assert_eq!(parse_time("30m", now).unwrap(), "2026-12-01T11:30:00.000Z");
        assert_eq!(parse_time("2d", now).unwrap(), "2026-11-29T12:00:00.000Z");
        assert_eq!(
            parse_time("1h 30m", now).unwrap(),
            "2026-12-01T10:30:00.000Z"
        );
        assert_eq!(
            parse_time("2026-12-01T09:00:00+01:00", now).unwrap(),
            "2026-12-01T08:00:00.000Z"
        );
        for bad in ["yesterday", "", "2026-12-01", "-1h"] {
            let error = parse_time(bad, now).unwrap_err();
            assert!(error.contains("like 30m, 1h or 2d"), "{bad}: {error}");
        }
    }
}
