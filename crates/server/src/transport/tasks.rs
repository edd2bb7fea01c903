//! MCP Tasks for writes that declare a [`FollowUp`]: the task id names the job and the status
//! tool, sealed to the caller (`<status tool>~<job id>~<seal>`), so nothing is stored and only the
//! caller that started the job can follow it. Our types here; `handler.rs` turns them into the
//! protocol's.
//!
//! [`FollowUp`]: concierge_core::FollowUp

use std::time::Duration;

use concierge_core::Caller;
use serde_json::{Value, json};

use crate::endpoint::{CallAnswer, Endpoint, ToolAnswer};
use crate::pipeline::RequestRecord;

/// How long a task id stays valid.
pub const TTL: Duration = Duration::from_secs(24 * 3600);
/// How often a client is asked to poll, in milliseconds.
pub const POLL_MS: u64 = 2000;
const SEPARATOR: char = '~';

/// A call that became a task: its id and its first status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskHandle {
    pub id: String,
    pub status_message: String,
}

/// Where a followed job stands.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskState {
    pub id: String,
    /// The job's state as the status tool names it.
    pub status_message: String,
    /// `None` while the job runs; its status tool's last answer once it is done (an error
    /// answer when the state is one of `failed`).
    pub done: Option<ToolAnswer>,
}

/// Why `tasks/get` has no state to give.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskError {
    /// Not a task of this caller on this endpoint (or not a task at all).
    Unknown,
    /// The status cannot be had right now (the backend failing, a rate limit): poll again.
    Unavailable(Option<Value>),
    /// The status tool's answer broke its schema (only with output checks on).
    Broken(String),
}

fn binding(endpoint: &str, caller: &Caller, status_tool: &str, job: &str) -> String {
    format!(
        "task\u{0}{endpoint}\u{0}{}\u{0}{}\u{0}{status_tool}\u{0}{job}",
        caller.client,
        caller.user.as_deref().unwrap_or("")
    )
}

impl Endpoint {
    /// Whether a client that supports tasks may get some call here as a task.
    pub fn offers_tasks(&self) -> bool {
        self.writes_store().is_some() && self.tools().iter().any(|t| t.spec().follow_up.is_some())
    }

    /// The task handle for a finished call of `tool` whose answer names a background job. None
    /// also while the write secret cannot be had: the answer goes out as a plain result, whose
    /// job id the caller can follow with the status tool.
    pub async fn task_for(
        &self,
        tool: &str,
        caller: &Caller,
        answer: &ToolAnswer,
    ) -> Option<TaskHandle> {
        let writes = self.writes_store()?;
        let follow = self.tool(tool)?.spec().follow_up.clone()?;
        if answer.is_error || self.tool(&follow.status_tool).is_none() {
            return None;
        }
        let job = answer
            .structured
            .as_ref()?
            .get(&follow.id_field)?
            .as_str()?;
        if job.contains(SEPARATOR) || follow.status_tool.contains(SEPARATOR) {
            return None;
        }
        let seal = writes
            .seal(&binding(&self.path, caller, &follow.status_tool, job), TTL)
            .await
            .ok()?;
        if let Some(metrics) = crate::telemetry::metrics::get() {
            metrics.task("created");
        }
        Some(TaskHandle {
            id: format!("{}{SEPARATOR}{job}{SEPARATOR}{seal}", follow.status_tool),
            status_message: format!("{} {job} accepted", follow.id_field),
        })
    }

    /// The status tool and job a task id names, when it was sealed for `caller` here.
    pub async fn callers_task<'a>(
        &self,
        task_id: &'a str,
        caller: &Caller,
    ) -> Result<(&'a str, &'a str), TaskError> {
        let writes = self.writes_store().ok_or(TaskError::Unknown)?;
        let mut parts = task_id.splitn(3, SEPARATOR);
        let (Some(status_tool), Some(job), Some(seal)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(TaskError::Unknown);
        };
        writes
            .unseal(seal, &binding(&self.path, caller, status_tool, job))
            .await
            .map_err(|_| TaskError::Unavailable(None))?
            .map_err(|_| TaskError::Unknown)?;
        Ok((status_tool, job))
    }

    /// `tasks/get`: asks the status tool, as the caller, and reports the job's state. The status
    /// call is the request's tool call: audited and rate limited like any.
    pub async fn task_state(
        &self,
        task_id: &str,
        caller: Caller,
        rpc_id: Value,
        record: &RequestRecord,
    ) -> Result<TaskState, TaskError> {
        let (status_tool, job) = self.callers_task(task_id, &caller).await?;
        let follow = self
            .tools()
            .iter()
            .filter_map(|t| t.spec().follow_up.clone())
            .find(|f| f.status_tool == status_tool)
            .ok_or(TaskError::Unknown)?;
        let mut arguments = serde_json::Map::new();
        arguments.insert(follow.id_field.clone(), json!(job));
        let mut answer = match self
            .call(status_tool, Some(arguments), caller, rpc_id, record)
            .await
        {
            CallAnswer::Result(answer) => answer,
            CallAnswer::BrokenOutput(message) => return Err(TaskError::Broken(message)),
            CallAnswer::UnknownTool(_) => return Err(TaskError::Unknown),
            // A status tool reads; it never asks the user.
            CallAnswer::InputRequired { .. } => {
                return Err(TaskError::Broken("a status tool asked for input".into()));
            }
        };
        if answer.is_error {
            // The job itself is not known to have failed: the client polls again.
            return Err(TaskError::Unavailable(
                serde_json::from_str(&answer.text).ok(),
            ));
        }
        let state = answer
            .structured
            .as_ref()
            .and_then(|s| s.get(&follow.state_field))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let done = if follow.pending.contains(&state) {
            None
        } else {
            answer.is_error = follow.failed.contains(&state);
            if let Some(metrics) = crate::telemetry::metrics::get() {
                metrics.task(if answer.is_error {
                    "failed"
                } else {
                    "completed"
                });
            }
            Some(answer)
        };
        Ok(TaskState {
            id: task_id.to_string(),
            status_message: state,
            done,
        })
    }
}
