//! Who is calling: the bearer token (a static token list, or an OAuth access token for this
//! endpoint's resource URL) becomes a [`Caller`], or the request is refused with 401.
//!
//! Only the `Authorization` header counts: a token in a query string ends up in proxy logs.

use concierge_core::{Caller, Outcome};
use http::{HeaderMap, StatusCode, header};

use super::Refusal;
use crate::tokens::TokenList;

/// How an endpoint establishes who is calling.
pub enum Authenticator {
    /// Nobody is asked; the caller is `anonymous` (loopback only, enforced by config checks).
    None,
    Tokens(TokenList),
    /// The token variable is unset and has no default: nobody can be admitted.
    Missing,
    /// OAuth access tokens for this endpoint's resource URL.
    OAuth(OAuthResource),
}

impl Authenticator {
    /// Whether a session opened by `principal` may go on under this authenticator: its client
    /// still has a token (OAuth tokens end on their own; nobody opened sessions without auth).
    pub fn admits_principal(&self, principal: &str) -> bool {
        match self {
            Self::None | Self::OAuth(_) => true,
            Self::Missing => false,
            Self::Tokens(tokens) => tokens.names(principal),
        }
    }
}

/// An endpoint as an OAuth protected resource.
pub struct OAuthResource {
    pub verifier: concierge_oauth::Verifier,
    /// The endpoint's URL: the tokens' audience, the metadata's `resource`.
    pub resource: String,
    /// Its RFC 9728 metadata document, absolute (claude.ai ignores relative ones).
    pub metadata_url: String,
    /// Scopes named in the challenge.
    pub scopes: Vec<String>,
}

impl OAuthResource {
    fn challenge(&self, error: Option<&str>) -> String {
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        if !self.scopes.is_empty() {
            challenge.push_str(&format!(", scope=\"{}\"", self.scopes.join(" ")));
        }
        if let Some(error) = error {
            challenge.push_str(&format!(", error=\"{error}\""));
        }
        challenge
    }
}

/// The authentication step.
pub async fn decide(auth: &Authenticator, headers: &HeaderMap) -> Result<Caller, Refusal> {
    let presented = bearer(headers);
    let tokens = match auth {
        Authenticator::None => return Ok(Caller::client("anonymous")),
        Authenticator::Missing => return Err(unauthorized()),
        Authenticator::Tokens(TokenList::Malformed(_)) => {
            return Err(Refusal::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                Outcome::Misconfigured,
                "misconfigured",
                "this endpoint's client list is misconfigured; the server log says what",
            ));
        }
        Authenticator::Tokens(tokens) => tokens,
        Authenticator::OAuth(oauth) => {
            // No token: a plain challenge (RFC 6750 §3: no error code); a bad one: invalid_token.
            let Some(token) = presented else {
                return Err(challenge(oauth, None));
            };
            return match oauth.verifier.verify(token, &oauth.resource).await {
                Ok(owner) => Ok(Caller {
                    client: owner.client_id,
                    user: owner.user,
                    scopes: owner.scopes,
                    token: Some(owner.token_id),
                    role: owner.role,
                    claims: Some(owner.claims),
                }),
                Err(why) => {
                    tracing::info!(%why, "access token refused");
                    Err(challenge(oauth, Some("invalid_token")))
                }
            };
        }
    };
    let presented = presented.ok_or_else(unauthorized)?;
    tokens
        .authenticate(presented)
        .map(Caller::client)
        .ok_or_else(unauthorized)
}

fn unauthorized() -> Refusal {
    Refusal::new(
        StatusCode::UNAUTHORIZED,
        Outcome::Unauthorized,
        "unauthorized",
        "missing or invalid bearer token",
    )
    .header(header::WWW_AUTHENTICATE, "Bearer realm=\"concierge\"")
}

/// An OAuth endpoint's 401, with the challenge that leads the client to the metadata.
fn challenge(oauth: &OAuthResource, error: Option<&str>) -> Refusal {
    Refusal::new(
        StatusCode::UNAUTHORIZED,
        Outcome::Unauthorized,
        if error.is_some() {
            "invalid_token"
        } else {
            "unauthorized"
        },
        "authorization required",
    )
    .header(header::WWW_AUTHENTICATE, &oauth.challenge(error))
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        })
}
