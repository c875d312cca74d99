-- Token and tool usage per tenant, credential, subject and model, summed per minute (upserted in batches).
CREATE TABLE usage (
    minute           timestamptz      NOT NULL,
    tenant           text             NOT NULL,
    key_id           text             NOT NULL,
    subject          text             NOT NULL,
    model            text             NOT NULL,
    input_tokens     bigint           NOT NULL DEFAULT 0,
    cached_tokens    bigint           NOT NULL DEFAULT 0,
    output_tokens    bigint           NOT NULL DEFAULT 0,
    reasoning_tokens bigint           NOT NULL DEFAULT 0,
    requests         bigint           NOT NULL DEFAULT 0,
    tool_calls       jsonb            NOT NULL DEFAULT '{}',  -- tool kind → calls
    tool_seconds     double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (minute, tenant, key_id, subject, model)
);
CREATE INDEX usage_tenant_minute ON usage (tenant, minute);

-- Two `{kind: count}` objects summed key by key (the upsert's merge of tool calls).
CREATE FUNCTION usage_add_counts(a jsonb, b jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(jsonb_object_agg(key, total), '{}'::jsonb)
    FROM (SELECT key, sum(value::bigint) AS total
          FROM (SELECT * FROM jsonb_each_text(a) UNION ALL SELECT * FROM jsonb_each_text(b)) AS counts
          GROUP BY key) AS summed
$$;
