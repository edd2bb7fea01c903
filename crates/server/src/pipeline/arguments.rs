//! Step 11: the arguments against the tool's input schema. A refusal names the field as the
//! model wrote it, what was wrong and what is allowed, in the app's language — inside the app's
//! own error envelope when it has one (the hotel's `{"success": false, …}`). A name the tool
//! fills in from the caller is refused before the schema is read (`argument_not_allowed`).

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
    if let Some(name) = arguments.as_ref().and_then(|given| {
        spec.from_caller
            .iter()
            .find(|name| given.contains_key(*name))
    }) {
        let message = format!("{name}: {}", says.argument_not_allowed);
        let document = match spec.argument_error {
            Some(envelope) => envelope(name, says.argument_not_allowed),
            None => json!({"error": {
                "code": "argument_not_allowed",
                "field": name,
                "message": says.argument_not_allowed,
            }}),
        };
        return Err(
            Refusal::of_call(Outcome::InvalidArgument, "argument_not_allowed", message)
                .document(document),
        );
    }
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
