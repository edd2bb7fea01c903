//! Who is asking, and what they may see (seed §11). The API owns these rules; concierge only says
//! which Mappy user it acts for and never filters an answer itself.
//!
//! Every request but health and sign-in names its acting user in two headers,
//! `X-Mappy-User-Id` and `X-Mappy-User-Role`; the role must be the user's role in the data, so a
//! client cannot claim more than the user has. From the user's role follows its *scope*:
//!
//! | role | scope |
//! |---|---|
//! | ADMIN, `is_supervisor` | every group and location |
//! | ADMIN, not supervisor | the scope of its `preview_user_id` |
//! | MAIN_USER | every group of its account (the account root is its own id) |
//! | MASTER_USER | every group under its `parent_user_id` |
//! | GROUP_USER | its rows in `user_available_locations`, and the groups holding them |
//!
//! A read may look through another user's eyes with `?user_id=`: a supervisor at anyone, a
//! non-supervisor admin at its preview user, a MAIN_USER or MASTER_USER at users of its account, a
//! GROUP_USER only at itself. What it then sees is the target's scope cut down to the actor's, so
//! looking through someone else's eyes never shows more than one's own.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::Shared;
use super::data::{Role, Sample, User};
use super::laravel::{Errors, Params, message, unreadable_body};

pub(super) const USER_HEADER: &str = "x-mappy-user-id";
pub(super) const ROLE_HEADER: &str = "x-mappy-user-role";

/// The acting user of a request, as the data knows it. Extracting it answers 403 when the headers
/// are missing, name nobody, or claim a role the user does not have.
pub(super) struct Actor(pub(super) User);

impl FromRequestParts<Arc<Shared>> for Actor {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, sim: &Arc<Shared>) -> Result<Self, Response> {
        fn header<'p>(parts: &'p Parts, name: &str) -> Option<&'p str> {
            parts
                .headers
                .get(name)
                .and_then(|value| value.to_str().ok())
                .map(str::trim)
                .filter(|text| !text.is_empty())
        }
        let (Some(id), Some(role)) = (header(parts, USER_HEADER), header(parts, ROLE_HEADER))
        else {
            return Err(message(
                StatusCode::FORBIDDEN,
                "The X-Mappy-User-Id and X-Mappy-User-Role headers are required.",
            ));
        };
        let user = id
            .parse::<u64>()
            .ok()
            .and_then(|id| sim.world().sample.user(id).cloned());
        let Some(user) = user else {
            return Err(message(
                StatusCode::FORBIDDEN,
                "The acting user is unknown.",
            ));
        };
        if Role::parse(role) != Some(user.role) {
            return Err(message(
                StatusCode::FORBIDDEN,
                "The acting user does not have the role given in X-Mappy-User-Role.",
            ));
        }
        Ok(Actor(user))
    }
}

/// The groups and locations one request may see.
#[derive(Debug, Default)]
pub(super) struct View {
    pub(super) groups: BTreeSet<u64>,
    pub(super) locations: BTreeSet<u64>,
}

/// A user's own scope (the table in the module docs).
pub(super) fn scope(sample: &Sample, user: &User) -> View {
    match user.role {
        Role::Admin if user.is_supervisor => View {
            groups: sample.groups.iter().map(|g| g.id).collect(),
            locations: sample.locations.iter().map(|l| l.id).collect(),
        },
        // The preview user is never an admin (checked at load), so this recursion is one step.
        Role::Admin => match user.preview_user_id.and_then(|id| sample.user(id)) {
            Some(preview) if preview.role != Role::Admin => scope(sample, preview),
            _ => View::default(),
        },
        Role::MainUser | Role::MasterUser => {
            let account = user.account();
            let groups: BTreeSet<u64> = sample
                .groups
                .iter()
                .filter(|g| Some(g.parent_user_id) == account)
                .map(|g| g.id)
                .collect();
            let locations = groups
                .iter()
                .flat_map(|group| sample.locations_of_group(*group))
                .collect();
            View { groups, locations }
        }
        Role::GroupUser => {
            let locations: BTreeSet<u64> = sample
                .user_available_locations
                .iter()
                .filter(|row| row.user_id == user.id)
                .map(|row| row.location_id)
                .collect();
            let groups = locations
                .iter()
                .filter_map(|location| sample.group_of(*location))
                .map(|g| g.id)
                .collect();
            View { groups, locations }
        }
    }
}

/// Whether `actor` may look through `target`'s eyes. Anyone may name itself.
fn may_target(sample: &Sample, actor: &User, target: u64) -> bool {
    if target == actor.id {
        return true;
    }
    let Some(target) = sample.user(target) else {
        return false;
    };
    match actor.role {
        Role::Admin if actor.is_supervisor => true,
        Role::Admin => actor.preview_user_id == Some(target.id),
        Role::MainUser | Role::MasterUser => {
            target.account().is_some() && target.account() == actor.account()
        }
        Role::GroupUser => false,
    }
}

/// What a read sees: the target's scope (the actor's when no `user_id` is given) within the
/// actor's. 422 for a `user_id` that is not an integer; 403 for one outside the actor's reach,
/// including one that does not exist (so the answer does not reveal which ids do).
pub(super) fn read_view(sample: &Sample, actor: &Actor, params: &Params) -> Result<View, Response> {
    let mut errors = Errors::default();
    let target = params.id("user_id", &mut errors);
    errors.check()?;
    let actor = &actor.0;
    let own = scope(sample, actor);
    let Some(target) = target.filter(|id| *id != actor.id) else {
        return Ok(own);
    };
    let outside = || {
        message(
            StatusCode::FORBIDDEN,
            &format!("User {target} is outside your tenancy."),
        )
    };
    if !may_target(sample, actor, target) {
        return Err(outside());
    }
    let theirs = scope(sample, sample.user(target).ok_or_else(outside)?);
    Ok(View {
        groups: theirs.groups.intersection(&own.groups).copied().collect(),
        locations: theirs
            .locations
            .intersection(&own.locations)
            .copied()
            .collect(),
    })
}

/// `POST /api/mcp/auth/sign-in`: checks a Mappy user's e-mail and password for concierge's OAuth
/// sign-in page, and says who it is. Needs the service key, no acting user.
pub(super) async fn sign_in(
    State(sim): State<Arc<Shared>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let Ok(Ok(Value::Object(fields))) = body.map(|bytes| serde_json::from_slice::<Value>(&bytes))
    else {
        return unreadable_body();
    };
    let mut errors = Errors::default();
    let mut text = |name: &str| match fields.get(name) {
        Some(Value::String(text)) if !text.is_empty() => Some(text.clone()),
        Some(Value::String(_)) | Some(Value::Null) | None => {
            errors.add(name, format!("The {name} field is required."));
            None
        }
        Some(_) => {
            errors.add(name, format!("The {name} field must be a string."));
            None
        }
    };
    let (username, password) = (text("username"), text("password"));
    if let Err(invalid) = errors.check() {
        return invalid;
    }
    let world = sim.world();
    let user = world.sample.users.iter().find(|user| {
        username
            .as_deref()
            .is_some_and(|name| user.email.eq_ignore_ascii_case(name.trim()))
            && password.as_deref() == Some(user.password.as_str())
    });
    match user {
        Some(user) => Json(json!({
            "id": user.id,
            "role": user.role.as_str(),
            "name": user.name,
        }))
        .into_response(),
        None => message(
            StatusCode::UNAUTHORIZED,
            "These credentials do not match our records.",
        ),
    }
}
