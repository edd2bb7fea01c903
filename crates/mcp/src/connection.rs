//! One upstream server, kept connected: started (a child process in a process group of its own,
//! a Streamable HTTP session, or a legacy HTTP+SSE stream), its tool list read, restarted with backoff when it goes, and
//! its state published for the tools and `/health`. A child process, its group and its stderr
//! are [`child`]'s.
//!
//! The upstream is a stranger: every message it sends is bounded by the transport (a line, an
//! event, a JSON body), its tool list by [`MAX_LISTED_TOOLS`] and [`MAX_LIST_PAGES`], its stderr
//! by a line length and a rate, and every wait for it by a timeout.

mod child;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::{PaginatedRequestParams, Tool as Listed};
use rmcp::service::ClientServiceExt;
use rmcp::service::{Peer, RunningService};
use tokio::sync::watch;

use crate::client::{Client, ProgressRoutes};
use crate::direct::Direct;
use crate::legacy_sse::LegacySse;
use crate::reach::{Unreached, no_redirects};
use crate::settings::{McpSettings, Protocol};
use concierge_core::ClientCredentials;
use rmcp::transport::auth::{AuthClient, AuthorizationManager, ClientCredentialsConfig};

/// Tools read from an upstream's list at most; the rest are ignored (and said so).
pub const MAX_LISTED_TOOLS: usize = 10_000;
/// Pages of a tool list read at most: an upstream that pages without end is cut off.
const MAX_LIST_PAGES: usize = 100;
/// Connections to an HTTP upstream kept open for the next calls, at most.
const IDLE_CONNECTIONS: usize = 32;
/// The longest wait between two attempts to reach a server that is down.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A connection that lasted this long starts the backoff again from its first step.
const STEADY: Duration = Duration::from_secs(60);

/// How long `/health`'s ping to an HTTP server waits (within the 3 s a health check has).
const PING_TIMEOUT: Duration = Duration::from_secs(2);

/// A task that ends when its handle is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Where the upstream is now.
#[derive(Clone)]
pub enum Link {
    /// Not tried yet (a `lazy` upstream before its first call), or trying for the first time.
    Starting,
    Up {
        peer: Peer<RoleClient>,
        /// Where calls go without the rmcp connection: for a 2026-07-28 server over plain
        /// Streamable HTTP only.
        direct: Option<Arc<Direct>>,
        /// The upstream's tools that are on the allowlist, by the upstream's name.
        tools: Arc<BTreeMap<String, Listed>>,
    },
    /// The reason is for the operator (`/health`, the log): it names no address or secret.
    Down { reason: String },
}

/// One upstream and what is known of it.
pub struct Upstream {
    pub settings: Arc<McpSettings>,
    pub label: String,
    pub link: watch::Sender<Link>,
    pub progress: ProgressRoutes,
    tools_changed: Arc<tokio::sync::Notify>,
    started: std::sync::atomic::AtomicBool,
    /// Set when a reload removed or replaced the instance: the connection ends, a child process
    /// with it, and nothing connects again.
    pub retired: watch::Sender<bool>,
}

impl Upstream {
    pub fn new(settings: McpSettings) -> Arc<Self> {
        Arc::new(Self {
            label: settings.label(),
            settings: Arc::new(settings),
            link: watch::channel(Link::Starting).0,
            progress: ProgressRoutes::default(),
            tools_changed: Arc::default(),
            started: std::sync::atomic::AtomicBool::new(false),
            retired: watch::channel(false).0,
        })
    }

    /// Ends the connection for good (a reload removed or replaced the instance).
    pub fn retire(&self) {
        self.retired.send_replace(true);
        self.link.send_replace(Link::Down {
            reason: "removed from the config".into(),
        });
    }

    /// Resolves once the instance is retired.
    pub async fn retired(&self) {
        let mut retired = self.retired.subscribe();
        let _ = retired.wait_for(|r| *r).await;
    }

    /// Starts keeping the upstream connected, once; later calls do nothing.
    pub fn start(self: &Arc<Self>) {
        if !self.started.swap(true, std::sync::atomic::Ordering::SeqCst) {
            tokio::spawn(self.clone().keep_connected());
        }
    }

    /// The link once the first attempt is over, or `Starting` after `wait`.
    pub async fn settled(&self, wait: Duration) -> Link {
        let mut link = self.link.subscribe();
        let settled = link.wait_for(|l| !matches!(l, Link::Starting));
        match tokio::time::timeout(wait, settled).await {
            Ok(Ok(link)) => link.clone(),
            _ => self.link.borrow().clone(),
        }
    }

