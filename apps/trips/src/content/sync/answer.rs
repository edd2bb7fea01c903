//! What one HTTP exchange with the feed came to: the response (or its absence) classified the way
//! the phases and the [pacer](super::pacer) act on it. Nothing here waits or decides what to do.

use std::time::Duration;

use chrono::Utc;

use super::pacer::{self, Exchange};

/// A larger answer is dropped unread (as a `413`), so a runaway response cannot fill memory.
const MAX_BODY: usize = 8 * 1024 * 1024;

/// What an exchange came to, as the load rules see it.
pub(super) enum Answer {
    Body(Vec<u8>),
    /// 503, TYPO3's kill switch.
    Unavailable(Option<Duration>),
    /// Another 5xx.
    ServerError(u16),
    /// 401/403: our key is refused.
    Refused(u16),
    /// Any other status (404, a redirect, …).
    Status(u16),
    Timeout,
    Unreachable(String),
}

impl Answer {
    /// Sends the request and classifies what comes back.
    pub(super) async fn of(request: reqwest::RequestBuilder) -> Self {
        let (client, request) = request.build_split();
        let mut request = match request {
            Ok(request) => request,
            Err(error) => return Answer::Unreachable(error_kind(&error)),
        };
        let call = concierge_core::observe::UpstreamCall::start(
            "typo3",
            request.method().as_str(),
            request.url().as_str(),
        );
        for (name, value) in call.headers() {
            if let Ok(value) = reqwest::header::HeaderValue::try_from(value) {
                request.headers_mut().insert(name, value);
            }
        }
        let answer = match client.execute(request).await {
            Ok(response) => {
                let status = response.status().as_u16();
                let answer = classify(response).await;
                call.finish(Some(status));
                answer
            }
            Err(error) => Err(error),
        };
        match answer {
            Ok(answer) => answer,
            Err(error) if error.is_timeout() => Answer::Timeout,
            Err(error) => Answer::Unreachable(error_kind(&error)),
        }
    }

    /// What the pacer is told.
    pub(super) fn exchange(&self) -> Exchange {
        match self {
            Answer::ServerError(_) | Answer::Unavailable(_) => Exchange::ServerError,
            Answer::Timeout => Exchange::TimedOut,
            Answer::Unreachable(_) => Exchange::Unreachable,
            Answer::Body(_) | Answer::Refused(_) | Answer::Status(_) => Exchange::Answered,
        }
    }

    pub(super) fn describe(&self) -> String {
        match self {
            Answer::Body(_) => "answered".into(),
            Answer::Unavailable(_) => "503".into(),
            Answer::ServerError(code) | Answer::Refused(code) | Answer::Status(code) => {
                format!("HTTP {code}")
            }
            Answer::Timeout => "timed out".into(),
            Answer::Unreachable(why) => format!("unreachable: {why}"),
        }
    }
}

async fn classify(response: reqwest::Response) -> Result<Answer, reqwest::Error> {
    let status = response.status().as_u16();
    Ok(match status {
        200..=299 => {
            let mut response = response;
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                if body.len() + chunk.len() > MAX_BODY {
                    return Ok(Answer::Status(413));
                }
                body.extend_from_slice(&chunk);
            }
            Answer::Body(body)
        }
        503 => Answer::Unavailable(retry_after(&response)),
        500..=599 => Answer::ServerError(status),
        401 | 403 => Answer::Refused(status),
        _ => Answer::Status(status),
    })
}

/// The `Retry-After` header's wait, if it has a readable one.
fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let value = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?;
    pacer::retry_after(value, Utc::now())
}

/// What went wrong in transport, in words that carry no URL or address.
fn error_kind(error: &reqwest::Error) -> String {
    if error.is_connect() {
        "connection failed".into()
    } else if error.is_body() || error.is_decode() {
        "broken answer".into()
    } else {
        "request failed".into()
    }
}
