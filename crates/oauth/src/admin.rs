//! The operator's side of the built-in authorization server (`concierge token …`): local users,
//! machine clients, and revocation, worked on the server's own database while it runs or not.
//! The binary only parses the command line and prints what [`run`] returns; here it can be
//! tested without spawning anything.

use std::io::BufRead;

use crate::OAuthConfig;
use crate::store::{Client, OAuthStore, SqlStore, StoreError};
use crate::util::{hash, random_token};

/// What the operator asked for: `concierge token <operation>` (the binary flattens this into its
/// command line, so the help text below is what the operator reads).
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum Operation {
    /// Create or update a local user who can sign in on the consent page. The password is read
    /// from the first line of standard input.
    AddUser {
        username: String,
        #[arg(long, default_value = "user")]
        role: String,
    },
    /// Register a confidential machine client for client_credentials (DeerFlow, n8n, …); prints
    /// its client_id and secret once.
    AddClient {
        #[arg(long)]
        name: String,
        /// A scope it may have; repeat for more.
        #[arg(long = "scope")]
        scopes: Vec<String>,
    },
    /// List registered clients.
    Clients,
    /// Remove a client and revoke every refresh token it holds.
    RevokeClient { client_id: String },
    /// List live sign-ins (refresh-token families): client, user, scopes, expiry.
    Tokens,
    /// Revoke one token, read from standard input: a refresh token (its whole family) or an
    /// access token (refused by the server within seconds).
    RevokeToken,
}

/// Why an operation was refused or failed. The words are what the operator reads after the
/// config's path.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error(
        "[oauth.external]: tokens come from an external identity provider, so the \
         built-in server's users, clients and tokens are not used"
    )]
    ExternalIssuer,
    #[error(
        "sign-in is delegated to the [oauth.users] directory, so local users are \
         not consulted: add the account to that directory instead"
    )]
    UsersDelegated,
    #[error("the server does not offer the scope(s) {unknown}; [oauth] scopes offers: {offered}")]
    UnknownScopes { unknown: String, offered: String },
    #[error("[oauth] has no database: the token commands manage the built-in server's state")]
    NoDatabase,
    #[error("cannot read the {what}: {source}")]
    Input {
        what: &'static str,
        source: std::io::Error,
    },
    #[error("the password needs at least 8 characters")]
    ShortPassword,
    #[error("not a token this server issued")]
    UnknownToken,
    #[error("no client `{0}`")]
    UnknownClient(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Runs `operation` on the state of the built-in server that `config` describes, reading a
/// password or token from `input` when the operation needs one; the text for the operator,
/// one line per item, is returned.
///
/// `shared` is the deployment's PostgreSQL when `[state] database` names one: the state every
/// instance serves from, so an operator's change reaches all of them.
pub async fn run(
    config: &OAuthConfig,
    operation: Operation,
    input: &mut dyn BufRead,
    shared: Option<std::sync::Arc<concierge_core::postgres::SharedDatabase>>,
) -> Result<String, AdminError> {
    check(config, &operation)?;
    let store: Box<dyn OAuthStore> = match shared {
        Some(database) => Box::new(SqlStore::shared(database)),
        None => {
            let database = config.database.as_ref().ok_or(AdminError::NoDatabase)?;
            Box::new(SqlStore::open_file(database).await?)
        }
    };
    let mut report = String::new();
    match operation {
        Operation::AddUser { username, role } => {
            let password = first_line(input, "password")?;
            let password = password.trim_end_matches(['\r', '\n']);
            if password.len() < 8 {
                return Err(AdminError::ShortPassword);
            }
            store.put_user(&username, password, &role).await?;
            report.push_str(&format!("user `{username}` ({role}) saved\n"));
        }
        Operation::AddClient { name, scopes } => {
            let client_id = format!("op-{}", random_token(12));
            let secret = random_token(32);
            store
                .put_client(&Client {
                    client_id: client_id.clone(),
                    secret_hash: Some(hash(&secret)),
                    name,
                    redirect_uris: Vec::new(),
                    grant_types: vec!["client_credentials".into(), "refresh_token".into()],
                    auth_method: "client_secret_post".into(),
                    scopes,
                    source: "operator".into(),
                })
                .await?;
            report.push_str(&format!("client_id={client_id}\nclient_secret={secret}\n"));
        }
        Operation::Clients => {
            for (client, last_used) in store.clients().await? {
                report.push_str(&format!(
                    "{}\t{}\t{}\t{}\tlast used {}\n",
                    client.client_id,
                    client.source,
                    client.grant_types.join(","),
                    client.name,
                    rfc3339(last_used)
                ));
            }
        }
        Operation::Tokens => {
            for (family, grant, expires_at) in store.active_grants().await? {
                report.push_str(&format!(
                    "{family}\t{}\t{}\t{}\tuntil {}\n",
                    grant.client_id,
                    grant.user.as_deref().unwrap_or("-"),
                    grant.scope,
                    rfc3339(expires_at)
                ));
            }
        }
        Operation::RevokeToken => {
            let token = first_line(input, "token")?;
            let token = token.trim();
            if let Some(state) = store.refresh(token).await? {
                store.revoke_family(&state.family).await?;
                report.push_str(&format!(
                    "refresh token family revoked (client `{}`)\n",
                    state.grant.client_id
                ));
            } else if let Some((jti, exp)) = access_token_id(token) {
                store.revoke_jti(&jti, exp).await?;
                report.push_str("access token revoked\n");
            } else {
                return Err(AdminError::UnknownToken);
            }
        }
        Operation::RevokeClient { client_id } => {
            if !store.delete_client(&client_id).await? {
                return Err(AdminError::UnknownClient(client_id));
            }
            report.push_str(&format!(
                "client `{client_id}` removed; its refresh tokens are revoked\n"
            ));
        }
    }
    Ok(report)
}

/// Refused before anything is opened or saved: a user nobody can sign in as, or a client with
/// a scope the server narrows away, would look like success and fail later, far from the cause.
fn check(config: &OAuthConfig, operation: &Operation) -> Result<(), AdminError> {
    if config.external.is_some() {
        return Err(AdminError::ExternalIssuer);
    }
    match operation {
        Operation::AddUser { .. } if config.users.is_some() => Err(AdminError::UsersDelegated),
        Operation::AddClient { scopes, .. } => {
            let unknown: Vec<&str> = scopes
                .iter()
                .filter(|scope| !config.scopes.contains(scope))
                .map(String::as_str)
                .collect();
            if unknown.is_empty() {
                return Ok(());
            }
            let offered = if config.scopes.is_empty() {
                "none ([oauth] scopes is empty)".to_string()
            } else {
                config.scopes.join(", ")
            };
            Err(AdminError::UnknownScopes {
                unknown: unknown.join(", "),
                offered,
            })
        }
        _ => Ok(()),
    }
}

fn first_line(input: &mut dyn BufRead, what: &'static str) -> Result<String, AdminError> {
    let mut line = String::new();
    input
        .read_line(&mut line)
        .map_err(|source| AdminError::Input { what, source })?;
    Ok(line)
}

/// The `jti` and `exp` of a JWT access token, read without checking the signature: revoking a
/// token is harmless whoever signed it, and an expired or foreign key must not keep the
/// operator from listing it as revoked.
pub fn access_token_id(token: &str) -> Option<(String, i64)> {
    use base64::Engine;
    let payload = token.split('.').nth(1)?;
    let claims: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .ok()?,
    )
    .ok()?;
    Some((
        claims.get("jti")?.as_str()?.to_string(),
        claims.get("exp")?.as_i64()?,
    ))
}

