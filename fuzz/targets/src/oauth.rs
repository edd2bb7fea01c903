//! The built-in authorization server in-process, with one registered public client, for the
//! authorize, token and registration targets.

use std::sync::{Arc, OnceLock};

use axum::Router;
use concierge_oauth::store::Client;
use concierge_oauth::{AuthServer, OAuthConfig};
use serde_json::json;

pub const ISSUER: &str = "https://mcp.example";
pub const RESOURCE: &str = "https://mcp.example/mappy/mcp";
/// The client the seeds name.
pub const CLIENT_ID: &str = "fuzz-client";
pub const REDIRECT_URI: &str = "https://app.example/callback";

pub struct Deployment {
    pub router: Router,
    pub server: Arc<AuthServer>,
    _dir: tempfile::TempDir,
}

pub fn deployment() -> &'static Deployment {
    static DEPLOYMENT: OnceLock<Deployment> = OnceLock::new();
    DEPLOYMENT.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temp dir");
        let config: OAuthConfig = serde_json::from_value(json!({
            "issuer": ISSUER,
            "database": dir.path().join("oauth.sqlite"),
            "scopes": ["mappy:read", "mappy:write"],
            // A URL client id would send the fuzzer to DNS (seconds a lookup, here) and the
            // internet; the document's parser has a target of its own, oauth_client_metadata.
            "client_id_metadata_documents": false,
        }))
        .expect("the oauth config");
        let server = crate::runtime().block_on(async {
            let server = AuthServer::open(&config, vec![RESOURCE.into()], Arc::new(|_| {}), None)
                .await
                .expect("the authorization server opens");
            server
                .store
                .put_client(&Client {
                    client_id: CLIENT_ID.into(),
                    secret_hash: None,
                    name: "fuzz".into(),
                    redirect_uris: vec![REDIRECT_URI.into()],
                    grant_types: vec!["authorization_code".into(), "refresh_token".into()],
                    auth_method: "none".into(),
                    scopes: Vec::new(),
                    source: "dcr".into(),
                })
                .await
                .expect("the client is stored");
            server
        });
        let router = crate::runtime().block_on(async { concierge_oauth::router(server.clone()) });
        Deployment {
            router,
            server,
            _dir: dir,
        }
    })
}
