//! kgqa's request templates rendered with hostile arguments and sent to the Q&A API (its
//! simulator, on loopback). What the API receives never holds a template expression that an
//! argument smuggled in and got evaluated, nor the API key; what the tool answers never holds
//! the key or the API's address.

use crate::kgqa::{API_KEY, GRAPH, deployment};
use crate::{contains, pick, runtime};
use concierge_core::{CallContext, Caller};
use concierge_server::validate::ArgumentValidator;
use serde_json::Value;

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

pub fn run(data: &[u8]) {
    let kgqa = deployment();
    let Some((tool, json)) = pick(&kgqa.tools.tools, |t| t.spec().name.as_str(), data) else {
        return;
    };
    let Ok(Value::Object(arguments)) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let validator = ArgumentValidator::new(&tool.spec().input_schema).expect("a schema");
    let Ok(arguments) = validator.check(Some(arguments), kgqa.tools.messages) else {
        return;
    };
    let written = arguments.to_string();
    let context = CallContext::new(Caller::client("fuzz"), "0af7651916cd43dd8448eb211c80319c");
    let answer = runtime().block_on(async {
        tokio::time::timeout(crate::HANG, tool.call(arguments, context))
            .await
            .expect("the call hung")
    });
    let shown = match &answer {
        Ok(output) => output.to_string(),
        Err(error) => format!("{error:?}"),
    };
    // libFuzzer learns the key from the comparisons it watches and may write it into an
    // argument: only a key the arguments did not hold is a leak.
    let smuggled = written.contains(API_KEY);
    assert!(
        smuggled || !shown.contains(API_KEY),
        "the key reached the answer: {shown}"
    );
    assert!(
        !shown.contains(&kgqa.base_url) || written.contains(&kgqa.base_url),
        "the API's address reached the answer: {shown}"
    );
    let received = std::mem::take(&mut *kgqa.received.lock().unwrap_or_else(|p| p.into_inner()));
    for body in received {
        assert!(
            smuggled || !contains(&body, API_KEY.as_bytes()),
            "the key went into a body"
        );
        let body = String::from_utf8_lossy(&body);
        // The graph is named once by the template; any more came from an argument as text. An
        // argument's `{{ vars.graph }}` evaluated would add one the arguments do not hold.
        assert!(
            count(&body, GRAPH) <= 1 + count(&written, GRAPH),
            "a template expression in an argument was evaluated: {written} → {body}"
        );
    }
}
