//! [`OAuthError`]: every refusal of the JSON endpoints (`/register`, `/token`, `/revoke`), answered
//! the one way RFC 6749 §5.2 describes, so no endpoint can forget a header or misspell a code.
//! The browser-facing `/authorize` refuses with a page instead ([`crate::pages::error`]): an
//! invalid request there is not sent back to the client (RFC 9700 §4.11.2).

use std::time::Duration;

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// An OAuth error response. The string is the `error_description` a developer reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OAuthError {
    /// RFC 6749 §5.2.
    #[error("invalid_request: {0}")]
    InvalidRequest(String),
    /// RFC 6749 §5.2: 401 with a challenge, whichever way the client tried to authenticate.
    #[error("invalid_client: {0}")]
    InvalidClient(String),
    /// RFC 6749 §5.2: the code or refresh token is not (or no longer) good for this client.
    #[error("invalid_grant: {0}")]
    InvalidGrant(String),
    /// RFC 6749 §5.2.
    #[error("unauthorized_client: {0}")]
    UnauthorizedClient(String),
    /// RFC 6749 §5.2.
    #[error("unsupported_grant_type: {0}")]
    UnsupportedGrantType(String),
    /// RFC 6749 §5.2.
    #[error("invalid_scope: {0}")]
    InvalidScope(String),
    /// RFC 8707 §2: the resource is not one of ours.
    #[error("invalid_target: {0}")]
    InvalidTarget(String),
    /// RFC 7591 §3.2.2.
    #[error("invalid_redirect_uri: {0}")]
    InvalidRedirectUri(String),
    /// RFC 7591 §3.2.2.
    #[error("invalid_client_metadata: {0}")]
    InvalidClientMetadata(String),
    /// Our own store failed; what failed is logged, never told to a stranger.
    #[error("server_error: try again")]
    ServerError,
    /// Too many `what` from one peer: 429 with `Retry-After` in whole seconds.
    #[error("temporarily_unavailable: too many {what}")]
    Throttled { wait: Duration, what: &'static str },
}

/// The challenge of a 401 `invalid_client` (RFC 6749 §5.2 asks for one matching the scheme the
/// client used; Basic is the only header scheme we accept).
const CLIENT_CHALLENGE: &str = "Basic realm=\"oauth\"";

impl OAuthError {
    /// The `error` code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidRequest(_) => "invalid_request",
            Self::InvalidClient(_) => "invalid_client",
            Self::InvalidGrant(_) => "invalid_grant",
            Self::UnauthorizedClient(_) => "unauthorized_client",
            Self::UnsupportedGrantType(_) => "unsupported_grant_type",
            Self::InvalidScope(_) => "invalid_scope",
            Self::InvalidTarget(_) => "invalid_target",
            Self::InvalidRedirectUri(_) => "invalid_redirect_uri",
            Self::InvalidClientMetadata(_) => "invalid_client_metadata",
            Self::ServerError => "server_error",
            Self::Throttled { .. } => "temporarily_unavailable",
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::InvalidClient(_) => StatusCode::UNAUTHORIZED,
            Self::ServerError => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Throttled { .. } => StatusCode::TOO_MANY_REQUESTS,
            _ => StatusCode::BAD_REQUEST,
        }
    }

    /// The `error_description`.
    pub fn description(&self) -> String {
        match self {
            Self::InvalidRequest(text)
            | Self::InvalidClient(text)
            | Self::InvalidGrant(text)
            | Self::UnauthorizedClient(text)
            | Self::UnsupportedGrantType(text)
            | Self::InvalidScope(text)
            | Self::InvalidTarget(text)
            | Self::InvalidRedirectUri(text)
            | Self::InvalidClientMetadata(text) => text.clone(),
            Self::ServerError => "try again".into(),
            Self::Throttled { wait, what } => format!(
                "too many {what} from your address; try again in {}",
                in_seconds(whole_seconds(*wait))
            ),
        }
    }
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        #[derive(serde::Serialize)]
        struct Body<'a> {
            error: &'a str,
            error_description: String,
        }
        let body = Body {
            error: self.code(),
            error_description: self.description(),
        };
        let mut response = (self.status(), Json(body)).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        match &self {
            Self::InvalidClient(_) => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(CLIENT_CHALLENGE),
                );
            }
            Self::Throttled { wait, .. } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(whole_seconds(*wait)));
            }
            _ => {}
        }
        crate::endpoints::cors(response)
    }
}

/// A wait in whole seconds, rounded up (`Retry-After` has no fractions; 0 would invite a retry
/// that is refused again).
pub(crate) fn whole_seconds(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

pub(crate) fn in_seconds(seconds: u64) -> String {
    match seconds {
        1 => "1 second".into(),
        n => format!("{n} seconds"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn parts(error: OAuthError) -> (StatusCode, axum::http::HeaderMap, serde_json::Value) {
        let response = error.into_response();
        let (parts, body) = response.into_parts();
        let bytes = axum::body::to_bytes(body, 1 << 16).await.expect("body");
        (
            parts.status,
            parts.headers,
            serde_json::from_slice(&bytes).expect("JSON"),
        )
    }

    #[tokio::test]
    async fn an_error_is_the_rfc_6749_json_and_never_cached() {
        let (status, headers, body) =
            parts(OAuthError::InvalidGrant("the code was already used".into())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(
            body,
            serde_json::json!({"error": "invalid_grant", "error_description": "the code was already used"})
        );
        assert_eq!(headers[header::CACHE_CONTROL], "no-store");
        assert_eq!(headers[header::CONTENT_TYPE], "application/json");
        assert_eq!(headers[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
        assert!(headers.get(header::WWW_AUTHENTICATE).is_none());
    }

    #[tokio::test]
    async fn a_failed_client_authentication_is_a_401_with_a_challenge() {
        let (status, headers, body) = parts(OAuthError::InvalidClient("wrong secret".into())).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(body["error"], "invalid_client");
        assert_eq!(headers[header::WWW_AUTHENTICATE], CLIENT_CHALLENGE);
    }

    #[tokio::test]
    async fn a_throttled_peer_is_told_when_to_come_back_in_whole_seconds() {
        let (status, headers, body) = parts(OAuthError::Throttled {
            wait: Duration::from_millis(1500),
            what: "registrations",
        })
        .await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(headers[header::RETRY_AFTER], "2");
        assert_eq!(body["error"], "temporarily_unavailable");
        assert_eq!(
            body["error_description"],
            "too many registrations from your address; try again in 2 seconds"
        );
    }

    #[tokio::test]
    async fn a_store_failure_says_nothing_but_try_again() {
        let (status, _, body) = parts(OAuthError::ServerError).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["error_description"], "try again");
    }

    #[test]
    fn waits_round_up_and_never_say_zero() {
        assert_eq!(whole_seconds(Duration::from_millis(10)), 1);
        assert_eq!(whole_seconds(Duration::from_secs(3)), 3);
        assert_eq!(whole_seconds(Duration::from_millis(3001)), 4);
        assert_eq!(in_seconds(1), "1 second");
        assert_eq!(in_seconds(5), "5 seconds");
    }
}
