-- The authorization server's state in the shared PostgreSQL (src/store/postgres.rs): the same
-- tables as the SQLite file, with a sequence where SQLite's rowid broke ties.
CREATE TABLE oauth_key (id INTEGER PRIMARY KEY, seed BYTEA NOT NULL, created_at BIGINT NOT NULL);
CREATE TABLE oauth_client (
    client_id TEXT PRIMARY KEY, client TEXT NOT NULL, created_at BIGINT NOT NULL,
    last_used_at BIGINT NOT NULL, used BOOLEAN NOT NULL DEFAULT FALSE, seq BIGSERIAL
);
CREATE TABLE oauth_pending (
    csrf TEXT PRIMARY KEY, request TEXT NOT NULL, expires_at BIGINT NOT NULL, seq BIGSERIAL
);
CREATE TABLE oauth_code (
    code_hash TEXT PRIMARY KEY, grant_json TEXT NOT NULL, expires_at BIGINT NOT NULL,
    used BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE TABLE oauth_refresh (
    token_hash TEXT PRIMARY KEY, family TEXT NOT NULL, grant_json TEXT NOT NULL,
    expires_at BIGINT NOT NULL, used BOOLEAN NOT NULL DEFAULT FALSE,
    revoked BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX oauth_refresh_family ON oauth_refresh (family);
CREATE TABLE oauth_revoked_jti (jti TEXT PRIMARY KEY, expires_at BIGINT NOT NULL);
CREATE TABLE oauth_family_access (jti TEXT PRIMARY KEY, family TEXT NOT NULL, expires_at BIGINT NOT NULL);
CREATE INDEX oauth_family_access_family ON oauth_family_access (family);
CREATE TABLE oauth_user (
    username TEXT PRIMARY KEY, password_hash TEXT NOT NULL, role TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
