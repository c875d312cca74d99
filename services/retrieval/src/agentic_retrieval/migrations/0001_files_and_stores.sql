-- Files, vector stores, their files, file batches and chunks, in the schema `retrieval` (state owns `public`).
CREATE TABLE retrieval.files (
    tenant       text        NOT NULL,
    id           text        NOT NULL,
    seq          bigserial,                          -- list order (and the `after` cursor)
    filename     text        NOT NULL,
    purpose      text        NOT NULL,
    content_type text        NOT NULL DEFAULT '',
    bytes        bigint      NOT NULL DEFAULT 0,
    complete     boolean     NOT NULL DEFAULT false, -- every part written; an interrupted upload never is
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX files_by_seq ON retrieval.files (tenant, seq);
CREATE INDEX files_expiring ON retrieval.files (expires_at) WHERE expires_at IS NOT NULL;

-- A file's bytes, in parts (the storage interface of storage.py).
CREATE TABLE retrieval.file_parts (
    tenant  text    NOT NULL,
    file_id text    NOT NULL,
    part    integer NOT NULL,
    data    bytea   NOT NULL,
    PRIMARY KEY (tenant, file_id, part)
);
ALTER TABLE retrieval.file_parts ALTER COLUMN data SET STORAGE EXTERNAL;  -- already compressed, mostly

CREATE TABLE retrieval.vector_stores (
    tenant            text        NOT NULL,
    id                text        NOT NULL,
    seq               bigserial,
    name              text        NOT NULL DEFAULT '',
    metadata          jsonb       NOT NULL DEFAULT '{}',
    chunking_strategy jsonb,                              -- the default of files added without one
    expires_after     jsonb,                              -- {"anchor": "last_active_at", "days": n}
    created_at        timestamptz NOT NULL DEFAULT now(),
    last_active_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, id)
);
CREATE INDEX vector_stores_by_seq ON retrieval.vector_stores (tenant, seq);

CREATE TABLE retrieval.file_batches (
    tenant          text        NOT NULL,
    vector_store_id text        NOT NULL,
    id              text        NOT NULL,
    cancelled       boolean     NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, id),
    FOREIGN KEY (tenant, vector_store_id) REFERENCES retrieval.vector_stores (tenant, id) ON DELETE CASCADE
);

CREATE TABLE retrieval.store_files (
    tenant             text        NOT NULL,
    vector_store_id    text        NOT NULL,
    file_id            text        NOT NULL,
    seq                bigserial,
    batch_id           text,
    status             text        NOT NULL DEFAULT 'in_progress',  -- in_progress, completed, cancelled, failed
    last_error_code    text,                                        -- server_error, unsupported_file, invalid_file
    last_error_message text,
    attributes         jsonb,
    chunking_strategy  jsonb       NOT NULL,
    usage_bytes        bigint      NOT NULL DEFAULT 0,
    attempts           integer     NOT NULL DEFAULT 0,              -- ingestion attempts started
    worker_token       text,                                        -- the attempt running now (its lease) ...
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),          -- ... renewed here while it runs
    PRIMARY KEY (tenant, vector_store_id, file_id),
    FOREIGN KEY (tenant, vector_store_id) REFERENCES retrieval.vector_stores (tenant, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant, file_id) REFERENCES retrieval.files (tenant, id) ON DELETE CASCADE
);
CREATE INDEX store_files_by_seq ON retrieval.store_files (tenant, vector_store_id, seq);
CREATE INDEX store_files_by_batch ON retrieval.store_files (tenant, batch_id) WHERE batch_id IS NOT NULL;
CREATE INDEX store_files_in_progress ON retrieval.store_files (updated_at) WHERE status = 'in_progress';

CREATE TABLE retrieval.chunks (
    tenant          text    NOT NULL,
    vector_store_id text    NOT NULL,
    file_id         text    NOT NULL,
    position        integer NOT NULL,
    content         text    NOT NULL,
    tokens          integer NOT NULL,
    text_search     tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
    PRIMARY KEY (tenant, vector_store_id, file_id, position),
    FOREIGN KEY (tenant, vector_store_id, file_id)
        REFERENCES retrieval.store_files (tenant, vector_store_id, file_id) ON DELETE CASCADE
);
CREATE INDEX chunks_text_search ON retrieval.chunks USING gin (text_search);
