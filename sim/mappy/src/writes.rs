//! The write endpoints: reply to a review, create a post, replace opening hours.
//!
//! All three share one path through the API, [`write`]:
//!
//! 1. `Idempotency-Key` is required (1..255 characters), dry run or not (422).
//! 2. The body must be a JSON object (422); `dry_run`, when present, a boolean (422).
//! 3. Not a dry run: the API's own duplicate guard. The same key from the same acting user with the
//!    same method, path and body (compared as parsed JSON) gets the first answer again (same
//!    `batch_id`, same status) and creates nothing; the same key with anything else is 409.
//! 4. The endpoint's own checks: what it targets is visible to the acting user (404, worded like an
//!    unknown id), then the fields (422).
//! 5. A dry run answers 200 with the changes it would make; otherwise a batch is queued (202) and
//!    the answer remembered under the key.
//!
//! Only accepted writes are remembered: a refused request leaves the key free, so the corrected
//! request can use it. Dry runs neither consult nor fill the store, so a client can preview with
//! the key it will then use for the real write. The real API forgets keys after 24 hours (seed §8);
//! the simulator keeps them while it runs.
//!
//! Writes act in the acting user's own scope; they take no `user_id`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{FromRequest, FromRequestParts, Path, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::Shared;
use super::data::{Sample, TopicType, hours_json, parse_hours};
use super::jobs::{self, Batch, BatchKind, Change, Item};
use super::laravel::{Errors, label, message, unreadable_body};
use super::reads::visible_location;
use super::tenancy::{Actor, View, scope};

type Answer = Result<Response, Response>;

const MAX_KEY_CHARS: usize = 255;
const MAX_REPLY_CHARS: usize = 4096;
const MAX_SUMMARY_CHARS: usize = 1500;
const MAX_POST_LOCATIONS: usize = 50;
const CALL_TO_ACTION_TYPES: [&str; 4] = ["LEARN_MORE", "BOOK", "ORDER", "CALL"];

/// An accepted write, kept to answer its repetition.
pub(super) struct Remembered {
    method: Method,
    path: String,
    body: Value,
    answer: Value,
}

/// What a write will do, worked out and validated before anything is created.
struct Plan {
    kind: BatchKind,
    /// The dry run's `changes`: `{location_id, field, from, to}` (and `review_id` for replies).
    changes: Vec<Value>,
    items: Vec<Item>,
}

/// A write request as [`write`] needs it: an extractor, so each endpoint names only what is its
/// own (the path's id) and the checks every write shares stay in [`write`]. The body is taken
/// as it came: an unreadable one is the API's 422, not axum's rejection.
pub(super) struct Incoming {
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
    actor: Actor,
}

impl FromRequest<Arc<Shared>> for Incoming {
    type Rejection = Response;

    async fn from_request(request: Request, sim: &Arc<Shared>) -> Result<Self, Response> {
        let (mut parts, body) = request.into_parts();
        let actor = Actor::from_request_parts(&mut parts, sim).await?;
        let (method, uri, headers) = (
            parts.method.clone(),
            parts.uri.clone(),
            parts.headers.clone(),
        );
        let body = Bytes::from_request(Request::from_parts(parts, body), sim).await;
        Ok(Self {
            method,
            uri,
            headers,
            body,
            actor,
        })
    }
}

/// `POST /reviews/{review_id}/reply` `{"comment"}`.
pub(super) async fn reply(
    State(sim): State<Arc<Shared>>,
    path: Result<Path<String>, PathRejection>,
    request: Incoming,
) -> Answer {
    let review_id = path.ok().and_then(|Path(id)| id.parse::<u64>().ok());
    write(&sim, request, |sample, view, fields| {
        let review = review_id
            .and_then(|id| sample.review(id))
            .filter(|review| view.locations.contains(&review.location_id))
            .ok_or_else(|| message(StatusCode::NOT_FOUND, "Review not found."))?;
        let mut errors = Errors::default();
        let comment = text_field(fields, "comment", MAX_REPLY_CHARS, &mut errors);
        errors.check()?;
        let comment = comment.ok_or_else(invalid)?;
        Ok(Plan {
            kind: BatchKind::ReviewReply,
            changes: vec![json!({
                "location_id": review.location_id,
                "field": "review_reply",
                "review_id": review.id,
                "from": review.reply.as_ref().map(|reply| reply.comment.as_str()),
                "to": comment,
            })],
            items: vec![Item::new(
                review.location_id,
                Change::Reply {
                    review_id: review.id,
                    comment,
                },
            )],
        })
    })
}

