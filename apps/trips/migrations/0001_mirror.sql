-- The content mirror in PostgreSQL (src/content/store/postgres.rs): the SQLite file's tables.
CREATE TABLE content_document (
    type TEXT NOT NULL,
    uid BIGINT NOT NULL,
    language TEXT NOT NULL,
    public_url TEXT,
    merged BOOLEAN NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (type, uid, language)
);
CREATE INDEX content_document_url ON content_document (public_url);
CREATE TABLE content_sync_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    state TEXT NOT NULL
);
