//! The console's pages: the overview (apps, clients, writes, endpoints), the audit trail, the
//! OAuth clients and token families.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use concierge_core::Health;
use http::StatusCode;

use super::access::SignedIn;
use super::console::Console;
use super::pages::{self, respond};
use super::session::Operator;
use super::trail;

impl Console {
    pub(super) async fn overview(
        &self,
        operator: &Operator,
        message: Option<(&str, bool)>,
    ) -> Response {
        let mut apps = Vec::new();
        for (app, health, _) in crate::health::probe(&self.health).await {
            let health = match health {
                Health::Ok => ("ok", String::new()),
                Health::Starting(why) => ("starting", why),
                Health::Down(why) => ("down", why),
            };
            apps.push(pages::AppRow {
                app: app.to_string(),
                health,
                readings: Vec::new(),
                actions: Vec::new(),
            });
        }
        let row = |apps: &mut Vec<pages::AppRow>, app: &str| -> usize {
            match apps.iter().position(|a| a.app == app) {
                Some(i) => i,
                None => {
                    apps.push(pages::AppRow {
                        app: app.to_string(),
                        health: ("ok", "no upstream check".into()),
                        readings: Vec::new(),
                        actions: Vec::new(),
                    });
                    apps.len() - 1
                }
            }
        };
        for (app, readings) in &self.readings {
            let i = row(&mut apps, app);
            for reading in readings().await {
                let labels: Vec<String> = reading
                    .labels
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                let name = if labels.is_empty() {
                    reading.name.to_string()
                } else {
                    format!("{}{{{}}}", reading.name, labels.join(","))
                };
                apps[i]
                    .readings
                    .push((name, shown(reading.name, reading.value)));
            }
        }
        // The config is a row of its own: how its last change went, and the reload button.
        if let Some(status) = &self.config_status {
            let status = status();
            let generation = &status["generation"];
            let health = match status["status"].as_str() {
                Some("rejected") => (
                    "down",
                    format!(
                        "the last change was rejected (generation {generation} serves): {}",
                        status["error"].as_str().unwrap_or("")
                    ),
                ),
                other => (
                    "ok",
                    format!("generation {generation}, {}", other.unwrap_or("")),
                ),
            };
            let i = row(&mut apps, "config");
            apps[i].health = health;
        }
        for (app, action) in &self.actions {
            let i = row(&mut apps, app);
            apps[i].actions.push((action.name, action.label));
        }
        let since = (chrono::Utc::now() - chrono::Duration::hours(24))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let filter = trail::Filter {
            since,
            ..trail::Filter::default()
        };
        let events = trail::read(&self.config, &filter, 20_000).await;
        let paths: Vec<&str> = self.endpoints.iter().map(|e| e.path.as_str()).collect();
        let clients: Vec<_> = trail::client_stats(&events, &paths, chrono::Utc::now())
            .into_iter()
            .collect();
        let tables: Vec<_> = self.endpoints.iter().map(|e| e.endpoint.tools()).collect();
        let write_tools: Vec<&str> = tables
            .iter()
            .flat_map(|table| table.iter())
            .filter(|t| !t.spec().annotations.read_only)
            .map(|t| t.spec().name.as_str())
            .collect();
        let writes: Vec<_> = trail::write_outcomes(&events, &write_tools)
            .into_iter()
            .collect();
        let endpoints = {
            let mut rows = self.endpoint_rows.lock().unwrap_or_else(|p| p.into_inner());
            match &*rows {
                Some((counted, made))
                    if counted.len() == tables.len()
                        && counted.iter().zip(&tables).all(|(a, b)| Arc::ptr_eq(a, b)) =>
                {
                    made.clone()
                }
                _ => {
                    let made = Arc::new(self.endpoint_rows(&tables));
                    *rows = Some((tables.clone(), made.clone()));
                    made
                }
            }
        };
        respond(
            StatusCode::OK,
            pages::overview(
                &self.sessions.csrf(operator),
                message,
                &apps,
                &endpoints,
                &clients,
                &writes,
            ),
        )
    }