/// `POST /posts` `{"location_ids", "summary", "topic_type", "call_to_action"?}`: one item per
/// location.
pub(super) async fn posts(State(sim): State<Arc<Shared>>, request: Incoming) -> Answer {
    write(&sim, request, |sample, view, fields| {
        let mut errors = Errors::default();
        let ids = location_ids(fields, &mut errors);
        let summary = text_field(fields, "summary", MAX_SUMMARY_CHARS, &mut errors);
        let topic_type = match fields.get("topic_type") {
            None | Some(Value::Null) => {
                errors.add("topic_type", "The topic type field is required.");
                None
            }
            Some(value) => {
                let topic = value.as_str().and_then(TopicType::parse);
                if topic.is_none() {
                    errors.add("topic_type", "The selected topic type is invalid.");
                }
                topic
            }
        };
        let call_to_action = call_to_action(fields, &mut errors);
        errors.check()?;
        let (Some(ids), Some(summary), Some(topic_type)) = (ids, summary, topic_type) else {
            return Err(invalid());
        };
        // Validation first, then tenancy, as Laravel runs a FormRequest before the controller.
        if let Some(hidden) = ids
            .iter()
            .find(|id| !view.locations.contains(*id) || sample.location(**id).is_none())
        {
            return Err(message(
                StatusCode::NOT_FOUND,
                &format!("Location {hidden} not found."),
            ));
        }
        let changes = ids
            .iter()
            .map(|id| json!({"location_id": id, "field": "post", "from": null, "to": summary}))
            .collect();
        let items = ids
            .iter()
            .map(|id| {
                let change = Change::Post {
                    summary: summary.clone(),
                    topic_type,
                    call_to_action: call_to_action.clone(),
                };
                Item::new(*id, change)
            })
            .collect();
        Ok(Plan {
            kind: BatchKind::PostCreate,
            changes,
            items,
        })
    })
}

/// `PUT /locations/{id}/hours` `{"regular_hours"}`: replaces the whole week; a day left out (or
/// given as `[]`) is closed.
pub(super) async fn hours(
    State(sim): State<Arc<Shared>>,
    path: Result<Path<String>, PathRejection>,
    request: Incoming,
) -> Answer {
    write(&sim, request, |sample, view, fields| {
        let location = visible_location(sample, view, &path)?;
        let mut errors = Errors::default();
        let hours = match fields.get("regular_hours") {
            None | Some(Value::Null) => {
                errors.add("regular_hours", "The regular hours field is required.");
                None
            }
            Some(value) => parse_hours(value, "regular_hours", &mut errors),
        };
        errors.check()?;
        let hours = hours.ok_or_else(invalid)?;
        Ok(Plan {
            kind: BatchKind::HoursUpdate,
            changes: vec![json!({
                "location_id": location.id,
                "field": "regular_hours",
                "from": hours_json(&location.hours),
                "to": hours_json(&hours),
            })],
            items: vec![Item::new(location.id, Change::Hours(hours))],
        })
    })
}

/// The path every write takes (the module docs list the steps).
fn write(
    sim: &Arc<Shared>,
    request: Incoming,
    plan: impl FnOnce(&Sample, &View, &Map<String, Value>) -> Result<Plan, Response>,
) -> Answer {
    let Incoming {
        method,
        uri,
        headers,
        body,
        actor,
    } = request;
    let key = idempotency_key(&headers)?;
    let fields = match body.map(|bytes| serde_json::from_slice::<Value>(&bytes)) {
        Ok(Ok(Value::Object(fields))) => fields,
        _ => return Err(unreadable_body()),
    };
    let dry_run = match fields.get("dry_run") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(dry_run)) => *dry_run,
        Some(_) => {
            let mut errors = Errors::default();
            errors.add("dry_run", "The dry run field must be true or false.");
            return Err(errors.into_response());
        }
    };
    let actor = &actor.0;
    let path = uri.path().to_owned();
    let body = Value::Object(fields);
    // One lock from the duplicate check to the batch's creation, so two identical requests racing
    // each other still create one batch.
    let (batch_id, answer) = {
        let mut world = sim.world();
        let remembered_key = (actor.id, key);
        if !dry_run && let Some(seen) = world.remembered.get(&remembered_key) {
            if seen.method == method && seen.path == path && seen.body == body {
                tracing::debug!(key = %remembered_key.1, "mappy simulator replays a write");
                return Ok((StatusCode::ACCEPTED, Json(seen.answer.clone())).into_response());
            }
            return Err(message(
                StatusCode::CONFLICT,
                "This Idempotency-Key was used for a different request.",
            ));
        }
        let view = scope(&world.sample, actor);
        let Value::Object(fields) = &body else {
            return Err(unreadable_body());
        };
        let plan = plan(&world.sample, &view, fields)?;
        if dry_run {
            return Ok(Json(json!({"dry_run": true, "changes": plan.changes})).into_response());
        }
        let batch = Batch::new(plan.kind, actor.id, plan.items);
        let batch_id = batch.id().to_owned();
        let answer = batch.accepted();
        world.batches.insert(batch_id.clone(), batch);
        world.remembered.insert(
            remembered_key,
            Remembered {
                method,
                path,
                body,
                answer: answer.clone(),
            },
        );
        sim.batches_created.fetch_add(1, Ordering::SeqCst);
        (batch_id, answer)
    };
    jobs::spawn(Arc::clone(sim), batch_id);
    Ok((StatusCode::ACCEPTED, Json(answer)).into_response())
}

