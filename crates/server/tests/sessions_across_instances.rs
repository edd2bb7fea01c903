//! Session ids across the instances of one deployment (`[state] instance`, `session_secret`):
//! a session is its opener's on every instance, so a stolen id is refused (403) even where it
//! was never held; its opener gets 404 there, and initializes again, as the MCP transport says.

mod common;

use axum::Router;
use axum::body::Body;
use concierge_server::{Apps, Config, Platform};
use concierge_testkit::config::{server, stateful_endpoint};
use concierge_testkit::mcp_post;
use http::{Request, StatusCode};
use serde_json::{Value, json};

const SECRET: &str = "a secret every instance of the test shares";

async fn instance(name: &str, secret: &str) -> Router {
    let state = format!("\n[state]\ninstance = \"{name}\"\nsession_secret = \"{secret}\"\n");
    let config = [
        server(""),
        state,
        stateful_endpoint("/fake/mcp", &["fake.*"]),
    ]
    .concat();
    common::instance(&config, "alice:token-a,bob:token-b")
        .await
        .0
}

fn post(token: &str, session: Option<&str>, message: Value) -> Request<Body> {
    let mut request = mcp_post("/fake/mcp")
        .header("mcp-protocol-version", "2025-06-18")
        .header("authorization", format!("Bearer {token}"));
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.body(Body::from(message.to_string())).unwrap()
}

/// The status of `request` and the session id it was answered with (the body read whole: an
/// initialize's answer is a stream that ends with it).
async fn send(app: &Router, request: Request<Body>) -> (StatusCode, Option<String>) {
    let (status, headers, _) = concierge_testkit::send(app, request).await;
    let session = headers
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
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

/// What a `tools/list` in `session` as `token` on `app` is answered with.
async fn list_status(app: &Router, token: &str, session: &str) -> StatusCode {
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    send(app, post(token, Some(session), list)).await.0
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

    // Who asks where, and the answer.
    let cases = [
        (
            "the opener, where the session lives: served",
            &one,
            "token-a",
            StatusCode::OK,
        ),
        // Another client with the same id: refused on both instances, also where it never lived.
        (
            "another client where it lives",
            &one,
            "token-b",
            StatusCode::FORBIDDEN,
        ),
        (
            "another client where it never lived",
            &two,
            "token-b",
            StatusCode::FORBIDDEN,
        ),
        // The opener on an instance that does not hold it (its own died): 404, so it
        // initializes again there.
        (
            "the opener elsewhere",
            &two,
            "token-a",
            StatusCode::NOT_FOUND,
        ),
    ];
    for (case, app, token, expected) in cases {
        assert_eq!(list_status(app, token, &session).await, expected, "{case}");
    }
    let again = open(&two, "token-a").await;
    assert!(again.starts_with("i2."), "{again}");
    assert_eq!(list_status(&two, "token-a", &again).await, StatusCode::OK);
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
        list_status(&one, "token-b", &forged).await,
        StatusCode::FORBIDDEN
    );
    // A deployment with another secret does not take this one's ids as its own.
    let elsewhere = instance("i1", "another secret, of another deployment!!").await;
    assert_eq!(
        list_status(&elsewhere, "token-b", &session).await,
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
            "{}\n[state]\n{state}\n\n[[endpoint]]\npath = \"/x/mcp\"\nhandler = \"none\"\nauth = {{ kind = \"none\" }}\n",
            server("")
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
