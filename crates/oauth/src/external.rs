//! Tokens from an external identity provider (Keycloak, Auth0, Entra ID, the Mappy backend…):
//! JWTs checked against the provider's JWKS (refetched when a token names an unknown key; only
//! the configured algorithms), or opaque tokens asked about by RFC 7662 introspection.

use std::sync::RwLock;
use std::time::{Duration, Instant};

use concierge_core::json::strings;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::Value;

use crate::TokenOwner;

/// `[oauth.external]`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExternalConfig {
    /// The provider's issuer (`iss` of its tokens).
    pub issuer: String,
    /// Its JWK Set, for JWT access tokens.
    #[serde(default)]
    pub jwks_uri: Option<String>,
    /// Its RFC 7662 introspection endpoint, for opaque tokens (used when there is no `jwks_uri`).
    #[serde(default)]
    pub introspection_endpoint: Option<String>,
    /// concierge's client id at the introspection endpoint.
    #[serde(default)]
    pub introspection_client_id: Option<String>,
    /// Its secret (from the environment: `${VAR}`).
    #[serde(default)]
    pub introspection_client_secret: Option<String>,
    /// The audience tokens must carry; the endpoint's URL when unset (RFC 8707).
    #[serde(default)]
    pub audience: Option<String>,
    /// Signature algorithms accepted (`none` and HMAC never are).
    #[serde(default = "default_algorithms")]
    pub algorithms: Vec<String>,
}

fn default_algorithms() -> Vec<String> {
    vec!["RS256".into(), "ES256".into(), "EdDSA".into()]
}

/// Unknown `kid`s may trigger at most this many JWKS fetches a minute: a rotation is picked up at
/// once, a flood of made-up kids does not become a flood of requests to the provider.
const FETCHES_PER_MINUTE: usize = 5;

pub struct ExternalIssuer {
    config: ExternalConfig,
    algorithms: Vec<Algorithm>,
    http: reqwest::Client,
    keys: RwLock<(JwkSet, std::collections::VecDeque<Instant>)>,
}

