//! The context window: trimmed on turn boundaries, by tokens.
//!
//! The seed's invariant holds whatever is cut: the system message stays, the window starts with a
//! `user` message, and an `assistant` message with `tool_calls` is never separated from the `tool`
//! answers to them (an orphaned `tool` message makes the API answer 400). So the unit of trimming
//! is a turn — a user message and everything up to the next one — and whole turns are dropped from
//! the oldest until the rest fits the token budget. The newest turn is always kept.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

use crate::chat::Message;

/// Tokens the chat format adds around every message (role, separators), per OpenAI's guidance.
const PER_MESSAGE: usize = 4;

fn encoder() -> &'static CoreBPE {
    static ENCODER: OnceLock<CoreBPE> = OnceLock::new();
    // o200k_base is the encoding of the gpt-4o family (the default model); the ranks ship inside
    // the crate, so nothing is downloaded.
    ENCODER.get_or_init(|| tiktoken_rs::o200k_base().expect("the bundled o200k_base ranks load"))
}

/// Tokens one message costs in a request.
pub fn tokens(message: &Message) -> usize {
    let count = |text: &str| encoder().encode_ordinary(text).len();
    PER_MESSAGE
        + match message {
            Message::System { content } | Message::User { content } => count(content),
            Message::Assistant {
                content,
                tool_calls,
            } => {
                content.as_deref().map_or(0, count)
                    + tool_calls
                        .iter()
                        .map(|c| count(&c.function.name) + count(&c.function.arguments))
                        .sum::<usize>()
            }
            Message::Tool { content, .. } => count(content),
        }
}

/// The messages to send: system messages first, then the newest whole turns that fit `budget`.
pub fn window(messages: &[Message], budget: usize) -> Vec<Message> {
    let system: Vec<&Message> = messages
        .iter()
        .filter(|m| matches!(m, Message::System { .. }))
        .collect();
    let rest: Vec<&Message> = messages
        .iter()
        .filter(|m| !matches!(m, Message::System { .. }))
        .collect();
    // Turn starts: every user message. Anything before the first one (a damaged store) is dropped.
    let starts: Vec<usize> = rest
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, Message::User { .. }))
        .map(|(i, _)| i)
        .collect();
    let Some(&last_start) = starts.last() else {
        return system.into_iter().cloned().collect();
    };
    let mut used: usize = system.iter().map(|m| tokens(m)).sum();
    let mut from = last_start;
    used += rest[last_start..].iter().map(|m| tokens(m)).sum::<usize>();
    for &start in starts.iter().rev().skip(1) {
        let next = starts
            .iter()
            .find(|&&s| s > start)
            .copied()
            .unwrap_or(rest.len());
        let cost: usize = rest[start..next].iter().map(|m| tokens(m)).sum();
        if used + cost > budget {
            break;
        }
        used += cost;
        from = start;
    }
    system
        .into_iter()
        .chain(rest[from..].iter().copied())
        .cloned()
        .collect()
}

/// Whether a message sequence keeps the seed's invariants (used by tests and as a guard).
pub fn is_well_formed(window: &[Message]) -> bool {
    let body: Vec<&Message> = window
        .iter()
        .skip_while(|m| matches!(m, Message::System { .. }))
        .collect();
    if body.iter().any(|m| matches!(m, Message::System { .. })) {
        return false;
    }
    if body
        .first()
        .is_some_and(|m| !matches!(m, Message::User { .. }))
    {
        return false;
    }
    // Every tool message answers a call of the nearest assistant before it, and every call of an
    // assistant is answered before the next user or assistant message.
    let mut open: Vec<&str> = Vec::new();
    for message in &body {
        match message {
            Message::Assistant { tool_calls, .. } => {
                if !open.is_empty() {
                    return false;
                }
                open = tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
            Message::Tool { tool_call_id, .. } => {
                let Some(position) = open.iter().position(|id| id == tool_call_id) else {
                    return false;
                };
                open.remove(position);
            }
            Message::User { .. } => {
                if !open.is_empty() {
                    return false;
                }
            }
            Message::System { .. } => return false,
        }
    }
    true
}
