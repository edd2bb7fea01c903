//! The JSON-RPC framing of a posted MCP message, checked before the transport sees it: framing
//! is ours, in both protocol eras and on every transport path.
//!
//! rmcp answers a body it cannot deserialize with 415 and serde's text; JSON-RPC 2.0 says a
//! body that is not JSON is a parse error (`-32700`), JSON that is not a request an invalid
//! request (`-32600`) and a request whose params do not fit its method invalid params
//! (`-32602`), and the MCP transport answers each with 400. So the step reads the body as
//! rmcp will: UTF-8 throughout, nesting within [`MAX_DEPTH`], an `id` that is a string or an
//! integer, `params` an object ([`read`]: one pass, borrowing, no tree built, which also names
//! the method and the tool the scope step-up needs). A message that passes and still does not
//! fit rmcp's own message type (a request whose params do not fit its method) is answered the
//! same way ([`unreadable`]) where rmcp would answer 415: the transport's reply is replaced, so
//! the check costs nothing on the way in.

use std::borrow::Cow;
use std::fmt;

use concierge_core::Outcome;
use http::StatusCode;
use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, json};

use super::Refusal;

/// How deep objects and arrays may nest in a message: far more than any tool's arguments need,
/// and a bound on the work a stranger's body costs before anyone has looked at it.
pub const MAX_DEPTH: usize = 64;

/// What a well-framed message says about itself.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Message<'a> {
    /// `None`: a response or error from the client.
    pub method: Option<Cow<'a, str>>,
    /// `params.name` of a `tools/call`.
    pub tool: Option<Cow<'a, str>>,
    /// `params._meta.traceparent`: the client's trace, for clients that cannot set headers.
    pub traceparent: Option<Cow<'a, str>>,
    /// The message's `id` (a string or an integer), for the answer to a refusal after this step.
    pub id: Option<Value>,
}

/// A body that is not one JSON-RPC message: the answer's JSON-RPC error.
#[derive(Debug, PartialEq)]
pub struct Malformed {
    pub code: i64,
    pub message: String,
    pub id: Value,
}

impl Malformed {
    pub fn body(&self) -> Value {
        json!({"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}})
    }
}

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    /// Present (`null` included) or absent.
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default)]
    result: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<IgnoredAny>,
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
}

/// A field that is present, whatever its value (`null` too: serde reads an `Option` of `null`
/// as absent).
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// The JSON-RPC error document of a refusal after framing: it names the message's `id`.
fn error_document(id: Option<&Value>, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null), "error": {"code": code, "message": message}})
}

/// The visitor methods for the values a reader does not look into (a boolean, a number, an
/// array, skipped whole): each answers `$value`. A string, `null` and an object are each
/// reader's own.
macro_rules! any_other_value {
    ($value:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($value)
        }
    };
}

/// `params`: only `name` and `_meta.traceparent` are read; anything but an object is noted
/// (and refused by [`read`]).
struct Params<'a> {
    name: Option<Cow<'a, str>>,
    traceparent: Option<Cow<'a, str>>,
    object: bool,
}

/// `params._meta`: only `traceparent` is read.
struct Meta<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Meta<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Reader<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Reader<'a> {
            type Value = Meta<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("_meta")
            }
            any_other_value!(Meta(None));
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut traceparent = None;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    if key == "traceparent" {
                        traceparent = map.next_value::<AnyName<'de>>()?.0;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Meta(traceparent))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Meta(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Meta(None))
            }
        }
        deserializer.deserialize_any(Reader(std::marker::PhantomData))
    }
}

impl Params<'_> {
    const NOT_AN_OBJECT: Self = Params {
        name: None,
        traceparent: None,
        object: false,
    };
}

impl<'de: 'a, 'a> Deserialize<'de> for Params<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Reader<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Reader<'a> {
            type Value = Params<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("params")
            }
            any_other_value!(Params::NOT_AN_OBJECT);
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let (mut name, mut traceparent) = (None, None);
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    if key == "name" {
                        name = map.next_value::<AnyName<'de>>()?.0;
                    } else if key == "_meta" {
                        traceparent = map.next_value::<Meta<'de>>()?.0;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Params {
                    name,
                    traceparent,
                    object: true,
                })
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                // `"params": null` is read as no params, as rmcp reads it.
                Ok(Params {
                    object: true,
                    ..Params::NOT_AN_OBJECT
                })
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Params::NOT_AN_OBJECT)
            }
        }
        deserializer.deserialize_any(Reader(std::marker::PhantomData))
    }
}

/// `params.name`: the string (borrowed when it has no escapes), or `None` for any other value —
/// what a method other than `tools/call` means by `name` is not ours to refuse.
struct AnyName<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for AnyName<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Reader<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Reader<'a> {
            type Value = AnyName<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            any_other_value!(AnyName(None));
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(AnyName(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(AnyName(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(AnyName(Some(Cow::Owned(v))))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(AnyName(None))
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(AnyName(None))
            }
        }
        deserializer.deserialize_any(Reader(std::marker::PhantomData))
    }
}

