//! Local users' passwords, as every store keeps them: argon2 hashes, checked in the same time
//! whether the user exists or not.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

use super::StoreError;

/// An argon2 hash no password matches, checked for unknown user names.
static UNKNOWN_USER_HASH: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let salt = SaltString::encode_b64(&[7u8; 16]).expect("a fixed salt encodes");
    argon2::Argon2::default()
        .hash_password(crate::util::random_token(24).as_bytes(), &salt)
        .map(|h| h.to_string())
        .unwrap_or_default()
});

/// The argon2 hash of `password`, under a fresh salt.
pub fn hash(password: &str) -> Result<String, StoreError> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| e.to_string())?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
    Ok(argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map_err(|e| e.to_string())?
        .to_string())
}

/// Whether `password` matches the `stored` hash. `None` (no such user) does the same work as a
/// wrong password: the time it takes must not tell which user names exist.
pub fn verify(stored: Option<&str>, password: &str) -> bool {
    let matches = |hash: &str| {
        PasswordHash::new(hash)
            .map(|parsed| {
                argon2::Argon2::default()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            })
            .unwrap_or(false)
    };
    match stored {
        Some(hash) => matches(hash),
        None => {
            matches(&UNKNOWN_USER_HASH);
            false
        }
    }
}
