"""Ingestion of one store file, the behaviour behind the `files.ingest` consumer: claim it (a lease renewed while
it runs), extract its text, chunk, embed, and write the chunks with their vectors in one transaction per batch; the
status always ends terminal: `completed`, or `failed` with `last_error` (`unsupported_file`, `invalid_file`,
`server_error`). A redelivered job (its worker died) finds the lease lapsed and starts the file again; after
`max_attempts` it fails with `server_error`. A job whose file another attempt holds under a live lease (this worker
stalled and was taken over, or a duplicate) is `HELD_ELSEWHERE`: its message must be left alone, not acknowledged,
since acknowledging any delivery of a message removes it from the work queue, the holder's delivery included."""

from __future__ import annotations

import asyncio
import enum
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg
import orjson
from tokenizers import Tokenizer

from agentic_retrieval.chunking import RETOKENIZE_MARGIN, SPECIAL_TOKENS, Chunk, chunks_of, effective_chunking, windows_of
from agentic_retrieval.embeddings import Embedder, EmbeddingsFailed, mean_vector
from agentic_retrieval.extraction import ExtractionLimits, FileRejected, extract_text
from agentic_retrieval.queue import IngestJob
from agentic_retrieval.storage import FileStorage
from agentic_retrieval.stores import IngestQueue
from agentic_retrieval.validation import Chunking

log = logging.getLogger(__name__)
WRITE_BATCH = 64  # chunks embedded and written per transaction


class LeaseLost(Exception):
    """Another attempt took the file (this one stalled past its lease), or the file was deleted or cancelled."""


class RetryLater(Exception):
    """A transient failure with attempts left: the job is redelivered."""


class Outcome(enum.Enum):
    FINISHED = "finished"  # terminal, or nothing left to do (done, deleted, cancelled): acknowledge the message
    HELD_ELSEWHERE = "held_elsewhere"  # still in progress under another attempt's lease: leave the message be


@dataclass(frozen=True)
class IngestLimits:
    max_attempts: int
    lease_seconds: float
    model_window: int
    hnsw_m: int = 16                # the HNSW graph's links per node ...
    hnsw_ef_construction: int = 128  # ... and candidates per insert: recall@10 0.99 at ef_search 100 (benchmarks)


_CLAIM_SQL = """
UPDATE retrieval.store_files sf
   SET attempts = attempts + 1, worker_token = $4, updated_at = now()
  FROM retrieval.files f
 WHERE sf.tenant = $1 AND sf.vector_store_id = $2 AND sf.file_id = $3 AND sf.status = 'in_progress'
   AND (sf.worker_token IS NULL OR sf.updated_at < now() - make_interval(secs => $5))
   AND f.tenant = sf.tenant AND f.id = sf.file_id
RETURNING sf.attempts, sf.chunking_strategy, f.filename, f.content_type
"""

_FINISH_SQL = """
UPDATE retrieval.store_files
   SET status = $5, last_error_code = $6, last_error_message = $7, usage_bytes = $8, worker_token = NULL,
       chunking_strategy = coalesce($9::jsonb, chunking_strategy), updated_at = now()
 WHERE tenant = $1 AND vector_store_id = $2 AND file_id = $3 AND status = 'in_progress'
   AND worker_token = $4
RETURNING 1
"""


def vector_text(vector: Sequence[float]) -> str:
    """pgvector's text form."""
    return "[" + ",".join(f"{value:.7g}" for value in vector) + "]"


