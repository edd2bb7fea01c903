//! The fixtures of MCP 2026-07-28's multi round-trip requests (SEP-2322): tools and a prompt that
//! answer `resultType: "input_required"` and finish once the client hands back its answers.
//!
//! Request states are sealed with rmcp's codec under a key of this process: the suite checks
//! that a tampered state is refused, and that a state changes from round to round.

use std::sync::LazyLock;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, GetPromptResponse, GetPromptResult,
    InputRequests, InputRequiredResult, InputResponses, RequestStateCodec,
};
use serde_json::{Value, json};

use crate::complete;

/// A key of this process: states are good until it restarts, which is all a fixture needs.
static STATES: LazyLock<RequestStateCodec> = LazyLock::new(|| {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).expect("the system's random source");
    RequestStateCodec::try_new(key.to_vec()).expect("a 32-byte key")
});

/// The tools' listing entries.
pub fn tools() -> Vec<Value> {
    let plain = |name: &str, description: &str| json!({"name": name, "description": description, "inputSchema": {"type": "object", "properties": {}}});
    vec![
        plain(
            "test_input_required_result_elicitation",
            "Asks for a name (MRTR elicitation)",
        ),
        plain(
            "test_input_required_result_sampling",
            "Asks the client's model (MRTR sampling)",
        ),
        plain(
            "test_input_required_result_list_roots",
            "Asks for the client's roots (MRTR roots)",
        ),
        plain(
            "test_input_required_result_request_state",
            "Asks with a requestState it checks on the retry",
        ),
        plain(
            "test_input_required_result_multiple_inputs",
            "Asks for three inputs at once",
        ),
        plain(
            "test_input_required_result_multi_round",
            "Asks twice before it answers",
        ),
        plain(
            "test_input_required_result_tampered_state",
            "Refuses a requestState that was changed",
        ),
        plain(
            "test_input_required_result_capabilities",
            "Asks only what the request's client capabilities allow",
        ),
    ]
}

/// The prompt's listing entry.
pub fn prompt_listing() -> Value {
    json!({"name": "test_input_required_result_prompt", "title": "Prompt With Input", "description": "A prompt that asks for context first (MRTR)"})
}

fn elicit(message: &str, field: &str, kind: &str) -> Value {
    json!({"method": "elicitation/create", "params": {
        "message": message,
        "requestedSchema": {"type": "object", "properties": {field: {"type": kind}}, "required": [field]},
    }})
}

fn sample(text: &str, max_tokens: u32) -> Value {
    json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens,
    }})
}

fn roots() -> Value {
    json!({"method": "roots/list", "params": {}})
}

fn seal(state: Value) -> Result<String, ErrorData> {
    let mut state = state;
    state["nonce"] = json!(uuid_like());
    STATES
        .seal_json(&state)
        .map_err(|e| ErrorData::internal_error(format!("cannot seal a state: {e}"), None))
}

/// A fresh nonce, so no two states are alike.
fn uuid_like() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the system's random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The state a client handed back, when it is one of ours.
fn opened(state: Option<&str>) -> Option<Value> {
    STATES.open_json::<Value>(state?).ok()
}

fn asking(requests: Value, state: Option<String>) -> Result<InputRequiredResult, ErrorData> {
    let requests: InputRequests = serde_json::from_value(requests).map_err(|e| {
        ErrorData::internal_error(format!("an input request does not fit: {e}"), None)
    })?;
    Ok(InputRequiredResult::new(Some(requests), state))
}

fn ask(requests: Value, state: Option<String>) -> Result<CallToolResponse, ErrorData> {
    asking(requests, state).map(CallToolResponse::InputRequired)
}

fn done(text: String) -> Result<CallToolResponse, ErrorData> {
    let result: CallToolResult = complete(json!({"content": [{"type": "text", "text": text}]}))?;
    Ok(result.into())
}

/// What the user entered in the form answered under `key`, when they accepted it.
fn accepted<'a>(
    responses: Option<&'a InputResponses>,
    key: &str,
    field: &str,
) -> Option<&'a Value> {
    let answer = responses?.get(key)?;
    (answer.get("action")? == "accept").then(|| answer.get("content")?.get(field))?
}

