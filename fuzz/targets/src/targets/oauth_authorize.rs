//! The authorize query (RFC 6749 §4.1.1 with PKCE and RFC 8707's resource), as a browser brings
//! it to the sign-in page. Beyond no panic: never a server error, and the page never carries a
//! script, whatever the query held.

use crate::oauth::deployment;
use crate::{contains, send};
use axum::body::Body;
use http::Request;

pub fn run(data: &[u8]) {
    let Ok(query) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(request) = Request::get(format!("/authorize?{query}"))
        .header("host", "mcp.example")
        .body(Body::empty())
    else {
        return;
    };
    let (status, headers, page) = send(&deployment().router, request);
    assert!(status.as_u16() < 500, "HTTP {status} for {query:?}");
    assert!(
        !contains(&page.to_ascii_lowercase(), b"<script"),
        "a script on the page"
    );
    if status.is_redirection() {
        // Errors go back only to the client's registered redirect URI.
        let location = headers
            .get("location")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        assert!(
            location.starts_with(crate::oauth::REDIRECT_URI) || location.starts_with('/'),
            "redirected to {location}"
        );
    }
}
