use serde_json::{Map, Value};

use crate::chat::{ChatClient, FunctionDefinition, FunctionTool, Message};
use crate::history::{is_well_formed, window};
use crate::mcp::McpConnection;
use crate::store::HistoryStore;

/// The seed's fix for a model that slips into other languages: say it in the system prompt.
pub const DEFAULT_SYSTEM_PROMPT: &str = "Ты — бот кофейни. Отвечай только по-русски, коротко и дружелюбно. \
Чтобы узнать меню или найти напиток по составу, используй инструменты get_menu и search_menu. \
Оформляй заказ через create_order только после того, как гость его подтвердил, и называй номер заказа \
и время готовности. О статусе заказа спрашивай get_order_status. Если инструмент вернул ошибку, \
перескажи её гостю своими словами.";

/// Said when the model or the server fails: short, and never the error itself.
pub const APOLOGY: &str =
    "Извините, сейчас не получается ответить. Попробуйте ещё раз через минуту.";

#[derive(Debug, Clone)]
pub struct AgentSettings {
    pub system_prompt: String,
    /// Model calls per user message; a model that keeps asking for tools is stopped here.
    pub max_rounds: usize,
    /// Tokens of history sent with each request (system prompt included).
    pub history_tokens: usize,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self {
            system_prompt: DEFAULT_SYSTEM_PROMPT.into(),
            max_rounds: 6,
            history_tokens: 6000,
        }
    }
}

pub struct Agent {
    chat: ChatClient,
    mcp: McpConnection,
    store: HistoryStore,
    settings: AgentSettings,
}

impl Agent {
    pub fn new(
        chat: ChatClient,
        mcp: McpConnection,
        store: HistoryStore,
        settings: AgentSettings,
    ) -> Self {
        Self {
            chat,
            mcp,
            store,
            settings,
        }
    }

    pub async fn forget(&self, conversation: &str) -> Result<(), crate::store::HistoryError> {
        self.store.forget(conversation).await
    }

    /// Answers one user message of `conversation`. Failures are logged and answered with a short
    /// apology; the turn is stored only when it completed, so the history stays well formed.
    pub async fn reply(&self, conversation: &str, text: &str) -> String {
        match self.run_turn(conversation, text).await {
            Ok(answer) => answer,
            Err(error) => {
                tracing::error!(%conversation, %error, "turn failed");
                APOLOGY.into()
            }
        }
    }

    async fn run_turn(&self, conversation: &str, text: &str) -> Result<String, String> {
        let tools: Vec<FunctionTool> = self
            .mcp
            .list_tools()
            .await?
            .into_iter()
            .map(|tool| FunctionTool {
                kind: "function",
                function: FunctionDefinition {
                    name: tool.name.to_string(),
                    description: tool.description.map(|d| d.to_string()).unwrap_or_default(),
                    parameters: Value::Object(tool.input_schema.as_ref().clone()),
                },
            })
            .collect();
        let mut history = self.store.load(conversation).await?;
        let first_new = history.len();
        history.push(Message::User {
            content: text.to_string(),
        });

        for _ in 0..self.settings.max_rounds {
            let mut messages = vec![Message::System {
                content: self.settings.system_prompt.clone(),
            }];
            messages.extend(history.iter().cloned());
            let sent = window(&messages, self.settings.history_tokens);
            debug_assert!(is_well_formed(&sent));
            let (content, tool_calls) = match self.chat.complete(&sent, &tools).await {
                Ok(Message::Assistant {
                    content,
                    tool_calls,
                }) => (content, tool_calls),
                failed => {
                    let error = match failed {
                        Err(error) => error.to_string(),
                        Ok(_) => "the model answered with a non-assistant message".into(),
                    };
                    // Tools already ran in this turn (an order may be placed): the turn is kept,
                    // so that the guest hears of it and the next turn's model knows it.
                    if history.len() > first_new + 1 {
                        tracing::error!(%conversation, %error, "turn interrupted after its tools ran");
                        return self.interrupted(conversation, history, first_new).await;
                    }
                    return Err(error);
                }
            };
            if tool_calls.is_empty() {
                let reply = content.clone().unwrap_or_default();
                history.push(Message::Assistant {
                    content,
                    tool_calls,
                });
                self.store
                    .append(conversation, &history[first_new..])
                    .await?;
                return Ok(reply);
            }
            let calls = tool_calls.clone();
            history.push(Message::Assistant {
                content,
                tool_calls,
            });
            for call in calls {
                let content = self
                    .run_tool(&call.function.name, &call.function.arguments)
                    .await;
                history.push(Message::Tool {
                    tool_call_id: call.id,
                    content,
                });
            }
        }
        // The bound: end the turn with a text answer so the stored history stays well formed.
        let reply =
            "Извините, не получилось выполнить запрос. Попробуйте сформулировать его иначе."
                .to_string();
        tracing::warn!(%conversation, rounds = self.settings.max_rounds, "tool-use round bound reached");
        self.close_turn(conversation, history, first_new, reply)
            .await
    }