class Ingestor:
    def __init__(self, pool: asyncpg.Pool, storage: FileStorage, tokenizer: Tokenizer, embedder: Embedder,
                 extraction: ExtractionLimits, limits: IngestLimits, vectors: bool) -> None:
        self.pool = pool
        self.storage = storage
        self.tokenizer = tokenizer
        self.embedder = embedder
        self.extraction = extraction
        self.limits = limits
        self.vectors = vectors and embedder.enabled  # the column exists and a server fills it
        self._indexed_dimensions: set[int] = set()

    async def ingest(self, job: IngestJob) -> Outcome:
        """Runs the job to a terminal status (`FINISHED`), finds another attempt holding the file
        (`HELD_ELSEWHERE`), or raises `RetryLater` (attempts left) to have it redelivered. Cancelled (the worker
        drains), it gives its lease up, so that the redelivery starts at once."""
        token = secrets.token_hex(12)
        key = (job.tenant, job.vector_store_id, job.file_id)
        claimed = await self.pool.fetchrow(_CLAIM_SQL, *key, token, self.limits.lease_seconds)
        if claimed is None:
            return await self._settled(key)
        if claimed["attempts"] > self.limits.max_attempts:
            return await self._finish(key, token, "failed", "server_error",
                                      f"The file could not be processed in {self.limits.max_attempts} attempts.")
        renewing = asyncio.create_task(self._renew(key, token))
        try:
            usage, applied = await self._index(key, token, claimed)
        except FileRejected as rejected:
            return await self._finish(key, token, "failed", rejected.code, rejected.message)
        except LeaseLost:
            log.info("ingestion of %s stopped: the file was deleted, cancelled or taken over", job.file_id)
            return await self._settled(key)
        except EmbeddingsFailed as failed:
            return await self._fail_or_retry(key, token, claimed["attempts"], f"Embedding the file failed: {failed}.")
        except asyncio.CancelledError:
            await asyncio.shield(self._release(key, token))
            raise
        except Exception:
            log.exception("ingesting %s failed", job.file_id)
            return await self._fail_or_retry(key, token, claimed["attempts"], "The file could not be processed.")
        finally:
            renewing.cancel()
        return await self._finish(key, token, "completed", None, None, usage, applied)

    async def _settled(self, key: tuple[str, str, str]) -> Outcome:
        """Why this attempt has nothing to do: the file is terminal or gone (`FINISHED`), or another attempt
        holds it (`HELD_ELSEWHERE`; should that one have died, the message comes back after the ack wait and its
        lease, shorter, has lapsed by then)."""
        status = await self.pool.fetchval(
            "SELECT status FROM retrieval.store_files WHERE tenant = $1 AND vector_store_id = $2 AND file_id = $3", *key)
        return Outcome.HELD_ELSEWHERE if status == "in_progress" else Outcome.FINISHED

    async def _release(self, key: tuple[str, str, str], token: str) -> None:
        try:
            await self.pool.execute("UPDATE retrieval.store_files SET worker_token = NULL WHERE tenant = $1 AND"
                                    " vector_store_id = $2 AND file_id = $3 AND worker_token = $4", *key, token)
        except Exception as exc:  # the lease lapses by itself
            log.debug("giving an ingestion lease up failed: %r", exc)

    async def _fail_or_retry(self, key: tuple[str, str, str], token: str, attempts: int, message: str) -> Outcome:
        if attempts < self.limits.max_attempts:
            released = await self.pool.fetchval(
                "UPDATE retrieval.store_files SET worker_token = NULL WHERE tenant = $1 AND vector_store_id = $2"
                " AND file_id = $3 AND worker_token = $4 RETURNING 1", *key, token)
            if released is None:  # taken over meanwhile: the holder answers the message
                return await self._settled(key)
            raise RetryLater(message)
        return await self._finish(key, token, "failed", "server_error", message)

    async def _finish(self, key: tuple[str, str, str], token: str, status: str, code: str | None,
                      message: str | None, usage: int = 0, applied: Chunking | None = None) -> Outcome:
        """`applied`: the chunking as it was done (`auto` is shown as the static sizes it came to, as OpenAI does).
        Only under this attempt's lease: one that stalled and was taken over leaves the file to its holder."""
        shown = orjson.dumps(Chunking("static", applied.max_tokens, applied.overlap_tokens).to_json()).decode() \
            if applied is not None else None
        finished = await self.pool.fetchval(_FINISH_SQL, *key, token, status, code, message, usage, shown)
        return Outcome.FINISHED if finished is not None else await self._settled(key)

    async def _renew(self, key: tuple[str, str, str], token: str) -> None:
        while True:
            await asyncio.sleep(self.limits.lease_seconds / 3)
            try:
                await self.pool.execute("UPDATE retrieval.store_files SET updated_at = now() WHERE tenant = $1 AND"
                                        " vector_store_id = $2 AND file_id = $3 AND worker_token = $4", *key, token)
            except Exception as exc:  # a missed renewal is retried at the next one
                log.debug("renewing an ingestion lease failed: %r", exc)

    async def _index(self, key: tuple[str, str, str], token: str, claimed: asyncpg.Record) -> tuple[int, Chunking]:
        tenant, _, file_id = key
        text = await extract_text(self.storage.read(tenant, file_id), claimed["filename"], claimed["content_type"],
                                  self.extraction)
        chunking = effective_chunking(Chunking.from_json(orjson.loads(claimed["chunking_strategy"])),
                                      self.limits.model_window if self.vectors else None)
        chunks = await asyncio.to_thread(_all_chunks, text, self.tokenizer, chunking)
        del text  # the chunks hold what is needed
        await self._write(key, token, [], first=True)
        usage = 0
        for start in range(0, len(chunks), WRITE_BATCH):
            batch = chunks[start:start + WRITE_BATCH]
            vectors = await self._embed(batch) if self.vectors else None
            await self._write(key, token, batch, vectors)
            usage += sum(len(chunk.text.encode()) for chunk in batch)
        return usage, chunking

    async def _embed(self, chunks: Sequence[Chunk]) -> list[list[float]]:
        window = self.limits.model_window - SPECIAL_TOKENS - RETOKENIZE_MARGIN
        pieces: list[str] = []
        spans: list[tuple[int, int]] = []
        for chunk in chunks:
            windows = [chunk.text] if chunk.tokens <= window else windows_of(chunk.text, self.tokenizer, window)
            spans.append((len(pieces), len(pieces) + len(windows)))
            pieces.extend(windows)
        vectors = await self.embedder.embed(pieces)
        return [vectors[first] if last - first == 1 else mean_vector(vectors[first:last]) for first, last in spans]

    async def _write(self, key: tuple[str, str, str], token: str, chunks: Sequence[Chunk],
                     vectors: Sequence[Sequence[float]] | None = None, *, first: bool = False) -> None:
        """One transaction: the lease is checked (and the row locked), then the batch goes in (the first call
        clears what an earlier attempt left)."""
        if vectors:
            await self._ensure_index(len(vectors[0]))
        async with self.pool.acquire() as connection, connection.transaction():
            held = await connection.fetchval(
                "SELECT 1 FROM retrieval.store_files WHERE tenant = $1 AND vector_store_id = $2 AND file_id = $3"
                " AND status = 'in_progress' AND worker_token = $4 FOR UPDATE", *key, token)
            if held is None:
                raise LeaseLost()
            if first:
                await connection.execute("DELETE FROM retrieval.chunks WHERE tenant = $1 AND vector_store_id = $2"
                                         " AND file_id = $3", *key)
            if not chunks:
                return
            positions = [chunk.position for chunk in chunks]
            contents = [chunk.text.replace("\x00", "") for chunk in chunks]
            tokens = [chunk.tokens for chunk in chunks]
            if vectors:
                await connection.execute(
                    "INSERT INTO retrieval.chunks (tenant, vector_store_id, file_id, position, content, tokens,"
                    " embedding, dimensions) SELECT $1, $2, $3, t.position, t.content, t.tokens, t.embedding::vector,"
                    " $8 FROM unnest($4::integer[], $5::text[], $6::integer[], $7::text[])"
                    " AS t (position, content, tokens, embedding)",
                    *key, positions, contents, tokens, [vector_text(vector) for vector in vectors], len(vectors[0]))
            else:
                await connection.execute(
                    "INSERT INTO retrieval.chunks (tenant, vector_store_id, file_id, position, content, tokens)"
                    " SELECT $1, $2, $3, t.position, t.content, t.tokens"
                    " FROM unnest($4::integer[], $5::text[], $6::integer[]) AS t (position, content, tokens)",
                    *key, positions, contents, tokens)
            await connection.execute("UPDATE retrieval.store_files SET updated_at = now() WHERE tenant = $1 AND"
                                     " vector_store_id = $2 AND file_id = $3", *key)

    async def _ensure_index(self, dimensions: int) -> None:
        """An HNSW index (cosine) for vectors of this many dimensions, made once (a partial index per dimension:
        the column takes any)."""
        if dimensions in self._indexed_dimensions:
            return
        async with self.pool.acquire() as connection, connection.transaction():
            await connection.execute("SELECT pg_advisory_xact_lock($1)", 0x7665_6374_6F72 + dimensions)
            await connection.execute(
                f"CREATE INDEX IF NOT EXISTS chunks_embedding_{dimensions} ON retrieval.chunks USING hnsw"
                f" ((embedding::vector({dimensions})) vector_cosine_ops)"
                f" WITH (m = {int(self.limits.hnsw_m)}, ef_construction = {int(self.limits.hnsw_ef_construction)})"
                f" WHERE dimensions = {dimensions}")
        self._indexed_dimensions.add(dimensions)


def _all_chunks(text: str, tokenizer: Tokenizer, chunking: Chunking) -> list[Chunk]:
    return list(chunks_of(text, tokenizer, chunking.max_tokens, chunking.overlap_tokens))


async def requeue_stale(pool: asyncpg.Pool, publish: IngestQueue, stale_seconds: float) -> int:
    """Store files `in_progress` without progress for `stale_seconds` (a lost message, a worker that died without
    redelivery) are queued again; returns how many."""
    rows = await pool.fetch(
        "UPDATE retrieval.store_files SET updated_at = now() WHERE status = 'in_progress'"
        " AND updated_at < now() - make_interval(secs => $1) RETURNING tenant, vector_store_id, file_id, attempts",
        stale_seconds)
    for row in rows:
        await publish.publish(row["tenant"], row["vector_store_id"], row["file_id"], row["attempts"] + 1)
    return len(rows)

