//! The audit trail as the console reads it: every sink of the deployment, from its table when it
//! has one (filtered by SQL), otherwise from the tail of its JSON Lines file; and what the
//! overview draws from the last day of it.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};

use chrono::{DateTime, Duration, Utc};
use concierge_core::Outcome;
use serde_json::Value;

use crate::audit_sql::AuditQuery;
use crate::config::Config;
use crate::writes::WriteOutcome;

/// How much of a file-only sink's end is read: the newest events, bounded.
const FILE_TAIL: u64 = 8 << 20;

/// The console's filter (all optional).
#[derive(Debug, Default, Clone, serde::Deserialize)]
pub struct Filter {
    #[serde(default)]
    pub client: String,
    #[serde(default)]
    pub user: String,
    #[serde(default)]
    pub tool: String,
    #[serde(default)]
    pub outcome: String,
    /// RFC 3339.
    #[serde(default)]
    pub since: String,
    #[serde(default)]
    pub until: String,
    #[serde(default)]
    pub trace: String,
}

fn some(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

impl Filter {
    fn keeps(&self, event: &Value) -> bool {
        let field = |name: &str| event[name].as_str().unwrap_or("");
        let equal =
            |wanted: &str, name: &str| wanted.trim().is_empty() || field(name) == wanted.trim();
        let ts = field("ts");
        equal(&self.client, "client")
            && equal(&self.user, "user")
            && equal(&self.tool, "tool")
            && equal(&self.outcome, "outcome")
            && equal(&self.trace, "trace_id")
            && (self.since.trim().is_empty() || later_or_equal(ts, &self.since))
            && (self.until.trim().is_empty() || !later_or_equal(ts, &self.until))
    }

    /// Bad times are said, not ignored.
    pub fn problem(&self) -> Option<String> {
        for (name, value) in [("since", &self.since), ("until", &self.until)] {
            if some(value).is_some() && DateTime::parse_from_rfc3339(value.trim()).is_err() {
                return Some(format!(
                    "{name}: `{value}` is not a time like 2026-12-01T08:00:00Z"
                ));
            }
        }
        None
    }
}

fn later_or_equal(ts: &str, bound: &str) -> bool {
    match (
        DateTime::parse_from_rfc3339(ts),
        DateTime::parse_from_rfc3339(bound.trim()),
    ) {
        (Ok(ts), Ok(bound)) => ts >= bound,
        _ => true,
    }
}

/// The newest `limit` events of every sink that `filter` keeps, newest first, each with its
/// sink's name under `sink`.
pub async fn read(config: &Config, filter: &Filter, limit: usize) -> Vec<Value> {
    let mut events = Vec::new();
    for (name, section) in &config.audit {
        let found = match &section.database {
            Some(database) => {
                let query = AuditQuery {
                    user: some(&filter.user),
                    client: some(&filter.client),
                    tool: some(&filter.tool),
                    since: some(&filter.since),
                    until: some(&filter.until),
                    // Outcome and trace are filtered below: then read more than is shown.
                    limit: if some(&filter.outcome).is_some() || some(&filter.trace).is_some() {
                        (limit * 4) as u32
                    } else {
                        limit as u32
                    },
                };
                crate::audit_sql::query(database, &query)
                    .await
                    .unwrap_or_else(|error| {
                        tracing::warn!(sink = %name, %error, "ops: audit table unreadable");
                        Vec::new()
                    })
            }
            None => tail(&section.path),
        };
        events.extend(found.into_iter().filter(|e| filter.keeps(e)).map(|mut e| {
            e["sink"] = Value::from(name.as_str());
            e
        }));
    }
    events.sort_by(|a, b| b["ts"].as_str().cmp(&a["ts"].as_str()));
    events.truncate(limit);
    events
}

/// The events in the last [`FILE_TAIL`] bytes of a JSON Lines file.
fn tail(path: &std::path::Path) -> Vec<Value> {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let length = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = length.saturating_sub(FILE_TAIL);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return Vec::new();
    }
    let mut text = String::new();
    if file.take(FILE_TAIL).read_to_string(&mut text).is_err() {
        return Vec::new();
    }
    // A tail that starts mid-line drops its first, partial line.
    let lines = text.lines().skip(usize::from(start > 0));
    lines.filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// One client's last hour and day.
#[derive(Debug, Default, Clone)]
pub struct ClientStats {
    pub calls_hour: u64,
    pub calls_day: u64,
    pub refusals_hour: u64,
    pub refusals_day: u64,
    pub p95_hour_ms: Option<f64>,
    pub p95_day_ms: Option<f64>,
    /// Calls and refusals in each of the last 24 hours, oldest first.
    pub hourly: [(u64, u64); 24],
}

/// What a refusal is in the audit: the request was turned away before a tool answered it.
fn refused(event: &Value) -> bool {
    matches!(
        event["outcome"].as_str().and_then(Outcome::named),
        Some(
            Outcome::Unauthorized
                | Outcome::Forbidden
                | Outcome::RateLimited
                | Outcome::SessionRefused
                | Outcome::UnknownTool
                | Outcome::Misconfigured
        )
    ) || event["code"] == "invalid_argument"
}

/// Per client, from the events of the last day at the MCP endpoints `endpoints` (the
/// authorization server's events share a sink with them).
pub fn client_stats(
    events: &[Value],
    endpoints: &[&str],
    now: DateTime<Utc>,
) -> BTreeMap<String, ClientStats> {
    let mut stats: BTreeMap<String, ClientStats> = BTreeMap::new();
    let mut durations: BTreeMap<String, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for event in events {
        let at_endpoint = event["endpoint"]
            .as_str()
            .is_some_and(|e| endpoints.iter().any(|p| e.starts_with(p)));
        if !at_endpoint {
            continue;
        }
        let Some(ts) = event["ts"]
            .as_str()
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        else {
            continue;
        };
        let age = now - ts.with_timezone(&Utc);
        if age > Duration::hours(24) || age < Duration::zero() {
            continue;
        }
        let client = event["client"].as_str().unwrap_or("(none)").to_string();
        let entry = stats.entry(client.clone()).or_default();
        let (hour, day) = durations.entry(client).or_default();
        let recent = age <= Duration::hours(1);
        let bucket = 23 - (age.num_hours().clamp(0, 23) as usize);
        let duration = event["duration_ms"].as_f64();
        if refused(event) {
            entry.refusals_day += 1;
            entry.hourly[bucket].1 += 1;
            if recent {
                entry.refusals_hour += 1;
            }
        } else {
            entry.calls_day += 1;
            entry.hourly[bucket].0 += 1;
            if let Some(duration) = duration {
                day.push(duration);
                if recent {
                    hour.push(duration);
                }
            }
            if recent {
                entry.calls_hour += 1;
            }
        }
    }
    for (client, (hour, day)) in durations {
        if let Some(entry) = stats.get_mut(&client) {
            entry.p95_hour_ms = p95(hour);
            entry.p95_day_ms = p95(day);
        }
    }
    stats
}

fn p95(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let rank = ((values.len() as f64) * 0.95).ceil() as usize;
    values.get(rank.saturating_sub(1)).copied()
}

/// How [`write_outcomes`] names a write that was made (its audit line has no code).
pub const MADE: &str = "made";

/// How a write call ends, as [`write_outcomes`] counts it, and what each means: the console's
/// legend. A failure is counted by its outcome.
pub const WRITE_ENDS: [(&str, &str); 6] = [
    (MADE, "written"),
    (WriteOutcome::DRY_RUN, "validated, nothing changed"),
    (
        WriteOutcome::CONFIRM_FIRST,
        "a preview whose confirm token was handed out",
    ),
    (
        WriteOutcome::ASK,
        "a preview the user was asked to confirm (MRTR)",
    ),
    (
        WriteOutcome::REPLAYED,
        "answered from the idempotency record",
    ),
    (Outcome::RateLimited.name(), "refused by the write budget"),
];

/// The write tools' calls of the last day by how they ended: made, dry run, preview awaiting a
/// confirmation, answered from the idempotency record, refused by the write budget, or failed
/// (by outcome).
pub fn write_outcomes(
    events: &[Value],
    write_tools: &[&str],
) -> BTreeMap<String, BTreeMap<String, u64>> {
    let mut writes: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for event in events {
        let Some(tool) = event["tool"].as_str().filter(|t| write_tools.contains(t)) else {
            continue;
        };
        let ended = match (event["outcome"].as_str(), event["code"].as_str()) {
            (Some(outcome), code) if outcome == Outcome::Ok.name() => {
                code.unwrap_or(MADE).to_string()
            }
            (Some(outcome), _) => outcome.to_string(),
            (None, _) => continue,
        };
        *writes
            .entry(tool.to_string())
            .or_default()
            .entry(ended)
            .or_default() += 1;
    }
    writes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stats_split_calls_from_refusals_by_hour() {
        let now: DateTime<Utc> = "2026-12-02T12:00:00Z".parse().unwrap();
        let events: Vec<Value> = vec![
            json!({"ts": "2026-12-02T11:50:00Z", "client": "demo", "outcome": "ok", "duration_ms": 2.0}),
            json!({"ts": "2026-12-02T11:40:00Z", "client": "demo", "outcome": "ok", "duration_ms": 40.0}),
            json!({"ts": "2026-12-02T05:00:00Z", "client": "demo", "outcome": "not_found", "duration_ms": 9.0}),
            json!({"ts": "2026-12-02T11:00:30Z", "client": "demo", "outcome": "rate_limited"}),
            json!({"ts": "2026-12-01T05:00:00Z", "client": "demo", "outcome": "ok"}),
            json!({"ts": "2026-12-02T11:59:00Z", "client": "agent", "outcome": "invalid_argument", "code": "invalid_argument"}),
        ];
        let mut events = events;
        for event in &mut events {
            event["endpoint"] = json!("/coffee/mcp");
        }
        events.push(json!({"ts": "2026-12-02T11:59:00Z", "endpoint": "/register", "client": "dcr-1", "outcome": "ok"}));
        let stats = client_stats(&events, &["/coffee/mcp"], now);
        assert!(
            !stats.contains_key("dcr-1"),
            "the authorization server's events are not calls"
        );
        let demo = &stats["demo"];
        assert_eq!((demo.calls_hour, demo.calls_day), (2, 3));
        assert_eq!((demo.refusals_hour, demo.refusals_day), (1, 1));
        assert_eq!(demo.p95_hour_ms, Some(40.0));
        assert_eq!(demo.hourly[23], (2, 1));
        assert_eq!(demo.hourly[16], (1, 0));
        assert_eq!(stats["agent"].refusals_hour, 1);
        let filter = Filter {
            outcome: "ok".into(),
            ..Filter::default()
        };
        assert_eq!(events.iter().filter(|e| filter.keeps(e)).count(), 4);
        let writes = write_outcomes(
            &[
                json!({"tool": "review_reply", "outcome": "ok"}),
                json!({"tool": "review_reply", "outcome": "ok", "code": "idempotent_replay"}),
                json!({"tool": "review_reply", "outcome": "rate_limited", "code": "rate_limited"}),
                json!({"tool": "location_list", "outcome": "ok"}),
            ],
            &["review_reply"],
        );
        assert_eq!(writes.len(), 1);
        assert_eq!(writes["review_reply"]["made"], 1);
        assert_eq!(writes["review_reply"]["idempotent_replay"], 1);
        assert_eq!(writes["review_reply"]["rate_limited"], 1);
        let bad = Filter {
            since: "yesterday".into(),
            ..Filter::default()
        };
        assert!(bad.problem().unwrap().contains("since"));
    }

    #[test]
    fn the_legend_explains_every_way_a_write_ends_short_of_a_failure() {
        let legend: Vec<&str> = WRITE_ENDS.iter().map(|(ended, _)| *ended).collect();
        let ends = [
            WriteOutcome::Ran(Value::Null),
            WriteOutcome::DryRun(Value::Null),
            WriteOutcome::ConfirmFirst(Value::Null),
            WriteOutcome::Ask(Value::Null),
            WriteOutcome::Replayed(Value::Null),
        ];
        let mut events: Vec<Value> = ends
            .iter()
            .map(|end| json!({"tool": "t", "outcome": "ok", "code": end.audit_code()}))
            .collect();
        events.push(json!({"tool": "t", "outcome": Outcome::RateLimited, "code": "rate_limited"}));
        let counted = &write_outcomes(&events, &["t"])["t"];
        assert_eq!(counted.len(), legend.len(), "{counted:?}");
        for ended in counted.keys() {
            assert!(
                legend.contains(&ended.as_str()),
                "{ended} is not in the legend"
            );
        }
    }
}
