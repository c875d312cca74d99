-- llm-d split execution: a digest of the model response a persist relayed, so an
-- identical retry is recognised (200 with the stored response) and any other is a 409.
ALTER TABLE responses ADD COLUMN persist_digest text;
