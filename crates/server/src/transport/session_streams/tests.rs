use futures::StreamExt;
use rmcp::model::RequestId;
use serde_json::{Value, json};

use super::routes::{REPLAY, STREAMS};
use super::*;

fn client(message: Value) -> ClientJsonRpcMessage {
    serde_json::from_value(message).unwrap()
}

fn server(message: Value) -> ServerJsonRpcMessage {
    serde_json::from_value(message).unwrap()
}

fn streams(idle: Duration) -> SessionStreams {
    SessionStreams::new(Arc::new(SessionIds::new(None, "")), "/m", idle)
}

/// A session through its `initialize`, the test playing the session's service.
async fn opened(streams: &SessionStreams) -> (SessionId, SessionTransport) {
    let (id, mut transport) = streams.create_session().await.unwrap();
    let initialize = client(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    let (initialized, ()) = tokio::join!(streams.initialize_session(&id, initialize), async {
        assert!(matches!(
            transport.receive().await,
            Some(ClientJsonRpcMessage::Request(_))
        ));
        transport.send(answer(1)).await.unwrap();
    });
    assert!(matches!(
        initialized.unwrap(),
        ServerJsonRpcMessage::Response(_)
    ));
    (id, transport)
}

fn answer(id: u64) -> ServerJsonRpcMessage {
    server(json!({"jsonrpc": "2.0", "id": id, "result": {}}))
}

fn call(id: u64) -> ClientJsonRpcMessage {
    client(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "t", "_meta": {"progressToken": "p"}}}))
}

