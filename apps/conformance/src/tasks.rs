//! The fixtures of the Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663): tools that
//! answer a task handle to a client that declared the extension, tasks that finish, fail, wait
//! for input or are cancelled, and `tasks/get`, `tasks/update`, `tasks/cancel` over them.
//!
//! Tasks live in this process's memory for [`TTL`]; a fixture needs no more.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, CreateTaskResult, DetailedTask,
    GetTaskResult, InputRequests, InputResponses, JsonObject, Task, TaskPayload, TaskStatus,
};
use serde_json::{Value, json};

use crate::{complete, model};

/// How long a task stays retrievable after it was last updated.
const TTL: Duration = Duration::from_secs(300);
const POLL_MS: u64 = 200;

static TASKS: LazyLock<Mutex<HashMap<String, Entry>>> = LazyLock::new(Mutex::default);

struct Entry {
    created: String,
    updated: String,
    state: State,
    /// What the task finishes with once its pending input is answered.
    then: Option<Finish>,
}

#[derive(Clone)]
enum State {
    Working,
    InputRequired(serde_json::Map<String, Value>),
    Completed(JsonObject),
    Failed(JsonObject),
    Cancelled,
}

/// How a task waiting for input finishes.
#[derive(Clone)]
enum Finish {
    Delete(String),
    Greeting,
}

pub fn tools() -> Vec<Value> {
    let tool = |name: &str, description: &str, properties: Value| json!({"name": name, "description": description, "inputSchema": {"type": "object", "properties": properties}});
    vec![
        tool(
            "greet",
            "Greets at once (never a task)",
            json!({"name": {"type": "string"}}),
        ),
        tool(
            "slow_compute",
            "Computes for a while; a task for a client that declared tasks",
            json!({"seconds": {"type": "number"}, "label": {"type": "string"}}),
        ),
        tool(
            "failing_job",
            "A task whose tool reports an error (needs the tasks extension)",
            json!({}),
        ),
        tool(
            "protocol_error_job",
            "A task that fails with a JSON-RPC error (needs the tasks extension)",
            json!({}),
        ),
        tool(
            "confirm_delete",
            "A task that asks for a confirmation",
            json!({"filename": {"type": "string"}}),
        ),
        tool(
            "multi_input",
            "A task that asks for two inputs at once",
            json!({}),
        ),
        tool(
            "test_tool_with_task",
            "Asks for a name (MRTR), then runs as a task",
            json!({}),
        ),
    ]
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn declared(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities.is_some_and(ClientCapabilities::supports_tasks)
}

/// `-32021`: the request's client did not declare the extension this needs.
pub fn missing_extension() -> ErrorData {
    match model::<ClientCapabilities>(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}))
    {
        Ok(required) => ErrorData::missing_required_client_capability(required),
        Err(error) => error,
    }
}

fn text(text: &str, is_error: bool) -> JsonObject {
    let mut result = json!({"content": [{"type": "text", "text": text}]});
    if is_error {
        result["isError"] = json!(true);
    }
    result.as_object().cloned().unwrap_or_default()
}

fn lock() -> std::sync::MutexGuard<'static, HashMap<String, Entry>> {
    TASKS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A new task in `state`, stored before its handle is answered (a `tasks/get` finds it at once).
fn create(state: State, then: Option<Finish>) -> CallToolResponse {
    let id = {
        let mut bytes = [0u8; 12];
        getrandom::fill(&mut bytes).expect("the system's random source");
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let at = now();
    let task = Task::new(id.clone(), TaskStatus::Working, at.clone(), at.clone())
        .with_ttl_ms(TTL.as_millis() as u64)
        .with_poll_interval_ms(POLL_MS);
    lock().insert(
        id,
        Entry {
            created: at.clone(),
            updated: at,
            state,
            then,
        },
    );
    CallToolResponse::Task(CreateTaskResult::new(task))
}

fn set(id: &str, state: State) {
    if let Some(entry) = lock().get_mut(id) {
        // A cancelled task stays cancelled, whatever its work finishes with.
        if !matches!(entry.state, State::Cancelled) {
            entry.state = state;
            entry.updated = now();
        }
    }
}

/// Finishes task `id` with `state` after `delay`, unless it was cancelled.
fn finish_later(id: String, delay: Duration, state: State) {
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        set(&id, state);
    });
}

fn task_id(response: &CallToolResponse) -> String {
    match response {
        CallToolResponse::Task(created) => created.task.task_id.clone(),
        _ => String::new(),
    }
}

fn elicit(message: &str, field: &str, kind: &str) -> Value {
    json!({"method": "elicitation/create", "params": {
        "message": message,
        "requestedSchema": {"type": "object", "properties": {field: {"type": kind}}, "required": [field]},
    }})
}

