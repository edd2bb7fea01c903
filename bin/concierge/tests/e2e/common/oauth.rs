//! What OAuth tests do as a browser or a client would: an HTTP client that does not follow
//! redirects, dynamic registration, the sign-in form, the code exchange.

use serde_json::{Value, json};

/// An HTTP client that leaves redirects to the test (they carry codes and errors).
pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// As [`http`], connecting from another loopback address (127.0.0.0/8 is all loopback on
/// Linux): the server sees another peer, as it would another machine.
pub fn http_from(address: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .local_address(address.parse::<std::net::IpAddr>().expect("an address"))
        .build()
        .expect("client")
}

/// A POST with no JSON-RPC in it: all it shows is whether `token` opens the endpoint.
pub async fn post_bearer(url: &str, token: &str) -> reqwest::Response {
    http()
        .post(url)
        .bearer_auth(token)
        .json(&json!({}))
        .send()
        .await
        .expect("post")
}

/// A JSON-RPC message posted with the Accept header the MCP transport asks for.
pub async fn post_mcp(url: &str, token: &str, body: &Value) -> reqwest::Response {
    http()
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(body)
        .send()
        .await
        .expect("post")
}

pub async fn get_json(url: &str) -> Value {
    http().get(url).send().await.unwrap().json().await.unwrap()
}

/// Registers a public client as Claude Code does (loopback redirect without a port); its id.
pub async fn register_public(issuer: &str, name: &str) -> String {
    let answer: Value = http()
        .post(format!("{issuer}/register"))
        .json(&json!({"redirect_uris": ["http://127.0.0.1/callback"], "token_endpoint_auth_method": "none",
                      "grant_types": ["authorization_code", "refresh_token"], "client_name": name}))
        .send()
        .await
        .expect("register")
        .json()
        .await
        .expect("json");
    assert!(
        answer.get("client_secret").is_none(),
        "no secret for a public client"
    );
    answer["client_id"].as_str().expect("client_id").to_string()
}

/// Opens the authorize page (checking it cannot be framed) and posts its form as `username`.
pub async fn post_sign_in(
    authorize_url: &str,
    username: &str,
    password: &str,
    decision: &str,
) -> reqwest::Response {
    post_sign_in_with(&http(), authorize_url, username, password, decision).await
}

/// As [`post_sign_in`], with `http` as the browser.
pub async fn post_sign_in_with(
    http: &reqwest::Client,
    authorize_url: &str,
    username: &str,
    password: &str,
    decision: &str,
) -> reqwest::Response {
    let page = http.get(authorize_url).send().await.expect("authorize");
    assert_eq!(page.status(), 200);
    let csp = super::header(&page, "content-security-policy");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    let html = page.text().await.expect("html");
    let csrf = html
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a CSRF field")
        .to_string();
    let action = reqwest::Url::parse(authorize_url)
        .unwrap()
        .join("authorize")
        .unwrap();
    http.post(action)
        .form(&[
            ("csrf", csrf.as_str()),
            ("username", username),
            ("password", password),
            ("decision", decision),
        ])
        .send()
        .await
        .expect("decide")
}

/// A query parameter of a URL the server redirected to.
pub fn query(url: &reqwest::Url, key: &str) -> Option<String> {
    url.query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}
