//! A stateless endpoint's plain `tools/call`, answered without rmcp's per-request service.
//!
//! In stateless mode rmcp answers each POST by parsing the body into its message enum (the
//! guard has already read it once), building a service, a peer and a one-shot transport, and
//! spawning two to three tasks; on a busy server each spawned task waits behind every other
//! connection in tokio's run queue, so a request pays those hops in latency as well as in CPU.
//! For the request a stateless endpoint serves most — a plain `tools/call` — none of it is
//! needed: the guard has admitted the caller and the dispatcher answers the call. So the guard
//! reads such a call once, into [`PlainCall`] (which also holds the framing step's rules), and
//! hands it here, in both protocol eras:
//!
//! - before 2026-07-28: exactly `jsonrpc`, `id`, `method`, `params: {name, arguments?}`;
//! - 2026-07-28 (stateless by nature, so the common case): the same with `params._meta` holding
//!   exactly the protocol version, the client capabilities and optionally the client info, and
//!   the standard headers naming the same version, method and tool, written plainly.
//!
//! Everything else still goes to rmcp, which stays the judge of the protocol: `initialize`,
//! `tools/list`, a progress token, a log level, a task, the answers of an MRTR retry, a client
//! that declared the Tasks extension, a tool whose arguments are mirrored into headers, and any
//! `Accept` or version header that rmcp would have to weigh or refuse.
//!
//! The answer is rmcp's own message, shaped as rmcp shapes it for a peer of that revision, so a
//! client cannot tell which path answered: the tests send each call both ways and compare.

use std::borrow::Cow;
use std::sync::Arc;

use bytes::Bytes;
use concierge_core::Caller;
use http::HeaderMap;
use http::header::{ACCEPT, CONTENT_TYPE};
use rmcp::model::{
    CallToolResponse, ClientCapabilities, ErrorData, JsonObject, ProtocolVersion, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::endpoint::{CallAnswer, Endpoint};
use crate::pipeline::RequestRecord;
use crate::pipeline::framing::{self, Message, is_json};
use crate::writes::Rounds;

/// The revision of MCP that brought per-request negotiation and standard headers.
const MODERN: &str = "2026-07-28";

/// A `tools/call` with nothing rmcp treats specially, read once: the guard takes the message's
/// framing from it too (see [`PlainCall::message`]).
pub struct PlainCall {
    id: RequestId,
    name: String,
    arguments: Option<JsonObject>,
    /// A 2026-07-28 call: whether its client can be asked through a form (MRTR).
    modern: Option<bool>,
}

/// Exactly these fields, so any other `_meta` (progress tokens, log levels), a `task` or an
/// MRTR retry sends the call to rmcp; `params` an object, as framing requires.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, deserialize_with = "object")]
    params: PlainParams<'a>,
}

/// A struct read from a JSON object only: serde would also fill one from an array, field by
/// field, and framing refuses `params` that are not an object.
fn object<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    struct Object<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Object<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<T, M::Error> {
            T::deserialize(MapAccessDeserializer::new(map))
        }
    }
    deserializer.deserialize_map(Object(std::marker::PhantomData))
}

fn some_object<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    object(deserializer).map(Some)
}

impl PlainCall {
    /// What framing would have read from the body: a `tools/call` of this tool, no trace in
    /// `_meta` (a plain call's `_meta` has none).
    pub fn message(&self) -> Message<'_> {
        Message {
            method: Some(Cow::Borrowed("tools/call")),
            tool: Some(Cow::Borrowed(&self.name)),
            traceparent: None,
            id: None,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainParams<'a> {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
    /// Present exactly in a 2026-07-28 call; an object, as rmcp reads it.
    #[serde(borrow, default, rename = "_meta", deserialize_with = "some_object")]
    meta: Option<ModernMeta<'a>>,
}

/// A 2026-07-28 call's `_meta`: what every such request carries, and nothing else.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModernMeta<'a> {
    /// Borrowed from the body: compared, never kept.
    #[serde(borrow, rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: &'a RawValue,
    /// Read whole, as rmcp reads them: capabilities it cannot read make rmcp refuse the call
    /// (`-32602`), and so the call goes there.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    client_capabilities: ClientCapabilities,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default)]
    _client_info: Option<IgnoredAny>,
}

