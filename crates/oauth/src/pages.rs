//! The sign-in and consent page, and the error page shown when a request cannot be sent back to
//! its client. Server-rendered HTML, no scripts; the headers forbid framing (clickjacking).

use std::collections::BTreeMap;

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
ul.scopes li{padding:8px 12px;margin:4px 0;background:#f3f6fb;border-radius:8px}
ul.scopes code{font-family:ui-monospace,monospace;font-size:.9rem}
ul.scopes .title{display:block;line-height:1.35}
ul.scopes .title+code{display:block;margin-top:2px;font-size:.75rem;color:#7b8494}
.hint{background:#eef3ff;color:#26406e;padding:10px 12px;border-radius:8px;font-size:.9rem;margin:0 0 4px}
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

/// What the page says that a deployment chooses (`[oauth]`): which account to sign in with, what
/// the first field is called, and each scope in words a person reads.
#[derive(Debug, Clone)]
pub struct Wording {
    sign_in_hint: Option<String>,
    login_label: String,
    scope_titles: BTreeMap<String, String>,
}

impl Default for Wording {
    fn default() -> Self {
        Self::new(None, None, BTreeMap::new())
    }
}

impl Wording {
    pub const DEFAULT_LOGIN_LABEL: &'static str = "User name";

    /// Blank settings count as unset.
    pub fn new(
        sign_in_hint: Option<&str>,
        login_label: Option<&str>,
        scope_titles: BTreeMap<String, String>,
    ) -> Self {
        let set = |text: Option<&str>| {
            text.map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_string)
        };
        Self {
            sign_in_hint: set(sign_in_hint),
            login_label: set(login_label).unwrap_or_else(|| Self::DEFAULT_LOGIN_LABEL.to_string()),
            scope_titles: scope_titles
                .into_iter()
                .map(|(scope, title)| (scope, title.trim().to_string()))
                .filter(|(_, title)| !title.is_empty())
                .collect(),
        }
    }

    /// The message after a refused sign-in, in the form's own words ("Wrong e-mail address or
    /// password.").
    pub fn wrong_sign_in(&self) -> String {
        let label = &self.login_label;
        let mut chars = label.chars();
        // "User name" → "user name", but an acronym ("PIN", "ID") keeps its capitals.
        let lowered = match (chars.next(), chars.next()) {
            (Some(first), second) if !second.is_some_and(char::is_uppercase) => {
                first.to_lowercase().chain(label.chars().skip(1)).collect()
            }
            _ => label.clone(),
        };
        format!("Wrong {lowered} or password.")
    }

    /// One `<li>` per scope: its title with the raw name small beneath it, or the raw name alone.
    fn scope_items(&self, scopes: &[String]) -> String {
        if scopes.is_empty() {
            return "<li>no particular permissions</li>".to_string();
        }
        scopes
            .iter()
            .map(|scope| match self.scope_titles.get(scope) {
                Some(title) => format!(
                    "<li title=\"{name}\"><span class=\"title\">{title}</span><code>{name}</code></li>",
                    name = escape(scope),
                    title = escape(title),
                ),
                None => format!("<li><code>{}</code></li>", escape(scope)),
            })
            .collect()
    }
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
    pub wording: &'a Wording,
}

pub fn consent(c: &Consent) -> Response {
    protect(Html(consent_html(c)).into_response())
}

fn consent_html(c: &Consent) -> String {
    let scopes = c.wording.scope_items(c.scopes);
    let (hint, described_by) = match &c.wording.sign_in_hint {
        Some(hint) => (
            format!("<p class=\"hint\" id=\"hint\">{}</p>", escape(hint)),
            " aria-describedby=\"hint\"",
        ),
        None => (String::new(), ""),
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
{hint}<form method="post" action="authorize">
<input type="hidden" name="csrf" value="{csrf}">
<label for="username">{label}</label><input type="text" id="username" name="username" value="{username}" autocomplete="username" autocapitalize="none" spellcheck="false"{described_by} autofocus>
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
        label = escape(&c.wording.login_label),
    );
    page("Allow access", &body)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn html(wording: &Wording, scopes: &[&str]) -> String {
        let scopes: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
        consent_html(&Consent {
            csrf: "csrf-token",
            client_name: "Claude",
            client_id: "dcr-1",
            unverified: true,
            scopes: &scopes,
            resource: "https://mcp.example/mappy/mcp",
            redirect_host: "claude.ai",
            username: "",
            error: None,
            wording,
        })
    }

    #[test]
    fn label_and_hint_are_shown_escaped() {
        let wording = Wording::new(
            Some("Use your <b>Mappy</b> account & \"password\"."),
            Some("E-mail <address>"),
            BTreeMap::new(),
        );
        let page = html(&wording, &[]);
        assert!(
            page.contains(
                "<p class=\"hint\" id=\"hint\">Use your &lt;b&gt;Mappy&lt;/b&gt; account &amp; &quot;password&quot;.</p>"
            ),
            "{page}"
        );
        assert!(
            page.contains("<label for=\"username\">E-mail &lt;address&gt;</label>"),
            "{page}"
        );
        assert!(!page.contains("<b>Mappy") && !page.contains("<address>"));
        // The field stays a plain user-name field whatever the label says.
        assert!(page.contains("type=\"text\" id=\"username\""));
        assert!(page.contains("autocomplete=\"username\""));
        assert!(page.contains("aria-describedby=\"hint\""));
        // The hint sits above the form.
        assert!(page.find("class=\"hint\"") < page.find("<form"));
    }

    #[test]
    fn defaults_say_user_name_and_no_hint() {
        let wording = Wording::new(None, Some("   "), BTreeMap::new());
        let page = html(&wording, &[]);
        assert!(page.contains("<label for=\"username\">User name</label>"));
        assert!(!page.contains("class=\"hint\"") && !page.contains("aria-describedby"));
        assert!(page.contains("<li>no particular permissions</li>"));
        assert_eq!(wording.wrong_sign_in(), "Wrong user name or password.");
    }

    #[test]
    fn a_titled_scope_shows_its_title_an_untitled_one_its_name() {
        let titles = BTreeMap::from([
            (
                "mappy:review:write".to_string(),
                "Trả lời đánh giá — Reply to your reviews".to_string(),
            ),
            ("mappy:post:write".to_string(), "Posts <script>".to_string()),
        ]);
        let wording = Wording::new(None, None, titles);
        let page = html(
            &wording,
            &["mappy:review:write", "mappy:post:write", "mappy:<raw>"],
        );
        assert!(
            page.contains(
                "<li title=\"mappy:review:write\"><span class=\"title\">Trả lời đánh giá — Reply to your reviews</span><code>mappy:review:write</code></li>"
            ),
            "{page}"
        );
        assert!(page.contains("<span class=\"title\">Posts &lt;script&gt;</span>"));
        assert!(!page.contains("<script>"));
        assert!(
            page.contains("<li><code>mappy:&lt;raw&gt;</code></li>"),
            "{page}"
        );
    }

    #[test]
    fn the_refusal_uses_the_label() {
        let say = |label: &str| Wording::new(None, Some(label), BTreeMap::new()).wrong_sign_in();
        assert_eq!(say("E-mail address"), "Wrong e-mail address or password.");
        assert_eq!(say("PIN"), "Wrong PIN or password.");
    }

    #[test]
    fn the_settings_are_read_from_the_config() {
        let config: crate::OAuthConfig = serde_json::from_value(serde_json::json!({
            "issuer": "https://mcp.example",
            "scopes": ["a:read"],
            "sign_in_hint": "Sign in with your Mappy account.",
            "login_label": "E-mail address",
            "scope_titles": {"a:read": "Read A"},
        }))
        .expect("config");
        assert_eq!(config.login_label.as_deref(), Some("E-mail address"));
        assert_eq!(config.scope_titles["a:read"], "Read A");
        let bare: crate::OAuthConfig =
            serde_json::from_value(serde_json::json!({"issuer": "https://mcp.example"}))
                .expect("config without the page settings");
        assert!(bare.sign_in_hint.is_none() && bare.scope_titles.is_empty());
    }
}
