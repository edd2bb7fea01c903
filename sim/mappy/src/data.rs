//! The sample data (`examples/mappy/sample.json`): Mappy's tables, as small as a demo needs.
//!
//! The file mirrors the rows concierge never sees directly but whose rules it must live with:
//! `mappy_users` (role, supervisor flag, preview user, account parent), `mappy_groups` and the
//! group → location table `mappy_group_location`, the per-user allow list
//! `mappy_user_available_gbp_locations`, and the GBP data Mappy keeps per location (reviews, posts,
//! opening hours). Passwords are stored in clear text here because this is a demo file; the real
//! API checks hashes.
//!
//! [`Sample::load`] refuses a file that breaks a rule (a dangling id, a location in two groups, a
//! bad opening time, …), naming the rule, so a typo fails at start-up rather than as a puzzling
//! answer later.
//!
//! Over 600 lines: the sample tables and the rules they carry, as data.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, FixedOffset, Offset, SecondsFormat, Utc};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::laravel::Errors;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Role {
    Admin,
    MainUser,
    MasterUser,
    GroupUser,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "ADMIN",
            Role::MainUser => "MAIN_USER",
            Role::MasterUser => "MASTER_USER",
            Role::GroupUser => "GROUP_USER",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        [
            Role::Admin,
            Role::MainUser,
            Role::MasterUser,
            Role::GroupUser,
        ]
        .into_iter()
        .find(|role| role.as_str() == text)
    }
}

/// A row of `mappy_users`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct User {
    pub id: u64,
    pub name: String,
    /// The sign-in name.
    pub email: String,
    pub password: String,
    pub role: Role,
    /// ADMIN only: sees everyone.
    #[serde(default)]
    pub is_supervisor: bool,
    /// ADMIN without supervisor: the one user it may act for.
    #[serde(default)]
    pub preview_user_id: Option<u64>,
    /// MASTER_USER and GROUP_USER: the account's MAIN_USER. A MAIN_USER is its own account root.
    #[serde(default)]
    pub parent_user_id: Option<u64>,
}

impl User {
    /// The MAIN_USER whose account this user belongs to; admins belong to none.
    pub fn account(&self) -> Option<u64> {
        match self.role {
            Role::Admin => None,
            Role::MainUser => Some(self.id),
            Role::MasterUser | Role::GroupUser => self.parent_user_id,
        }
    }

    pub fn is_supervisor(&self) -> bool {
        self.role == Role::Admin && self.is_supervisor
    }
}

/// A row of `mappy_groups`: a named set of an account's locations.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    pub id: u64,
    pub name: String,
    /// The account (its MAIN_USER) the group is under.
    pub parent_user_id: u64,
}

/// A row of `mappy_group_location`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupLocation {
    pub group_id: u64,
    pub location_id: u64,
}

/// A row of `mappy_user_available_gbp_locations`: a GROUP_USER may see this location.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserLocation {
    pub user_id: u64,
    pub location_id: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum LocationStatus {
    Open,
    /// Google suspended the listing: reads work, every change is refused by the job.
    Suspended,
}

impl LocationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            LocationStatus::Open => "OPEN",
            LocationStatus::Suspended => "SUSPENDED",
        }
    }
}

/// Whether Google's API answers for this location. `down` makes insights (the one read that goes
/// to Google live rather than to Mappy's copy) answer 502, as an outage at Google would.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Gbp {
    #[default]
    Up,
    Down,
}

/// A GBP location as Mappy stores it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Location {
    pub id: u64,
    pub name: String,
    pub address: String,
    pub phone: String,
    #[serde(default)]
    pub website: Option<String>,
    pub primary_category: String,
    pub status: LocationStatus,
    /// Google's name for it, `locations/<digits>`.
    pub gbp_location_id: String,
    /// Read as JSON and checked with the same rules as `PUT …/hours`; see [`Location::hours`].
    #[serde(rename = "regular_hours")]
    hours_json: Value,
    #[serde(skip)]
    pub hours: Hours,
    #[serde(default)]
    pub gbp: Gbp,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    pub comment: String,
    pub updated_at: DateTime<FixedOffset>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Review {
    pub id: u64,
    pub location_id: u64,
    pub author: String,
    pub rating: u8,
    pub comment: String,
    pub created_at: DateTime<FixedOffset>,
    #[serde(default)]
    pub reply: Option<Reply>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TopicType {
    Standard,
    Event,
    Offer,
}

impl TopicType {
    pub fn as_str(self) -> &'static str {
        match self {
            TopicType::Standard => "STANDARD",
            TopicType::Event => "EVENT",
            TopicType::Offer => "OFFER",
        }
    }

    pub fn parse(text: &str) -> Option<TopicType> {
        [TopicType::Standard, TopicType::Event, TopicType::Offer]
            .into_iter()
            .find(|topic| topic.as_str() == text)
    }
}

