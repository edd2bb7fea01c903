//! The guard in front of every HTTP endpoint: steps 1–7 of the pipeline (see [`crate::pipeline`])
//! in their order, then the transport — rmcp's Streamable HTTP service, the legacy SSE routes, or
//! for a stateless endpoint's plain `tools/call` the dispatcher itself (`direct_call.rs`).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::StatusCode;

use super::legacy_sse::LegacySessions;
use crate::endpoint::Endpoint;
use crate::pipeline::origin::BrowserRules;
use crate::pipeline::{
    Authenticator, Refusal, RequestRecord, Transport, authentication, body, framing, origin,
    refusal, scope, session,
};
use crate::sessions::{Opening, SessionTable};

const SESSION_HEADER: &str = "mcp-session-id";

/// What the pipeline in front of one endpoint needs. It lives as long as its path is served:
/// a reload swaps its [`Policy`] and the endpoint's settings in place ([`Guard::adopt`]), and
/// keeps its sessions.
pub struct Guard {
    pub endpoint: Arc<Endpoint>,
    policy: arc_swap::ArcSwap<Policy>,
    pub sessions: Arc<SessionTable>,
    /// The endpoint's legacy SSE sessions, when it serves that transport.
    pub legacy: Option<Arc<LegacySessions>>,
    /// Sessions are opened here (`session = "stateful"`): `initialize` is counted and capped.
    pub stateful: bool,
    /// The deployment's session ids: minted for their opener, readable on every instance.
    pub ids: Arc<crate::session_id::SessionIds>,
    /// A stateless tool endpoint: a plain `tools/call` is answered by the dispatcher without
    /// rmcp's per-request service (see `direct_call.rs`).
    pub answers_calls: bool,
    /// The Streamable HTTP sessions behind the guard, made when the endpoint is first mounted
    /// and mounted again by every reload that keeps the path (so its sessions survive).
    pub(crate) streams: std::sync::OnceLock<Arc<super::session_streams::SessionStreams>>,
    /// Ends the endpoint's sessions and streams: when the server stops, or a reload removes it.
    pub(crate) stop: std::sync::OnceLock<tokio_util::sync::CancellationToken>,
}

/// What a reload may change in front of an endpoint: who gets in, from which pages, with how
/// large a body.
pub struct Policy {
    pub auth: Authenticator,
    /// The `Host` and `Origin` rules of the deployment.
    pub browser: Arc<BrowserRules>,
    /// How large a body may be, and how long it may take to arrive.
    pub body: body::BodyLimits,
}

impl Guard {
    pub fn new(
        endpoint: Arc<Endpoint>,
        policy: Policy,
        sessions: Arc<SessionTable>,
        legacy: Option<Arc<LegacySessions>>,
        ids: Arc<crate::session_id::SessionIds>,
        stateful: bool,
        answers_calls: bool,
    ) -> Self {
        Self {
            endpoint,
            policy: arc_swap::ArcSwap::from_pointee(policy),
            sessions,
            legacy,
            stateful,
            ids,
            answers_calls,
            streams: std::sync::OnceLock::new(),
            stop: std::sync::OnceLock::new(),
        }
    }

    /// Who gets in now, from which pages, with how large a body.
    pub fn policy(&self) -> Arc<Policy> {
        self.policy.load_full()
    }

    /// Takes `newer`'s policy, settings and tools: the next request is judged by them.
    pub fn adopt(&self, newer: &Guard) {
        self.policy.store(newer.policy.load_full());
        self.endpoint.adopt(&newer.endpoint);
    }
}

