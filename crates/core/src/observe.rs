//! What an app tells the platform about the systems it calls, so that an operator can graph and
//! trace them — without the app knowing about Prometheus or OpenTelemetry.
//!
//! An app wraps each request to an upstream (the Q&A API, Mappy's API, TYPO3) in an
//! [`UpstreamCall`]: it adds the call's [`headers`](UpstreamCall::headers) (W3C `traceparent`, when
//! tracing is on) to the request, and [`finish`](UpstreamCall::finish)es it with the status. The
//! platform installs the [`Observer`] that turns this into a duration histogram and a CLIENT span;
//! with none installed (tests, `check`) a call costs a branch.
//!
//! ```
//! use concierge_core::observe::UpstreamCall;
//!
//! let call = UpstreamCall::start("kgqa", "POST", "http://127.0.0.1:9/qa");
//! for (name, value) in call.headers() {
//!     // request = request.header(name, value);
//!     let _ = (name, value);
//! }
//! call.finish(Some(200));
//! ```

use std::sync::OnceLock;

/// The platform's side: one per process, installed at start.
pub trait Observer: Send + Sync + 'static {
    /// A request to `upstream` (a short, fixed name such as `kgqa`) is about to be sent.
    fn upstream(&self, upstream: &'static str, method: &str, url: &str) -> Box<dyn UpstreamSpan>;
}

/// One upstream request in flight, as the observer keeps it.
pub trait UpstreamSpan: Send {
    /// Headers to send with the request (`traceparent`).
    fn headers(&self) -> Vec<(&'static str, String)>;
    /// The request ended: with the HTTP status, or `None` when no answer came.
    fn finish(self: Box<Self>, status: Option<u16>);
}

static OBSERVER: OnceLock<Box<dyn Observer>> = OnceLock::new();

/// Installs the process's observer; the first one stays.
pub fn install(observer: Box<dyn Observer>) {
    let _ = OBSERVER.set(observer);
}

/// One request to an upstream. Dropped without [`finish`](Self::finish) (an error path, a
/// cancelled call), it counts as a request that got no answer.
pub struct UpstreamCall(Option<Box<dyn UpstreamSpan>>);

impl UpstreamCall {
    /// `url` may carry a query: the observer keeps only the scheme, host and path.
    pub fn start(upstream: &'static str, method: &str, url: &str) -> Self {
        Self(OBSERVER.get().map(|o| o.upstream(upstream, method, url)))
    }

    /// The headers to add to the request.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        self.0.as_ref().map(|s| s.headers()).unwrap_or_default()
    }

    /// The upstream answered with `status` (`None`: it did not answer).
    pub fn finish(mut self, status: Option<u16>) {
        if let Some(span) = self.0.take() {
            span.finish(status);
        }
    }
}

impl Drop for UpstreamCall {
    fn drop(&mut self) {
        if let Some(span) = self.0.take() {
            span.finish(None);
        }
    }
}

/// A value an app reports about itself when the platform is asked (a scrape of `/metrics`):
/// `name` without a prefix (the platform adds `concierge_<app>_`), at most a few fixed labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub name: &'static str,
    pub help: &'static str,
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
}

impl Reading {
    pub fn new(name: &'static str, help: &'static str, value: f64) -> Self {
        Self {
            name,
            help,
            labels: Vec::new(),
            value,
        }
    }

    pub fn label(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.labels.push((name, value.into()));
        self
    }
}
