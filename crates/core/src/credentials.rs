//! concierge's own OAuth client at an upstream's authorization server, as an `mcp` or `openapi`
//! app's config writes it (`oauth = { client_id, client_secret, scopes, token_url }`): one type,
//! so the keys, their descriptions and the secret's redaction are the same for both kinds.

use serde::Deserialize;

/// concierge's own OAuth client at the upstream's authorization server.
#[derive(Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientCredentials {
    /// concierge's client id there.
    pub client_id: String,
    /// Its secret (from the environment: `${VAR}`); never logged.
    pub client_secret: String,
    /// The scopes concierge asks for.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The token endpoint of an `openapi` app: the document's `oauth2` client credentials flow
    /// when unset. An `mcp` app finds its server's from the server's metadata and refuses it.
    #[serde(default)]
    pub token_url: Option<String>,
}

/// The secret is left out, so a logged config never carries it.
impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .field("token_url", &self.token_url)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_is_never_in_the_debug_form() {
        let credentials = ClientCredentials {
            client_id: "concierge".into(),
            client_secret: "s3cret-value".into(),
            scopes: vec!["read".into()],
            token_url: None,
        };
        let shown = format!("{credentials:?}");
        assert!(shown.contains("concierge"), "{shown}");
        assert!(!shown.contains("s3cret-value"), "{shown}");
    }
}
