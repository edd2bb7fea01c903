//! The process's metrics: what every request record, session and upstream call adds to, in one
//! Prometheus registry.
//!
//! Names follow OpenTelemetry's MCP conventions where they exist (`mcp.server.operation.duration`
//! → `mcp_server_operation_duration_seconds`, attribute dots → underscores, as the OTel →
//! Prometheus translation writes them); concierge's own are `concierge_*`. Every label value is
//! from a bounded set: method names from MCP's list, tool names only of tools an endpoint has,
//! client names only of the first [`MAX_CLIENTS`] seen (self-registered OAuth clients are made
//! by strangers), outcomes and codes from the platform's own enums. No user, chat or argument
//! ever becomes a label.
//!
//! Off (no `[metrics]`), nothing is installed and every recording is one `OnceLock` load.

use std::sync::OnceLock;
use std::time::Duration;

use concierge_core::Outcome;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

use super::labels::{BoundedNames, Transport, method_label, protocol_label};

/// Client names kept as label values; later ones are counted as `_other`.
pub const MAX_CLIENTS: usize = 200;

/// The MCP conventions' buckets (0.01 s … 300 s), below them the ones our sub-millisecond
/// calls need to be told apart.
const OPERATION_BUCKETS: [f64; 18] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0,
    120.0, 300.0,
];

const SESSION_BUCKETS: [f64; 12] = [
    1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, 14400.0, 86400.0,
];

