//! Write safety, the same for every write tool that declares it ([`WriteSafety`]):
//! `dry_run`, a required `idempotency_key`, confirm tokens for destructive writes, and never a
//! retry of our own.
//!
//! The order for one call: split off the three platform arguments → dry run? answer the preview
//! and stop → confirmation needed and no token? answer the preview with a token → token present? verify it → idempotency: the first call with a key
//! runs the tool once; concurrent calls with the same key share that one run; later calls within
//! the window answer its stored result; the same key with other arguments is refused. Keys are
//! the user's (the client's when there is no user) and the endpoint's: records are kept per
//! endpoint and tool as the client sees them. A key that already wrote answers its result before
//! any confirmation is asked. A confirm token is bound to the caller (client and user), the tool,
//! the key and the arguments: one preview confirms one change. It (and an MRTR request state)
//! also carries the digest of the preview the user saw, handed to the tool at execution
//! (`CallContext::confirmed_preview`): a tool that can tell in its own transaction that the
//! change now differs (a SQL write's rows) refuses it as stale. Previews are made in
//! [`preview`]: the tool's own dry run where it has one, else the platform's — the tool's `call`
//! is reached only to write.
//!
//! A failed write releases its key (the error is answered to everyone waiting on that run): the
//! caller may send it again, and a backend that dedupes on the key (Mappy's does) makes that
//! resend safe even when the failure was a timeout after the backend had accepted it.
//!
//! Over 600 lines with its tests: the order of one write call above reads top to bottom in
//! [`Writes::run`] and [`Writes::execute`]; the confirmation over MRTR, the confirm tokens and
//! the stores are modules of their own.

pub(crate) mod confirm;
mod confirmation;
mod heartbeat;
mod lock_files;
mod preview;
mod records;
mod redis;
mod request_state;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use concierge_core::idempotency::{Claim, IdempotencyStore, StoreUnavailable};
use concierge_core::{
    CallContext, Messages, SharedClock, SystemClock, Tool, ToolError, WriteSafety,
};

use crate::pipeline::refusal::Refusal;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::OnceCell;

pub use confirm::{ConfirmTokens, Refused};
pub use confirmation::{CONFIRM_INPUT, Rounds};
pub use records::SqlIdempotencyStore;
pub use redis::RedisIdempotencyStore;

pub const IDEMPOTENCY_KEY: &str = "idempotency_key";
pub const DRY_RUN: &str = "dry_run";
pub const CONFIRM_TOKEN: &str = "confirm_token";
/// Where a preview's answer carries the token.
pub const CONFIRM_TOKEN_ANSWER: &str = "confirmToken";

/// One run's end, shared by every call waiting on it: what it answered, or the refusal.
type Shared = Arc<OnceCell<Result<Ran, Refusal>>>;

/// The write budget's unit, taken only as a write is about to reach the tool (never for a dry
/// run, a preview, a replay or a refusal); its error is the rate limit's refusal.
pub type WriteBudget = concierge_core::BoxFuture<'static, Result<(), ToolError>>;

/// What takes one unit of the write budget.
pub type Gate<'a> = &'a (dyn Fn() -> WriteBudget + Send + Sync);

pub struct Writes {
    store: Arc<dyn IdempotencyStore>,
    /// Made from the store's secret on first need (a shared store may be down at start).
    tokens: OnceCell<ConfirmTokens>,
    /// MRTR request states, sealed under a key derived from the same secret.
    states: OnceCell<request_state::RequestStates>,
    window: Duration,
    confirm_ttl: Duration,
    /// What idempotency expiry and confirm tokens are judged by.
    clock: SharedClock,
    /// Runs in progress in this process, by record key: (fingerprint, the run's answer).
    running: Mutex<HashMap<String, (String, Shared)>>,
}

impl Writes {
    /// Write safety over the SQLite file at `path` (one host).
    pub async fn open(
        path: &Path,
        window: Duration,
        confirm_ttl: Duration,
    ) -> Result<Self, String> {
        let store = SqlIdempotencyStore::open_file(path).await?;
        let writes = Self::new(Arc::new(store), window, confirm_ttl);
        // A local file answers now: a damaged one is a config error, not a refused write.
        writes.tokens().await.map_err(|e| e.0)?;
        Ok(writes)
    }

