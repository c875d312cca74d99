-- Each item's model view beside its public form, written by the turn that stores it, so that a later turn
-- relays its history as these bytes instead of parsing every item and writing it out again. NULL: none
-- stored (rows written before this column, reasoning and compaction items, which a turn reads itself);
-- 'null': the model never reads the item. Text, not json: it is only ever relayed.
ALTER TABLE response_items ADD COLUMN model_view text;
ALTER TABLE conversation_items ADD COLUMN model_view text;
