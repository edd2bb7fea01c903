//! The read endpoints: groups, locations, reviews, insights, posts.
//!
//! Each read checks, in this order: `user_id` is an integer (422); the target is within the actor's
//! reach (403); the location in the path is visible (404, worded exactly like an unknown one, so
//! the answer never confirms that a hidden location exists); the other query parameters (422);
//! and only then asks Google (502), as insights do.

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{Datelike, NaiveDate};
use serde_json::{Map, Value, json};

use super::Shared;
use super::data::{Gbp, Location, Sample, post_json, review_json};
use super::laravel::{Errors, Params, message};
use super::tenancy::{Actor, View, read_view};

type Answer = Result<Response, Response>;

pub(super) async fn health() -> Response {
    Json(json!({"status": "ok"})).into_response()
}

/// `GET /groups`: the groups the target sees, with how many of their locations it sees.
pub(super) async fn groups(State(sim): State<Arc<Shared>>, actor: Actor, params: Params) -> Answer {
    let world = sim.world();
    let sample = &world.sample;
    let view = read_view(sample, &actor, &params)?;
    let data: Vec<Value> = view
        .groups
        .iter()
        .filter_map(|id| sample.group(*id))
        .map(|group| {
            let count = sample
                .locations_of_group(group.id)
                .filter(|location| view.locations.contains(location))
                .count();
            json!({"id": group.id, "name": group.name, "location_count": count})
        })
        .collect();
    Ok(Json(json!({ "data": data })).into_response())
}

/// `GET /locations?group_id=&limit=`: location summaries by id; `meta.total` counts before `limit`.
pub(super) async fn locations(
    State(sim): State<Arc<Shared>>,
    actor: Actor,
    params: Params,
) -> Answer {
    let world = sim.world();
    let sample = &world.sample;
    let view = read_view(sample, &actor, &params)?;
    let mut errors = Errors::default();
    let group = params.id("group_id", &mut errors);
    let limit = params.integer("limit", 1, 100, &mut errors);
    errors.check()?;
    if let Some(group) = group
        && !view.groups.contains(&group)
    {
        return Err(message(
            StatusCode::FORBIDDEN,
            &format!("Group {group} is outside your tenancy."),
        ));
    }
    let mut matching: Vec<&Location> = sample
        .locations
        .iter()
        .filter(|location| view.locations.contains(&location.id))
        .filter(|location| {
            group.is_none_or(|group| sample.group_of(location.id).map(|g| g.id) == Some(group))
        })
        .collect();
    matching.sort_by_key(|location| location.id);
    let total = matching.len();
    let data: Vec<Value> = matching
        .into_iter()
        .take(count(limit, 50))
        .map(|location| Value::Object(sample.location_summary(location)))
        .collect();
    Ok(Json(json!({ "data": data, "meta": {"total": total} })).into_response())
}

/// `GET /locations/{id}`: the summary plus contact, category, status and opening hours.
pub(super) async fn location(
    State(sim): State<Arc<Shared>>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
    params: Params,
) -> Answer {
    let world = sim.world();
    let sample = &world.sample;
    let view = read_view(sample, &actor, &params)?;
    let location = visible_location(sample, &view, &path)?;
    Ok(Json(json!({ "data": sample.location_detail(location) })).into_response())
}

/// `GET /locations/{id}/reviews?rating=&unreplied=&from=&to=&limit=`: newest first.
pub(super) async fn reviews(
    State(sim): State<Arc<Shared>>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
    params: Params,
) -> Answer {
    let world = sim.world();
    let sample = &world.sample;
    let view = read_view(sample, &actor, &params)?;
    let location = visible_location(sample, &view, &path)?;
    let mut errors = Errors::default();
    let rating = params.integer("rating", 1, 5, &mut errors);
    let unreplied = params.boolean("unreplied", &mut errors);
    let from = params.date("from", &mut errors);
    let to = params.date("to", &mut errors);
    let limit = params.integer("limit", 1, 100, &mut errors);
    if let (Some(from), Some(to)) = (from, to)
        && to < from
    {
        errors.add("to", "The to field must be a date after or equal to from.");
    }
    errors.check()?;
    let mut reviews: Vec<_> = sample
        .reviews
        .iter()
        .filter(|review| review.location_id == location.id)
        .filter(|review| rating.is_none_or(|rating| i64::from(review.rating) == rating))
        .filter(|review| unreplied.is_none_or(|unreplied| review.reply.is_none() == unreplied))
        // The day a review was written where it was written: its own offset, not UTC.
        .filter(|review| from.is_none_or(|from| review.created_at.date_naive() >= from))
        .filter(|review| to.is_none_or(|to| review.created_at.date_naive() <= to))
        .collect();
    reviews.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    let total = reviews.len();
    let data: Vec<Value> = reviews
        .into_iter()
        .take(count(limit, 20))
        .map(review_json)
        .collect();
    Ok(Json(json!({ "data": data, "meta": {"total": total} })).into_response())
}

