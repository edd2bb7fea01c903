//! A confirmable write's confirmation asked over MRTR (MCP 2026-07-28): a client that declared
//! form elicitation gets `resultType: "input_required"` — a form that says what will be done,
//! with one boolean to confirm — and a sealed `requestState` ([`super::request_state`]); its
//! retry with the user's answer writes once. Every other client keeps the confirm-token round
//! trip, unchanged: a write never depends on a prompt alone.

use concierge_core::{Messages, ToolError};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::Writes;
use super::confirm::Refused;
use super::request_state::RequestStates;

/// The key of the one input a confirmation asks for, in `inputRequests` and `inputResponses`.
pub const CONFIRM_INPUT: &str = "confirm";

/// How much of a preview the form shows; a longer one is cut (the model has it whole in the
/// token round trip; a person confirming reads the start).
const PREVIEW_CHARS: usize = 2000;

/// What a client said about a call's rounds (MCP 2026-07-28's multi round-trip requests), and
/// what it can hear while the call runs.
#[derive(Debug, Clone, Default)]
pub struct Rounds {
    /// Where the tool's progress goes: the request carried a `progressToken` and a stream is
    /// open to hear it.
    pub progress: Option<concierge_core::Progress>,
    /// The request declared form elicitation in its client capabilities.
    pub can_elicit: bool,
    /// A retry's `requestState`, as the client handed it back.
    pub request_state: Option<String>,
    /// A retry's `inputResponses`.
    pub input_responses: Option<Map<String, Value>>,
}

impl Rounds {
    /// Whether a client can be asked through a form: it declared form elicitation, or the bare
    /// `elicitation: {}` of the revisions before URL elicitation (which meant forms).
    pub fn elicits_forms(form_declared: bool, url_declared: bool) -> bool {
        form_declared || !url_declared
    }

    /// The user accepted the form with the box ticked.
    pub fn confirmed(&self) -> bool {
        let Some(answer) = self
            .input_responses
            .as_ref()
            .and_then(|r| r.get(CONFIRM_INPUT))
        else {
            return false;
        };
        answer["action"] == "accept" && answer["content"][CONFIRM_INPUT] == true
    }
}

/// The `input_required` answer's body: the form (what `tool` will do, from its `preview`) and
/// the state to hand back.
pub fn ask(tool: &str, preview: &Value, state: String, says: &Messages) -> Value {
    let mut shown = serde_json::to_string_pretty(preview).unwrap_or_default();
    if let Some((cut, _)) = shown.char_indices().nth(PREVIEW_CHARS) {
        shown.truncate(cut);
        shown.push('…');
    }
    json!({
        "inputRequests": {
            CONFIRM_INPUT: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": format!("{} `{tool}`\n\n{shown}", says.confirm_prompt),
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            CONFIRM_INPUT: {
                                "type": "boolean",
                                "title": says.confirm_label,
                                "default": false,
                            },
                        },
                        "required": [CONFIRM_INPUT],
                    },
                },
            },
        },
        "requestState": state,
    })
}

/// The user said no (declined, cancelled, or left the box unticked): nothing was written.
pub fn declined(says: &Messages) -> ToolError {
    ToolError::rejected("confirmation_declined", says.confirmation_declined)
}

impl Writes {
    /// Made from the store's secret on first need, as confirm tokens are.
    async fn states(&self, says: &Messages) -> Result<&RequestStates, ToolError> {
        self.states
            .get_or_try_init(|| async { Ok(RequestStates::new(self.store.secret().await?)) })
            .await
            .map_err(|down| super::unavailable(down, says))
    }

    /// A state for the call `binding` names, valid as long as a confirm token is.
    pub(super) async fn seal_state(
        &self,
        binding: &str,
        preview: &str,
        says: &Messages,
    ) -> Result<String, ToolError> {
        let expires = self.clock.now().timestamp_millis() + self.confirm_ttl.as_millis() as i64;
        Ok(self.states(says).await?.seal(binding, preview, expires).0)
    }

    /// Opens `state` for the call `binding` names and uses it up: a state opens once, on every
    /// instance (its id is claimed in the idempotency store and recorded at once, so no owner's
    /// death can free it again). Refused: forged or for another call, expired, used. Answers
    /// the digest of the preview the user was asked to confirm.
    pub(super) async fn redeem(
        &self,
        state: &str,
        binding: &str,
        says: &Messages,
    ) -> Result<String, ToolError> {
        let now = self.clock.now();
        let (jti, preview) = self
            .states(says)
            .await?
            .open(state, binding, now.timestamp_millis())
            .map_err(|refused| match refused {
                Refused::Expired => {
                    state_error("request_state_expired", says.request_state_expired)
                }
                Refused::Invalid => {
                    state_error("request_state_invalid", says.request_state_invalid)
                }
            })?;
        let key = hex::encode(Sha256::digest(
            format!("request-state\u{0}{jti}").as_bytes(),
        ));
        let claim = self
            .store
            .claim(&key, "", now.timestamp(), self.confirm_ttl)
            .await
            .map_err(|down| super::unavailable(down, says))?;
        if claim != concierge_core::idempotency::Claim::Claimed {
            return Err(state_error("request_state_used", says.request_state_used));
        }
        if let Err(error) = self.store.complete(&key, &json!({"used": true})).await {
            // Claimed is enough on this store until the claim is judged abandoned, which is
            // after the state has expired.
            tracing::error!(%error, "request state: cannot record its use");
        }
        Ok(preview)
    }
}

fn state_error(code: &'static str, message: &str) -> ToolError {
    let mut error = ToolError::rejected(code, message);
    error.field = Some("requestState".into());
    error
}