/// Reads `body` as one JSON-RPC 2.0 message.
/// The framing step: the message, or 400 with the JSON-RPC error.
pub fn decide(body: &[u8]) -> Result<Message<'_>, Refusal> {
    read(body).map_err(|malformed| {
        let code = match malformed.code {
            -32700 => "parse_error",
            -32602 => "invalid_params",
            _ => "invalid_request",
        };
        Refusal::with_body(
            StatusCode::BAD_REQUEST,
            Outcome::InvalidArgument,
            code,
            malformed.body(),
        )
    })
}

/// A message in `body` the transport could not read although its envelope passed [`read`]: 400
/// with `-32602` for a request or notification (its params do not fit its method), `-32600`
/// for anything else, naming the message's `id`.
pub fn unreadable(body: &[u8]) -> Refusal {
    let message = read(body).unwrap_or_default();
    let (code, text) = match &message.method {
        Some(method) if message.id.is_some() => (
            -32602,
            format!("invalid params: the params of `{method}` do not fit the method"),
        ),
        Some(method) => (
            -32602,
            format!("invalid params: the params of the notification `{method}` do not fit it"),
        ),
        None => (
            -32600,
            "invalid request: a response must carry a `result` object or an `error` with `code` and `message`".to_string(),
        ),
    };
    let outcome_code = if code == -32602 {
        "invalid_params"
    } else {
        "invalid_request"
    };
    Refusal::with_body(
        StatusCode::BAD_REQUEST,
        Outcome::InvalidArgument,
        outcome_code,
        error_document(message.id.as_ref(), code, &text),
    )
}

/// `body` as text a message may be read from: UTF-8, nested within [`MAX_DEPTH`] — the two
/// rules a parse into a message type does not check by itself. The direct path reads its plain
/// `tools/call` into its own type after this, and that type holds the rest of the envelope's
/// rules, so such a call is read once.
pub fn readable(body: &[u8]) -> Option<&str> {
    std::str::from_utf8(body)
        .ok()
        .filter(|_| !nests_deeper_than(body, MAX_DEPTH))
}

/// `body` as one JSON-RPC 2.0 message: its envelope as rmcp reads it, or the error to answer.
pub fn read(body: &[u8]) -> Result<Message<'_>, Malformed> {
    let Ok(text) = std::str::from_utf8(body) else {
        return Err(Malformed {
            code: -32700,
            message: "parse error: the body is not UTF-8".into(),
            id: Value::Null,
        });
    };
    if nests_deeper_than(body, MAX_DEPTH) {
        return Err(invalid(&format!(
            "invalid request: the message nests deeper than {MAX_DEPTH} levels"
        )));
    }
    let probe = match serde_json::from_str::<Probe>(text) {
        Ok(probe) => probe,
        Err(error) => {
            return Err(if serde_json::from_str::<IgnoredAny>(text).is_err() {
                Malformed {
                    code: -32700,
                    message: format!(
                        "parse error: the body is not JSON (line {}, column {})",
                        error.line(),
                        error.column()
                    ),
                    id: Value::Null,
                }
            } else if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
                invalid("batches are not supported; send one message per request")
            } else {
                invalid(
                    "invalid request: a JSON-RPC message is an object with `jsonrpc`, and `method` (a string) or `result`/`error`",
                )
            });
        }
    };
    if let Some(id) = &probe.id
        && !is_request_id(id)
    {
        return Err(invalid(
            "invalid request: `id` must be a string or an integer (within 64 bits)",
        ));
    }
    let id = probe.id.clone().unwrap_or(Value::Null);
    if probe.jsonrpc.as_deref() != Some("2.0") {
        return Err(Malformed {
            id,
            ..invalid("invalid request: `jsonrpc` must be \"2.0\"")
        });
    }
    if probe.method.is_none()
        && (probe.id.is_none() || (probe.result.is_none() && probe.error.is_none()))
    {
        return Err(Malformed {
            id,
            ..invalid("invalid request: a message needs `method`, or `id` with `result` or `error`")
        });
    }
    let (name, traceparent) = match probe.params {
        Some(params) if !params.object => {
            return Err(Malformed {
                code: -32602,
                message: "invalid params: `params` must be an object".into(),
                id,
            });
        }
        Some(params) => (params.name, params.traceparent),
        None => (None, None),
    };
    let tool = match probe.method.as_deref() {
        Some("tools/call") => name,
        _ => None,
    };
    Ok(Message {
        method: probe.method,
        tool,
        traceparent,
        id: probe.id,
    })
}

/// An id as rmcp reads one: a string, or an integer within 64 signed bits (`1.0` and `1e2`
/// are integers written as floats). `null`, a fraction, a boolean, an array or an object is none.
fn is_request_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => {
            n.is_i64()
                || n.as_f64().is_some_and(|f| {
                    f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64
                })
        }
        _ => false,
    }
}

