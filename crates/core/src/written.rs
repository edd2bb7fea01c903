//! How a config writes a duration or a size, for the config's JSON Schema: the types the
//! settings hold (`std::time::Duration`, `usize`) say nothing of the text a person writes.
//! Settings fields name these with `#[schemars(with = "…")]`. No pattern: a value may be
//! `${VAR}`, read from the environment when the config is loaded.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

/// `"500ms"`, `"30s"`, `"5m"`, `"1h"`, `"30d"` (read by `humantime`).
pub struct Duration;

impl JsonSchema for Duration {
    fn schema_name() -> Cow<'static, str> {
        "DurationText".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "x-type": "duration",
        })
    }
}

/// A number of bytes, or `"64KiB"`, `"1 MiB"` (see [`crate::sizes`]).
pub struct Size;

impl JsonSchema for Size {
    fn schema_name() -> Cow<'static, str> {
        "SizeText".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "x-type": "size",
            "anyOf": [
                {"type": "integer", "minimum": 0},
                {"type": "string"},
            ],
        })
    }
}
