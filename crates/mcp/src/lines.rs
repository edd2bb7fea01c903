//! A child's stdout with a bound on one line (one JSON-RPC message over stdio): a longer line
//! fails the read, which ends the connection; the server is then started again with backoff,
//! and a call waiting for an answer answers at once that the server went away.
//!
//! rmcp's own bound drops such a line and reads on: the call waiting for it would wait to its
//! timeout, and the line's first part would stay held in rmcp's buffer for as long as the
//! connection lives.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

pub struct BoundedLines<R> {
    inner: R,
    /// Bytes of the line under way, its end included.
    line: usize,
    max: usize,
    upstream: String,
}

impl<R> BoundedLines<R> {
    pub fn new(inner: R, max: usize, upstream: String) -> Self {
        Self {
            inner,
            line: 0,
            max,
            upstream,
        }
    }

    /// Counts `fresh` into the line under way; `false` once a line is over the bound.
    fn within(&mut self, fresh: &[u8]) -> bool {
        let mut rest = fresh;
        loop {
            match rest.iter().position(|b| *b == b'\n') {
                Some(end) => {
                    if self.line + end + 1 > self.max {
                        return false;
                    }
                    self.line = 0;
                    rest = &rest[end + 1..];
                }
                None => {
                    self.line += rest.len();
                    return self.line <= self.max;
                }
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        std::task::ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        let this = &mut *self;
        if this.within(&buf.filled()[before..]) {
            return Poll::Ready(Ok(()));
        }
        // Nothing of the line is handed on.
        buf.set_filled(before);
        tracing::warn!(
            upstream = %this.upstream,
            max_bytes = this.max,
            "the MCP server wrote a line over the bound; its connection ends"
        );
        Poll::Ready(Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a line over {} bytes", this.max),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_counted_across_reads_and_ends_at_its_newline() {
        let mut lines = BoundedLines::new((), 4, String::new());
        assert!(lines.within(b"ab"));
        assert!(lines.within(b"c\n"));
        assert!(lines.within(b"abc\nabc\n\n"));
        assert!(lines.within(b"abcd"));
        assert!(!lines.within(b"\n"), "five bytes with its end");
        let mut lines = BoundedLines::new((), 4, String::new());
        assert!(
            !lines.within(b"a\nabcdefg\nb\n"),
            "a long line between short ones"
        );
    }
}
