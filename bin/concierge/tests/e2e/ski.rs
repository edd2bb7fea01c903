//! The ski content tools over MCP: a mirror synced from the sample feed (through the TYPO3
//! simulator, on a manual clock so the load rules cost no time), served by a real `concierge`
//! process, asked by a real MCP client.
//!
//! Over 600 lines: one area's end-to-end scenarios (the content tools' answers, the sync and its
//! faults); each test reads alone.

use crate::common;

use std::path::Path;

use common::ski::{TOKEN, ski_config, ski_server};
use common::{Server, call, connect, examples, structured};
use serde_json::{Value, json};

fn results(value: &Value) -> Vec<Value> {
    value["results"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn search_content_finds_german_content_with_urls_and_excerpts() {
    let server = ski_server().await;
    let client = connect(&server.url("/ski/mcp"), TOKEN).await;

    let lederer = structured(&call(&client, "search_content", json!({"query": "Lederer"})).await);
    let top = &results(&lederer)[0];
    assert_eq!(top["type"], "hotel", "{lederer}");
    assert!(top["title"].as_str().unwrap().contains("Sportclub Lederer"));
    assert!(top["url"].as_str().unwrap().starts_with("https://"));
    let excerpt = top["excerpt"].as_str().unwrap();
    assert!(!excerpt.is_empty() && excerpt.chars().count() <= 602);

    // The ASCII spelling finds the umlaut, and the result list holds at most 8.
    let austria =
        structured(&call(&client, "search_content", json!({"query": "Oesterreich"})).await);
    let hits = results(&austria);
    assert!(!hits.is_empty() && hits.len() <= 8, "{austria}");
    assert!(
        hits.iter()
            .any(|h| h["excerpt"].as_str().unwrap().contains("Österreich")
                || h["title"].as_str().unwrap().contains("Österreich"))
    );

    let chaviere = structured(&call(&client, "search_content", json!({"query": "Chaviere"})).await);
    assert!(
        results(&chaviere)
            .iter()
            .any(|h| h["title"].as_str().unwrap().contains("Chavière")),
        "{chaviere}"
    );

    let nothing = structured(
        &call(
            &client,
            "search_content",
            json!({"query": "Kreuzfahrt Karibik"}),
        )
        .await,
    );
    // Nothing about either word: said, so the model does not pass anything off as it.
    assert_eq!(nothing["results"], json!([]), "{nothing}");
    assert_eq!(
        nothing["unmatched"],
        json!(["Kreuzfahrt", "Karibik"]),
        "{nothing}"
    );
    assert!(
        nothing["hint"]
            .as_str()
            .unwrap()
            .contains("Kreuzfahrt / Karibik")
    );
    // A question of nothing but question words asks for nothing, and hears how to ask.
    let asked =
        structured(&call(&client, "search_content", json!({"query": "Was ist das?"})).await);
    assert_eq!(asked["results"], json!([]), "{asked}");
    assert!(
        asked["hint"].as_str().unwrap().contains("kein Suchwort"),
        "{asked}"
    );
    // A wall of words is searched for its first eight, and says which it left out.
    let wall = "Hallenbad Sauna Gletscher Zermatt Obergurgl Lawine Kinder Ostern Gepäck Storno";
    let long = structured(&call(&client, "search_content", json!({"query": wall})).await);
    let hint = long["hint"].as_str().unwrap_or_default();
    assert!(
        hint.contains("nicht berücksichtigt: Gepäck, Storno"),
        "{long}"
    );
}

#[tokio::test]
async fn get_document_returns_the_markdown_of_a_hit_and_refuses_unknown_urls() {
    let server = ski_server().await;
    let client = connect(&server.url("/ski/mcp"), TOKEN).await;
    let found = structured(&call(&client, "search_content", json!({"query": "Val Thorens"})).await);
    let url = results(&found)[0]["url"].as_str().unwrap().to_string();

    let doc = structured(&call(&client, "get_document", json!({"url": url})).await);
    assert_eq!(doc["url"], url.as_str());
    assert!(doc["markdown"].as_str().unwrap().len() > 100, "{doc}");
    assert_eq!(doc["truncated"], false);

    let missing = call(
        &client,
        "get_document",
        json!({"url": "https://www.ser.de/gibt-es-nicht/"}),
    )
    .await;
    assert_eq!(missing.is_error, Some(true));
    let text = serde_json::to_string(&missing.content).unwrap();
    assert!(text.contains("search_content"), "{text}");

    let empty = call(&client, "search_content", json!({"query": ""})).await;
    assert_eq!(empty.is_error, Some(true));
    assert!(
        serde_json::to_string(&empty.content)
            .unwrap()
            .contains("query")
    );
}

#[tokio::test]
async fn merged_detail_pages_are_never_hits_of_their_own() {
    let server = ski_server().await;
    let client = connect(&server.url("/ski/mcp"), TOKEN).await;
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(examples().join("ski/feed/manifest.json")).unwrap(),
    )
    .unwrap();
    let detail = manifest["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i.get("detailOf").is_some() && i["detailOf"]["type"] == "product")
        .expect("a product detail page in the sample");
    let found =
        structured(&call(&client, "search_content", json!({"query": detail["title"]})).await);
    let hits = results(&found);
    assert!(!hits.is_empty(), "{found}");
    assert!(
        hits.iter()
            .all(|h| h["type"] != "page" || h["title"] != detail["title"]),
        "{found}"
    );
}

/// A tiny TYPO3 following the contract: two records and one page, so a real-clock
/// `concierge sync` has no load-rule waits to sit through.
async fn tiny_typo3(with_long_post: bool) -> String {
    typo3_of(with_long_post, false).await
}

/// The tiny TYPO3; `changing`: every item's `modified` is the current second, so every run
/// fetches its records and pages again.
async fn typo3_of(with_long_post: bool, changing: bool) -> String {
    use axum::routing::{get, post};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let manifest_now = move |manifest: &Value| {
        let mut manifest = manifest.clone();
        if changing {
            let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            for item in manifest["items"].as_array_mut().unwrap() {
                item["modified"] = json!(now);
            }
        }
        manifest
    };
    let mut manifest = json!({
        "sites": [{"site": "ser", "hosts": [addr]}],
        "items": [
            {"type": "hotel", "uid": 1, "language": "de", "modified": "2026-11-01T10:00:00+01:00",
             "site": "ser", "url": "https://www.ser.de/hotels/lederer/", "title": "Sportclub Lederer"},
            {"type": "country", "uid": 2, "language": "de", "modified": "2026-11-01T10:00:00+01:00",
             "site": "ser", "url": "https://www.ser.de/oesterreich/", "title": "Österreich",
             "contentUrl": format!("http://{addr}/pages/oesterreich")}
        ]
    });
    if with_long_post {
        manifest["items"].as_array_mut().unwrap().push(json!({
            "type": "blog", "uid": 3, "language": "de", "modified": "2026-11-01T10:00:00+01:00",
            "site": "ser", "url": "https://www.ser.de/blog/packliste/", "title": "Die große Packliste",
            "contentUrl": format!("http://{addr}/pages/packliste")
        }));
    }
    let app = axum::Router::new()
        .route(
            "/api/content/manifest",
            get(move || async move { axum::Json(manifest_now(&manifest)) }),
        )
        .route(
            "/pages/packliste",
            get(|| async {
                let items = "<li>Skihelm, Skibrille und warme Handschuhe</li>".repeat(800);
                axum::response::Html(format!("<main><h1>Packliste</h1><ul>{items}</ul></main>"))
            }),
        )
        .route(
            "/api/content/records",
            post(|| async {
                axum::Json(json!({"records": [
                    {"type": "hotel", "uid": 1, "language": "de", "data": {"title": "Sportclub Lederer", "codes": ["LEDER"], "type": 2}},
                    {"type": "country", "uid": 2, "language": "de", "data": {"title": "Österreich"}}
                ]}))
            }),
        )
        .route(
            "/pages/oesterreich",
            get(|| async { axum::response::Html("<main><p>Skireisen nach Österreich.</p></main>") }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

fn concierge(args: &[&str], config: &Path) -> (i32, String, String) {
    let out = std::process::Command::new(common::BIN)
        .args(args)
        .arg("--config")
        .arg(config)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run concierge");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

// Multi-threaded: the test blocks on the child process while its TYPO3 answers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_and_check_freshness_commands() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("concierge.toml");
    std::fs::write(&config, ski_config(dir.path(), &tiny_typo3(false).await)).expect("config");

    let (code, _, stderr) = concierge(&["check-freshness"], &config);
    assert_eq!(code, 1, "no manifest yet: {stderr}");
    assert!(stderr.contains("no manifest"), "{stderr}");

    let (code, stdout, stderr) = concierge(&["sync"], &config);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let report: Value = serde_json::from_str(stdout.trim()).expect("a JSON report");
    assert_eq!(report["outcome"], "completed");
    assert_eq!(
        (
            report["requests"].as_u64(),
            report["pages_fetched"].as_u64()
        ),
        (Some(3), Some(1))
    );

    let (code, stdout, _) = concierge(&["check-freshness", "--max-age", "60"], &config);
    assert_eq!(code, 0, "{stdout}");

    // A second run while another holds the lock: nothing done, and that is a success.
    let lock = std::fs::File::create(dir.path().join("content.sqlite.sync.lock")).expect("lock");
    lock.lock().expect("locked");
    let (code, stdout, _) = concierge(&["sync"], &config);
    assert_eq!(code, 0);
    assert!(stdout.contains(r#""outcome":"busy""#), "{stdout}");
    drop(lock);

    // The feed is unreachable: the manifest fails, the command says so.
    let broken = dir.path().join("broken.toml");
    std::fs::write(&broken, ski_config(dir.path(), "http://127.0.0.1:9")).expect("config");
    let (code, stdout, _) = concierge(&["sync"], &broken);
    assert_eq!(code, 1);
    assert!(stdout.contains("manifest_failed"), "{stdout}");
}

#[tokio::test]
async fn the_demo_answers_ski_content_from_its_simulator_at_once() {
    let server = Server::start_demo(&[]);
    let client = connect(&server.url("/ski/mcp"), "demo-token").await;
    // The start-up sync publishes the records before its paced page phase; the index picks
    // them up within its recheck interval. Bounded wait for that condition, not a fixed sleep.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let found = structured(
            &call(
                &client,
                "search_content",
                json!({"query": "Sportclub Lederer"}),
            )
            .await,
        );
        if let Some(top) = results(&found).first() {
            assert_eq!(top["type"], "hotel", "{found}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the demo never had content"
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_document_truncates_long_texts_at_20000_characters_and_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("concierge.toml");
    let base = tiny_typo3(true).await;
    std::fs::write(&config, ski_config(dir.path(), &base)).expect("config");
    let (code, stdout, stderr) = concierge(&["sync"], &config);
    assert_eq!(code, 0, "{stdout}{stderr}");

    let server = Server::start_in(
        dir,
        |d| ski_config(d, &base),
        &[("APP_MCP_TOKENS", &format!("n8n:{TOKEN}"))],
    );
    let client = connect(&server.url("/ski/mcp"), TOKEN).await;
    let doc = structured(
        &call(
            &client,
            "get_document",
            json!({"url": "https://www.ser.de/blog/packliste/"}),
        )
        .await,
    );
    assert_eq!(doc["truncated"], true, "{doc}");
    assert_eq!(doc["markdown"].as_str().unwrap().chars().count(), 20_000);
    assert!(doc["length"].as_u64().unwrap() > 30_000);
}

/// A TYPO3 whose records phase waits behind a gate: a proxy in front of the sample feed's
/// simulator that holds every `POST /api/content/records` until the test opens the gate. The
/// manifest passes at once, so the first sync is under way and the mirror still empty.
async fn slow_typo3() -> (String, tokio::sync::watch::Sender<bool>) {
    use axum::extract::{Request, State};
    let addr = common::ski::feed_simulator(examples().join("ski/feed")).await;
    let (gate, opened) = tokio::sync::watch::channel(false);
    let upstream = format!("http://{addr}");
    let forward = move |State(mut opened): State<tokio::sync::watch::Receiver<bool>>,
                        request: Request| {
        let upstream = upstream.clone();
        async move {
            if request.uri().path() == "/api/content/records" {
                let _ = opened.wait_for(|open| *open).await;
            }
            let (parts, body) = request.into_parts();
            let body = axum::body::to_bytes(body, 1 << 20)
                .await
                .unwrap_or_default();
            let answer = reqwest::Client::new()
                .request(parts.method, format!("{upstream}{}", parts.uri))
                .headers(parts.headers)
                .body(body)
                .send()
                .await
                .expect("the simulator answers");
            let status = answer.status();
            let body = answer.bytes().await.unwrap_or_default();
            (status, [("content-type", "application/json")], body)
        }
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let app = axum::Router::new().fallback(forward).with_state(opened);
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, gate)
}

async fn health(server: &Server) -> (u16, Value) {
    let answer = reqwest::get(server.url("/health")).await.expect("/health");
    let status = answer.status().as_u16();
    (status, answer.json().await.expect("JSON"))
}

/// The first customer after a deploy is told "loading, try again", never "no trips"; once the
/// first sync has filled the mirror the catalog answers without waiting for a later call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_the_first_sync_the_catalog_is_loading_not_empty() {
    let (base, gate) = slow_typo3().await;
    let server = Server::start(
        |d| {
            ski_config(d, &base)
                .replace(
                    "schedule = { enabled = false }",
                    "schedule = { at_start = true }",
                )
                .replace(
                    r#"api_key = "test-key" }"#,
                    r#"api_key = "test-key", timeout = "60s" }"#,
                )
        },
        &[("APP_MCP_TOKENS", &format!("n8n:{TOKEN}"))],
    );
    let client = connect(&server.url("/ski/mcp"), TOKEN).await;

    for (tool, arguments) in [
        ("search_trips", json!({})),
        ("get_trip", json!({"code": "SSLMP"})),
    ] {
        let result = call(&client, tool, arguments).await;
        assert_eq!(result.is_error, Some(true), "{tool}: {result:?}");
        assert!(result.structured_content.is_none(), "{tool}: {result:?}");
        let text = serde_json::to_string(&result.content).unwrap();
        assert!(text.contains("catalog_loading"), "{tool}: {text}");
        assert!(text.contains("still loading; try again"), "{tool}: {text}");
    }
    let (status, report) = health(&server).await;
    assert_eq!(status, 503, "{report}");
    assert_eq!(report["status"], "starting", "{report}");
    assert_eq!(
        report["upstreams"]["trips"]["status"], "starting",
        "{report}"
    );

    gate.send(true).expect("open the gate");
    // Bounded wait for the sync to publish the records. `/health` only looks (it never rebuilds),
    // so it turning 200 shows the catalog followed the mirror on its own, not on the next call.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (status, report) = health(&server).await;
        if status == 200 {
            assert_eq!(report["status"], "ok", "{report}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never loaded: {report}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let found = structured(&call(&client, "search_trips", json!({})).await);
    assert!(!results(&found).is_empty(), "{found}");
    assert!(found["total"].as_u64().unwrap() > 0, "{found}");
    assert!(found["dataAsOf"].is_string(), "{found}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// A sync that changes the mirror is seen by the very next call: no call is answered from a
/// catalog older than a mirror change already known of (here a sync outside the server process,
/// as `concierge sync` from cron runs it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_call_after_a_sync_that_changed_the_mirror_sees_the_change() {
    use chrono::{TimeZone, Utc};
    use concierge_trips::content::clock::ManualClock;
    use concierge_trips::content::store::SqlStore;
    use concierge_trips::content::sync::{FeedSettings, Outcome, RunOptions, Syncer};

    let server = ski_server().await;
    let client = connect(&server.url("/ski/mcp"), TOKEN).await;
    let before = structured(&call(&client, "get_trip", json!({"code": "SSLMP"})).await);
    assert_eq!(
        before["results"][0]["title"], "Skiopening Les Menuires",
        "{before}"
    );

    // TYPO3 renames the product: the same feed with one record changed.
    let feed = server.dir.path().join("feed-renamed");
    copy_dir(&examples().join("ski/feed"), &feed);
    let edit = |name: &str, list: &str, change: &dyn Fn(&mut Value) -> bool| {
        let path = feed.join(name);
        let mut document: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("JSON");
        let list = document[list].as_array_mut().expect("a list of items");
        let changed = list.iter_mut().map(change).filter(|c| *c).count();
        assert_eq!(changed, 1, "{name}");
        std::fs::write(&path, document.to_string()).expect("write");
    };
    let is_sslmp = |item: &Value| item["type"] == "product" && item["uid"] == 1201;
    edit("manifest.json", "items", &|item| {
        if !is_sslmp(item) {
            return false;
        }
        item["modified"] = json!("2026-11-30T09:00:00+01:00");
        item["title"] = json!("Skiopening Les Menuires Zauberwoche");
        true
    });
    edit("records.json", "records", &|item| {
        if !is_sslmp(item) {
            return false;
        }
        item["data"]["title"] = json!("Skiopening Les Menuires Zauberwoche");
        true
    });
    let addr = common::ski::feed_simulator(feed).await;
    let database = server.dir.path().join("content.sqlite");
    let syncer = Syncer::new(
        FeedSettings {
            base_url: format!("http://{addr}"),
            api_key: "test-key".into(),
            timeout: std::time::Duration::from_secs(10),
            lock_path: server.dir.path().join("content.sqlite.sync.lock"),
        },
        std::sync::Arc::new(SqlStore::open(&database).await.expect("store")),
        std::sync::Arc::new(ManualClock::at(
            Utc.with_ymd_and_hms(2026, 12, 1, 2, 0, 0).unwrap(),
        )),
    )
    .expect("syncer");
    let report = syncer.run(RunOptions::default()).await.expect("sync");
    assert_eq!(report.outcome, Outcome::Completed, "{report:?}");

    // At once, without waiting for any background rebuild.
    let after = structured(&call(&client, "get_trip", json!({"code": "SSLMP"})).await);
    assert_eq!(
        after["results"][0]["title"], "Skiopening Les Menuires Zauberwoche",
        "{after}"
    );
    let found = structured(&call(&client, "search_trips", json!({"query": "Zauberwoche"})).await);
    assert!(
        results(&found)
            .iter()
            .all(|r| r["code"] == "SSLMP" && r["title"] == "Skiopening Les Menuires Zauberwoche"),
        "{found}"
    );
    assert!(!results(&found).is_empty(), "{found}");
}

/// TYPO3 behind the fault proxy, for the content sync: a manifest cut mid-body, cut short as
/// JSON, trickled past the timeout, a host that does not resolve and a TLS handshake that fails
/// each end the run as `manifest_failed` within the timeout and change nothing; with the fault
/// gone the next run completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_network_fault_fails_the_manifest_changes_nothing_and_the_next_run_completes() {
    use chrono::{TimeZone, Utc};
    use common::faults::{Fault, FaultProxy, UNRESOLVABLE, tls_mismatch};
    use concierge_trips::content::clock::ManualClock;
    use concierge_trips::content::store::{ContentStore, SqlStore};
    use concierge_trips::content::sync::{FeedSettings, Outcome, RunOptions, Syncer};
    use std::sync::Arc;
    use std::time::Duration;

    let dir = tempfile::tempdir().unwrap();
    let feed = common::ski::feed_simulator(examples().join("ski/feed")).await;
    let proxy = FaultProxy::start(&format!("http://{feed}")).await;
    let store = Arc::new(
        SqlStore::open(&dir.path().join("content.sqlite"))
            .await
            .unwrap(),
    );
    // The night window: no page budget; a manual clock: the pacing costs no time.
    let clock = ManualClock::at(Utc.with_ymd_and_hms(2026, 12, 1, 1, 0, 0).unwrap());
    let syncer = |base_url: String| {
        Syncer::new(
            FeedSettings {
                base_url,
                api_key: "test-key".into(),
                timeout: Duration::from_secs(1),
                lock_path: dir.path().join("content.sqlite.sync.lock"),
            },
            store.clone(),
            Arc::new(clock.clone()),
        )
        .unwrap()
    };
    let through_proxy = syncer(proxy.base.clone());
    let first = through_proxy.run(RunOptions::default()).await.unwrap();
    assert_eq!(first.outcome, Outcome::Completed, "{first:?}");
    let mirrored = store.documents().await.unwrap();
    assert!(!mirrored.is_empty());

    let faults = [
        Fault::ResetMidBody,
        Fault::TruncatedJson,
        Fault::Trickle(Duration::from_millis(50)),
    ];
    for fault in faults {
        proxy.set(fault.clone());
        let started = std::time::Instant::now();
        let report = through_proxy
            .run(RunOptions {
                refresh: true,
                ..RunOptions::default()
            })
            .await
            .unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{fault:?} held the run {:?}",
            started.elapsed()
        );
        assert!(
            matches!(report.outcome, Outcome::ManifestFailed(_)),
            "{fault:?}: {report:?}"
        );
        assert_eq!(store.documents().await.unwrap(), mirrored, "{fault:?}");
    }
    for base in [UNRESOLVABLE.to_string(), tls_mismatch(&proxy)] {
        let report = syncer(base.clone())
            .run(RunOptions::default())
            .await
            .unwrap();
        assert!(
            matches!(report.outcome, Outcome::ManifestFailed(_)),
            "{base}: {report:?}"
        );
        assert_eq!(store.documents().await.unwrap(), mirrored, "{base}");
    }

    proxy.set(Fault::Pass);
    let recovered = through_proxy.run(RunOptions::default()).await.unwrap();
    assert_eq!(recovered.outcome, Outcome::Completed, "{recovered:?}");
    assert_eq!(store.documents().await.unwrap(), mirrored);
}

/// Fifty SIGKILLs of `concierge sync` at random moments inside its run (manifest, records,
/// pages; every run has work: the feed's items change each second), each followed by a check
/// that the mirror opens and reads whole; then one run to the end completes, and the mirror is
/// exactly what an uninterrupted sync makes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_sigkills_of_the_sync_leave_a_mirror_that_opens_and_the_next_run_completes() {
    use common::crash::Moments;
    use concierge_trips::content::store::{ContentStore, SqlStore};
    use std::time::Duration;
    let typo3 = typo3_of(true, true).await;
    let killed = tempfile::tempdir().unwrap();
    let config = killed.path().join("concierge.toml");
    std::fs::write(&config, ski_config(killed.path(), &typo3)).unwrap();
    let database = killed.path().join("content.sqlite");
    let mut moments = Moments::new(0x5eed_0000_0000_0004);
    let (mut cut, mut round) = (0, 0);
    // Until fifty kills landed inside a run (a kill after the run ended cut nothing).
    while cut < 50 && round < 200 {
        round += 1;
        let mut sync = std::process::Command::new(common::BIN)
            .args(["sync", "--config"])
            .arg(&config)
            .env("RUST_LOG", "off")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        tokio::time::sleep(moments.next(Duration::ZERO, Duration::from_millis(900))).await;
        if sync.try_wait().unwrap().is_none() {
            cut += 1;
        }
        let _ = sync.kill();
        sync.wait().unwrap();
        if database.exists() {
            let store = SqlStore::open(&database)
                .await
                .unwrap_or_else(|e| panic!("round {round}: the mirror does not open: {e}"));
            store
                .documents()
                .await
                .unwrap_or_else(|e| panic!("round {round}: the mirror does not read: {e}"));
        }
    }
    assert_eq!(cut, 50, "fifty kills cut a run, in {round} rounds");
    let (code, stdout, stderr) = concierge(&["sync"], &config);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains(r#""outcome":"completed""#), "{stdout}");

    let clean = tempfile::tempdir().unwrap();
    let clean_config = clean.path().join("concierge.toml");
    std::fs::write(&clean_config, ski_config(clean.path(), &typo3)).unwrap();
    let (code, stdout, _) = concierge(&["sync"], &clean_config);
    assert_eq!(code, 0, "{stdout}");
    let read = |path: std::path::PathBuf| async move {
        let documents = SqlStore::open(&path)
            .await
            .unwrap()
            .documents()
            .await
            .unwrap();
        documents
            .iter()
            .map(|d| {
                (
                    d.reference(),
                    d.page_markdown().map(str::to_string),
                    d.is_searchable(),
                )
            })
            .map(|entry| format!("{entry:?}"))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        read(database).await,
        read(clean.path().join("content.sqlite")).await,
        "the mirror after fifty kills is the mirror of one clean run"
    );
}
