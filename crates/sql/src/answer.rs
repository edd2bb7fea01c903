//! What a SQL tool answers: its result's schema, the result of an outcome (the same for a dry
//! run's preview and the write it previews), and a database's failure in words a model can act
//! on, without the database's own text.

use concierge_core::{CallContext, ToolError};
use serde_json::{Map, Value, json};

use crate::engine::{Failure, Outcome};

/// The JSON Schema of every result: the rows (each as `row` says), how many, whether more
/// matched, and for a write the rows it changed.
pub fn result_schema(row: Value, write: bool) -> Map<String, Value> {
    let mut properties = json!({
        "rows": {"type": "array", "items": row},
        "returned": {"type": "integer", "minimum": 0},
        "truncated": {"type": "boolean", "description": "more rows matched than were returned: narrow the filter"},
        "note": {"type": "string"}
    });
    if write {
        properties["affected_rows"] = json!({"type": "integer", "minimum": 0});
    }
    // A write's answer may also be the platform's confirmation preview or a dry run's, which
    // carry these fields inside `preview` or beside others: a write requires none of them.
    let required = if write {
        json!([])
    } else {
        json!(["rows", "returned", "truncated"])
    };
    match json!({"type": "object", "properties": properties, "required": required}) {
        Value::Object(schema) => schema,
        _ => Map::new(),
    }
}

/// The call's answer, its figures noted for the audit line.
pub(crate) fn answer(outcome: Outcome, context: &CallContext, write: bool) -> Value {
    context.note("returned", outcome.rows.len());
    context.note("truncated", outcome.truncated);
    if write {
        context.note("affected_rows", outcome.affected.unwrap_or_default());
    }
    result_of(outcome, write)
}

/// What a call answers for `outcome`: a dry run's preview and the write it previews answer the
/// same for the same change.
pub(crate) fn result_of(outcome: Outcome, write: bool) -> Value {
    let returned = outcome.rows.len();
    // The rows move into the answer: a page can be 64 KiB, and it is not copied again.
    let rows = outcome.rows.into_iter().map(Value::Object).collect();
    let mut result = Map::with_capacity(5);
    result.insert("rows".into(), Value::Array(rows));
    result.insert("returned".into(), returned.into());
    result.insert("truncated".into(), outcome.truncated.into());
    if write {
        result.insert(
            "affected_rows".into(),
            outcome.affected.unwrap_or_default().into(),
        );
    }
    if outcome.truncated {
        result.insert(
            "note".into(),
            "more rows matched than one answer holds; narrow the filter to see the rest".into(),
        );
    }
    Value::Object(result)
}

/// A failure as the model may see it, where a value not of its parameter's type names the
/// argument it came from (`argument` of the parameter's index; `None` for a value `bind` filled
/// in, which the caller did not pass).
pub(crate) fn refusal(failure: Failure, argument: impl Fn(usize) -> Option<String>) -> ToolError {
    match failure {
        Failure::ParameterType { at, reason } => match argument(at) {
            Some(name) => ToolError::invalid(name, reason),
            None => refused("invalid_value", NOT_TAKEN, reason),
        },
        other => tool_error(other),
    }
}

/// A failure as the model may see it: what happened and what to do, never the database's
/// text (which names tables, columns and values); that goes to the log.
pub(crate) fn tool_error(failure: Failure) -> ToolError {
    match failure {
        Failure::Timeout => ToolError::internal("timeout", "statement timeout").with_message(
            "the query took too long and was stopped; try again, or narrow the filter",
        ),
        Failure::Unavailable(detail) => ToolError::internal("database_unavailable", detail)
            .with_message("the database cannot be reached right now; try again later"),
        Failure::Conflict(detail) => refused("conflict", ALREADY_EXISTS, detail),
        Failure::Reference(detail) => refused("reference_missing", NO_SUCH_RECORD, detail),
        Failure::Constraint(detail) => refused("constraint_failed", AGAINST_THE_RULES, detail),
        Failure::ReadOnly(detail) => refused("read_only", READ_ONLY, detail),
        Failure::BadValue(detail) | Failure::ParameterType { reason: detail, .. } => {
            refused("invalid_value", NOT_TAKEN, detail)
        }
        Failure::TooManyRows { affected, allowed } => ToolError::rejected(
            "too_many_rows",
            format!(
                "the change would affect {affected} rows, more than the {allowed} this tool allows; nothing was changed"
            ),
        ),
        Failure::Stale => ToolError::rejected(
            "stale_preview",
            "the data changed since the preview: this change would now affect other rows than the ones confirmed; nothing was changed, ask for a new preview",
        ),
        Failure::Column(detail) => ToolError::internal("unsupported_column", detail),
        Failure::OutcomeUnknown(detail) => ToolError::outcome_unknown(
            "the database did not confirm the change: it may or may not have been made; look before trying again (this idempotency_key now answers this again)",
            detail,
        ),
        Failure::Other(detail) => ToolError::internal("database_error", detail),
    }
}

/// What the model is told when a rule of the database refused a change.
const ALREADY_EXISTS: &str = "a record with this value already exists; nothing was changed";
const NO_SUCH_RECORD: &str = "the change refers to a record that does not exist, or removes one that others still refer to; nothing was changed";
const AGAINST_THE_RULES: &str =
    "a value is missing or not allowed by the database's rules; nothing was changed";
const NOT_TAKEN: &str = "a value is not one the database can take here (its form, length or range); check the arguments; nothing was changed";
const READ_ONLY: &str =
    "this tool may only read, and the database refused a change; nothing was changed";

/// A change the database refused: the model gets `message`, the log the database's own text.
fn refused(code: &'static str, message: &str, detail: String) -> ToolError {
    ToolError::rejected(code, message).with_detail(detail)
}