/// A local post on the location's Google profile. Every post here is live.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Post {
    pub id: u64,
    pub location_id: u64,
    pub summary: String,
    pub topic_type: TopicType,
    pub created_at: DateTime<FixedOffset>,
    /// `{"type": "LEARN_MORE" | "BOOK" | "ORDER" | "CALL", "url"?}` when the post has a button.
    #[serde(default)]
    pub call_to_action: Option<Value>,
}

/// The whole sample. Mutable at run time: jobs store replies, add posts and replace hours.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    #[serde(default)]
    _comment: Option<Value>,
    pub users: Vec<User>,
    pub groups: Vec<Group>,
    pub group_location: Vec<GroupLocation>,
    pub user_available_locations: Vec<UserLocation>,
    pub locations: Vec<Location>,
    pub reviews: Vec<Review>,
    pub posts: Vec<Post>,
}

impl Sample {
    pub fn load(path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses and checks a sample given as text.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let mut sample: Sample = serde_json::from_str(text).map_err(|e| e.to_string())?;
        for location in &mut sample.locations {
            let mut errors = Errors::default();
            let hours = parse_hours(&location.hours_json, "regular_hours", &mut errors);
            match hours {
                Some(hours) if errors.is_empty() => location.hours = hours,
                _ => return Err(format!("location {}: {}", location.id, errors.describe())),
            }
        }
        sample.check()?;
        Ok(sample)
    }

    /// The rules the real database keeps with foreign keys and unique indexes.
    fn check(&self) -> Result<(), String> {
        unique("user", self.users.iter().map(|u| u.id))?;
        unique(
            "user email",
            self.users.iter().map(|u| u.email.to_lowercase()),
        )?;
        unique("group", self.groups.iter().map(|g| g.id))?;
        unique("location", self.locations.iter().map(|l| l.id))?;
        unique("review", self.reviews.iter().map(|r| r.id))?;
        unique("post", self.posts.iter().map(|p| p.id))?;
        let role_of = |id: u64| self.user(id).map(|u| u.role);
        for user in &self.users {
            let ok = match user.role {
                Role::Admin if user.is_supervisor => true,
                Role::Admin => user
                    .preview_user_id
                    .and_then(role_of)
                    .is_some_and(|role| role != Role::Admin),
                Role::MainUser => user.parent_user_id.is_none_or(|p| p == user.id),
                Role::MasterUser | Role::GroupUser => {
                    user.parent_user_id.and_then(role_of) == Some(Role::MainUser)
                }
            };
            if !ok {
                return Err(format!(
                    "user {}: a non-supervisor ADMIN needs preview_user_id naming a non-admin \
                     user; MASTER_USER and GROUP_USER need parent_user_id naming a MAIN_USER",
                    user.id
                ));
            }
        }
        for group in &self.groups {
            if role_of(group.parent_user_id) != Some(Role::MainUser) {
                return Err(format!(
                    "group {}: parent_user_id must name a MAIN_USER",
                    group.id
                ));
            }
        }
        for location in &self.locations {
            let groups = self
                .group_location
                .iter()
                .filter(|row| row.location_id == location.id);
            if groups.count() != 1 {
                return Err(format!(
                    "location {}: must be in exactly one group",
                    location.id
                ));
            }
        }
        for row in &self.group_location {
            if self.group(row.group_id).is_none() || self.location(row.location_id).is_none() {
                return Err(format!(
                    "group_location {}→{}: unknown group or location",
                    row.group_id, row.location_id
                ));
            }
        }
        for row in &self.user_available_locations {
            let user = self.user(row.user_id);
            let account = self.group_of(row.location_id).map(|g| g.parent_user_id);
            let ok = user.is_some_and(|u| u.role == Role::GroupUser && u.account() == account);
            if !ok {
                return Err(format!(
                    "user_available_locations {}→{}: must pair a GROUP_USER with a location of \
                     its account",
                    row.user_id, row.location_id
                ));
            }
        }
        for review in &self.reviews {
            if self.location(review.location_id).is_none() || !(1..=5).contains(&review.rating) {
                return Err(format!(
                    "review {}: unknown location or rating not 1..5",
                    review.id
                ));
            }
        }
        for post in &self.posts {
            if self.location(post.location_id).is_none() {
                return Err(format!("post {}: unknown location", post.id));
            }
        }
        Ok(())
    }

