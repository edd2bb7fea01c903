//! The sign-in and consent page, and the error page shown when a request cannot be sent back to
//! its client. Server-rendered HTML, no scripts; the headers forbid framing (clickjacking).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = r#"
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f5f8;color:#1d2330}
main{max-width:420px;margin:48px auto;padding:32px;background:#fff;border-radius:14px;box-shadow:0 6px 24px rgba(20,30,60,.08)}
h1{font-size:1.35rem;margin:0 0 4px}
.sub{color:#5b6475;margin:0 0 20px}
.client{font-weight:600;color:#1d2330}
button,input{font-family:inherit}
.badge{display:inline-block;font-size:.75rem;padding:1px 8px;border-radius:99px;background:#fff4d6;color:#7a5a00;margin-left:6px;vertical-align:middle}
ul.scopes{list-style:none;padding:0;margin:8px 0 16px}
ul.scopes li{padding:8px 12px;margin:4px 0;background:#f3f6fb;border-radius:8px;font-family:ui-monospace,monospace;font-size:.9rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:4px 12px;font-size:.9rem;color:#3a4252;margin:0 0 20px}
dt{color:#7b8494}
dd{margin:0;word-break:break-all}
label{display:block;font-size:.9rem;margin:12px 0 4px;color:#3a4252}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:10px 12px;border:1px solid #cfd5df;border-radius:8px;font-size:1rem}
.buttons{display:flex;gap:12px;margin-top:22px}
button{flex:1;padding:11px;border-radius:8px;font-size:1rem;cursor:pointer;border:1px solid #cfd5df;background:#fff}
button.allow{background:#1f5eff;border-color:#1f5eff;color:#fff;font-weight:600}
.error{background:#fdecec;color:#8a1c1c;padding:10px 12px;border-radius:8px;margin:0 0 16px}
footer{text-align:center;color:#8a92a2;font-size:.8rem;margin-top:18px}
@media (max-width:500px){main{margin:16px 12px;padding:24px}}
"#;

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body><main>{body}</main><footer>concierge</footer></body></html>",
        escape(title)
    )
}

/// Headers every page carries: no framing, no caching, no scripts.
fn protect(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
        ),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    response
}

pub struct Consent<'a> {
    pub csrf: &'a str,
    pub client_name: &'a str,
    pub client_id: &'a str,
    /// A self-registered client names itself; nobody vouched for the name.
    pub unverified: bool,
    pub scopes: &'a [String],
    pub resource: &'a str,
    pub redirect_host: &'a str,
    /// Kept when the form is shown again after a wrong password.
    pub username: &'a str,
    pub error: Option<&'a str>,
}

pub fn consent(c: &Consent) -> Response {
    let scopes = if c.scopes.is_empty() {
        "<li>no particular permissions</li>".to_string()
    } else {
        c.scopes
            .iter()
            .map(|s| format!("<li>{}</li>", escape(s)))
            .collect::<String>()
    };
    let error = c
        .error
        .map(|e| format!("<p class=\"error\">{}</p>", escape(e)))
        .unwrap_or_default();
    let badge = if c.unverified {
        "<span class=\"badge\" title=\"The application chose this name itself\">unverified</span>"
    } else {
        ""
    };
    let body = format!(
        r#"<h1>Sign in to allow access</h1>
<p class="sub"><span class="client">{name}</span>{badge} wants to use your account.</p>
{error}<p>It asks for:</p><ul class="scopes">{scopes}</ul>
<dl><dt>Resource</dt><dd>{resource}</dd><dt>Returns to</dt><dd>{host}</dd><dt>Client ID</dt><dd>{client_id}</dd></dl>
<form method="post" action="authorize">
<input type="hidden" name="csrf" value="{csrf}">
<label for="username">User name</label><input type="text" id="username" name="username" value="{username}" autocomplete="username" autofocus>
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password">
<div class="buttons"><button type="submit" name="decision" value="deny">Deny</button>
<button class="allow" type="submit" name="decision" value="allow">Allow</button></div>
</form>"#,
        name = escape(c.client_name),
        resource = escape(c.resource),
        host = escape(c.redirect_host),
        client_id = escape(c.client_id),
        csrf = escape(c.csrf),
        username = escape(c.username),
    );
    protect(Html(page("Allow access", &body)).into_response())
}

/// For requests that cannot be returned to a client (unknown client, a redirect URI that does
/// not match): redirecting there would make us an open redirector.
pub fn error(status: StatusCode, message: &str) -> Response {
    let body = format!(
        "<h1>This sign-in link does not work</h1><p class=\"error\">{}</p><p class=\"sub\">Go back to the application and start the connection again.</p>",
        escape(message)
    );
    protect((status, Html(page("Sign-in error", &body))).into_response())
}
