//! A stateless endpoint's plain `tools/call`, answered without rmcp's per-request service.
//!
//! In stateless mode rmcp answers each POST by parsing the body into its message enum (the
//! guard has already read it once), building a service, a peer and a one-shot transport, and
//! spawning two to three tasks; on a busy server each spawned task waits behind every other
//! connection in tokio's run queue, so a request pays those hops in latency as well as in CPU.
//! For the request a stateless endpoint serves most — a plain `tools/call` — none of it is
//! needed: the guard has admitted the caller and the dispatcher answers the call. So the guard
//! hands such a call here. Everything else still goes to rmcp, which stays the judge of the
//! protocol: `initialize`, `tools/list`, a call whose params carry `_meta` or a task, a
//! protocol revision with per-request negotiation or standard headers (2026-07-28 on), and any
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
    CallToolResponse, ErrorData, JsonObject, ProtocolVersion, RequestId, ServerJsonRpcMessage,
    ServerResult,
};
use serde::Deserialize;

use crate::endpoint::{CallAnswer, Endpoint};
use crate::pipeline::RequestRecord;
use crate::pipeline::framing::is_json;

/// A `tools/call` with nothing rmcp treats specially: exactly these fields, so a `_meta`
/// (progress tokens, per-request negotiation) or a `task` sends the call to rmcp.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlainCall<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    params: PlainParams,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainParams {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
}

/// The call in `body`, when this module may answer it: the headers are ones rmcp would accept
/// as they are, and the body is a plain `tools/call`.
pub fn plain_call<'a>(headers: &HeaderMap, body: &'a [u8]) -> Option<PlainCall<'a>> {
    if !(accepts_json_and_sse(headers) && is_json(headers) && legacy_revision(headers)) {
        return None;
    }
    serde_json::from_slice::<PlainCall>(body)
        .ok()
        .filter(|call| call.jsonrpc == "2.0" && call.method == "tools/call")
}

/// Runs the call through the dispatcher and answers it as rmcp would.
pub async fn answer(
    endpoint: &Arc<Endpoint>,
    call: PlainCall<'_>,
    caller: Caller,
    record: &RequestRecord,
) -> http::Response<axum::body::Body> {
    let PlainCall { id, params, .. } = call;
    let rpc_id = id.clone().into_json_value();
    let writes = endpoint
        .tool(&params.name)
        .is_some_and(|tool| !tool.spec().annotations.read_only);
    let answer = if writes {
        // rmcp runs a handler in a task of its own, so a client that hangs up mid-call does
        // not stop it; a write keeps that promise here too (its claim and its result must
        // land together). A read is simply dropped with the connection.
        let (endpoint, record) = (endpoint.clone(), record.clone());
        let name = params.name;
        let arguments = params.arguments;
        let running = tokio::spawn(async move {
            Box::pin(endpoint.call(&name, arguments, caller, rpc_id, &record)).await
        });
        match running.await {
            Ok(answer) => answer,
            Err(_) => CallAnswer::BrokenOutput("the call stopped before it answered".into()),
        }
    } else {
        Box::pin(endpoint.call(&params.name, params.arguments, caller, rpc_id, record)).await
    };
    let message = match crate::transport::handler::reply_of(answer) {
        Ok(CallToolResponse::Complete(result)) => {
            let mut result = ServerResult::CallToolResult(result);
            // What rmcp's handler does for a peer before 2026-07-28, the only peers served here.
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
            ServerJsonRpcMessage::response(result, id)
        }
        // A plain call is asked nothing (no rounds): any other answer is our fault.
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
    http::Response::builder()
        .header(CONTENT_TYPE, "application/json")
        .body(axum::body::Body::from(Bytes::from(body)))
        .unwrap_or_default()
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

    const PLAIN: &[(&str, &str)] = &[
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
    ];
    const CALL: &str =
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{}}}"#;

    #[test]
    fn a_plain_call_is_answered_here() {
        let call = plain_call(&headers(PLAIN), CALL.as_bytes()).expect("plain");
        assert_eq!(call.params.name, "t");
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
        ] {
            assert!(
                plain_call(&headers(PLAIN), body.as_bytes()).is_none(),
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
            assert!(plain_call(&map, CALL.as_bytes()).is_none(), "{extra:?}");
        }
        let mut known = headers(PLAIN);
        known.append("mcp-protocol-version", "2025-06-18".parse().unwrap());
        assert!(plain_call(&known, CALL.as_bytes()).is_some());
    }
}