/// One of these tools' answer; `None` for another tool.
pub fn call(
    name: &str,
    arguments: &JsonObject,
    responses: Option<&InputResponses>,
    capabilities: Option<&ClientCapabilities>,
) -> Option<Result<CallToolResponse, ErrorData>> {
    let tasks = declared(capabilities);
    let sync = |text: String| -> Result<CallToolResponse, ErrorData> {
        let result: CallToolResult =
            complete(json!({"content": [{"type": "text", "text": text}]}))?;
        Ok(result.into())
    };
    Some(match name {
        "greet" => sync(format!(
            "Hello, {}!",
            arguments
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("World")
        )),
        "slow_compute" => {
            let seconds = arguments
                .get("seconds")
                .and_then(Value::as_f64)
                .unwrap_or(0.0)
                .clamp(0.0, 120.0);
            let label = arguments
                .get("label")
                .and_then(Value::as_str)
                .unwrap_or("job")
                .to_string();
            let done = format!("{label}: computed in {seconds} s");
            if !tasks {
                return Some(sync(done));
            }
            let created = create(State::Working, None);
            finish_later(
                task_id(&created),
                Duration::from_secs_f64(seconds),
                State::Completed(text(&done, false)),
            );
            Ok(created)
        }
        "failing_job"
        | "protocol_error_job"
        | "confirm_delete"
        | "multi_input"
        | "test_tool_with_task"
            if !tasks =>
        {
            Err(missing_extension())
        }
        "failing_job" => {
            let created = create(State::Working, None);
            finish_later(
                task_id(&created),
                Duration::from_millis(300),
                State::Completed(text("the job failed", true)),
            );
            Ok(created)
        }
        "protocol_error_job" => {
            let created = create(State::Working, None);
            let error = json!({"code": -32603, "message": "the job hit an internal error"});
            finish_later(
                task_id(&created),
                Duration::from_millis(300),
                State::Failed(error.as_object().cloned().unwrap_or_default()),
            );
            Ok(created)
        }
        "confirm_delete" => {
            let file = arguments
                .get("filename")
                .and_then(Value::as_str)
                .unwrap_or("file")
                .to_string();
            let ask = json!({"confirm": elicit(&format!("Delete {file}?"), "confirm", "boolean")});
            Ok(create(
                State::InputRequired(ask.as_object().cloned().unwrap_or_default()),
                Some(Finish::Delete(file)),
            ))
        }
        "multi_input" => {
            let ask = json!({
                "name": elicit("What is your name?", "name", "string"),
                "confirm": elicit("Shall we go on?", "confirm", "boolean"),
            });
            Ok(create(
                State::InputRequired(ask.as_object().cloned().unwrap_or_default()),
                Some(Finish::Greeting),
            ))
        }
        "test_tool_with_task" => {
            let person = responses
                .and_then(|r| r.get("user_name"))
                .filter(|answer| answer.get("action").is_some_and(|a| a == "accept"))
                .and_then(|answer| answer.pointer("/content/name"))
                .and_then(Value::as_str);
            match person {
                Some(person) => Ok(create(
                    State::Completed(text(&format!("Hello, {person}!"), false)),
                    None,
                )),
                None => {
                    let requests: Result<InputRequests, _> = serde_json::from_value(
                        json!({"user_name": elicit("What is your name?", "name", "string")}),
                    );
                    requests
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
                        .map(|requests| {
                            CallToolResponse::InputRequired(rmcp::model::InputRequiredResult::new(
                                Some(requests),
                                None,
                            ))
                        })
                }
            }
        }
        _ => return None,
    })
}

fn detailed(id: &str, entry: &Entry) -> Result<GetTaskResult, ErrorData> {
    let payload = match &entry.state {
        State::Working => TaskPayload::Working,
        State::InputRequired(requests) => TaskPayload::InputRequired {
            input_requests: serde_json::from_value(Value::Object(requests.clone()))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
        },
        State::Completed(result) => TaskPayload::Completed {
            result: result.clone(),
        },
        State::Failed(error) => TaskPayload::Failed {
            error: error.clone(),
        },
        State::Cancelled => TaskPayload::Cancelled,
    };
    let task = Task::new(
        id,
        TaskStatus::Working,
        entry.created.clone(),
        entry.updated.clone(),
    )
    .with_ttl_ms(TTL.as_millis() as u64)
    .with_poll_interval_ms(POLL_MS);
    Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
}

fn unknown(id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("no task `{id}`"), None)
}

/// `tasks/get`.
pub fn get(
    id: &str,
    capabilities: Option<&ClientCapabilities>,
) -> Result<GetTaskResult, ErrorData> {
    if !declared(capabilities) {
        return Err(missing_extension());
    }
    let tasks = lock();
    let entry = tasks.get(id).ok_or_else(|| unknown(id))?;
    detailed(id, entry)
}

/// `tasks/update`: answered inputs leave the task's requests; with none left it finishes.
pub fn update(
    id: &str,
    responses: &InputResponses,
    capabilities: Option<&ClientCapabilities>,
) -> Result<(), ErrorData> {
    if !declared(capabilities) {
        return Err(missing_extension());
    }
    let mut tasks = lock();
    let entry = tasks.get_mut(id).ok_or_else(|| unknown(id))?;
    let State::InputRequired(pending) = &mut entry.state else {
        return Ok(());
    };
    let mut answers = serde_json::Map::new();
    for (key, answer) in responses {
        if pending.remove(key).is_some() {
            answers.insert(key.clone(), answer.clone());
        }
    }
    if pending.is_empty() {
        let result = match &entry.then {
            Some(Finish::Delete(file)) => {
                let yes = answers
                    .values()
                    .any(|a| a.pointer("/content/confirm") == Some(&json!(true)));
                text(
                    &if yes {
                        format!("Deleted {file}")
                    } else {
                        format!("Kept {file}")
                    },
                    false,
                )
            }
            _ => text("All inputs received", false),
        };
        entry.state = State::Completed(result);
    }
    entry.updated = now();
    Ok(())
}

/// `tasks/cancel`: a task not yet finished is cancelled; a finished one is left as it is.
pub fn cancel(id: &str, capabilities: Option<&ClientCapabilities>) -> Result<(), ErrorData> {
    if !declared(capabilities) {
        return Err(missing_extension());
    }
    let mut tasks = lock();
    let entry = tasks.get_mut(id).ok_or_else(|| unknown(id))?;
    if matches!(entry.state, State::Working | State::InputRequired(_)) {
        entry.state = State::Cancelled;
        entry.updated = now();
    }
    Ok(())
}