/// The call in `body`, when this module may answer it: the headers are ones rmcp would accept
/// as they are, and the body is a plain `tools/call` of the revision they name.
pub fn plain_call(headers: &HeaderMap, body: &[u8], endpoint: &Endpoint) -> Option<PlainCall> {
    if !(accepts_json_and_sse(headers) && is_json(headers)) {
        return None;
    }
    let modern = match one(headers, "mcp-protocol-version") {
        Ok(Some(version)) if version == MODERN => true,
        Ok(_) if legacy_revision(headers) => false,
        _ => return None,
    };
    // UTF-8 checked once here, so the parse need not check each string again.
    let text = framing::readable(body)?;
    // One message, an object: serde would fill the envelope from an array too, which rmcp
    // refuses (`-32600`).
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let call = serde_json::from_str::<Envelope>(text)
        .ok()
        .filter(|call| call.jsonrpc == "2.0" && call.method == "tools/call")?;
    let Envelope { id, params, .. } = call;
    let modern = match (params.meta, modern) {
        (None, false) => None,
        (Some(meta), true) => {
            let plain = meta
                .protocol_version
                .get()
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                == Some(MODERN)
                && !meta.client_capabilities.supports_tasks()
                && one(headers, "mcp-method") == Ok(Some("tools/call"))
                && one(headers, "mcp-name") == Ok(Some(params.name.as_str()))
                && !headers
                    .keys()
                    .any(|name| name.as_str().starts_with("mcp-param-"))
                && endpoint
                    .tool(&params.name)
                    .is_none_or(|tool| !tool.mirrors_headers());
            if !plain {
                return None;
            }
            let can_elicit = (meta.client_capabilities.elicitation.as_ref())
                .is_some_and(|e| Rounds::elicits_forms(e.form.is_some(), e.url.is_some()));
            Some(can_elicit)
        }
        _ => return None,
    };
    Some(PlainCall {
        id,
        name: params.name,
        arguments: params.arguments,
        modern,
    })
}

/// The one value of header `name`, written plainly (no surrounding spaces, visible ASCII);
/// `Err` for two of them or one that is not plain.
fn one<'h>(headers: &'h HeaderMap, name: &str) -> Result<Option<&'h str>, ()> {
    let mut values = headers.get_all(name).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(());
    }
    match value.to_str() {
        Ok(text) if text.trim() == text => Ok(Some(text)),
        _ => Err(()),
    }
}

/// Runs the call through the dispatcher and answers it as rmcp would.
pub async fn answer(
    endpoint: &Arc<Endpoint>,
    call: PlainCall,
    caller: Caller,
    record: &RequestRecord,
) -> http::Response<axum::body::Body> {
    let PlainCall {
        id,
        name,
        arguments,
        modern,
    } = call;
    let rpc_id = id.clone().into_json_value();
    // A 2026-07-28 client that declared form elicitation may be asked to confirm (MRTR).
    let rounds = Rounds {
        can_elicit: modern == Some(true),
        ..Rounds::default()
    };
    let modern = modern.is_some();
    let runs_on = endpoint
        .tool(&name)
        .is_some_and(|tool| !crate::transport::handler::stops_with_its_client(tool.spec()));
    let answer = if runs_on {
        // rmcp runs a handler in a task of its own, so a client that hangs up mid-call does
        // not stop it; a write keeps that promise here too (its claim and its result must
        // land together). A call that stops with its client (a read, another server's tool
        // without write safety) is simply dropped with the connection.
        let (endpoint, record) = (endpoint.clone(), record.clone());
        let running = tokio::spawn(async move {
            let call = endpoint.call_in_rounds(&name, arguments, caller, rpc_id, &rounds, &record);
            Box::pin(call).await
        });
        match running.await {
            Ok(answer) => answer,
            Err(_) => CallAnswer::BrokenOutput("the call stopped before it answered".into()),
        }
    } else {
        let call = endpoint.call_in_rounds(&name, arguments, caller, rpc_id, &rounds, record);
        Box::pin(call).await
    };
    if let Some(body) = handed_on(&answer, &id, modern) {
        return json_response(body);
    }
    let message = match crate::transport::handler::reply_of(answer) {
        Ok(CallToolResponse::Complete(result)) => {
            let mut result = ServerResult::CallToolResult(result);
            // What rmcp's handler does for a peer of the call's revision.
            if !modern {
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
            }
            ServerJsonRpcMessage::response(result, id)
        }
        Ok(CallToolResponse::InputRequired(asked)) if modern => {
            ServerJsonRpcMessage::response(ServerResult::InputRequiredResult(asked), id)
        }
        // A task needs the extension (such calls go to rmcp), input a modern peer.
        Ok(_) => ServerJsonRpcMessage::error(
            ErrorData::internal_error("a plain call answered with more than a result", None),
            Some(id),
        ),
        Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
    };
    let body = match serde_json::to_vec(&message) {
        Ok(body) => body,
        // Our own types always serialize; should one not, the client still gets JSON-RPC.
        Err(_) => serde_json::to_vec(&ServerJsonRpcMessage::error(
            ErrorData::internal_error("the answer could not be written", None),
            None,
        ))
        .unwrap_or_default(),
    };
    json_response(body)
}

