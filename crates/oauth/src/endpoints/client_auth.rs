//! Client authentication (RFC 6749 §2.3), shared by `/token` and `/revoke`: HTTP Basic or the
//! form's `client_id` and `client_secret`; public clients name themselves and prove nothing.

use std::collections::HashMap;

use axum::http::{HeaderMap, header};
use base64::Engine;

use crate::store::Client;
use crate::util::same;
use crate::{AuthServer, OAuthError};

/// The client a token or revocation request authenticates as.
pub(super) async fn authenticate_client(
    server: &AuthServer,
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Result<Client, OAuthError> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Basic ")
                .or_else(|| v.strip_prefix("basic "))
        })
        .and_then(|b| {
            base64::engine::general_purpose::STANDARD
                .decode(b.trim())
                .ok()
        })
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|pair| {
            let (id, secret) = pair.split_once(':')?;
            Some((decode_form(id), decode_form(secret)))
        });
    let (client_id, secret) = match basic {
        Some((id, secret)) => (id, Some(secret)),
        None => (
            form.get("client_id").cloned().unwrap_or_default(),
            form.get("client_secret").cloned(),
        ),
    };
    // One answer for an unknown client and a wrong secret: which ids exist is not told.
    let invalid = || OAuthError::InvalidClient("unknown client or wrong secret".into());
    let client = match server.client(&client_id).await {
        Ok(Some(client)) => client,
        _ => return Err(invalid()),
    };
    match (&client.secret_hash, secret) {
        (Some(expected), Some(secret)) if same(expected, &crate::util::hash(&secret)) => Ok(client),
        (None, _) => Ok(client),
        _ => Err(invalid()),
    }
}

/// `application/x-www-form-urlencoded` decoding of a Basic credential part (RFC 6749 §2.3.1).
fn decode_form(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={text}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::decode_form;

    #[test]
    fn basic_credential_parts_are_form_decoded() {
        assert_eq!(decode_form("op%3Aone+two"), "op:one two");
        assert_eq!(decode_form("plain"), "plain");
    }
}
