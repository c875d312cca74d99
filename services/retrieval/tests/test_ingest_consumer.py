"""The `files.ingest` consumer on a real NATS server of its own (JetStream, the service's stream and durable): a
worker that stalled and was taken over, or that finds another attempt holding the file, leaves the message to the
holder (acknowledging any delivery of it would remove it from the work queue, and a holder that then died would
leave the file `in_progress` with nothing to redeliver); a job cut by a drain is handed to another worker at once."""

from __future__ import annotations

import asyncio
import secrets
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest
from agentic_local.infra import EmbeddedNats
from agentic_retrieval.chunking import load_tokenizer
from agentic_retrieval.consumer import IngestConsumer
from agentic_retrieval.ingestion import IngestLimits, Ingestor
from agentic_retrieval.queue import DURABLE, FILES_STREAM_NAME, JetStreamIngestQueue, ensure_files_stream
from agentic_retrieval.storage import PostgresFileStorage
from agentic_retrieval.stores import NewStoreFile
from agentic_runtime.nats import broker
from agentic_runtime.tls import transport_security

from .conftest import EXTRACTION, build
from .test_ingestion_and_search import status_of, tenant, upload

TEXT = "Llamas carry loads across the Andes. " * 400  # a few chunks


@pytest.fixture(scope="module")
def nats_url() -> Iterator[str]:
    """A NATS server for this module alone: the FILES work queue takes one durable consumer only."""
    folder = Path(tempfile.mkdtemp(prefix="agentic-ingest-consumer-"))
    server = EmbeddedNats(folder, folder)
    yield server.start()
    server.stop()


