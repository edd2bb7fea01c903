//! The fake app `fake`: tools that echo, hang, panic or write slowly, each with the input schema
//! its test needs — a stand-in for an app that knows nothing of the platform, as a real one.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use concierge_core::{
    Annotations, CallContext, FollowUp, Tool, ToolFuture, ToolSet, ToolSpec, WriteSafety,
};
use concierge_server::Apps;
use serde_json::{Map, Value, json};
use tokio::sync::Notify;

/// What a fake tool does with a call.
#[derive(Clone)]
pub enum Behaviour {
    /// Answers `{"said": <its text argument>}`.
    Echo,
    /// Answers `{"said": <all its arguments>}`.
    EchoAll,
    /// Never answers.
    Hang,
    /// Panics.
    Panic,
    /// A write that says when it starts, then waits for the test to let it finish.
    SlowWrite(Arc<WriteSignals>),
    /// A write that counts the times it really wrote (a dry run or a preview does not count).
    CountedWrite(Arc<AtomicUsize>),
    /// A write that starts a background job (`{"job_id": …}`), followed with the tool `status`
    /// (a client that declared MCP Tasks gets it as a task).
    Job,
    /// The job's status tool: `{"status": "done"}` for any `job_id`.
    JobStatus,
}

/// [`Behaviour::SlowWrite`]'s signals: started, may finish, finished.
#[derive(Default)]
pub struct WriteSignals {
    pub started: Notify,
    pub released: Notify,
    pub finished: Notify,
}

pub struct FakeTool {
    spec: ToolSpec,
    behaviour: Behaviour,
}

/// `{"text": string ≤ 20}`, required, nothing else: what most tests send.
pub fn text_schema() -> Map<String, Value> {
    object(json!({
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": 20}},
        "required": ["text"],
        "additionalProperties": false,
    }))
}

/// A JSON object literal as a map (the test's own literals are objects).
pub fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

impl FakeTool {
    /// Tool `name` doing `behaviour` over [`text_schema`].
    pub fn arc(name: &str, behaviour: Behaviour) -> Arc<dyn Tool> {
        Self::with_schema(name, behaviour, text_schema())
    }

    /// Tool `name` doing `behaviour` over `input_schema`; a write when it writes.
    pub fn with_schema(
        name: &str,
        behaviour: Behaviour,
        input_schema: Map<String, Value>,
    ) -> Arc<dyn Tool> {
        let annotations = match behaviour {
            Behaviour::SlowWrite(_) => Annotations::additive_write(),
            Behaviour::Job => Annotations::additive_write(),
            Behaviour::CountedWrite(_) => Annotations {
                destructive: true,
                ..Annotations::additive_write()
            },
            _ => Annotations::read_only(),
        };
        let mut spec = ToolSpec::new(
            name,
            "a tool of the test",
            input_schema,
            object(json!({"type": "object"})),
            annotations,
        );
        if let Behaviour::CountedWrite(_) = behaviour {
            // Write safety with a confirmation: a preview first, then the write.
            spec.write = Some(WriteSafety::confirmed(true));
        }
        if let Behaviour::Job = behaviour {
            spec.write = Some(WriteSafety::confirmed(false));
            spec.follow_up = Some(FollowUp {
                id_field: "job_id".into(),
                status_tool: "status".into(),
                state_field: "status".into(),
                pending: vec!["running".into()],
                failed: vec!["failed".into()],
            });
        }
        Arc::new(Self { spec, behaviour })
    }
}

impl Tool for FakeTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn dry_run(&self) -> Option<&dyn concierge_core::DryRun> {
        match self.behaviour {
            Behaviour::CountedWrite(_) => Some(self),
            _ => None,
        }
    }

    fn call(&self, arguments: Value, _: CallContext) -> ToolFuture<'_> {
        let behaviour = self.behaviour.clone();
        Box::pin(async move {
            match behaviour {
                Behaviour::Echo => Ok(json!({"said": arguments["text"]})),
                Behaviour::EchoAll => Ok(json!({"said": arguments})),
                Behaviour::Hang => std::future::pending().await,
                Behaviour::Panic => panic!("the tool broke"),
                Behaviour::Job => Ok(json!({"job_id": "j-1"})),
                Behaviour::JobStatus => {
                    Ok(json!({"status": "done", "job_id": arguments["job_id"]}))
                }
                Behaviour::CountedWrite(count) => {
                    let written = count.fetch_add(1, Ordering::SeqCst) + 1;
                    Ok(json!({"written": written}))
                }
                Behaviour::SlowWrite(signals) => {
                    signals.started.notify_one();
                    signals.released.notified().await;
                    signals.finished.notify_one();
                    Ok(json!({"written": arguments["text"]}))
                }
            }
        })
    }
}

/// The counted write's own dry run: what it would write.
impl concierge_core::DryRun for FakeTool {
    fn dry_run(&self, arguments: Value, _: CallContext) -> ToolFuture<'_> {
        Box::pin(async move { Ok(json!({"wouldWrite": arguments["text"]})) })
    }
}

/// The app `fake`, offering `tools` (in English).
pub fn fake_app(tools: Vec<Arc<dyn Tool>>) -> Apps {
    Apps::new().tools("fake", move |_| {
        Ok(ToolSet::new(
            "fake",
            &concierge_core::messages::ENGLISH,
            tools.clone(),
        ))
    })
}