    /// Write safety over `store` (a shared one: PostgreSQL or Redis).
    pub fn new(store: Arc<dyn IdempotencyStore>, window: Duration, confirm_ttl: Duration) -> Self {
        Self {
            store,
            tokens: OnceCell::new(),
            states: OnceCell::new(),
            window,
            confirm_ttl,
            clock: SystemClock::shared(),
            running: Mutex::new(HashMap::new()),
        }
    }

    async fn tokens(&self) -> Result<&ConfirmTokens, StoreUnavailable> {
        self.tokens
            .get_or_try_init(|| async { Ok(ConfirmTokens::new(self.store.secret().await?)) })
            .await
    }

    /// The same store judged by `clock` (tests move it instead of waiting for an expiry).
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// A token for `binding` valid for `ttl` (task ids, bound to their caller like confirm tokens).
    pub async fn seal(&self, binding: &str, ttl: Duration) -> Result<String, StoreUnavailable> {
        let expires = self.clock.now().timestamp_millis() + ttl.as_millis() as i64;
        Ok(self.tokens().await?.mint(binding, expires))
    }

    /// Whether `token` was sealed for `binding` and has not expired (`Ok(Err(_))`), or the
    /// secret cannot be had now (`Err`).
    pub async fn unseal(
        &self,
        token: &str,
        binding: &str,
    ) -> Result<Result<(), Refused>, StoreUnavailable> {
        let now = self.clock.now().timestamp_millis();
        Ok(self.tokens().await?.verify(token, binding, now))
    }

