//! A client ID metadata document (CIMD) as fetched from a client's URL.

use concierge_oauth::cimd::client_of;

const CLIENT_ID: &str = "https://app.example/oauth/client.json";

pub fn run(data: &[u8]) {
    let Ok(document) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Ok(client) = client_of(CLIENT_ID, &document) {
        assert_eq!(client.client_id, CLIENT_ID);
        assert!(
            client.secret_hash.is_none(),
            "a document client with a secret"
        );
        assert!(client.name.chars().count() <= 100);
        assert!(!client.redirect_uris.is_empty());
    }
}
