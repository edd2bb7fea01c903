//! The ops console's forms through the real router: a form that acts is read with the sign-in's
//! CSRF token beside its own fields, and without the token it does nothing.

use axum::body::Body;
use concierge_testkit::config::{TOKENS, server, stateless_endpoint};
use concierge_testkit::{Behaviour, FakeTool, fake_app, instance, send};
use http::{Request, StatusCode, header};

const OPS_TOKEN: &str = "an-ops-token-of-32-characters-xy";

/// A form posted from this origin; its values need no escaping.
fn form(path: &str, cookie: Option<&str>, fields: &[(&str, &str)]) -> Request<Body> {
    let body = fields
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join("&");
    let mut request = Request::post(path)
        .header(header::HOST, "127.0.0.1")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some(cookie) = cookie {
        request = request.header(header::COOKIE, cookie);
    }
    request.body(Body::from(body)).unwrap()
}

#[tokio::test]
async fn a_form_acts_with_its_csrf_token_and_its_own_fields_and_not_without_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let oauth = dir.path().join("oauth.sqlite");
    let config = [
        server(""),
        format!("\n[ops]\ntoken = \"{OPS_TOKEN}\"\n"),
        format!(
            "\n[oauth]\nissuer = \"http://127.0.0.1\"\ndatabase = \"{}\"\n",
            oauth.display()
        ),
        stateless_endpoint("/fake/mcp", &["fake.*"]),
    ]
    .concat();
    let apps = fake_app(vec![FakeTool::arc("echo", Behaviour::Echo)]);
    let deployed = instance(&config, apps, &[(TOKENS, "alice:token-a")]).await;
    let router = &deployed.router;

    let (status, headers, _) =
        send(router, form("/ops/login", None, &[("token", OPS_TOKEN)])).await;
    assert!(status.is_redirection(), "{status}");
    let cookie = headers[header::SET_COOKIE].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_string();

    let overview = Request::get("/ops")
        .header(header::HOST, "127.0.0.1")
        .header(header::COOKIE, &cookie)
        .body(Body::empty())
        .unwrap();
    let (status, _, page) = send(router, overview).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let csrf = page
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page carries the CSRF token")
        .to_string();

    // The form's own fields are read: a client this server does not have is named so.
    let revoke = [("csrf", csrf.as_str()), ("client_id", "ghost")];
    let (status, _, page) = send(router, form("/ops/oauth/revoke", Some(&cookie), &revoke)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("No client ghost."), "{page}");

    // Without the token, or with another, the same form does nothing.
    for csrf in ["", "not-the-token"] {
        let revoke = [("csrf", csrf), ("client_id", "ghost")];
        let (status, _, page) =
            send(router, form("/ops/oauth/revoke", Some(&cookie), &revoke)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{csrf:?}: {page}");
        assert!(!page.contains("No client ghost."), "{page}");
    }

    // A form of no fields of its own: the token alone.
    let (status, headers, _) = send(
        router,
        form("/ops/logout", Some(&cookie), &[("csrf", &csrf)]),
    )
    .await;
    assert!(status.is_redirection(), "{status}");
    let cleared = headers[header::SET_COOKIE].to_str().unwrap();
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
}