fn json_response(body: Vec<u8>) -> http::Response<axum::body::Body> {
    http::Response::builder()
        .header(CONTENT_TYPE, "application/json")
        .body(axum::body::Body::from(Bytes::from(body)))
        .unwrap_or_default()
}

/// Another MCP server's answer of the everyday shape ([`concierge_core::plain_tool_result`]),
/// written as rmcp writes its own type for a peer of this revision — `resultType` "complete" at
/// 2026-07-28, none before — from the answer's JSON text, which is that result's (see
/// [`crate::endpoint::ToolAnswer::passed`]). Reading it into rmcp's type and writing it out
/// again cost a sixth of a forwarded call; any other shape still goes that way.
fn handed_on(answer: &CallAnswer, id: &RequestId, modern: bool) -> Option<Vec<u8>> {
    let CallAnswer::Result(crate::endpoint::ToolAnswer {
        passed: Some(Value::Object(result)),
        text,
        ..
    }) = answer
    else {
        return None;
    };
    // A plain result has a field, so its text is `{"…":…}`.
    let fields = text.strip_prefix('{')?;
    if !concierge_core::plain_tool_result(result) || result.contains_key("resultType") {
        return None;
    }
    let id = serde_json::to_string(id).ok()?;
    let mut body = Vec::with_capacity(text.len() + id.len() + 64);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    body.extend_from_slice(id.as_bytes());
    body.extend_from_slice(br#","result":{"#);
    if modern {
        body.extend_from_slice(br#""resultType":"complete","#);
    }
    body.extend_from_slice(fields.as_bytes());
    body.push(b'}');
    Some(body)
}

/// `Accept` names both media types a Streamable HTTP client must accept, plainly: a weight,
/// a parameter or a quote is left to rmcp's reading of the header.
fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        if value.contains([';', '"']) {
            return false;
        }
        for range in value.split(',').map(str::trim) {
            json |= range.eq_ignore_ascii_case("application/json");
            sse |= range.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && sse
}

/// No `MCP-Protocol-Version` (rmcp then assumes 2025-03-26), or one known revision before the
/// one that brought per-request negotiation and standard headers.
fn legacy_revision(headers: &HeaderMap) -> bool {
    let mut versions = headers.get_all("mcp-protocol-version").iter();
    let Some(version) = versions.next() else {
        return true;
    };
    if versions.next().is_some() {
        return false;
    }
    version.to_str().is_ok_and(|version| {
        version < ProtocolVersion::STANDARD_HEADERS.as_str()
            && ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .any(|known| known.as_str() == version)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, http::HeaderValue::from_static(value));
        }
        map
    }

    fn endpoint() -> Endpoint {
        Endpoint::new("/t/mcp".into(), None, Vec::new())
    }

    const PLAIN: &[(&str, &str)] = &[
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
    ];
    const CALL: &str =
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{}}}"#;

    #[test]
    fn a_plain_call_is_answered_here() {
        let call = plain_call(&headers(PLAIN), CALL.as_bytes(), &endpoint()).expect("plain");
        assert_eq!(call.name, "t");
        assert_eq!(call.id, RequestId::Number(7));
    }

    #[test]
    fn meta_task_or_another_method_goes_to_rmcp() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":1}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","task":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["t",{}]}"#,
            // An array is no message rmcp takes (`-32600`), though serde fills a struct from one.
            r#"["2.0",1,"tools/call",{"name":"t"}]"#,
            r#" ["2.0",1,"tools/call",{"name":"t"}]"#,
        ] {
            assert!(
                plain_call(&headers(PLAIN), body.as_bytes(), &endpoint()).is_none(),
                "{body}"
            );
        }
    }

    #[test]
    fn headers_rmcp_would_weigh_or_refuse_go_to_rmcp() {
        for extra in [
            &[("accept", "application/json")][..],
            &[("accept", "application/json;q=0, text/event-stream")][..],
            &[("accept", "*/*")][..],
            &[("mcp-protocol-version", "2026-07-28")][..],
            &[("mcp-protocol-version", "2099-01-01")][..],
            &[
                ("mcp-protocol-version", "2025-06-18"),
                ("mcp-protocol-version", "2025-06-18"),
            ][..],
        ] {
            let mut map = headers(&[("content-type", "application/json")]);
            if !extra.iter().any(|(name, _)| *name == "accept") {
                map.append(ACCEPT, PLAIN[0].1.parse().unwrap());
            }
            for (name, value) in extra {
                map.append(*name, http::HeaderValue::from_static(value));
            }
            assert!(
                plain_call(&map, CALL.as_bytes(), &endpoint()).is_none(),
                "{extra:?}"
            );
        }
        let mut known = headers(PLAIN);
        known.append("mcp-protocol-version", "2025-06-18".parse().unwrap());
        assert!(plain_call(&known, CALL.as_bytes(), &endpoint()).is_some());
    }

    const MODERN_CALL: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}}"#;

    fn modern_headers() -> HeaderMap {
        let mut map = headers(PLAIN);
        map.append("mcp-protocol-version", "2026-07-28".parse().unwrap());
        map.append("mcp-method", "tools/call".parse().unwrap());
        map.append("mcp-name", "t".parse().unwrap());
        map
    }

    #[test]
    fn a_plain_2026_call_is_answered_here_too() {
        let call = plain_call(&modern_headers(), MODERN_CALL.as_bytes(), &endpoint());
        assert!(call.is_some_and(|c| c.modern == Some(true)));
    }

    #[test]
    fn a_2026_call_rmcp_must_judge_goes_to_rmcp() {
        let with_meta = |extra: &str| {
            MODERN_CALL.replace(
                r#""io.modelcontextprotocol/clientInfo""#,
                &format!(r#"{extra},"io.modelcontextprotocol/clientInfo""#),
            )
        };
        for body in [
            with_meta(r#""progressToken":1"#),
            with_meta(r#""io.modelcontextprotocol/logLevel":"debug""#),
            MODERN_CALL.replace(
                r#"{"elicitation":{}}"#,
                r#"{"extensions":{"io.modelcontextprotocol/tasks":{}}}"#,
            ),
            MODERN_CALL.replace(
                r#"protocolVersion":"2026-07-28""#,
                r#"protocolVersion":"2025-11-25""#,
            ),
            MODERN_CALL.replace(r#""arguments":{}"#, r#""arguments":{},"requestState":"x""#),
            MODERN_CALL.replace(r#""arguments":{}"#, r#""arguments":{},"inputResponses":{}"#),
            CALL.to_string(),
            // Capabilities rmcp cannot read make it refuse the call (`-32602`).
            MODERN_CALL.replace(r#"{"elicitation":{}}"#, r#"{"elicitation":{"form":true}}"#),
            MODERN_CALL.replace(r#"{"elicitation":{}}"#, r#"{"elicitation":[]}"#),
            MODERN_CALL.replace(r#"{"elicitation":{}}"#, r#"{"roots":5}"#),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","_meta":["2026-07-28",{}]}}"#.to_string(),
        ] {
            assert!(
                plain_call(&modern_headers(), body.as_bytes(), &endpoint()).is_none(),
                "{body}"
            );
        }
        for (name, value) in [
            ("mcp-name", "other"),
            ("mcp-name", " t"),
            ("mcp-method", "tools/list"),
            ("mcp-method", "TOOLS/CALL"),
        ] {
            let mut map = modern_headers();
            map.insert(name, value.parse().unwrap());
            assert!(
                plain_call(&map, MODERN_CALL.as_bytes(), &endpoint()).is_none(),
                "{name}: {value}"
            );
        }
        for missing in ["mcp-name", "mcp-method"] {
            let mut map = modern_headers();
            map.remove(missing);
            assert!(
                plain_call(&map, MODERN_CALL.as_bytes(), &endpoint()).is_none(),
                "{missing}"
            );
        }
        let mut mirrored = modern_headers();
        mirrored.insert("mcp-param-region", "eu".parse().unwrap());
        assert!(plain_call(&mirrored, MODERN_CALL.as_bytes(), &endpoint()).is_none());
        // A legacy header with a 2026 body, or the other way round.
        let mut legacy = headers(PLAIN);
        legacy.append("mcp-protocol-version", "2025-11-25".parse().unwrap());
        assert!(plain_call(&legacy, MODERN_CALL.as_bytes(), &endpoint()).is_none());
    }
}
