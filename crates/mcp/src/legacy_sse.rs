//! The legacy HTTP+SSE transport (MCP 2024-11-05) as a client, for an upstream that speaks
//! nothing newer (`transport = "sse"`); rmcp dropped its own.
//!
//! One `GET` opens an event stream; its first `endpoint` event names where messages are
//! `POST`ed; every answer comes back on the stream as a `message` event. The stream is bounded
//! per event (a larger one ends the connection), the endpoint must be on the stream's own origin
//! (an upstream cannot make concierge send its credentials elsewhere), and when the stream ends
//! the transport ends, so the connection is made again with backoff like any other.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use sse_stream::SseStream;
use tokio::sync::mpsc;

/// Messages read ahead of the client at most; the reader waits when they are not taken.
const READ_AHEAD: usize = 64;

pub struct LegacySse {
    client: reqwest::Client,
    headers: http::HeaderMap,
    endpoint: reqwest::Url,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
}

impl LegacySse {
    /// Opens the event stream at `url` and waits for the endpoint it names.
    pub async fn connect(
        client: reqwest::Client,
        url: &str,
        headers: http::HeaderMap,
        max_event_bytes: usize,
    ) -> Result<Self, String> {
        let url = reqwest::Url::parse(url).map_err(|_| "`url` is not a URL".to_string())?;
        let response = client
            .get(url.clone())
            .headers(headers.clone())
            .header(http::header::ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|error| format!("the event stream did not open: {}", error.without_url()))?;
        if !response.status().is_success() {
            return Err(format!(
                "the event stream answered HTTP {}",
                response.status().as_u16()
            ));
        }
        let bounded = BoundedEvents::new(response.bytes_stream(), max_event_bytes);
        let mut events = SseStream::from_bytes_stream(bounded);
        let endpoint = loop {
            match events.next().await {
                Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                    break event.data.unwrap_or_default();
                }
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => {
                    return Err("the event stream ended before naming its endpoint".into());
                }
            }
        };
        let endpoint = url
            .join(endpoint.trim())
            .map_err(|_| "the endpoint event is not a URL".to_string())?;
        if endpoint.origin() != url.origin() {
            return Err("the endpoint event names another origin; refused".into());
        }
        let (sender, incoming) = mpsc::channel(READ_AHEAD);
        let reader = tokio::spawn(async move {
            while let Some(Ok(event)) = events.next().await {
                if !matches!(event.event.as_deref(), None | Some("message")) {
                    continue;
                }
                let Some(data) = event.data else { continue };
                match serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&data) {
                    Ok(message) => {
                        if sender.send(message).await.is_err() {
                            return;
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, "an event from the MCP server is not JSON-RPC; ignored")
                    }
                }
            }
        });
        Ok(Self {
            client,
            headers,
            endpoint,
            incoming,
            reader,
        })
    }
}

impl Drop for LegacySse {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl rmcp::transport::Transport<RoleClient> for LegacySse {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .json(&item);
        async move {
            let response = request
                .send()
                .await
                .map_err(|error| std::io::Error::other(error.without_url()))?;
            if response.status().is_success() {
                Ok(())
            } else {
                Err(std::io::Error::other(format!(
                    "the MCP server refused a message: HTTP {}",
                    response.status().as_u16()
                )))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        Ok(())
    }
}

/// The response body with a bound on one event: the bytes since the last blank line (an
/// event's end) may not exceed `max`. Over it, the stream fails and the connection ends.
pub(crate) struct BoundedEvents<S> {
    inner: S,
    since_event: usize,
    /// The previous byte, to see `\n\n`, `\r\r` and `\r\n\r\n` across chunk edges.
    last: u8,
    max: usize,
}

impl<S> Stream for BoundedEvents<S>
where
    S: Stream<Item = reqwest::Result<Bytes>> + Unpin,
{
    type Item = std::io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let chunk = match std::task::ready!(self.inner.poll_next_unpin(cx)) {
            None => return Poll::Ready(None),
            Some(Err(error)) => {
                return Poll::Ready(Some(Err(std::io::Error::other(error.without_url()))));
            }
            Some(Ok(chunk)) => chunk,
        };
        for &byte in chunk.iter() {
            // A line end right after a line end is a blank line; `\r\n` counts as one end.
            let ends_line = byte == b'\n' || byte == b'\r';
            let crlf = self.last == b'\r' && byte == b'\n';
            if ends_line && !crlf && self.line_was_empty() {
                self.since_event = 0;
            } else {
                self.since_event += 1;
            }
            self.last = byte;
        }
        if self.since_event > self.max {
            return Poll::Ready(Some(Err(std::io::Error::other(format!(
                "an event over {} bytes",
                self.max
            )))));
        }
        Poll::Ready(Some(Ok(chunk)))
    }
}

impl<S> BoundedEvents<S> {
    pub(crate) fn new(inner: S, max: usize) -> Self {
        Self {
            inner,
            since_event: 0,
            last: 0,
            max,
        }
    }

    fn line_was_empty(&self) -> bool {
        self.last == b'\n' || self.last == b'\r'
    }
}
