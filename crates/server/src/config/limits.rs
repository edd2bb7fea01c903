//! `[limits]`: named rate limiters, and what a limit counts per.

use std::fmt;
use std::time::Duration;

use serde::Deserialize;

/// What a rate limit counts per.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RateKey {
    #[default]
    Client,
    Token,
    User,
}

/// One limiter of `[limits]`.
///
/// The policy defaults to the sliding window: "60/minute" then means never more than 60 calls
/// in any 60 seconds, as a reader takes it. The bucket (a burst of the whole count, then one per
/// `period / count`) lets close to twice the count through in a rolling period, so it is only
/// ever chosen by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimiterSection {
    /// `60/minute`.
    pub rate: String,
    pub policy: concierge_core::LimitPolicy,
}

/// The table form of a limiter (the string form is its `rate` alone).
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct LimiterTable {
    /// `60/minute`: the count, then the period (`second`, `minute`, `hour`, `day`).
    rate: String,
    /// `sliding_window` (the default: never more than the count in any period) or `bucket`.
    #[serde(default)]
    policy: concierge_core::LimitPolicy,
}

impl schemars::JsonSchema for LimiterSection {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Limiter".into()
    }

    /// Either form `Deserialize` below reads.
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let table = generator.subschema_for::<LimiterTable>();
        schemars::json_schema!({
            "description": "A rate like \"60/minute\" (the sliding window), or a table with its policy.",
            "anyOf": [{"type": "string", "pattern": "^[0-9]+/"}, table],
        })
    }
}

impl<'de> Deserialize<'de> for LimiterSection {
    // By hand rather than `untagged`: an untagged enum hides which key was wrong, while this
    // reports unknown keys and policies like every other table.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = LimiterSection;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(r#"a rate like "60/minute" or { rate = "60/minute", policy = "sliding_window" }"#)
            }
            fn visit_str<E: serde::de::Error>(self, rate: &str) -> Result<Self::Value, E> {
                Ok(LimiterSection {
                    rate: rate.to_string(),
                    policy: Default::default(),
                })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                let table =
                    LimiterTable::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(LimiterSection {
                    rate: table.rate,
                    policy: table.policy,
                })
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A rate as configured: `count` calls per `period`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub count: u32,
    pub period: Duration,
}

impl Rate {
    /// Parses `60/minute`, `1000/hour`, `5/second`, `100/day`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (count, unit) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}` is not a rate like `60/minute`"))?;
        let count: u32 = count
            .trim()
            .parse()
            .ok()
            .filter(|c| *c > 0)
            .ok_or_else(|| format!("`{text}`: the count must be a whole number ≥ 1"))?;
        let period = match unit.trim() {
            "second" | "s" => Duration::from_secs(1),
            "minute" | "min" | "m" => Duration::from_secs(60),
            "hour" | "h" => Duration::from_secs(3600),
            "day" | "d" => Duration::from_secs(86_400),
            other => {
                return Err(format!(
                    "`{text}`: unknown period `{other}` (allowed: second, minute, hour, day)"
                ));
            }
        };
        Ok(Self { count, period })
    }
}
