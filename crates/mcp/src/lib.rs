//! The kind `mcp`: an MCP server a business already runs, behind concierge's door.
//!
//! An instance names one upstream server — a program started over stdio (`command`) or a
//! Streamable HTTP `url` — and the tools of it that exist here (`tools`, an allowlist). Each
//! such tool is served with the upstream's own schemas (arguments are checked against them
//! before anything is sent; results are handed back unchanged: content blocks, structured
//! content, `isError`) and with everything the platform does for any tool: scopes, limits,
//! audit, write safety (an idempotency key and a confirmation in front of a tool the config
//! marks `write`), arguments the model never sees (`fixed`).
//!
//! - `settings.rs`: the section, and what is wrong with it before anything starts
//! - `connection.rs`: the upstream kept connected, its tool list, its child process
//! - `direct.rs`: a call to a 2026-07-28 server over HTTP, sent and read in the caller's task
//! - `legacy_sse.rs`: the legacy HTTP+SSE transport (2024-11-05), which rmcp no longer has
//! - `lines.rs`: a child's stdout with a bound on one line
//! - `reach.rs`: a request that did not reach an HTTP server (no connection, a redirect)
//! - `listing.rs`: what of a server's tool listing is published (its texts bounded)
//! - `client.rs`: what concierge declares as a client, and what it hears unasked
//! - `tool.rs`: one tool as served here, and its calls
//! - `probe.rs`: `concierge mcp-probe`, a server looked at as an instance would reach it
//!
//! The upstream never sees the caller's token: it sees concierge's own credentials (`headers`,
//! `env`). Its tools' list is what `serve` follows: a new list (the server restarted, said its
//! tools changed, or went down with `when_down = "hide"`) is mounted in place of the last, and
//! clients with a session are told.

mod client;
mod connection;
mod direct;
mod legacy_sse;
mod lines;
mod listing;
pub mod probe;
mod reach;
pub mod settings;
mod tool;

use std::collections::BTreeMap;
use std::sync::Arc;

use concierge_core::{Health, LiveReport, Tool, ToolList, ToolSet};
use rmcp::model::Tool as Listed;

pub use connection::MAX_LISTED_TOOLS;
use connection::{Link, Upstream};
pub use settings::McpSettings;
use settings::{Start, WhenDown};
use tool::FederatedTool;

/// The tool an instance with `settings` serves for the upstream's `listing` of `name`, made as
/// at run time but without connecting (its calls answer that the server is not reachable): what
/// the fuzz target for upstream answers mounts.
pub fn tool_of_listing(settings: McpSettings, name: &str, listing: &Listed) -> Arc<dyn Tool> {
    Arc::new(FederatedTool::new(
        name,
        Some(listing),
        &Upstream::new(settings),
    ))
}

/// An instance's section to its tool set: stand-ins for the allowlisted tools (what `check`
/// sees, and what is served until the upstream's list is read), and the updates `serve` starts.
pub fn build(settings: McpSettings) -> Result<ToolSet, String> {
    let problems = settings.problems();
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let messages = concierge_core::messages::for_language(settings.language.as_deref())?;
    let optional = settings.optional;
    let upstream = Upstream::new(settings);
    let stand_ins = tools_of(&upstream, &BTreeMap::new(), false);
    let health = upstream.clone();
    let live = upstream.clone();
    let updates = upstream.clone();
    let stop = upstream.clone();
    Ok(ToolSet::new("mcp", messages, stand_ins)
        .optional(optional)
        .with_stop(Arc::new(move || stop.retire()))
        .with_health(Arc::new(move || {
            let upstream = health.clone();
            Box::pin(async move { health_of(&upstream.probe().await) })
        }))
        .with_live_check(Arc::new(move || {
            let upstream = live.clone();
            Box::pin(async move { live_check(&upstream).await })
        }))
        .with_updates(Arc::new(move || {
            let upstream = updates.clone();
            Box::pin(async move { follow(upstream).await })
        })))
}