/// One MRTR tool's answer; `None` for a tool that is not one of these.
pub fn call(
    name: &str,
    responses: Option<&InputResponses>,
    state: Option<&str>,
    capabilities: Option<&ClientCapabilities>,
) -> Option<Result<CallToolResponse, ErrorData>> {
    let name_of = |key| accepted(responses, key, "name").and_then(Value::as_str);
    Some(match name {
        "test_input_required_result_elicitation" => match name_of("user_name") {
            Some(person) => done(format!("Hello, {person}!")),
            None => ask(
                json!({"user_name": elicit("What is your name?", "name", "string")}),
                None,
            ),
        },
        "test_input_required_result_sampling" => {
            match responses.and_then(|r| r.get("sample_request")) {
                Some(answer) => done(format!(
                    "Sampling result: {}",
                    answer
                        .pointer("/content/text")
                        .and_then(Value::as_str)
                        .unwrap_or("no response")
                )),
                None => ask(
                    json!({"sample_request": sample("What is the capital of France?", 100)}),
                    None,
                ),
            }
        }
        "test_input_required_result_list_roots" => {
            match responses.and_then(|r| r.get("roots_request")) {
                Some(answer) => done(format!(
                    "Found {} root(s)",
                    answer
                        .get("roots")
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len)
                )),
                None => ask(json!({"roots_request": roots()}), None),
            }
        }
        "test_input_required_result_request_state" => {
            let state_ok = opened(state).is_some_and(|s| s["kind"] == "request-state");
            if state_ok && accepted(responses, "confirm", "ok") == Some(&json!(true)) {
                done("state-ok: requestState validated".into())
            } else {
                seal(json!({"kind": "request-state"})).and_then(|state| {
                    ask(
                        json!({"confirm": elicit("Please confirm", "ok", "boolean")}),
                        Some(state),
                    )
                })
            }
        }
        "test_input_required_result_multiple_inputs" => {
            let state_ok = opened(state).is_some_and(|s| s["kind"] == "multiple-inputs");
            let all = responses.is_some_and(|r| {
                ["user_name", "greeting", "client_roots"]
                    .iter()
                    .all(|key| r.contains_key(*key))
            });
            match (state_ok && all, name_of("user_name")) {
                (true, Some(person)) => done(format!("Name: {person}; all three inputs received")),
                _ => seal(json!({"kind": "multiple-inputs"})).and_then(|state| {
                    ask(
                        json!({
                            "user_name": elicit("What is your name?", "name", "string"),
                            "greeting": sample("Generate a greeting", 50),
                            "client_roots": roots(),
                        }),
                        Some(state),
                    )
                }),
            }
        }
        "test_input_required_result_multi_round" => {
            let state = opened(state);
            let round = state.as_ref().and_then(|s| s["round"].as_u64());
            match (round, name_of("step1"), accepted(responses, "step2", "color")) {
                (Some(1), Some(person), _) => seal(json!({"round": 2, "name": person})).and_then(|next| {
                    ask(json!({"step2": elicit("Step 2: What is your favorite color?", "color", "string")}), Some(next))
                }),
                (Some(2), _, Some(color)) => done(format!(
                    "Multi-round complete for {} who likes {}",
                    state.as_ref().and_then(|s| s["name"].as_str()).unwrap_or("friend"),
                    color.as_str().unwrap_or("?")
                )),
                _ => seal(json!({"round": 1})).and_then(|first| {
                    ask(json!({"step1": elicit("Step 1: What is your name?", "name", "string")}), Some(first))
                }),
            }
        }
        "test_input_required_result_tampered_state" => match state {
            Some(state) => match opened(Some(state)) {
                None => Err(ErrorData::invalid_params(
                    "requestState integrity check failed",
                    None,
                )),
                Some(_) if accepted(responses, "confirm", "ok").is_some() => {
                    done("integrity-ok: state verified".into())
                }
                Some(_) => seal(json!({"kind": "tamper-test"})).and_then(|state| {
                    ask(
                        json!({"confirm": elicit("Please confirm", "ok", "boolean")}),
                        Some(state),
                    )
                }),
            },
            None => seal(json!({"kind": "tamper-test"})).and_then(|state| {
                ask(
                    json!({"confirm": elicit("Please confirm", "ok", "boolean")}),
                    Some(state),
                )
            }),
        },
        "test_input_required_result_capabilities" => {
            if responses.is_some_and(|r| !r.is_empty()) {
                let keys: Vec<&str> = responses
                    .into_iter()
                    .flat_map(|r| r.keys())
                    .map(String::as_str)
                    .collect();
                return Some(done(format!(
                    "capabilities-ok: received {}",
                    keys.join(",")
                )));
            }
            let mut requests = serde_json::Map::new();
            if capabilities.is_some_and(|c| c.elicitation.is_some()) {
                requests.insert(
                    "elicit_input".into(),
                    elicit("Elicitation input", "value", "string"),
                );
            }
            if capabilities.is_some_and(|c| c.sampling.is_some()) {
                requests.insert("sample_input".into(), sample("Sample request", 50));
            }
            if requests.is_empty() {
                done("No supported capabilities declared".into())
            } else {
                seal(json!({"kind": "capabilities-test"}))
                    .and_then(|state| ask(Value::Object(requests), Some(state)))
            }
        }
        _ => return None,
    })
}

/// The MRTR prompt's answer; `None` for another prompt.
pub fn prompt(
    name: &str,
    responses: Option<&InputResponses>,
) -> Option<Result<GetPromptResponse, ErrorData>> {
    if name != "test_input_required_result_prompt" {
        return None;
    }
    Some(match accepted(responses, "user_context", "context").and_then(Value::as_str) {
        Some(context) => complete::<GetPromptResult>(json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": format!("Context: {context}")}}
        ]}))
        .map(Into::into),
        None => asking(
            json!({"user_context": elicit("What context should the prompt use?", "context", "string")}),
            None,
        )
        .map(GetPromptResponse::InputRequired),
    })
}
