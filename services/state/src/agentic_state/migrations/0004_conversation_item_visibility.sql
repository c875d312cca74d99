-- A conversation keeps what the client sees and what the model saw: a gateway tool call is a public
-- item (web_search_call, mcp_call, ...) for listings and a call/output pair for the model's history.
ALTER TABLE conversation_items
    ADD COLUMN visibility text NOT NULL DEFAULT 'both' CHECK (visibility IN ('both', 'public', 'model'));

-- A model-only row of a gateway call (its call or output) names the public item it stands behind, so
-- that deleting that item removes the call from the model's history too.
ALTER TABLE conversation_items ADD COLUMN linked_item_id text;
