//! Dates and times from their text, in PostgreSQL's binary forms: days or microseconds since
//! 2000-01-01 (UTC), `infinity` as its own. A time without a zone is read as UTC, as one is
//! answered; one with a zone is moved to UTC.

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

const WITH_ZONE: [&str; 2] = ["%Y-%m-%d %H:%M:%S%.f%#z", "%Y-%m-%dT%H:%M:%S%.f%#z"];
const WITHOUT_ZONE: [&str; 4] = [
    "%Y-%m-%dT%H:%M:%S%.f",
    "%Y-%m-%d %H:%M:%S%.f",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%d %H:%M",
];
pub(super) const MOMENT: &str =
    "a date and time (RFC 3339, as 2026-11-01T10:00:00Z, or 2026-11-01 10:00)";
pub(super) const DATE: &str = "a date (2026-11-01)";
pub(super) const TIME: &str = "a time of day (10:30 or 10:30:15)";

fn epoch() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2000, 1, 1)
        .and_then(|day| day.and_hms_opt(0, 0, 0))
        .unwrap_or_default()
}

/// `infinity` or `-infinity`, as PostgreSQL spells them.
fn endless(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "infinity" | "+infinity" => Some(true),
        "-infinity" => Some(false),
        _ => None,
    }
}

/// A date and time as UTC.
fn moment(text: &str) -> Option<NaiveDateTime> {
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Some(at.naive_utc());
    }
    for format in WITH_ZONE {
        if let Ok(at) = DateTime::parse_from_str(text, format) {
            return Some(at.naive_utc());
        }
    }
    for format in WITHOUT_ZONE {
        if let Ok(at) = NaiveDateTime::parse_from_str(text, format) {
            return Some(at);
        }
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|day| day.and_hms_opt(0, 0, 0))
}

pub(super) fn micros(text: &str) -> Result<i64, String> {
    let text = text.trim();
    if let Some(positive) = endless(text) {
        return Ok(if positive { i64::MAX } else { i64::MIN });
    }
    let at = moment(text).ok_or_else(|| format!("must be {MOMENT}"))?;
    (at - epoch())
        .num_microseconds()
        .ok_or_else(|| "must be a date and time within PostgreSQL's range".into())
}

pub(super) fn days(text: &str) -> Result<i32, String> {
    let text = text.trim();
    if let Some(positive) = endless(text) {
        return Ok(if positive { i32::MAX } else { i32::MIN });
    }
    let day = NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .or_else(|| moment(text).map(|at| at.date()))
        .ok_or_else(|| format!("must be {DATE}"))?;
    i32::try_from((day - epoch().date()).num_days())
        .map_err(|_| "must be a date within PostgreSQL's range".into())
}

pub(super) fn time_micros(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let time = ["%H:%M:%S%.f", "%H:%M"]
        .iter()
        .find_map(|format| NaiveTime::parse_from_str(text, format).ok())
        .ok_or_else(|| format!("must be {TIME}"))?;
    Ok(i64::from(time.num_seconds_from_midnight()) * 1_000_000
        + i64::from(time.nanosecond() / 1_000))
}
