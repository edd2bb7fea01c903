//! Mappy end to end: a real `concierge` process with the built-in authorization server, people
//! signing in with their Mappy accounts (checked by the Laravel API), a real MCP client calling
//! the tools with their tokens, and the SIMULATOR of Mappy's Laravel API on 127.0.0.1 — which
//! owns tenancy, validation and the job queue, as the real one does.
//!
//! Over 600 lines: one area's end-to-end scenarios (the seed's scopes, write safety, tasks and limits); each test reads alone.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::oauth::http;
use common::{Client, Server, call, connect, structured};
use concierge_sim_mappy::{Laravel, Sample};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

pub(crate) const API_KEY: &str = "test-mappy-key";
const READ_SCOPES: &[&str] = &[
    "mappy:location:read",
    "mappy:review:read",
    "mappy:insight:read",
    "mappy:post:read",
    "mappy:batch:read",
];
pub(crate) const ALL_SCOPES: &[&str] = &[
    "mappy:location:read",
    "mappy:review:read",
    "mappy:insight:read",
    "mappy:post:read",
    "mappy:batch:read",
    "mappy:review:write",
    "mappy:post:write",
    "mappy:location:write",
];

struct Mappy {
    server: Server,
    laravel: Laravel,
    issuer: String,
    /// Between the tools and Laravel when [`Settings::proxy`] asks for it (sign-ins go direct).
    proxy: Option<common::faults::FaultProxy>,
}

/// What a deployment varies in: limits, timeouts, the confirm token's lifetime.
struct Settings {
    read: &'static str,
    write: &'static str,
    per_client: &'static str,
    timeout: &'static str,
    confirm_ttl: &'static str,
    idle: &'static str,
    /// The tools reach Laravel through a fault proxy.
    proxy: bool,
    /// The tools' base URL instead of Laravel's (an unreachable one).
    tools_base: Option<String>,
    /// Where the server keeps its state (a tiny filesystem), instead of a new temp dir.
    state: Option<tempfile::TempDir>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            read: "1000/minute",
            write: "1000/minute",
            per_client: "100000/hour",
            timeout: "1s",
            confirm_ttl: "5m",
            idle: "30m",
            proxy: false,
            tools_base: None,
            state: None,
        }
    }
}

pub(crate) fn sample_path() -> std::path::PathBuf {
    common::examples().join("mappy/sample.json")
}

