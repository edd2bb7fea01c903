//! A fault proxy: a small HTTP server on loopback that stands between concierge and an upstream
//! (a simulator, or a test's own server) and, while a fault is switched on, misbehaves the way
//! networks and overloaded services do. Faults are switched at run time, so one server process
//! meets every fault and then the recovery, with nothing restarted.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use bytes::Bytes;

/// How the proxy treats the next requests.
#[derive(Debug, Clone)]
pub enum Fault {
    /// Forwards as it is.
    Pass,
    /// Forwards after a pause.
    Latency(Duration),
    /// Sends the upstream's status and headers and half its body, then cuts the connection.
    ResetMidBody,
    /// Sends the upstream's answer a byte at a time, one every `Duration`.
    Trickle(Duration),
    /// Sends the first half of the upstream's body as if it were all of it (a valid HTTP answer
    /// whose JSON ends mid-way).
    TruncatedJson,
    /// Answers `status` itself for the next `times` requests (a burst), then forwards again.
    Status { status: u16, times: usize },
    /// Answers `status` with `Retry-After: seconds`, every time.
    RetryAfter { status: u16, seconds: u64 },
    /// Forwards the next `passes` requests, then becomes `then` (a fault in the middle of an
    /// exchange of several requests).
    After { passes: usize, then: Box<Fault> },
    /// Answers `status` with `body` for the next `times` requests (an API's own error shape).
    Canned {
        status: u16,
        body: &'static str,
        times: usize,
    },
}

#[derive(Clone)]
struct Shared {
    target: String,
    fault: Arc<Mutex<Fault>>,
    /// Only requests whose path holds this meet the fault; the rest pass.
    only: Arc<Mutex<Option<String>>>,
    requests: Arc<AtomicUsize>,
    http: reqwest::Client,
}

pub struct FaultProxy {
    /// `http://127.0.0.1:<port>`: give this to concierge as the upstream's base URL.
    pub base: String,
    shared: Shared,
}

impl FaultProxy {
    /// A proxy on a free loopback port in front of `target` (a base URL), passing at first.
    pub async fn start(target: &str) -> Self {
        let shared = Shared {
            target: target.trim_end_matches('/').to_string(),
            fault: Arc::new(Mutex::new(Fault::Pass)),
            only: Arc::default(),
            requests: Arc::default(),
            http: reqwest::Client::builder()
                .no_proxy()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
        };
        let app = axum::Router::new()
            .fallback(forward)
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { base, shared }
    }

    pub fn set(&self, fault: Fault) {
        *self.shared.only.lock().unwrap() = None;
        *self.shared.fault.lock().unwrap() = fault;
    }

    /// `fault` for requests whose path holds `path` (one method of an API); the rest pass.
    pub fn set_on(&self, path: &str, fault: Fault) {
        *self.shared.only.lock().unwrap() = Some(path.to_string());
        *self.shared.fault.lock().unwrap() = fault;
    }

    /// Requests that reached the proxy so far.
    pub fn requests(&self) -> usize {
        self.shared.requests.load(Ordering::SeqCst)
    }
}

async fn forward(State(shared): State<Shared>, request: Request) -> Response {
    shared.requests.fetch_add(1, Ordering::SeqCst);
    let chosen = shared
        .only
        .lock()
        .unwrap()
        .as_ref()
        .is_none_or(|only| request.uri().path().contains(only.as_str()));
    // A burst counts down and ends by itself.
    let fault = match chosen {
        false => Fault::Pass,
        true => {
            let mut fault = shared.fault.lock().unwrap();
            if let Fault::After { passes: 0, then } = &*fault {
                *fault = (**then).clone();
            }
            let now = fault.clone();
            if let Fault::After { passes, .. } = &mut *fault {
                *passes -= 1;
            }
            if let Fault::Status { times, .. } | Fault::Canned { times, .. } = &mut *fault {
                *times = times.saturating_sub(1);
                if *times == 0 {
                    *fault = Fault::Pass;
                }
            }
            now
        }
    };
    match fault {
        Fault::Status { status, .. } => {
            return answer(status, &[], Body::from(r#"{"message":"injected fault"}"#));
        }
        Fault::Canned { status, body, .. } => return answer(status, &[], Body::from(body)),
        Fault::RetryAfter { status, seconds } => {
            return answer(
                status,
                &[("retry-after", seconds.to_string())],
                Body::from(r#"{"message":"slow down"}"#),
            );
        }
        Fault::Latency(pause) => tokio::time::sleep(pause).await,
        _ => {}
    }
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 16 << 20)
        .await
        .unwrap_or_default();
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let mut upstream = shared
        .http
        .request(parts.method.clone(), format!("{}{path}", shared.target))
        .body(body);
    for (name, value) in &parts.headers {
        if !matches!(name.as_str(), "host" | "content-length" | "connection") {
            upstream = upstream.header(name, value);
        }
    }
    let Ok(response) = upstream.send().await else {
        return answer(502, &[], Body::from("the proxy's upstream is down"));
    };
    let status = response.status().as_u16();
    let headers: Vec<(String, String)> = response
        .headers()
        .iter()
        .filter(|(name, _)| {
            !matches!(
                name.as_str(),
                "content-length" | "transfer-encoding" | "connection"
            )
        })
        .filter_map(|(n, v)| Some((n.to_string(), v.to_str().ok()?.to_string())))
        .collect();
    let bytes = response.bytes().await.unwrap_or_default();
    let half = bytes.slice(..bytes.len() / 2);
    let body = match fault {
        Fault::TruncatedJson => Body::from(half),
        Fault::ResetMidBody => Body::from_stream(futures::stream::iter([
            Ok(half),
            Err(std::io::Error::other("injected reset")),
        ])),
        Fault::Trickle(every) => Body::from_stream(futures::stream::unfold(0usize, move |at| {
            let bytes = bytes.clone();
            async move {
                if at >= bytes.len() {
                    return None;
                }
                tokio::time::sleep(every).await;
                Some((Ok::<Bytes, std::io::Error>(bytes.slice(at..at + 1)), at + 1))
            }
        })),
        _ => Body::from(bytes),
    };
    let headers: Vec<(&str, String)> = headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.clone()))
        .collect();
    answer(status, &headers, body)
}

fn answer(status: u16, headers: &[(&str, String)], body: Body) -> Response {
    let mut response = Response::builder().status(status);
    if !headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
    {
        response = response.header("content-type", "application/json");
    }
    for (name, value) in headers {
        response = response.header(*name, value);
    }
    response.body(body).unwrap()
}

/// The process's open file descriptors (sockets included), from /proc.
pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|entries| entries.count())
        .unwrap_or(0)
}

/// A base URL whose host can never resolve (RFC 6761 reserves `.invalid`).
pub const UNRESOLVABLE: &str = "http://upstream.invalid:8080";

/// A base URL that speaks https to a plain-HTTP port: the TLS handshake fails.
pub fn tls_mismatch(proxy: &FaultProxy) -> String {
    proxy.base.replacen("http://", "https://", 1)
}
