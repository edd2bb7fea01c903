//! Where write safety keeps what must outlive one call: idempotency records (a key claimed
//! before a write runs, completed with its result) and the deployment's write secret (confirm
//! tokens and task ids are sealed with it). One trait, two homes: a SQLite file for one host
//! (the default), PostgreSQL for several instances (`[state] database`). Both give the same
//! answers, so a replay reaches the first result wherever it lands.

use std::time::Duration;

use serde_json::Value;

/// What a claim found.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// Nobody holds the key: the caller runs the write.
    Claimed,
    /// A write with this key finished within the window.
    Done { fingerprint: String, result: Value },
    /// A write with this key is running now (elsewhere).
    Running { fingerprint: String },
}

/// A claim older than this whose write never finished was abandoned: the key may be claimed
/// again. Only for claims whose owner cannot be judged alive or dead; a claim of a dead owner is
/// taken over at once. Write tools must give up sooner (Mappy's write timeout is at most 5
/// minutes), and the idempotency window must be longer (the config check says so), so a live
/// write is never taken over.
pub const ABANDONED: Duration = Duration::from_secs(10 * 60);

/// The store did not answer, or failed to: nothing was decided. Retryable; the text says what
/// failed, never where (no URL, no password).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreUnavailable(pub String);

impl std::fmt::Display for StoreUnavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreUnavailable {}

/// One claim's question: the key, the write's arguments (their fingerprint), the platform
/// clock's now and how long the record is kept.
#[derive(Debug, Clone, Copy)]
pub struct Claiming<'a> {
    pub key: &'a str,
    pub fingerprint: &'a str,
    pub now: i64,
    pub window: Duration,
}

/// Idempotency records and the write secret. Times are the platform clock's Unix seconds, so
/// tests move expiry with a `ManualClock`.
#[async_trait::async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// The deployment's write secret: made by the first caller ever, the same for every
    /// instance on this store and every restart.
    async fn secret(&self) -> Result<[u8; 32], StoreUnavailable>;

    /// Claims `key` for a write with arguments `fingerprint`, or says who has it. Exact under
    /// concurrency across instances: of N claims at once, one is `Claimed`.
    async fn claim(
        &self,
        key: &str,
        fingerprint: &str,
        now: i64,
        window: Duration,
    ) -> Result<Claim, StoreUnavailable> {
        let asked = Claiming {
            key,
            fingerprint,
            now,
            window,
        };
        self.claim_as_asked(&asked).await
    }

    /// [`claim`](Self::claim), its question in one value: what a store implements.
    async fn claim_as_asked(&self, asked: &Claiming<'_>) -> Result<Claim, StoreUnavailable>;

    /// What the key holds now, without claiming it (`None`: nothing live).
    async fn peek(&self, key: &str, now: i64) -> Result<Option<Claim>, StoreUnavailable>;

    /// Records the write's result: from now on the key answers it.
    async fn complete(&self, key: &str, result: &Value) -> Result<(), StoreUnavailable>;

    /// Frees a key whose write failed, so the caller may send it again.
    async fn release(&self, key: &str) -> Result<(), StoreUnavailable>;
}