    /// A request over `peer`'s connection could not reach the server: the upstream is down
    /// (`/health` says so at once, calls answer so without trying) and the connection is made
    /// again with backoff. Nothing changes when `peer` is of a connection already replaced.
    pub fn lost(&self, peer: &Peer<RoleClient>, unreached: Unreached) {
        let marked = self.link.send_if_modified(|link| match link {
            Link::Up { peer: up, .. } if same_connection(up, peer) => {
                *link = Link::Down {
                    reason: unreached.reason().into(),
                };
                true
            }
            _ => false,
        });
        if marked {
            tracing::warn!(upstream = %self.label, reason = unreached.reason(), "MCP server lost");
        }
    }

    /// What `/health` reads: the link, after a ping to an HTTP server that is up — a server
    /// that went away leaves no connection behind to notice it, so one is tried (at most once
    /// per `health_cache`). Only a connection that cannot be made counts; any answer is one.
    pub async fn probe(&self) -> Link {
        let link = self.link.borrow().clone();
        if let Link::Up { peer, .. } = &link
            && self.settings.url.is_some()
        {
            let ping = rmcp::model::ClientRequest::PingRequest(Default::default());
            let answer = tokio::time::timeout(PING_TIMEOUT, peer.send_request(ping)).await;
            if let Ok(Err(rmcp::service::ServiceError::TransportSend(error))) = answer
                && Unreached::of(&error) == Some(Unreached::NotConnected)
            {
                self.lost(peer, Unreached::NotConnected);
                return self.link.borrow().clone();
            }
        }
        link
    }

    /// Connects, reads the tools, serves until the connection ends; again and again, waiting
    /// longer after each failure (1 s, doubling, at most 30 s).
    async fn keep_connected(self: Arc<Self>) {
        let this = self.clone();
        tokio::select! {
            _ = this.retired() => {}
            _ = self.connected_again_and_again() => {}
        }
    }

