//! The console's HTML, rendered on the server (maud escapes every value): no script, no build
//! step, one small stylesheet inline.

use axum::response::{IntoResponse, Response};
use concierge_core::Outcome;
use http::{HeaderName, HeaderValue, StatusCode, header};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde_json::Value;

use super::trail::{ClientStats, Filter, WRITE_ENDS};

const STYLE: &str = "
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:10px 24px;display:flex;gap:24px;align-items:center}
header a{color:#cfe3ff;text-decoration:none}header strong{margin-right:16px}
header form{margin-left:auto}main{padding:16px 24px;max-width:1280px}
h2{font-size:16px;margin:24px 0 8px}table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #e3e6ea;vertical-align:top}
th{background:#eef1f5;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#137333}.down{color:#b3261e}.starting{color:#b06000}
.flash{background:#e6f4ea;border:1px solid #137333;padding:8px 12px;margin:12px 0}
.error{background:#fce8e6;border-color:#b3261e}
form.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:end;background:#fff;padding:10px}
form.filters label{display:flex;flex-direction:column;font-size:12px}
input,select{font:inherit;padding:3px 6px}button{font:inherit;padding:4px 10px;cursor:pointer}
code,pre{font-family:ui-monospace,monospace;font-size:12px}pre{background:#fff;padding:10px;overflow:auto}
.login{max-width:360px;margin:80px auto;background:#fff;padding:24px}
";

/// A whole page: the navigation, and `body`.
pub fn page(title: &str, csrf: Option<&str>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · concierge ops" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                @if let Some(csrf) = csrf {
                    header {
                        strong { "concierge ops" }
                        a href="/ops" { "Overview" }
                        a href="/ops/audit" { "Audit" }
                        a href="/ops/oauth" { "OAuth clients" }
                        form method="post" action="/ops/logout" {
                            input type="hidden" name="csrf" value=(csrf);
                            button type="submit" { "Sign out" }
                        }
                    }
                }
                main { (body) }
            }
        }
    }
}

pub fn login(problem: Option<&str>) -> Markup {
    page(
        "Sign in",
        None,
        html! {
            form.login method="post" action="/ops/login" {
                h2 { "concierge ops" }
                p { "Sign in with the deployment's ops token (" code { "[ops] token" } ")." }
                @if let Some(problem) = problem { p.flash.error { (problem) } }
                p { input type="password" name="token" autocomplete="current-password" autofocus required style="width:100%"; }
                button type="submit" { "Sign in" }
            }
        },
    )
}

pub fn flash(message: Option<&str>, error: bool) -> Markup {
    html! {
        @if let Some(message) = message {
            @if error { p.flash.error { (message) } } @else { p.flash { (message) } }
        }
    }
}

/// One row of the endpoints table.
pub struct EndpointRow {
    pub path: String,
    pub auth: String,
    pub session: String,
    pub tools: Vec<String>,
    pub list_tokens: usize,
}

/// One row of the apps' readings.
pub struct AppRow {
    pub app: String,
    pub health: (&'static str, String),
    pub readings: Vec<(String, String)>,
    pub actions: Vec<(&'static str, &'static str)>,
}

pub fn overview(
    csrf: &str,
    message: Option<(&str, bool)>,
    apps: &[AppRow],
    endpoints: &[EndpointRow],
    clients: &[(String, ClientStats)],
    writes: &[(String, std::collections::BTreeMap<String, u64>)],
) -> Markup {
    page(
        "Overview",
        Some(csrf),
        html! {
            @if let Some((message, error)) = message { (flash(Some(message), error)) }
            h2 { "Apps and their upstreams" }
            table {
                tr { th { "App" } th { "Upstream" } th { "Readings" } th { "Actions" } }
                @for app in apps {
                    tr {
                        td { (app.app) }
                        td { span class=(app.health.0) { (app.health.0) } @if !app.health.1.is_empty() { " — " (app.health.1) } }
                        td {
                            @for (name, value) in &app.readings { div { code { (name) } " " (value) } }
                        }
                        td {
                            @for (name, label) in &app.actions {
                                form method="post" action="/ops/action" {
                                    input type="hidden" name="csrf" value=(csrf);
                                    input type="hidden" name="app" value=(app.app);
                                    input type="hidden" name="action" value=(name);
                                    button type="submit" { (label) }
                                }
                            }
                        }
                    }
                }
            }
            h2 { "Clients, last hour and day" }
            @if clients.is_empty() { p { "No calls in the last day." } }
            @else {
                table {
                    tr {
                        th { "Client" } th.num { "Calls 1 h" } th.num { "Calls 24 h" }
                        th.num { "Refused 1 h" } th.num { "Refused 24 h" }
                        th.num { "p95 1 h" } th.num { "p95 24 h" } th { "Per hour (calls, refusals in red)" }
                    }
                    @for (client, stats) in clients {
                        tr {
                            td {
                                @if client == "(none)" { "(no client: refused before sign-in)" }
                                @else { a href={ "/ops/audit?client=" (urlencode(client)) } { (client) } }
                            }
                            td.num { (stats.calls_hour) } td.num { (stats.calls_day) }
                            td.num { (stats.refusals_hour) } td.num { (stats.refusals_day) }
                            td.num { (ms(stats.p95_hour_ms)) } td.num { (ms(stats.p95_day_ms)) }
                            td { (chart(&stats.hourly)) }
                        }
                    }
                }
            }
            h2 { "Writes, last day" }
            @if writes.is_empty() { p { "No write tool was called in the last day." } }
            @else {
                table {
                    tr { th { "Tool" } th { "How the calls ended" } }
                    @for (tool, ended) in writes {
                        tr {
                            td { a href={ "/ops/audit?tool=" (urlencode(tool)) } { (tool) } }
                            td {
                                @for (how, count) in ended {
                                    span style="margin-right:14px" { code { (how) } " " (count) }
                                }
                            }
                        }
                    }
                }
                p { small {
                    @for (i, (ended, meaning)) in WRITE_ENDS.iter().enumerate() {
                        @if i > 0 { "; " }
                        (ended) ": " (meaning)
                    }
                    "."
                } }
            }
            h2 { "Endpoints and their tools" }
            table {
                tr { th { "Endpoint" } th { "Auth" } th { "Sessions" } th.num { "tools/list tokens" } th { "Tools" } }
                @for endpoint in endpoints {
                    tr {
                        td { code { (endpoint.path) } }
                        td { (endpoint.auth) }
                        td { (endpoint.session) }
                        td.num title="cl100k tokens of the tools/list answer a model reads" { (endpoint.list_tokens) }
                        td { (endpoint.tools.join(", ")) }
                    }
                }
            }
        },
    )
}

fn ms(value: Option<f64>) -> String {
    value
        .map(|v| format!("{v:.1} ms"))
        .unwrap_or_else(|| "–".into())
}

/// 24 bars: calls (blue) with the refusals (red) stacked on them.
fn chart(hourly: &[(u64, u64); 24]) -> Markup {
    let peak = hourly.iter().map(|(c, r)| c + r).max().unwrap_or(0).max(1) as f64;
    let (width, height) = (4.0 * 24.0 + 23.0, 28.0);
    html! {
        svg width=(width) height=(height) viewBox={ "0 0 " (width) " " (height) } role="img" aria-label="calls per hour" {
            @for (i, (calls, refused)) in hourly.iter().enumerate() {
                @let x = i as f64 * 5.0;
                @let calls_h = *calls as f64 / peak * height;
                @let refused_h = *refused as f64 / peak * height;
                rect x=(x) y=(height - calls_h) width="4" height=(calls_h) fill="#1a73e8" {}
                rect x=(x) y=(height - calls_h - refused_h) width="4" height=(refused_h) fill="#d93025" {}
            }
        }
    }
}

pub fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

pub fn audit(csrf: &str, filter: &Filter, problem: Option<&str>, events: &[Value]) -> Markup {
    let field = |e: &Value, name: &str| e[name].as_str().unwrap_or("").to_string();
    page(
        "Audit",
        Some(csrf),
        html! {
            h2 { "Audit trail" }
            form.filters method="get" action="/ops/audit" {
                label { "Client" input name="client" value=(filter.client); }
                label { "User" input name="user" value=(filter.user); }
                label { "Tool" input name="tool" value=(filter.tool); }
                label { "Outcome" select name="outcome" {
                    option value="" { "any" }
                    @for outcome in Outcome::ALL.map(Outcome::name) {
                        option value=(outcome) selected[filter.outcome == outcome] { (outcome) }
                    }
                } }
                label { "Since (UTC)" input name="since" placeholder="2026-12-01T08:00:00Z" value=(filter.since); }
                label { "Until (UTC)" input name="until" value=(filter.until); }
                label { "Trace id" input name="trace" value=(filter.trace); }
                button type="submit" { "Filter" }
            }
            (flash(problem, true))
            @if events.len() == 1 && !filter.trace.is_empty() {
                h2 { "Call " code { (filter.trace) } }
                pre { (serde_json::to_string_pretty(&events[0]).unwrap_or_default()) }
            } @else {
                p { (events.len()) " events, newest first" }
                table {
                    tr { th { "Time (UTC)" } th { "Endpoint" } th { "Client" } th { "User" } th { "Tool" } th { "Outcome" } th.num { "ms" } th { "Trace id" } }
                    @for event in events {
                        tr {
                            td { (field(event, "ts")) }
                            td { code { (field(event, "endpoint")) } }
                            td { (field(event, "client")) }
                            td { (field(event, "user")) }
                            td { (field(event, "tool")) }
                            td { (field(event, "outcome")) @if let Some(code) = event["code"].as_str() { " " code { (code) } } }
                            td.num { (event["duration_ms"].as_f64().map(|d| format!("{d:.1}")).unwrap_or_default()) }
                            td { a href={ "/ops/audit?trace=" (urlencode(&field(event, "trace_id"))) } { code { (field(event, "trace_id")) } } }
                        }
                    }
                }
            }
        },
    )
}

/// One row of the OAuth clients table.
pub struct ClientRow {
    pub client_id: String,
    pub name: String,
    pub source: String,
    pub redirect_hosts: Vec<String>,
    pub last_used: String,
}

/// One row of the token families table.
pub struct FamilyRow {
    pub family: String,
    pub client_id: String,
    pub user: String,
    pub scope: String,
    pub expires: String,
}

pub fn oauth(
    csrf: &str,
    message: Option<(&str, bool)>,
    clients: Option<&[ClientRow]>,
    families: &[FamilyRow],
) -> Markup {
    page(
        "OAuth clients",
        Some(csrf),
        html! {
            @if let Some((message, error)) = message { (flash(Some(message), error)) }
            h2 { "OAuth clients" }
            @match clients {
                None => p { "This deployment has no built-in authorization server." },
                Some(clients) => table {
                    tr { th { "Client" } th { "Name" } th { "Registered by" } th { "Redirect hosts" } th { "Last seen" } th {} }
                    @for client in clients {
                        tr {
                            td { code { (client.client_id) } }
                            td { (client.name) }
                            td { (client.source) }
                            td { (client.redirect_hosts.join(", ")) }
                            td { (client.last_used) }
                            td {
                                form method="post" action="/ops/oauth/revoke" {
                                    input type="hidden" name="csrf" value=(csrf);
                                    input type="hidden" name="client_id" value=(client.client_id);
                                    button type="submit" aria-label={ "Revoke " (client.client_id) } { "Revoke" }
                                }
                            }
                        }
                    }
                },
            }
            @if clients.is_some() {
                h2 { "Token families" }
                p { small { "Each sign-in starts a family: its refresh token rotates on every use. Revoking one ends its refresh token and the access tokens issued from it." } }
                @if families.is_empty() { p { "No live refresh tokens." } }
                @else {
                    table {
                        tr { th { "Client" } th { "User" } th { "Scope" } th { "Refreshable until" } th {} }
                        @for family in families {
                            tr.family {
                                td { code { (family.client_id) } }
                                td { (family.user) }
                                td { (family.scope) }
                                td { (family.expires) }
                                td {
                                    form method="post" action="/ops/oauth/revoke-family" {
                                        input type="hidden" name="csrf" value=(csrf);
                                        input type="hidden" name="family" value=(family.family);
                                        button type="submit" { "Revoke" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// An HTML answer with the headers every console page has: not cached, not framed, no script.
pub fn respond(status: StatusCode, markup: Markup) -> Response {
    let mut response = (status, markup.into_string()).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; \
             form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    );
    response
}
