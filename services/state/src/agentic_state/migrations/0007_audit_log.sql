-- The audit trail: one row per API request (gateway) and per turn (executor). Rows are only inserted,
-- and deleted by their retention (AGENTIC_STATE_AUDIT_TTL_DAYS).
CREATE TABLE audit_log (
    id           text        PRIMARY KEY,  -- sorts by time: "audit_" + hex microseconds + random
    effective_at timestamptz NOT NULL,
    type         text        NOT NULL,
    tenant       text        NOT NULL,
    subject      text        NOT NULL,
    key_id       text        NOT NULL,
    admin        boolean     NOT NULL,
    resource_id  text,                     -- the response or conversation the record is about
    details      json        NOT NULL
);
CREATE INDEX audit_log_tenant_id ON audit_log (tenant, id);
CREATE INDEX audit_log_effective_at ON audit_log (effective_at);

-- Retention finds old rows by time, in small batches, and a deleted response's continuations (a response
-- stays, without its body, while a later turn of its chain needs its items).
CREATE INDEX responses_created_at ON responses (created_at);
CREATE INDEX responses_previous ON responses (tenant, previous_response_id) WHERE previous_response_id IS NOT NULL;
CREATE INDEX conversations_created_at ON conversations (created_at);
CREATE INDEX background_responses_created_at ON background_responses (created_at);