    /// Ends a turn whose model failed after its tools ran: the guest hears what was done (the
    /// order's number, if one was placed), and the turn is stored, well formed, with that answer.
    async fn interrupted(
        &self,
        conversation: &str,
        history: Vec<Message>,
        first_new: usize,
    ) -> Result<String, String> {
        let reply = match placed_order(&history[first_new..]) {
            Some((id, minutes)) => format!(
                "Извините, ответ прервался, но заказ №{id} принят, готовность ~{minutes} мин."
            ),
            None => APOLOGY.to_string(),
        };
        self.close_turn(conversation, history, first_new, reply)
            .await
    }

    /// Ends a turn with our own text answer and stores it, so the history stays well formed.
    async fn close_turn(
        &self,
        conversation: &str,
        mut history: Vec<Message>,
        first_new: usize,
        reply: String,
    ) -> Result<String, String> {
        history.push(Message::Assistant {
            content: Some(reply.clone()),
            tool_calls: Vec::new(),
        });
        self.store
            .append(conversation, &history[first_new..])
            .await?;
        Ok(reply)
    }

    /// Runs one tool call; whatever happens becomes text for the model (errors are data it retells).
    async fn run_tool(&self, name: &str, arguments: &str) -> String {
        let arguments: Map<String, Value> =
            match serde_json::from_str(if arguments.trim().is_empty() {
                "{}"
            } else {
                arguments
            }) {
                Ok(Value::Object(map)) => map,
                _ => return format!("{{\"error\":\"arguments of {name} are not a JSON object\"}}"),
            };
        match self.mcp.call_tool(name, arguments).await {
            Ok(result) => {
                let content = serde_json::to_value(&result.content).unwrap_or_default();
                let text: Vec<&str> = content
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["text"].as_str())
                    .collect();
                if text.is_empty() {
                    result
                        .structured_content
                        .map(|v| v.to_string())
                        .unwrap_or_default()
                } else {
                    text.join("\n")
                }
            }
            Err(error) => {
                tracing::warn!(tool = name, %error, "tool call failed");
                format!("{{\"error\":\"the tool {name} is unavailable right now\"}}")
            }
        }
    }
}

/// The order a turn placed, from `create_order`'s result: its number and minutes until ready.
fn placed_order(turn: &[Message]) -> Option<(u64, u64)> {
    let orders: Vec<&str> = turn
        .iter()
        .flat_map(|message| match message {
            Message::Assistant { tool_calls, .. } => tool_calls.as_slice(),
            _ => &[],
        })
        .filter(|call| call.function.name == "create_order")
        .map(|call| call.id.as_str())
        .collect();
    turn.iter().rev().find_map(|message| match message {
        Message::Tool {
            tool_call_id,
            content,
        } if orders.contains(&tool_call_id.as_str()) => {
            let created: Value = serde_json::from_str(content).ok()?;
            Some((created["id"].as_u64()?, created["totalMinutes"].as_u64()?))
        }
        _ => None,
    })
}
