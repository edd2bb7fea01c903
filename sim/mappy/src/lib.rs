//! **A simulator** of Mappy's Laravel API for MCP (`/api/mcp/*`, `docs/contracts/mappy-api.md`),
//! serving the sample data in `examples/mappy/sample.json`. It is not Mappy and does not talk to
//! Google: it exists so the demo has a Mappy to manage and the tests have a real HTTP server that
//! keeps Mappy's rules. Production configs have no `[simulators.mappy]`; they point concierge at
//! the real API, and a production build (`--no-default-features`) has no simulators at all. The
//! contract between the two sides is the JSON of `docs/contracts/mappy-api.md`: the Mappy app
//! shares no Rust types with this crate, so nothing here is a copy of the app's.
//!
//! What it keeps, because concierge must be built around it:
//!
//! - **The API owns tenancy** ([`tenancy`]). concierge says which Mappy user it acts for; the
//!   simulator decides what that user may see, and a hidden location answers exactly like an
//!   unknown one.
//! - **Writes are asynchronous** ([`writes`], [`jobs`]). A write answers 202 with a `batch_id`; a
//!   background job applies it later and may fail per location.
//! - **The API has its own duplicate guard** (`Idempotency-Key`), so a retried write creates
//!   nothing new.
//! - **Laravel's manners** ([`laravel`]): `{"message"}` errors, 422 with `errors` per field.
//!
//! And what a test needs to provoke, through the [`Laravel`] handle: jobs held or failing, the next
//! requests failing with a debug page full of secrets (stack trace, server paths, a database
//! address) that must never reach a client, slow answers, writes answered long after they were
//! accepted, and a whole API that is down.
//!
//! Layout: [`data`] the sample and its checks · [`tenancy`] acting user, scopes, sign-in ·
//! [`reads`] and [`writes`] the endpoints · [`jobs`] batches · [`laravel`] error shapes and query
//! strings · this file: config, start-up, routes, and the gate every request passes first.

// Handlers answer early with a whole `Response` (Laravel's error pages); a simulator's error path
// is not hot, so boxing them would only add noise.
#![allow(clippy::result_large_err)]

mod data;
mod jobs;
mod laravel;
mod reads;
mod tenancy;
mod writes;

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde::Deserialize;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::watch;

pub use data::Sample;
use laravel::message;

/// Where the API lives under the base URL.
pub const API_PREFIX: &str = "/api/mcp";
const HEALTH_PATH: &str = "/api/mcp/health";
const SIGN_IN_PATH: &str = "/api/mcp/auth/sign-in";
const REQUEST_ID_HEADER: &str = "x-request-id";

/// The `[simulators.mappy]` section.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulatorConfig {
    /// The loopback address the simulator listens on (port 0 picks a free one).
    pub listen: String,
    /// The sample data (`examples/mappy/sample.json`).
    pub data: PathBuf,
    /// The service key the simulated API accepts as `Authorization: Bearer …`.
    pub api_key: String,
    /// How long a queued batch waits before its job runs.
    #[schemars(with = "String", extend("x-type" = "duration"))]
    #[serde(default = "default_job_delay", with = "humantime_serde")]
    pub job_delay: Duration,
}

fn default_job_delay() -> Duration {
    Duration::from_secs(2)
}

/// Binds `listen` now (loopback only; a port clash fails start-up; port 0 picks a free one), loads
/// the data, and returns the address it got and the serving future.
pub async fn start(
    config: &SimulatorConfig,
) -> Result<(SocketAddr, Pin<Box<dyn Future<Output = ()> + Send>>), String> {
    if config.api_key.is_empty() {
        return Err("mappy simulator: api_key must not be empty".into());
    }
    let job_delay = config.job_delay;
    let (listener, addr) = concierge_sim_common::bind(&config.listen).await?;
    let sample = Sample::load(&config.data)?;
    let (router, _) = build(sample, &config.api_key, job_delay, addr);
    let serving: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(async move {
        if let Err(error) = axum::serve(listener, router).await {
            tracing::debug!(%error, "mappy simulator stopped");
        }
    });
    Ok((addr, serving))
}

/// Serves on `listener` in a background task and returns the handle (for tests, which bind
/// `127.0.0.1:0` themselves).
pub async fn serve(
    listener: TcpListener,
    sample: Sample,
    api_key: &str,
    job_delay: Duration,
) -> Laravel {
    let addr = local_addr(&listener);
    let (router, laravel) = build(sample, api_key, job_delay, addr);
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            tracing::debug!(%error, "mappy simulator stopped");
        }
    });
    laravel
}

fn local_addr(listener: &TcpListener) -> SocketAddr {
    listener
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
}

/// A handle to a running simulator: its address, what it has seen, and switches for tests.
#[derive(Clone)]
pub struct Laravel {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl Laravel {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every write request received (POST, PUT, PATCH, DELETE except sign-in), whatever became
    /// of it: dry runs, replays, refusals.
    pub fn write_requests(&self) -> usize {
        self.shared.write_requests.load(Ordering::SeqCst)
    }

