//! Session ids across the instances of one deployment (`[state] instance`, `session_secret`):
//! a session is its opener's on every instance, so a stolen id is refused (403) even where it
//! was never held; its opener gets 404 there, and initializes again, as the MCP transport says.

mod common;

use axum::Router;
use axum::body::Body;
use concierge_server::{Apps, Config, Platform};
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

const SECRET: &str = "a secret every instance of the test shares";

async fn instance(name: &str, secret: &str) -> Router {
    let config = format!(
        r#"
[server]
listen = "127.0.0.1:0"

[state]
instance = "{name}"
session_secret = "{secret}"

[[endpoint]]
path = "/fake/mcp"
tools = ["fake.*"]
auth = {{ kind = "tokens", env = "FAKE_TOKENS" }}
session = "stateful"
"#
    );
    common::instance(&config, "alice:token-a,bob:token-b")
        .await
        .0
}

fn post(token: &str, session: Option<&str>, message: Value) -> Request<Body> {
    let mut request = Request::post("/fake/mcp")
        .header("host", "127.0.0.1:8080")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("authorization", format!("Bearer {token}"));
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.body(Body::from(message.to_string())).unwrap()
}

async fn send(app: &Router, request: Request<Body>) -> (StatusCode, Option<String>) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    // Read the body whole: an initialize's answer is a stream that ends with it.
    let _ = response.into_body().collect().await;
    (status, session)
}

/// Opens a session of `token` on `app`; its id.
async fn open(app: &Router, token: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let (status, session) = send(app, post(token, None, initialize)).await;
    assert_eq!(status, StatusCode::OK);
    session.expect("a session id")
}

fn list() -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
}

#[tokio::test]
async fn a_session_is_its_openers_on_every_instance() {
    let one = instance("i1", SECRET).await;
    let two = instance("i2", SECRET).await;
    let session = open(&one, "token-a").await;
    assert!(
        session.starts_with("i1."),
        "the balancer's routing tag: {session}"
    );

    // The opener, where the session lives: served.
    assert_eq!(
        send(&one, post("token-a", Some(&session), list())).await.0,
        StatusCode::OK
    );
    // Another client with the same id: refused on both instances, also where it never lived.
    assert_eq!(
        send(&one, post("token-b", Some(&session), list())).await.0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        send(&two, post("token-b", Some(&session), list())).await.0,
        StatusCode::FORBIDDEN
    );
    // The opener on an instance that does not hold it (its own died): 404, so it initializes
    // again there.
    assert_eq!(
        send(&two, post("token-a", Some(&session), list())).await.0,
        StatusCode::NOT_FOUND
    );
    let again = open(&two, "token-a").await;
    assert!(again.starts_with("i2."), "{again}");
    assert_eq!(
        send(&two, post("token-a", Some(&again), list())).await.0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn a_forged_or_foreign_deployments_id_is_refused() {
    let one = instance("i1", SECRET).await;
    let session = open(&one, "token-b").await;
    // bob edits the mac of his own id to reach alice's session space: not hers, not his.
    let mut forged = session.clone();
    let last = forged.pop().unwrap();
    forged.push(if last == '0' { '1' } else { '0' });
    assert_eq!(
        send(&one, post("token-b", Some(&forged), list())).await.0,
        StatusCode::FORBIDDEN
    );
    // A deployment with another secret does not take this one's ids as its own.
    let elsewhere = instance("i1", "another secret, of another deployment!!").await;
    assert_eq!(
        send(&elsewhere, post("token-b", Some(&session), list()))
            .await
            .0,
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn a_bad_instance_name_or_short_secret_is_a_config_error() {
    for (state, key) in [
        ("instance = \"i 1\"", "state.instance"),
        ("session_secret = \"short\"", "state.session_secret"),
    ] {
        let config = format!(
            "[server]\nlisten = \"127.0.0.1:0\"\n\n[state]\n{state}\n\n[[endpoint]]\npath = \"/x/mcp\"\nhandler = \"none\"\nauth = {{ kind = \"none\" }}\n"
        );
        let env = |_: &str| None;
        let config = Config::parse(&config, &env).expect("parses");
        let errors = match Platform::build(config, Apps::new(), &env).await {
            Ok(_) => panic!("{state} was accepted"),
            Err(errors) => errors,
        };
        assert!(
            errors.iter().any(|e| e.to_string().starts_with(key)),
            "{state}: {errors:?}"
        );
    }
}
