//! OAuth 2.1 end to end: a real `concierge` process with the built-in authorization server, the
//! `oauth2` crate as the client (authorization code + PKCE, refresh), the sign-in form posted as
//! a browser would, and a real MCP client calling tools with the access token.
//!
//! Over 600 lines: one area's end-to-end scenarios (every grant and every refusal of the authorization server); each test reads alone.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::cluster::free_port;
use common::oauth::{get_json, http, post_bearer, post_mcp, query};
use common::{BIN, Server, call, connect, header, structured, tool_names};
use oauth2::basic::{BasicClient, BasicTokenResponse};
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, CsrfToken, EndpointNotSet, EndpointSet,
    PkceCodeChallenge, RedirectUrl, Scope, TokenResponse, TokenUrl,
};
use serde_json::{Value, json};

const PASSWORD: &str = "correct horse battery";

struct Deployment {
    server: Server,
    issuer: String,
    config: std::path::PathBuf,
}

fn config(dir: &Path, issuer: &str, listen: &str) -> String {
    format!(
        r#"
[server]
listen = "{listen}"

[limits]
read = "3/minute"
write = "1/minute"
per_client = "1000/hour"

[audit.calls]
path = "{dir}/log/calls.log"

[audit.oauth]
path = "{dir}/log/oauth.log"

[oauth]
issuer = "{issuer}"
database = "{dir}/oauth.sqlite"
scopes = ["coffee:read", "coffee:order"]
audit = "oauth"

{coffee}
[[endpoint]]
path = "/coffee/mcp"
tools = ["coffee.*"]
auth = {{ kind = "oauth", scopes = ["coffee:read"] }}
tool_scopes = {{ get_menu = ["coffee:read"], search_menu = ["coffee:read"], get_order_status = ["coffee:read"], create_order = ["coffee:order"] }}
audit = "calls"
rate_limit = "read"
write_rate_limit = "write"
client_rate_limit = "per_client"
rate_limit_key = "token"

[[endpoint]]
path = "/other/mcp"
tools = ["coffee.get_menu"]
auth = {{ kind = "oauth" }}
"#,
        dir = dir.display(),
        coffee = common::coffee_app(&dir.join("orders.xlsx")),
    )
}

