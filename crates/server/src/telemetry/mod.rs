//! What an operator sees of a running deployment: logs (text or JSON), Prometheus metrics, and
//! OpenTelemetry traces — all three fed by the one record each request has
//! ([`crate::pipeline::RequestRecord`]), so they agree with the audit.

pub mod labels;
pub mod metrics;
pub mod snapshot;
pub mod trace;

use tracing_subscriber::Layer;

use crate::config::BoundUrls;
pub use crate::config::LogFormat;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The log format a command runs with, decided before its config is loaded (what loading logs
/// is written in it too): `CONCIERGE_LOG_FORMAT`, else `[server] log_format` as the file writes
/// it (`${VAR:-default}` read from the environment), else text.
pub fn log_format_of(config: &std::path::Path) -> LogFormat {
    if let Some(format) = std::env::var("CONCIERGE_LOG_FORMAT")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return format;
    }
    let written = std::fs::read_to_string(config)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .and_then(|table| {
            table
                .get("server")?
                .get("log_format")?
                .as_str()
                .map(String::from)
        });
    let Some(written) = written else {
        return LogFormat::Text;
    };
    let env = |name: &str| std::env::var(name).ok();
    crate::config::interpolate::substitute(&written, &env, &BoundUrls::default())
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_default()
}

/// Flushes the spans still queued when it is dropped (at the end of `main`).
pub struct Telemetry {
    provider: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            let _ = provider.shutdown();
        }
    }
}

/// Installs the process's subscriber: logs to stderr in `format`, filtered by `RUST_LOG` or
/// `default_filter`; spans to OTLP when the `OTEL_*` variables ask for it. Also installs the
/// upstream [`trace::PlatformObserver`].
pub fn init(format: LogFormat, default_filter: &str) -> Telemetry {
    let filter = || {
        tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| default_filter.into())
    };
    let logs = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_filter(filter())
            .boxed(),
        // The request spans are shown to this layer too, so a line a call writes carries the
        // call's `trace_id` (in `spans`); text output leaves them out, as it has no use for them.
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(true)
            .with_writer(std::io::stderr)
            .with_filter(
                filter().add_directive(
                    format!("{}=debug", trace::TARGET)
                        .parse()
                        .expect("a valid directive"),
                ),
            )
            .boxed(),
    };
    let env = |name: &str| std::env::var(name).ok();
    let mut provider = None;
    let mut problem = None;
    let spans = if trace::wanted(&env) {
        match trace::provider() {
            Ok(made) => {
                let layer = trace::layer(&made)
                    .with_filter(
                        tracing_subscriber::filter::Targets::new()
                            .with_target(trace::TARGET, tracing::Level::DEBUG),
                    )
                    .boxed();
                provider = Some(made);
                Some(layer)
            }
            Err(error) => {
                problem = Some(error);
                None
            }
        }
    } else {
        None
    };
    let _ = tracing_subscriber::registry()
        .with(logs)
        .with(spans)
        .try_init();
    if let Some(problem) = problem {
        tracing::error!(%problem, "traces are not exported");
    }
    concierge_core::observe::install(Box::new(trace::PlatformObserver));
    Telemetry { provider }
}
