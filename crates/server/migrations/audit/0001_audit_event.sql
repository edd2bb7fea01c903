-- The audit table in PostgreSQL (crates/server/src/audit_sql.rs). Every statement is IF NOT
-- EXISTS: a table made by a version from before migrations is adopted as it is, and gains
-- `output` (the call's result, seed §10) if it lacks it.
CREATE TABLE IF NOT EXISTS audit_event (
    id BIGSERIAL PRIMARY KEY, ts TIMESTAMPTZ NOT NULL, endpoint TEXT NOT NULL,
    client_id TEXT, user_id TEXT, tool TEXT, trace_id TEXT NOT NULL, rpc_id TEXT,
    outcome TEXT NOT NULL, code TEXT, duration_ms DOUBLE PRECISION NOT NULL, result_count BIGINT,
    arguments JSONB, notes JSONB, output JSONB);
ALTER TABLE audit_event ADD COLUMN IF NOT EXISTS output JSONB;
CREATE INDEX IF NOT EXISTS audit_event_ts ON audit_event (ts);
CREATE INDEX IF NOT EXISTS audit_event_user ON audit_event (user_id, ts);
CREATE INDEX IF NOT EXISTS audit_event_client ON audit_event (client_id, ts);
CREATE INDEX IF NOT EXISTS audit_event_tool ON audit_event (tool, ts);