    /// Batches actually created: what "exactly one write happened" counts.
    pub fn batches_created(&self) -> usize {
        self.shared.batches_created.load(Ordering::SeqCst)
    }

    /// While held, batches stay `queued`; releasing lets the waiting ones run.
    pub fn hold_jobs(&self, hold: bool) {
        self.shared.held.send_replace(hold);
    }

    /// Every item of every batch that runs from now on fails, as if Google answered 503.
    pub fn fail_jobs(&self, fail: bool) {
        self.shared.failing.store(fail, Ordering::SeqCst);
    }

    /// The next `count` requests (any but health) answer `status` with Laravel's debug error body.
    pub fn fail_next(&self, count: usize, status: u16) {
        *lock(&self.shared.fail_next) = (count, status);
    }

    /// The next `count` requests (any but health) wait `wait` before being handled.
    pub fn hang_next(&self, count: usize, wait: Duration) {
        *lock(&self.shared.hang_next) = (count, wait);
    }

    /// The next `count` write requests are handled at once — a write is accepted, its batch
    /// created and its key remembered — and answered only after `wait`: a caller that dies in
    /// that time never learns that its write went through.
    pub fn answer_writes_late(&self, count: usize, wait: Duration) {
        *lock(&self.shared.answer_late) = (count, wait);
    }

    /// While down, every request, health included, answers 503 (Laravel's maintenance mode).
    pub fn set_down(&self, down: bool) {
        self.shared.down.store(down, Ordering::SeqCst);
    }
}

/// The state every handler shares. Locks are `std` ones, never held across an `.await`.
pub(crate) struct Shared {
    api_key: String,
    job_delay: Duration,
    world: Mutex<World>,
    write_requests: AtomicUsize,
    batches_created: AtomicUsize,
    /// `true` while jobs are held; jobs wait on it without polling.
    held: watch::Sender<bool>,
    failing: AtomicBool,
    down: AtomicBool,
    /// `(requests left, status)`.
    fail_next: Mutex<(usize, u16)>,
    /// `(requests left, wait)`.
    hang_next: Mutex<(usize, Duration)>,
    /// `(write requests left, wait)`: handled first, answered after the wait.
    answer_late: Mutex<(usize, Duration)>,
}

/// What the API stores: the sample (changed by jobs), the batches, the remembered writes.
pub(crate) struct World {
    sample: Sample,
    batches: HashMap<String, jobs::Batch>,
    /// Accepted writes by `(acting user, Idempotency-Key)`.
    remembered: HashMap<(u64, String), writes::Remembered>,
}

impl Shared {
    fn world(&self) -> MutexGuard<'_, World> {
        lock(&self.world)
    }
}

/// A lock that a panicking holder left poisoned is still usable: the data is plain values.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Takes one from a `(count, value)` switch, if any is left.
fn take_one<T: Copy>(slot: &Mutex<(usize, T)>) -> Option<T> {
    let mut slot = lock(slot);
    if slot.0 == 0 {
        return None;
    }
    slot.0 -= 1;
    Some(slot.1)
}

fn build(
    sample: Sample,
    api_key: &str,
    job_delay: Duration,
    addr: SocketAddr,
) -> (Router, Laravel) {
    let (held, _) = watch::channel(false);
    let shared = Arc::new(Shared {
        api_key: api_key.to_owned(),
        job_delay,
        world: Mutex::new(World {
            sample,
            batches: HashMap::new(),
            remembered: HashMap::new(),
        }),
        write_requests: AtomicUsize::new(0),
        batches_created: AtomicUsize::new(0),
        held,
        failing: AtomicBool::new(false),
        down: AtomicBool::new(false),
        fail_next: Mutex::new((0, 500)),
        hang_next: Mutex::new((0, Duration::ZERO)),
        answer_late: Mutex::new((0, Duration::ZERO)),
    });
    let router = routes(Arc::clone(&shared));
    (router, Laravel { addr, shared })
}

/// The simulated API as an axum router.
fn routes(shared: Arc<Shared>) -> Router {
    Router::new()
        .route(HEALTH_PATH, get(reads::health))
        .route(SIGN_IN_PATH, post(tenancy::sign_in))
        .route("/api/mcp/groups", get(reads::groups))
        .route("/api/mcp/locations", get(reads::locations))
        .route("/api/mcp/locations/{id}", get(reads::location))
        .route("/api/mcp/locations/{id}/reviews", get(reads::reviews))
        .route("/api/mcp/locations/{id}/insights", get(reads::insights))
        .route("/api/mcp/locations/{id}/posts", get(reads::posts))
        .route("/api/mcp/locations/{id}/hours", put(writes::hours))
        .route("/api/mcp/reviews/{id}/reply", post(writes::reply))
        .route("/api/mcp/posts", post(writes::posts))
        .route("/api/mcp/batches/{id}", get(jobs::batch))
        .fallback(unknown_route)
        .method_not_allowed_fallback(wrong_method)
        .layer(middleware::from_fn_with_state(Arc::clone(&shared), gate))
        .with_state(shared)
}

