//! The OpenAI chat-completions wire format, as OpenAI, Ollama, vLLM and llama.cpp servers speak it.
//!
//! Written out here rather than taken from an SDK crate: the loop needs five types and one call,
//! and this keeps a single HTTP stack (the workspace's reqwest) for MCP and the model alike.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    pub function: FunctionCall,
}

fn function_kind() -> String {
    "function".into()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    /// JSON text, as the model wrote it (it may be invalid).
    pub arguments: String,
}

/// A tool offered to the model.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionTool {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionDefinition,
}

#[derive(Debug, Clone, Serialize)]
pub struct FunctionDefinition {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

#[derive(Debug, Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: &'a [Message],
    #[serde(skip_serializing_if = "<[FunctionTool]>::is_empty")]
    tools: &'a [FunctionTool],
    temperature: f32,
}

#[derive(Debug, Deserialize)]
struct ChatResponse {
    choices: Vec<Choice>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    message: Message,
}

#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error("the model API could not be reached: {0}")]
    Transport(String),
    #[error("the model API answered {status}")]
    Status { status: u16 },
    #[error("the model API answered something unreadable: {0}")]
    Malformed(String),
}

/// OpenAI's API, the default model endpoint: the one that needs `OPENAI_API_KEY`.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// A completion slower than this is a failed turn: a large local model on a CPU takes a minute.
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

fn client(timeout: std::time::Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .timeout(timeout)
        .build()
        .unwrap_or_default()
}

/// A chat-completions endpoint: `{base_url}/chat/completions`.
#[derive(Clone)]
pub struct ChatClient {
    http: reqwest::Client,
    base_url: String,
    api_key: Option<String>,
    model: String,
}

impl ChatClient {
    pub fn new(base_url: &str, api_key: Option<String>, model: &str) -> Self {
        Self {
            http: client(DEFAULT_TIMEOUT),
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            model: model.to_string(),
        }
    }

    /// How long one completion may take before the turn is given up (an apology, nothing
    /// stored); [`DEFAULT_TIMEOUT`] unless set.
    pub fn with_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.http = client(timeout);
        self
    }

    /// The model from the environment, as `chat` and `telegram` take it: `OPENAI_BASE_URL`
    /// (default [`OPENAI_BASE_URL`]), `OPENAI_API_KEY`, `OPENAI_MODEL` (default `gpt-4o-mini`).
    /// The key is required for api.openai.com only: a local Ollama, vLLM or llama.cpp server
    /// needs none. `env` is injected so tests need no globals.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Self, String> {
        let set = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let base = set("OPENAI_BASE_URL").unwrap_or_else(|| OPENAI_BASE_URL.into());
        let url = reqwest::Url::parse(&base)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https"))
            .ok_or_else(|| format!("OPENAI_BASE_URL `{base}` is not an http(s) URL"))?;
        let key = set("OPENAI_API_KEY");
        if key.is_none() && url.host_str() == Some("api.openai.com") {
            return Err(format!(
                "OPENAI_API_KEY is not set: the model API at {base} needs one (a local \
                 OpenAI-compatible server needs none: set OPENAI_BASE_URL, e.g. Ollama's \
                 http://127.0.0.1:11434/v1)"
            ));
        }
        let model = set("OPENAI_MODEL").unwrap_or_else(|| "gpt-4o-mini".into());
        Ok(Self::new(&base, key, &model))
    }

    /// One completion: the model's next message (text, or tool calls).
    pub async fn complete(
        &self,
        messages: &[Message],
        tools: &[FunctionTool],
    ) -> Result<Message, ChatError> {
        let mut request = self
            .http
            .post(format!("{}/chat/completions", self.base_url))
            .json(&ChatRequest {
                model: &self.model,
                messages,
                tools,
                temperature: 0.2,
            });
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request
            .send()
            .await
            .map_err(|e| ChatError::Transport(e.to_string()))?;
        let status = response.status();
        if !status.is_success() {
            return Err(ChatError::Status {
                status: status.as_u16(),
            });
        }
        let body: ChatResponse = response
            .json()
            .await
            .map_err(|e| ChatError::Malformed(e.to_string()))?;
        let message = body
            .choices
            .into_iter()
            .next()
            .map(|c| c.message)
            .ok_or_else(|| ChatError::Malformed("no choices".into()))?;
        match message {
            Message::Assistant { .. } => Ok(message),
            other => Err(ChatError::Malformed(format!(
                "expected an assistant message, got {other:?}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    #[test]
    fn openai_needs_a_key_and_a_local_server_does_not() {
        let error = ChatClient::from_env(&env(&[])).err().unwrap();
        assert!(error.starts_with("OPENAI_API_KEY is not set"), "{error}");
        let error = ChatClient::from_env(&env(&[
            ("OPENAI_BASE_URL", "https://api.openai.com/v1/"),
            ("OPENAI_API_KEY", " "),
        ]))
        .err()
        .unwrap();
        assert!(error.starts_with("OPENAI_API_KEY is not set"), "{error}");

        let client = ChatClient::from_env(&env(&[("OPENAI_API_KEY", "sk-x")])).unwrap();
        assert_eq!(client.base_url, OPENAI_BASE_URL);
        let local = ChatClient::from_env(&env(&[
            ("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1/"),
            ("OPENAI_MODEL", "qwen2.5"),
        ]))
        .unwrap();
        assert_eq!(
            (local.base_url.as_str(), local.api_key, local.model.as_str()),
            ("http://127.0.0.1:11434/v1", None, "qwen2.5")
        );
        let error = ChatClient::from_env(&env(&[("OPENAI_BASE_URL", "localhost:11434")]))
            .err()
            .unwrap();
        assert!(error.contains("not an http(s) URL"), "{error}");
    }
}