    pub fn user(&self, id: u64) -> Option<&User> {
        self.users.iter().find(|u| u.id == id)
    }

    pub fn group(&self, id: u64) -> Option<&Group> {
        self.groups.iter().find(|g| g.id == id)
    }

    pub fn location(&self, id: u64) -> Option<&Location> {
        self.locations.iter().find(|l| l.id == id)
    }

    pub fn location_mut(&mut self, id: u64) -> Option<&mut Location> {
        self.locations.iter_mut().find(|l| l.id == id)
    }

    pub fn review(&self, id: u64) -> Option<&Review> {
        self.reviews.iter().find(|r| r.id == id)
    }

    /// The one group a location is in (checked at load).
    pub fn group_of(&self, location_id: u64) -> Option<&Group> {
        self.group_location
            .iter()
            .find(|row| row.location_id == location_id)
            .and_then(|row| self.group(row.group_id))
    }

    pub fn locations_of_group(&self, group_id: u64) -> impl Iterator<Item = u64> + '_ {
        self.group_location
            .iter()
            .filter(move |row| row.group_id == group_id)
            .map(|row| row.location_id)
    }

    /// `id, name, address, group_id, group_name, rating, review_count, gbp_location_id`.
    pub fn location_summary(&self, location: &Location) -> Map<String, Value> {
        let ratings: Vec<u8> = self
            .reviews
            .iter()
            .filter(|r| r.location_id == location.id)
            .map(|r| r.rating)
            .collect();
        let rating = if ratings.is_empty() {
            Value::Null
        } else {
            let sum: u64 = ratings.iter().map(|r| u64::from(*r)).sum();
            let average = sum as f64 / ratings.len() as f64;
            json!((average * 10.0).round() / 10.0)
        };
        let group = self.group_of(location.id);
        let summary = json!({
            "id": location.id,
            "name": location.name,
            "address": location.address,
            "group_id": group.map(|g| g.id),
            "group_name": group.map(|g| g.name.as_str()),
            "rating": rating,
            "review_count": ratings.len(),
            "gbp_location_id": location.gbp_location_id,
        });
        match summary {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// The summary plus `phone, website, primary_category, status, regular_hours`.
    pub fn location_detail(&self, location: &Location) -> Value {
        let mut detail = self.location_summary(location);
        detail.insert("phone".into(), json!(location.phone));
        detail.insert("website".into(), json!(location.website));
        detail.insert("primary_category".into(), json!(location.primary_category));
        detail.insert("status".into(), json!(location.status.as_str()));
        detail.insert("regular_hours".into(), hours_json(&location.hours));
        Value::Object(detail)
    }
}

/// Mappy's clock runs on Vietnam time (+07:00), and so do the timestamps it writes.
pub fn now() -> DateTime<FixedOffset> {
    let vietnam = FixedOffset::east_opt(7 * 3600).unwrap_or(Utc.fix());
    Utc::now().with_timezone(&vietnam)
}

/// ISO 8601 to the second with the offset, as the sample writes them: `2026-10-05T19:42:00+07:00`.
pub fn stamp(time: &DateTime<FixedOffset>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Secs, false)
}

pub fn review_json(review: &Review) -> Value {
    json!({
        "id": review.id,
        "location_id": review.location_id,
        "author": review.author,
        "rating": review.rating,
        "comment": review.comment,
        "created_at": stamp(&review.created_at),
        "reply": review.reply.as_ref().map(|reply| json!({
            "comment": reply.comment,
            "updated_at": stamp(&reply.updated_at),
        })),
    })
}

pub fn post_json(post: &Post) -> Value {
    let mut value = json!({
        "id": post.id,
        "location_id": post.location_id,
        "summary": post.summary,
        "topic_type": post.topic_type.as_str(),
        "created_at": stamp(&post.created_at),
        "state": "LIVE",
    });
    if let (Value::Object(map), Some(action)) = (&mut value, &post.call_to_action) {
        map.insert("call_to_action".into(), action.clone());
    }
    value
}

fn unique<T: Ord + std::fmt::Display>(
    what: &str,
    ids: impl Iterator<Item = T>,
) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    for id in ids {
        if seen.contains(&id) {
            return Err(format!("{what} {id} appears twice"));
        }
        seen.insert(id);
    }
    Ok(())
}