fn progress(n: u32) -> ServerJsonRpcMessage {
    server(json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": "p", "progress": n}}))
}

fn log(n: u32) -> ServerJsonRpcMessage {
    server(json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": n}}))
}

/// Each event as its id and its message's JSON (`null` for a priming event).
async fn read(stream: impl Stream<Item = ServerSseMessage>) -> Vec<(String, Value)> {
    stream
        .map(|event| {
            let message = event.message.map(|m| serde_json::to_value(&*m).unwrap());
            (event.event_id.unwrap(), message.unwrap_or(Value::Null))
        })
        .collect()
        .await
}

fn event_ids(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(id, _)| id.as_str()).collect()
}

#[tokio::test]
async fn a_requests_answer_and_progress_ride_its_stream_and_the_rest_the_get_stream() {
    let streams = streams(Duration::from_secs(60));
    let (id, mut transport) = opened(&streams).await;
    let stream = streams.create_stream(&id, call(2)).await.unwrap();
    assert!(matches!(
        transport.receive().await,
        Some(ClientJsonRpcMessage::Request(_))
    ));
    transport.send(progress(1)).await.unwrap();
    transport.send(log(7)).await.unwrap();
    transport.send(answer(2)).await.unwrap();

    let events = read(stream).await;
    let ids = event_ids(&events);
    assert_eq!(
        ids,
        ["0/0", "1/0", "2/0"],
        "priming, progress, answer; then it ends"
    );
    assert_eq!(events[1].1["params"]["progress"], 1.0);
    assert_eq!(events[2].1["id"], 2);

    // The log notification waited for a GET stream.
    let mut get = Box::pin(streams.create_standalone_stream(&id).await.unwrap());
    let (event_id, message) = get.next().await.map(|e| (e.event_id, e.message)).unwrap();
    assert_eq!(event_id.as_deref(), Some("1"));
    assert_eq!(
        serde_json::to_value(&*message.unwrap()).unwrap()["params"]["data"],
        7
    );
}

#[tokio::test]
async fn a_client_that_lost_its_stream_resumes_after_the_last_event_it_saw() {
    let streams = streams(Duration::from_secs(60));
    let (id, mut transport) = opened(&streams).await;
    let lost = streams.create_stream(&id, call(2)).await.unwrap();
    transport.receive().await.unwrap();
    transport.send(progress(1)).await.unwrap();
    drop(lost);
    transport.send(progress(2)).await.unwrap();

    let resumed = streams.resume(&id, "1/0".into()).await.unwrap();
    transport.send(answer(2)).await.unwrap();
    let events = read(resumed).await;
    let ids = event_ids(&events);
    assert_eq!(
        ids,
        ["2/0", "3/0"],
        "the progress it missed, then the answer"
    );
    assert_eq!(events[0].1["params"]["progress"], 2.0);

    assert!(
        streams.resume(&id, "1/9".into()).await.is_err(),
        "no such stream"
    );
    assert!(streams.resume(&id, "x".into()).await.is_err());
}

#[tokio::test]
async fn a_client_that_stops_reading_loses_the_live_stream_not_the_events() {
    let streams = streams(Duration::from_secs(60));
    let (id, mut transport) = opened(&streams).await;
    let stalled = streams.create_standalone_stream(&id).await.unwrap();
    for n in 1..=20 {
        transport.send(log(n)).await.unwrap();
    }
    let read_late = read(stalled).await;
    assert_eq!(read_late.len(), REPLAY, "the stream ended when it was full");

    let resumed = Box::pin(streams.resume(&id, "10".into()).await.unwrap());
    let events: Vec<_> = resumed.take(10).collect().await;
    let ids: Vec<_> = events.iter().map(|e| e.event_id.clone().unwrap()).collect();
    assert_eq!(ids, (11..=20).map(|n| n.to_string()).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_second_get_stream_is_held_beside_the_live_one() {
    let streams = streams(Duration::from_secs(60));
    let (id, mut transport) = opened(&streams).await;
    let mut first = Box::pin(streams.create_standalone_stream(&id).await.unwrap());
    let second = streams.create_standalone_stream(&id).await.unwrap();
    transport.send(log(1)).await.unwrap();
    assert_eq!(first.next().await.unwrap().event_id.as_deref(), Some("1"));
    streams.close_session(&id).await.unwrap();
    assert!(
        read(second).await.is_empty(),
        "keep-alive only, and ends with the session"
    );
}

#[tokio::test]
async fn unanswered_requests_keep_a_bounded_number_of_streams() {
    let streams = streams(Duration::from_secs(60));
    let (id, mut transport) = opened(&streams).await;
    let mut read = Vec::new();
    for n in 0..STREAMS as u64 + 10 {
        let stream = streams.create_stream(&id, call(n + 2)).await.unwrap();
        transport.receive().await.unwrap();
        if n == 5 {
            read.push(Box::pin(stream)); // still read: outlives the unread ones
        }
    }
    let session = streams.get(&id).unwrap();
    assert_eq!(session.routes().streams.len(), STREAMS);
    assert!(session.routes().streams.contains_key(&5));
    assert!(
        !session.routes().streams.contains_key(&0),
        "the oldest unread went first"
    );
    // Its request's answer now rides the GET stream.
    transport.send(answer(2)).await.unwrap();
    let mut get = Box::pin(streams.create_standalone_stream(&id).await.unwrap());
    let answer = get.next().await.unwrap().message.unwrap();
    assert!(matches!(&*answer, ServerJsonRpcMessage::Response(r) if r.id == RequestId::Number(2)));
}

#[tokio::test]
async fn an_idle_session_is_closed_and_its_service_ends() {
    use crate::idle_clock::advance;
    let idle = Duration::from_secs(10);
    let streams = streams(idle);
    let (id, mut transport) = opened(&streams).await;
    advance(idle / 2);
    streams
        .accept_message(
            &id,
            client(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
        )
        .await
        .unwrap();
    transport.receive().await.unwrap();
    advance(idle * 3 / 4);
    close_idle(&streams.sessions, idle);
    assert!(
        streams.has_session(&id).await.unwrap(),
        "used half-way: not idle yet"
    );
    advance(idle / 2);
    close_idle(&streams.sessions, idle);
    assert!(!streams.has_session(&id).await.unwrap());
    assert!(
        transport.receive().await.is_none(),
        "the service's receive ends"
    );
    assert!(transport.send(log(1)).await.is_err());
    assert!(matches!(
        streams.create_stream(&id, call(3)).await.err(),
        Some(SessionError::NotFound)
    ));
}
