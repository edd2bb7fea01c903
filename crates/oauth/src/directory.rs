//! Sign-in against the deployment's own user API (`[oauth.users]`), so the people who use the
//! business's system sign in with the accounts they already have — concierge keeps no copy of
//! them and learns their role from the system that owns it.
//!
//! The contract is small: `POST <url>` with `{"username", "password"}` answers `200 {"id", "role"}`
//! for a known person and `401` (or `403`/`404`/`422`) when the credentials are wrong. Anything
//! else is the directory failing, which the sign-in page reports as "try again", never as a
//! wrong password.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::store::{SignedIn, StoreError, UserDirectory};

/// The `[oauth.users]` section.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpDirectoryConfig {
    /// The sign-in URL (Mappy: `…/api/mcp/auth/sign-in`).
    pub url: String,
    /// Headers sent with every request (the service key); never logged.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A lookup slower than this fails the sign-in.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "five_seconds", with = "humantime_serde")]
    pub timeout: Duration,
}

fn five_seconds() -> Duration {
    Duration::from_secs(5)
}

pub struct HttpDirectory {
    client: reqwest::Client,
    url: String,
    headers: reqwest::header::HeaderMap,
}

impl HttpDirectory {
    pub fn new(config: &HttpDirectoryConfig) -> Result<Self, String> {
        let url = reqwest::Url::parse(&config.url)
            .map_err(|_| format!("oauth.users.url `{}` is not a URL", config.url))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err("oauth.users.url must be http or https".into());
        }
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &config.headers {
            let name = reqwest::header::HeaderName::try_from(name.as_str())
                .map_err(|_| format!("oauth.users.headers: `{name}` is not a header name"))?;
            let mut value = reqwest::header::HeaderValue::try_from(value.as_str())
                .map_err(|_| format!("oauth.users.headers.{name}: not a valid header value"))?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let timeout = config.timeout;
        if !(Duration::from_millis(100)..=Duration::from_secs(60)).contains(&timeout) {
            return Err("oauth.users.timeout must be between 100ms and 60s".into());
        }
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("oauth.users: {e}"))?;
        Ok(Self {
            client,
            url: config.url.clone(),
            headers,
        })
    }
}

#[async_trait::async_trait]
impl UserDirectory for HttpDirectory {
    async fn sign_in(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<SignedIn>, StoreError> {
        let response = self
            .client
            .post(&self.url)
            .headers(self.headers.clone())
            .json(&json!({"username": username, "password": password}))
            .send()
            .await
            .map_err(|e| StoreError(format!("user directory unreachable: {}", e.without_url())))?;
        let status = response.status().as_u16();
        if matches!(status, 401 | 403 | 404 | 422) {
            return Ok(None);
        }
        if status != 200 {
            return Err(StoreError(format!("user directory answered {status}")));
        }
        let body: Value = response
            .json()
            .await
            .map_err(|_| StoreError("user directory answered no JSON".into()))?;
        let subject = match body.get("id") {
            Some(Value::String(id)) if !id.is_empty() => id.clone(),
            Some(Value::Number(id)) => id.to_string(),
            _ => return Err(StoreError("user directory answered no `id`".into())),
        };
        let role = body
            .get("role")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty())
            .ok_or_else(|| StoreError("user directory answered no `role`".into()))?;
        Ok(Some(SignedIn {
            subject,
            role: role.to_string(),
        }))
    }
}