class GatedStorage(PostgresFileStorage):
    """Reads wait for `gate`: the worker is held mid-way (as one stalled by SIGSTOP) for the test to act."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        super().__init__(pool, 4096)
        self.gate = asyncio.Event()
        self.reading = asyncio.Event()

    async def read(self, tenant: str, file_id: str) -> AsyncIterator[bytes]:  # type: ignore[override]
        self.reading.set()
        await self.gate.wait()
        async for piece in super().read(tenant, file_id):
            yield piece


@dataclass
class Worker:
    consumer: IngestConsumer
    storage: GatedStorage


async def _worker(client, pool, vectors: bool, *, ack_wait: float) -> Worker:
    storage = GatedStorage(pool)
    retrieval = build(pool, vectors)
    ingestor = Ingestor(pool, storage, load_tokenizer(None), retrieval.embedder, EXTRACTION,
                        IngestLimits(3, ack_wait / 2, 256), vectors)
    consumer = IngestConsumer(client, ingestor, concurrency=2, ack_wait=ack_wait, max_attempts=3)
    await consumer.start()
    return Worker(consumer, storage)


async def _queued_file(client, pool, vectors: bool) -> tuple[str, str, str]:
    """A file added to a store, its job on the real queue: (tenant, store id, file id)."""
    retrieval = build(pool, vectors)
    owner = tenant()
    store_id, _ = await retrieval.stores.create(owner, "", {}, None, None, [])
    file_id = await upload(retrieval, owner, "llamas.txt", TEXT.encode())
    await retrieval.stores.add_file(owner, store_id, NewStoreFile(file_id, None, None))
    await JetStreamIngestQueue(client).publish(owner, store_id, file_id, 1)
    return owner, store_id, file_id


async def _eventually(check, what: str, timeout: float = 30.0) -> None:
    try:
        async with asyncio.timeout(timeout):
            while not await check():
                await asyncio.sleep(0.05)
    except TimeoutError:
        raise AssertionError(f"timed out after {timeout:g} s waiting for {what}") from None


async def _queued_messages(client) -> int:
    return int((await client.jetstream().stream_info(FILES_STREAM_NAME)).state.messages)


async def _status(pool, vectors: bool, owner: str, store_id: str, file_id: str) -> dict:
    return await status_of(build(pool, vectors), owner, store_id, file_id)


@pytest.fixture()
async def client(nats_url: str):
    connection = await broker.connect(nats_url, "ingest-consumer-test", transport_security({}))
    await ensure_files_stream(connection)
    yield connection
    await connection.jetstream().purge_stream(FILES_STREAM_NAME)
    await connection.jetstream().delete_consumer(FILES_STREAM_NAME, DURABLE)
    await connection.close()


@pytest.mark.parametrize("taken_over", ["before the claim", "mid-way"])
async def test_a_job_another_attempt_holds_is_left_to_it_and_redelivered_once_that_one_died(
        client, pool, vectors, taken_over: str) -> None:
    worker = await _worker(client, pool, vectors, ack_wait=2.0)
    try:
        if taken_over == "before the claim":
            worker.storage.gate.set()
        owner, store_id, file_id = await _queued_file(client, pool, vectors)
        holder = secrets.token_hex(4)
        if taken_over == "before the claim":  # a live lease of another attempt (a redelivery racing a renewal)
            await pool.execute("UPDATE retrieval.store_files SET worker_token = $2, updated_at = now() + interval '1 h'"
                               " WHERE file_id = $1", file_id, holder)
        else:  # this worker claimed it and stalled; another took it over
            await asyncio.wait_for(worker.storage.reading.wait(), 30)
            await pool.execute("UPDATE retrieval.store_files SET worker_token = $2, updated_at = now() WHERE file_id = $1",
                               file_id, holder)
            worker.storage.gate.set()
        # This worker gave up on it without answering its message: the message is still queued for the holder.
        await _eventually(lambda: _done_with_it(client, worker), "the worker done with the job")
        assert await _queued_messages(client) == 1
        assert (await _status(pool, vectors, owner, store_id, file_id))["status"] == "in_progress"
        # The holder dies: its lease lapses, the message comes back after the ack wait, and the file completes.
        await pool.execute("UPDATE retrieval.store_files SET updated_at = now() - interval '1 hour' WHERE file_id = $1",
                           file_id)

        async def completed() -> bool:
            return (await _status(pool, vectors, owner, store_id, file_id))["status"] == "completed"

        await _eventually(completed, "the file completed by the redelivery")
        positions = await pool.fetch("SELECT position FROM retrieval.chunks WHERE file_id = $1", file_id)
        assert positions and sorted(row["position"] for row in positions) == list(range(len(positions)))
        await _eventually(lambda: _no_messages(client), "the message acknowledged")
    finally:
        await worker.consumer.stop(1.0)


async def _done_with_it(client, worker: Worker) -> bool:
    """The job was delivered and this worker runs nothing now."""
    delivered = (await client.jetstream().consumer_info(FILES_STREAM_NAME, DURABLE)).delivered.consumer_seq
    return bool(delivered) and not worker.consumer.worker.active


async def _no_messages(client) -> bool:
    return await _queued_messages(client) == 0


async def test_a_job_cut_by_a_drain_gives_its_lease_up_and_goes_to_another_worker(client, pool, vectors) -> None:
    ack_wait = 120.0  # far beyond the wait below: the hand-over is the drain's, not a redelivery's
    draining = await _worker(client, pool, vectors, ack_wait=ack_wait)
    owner, store_id, file_id = await _queued_file(client, pool, vectors)
    await asyncio.wait_for(draining.storage.reading.wait(), 30)
    await draining.consumer.stop(0.1)
    assert await pool.fetchval("SELECT worker_token FROM retrieval.store_files WHERE file_id = $1", file_id) is None
    other = await _worker(client, pool, vectors, ack_wait=ack_wait)
    other.storage.gate.set()
    try:
        async def completed() -> bool:
            return (await _status(pool, vectors, owner, store_id, file_id))["status"] == "completed"

        await _eventually(completed, "the file completed by the other worker")
        await _eventually(lambda: _no_messages(client), "the message acknowledged")
    finally:
        await other.consumer.stop(1.0)