    /// Runs one validated call of a write tool: the decision of step 12, and the write itself
    /// when the decision is to write. Every refusal (a missing or reused key, a confirmation
    /// that does not hold, the write budget, a store that cannot answer) is a [`Refusal`];
    /// every other end is one [`WriteOutcome`].
    pub async fn run(&self, call: WriteCall<'_>) -> Result<WriteOutcome, Refusal> {
        let WriteCall {
            endpoint,
            tool,
            safety,
            arguments,
            mut context,
            says,
            gate,
            rounds,
        } = call;
        let Value::Object(mut arguments) = arguments else {
            return Err(refused(ToolError::invalid(
                "",
                "arguments must be an object",
            )));
        };
        let key = match arguments.remove(IDEMPOTENCY_KEY) {
            Some(Value::String(key)) if !key.trim().is_empty() => key,
            _ => {
                return Err(refused(ToolError::invalid(
                    IDEMPOTENCY_KEY,
                    says.key_missing,
                )));
            }
        };
        // Where no dry run is offered, a `dry_run` is the tool's own argument, left as it is.
        let dry_run = tool.dry_run().is_some()
            && matches!(arguments.remove(DRY_RUN), Some(Value::Bool(true)));
        let confirm_token = match arguments.remove(CONFIRM_TOKEN) {
            Some(Value::String(token)) => Some(token),
            _ => None,
        };
        let name = &tool.spec().name;
        let fingerprint = fingerprint(name, &arguments);
        let arguments = Value::Object(arguments);

        if dry_run {
            return Ok(match preview::preview(tool, arguments, context).await {
                Ok(answer) => WriteOutcome::DryRun(with_field(answer, "dryRun", json!(true))),
                Err(error) => WriteOutcome::Failed(error),
            });
        }

        // Keys belong to the person when there is one: a client that registers anew on every
        // connect (claude.ai does) still replays its user's key; without a user, to the client.
        let actor = match &context.caller.user {
            Some(user) => format!("user\u{0}{user}"),
            None => format!("client\u{0}{}", context.caller.client),
        };
        let now_ms = self.clock.now().timestamp_millis();
        // One token confirms one change: this caller, tool, key and arguments.
        let binding = format!(
            "{endpoint}\u{0}{name}\u{0}{}\u{0}{key}\u{0}{fingerprint}",
            context.caller.principal()
        );
        // A confirmation's state is used up first, before anything else is looked at: a
        // state is single use even where the write it confirmed is answered from its record.
        if safety.confirm
            && confirm_token.is_none()
            && let Some(state) = &rounds.request_state
        {
            let preview = self.redeem(state, &binding, says).await.map_err(refused)?;
            context.confirmed_preview = Some(preview);
        }
        let record = hex_sha256(&format!("{endpoint}\u{0}{name}\u{0}{actor}\u{0}{key}"));
        // A key that already wrote answers its result, whatever else the call carries: a resend
        // of a confirmed write after its token expired is still that write.
        match self.store.peek(&record, self.clock.now().timestamp()).await {
            Ok(Some(Claim::Done {
                fingerprint: stored,
                result,
            })) => return recorded(&stored, &fingerprint, result, says).map(Ran::answered),
            Ok(_) => {}
            Err(down) => return Err(refused(unavailable(down, says))),
        }

        if safety.confirm {
            let tokens = self
                .tokens()
                .await
                .map_err(|down| refused(unavailable(down, says)))?;
            match (confirm_token, &rounds.request_state) {
                // A retry with the user's answer (its state was redeemed above).
                (None, Some(_)) => {
                    if !rounds.confirmed() {
                        return Err(refused(confirmation::declined(says)));
                    }
                }
                (None, None) => {
                    let expires = now_ms + self.confirm_ttl.as_millis() as i64;
                    let preview = match preview::preview(tool, arguments, context.clone()).await {
                        Ok(preview) => preview,
                        Err(error) => return Ok(WriteOutcome::Failed(error)),
                    };
                    // What the user sees is what they confirm: the token (or state) carries
                    // the preview's digest, for a tool that can check it at execution.
                    let digest = concierge_core::preview_digest(&preview);
                    if rounds.can_elicit {
                        let state = self
                            .seal_state(&binding, &digest, says)
                            .await
                            .map_err(refused)?;
                        return Ok(WriteOutcome::Ask(confirmation::ask(
                            name, &preview, state, says,
                        )));
                    }
                    return Ok(WriteOutcome::ConfirmFirst(json!({
                        "confirmationRequired": true,
                        "preview": preview,
                        CONFIRM_TOKEN_ANSWER: format!(
                            "{}.{digest}",
                            tokens.mint(&with_preview(&binding, &digest), expires)
                        ),
                        "expiresAt": chrono::DateTime::from_timestamp_millis(expires)
                            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
                        "message": says.confirm_first,
                    })));
                }
                (Some(token), _) => {
                    // `ct1.<expires>.<mac>.<preview digest>`: the MAC covers the digest too.
                    let (token, digest) = token.trim().rsplit_once('.').unwrap_or(("", ""));
                    if let Err(refusal) =
                        tokens.verify(token, &with_preview(&binding, digest), now_ms)
                    {
                        let (code, message) = match refusal {
                            Refused::Expired => {
                                ("confirm_token_expired", says.confirm_token_expired)
                            }
                            Refused::Invalid => {
                                ("confirm_token_invalid", says.confirm_token_invalid)
                            }
                        };
                        let mut error = ToolError::rejected(code, message);
                        error.field = Some(CONFIRM_TOKEN.into());
                        return Err(refused(error));
                    }
                    context.confirmed_preview = Some(digest.to_string());
                }
            }
        }

        let shared = {
            let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
            match running.get(&record) {
                Some((other, _)) if *other != fingerprint => return Err(refused(reused(says))),
                Some((_, shared)) => shared.clone(),
                None => {
                    let shared: Shared = Arc::default();
                    running.insert(record.clone(), (fingerprint.clone(), shared.clone()));
                    shared
                }
            }
        };
        // Leaves the map however this call ends (an answer, a panic, a cancelled request).
        let _entry = RunningEntry {
            running: &self.running,
            record: &record,
            shared: shared.clone(),
        };
        let mut ran_here = false;
        context.idempotency_key = Some(key);
        let run = Execution { tool, says, gate };
        let answer = shared
            .get_or_init(|| {
                ran_here = true;
                self.execute(&record, &fingerprint, arguments, context, run)
            })
            .await
            .clone();
        Ok(match answer? {
            Ran::Wrote(result) if ran_here => WriteOutcome::Ran(result),
            // Another call with the same key ran it: this one is answered its result.
            other => other.answered(),
        })
    }

