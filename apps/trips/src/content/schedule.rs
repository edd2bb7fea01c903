//! The built-in schedule (the seed's `zenstruck_schedule.yaml`): an hourly delta sync, a weekly
//! `--refresh` (Sunday 01:05, off the quarter hour), and an hourly freshness check at :10 that
//! tolerates one missed run (150 min). Times are Europe/Berlin.

use std::time::Duration;

use chrono::{DateTime, Datelike, TimeZone, Timelike, Utc, Weekday};
use chrono_tz::Europe::Berlin;
use serde::Deserialize;

use super::store::{ContentStore, StoreError};

/// `[apps.trips.schedule]`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleConfig {
    /// Run the schedule inside `serve` (off when cron runs `concierge sync` instead).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// A delta run as soon as `serve` starts, so a fresh deployment answers at once.
    #[serde(default = "yes")]
    pub at_start: bool,
    /// The hourly delta runs at this minute.
    #[serde(default)]
    pub delta_minute: u32,
    /// The weekly `--refresh`: "sun 01:05".
    #[serde(default = "weekly_refresh")]
    pub refresh: String,
    /// The hourly freshness check runs at this minute.
    #[serde(default = "ten")]
    pub freshness_minute: u32,
    /// The check fails when the last good manifest is older than this.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "max_age", with = "humantime_serde")]
    pub freshness_max_age: Duration,
    /// POSTed `{"text": …}` when the freshness check fails (Slack/Mattermost/Teams-style hook).
    #[serde(default)]
    pub webhook: Option<String>,
}

fn yes() -> bool {
    true
}
fn ten() -> u32 {
    10
}
fn weekly_refresh() -> String {
    "sun 01:05".into()
}
fn max_age() -> Duration {
    Duration::from_secs(150 * 60)
}

impl Default for ScheduleConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            at_start: true,
            delta_minute: 0,
            refresh: weekly_refresh(),
            freshness_minute: 10,
            freshness_max_age: max_age(),
            webhook: None,
        }
    }
}

/// What the scheduler does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    Delta,
    Refresh,
    Freshness,
}

/// A weekday and a Berlin wall-clock time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weekly {
    pub day: Weekday,
    pub hour: u32,
    pub minute: u32,
}

impl Weekly {
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || format!("`{text}`: expected a weekday and a time, like \"sun 01:05\"");
        let (day, time) = text.trim().split_once(' ').ok_or_else(bad)?;
        let day: Weekday = day.parse().map_err(|_| bad())?;
        let (hour, minute) = time.trim().split_once(':').ok_or_else(bad)?;
        let hour: u32 = hour.parse().map_err(|_| bad())?;
        let minute: u32 = minute.parse().map_err(|_| bad())?;
        if hour > 23 || minute > 59 {
            return Err(bad());
        }
        Ok(Self { day, hour, minute })
    }
}

impl ScheduleConfig {
    pub fn check(&self) -> Result<Weekly, String> {
        for (name, minute) in [
            ("delta_minute", self.delta_minute),
            ("freshness_minute", self.freshness_minute),
        ] {
            if minute > 59 {
                return Err(format!("schedule.{name}: {minute} is not a minute (0–59)"));
            }
        }
        Weekly::parse(&self.refresh).map_err(|e| format!("schedule.refresh: {e}"))
    }

    /// The next job strictly after `now`, and when. Ties go to the refresh (it includes a delta).
    pub fn next(&self, weekly: Weekly, now: DateTime<Utc>) -> (DateTime<Utc>, Job) {
        let candidates = [
            (next_weekly(weekly, now), Job::Refresh),
            (next_hourly(self.delta_minute, now), Job::Delta),
            (next_hourly(self.freshness_minute, now), Job::Freshness),
        ];
        candidates
            .into_iter()
            .min_by_key(|(at, _)| *at)
            .unwrap_or((now, Job::Delta))
    }
}

fn next_hourly(minute: u32, now: DateTime<Utc>) -> DateTime<Utc> {
    // Every Berlin hour starts on a UTC hour (offsets are whole hours), so UTC arithmetic works.
    let this_hour = now
        .with_minute(minute)
        .and_then(|t| t.with_second(0))
        .and_then(|t| t.with_nanosecond(0))
        .unwrap_or(now);
    if this_hour > now {
        this_hour
    } else {
        this_hour + chrono::Duration::hours(1)
    }
}

