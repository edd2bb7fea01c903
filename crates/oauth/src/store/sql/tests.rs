//! Each case on the SQLite file and, where test.sh started one (`CONCIERGE_TEST_POSTGRES`),
//! on a fresh PostgreSQL database: one set of queries, so one set of expectations.

use super::*;

fn client(id: &str, source: &str) -> Client {
    Client {
        client_id: id.into(),
        secret_hash: None,
        name: id.into(),
        redirect_uris: vec!["https://app.example/cb".into()],
        grant_types: vec!["authorization_code".into()],
        auth_method: "none".into(),
        scopes: Vec::new(),
        source: source.into(),
    }
}

/// The store on each engine at hand, named for the assertion messages.
async fn stores(dir: &tempfile::TempDir) -> Vec<(&'static str, SqlStore)> {
    let file = SqlStore::open_file(&dir.path().join("o.sqlite"))
        .await
        .expect("store");
    let mut stores = vec![("sqlite", file)];
    if let Some(url) = concierge_testkit::postgres::fresh_database("oauth_store").await {
        let shared = SharedDatabase::new(&url).expect("url");
        stores.push(("postgres", SqlStore::shared(Arc::new(shared))));
    }
    stores
}

#[tokio::test]
async fn unused_self_registered_clients_are_collected_operator_clients_kept() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (engine, store) in stores(&dir).await {
        store.put_client(&client("dcr-a", "dcr")).await.unwrap();
        store.put_client(&client("op-b", "operator")).await.unwrap();
        let now = chrono::Utc::now().timestamp();
        assert_eq!(
            store.collect_unused_clients(now - 3600).await.unwrap(),
            0,
            "{engine}"
        );
        assert_eq!(
            store.collect_unused_clients(now + 10).await.unwrap(),
            1,
            "{engine}"
        );
        assert!(store.client("dcr-a").await.unwrap().is_none(), "{engine}");
        assert!(store.client("op-b").await.unwrap().is_some(), "{engine}");
    }
}

#[tokio::test]
async fn beyond_the_cap_the_oldest_never_used_registrations_go_first() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (engine, store) in stores(&dir).await {
        for id in ["dcr-1", "dcr-2", "dcr-3", "dcr-4"] {
            store.put_client(&client(id, "dcr")).await.unwrap();
        }
        store.put_client(&client("op-1", "operator")).await.unwrap();
        store.touch_client("dcr-1").await.unwrap();
        assert_eq!(store.cap_unused_clients(2).await.unwrap(), 1, "{engine}");
        for (id, kept) in [
            ("dcr-1", true),
            ("dcr-2", false),
            ("dcr-3", true),
            ("dcr-4", true),
            ("op-1", true),
        ] {
            let found = store.client(id).await.unwrap().is_some();
            assert_eq!(found, kept, "{engine}: {id}");
        }
        let listed: Vec<String> = (store.clients().await.unwrap().into_iter())
            .map(|(client, _)| client.client_id)
            .collect();
        assert_eq!(listed, ["dcr-1", "dcr-3", "dcr-4", "op-1"], "{engine}");
    }
}

#[tokio::test]
async fn pending_authorizations_are_taken_once_and_trimmed_oldest_first() {
    let dir = tempfile::tempdir().expect("temp dir");
    let minute = Duration::from_secs(60);
    for (engine, store) in stores(&dir).await {
        for (csrf, ttl) in [("a", 1), ("b", 2), ("c", 3)] {
            store.put_pending(csrf, csrf, minute * ttl).await.unwrap();
        }
        assert_eq!(store.trim_pending(2).await.unwrap(), 1, "{engine}");
        assert_eq!(store.take_pending("a").await.unwrap(), None, "{engine}");
        assert_eq!(store.take_pending("c").await.unwrap().as_deref(), Some("c"));
        assert_eq!(store.take_pending("c").await.unwrap(), None, "{engine}");
    }
}