fn cli(config: &Path, args: &[&str], stdin: &str) -> String {
    let mut child = Command::new(BIN)
        .arg("token")
        .arg("--config")
        .arg(config)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run concierge token");
    common::feed_stdin(&mut child, stdin);
    let out = child.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn deploy() -> Deployment {
    deploy_with("")
}

/// A deployment whose `[oauth]` section gets the `extra` lines.
fn deploy_with(extra: &str) -> Deployment {
    let dir = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let issuer = format!("http://127.0.0.1:{port}");
    let listen = format!("127.0.0.1:{port}");
    let make = |d: &Path| {
        config(d, &issuer, &listen)
            .replace("audit = \"oauth\"", &format!("audit = \"oauth\"\n{extra}"))
    };
    let config_path = dir.path().join("concierge.toml");
    std::fs::write(&config_path, make(dir.path())).expect("config");
    cli(
        &config_path,
        &["add-user", "alice"],
        &format!("{PASSWORD}\n"),
    );
    let server = Server::start_in(dir, make, &[]);
    Deployment {
        config: server.dir.path().join("concierge.toml"),
        server,
        issuer,
    }
}

/// The `oauth2` crate's HTTP hook, over our reqwest.
async fn send(request: oauth2::HttpRequest) -> Result<oauth2::HttpResponse, std::io::Error> {
    let (parts, body) = request.into_parts();
    let mut builder = http()
        .request(parts.method, parts.uri.to_string())
        .body(body);
    for (name, value) in &parts.headers {
        builder = builder.header(name, value);
    }
    let response = builder.send().await.map_err(std::io::Error::other)?;
    let mut answer = http::Response::builder().status(response.status());
    for (name, value) in response.headers() {
        answer = answer.header(name, value);
    }
    let bytes = response.bytes().await.map_err(std::io::Error::other)?;
    answer.body(bytes.to_vec()).map_err(std::io::Error::other)
}

type OAuthClient =
    BasicClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

/// The `oauth2` crate's client for `client_id` against our authorization server.
fn oauth_client(issuer: &str, client_id: &str, redirect: &str) -> OAuthClient {
    BasicClient::new(ClientId::new(client_id.to_string()))
        .set_auth_uri(AuthUrl::new(format!("{issuer}/authorize")).unwrap())
        .set_token_uri(TokenUrl::new(format!("{issuer}/token")).unwrap())
        .set_redirect_uri(RedirectUrl::new(redirect.to_string()).unwrap())
}

/// Signs in and decides; returns where the server sends the browser back to.
async fn sign_in(authorize_url: &str, decision: &str, password: &str) -> reqwest::Url {
    let answer = common::oauth::post_sign_in(authorize_url, "alice", password, decision).await;
    assert!(
        answer.status().is_redirection(),
        "{}: {}",
        answer.status(),
        answer.text().await.unwrap()
    );
    reqwest::Url::parse(answer.headers()["location"].to_str().unwrap()).expect("redirect")
}

/// The code flow as a client runs it: PKCE (asking for `scopes`), alice signs in and allows,
/// the code is exchanged; the code and the tokens it bought.
async fn code_flow(client: &OAuthClient, scopes: &[&str]) -> (String, BasicTokenResponse) {
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut request = client.authorize_url(CsrfToken::new_random);
    for scope in scopes {
        request = request.add_scope(Scope::new(scope.to_string()));
    }
    let (url, _) = request.set_pkce_challenge(challenge).url();
    let back = sign_in(url.as_str(), "allow", PASSWORD).await;
    let code = query(&back, "code").expect("code");
    let tokens = client
        .exchange_code(AuthorizationCode::new(code.clone()))
        .set_pkce_verifier(verifier)
        .request_async(&send)
        .await
        .expect("token exchange");
    (code, tokens)
}

/// An operator-created machine client (`concierge token add-client`): its id and secret.
fn machine_client(config: &Path, name: &str, scopes: &[&str]) -> (String, String) {
    let mut args = vec!["add-client", "--name", name];
    for scope in scopes {
        args.extend(["--scope", scope]);
    }
    let out = cli(config, &args, "");
    let value = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .expect(key)
            .to_string()
    };
    (value("client_id"), value("client_secret"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_code_with_pkce_then_tools_refresh_rotation_and_revocation() {
    // Strict reuse detection: no window for the retry of a rotation whose answer was lost.
    let d = deploy_with("refresh_rotation_grace = \"0s\"");
    let endpoint = d.server.url("/coffee/mcp");

    // Discovery, as a client does it: the 401 names the metadata, the metadata the issuer.
    let challenge = http()
        .post(&endpoint)
        .json(&json!({}))
        .send()
        .await
        .expect("post");
    assert_eq!(challenge.status(), 401);
    let header = header(&challenge, "www-authenticate");
    let metadata_url = format!(
        "{}/.well-known/oauth-protected-resource/coffee/mcp",
        d.issuer
    );
    // Every scope the endpoint's tools can need, not only `auth`'s: a standard client asks for
    // what the challenge names, and would otherwise never hold the order scope.
    assert_eq!(
        header,
        format!("Bearer resource_metadata=\"{metadata_url}\", scope=\"coffee:read coffee:order\"")
    );
    let resource: Value = get_json(&metadata_url).await;
    assert_eq!(resource["resource"], endpoint.as_str());
    assert_eq!(resource["authorization_servers"], json!([d.issuer]));
    let bare: Value = get_json(&format!(
        "{}/.well-known/oauth-protected-resource",
        d.issuer
    ))
    .await;
    assert_eq!(bare["resource"], endpoint.as_str());
    let server: Value = get_json(&format!(
        "{}/.well-known/oauth-authorization-server",
        d.issuer
    ))
    .await;
    assert_eq!(server["issuer"], d.issuer.as_str());
    assert_eq!(server["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(
        server["authorization_response_iss_parameter_supported"],
        true
    );

    // The flow, with the oauth2 crate; the loopback redirect on a port it was not registered with.
    let client_id = common::oauth::register_public(&d.issuer, "Claude Code").await;
    let client = oauth_client(&d.issuer, &client_id, "http://127.0.0.1:54321/callback");
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state) = client
        .authorize_url(CsrfToken::new_random)
        .add_scope(Scope::new("coffee:read".into()))
        .add_scope(Scope::new("coffee:order".into()))
        .add_scope(Scope::new("offline_access".into()))
        .add_extra_param("resource", &endpoint)
        .set_pkce_challenge(challenge)
        .url();
    let back = sign_in(url.as_str(), "allow", PASSWORD).await;
    assert_eq!(back.port(), Some(54321));
    assert_eq!(
        query(&back, "state").as_deref(),
        Some(state.secret().as_str())
    );
    assert_eq!(query(&back, "iss").as_deref(), Some(d.issuer.as_str()));
    let code = query(&back, "code").expect("code");
    let tokens = client
        .exchange_code(AuthorizationCode::new(code.clone()))
        .set_pkce_verifier(verifier)
        .request_async(&send)
        .await
        .expect("token exchange");
    assert_eq!(
        tokens.scopes().unwrap().len(),
        2,
        "offline_access is narrowed away"
    );

    // (A second use of the code is `a_code_used_twice_revokes_what_it_bought`.)
    // The token calls tools; all of them are listed for a token with both scopes.
    let access = tokens.access_token().secret().clone();
    let mcp = connect(&endpoint, &access).await;
    let names = tool_names(&mcp).await;
    assert!(names.contains(&"create_order".to_string()), "{names:?}");
    let menu = structured(&call(&mcp, "get_menu", json!({})).await);
    assert!(!menu["results"].as_array().unwrap().is_empty());
    // `/mcp/` answers too, without a redirect.
    let slash = post_mcp(
        &format!("{endpoint}/"),
        &access,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    assert_eq!(slash.status(), 200);

    // Revoking the access token shuts the door at once.
    let revoked = http()
        .post(format!("{}/revoke", d.issuer))
        .form(&[
            ("token", access.as_str()),
            ("client_id", client_id.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    let status_with = |token: String| {
        let endpoint = endpoint.clone();
        async move {
            let answer = post_bearer(&endpoint, &token).await;
            let challenge = answer
                .headers()
                .get("www-authenticate")
                .map(|h| h.to_str().unwrap().to_string());
            (answer.status().as_u16(), challenge)
        }
    };
    let (status, challenge) = status_with(access.clone()).await;
    assert_eq!(status, 401);
    assert!(challenge.unwrap().contains("error=\"invalid_token\""));

    // Refresh rotates; the old refresh token used again revokes the whole family (here at
    // once; by default only after the rotation grace, see the crash test below).
    let first_refresh = tokens.refresh_token().expect("refresh token").clone();
    let rotated = client
        .exchange_refresh_token(&first_refresh)
        .request_async(&send)
        .await
        .expect("refresh");
    let second_refresh = rotated.refresh_token().expect("rotated").clone();
    assert_ne!(second_refresh.secret(), first_refresh.secret());
    let second_access = rotated.access_token().secret().clone();
    assert_ne!(
        status_with(second_access.clone()).await.0,
        401,
        "the refreshed access token works"
    );
    assert!(
        client
            .exchange_refresh_token(&first_refresh)
            .request_async(&send)
            .await
            .is_err(),
        "reuse refused"
    );
    // The theft is detected: what the family issued stops at once, its access tokens included
    // (OAuth 2.1 §4.1.3), not an hour later.
    assert_eq!(
        status_with(second_access).await.0,
        401,
        "the access token of a reused family is revoked"
    );
    assert!(
        client
            .exchange_refresh_token(&second_refresh)
            .request_async(&send)
            .await
            .is_err(),
        "the family is revoked after reuse"
    );

    // The authorization server's audit: issue, refresh, reuse, revocation; never a token.
    let lines = d.server.audit_lines_of("oauth.log", 6);
    let events: Vec<&str> = lines.iter().filter_map(|l| l["code"].as_str()).collect();
    for event in [
        "client_registered",
        "authorization_granted",
        "token_issued",
        "token_refreshed",
        "refresh_token_reuse",
        "token_revoked",
    ] {
        assert!(events.contains(&event), "{event} in {events:?}");
    }
    let text = serde_json::to_string(&lines).unwrap();
    assert!(!text.contains(&access) && !text.contains(first_refresh.secret()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_credentials_scopes_hide_tools_and_refuse_calls() {
    let d = deploy();
    let (id, secret) = machine_client(&d.config, "DeerFlow", &["coffee:read"]);
    let token: Value = http()
        .post(format!("{}/token", d.issuer))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", id.as_str()),
            ("client_secret", secret.as_str()),
            ("scope", "coffee:read coffee:order"),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(token["scope"], "coffee:read", "{token}");
    let access = token["access_token"].as_str().unwrap();
    let mcp = connect(&d.server.url("/coffee/mcp"), access).await;
    let names = tool_names(&mcp).await;
    assert!(
        names.contains(&"get_menu".to_string()) && !names.contains(&"create_order".to_string()),
        "{names:?}"
    );
    // Calling it anyway: 403 with the step-up challenge naming every scope needed.
    let refused = post_mcp(
        &d.server.url("/coffee/mcp"),
        access,
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "create_order", "arguments": {"items": [{"drink": "Латте", "qty": 1}]}}}),
    )
    .await;
    assert_eq!(refused.status(), 403);
    let challenge = header(&refused, "www-authenticate");
    assert!(
        challenge.starts_with("Bearer error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"coffee:read coffee:order\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("resource_metadata=\"http://"),
        "{challenge}"
    );
    // A tool it has the scope for still works in the same session.
    let menu = call(&mcp, "get_menu", json!({})).await;
    assert_ne!(menu.is_error, Some(true));
    let lines = d.server.audit_lines_of("calls.log", 2);
    assert!(
        lines
            .iter()
            .any(|l| l["outcome"] == "forbidden" && l["tool"] == "create_order"),
        "{lines:?}"
    );

    // A wrong secret, and a token for another endpoint (audience), are refused.
    let wrong = http()
        .post(format!("{}/token", d.issuer))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", id.as_str()),
            ("client_secret", "nope"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let other: Value = http()
        .post(format!("{}/token", d.issuer))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", id.as_str()),
            ("client_secret", secret.as_str()),
            ("resource", &d.server.url("/other/mcp")),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let elsewhere = other["access_token"].as_str().unwrap();
    let refused = post_bearer(&d.server.url("/coffee/mcp"), elsewhere).await;
    assert_eq!(
        refused.status(),
        401,
        "a token for /other/mcp is not for /coffee/mcp"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_refused() {
    let d = deploy();
    let store =
        concierge_oauth::store::SqlStore::open_file(&d.server.dir.path().join("oauth.sqlite"))
            .await
            .unwrap();
    use concierge_oauth::store::OAuthStore;
    let key = concierge_oauth::keys::SigningKey::from_seed(store.signing_seed().await.unwrap());
    let now = chrono::Utc::now().timestamp();
    let claims = concierge_oauth::keys::AccessClaims {
        iss: d.issuer.clone(),
        aud: d.server.url("/coffee/mcp"),
        sub: "alice".into(),
        client_id: "c".into(),
        scope: "coffee:read".into(),
        jti: "old".into(),
        role: None,
        iat: now - 7200,
        nbf: now - 7200,
        exp: now - 3600,
    };
    let fresh = concierge_oauth::keys::AccessClaims {
        exp: now + 600,
        jti: "new".into(),
        ..claims.clone()
    };
    let ok = post_bearer(&d.server.url("/coffee/mcp"), &key.sign(&fresh)).await;
    assert_ne!(ok.status(), 401, "the same key's fresh token passes");
    let expired = post_bearer(&d.server.url("/coffee/mcp"), &key.sign(&claims)).await;
    assert_eq!(expired.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorize_refuses_plain_pkce_foreign_redirects_and_reports_denial() {
    let d = deploy();
    let client_id = common::oauth::register_public(&d.issuer, "Claude Code").await;
    let base = format!(
        "{}/authorize?response_type=code&client_id={client_id}&state=s1&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        d.issuer
    );
    // An invalid request (PKCE plain, an implicit-grant request, an unknown resource) is not
    // sent back to the redirect URI (RFC 9700 §4.11.2): anyone may register a client, so that
    // would make our host an open redirector. Our error page says what is wrong.
    for (query_tail, says) in [
        (
            "&code_challenge_method=plain&redirect_uri=http://127.0.0.1:9/callback",
            "PKCE",
        ),
        (
            "&code_challenge_method=S256&redirect_uri=http://127.0.0.1:9/callback&resource=https://elsewhere.example/mcp",
            "invalid_target",
        ),
    ] {
        let invalid = http()
            .get(format!("{base}{query_tail}"))
            .send()
            .await
            .unwrap();
        assert_eq!(invalid.status(), 400, "{query_tail}");
        assert!(invalid.headers().get("location").is_none(), "{query_tail}");
        assert!(invalid.text().await.unwrap().contains(says), "{query_tail}");
    }
    let implicit = http()
        .get(format!(
            "{}/authorize?response_type=token&client_id={client_id}&state=s1&redirect_uri=http://127.0.0.1:9/callback",
            d.issuer
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(implicit.status(), 400);
    assert!(implicit.headers().get("location").is_none());
    assert!(
        implicit
            .text()
            .await
            .unwrap()
            .contains("unsupported_response_type")
    );
    // A redirect URI that does not match: an error page, never a redirect.
    let foreign = http()
        .get(format!(
            "{base}&code_challenge_method=S256&redirect_uri=https://evil.example/cb"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 400);
    assert!(foreign.headers().get("location").is_none());
    assert!(foreign.text().await.unwrap().contains("does not match"));
    // Denied: access_denied with state and iss.
    let back = sign_in(
        &format!("{base}&code_challenge_method=S256&redirect_uri=http://127.0.0.1:9/callback"),
        "deny",
        PASSWORD,
    )
    .await;
    assert_eq!(query(&back, "error").as_deref(), Some("access_denied"));
    assert_eq!(query(&back, "iss").as_deref(), Some(d.issuer.as_str()));
    // A wrong password shows the form again, and no code.
    let wrong = common::oauth::post_sign_in(
        &format!("{base}&code_challenge_method=S256&redirect_uri=http://127.0.0.1:9/callback"),
        "alice",
        "wrong",
        "allow",
    )
    .await;
    assert_eq!(wrong.status(), 200);
    assert!(
        wrong
            .text()
            .await
            .unwrap()
            .contains("Wrong user name or password")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_registration_answers_what_claude_sends() {
    let d = deploy();
    let answer = http()
        .post(format!("{}/register", d.issuer))
        .json(&json!({"redirect_uris": ["https://claude.ai/api/mcp/auth_callback"], "token_endpoint_auth_method": "client_secret_post",
                      "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"], "client_name": "Claude"}))
        .send().await.unwrap();
    assert_eq!(answer.status(), 201);
    let body: Value = answer.json().await.unwrap();
    assert!(body["client_secret"].is_string() && body["client_secret_expires_at"] == 0);
    assert_eq!(
        body["redirect_uris"],
        json!(["https://claude.ai/api/mcp/auth_callback"])
    );
    assert!(body["client_id_issued_at"].is_number());
    for bad in [
        json!({"redirect_uris": ["http://evil.example/cb"]}),
        json!({"redirect_uris": []}),
        json!({"redirect_uris": ["https://a.example/cb"], "grant_types": ["client_credentials"]}),
    ] {
        let refused = http()
            .post(format!("{}/register", d.issuer))
            .json(&bad)
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 400, "{bad}");
    }
    let clients = cli(&d.config, &["clients"], "");
    assert!(clients.contains("Claude"), "{clients}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_count_per_token_with_separate_read_and_write_classes() {
    let d = deploy();
    let (id, secret) = machine_client(&d.config, "n8n", &["coffee:read", "coffee:order"]);
    let token = || async {
        let answer: Value = http()
            .post(format!("{}/token", d.issuer))
            .form(&[
                ("grant_type", "client_credentials"),
                ("client_id", id.as_str()),
                ("client_secret", secret.as_str()),
            ])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["access_token"].as_str().unwrap().to_string()
    };
    let (first, second) = (token().await, token().await);
    let a = connect(&d.server.url("/coffee/mcp"), &first).await;
    let b = connect(&d.server.url("/coffee/mcp"), &second).await;
    let limited = |result: &rmcp::model::CallToolResult| {
        result.is_error == Some(true)
            && serde_json::to_string(&result.content)
                .unwrap()
                .contains("rate_limited")
    };
    for _ in 0..3 {
        assert!(!limited(&call(&a, "get_menu", json!({})).await));
    }
    assert!(
        limited(&call(&a, "get_menu", json!({})).await),
        "the read class allows 3 per minute per token"
    );
    let other = call(&b, "get_menu", json!({})).await;
    assert!(
        !limited(&other),
        "another token has its own budget: {other:?}"
    );
    // The write class is separate: one order per minute, whatever the reads did.
    let order = json!({"items": [{"drink": "Латте", "qty": 1}]});
    assert!(!limited(&call(&a, "create_order", order.clone()).await));
    assert!(
        limited(&call(&a, "create_order", order).await),
        "the write class allows 1 per minute"
    );
}

/// A client that publishes its metadata document on loopback; counts the fetches.
async fn document_client() -> (String, Arc<AtomicUsize>) {
    let fetched = Arc::new(AtomicUsize::new(0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client_id = format!("http://{}/clients/app.json", listener.local_addr().unwrap());
    let (id, count) = (client_id.clone(), fetched.clone());
    let app = axum::Router::new().route(
        "/clients/app.json",
        axum::routing::get(move || {
            count.fetch_add(1, Ordering::SeqCst);
            let id = id.clone();
            async move {
                axum::Json(json!({"client_id": id, "client_name": "Doc App", "redirect_uris": ["http://127.0.0.1/callback"],
                                  "token_endpoint_auth_method": "none"}))
            }
        }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (client_id, fetched)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_id_metadata_document_client_signs_in_without_registration() {
    let d = deploy_with("cimd_test_allow_loopback = true");
    let (client_id, fetched) = document_client().await;
    let server: Value = get_json(&format!(
        "{}/.well-known/oauth-authorization-server",
        d.issuer
    ))
    .await;
    assert_eq!(server["client_id_metadata_document_supported"], true);

    let client = oauth_client(&d.issuer, &client_id, "http://127.0.0.1:5555/callback");
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, _) = client
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .url();
    let page = http()
        .get(url.as_str())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("Doc App") && !page.contains(">unverified<"),
        "a document client is not marked unverified"
    );
    let back = sign_in(url.as_str(), "allow", PASSWORD).await;
    let tokens = client
        .exchange_code(AuthorizationCode::new(query(&back, "code").expect("code")))
        .set_pkce_verifier(verifier)
        .request_async(&send)
        .await
        .expect("token exchange");
    let mcp = connect(&d.server.url("/coffee/mcp"), tokens.access_token().secret()).await;
    assert!(
        !structured(&call(&mcp, "get_menu", json!({})).await)["results"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(fetched.load(Ordering::SeqCst) >= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ssrf_guard_never_fetches_a_loopback_metadata_document() {
    let d = deploy();
    let (client_id, fetched) = document_client().await;
    let url = reqwest::Url::parse_with_params(
        &format!("{}/authorize", d.issuer),
        &[
            ("response_type", "code"),
            ("client_id", client_id.as_str()),
            ("redirect_uri", "http://127.0.0.1:5555/callback"),
            (
                "code_challenge",
                "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            ),
            ("code_challenge_method", "S256"),
        ],
    )
    .unwrap();
    let refused = http().get(url).send().await.unwrap();
    assert_eq!(refused.status(), 400);
    assert!(refused.text().await.unwrap().contains("cannot be used"));
    assert_eq!(fetched.load(Ordering::SeqCst), 0, "nothing was fetched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_preflights_are_answered_before_authentication() {
    let d = deploy();
    let preflight = http()
        .request(reqwest::Method::OPTIONS, d.server.url("/coffee/mcp"))
        .header("origin", "http://localhost:6274")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region",
        )
        .send()
        .await
        .unwrap();
    assert!(preflight.status().is_success(), "{}", preflight.status());
    let allowed = preflight.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_lowercase();
    // A 2026-07-28 browser client sends `Mcp-Method`, `Mcp-Name` and a tool's `Mcp-Param-*`.
    for header in [
        "authorization",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "mcp-param-region",
    ] {
        assert!(allowed.contains(header), "{header}: {allowed}");
    }
    let challenge = http()
        .post(d.server.url("/coffee/mcp"))
        .header("origin", "http://localhost:6274")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(challenge.status(), 401);
    let exposed = challenge.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_lowercase();
    assert!(
        exposed.contains("www-authenticate") && exposed.contains("mcp-session-id"),
        "{exposed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operators_list_sign_ins_and_revoke_a_refresh_token_from_the_command_line() {
    let d = deploy();
    let client_id = common::oauth::register_public(&d.issuer, "Claude Code").await;
    let client = oauth_client(&d.issuer, &client_id, "http://127.0.0.1:6000/callback");
    let (_, tokens) = code_flow(&client, &["coffee:read"]).await;
    let listed = cli(&d.config, &["tokens"], "");
    assert!(
        listed.contains(&client_id) && listed.contains("alice") && listed.contains("coffee:read"),
        "{listed}"
    );

    let refresh = tokens.refresh_token().unwrap().secret().clone();
    let out = cli(&d.config, &["revoke-token"], &format!("{refresh}\n"));
    assert!(out.contains("revoked"), "{out}");
    let refused = client
        .exchange_refresh_token(tokens.refresh_token().unwrap())
        .request_async(&send)
        .await;
    assert!(
        refused.is_err(),
        "the revoked refresh token no longer works"
    );
    assert!(!cli(&d.config, &["tokens"], "").contains(&client_id));
}

/// An authorize URL for `client_id` (PKCE S256, loopback redirect).
fn authorize_url(issuer: &str, client_id: &str) -> String {
    format!(
        "{issuer}/authorize?response_type=code&client_id={client_id}&redirect_uri=http://127.0.0.1:9/callback&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn password_guessing_slows_down_but_never_locks_the_user_out() {
    // Small delays, so the test waits a fraction of a second instead of the default's 1 s.
    let d = deploy_with(
        r#"limits = { sign_in_delay = "200ms", sign_in_max_delay_per_account = "400ms" }"#,
    );
    let client_id = common::oauth::register_public(&d.issuer, "Claude Code").await;
    let url = authorize_url(&d.issuer, &client_id);
    let attempt =
        |password: &'static str| common::oauth::post_sign_in(&url, "alice", password, "allow");
    for _ in 0..5 {
        let wrong = attempt("wrong").await;
        assert!(
            wrong
                .text()
                .await
                .unwrap()
                .contains("Wrong user name or password")
        );
    }
    // Right after five failures even the right password waits (it is not tried at all)…
    let waiting = attempt(PASSWORD).await;
    assert_eq!(waiting.status(), 200);
    let page = waiting.text().await.unwrap();
    assert!(
        page.contains("Too many failed sign-ins for this user. Try again in 1 second."),
        "{page}"
    );
    // …but only for a moment: whoever knows alice's address cannot lock her out for long.
    tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    let signed_in = attempt(PASSWORD).await;
    assert!(
        signed_in.status().is_redirection(),
        "{}",
        signed_in.text().await.unwrap()
    );

    // Every failed sign-in is audited with the account it tried; the wait too.
    let lines = d.server.audit_lines_of("oauth.log", 8);
    let failed: Vec<&Value> = lines
        .iter()
        .filter(|l| l["code"] == "sign_in_failed")
        .collect();
    assert_eq!(failed.len(), 5, "{lines:?}");
    assert!(
        failed
            .iter()
            .all(|l| l["notes"]["account"] == "alice" && l["outcome"] == "unauthorized"),
        "{failed:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["code"] == "sign_in_throttled" && l["notes"]["throttled"] == "account"),
        "{lines:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn password_spraying_from_one_address_is_slowed_others_still_sign_in() {
    let d = deploy_with("limits = { sign_in_failures_per_peer = 3 }");
    let client_id = common::oauth::register_public(&d.issuer, "Claude Code").await;
    let url = authorize_url(&d.issuer, &client_id);
    for name in ["ann", "bob", "cyd"] {
        let wrong = common::oauth::post_sign_in(&url, name, "Summer2026!", "allow").await;
        assert!(
            wrong
                .text()
                .await
                .unwrap()
                .contains("Wrong user name or password")
        );
    }
    // The fourth name from the same address must wait, whichever name it is.
    let sprayed = common::oauth::post_sign_in(&url, "dan", "Summer2026!", "allow").await;
    let page = sprayed.text().await.unwrap();
    assert!(
        page.contains("Too many failed sign-ins from your address. Try again in 1 second."),
        "{page}"
    );
    // Alice, from another address, is not held up by the sprayer.
    let elsewhere = common::oauth::http_from("127.0.0.2");
    let alice =
        common::oauth::post_sign_in_with(&elsewhere, &url, "alice", PASSWORD, "allow").await;
    assert!(
        alice.status().is_redirection(),
        "{}",
        alice.text().await.unwrap()
    );
    let lines = d.server.audit_lines_of("oauth.log", 5);
    assert!(
        lines.iter().any(|l| l["code"] == "sign_in_throttled"
            && l["notes"]["throttled"] == "peer"
            && l["notes"]["account"] == "dan"),
        "{lines:?}"
    );
}

/// Posts a registration body; status and JSON answer.
async fn register_raw(issuer: &str, body: Vec<u8>) -> (u16, Value, Option<String>) {
    register_raw_with(&http(), issuer, body).await
}

async fn register_raw_with(
    http: &reqwest::Client,
    issuer: &str,
    body: Vec<u8>,
) -> (u16, Value, Option<String>) {
    // A server may close the connection on a body it will not read: that is a refusal too.
    let Ok(answer) = http
        .post(format!("{issuer}/register"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
    else {
        return (0, Value::Null, None);
    };
    let status = answer.status().as_u16();
    let retry = answer
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    (status, answer.json().await.unwrap_or(Value::Null), retry)
}

fn registration(uris: &[&str]) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"redirect_uris": uris, "token_endpoint_auth_method": "none", "client_name": "t"}),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registrations_are_bounded_and_redirect_uris_allow_listed() {
    let d = deploy();
    // The flood of the issue: a 1 MB body with 15,000 redirect URIs.
    let many: Vec<String> = (0..15_000)
        .map(|n| format!("http://127.0.0.1/callback/{n:040}"))
        .collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let (status, body, _) = register_raw(&d.issuer, registration(&many)).await;
    // Refused before it is read (413), or the connection closed while it was still sending.
    assert!(
        status == 0 || status == 400 || status == 413,
        "{status}: {body}"
    );
    // Just over the bound, the refusal is read in full.
    let (status, body, _) = register_raw(&d.issuer, registration(&many[..300])).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"], "invalid_client_metadata", "{body}");
    assert!(
        body["error_description"]
            .as_str()
            .unwrap()
            .contains("16 KB")
    );
    // Under the size, but more URIs than any client needs, or one that is a payload.
    let eleven: Vec<String> = (0..11).map(|n| format!("http://127.0.0.1/cb{n}")).collect();
    let eleven: Vec<&str> = eleven.iter().map(String::as_str).collect();
    let (status, body, _) = register_raw(&d.issuer, registration(&eleven)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_redirect_uri"))
    );
    let long = format!("http://127.0.0.1/{}", "a".repeat(600));
    let (status, body, _) = register_raw(&d.issuer, registration(&[&long])).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_redirect_uri"))
    );

    // A stranger's page is no redirect URI here; the refusal says what is.
    let (status, body, _) =
        register_raw(&d.issuer, registration(&["https://evil.example/landing"])).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_redirect_uri"))
    );
    let why = body["error_description"].as_str().unwrap();
    assert!(
        why.contains("https://evil.example/landing")
            && why.contains("https://claude.ai/api/mcp/auth_callback")
            && why.contains("127.0.0.1"),
        "{why}"
    );
    // The known clients' callbacks and loopback ones are welcome.
    for ok in [
        "https://claude.ai/api/mcp/auth_callback",
        "https://claude.com/api/mcp/auth_callback",
        "https://chatgpt.com/connector_platform_oauth_redirect",
        "https://chatgpt.com/connector/oauth/c-123abc",
        "https://vscode.dev/redirect",
        "https://insiders.vscode.dev/redirect",
        "http://localhost:6274/oauth/callback",
        "http://localhost:6274/oauth/callback/debug",
        "http://127.0.0.1:33418/callback",
    ] {
        let (status, body, _) = register_raw(&d.issuer, registration(&[ok])).await;
        assert_eq!(status, 201, "{ok}: {body}");
    }
    // The name is cut to what the consent page shows.
    let (status, body, _) = register_raw(
        &d.issuer,
        serde_json::to_vec(
            &json!({"redirect_uris": ["http://127.0.0.1/cb"], "token_endpoint_auth_method": "none",
                                   "client_name": "n".repeat(5000)}),
        )
        .unwrap(),
    )
    .await;
    assert_eq!(status, 201);
    assert_eq!(body["client_name"].as_str().unwrap().len(), 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_deployment_takes_any_https_redirect() {
    let d = deploy_with("redirects = { open = true }");
    let (status, body, _) =
        register_raw(&d.issuer, registration(&["https://app.example/callback"])).await;
    assert_eq!(status, 201, "{body}");
    let (status, _, _) =
        register_raw(&d.issuer, registration(&["http://app.example/callback"])).await;
    assert_eq!(status, 400, "plain http off loopback stays refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registrations_and_sign_in_pages_are_limited_per_address_and_unused_clients_capped() {
    let d = deploy_with(
        "limits = { registrations_per_minute = 5, max_unused_clients = 2, authorizations_per_minute = 2 }",
    );
    let mut ids = Vec::new();
    for _ in 0..5 {
        let (status, body, _) =
            register_raw(&d.issuer, registration(&["http://127.0.0.1/callback"])).await;
        assert_eq!(status, 201, "{body}");
        ids.push(body["client_id"].as_str().unwrap().to_string());
    }
    // The sixth in a minute from the same address: 429, when to come back, an OAuth error.
    let (status, body, retry) =
        register_raw(&d.issuer, registration(&["http://127.0.0.1/callback"])).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["error"], "temporarily_unavailable");
    let retry: u64 = retry.expect("Retry-After").parse().unwrap();
    assert!((1..=12).contains(&retry), "{retry}");
    // Another address is not held up.
    let elsewhere = common::oauth::http_from("127.0.0.2");
    let (status, body, _) = register_raw_with(
        &elsewhere,
        &d.issuer,
        registration(&["http://127.0.0.1/callback"]),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let newest = body["client_id"].as_str().unwrap().to_string();

    // Only the two newest unused registrations are kept: a flood cannot fill the disk.
    let clients = cli(&d.config, &["clients"], "");
    for old in &ids[..4] {
        assert!(
            !clients.contains(old.as_str()),
            "{old} collected: {clients}"
        );
    }
    assert!(
        clients.contains(&ids[4]) && clients.contains(&newest),
        "{clients}"
    );

    // Sign-in pages store a pending authorization each: two a minute here, then 429.
    let url = authorize_url(&d.issuer, &newest);
    for _ in 0..2 {
        assert_eq!(http().get(&url).send().await.unwrap().status(), 200);
    }
    let refused = http().get(&url).send().await.unwrap();
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().get("retry-after").is_some());
    // A `state` longer than any client sends is refused, not stored.
    let huge_state = format!("{url}&state={}", "s".repeat(2000));
    let refused = elsewhere.get(&huge_state).send().await.unwrap();
    assert_eq!(refused.status(), 400);
    assert!(refused.headers().get("location").is_none());
    assert!(refused.text().await.unwrap().contains("state"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mappy_seeds_oauth_paths_work_too() {
    let d = deploy();
    let answer: Value = http()
        .post(format!("{}/oauth/register", d.issuer))
        .json(&json!({"redirect_uris": ["http://127.0.0.1/callback"], "token_endpoint_auth_method": "none", "client_name": "Mappy app"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let client_id = answer["client_id"]
        .as_str()
        .expect("registered")
        .to_string();
    let client = BasicClient::new(ClientId::new(client_id))
        .set_auth_uri(AuthUrl::new(format!("{}/oauth/authorize", d.issuer)).unwrap())
        .set_token_uri(TokenUrl::new(format!("{}/oauth/token", d.issuer)).unwrap())
        .set_redirect_uri(RedirectUrl::new("http://127.0.0.1:6200/callback".into()).unwrap());
    // The exchange goes to /oauth/token.
    let (_, tokens) = code_flow(&client, &[]).await;
    assert!(!tokens.access_token().secret().is_empty());
    // The metadata still advertises the short paths.
    let metadata: Value = get_json(&format!(
        "{}/.well-known/oauth-authorization-server",
        d.issuer
    ))
    .await;
    assert_eq!(
        metadata["authorization_endpoint"],
        format!("{}/authorize", d.issuer)
    );
    assert_eq!(metadata["token_endpoint"], format!("{}/token", d.issuer));
    assert_eq!(
        metadata["registration_endpoint"],
        format!("{}/register", d.issuer)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_used_twice_revokes_what_it_bought() {
    let d = deploy();
    let client_id = common::oauth::register_public(&d.issuer, "Claude Code").await;
    let client = oauth_client(&d.issuer, &client_id, "http://127.0.0.1:6100/callback");
    let (code, tokens) = code_flow(&client, &[]).await;
    let again = http()
        .post(format!("{}/token", d.issuer))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("client_id", client_id.as_str()),
            ("redirect_uri", "http://127.0.0.1:6100/callback"),
            ("code_verifier", "x".repeat(43).as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 400);
    assert!(
        client
            .exchange_refresh_token(tokens.refresh_token().unwrap())
            .request_async(&send)
            .await
            .is_err(),
        "the refresh token the code bought is revoked"
    );
    // And the access token it bought: a leaked code's thief must not keep it for an hour.
    let refused = post_bearer(&d.server.url("/coffee/mcp"), tokens.access_token().secret()).await;
    assert_eq!(
        refused.status(),
        401,
        "the access token the code bought is revoked"
    );
}

/// Fifty SIGKILLs at random moments while a client rotates its refresh token and signs in for
/// new codes, each kill followed by a restart on the same store: every access token handed out
/// still opens the endpoint, and the chain always goes on from the last refresh token handed out
/// — also when the kill cut a rotation whose successor died with its answer: the retry comes
/// within the rotation grace (before it, that retry revoked the family and every token above).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_sigkills_during_token_issue_keep_every_token_handed_out() {
    use common::crash::{Moments, kill};
    use oauth2::RefreshToken;
    use std::sync::Mutex;
    use std::time::Duration;
    let d = deploy();
    let config_text = std::fs::read_to_string(&d.config).unwrap();
    let endpoint = d.server.url("/coffee/mcp");
    let redirect = "http://127.0.0.1/callback";
    let client_id = common::oauth::register_public(&d.issuer, "crash").await;
    let client = oauth_client(&d.issuer, &client_id, redirect);
    let (_, tokens) = code_flow(&client, &["coffee:read"]).await;
    let handed_out: Arc<Mutex<Vec<String>>> =
        Arc::new(Mutex::new(vec![tokens.access_token().secret().clone()]));
    let mut refresh = tokens.refresh_token().unwrap().clone();
    let mut moments = Moments::new(0x5eed_0000_0000_0003);
    let mut server = d.server;
    for round in 0..50 {
        let latest: Arc<Mutex<RefreshToken>> = Arc::new(Mutex::new(refresh.clone()));
        let rotations = {
            let (client, latest, handed_out) = (client.clone(), latest.clone(), handed_out.clone());
            tokio::spawn(async move {
                loop {
                    let current = latest.lock().unwrap().clone();
                    let Ok(tokens) = client
                        .exchange_refresh_token(&current)
                        .request_async(&send)
                        .await
                    else {
                        return;
                    };
                    handed_out
                        .lock()
                        .unwrap()
                        .push(tokens.access_token().secret().clone());
                    *latest.lock().unwrap() = tokens.refresh_token().unwrap().clone();
                }
            })
        };
        let codes = {
            let (client, handed_out) = (client.clone(), handed_out.clone());
            tokio::spawn(async move {
                loop {
                    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
                    let (url, _) = client
                        .authorize_url(CsrfToken::new_random)
                        .add_scope(Scope::new("coffee:read".into()))
                        .set_pkce_challenge(challenge)
                        .url();
                    let answer =
                        common::oauth::post_sign_in(url.as_str(), "alice", PASSWORD, "allow").await;
                    let Some(code) = answer
                        .headers()
                        .get("location")
                        .and_then(|l| reqwest::Url::parse(l.to_str().ok()?).ok())
                        .and_then(|back| query(&back, "code"))
                    else {
                        return;
                    };
                    let Ok(tokens) = client
                        .exchange_code(AuthorizationCode::new(code))
                        .set_pkce_verifier(verifier)
                        .request_async(&send)
                        .await
                    else {
                        return;
                    };
                    handed_out
                        .lock()
                        .unwrap()
                        .push(tokens.access_token().secret().clone());
                }
            })
        };
        tokio::time::sleep(moments.next(Duration::from_millis(30), Duration::from_millis(300)))
            .await;
        let dir = kill(server);
        rotations.abort();
        codes.abort();
        let _ = (rotations.await, codes.await);
        let text = config_text.clone();
        server = Server::start_in(dir, move |_| text, &[]);

        refresh = latest.lock().unwrap().clone();
        let tokens = client
            .exchange_refresh_token(&refresh)
            .request_async(&send)
            .await
            .unwrap_or_else(|e| panic!("round {round}: the last refresh token handed out: {e:?}"));
        handed_out
            .lock()
            .unwrap()
            .push(tokens.access_token().secret().clone());
        refresh = tokens.refresh_token().unwrap().clone();
    }
    let handed_out = handed_out.lock().unwrap().clone();
    assert!(handed_out.len() >= 100, "{}", handed_out.len());
    for token in &handed_out {
        let status = post_bearer(&endpoint, token).await.status();
        assert_ne!(status, 401, "an access token handed out was lost");
    }
}

/// An MCP server behind OAuth, federated by a second concierge (`kind = "mcp"`) with client
/// credentials of its own: the upstream authorizes concierge, never the caller's token; the
/// caller's own token at the front door is the front door's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_behind_oauth_is_reached_with_concierges_client_credentials() {
    let upstream = deploy();
    let (id, secret) = machine_client(&upstream.config, "concierge-front", &["coffee:read"]);
    let url = upstream.server.url("/coffee/mcp");
    let front = Server::start(
        |dir| {
            format!(
                r#"[server]
listen = "127.0.0.1:0"

[audit.front]
path = "{dir}/log/front.log"

[apps.coffee_shop]
kind = "mcp"
url = "{url}"
oauth = {{ client_id = "{id}", client_secret = "${{COFFEE_SECRET}}", scopes = ["coffee:read"] }}
tools = ["search_menu"]

[[endpoint]]
path = "/front/mcp"
tools = ["coffee_shop.*"]
auth = {{ kind = "tokens", env = "FRONT_TOKENS" }}
audit = "front"
"#,
                dir = dir.display()
            )
        },
        &[
            ("FRONT_TOKENS", "bot:front-token"),
            ("COFFEE_SECRET", &secret),
        ],
    );
    let client = connect(&front.url("/front/mcp"), "front-token").await;
    assert_eq!(tool_names(&client).await, ["search_menu"]);
    let found = call(&client, "search_menu", json!({"query": "кокос"})).await;
    assert_ne!(found.is_error, Some(true), "{found:?}");
    let menu = found
        .structured_content
        .expect("the upstream's structured content");
    assert_eq!(menu["results"][0]["drink"], "Кокосовый латте", "{menu}");
    // The upstream's audit names concierge's own client, not the front door's caller.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let call_line = loop {
        let calls = upstream.server.audit_lines_of("calls.log", 1);
        if let Some(line) = calls.into_iter().find(|l| l["tool"] == "search_menu") {
            break line;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no audit line for the call upstream"
        );
        tokio::task::yield_now().await;
    };
    assert_eq!(call_line["client"], id, "{call_line}");
    client.cancel().await.ok();
}

/// A client-credentials token for `id`, for `resource` when one is named; the token answer.
async fn client_token(issuer: &str, id: &str, secret: &str, resource: Option<&str>) -> Value {
    let mut form = vec![
        ("grant_type", "client_credentials"),
        ("client_id", id),
        ("client_secret", secret),
    ];
    if let Some(resource) = resource {
        form.push(("resource", resource));
    }
    let answer = http()
        .post(format!("{issuer}/token"))
        .form(&form)
        .send()
        .await
        .unwrap();
    answer.json().await.unwrap()
}

/// `concierge reload` for the deployment at `config`; what it printed (it must succeed).
fn reload(config: &Path) -> String {
    let out = Command::new(BIN)
        .args(["reload", "--config"])
        .arg(config)
        .output()
        .expect("run concierge reload");
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    said
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_changes_scopes_lifetimes_and_resources_and_keeps_every_token() {
    let d = deploy();
    let (id, secret) = machine_client(&d.config, "DeerFlow", &["coffee:read"]);
    let before = client_token(&d.issuer, &id, &secret, None).await;
    let access = before["access_token"].as_str().unwrap().to_string();
    let mcp = connect(&d.server.url("/coffee/mcp"), &access).await;
    assert_ne!(call(&mcp, "get_menu", json!({})).await.is_error, Some(true));

    // A new scope, a shorter lifetime and a third OAuth endpoint; the same issuer and keys.
    let edited = std::fs::read_to_string(&d.config).unwrap().replace(
        r#"scopes = ["coffee:read", "coffee:order"]"#,
        "scopes = [\"coffee:read\", \"coffee:order\", \"coffee:tea\"]\naccess_token_ttl = \"5m\"",
    ) + "\n[[endpoint]]\npath = \"/third/mcp\"\ntools = [\"coffee.get_menu\"]\nauth = { kind = \"oauth\" }\n";
    std::fs::write(&d.config, &edited).unwrap();
    let said = reload(&d.config);
    assert!(!said.contains("needs a restart"), "{said}");

    // The token issued before is still good: the open session and a new one.
    assert_ne!(call(&mcp, "get_menu", json!({})).await.is_error, Some(true));
    let again = connect(&d.server.url("/coffee/mcp"), &access).await;
    assert_ne!(
        call(&again, "get_menu", json!({})).await.is_error,
        Some(true)
    );
    let metadata = get_json(&format!(
        "{}/.well-known/oauth-authorization-server",
        d.issuer
    ))
    .await;
    assert!(
        metadata["scopes_supported"]
            .as_array()
            .unwrap()
            .contains(&json!("coffee:tea")),
        "{metadata}"
    );
    // The new endpoint is a resource tokens can be issued for, with the new lifetime.
    let third = d.server.url("/third/mcp");
    let token = client_token(&d.issuer, &id, &secret, Some(&third)).await;
    assert_eq!(token["expires_in"], 300, "{token}");
    let mcp = connect(&third, token["access_token"].as_str().unwrap()).await;
    assert_ne!(call(&mcp, "get_menu", json!({})).await.is_error, Some(true));

    // A new issuer needs new keys: reported, kept as it was, the rest applies.
    let moved = edited.replace(&d.issuer, "https://elsewhere.example");
    std::fs::write(&d.config, moved.replace("\"5m\"", "\"6m\"")).unwrap();
    let said = reload(&d.config);
    assert!(
        said.contains("needs a restart, still as before: oauth.issuer"),
        "{said}"
    );
    let token = client_token(&d.issuer, &id, &secret, None).await;
    assert_eq!(token["expires_in"], 360, "{token}");
    let still = post_bearer(&d.server.url("/coffee/mcp"), &access).await;
    assert_ne!(still.status(), 401, "a token issued before both reloads");
}
