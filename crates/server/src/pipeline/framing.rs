//! The JSON-RPC framing of a posted MCP message, checked before the transport sees it.
//!
//! rmcp answers a body it cannot deserialize with 415 and serde's text; JSON-RPC 2.0 says a
//! body that is not JSON is a parse error (`-32700`) and JSON that is not a request an invalid
//! request (`-32600`), and the MCP transport answers both with 400. One pass over the body
//! (borrowing, no tree built) also names the method and, for `tools/call`, the tool — what the
//! scope step-up needs.

use std::borrow::Cow;
use std::fmt;

use concierge_core::Outcome;
use http::StatusCode;
use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, json};

use super::Refusal;

/// What a well-framed message says about itself.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Message<'a> {
    /// `None`: a response or error from the client.
    pub method: Option<Cow<'a, str>>,
    /// `params.name` of a `tools/call`.
    pub tool: Option<Cow<'a, str>>,
    /// `params._meta.traceparent`: the client's trace, for clients that cannot set headers.
    pub traceparent: Option<Cow<'a, str>>,
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
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    result: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<IgnoredAny>,
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
}

/// `params`: only `name` and `_meta.traceparent` are read; arrays and anything else are skipped.
struct Params<'a> {
    name: Option<Cow<'a, str>>,
    traceparent: Option<Cow<'a, str>>,
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
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Meta(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Meta(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Meta(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Meta(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Meta(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Meta(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Meta(None))
            }
        }
        deserializer.deserialize_any(Reader(std::marker::PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Params<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Reader<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Reader<'a> {
            type Value = Params<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("params")
            }
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
                Ok(Params { name, traceparent })
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Params {
                    name: None,
                    traceparent: None,
                })
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Params {
                    name: None,
                    traceparent: None,
                })
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
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(AnyName(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(AnyName(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(AnyName(Some(Cow::Owned(v))))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(AnyName(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(AnyName(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(AnyName(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(AnyName(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(AnyName(None))
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(AnyName(None))
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
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
        let code = if malformed.code == -32700 {
            "parse_error"
        } else {
            "invalid_request"
        };
        Refusal::with_body(
            StatusCode::BAD_REQUEST,
            Outcome::InvalidArgument,
            code,
            malformed.body(),
        )
    })
}

pub fn read(body: &[u8]) -> Result<Message<'_>, Malformed> {
    let probe = match serde_json::from_slice::<Probe>(body) {
        Ok(probe) => probe,
        Err(error) => {
            return Err(if serde_json::from_slice::<IgnoredAny>(body).is_err() {
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
    })
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
        assert!(read(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1,2]}"#).is_ok());
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
}
