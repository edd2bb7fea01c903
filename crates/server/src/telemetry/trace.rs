//! OpenTelemetry traces: a SERVER span per MCP request, child spans for the steps that take
//! time, a CLIENT span per upstream request; exported over OTLP/HTTP.
//!
//! Spans are `tracing` spans (target [`TARGET`], level DEBUG, so the log output at its default
//! level never formats them) bridged by `tracing-opentelemetry`. Turned on by the standard
//! variables — `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` —, off with
//! `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`; the exporter, sampler, batch and
//! resource read the rest of `OTEL_*` themselves. Off, no layer is interested in the spans and
//! each one costs a disabled-callsite check.
//!
//! The request span's trace id is the audit record's `trace_id`: from a client's `traceparent`
//! (header, or `_meta.traceparent` in the request) when it sent one, otherwise the one
//! OpenTelemetry drew. An operator goes from an audit line to its trace and back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use concierge_core::observe::{Observer, UpstreamSpan};
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The target of every span concierge exports.
pub const TARGET: &str = "concierge::trace";

static ON: AtomicBool = AtomicBool::new(false);

/// Whether spans are exported in this process.
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Whether the `OTEL_*` variables in `env` ask for traces.
pub fn wanted(env: &dyn Fn(&str) -> Option<String>) -> bool {
    let set = |name: &str| env(name).is_some_and(|v| !v.trim().is_empty());
    let disabled = env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
        || env("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim().eq_ignore_ascii_case("none"));
    !disabled && (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
}

/// The tracer provider the OTLP exporter feeds; [`SdkTracerProvider::shutdown`] flushes it.
pub fn provider() -> Result<SdkTracerProvider, String> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()
        .map_err(|e| format!("OTLP exporter: {e}"))?;
    let mut resource = opentelemetry_sdk::Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("concierge");
    }
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build();
    ON.store(true, Ordering::Relaxed);
    Ok(provider)
}

/// The layer that turns our spans into OpenTelemetry spans.
pub fn layer<S>(provider: &SdkTracerProvider) -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("concierge"))
        .with_tracked_inactivity(false)
}

struct One<'a>(&'a str);

impl Extractor for One<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        (key == "traceparent").then_some(self.0)
    }
    fn keys(&self) -> Vec<&str> {
        vec!["traceparent"]
    }
}

#[derive(Default)]
struct Out(Option<String>);

impl Injector for Out {
    fn set(&mut self, key: &str, value: String) {
        if key == "traceparent" {
            self.0 = Some(value);
        }
    }
}

/// Makes `span` a child of the caller's `traceparent` (a malformed one is ignored). Only before
/// the span's trace id was read: after that it is fixed.
pub fn continue_from(span: &Span, traceparent: &str) {
    if !on() || traceparent.len() > 128 {
        return;
    }
    let context = TraceContextPropagator::new().extract(&One(traceparent));
    if context.span().span_context().is_valid() {
        let _ = span.set_parent(context);
    }
}

/// The span's trace id in hex, when it is exported.
pub fn trace_id(span: &Span) -> Option<String> {
    if !on() || span.is_none() {
        return None;
    }
    let context = span.context();
    let span_context = context.span().span_context().clone();
    span_context
        .is_valid()
        .then(|| span_context.trace_id().to_string())
}

/// The `traceparent` that names `span` to a system we call.
pub fn traceparent(span: &Span) -> Option<String> {
    if !on() || span.is_none() {
        return None;
    }
    let mut out = Out::default();
    TraceContextPropagator::new().inject_context(&span.context(), &mut out);
    out.0
}

/// The platform's [`Observer`]: each upstream request is a CLIENT span (a child of the call
/// that made it) and a sample of `concierge_upstream_request_duration_seconds`.
pub struct PlatformObserver;

impl Observer for PlatformObserver {
    fn upstream(&self, upstream: &'static str, method: &str, url: &str) -> Box<dyn UpstreamSpan> {
        let span = if on() {
            // Scheme, host and path: a query may hold a key.
            let url = url.split(['?', '#']).next().unwrap_or_default();
            let host = url
                .split("://")
                .nth(1)
                .and_then(|rest| rest.split('/').next())
                .unwrap_or_default()
                .rsplit('@')
                .next()
                .unwrap_or_default();
            tracing::debug_span!(
                target: TARGET,
                "upstream",
                otel.name = method,
                otel.kind = "client",
                otel.status_code = tracing::field::Empty,
                http.request.method = method,
                http.response.status_code = tracing::field::Empty,
                server.address = host,
                url.full = url,
                concierge.upstream = upstream,
            )
        } else {
            Span::none()
        };
        Box::new(Upstream {
            upstream,
            span,
            started: Instant::now(),
        })
    }
}

struct Upstream {
    upstream: &'static str,
    span: Span,
    started: Instant,
}

impl UpstreamSpan for Upstream {
    fn headers(&self) -> Vec<(&'static str, String)> {
        traceparent(&self.span)
            .map(|value| vec![("traceparent", value)])
            .unwrap_or_default()
    }

    fn finish(self: Box<Self>, status: Option<u16>) {
        if let Some(metrics) = super::metrics::get() {
            metrics.upstream(self.upstream, status, self.started.elapsed());
        }
        match status {
            Some(status) => {
                self.span.record("http.response.status_code", status);
                if status >= 500 {
                    self.span.record("otel.status_code", "error");
                }
            }
            None => {
                self.span.record("otel.status_code", "error");
            }
        }
    }
}