    /// The one run behind a key: claim it, take the write budget, write, record the result (or
    /// free the key).
    async fn execute(
        &self,
        record: &str,
        fingerprint: &str,
        arguments: Value,
        context: CallContext,
        run: Execution<'_>,
    ) -> Result<Ran, Refusal> {
        let Execution { tool, says, gate } = run;
        let now = self.clock.now().timestamp();
        let claim = self
            .store
            .claim(record, fingerprint, now, self.window)
            .await
            .map_err(|down| refused(unavailable(down, says)))?;
        match claim {
            Claim::Done {
                fingerprint: stored,
                result,
            } => recorded(&stored, fingerprint, result, says),
            Claim::Running {
                fingerprint: stored,
            } => Err(refused(if stored == fingerprint {
                ToolError::rejected("write_in_progress", says.write_in_progress)
            } else {
                reused(says)
            })),
            Claim::Claimed => {
                let budget = match gate {
                    Some(take) => take().await,
                    None => Ok(()),
                };
                if let Err(limited) = budget {
                    // Nothing was sent: the key is free for the same call once the budget allows.
                    if let Err(error) = self.store.release(record).await {
                        tracing::error!(%error, "idempotency: cannot free a key");
                    }
                    return Err(crate::pipeline::rate_limit::write_refusal(limited));
                }
                match tool.call(arguments, context).await {
                    Ok(result) => {
                        if let Err(error) = self.store.complete(record, &result).await {
                            // The write happened; answer it. A replay may reach the backend
                            // again, which dedupes on the same key.
                            tracing::error!(%error, "idempotency: cannot record a write's result");
                        }
                        Ok(Ran::Wrote(result))
                    }
                    // The write may have happened: the key stays spent, and its replay
                    // answers the same, so this key never runs it a second time.
                    Err(error) if error.code == concierge_core::OUTCOME_UNKNOWN => {
                        let mark = json!({UNKNOWN_MARK: error.message});
                        if let Err(store_error) = self.store.complete(record, &mark).await {
                            tracing::error!(error = %store_error, "idempotency: cannot record a write of unknown outcome");
                        }
                        Ok(Ran::Failed(error))
                    }
                    Err(error) => {
                        if let Err(store_error) = self.store.release(record).await {
                            tracing::error!(error = %store_error, "idempotency: cannot free a key");
                        }
                        Ok(Ran::Failed(error))
                    }
                }
            }
        }
    }
}

/// One call of a write tool, as the dispatcher hands it to [`Writes::run`].
pub struct WriteCall<'a> {
    /// The endpoint's path: records and confirmations are kept per endpoint.
    pub endpoint: &'a str,
    pub tool: &'a dyn Tool,
    pub safety: WriteSafety,
    /// The validated arguments, the platform's own among them.
    pub arguments: Value,
    pub context: CallContext,
    pub says: &'a Messages,
    /// The write budget, taken only as the write is about to reach the tool.
    pub gate: Option<Gate<'a>>,
    /// What the client said about asking the user (MRTR).
    pub rounds: &'a Rounds,
}

/// How a write call ended, short of a refusal.
#[derive(Debug)]
pub enum WriteOutcome {
    /// The tool wrote: its answer.
    Ran(Value),
    /// `dry_run: true`: what would change, nothing changed.
    DryRun(Value),
    /// A confirmation comes first: the preview and the token that confirms it.
    ConfirmFirst(Value),
    /// The confirmation is asked of the user over MRTR (`inputRequests`, `requestState`).
    Ask(Value),
    /// Answered from the key's record (or from another call's run of the same key).
    Replayed(Value),
    /// The tool's own error, from its write, its dry run or the preview: its answer as it is.
    Failed(ToolError),
}

impl WriteOutcome {
    /// The outcome with the config's secrets cut out of what the tool answered.
    pub fn redact(&mut self, redaction: &crate::redaction::Redaction) {
        match self {
            WriteOutcome::Failed(error) => redaction.error(error),
            WriteOutcome::Ran(value)
            | WriteOutcome::DryRun(value)
            | WriteOutcome::ConfirmFirst(value)
            | WriteOutcome::Ask(value)
            | WriteOutcome::Replayed(value) => redaction.value(value),
        }
    }

