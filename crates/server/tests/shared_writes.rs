//! Write safety's records in PostgreSQL (`[state] database`) and in Redis (`[state] writes =
//! "redis"`), as several instances share them: a fresh database of the server test.sh starts
//! (`CONCIERGE_TEST_POSTGRES`) per test, or a redis-server of the test's own, and one store per
//! "instance" on it. Without them the tests say so and pass.

mod common;

use std::sync::Arc;
use std::time::Duration;

use concierge_core::idempotency::{Claim, IdempotencyStore};
use concierge_core::postgres::SharedDatabase;
use concierge_server::limits::redis::connect;
use concierge_server::writes::{RedisIdempotencyStore, SqlIdempotencyStore};
use concierge_testkit::redis::Redis;
use serde_json::json;

const DAY: Duration = Duration::from_secs(24 * 3600);

fn instance(url: &str) -> SqlIdempotencyStore {
    SqlIdempotencyStore::shared(Arc::new(SharedDatabase::new(url).unwrap()))
}

/// The write secret every one of `instances` answers, asked of all at once: one for all.
async fn one_secret(instances: &[impl IdempotencyStore]) -> [u8; 32] {
    let secrets = futures::future::join_all(instances.iter().map(|i| i.secret())).await;
    let secrets: Vec<[u8; 32]> = secrets.into_iter().map(|s| s.unwrap()).collect();
    assert!(
        secrets.windows(2).all(|w| w[0] == w[1]),
        "one secret for all"
    );
    secrets[0]
}

/// 30 claims of the key `k` at once, spread over `instances`: exactly one runs the write. Each
/// claim's answer.
async fn one_claim_wins(instances: &[impl IdempotencyStore], now: i64) -> Vec<Claim> {
    let claims = (0..30).map(|i| instances[i % instances.len()].claim("k", "f", now, DAY));
    let claims: Vec<Claim> = futures::future::join_all(claims)
        .await
        .into_iter()
        .map(|c| c.unwrap())
        .collect();
    let winners = claims.iter().filter(|c| **c == Claim::Claimed).count();
    assert_eq!(winners, 1, "{claims:?}");
    claims
}

/// A claim's answer while the write of `k` with the arguments `f` runs.
fn running() -> Claim {
    Claim::Running {
        fingerprint: "f".into(),
    }
}

/// Completes the write of `k` on `writer`: what any claim of `k` answers from then on.
async fn complete(writer: &impl IdempotencyStore) -> Claim {
    let result = json!({"batchId": 7});
    writer.complete("k", &result).await.unwrap();
    Claim::Done {
        fingerprint: "f".into(),
        result,
    }
}

/// Past its window, `k` is free again on `store`: nothing to peek at, and a claim gets it.
async fn free_again(store: &impl IdempotencyStore, later: i64) {
    assert_eq!(store.peek("k", later).await.unwrap(), None);
    assert_eq!(
        store.claim("k", "f", later, DAY).await.unwrap(),
        Claim::Claimed
    );
}