fn next_weekly(weekly: Weekly, now: DateTime<Utc>) -> DateTime<Utc> {
    let local = now.with_timezone(&Berlin);
    for days in 0..=7 {
        let date = local.date_naive() + chrono::Duration::days(days);
        if date.weekday() != weekly.day {
            continue;
        }
        let Some(naive) = date.and_hms_opt(weekly.hour, weekly.minute, 0) else {
            continue;
        };
        // A time that a DST switch skips does not occur that week; an ambiguous one runs once.
        if let Some(at) = Berlin.from_local_datetime(&naive).earliest() {
            let at = at.with_timezone(&Utc);
            if at > now {
                return at;
            }
        }
    }
    now + chrono::Duration::days(7)
}

/// How old the last good manifest is, against a limit.
#[derive(Debug, Clone, PartialEq)]
pub struct Freshness {
    pub fresh: bool,
    pub message: String,
}

pub async fn freshness(
    store: &dyn ContentStore,
    now: DateTime<Utc>,
    max_age: Duration,
) -> Result<Freshness, StoreError> {
    let state = store.state().await?;
    let limit = humantime::format_duration(max_age);
    Ok(match state.last_good_manifest_at {
        None => Freshness {
            fresh: false,
            message: "content feed: no manifest has ever been read".into(),
        },
        Some(at) => {
            let age = (now - at).to_std().unwrap_or_default();
            let age_text = humantime::format_duration(Duration::from_secs(age.as_secs()));
            Freshness {
                fresh: age <= max_age,
                message: format!(
                    "content feed: last good manifest {age_text} ago (at {at}); limit {limit}"
                ),
            }
        }
    })
}

/// The scheduled freshness check: logged, and on failure logged at error level and posted to
/// the webhook (`{"text": …}`), as the seed's `email_on_failure` reports a stalled sync.
pub async fn check_and_alert(
    store: &dyn ContentStore,
    now: DateTime<Utc>,
    schedule: &ScheduleConfig,
    http: &reqwest::Client,
) -> Option<Freshness> {
    let freshness = match freshness(store, now, schedule.freshness_max_age).await {
        Ok(f) => f,
        Err(error) => {
            tracing::error!(%error, "freshness check failed");
            return None;
        }
    };
    if freshness.fresh {
        tracing::info!(message = %freshness.message, "content feed is fresh");
        return Some(freshness);
    }
    tracing::error!(message = %freshness.message, "content feed is stale");
    if let Some(hook) = schedule.webhook.as_deref().filter(|h| !h.is_empty()) {
        let sent = http
            .post(hook)
            .json(&serde_json::json!({"text": freshness.message}))
            .send()
            .await
            .and_then(|r| r.error_for_status());
        if let Err(error) = sent {
            // Without the URL: a webhook URL usually carries its secret.
            tracing::error!(error = %error.without_url(), "freshness webhook failed");
        }
    }
    Some(freshness)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> DateTime<Utc> {
        text.parse().expect("time")
    }

    #[test]
    fn the_seed_schedule_in_order() {
        let config = ScheduleConfig::default();
        let weekly = config.check().expect("valid");
        // Sunday 2026-11-29, 23:50 Berlin (22:50 UTC) → 00:00 delta, 00:10 check, …
        let mut now = utc("2026-11-28T22:50:00Z");
        let mut seen = Vec::new();
        for _ in 0..6 {
            let (at, job) = config.next(weekly, now);
            seen.push((
                at.with_timezone(&Berlin).format("%a %H:%M").to_string(),
                job,
            ));
            now = at;
        }
        assert_eq!(
            seen,
            [
                ("Sun 00:00".to_string(), Job::Delta),
                ("Sun 00:10".to_string(), Job::Freshness),
                ("Sun 01:00".to_string(), Job::Delta),
                ("Sun 01:05".to_string(), Job::Refresh),
                ("Sun 01:10".to_string(), Job::Freshness),
                ("Sun 02:00".to_string(), Job::Delta),
            ]
        );
    }

    #[test]
    fn weekly_times_parse_strictly() {
        assert_eq!(
            Weekly::parse("sun 01:05"),
            Ok(Weekly {
                day: Weekday::Sun,
                hour: 1,
                minute: 5
            })
        );
        assert!(Weekly::parse("sonntag 01:05").is_err());
        assert!(Weekly::parse("sun 25:00").is_err());
        assert!(Weekly::parse("sun").is_err());
    }
}