    /// The audit codes of the ends that wrote nothing and failed nothing (the outcome is `ok`):
    /// what dashboards count, and the ops console's legend explains.
    pub const DRY_RUN: &str = "dry_run";
    pub const CONFIRM_FIRST: &str = "confirmation_required";
    pub const ASK: &str = "input_required";
    pub const REPLAYED: &str = "idempotent_replay";

    /// The audit line's `code` for the ends that are not the tool's plain answer.
    pub fn audit_code(&self) -> Option<&'static str> {
        match self {
            WriteOutcome::Ran(_) => None,
            WriteOutcome::DryRun(_) => Some(Self::DRY_RUN),
            WriteOutcome::ConfirmFirst(_) => Some(Self::CONFIRM_FIRST),
            WriteOutcome::Ask(_) => Some(Self::ASK),
            WriteOutcome::Replayed(_) => Some(Self::REPLAYED),
            WriteOutcome::Failed(error) => Some(error.code),
        }
    }
}

/// What the one run behind a key shares with every call waiting on it.
#[derive(Clone)]
enum Ran {
    /// This run wrote.
    Wrote(Value),
    /// The key's record answered (another process wrote it).
    Recorded(Value),
    /// The tool failed (the key is freed, or kept spent for an unknown outcome).
    Failed(ToolError),
}

/// What [`Writes::execute`] needs of the call besides its arguments.
struct Execution<'a> {
    tool: &'a dyn Tool,
    says: &'a Messages,
    gate: Option<Gate<'a>>,
}

impl Ran {
    /// What a call is answered that did not run the write itself: the result, marked replayed.
    fn answered(self) -> WriteOutcome {
        match self {
            Ran::Wrote(result) | Ran::Recorded(result) => {
                WriteOutcome::Replayed(with_field(result, "idempotentReplay", json!(true)))
            }
            Ran::Failed(error) => WriteOutcome::Failed(error),
        }
    }
}

/// The platform's refusal of a write call, rendered as the error document the tool's own error
/// would be.
fn refused(error: ToolError) -> Refusal {
    // Write safety's own refusals are never internal failures: no trace id to point at.
    Refusal::of_tool_error(&error, None)
}

/// What a key's record holds for a write whose outcome is unknown (beside the message its
/// replay answers); no tool's result is an object with this key.
const UNKNOWN_MARK: &str = "$outcomeUnknown";

/// What a key's record answers a call with `fingerprint`: its result, replayed; the same
/// error again for a write of unknown outcome; `idempotency_key_reused` for other arguments.
fn recorded(
    stored: &str,
    fingerprint: &str,
    result: Value,
    says: &Messages,
) -> Result<Ran, Refusal> {
    if stored != fingerprint {
        return Err(refused(reused(says)));
    }
    Ok(match result.get(UNKNOWN_MARK) {
        Some(message) => Ran::Failed(ToolError::outcome_unknown(
            message.as_str().unwrap_or_default(),
            "a replay of a write whose outcome is unknown",
        )),
        None => Ran::Recorded(result),
    })
}

/// A new write secret: what the first process on a store offers, and every later one reads back.
fn fresh_secret() -> [u8; 32] {
    let mut fresh = [0u8; 32];
    fresh[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    fresh[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    fresh
}

/// The idempotency store could not answer: nothing was written, and the caller may send the
/// same call again (with the same key) in a few seconds.
fn unavailable(down: StoreUnavailable, says: &Messages) -> ToolError {
    tracing::warn!(why = %down, "write refused: its idempotency store is unavailable");
    crate::pipeline::rate_limit::state_unavailable("state_unavailable", says)
}

/// A run's place in the map of runs in progress, given up when the run's caller is done.
struct RunningEntry<'a> {
    running: &'a Mutex<HashMap<String, (String, Shared)>>,
    record: &'a str,
    shared: Shared,
}

impl Drop for RunningEntry<'_> {
    fn drop(&mut self) {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if running
            .get(self.record)
            .is_some_and(|(_, s)| Arc::ptr_eq(s, &self.shared))
        {
            running.remove(self.record);
        }
    }
}