/// The `Idempotency-Key` header, 1..255 characters.
fn idempotency_key(headers: &HeaderMap) -> Result<String, Response> {
    let problem = match headers.get("idempotency-key").map(|value| value.to_str()) {
        None => "The idempotency key field is required.".to_owned(),
        Some(Ok(key)) if key.trim().is_empty() => {
            "The idempotency key field is required.".to_owned()
        }
        Some(Ok(key)) if key.chars().count() > MAX_KEY_CHARS => {
            format!(
                "The idempotency key field must not be greater than {MAX_KEY_CHARS} characters."
            )
        }
        Some(Ok(key)) => return Ok(key.to_owned()),
        Some(Err(_)) => "The idempotency key field must be printable ASCII.".to_owned(),
    };
    let mut errors = Errors::default();
    errors.add("idempotency_key", problem);
    Err(errors.into_response())
}

/// A required string of at most `max` characters (a blank one counts as missing).
fn text_field(
    fields: &Map<String, Value>,
    name: &str,
    max: usize,
    errors: &mut Errors,
) -> Option<String> {
    match fields.get(name) {
        Some(Value::String(text)) if text.trim().is_empty() => {
            errors.add(name, format!("The {} field is required.", label(name)));
            None
        }
        Some(Value::String(text)) if text.chars().count() > max => {
            errors.add(
                name,
                format!(
                    "The {} field must not be greater than {max} characters.",
                    label(name)
                ),
            );
            None
        }
        Some(Value::String(text)) => Some(text.clone()),
        None | Some(Value::Null) => {
            errors.add(name, format!("The {} field is required.", label(name)));
            None
        }
        Some(_) => {
            errors.add(name, format!("The {} field must be a string.", label(name)));
            None
        }
    }
}

/// `location_ids`: 1..50 distinct integers. Each bad element is named (`location_ids.2`).
fn location_ids(fields: &Map<String, Value>, errors: &mut Errors) -> Option<Vec<u64>> {
    const FIELD: &str = "location_ids";
    let list = match fields.get(FIELD) {
        None | Some(Value::Null) => {
            errors.add(FIELD, "The location ids field is required.");
            return None;
        }
        Some(Value::Array(list)) => list,
        Some(_) => {
            errors.add(FIELD, "The location ids field must be an array.");
            return None;
        }
    };
    if list.is_empty() {
        errors.add(FIELD, "The location ids field must have at least 1 item.");
        return None;
    }
    if list.len() > MAX_POST_LOCATIONS {
        errors.add(
            FIELD,
            format!("The location ids field must not have more than {MAX_POST_LOCATIONS} items."),
        );
        return None;
    }
    let mut ids = Vec::with_capacity(list.len());
    for (index, value) in list.iter().enumerate() {
        let field = format!("{FIELD}.{index}");
        match value.as_u64() {
            Some(id) if ids.contains(&id) => {
                errors.add(&field, format!("The {field} field has a duplicate value."));
            }
            Some(id) => ids.push(id),
            None => errors.add(&field, format!("The {field} field must be an integer.")),
        }
    }
    Some(ids)
}

/// The optional button: `{"type": LEARN_MORE|BOOK|ORDER|CALL, "url"?: http(s) URL}`.
fn call_to_action(fields: &Map<String, Value>, errors: &mut Errors) -> Option<Value> {
    let action = match fields.get("call_to_action") {
        None | Some(Value::Null) => return None,
        Some(Value::Object(action)) => action,
        Some(_) => {
            errors.add(
                "call_to_action",
                "The call to action field must be an object.",
            );
            return None;
        }
    };
    let kind = match action.get("type") {
        None | Some(Value::Null) => {
            errors.add(
                "call_to_action.type",
                "The call_to_action.type field is required.",
            );
            None
        }
        Some(Value::String(kind)) if CALL_TO_ACTION_TYPES.contains(&kind.as_str()) => {
            Some(kind.clone())
        }
        Some(_) => {
            errors.add(
                "call_to_action.type",
                "The selected call_to_action.type is invalid.",
            );
            None
        }
    };
    let url = match action.get("url") {
        None | Some(Value::Null) => None,
        Some(Value::String(url)) if is_web_url(url) => Some(url.clone()),
        Some(_) => {
            errors.add(
                "call_to_action.url",
                "The call_to_action.url field must be a valid URL.",
            );
            None
        }
    };
    let mut normalized = Map::new();
    normalized.insert("type".into(), Value::String(kind?));
    if let Some(url) = url {
        normalized.insert("url".into(), Value::String(url));
    }
    Some(Value::Object(normalized))
}

fn is_web_url(text: &str) -> bool {
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"));
    rest.is_some_and(|rest| {
        !rest.is_empty() && !rest.starts_with('/') && !text.chars().any(char::is_whitespace)
    })
}

/// Unreachable in practice (every `None` above comes with an error); a 422 rather than a panic.
fn invalid() -> Response {
    Errors::default().into_response()
}