impl ExternalIssuer {
    pub fn new(config: ExternalConfig) -> Result<Self, String> {
        if config.jwks_uri.is_none() && config.introspection_endpoint.is_none() {
            return Err("oauth.external: give `jwks_uri` or `introspection_endpoint`".into());
        }
        let mut algorithms = Vec::new();
        for name in &config.algorithms {
            let algorithm: Algorithm = name
                .parse()
                .map_err(|_| format!("oauth.external.algorithms: unknown `{name}`"))?;
            if matches!(
                algorithm,
                Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
            ) {
                return Err(format!(
                    "oauth.external.algorithms: `{name}` needs a shared secret; use the provider's public keys"
                ));
            }
            algorithms.push(algorithm);
        }
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self {
            config,
            algorithms,
            http,
            keys: RwLock::new((JwkSet { keys: Vec::new() }, Default::default())),
        })
    }

    pub fn issuer(&self) -> &str {
        &self.config.issuer
    }

    pub async fn verify(&self, token: &str, resource: &str) -> Result<TokenOwner, String> {
        let audience = self
            .config
            .audience
            .clone()
            .unwrap_or_else(|| resource.to_string());
        let claims = match &self.config.jwks_uri {
            Some(jwks_uri) => self.verify_jwt(token, jwks_uri, &audience).await?,
            None => self.introspect(token, &audience).await?,
        };
        let text = |key: &str| claims.get(key).and_then(Value::as_str).map(str::to_string);
        let scopes = match claims.get("scope").or_else(|| claims.get("scp")) {
            Some(Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
            Some(listed) => strings(listed).unwrap_or_default(),
            None => Vec::new(),
        };
        let client_id = text("client_id")
            .or_else(|| text("azp"))
            .unwrap_or_else(|| "external".into());
        let user = text("sub").filter(|sub| *sub != client_id);
        Ok(TokenOwner {
            client_id,
            user,
            scopes,
            token_id: text("jti").unwrap_or_else(|| crate::util::hash(token)[..16].to_string()),
            role: text("role"),
            claims: std::sync::Arc::new(match claims {
                Value::Object(claims) => claims,
                _ => serde_json::Map::new(),
            }),
        })
    }

    async fn verify_jwt(
        &self,
        token: &str,
        jwks_uri: &str,
        audience: &str,
    ) -> Result<Value, String> {
        let header = jsonwebtoken::decode_header(token).map_err(|e| e.to_string())?;
        if !self.algorithms.contains(&header.alg) {
            return Err(format!("algorithm {:?} is not accepted", header.alg));
        }
        let kid = header.kid.ok_or("the token names no key")?;
        let key = match self.key(&kid) {
            Some(key) => key,
            None => {
                self.refetch(jwks_uri).await?;
                self.key(&kid)
                    .ok_or("the token's key is not in the provider's JWKS")?
            }
        };
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[audience, &format!("{}/", audience.trim_end_matches('/'))]);
        // RFC 8707: the token must say it was issued for us. jsonwebtoken checks `aud` only when
        // the token has one; a token without any would pass, so the claim is required.
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = 30;
        jsonwebtoken::decode::<Value>(token, &key, &validation)
            .map(|data| data.claims)
            .map_err(|e| e.to_string())
    }

    fn key(&self, kid: &str) -> Option<DecodingKey> {
        let keys = self.keys.read().unwrap_or_else(|p| p.into_inner());
        keys.0
            .find(kid)
            .and_then(|jwk| DecodingKey::from_jwk(jwk).ok())
    }

    async fn refetch(&self, jwks_uri: &str) -> Result<(), String> {
        {
            let mut keys = self.keys.write().unwrap_or_else(|p| p.into_inner());
            let fetches = &mut keys.1;
            while fetches
                .front()
                .is_some_and(|at| at.elapsed() >= Duration::from_secs(60))
            {
                fetches.pop_front();
            }
            if fetches.len() >= FETCHES_PER_MINUTE {
                return Err("unknown key (the JWKS was fetched often enough this minute)".into());
            }
            fetches.push_back(Instant::now());
        }
        let response = self
            .http
            .get(jwks_uri)
            .send()
            .await
            .map_err(|e| format!("JWKS: {}", e.without_url()))?;
        if !response.status().is_success() {
            return Err(format!("JWKS answered HTTP {}", response.status().as_u16()));
        }
        let set: JwkSet = response
            .json()
            .await
            .map_err(|e| format!("JWKS is not a JWK Set: {}", e.without_url()))?;
        self.keys.write().unwrap_or_else(|p| p.into_inner()).0 = set;
        Ok(())
    }

    async fn introspect(&self, token: &str, audience: &str) -> Result<Value, String> {
        let endpoint = self
            .config
            .introspection_endpoint
            .as_deref()
            .ok_or("no introspection endpoint")?;
        let mut request = self
            .http
            .post(endpoint)
            .form(&[("token", token), ("token_type_hint", "access_token")]);
        if let Some(id) = &self.config.introspection_client_id {
            request = request.basic_auth(id, self.config.introspection_client_secret.as_deref());
        }
        let response = request
            .send()
            .await
            .map_err(|e| format!("introspection: {}", e.without_url()))?;
        if !response.status().is_success() {
            return Err(format!(
                "introspection answered HTTP {}",
                response.status().as_u16()
            ));
        }
        let claims: Value = response
            .json()
            .await
            .map_err(|e| format!("introspection answer: {}", e.without_url()))?;
        if claims.get("active").and_then(Value::as_bool) != Some(true) {
            return Err("inactive token".into());
        }
        if let Some(iss) = claims.get("iss").and_then(Value::as_str)
            && iss != self.config.issuer
        {
            return Err("another issuer's token".into());
        }
        let now = chrono::Utc::now().timestamp();
        if claims
            .get("exp")
            .and_then(Value::as_i64)
            .is_some_and(|exp| exp < now)
        {
            return Err("expired".into());
        }
        let canonical = |s: &str| s.trim_end_matches('/').to_string();
        // No audience, no entry: a token the provider issued for another API is not ours.
        let aud_ok = match claims.get("aud") {
            None => false,
            Some(Value::String(a)) => canonical(a) == canonical(audience),
            Some(Value::Array(list)) => list
                .iter()
                .filter_map(Value::as_str)
                .any(|a| canonical(a) == canonical(audience)),
            Some(_) => false,
        };
        if !aud_ok {
            return Err("a token for another audience".into());
        }
        Ok(claims)
    }
}