/// The platform's arguments, added to a write tool's input schema; `dry_run` only for a tool
/// with a dry run of its own (elsewhere it may be the tool's own argument).
pub fn augment_schema(schema: &mut Map<String, Value>, safety: WriteSafety, dry_runs: bool) {
    let properties = schema.entry("properties").or_insert_with(|| json!({}));
    if let Value::Object(properties) = properties {
        properties.insert(
            IDEMPOTENCY_KEY.into(),
            json!({
                "type": "string", "minLength": 1, "maxLength": 255,
                "description": "A key you choose for this one change (a UUID, say). Sending the same key again within 24 hours answers the first result and never writes twice; use a new key for a new change."
            }),
        );
        if dry_runs {
            properties.insert(
                DRY_RUN.into(),
                json!({
                    "type": "boolean", "default": false,
                    "description": "true: check the change and answer exactly what would change, without changing anything."
                }),
            );
        }
        if safety.confirm {
            properties.insert(
                CONFIRM_TOKEN.into(),
                json!({
                    "type": "string",
                    "description": "Leave out at first: the answer is a preview and a confirmToken. Show the preview to the user and, once they agree, call again with the same arguments and this token."
                }),
            );
        }
    }
    let required = schema.entry("required").or_insert_with(|| json!([]));
    if let Value::Array(required) = required
        && !required.iter().any(|r| r == IDEMPOTENCY_KEY)
    {
        required.push(json!(IDEMPOTENCY_KEY));
    }
}

/// The arguments' identity: the tool and its business arguments, keys in a fixed order.
fn fingerprint(tool: &str, arguments: &Map<String, Value>) -> String {
    let mut canonical = String::new();
    canonical_json(&Value::Object(arguments.clone()), &mut canonical);
    hex_sha256(&format!("{tool}\u{0}{canonical}"))
}

