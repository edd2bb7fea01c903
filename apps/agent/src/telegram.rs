//! The shop's bot on Telegram: long polling, one conversation per chat, a typing indicator while
//! the agent works, answers split at Telegram's 4096-character limit, `/start` and `/new`.
//! Failures are answered with a short apology (the agent's); the loop never dies on one.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use frankenstein::AsyncTelegramApi;
use frankenstein::client_reqwest::Bot;
use frankenstein::methods::{GetUpdatesParams, SendChatActionParams, SendMessageParams};
use frankenstein::types::ChatAction;
use frankenstein::updates::UpdateContent;
use tokio::sync::Mutex;

use crate::Agent;

/// Telegram's limit for one message, in characters.
pub const MESSAGE_LIMIT: usize = 4096;
pub const GREETING: &str = "Здравствуйте! Я бот кофейни. Напишите, что хотите заказать, например «два капучино и латте», \
или спросите, когда будет готов заказ.";
/// The longest a message waits out Telegram's flood control before it is given up.
pub const FLOOD_WAIT: Duration = Duration::from_secs(30);
pub const FORGOTTEN: &str = "Начнём заново: историю нашего разговора я забыл.";

pub struct TelegramBot {
    bot: Bot,
    agent: Arc<Agent>,
    /// One lock per chat: a chat's messages are answered in order, chats in parallel.
    chats: Mutex<HashMap<i64, Arc<Mutex<()>>>>,
    poll_seconds: u32,
}

impl TelegramBot {
    /// `api_base` is `https://api.telegram.org` (or a test server); the token is appended as the
    /// Bot API wants (`/bot<token>/method`) and never logged.
    pub fn new(api_base: &str, token: &str, agent: Arc<Agent>, poll_seconds: u32) -> Self {
        // A long poll answers within its own timeout; a request held longer than that and a
        // margin is a hung connection, not a slow Telegram (the library's default waits 500 s).
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(u64::from(poll_seconds) + 10))
            .build()
            .unwrap_or_default();
        let bot = Bot::builder()
            .api_url(format!("{}/bot{token}", api_base.trim_end_matches('/')))
            .client(client)
            .build();
        Self {
            bot,
            agent,
            chats: Mutex::new(HashMap::new()),
            poll_seconds,
        }
    }

    /// Polls for updates until the process ends.
    pub async fn run(self: Arc<Self>) {
        let mut offset: Option<i64> = None;
        loop {
            let params = GetUpdatesParams::builder()
                .maybe_offset(offset)
                .timeout(self.poll_seconds)
                .build();
            let updates = match self.bot.get_updates(&params).await {
                Ok(response) => response.result,
                Err(error) => {
                    // The library strips the token from its errors; wait a little, then poll again.
                    tracing::warn!(%error, "getUpdates failed");
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    continue;
                }
            };
            for update in updates {
                offset = Some(i64::from(update.update_id) + 1);
                if let UpdateContent::Message(message) = update.content
                    && let Some(text) = message.text.clone()
                {
                    let chat = message.chat.id;
                    let bot = self.clone();
                    tokio::spawn(async move { bot.handle(chat, &text).await });
                }
            }
        }
    }

    async fn handle(&self, chat: i64, text: &str) {
        let lock = self.chats.lock().await.entry(chat).or_default().clone();
        let _in_order = lock.lock().await;
        let conversation = format!("telegram:{chat}");
        let answer = match text.trim() {
            "/start" => GREETING.to_string(),
            "/new" => match self.agent.forget(&conversation).await {
                Ok(()) => FORGOTTEN.to_string(),
                Err(error) => {
                    tracing::error!(%error, "cannot forget a conversation");
                    crate::APOLOGY.to_string()
                }
            },
            text => {
                let typing = self.keep_typing(chat);
                let answer = self.agent.reply(&conversation, text).await;
                typing.abort();
                answer
            }
        };
        for part in split(&answer, MESSAGE_LIMIT) {
            let params = SendMessageParams::builder()
                .chat_id(chat)
                .text(part)
                .build();
            if !self.send(&params, chat).await {
                break;
            }
        }
    }

    /// Sends one message; under Telegram's flood control (429 with `retry_after`) waits as told,
    /// up to [`FLOOD_WAIT`] in all, and sends again, so an answer is not lost to a busy minute.
    async fn send(&self, params: &SendMessageParams, chat: i64) -> bool {
        let mut waited = Duration::ZERO;
        loop {
            let error = match self.bot.send_message(params).await {
                Ok(_) => return true,
                Err(error) => error,
            };
            let wait = match &error {
                frankenstein::Error::Api(response) if response.error_code == 429 => response
                    .parameters
                    .as_ref()
                    .and_then(|p| p.retry_after)
                    .map(|seconds| Duration::from_secs(u64::from(seconds).max(1))),
                _ => None,
            };
            match wait {
                Some(wait) if waited + wait <= FLOOD_WAIT => {
                    tracing::info!(
                        chat,
                        seconds = wait.as_secs(),
                        "flood control: waiting to send"
                    );
                    tokio::time::sleep(wait).await;
                    waited += wait;
                }
                _ => {
                    tracing::warn!(%error, chat, "sendMessage failed");
                    return false;
                }
            }
        }
    }

    /// "typing…" until aborted; Telegram shows it for about five seconds per call.
    fn keep_typing(&self, chat: i64) -> tokio::task::JoinHandle<()> {
        let bot = self.bot.clone();
        tokio::spawn(async move {
            loop {
                let params = SendChatActionParams::builder()
                    .chat_id(chat)
                    .action(ChatAction::Typing)
                    .build();
                let _ = bot.send_chat_action(&params).await;
                tokio::time::sleep(Duration::from_secs(4)).await;
            }
        })
    }
}

/// Splits text into parts of at most `limit` characters, at a line break or a space when there is
/// one in the second half of the part, so words and lines stay whole where they can.
pub fn split(text: &str, limit: usize) -> Vec<String> {
    let mut parts = Vec::new();
    let mut rest: Vec<char> = text.chars().collect();
    while rest.len() > limit {
        let window = &rest[..limit];
        let cut = window
            .iter()
            .rposition(|c| *c == '\n')
            .or_else(|| window.iter().rposition(|c| *c == ' '))
            .filter(|p| *p >= limit / 2)
            .map_or(limit, |p| p + 1);
        parts.push(
            rest[..cut]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_string(),
        );
        rest.drain(..cut);
    }
    if !rest.is_empty() || parts.is_empty() {
        parts.push(rest.into_iter().collect());
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn long_answers_are_split_at_the_limit_on_word_boundaries() {
        let text = "слово ".repeat(1000);
        let parts = split(&text, 4096);
        assert!(parts.len() == 2 && parts.iter().all(|p| p.chars().count() <= 4096));
        assert!(
            parts
                .iter()
                .all(|p| !p.starts_with(' ') && p.split(' ').all(|w| w.is_empty() || w == "слово"))
        );
        let unbroken = "я".repeat(9000);
        let parts = split(&unbroken, 4096);
        assert_eq!(
            parts.iter().map(|p| p.chars().count()).collect::<Vec<_>>(),
            [4096, 4096, 808]
        );
        assert_eq!(split("коротко", 4096), ["коротко"]);
    }
}
