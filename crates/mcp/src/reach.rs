//! Whether a request reached an HTTP upstream. A connection that could not be made (refused, a
//! name that does not resolve, no answer to connect) or that broke under the request means the
//! server is unavailable — not that it refused the call — and is answered as such, retryably;
//! one that could not be made also marks the upstream down, so `/health` says so and the
//! connection is made again with backoff. A redirect is never followed: it could send the
//! caller's arguments and concierge's session to any address.

use concierge_core::ToolError;
use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

use crate::tool::unavailable;

/// What the log and `/health` say of an upstream that answered a redirect.
pub const REDIRECTED: &str = "the upstream answered a redirect; concierge does not follow redirects \
                              for MCP servers: set the URL it points to";

/// Why a request did not reach the upstream's MCP handling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreached {
    /// No connection was made: nothing was sent.
    NotConnected,
    /// The connection broke under the request: whether the server acted is unknown.
    Broken,
    /// The server answered a redirect, which is not followed.
    Redirected,
}

impl Unreached {
    /// What a failed request to the upstream says, when it failed on the way there.
    pub fn of_request(error: &reqwest::Error) -> Option<Self> {
        if error.is_redirect() {
            Some(Self::Redirected)
        } else if error.is_connect() {
            Some(Self::NotConnected)
        } else if error.is_builder() {
            // A request of ours that could not be made: nothing about the server.
            None
        } else {
            Some(Self::Broken)
        }
    }

    /// The same, in an error from a transport: rmcp's Streamable HTTP client (its client
    /// error carries no source, so it is looked for by type), or ours for the legacy HTTP+SSE
    /// transport (an `io::Error` around the request's error).
    pub fn of(error: &(dyn std::error::Error + 'static)) -> Option<Self> {
        let mut current = Some(error);
        while let Some(error) = current {
            if let Some(request) = error.downcast_ref::<reqwest::Error>() {
                return Self::of_request(request);
            }
            if let Some(StreamableHttpError::Client(request)) =
                error.downcast_ref::<StreamableHttpError<reqwest::Error>>()
            {
                return Self::of_request(request);
            }
            // `io::Error::source` skips the error it wraps.
            current = match error.downcast_ref::<std::io::Error>() {
                Some(io) => match io.get_ref() {
                    Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
                    None => None,
                },
                None => error.source(),
            };
        }
        None
    }

    /// The same, in a failed handshake (whose error names no source: looked into by variant).
    pub fn of_handshake(error: &ClientInitializeError) -> Option<Self> {
        match error {
            ClientInitializeError::TransportError { error, .. } => Self::of(error),
            ClientInitializeError::LegacyFallbackFailed { discover, fallback } => {
                Self::of_handshake(fallback).or_else(|| Self::of_handshake(discover))
            }
            _ => None,
        }
    }

    /// The reason an upstream is down for this, as `/health` and the log show it: no address.
    pub fn reason(self) -> &'static str {
        match self {
            Self::NotConnected => "the MCP server does not accept connections",
            Self::Broken => "the connection to the MCP server broke",
            Self::Redirected => REDIRECTED,
        }
    }

    /// The caller's answer: the server is unavailable, and whether it may have acted.
    pub fn answer(self) -> ToolError {
        match self {
            Self::NotConnected => unavailable(
                "upstream_unavailable",
                "The server behind this tool is not reachable right now; nothing was sent. Retry \
                 in a few seconds.",
            ),
            Self::Broken => unavailable(
                "upstream_unavailable",
                "The server behind this tool went away during the call; whether it acted is \
                 unknown. Check before calling again.",
            ),
            Self::Redirected => unavailable(
                "upstream_unavailable",
                "The server behind this tool is not reachable at the address concierge has for \
                 it; the call was not carried out. Retry later.",
            ),
        }
    }
}

/// The redirect policy of every client that talks to an MCP server: a redirect is an error
/// (the request is not sent again anywhere), logged once with where it pointed so an operator
/// can set that URL.
pub fn no_redirects(upstream: String) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        let to = attempt.url();
        // The address it points to, without a query that might carry a secret.
        let location = format!("{}{}", to.origin().ascii_serialization(), to.path());
        tracing::error!(
            upstream = %upstream,
            status = attempt.status().as_u16(),
            %location,
            "{REDIRECTED}"
        );
        attempt.error(REDIRECTED)
    })
}
