-- Conversations: an ordered, editable list of items that turns append to.
CREATE TABLE conversations (
    tenant           text        NOT NULL,
    id               text        NOT NULL,
    metadata         json        NOT NULL DEFAULT '{}',
    created_at       timestamptz NOT NULL DEFAULT now(),
    deleted_at       timestamptz,
    next_position    bigint      NOT NULL DEFAULT 0,  -- item order survives deletions
    revision         bigint      NOT NULL DEFAULT 0,  -- bumped by every write
    lease_token      text,                            -- the turn running on it, if any
    lease_expires_at timestamptz,
    PRIMARY KEY (tenant, id)
);

CREATE TABLE conversation_items (
    tenant          text        NOT NULL,
    conversation_id text        NOT NULL,
    position        bigint      NOT NULL,
    item_id         text        NOT NULL,
    item            json        NOT NULL,
    response_id     text,                          -- the turn that added it, if any
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, conversation_id, position),
    FOREIGN KEY (tenant, conversation_id) REFERENCES conversations (tenant, id) ON DELETE CASCADE
);
CREATE INDEX conversation_items_by_item_id ON conversation_items (tenant, conversation_id, item_id);

ALTER TABLE responses ADD COLUMN conversation_id text;
