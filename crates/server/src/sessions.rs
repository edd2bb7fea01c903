//! Who opened which session, and how many sessions anyone may hold.
//!
//! The transport keeps a session (rmcp's service loop, `session_streams.rs`'s routes) for every
//! `initialize` until it idles out; it neither knows who opened it nor caps how many there are.
//! So one client with a valid token could open thousands and hold them for the whole idle time.
//! The table here binds each session to the principal that opened it (another client's token
//! cannot ride on it) and caps the sessions per principal and per endpoint:
//!
//! - a principal at its cap that opens another loses its least recently used session (closed in
//!   the transport; its client gets 404 on the next request and, as the MCP transport says,
//!   initializes again) — a client that forgets to close sessions keeps working, it just cannot
//!   pile them up;
//! - an endpoint at its cap refuses new sessions with 503 until some idle out: evicting another
//!   principal's session there would let one client push out everyone else.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use concierge_core::BoxFuture;

use crate::config::SessionCaps;

/// Closes a session in the transport that holds it (an evicted one); the table knows sessions by
/// id and owner only, so it is handed the transport's way to close one.
pub type CloseSession = Box<dyn Fn(Arc<str>) -> BoxFuture<'static, ()> + Send + Sync>;

pub struct SessionTable {
    table: Mutex<Table>,
    idle: Duration,
    caps: SessionCaps,
    /// The transport's sessions, to close an evicted one; set when the endpoint is mounted.
    transport: OnceLock<CloseSession>,
    /// The endpoint's path, for `mcp_server_session_duration_seconds`.
    endpoint: OnceLock<String>,
}

#[derive(Default)]
struct Table {
    sessions: HashMap<String, Entry>,
    /// Sessions being opened (an `initialize` on its way), by principal: they count against the
    /// caps, so parallel initializes cannot slip past them.
    opening: HashMap<String, usize>,
}

struct Entry {
    owner: String,
    opened: Instant,
    last_seen: Instant,
}

/// Why a new session was not opened: the cap that is reached.
#[derive(Debug, PartialEq, Eq)]
pub enum Full {
    /// The endpoint holds `max_sessions` sessions.
    Endpoint(usize),
    /// The principal is opening `max_sessions_per_client` sessions at once.
    Client(usize),
}

impl SessionTable {
    pub fn new(idle: Duration, caps: SessionCaps) -> Self {
        Self {
            table: Mutex::new(Table::default()),
            idle,
            caps,
            transport: OnceLock::new(),
            endpoint: OnceLock::new(),
        }
    }

    /// Names the endpoint whose sessions these are.
    pub fn serving(&self, endpoint: &str) {
        let _ = self.endpoint.set(endpoint.to_string());
    }

    /// A session left the table after it lasted from `opened` to `until`.
    fn ended(&self, opened: Instant, until: Instant, reason: &'static str) {
        if let Some(metrics) = crate::telemetry::metrics::get() {
            let endpoint = self.endpoint.get().map(String::as_str).unwrap_or("");
            metrics.session_ended(endpoint, until.saturating_duration_since(opened), reason);
        }
    }