/// What every request passes first, unknown routes included: the test switches (down, hang,
/// fail), then the service key. `X-Request-Id` is echoed on every answer.
async fn gate(State(sim): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let request_id = request.headers().get(REQUEST_ID_HEADER).cloned();
    let path = request.uri().path().to_owned();
    tracing::debug!(method = %request.method(), path, "mappy simulator request");
    let is_write = !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    ) && path != SIGN_IN_PATH;
    if is_write {
        sim.write_requests.fetch_add(1, Ordering::SeqCst);
    }
    let mut response = if sim.down.load(Ordering::SeqCst) {
        message(StatusCode::SERVICE_UNAVAILABLE, "Service Unavailable")
    } else if path == HEALTH_PATH {
        next.run(request).await
    } else {
        if let Some(wait) = take_one(&sim.hang_next) {
            tokio::time::sleep(wait).await;
        }
        if let Some(status) = take_one(&sim.fail_next) {
            debug_page(status)
        } else if !sim.authorized(&request) {
            message(StatusCode::UNAUTHORIZED, "Unauthenticated.")
        } else {
            let answer = next.run(request).await;
            if is_write && let Some(wait) = take_one(&sim.answer_late) {
                tokio::time::sleep(wait).await;
            }
            answer
        }
    };
    if let Some(id) = request_id {
        response.headers_mut().insert(REQUEST_ID_HEADER, id);
    }
    response
}

impl Shared {
    /// `Authorization: Bearer <api_key>`, exactly.
    fn authorized(&self, request: &Request) -> bool {
        let token = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "));
        !self.api_key.is_empty() && token == Some(self.api_key.as_str())
    }
}

async fn unknown_route(uri: Uri) -> Response {
    let route = uri.path().trim_start_matches('/');
    message(
        StatusCode::NOT_FOUND,
        &format!("The route {route} could not be found."),
    )
}

async fn wrong_method(method: Method, uri: Uri) -> Response {
    let route = uri.path().trim_start_matches('/');
    message(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!("The {method} method is not supported for route {route}."),
    )
}

/// What Laravel answers with `APP_DEBUG=true` when the database is unreachable: the exception,
/// the server's file paths, a stack trace and the database's address. A real misconfigured
/// deployment sends exactly this; concierge must log it and show the client none of it.
fn debug_page(status: u16) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    fn frame(file: &str, line: u32, class: &str, function: &str) -> serde_json::Value {
        json!({"file": file, "line": line, "function": function, "class": class, "type": "->"})
    }
    let vendor = "/var/www/mappy/vendor/laravel/framework/src/Illuminate";
    let body = json!({
        "message": "SQLSTATE[HY000] [2002] Connection refused (Connection: mysql, Host: \
                    10.0.3.17:3306, Database: mappy_production, SQL: select * from \
                    `mappy_users` where `mappy_users`.`id` = 12 limit 1)",
        "exception": "Illuminate\\Database\\QueryException",
        "file": format!("{vendor}/Database/Connection.php"),
        "line": 825,
        "trace": [
            frame(&format!("{vendor}/Database/Connection.php"), 779,
                  "Illuminate\\Database\\Connection", "runQueryCallback"),
            frame(&format!("{vendor}/Database/Connection.php"), 398,
                  "Illuminate\\Database\\Connection", "run"),
            frame(&format!("{vendor}/Database/Query/Builder.php"), 3131,
                  "Illuminate\\Database\\Connection", "select"),
            frame("/var/www/mappy/app/Http/Middleware/ResolveMcpActingUser.php", 41,
                  "Illuminate\\Database\\Eloquent\\Builder", "first"),
            frame(&format!("{vendor}/Pipeline/Pipeline.php"), 209,
                  "App\\Http\\Middleware\\ResolveMcpActingUser", "handle"),
            frame("/var/www/mappy/public/index.php", 51,
                  "Illuminate\\Foundation\\Http\\Kernel", "handle"),
        ],
    });
    (status, Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_listen_address_off_loopback_is_refused() {
        let config = SimulatorConfig {
            listen: "[::]:8082".into(),
            data: "no-such-sample.json".into(),
            api_key: "key".into(),
            job_delay: Duration::ZERO,
        };
        let Err(error) = start(&config).await else {
            panic!("a simulator listened on [::]");
        };
        assert_eq!(
            error,
            format!(
                "listen = \"[::]:8082\" is not a loopback address: a simulator listens only on {}",
                concierge_sim_common::ALLOWED
            )
        );
    }
}