/// Seconds since the epoch as an RFC 3339 time (times before the epoch show as the epoch: the
/// store never writes them).
pub fn rfc3339(seconds: i64) -> String {
    std::time::UNIX_EPOCH
        .checked_add(std::time::Duration::from_secs(seconds.max(0) as u64))
        .map(|t| humantime::format_rfc3339_seconds(t).to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    fn encode(value: serde_json::Value) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
    }

    fn config(dir: &tempfile::TempDir, extra: serde_json::Value) -> OAuthConfig {
        let mut value = serde_json::json!({
            "issuer": "https://mcp.example",
            "database": dir.path().join("oauth.sqlite"),
            "scopes": ["coffee:read", "coffee:write"],
        });
        for (key, field) in extra.as_object().expect("an object") {
            value[key] = field.clone();
        }
        serde_json::from_value(value).expect("config")
    }

    async fn run_with(
        config: &OAuthConfig,
        operation: Operation,
        input: &str,
    ) -> Result<String, AdminError> {
        run(config, operation, &mut input.as_bytes(), None).await
    }

    #[test]
    fn an_access_tokens_id_and_expiry_are_read_from_its_payload() {
        let token = format!(
            "{}.{}.signature",
            encode(serde_json::json!({"alg": "EdDSA"})),
            encode(serde_json::json!({"jti": "abc", "exp": 1_700_000_000, "sub": "bob"}))
        );
        assert_eq!(
            access_token_id(&token),
            Some(("abc".to_string(), 1_700_000_000))
        );
    }

    #[test]
    fn what_is_not_a_jwt_with_an_id_and_expiry_has_none() {
        let without_exp = format!("h.{}.s", encode(serde_json::json!({"jti": "abc"})));
        let numeric_jti = format!("h.{}.s", encode(serde_json::json!({"jti": 7, "exp": 1})));
        for token in [
            "",
            "opaque-refresh-token",
            "h.not base64!.s",
            &format!("h.{}.s", encode(serde_json::json!("a string"))),
            &without_exp,
            &numeric_jti,
        ] {
            assert_eq!(access_token_id(token), None, "{token}");
        }
    }

    #[test]
    fn times_are_rfc_3339_in_whole_seconds() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(-5), "1970-01-01T00:00:00Z");
    }

    #[tokio::test]
    async fn a_user_is_saved_with_the_password_from_the_first_line() {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = config(&dir, serde_json::json!({}));
        let add = |password: &'static str| {
            let config = config.clone();
            async move {
                run_with(
                    &config,
                    Operation::AddUser {
                        username: "bob".into(),
                        role: "admin".into(),
                    },
                    password,
                )
                .await
            }
        };
        assert!(matches!(
            add("short\n").await,
            Err(AdminError::ShortPassword)
        ));
        assert_eq!(
            add("a long password\r\nnext line\n").await.unwrap(),
            "user `bob` (admin) saved\n"
        );
        let store = SqlStore::open_file(config.database.as_ref().unwrap())
            .await
            .unwrap();
        assert_eq!(
            store
                .check_user("bob", "a long password")
                .await
                .unwrap()
                .as_deref(),
            Some("admin")
        );
    }

    #[tokio::test]
    async fn a_machine_client_is_printed_once_and_listed_after() {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = config(&dir, serde_json::json!({}));
        let added = run_with(
            &config,
            Operation::AddClient {
                name: "n8n".into(),
                scopes: vec!["coffee:read".into()],
            },
            "",
        )
        .await
        .unwrap();
        let lines: Vec<&str> = added.lines().collect();
        let client_id = lines[0].strip_prefix("client_id=op-").expect("an id");
        assert_eq!(client_id.len(), 16, "{added}");
        assert!(lines[1].starts_with("client_secret="), "{added}");
        let listed = run_with(&config, Operation::Clients, "").await.unwrap();
        let fields: Vec<&str> = listed.trim_end().split('\t').collect();
        assert_eq!(
            &fields[..4],
            &[
                lines[0].trim_start_matches("client_id="),
                "operator",
                "client_credentials,refresh_token",
                "n8n"
            ]
        );
        assert!(fields[4].starts_with("last used 20"), "{listed}");
        assert_eq!(
            run_with(
                &config,
                Operation::RevokeClient {
                    client_id: fields[0].into()
                },
                ""
            )
            .await
            .unwrap(),
            format!(
                "client `{}` removed; its refresh tokens are revoked\n",
                fields[0]
            )
        );
        assert!(matches!(
            run_with(
                &config,
                Operation::RevokeClient {
                    client_id: fields[0].into()
                },
                ""
            )
            .await,
            Err(AdminError::UnknownClient(_))
        ));
    }

    #[tokio::test]
    async fn what_would_fail_later_is_refused_before_anything_is_saved() {
        let dir = tempfile::tempdir().expect("temp dir");
        let unknown_scope = run_with(
            &config(&dir, serde_json::json!({})),
            Operation::AddClient {
                name: "n8n".into(),
                scopes: vec!["coffee:read".into(), "tea:read".into()],
            },
            "",
        )
        .await
        .unwrap_err();
        assert_eq!(
            unknown_scope.to_string(),
            "the server does not offer the scope(s) tea:read; [oauth] scopes offers: coffee:read, coffee:write"
        );
        let delegated = config(
            &dir,
            serde_json::json!({"users": {"url": "https://users.example/check"}}),
        );
        assert!(matches!(
            run_with(
                &delegated,
                Operation::AddUser {
                    username: "bob".into(),
                    role: "user".into()
                },
                "a long password\n"
            )
            .await,
            Err(AdminError::UsersDelegated)
        ));
        assert!(
            !dir.path().join("oauth.sqlite").exists(),
            "nothing is opened for a refused operation"
        );
    }

    #[tokio::test]
    async fn an_access_token_is_revoked_by_its_id_and_anything_else_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = config(&dir, serde_json::json!({}));
        let exp = chrono::Utc::now().timestamp() + 3600;
        let token = format!(
            "h.{}.s",
            encode(serde_json::json!({"jti": "jti-1", "exp": exp}))
        );
        assert_eq!(
            run_with(&config, Operation::RevokeToken, &format!("{token}\n"))
                .await
                .unwrap(),
            "access token revoked\n"
        );
        let store = SqlStore::open_file(config.database.as_ref().unwrap())
            .await
            .unwrap();
        assert_eq!(
            store.revoked_jtis().await.unwrap(),
            vec!["jti-1".to_string()]
        );
        assert!(matches!(
            run_with(&config, Operation::RevokeToken, "no-such-token\n").await,
            Err(AdminError::UnknownToken)
        ));
        assert_eq!(run_with(&config, Operation::Tokens, "").await.unwrap(), "");
    }
}
