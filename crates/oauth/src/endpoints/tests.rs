//! The token endpoint driven over HTTP in-process (a listener on loopback, no binary): what
//! each grant answers, and how a refusal looks on the wire.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::store::{Client, Grant};
use crate::util::{hash, random_token};
use crate::{AuthServer, OAuthConfig};

const RESOURCE: &str = "https://mcp.example/mcp";

struct Running {
    base: String,
    server: Arc<AuthServer>,
    _dir: tempfile::TempDir,
}

async fn start() -> Running {
    let dir = tempfile::tempdir().expect("temp dir");
    let config: OAuthConfig = serde_json::from_value(json!({
        "issuer": "https://mcp.example",
        "database": dir.path().join("oauth.sqlite"),
        "scopes": ["coffee:read", "coffee:write"],
    }))
    .expect("config");
    let server = AuthServer::open(&config, vec![RESOURCE.into()], Arc::new(|_| {}), None)
        .await
        .expect("server");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("listener");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(axum::serve(listener, super::router(server.clone())).into_future());
    Running {
        base,
        server,
        _dir: dir,
    }
}

/// A client (confidential with `secret`) and the form that redeems a fresh code for both scopes.
async fn client_with_code(running: &Running, secret: Option<&str>) -> (String, String) {
    let client_id = format!("dcr-{}", random_token(8));
    let redirect_uri = "https://app.example/cb".to_string();
    running
        .server
        .store
        .put_client(&Client {
            client_id: client_id.clone(),
            secret_hash: secret.map(hash),
            name: "test".into(),
            redirect_uris: vec![redirect_uri.clone()],
            grant_types: vec!["authorization_code".into(), "refresh_token".into()],
            auth_method: if secret.is_some() {
                "client_secret_post"
            } else {
                "none"
            }
            .into(),
            scopes: Vec::new(),
            source: "dcr".into(),
        })
        .await
        .expect("client");
    let verifier = random_token(32);
    let code = random_token(32);
    let grant = Grant {
        client_id: client_id.clone(),
        user: Some("alice".into()),
        scope: "coffee:read coffee:write".into(),
        resource: RESOURCE.into(),
        redirect_uri: redirect_uri.clone(),
        code_challenge: hash(&verifier),
        role: Some("user".into()),
    };
    running
        .server
        .store
        .put_code(&code, &grant, Duration::from_secs(60))
        .await
        .expect("code");
    let form = encoded(&[
        ("grant_type", "authorization_code"),
        ("client_id", &client_id),
        ("client_secret", secret.unwrap_or("")),
        ("code", &code),
        ("redirect_uri", &redirect_uri),
        ("code_verifier", &verifier),
    ]);
    (client_id, form)
}

fn encoded(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs.iter().filter(|(_, v)| !v.is_empty()))
        .finish()
}

async fn post(running: &Running, form: String) -> (u16, reqwest::header::HeaderMap, Value) {
    let answer = reqwest::Client::new()
        .post(format!("{}/token", running.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .expect("answer");
    let status = answer.status().as_u16();
    let headers = answer.headers().clone();
    (status, headers, answer.json().await.expect("JSON"))
}

#[tokio::test]
async fn a_confidential_client_keeps_its_refresh_token_a_public_one_rotates() {
    let running = start().await;
    for secret in [Some("a machine secret"), None] {
        let (client_id, form) = client_with_code(&running, secret).await;
        let (status, headers, issued) = post(&running, form).await;
        assert_eq!(status, 200, "{issued}");
        assert_eq!(headers["cache-control"], "no-store");
        assert_eq!(headers["pragma"], "no-cache");
        let keys: Vec<&str> = issued
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "access_token",
                "token_type",
                "expires_in",
                "scope",
                "refresh_token"
            ]
        );
        let first = issued["refresh_token"].as_str().unwrap().to_string();
        let (status, _, refreshed) = post(
            &running,
            encoded(&[
                ("grant_type", "refresh_token"),
                ("client_id", &client_id),
                ("client_secret", secret.unwrap_or("")),
                ("refresh_token", &first),
                ("scope", "coffee:read"),
            ]),
        )
        .await;
        assert_eq!(status, 200, "{refreshed}");
        assert_eq!(refreshed["scope"], "coffee:read");
        let second = refreshed["refresh_token"]
            .as_str()
            .expect("a refresh token");
        assert_eq!(second == first, secret.is_some(), "{secret:?}");
    }
}

#[tokio::test]
async fn refusals_are_rfc_6749_errors_with_their_status_and_headers() {
    let running = start().await;
    let (client_id, _) = client_with_code(&running, Some("a machine secret")).await;
    let (status, headers, body) = post(
        &running,
        encoded(&[
            ("grant_type", "client_credentials"),
            ("client_id", &client_id),
            ("client_secret", "wrong"),
        ]),
    )
    .await;
    assert_eq!(status, 401);
    assert_eq!(
        body,
        json!({"error": "invalid_client", "error_description": "unknown client or wrong secret"})
    );
    assert!(headers.contains_key("www-authenticate"));
    assert_eq!(headers["cache-control"], "no-store");

    // The right secret: a grant the server does not know, and one this client may not use.
    for (grant_type, error) in [
        ("password", "unsupported_grant_type"),
        ("client_credentials", "unauthorized_client"),
    ] {
        let (status, _, body) = post(
            &running,
            encoded(&[
                ("grant_type", grant_type),
                ("client_id", &client_id),
                ("client_secret", "a machine secret"),
            ]),
        )
        .await;
        assert_eq!(status, 400, "{grant_type}: {body}");
        assert_eq!(body["error"], error, "{grant_type}");
    }
}

/// A public client whose refresh answer was lost presents the rotated token again: within the
/// rotation grace it gets a new pair and its family lives on; both successors work.
#[tokio::test]
async fn a_rotation_retried_within_the_grace_is_answered_not_taken_for_theft() {
    let running = start().await;
    let (client_id, form) = client_with_code(&running, None).await;
    let (_, _, issued) = post(&running, form).await;
    let first = issued["refresh_token"].as_str().unwrap().to_string();
    let refresh = |token: String| {
        let client_id = client_id.clone();
        let running = &running;
        async move {
            post(
                running,
                encoded(&[
                    ("grant_type", "refresh_token"),
                    ("client_id", &client_id),
                    ("refresh_token", &token),
                ]),
            )
            .await
        }
    };
    let (status, _, lost) = refresh(first.clone()).await;
    assert_eq!(status, 200, "{lost}");
    let (status, _, retried) = refresh(first).await;
    assert_eq!(status, 200, "the retry is answered: {retried}");
    for successor in [&lost, &retried] {
        let token = successor["refresh_token"].as_str().unwrap().to_string();
        let (status, _, next) = refresh(token).await;
        assert_eq!(status, 200, "the family lives on: {next}");
    }
}
