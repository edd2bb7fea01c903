//! Trimming keeps the seed's invariants for any conversation and any budget.

use concierge_agent::chat::{FunctionCall, Message, ToolCall};
use concierge_agent::history::{is_well_formed, tokens, window};
use proptest::prelude::*;

/// One turn: a user message, then rounds of tool calls with their answers, then (usually) text.
fn turn(seed: (String, Vec<u8>, bool)) -> Vec<Message> {
    let (text, rounds, answered) = seed;
    let mut messages = vec![Message::User {
        content: text.clone(),
    }];
    for (round, calls) in rounds.iter().enumerate() {
        let calls: Vec<ToolCall> = (0..*calls)
            .map(|i| ToolCall {
                id: format!("call-{round}-{i}-{}", text.len()),
                kind: "function".into(),
                function: FunctionCall {
                    name: "get_menu".into(),
                    arguments: format!("{{\"n\":{i}}}"),
                },
            })
            .collect();
        let answers: Vec<Message> = calls
            .iter()
            .map(|c| Message::Tool {
                tool_call_id: c.id.clone(),
                content: "{\"results\":[]}".repeat(1 + round),
            })
            .collect();
        messages.push(Message::Assistant {
            content: None,
            tool_calls: calls,
        });
        messages.extend(answers);
    }
    if answered || rounds.is_empty() {
        messages.push(Message::Assistant {
            content: Some(format!("ответ на {text}")),
            tool_calls: Vec::new(),
        });
    }
    messages
}

fn conversation() -> impl Strategy<Value = Vec<Message>> {
    prop::collection::vec(
        (
            "[а-я ]{1,40}",
            prop::collection::vec(1u8..4, 0..3),
            any::<bool>(),
        ),
        1..12,
    )
    .prop_map(|turns| {
        let mut messages = vec![Message::System {
            content: "Отвечай только по-русски.".into(),
        }];
        for seed in turns {
            messages.extend(turn(seed));
        }
        messages
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn any_budget_gives_a_well_formed_window(messages in conversation(), budget in 0usize..600) {
        prop_assert!(is_well_formed(&messages));
        let sent = window(&messages, budget);
        prop_assert!(is_well_formed(&sent), "{:?}", sent);
        prop_assert!(matches!(sent[0], Message::System { .. }), "the system message is kept");
        prop_assert!(matches!(sent[1], Message::User { .. }), "the window starts with a user message");
        // The newest turn is always whole; older turns only as far as the budget allows.
        let last_user = messages.iter().rposition(|m| matches!(m, Message::User { .. })).unwrap();
        prop_assert_eq!(&sent[sent.len() - (messages.len() - last_user)..], &messages[last_user..]);
        let used: usize = sent.iter().map(tokens).sum();
        let newest: usize = messages[last_user..].iter().chain(messages.iter().take(1)).map(tokens).sum();
        prop_assert!(used <= budget.max(newest), "{used} tokens for a budget of {budget}");
        // And it is a suffix of the conversation: nothing reordered, nothing from the middle.
        prop_assert_eq!(&sent[1..], &messages[messages.len() - (sent.len() - 1)..]);
    }
}
