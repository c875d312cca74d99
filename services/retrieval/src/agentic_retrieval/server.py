"""Wiring of the retrieval service: pool, storage, embeddings client, the Retrieval servicer over gRPC (with health
and reflection), the `files.ingest` consumer, the `tools.exec.file_search` consumer, the sweep (stalled ingestions
queued again, expired files and stores deleted), drain."""

from __future__ import annotations

import asyncio
import logging

import asyncpg
from agentic.v1 import retrieval_pb2_grpc
from agentic_runtime import lifecycle
from agentic_runtime.grpc.server import GrpcService
from agentic_runtime.metrics import serve_metrics
from agentic_runtime.nats import broker
from agentic_runtime.tools.consumer import KindConsumer

from agentic_retrieval.chunking import load_tokenizer
from agentic_retrieval.consumer import IngestConsumer
from agentic_retrieval.embeddings import Embedder, HttpEmbedder, NoEmbeddings
from agentic_retrieval.expiry import purge_expired
from agentic_retrieval.extraction import ExtractionLimits
from agentic_retrieval.file_search import FileSearchHandler
from agentic_retrieval.files import FileStore
from agentic_retrieval.ingestion import IngestLimits, Ingestor, requeue_stale
from agentic_retrieval.migrations import has_vectors, migrate
from agentic_retrieval.queue import JetStreamIngestQueue, ensure_files_stream
from agentic_retrieval.search import Searcher
from agentic_retrieval.servicer import SERVICE_NAME, RetrievalServicer
from agentic_retrieval.settings import RetrievalSettings
from agentic_retrieval.storage import PostgresFileStorage
from agentic_retrieval.stores import IngestQueue, VectorStores

log = logging.getLogger(__name__)


async def migrate_only(settings: RetrievalSettings) -> None:
    applied = await migrate(settings.database_url)
    log.info("migrations applied: %s", ", ".join(applied) or "none needed")


class PooledConnection(asyncpg.Connection):
    """A pooled connection handed back without asyncpg's reset statement (one more round trip and statement on every
    release): the service keeps no session state on pooled connections (no LISTEN, no session SET or lock; its
    ingestion lock is transaction-scoped), and the pool still ends an open transaction."""

    def get_reset_query(self) -> str:
        return ""


async def create_pool(settings: RetrievalSettings) -> asyncpg.Pool:
    return await asyncpg.create_pool(
        settings.database_url, connection_class=PooledConnection, min_size=settings.pool_min_size, max_size=settings.pool_max_size,
        server_settings={"statement_timeout": str(settings.statement_timeout_ms),
                         "application_name": "agentic-retrieval"},
    )


def build_embedder(settings: RetrievalSettings) -> Embedder:
    if not settings.embeddings_url:
        return NoEmbeddings()
    key = settings.embeddings_api_key.get_secret_value() if settings.embeddings_api_key else None
    return HttpEmbedder(settings.embeddings_url, settings.embeddings_model, key,
                        batch_size=settings.embeddings_batch_size, timeout=settings.embeddings_timeout_seconds,
                        retries=settings.embeddings_retries)


async def _pgvector_iterative_scan(pool: asyncpg.Pool) -> bool:
    version = await pool.fetchval("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
    if not version:
        return False
    major, minor = (int(part) for part in str(version).split(".")[:2])
    return (major, minor) >= (0, 8)


async def _sweep(pool: asyncpg.Pool, queue: IngestQueue, settings: RetrievalSettings) -> None:
    while True:
        await asyncio.sleep(settings.ingest_sweep_interval_seconds)
        try:
            if requeued := await requeue_stale(pool, queue, settings.ingest_stale_seconds):
                log.warning("queued %d stalled ingestions again", requeued)
        except Exception as exc:
            log.warning("the stale-ingestion sweep failed: %r", exc)
        try:
            purged = await purge_expired(pool)
            if purged.files or purged.stores:
                log.info("deleted %d expired files and %d expired vector stores", purged.files, purged.stores)
        except Exception as exc:
            log.warning("deleting expired files and stores failed: %r", exc)


async def serve(settings: RetrievalSettings) -> None:
    stop = lifecycle.shutdown_event()
    await migrate(settings.database_url)  # the schema is ours alone; a second replica waits on the lock
    pool = await create_pool(settings)
    vectors = await has_vectors(pool)
    embedder = build_embedder(settings)
    if not vectors and embedder.enabled:
        log.warning("PostgreSQL has no pgvector extension: vector stores are searched by keywords only")
    elif not embedder.enabled:
        log.info("no embeddings server (AGENTIC_EMBEDDINGS_URL): vector stores are searched by keywords only")
    nats_client = await broker.connect(settings.nats_url, "agentic-retrieval", settings)
    await ensure_files_stream(nats_client)
    await broker.ensure_tools_stream(nats_client)
    queue = JetStreamIngestQueue(nats_client)
    storage = PostgresFileStorage(pool, settings.storage_part_bytes)
    stores = VectorStores(pool, queue)
    searcher = Searcher(pool, stores, embedder, vectors=vectors, candidates=settings.search_candidates,
                        ef_search=settings.hnsw_ef_search, iterative_scan=await _pgvector_iterative_scan(pool),
                        keyword_max_ranked=settings.keyword_max_ranked)
    ingestor = Ingestor(
        pool, storage, load_tokenizer(settings.tokenizer_file), embedder,
        ExtractionLimits(settings.max_extracted_chars, settings.extract_max_memory_bytes,
                         settings.extract_timeout_seconds, settings.max_pdf_pages),
        # Half the ack wait: a dead worker's last heartbeat may be up to a third of the ack wait before its last
        # lease renewal, so a redelivery always finds the lease lapsed, with a sixth of the ack wait to spare.
        IngestLimits(settings.ingest_max_attempts, settings.ingest_ack_wait_seconds / 2,
                     settings.embeddings_max_input_tokens, settings.hnsw_m, settings.hnsw_ef_construction),
        vectors,
    )
    consumer = IngestConsumer(nats_client, ingestor, concurrency=settings.ingest_concurrency,
                              ack_wait=settings.ingest_ack_wait_seconds, max_attempts=settings.ingest_max_attempts)
    tool_calls = KindConsumer(nats_client, FileSearchHandler(searcher), concurrency=settings.file_search_concurrency,
                              ack_wait=settings.file_search_ack_wait_seconds,
                              max_deliveries=settings.file_search_max_deliveries, backoff=[], lag_poll_seconds=5.0)
    service = GrpcService([SERVICE_NAME], settings, max_connection_age_seconds=settings.grpc_max_connection_age_seconds,
                          max_connection_age_grace_seconds=settings.grpc_max_connection_age_grace_seconds)
    servicer = RetrievalServicer(FileStore(pool, storage, settings.max_file_bytes), stores, searcher)
    service.add(lambda server: retrieval_pb2_grpc.add_RetrievalServicer_to_server(servicer, server))
    port = await service.start(settings.host, settings.port)
    await consumer.start()
    await tool_calls.start()
    sweeping = asyncio.create_task(_sweep(pool, queue, settings))
    serve_metrics(settings.metrics_port)
    await service.set_serving(True)
    log.info("retrieval listening on %s:%d, consuming files.ingest and tools.exec.file_search", settings.host, port)
    await stop.wait()
    sweeping.cancel()
    await service.set_serving(False)
    await asyncio.gather(consumer.stop(settings.drain_seconds), tool_calls.stop(settings.drain_seconds),
                         service.drain(settings.drain_seconds, settings.unready_seconds))
    await embedder.close()
    await nats_client.drain()
    await pool.close()
    log.info("retrieval stopped")
