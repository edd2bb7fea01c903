//! The ski seed's token rules, session binding and the HTTP surface, over real HTTP.

use crate::common;

use common::*;
use serde_json::json;

const TOKENS: &str = "n8n:token-n8n-3f9c,claude-desktop:token-claude-a71e";

fn server(tokens: Option<&str>) -> Server {
    let env: Vec<(&str, &str)> = tokens
        .map(|t| vec![("APP_MCP_TOKENS", t)])
        .unwrap_or_default();
    Server::start(|dir| coffee_config(dir, ""), &env)
}

#[tokio::test]
async fn a_listed_token_admits_its_client_and_the_name_becomes_the_caller() {
    let server = server(Some(TOKENS));
    let client = connect(&server.url("/coffee/mcp"), "token-claude-a71e").await;
    let result = call(&client, "search_menu", json!({"query": "кокос"})).await;
    assert_eq!(result.is_error, Some(false));
    let audit = server.audit_lines(1);
    let call = audit
        .iter()
        .find(|e| e["tool"] == "search_menu")
        .expect("audited");
    assert_eq!(call["client"], "claude-desktop");
    assert_eq!(call["outcome"], "ok");
    assert_eq!(call["endpoint"], "/coffee/mcp");
    assert_eq!(call["arguments"], json!({"query": "кокос"}));
    assert_eq!(call["result_count"], 1);
    assert!(call["trace_id"].as_str().is_some_and(|t| t.len() == 32));
    assert!(call["rpc_id"].is_number());
    assert!(call["duration_ms"].is_number());
    assert!(call["ts"].as_str().is_some_and(|t| t.ends_with('Z')));
}

#[tokio::test]
async fn missing_wrong_and_query_string_tokens_get_401_with_bearer_challenge() {
    let server = server(Some(TOKENS));
    let raw = Raw::new();
    let url = server.url("/coffee/mcp");
    for token in [
        None,
        Some("token-n8n-3f9"),
        Some("token-n8n-3f9cX"),
        Some(""),
    ] {
        let answer = raw.post(&url, token, None, initialize(1)).await;
        assert_eq!(answer.status, 401, "token {token:?}");
        let challenge = answer
            .headers
            .get("www-authenticate")
            .unwrap()
            .to_str()
            .unwrap();
        assert!(challenge.starts_with("Bearer"), "{challenge}");
    }
    let in_query = raw
        .post(
            &format!("{url}?access_token=token-n8n-3f9c"),
            None,
            None,
            initialize(1),
        )
        .await;
    assert_eq!(in_query.status, 401);
    let refusals = server.audit_lines(5);
    assert_eq!(count_outcome(&refusals, "unauthorized"), 5);
    assert!(refusals.iter().all(|e| e.get("client").is_none()));
}

#[tokio::test]
async fn each_malformed_list_makes_every_request_500_and_never_shows_tokens() {
    for list in [
        "n8n:aaa,:bbb",             // entry without a name
        "n8n:aaa,n8n:bbb",          // duplicate name
        "n8n:shared,claude:shared", // one token, two names
        "n8n:aaa,claude:",          // empty token
        "n8n-without-token",        // no separator
    ] {
        let server = server(Some(list));
        let answer = Raw::new()
            .post(&server.url("/coffee/mcp"), Some("aaa"), None, initialize(1))
            .await;
        assert_eq!(answer.status, 500, "{list}");
        assert!(
            !answer.body.contains("aaa") && !answer.body.contains("shared"),
            "{}",
            answer.body
        );
        assert!(answer.body.contains("misconfigured"), "{}", answer.body);
    }
}

#[tokio::test]
async fn an_empty_or_unset_list_refuses_everyone() {
    for tokens in [Some(""), Some(" , "), None] {
        let server = server(tokens);
        let answer = Raw::new()
            .post(
                &server.url("/coffee/mcp"),
                Some("demo-token"),
                None,
                initialize(1),
            )
            .await;
        assert_eq!(answer.status, 401, "{tokens:?}");
    }
}

#[tokio::test]
async fn a_session_cannot_be_used_with_another_clients_token() {
    let server = server(Some(TOKENS));
    let raw = Raw::new();
    let url = server.url("/coffee/mcp");
    let session = raw.open_session(&url, "token-n8n-3f9c").await;

    let own = raw
        .post(&url, Some("token-n8n-3f9c"), Some(&session), tools_list(2))
        .await;
    assert_eq!(own.status, 200);
    assert_eq!(
        own.message()["result"]["tools"].as_array().unwrap().len(),
        4
    );

    let stolen = raw
        .post(
            &url,
            Some("token-claude-a71e"),
            Some(&session),
            tools_call(3, "get_menu", json!({})),
        )
        .await;
    assert_eq!(stolen.status, 403, "{}", stolen.body);
    assert!(stolen.body.contains("another client"));
    let audit = server.audit_lines(1);
    assert!(
        audit
            .iter()
            .any(|e| e["outcome"] == "session_refused" && e["client"] == "claude-desktop")
    );
    assert!(
        !audit.iter().any(|e| e["tool"] == "get_menu"),
        "the tool must not have run"
    );
}