#[tokio::test]
async fn revoking_a_family_revokes_the_access_tokens_it_issued() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (engine, store) in stores(&dir).await {
        let later = now() + 3600;
        store.record_access("fam-a", "jti-1", later).await.unwrap();
        store.record_access("fam-b", "jti-2", later).await.unwrap();
        store.revoke_family("fam-a").await.unwrap();
        store.revoke_family("fam-a").await.unwrap();
        assert_eq!(store.revoked_jtis().await.unwrap(), ["jti-1"], "{engine}");
    }
}

#[tokio::test]
async fn live_families_are_those_that_can_still_refresh() {
    let dir = tempfile::tempdir().expect("temp dir");
    let grant = Grant {
        client_id: "c".into(),
        user: Some("u".into()),
        scope: "s".into(),
        resource: "r".into(),
        redirect_uri: String::new(),
        code_challenge: String::new(),
        role: None,
    };
    let hour = Duration::from_secs(3600);
    for (engine, store) in stores(&dir).await {
        for (token, family) in [("t1", "rotated"), ("t2", "live"), ("t3", "revoked")] {
            store
                .put_refresh(token, family, &grant, hour)
                .await
                .unwrap();
        }
        assert!(store.mark_refresh_used("t1").await.unwrap(), "{engine}");
        assert!(!store.mark_refresh_used("t1").await.unwrap(), "{engine}");
        store.revoke_family("revoked").await.unwrap();
        // Born into a revoked family, a token is born revoked.
        store
            .put_refresh("t4", "revoked", &grant, hour)
            .await
            .unwrap();
        let born = store.refresh("t4").await.unwrap().expect("stored");
        assert!(born.revoked && !born.used, "{engine}");
        let live = store.live_families(10).await.unwrap();
        assert_eq!(live.len(), 1, "{engine}");
        assert_eq!(
            (live[0].family.as_str(), live[0].grant.client_id.as_str()),
            ("live", "c")
        );
        assert!(store.live_families(0).await.unwrap().is_empty(), "{engine}");
        assert_eq!(store.active_grants().await.unwrap().len(), 1, "{engine}");
    }
}

#[tokio::test]
async fn a_code_is_redeemed_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let grant = Grant {
        client_id: "c".into(),
        user: None,
        scope: "s".into(),
        resource: "r".into(),
        redirect_uri: String::new(),
        code_challenge: String::new(),
        role: None,
    };
    for (engine, store) in stores(&dir).await {
        let minute = Duration::from_secs(60);
        store.put_code("code", &grant, minute).await.unwrap();
        assert!(!store.code_was_redeemed("code").await.unwrap(), "{engine}");
        assert_eq!(
            store.redeem_code("code").await.unwrap(),
            Some(grant.clone())
        );
        assert_eq!(store.redeem_code("code").await.unwrap(), None, "{engine}");
        assert!(store.code_was_redeemed("code").await.unwrap(), "{engine}");
    }
}

#[tokio::test]
async fn passwords_are_checked_against_argon2_hashes() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (engine, store) in stores(&dir).await {
        let password = "a long password";
        store.put_user("alice", password, "admin").await.unwrap();
        let signed_in = store.sign_in("alice", password).await.unwrap();
        assert_eq!(
            signed_in.map(|s| s.role).as_deref(),
            Some("admin"),
            "{engine}"
        );
        assert_eq!(
            store.sign_in("alice", "wrong").await.unwrap(),
            None,
            "{engine}"
        );
        assert_eq!(
            store.sign_in("bob", password).await.unwrap(),
            None,
            "{engine}"
        );
    }
}

#[tokio::test]
async fn one_signing_key_survives_a_reopen() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = stores(&dir).await.remove(0).1.signing_seed().await.unwrap();
    let again = stores(&dir).await.remove(0).1.signing_seed().await.unwrap();
    assert_eq!(first, again);
}