fn health_of(link: &Link) -> Health {
    match link {
        Link::Up { .. } => Health::Ok,
        Link::Starting => Health::Starting("connecting to the MCP server".into()),
        Link::Down { .. } => Health::Down("the MCP server is not reachable".into()),
    }
}

/// `check --live`: the upstream started, and every allowlisted tool found in its list.
async fn live_check(upstream: &Arc<Upstream>) -> LiveReport {
    upstream.start();
    let mut report = LiveReport::default();
    match upstream.settled(upstream.settings.start_timeout).await {
        Link::Up { tools, .. } => {
            for wanted in &upstream.settings.tools {
                match tools.get(wanted) {
                    None => report.problems.push(format!(
                        "tool `{wanted}` is in `tools` but the MCP server does not offer it"
                    )),
                    Some(listing) => report.notes.extend(listing::cut(
                        wanted,
                        listing,
                        upstream.settings.overrides.get(wanted),
                    )),
                }
            }
        }
        Link::Starting => report
            .problems
            .push("the MCP server did not answer within `start_timeout`".into()),
        Link::Down { reason } => report
            .problems
            .push(format!("the MCP server is not reachable: {reason}")),
    }
    report
}

/// The tools served now: each allowlisted tool from the upstream's listing; while the server
/// is not up, from the last listing seen (or a stand-in), or none with `when_down = "hide"`.
fn tools_of(
    upstream: &Arc<Upstream>,
    listings: &BTreeMap<String, Listed>,
    up: bool,
) -> Vec<Arc<dyn Tool>> {
    if !up && upstream.settings.when_down == WhenDown::Hide {
        return Vec::new();
    }
    upstream
        .settings
        .tools
        .iter()
        .filter_map(|name| match listings.get(name) {
            Some(listing) => Some(FederatedTool::new(name, Some(listing), upstream)),
            None if up => None,
            None => Some(FederatedTool::new(name, None, upstream)),
        })
        .map(|tool| Arc::new(tool) as Arc<dyn Tool>)
        .collect()
}

/// Starts the upstream (unless `lazy`), waits for its first list within `start_timeout`, and
/// from then on sends a new tool list whenever what is served changes.
async fn follow(upstream: Arc<Upstream>) -> ToolList {
    if upstream.settings.start == Start::Serve {
        upstream.start();
        upstream.settled(upstream.settings.start_timeout).await;
    }
    let mut link = upstream.link.subscribe();
    let mut last = BTreeMap::new();
    let mut shown = served(&upstream, &link.borrow_and_update(), &mut last);
    let (sender, receiver) = tokio::sync::watch::channel(tools_of(&upstream, &last, shown.1));
    tokio::spawn(async move {
        let retired = upstream.clone();
        let following = async {
            while link.changed().await.is_ok() {
                let now = served(&upstream, &link.borrow_and_update(), &mut last);
                if now != shown {
                    shown = now;
                    if sender.send(tools_of(&upstream, &last, shown.1)).is_err() {
                        return;
                    }
                }
            }
        };
        tokio::select! {
            _ = retired.retired() => {}
            _ = following => {}
        }
    });
    receiver
}

/// What the link means for the list, to tell one list from the next (the listings to serve
/// from, kept in `last` across an outage; up, down or hidden), and whether the server is up.
fn served(upstream: &Upstream, link: &Link, last: &mut BTreeMap<String, Listed>) -> (String, bool) {
    let up = matches!(link, Link::Up { .. });
    if let Link::Up { tools, .. } = link {
        *last = (**tools).clone();
    }
    let state = match (up, upstream.settings.when_down) {
        (true, _) => "up",
        (false, WhenDown::Hide) => return ("hidden".into(), false),
        (false, WhenDown::Error) => "down",
    };
    let listed = serde_json::to_string(&*last).unwrap_or_default();
    (format!("{state} {listed}"), up)
}

/// The kind `mcp`: another MCP server behind the door.
pub struct Mcp;

impl concierge_core::Kind for Mcp {
    const NAME: &'static str = "mcp";
    type Settings = McpSettings;

    async fn build(settings: McpSettings) -> Result<concierge_core::ToolSet, String> {
        build(settings)
    }
}
