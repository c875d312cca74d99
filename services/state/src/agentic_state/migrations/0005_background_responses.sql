-- Background responses while they are queued or running (and when they end without a stored turn:
-- cancelled, or failed). A stored turn's response row in `responses` takes precedence once it exists.
CREATE TABLE background_responses (
    tenant           text        NOT NULL,
    id               text        NOT NULL,
    status           text        NOT NULL CHECK (status IN ('queued', 'in_progress', 'completed', 'incomplete',
                                                            'failed', 'cancelled')),
    body             json        NOT NULL,
    cancel_requested boolean     NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, id)
);
