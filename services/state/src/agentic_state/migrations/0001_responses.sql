-- Responses and the items of each turn. Every row is scoped by tenant.
CREATE TABLE responses (
    tenant               text        NOT NULL,
    id                   text        NOT NULL,
    previous_response_id text,
    model                text        NOT NULL,
    status               text        NOT NULL,
    body                 json,                      -- the response object; NULL once deleted
    created_at           timestamptz NOT NULL DEFAULT now(),
    deleted_at           timestamptz,
    PRIMARY KEY (tenant, id)
);

-- kind 'input' rows are what input_items lists; the chain's history is every
-- row of every ancestor, in position order.
CREATE TABLE response_items (
    tenant      text    NOT NULL,
    response_id text    NOT NULL,
    position    integer NOT NULL,
    kind        text    NOT NULL CHECK (kind IN ('input', 'output')),
    item_id     text    NOT NULL,
    item        json    NOT NULL,
    PRIMARY KEY (tenant, response_id, position),
    FOREIGN KEY (tenant, response_id) REFERENCES responses (tenant, id) ON DELETE CASCADE
);