/// Whether objects and arrays in `body` nest deeper than `bound` (brackets inside strings do
/// not count). A body with no more opening brackets than `bound` cannot (the common case, and
/// a count `memchr` makes with vector instructions, a fraction of an instruction a byte); any
/// other is walked once, before anything is parsed.
fn nests_deeper_than(body: &[u8], bound: usize) -> bool {
    if memchr::memchr2_iter(b'{', b'[', body).nth(bound).is_none() {
        return false;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &byte in body {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > bound {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

fn invalid(message: &str) -> Malformed {
    Malformed {
        code: -32600,
        message: message.to_string(),
        id: Value::Null,
    }
}

/// The body is declared JSON (`application/json`, any parameters).
pub fn is_json(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_names_its_method_and_tool() {
        let message = read(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"name":"x"},"name":"search_menu"}}"#,
        )
        .unwrap();
        assert_eq!(message.method.as_deref(), Some("tools/call"));
        assert_eq!(message.tool.as_deref(), Some("search_menu"));
        let message = read(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert_eq!(message.tool, None);
        assert!(
            read(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#)
                .unwrap()
                .method
                .is_none()
        );
        assert_eq!(
            read(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1,2]}"#)
                .unwrap_err()
                .code,
            -32602
        );
        assert!(read(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#).is_ok());
        let odd = read(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"name":{"a":[1]}}}"#);
        assert_eq!(
            odd.unwrap().tool,
            None,
            "a name that is no string is not refused"
        );
        let escaped =
            read(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a\u0062"}}"#);
        assert_eq!(escaped.unwrap().tool.as_deref(), Some("ab"));
    }

    #[test]
    fn a_traceparent_in_meta_is_read_and_any_other_meta_is_no_error() {
        let traced = read(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":1,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}"#,
        )
        .unwrap();
        assert_eq!(
            traced.traceparent.as_deref(),
            Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        );
        assert_eq!(traced.tool.as_deref(), Some("t"));
        for meta in [r#""x""#, "[1]", "null", "7", r#"{"traceparent":{"a":1}}"#] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{meta}}}}}"#
            );
            let message = read(body.as_bytes()).unwrap();
            assert_eq!(message.traceparent, None, "{meta}");
        }
    }

    #[test]
    fn not_json_is_a_parse_error_and_other_json_an_invalid_request() {
        assert_eq!(read(b"{\"jsonrpc\":").unwrap_err().code, -32700);
        assert_eq!(read(b"").unwrap_err().code, -32700);
        assert_eq!(read(b"[]").unwrap_err().code, -32600);
        assert_eq!(read(b"42").unwrap_err().code, -32600);
        assert_eq!(
            read(br#"{"jsonrpc":"2.0","id":1,"method":7}"#)
                .unwrap_err()
                .code,
            -32600
        );
        let wrong = read(br#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#).unwrap_err();
        assert_eq!((wrong.code, wrong.id), (-32600, json!(9)));
        assert_eq!(
            read(br#"{"jsonrpc":"2.0","id":1}"#).unwrap_err().code,
            -32600
        );
    }

    #[test]
    fn an_id_is_a_string_or_an_integer_within_64_bits() {
        for id in ["1", "-7", "\"a\"", "1.0", "1e2", "9223372036854775807"] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            assert!(read(body.as_bytes()).is_ok(), "{id}");
        }
        for id in [
            "{}",
            "[]",
            "true",
            "null",
            "1.5",
            "18446744073709551616",
            "1e30",
        ] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            let refused = read(body.as_bytes()).unwrap_err();
            assert_eq!((refused.code, refused.id), (-32600, Value::Null), "{id}");
        }
    }

    #[test]
    fn params_are_an_object_the_body_utf8_and_nesting_bounded() {
        for params in ["[1]", "\"x\"", "7", "true"] {
            let body =
                format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{params}}}"#);
            let refused = read(body.as_bytes()).unwrap_err();
            assert_eq!((refused.code, refused.id), (-32602, json!(3)), "{params}");
        }
        let mut latin1 = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"q":"M"#.to_vec();
        latin1.extend_from_slice(b"\xfcnchen\"}}}");
        assert_eq!(read(&latin1).unwrap_err().code, -32700);
        let deep = |levels: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"a":{}1{}}}}}"#,
                "[".repeat(levels),
                "]".repeat(levels)
            )
        };
        assert!(read(deep(MAX_DEPTH - 2).as_bytes()).is_ok());
        assert_eq!(read(deep(MAX_DEPTH).as_bytes()).unwrap_err().code, -32600);
        assert_eq!(read(deep(100_000).as_bytes()).unwrap_err().code, -32600);
        let brackets_in_a_string = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"a":"{}\"{}"}}}}"#,
            "[".repeat(200),
            "{".repeat(200)
        );
        assert!(read(brackets_in_a_string.as_bytes()).is_ok());
    }

    #[test]
    fn a_message_rmcp_cannot_read_is_refused_with_its_id() {
        let body = br#"{"jsonrpc":"2.0","id":5,"error":{"code":"x"}}"#;
        let refusal = unreadable(body);
        assert_eq!(refusal.status, StatusCode::BAD_REQUEST);
        assert_eq!(refusal.code, "invalid_request");
        let request = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":7}}"#;
        assert_eq!(unreadable(request).code, "invalid_params");
    }
}
