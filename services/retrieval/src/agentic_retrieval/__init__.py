"""The retrieval service: files, vector stores, ingestion and search (docs/retrieval.md)."""
