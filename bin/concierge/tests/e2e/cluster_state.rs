//! Three instances of one Mappy deployment behind nginx, sharing Redis and PostgreSQL, in front
//! of one simulator of Mappy's API: what one instance did, every other one knows.
//!
//! - The OAuth flow crosses instances: registration and the sign-in page on the first, the
//!   form posted to the second, the code redeemed on the third, the refresh on the first.
//! - A confirm token one instance issued confirms the write on another; the same write sent to
//!   the third answers the first one's batch.
//! - The content sync runs once for the deployment: TYPO3 sees one manifest request, never two
//!   requests at once, pages a second apart, while every instance searches what it fetched.
//! - One hotel message submitted to the three instances at once is one batch.
//! - PostgreSQL stopped: writes are refused as retryable and nothing is written, reads go on,
//!   `/health` says which store is down; PostgreSQL started: writes work again, no restart.
//! - An instance killed (kill -9) under a load of reads and idempotent writes through nginx:
//!   each client resends until it has an answer, every read is answered, and every write is
//!   answered and made exactly once.
//!
//! The real parts: `redis-server`, PostgreSQL, `nginx` and three `concierge serve` processes on
//! free loopback ports of this test; test.sh installs them from Debian. Without them the test
//! says so and passes.
//!
//! Over 600 lines: one scenario on one deployment, step by step — three instances, nginx, Redis
//! and PostgreSQL cost seconds to start, so each step builds on the state the one before it left.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::cluster::{Postgres, binary, free_port, start_nginx, start_redis};
use crate::common::oauth::{http, query};
use crate::common::{Raw, Server, header, tools_call};
use crate::mappy::{ALL_SCOPES, API_KEY, credentials, sample_path};

const SECRET: &str = "the state test's shared session secret";
const REDIRECT: &str = "http://127.0.0.1:5000/callback";
const CMS_KEY: &str = "cluster-cms-key";

/// A small TYPO3 feed (four pages and two hotels of the sample), on the TYPO3 simulator with
/// its request log: the whole sync takes seconds at one page a second.
/// Answers its URL, its log and how many pages a sync fetches from it.
async fn small_feed(dir: &Path) -> (String, concierge_sim_typo3::RequestLog, usize) {
    let sample = crate::common::examples().join("ski/feed");
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(sample.join(name)).unwrap()).unwrap()
    };
    let mut manifest = read("manifest.json");
    let keep = [1204, 3301, 3302, 3303, 2101, 2102];
    let items: Vec<Value> = manifest["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| keep.contains(&i["uid"].as_u64().unwrap_or(0)))
        .cloned()
        .collect();
    let pages = items.iter().filter(|i| i["contentUrl"].is_string()).count();
    manifest["items"] = json!(items);
    let records: Vec<Value> = read("records.json")["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| keep.contains(&r["uid"].as_u64().unwrap_or(0)))
        .cloned()
        .collect();
    let feed = dir.join("feed");
    std::fs::create_dir_all(&feed).unwrap();
    std::fs::write(feed.join("manifest.json"), manifest.to_string()).unwrap();
    std::fs::write(
        feed.join("records.json"),
        json!({"records": records}).to_string(),
    )
    .unwrap();
    std::os::unix::fs::symlink(sample.join("pages"), feed.join("pages")).unwrap();
    let config = concierge_sim_typo3::SimulatorConfig {
        listen: "127.0.0.1:0".into(),
        feed,
        api_key: CMS_KEY.into(),
    };
    let (addr, serving, log) = concierge_sim_typo3::start_logged(&config).await.unwrap();
    tokio::spawn(serving);
    (format!("http://{addr}"), log, pages)
}

struct Deployment<'a> {
    front: &'a str,
    redis: u16,
    database: &'a str,
    api: &'a str,
    typo3: &'a str,
}

