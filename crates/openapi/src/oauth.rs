//! concierge's own access token at the API's authorization server: the OAuth 2.0 client
//! credentials grant (RFC 6749 §4.4) at the token URL the document's `oauth2` security scheme
//! names (or the config's `token_url`), kept until shortly before it expires and fetched again
//! after; a 401 from the API drops it, so the next call asks anew. Never the caller's token.

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;
use tokio::sync::Mutex;

use concierge_core::ClientCredentials;

/// A token is fetched again this long before the server says it expires.
const MARGIN: Duration = Duration::from_secs(30);
/// The life assumed when the server says none.
const DEFAULT_LIFE: Duration = Duration::from_secs(300);
/// The largest token answer read.
const MAX_ANSWER: usize = 64 * 1024;

pub struct TokenSource {
    token_url: reqwest::Url,
    credentials: ClientCredentials,
    client: reqwest::Client,
    held: Mutex<Option<(String, Instant)>>,
}

#[derive(Deserialize)]
struct Granted {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

impl TokenSource {
    /// The token URL from the config, else from the document's first `oauth2` scheme with a
    /// client credentials flow; relative to the base URL if the document writes it so.
    pub fn new(
        root: &Value,
        credentials: &ClientCredentials,
        base_url: &str,
        client: reqwest::Client,
    ) -> Result<Self, String> {
        let written = match &credentials.token_url {
            Some(url) => url.clone(),
            None => token_url_of(root).ok_or(
                "`auth.oauth` is set but the document declares no `oauth2` scheme with a \
                 `clientCredentials` flow: set `auth.oauth.token_url`",
            )?,
        };
        let base = reqwest::Url::parse(&format!("{}/", base_url.trim_end_matches('/')))
            .map_err(|_| "the base URL is not a URL".to_string())?;
        let token_url = base
            .join(&written)
            .map_err(|_| format!("the token URL `{written}` is not a URL"))?;
        if !matches!(token_url.scheme(), "https" | "http") {
            return Err(format!("the token URL `{written}` must be http or https"));
        }
        Ok(Self {
            token_url,
            credentials: credentials.clone(),
            client,
            held: Mutex::new(None),
        })
    }

    /// A token that is good for a while yet: the one held, or a new one.
    pub async fn token(&self) -> Result<String, String> {
        let mut held = self.held.lock().await;
        if let Some((token, until)) = held.as_ref()
            && Instant::now() + MARGIN < *until
        {
            return Ok(token.clone());
        }
        let form = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "client_credentials");
            if !self.credentials.scopes.is_empty() {
                form.append_pair("scope", &self.credentials.scopes.join(" "));
            }
            form.finish()
        };
        let response = self
            .client
            .post(self.token_url.clone())
            .basic_auth(
                &self.credentials.client_id,
                Some(&self.credentials.client_secret),
            )
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(http::header::ACCEPT, "application/json")
            .body(form)
            .send()
            .await
            .map_err(|error| format!("the token endpoint: {}", error.without_url()))?;
        let answer = concierge_upstream::read_answer(response, MAX_ANSWER)
            .await
            .map_err(|failure| format!("the token endpoint: {failure:?}"))?;
        if !(200..300).contains(&answer.status) {
            return Err(format!(
                "the token endpoint refused concierge's credentials (HTTP {})",
                answer.status
            ));
        }
        let granted: Granted = serde_json::from_slice(&answer.body)
            .map_err(|_| "the token endpoint's answer has no access_token".to_string())?;
        let life = granted.expires_in.map_or(DEFAULT_LIFE, Duration::from_secs);
        *held = Some((granted.access_token.clone(), Instant::now() + life));
        Ok(granted.access_token)
    }

    /// The API refused the token: the next call asks for a new one.
    pub async fn forget(&self) {
        *self.held.lock().await = None;
    }
}

/// The token URL of the document's first `oauth2` scheme with a client credentials flow.
fn token_url_of(root: &Value) -> Option<String> {
    let schemes = root.pointer("/components/securitySchemes")?.as_object()?;
    schemes.values().find_map(|scheme| {
        if scheme.get("type")?.as_str()? != "oauth2" {
            return None;
        }
        Some(
            scheme
                .pointer("/flows/clientCredentials/tokenUrl")?
                .as_str()?
                .to_string(),
        )
    })
}
