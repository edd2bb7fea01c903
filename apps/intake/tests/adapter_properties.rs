//! No payload makes the adapter panic, and what it accepts it maps consistently.

use concierge_intake::adapter::{Form, adapt};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Any JSON value, biased towards the payload's own keys so the adapter's deeper paths are reached.
fn json_value() -> impl Strategy<Value = Value> {
    let keys = prop_oneof![
        Just("source_message".to_string()),
        Just("message_events".to_string()),
        Just("ai_task_results".to_string()),
        Just("route_code".to_string()),
        Just("result_type".to_string()),
        Just("source_event_index".to_string()),
        Just("related_source_event_index".to_string()),
        Just("related_source_event_indices".to_string()),
        Just("parent_source_event_index".to_string()),
        Just("extraction_warnings".to_string()),
        Just("source_message_id".to_string()),
        Just("E1".to_string()),
        "[a-z_]{0,12}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop_oneof![
            Just("E1".to_string()),
            Just("S10".to_string()),
            Just("".to_string()),
            ".{0,8}"
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((keys.clone(), inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn parent_split() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/hotel/parent-split.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_json_never_panics(payload in json_value()) {
        let _ = adapt(&payload);
    }

    /// The valid example with one event field replaced by anything: refused or mapped, never a panic,
    /// and whatever is accepted keeps the 1-based numbering.
    #[test]
    fn a_mutated_example_never_panics(event in 0usize..3, field in "[a-z_]{1,30}", value in json_value()) {
        let mut payload = parent_split();
        payload["message_events"][event][field.as_str()] = value;
        if let Ok(submission) = adapt(&payload) {
            prop_assert_eq!(submission.form, Form::V3BusinessRoot);
            let numbers: Vec<Value> = submission.events.iter().map(|e| e["source_event_index"].clone()).collect();
            prop_assert_eq!(numbers, vec![json!(1), json!(2), json!(3)]);
        }
    }

    /// Relations to ids that exist always map; the order of references is kept.
    #[test]
    fn valid_relations_map_in_order(count in 2usize..8, picks in prop::collection::vec(0usize..8, 1..8)) {
        let ids: Vec<String> = (0..count).map(|i| format!("E_{i}")).collect();
        let target = count - 1;
        let mut references: Vec<usize> = Vec::new();
        for pick in picks {
            let pick = pick % target;
            if !references.contains(&pick) {
                references.push(pick);
            }
        }
        let events: Vec<Value> = (0..count).map(|i| {
            let mut event = json!({"event_type": "Trace", "source_event_index": ids[i], "extracted_fields": {"trace_subtype": "x"}});
            if i == target {
                event["related_source_event_indices"] = json!(references.iter().map(|r| ids[*r].clone()).collect::<Vec<_>>());
            }
            event
        }).collect();
        let payload = json!({"source_message": {"source_message_id": "m"}, "message_events": events, "extraction_warnings": []});
        let submission = adapt(&payload).expect("valid relations are accepted");
        let expected: Vec<String> = references.iter().map(|r| (r + 1).to_string()).collect();
        prop_assert_eq!(&submission.events[target]["related_source_event_indices"], &json!(expected));
    }
}
