-- requires: vector
-- Chunk embeddings (pgvector). Applied only where the `vector` extension is available; without it, stores are
-- searched by keywords, and this migration is applied at the first start that finds the extension.
CREATE EXTENSION IF NOT EXISTS vector;
ALTER TABLE retrieval.chunks ADD COLUMN embedding vector;          -- any dimension: the model decides
ALTER TABLE retrieval.chunks ADD COLUMN dimensions integer;        -- of `embedding`; HNSW indexes are per dimension
