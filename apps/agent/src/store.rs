//! Conversations in SQLite, so a restarted bot remembers its chats (the seed kept them in memory).

use std::path::Path;

use concierge_core::sqlite::SqliteFile;
use sqlx::Row;
use sqlx::sqlite::SqlitePool;

use crate::chat::Message;

pub struct HistoryStore {
    pool: SqlitePool,
}

impl HistoryStore {
    pub async fn open(path: &Path) -> Result<Self, String> {
        let pool = SqliteFile::new(path)
            .connections(2)
            .open(&[])
            .await
            .map_err(|e| e.to_string())?;
        sqlx::raw_sql(
            "CREATE TABLE IF NOT EXISTS message (
                conversation TEXT NOT NULL,
                seq INTEGER NOT NULL,
                json TEXT NOT NULL,
                PRIMARY KEY (conversation, seq)
            )",
        )
        .execute(&pool)
        .await
        .map_err(|e| e.to_string())?;
        Ok(Self { pool })
    }

    /// The conversation's messages, oldest first (system prompt not included: it is config).
    pub async fn load(&self, conversation: &str) -> Result<Vec<Message>, String> {
        let rows = sqlx::query("SELECT json FROM message WHERE conversation = ? ORDER BY seq")
            .bind(conversation)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| e.to_string())?;
        // A row that no longer parses (an older format) is skipped rather than failing the chat.
        Ok(rows
            .iter()
            .filter_map(|r| serde_json::from_str(&r.get::<String, _>(0)).ok())
            .collect())
    }

    /// Appends one finished turn, atomically: a turn is stored whole or not at all.
    pub async fn append(&self, conversation: &str, messages: &[Message]) -> Result<(), String> {
        let mut tx = self.pool.begin().await.map_err(|e| e.to_string())?;
        let next: i64 =
            sqlx::query("SELECT COALESCE(MAX(seq), 0) + 1 FROM message WHERE conversation = ?")
                .bind(conversation)
                .fetch_one(&mut *tx)
                .await
                .map_err(|e| e.to_string())?
                .get(0);
        for (offset, message) in messages.iter().enumerate() {
            let json = serde_json::to_string(message).map_err(|e| e.to_string())?;
            sqlx::query("INSERT INTO message (conversation, seq, json) VALUES (?, ?, ?)")
                .bind(conversation)
                .bind(next + offset as i64)
                .bind(json)
                .execute(&mut *tx)
                .await
                .map_err(|e| e.to_string())?;
        }
        tx.commit().await.map_err(|e| e.to_string())
    }

    /// Forgets a conversation (`/new`).
    pub async fn forget(&self, conversation: &str) -> Result<(), String> {
        sqlx::query("DELETE FROM message WHERE conversation = ?")
            .bind(conversation)
            .execute(&self.pool)
            .await
            .map_err(|e| e.to_string())?;
        Ok(())
    }
}
