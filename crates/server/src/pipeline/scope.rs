//! OAuth scopes: a tool's call needs every scope the tool (and the endpoint's `tool_scopes`)
//! names. One decision, asked at two points: in the HTTP pipeline, where a missing scope is
//! answered 403 `insufficient_scope` with a challenge naming every scope needed (the step-up a
//! client follows to ask the user for more), and in the dispatcher, for transports without that
//! challenge (stdio, legacy SSE, `scope_refusal = "tool_error"`), as a tool error.

use concierge_core::messages::render;
use concierge_core::{Caller, Messages, Outcome};
use http::{StatusCode, header};
use serde_json::json;

use super::Refusal;
use super::authentication::OAuthResource;

/// The scopes `needed` that `caller` lacks.
pub fn missing<'a>(needed: &'a [String], caller: &Caller) -> Vec<&'a str> {
    needed
        .iter()
        .filter(|s| !caller.scopes.contains(s))
        .map(String::as_str)
        .collect()
}

/// The step-up refusal for a call of `tool` that lacks `missing`: the challenge names the scopes
/// the caller has, the endpoint's, and the missing ones, so one new sign-in grants all of them.
pub fn step_up(oauth: &OAuthResource, caller: &Caller, tool: &str, missing: &[String]) -> Refusal {
    let mut needed = caller.scopes.clone();
    for scope in oauth.scopes.iter().chain(missing) {
        if !needed.contains(scope) {
            needed.push(scope.clone());
        }
    }
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\"",
        needed.join(" "),
        oauth.metadata_url
    );
    Refusal::new(
        StatusCode::FORBIDDEN,
        Outcome::Forbidden,
        "insufficient_scope",
        &format!("`{tool}` needs the scope(s) {}", missing.join(", ")),
    )
    .header(header::WWW_AUTHENTICATE, &challenge)
}

/// The dispatcher's decision (step 9), where no challenge was made: a call whose tool needs
/// scopes the caller lacks is refused as a tool error naming them.
pub fn decide(missing: &[&str], says: &Messages) -> Result<(), Refusal> {
    if missing.is_empty() {
        return Ok(());
    }
    let message = render(says.missing_scopes, &[("scopes", &missing.join(", "))]);
    let document = json!({"error": {
        "code": "insufficient_scope",
        "message": &message,
        "scopes": missing,
        "status": 403,
    }});
    Err(Refusal::of_call(Outcome::Forbidden, "insufficient_scope", message).document(document))
}