/// The longest insights range, both ends counted: Google keeps about 18 months of metrics.
const MAX_INSIGHT_DAYS: i64 = 540;

/// Daily ranges per metric, `(name, low, high)`, for a busy city-centre shop.
const METRICS: [(&str, u64, u64); 5] = [
    ("search_views", 40, 160),
    ("maps_views", 25, 110),
    ("website_clicks", 0, 9),
    ("calls", 0, 6),
    ("direction_requests", 3, 24),
];

/// `GET /locations/{id}/insights?from=&to=`: totals over the range.
///
/// Real insights come live from Google's Business Profile Performance API. The simulator makes
/// them up, but deterministically (a hash of location, day and metric), so the same question always
/// gets the same answer and a longer range never has smaller totals.
pub(super) async fn insights(
    State(sim): State<Arc<Shared>>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
    params: Params,
) -> Answer {
    let world = sim.world();
    let sample = &world.sample;
    let view = read_view(sample, &actor, &params)?;
    let location = visible_location(sample, &view, &path)?;
    let mut errors = Errors::default();
    let mut required_date = |name: &str| {
        if params.text(name).is_none() {
            errors.add(name, format!("The {name} field is required."));
            return None;
        }
        params.date(name, &mut errors)
    };
    let (from, to) = (required_date("from"), required_date("to"));
    if let (Some(from), Some(to)) = (from, to) {
        let days = to.signed_duration_since(from).num_days();
        if days < 0 {
            errors.add("to", "The to field must be a date after or equal to from.");
        } else if days >= MAX_INSIGHT_DAYS {
            errors.add(
                "to",
                format!(
                    "The range from from to to must not span more than {MAX_INSIGHT_DAYS} days."
                ),
            );
        }
    }
    errors.check()?;
    let (Some(from), Some(to)) = (from, to) else {
        return Err(Errors::default().into_response());
    };
    if location.gbp == Gbp::Down {
        return Err((
            StatusCode::BAD_GATEWAY,
            Json(json!({
                "message": "Google Business Profile API error: the service is temporarily \
                            unavailable. Try again later.",
                "code": "gbp_unavailable",
            })),
        )
            .into_response());
    }
    let mut metrics = Map::new();
    for (index, (name, low, high)) in METRICS.iter().enumerate() {
        let total: u64 = from
            .iter_days()
            .take_while(|day| *day <= to)
            .map(|day| low + daily_hash(location.id, day, index) % (high - low + 1))
            .sum();
        metrics.insert((*name).to_owned(), json!(total));
    }
    Ok(Json(json!({
        "data": {
            "location_id": location.id,
            "from": from.format("%Y-%m-%d").to_string(),
            "to": to.format("%Y-%m-%d").to_string(),
            "metrics": metrics,
        }
    }))
    .into_response())
}

/// `GET /locations/{id}/posts?limit=`: the location's live posts, newest first.
pub(super) async fn posts(
    State(sim): State<Arc<Shared>>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
    params: Params,
) -> Answer {
    let world = sim.world();
    let sample = &world.sample;
    let view = read_view(sample, &actor, &params)?;
    let location = visible_location(sample, &view, &path)?;
    let mut errors = Errors::default();
    let limit = params.integer("limit", 1, 100, &mut errors);
    errors.check()?;
    let mut posts: Vec<_> = sample
        .posts
        .iter()
        .filter(|post| post.location_id == location.id)
        .collect();
    posts.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    let data: Vec<Value> = posts
        .into_iter()
        .take(count(limit, 20))
        .map(post_json)
        .collect();
    Ok(Json(json!({ "data": data })).into_response())
}

/// The location named in the path, if the view holds it; else the same 404 as for an unknown id.
pub(super) fn visible_location<'a>(
    sample: &'a Sample,
    view: &View,
    path: &Result<Path<String>, PathRejection>,
) -> Result<&'a Location, Response> {
    path.as_ref()
        .ok()
        .and_then(|Path(id)| id.parse::<u64>().ok())
        .filter(|id| view.locations.contains(id))
        .and_then(|id| sample.location(id))
        .ok_or_else(|| message(StatusCode::NOT_FOUND, "Location not found."))
}

/// A validated `limit` (already within 1..=100) as a count.
fn count(limit: Option<i64>, default: usize) -> usize {
    limit
        .and_then(|limit| usize::try_from(limit).ok())
        .unwrap_or(default)
}

/// A well-mixed 64-bit number from location, day and metric (SplitMix64's finaliser): stable
/// across runs, platforms and Rust versions, unlike `std`'s hasher.
fn daily_hash(location: u64, day: NaiveDate, metric: usize) -> u64 {
    let day = i64::from(day.num_days_from_ce()) as u64;
    let mut x = location.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ day.wrapping_mul(0xBF58_476D_1CE4_E5B9)
        ^ (metric as u64 + 1).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}
