//! The ski content tools over MCP: a mirror synced from the sample feed (through the TYPO3
//! simulator, on a manual clock so the load rules cost no time), served by a real `concierge`
//! process, asked by a real MCP client.

mod common;

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
    assert_eq!(nothing, json!({"results": []}));
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
    use axum::routing::{get, post};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
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
        .route("/api/content/manifest", get(move || async move { axum::Json(manifest) }))
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
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let listen = format!("127.0.0.1:{port}");
    let base = format!("http://{listen}");
    let server = Server::start_demo(&[
        ("APP_CMS_SIMULATOR_LISTEN", &listen),
        ("APP_CMS_API_BASE_URL", &base),
    ]);
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
