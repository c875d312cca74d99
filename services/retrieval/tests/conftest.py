"""The retrieval service's tests: one pool on the test PostgreSQL, the `retrieval` schema migrated once, and the
service's parts wired as the server wires them (a recording queue instead of JetStream, an in-process embedder
speaking the fake model server's vectors)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import asyncpg
import pytest
from agentic_retrieval.chunking import load_tokenizer
from agentic_retrieval.embeddings import normalized
from agentic_retrieval.extraction import ExtractionLimits
from agentic_retrieval.files import FileStore
from agentic_retrieval.ingestion import IngestLimits, Ingestor
from agentic_retrieval.migrations import apply_migrations, has_vectors
from agentic_retrieval.queue import IngestJob
from agentic_retrieval.search import Searcher
from agentic_retrieval.storage import PostgresFileStorage
from agentic_retrieval.stores import VectorStores

from tests.support.fake_upstream import hashed_embedding


@pytest.fixture(scope="session")
async def pool(infra):
    pool = await asyncpg.create_pool(infra["database_url"], min_size=1, max_size=6)
    async with pool.acquire() as connection:
        await apply_migrations(connection)
    yield pool
    await pool.close()


@pytest.fixture(scope="session")
async def vectors(pool) -> bool:
    """Whether this PostgreSQL has pgvector (the embedded wheel's does; a system server may not)."""
    return await has_vectors(pool)


@dataclass
class RecordingQueue:
    jobs: list[IngestJob] = field(default_factory=list)

    async def publish(self, tenant: str, vector_store_id: str, file_id: str, attempt: int) -> None:
        self.jobs.append(IngestJob(tenant, vector_store_id, file_id, attempt))

    def take(self) -> list[IngestJob]:
        jobs, self.jobs = self.jobs, []
        return jobs


@dataclass
class WordEmbedder:
    """The fake model server's vectors, in process; `failures` makes the next calls fail."""

    enabled: bool = True
    calls: list[list[str]] = field(default_factory=list)
    failures: int = 0

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        from agentic_retrieval.embeddings import EmbeddingsFailed

        self.calls.append(list(texts))
        if self.failures:
            self.failures -= 1
            raise EmbeddingsFailed("the embeddings server answered 503")
        return [normalized(hashed_embedding(text)) for text in texts]

    async def close(self) -> None:
        return None


@dataclass
class Retrieval:
    files: FileStore
    stores: VectorStores
    queue: RecordingQueue
    embedder: WordEmbedder
    ingestor: Ingestor
    searcher: Searcher

    async def ingest_all(self) -> None:
        for job in self.queue.take():
            await self.ingestor.ingest(job)


EXTRACTION = ExtractionLimits(max_chars=2_000_000, max_memory_bytes=768 * 1024 * 1024, timeout_seconds=30,
                              max_pdf_pages=100)


def build(pool: asyncpg.Pool, vectors: bool, *, embeddings: bool = True, max_attempts: int = 3,
          lease_seconds: float = 20.0, extraction: ExtractionLimits = EXTRACTION, candidates: int = 100,
          keyword_max_ranked: int = 10_000) -> Retrieval:
    storage = PostgresFileStorage(pool, 4096)
    queue = RecordingQueue()
    embedder = WordEmbedder(enabled=embeddings)
    stores = VectorStores(pool, queue)
    ingestor = Ingestor(pool, storage, load_tokenizer(None), embedder, extraction,
                        IngestLimits(max_attempts, lease_seconds, 256), vectors)
    searcher = Searcher(pool, stores, embedder, vectors=vectors, candidates=candidates, ef_search=100,
                        iterative_scan=False, keyword_max_ranked=keyword_max_ranked)
    return Retrieval(FileStore(pool, storage, 10 * 1024 * 1024), stores, queue, embedder, ingestor, searcher)


@pytest.fixture()
def retrieval(pool, vectors) -> Retrieval:
    return build(pool, vectors)
