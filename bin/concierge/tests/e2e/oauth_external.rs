//! OAuth endpoints that accept an external identity provider's tokens: JWTs against its JWKS
//! (refetched on an unknown key, only allowed algorithms, audience checked) and opaque tokens by
//! RFC 7662 introspection. The provider is a small real HTTP server on 127.0.0.1.

use crate::common;

use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::oauth::{get_json, http, post_bearer};
use common::{Server, call, connect, header, structured, tool_names};
use concierge_oauth::keys::{AccessClaims, SigningKey};
use serde_json::{Value, json};

const IDP: &str = "https://idp.example";

struct Provider {
    url: String,
    key: Arc<Mutex<SigningKey>>,
}

impl Provider {
    fn sign(&self, claims: &AccessClaims) -> String {
        self.key.lock().unwrap().sign(claims)
    }

    /// Signs claims of any shape (one without `aud`, say).
    fn sign_json(&self, claims: &Value) -> String {
        self.key.lock().unwrap().sign(claims)
    }
}

async fn provider() -> Provider {
    let key = Arc::new(Mutex::new(SigningKey::generate().1));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let jwks_key = key.clone();
    let app = axum::Router::new()
        .route(
            "/jwks",
            axum::routing::get(move || {
                let set = jwks_key.lock().unwrap().jwks();
                async move { axum::Json(set) }
            }),
        )
        .route(
            "/introspect",
            axum::routing::post(|axum::Form(form): axum::Form<std::collections::HashMap<String, String>>| async move {
                axum::Json(match form.get("token").map(String::as_str) {
                    Some("opaque-good") => json!({"active": true, "iss": IDP, "scope": "coffee:read", "client_id": "n8n", "sub": "svc", "aud": "http://mcp.example/coffee/mcp"}),
                    // Active, but with no audience at all: it may be for any API.
                    Some("opaque-elsewhere") => json!({"active": true, "iss": IDP, "scope": "coffee:read", "client_id": "n8n"}),
                    // Active, for another API.
                    Some("opaque-other") => json!({"active": true, "iss": IDP, "scope": "coffee:read", "client_id": "n8n", "aud": ["http://mcp.example/other/mcp"]}),
                    _ => json!({"active": false}),
                })
            }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Provider { url, key }
}

fn config(dir: &std::path::Path, external: &str) -> String {
    format!(
        r#"
[server]
listen = "127.0.0.1:0"

[oauth]
issuer = "http://mcp.example"
scopes = ["coffee:read", "coffee:order"]
external = {external}

[[endpoint]]
path = "/coffee/mcp"
tools = ["coffee.*"]
auth = {{ kind = "oauth", scopes = ["coffee:read"] }}
tool_scopes = {{ create_order = ["coffee:order"] }}

{coffee}"#,
        coffee = common::coffee_app(&dir.join("orders.xlsx")),
    )
}

fn claims(aud: &str, jti: &str) -> AccessClaims {
    let now = chrono::Utc::now().timestamp();
    AccessClaims {
        iss: IDP.into(),
        aud: aud.into(),
        sub: "alice".into(),
        client_id: "claude".into(),
        scope: "coffee:read".into(),
        jti: jti.into(),
        role: None,
        iat: now,
        nbf: now,
        exp: now + 600,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwts_from_the_providers_jwks_with_audience_rotation_and_allowed_algorithms() {
    let idp = provider().await;
    let external = format!(r#"{{ issuer = "{IDP}", jwks_uri = "{}/jwks" }}"#, idp.url);
    let server = Server::start(|d| config(d, &external), &[]);
    let resource = "http://mcp.example/coffee/mcp";

    let token = idp.sign(&claims(resource, "t1"));
    let mcp = connect(&server.url("/coffee/mcp"), &token).await;
    let names = tool_names(&mcp).await;
    assert!(
        names.contains(&"get_menu".to_string()) && !names.contains(&"create_order".to_string())
    );
    assert!(
        !structured(&call(&mcp, "get_menu", json!({})).await)["results"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // The metadata sends clients to the provider; the built-in server is not there.
    let metadata: Value =
        get_json(&server.url("/.well-known/oauth-protected-resource/coffee/mcp")).await;
    assert_eq!(metadata["authorization_servers"], json!([IDP]));
    assert_eq!(metadata["resource"], resource);
    assert_eq!(
        http()
            .get(server.url("/.well-known/oauth-authorization-server"))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );

    let post = |token: String| {
        let url = server.url("/coffee/mcp");
        async move { post_bearer(&url, &token).await.status().as_u16() }
    };
    // Another audience, another issuer: refused.
    assert_eq!(
        post(idp.sign(&claims("http://mcp.example/other/mcp", "t2"))).await,
        401
    );
    // No audience at all: the token may have been issued for any API (RFC 8707), refused too.
    let mut unbound = serde_json::to_value(claims(resource, "t2b")).unwrap();
    unbound.as_object_mut().unwrap().remove("aud");
    assert_eq!(
        post(idp.sign_json(&unbound)).await,
        401,
        "a token without aud"
    );
    // The same token with our audience passes (the refusal above is the audience's).
    unbound["aud"] = json!([resource]);
    assert_ne!(post(idp.sign_json(&unbound)).await, 401);
    let foreign = AccessClaims {
        iss: "https://elsewhere.example".into(),
        ..claims(resource, "t3")
    };
    assert_eq!(post(idp.sign(&foreign)).await, 401);

    // The provider rotates its key: a token under the new kid makes us fetch the JWKS again.
    *idp.key.lock().unwrap() = SigningKey::generate().1;
    let rotated = idp.sign(&claims(resource, "t4"));
    assert_ne!(
        post(rotated.clone()).await,
        401,
        "the new key is fetched and accepted"
    );

    // An algorithm outside the allowed list (HS256 forged with the kid of a real key) is refused
    // before any key is used.
    let kid = jsonwebtoken_header_kid(&rotated);
    let header =
        URL_SAFE_NO_PAD.encode(json!({"alg": "HS256", "typ": "JWT", "kid": kid}).to_string());
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_string(&claims(resource, "t5")).unwrap());
    assert_eq!(post(format!("{header}.{payload}.c2lnbmF0dXJl")).await, 401);
}

fn jsonwebtoken_header_kid(token: &str) -> String {
    let header = token.split('.').next().unwrap();
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).unwrap()).unwrap();
    header["kid"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opaque_tokens_by_introspection() {
    let idp = provider().await;
    let external = format!(
        r#"{{ issuer = "{IDP}", introspection_endpoint = "{}/introspect", introspection_client_id = "concierge", introspection_client_secret = "s" }}"#,
        idp.url
    );
    let server = Server::start(|d| config(d, &external), &[]);
    let mcp = connect(&server.url("/coffee/mcp"), "opaque-good").await;
    assert!(
        !structured(&call(&mcp, "get_menu", json!({})).await)["results"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // Active but without an audience, or for another API: refused like an inactive one.
    for token in ["opaque-elsewhere", "opaque-other"] {
        let elsewhere = post_bearer(&server.url("/coffee/mcp"), token).await;
        assert_eq!(elsewhere.status(), 401, "{token}");
    }
    let refused = post_bearer(&server.url("/coffee/mcp"), "opaque-bad").await;
    assert_eq!(refused.status(), 401);
    assert!(header(&refused, "www-authenticate").contains("invalid_token"));
}

/// A shop's orders behind an endpoint that accepts the provider's tokens; whose orders a call
/// reads is the token's `tenant` claim, never an argument, and the tool needs its own scope.
fn shop_config(dir: &std::path::Path, external: &str) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/shop/shop.sql");
    format!(
        r#"
[server]
listen = "127.0.0.1:0"

[oauth]
issuer = "http://mcp.example"
scopes = ["shop:read", "shop:orders"]
external = {external}

[[endpoint]]
path = "/shop/mcp"
tools = ["shop.*"]
auth = {{ kind = "oauth", scopes = ["shop:read"] }}
tool_scopes = {{ tenant_orders = ["shop:orders"] }}

[apps.shop]
kind = "sql"
url = "sqlite://{database}"
create_from = "{script}"

[[apps.shop.tool]]
name = "tenant_orders"
description = "The orders of the signed-in tenant, by id."
sql = "SELECT id FROM orders WHERE customer = :tenant ORDER BY id"
bind = {{ tenant = "claim.tenant" }}
"#,
        database = dir.join("shop.db").display(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sql_tool_reads_the_rows_of_the_tenant_its_token_names() {
    let idp = provider().await;
    let external = format!(r#"{{ issuer = "{IDP}", jwks_uri = "{}/jwks" }}"#, idp.url);
    let server = Server::start(|d| shop_config(d, &external), &[]);
    let resource = "http://mcp.example/shop/mcp";
    let scoped = |jti: &str, tenant: Option<Value>, scope: &str| {
        let mut signed = serde_json::to_value(claims(resource, jti)).unwrap();
        signed["scope"] = json!(scope);
        if let Some(tenant) = tenant {
            signed["tenant"] = tenant;
        }
        idp.sign_json(&signed)
    };
    let token = |jti: &str, tenant: Option<Value>| scoped(jti, tenant, "shop:read shop:orders");
    let orders = |answer: &Value| -> Vec<i64> {
        let rows = answer["rows"].as_array().expect("rows");
        rows.iter().map(|row| row["id"].as_i64().unwrap()).collect()
    };

    for (tenant, expected) in [
        ("demo", vec![1001, 1002, 1003, 1004]),
        ("other", vec![1005, 1006]),
    ] {
        let mcp = connect(
            &server.url("/shop/mcp"),
            &token(tenant, Some(json!(tenant))),
        )
        .await;
        let answer = structured(&call(&mcp, "tenant_orders", json!({})).await);
        assert_eq!(orders(&answer), expected, "{tenant}: {answer}");
        // The parameter is not the model's to choose.
        let forced = call(&mcp, "tenant_orders", json!({"tenant": "demo"})).await;
        assert_eq!(forced.is_error, Some(true), "{tenant}: {forced:?}");
    }

    for (case, tenant, code) in [
        ("no tenant claim", None, "claim_required"),
        (
            "a tenant that is a list",
            Some(json!(["demo", "other"])),
            "claim_unusable",
        ),
    ] {
        let mcp = connect(&server.url("/shop/mcp"), &token(case, tenant)).await;
        let answer = structured(&call(&mcp, "tenant_orders", json!({})).await);
        assert_eq!(answer["error"]["code"], code, "{case}: {answer}");
        assert!(answer.get("rows").is_none(), "{case}: {answer}");
    }

    // The tool's own scope is checked like any tool's: without it, no rows.
    let reader = scoped("reader", Some(json!("demo")), "shop:read");
    let mcp = connect(&server.url("/shop/mcp"), &reader).await;
    assert!(
        !tool_names(&mcp)
            .await
            .contains(&"tenant_orders".to_string())
    );
    // Refused as the spec's step-up: a 403 whose challenge names the scope to ask for.
    let refused = mcp
        .call_tool(rmcp::model::CallToolRequestParams::new("tenant_orders"))
        .await
        .expect_err("refused without the tool's scope");
    let said = format!("{refused:?}");
    assert!(
        said.contains("insufficient_scope") && said.contains("shop:orders"),
        "{said}"
    );
}
