//! Batches: how a write is carried out after the API has said 202.
//!
//! Mappy does not change Google Business Profile while the HTTP request waits: it queues a job
//! (Laravel's `jobs` table) and answers with a `batch_id` at once; the job then talks to Google,
//! one item per location. The simulator keeps that shape so concierge is built for it:
//!
//! ```text
//! 202 queued ──job_delay──▶ (held? wait for release) ──▶ running ──▶ succeeded | failed | partially_failed
//! ```
//!
//! Each item succeeds and its change is applied to the sample (the reply stored on the review, the
//! post added, the hours replaced), unless its location is SUSPENDED, or the test switched
//! failures on with [`Laravel::fail_jobs`](super::Laravel::fail_jobs). The simulator applies a
//! whole batch in one step, so `running` is passed through rather than seen.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, FixedOffset};
use serde_json::{Value, json};

use super::data::{Hours, LocationStatus, Post, Reply, Sample, TopicType, now, stamp};
use super::laravel::message;
use super::tenancy::Actor;
use super::{Shared, World};

const SUSPENDED: &str =
    "Google Business Profile: this location is suspended; changes are not accepted.";
const GBP_DOWN: &str = "Google Business Profile API error: 503 Service Unavailable";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BatchKind {
    ReviewReply,
    PostCreate,
    HoursUpdate,
}

impl BatchKind {
    fn as_str(self) -> &'static str {
        match self {
            BatchKind::ReviewReply => "review_reply",
            BatchKind::PostCreate => "post_create",
            BatchKind::HoursUpdate => "hours_update",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Queued,
    Running,
    Succeeded,
    Failed,
    PartiallyFailed,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Queued => "queued",
            Status::Running => "running",
            Status::Succeeded => "succeeded",
            Status::Failed => "failed",
            Status::PartiallyFailed => "partially_failed",
        }
    }
}

/// What one item does to its location when the job runs.
#[derive(Debug, Clone)]
pub(super) enum Change {
    Reply {
        review_id: u64,
        comment: String,
    },
    Post {
        summary: String,
        topic_type: TopicType,
        call_to_action: Option<Value>,
    },
    Hours(Hours),
}

#[derive(Debug)]
pub(super) struct Item {
    location_id: u64,
    status: Status,
    error: Option<String>,
    change: Change,
}

impl Item {
    pub(super) fn new(location_id: u64, change: Change) -> Self {
        Item {
            location_id,
            status: Status::Queued,
            error: None,
            change,
        }
    }
}

#[derive(Debug)]
pub(super) struct Batch {
    id: String,
    kind: BatchKind,
    /// The acting user that created it: the only one (besides a supervisor) who may read it.
    owner: u64,
    status: Status,
    items: Vec<Item>,
    created_at: DateTime<FixedOffset>,
    finished_at: Option<DateTime<FixedOffset>>,
}

impl Batch {
    pub(super) fn new(kind: BatchKind, owner: u64, items: Vec<Item>) -> Self {
        Batch {
            id: format!("b_{}", uuid::Uuid::new_v4().simple()),
            kind,
            owner,
            status: Status::Queued,
            items,
            created_at: now(),
            finished_at: None,
        }
    }

    pub(super) fn id(&self) -> &str {
        &self.id
    }

    /// The 202 answer to the write that created it.
    pub(super) fn accepted(&self) -> Value {
        let items: Vec<Value> = self
            .items
            .iter()
            .map(|item| json!({"location_id": item.location_id, "status": "queued"}))
            .collect();
        json!({"batch_id": self.id, "status": "queued", "items": items})
    }

    fn json(&self) -> Value {
        let items: Vec<Value> = self
            .items
            .iter()
            .map(|item| {
                let mut value = json!({
                    "location_id": item.location_id,
                    "status": item.status.as_str(),
                });
                if let (Value::Object(map), Some(error)) = (&mut value, &item.error) {
                    map.insert("error".into(), json!(error));
                }
                value
            })
            .collect();
        let mut value = json!({
            "batch_id": self.id,
            "type": self.kind.as_str(),
            "status": self.status.as_str(),
            "items": items,
            "created_at": stamp(&self.created_at),
        });
        if let (Value::Object(map), Some(finished)) = (&mut value, &self.finished_at) {
            map.insert("finished_at".into(), json!(stamp(finished)));
        }
        value
    }
}

