//! The hotel's submit payload adapter, all three forms (V3 business root, entry notice, V2 task
//! results): detect, check, map.

use concierge_intake::adapter::adapt;

pub fn run(data: &[u8]) {
    let Ok(payload) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    match adapt(&payload) {
        // The same payload always maps the same way: the intake store keys on it.
        Ok(first) => {
            let again = adapt(&payload).expect("accepted once, accepted again");
            assert_eq!(first.events, again.events);
            assert_eq!(first.source_message_id, again.source_message_id);
        }
        Err(_) => assert!(adapt(&payload).is_err()),
    }
}
