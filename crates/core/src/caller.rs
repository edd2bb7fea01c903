/// Who is calling a tool, as the platform established it.
///
/// `client` is the system (the name from a token list, an OAuth client id, `stdio`); `user` is set
/// only when an authorization server vouches for a person. Apps may use both for tenancy, never
/// for authentication — that already happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub client: String,
    pub user: Option<String>,
    pub scopes: Vec<String>,
    /// The access token's id (OAuth), for limits per token; never the token itself.
    pub token: Option<String>,
    /// The signed-in user's role as the authorization server vouched for it (Mappy's `MAIN_USER`,
    /// say); an app passes it to a backend that enforces tenancy, never decides access on it alone.
    pub role: Option<String>,
    /// The access token's claims as its authorization server signed (or introspected) them:
    /// what a deployment's own claims say (a tenant, an organisation) for an app to fill
    /// parameters from (`bind = "claim.<name>"`). `None` without OAuth.
    pub claims: Option<std::sync::Arc<serde_json::Map<String, serde_json::Value>>>,
}

impl Caller {
    /// A caller known only by its client name (static tokens, stdio, loopback without auth).
    pub fn client(name: impl Into<String>) -> Self {
        Self {
            client: name.into(),
            user: None,
            scopes: Vec::new(),
            token: None,
            role: None,
            claims: None,
        }
    }

    /// One claim of the caller's access token (see [`Caller::claims`]).
    pub fn claim(&self, name: &str) -> Option<&serde_json::Value> {
        self.claims.as_ref()?.get(name)
    }

    /// Who this is, as one key: the client, and the signed-in user when there is one (one OAuth
    /// client — Claude Code's metadata document, say — serves many people). Sessions and confirm
    /// tokens are bound to it.
    pub fn principal(&self) -> String {
        match &self.user {
            Some(user) => format!("{}\u{0}{user}", self.client),
            None => self.client.clone(),
        }
    }
}

/// Everything a tool learns about the call it serves, besides its arguments.
///
/// `trace_id` is the platform's id for this call (it is in the audit line); a tool that needs a
/// trace id of its own (an upstream request, an envelope) should reuse it, so one id finds the call
/// everywhere. `note` adds fields to the call's audit line — an upstream request id, say — and must
/// never be given secrets or anything that identifies the person chatting.
#[derive(Debug, Clone)]
pub struct CallContext {
    pub caller: Caller,
    pub trace_id: String,
    /// The caller's `idempotency_key` for a write: pass it on to a backend that dedupes too, so a
    /// resend after a timeout cannot write twice there either.
    pub idempotency_key: Option<String>,
    /// For a write the user confirmed: the digest ([`preview_digest`]) of the preview they saw,
    /// the tool's own dry-run answer. A tool that can tell inside its own transaction whether
    /// the change is still the one previewed (a SQL write's rows) refuses it as stale when not.
    pub confirmed_preview: Option<String>,
    /// Where the tool may report progress, when the client asked for it (a `progressToken`)
    /// and can hear it (a stream is open); `None` otherwise.
    pub progress: Option<Progress>,
    /// Who is calling, as a short-lived JWT the platform signs for an audience a tool names (an
    /// upstream MCP server with `forward_identity`); `None` where the platform signs none.
    pub identity: Option<IdentityAssertion>,
    notes: std::sync::Arc<std::sync::Mutex<serde_json::Map<String, serde_json::Value>>>,
}

/// One progress report to the client: how far (`progress`, rising), of how much (`total`, when
/// known), and a short message. The platform sends it as `notifications/progress` with the
/// client's own token; a tool knows nothing of tokens or streams.
#[derive(Clone)]
pub struct Progress(std::sync::Arc<ReportProgress>);

/// What [`Progress`] calls with each report: progress, total, message.
type ReportProgress = dyn Fn(f64, Option<f64>, Option<String>) + Send + Sync;

impl Progress {
    pub fn new(report: impl Fn(f64, Option<f64>, Option<String>) + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(report))
    }

    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        (self.0)(progress, total, message)
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

/// Signs who is calling for one audience: the platform's key, the caller's `sub`, `client_id`
/// and `scope`, a minute's life. A tool sends the token on; it never sees a key.
#[derive(Clone)]
pub struct IdentityAssertion(std::sync::Arc<SignIdentity>);

type SignIdentity = dyn Fn(&str) -> String + Send + Sync;

impl IdentityAssertion {
    pub fn new(sign: impl Fn(&str) -> String + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(sign))
    }

    /// The JWT for `audience`.
    pub fn for_audience(&self, audience: &str) -> String {
        (self.0)(audience)
    }
}

impl std::fmt::Debug for IdentityAssertion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IdentityAssertion")
    }
}

/// The digest of a write's preview, as the confirmation carries it: the same answer from the
/// same tool has the same digest (a tool builds its answer in one order).
pub fn preview_digest(preview: &serde_json::Value) -> String {
    use sha2::{Digest, Sha256};
    let text = serde_json::to_vec(preview).unwrap_or_default();
    // Sixteen hex digits: the digest is covered by the confirmation's own MAC or seal, so it
    // only has to tell two previews of one tool apart.
    hex::encode(&Sha256::digest(&text)[..8])
}

impl CallContext {
    pub fn new(caller: Caller, trace_id: impl Into<String>) -> Self {
        Self {
            caller,
            trace_id: trace_id.into(),
            idempotency_key: None,
            confirmed_preview: None,
            progress: None,
            identity: None,
            notes: Default::default(),
        }
    }

    /// Adds `key: value` to this call's audit line.
    pub fn note(&self, key: &str, value: impl Into<serde_json::Value>) {
        let mut notes = self.notes.lock().unwrap_or_else(|e| e.into_inner());
        notes.insert(key.to_string(), value.into());
    }

    /// The notes so far (read by the platform when it writes the audit line).
    pub fn notes(&self) -> serde_json::Map<String, serde_json::Value> {
        self.notes.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