#[tokio::test]
async fn an_unknown_or_deleted_session_is_404() {
    let server = server(Some(TOKENS));
    let raw = Raw::new();
    let url = server.url("/coffee/mcp");
    let unknown = raw
        .post(
            &url,
            Some("token-n8n-3f9c"),
            Some("no-such-session"),
            tools_list(2),
        )
        .await;
    assert_eq!(unknown.status, 404);

    let session = raw.open_session(&url, "token-n8n-3f9c").await;
    let deleted = raw
        .http
        .delete(&url)
        .bearer_auth("token-n8n-3f9c")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    let after = raw
        .post(&url, Some("token-n8n-3f9c"), Some(&session), tools_list(3))
        .await;
    assert_eq!(after.status, 404);
}

#[tokio::test]
async fn an_idle_session_expires_into_404() {
    let server = Server::start(
        |dir| coffee_config(dir, "idle_timeout = \"300ms\""),
        &[("APP_MCP_TOKENS", TOKENS)],
    );
    let raw = Raw::new();
    let url = server.url("/coffee/mcp");
    let session = raw.open_session(&url, "token-n8n-3f9c").await;
    // The one wait in this suite: expiry is what is under test, and a server in another process
    // takes no clock we could move. The timeout is set short to keep it brief.
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    let after = raw
        .post(&url, Some("token-n8n-3f9c"), Some(&session), tools_list(2))
        .await;
    assert_eq!(after.status, 404);
}

#[tokio::test]
async fn health_needs_no_token_and_foreign_hosts_are_refused() {
    let server = server(Some(TOKENS));
    let health = common::oauth::get_json(&server.url("/health")).await;
    assert_eq!(health["status"], "ok");
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));

    let foreign = Raw::new()
        .http
        .post(server.url("/coffee/mcp"))
        .bearer_auth("token-n8n-3f9c")
        .header("host", "evil.example.com")
        .header("accept", "application/json, text/event-stream")
        .json(&initialize(1))
        .send()
        .await
        .unwrap();
    assert!(foreign.status().is_client_error(), "{}", foreign.status());
}

#[tokio::test]
async fn the_demo_default_applies_only_while_the_variable_is_unset() {
    let with_default = |dir: &std::path::Path| {
        coffee_config(dir, "").replace(
            "env = \"APP_MCP_TOKENS\" }",
            "env = \"APP_MCP_TOKENS\", default = \"demo:demo-token\" }",
        )
    };
    let unset = Server::start(with_default, &[]);
    let answer = Raw::new()
        .post(
            &unset.url("/coffee/mcp"),
            Some("demo-token"),
            None,
            initialize(1),
        )
        .await;
    assert_eq!(answer.status, 200);

    // An operator who empties the list means "nobody", not "the demo token".
    let emptied = Server::start(with_default, &[("APP_MCP_TOKENS", "")]);
    let answer = Raw::new()
        .post(
            &emptied.url("/coffee/mcp"),
            Some("demo-token"),
            None,
            initialize(1),
        )
        .await;
    assert_eq!(answer.status, 401);
}

#[tokio::test]
async fn a_handler_endpoint_sits_behind_the_same_guard() {
    let config = |dir: &std::path::Path| {
        format!(
            "{}\n[[endpoint]]\npath = \"/conformance/mcp\"\nhandler = \"conformance\"\nauth = {{ kind = \"tokens\" }}\n",
            coffee_config(dir, "")
        )
    };
    let server = Server::start(config, &[("APP_MCP_TOKENS", TOKENS)]);
    let raw = Raw::new();
    let url = server.url("/conformance/mcp");
    assert_eq!(raw.post(&url, None, None, initialize(1)).await.status, 401);
    assert_eq!(
        raw.post(&url, Some("token-n8n-3f9c"), None, initialize(1))
            .await
            .status,
        200
    );
}

/// `auth = { kind = "tokens", file = … }`: the tokens a mounted secret holds (relative to the
/// config's folder, `#` comments allowed), and a file others may read refused by `check`.
#[tokio::test]
async fn tokens_from_a_file_beside_the_config() {
    use std::os::unix::fs::PermissionsExt;
    let server = Server::start(
        |dir| {
            let tokens = dir.join("mcp-tokens");
            std::fs::write(&tokens, "# rotated by the operator\nn8n:token-from-file\n").unwrap();
            std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
            coffee_config(dir, "").replace(
                r#"auth = { kind = "tokens", env = "APP_MCP_TOKENS" }"#,
                r#"auth = { kind = "tokens", file = "mcp-tokens" }"#,
            )
        },
        &[],
    );
    let client = connect(&server.url("/coffee/mcp"), "token-from-file").await;
    let result = call(&client, "search_menu", json!({"query": "кокос"})).await;
    assert_eq!(result.is_error, Some(false));
    client.cancel().await.ok();

    let tokens = server.dir.path().join("mcp-tokens");
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o644)).unwrap();
    let checked = std::process::Command::new(BIN)
        .args(["check", "--config"])
        .arg(server.dir.path().join("concierge.toml"))
        .output()
        .unwrap();
    assert!(!checked.status.success());
    let said = String::from_utf8_lossy(&checked.stdout).to_string()
        + &String::from_utf8_lossy(&checked.stderr);
    assert!(said.contains("chmod 600"), "{said}");
}