/// axum middleware: steps 1–7, then the transport; the record goes with the request.
pub async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let legacy = guard
        .legacy
        .as_ref()
        .filter(|l| l.serves(request.uri().path()));
    let transport = if legacy.is_some() {
        Transport::LegacySse
    } else {
        Transport::StreamableHttp
    };
    let record =
        RequestRecord::arrive(&guard.endpoint.path, transport, guard.endpoint.audit_sink());
    let session = match legacy {
        Some(_) => super::legacy_sse::session_named(request.uri()),
        None => request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(String::from),
    };
    let headers = request.headers();
    if let Some(traceparent) = headers.get("traceparent").and_then(|v| v.to_str().ok()) {
        record.continue_trace(traceparent);
    }
    if let Some(version) = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
    {
        record.protocol(version);
    }
    if let Some(session) = &session {
        record.session(session);
    }
    let is_delete = request.method() == http::Method::DELETE;
    let Admitted {
        mut parts,
        body,
        opening,
        json,
        direct,
    } = match admit(
        &guard,
        request,
        &record,
        session.as_deref(),
        legacy.is_some(),
    )
    .await
    {
        Ok(admitted) => admitted,
        Err(refusal) => return refusal.answer(&record),
    };
    if let Some(call) = direct
        && let Some(caller) = parts.extensions.remove::<concierge_core::Caller>()
    {
        return super::direct_call::answer(&guard.endpoint, call, caller, &record).await;
    }
    // Kept (a reference count) for the rare answer below that needs to read it again.
    let json_body = json.then(|| body.clone());
    let request = Request::from_parts(parts, Body::from(body));
    // The session an `initialize` opens gets an id minted for its opener.
    let opener = opening
        .as_ref()
        .and_then(|_| request.extensions().get::<concierge_core::Caller>())
        .map(|caller| caller.principal());
    let mut response = match opener {
        Some(principal) => {
            crate::session_id::OPENER
                .scope(principal, next.run(request))
                .await
        }
        None => next.run(request).await,
    };
    // rmcp answers a JSON body it cannot read with 415 and its deserializer's text; framing is
    // ours, so that answer is replaced (nothing ran: rmcp refuses before any handler).
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE
        && let Some(json_body) = &json_body
    {
        return framing::unreadable(json_body).answer(&record);
    }
    // rmcp answers a session DELETE with 202; the Python SDK (and DeerFlow through it) expects
    // 200 or 204 and warns on every close otherwise. The session is gone either way.
    if is_delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    if record.current_outcome() == concierge_core::Outcome::Ok
        && let Some((outcome, code)) = refusal::from_transport(response.status())
    {
        record.outcome(outcome, Some(code), None);
    }
    if legacy.is_none() {
        match (&session, response.headers().get(SESSION_HEADER)) {
            (None, Some(opened)) => {
                if let (Ok(opened), Some(place)) = (opened.to_str(), opening) {
                    place.bind(opened);
                }
            }
            (Some(session), _) if response.status() == StatusCode::NOT_FOUND || is_delete => {
                guard.sessions.forget(session);
            }
            _ => {}
        }
    }
    response
}

/// The request as the transport gets it.
struct Admitted {
    /// Its head, the caller and the record in its extensions.
    parts: http::request::Parts,
    /// Its body, read whole.
    body: bytes::Bytes,
    /// The place of the session it opens.
    opening: Option<Opening>,
    /// The body passed the framing step as a JSON message.
    json: bool,
    /// A plain `tools/call` the dispatcher answers itself (`direct_call.rs`), read once.
    direct: Option<super::direct_call::PlainCall>,
}

/// Steps 1–7, and what the transport gets ([`Admitted`]).
async fn admit(
    guard: &Guard,
    request: Request,
    record: &RequestRecord,
    session: Option<&str>,
    legacy: bool,
) -> Result<Admitted, Refusal> {
    let policy = guard.policy();
    origin::decide(&policy.browser, request.headers())?;
    let caller = authentication::decide(&policy.auth, request.headers()).await?;
    record.caller(&caller);
    if let Some(session) = session {
        let owner = match &guard.legacy {
            Some(legacy) if legacy.serves(request.uri().path()) => legacy.owner(session),
            _ => {
                session::minted_for_caller(&guard.ids, session, &guard.endpoint.path, &caller)?;
                guard.sessions.owner(session)
            }
        };
        session::owned_by_caller(owner, &caller)?;
    }
    let (mut parts, body) = request.into_parts();
    let bytes = body::read(body, policy.body).await?;
    let (mut opening, mut direct) = (None, None);
    let json = parts.method == http::Method::POST && framing::is_json(&parts.headers);
    if json {
        // A stateless endpoint's plain `tools/call` is read once, into the type the direct
        // path answers from; its framing holds by that type. Any other body is probed here.
        if guard.answers_calls && !legacy {
            direct = super::direct_call::plain_call(&parts.headers, &bytes, &guard.endpoint);
        }
        let message = match &direct {
            Some(call) => call.message(),
            None => framing::decide(&bytes)?,
        };
        if let Some(method) = &message.method {
            record.method(method);
        }
        if let Some(traceparent) = &message.traceparent {
            record.continue_trace(traceparent);
        }
        // The Streamable HTTP endpoint opens sessions; a legacy SSE stream was counted when it
        // opened, and its `initialize` arrives on the messages path.
        let on_endpoint = parts.uri.path().trim_end_matches('/') == guard.endpoint.path;
        if guard.stateful
            && on_endpoint
            && session.is_none()
            && message.method.as_deref() == Some("initialize")
        {
            let (limits, says) = guard.endpoint.session_budget();
            opening = Some(session::open((&limits, says), &guard.sessions, &caller).await?);
        }
        if let (Authenticator::OAuth(oauth), Some(tool)) = (&policy.auth, message.tool.as_deref())
            && guard.endpoint.challenges_scopes()
            && guard.endpoint.has_scoped_tools()
        {
            let missing = guard.endpoint.scopes_missing_for(tool, &caller);
            if !missing.is_empty() {
                record.tool(tool);
                return Err(scope::step_up(oauth, &caller, tool, &missing));
            }
        }
    }
    parts.extensions.insert(caller);
    parts.extensions.insert(record.clone());
    Ok(Admitted {
        parts,
        body: bytes,
        opening,
        json,
        direct,
    })
}
