//! `app.tool\n{arguments}` against each app's input schema, through the platform's validator. Beyond no
//! panic: every call the schema accepts, the tool's typed input reads too (else the call would
//! fail as ours, `schema_mismatch`), and every refusal names a field or says why.

use crate::apps::tools;
use crate::pick;
use serde_json::Value;

pub fn run(data: &[u8]) {
    let Some((tool, json)) = pick(tools(), |t| t.name.as_str(), data) else {
        return;
    };
    let Ok(Value::Object(arguments)) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    match tool.validator.check(Some(arguments), tool.messages) {
        Ok(accepted) => {
            if let Some(Err(error)) = tool.tool.reads_input(&accepted) {
                panic!(
                    "{}: the schema accepts {accepted}, the type does not: {error}",
                    tool.name
                );
            }
        }
        Err(refusal) => assert!(
            !refusal.message.is_empty(),
            "{}: a refusal without a message",
            tool.name
        ),
    }
}
