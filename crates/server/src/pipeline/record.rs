//! One request, one record: made where a request arrives (the HTTP guard for Streamable HTTP and
//! legacy SSE, the rmcp adapter for stdio), filled by every step, and written to the audit sink
//! exactly once — when the last holder lets go of it.
//!
//! That "last holder" is the point. In stateful Streamable HTTP and legacy SSE the HTTP answer
//! (a stream, a `202`) leaves before the tool has run, so neither the guard nor the dispatcher
//! alone knows when the request is over; both hold the record (the guard puts it into the
//! request's extensions, rmcp hands those to the tool call), and it is written when both are
//! done. A call whose client went away, or whose tool panicked, is dropped half-way and still
//! recorded, as `cancelled` (code `panic` when unwinding).
//!
//! What reaches the audit: every tool call and every refusal. A request that was neither (an
//! `initialize`, a `tools/list`, a notification) is recorded and not written; it is what the
//! metrics will count.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use concierge_core::{AuditEvent, Caller, Outcome};
use serde_json::Value;

use crate::audit::AuditSink;

/// How a request reached us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    StreamableHttp,
    LegacySse,
    Stdio,
}

/// The record of one request; clones are the same record.
#[derive(Clone)]
pub struct RequestRecord(Arc<Entry>);

struct Entry {
    started: Instant,
    transport: Transport,
    sink: Option<AuditSink>,
    state: Mutex<State>,
}

struct State {
    event: AuditEvent,
    method: Option<String>,
}

impl RequestRecord {
    /// A request arriving at `endpoint`; nothing is known yet but the time and a trace id.
    pub fn arrive(endpoint: &str, transport: Transport, sink: Option<AuditSink>) -> Self {
        let event = AuditEvent::now(endpoint, uuid::Uuid::new_v4().simple().to_string());
        Self(Arc::new(Entry {
            started: Instant::now(),
            transport,
            sink,
            state: Mutex::new(State {
                event,
                method: None,
            }),
        }))
    }

    /// A record that is written nowhere (requests outside any endpoint).
    pub fn unrecorded() -> Self {
        Self::arrive("", Transport::StreamableHttp, None)
    }

    fn with<T>(&self, edit: impl FnOnce(&mut State) -> T) -> T {
        edit(&mut self.0.state.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub fn transport(&self) -> Transport {
        self.0.transport
    }

    pub fn trace_id(&self) -> String {
        self.with(|s| s.event.trace_id.clone())
    }

    /// Who is calling, once authentication said so.
    pub fn caller(&self, caller: &Caller) {
        self.with(|s| {
            s.event.client = Some(caller.client.clone());
            s.event.user = caller.user.clone();
        });
    }

    /// The JSON-RPC method, once the framing was read.
    pub fn method(&self, method: &str) {
        self.with(|s| s.method = Some(method.to_string()));
    }

    pub fn method_name(&self) -> Option<String> {
        self.with(|s| s.method.clone())
    }

    /// The call the dispatcher is about to run. Until it answers, the call counts as
    /// cancelled: a call dropped half-way is recorded as such.
    pub fn call(&self, tool: &str, rpc_id: Value) {
        self.with(|s| {
            s.event.tool = Some(tool.to_string());
            s.event.rpc_id = Some(rpc_id);
            s.event.outcome = Outcome::Cancelled;
            s.event.code = Some("cancelled".into());
        });
    }

    /// The tool a request names, when it is refused before the dispatcher saw it.
    pub fn tool(&self, tool: &str) {
        self.with(|s| s.event.tool = Some(tool.to_string()));
    }

    /// The arguments as the audit keeps them (injected names dropped, secrets redacted).
    pub fn arguments(&self, arguments: Value) {
        self.with(|s| s.event.arguments = Some(arguments));
    }

    /// How the request ended: the outcome, its code and what was answered (an error document
    /// for a refusal; secrets already redacted).
    pub fn outcome(&self, outcome: Outcome, code: Option<&str>, output: Option<Value>) {
        self.with(|s| {
            s.event.outcome = outcome;
            s.event.code = code.map(str::to_string);
            s.event.output = output;
        });
    }

    /// What the tool noted about the call (upstream request ids, …).
    pub fn notes(&self, notes: serde_json::Map<String, Value>) {
        if !notes.is_empty() {
            self.with(|s| s.event.notes = Some(notes));
        }
    }

    /// How many results a successful answer holds.
    pub fn result_count(&self, count: usize) {
        self.with(|s| s.event.result_count = Some(count));
    }

    /// The outcome so far.
    pub fn current_outcome(&self) -> Outcome {
        self.with(|s| s.event.outcome)
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        let event = &mut state.event;
        if std::thread::panicking() && event.outcome == Outcome::Cancelled {
            event.code = Some("panic".into());
        }
        if event.tool.is_none() && event.outcome == Outcome::Ok {
            return;
        }
        event.duration_ms =
            (self.started.elapsed().as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0;
        if let Some(sink) = &self.sink {
            sink.record(std::mem::take(event));
        }
    }
}