async fn deploy(mut settings: Settings) -> Mappy {
    let sample = Sample::load(&sample_path()).expect("sample");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let laravel = concierge_sim_mappy::serve(listener, sample, API_KEY, Duration::ZERO).await;
    let api = format!("http://{}", laravel.addr());
    let proxy = match settings.proxy {
        true => Some(common::faults::FaultProxy::start(&api).await),
        false => None,
    };
    let tools_base = match (&settings.tools_base, &proxy) {
        (Some(base), _) => base.clone(),
        (None, Some(proxy)) => proxy.base.clone(),
        (None, None) => api.clone(),
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let issuer = format!("http://127.0.0.1:{port}");
    let scopes = serde_json::to_string(ALL_SCOPES).unwrap();
    let make = |dir: &Path| {
        format!(
            r#"
[server]
listen = "127.0.0.1:{port}"
# Every /health call probes the simulator (5 s of caching by default).
health_cache = "0s"

[metrics]
token = "metrics-token"

[limits]
read = "{read}"
write = "{write}"
per_client = "{per_client}"

[audit.mappy]
path = "{dir}/log/mappy.log"
database = "{dir}/audit.sqlite"

[oauth]
issuer = "{issuer}"
database = "{dir}/oauth.sqlite"
scopes = {scopes}
audit = "mappy"

[oauth.users]
url = "{api}/api/mcp/auth/sign-in"
headers = {{ Authorization = "Bearer {API_KEY}" }}

[writes]
database = "{dir}/writes.sqlite"
confirm_ttl = "{confirm_ttl}"

[apps.mappy]
base_url = "{tools_base}"
api_key = "{API_KEY}"
read_timeout = "{timeout}"
write_timeout = "{timeout}"

[[endpoint]]
path = "/mappy/mcp"
tools = ["mappy.*"]
auth = {{ kind = "oauth", scopes = {scopes} }}
scope_refusal = "tool_error"
rate_limit_key = "token"
rate_limit = "read"
write_rate_limit = "write"
client_rate_limit = "per_client"
audit = "mappy"
legacy_sse = {{ sse = "/mappy/sse", messages = "/mappy/messages" }}
idle_timeout = "{idle}"
"#,
            dir = dir.display(),
            read = settings.read,
            write = settings.write,
            per_client = settings.per_client,
            timeout = settings.timeout,
            confirm_ttl = settings.confirm_ttl,
            idle = settings.idle,
        )
    };
    let server = match settings.state.take() {
        Some(dir) => Server::start_in(dir, make, &[]),
        None => Server::start(make, &[]),
    };
    Mappy {
        server,
        laravel,
        issuer,
        proxy,
    }
}

/// A sample user's sign-in (email and password) by id, from the simulator's data.
pub(crate) fn credentials(id: u64) -> (String, String) {
    let sample: Value =
        serde_json::from_str(&std::fs::read_to_string(sample_path()).unwrap()).unwrap();
    let user = sample["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["id"] == id)
        .unwrap_or_else(|| panic!("user {id} in the sample"));
    (
        user["email"].as_str().unwrap().to_string(),
        user["password"].as_str().unwrap().to_string(),
    )
}

impl Mappy {
    fn endpoint(&self) -> String {
        self.server.url("/mappy/mcp")
    }

    /// Signs in as sample user `id` through the consent page (a public client, PKCE), as a
    /// browser would, and answers the access token; `client` names the registered client.
    async fn token_for(&self, id: u64, scopes: &[&str], client: Option<&str>) -> String {
        let (email, password) = credentials(id);
        let client_id = match client {
            Some(client) => client.to_string(),
            None => self.register().await,
        };
        let (challenge, verifier) = oauth2::PkceCodeChallenge::new_random_sha256();
        let redirect = "http://127.0.0.1:5000/callback";
        let authorize = reqwest::Url::parse_with_params(
            &format!("{}/authorize", self.issuer),
            &[
                ("response_type", "code"),
                ("client_id", &client_id),
                ("redirect_uri", redirect),
                ("scope", &scopes.join(" ")),
                ("state", "s1"),
                ("code_challenge", challenge.as_str()),
                ("code_challenge_method", "S256"),
                ("resource", &self.endpoint()),
            ],
        )
        .unwrap();
        let decided =
            common::oauth::post_sign_in(authorize.as_str(), &email, &password, "allow").await;
        assert!(
            decided.status().is_redirection(),
            "sign-in as {email} failed"
        );
        let back = reqwest::Url::parse(&common::header(&decided, "location")).unwrap();
        let code = common::oauth::query(&back, "code").expect("a code");
        let answer: Value = http()
            .post(format!("{}/token", self.issuer))
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", redirect),
                ("client_id", &client_id),
                ("code_verifier", verifier.secret()),
                ("resource", &self.endpoint()),
            ])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {answer}"))
            .to_string()
    }

    async fn token(&self, id: u64) -> String {
        self.token_for(id, ALL_SCOPES, None).await
    }

    /// Registers a public client as Claude does; answers its id.
    async fn register(&self) -> String {
        common::oauth::register_public(&self.issuer, "Claude").await
    }

    async fn client(&self, id: u64) -> Client {
        connect(&self.endpoint(), &self.token(id).await).await
    }

    /// The audit table's rows so far (waits for the writer to catch up with `at_least`).
    async fn audit_rows(&self, at_least: usize) -> Vec<Value> {
        let url = format!(
            "sqlite://{}?mode=ro",
            self.server.dir.path().join("audit.sqlite").display()
        );
        let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let rows: Vec<AuditRow> = sqlx::query_as(
                "SELECT user_id, client_id, tool, outcome, code FROM audit_event ORDER BY id",
            )
            .fetch_all(&pool)
            .await
            .unwrap();
            if rows.len() >= at_least || std::time::Instant::now() > deadline {
                return rows
                    .into_iter()
                    .map(|(user, client, tool, outcome, code)| {
                        json!({"user": user, "client": client, "tool": tool, "outcome": outcome, "code": code})
                    })
                    .collect();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until the audit table has a row with `outcome` and `code` (of `tool`, when given).
    async fn audited(&self, outcome: &str, code: Option<&str>, tool: Option<&str>) -> Value {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let rows = self.audit_rows(0).await;
            if let Some(row) = rows.into_iter().find(|r| {
                r["outcome"] == outcome
                    && code.is_none_or(|c| r["code"] == c)
                    && tool.is_none_or(|t| r["tool"] == t)
            }) {
                return row;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no audit row {outcome}/{code:?}/{tool:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// user, client, tool, outcome, code.
type AuditRow = (
    Option<String>,
    Option<String>,
    Option<String>,
    String,
    Option<String>,
);

/// The ids of a listing's results.
fn ids(result: &CallToolResult) -> Vec<u64> {
    assert_ne!(result.is_error, Some(true), "{:?}", result.content);
    structured(result)["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_u64().unwrap())
        .collect()
}

/// A failed call's Mappy error document.
fn failure(result: &CallToolResult) -> Value {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected an error: {:?}",
        result.content
    );
    let text = result.content[0].as_text().expect("text").text.clone();
    serde_json::from_str::<Value>(&text).expect("JSON")["error"].clone()
}

/// Nothing from Laravel's debug page — stack, paths, SQL, addresses — reaches a client.
fn assert_no_leak(result: &CallToolResult) {
    let text = format!("{:?}", result);
    for secret in ["SQLSTATE", "/var/www", "10.0.3.17", "Stack trace", "#0 "] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenancy_holds_for_every_role_and_is_the_apis() {
    let m = deploy(Settings::default()).await;
    // (user, role, the locations its own tenancy shows)
    let cases: &[(u64, &str, &[u64])] = &[
        (1, "ADMIN supervisor", &[101, 102, 103, 104, 105, 201, 202]),
        (2, "ADMIN previewing user 10", &[101, 102, 103, 104, 105]),
        (10, "MAIN_USER", &[101, 102, 103, 104, 105]),
        (11, "MASTER_USER", &[101, 102, 103, 104, 105]),
        (12, "GROUP_USER of Hà Nội", &[101, 102, 103]),
        (13, "GROUP_USER of TP. Hồ Chí Minh", &[104, 105]),
        (20, "MAIN_USER of the other account", &[201, 202]),
    ];
    for (user, role, expected) in cases {
        let client = m.client(*user).await;
        let listed = ids(&call(&client, "location_list", json!({})).await);
        assert_eq!(&listed, expected, "{role} (user {user})");
        client.cancel().await.unwrap();
    }

    // A GROUP_USER never sees another group's location, by list, by id, or by its reviews.
    let group_user = m.client(12).await;
    let other = call(&group_user, "location_get", json!({"location_id": 104})).await;
    let error = failure(&other);
    assert_eq!(
        (error["code"].clone(), error["status"].clone()),
        (json!("not_found"), json!(404))
    );
    let reviews = call(&group_user, "review_list", json!({"location_id": 201})).await;
    assert_eq!(failure(&reviews)["status"], 404);
    let own = call(&group_user, "location_get", json!({"location_id": 101})).await;
    assert_eq!(structured(&own)["id"], 101);
    // Viewing as a user outside the tenancy: the API's 403, passed through with its message.
    let as_owner = call(&group_user, "location_list", json!({"user_id": 10})).await;
    let error = failure(&as_owner);
    assert_eq!(
        (error["code"].clone(), error["status"].clone()),
        (json!("forbidden"), json!(403))
    );
    assert!(
        error["message"].as_str().unwrap().contains("tenancy"),
        "{error}"
    );

    // The supervisor may view any user; the previewing admin only its preview user.
    let supervisor = m.client(1).await;
    let as_other = call(&supervisor, "location_list", json!({"user_id": 20})).await;
    assert_eq!(ids(&as_other), vec![201, 202]);
    let preview = m.client(2).await;
    assert_eq!(
        ids(&call(&preview, "location_list", json!({"user_id": 10})).await),
        vec![101, 102, 103, 104, 105]
    );
    assert_eq!(
        failure(&call(&preview, "location_list", json!({"user_id": 20})).await)["status"],
        403
    );
    // Groups narrow within the tenancy; another account's group is refused by the API.
    let owner = m.client(10).await;
    let groups = structured(&call(&owner, "group_list", json!({})).await);
    assert_eq!(groups["results"].as_array().unwrap().len(), 2, "{groups}");
    let other_group = call(&owner, "location_list", json!({"group_id": 3})).await;
    assert_eq!(failure(&other_group)["status"], 403);

    // Every call was audited with the acting user (the token's subject: the Mappy user id).
    let row = m.audited("ok", None, Some("location_list")).await;
    assert!(row["user"].is_string(), "{row}");
    let forbidden = m
        .audited("rejected", Some("forbidden"), Some("location_list"))
        .await;
    assert_eq!(forbidden["user"], "12");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scopes_decide_what_a_token_sees_and_may_call() {
    let m = deploy(Settings::default()).await;
    let token = m.token_for(10, READ_SCOPES, None).await;
    let reader = connect(&m.endpoint(), &token).await;
    let tools = reader.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"location_list") && names.contains(&"batch_status"),
        "{names:?}"
    );
    for write in ["review_reply", "post_create", "location_hours_update"] {
        assert!(
            !names.contains(&write),
            "{write} listed for a read-only token"
        );
    }
    // Seed §7.1: a missing scope is a tool result with isError (403 / -32604), not HTTP 403.
    let refused = call(
        &reader,
        "review_reply",
        json!({"review_id": 1001, "comment": "Cảm ơn bạn!", "idempotency_key": "k-scope"}),
    )
    .await;
    let text = refused.content[0].as_text().unwrap().text.clone();
    let error = serde_json::from_str::<Value>(&text).unwrap()["error"].clone();
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        (error["code"].clone(), error["status"].clone()),
        (json!("insufficient_scope"), json!(403))
    );
    assert_eq!(error["scopes"], json!(["mappy:review:write"]));
    assert_eq!(m.laravel.write_requests(), 0);
    m.audited(
        "forbidden",
        Some("insufficient_scope"),
        Some("review_reply"),
    )
    .await;
    // The refusal is counted by kind; the tool list's call to Mappy by upstream.
    let metrics =
        crate::common::metrics_text(&format!("{}/metrics", m.server.base), "metrics-token").await;
    assert!(
        metrics.contains("concierge_refusals_total{endpoint=\"/mappy/mcp\",client=\"")
            && metrics.contains("kind=\"scope\",code=\"insufficient_scope\"} 1"),
        "{metrics}"
    );

    // The schemas a model sees carry the platform's write arguments.
    let writer = m.client(10).await;
    let tools = writer.list_all_tools().await.unwrap();
    let hours = tools
        .iter()
        .find(|t| t.name == "location_hours_update")
        .unwrap();
    let schema = serde_json::to_value(&*hours.input_schema).unwrap();
    assert!(
        schema["required"]
            .as_array()
            .unwrap()
            .contains(&json!("idempotency_key"))
    );
    assert!(schema["properties"]["confirm_token"].is_object());
    assert_eq!(
        hours.annotations.as_ref().unwrap().destructive_hint,
        Some(true)
    );
    let reply = tools.iter().find(|t| t.name == "review_reply").unwrap();
    let schema = serde_json::to_value(&*reply.input_schema).unwrap();
    assert!(schema["properties"]["dry_run"].is_object());
    assert!(schema["properties"].get("confirm_token").is_none());
}

/// The first review of `location` in the sample (newest first), through the tool.
async fn a_review(client: &Client, location: u64) -> Value {
    let reviews = structured(&call(client, "review_list", json!({"location_id": location})).await);
    reviews["results"][0].clone()
}

/// Polls `batch_status` until the batch has finished (the simulator's queue runs at once).
async fn finished(client: &Client, batch: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let status = structured(&call(client, "batch_status", json!({"batch_id": batch})).await);
        let state = status["status"].as_str().unwrap_or_default().to_string();
        if !["queued", "running"].contains(&state.as_str()) {
            return status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "batch {batch} never finished"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_dry_run_replay_and_async_batches() {
    let m = deploy(Settings::default()).await;
    let owner = m.client(10).await;
    let review = a_review(&owner, 101).await;
    let review_id = review["id"].as_u64().unwrap();

    // Dry run: exactly what would change, and nothing written.
    let dry = structured(
        &call(
            &owner,
            "review_reply",
            json!({"review_id": review_id, "comment": "Cảm ơn anh chị đã ghé quán!", "idempotency_key": "reply-1", "dry_run": true}),
        )
        .await,
    );
    assert_eq!(dry["dryRun"], true);
    assert_eq!(dry["changes"][0]["review_id"], review_id);
    assert_eq!(dry["changes"][0]["to"], "Cảm ơn anh chị đã ghé quán!");
    assert_eq!(m.laravel.batches_created(), 0);

    // The write: accepted at once with a batch, held in the queue until released.
    m.laravel.hold_jobs(true);
    let arguments = json!({"review_id": review_id, "comment": "Cảm ơn anh chị đã ghé quán!", "idempotency_key": "reply-1"});
    let accepted = structured(&call(&owner, "review_reply", arguments.clone()).await);
    let batch = accepted["batch_id"].as_str().unwrap().to_string();
    assert_eq!(accepted["status"], "queued");
    let queued = structured(&call(&owner, "batch_status", json!({"batch_id": batch})).await);
    assert_eq!(queued["status"], "queued");

    // A replay with the same key answers the first result; nothing is written twice.
    let again = structured(&call(&owner, "review_reply", arguments).await);
    assert_eq!(again["batch_id"], batch.as_str());
    assert_eq!(again["idempotentReplay"], true);
    assert_eq!(m.laravel.batches_created(), 1);
    let writes_so_far = m.laravel.write_requests();

    // The same key with other arguments is refused, and reaches no one.
    let other = call(
        &owner,
        "review_reply",
        json!({"review_id": review_id, "comment": "Một câu khác", "idempotency_key": "reply-1"}),
    )
    .await;
    let text = other.content[0].as_text().unwrap().text.clone();
    assert_eq!(other.is_error, Some(true));
    assert!(text.contains("idempotency_key_reused"), "{text}");
    assert_eq!(m.laravel.write_requests(), writes_so_far);

    // Without a key a write is an input error naming the field.
    let keyless = call(
        &owner,
        "review_reply",
        json!({"review_id": review_id, "comment": "x"}),
    )
    .await;
    let text = keyless.content[0].as_text().unwrap().text.clone();
    assert!(text.contains("idempotency_key"), "{text}");

    // Released, the batch succeeds and the reply is on the review.
    m.laravel.hold_jobs(false);
    let done = finished(&owner, &batch).await;
    assert_eq!(done["status"], "succeeded", "{done}");
    let after = a_review(&owner, 101).await;
    assert_eq!(after["reply"]["comment"], "Cảm ơn anh chị đã ghé quán!");

    // A post on two locations, one of them suspended at Google: partially failed, explained.
    let post = structured(
        &call(
            &owner,
            "post_create",
            json!({"location_ids": [104, 105], "summary": "Phở bò tái lăn — giảm 20% tuần này", "topic_type": "OFFER", "idempotency_key": "post-1"}),
        )
        .await,
    );
    let status = finished(&owner, post["batch_id"].as_str().unwrap()).await;
    assert_eq!(status["status"], "partially_failed", "{status}");
    let failed = status["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["status"] == "failed")
        .expect("a failed item");
    assert_eq!(failed["location_id"], 105);
    assert!(
        failed["error"].as_str().unwrap().contains("suspended"),
        "{failed}"
    );

    // A job queue told to fail: the batch fails, and says why.
    m.laravel.fail_jobs(true);
    let post = structured(
        &call(
            &owner,
            "post_create",
            json!({"location_ids": [101], "summary": "Khai trương chi nhánh mới", "topic_type": "STANDARD", "idempotency_key": "post-2"}),
        )
        .await,
    );
    let status = finished(&owner, post["batch_id"].as_str().unwrap()).await;
    assert_eq!(status["status"], "failed", "{status}");
    m.laravel.fail_jobs(false);

    // Keys are each user's own: another user's "reply-1" is a write of its own, not a conflict.
    let master = m.client(11).await;
    let theirs = structured(
        &call(
            &master,
            "review_reply",
            json!({"review_id": review_id, "comment": "Quản lý cảm ơn bạn!", "idempotency_key": "reply-1"}),
        )
        .await,
    );
    assert!(theirs["batch_id"].is_string(), "{theirs}");
    assert_ne!(theirs["batch_id"], batch.as_str());

    // Another user cannot read someone else's batch.
    let stranger = m.client(20).await;
    let foreign = call(&stranger, "batch_status", json!({"batch_id": batch})).await;
    assert_eq!(failure(&foreign)["status"], 404);

    for code in ["dry_run", "idempotent_replay"] {
        m.audited("ok", Some(code), Some("review_reply")).await;
    }
    m.audited(
        "rejected",
        Some("idempotency_key_reused"),
        Some("review_reply"),
    )
    .await;
    m.audited(
        "invalid_argument",
        Some("invalid_argument"),
        Some("review_reply"),
    )
    .await;
    let executed = m.audited("ok", None, Some("post_create")).await;
    assert_eq!(executed["user"], "10");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destructive_writes_need_a_confirm_token_bound_to_caller_and_arguments() {
    let m = deploy(Settings::default()).await;
    let owner = m.client(10).await;
    let hours = json!({"monday": [{"open": "06:00", "close": "14:00"}, {"open": "17:00", "close": "22:00"}], "sunday": [{"open": "07:00", "close": "12:00"}]});
    let arguments =
        json!({"location_id": 102, "regular_hours": hours, "idempotency_key": "hours-1"});

    // First call: a preview (old and new hours) and a token; nothing written.
    let preview = structured(&call(&owner, "location_hours_update", arguments.clone()).await);
    assert_eq!(preview["confirmationRequired"], true, "{preview}");
    let change = &preview["preview"]["changes"][0];
    assert_eq!(change["field"], "regular_hours");
    assert_eq!(change["to"], hours);
    assert!(change["from"].is_object(), "{change}");
    let token = preview["confirmToken"].as_str().unwrap().to_string();
    assert_eq!(m.laravel.batches_created(), 0);

    // The token for other arguments, or from another user, confirms nothing.
    let mut changed = arguments.clone();
    changed["regular_hours"]["monday"][0]["open"] = json!("05:00");
    changed["confirm_token"] = json!(token);
    let refused = call(&owner, "location_hours_update", changed).await;
    let text = refused.content[0].as_text().unwrap().text.clone();
    assert!(text.contains("confirm_token_invalid"), "{text}");
    let master = m.client(11).await;
    let mut borrowed = arguments.clone();
    borrowed["confirm_token"] = json!(token);
    let refused = call(&master, "location_hours_update", borrowed.clone()).await;
    let text = refused.content[0].as_text().unwrap().text.clone();
    assert!(text.contains("confirm_token_invalid"), "{text}");
    assert_eq!(m.laravel.batches_created(), 0);

    // With its token, the call executes; the audit line never holds the token.
    let borrowed_again = borrowed.clone();
    let done = structured(&call(&owner, "location_hours_update", borrowed).await);
    let status = finished(&owner, done["batch_id"].as_str().unwrap()).await;
    assert_eq!(status["status"], "succeeded");
    let location = structured(&call(&owner, "location_get", json!({"location_id": 102})).await);
    assert_eq!(location["regular_hours"], hours);
    assert_eq!(m.laravel.batches_created(), 1);
    let log = std::fs::read_to_string(m.server.dir.path().join("log/mappy.log")).unwrap();
    assert!(
        !log.contains(&token),
        "the confirm token reached the audit log"
    );

    // One preview confirms one change: the token with a fresh key is refused, while resending
    // the confirmed call (same key) answers its result.
    let mut another = borrowed_again.clone();
    another["idempotency_key"] = json!("hours-2");
    let refused = call(&owner, "location_hours_update", another).await;
    let text = refused.content[0].as_text().unwrap().text.clone();
    assert!(text.contains("confirm_token_invalid"), "{text}");
    let resent = structured(&call(&owner, "location_hours_update", borrowed_again).await);
    assert_eq!(resent["idempotentReplay"], true, "{resent}");
    assert_eq!(m.laravel.batches_created(), 1);

    m.audited(
        "ok",
        Some("confirmation_required"),
        Some("location_hours_update"),
    )
    .await;
    m.audited(
        "rejected",
        Some("confirm_token_invalid"),
        Some("location_hours_update"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_confirm_token_is_refused() {
    // Tokens that expire the moment they are made: every confirmation is too late.
    let m = deploy(Settings {
        confirm_ttl: "0s",
        ..Settings::default()
    })
    .await;
    let owner = m.client(10).await;
    let mut arguments = json!({"location_id": 101, "regular_hours": {"monday": [{"open": "08:00", "close": "20:00"}]}, "idempotency_key": "hours-x"});
    let preview = structured(&call(&owner, "location_hours_update", arguments.clone()).await);
    arguments["confirm_token"] = preview["confirmToken"].clone();
    let refused = call(&owner, "location_hours_update", arguments).await;
    let text = refused.content[0].as_text().unwrap().text.clone();
    assert!(text.contains("confirm_token_expired"), "{text}");
    assert_eq!(m.laravel.batches_created(), 0);
    m.audited(
        "rejected",
        Some("confirm_token_expired"),
        Some("location_hours_update"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_parallel_replays_of_one_write_write_once() {
    let m = deploy(Settings::default()).await;
    let owner = std::sync::Arc::new(m.client(10).await);
    let review_id = a_review(&owner, 103).await["id"].as_u64().unwrap();
    let arguments = json!({"review_id": review_id, "comment": "Xin lỗi anh chị, quán sẽ cải thiện.", "idempotency_key": "storm-1"});
    let calls = (0..50).map(|_| {
        let owner = owner.clone();
        let arguments = arguments.clone();
        tokio::spawn(async move { structured(&call(&owner, "review_reply", arguments).await) })
    });
    let answers = futures::future::join_all(calls).await;
    let batches: std::collections::BTreeSet<String> = answers
        .into_iter()
        .map(|a| {
            a.unwrap()["batch_id"]
                .as_str()
                .expect("a batch id")
                .to_string()
        })
        .collect();
    assert_eq!(batches.len(), 1, "{batches:?}");
    assert_eq!(m.laravel.batches_created(), 1);
    assert_eq!(
        m.laravel.write_requests(),
        1,
        "the API saw more than one write"
    );
    // One executed call and 49 answered from it, each with its own audit row.
    // registration, sign-in, token, review_list, then the 50 calls.
    let rows = m.audit_rows(54).await;
    let replies: Vec<&Value> = rows
        .iter()
        .filter(|r| r["tool"] == "review_reply")
        .collect();
    assert_eq!(replies.len(), 50);
    let replayed = replies
        .iter()
        .filter(|r| r["code"] == "idempotent_replay")
        .count();
    assert_eq!(replayed, 49);
    assert!(replies.iter().all(|r| r["outcome"] == "ok"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_are_never_retried_by_us_and_a_resend_with_the_key_is_safe() {
    let m = deploy(Settings::default()).await;
    let owner = m.client(10).await;
    let review_id = a_review(&owner, 102).await["id"].as_u64().unwrap();
    let arguments =
        json!({"review_id": review_id, "comment": "Cảm ơn!", "idempotency_key": "retry-1"});

    // Laravel fails with its debug page: one request, a 502 for the model, nothing leaked.
    m.laravel.fail_next(1, 500);
    let before = m.laravel.write_requests();
    let failed = call(&owner, "review_reply", arguments.clone()).await;
    assert_no_leak(&failed);
    let error = failure(&failed);
    assert_eq!(
        (error["code"].clone(), error["status"].clone()),
        (json!("backend_error"), json!(502))
    );
    assert_eq!(
        error["retryable"], false,
        "writes are resent by the caller, with the key"
    );
    assert_eq!(
        m.laravel.write_requests(),
        before + 1,
        "concierge retried a write"
    );

    // The caller resends with the same key: now it is written, once.
    let sent = structured(&call(&owner, "review_reply", arguments).await);
    assert!(sent["batch_id"].is_string(), "{sent}");
    assert_eq!(m.laravel.batches_created(), 1);

    // A write that outlives its timeout (1 s here, 30 s in the seed): 504, follow the batch.
    m.laravel.hang_next(1, Duration::from_millis(1500));
    let before = m.laravel.write_requests();
    let slow = json!({"location_ids": [101], "summary": "Giờ mở cửa Tết", "topic_type": "STANDARD", "idempotency_key": "slow-1"});
    let timed_out = call(&owner, "post_create", slow.clone()).await;
    let error = failure(&timed_out);
    assert_eq!(
        (error["code"].clone(), error["status"].clone()),
        (json!("upstream_timeout"), json!(504))
    );
    assert!(
        error["message"].as_str().unwrap().contains("batch_status"),
        "{error}"
    );
    assert_eq!(m.laravel.write_requests(), before + 1);
    // Resending with the same key cannot create a second batch, whether or not the slow one
    // went through: the API dedupes on the key too.
    let resent = structured(&call(&owner, "post_create", slow).await);
    assert!(resent["batch_id"].is_string(), "{resent}");
    assert_eq!(m.laravel.batches_created(), 2, "one reply, one post");

    m.audited(
        "internal_error",
        Some("backend_error"),
        Some("review_reply"),
    )
    .await;
    m.audited(
        "internal_error",
        Some("upstream_timeout"),
        Some("post_create"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_error_class_of_the_seed() {
    let m = deploy(Settings::default()).await;

    // 401: no token, and a token that is not ours; both name the metadata for re-auth.
    for token in [None, Some("not-a-token")] {
        let mut request = http().post(m.endpoint()).json(&json!({}));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let answer = request.send().await.unwrap();
        assert_eq!(answer.status(), 401);
        let challenge = common::header(&answer, "www-authenticate");
        assert!(challenge.contains("resource_metadata="), "{challenge}");
    }
    m.audited("unauthorized", None, None).await;

    let owner = m.client(10).await;
    // 400 / -32602: our validation, with the field and what is allowed.
    let invalid = call(&owner, "location_list", json!({"limit": 500})).await;
    let text = invalid.content[0].as_text().unwrap().text.clone();
    assert_eq!(invalid.is_error, Some(true));
    let error = serde_json::from_str::<Value>(&text).unwrap()["error"].clone();
    assert_eq!(
        (error["code"].clone(), error["field"].clone()),
        (json!("invalid_argument"), json!("limit"))
    );
    assert!(
        error["message"].as_str().unwrap().contains("100"),
        "{error}"
    );
    let unknown = call(&owner, "location_list", json!({"color": "blue"})).await;
    assert_eq!(unknown.is_error, Some(true));

    // Mappy's 4xx, passed through: a missing record (404) and the API's own validation (422).
    let missing = failure(&call(&owner, "location_get", json!({"location_id": 999})).await);
    assert_eq!(
        (missing["code"].clone(), missing["status"].clone()),
        (json!("not_found"), json!(404))
    );
    assert_eq!(missing["message"], "Location not found.");
    let range = failure(
        &call(
            &owner,
            "insight_get",
            json!({"location_id": 101, "from": "2024-01-01", "to": "2026-11-30"}),
        )
        .await,
    );
    assert_eq!(range["status"], 422);
    assert!(range["fields"].is_object(), "{range}");

    // Mappy's 5xx: 502, retryable for a read, and nothing of Laravel's debug page.
    m.laravel.fail_next(1, 500);
    let broken = call(&owner, "location_list", json!({})).await;
    assert_no_leak(&broken);
    let error = failure(&broken);
    assert_eq!(
        (
            error["code"].clone(),
            error["status"].clone(),
            error["retryable"].clone()
        ),
        (json!("backend_error"), json!(502), json!(true))
    );
    // Google failing behind Laravel: Google's message for the model.
    let insights = call(
        &owner,
        "insight_get",
        json!({"location_id": 104, "from": "2026-11-01", "to": "2026-11-30"}),
    )
    .await;
    let ok = structured(&insights);
    assert!(ok["metrics"]["calls"].is_number(), "{ok}");
    let supervisor = m.client(1).await;
    let down = call(
        &supervisor,
        "insight_get",
        json!({"location_id": 202, "from": "2026-11-01", "to": "2026-11-30"}),
    )
    .await;
    let error = failure(&down);
    assert_eq!(
        (error["code"].clone(), error["status"].clone()),
        (json!("gbp_error"), json!(502))
    );
    assert!(
        error["message"].as_str().unwrap().contains("Google"),
        "{error}"
    );

    // 504: a read the API does not answer in time (1 s here, 10 s in the seed).
    m.laravel.hang_next(1, Duration::from_millis(1500));
    let slow = failure(&call(&owner, "location_list", json!({})).await);
    assert_eq!(
        (
            slow["code"].clone(),
            slow["status"].clone(),
            slow["retryable"].clone()
        ),
        (json!("upstream_timeout"), json!(504), json!(true))
    );

    for code in [
        "invalid_argument",
        "backend_error",
        "gbp_error",
        "upstream_timeout",
    ] {
        let outcome = if code == "invalid_argument" {
            "invalid_argument"
        } else {
            "internal_error"
        };
        m.audited(outcome, Some(code), None).await;
    }
    m.audited("not_found", Some("not_found"), Some("location_get"))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_per_token_read_and_write_and_per_client_hour() {
    let m = deploy(Settings {
        read: "3/minute",
        write: "1/minute",
        per_client: "6/hour",
        ..Settings::default()
    })
    .await;
    let client_id = m.register().await;
    let first = connect(
        &m.endpoint(),
        &m.token_for(10, ALL_SCOPES, Some(&client_id)).await,
    )
    .await;
    for _ in 0..3 {
        ids(&call(&first, "location_list", json!({})).await);
    }
    let limited = call(&first, "location_list", json!({})).await;
    let text = limited.content[0].as_text().unwrap().text.clone();
    assert!(text.contains("rate_limited"), "{text}");
    // Writes count on their own budget.
    let write = json!({"location_ids": [101], "summary": "Tuần lễ phở", "topic_type": "STANDARD", "idempotency_key": "limit-1"});
    assert!(structured(&call(&first, "post_create", write).await)["batch_id"].is_string());
    let write = json!({"location_ids": [101], "summary": "Tuần lễ phở 2", "topic_type": "STANDARD", "idempotency_key": "limit-2"});
    let text = call(&first, "post_create", write).await.content[0]
        .as_text()
        .unwrap()
        .text
        .clone();
    assert!(text.contains("rate_limited"), "{text}");
    assert_eq!(m.laravel.batches_created(), 1);

    // A second token of the same client has fresh minute budgets, but the client's hour is
    // shared: 6 calls an hour in all, and the 6 above (refusals count too) used it.
    let second = connect(
        &m.endpoint(),
        &m.token_for(11, ALL_SCOPES, Some(&client_id)).await,
    )
    .await;
    let text = call(&second, "location_list", json!({})).await.content[0]
        .as_text()
        .unwrap()
        .text
        .clone();
    assert!(
        text.contains("rate_limited") && text.contains("6/hour"),
        "{text}"
    );
    // Another client is not affected.
    let other = m.client(11).await;
    ids(&call(&other, "location_list", json!({})).await);

    let row = m
        .audited("rate_limited", Some("rate_limited"), Some("post_create"))
        .await;
    assert_eq!(row["user"], "10");
}

/// The error document of a refused call, from its text.
fn refusal(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "{:?}", result.content);
    result.content[0].as_text().unwrap().text.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_writes_that_reach_mappy_use_the_write_budget() {
    // Seed §8: 10 writes a minute per token. Dry runs, previews, replays and refused calls send
    // no write to Mappy, so they must leave all ten.
    let m = deploy(Settings {
        write: "10/minute",
        ..Settings::default()
    })
    .await;
    let owner = m.client(10).await;
    let review_id = a_review(&owner, 101).await["id"].as_u64().unwrap();
    let reply = |key: &str| json!({"review_id": review_id, "comment": format!("Cảm ơn quý khách ({key})"), "idempotency_key": key});
    let hours = json!({"location_id": 102, "regular_hours": {"monday": [{"open": "06:00", "close": "14:00"}]}, "idempotency_key": "hours-1"});
    let first = structured(&call(&owner, "review_reply", reply("w-0")).await);
    assert!(first["batch_id"].is_string(), "{first}");

    for i in 0..10 {
        let mut dry = reply(&format!("dry-{i}"));
        dry["dry_run"] = json!(true);
        let dry = structured(&call(&owner, "review_reply", dry).await);
        assert_eq!(dry["dryRun"], true, "{dry}");
        let preview = structured(&call(&owner, "location_hours_update", hours.clone()).await);
        assert_eq!(preview["confirmationRequired"], true, "{preview}");
        let replay = structured(&call(&owner, "review_reply", reply("w-0")).await);
        assert_eq!(replay["idempotentReplay"], true, "{replay}");
        let keyless = json!({"review_id": review_id, "comment": "x"});
        let text = refusal(&call(&owner, "review_reply", keyless).await);
        assert!(text.contains("idempotency_key"), "{text}");
        let invalid = json!({"review_id": "one", "comment": "x", "idempotency_key": "bad"});
        let text = refusal(&call(&owner, "review_reply", invalid).await);
        assert!(text.contains("invalid_argument"), "{text}");
        let mut forged = hours.clone();
        forged["confirm_token"] = json!("not-a-token");
        let text = refusal(&call(&owner, "location_hours_update", forged).await);
        assert!(text.contains("confirm_token_invalid"), "{text}");
    }
    assert_eq!(m.laravel.batches_created(), 1);

    // The other nine of the minute's ten writes all go through.
    for i in 1..10 {
        let sent = structured(&call(&owner, "review_reply", reply(&format!("w-{i}"))).await);
        assert!(sent["batch_id"].is_string(), "write {i}: {sent}");
    }
    assert_eq!(m.laravel.batches_created(), 10);

    // The eleventh is refused before it reaches Mappy, and says how the limit counts.
    let before = m.laravel.write_requests();
    let text = refusal(&call(&owner, "review_reply", reply("w-10")).await);
    // In the seed's language (Vietnamese), naming the limit and how it counts.
    assert!(
        text.contains("rate_limited") && text.contains("10/minute, cửa sổ trượt"),
        "{text}"
    );
    assert_eq!(m.laravel.write_requests(), before);
    // A replay still answers: it writes nothing, so the spent budget does not stop it.
    let replay = structured(&call(&owner, "review_reply", reply("w-0")).await);
    assert_eq!(replay["idempotentReplay"], true, "{replay}");
    m.audited("rate_limited", Some("rate_limited"), Some("review_reply"))
        .await;

    // The audit holds each call's output: the write's answer, a refusal's error document.
    let url = format!(
        "sqlite://{}?mode=ro",
        m.server.dir.path().join("audit.sqlite").display()
    );
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let outputs: Vec<(String, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT outcome, code, output FROM audit_event WHERE tool = 'review_reply' ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let output = |outcome: &str, code: Option<&str>| -> Value {
        let (_, _, output) = outputs
            .iter()
            .find(|(o, c, _)| o == outcome && c.as_deref() == code)
            .unwrap_or_else(|| panic!("no row {outcome}/{code:?}: {outputs:?}"));
        serde_json::from_str(output.as_deref().expect("an output")).unwrap()
    };
    assert_eq!(output("ok", None)["batch_id"], first["batch_id"]);
    assert_eq!(output("ok", Some("dry_run"))["dryRun"], true);
    assert_eq!(
        output("invalid_argument", Some("invalid_argument"))["error"]["code"],
        "invalid_argument"
    );
    let limited = output("rate_limited", Some("rate_limited"));
    assert_eq!(limited["error"]["code"], "rate_limited", "{limited}");
    assert!(limited["error"]["retryAfterSeconds"].as_u64().unwrap() >= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_cut_off_by_a_crash_is_answered_by_mappy_after_a_restart() {
    // Mappy accepts the write, and the process is killed before its answer arrives: our claim on
    // the key stays, with no result. After a restart, the same call must be answered (Mappy
    // dedupes on the key) within seconds — not `write_in_progress` for ten minutes — and Mappy
    // must have written once.
    let mut m = deploy(Settings {
        timeout: "30s",
        ..Settings::default()
    })
    .await;
    let owner = m.client(10).await;
    let review_id = a_review(&owner, 103).await["id"].as_u64().unwrap();
    let arguments =
        json!({"review_id": review_id, "comment": "Xin cảm ơn!", "idempotency_key": "crash-1"});
    m.laravel.answer_writes_late(1, Duration::from_secs(60));
    let pending = tokio::spawn({
        let arguments = arguments.clone();
        async move {
            let _ = call(&owner, "review_reply", arguments).await;
        }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while m.laravel.batches_created() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "Mappy never got the write"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    m.server.child.kill().expect("SIGKILL");
    m.server.child.wait().unwrap();
    pending.abort();

    let config = std::fs::read_to_string(m.server.dir.path().join("concierge.toml")).unwrap();
    let dir = std::mem::replace(&mut m.server.dir, tempfile::tempdir().unwrap());
    m.server = Server::start_in(dir, |_| config, &[]);
    let owner = m.client(10).await;
    let started = std::time::Instant::now();
    let answered = call(&owner, "review_reply", arguments.clone()).await;
    let answer = structured(&answered);
    assert!(answer["batch_id"].is_string(), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "answered after {:?}",
        started.elapsed()
    );
    assert_eq!(m.laravel.batches_created(), 1, "Mappy wrote it once");
    assert_eq!(
        m.laravel.write_requests(),
        2,
        "sent once more, with its key"
    );
    // From now on our own record answers.
    let again = structured(&call(&owner, "review_reply", arguments).await);
    assert_eq!(again["batch_id"], answer["batch_id"]);
    assert_eq!(again["idempotentReplay"], true);
    assert_eq!(m.laravel.write_requests(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_reports_whether_the_mappy_api_answers() {
    let m = deploy(Settings::default()).await;
    let health: Value = common::oauth::get_json(&m.server.url("/health")).await;
    assert_eq!(health["status"], "ok");
    assert_eq!(health["upstreams"]["mappy"]["status"], "ok");
    m.laravel.set_down(true);
    let answer = http().get(m.server.url("/health")).send().await.unwrap();
    assert_eq!(answer.status(), 200);
    let health: Value = answer.json().await.unwrap();
    assert_eq!(health["status"], "degraded");
    assert_eq!(health["upstreams"]["mappy"]["status"], "down");
    let text = health.to_string();
    assert!(
        !text.contains("127.0.0.1"),
        "an address reached /health: {text}"
    );
}

/// A legacy SSE session read event by event.
struct SseStream {
    response: reqwest::Response,
    buffer: String,
}

impl SseStream {
    /// The next event's (name, data).
    async fn next(&mut self) -> (String, String) {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut name = String::from("message");
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("event:") {
                        name = value.trim().to_string();
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.trim_start());
                    }
                }
                if data.is_empty() {
                    continue; // a keep-alive comment
                }
                return (name, data);
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.response.chunk())
                .await
                .expect("an event within 10 s")
                .unwrap()
                .expect("the stream is open");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_legacy_sse_transport_serves_the_same_tools_auth_and_audit() {
    let m = deploy(Settings::default()).await;
    let client_id = m.register().await;
    let token = m.token_for(12, ALL_SCOPES, Some(&client_id)).await;
    let unauthorized = http().get(m.server.url("/mappy/sse")).send().await.unwrap();
    assert_eq!(unauthorized.status(), 401);

    let response = http()
        .get(m.server.url("/mappy/sse"))
        .bearer_auth(&token)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut events = SseStream {
        response,
        buffer: String::new(),
    };
    let (name, path) = events.next().await;
    assert_eq!(name, "endpoint");
    assert!(path.starts_with("/mappy/messages?sessionId="), "{path}");
    let messages = m.server.url(&path);
    let post =
        |body: Value, token: &str| http().post(&messages).bearer_auth(token).json(&body).send();

    let accepted = post(common::initialize(1), &token).await.unwrap();
    assert_eq!(accepted.status(), 202);
    let (_, data) = events.next().await;
    let initialized: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(initialized["id"], 1);
    assert_eq!(initialized["result"]["serverInfo"]["name"], "concierge");
    post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        &token,
    )
    .await
    .unwrap();
    post(common::tools_call(2, "location_list", json!({})), &token)
        .await
        .unwrap();
    let (_, data) = events.next().await;
    let listed: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(listed["id"], 2);
    let ids: Vec<u64> = listed["result"]["structuredContent"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_u64().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec![101, 102, 103],
        "the GROUP_USER's tenancy holds here too"
    );

    // Each message runs with its own request's token: a read-only token of the same user and
    // client, posted into this session, may not write.
    let narrow = m.token_for(12, READ_SCOPES, Some(&client_id)).await;
    post(
        common::tools_call(
            5,
            "review_reply",
            json!({"review_id": 1001, "comment": "Cảm ơn!", "idempotency_key": "sse-1"}),
        ),
        &narrow,
    )
    .await
    .unwrap();
    let (_, data) = events.next().await;
    let refused: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(refused["id"], 5);
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(
        refused.to_string().contains("insufficient_scope"),
        "{refused}"
    );
    assert_eq!(m.laravel.write_requests(), 0);

    // Another user's token cannot post into this session; an unknown session is gone.
    let other = m.token(13).await;
    let refused = post(common::tools_call(3, "location_list", json!({})), &other)
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    let lost = http()
        .post(m.server.url("/mappy/messages?sessionId=nope"))
        .bearer_auth(&token)
        .json(&common::tools_call(4, "location_list", json!({})))
        .send()
        .await
        .unwrap();
    assert_eq!(lost.status(), 404);

    let row = m.audited("ok", None, Some("location_list")).await;
    assert_eq!(row["user"], "12");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_table_answers_by_user_client_tool_and_time() {
    let m = deploy(Settings::default()).await;
    let token = m.token(13).await;
    let client = connect(&m.endpoint(), &token).await;
    ids(&call(&client, "location_list", json!({})).await);
    call(&client, "location_get", json!({"location_id": 101})).await;
    m.audited("not_found", Some("not_found"), Some("location_get"))
        .await;

    let url = format!(
        "sqlite://{}?mode=ro",
        m.server.dir.path().join("audit.sqlite").display()
    );
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    // The OAuth side is in the same table: the sign-in and the token.
    let (granted,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM audit_event WHERE code = 'authorization_granted' AND user_id = '13'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(granted, 1);
    let (issued,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM audit_event WHERE code = 'token_issued'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(issued, 1);
    // Tool calls by user and tool within a time range, with arguments and duration.
    let since = chrono::Utc::now() - chrono::Duration::minutes(5);
    let rows: Vec<(String, String, String, Option<String>, f64)> = sqlx::query_as(
        "SELECT client_id, tool, outcome, arguments, duration_ms FROM audit_event \
         WHERE user_id = ? AND tool IS NOT NULL AND ts >= ? ORDER BY ts",
    )
    .bind("13")
    .bind(since.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
    .fetch_all(&pool)
    .await
    .unwrap();
    let summary: Vec<(&str, &str)> = rows.iter().map(|r| (r.1.as_str(), r.2.as_str())).collect();
    assert_eq!(
        summary,
        vec![("location_list", "ok"), ("location_get", "not_found")]
    );
    assert_eq!(rows[1].3.as_deref(), Some(r#"{"location_id":101}"#));
    assert!(rows.iter().all(|r| r.4 >= 0.0 && !r.0.is_empty()));

    // The operator's way in: `concierge audit`, filtered the same way, one JSON object a line.
    let since = since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let lines = m
        .server
        .audit_cli(&["--user", "13", "--tool", "location_get", "--since", &since])
        .unwrap();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["outcome"], "not_found");
    assert_eq!(lines[0]["arguments"], json!({"location_id": 101}));
    assert_eq!(lines[0]["notes"]["acting_role"], "GROUP_USER");
    let refused = m.server.audit_cli(&["--since", "yesterday"]).unwrap_err();
    assert!(refused.contains("2026-12-01T08:00:00Z"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_legacy_sse_session_is_closed_and_a_new_connection_is_a_new_session() {
    // 30 minutes in the seed; 300 ms here, so the test waits for the close, not for a clock.
    let m = deploy(Settings {
        idle: "300ms",
        ..Settings::default()
    })
    .await;
    let token = m.token(12).await;
    let open = || async {
        let response = http()
            .get(m.server.url("/mappy/sse"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        let mut events = SseStream {
            response,
            buffer: String::new(),
        };
        let (_, path) = events.next().await;
        (events, path)
    };
    let (mut events, path) = open().await;
    // Nothing is sent: the server ends the stream once the session has idled.
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(Some(_)) = events.response.chunk().await {}
    })
    .await;
    assert!(ended.is_ok(), "the idle session's stream stayed open");
    let gone = http()
        .post(m.server.url(&path))
        .bearer_auth(&token)
        .json(&common::initialize(1))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    // Reconnecting opens a new session with its own id.
    let (_, again) = open().await;
    assert_ne!(again, path);
}

/// The batch a completed task's result reports.
fn created_batch(result: &Value) -> Value {
    result["structuredContent"]["batch_id"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_with_mcp_tasks_follows_a_write_as_a_task() {
    use rmcp::ServiceExt;
    use rmcp::model::{
        CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, GetTaskParams,
        TaskPayload, TaskStatus,
    };
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let m = deploy(Settings::default()).await;
    let token = m.token(10).await;
    let mut config = ClientConfig::default();
    config.capabilities = ClientCapabilities::builder().enable_tasks().build();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(m.endpoint()).auth_header(token),
    );
    let client = config
        .serve(transport)
        .await
        .expect("a tasks client connects");

    m.laravel.hold_jobs(true);
    let arguments = json!({"location_ids": [101, 102], "summary": "Tết này quán mở cửa mùng 3", "topic_type": "STANDARD", "idempotency_key": "task-1"});
    let answer = client
        .call_tool_once(
            CallToolRequestParams::new("post_create")
                .with_arguments(arguments.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let CallToolResponse::Task(created) = answer else {
        panic!("a write for a tasks client answers a task: {answer:?}");
    };
    let task_id = created.task.task_id.clone();
    assert_eq!(created.task.status, TaskStatus::Working);
    let working = client.get_task(GetTaskParams::new(&task_id)).await.unwrap();
    assert_eq!(working.task.status(), TaskStatus::Working);

    // Another user cannot follow it; a made-up id is unknown.
    let stranger = m.token(11).await;
    let mut other = ClientConfig::default();
    other.capabilities = ClientCapabilities::builder().enable_tasks().build();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(m.endpoint()).auth_header(stranger),
    );
    let other = other.serve(transport).await.unwrap();
    assert!(other.get_task(GetTaskParams::new(&task_id)).await.is_err());
    assert!(
        client
            .get_task(GetTaskParams::new("batch_status~b_1~ct1.1.00"))
            .await
            .is_err()
    );

    m.laravel.hold_jobs(false);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let result = loop {
        let state = client.get_task(GetTaskParams::new(&task_id)).await.unwrap();
        if let TaskPayload::Completed { result } = state.task.payload {
            break Value::Object(result);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the task never completed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        result["structuredContent"]["status"], "succeeded",
        "{result}"
    );
    assert_ne!(result["isError"], true);
    assert_eq!(m.laravel.batches_created(), 1);
    // A client without tasks gets the plain answer: here a replay, since keys are the user's
    // (claude.ai registers a new client on every connect).
    let plain = m.client(10).await;
    let replay = structured(&call(&plain, "post_create", arguments.clone()).await);
    assert_eq!(replay["idempotentReplay"], true, "{replay}");
    assert_eq!(replay["batch_id"], created_batch(&result));
    let mut fresh = arguments;
    fresh["idempotency_key"] = json!("task-2");
    let answer = structured(&call(&plain, "post_create", fresh).await);
    assert!(answer["batch_id"].is_string(), "{answer}");
    assert_eq!(m.laravel.batches_created(), 2);
}

/// rmcp's own OAuth client, as a Rust MCP client would use it: discovery from the 401
/// challenge, dynamic registration, PKCE, the scopes the challenge names (rmcp's initial scope
/// selection), sign-in as the sample owner. After consent the write tools are listed and
/// `review_reply` goes through.
#[tokio::test]
async fn rmcp_s_oauth_client_reaches_the_write_tools() {
    use rmcp::ServiceExt;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::auth::{AuthClient, AuthorizationRequest, OAuthState};
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let server = Server::start_demo(&[]);
    let url = server.url("/mappy/mcp");
    let unauthorized = http()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .json(&common::initialize(1))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthorized.status(), 401);
    let challenge = common::header(&unauthorized, "www-authenticate");
    assert!(challenge.contains("mappy:review:write"), "{challenge}");

    let mut state = OAuthState::new(&url, None).await.expect("discovery");
    state
        .start_authorization(
            AuthorizationRequest::new("http://127.0.0.1:5175/callback")
                .with_client_name("rmcp OAuth interop")
                .with_challenge(challenge)
                .with_initial_scope_selection(),
        )
        .await
        .expect("registration");
    let authorize = state.get_authorization_url().await.unwrap();
    let asked = reqwest::Url::parse(&authorize).unwrap();
    let scopes = common::oauth::query(&asked, "scope").unwrap_or_default();
    assert!(scopes.contains("mappy:review:write"), "{scopes}");
    let decided = common::oauth::post_sign_in(
        &authorize,
        "owner@phohathanh.example",
        "demo-owner",
        "allow",
    )
    .await;
    let back = reqwest::Url::parse(&common::header(&decided, "location")).unwrap();
    let code = common::oauth::query(&back, "code").expect("a code");
    let csrf = common::oauth::query(&back, "state").expect("the state");
    let issuer = common::oauth::query(&back, "iss");
    state
        .handle_callback_with_issuer(&code, &csrf, issuer.as_deref())
        .await
        .expect("token");
    let manager = state.into_authorization_manager().expect("authorized");
    let transport = StreamableHttpClientTransport::with_client(
        AuthClient::new(reqwest::Client::default(), manager),
        StreamableHttpClientTransportConfig::with_uri(url),
    );
    let client = ().serve(transport).await.expect("MCP over the OAuth client");
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "review_reply"), "{tools:?}");
    let locations = structured(&call(&client, "location_list", json!({})).await);
    let location = locations["results"][0]["id"].clone();
    let reviews = structured(&call(&client, "review_list", json!({"location_id": location})).await);
    let review = reviews["results"][0]["id"].clone();
    let arguments = json!({"review_id": review, "comment": "Cảm ơn bạn! (rmcp OAuth)", "idempotency_key": "rmcp-oauth-1"});
    let mut answer = call(&client, "review_reply", arguments.clone()).await;
    let preview = structured(&answer);
    if preview["confirmationRequired"] == true {
        let mut confirmed = arguments;
        confirmed["confirm_token"] = preview["confirmToken"].clone();
        answer = call(&client, "review_reply", confirmed).await;
    }
    assert_ne!(answer.is_error, Some(true), "{answer:?}");
    client.cancel().await.unwrap();
}

/// Laravel behind a fault proxy, one server for every fault (§7.1's classes, §7.2's timeouts,
/// §7.3's retries): a read meets each fault, answers its class within the timeout with nothing
/// of the network in it, and the next read succeeds; no socket is left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_network_fault_answers_its_class_in_time_and_then_recovers() {
    use common::faults::{Fault, open_fds};
    let m = deploy(Settings {
        proxy: true,
        ..Settings::default()
    })
    .await;
    let proxy = m.proxy.as_ref().unwrap();
    let owner = m.client(10).await;
    let read = || call(&owner, "location_list", json!({}));
    ids(&read().await);

    let cases = [
        (
            Fault::Latency(Duration::from_secs(3)),
            "upstream_timeout",
            504,
            true,
        ),
        (Fault::ResetMidBody, "backend_error", 502, true),
        (
            Fault::Trickle(Duration::from_millis(100)),
            "upstream_timeout",
            504,
            true,
        ),
        (Fault::TruncatedJson, "backend_error", 502, true),
        (
            Fault::RetryAfter {
                status: 503,
                seconds: 30,
            },
            "backend_error",
            502,
            true,
        ),
        (
            Fault::RetryAfter {
                status: 429,
                seconds: 30,
            },
            "rate_limited",
            429,
            true,
        ),
    ];
    // Three rounds of every fault: a leak grows with each round, the pool's idle sockets do not.
    let mut sockets = Vec::new();
    for _ in 0..3 {
        for (fault, code, status, retryable) in cases.clone() {
            proxy.set(fault.clone());
            let started = std::time::Instant::now();
            let result = read().await;
            assert!(
                started.elapsed() < Duration::from_millis(2500),
                "{fault:?} held the read {:?}",
                started.elapsed()
            );
            assert_no_leak(&result);
            let text = format!("{result:?}");
            assert!(
                !text.contains(&proxy.base) && !text.contains("injected"),
                "{text}"
            );
            let error = failure(&result);
            assert_eq!(
                (
                    error["code"].clone(),
                    error["status"].clone(),
                    error["retryable"].clone()
                ),
                (json!(code), json!(status), json!(retryable)),
                "{fault:?}: {error}"
            );
            proxy.set(Fault::Pass);
            ids(&read().await);
        }
        sockets.push(open_fds(m.server.child.id()));
    }

    // A write whose answer is cut after Laravel took it: one request (we never retry a write),
    // an error; the caller's resend with its key is the same batch, created once.
    let review_id = a_review(&owner, 102).await["id"].as_u64().unwrap();
    let arguments =
        json!({"review_id": review_id, "comment": "Cảm ơn!", "idempotency_key": "cut-1"});
    let (requests, batches) = (m.laravel.write_requests(), m.laravel.batches_created());
    proxy.set(Fault::ResetMidBody);
    let cut = call(&owner, "review_reply", arguments.clone()).await;
    assert_eq!(
        failure(&cut)["retryable"],
        false,
        "a write is resent by its caller"
    );
    assert_eq!(
        m.laravel.write_requests(),
        requests + 1,
        "we retried a write"
    );
    proxy.set(Fault::Pass);
    let sent = structured(&call(&owner, "review_reply", arguments).await);
    assert!(sent["batch_id"].is_string(), "{sent}");
    assert_eq!(
        m.laravel.batches_created(),
        batches + 1,
        "one batch for one key"
    );

    // A burst of 5xx ends by itself: the reads after it succeed with nothing restarted.
    proxy.set(Fault::Status {
        status: 500,
        times: 2,
    });
    for _ in 0..2 {
        assert_eq!(failure(&read().await)["code"], "backend_error");
    }
    ids(&read().await);

    // Every cut, slow and abandoned exchange closed its socket.
    assert!(
        sockets[2] <= sockets[0] + 1,
        "open files after each round: {sockets:?}"
    );
}

/// An API host that does not resolve, and a TLS handshake that fails: a retryable 502 in time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dns_and_tls_failures_are_retryable_backend_errors() {
    use common::faults::{FaultProxy, UNRESOLVABLE, tls_mismatch};
    let plain = FaultProxy::start("http://127.0.0.1:9").await;
    for base in [UNRESOLVABLE.to_string(), tls_mismatch(&plain)] {
        let m = deploy(Settings {
            tools_base: Some(base.clone()),
            ..Settings::default()
        })
        .await;
        let owner = m.client(10).await;
        let started = std::time::Instant::now();
        let result = call(&owner, "location_list", json!({})).await;
        assert!(started.elapsed() < Duration::from_secs(5), "{base}");
        let text = format!("{result:?}").to_lowercase();
        for word in [
            "upstream.invalid",
            "127.0.0.1",
            "dns",
            "tls",
            "certificate",
            "handshake",
        ] {
            assert!(!text.contains(word), "`{word}` leaked: {text}");
        }
        let error = failure(&result);
        assert_eq!(error["retryable"], true, "{base}: {error}");
        assert_eq!(error["status"], 502, "{base}: {error}");
    }
}

/// The write records (idempotency keys, confirm tokens), the OAuth store and the audit table
/// on a tiny filesystem, filled up: a write whose key cannot be recorded is refused readably
/// before anything reaches Laravel; reads go on; once space returns the same key writes once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_writes_before_laravel_and_the_key_writes_once_after() {
    let Some(disk) = common::tinyfs::TinyFs::mount("16m") else {
        return;
    };
    let m = deploy(Settings {
        state: Some(disk.dir()),
        ..Settings::default()
    })
    .await;
    let owner = m.client(10).await;
    let review_id = a_review(&owner, 102).await["id"].as_u64().unwrap();
    let arguments =
        json!({"review_id": review_id, "comment": "Cảm ơn!", "idempotency_key": "full-1"});
    let (requests, batches) = (m.laravel.write_requests(), m.laravel.batches_created());

    disk.fill();
    let refused = call(&owner, "review_reply", arguments.clone()).await;
    let error = failure(&refused);
    assert_eq!(error["code"], "state_unavailable", "{error}");
    assert!(error["retryAfterSeconds"].as_u64().is_some(), "{error}");
    let text = format!("{refused:?}");
    assert!(
        !text.contains("disk is full") && !text.contains("/tmp"),
        "{text}"
    );
    assert_eq!(
        m.laravel.write_requests(),
        requests,
        "nothing reached Laravel"
    );
    ids(&call(&owner, "location_list", json!({})).await);

    disk.free();
    let sent = structured(&call(&owner, "review_reply", arguments.clone()).await);
    assert!(sent["batch_id"].is_string(), "{sent}");
    let again = structured(&call(&owner, "review_reply", arguments).await);
    assert_eq!(again["batch_id"], sent["batch_id"], "the key's one batch");
    assert_eq!(m.laravel.batches_created(), batches + 1);
}

/// Fifty SIGKILLs at random moments of a stream of idempotent writes (two clients, a key per
/// write), each followed by a restart on the same state and the same Laravel: writes that were
/// answered with a batch answer that batch again when resent with their key after the crash,
/// and no key is ever answered with two batches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_sigkills_in_a_stream_of_writes_keep_one_batch_per_key() {
    use common::crash::{Moments, bounded_call, kill_in_place, stop_all};
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};
    let mut m = deploy(Settings::default()).await;
    let token = m.token(10).await;
    let config = std::fs::read_to_string(m.server.dir.path().join("concierge.toml")).unwrap();
    let mut moments = Moments::new(0x5eed_0000_0000_0005);
    // key → batch, as answered.
    let mut answered: BTreeMap<String, String> = BTreeMap::new();
    for round in 0..50 {
        let acked: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
        let mut workers = Vec::new();
        for worker in 0..2 {
            let client = connect(&m.endpoint(), &token).await;
            let acked = acked.clone();
            workers.push(tokio::spawn(async move {
                for i in 0.. {
                    let key = format!("crash-{round}-{worker}-{i}");
                    let post = json!({"location_ids": [101], "summary": "Giờ mở cửa mới", "topic_type": "STANDARD", "idempotency_key": key});
                    let Some(result) = bounded_call(&client, "post_create", post).await else {
                        return;
                    };
                    if let Some(batch) = result
                        .structured_content
                        .as_ref()
                        .and_then(|s| s["batch_id"].as_str())
                    {
                        acked.lock().unwrap().push((key, batch.to_string()));
                    }
                }
            }));
        }
        tokio::time::sleep(moments.next(Duration::from_millis(30), Duration::from_millis(300)))
            .await;
        let dir = kill_in_place(&mut m.server);
        stop_all(workers).await;
        let text = config.clone();
        m.server = Server::start_in(dir, move |_| text, &[]);
        let fresh = acked.lock().unwrap().clone();
        // This round's answered writes, resent after the crash: the same batch each.
        let client = connect(&m.endpoint(), &token).await;
        for (key, batch) in fresh.iter().take(3) {
            let again = structured(
                &call(
                    &client,
                    "post_create",
                    json!({"location_ids": [101], "summary": "Giờ mở cửa mới", "topic_type": "STANDARD", "idempotency_key": key}),
                )
                .await,
            );
            assert_eq!(
                again["batch_id"].as_str(),
                Some(batch.as_str()),
                "round {round}: {key}"
            );
        }
        for (key, batch) in fresh {
            assert!(
                answered.insert(key, batch).is_none(),
                "round {round}: a key answered twice"
            );
        }
    }
    assert!(answered.len() >= 50, "{}", answered.len());
    assert!(m.laravel.batches_created() >= answered.len());
}
