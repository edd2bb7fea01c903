-- Write safety's records (crates/server/src/writes/postgres.rs): one row per idempotency key,
-- the deployment's write secret, and the instances that hold claims, each alive while it keeps
-- its row fresh.
CREATE TABLE concierge_write_idempotency (
    key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    state TEXT NOT NULL,
    result TEXT,
    started_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    owner TEXT
);
CREATE INDEX concierge_write_idempotency_expiry ON concierge_write_idempotency (expires_at);

CREATE TABLE concierge_write_secret (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    secret BYTEA NOT NULL
);

CREATE TABLE concierge_instance (
    owner TEXT PRIMARY KEY,
    alive_until TIMESTAMPTZ NOT NULL
);
