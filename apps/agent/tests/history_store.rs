//! The bot's history file under chats that finish their turns at the same moment: every turn is
//! stored whole, none is refused because another chat wrote first.

use std::sync::Arc;

use concierge_agent::chat::Message;
use concierge_agent::store::HistoryStore;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_of_many_chats_at_once_are_all_stored() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(
        HistoryStore::open(&dir.path().join("bot.sqlite"))
            .await
            .unwrap(),
    );
    const CHATS: usize = 8;
    const TURNS: usize = 20;
    let mut chats = Vec::new();
    for chat in 0..CHATS {
        let store = store.clone();
        chats.push(tokio::spawn(async move {
            let conversation = format!("telegram:{chat}");
            for turn in 0..TURNS {
                let said = vec![
                    Message::User {
                        content: format!("turn {turn}"),
                    },
                    Message::Assistant {
                        content: Some(format!("answer {turn}")),
                        tool_calls: Vec::new(),
                    },
                ];
                store.append(&conversation, &said).await.unwrap();
            }
        }));
    }
    for chat in chats {
        chat.await.unwrap();
    }
    for chat in 0..CHATS {
        let stored = store.load(&format!("telegram:{chat}")).await.unwrap();
        assert_eq!(stored.len(), 2 * TURNS, "chat {chat}");
    }
}