fn instance_config(dir: &Path, name: &str, port: u16, d: &Deployment) -> String {
    let scopes = serde_json::to_string(ALL_SCOPES).unwrap();
    format!(
        r#"
[server]
listen = "127.0.0.1:{port}"
max_connections_per_peer = 512
health_cache = "0s"

[state]
redis = "redis://127.0.0.1:{redis}/"
database = "{database}"
instance = "{name}"
session_secret = "{SECRET}"

[limits]
read = "10000/minute"
write = "10000/minute"

[audit.mappy]
path = "{dir}/mappy.log"
# One audit table for the deployment: every instance writes its calls there.
database = "{database}"

[oauth]
issuer = "{front}"
scopes = {scopes}
audit = "mappy"
# Reuse detection at once: the test reuses a rotated token seconds later, on another instance.
refresh_rotation_grace = "0s"

[oauth.users]
url = "{api}/api/mcp/auth/sign-in"
headers = {{ Authorization = "Bearer {API_KEY}" }}

[writes]
# Not used: [state] database keeps the records of every instance.
database = "{dir}/writes.sqlite"

[apps.trips]
database = "{database}"
as_of = "2026-11-30"
feed = {{ base_url = "{typo3}", api_key = "{CMS_KEY}" }}
# The seed's schedule, a delta run at start included: on every instance.
schedule = {{ at_start = true }}

[apps.intake]
database = "{database}"
hotel_id = "TH-CLUSTER"

[apps.mappy]
base_url = "{api}"
api_key = "{API_KEY}"
write_timeout = "20s"

[[endpoint]]
path = "/mappy/mcp"
tools = ["mappy.*"]
auth = {{ kind = "oauth", scopes = {scopes} }}
session = "stateless"
rate_limit_key = "token"
rate_limit = "read"
write_rate_limit = "write"
audit = "mappy"

[[endpoint]]
path = "/ski/mcp"
tools = ["trips.search_content"]
auth = {{ kind = "tokens", env = "APP_MCP_TOKENS" }}
session = "stateless"

[[endpoint]]
path = "/hotel/mcp"
tools = ["intake.*"]
auth = {{ kind = "tokens", env = "APP_MCP_TOKENS" }}
session = "stateless"
"#,
        dir = dir.display(),
        front = d.front,
        redis = d.redis,
        database = d.database,
        api = d.api,
        typo3 = d.typo3,
    )
}

/// The tool's answer to one `tools/call` posted to `url`: (is it an error, its document).
async fn call(raw: &Raw, url: &str, token: &str, tool: &str, arguments: Value) -> (bool, Value) {
    let answer = raw
        .post(url, Some(token), None, tools_call(1, tool, arguments))
        .await;
    let result = &answer.message()["result"];
    let is_error = answer.status != 200 || result["isError"] == true;
    let document = result.get("structuredContent").cloned().unwrap_or_else(|| {
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        serde_json::from_str(text)
            .unwrap_or_else(|_| json!({"status": answer.status, "body": answer.body}))
    });
    (is_error, document)
}