    fn endpoint_rows(&self, tables: &[Arc<crate::endpoint::ToolTable>]) -> Vec<pages::EndpointRow> {
        let encoder = tiktoken_rs::o200k_base().ok();
        self.endpoints
            .iter()
            .zip(tables)
            .map(|(e, table)| {
                let listings = crate::transport::handler::listings(table);
                let listed = serde_json::json!({ "tools": &*listings }).to_string();
                pages::EndpointRow {
                    path: e.path.clone(),
                    auth: e.auth.clone(),
                    session: e.session.clone(),
                    tools: listings.iter().map(|t| t.name.to_string()).collect(),
                    list_tokens: encoder
                        .as_ref()
                        .map(|bpe| bpe.encode_ordinary(&listed).len())
                        .unwrap_or(0),
                }
            })
            .collect()
    }

    pub(super) async fn oauth_page(
        &self,
        operator: &Operator,
        message: Option<(&str, bool)>,
    ) -> Response {
        let csrf = self.sessions.csrf(operator);
        let Some(server) = &self.oauth else {
            return respond(StatusCode::OK, pages::oauth(&csrf, message, None, &[]));
        };
        let families: Vec<pages::FamilyRow> = match server.store.live_families(500).await {
            Ok(families) => families
                .into_iter()
                .map(|f| pages::FamilyRow {
                    family: f.family,
                    client_id: f.grant.client_id,
                    user: f.grant.user.unwrap_or_default(),
                    scope: f.grant.scope,
                    expires: minute(f.expires_at),
                })
                .collect(),
            Err(error) => {
                tracing::error!(%error, "ops: cannot list token families");
                Vec::new()
            }
        };
        let rows: Vec<pages::ClientRow> = match server.store.clients().await {
            Ok(clients) => clients
                .into_iter()
                .map(|(client, last_used)| pages::ClientRow {
                    redirect_hosts: {
                        let mut hosts: Vec<String> = client
                            .redirect_uris
                            .iter()
                            .filter_map(|u| reqwest_host(u))
                            .collect();
                        hosts.dedup();
                        hosts
                    },
                    client_id: client.client_id,
                    name: client.name,
                    source: match client.source.as_str() {
                        "dcr" => "itself (DCR)".into(),
                        other => other.to_string(),
                    },
                    last_used: if last_used > 0 {
                        minute(last_used)
                    } else {
                        "never".into()
                    },
                })
                .collect(),
            Err(error) => {
                tracing::error!(%error, "ops: cannot list OAuth clients");
                let message = Some(("The OAuth store does not answer.", true));
                return respond(
                    StatusCode::OK,
                    pages::oauth(&csrf, message, Some(&[]), &families),
                );
            }
        };
        respond(
            StatusCode::OK,
            pages::oauth(&csrf, message, Some(&rows), &families),
        )
    }
}

/// A reading as a person reads it: times as dates, ages in minutes.
fn shown(name: &str, value: f64) -> String {
    if name.ends_with("_timestamp_seconds") {
        if value <= 0.0 {
            return "never".into();
        }
        return minute(value as i64);
    }
    if name.ends_with("_seconds") {
        return format!("{:.0} min", value / 60.0);
    }
    format!("{value}")
}

/// A Unix time as the console shows every time: to the minute, in UTC.
fn minute(seconds: i64) -> String {
    chrono::DateTime::from_timestamp(seconds, 0)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}

fn reqwest_host(uri: &str) -> Option<String> {
    let rest = uri.split_once("://")?.1;
    let host = rest.split(['/', '?', '#']).next()?;
    Some(host.rsplit('@').next()?.to_string())
}

pub(super) async fn overview(
    State(console): State<Arc<Console>>,
    signed_in: Option<SignedIn>,
) -> Response {
    match signed_in {
        Some(SignedIn(operator)) => console.overview(&operator, None).await,
        None => respond(StatusCode::OK, pages::login(None)),
    }
}

pub(super) async fn audit(
    State(console): State<Arc<Console>>,
    SignedIn(operator): SignedIn,
    Query(filter): Query<trail::Filter>,
) -> Response {
    let csrf = console.sessions.csrf(&operator);
    if let Some(problem) = filter.problem() {
        return respond(
            StatusCode::BAD_REQUEST,
            pages::audit(&csrf, &filter, Some(&problem), &[]),
        );
    }
    let events = trail::read(&console.config, &filter, 200).await;
    respond(StatusCode::OK, pages::audit(&csrf, &filter, None, &events))
}

pub(super) async fn oauth(
    State(console): State<Arc<Console>>,
    SignedIn(operator): SignedIn,
) -> Response {
    console.oauth_page(&operator, None).await
}
