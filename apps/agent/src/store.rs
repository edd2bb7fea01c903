//! Conversations in SQLite, so a restarted bot remembers its chats (the seed kept them in memory).

use std::path::Path;

use concierge_core::sqlite::{SqliteError, SqliteFile};
use sqlx::Row;
use sqlx::sqlite::SqlitePool;

use crate::chat::Message;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS message (
    conversation TEXT NOT NULL,
    seq INTEGER NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (conversation, seq)
)";

/// Why the history could not be read or written; the bot logs it and apologises to the user.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(transparent)]
    Open(#[from] SqliteError),
    #[error("the history: {0}")]
    Database(#[from] sqlx::Error),
    #[error("the history: a message does not encode: {0}")]
    Encode(#[from] serde_json::Error),
}

/// The agent says what failed as text; a history error is one of those.
impl From<HistoryError> for String {
    fn from(error: HistoryError) -> Self {
        error.to_string()
    }
}

pub struct HistoryStore {
    pool: SqlitePool,
}

impl HistoryStore {
    pub async fn open(path: &Path) -> Result<Self, HistoryError> {
        let pool = SqliteFile::new(path).connections(2).open(&[SCHEMA]).await?;
        Ok(Self { pool })
    }

    /// The conversation's messages, oldest first (system prompt not included: it is config).
    pub async fn load(&self, conversation: &str) -> Result<Vec<Message>, HistoryError> {
        let rows = sqlx::query("SELECT json FROM message WHERE conversation = ? ORDER BY seq")
            .bind(conversation)
            .fetch_all(&self.pool)
            .await?;
        // A row that no longer parses (an older format) is skipped rather than failing the chat.
        Ok(rows
            .iter()
            .filter_map(|r| serde_json::from_str(&r.get::<String, _>(0)).ok())
            .collect())
    }

    /// Appends one finished turn, atomically: a turn is stored whole or not at all.
    pub async fn append(
        &self,
        conversation: &str,
        messages: &[Message],
    ) -> Result<(), HistoryError> {
        // IMMEDIATE: a deferred transaction that read first and then writes is refused at once
        // ("database is locked", no busy wait) when another chat's turn committed meanwhile.
        let mut tx = self
            .pool
            .begin_with(sqlx::AssertSqlSafe("BEGIN IMMEDIATE"))
            .await?;
        let next: i64 =
            sqlx::query("SELECT COALESCE(MAX(seq), 0) + 1 FROM message WHERE conversation = ?")
                .bind(conversation)
                .fetch_one(&mut *tx)
                .await?
                .get(0);
        for (offset, message) in messages.iter().enumerate() {
            let json = serde_json::to_string(message)?;
            sqlx::query("INSERT INTO message (conversation, seq, json) VALUES (?, ?, ?)")
                .bind(conversation)
                .bind(next + offset as i64)
                .bind(json)
                .execute(&mut *tx)
                .await?;
        }
        Ok(tx.commit().await?)
    }

    /// Forgets a conversation (`/new`).
    pub async fn forget(&self, conversation: &str) -> Result<(), HistoryError> {
        sqlx::query("DELETE FROM message WHERE conversation = ?")
            .bind(conversation)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
