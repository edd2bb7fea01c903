-- The intake's tables in PostgreSQL (src/store.rs): the SQLite schema with identity columns.
-- external_message_id UNIQUE is what makes one source message one batch across instances.
CREATE TABLE platform_source_message_inbox (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    external_message_id TEXT NOT NULL UNIQUE,
    hotel_id TEXT NOT NULL,
    subject TEXT,
    sender TEXT,
    received_at TEXT,
    source_channel TEXT,
    message_json TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE reservation_ai_batch (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_message_inbox_id BIGINT NOT NULL UNIQUE REFERENCES platform_source_message_inbox(id),
    payload_form TEXT NOT NULL,
    accepted_count BIGINT NOT NULL,
    contract_error_count BIGINT NOT NULL,
    root_json TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE reservation_ai_task (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    batch_id BIGINT NOT NULL REFERENCES reservation_ai_batch(id),
    source_event_index BIGINT NOT NULL,
    catalog_code TEXT NOT NULL,
    skill_id TEXT NOT NULL,
    task_type TEXT NOT NULL,
    result_type TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (batch_id, source_event_index)
);
CREATE TABLE workflow_reservation_ai_transition (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    batch_id BIGINT NOT NULL REFERENCES reservation_ai_batch(id),
    task_id BIGINT REFERENCES reservation_ai_task(id),
    source_event_index BIGINT,
    transition TEXT NOT NULL,
    error_code TEXT,
    error_message TEXT,
    ai_payload_json TEXT NOT NULL,
    created_at TEXT NOT NULL
);