/// Starts the job for a batch just created: wait `job_delay`, then for release while jobs are held
/// (a watch channel, so no polling), then run it.
pub(super) fn spawn(sim: Arc<Shared>, batch_id: String) {
    tokio::spawn(async move {
        tokio::time::sleep(sim.job_delay).await;
        let mut held = sim.held.subscribe();
        // An error means the sender is gone, which cannot happen while `sim` holds it.
        let _ = held.wait_for(|held| !*held).await;
        let failing = sim.failing.load(Ordering::SeqCst);
        let status = run(&mut sim.world(), &batch_id, failing);
        tracing::debug!(%batch_id, status, "mappy simulator batch finished");
    });
}

/// Carries out every item of a batch and settles its status; answers the status.
fn run(world: &mut World, batch_id: &str, failing: bool) -> &'static str {
    let World {
        sample, batches, ..
    } = world;
    let Some(batch) = batches.get_mut(batch_id) else {
        return "missing";
    };
    batch.status = Status::Running;
    for item in &mut batch.items {
        let refusal = if failing {
            Some(GBP_DOWN)
        } else {
            match sample
                .location(item.location_id)
                .map(|location| location.status)
            {
                None => Some("Location not found."),
                Some(LocationStatus::Suspended) => Some(SUSPENDED),
                Some(LocationStatus::Open) => None,
            }
        };
        let outcome = match refusal {
            Some(error) => Err(error.to_owned()),
            None => apply(sample, item.location_id, &item.change),
        };
        match outcome {
            Ok(()) => item.status = Status::Succeeded,
            Err(error) => {
                item.status = Status::Failed;
                item.error = Some(error);
            }
        }
    }
    let succeeded = batch
        .items
        .iter()
        .filter(|i| i.status == Status::Succeeded)
        .count();
    batch.status = if succeeded == batch.items.len() {
        Status::Succeeded
    } else if succeeded == 0 {
        Status::Failed
    } else {
        Status::PartiallyFailed
    };
    batch.finished_at = Some(now());
    batch.status.as_str()
}

/// Applies one item's change to the sample, as the job would to Google and Mappy's copy.
fn apply(sample: &mut Sample, location_id: u64, change: &Change) -> Result<(), String> {
    match change {
        Change::Reply { review_id, comment } => {
            let review = sample
                .reviews
                .iter_mut()
                .find(|review| review.id == *review_id)
                .ok_or("Review not found.")?;
            review.reply = Some(Reply {
                comment: comment.clone(),
                updated_at: now(),
            });
        }
        Change::Post {
            summary,
            topic_type,
            call_to_action,
        } => {
            let id = sample.posts.iter().map(|post| post.id).max().unwrap_or(0) + 1;
            sample.posts.push(Post {
                id,
                location_id,
                summary: summary.clone(),
                topic_type: *topic_type,
                created_at: now(),
                call_to_action: call_to_action.clone(),
            });
        }
        Change::Hours(hours) => {
            let location = sample
                .location_mut(location_id)
                .ok_or("Location not found.")?;
            location.hours = hours.clone();
        }
    }
    Ok(())
}

/// `GET /batches/{batch_id}`: only for the user that created the batch, or a supervisor; anyone
/// else gets the same 404 as for an unknown id.
pub(super) async fn batch(
    State(sim): State<Arc<Shared>>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
) -> Response {
    let world = sim.world();
    let found = path
        .ok()
        .and_then(|Path(id)| world.batches.get(&id))
        .filter(|batch| batch.owner == actor.0.id || actor.0.is_supervisor());
    match found {
        Some(batch) => Json(json!({ "data": batch.json() })).into_response(),
        None => message(StatusCode::NOT_FOUND, "Batch not found."),
    }
}