/// Days of the week in calendar order, so maps keyed by them list Monday first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Day {
    Monday,
    Tuesday,
    Wednesday,
    Thursday,
    Friday,
    Saturday,
    Sunday,
}

const DAYS: [(Day, &str); 7] = [
    (Day::Monday, "monday"),
    (Day::Tuesday, "tuesday"),
    (Day::Wednesday, "wednesday"),
    (Day::Thursday, "thursday"),
    (Day::Friday, "friday"),
    (Day::Saturday, "saturday"),
    (Day::Sunday, "sunday"),
];

impl Day {
    fn name(self) -> &'static str {
        DAYS.iter()
            .find(|(day, _)| *day == self)
            .map_or("", |(_, name)| *name)
    }
}

/// One opening period, `HH:MM` on a 24-hour clock, open before close (so never past midnight).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    pub open: String,
    pub close: String,
}

/// Opening hours by day. A day that is absent is closed; a day given as `[]` is stored as absent.
pub type Hours = BTreeMap<Day, Vec<Period>>;

/// The JSON form: `{"monday": [{"open": "07:00", "close": "22:00"}], …}`, Monday first.
pub fn hours_json(hours: &Hours) -> Value {
    let mut map = Map::new();
    for (day, periods) in hours {
        let periods: Vec<Value> = periods
            .iter()
            .map(|p| json!({"open": p.open, "close": p.close}))
            .collect();
        map.insert(day.name().to_owned(), Value::Array(periods));
    }
    Value::Object(map)
}

/// At most this many periods a day, as Google allows for regular hours in practice.
pub const MAX_PERIODS: usize = 3;

/// Reads opening hours, adding a message per broken rule under `field` (`regular_hours`,
/// `regular_hours.monday`, `regular_hours.monday.0.open`, …). `None` when the value is not an
/// object at all; otherwise the valid part (only meaningful when no error was added).
pub fn parse_hours(value: &Value, field: &str, errors: &mut Errors) -> Option<Hours> {
    let Value::Object(days) = value else {
        errors.add(
            field,
            format!("The {field} field must be an object keyed by day."),
        );
        return None;
    };
    let mut hours = Hours::new();
    for (name, periods) in days {
        let day_field = format!("{field}.{name}");
        let Some(day) = DAYS.iter().find(|(_, n)| n == name).map(|(day, _)| *day) else {
            errors.add(
                &day_field,
                format!("The {day_field} field is not a day of the week (monday to sunday)."),
            );
            continue;
        };
        let Value::Array(periods) = periods else {
            errors.add(
                &day_field,
                format!("The {day_field} field must be a list of periods."),
            );
            continue;
        };
        if periods.len() > MAX_PERIODS {
            errors.add(
                &day_field,
                format!("The {day_field} field must not have more than {MAX_PERIODS} items."),
            );
            continue;
        }
        let mut list = Vec::new();
        for (index, period) in periods.iter().enumerate() {
            let period_field = format!("{day_field}.{index}");
            let Value::Object(period) = period else {
                errors.add(
                    &period_field,
                    format!("The {period_field} field must be an object with open and close."),
                );
                continue;
            };
            let open = time_of(period.get("open"), &format!("{period_field}.open"), errors);
            let close = time_of(
                period.get("close"),
                &format!("{period_field}.close"),
                errors,
            );
            if let (Some(open), Some(close)) = (open, close) {
                // Zero-padded HH:MM strings compare like the times they name.
                if open < close {
                    list.push(Period { open, close });
                } else {
                    let close_field = format!("{period_field}.close");
                    errors.add(
                        &close_field,
                        format!(
                            "The {close_field} field must be a time after {period_field}.open."
                        ),
                    );
                }
            }
        }
        if !list.is_empty() {
            hours.insert(day, list);
        }
    }
    Some(hours)
}

/// A `HH:MM` time from 00:00 to 23:59.
fn time_of(value: Option<&Value>, field: &str, errors: &mut Errors) -> Option<String> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        errors.add(field, format!("The {field} field is required."));
        return None;
    };
    let valid = value.as_str().filter(|text| {
        let bytes = text.as_bytes();
        bytes.len() == 5
            && bytes[2] == b':'
            && [0, 1, 3, 4].iter().all(|&i| bytes[i].is_ascii_digit())
            && text[0..2].parse::<u8>().is_ok_and(|h| h < 24)
            && text[3..5].parse::<u8>().is_ok_and(|m| m < 60)
    });
    if valid.is_none() {
        errors.add(
            field,
            format!("The {field} field must match the format H:i (00:00 to 23:59)."),
        );
    }
    valid.map(str::to_owned)
}
