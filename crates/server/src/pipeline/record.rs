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
//! `initialize`, a `tools/list`, a notification) is recorded and not written.
//!
//! The same end makes the request's metrics (`mcp_server_operation_duration_seconds`, calls,
//! refusals) and closes its SERVER span, whose trace id is the audit line's `trace_id`.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use concierge_core::{AuditEvent, Caller, Outcome};
use serde_json::Value;

use crate::audit::AuditSink;
pub use crate::telemetry::labels::Transport;

/// The record of one request; clones are the same record.
#[derive(Clone)]
pub struct RequestRecord(Arc<Entry>);

struct Entry {
    started: Instant,
    transport: Transport,
    sink: Option<AuditSink>,
    /// The request's SERVER span (disabled unless traces are exported).
    span: tracing::Span,
    state: Mutex<State>,
}

struct State {
    event: AuditEvent,
    method: Option<String>,
    /// `MCP-Protocol-Version`, when the client sent a known one.
    protocol: Option<&'static str>,
    /// The tool ran: steps 8–12 let the call through.
    ran: bool,
    /// The trace id was read (by a refusal, the tool, the audit): the span's parent is fixed.
    traced: bool,
}

impl RequestRecord {
    /// A request arriving at `endpoint`; nothing is known yet but the time and a trace id.
    pub fn arrive(endpoint: &str, transport: Transport, sink: Option<AuditSink>) -> Self {
        let event = AuditEvent::now(endpoint, String::new());
        let span = tracing::debug_span!(
            target: crate::telemetry::trace::TARGET,
            "mcp.request",
            otel.name = tracing::field::Empty,
            otel.kind = "server",
            otel.status_code = tracing::field::Empty,
            mcp.method.name = tracing::field::Empty,
            gen_ai.tool.name = tracing::field::Empty,
            gen_ai.operation.name = tracing::field::Empty,
            jsonrpc.request.id = tracing::field::Empty,
            mcp.session.id = tracing::field::Empty,
            mcp.protocol.version = tracing::field::Empty,
            network.transport = if transport == Transport::Stdio { "pipe" } else { "tcp" },
            error.type = tracing::field::Empty,
            concierge.endpoint = endpoint,
            concierge.client = tracing::field::Empty,
            trace_id = tracing::field::Empty,
        );
        Self(Arc::new(Entry {
            started: Instant::now(),
            transport,
            sink,
            span,
            state: Mutex::new(State {
                event,
                method: None,
                protocol: None,
                ran: false,
                traced: false,
            }),
        }))
    }

    /// The request's span: steps and the tool run inside it.
    pub fn span(&self) -> &tracing::Span {
        &self.0.span
    }

    /// The client's `traceparent` (a header, or `_meta.traceparent`): this request continues its
    /// trace. The first one given counts; one given after the trace id was read is ignored.
    pub fn continue_trace(&self, traceparent: &str) {
        self.with(|s| {
            if !s.traced {
                s.traced = true;
                crate::telemetry::trace::continue_from(&self.0.span, traceparent);
            }
        });
    }

    /// The `MCP-Protocol-Version` the client sent.
    pub fn protocol(&self, version: &str) {
        let version = crate::telemetry::labels::protocol_label(version);
        self.0.span.record("mcp.protocol.version", version);
        self.with(|s| s.protocol = Some(version));
    }

    /// The session the request belongs to.
    pub fn session(&self, session: &str) {
        self.0.span.record("mcp.session.id", session);
    }

    /// The tool is about to run: everything before it let the call through.
    pub fn running(&self) {
        self.with(|s| s.ran = true);
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

    /// The request's trace id: the span's when traces are exported (so the audit line and the
    /// trace name each other), otherwise one drawn here.
    pub fn trace_id(&self) -> String {
        self.with(|s| {
            s.traced = true;
            if s.event.trace_id.is_empty() {
                s.event.trace_id = draw_trace_id(&self.0.span);
                self.0.span.record("trace_id", s.event.trace_id.as_str());
            }
            s.event.trace_id.clone()
        })
    }

    /// Who is calling, once authentication said so.
    pub fn caller(&self, caller: &Caller) {
        self.0
            .span
            .record("concierge.client", caller.client.as_str());
        self.with(|s| {
            s.event.client = Some(caller.client.clone());
            s.event.user = caller.user.clone();
        });
    }

    /// The JSON-RPC method, once the framing was read.
    pub fn method(&self, method: &str) {
        let span = &self.0.span;
        if !span.is_disabled() {
            let method = crate::telemetry::labels::method_label(method);
            span.record("mcp.method.name", method);
            span.record("otel.name", method);
        }
        self.with(|s| s.method = Some(method.to_string()));
    }

    pub fn method_name(&self) -> Option<String> {
        self.with(|s| s.method.clone())
    }

    /// The call the dispatcher is about to run. Until it answers, the call counts as
    /// cancelled: a call dropped half-way is recorded as such.
    pub fn call(&self, tool: &str, rpc_id: Value) {
        let span = &self.0.span;
        if !span.is_disabled() {
            // The name is the client's: an unknown one can be long, a span name should not be.
            let tool = match tool.char_indices().nth(128) {
                Some((end, _)) => &tool[..end],
                None => tool,
            };
            span.record("otel.name", format!("tools/call {tool}"));
            span.record("gen_ai.tool.name", tool);
            span.record("gen_ai.operation.name", "execute_tool");
            span.record("jsonrpc.request.id", rpc_id.to_string());
        }
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
    pub fn outcome(
        &self,
        outcome: Outcome,
        code: Option<&str>,
        output: Option<Box<serde_json::value::RawValue>>,
    ) {
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

/// The span's trace id when traces are exported, otherwise a fresh one of the same form.
fn draw_trace_id(span: &tracing::Span) -> String {
    crate::telemetry::trace::trace_id(span)
        .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string())
}

impl Drop for Entry {
    fn drop(&mut self) {
        let elapsed = self.started.elapsed();
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        let event = &mut state.event;
        if std::thread::panicking() && event.outcome == Outcome::Cancelled {
            event.code = Some("panic".into());
        }
        if event.outcome != Outcome::Ok && !self.span.is_disabled() {
            let error_type = match (state.ran, event.code.as_deref()) {
                (true, _) => "tool_error",
                (false, Some(code)) => code,
                (false, None) => event.outcome.name(),
            };
            self.span.record("error.type", error_type);
            self.span.record("otel.status_code", "error");
        }
        if let Some(metrics) = crate::telemetry::metrics::get() {
            metrics.finished(&crate::telemetry::metrics::Finished {
                endpoint: &event.endpoint,
                transport: self.transport,
                method: state.method.as_deref(),
                protocol: state.protocol,
                tool: event
                    .tool
                    .as_deref()
                    .filter(|_| event.outcome != Outcome::UnknownTool),
                client: event.client.as_deref(),
                outcome: event.outcome,
                code: event.code.as_deref(),
                ran: state.ran,
                elapsed,
            });
        }
        if event.tool.is_none() && event.outcome == Outcome::Ok {
            return;
        }
        if event.trace_id.is_empty() {
            event.trace_id = draw_trace_id(&self.span);
        }
        event.duration_ms = (elapsed.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0;
        if let Some(sink) = &self.sink {
            sink.record(std::mem::take(event));
        }
    }
}