const UPSTREAM_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0,
];

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// `mcp.server.operation.duration`'s attributes, plus the endpoint.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Operation {
    mcp_method_name: &'static str,
    gen_ai_tool_name: String,
    gen_ai_operation_name: &'static str,
    error_type: String,
    network_transport: &'static str,
    network_protocol_name: &'static str,
    mcp_protocol_version: &'static str,
    endpoint: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SessionEnd {
    network_transport: &'static str,
    network_protocol_name: &'static str,
    error_type: &'static str,
    endpoint: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Call {
    endpoint: String,
    client: String,
    tool: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Refused {
    endpoint: String,
    client: String,
    kind: &'static str,
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Upstream {
    upstream: &'static str,
    status_class: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointTool {
    endpoint: String,
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReloadOutcome {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OAuthEvent {
    event: &'static str,
}

/// The authorization server's audit codes that are counted; others are not.
const OAUTH_EVENTS: &[&str] = &[
    "token_issued",
    "token_refreshed",
    "token_revoked",
    "code_reuse",
    "refresh_token_reuse",
    "sign_in_failed",
    "sign_in_throttled",
    "client_registered",
    "registration_throttled",
    "client_authentication_failed",
    "authorization_granted",
    "authorization_denied",
    "authorization_refused",
    "authorization_throttled",
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TaskState {
    state: &'static str,
}

/// The registry and every family a request, session or upstream call adds to.
pub struct Metrics {
    pub(super) registry: Registry,
    operation: Histograms<Operation>,
    session: Histograms<SessionEnd>,
    calls: Family<Call, Counter>,
    refusals: Family<Refused, Counter>,
    upstream: Histograms<Upstream>,
    replays: Family<EndpointTool, Counter>,
    tasks: Family<TaskState, Counter>,
    oauth: Family<OAuthEvent, Counter>,
    reloads: Family<ReloadOutcome, Counter>,
    pub(super) snapshot: std::sync::Arc<super::snapshot::Snapshot>,
    clients: BoundedNames,
}

static METRICS: OnceLock<Metrics> = OnceLock::new();

/// The process's metrics, when `[metrics]` turned them on.
pub fn get() -> Option<&'static Metrics> {
    METRICS.get()
}

/// Turns metrics on for this process (idempotent).
pub fn enable() -> &'static Metrics {
    METRICS.get_or_init(Metrics::new)
}

/// What one finished request adds (from its record).
pub struct Finished<'a> {
    pub endpoint: &'a str,
    pub transport: Transport,
    pub method: Option<&'a str>,
    pub protocol: Option<&'a str>,
    /// The tool, when the endpoint has one of that name.
    pub tool: Option<&'a str>,
    pub client: Option<&'a str>,
    pub outcome: Outcome,
    pub code: Option<&'a str>,
    /// The tool ran (steps 8–12 let it through).
    pub ran: bool,
    pub elapsed: Duration,
}

impl Metrics {
    /// The registry in OpenMetrics text, with `samples` (read at this scrape) beside its own.
    pub fn encode_with(&self, samples: Vec<super::snapshot::Sample>) -> Option<String> {
        *self.snapshot.0.lock().unwrap_or_else(|p| p.into_inner()) = samples;
        let mut text = String::with_capacity(16 * 1024);
        prometheus_client::encoding::text::encode(&mut text, &self.registry).ok()?;
        Some(text)
    }

    fn new() -> Self {
        let mut registry = Registry::default();
        let operation: Histograms<Operation> =
            Family::new_with_constructor(|| Histogram::new(OPERATION_BUCKETS));
        registry.register_with_unit(
            "mcp_server_operation_duration",
            "MCP request or notification duration as observed on the receiver from the time it \
             was received until the result or ack is sent.",
            Unit::Seconds,
            operation.clone(),
        );
        let session: Histograms<SessionEnd> =
            Family::new_with_constructor(|| Histogram::new(SESSION_BUCKETS));
        registry.register_with_unit(
            "mcp_server_session_duration",
            "The duration of the MCP session as observed on the MCP server.",
            Unit::Seconds,
            session.clone(),
        );
        let calls = Family::<Call, Counter>::default();
        registry.register(
            "concierge_calls",
            "Tool calls that reached their tool, by outcome.",
            calls.clone(),
        );
        let refusals = Family::<Refused, Counter>::default();
        registry.register(
            "concierge_refusals",
            "Requests refused before a tool ran, by kind (auth, origin, session, scope, \
             rate_limit, validation, unknown_tool, request) and code.",
            refusals.clone(),
        );
        let upstream: Histograms<Upstream> =
            Family::new_with_constructor(|| Histogram::new(UPSTREAM_BUCKETS));
        registry.register_with_unit(
            "concierge_upstream_request_duration",
            "Requests to the systems the apps call (kgqa's Q&A API, Mappy's API, TYPO3), by \
             status class; `error` is no answer.",
            Unit::Seconds,
            upstream.clone(),
        );
        let replays = Family::<EndpointTool, Counter>::default();
        registry.register(
            "concierge_idempotent_replays",
            "Writes answered from their idempotency record instead of being made again.",
            replays.clone(),
        );
        let tasks = Family::<TaskState, Counter>::default();
        registry.register(
            "concierge_mcp_tasks",
            "MCP tasks by what happened to them (created, completed, failed).",
            tasks.clone(),
        );
        let oauth = Family::<OAuthEvent, Counter>::default();
        registry.register(
            "concierge_oauth_events",
            "The built-in authorization server's events: tokens issued, refreshed and revoked, \
             failed sign-ins, registrations, refused or throttled requests.",
            oauth.clone(),
        );
        let reloads = Family::<ReloadOutcome, Counter>::default();
        registry.register(
            "concierge_config_reloads",
            "Attempts to change the running config, by outcome (applied, rejected).",
            reloads.clone(),
        );
        let snapshot = std::sync::Arc::new(super::snapshot::Snapshot::default());
        registry.register_collector(Box::new(snapshot.clone()));
        Self {
            registry,
            oauth,
            reloads,
            snapshot,
            operation,
            session,
            calls,
            refusals,
            upstream,
            replays,
            tasks,
            clients: BoundedNames::new(MAX_CLIENTS),
        }
    }

    /// One request ended.
    pub fn finished(&self, request: &Finished<'_>) {
        let client = request
            .client
            .map(|c| self.clients.label(c))
            .unwrap_or_else(|| "_none".to_string());
        let tool = request.tool.unwrap_or("").to_string();
        let failed = request.outcome != Outcome::Ok;
        if let Some(method) = request.method {
            let error_type = match (failed, request.ran) {
                (false, _) => String::new(),
                // The conventions' word for a CallToolResult with isError.
                (true, true) => "tool_error".to_string(),
                (true, false) => request.code.unwrap_or(request.outcome.name()).into(),
            };
            let transport = match request.transport {
                Transport::Stdio => "pipe",
                _ => "tcp",
            };
            let labels = Operation {
                mcp_method_name: method_label(method),
                gen_ai_operation_name: if method == "tools/call" {
                    "execute_tool"
                } else {
                    ""
                },
                gen_ai_tool_name: tool.clone(),
                error_type,
                network_transport: transport,
                network_protocol_name: if request.transport == Transport::Stdio {
                    ""
                } else {
                    "http"
                },
                mcp_protocol_version: request.protocol.map(protocol_label).unwrap_or(""),
                endpoint: request.endpoint.to_string(),
            };
            self.operation
                .get_or_create(&labels)
                .observe(request.elapsed.as_secs_f64());
        }
        match refusal_kind(request.outcome, request.code, request.ran) {
            Some(kind) => {
                self.refusals
                    .get_or_create(&Refused {
                        endpoint: request.endpoint.to_string(),
                        client,
                        kind,
                        code: request.code.unwrap_or(request.outcome.name()).into(),
                    })
                    .inc();
            }
            None if request.ran => {
                self.calls
                    .get_or_create(&Call {
                        endpoint: request.endpoint.to_string(),
                        client,
                        tool,
                        outcome: request.outcome.name(),
                    })
                    .inc();
            }
            None => {}
        }
    }

    /// A stateful session ended after `lasted` (`reason`: "" when it was closed or idled out,
    /// `evicted` when its client's cap pushed it out).
    pub fn session_ended(&self, endpoint: &str, lasted: Duration, reason: &'static str) {
        self.session
            .get_or_create(&SessionEnd {
                network_transport: "tcp",
                network_protocol_name: "http",
                error_type: reason,
                endpoint: endpoint.to_string(),
            })
            .observe(lasted.as_secs_f64());
    }

    /// One request to an upstream ended (`status`: `None` when no answer came).
    pub fn upstream(&self, upstream: &'static str, status: Option<u16>, took: Duration) {
        let status_class = match status {
            Some(100..=199) => "1xx",
            Some(200..=299) => "2xx",
            Some(300..=399) => "3xx",
            Some(400..=499) => "4xx",
            Some(_) => "5xx",
            None => "error",
        };
        self.upstream
            .get_or_create(&Upstream {
                upstream,
                status_class,
            })
            .observe(took.as_secs_f64());
    }

    /// A reload of the config was applied or rejected.
    pub fn config_reload(&self, outcome: &'static str) {
        self.reloads.get_or_create(&ReloadOutcome { outcome }).inc();
    }

    /// A write was answered from its idempotency record.
    pub fn replayed(&self, endpoint: &str, tool: &str) {
        self.replays
            .get_or_create(&EndpointTool {
                endpoint: endpoint.to_string(),
                tool: tool.to_string(),
            })
            .inc();
    }

    /// The authorization server audited `event`.
    pub fn oauth(&self, event: &str) {
        if let Some(event) = OAUTH_EVENTS.iter().find(|e| **e == event) {
            self.oauth.get_or_create(&OAuthEvent { event }).inc();
        }
    }

    /// An MCP task was created, completed or failed.
    pub fn task(&self, state: &'static str) {
        self.tasks.get_or_create(&TaskState { state }).inc();
    }
}

/// Which kind of refusal a request's end is, if it is one.
fn refusal_kind(outcome: Outcome, code: Option<&str>, ran: bool) -> Option<&'static str> {
    let code = code.unwrap_or("");
    Some(match outcome {
        Outcome::Ok => return None,
        _ if code == "host_not_allowed" || code == "origin_not_allowed" => "origin",
        _ if code.starts_with("session") || code == "too_many_sessions" => "session",
        _ if code == "transport_unavailable" => "session",
        Outcome::Unauthorized => "auth",
        Outcome::Misconfigured => "auth",
        Outcome::Forbidden => "scope",
        Outcome::SessionRefused => "session",
        Outcome::RateLimited => "rate_limit",
        Outcome::UnknownTool => "unknown_tool",
        Outcome::InvalidArgument if ran => return None,
        Outcome::InvalidArgument if code == "invalid_argument" => "validation",
        Outcome::InvalidArgument => "request",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_told_apart_by_kind() {
        use Outcome::{Forbidden, InvalidArgument, NotFound, RateLimited, Unauthorized};
        let refused = [
            (Unauthorized, "unauthorized", "auth"),
            (Forbidden, "origin_not_allowed", "origin"),
            (Forbidden, "insufficient_scope", "scope"),
            (Forbidden, "session_not_owned", "session"),
            (RateLimited, "rate_limited", "rate_limit"),
            (InvalidArgument, "invalid_argument", "validation"),
            (InvalidArgument, "body_too_large", "request"),
        ];
        for (outcome, code, kind) in refused {
            assert_eq!(
                refusal_kind(outcome, Some(code), false),
                Some(kind),
                "{code}"
            );
        }
        // A tool that answered "invalid argument" itself ran: a call, not a refusal.
        let ran = [
            (InvalidArgument, "bad_date"),
            (NotFound, "not_found"),
            (Outcome::Ok, ""),
        ];
        for (outcome, code) in ran {
            assert_eq!(refusal_kind(outcome, Some(code), true), None, "{code}");
        }
    }
}