/// Two instances claim the dead instance's key `orphan` at once: exactly one takes it over.
async fn one_takes_the_orphan_over(
    first: &impl IdempotencyStore,
    second: &impl IdempotencyStore,
    now: i64,
) {
    let (a, b) = futures::future::join(
        first.claim("orphan", "f", now, DAY),
        second.claim("orphan", "f", now, DAY),
    )
    .await;
    let taken = [a.unwrap(), b.unwrap()];
    assert_eq!(
        taken.iter().filter(|c| **c == Claim::Claimed).count(),
        1,
        "{taken:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_starting_at_once_migrate_once_and_share_one_secret() {
    let Some(url) = concierge_testkit::postgres::fresh_database("writes_start").await else {
        return;
    };
    let instances: Vec<SqlIdempotencyStore> = (0..3).map(|_| instance(&url)).collect();
    let secret = one_secret(&instances).await;
    // A restart (a new store on the same database) keeps it.
    assert_eq!(instance(&url).secret().await.unwrap(), secret);
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let applied: i64 = sqlx::query_scalar("SELECT count(*) FROM concierge_writes_migrations")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(applied, 1, "each migration applied once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_claim_wins_across_instances_and_every_other_answers_its_result() {
    let Some(url) = concierge_testkit::postgres::fresh_database("writes_claim").await else {
        return;
    };
    let instances: Vec<SqlIdempotencyStore> = (0..3).map(|_| instance(&url)).collect();
    let now = 1_000_000;
    let claims = one_claim_wins(&instances, now).await;
    assert!(
        claims
            .iter()
            .all(|c| *c == Claim::Claimed || *c == running())
    );

    let done = complete(&instances[0]).await;
    for other in &instances[1..] {
        assert_eq!(other.peek("k", now + 1).await.unwrap(), Some(done.clone()));
        assert_eq!(other.claim("k", "f", now + 1, DAY).await.unwrap(), done);
    }
    // Past the window the key is free again.
    let later = now + DAY.as_secs() as i64;
    free_again(&instances[2], later).await;
    // A failed write frees its key for anyone.
    instances[2].release("k").await.unwrap();
    assert_eq!(
        instances[1].claim("k", "f", later, DAY).await.unwrap(),
        Claim::Claimed
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_of_a_dead_instance_is_taken_over_and_a_live_ones_is_not() {
    let Some(url) = concierge_testkit::postgres::fresh_database("writes_owner").await else {
        return;
    };
    let (first, second) = (instance(&url), instance(&url));
    let now = 1_000_000;
    assert_eq!(
        first.claim("live", "f", now, DAY).await.unwrap(),
        Claim::Claimed
    );
    assert_eq!(
        second.claim("live", "f", now, DAY).await.unwrap(),
        running()
    );

    // An instance killed mid-write: its claim stays, its row goes stale.
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    sqlx::query(
        "INSERT INTO concierge_instance (owner, alive_until) VALUES ('dead', now() - interval '1 second')",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO concierge_write_idempotency (key, fingerprint, state, started_at, expires_at, owner) \
         VALUES ('orphan', 'f', 'running', $1, $2, 'dead')",
    )
    .bind(now)
    .bind(now + 3600)
    .execute(&pool)
    .await
    .unwrap();
    // Other arguments under that key are a reuse, not a takeover.
    assert_eq!(
        second.claim("orphan", "g", now + 1, DAY).await.unwrap(),
        running()
    );
    // Two instances try at once: one takes it over, the other sees it running.
    one_takes_the_orphan_over(&first, &second, now + 1).await;

    // The first instance stops: its claims wait until its row goes stale, then are free.
    drop(first);
    sqlx::query("UPDATE concierge_instance SET alive_until = now() - interval '1 second' WHERE owner <> 'dead'")
        .execute(&pool)
        .await
        .unwrap();
    let third = instance(&url);
    assert_eq!(
        third.claim("live", "f", now + 2, DAY).await.unwrap(),
        Claim::Claimed
    );
}

#[tokio::test]
async fn a_database_that_does_not_answer_is_reported_quickly_and_retryably() {
    // Nothing listens on port 1: connecting fails at once, and the store says so.
    let down = instance("postgres://nobody@127.0.0.1:1/none");
    let started = std::time::Instant::now();
    let error = down.claim("k", "f", 0, DAY).await.unwrap_err();
    assert!(
        error.0.contains("unreachable") || error.0.contains("migrations"),
        "{error}"
    );
    assert!(
        !error.0.contains("nobody@"),
        "no URL in the reason: {error}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(down.secret().await.is_err());
}

fn redis_instance(redis: &Redis) -> RedisIdempotencyStore {
    RedisIdempotencyStore::new(connect(&redis.url()).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_redis_one_claim_wins_a_dead_instances_claim_is_taken_over_and_the_secret_is_one() {
    let Some(mut redis) = Redis::start() else {
        return;
    };
    let instances: Vec<RedisIdempotencyStore> = (0..3).map(|_| redis_instance(&redis)).collect();
    one_secret(&instances).await;

    let now = 1_000_000;
    one_claim_wins(&instances, now).await;
    // Other arguments under a running key are a reuse; the result answers everyone once done.
    assert_eq!(
        instances[1].claim("k", "g", now, DAY).await.unwrap(),
        running()
    );
    let done = complete(&instances[0]).await;
    assert_eq!(
        instances[2].peek("k", now + 1).await.unwrap(),
        Some(done.clone())
    );
    assert_eq!(
        instances[1].claim("k", "f", now + 1, DAY).await.unwrap(),
        done
    );
    // Past its window (on the platform's clock) the key is free again.
    let later = now + DAY.as_secs() as i64;
    free_again(&instances[1], later).await;
    instances[1].release("k").await.unwrap();
    assert_eq!(instances[2].peek("k", later).await.unwrap(), None);

    // An instance dies holding a claim: its owner key expires, and the claim is taken over,
    // by exactly one of the instances trying at once.
    let dying = redis_instance(&redis);
    assert_eq!(
        dying.claim("orphan", "f", now, DAY).await.unwrap(),
        Claim::Claimed
    );
    assert!(matches!(
        instances[0].claim("orphan", "f", now, DAY).await.unwrap(),
        Claim::Running { .. }
    ));
    drop(dying);
    // Its owner key goes, as its expiry would take it (live instances renew theirs).
    let mut conn = connect(&redis.url()).unwrap();
    let holder: String = ::redis::cmd("HGET")
        .arg("concierge:writes:orphan")
        .arg("owner")
        .query_async(&mut conn)
        .await
        .unwrap();
    let _: i64 = ::redis::cmd("DEL")
        .arg(format!("concierge:writes:owner:{holder}"))
        .query_async(&mut conn)
        .await
        .unwrap();
    one_takes_the_orphan_over(&instances[1], &instances[2], now + 1).await;

    // Redis stops: the store says so, quickly and retryably; it starts again: the store works.
    redis.stop();
    let started = std::time::Instant::now();
    assert!(instances[0].claim("k2", "f", now, DAY).await.is_err());
    assert!(started.elapsed() < Duration::from_secs(5));
    redis.resume();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match instances[0].claim("k2", "f", now, DAY).await {
            Ok(claim) => {
                assert_eq!(claim, Claim::Claimed);
                break;
            }
            Err(error) => assert!(std::time::Instant::now() < deadline, "{error}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