fn canonical_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(object) => {
            let mut keys: Vec<&String> = object.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical_json(&object[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// What a confirm token's MAC covers: the call's binding and the digest of the preview it
/// confirms (minted and verified alike through this one function).
fn with_preview(binding: &str, digest: &str) -> String {
    format!("{binding}\u{0}{digest}")
}

fn hex_sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn with_field(mut output: Value, name: &str, value: Value) -> Value {
    if let Value::Object(object) = &mut output {
        object.insert(name.into(), value);
    }
    output
}

fn reused(says: &Messages) -> ToolError {
    let mut error = ToolError::rejected("idempotency_key_reused", says.key_reused);
    error.field = Some(IDEMPOTENCY_KEY.into());
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_ignore_key_order_but_not_values() {
        let a = json!({"b": 1, "a": {"y": [1, 2], "x": "s"}});
        let b = json!({"a": {"x": "s", "y": [1, 2]}, "b": 1});
        let c = json!({"a": {"x": "s", "y": [2, 1]}, "b": 1});
        let f = |v: &Value| fingerprint("t", v.as_object().unwrap());
        assert_eq!(f(&a), f(&b));
        assert_ne!(f(&a), f(&c));
        assert_ne!(f(&a), fingerprint("u", a.as_object().unwrap()));
    }

    /// Clock jumps against a confirm token's minute: set back, the token is still good (its
    /// expiry is wall time, as it must be for every instance and restart to judge it alike);
    /// set forward past its minute, it is expired at once.
    /// Write safety over a fresh SQLite file, judged by a clock the test moves.
    async fn writes_on_a_manual_clock() -> (Writes, concierge_core::ManualClock, tempfile::TempDir)
    {
        let dir = tempfile::tempdir().unwrap();
        let clock = concierge_core::ManualClock::at(chrono::Utc::now());
        let writes = Writes::open(
            &dir.path().join("writes.sqlite"),
            Duration::from_secs(24 * 3600),
            Duration::from_secs(300),
        )
        .await
        .unwrap()
        .with_clock(Arc::new(clock.clone()));
        (writes, clock, dir)
    }

    #[tokio::test]
    async fn a_sealed_token_is_bounded_when_the_wall_clock_jumps() {
        let (writes, clock, _dir) = writes_on_a_manual_clock().await;
        let start = concierge_core::Clock::now(&clock);
        let token = writes
            .seal("binding", Duration::from_secs(60))
            .await
            .unwrap();
        clock.set_wall(start - chrono::Duration::hours(1));
        assert_eq!(writes.unseal(&token, "binding").await, Ok(Ok(())));
        clock.set_wall(start + chrono::Duration::seconds(61));
        assert_eq!(
            writes.unseal(&token, "binding").await,
            Ok(Err(Refused::Expired))
        );
    }

    #[tokio::test]
    async fn a_sealed_token_expires_on_the_injected_clock() {
        let (writes, clock, _dir) = writes_on_a_manual_clock().await;
        let token = writes
            .seal("binding", Duration::from_secs(60))
            .await
            .unwrap();
        clock.advance(Duration::from_secs(59));
        assert_eq!(writes.unseal(&token, "binding").await, Ok(Ok(())));
        assert_eq!(
            writes.unseal(&token, "another binding").await,
            Ok(Err(Refused::Invalid))
        );
        clock.advance(Duration::from_secs(2));
        assert_eq!(
            writes.unseal(&token, "binding").await,
            Ok(Err(Refused::Expired))
        );
    }

    /// A write tool whose backend never confirmed its commit, counting its runs.
    struct Unconfirmed {
        spec: concierge_core::ToolSpec,
        runs: std::sync::atomic::AtomicUsize,
    }

    impl Tool for Unconfirmed {
        fn spec(&self) -> &concierge_core::ToolSpec {
            &self.spec
        }

        fn call(&self, _: Value, _: CallContext) -> concierge_core::ToolFuture<'_> {
            self.runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async {
                Err(ToolError::outcome_unknown(
                    "look before trying again",
                    "commit: connection reset",
                ))
            })
        }
    }

    #[tokio::test]
    async fn a_write_of_unknown_outcome_keeps_its_key_spent() {
        let (writes, _clock, _dir) = writes_on_a_manual_clock().await;
        let tool = Unconfirmed {
            spec: concierge_core::ToolSpec::new(
                "t",
                "t",
                Default::default(),
                Default::default(),
                concierge_core::Annotations::additive_write(),
            ),
            runs: Default::default(),
        };
        let context = || CallContext::new(concierge_core::Caller::client("c"), "trace");
        let says = &concierge_core::messages::ENGLISH;
        // The first call, its resends (answered from the key's record), and a resend that
        // races a claim (the record read as the claim finds it).
        let unknown = |outcome: WriteOutcome| match outcome {
            WriteOutcome::Failed(error) => error,
            other => panic!("unknown, never a replayed success: {other:?}"),
        };
        for _ in 0..3 {
            let call = WriteCall {
                endpoint: "/mcp",
                tool: &tool,
                safety: WriteSafety::confirmed(false),
                arguments: json!({"idempotency_key": "k1"}),
                context: context(),
                says,
                gate: None,
                rounds: &Rounds::default(),
            };
            let error = unknown(writes.run(call).await.expect("not refused"));
            assert_eq!(error.code, concierge_core::OUTCOME_UNKNOWN);
            assert_eq!(error.message, "look before trying again");
        }
        for _ in 0..2 {
            let run = Execution {
                tool: &tool,
                says,
                gate: None,
            };
            let ran = writes.execute("r1", "f1", json!({}), context(), run).await;
            let Ok(Ran::Failed(error)) = ran else {
                panic!("unknown");
            };
            assert_eq!(error.code, concierge_core::OUTCOME_UNKNOWN);
        }
        assert_eq!(
            tool.runs.load(std::sync::atomic::Ordering::SeqCst),
            2,
            "each key runs the write once"
        );
    }

    #[test]
    fn the_schema_gains_the_platform_arguments() {
        let mut schema = json!({"type": "object", "properties": {"comment": {"type": "string"}}, "required": ["comment"]})
            .as_object()
            .unwrap()
            .clone();
        augment_schema(&mut schema, WriteSafety::confirmed(true), true);
        assert_eq!(schema["required"], json!(["comment", "idempotency_key"]));
        for name in [IDEMPOTENCY_KEY, DRY_RUN, CONFIRM_TOKEN] {
            assert!(schema["properties"].get(name).is_some(), "{name}");
        }
    }
}