    pub fn attach(&self, close: CloseSession) {
        let _ = self.transport.set(close);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The principal that opened `session`, marking it used.
    pub fn owner(&self, session: &str) -> Option<String> {
        let mut table = self.lock();
        table.sessions.get_mut(session).map(|entry| {
            entry.last_seen = Instant::now();
            entry.owner.clone()
        })
    }

    /// Makes room for one more session of `owner`: evicts its least recently used one when it
    /// is at its cap, refuses when the endpoint is full.
    pub async fn open(self: &Arc<Self>, owner: &str) -> Result<Opening, Full> {
        let evicted = {
            let mut table = self.lock();
            // A session unused for `idle` is one the transport has closed — unless the server
            // itself kept it busy (notifications it sent reset the transport's clock, not ours). So an entry is kept
            // for twice that, to keep refusing other principals, and counts against the caps
            // only while it is live by our clock.
            let idle = self.idle;
            table.sessions.retain(|_, e| {
                let kept = e.last_seen.elapsed() < idle * 2;
                if !kept {
                    // The transport closed it when it had been idle for `idle`.
                    self.ended(e.opened, e.last_seen + idle, "");
                }
                kept
            });
            let live = |e: &Entry| e.last_seen.elapsed() < idle;
            let pending: usize = table.opening.values().sum();
            let open = table.sessions.values().filter(|e| live(e)).count();
            let mine = table
                .sessions
                .values()
                .filter(|e| e.owner == owner && live(e))
                .count()
                + table.opening.get(owner).copied().unwrap_or(0);
            let evicted = if mine >= self.caps.per_client {
                let oldest = table
                    .sessions
                    .iter()
                    .filter(|(_, e)| e.owner == owner && live(e))
                    .min_by_key(|(_, e)| e.last_seen)
                    .map(|(id, _)| id.clone());
                match oldest {
                    Some(id) => {
                        if let Some(entry) = table.sessions.remove(&id) {
                            self.ended(entry.opened, Instant::now(), "evicted");
                        }
                        Some(id)
                    }
                    None => return Err(Full::Client(self.caps.per_client)),
                }
            } else {
                None
            };
            if evicted.is_none() && open + pending >= self.caps.total {
                return Err(Full::Endpoint(self.caps.total));
            }
            *table.opening.entry(owner.to_string()).or_default() += 1;
            evicted
        };
        if let Some(id) = evicted {
            tracing::info!(
                client = owner,
                "session cap reached: the least recently used session is closed"
            );
            if let Some(close) = self.transport.get() {
                close(Arc::from(id.as_str())).await;
            }
        }
        Ok(Opening {
            table: self.clone(),
            owner: Some(owner.to_string()),
        })
    }

    pub fn forget(&self, session: &str) {
        let removed = self.lock().sessions.remove(session);
        if let Some(entry) = removed {
            self.ended(entry.opened, Instant::now(), "");
        }
    }

    /// Closes every session whose opener `gone` says is no longer admitted (a reload removed
    /// its token); returns how many.
    pub async fn close_where(&self, gone: impl Fn(&str) -> bool) -> usize {
        let closed: Vec<(String, Entry)> = {
            let mut table = self.lock();
            let ids: Vec<String> = (table.sessions.iter())
                .filter(|(_, entry)| gone(&entry.owner))
                .map(|(id, _)| id.clone())
                .collect();
            ids.into_iter()
                .filter_map(|id| table.sessions.remove(&id).map(|entry| (id, entry)))
                .collect()
        };
        for (id, entry) in &closed {
            self.ended(entry.opened, Instant::now(), "revoked");
            if let Some(close) = self.transport.get() {
                close(Arc::from(id.as_str())).await;
            }
        }
        closed.len()
    }

    /// Open sessions, for tests and metrics.
    pub fn len(&self) -> usize {
        self.lock().sessions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A session being opened; [`Opening::bind`] records it, dropping it gives the place back.
pub struct Opening {
    table: Arc<SessionTable>,
    owner: Option<String>,
}

impl Opening {
    pub fn bind(mut self, session: &str) {
        if let Some(owner) = self.owner.take() {
            let mut table = self.table.lock();
            release(&mut table, &owner);
            table.sessions.insert(
                session.to_string(),
                Entry {
                    owner,
                    opened: Instant::now(),
                    last_seen: Instant::now(),
                },
            );
        }
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        if let Some(owner) = self.owner.take() {
            release(&mut self.table.lock(), &owner);
        }
    }
}

fn release(table: &mut Table, owner: &str) {
    if let Some(count) = table.opening.get_mut(owner) {
        *count -= 1;
        if *count == 0 {
            table.opening.remove(owner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(per_client: usize, total: usize) -> Arc<SessionTable> {
        Arc::new(SessionTable::new(
            Duration::from_secs(60),
            SessionCaps { per_client, total },
        ))
    }

    #[tokio::test]
    async fn a_client_at_its_cap_loses_its_least_recently_used_session() {
        let table = table(2, 10);
        table.open("n8n").await.unwrap().bind("a");
        table.open("n8n").await.unwrap().bind("b");
        table.owner("a");
        table.open("n8n").await.unwrap().bind("c");
        assert_eq!(table.owner("b"), None, "b was used least recently");
        assert_eq!(table.owner("a").as_deref(), Some("n8n"));
        assert_eq!(table.len(), 2);
        table.open("website").await.unwrap().bind("d");
        assert_eq!(table.len(), 3, "another client's sessions are its own");
    }

    #[tokio::test]
    async fn a_full_endpoint_refuses_and_sessions_being_opened_count() {
        let table = table(10, 2);
        let first = table.open("a").await.unwrap();
        let _second = table.open("b").await.unwrap();
        assert_eq!(table.open("c").await.err(), Some(Full::Endpoint(2)));
        drop(first);
        table.open("c").await.unwrap().bind("x");
        assert_eq!(table.owner("x").as_deref(), Some("c"));
        let table = super::tests::table(1, 10);
        let _opening = table.open("a").await.unwrap();
        assert_eq!(
            table.open("a").await.err(),
            Some(Full::Client(1)),
            "nothing to evict yet"
        );
    }
}
