use std::fmt;

/// What kind of failure a tool call ended in; decides the audit outcome and what the client sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The arguments are wrong; the message says which field and why, for the model to fix.
    InvalidArgument,
    /// The thing asked for does not exist (unknown order id, unknown trip code).
    NotFound,
    /// The request is well formed but refused by a business rule.
    Rejected,
    /// Something on our side or upstream failed; the client sees only the code.
    Internal,
}

/// A tool's failure. `message` is written for the model (and through it the end user), in the
/// app's language; `detail` goes to the log only and may hold paths, upstream answers, causes.
#[derive(Debug, Clone)]
pub struct ToolError {
    pub kind: ErrorKind,
    pub code: &'static str,
    pub field: Option<String>,
    pub message: String,
    pub detail: Option<String>,
    /// The app's own error document (e.g. `{"success": false, "error": {…}, "trace_id"}`), sent as
    /// the result's text instead of the platform's `{"error": {…}}`. Like every error result it
    /// carries no `structuredContent` (which clients check against the tool's output schema).
    pub envelope: Option<Box<serde_json::Value>>,
}

/// The code of [`ToolError::outcome_unknown`].
pub const OUTCOME_UNKNOWN: &str = "outcome_unknown";

impl ToolError {
    /// A wrong argument: `field` is its path as the model wrote it (`items[0].qty`).
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::InvalidArgument,
            code: "invalid_argument",
            field: Some(field.into()),
            message: message.into(),
            detail: None,
            envelope: None,
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::NotFound,
            code: "not_found",
            field: None,
            message: message.into(),
            detail: None,
            envelope: None,
        }
    }

    pub fn rejected(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Rejected,
            code,
            field: None,
            message: message.into(),
            detail: None,
            envelope: None,
        }
    }

    /// An internal failure. The client sees `code` and a generic message; `detail` is logged.
    pub fn internal(code: &'static str, detail: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Internal,
            code,
            field: None,
            message: "internal error".into(),
            detail: Some(detail.into()),
            envelope: None,
        }
    }

    /// A write whose outcome is not known: the backend may have made it (a commit whose answer
    /// never came). The platform keeps its idempotency key spent, so the same key never runs
    /// the write again and answers this again; `message` tells the model to look first.
    pub fn outcome_unknown(message: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::internal(OUTCOME_UNKNOWN, detail).with_message(message)
    }

    /// Answers with the app's own error document instead of the platform's shape.
    pub fn with_envelope(mut self, envelope: serde_json::Value) -> Self {
        self.envelope = Some(Box::new(envelope));
        self
    }

    /// Keeps `detail` for the log (never shown to the client).
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// Replaces the client-visible message of an internal error (e.g. in the app's language).
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{} ({field}): {}", self.code, self.message),
            None => write!(f, "{}: {}", self.code, self.message),
        }
    }
}

impl std::error::Error for ToolError {}