fn code_of(document: &Value) -> String {
    document["error"]["code"]
        .as_str()
        .or(document["code"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_share_oauth_and_writes_and_ride_out_postgres_and_a_kill() {
    let (Some(redis_bin), Some(nginx_bin)) = (
        binary("CONCIERGE_TEST_REDIS_SERVER", "redis-server"),
        binary("CONCIERGE_TEST_NGINX", "nginx"),
    ) else {
        eprintln!("no redis-server or nginx here: the shared-state cluster test is skipped");
        return;
    };
    let Some(postgres) = Postgres::start() else {
        eprintln!("no PostgreSQL here: the shared-state cluster test is skipped");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (_redis, redis) = start_redis(&redis_bin, work.path());
    let sample = concierge_sim_mappy::Sample::load(&sample_path()).expect("sample");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let laravel = concierge_sim_mappy::serve(listener, sample, API_KEY, Duration::ZERO).await;
    let api = format!("http://{}", laravel.addr());
    let listen = free_port();
    let front = format!("http://127.0.0.1:{listen}");
    let database = postgres.url();
    let (typo3, typo3_log, feed_pages) = small_feed(work.path()).await;
    let deployment = Deployment {
        front: &front,
        redis,
        database: &database,
        api: &api,
        typo3: &typo3,
    };

    let names = ["s1", "s2", "s3"];
    let ports: Vec<u16> = names.iter().map(|_| free_port()).collect();
    let start = |i: usize| {
        Server::start(
            |dir| instance_config(dir, names[i], ports[i], &deployment),
            &[("APP_MCP_TOKENS", "backoffice:hotel-token")],
        )
    };
    let mut instances: Vec<Option<Server>> = (0..3).map(|i| Some(start(i))).collect();
    let pairs: Vec<(&str, u16)> = names.iter().copied().zip(ports.iter().copied()).collect();
    let _nginx = start_nginx(&nginx_bin, work.path(), listen, &pairs);
    let direct = |i: usize| format!("http://127.0.0.1:{}", ports[i]);
    let resource = format!("{front}/mappy/mcp");

    // OAuth across instances: register and open the sign-in page on s1, post it to s2,
    // redeem the code on s3, refresh on s1.
    let client_id = crate::common::oauth::register_public(&direct(0), "Claude").await;
    let (challenge, verifier) = oauth2::PkceCodeChallenge::new_random_sha256();
    let authorize = reqwest::Url::parse_with_params(
        &format!("{}/authorize", direct(0)),
        &[
            ("response_type", "code"),
            ("client_id", &client_id),
            ("redirect_uri", REDIRECT),
            ("scope", &ALL_SCOPES.join(" ")),
            ("state", "s1"),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("resource", &resource),
        ],
    )
    .unwrap();
    let page = http().get(authorize).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    let csrf = html
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a CSRF field");
    let (email, password) = credentials(10);
    let decided = http()
        .post(format!("{}/authorize", direct(1)))
        .form(&[
            ("csrf", csrf),
            ("username", &email),
            ("password", &password),
            ("decision", "allow"),
        ])
        .send()
        .await
        .unwrap();
    assert!(decided.status().is_redirection(), "{}", decided.status());
    let back = reqwest::Url::parse(&header(&decided, "location")).unwrap();
    let code = query(&back, "code").expect("a code");
    let tokens: Value = http()
        .post(format!("{}/token", direct(2)))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &client_id),
            ("code_verifier", verifier.secret()),
            ("resource", &resource),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let first_refresh = tokens["refresh_token"].as_str().expect("a refresh token");
    let refresh = |on: usize, token: String| {
        let (url, client_id) = (format!("{}/token", direct(on)), client_id.clone());
        async move {
            http()
                .post(url)
                .form(&[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", &token),
                    ("client_id", &client_id),
                ])
                .send()
                .await
                .unwrap()
        }
    };
    let refreshed = refresh(0, first_refresh.to_string()).await;
    assert_eq!(refreshed.status(), 200);
    let refreshed: Value = refreshed.json().await.unwrap();
    // The rotation goes on on another instance.
    let second_refresh = refreshed["refresh_token"]
        .as_str()
        .expect("a rotated refresh token");
    let refreshed = refresh(1, second_refresh.to_string()).await;
    assert_eq!(refreshed.status(), 200);
    let refreshed: Value = refreshed.json().await.unwrap();
    let token = refreshed["access_token"].as_str().expect("an access token");

    // Every instance accepts the token (one key set).
    let raw = Raw::new();
    for (i, name) in names.iter().enumerate() {
        let url = format!("{}/mappy/mcp", direct(i));
        let (error, location) = call(
            &raw,
            &url,
            token,
            "location_get",
            json!({"location_id": 102}),
        )
        .await;
        assert!(!error, "{name}: {location}");
    }

    // A confirm token from s1 confirms on s2; the same write on s3 answers s2's batch.
    let hours = json!({"monday": [{"open": "06:00", "close": "14:00"}]});
    let arguments =
        json!({"location_id": 102, "regular_hours": hours, "idempotency_key": "hours-1"});
    let on = |i: usize| format!("{}/mappy/mcp", direct(i));
    let (_, preview) = call(
        &raw,
        &on(0),
        token,
        "location_hours_update",
        arguments.clone(),
    )
    .await;
    assert_eq!(preview["confirmationRequired"], true, "{preview}");
    let mut confirmed = arguments.clone();
    confirmed["confirm_token"] = preview["confirmToken"].clone();
    let (error, done) = call(
        &raw,
        &on(1),
        token,
        "location_hours_update",
        confirmed.clone(),
    )
    .await;
    assert!(!error, "{done}");
    let batch = done["batch_id"].as_str().expect("a batch").to_string();
    let (error, replay) = call(&raw, &on(2), token, "location_hours_update", confirmed).await;
    assert!(!error, "{replay}");
    assert_eq!(replay["batch_id"], batch.as_str());
    assert_eq!(replay["idempotentReplay"], true);
    assert_eq!(laravel.batches_created(), 1);
    // The three calls are in the one audit table, each written by its instance.
    let audit = sqlx::PgPool::connect(&database).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let codes: Vec<Option<String>> = sqlx::query_scalar(
            "SELECT code FROM audit_event WHERE tool = 'location_hours_update' ORDER BY id",
        )
        .fetch_all(&audit)
        .await
        .unwrap();
        if codes.len() == 3 {
            let codes: Vec<&str> = codes.iter().map(|c| c.as_deref().unwrap_or("")).collect();
            assert_eq!(codes, ["confirmation_required", "", "idempotent_replay"]);
            break;
        }
        assert!(Instant::now() < deadline, "audit rows: {codes:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    audit.close().await;

    // The content sync: every instance's schedule ran at its start, and TYPO3 saw one sync —
    // one manifest, never two requests at once, pages a second apart — while all three
    // instances search what it fetched.
    let fetched = |log: &concierge_sim_typo3::RequestLog| {
        let served = log.requests();
        served
            .iter()
            .filter(|r| r.path.starts_with("/_pages/"))
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while fetched(&typo3_log) < feed_pages {
        assert!(Instant::now() < deadline, "the sync did not finish");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for (i, name) in names.iter().enumerate() {
        // The instance's index picks the new generation up within its recheck period.
        loop {
            let url = format!("{}/ski/mcp", direct(i));
            let query = json!({"query": "Skiopening Val Thorens ohne Skipass"});
            let (error, found) = call(&raw, &url, "hotel-token", "search_content", query).await;
            assert!(!error, "{found}");
            if found["results"].as_array().is_some_and(|r| !r.is_empty()) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{name} never found the synced pages"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let one_sync = |log: &concierge_sim_typo3::RequestLog| {
        let served = log.requests();
        let manifests = served
            .iter()
            .filter(|r| r.path == "/api/content/manifest")
            .count();
        assert_eq!(manifests, 1, "{served:?}");
        assert!(
            served.windows(2).all(|w| w[1].arrived >= w[0].answered),
            "two requests at once: {served:?}"
        );
        let pages: Vec<_> = served
            .iter()
            .filter(|r| r.path.starts_with("/_pages/"))
            .collect();
        assert_eq!(pages.len(), feed_pages, "{served:?}");
        assert!(
            pages
                .windows(2)
                .all(|w| w[1].arrived - w[0].arrived >= Duration::from_millis(950)),
            "pages faster than one a second: {pages:?}"
        );
    };
    one_sync(&typo3_log);

    // One hotel message submitted to the three instances at once: one batch, two duplicates.
    let message: Value = serde_json::from_str(
        &std::fs::read_to_string(crate::common::examples().join("hotel/parent-split.json"))
            .unwrap(),
    )
    .unwrap();
    let submits = (0..3).map(|i| {
        let (raw, url, message) = (&raw, format!("{}/hotel/mcp", direct(i)), message.clone());
        async move {
            call(
                raw,
                &url,
                "hotel-token",
                "th_hotel_submit_task_results",
                message,
            )
            .await
        }
    });
    let submitted = futures::future::join_all(submits).await;
    assert!(submitted.iter().all(|(error, _)| !error), "{submitted:?}");
    let batches: BTreeSet<String> = submitted
        .iter()
        .map(|(_, a)| a["batch_id"].to_string())
        .collect();
    assert_eq!(batches.len(), 1, "{submitted:?}");
    let duplicates = submitted
        .iter()
        .filter(|(_, a)| a["duplicate"] == true)
        .count();
    assert_eq!(duplicates, 2, "{submitted:?}");

    // PostgreSQL stops: a write is refused as retryable and nothing reaches Mappy; reads go on;
    // /health names the store.
    postgres.stop();
    let post = |key: &str| json!({"location_ids": [104], "summary": "Khai trương chi nhánh mới", "topic_type": "STANDARD", "idempotency_key": key});
    let (error, refused) = call(&raw, &on(0), token, "post_create", post("post-down")).await;
    assert!(error, "{refused}");
    assert_eq!(code_of(&refused), "state_unavailable", "{refused}");
    assert!(
        refused["error"]["retryAfterSeconds"].as_u64().is_some(),
        "{refused}"
    );
    assert_eq!(laravel.batches_created(), 1);
    let (error, read) = call(
        &raw,
        &on(1),
        token,
        "location_get",
        json!({"location_id": 102}),
    )
    .await;
    assert!(!error, "a read needs no shared database: {read}");
    let health: Value = http()
        .get(format!("{}/health", direct(2)))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "degraded", "{health}");
    assert_eq!(health["stores"]["postgres"]["status"], "down", "{health}");
    assert_eq!(health["stores"]["redis"]["status"], "ok", "{health}");

    // PostgreSQL is back: the same write goes through, with no restart of any instance.
    postgres.resume();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (error, answer) = call(&raw, &on(0), token, "post_create", post("post-down")).await;
        if !error {
            assert!(answer["batch_id"].is_string(), "{answer}");
            break;
        }
        assert_eq!(code_of(&answer), "state_unavailable", "{answer}");
        assert!(
            Instant::now() < deadline,
            "writes did not come back: {answer}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(laravel.batches_created(), 2);
    // The refusal made while the database was down reaches the audit table once it is back.
    let audit = sqlx::PgPool::connect(&database).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let refusals: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM audit_event WHERE tool = 'post_create' AND code = 'state_unavailable'",
        )
        .fetch_one(&audit)
        .await
        .unwrap();
        if refusals >= 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the outage's audit events never arrived"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    audit.close().await;

    // kill -9 of s2 while writes are in flight through nginx. Mappy accepts them at once and
    // answers late, so s2 dies holding claims whose writes did happen. Each client resends its
    // write with its key until it has an answer.
    let writes = 12;
    laravel.answer_writes_late(writes, Duration::from_millis(1500));
    let through = format!("{front}/mappy/mcp");
    let load = (0..writes).map(|n| {
        let (raw, url, key) = (&raw, &through, format!("load-{n}"));
        async move {
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut tries = 0;
            loop {
                tries += 1;
                let (error, answer) = call(raw, url, token, "post_create", post(&key)).await;
                if !error {
                    return (key, answer["batch_id"].as_str().unwrap().to_string(), tries);
                }
                // What a client may meet meanwhile: the balancer's 502 for the request the dead
                // instance held, or the key's write still running (until the dead instance's
                // claim is taken over).
                let code = code_of(&answer);
                assert!(
                    answer["status"] == 502
                        || code == "write_in_progress"
                        || code == "state_unavailable",
                    "{key}: {answer}"
                );
                assert!(Instant::now() < deadline, "{key} never answered: {answer}");
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    });
    let accepted_before = laravel.write_requests();
    let killer = async {
        // Once Mappy has accepted every write of the load (their answers are still on the way).
        while laravel.write_requests() < accepted_before + writes {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut dead = instances[1].take().unwrap();
        dead.child.kill().unwrap();
        dead.child.wait().unwrap();
    };
    // Reads go on beside the writes, and recover the same way: the next request elsewhere.
    let reads = (0..writes).map(|n| {
        let (raw, url) = (&raw, &through);
        async move {
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let location = [102, 104, 105][n % 3];
                let read = json!({"location_id": location});
                let (error, answer) = call(raw, url, token, "location_get", read).await;
                if !error {
                    return;
                }
                assert_eq!(answer["status"], 502, "a read refused otherwise: {answer}");
                assert!(Instant::now() < deadline, "a read never answered: {answer}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    });
    let ((answers, _), ()) = futures::future::join(
        futures::future::join(
            futures::future::join_all(load),
            futures::future::join_all(reads),
        ),
        killer,
    )
    .await;
    let batches: BTreeSet<&str> = answers.iter().map(|(_, b, _)| b.as_str()).collect();
    assert_eq!(batches.len(), writes, "one batch per write: {answers:?}");
    assert_eq!(
        laravel.batches_created(),
        2 + writes,
        "no write lost or made twice: {answers:?}"
    );
    assert!(
        answers.iter().any(|(_, _, tries)| *tries > 1),
        "the kill cut no write short: {answers:?}"
    );
    // Every answer holds: each key replays its batch on the instances that live.
    for (key, batch, _) in &answers {
        let (error, replay) = call(&raw, &on(2), token, "post_create", post(key)).await;
        assert!(!error, "{replay}");
        assert_eq!(replay["batch_id"], batch.as_str(), "{key}");
    }

    // s2 restarts and rejoins: it knows the writes made before it died.
    instances[1] = Some(start(1));
    let (error, replay) = call(&raw, &on(1), token, "post_create", post("load-0")).await;
    assert!(!error, "{replay}");
    assert_eq!(replay["idempotentReplay"], true, "{replay}");

    // A refresh token rotated out on one instance is spent for all: reusing it is refused (and
    // revokes its family, as reuse detection does).
    let reused = refresh(2, first_refresh.to_string()).await;
    assert_eq!(reused.status(), 400);
}
