//! The authorization server's state in PostgreSQL, as several instances share it: one store
//! per "instance" (each its own pool) on a fresh database of the server test.sh starts
//! (`CONCIERGE_TEST_POSTGRES`). Without that variable the tests say so and pass.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use concierge_core::postgres::SharedDatabase;
use concierge_oauth::limits::{LimitsConfig, SignInThrottle, Throttled};
use concierge_oauth::store::{Grant, OAuthStore, SqlStore};

fn instance(url: &str) -> Arc<SqlStore> {
    Arc::new(SqlStore::shared(Arc::new(
        SharedDatabase::new(url).unwrap(),
    )))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_share_one_key_redeem_a_code_once_and_count_sign_in_failures_together() {
    let Some(url) = concierge_testkit::postgres::fresh_database("oauth").await else {
        return;
    };
    let (a, b, c) = (instance(&url), instance(&url), instance(&url));

    // Three instances starting at once offer three keys; all of them use the first one stored.
    let (ka, kb, kc) = tokio::join!(a.signing_seed(), b.signing_seed(), c.signing_seed());
    let key = ka.unwrap();
    assert_eq!(kb.unwrap(), key);
    assert_eq!(kc.unwrap(), key);

    // A code issued on one instance is redeemed once, whichever instances race for it.
    let grant = Grant {
        client_id: "client".into(),
        user: Some("alice".into()),
        scope: "mappy:location:read".into(),
        resource: "https://mcp.example/mcp".into(),
        redirect_uri: "http://127.0.0.1/cb".into(),
        code_challenge: "challenge".into(),
        role: None,
    };
    a.put_code("the-code", &grant, Duration::from_secs(60))
        .await
        .unwrap();
    let (rb, rc) = tokio::join!(b.redeem_code("the-code"), c.redeem_code("the-code"));
    let redeemed = [rb.unwrap(), rc.unwrap()];
    assert_eq!(redeemed.iter().filter(|r| r.is_some()).count(), 1);
    assert!(a.code_was_redeemed("the-code").await.unwrap());

    // A refresh token is rotated once across instances.
    a.put_refresh("refresh", "family", &grant, Duration::from_secs(60))
        .await
        .unwrap();
    let (ub, uc) = tokio::join!(
        b.mark_refresh_used("refresh"),
        c.mark_refresh_used("refresh")
    );
    assert_ne!(ub.unwrap(), uc.unwrap(), "exactly one rotation wins");

    // The console lists the families that can still refresh, on any instance: the rotated
    // token's is gone until its successor is stored; a revoked family is gone for good.
    assert!(b.live_families(10).await.unwrap().is_empty());
    a.put_refresh("refresh-2", "family", &grant, Duration::from_secs(60))
        .await
        .unwrap();
    a.put_refresh("other", "other-family", &grant, Duration::from_secs(30))
        .await
        .unwrap();
    let live = c.live_families(10).await.unwrap();
    let names: Vec<&str> = live.iter().map(|f| f.family.as_str()).collect();
    assert_eq!(names, ["family", "other-family"], "longest-lived first");
    assert_eq!(live[0].grant.user.as_deref(), Some("alice"));
    b.revoke_family("family").await.unwrap();
    let live = a.live_families(10).await.unwrap();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].family, "other-family");

    // Guesses at one account spread over three instances wait as guesses at one would: five
    // are free, the sixth waits.
    let limits = LimitsConfig::default();
    let throttles: Vec<SignInThrottle> = [&a, &b, &c]
        .iter()
        .map(|s| SignInThrottle::new(&limits).shared((*s).clone()))
        .collect();
    let now = Instant::now();
    for n in 0..5 {
        let peer: IpAddr = format!("192.0.2.{n}").parse().unwrap();
        let throttle = &throttles[n % 3];
        assert_eq!(throttle.check(Some(peer), "Alice", now).await, Ok(()));
        throttle.failed(Some(peer), "Alice", now).await;
    }
    let fresh_peer: IpAddr = "198.51.100.1".parse().unwrap();
    for throttle in &throttles {
        assert!(
            matches!(
                throttle.check(Some(fresh_peer), "alice", now).await,
                Err(Throttled::Account(_))
            ),
            "every instance knows the account's failures"
        );
    }
    // A right password on one instance clears them for all.
    throttles[0].succeeded("alice").await;
    assert_eq!(
        throttles[2].check(Some(fresh_peer), "alice", now).await,
        Ok(())
    );
}
