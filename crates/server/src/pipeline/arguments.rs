//! Step 11: the arguments against the tool's input schema. A refusal names the field as the
//! model wrote it, what was wrong and what is allowed, in the app's language — inside the app's
//! own error envelope when it has one (the hotel's `{"success": false, …}`).

use concierge_core::{Messages, Outcome, ToolSpec};
use serde_json::{Map, Value, json};

use super::Refusal;
use crate::validate::ArgumentValidator;

/// The arguments as the tool gets them (the injected names it does not declare dropped).
pub fn decide(
    validator: &ArgumentValidator,
    arguments: Option<Map<String, Value>>,
    spec: &ToolSpec,
    says: &Messages,
) -> Result<Value, Refusal> {
    validator.check(arguments, says).map_err(|error| {
        let document = match spec.argument_error {
            Some(envelope) => envelope(&error.field, &error.message),
            None => json!({"error": {
                "code": "invalid_argument",
                "field": error.field,
                "message": error.message,
            }}),
        };
        Refusal::of_call(Outcome::InvalidArgument, "invalid_argument", error.message)
            .document(document)
    })
}