    async fn connected_again_and_again(self: Arc<Self>) {
        let mut backoff = Duration::from_secs(1);
        loop {
            let began = Instant::now();
            match self.connect().await {
                Ok(service) => {
                    tracing::info!(upstream = %self.label, "MCP server connected");
                    let peer = service.peer().clone();
                    let direct = match &*self.link.borrow() {
                        Link::Up { direct, .. } => direct.clone(),
                        _ => None,
                    };
                    // Ends with the connection, also when the instance is retired meanwhile.
                    let refresh = AbortOnDrop(tokio::spawn(self.clone().follow_list(peer, direct)));
                    // The connection ends, or a call found the server gone ([`Upstream::lost`]:
                    // an HTTP connection outlives its server) and it is ended here.
                    let mut link = self.link.subscribe();
                    let ended = tokio::select! {
                        ended = service.waiting() => Some(ended),
                        _ = link.wait_for(|l| matches!(l, Link::Down { .. })) => None,
                    };
                    drop(refresh);
                    if let Some(ended) = ended {
                        let reason = match ended {
                            Ok(reason) => format!("the server went away ({reason:?})"),
                            Err(_) => "the server went away".to_string(),
                        };
                        tracing::warn!(upstream = %self.label, %reason, "MCP server lost");
                        self.link.send_replace(Link::Down { reason });
                    }
                }
                Err(reason) => {
                    tracing::warn!(upstream = %self.label, %reason, "MCP server not reachable");
                    self.link.send_replace(Link::Down { reason });
                }
            }
            if began.elapsed() >= STEADY {
                backoff = Duration::from_secs(1);
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// Connects once, for a one-off look (`concierge mcp-probe`): the link is up while the
    /// returned service lives, and nothing connects again.
    pub async fn connect_once(&self) -> Result<RunningService<RoleClient, Client>, String> {
        self.started
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.connect().await
    }

    /// One connection: the transport, the MCP handshake and the first tool list, within the
    /// start timeout.
    async fn connect(&self) -> Result<RunningService<RoleClient, Client>, String> {
        let client = Client {
            progress: self.progress.clone(),
            tools_changed: self.tools_changed.clone(),
        };
        let wait = self.settings.start_timeout;
        let mut direct = None;
        let service = match (&self.settings.command, &self.settings.url) {
            (Some(command), _) => {
                let transport = child::spawn(
                    command,
                    &self.settings,
                    &self.label,
                    message_bound(&self.settings),
                )?;
                tokio::time::timeout(
                    wait,
                    client.serve_with_lifecycle(transport, lifecycle(self.settings.protocol)),
                )
                .await
            }
            (None, Some(url)) if self.settings.legacy_sse() => {
                let transport = tokio::time::timeout(wait, self.legacy_sse(url))
                    .await
                    .map_err(|_| format!("no event stream within {wait:?}"))??;
                // A server that speaks only 2024-11-05's transport knows nothing of discovery.
                tokio::time::timeout(
                    wait,
                    client.serve_with_lifecycle(
                        transport,
                        rmcp::service::ClientLifecycleMode::Initialize,
                    ),
                )
                .await
            }
            (None, Some(url)) => match &self.settings.oauth {
                None => {
                    // One pool for both ways a call goes.
                    let http = self.http_client()?;
                    let transport = self.http(url, http.clone())?;
                    let service = tokio::time::timeout(
                        wait,
                        client.serve_with_lifecycle(transport, lifecycle(self.settings.protocol)),
                    )
                    .await;
                    if let Ok(Ok(service)) = &service
                        && let Some(info) = service.peer().peer_info()
                    {
                        direct = Direct::for_version(
                            http,
                            url,
                            self.headers()?,
                            &info.protocol_version,
                            message_bound(&self.settings),
                        )
                        .map(Arc::new);
                    }
                    service
                }
                Some(credentials) => {
                    let authorized = tokio::time::timeout(wait, authorize(url, credentials))
                        .await
                        .map_err(|_| format!("no access token within {wait:?}"))??;
                    let authorized = AuthClient::new(self.http_client()?, authorized);
                    let transport = self.http(url, authorized)?;
                    tokio::time::timeout(
                        wait,
                        client.serve_with_lifecycle(transport, lifecycle(self.settings.protocol)),
                    )
                    .await
                }
            },
            (None, None) => return Err("no command and no url".into()),
        };
        let service = match service {
            Ok(Ok(service)) => service,
            // Not reached: said without the address the transport's error names.
            Ok(Err(error)) => match Unreached::of_handshake(&error) {
                Some(unreached) => return Err(unreached.reason().into()),
                None => return Err(format!("the MCP handshake failed: {error}")),
            },
            Err(_) => return Err(format!("no answer to the handshake within {wait:?}")),
        };
        let tools = tokio::time::timeout(wait, self.list(service.peer()))
            .await
            .map_err(|_| format!("no tool list within {wait:?}"))??;
        self.publish(service.peer().clone(), direct, tools);
        Ok(service)
    }

    /// Reads the list again whenever the upstream says it changed.
    async fn follow_list(self: Arc<Self>, peer: Peer<RoleClient>, direct: Option<Arc<Direct>>) {
        loop {
            self.tools_changed.notified().await;
            match tokio::time::timeout(self.settings.start_timeout, self.list(&peer)).await {
                Ok(Ok(tools)) => {
                    tracing::info!(upstream = %self.label, "MCP server's tools changed");
                    self.publish(peer.clone(), direct.clone(), tools);
                }
                Ok(Err(reason)) => {
                    tracing::warn!(upstream = %self.label, %reason, "tool list not read again");
                }
                Err(_) => {
                    tracing::warn!(upstream = %self.label, "no answer to tools/list; the last list stays");
                }
            }
        }
    }

    fn publish(
        &self,
        peer: Peer<RoleClient>,
        direct: Option<Arc<Direct>>,
        tools: BTreeMap<String, Listed>,
    ) {
        for wanted in &self.settings.tools {
            match tools.get(wanted) {
                None => {
                    tracing::error!(upstream = %self.label, tool = %wanted, "a listed tool is not offered by the MCP server");
                }
                Some(listing) => {
                    let edit = self.settings.overrides.get(wanted);
                    for cut in crate::listing::cut(wanted, listing, edit) {
                        tracing::warn!(upstream = %self.label, "{cut}");
                    }
                }
            }
        }
        self.link.send_replace(Link::Up {
            peer,
            direct,
            tools: Arc::new(tools),
        });
    }

    /// The upstream's tools on the allowlist, page by page, within the bounds.
    async fn list(&self, peer: &Peer<RoleClient>) -> Result<BTreeMap<String, Listed>, String> {
        let mut kept = BTreeMap::new();
        let mut cursor = None;
        let mut seen = 0usize;
        for _ in 0..MAX_LIST_PAGES {
            let params =
                cursor.map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
            let page = peer
                .list_tools(params)
                .await
                .map_err(|error| format!("tools/list failed: {error}"))?;
            for tool in page.tools {
                seen += 1;
                if seen > MAX_LISTED_TOOLS {
                    tracing::warn!(upstream = %self.label, "the MCP server lists more than {MAX_LISTED_TOOLS} tools; the rest are ignored");
                    return Ok(kept);
                }
                // An empty allowlist is `concierge mcp-probe`'s: it shows every tool.
                if self.settings.tools.is_empty()
                    || self.settings.tools.iter().any(|t| **t == *tool.name)
                {
                    kept.insert(tool.name.to_string(), tool);
                }
            }
            match page.next_cursor {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => return Ok(kept),
            }
        }
        tracing::warn!(upstream = %self.label, "the MCP server's tool list has more than {MAX_LIST_PAGES} pages; the rest are ignored");
        Ok(kept)
    }

    fn http_client(&self) -> Result<reqwest::Client, String> {
        reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            // A burst of calls opens as many connections; afterwards only this many wait.
            .pool_max_idle_per_host(IDLE_CONNECTIONS)
            .redirect(no_redirects(self.label.clone()))
            .build()
            .map_err(|error| format!("cannot make an HTTP client: {error}"))
    }

    /// The config's `headers`, as sent.
    fn headers(&self) -> Result<http::HeaderMap, String> {
        let mut headers = http::HeaderMap::new();
        for (name, value) in &self.settings.headers {
            let name = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("`{name}` is not a header name"))?;
            let value = http::HeaderValue::from_str(value)
                .map_err(|_| format!("the value of header `{name}` is not a header value"))?;
            headers.insert(name, value);
        }
        Ok(headers)
    }

    /// The legacy HTTP+SSE transport with the config's headers, and behind OAuth an access
    /// token got with concierge's client credentials (a token that expires ends the
    /// connection; the next one asks anew).
    async fn legacy_sse(&self, url: &str) -> Result<LegacySse, String> {
        let mut headers = self.headers()?;
        if let Some(credentials) = &self.settings.oauth {
            let token = authorize(url, credentials)
                .await?
                .get_access_token()
                .await
                .map_err(|error| format!("OAuth at the MCP server: {error}"))?;
            let bearer = http::HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| "the access token is not a header value".to_string())?;
            headers.insert(http::header::AUTHORIZATION, bearer);
        }
        LegacySse::connect(
            self.http_client()?,
            url,
            headers,
            message_bound(&self.settings),
        )
        .await
    }

    /// The Streamable HTTP transport over `client` (plain, or one that adds an access token),
    /// with the config's headers and the message bound.
    fn http<C>(
        &self,
        url: &str,
        client: C,
    ) -> Result<rmcp::transport::StreamableHttpClientTransport<C>, String>
    where
        C: rmcp::transport::streamable_http_client::StreamableHttpClient + Send + 'static,
    {
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let headers = self
            .headers()?
            .into_iter()
            .filter_map(|(name, value)| Some((name?, value)))
            .collect();
        let bound = message_bound(&self.settings);
        let config = StreamableHttpClientTransportConfig::with_uri(url.to_string())
            .custom_headers(headers)
            .max_sse_event_size(bound)
            .max_json_response_size(bound)
            .reinit_on_expired_session(true);
        Ok(rmcp::transport::StreamableHttpClientTransport::with_client(
            client, config,
        ))
    }
}

/// Whether two peers are of the same connection: each connection's handshake stores the
/// server's info once, shared by every clone of its peer.
fn same_connection(a: &Peer<RoleClient>, b: &Peer<RoleClient>) -> bool {
    match (a.peer_info(), b.peer_info()) {
        (Some(a), Some(b)) => Arc::ptr_eq(&a, &b),
        _ => false,
    }
}

/// An access token for concierge itself at the upstream's authorization server: its metadata
/// found from the MCP URL (protected resource metadata, RFC 9728), then the client credentials
/// grant for that resource. A token that expires ends the connection; the next one asks anew.
async fn authorize(
    url: &str,
    credentials: &ClientCredentials,
) -> Result<AuthorizationManager, String> {
    let refused = |error: rmcp::transport::AuthError| format!("OAuth at the MCP server: {error}");
    let mut manager = AuthorizationManager::new_allowing_private_addresses(url)
        .await
        .map_err(refused)?;
    let resolution = manager.resolve_metadata().await.map_err(refused)?;
    manager.set_metadata(resolution.metadata);
    let config = ClientCredentialsConfig::ClientSecret {
        client_id: credentials.client_id.clone(),
        client_secret: credentials.client_secret.clone(),
        scopes: credentials.scopes.clone(),
        resource: Some(url.to_string()),
    };
    manager
        .validate_client_credentials_metadata(&config)
        .map_err(refused)?;
    manager
        .configure_client_credentials(&config)
        .map_err(refused)?;
    manager
        .exchange_client_credentials(&config)
        .await
        .map_err(refused)?;
    Ok(manager)
}

/// The handshake of the configured era. `auto` speaks both: `server/discover` first
/// (2026-07-28, no session), then `initialize` at 2025-11-25 for a server that does not know
/// discovery — what the MCP spec asks of a client that speaks both.
fn lifecycle(protocol: Protocol) -> rmcp::service::ClientLifecycleMode {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::ClientLifecycleMode;
    match protocol {
        Protocol::Auto => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        },
        Protocol::Discover => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        Protocol::Initialize => ClientLifecycleMode::Initialize,
    }
}

/// The largest message read from the upstream (a line over stdio, a body or an event over
/// HTTP): room for the largest result it may answer and for a long tool list (ten thousand
/// tools are a few megabytes), no more. A larger one ends the connection.
fn message_bound(settings: &McpSettings) -> usize {
    settings.max_result_bytes.saturating_mul(2).max(16 << 20)
}
