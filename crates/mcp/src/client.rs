//! concierge as the upstream's MCP client: what it declares (no roots, no sampling, no
//! elicitation — it acts for many people and asks none of them through the upstream) and
//! what it does with what the upstream tells it unasked (progress, a changed tool list).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use concierge_core::Progress;
use rmcp::ClientHandler;
use rmcp::RoleClient;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::NotificationContext;

/// How many calls under way may have their progress passed on; more calls run, without it.
const PROGRESS_ROUTES: usize = 4096;

/// The calls under way whose caller asked for progress, by the token concierge sent upstream.
#[derive(Default, Clone)]
pub struct ProgressRoutes(Arc<Mutex<HashMap<ProgressToken, Progress>>>);

impl ProgressRoutes {
    /// Routes the upstream's progress on `token` to `progress` until the returned guard drops.
    pub fn route(&self, token: ProgressToken, progress: Progress) -> Option<RouteGuard> {
        let mut routes = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if routes.len() >= PROGRESS_ROUTES {
            return None;
        }
        routes.insert(token.clone(), progress);
        Some(RouteGuard {
            routes: self.clone(),
            token,
        })
    }

    fn get(&self, token: &ProgressToken) -> Option<Progress> {
        let routes = self.0.lock().unwrap_or_else(|p| p.into_inner());
        routes.get(token).cloned()
    }
}

/// Ends a call's progress route when the call ends, however it ends.
pub struct RouteGuard {
    routes: ProgressRoutes,
    token: ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        let mut routes = self.routes.0.lock().unwrap_or_else(|p| p.into_inner());
        routes.remove(&self.token);
    }
}

/// What concierge declares it can do as a client: nothing the upstream could ask of it.
pub fn declared() -> ClientCapabilities {
    ClientCapabilities::default()
}

/// The client side of one connection.
#[derive(Clone)]
pub struct Client {
    pub progress: ProgressRoutes,
    /// Told when the upstream says its tool list changed.
    pub tools_changed: Arc<tokio::sync::Notify>,
}

/// The longest progress message passed on; an upstream's longer text is cut.
const PROGRESS_MESSAGE_CHARS: usize = 500;

/// An upstream's progress report handed to the caller within bounds: a report that is not a
/// finite number is dropped, a total that is not is left out, a long message is cut.
pub fn pass_on(progress: &Progress, done: f64, total: Option<f64>, message: Option<&str>) {
    if !done.is_finite() {
        return;
    }
    let message = message.map(|m| m.chars().take(PROGRESS_MESSAGE_CHARS).collect());
    progress.report(done, total.filter(|t| t.is_finite()), message);
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        // An `initialize` speaks the last revision that has one; discovery names its own.
        let mut config = ClientConfig::new(
            declared(),
            Implementation::new("concierge", env!("CARGO_PKG_VERSION")),
        );
        config.protocol_version = rmcp::model::ProtocolVersion::V_2025_11_25;
        config
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(progress) = self.progress.get(&params.progress_token) {
            pass_on(
                &progress,
                params.progress,
                params.total,
                params.message.as_deref(),
            );
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }
}
