"""Retrieval workers killed or stalled mid-ingestion, with the stack as processes (its own PostgreSQL and NATS) and
an embeddings server slow enough for ingestion to be cut: every file still ends `completed` within one ack wait
of the fault (3 s here), never stuck `in_progress`, with its chunks written once (the same chunks, usage and
search results as an ingestion nobody disturbed), and a batch's counts add up."""

from __future__ import annotations

import io
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from agentic_local.stack import LocalStack, StackConfig
from openai import OpenAI

from tests.faults.conftest import FAST
from tests.faults.support import FaultStack, SlowEmbeddings, wait_for
from tests.support.fake_upstream import EMBEDDING_MODEL

ACK_WAIT_SECONDS = 3.0
SETTLE_SECONDS = 90.0  # one ack wait, a restart and the rest of the ingestion, generously on 2 busy cores
SLOW = 1.5  # seconds per embeddings request while a fault is staged: an ingestion would last about 30 s
DOCUMENT = "".join(f"Record {n}: the llama herd {n % 97} crossed pass {n % 13} carrying {n % 7} bales of wool. "
                   for n in range(4000)).encode()


@pytest.fixture(scope="module")
def embeddings() -> Iterator[SlowEmbeddings]:
    server = SlowEmbeddings().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def faults(embeddings: SlowEmbeddings) -> Iterator[FaultStack]:
    # Not under pytest's folder: as root PostgreSQL runs as a user of its own, and pytest makes that folder
    # private again whenever another session starts.
    data_dir = Path(tempfile.mkdtemp(prefix="agentic-retrieval-faults-"))
    config = StackConfig(
        data_dir=data_dir, upstream_url=embeddings.base_url, gateway_port=0, llm_d_port=0,
        extra_env={**FAST, "AGENTIC_EMBEDDINGS_URL": embeddings.base_url, "AGENTIC_EMBEDDINGS_MODEL": EMBEDDING_MODEL,
                   "AGENTIC_RETRIEVAL_INGEST_ACK_WAIT_SECONDS": str(ACK_WAIT_SECONDS),
                   "AGENTIC_RETRIEVAL_DRAIN_SECONDS": "5"},
    )
    stack = LocalStack(config).start()
    try:
        yield FaultStack(stack)
    finally:
        stack.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture()
def embedder(embeddings: SlowEmbeddings) -> Iterator[SlowEmbeddings]:
    embeddings.delay = 0.0
    yield embeddings
    embeddings.delay = 0.0


def _upload(client: OpenAI, name: str) -> str:
    return client.files.create(file=(name, io.BytesIO(DOCUMENT)), purpose="assistants").id


@pytest.fixture(scope="module")
def undisturbed(faults: FaultStack, embeddings: SlowEmbeddings) -> dict[str, Any]:
    """The document ingested with no fault: its chunk count and usage_bytes."""
    embeddings.delay = 0.0
    client = faults.client()
    store = client.vector_stores.create(name="undisturbed")
    done = client.vector_stores.files.create_and_poll(vector_store_id=store.id, file_id=_upload(client, "clean.txt"),
                                                      poll_interval_ms=100)
    assert done.status == "completed", done.last_error
    return {"chunks": _chunks(faults, store.id, done.id), "usage_bytes": done.usage_bytes}


def _chunks(faults: FaultStack, store_id: str, file_id: str) -> int:
    """The file's chunks, checked to be one each of positions 0..n-1."""
    row = faults.query("SELECT count(*) AS n, count(DISTINCT position) AS distinct_positions, max(position) AS last"
                       " FROM retrieval.chunks WHERE vector_store_id = $1 AND file_id = $2", store_id, file_id)[0]
    assert row["n"] == row["distinct_positions"] and (row["n"] == 0 or row["last"] == row["n"] - 1), dict(row)
    return int(row["n"])


def _being_ingested(faults: FaultStack, store_id: str) -> bool:
    """Some file of the store is `in_progress` with chunks already written: the fault lands mid-way."""
    return bool(faults.query(
        "SELECT 1 FROM retrieval.store_files sf WHERE sf.vector_store_id = $1 AND sf.status = 'in_progress'"
        " AND EXISTS (SELECT 1 FROM retrieval.chunks c WHERE c.vector_store_id = sf.vector_store_id"
        " AND c.file_id = sf.file_id)", store_id))


def _settled(faults: FaultStack, store_id: str) -> bool:
    return not faults.query("SELECT 1 FROM retrieval.store_files WHERE vector_store_id = $1 AND status = 'in_progress'",
                            store_id)


def _answers(client: OpenAI, store_id: str) -> bool:
    """The gateway reaches retrieval (a gateway's channel to a restarted peer takes a moment: 503 meanwhile)."""
    try:
        client.vector_stores.retrieve(store_id)
    except openai.InternalServerError as error:
        assert error.status_code == 503, error
        return False
    return True


def _assert_ingested_once(faults: FaultStack, client: OpenAI, store_id: str, file_ids: list[str],
                          undisturbed: dict[str, Any]) -> None:
    wait_for(lambda: _settled(faults, store_id), SETTLE_SECONDS, "every file to leave in_progress")
    wait_for(lambda: _answers(client, store_id), 30, "the gateway to reach retrieval")
    for file_id in file_ids:
        done = client.vector_stores.files.retrieve(file_id, vector_store_id=store_id)
        assert done.status == "completed" and done.last_error is None, done
        assert done.usage_bytes == undisturbed["usage_bytes"]
        assert _chunks(faults, store_id, file_id) == undisturbed["chunks"]
    store = client.vector_stores.retrieve(store_id)
    assert store.file_counts.completed == store.file_counts.total == len(file_ids)
    assert store.file_counts.in_progress == store.file_counts.failed == 0
    assert store.usage_bytes == len(file_ids) * undisturbed["usage_bytes"]
    found = client.vector_stores.search(store_id, query="llama herd crossed pass 7", max_num_results=50).data
    shown = [(hit.file_id, hit.content[0].text) for hit in found]
    assert found and len(shown) == len(set(shown))  # no chunk twice


def test_a_worker_killed_mid_ingestion_finishes_the_batch_once_restarted(faults: FaultStack, embedder: SlowEmbeddings,
                                                                         undisturbed: dict[str, Any]) -> None:
    client = faults.client()
    store = client.vector_stores.create(name="killed")
    file_ids = [_upload(client, f"part-{n}.txt") for n in range(2)]
    embedder.delay = SLOW
    batch = client.vector_stores.file_batches.create(vector_store_id=store.id, file_ids=file_ids)
    wait_for(lambda: _being_ingested(faults, store.id), 60, "ingestion under way")
    faults.kill("retrieval")
    faults.restart("retrieval")
    embedder.delay = 0.0
    _assert_ingested_once(faults, client, store.id, file_ids, undisturbed)
    shown = client.vector_stores.file_batches.retrieve(batch.id, vector_store_id=store.id)
    assert shown.status == "completed"
    assert shown.file_counts.completed == shown.file_counts.total == 2 and shown.file_counts.in_progress == 0


def test_a_worker_stalled_past_the_ack_wait_finishes_once_resumed(faults: FaultStack, embedder: SlowEmbeddings,
                                                                   undisturbed: dict[str, Any]) -> None:
    """The only worker: the redelivery comes back to it, beside the attempt it was running."""
    client = faults.client()
    store = client.vector_stores.create(name="stalled")
    file_id = _upload(client, "stalled.txt")
    embedder.delay = SLOW
    client.vector_stores.files.create(vector_store_id=store.id, file_id=file_id)
    wait_for(lambda: _being_ingested(faults, store.id), 60, "ingestion under way")
    faults.stall("retrieval")
    try:
        wait_for(lambda: _silent_for(faults, store.id, file_id, 3 * ACK_WAIT_SECONDS), 60, "the lease to lapse")
    finally:
        faults.unstall("retrieval")
    embedder.delay = 0.0
    _assert_ingested_once(faults, client, store.id, [file_id], undisturbed)


def _silent_for(faults: FaultStack, store_id: str, file_id: str, seconds: float) -> bool:
    return bool(faults.query("SELECT 1 FROM retrieval.store_files WHERE vector_store_id = $1 AND file_id = $2"
                             " AND updated_at < now() - make_interval(secs => $3)", store_id, file_id, seconds))


def _holder(faults: FaultStack, store_id: str, file_id: str) -> str | None:
    rows = faults.query("SELECT worker_token FROM retrieval.store_files WHERE vector_store_id = $1 AND file_id = $2",
                        store_id, file_id)
    return rows[0]["worker_token"] if rows else None


def test_a_stalled_worker_taken_over_leaves_the_file_to_a_third_attempt_when_the_second_dies(
        faults: FaultStack, embedder: SlowEmbeddings, undisturbed: dict[str, Any]) -> None:
    """Worker one stalls; worker two takes the file over; worker one resumes (and must not answer the message it
    no longer holds); worker two is killed: the message comes back and worker one finishes the file."""
    client = faults.client()
    store = client.vector_stores.create(name="taken-over")
    file_id = _upload(client, "taken-over.txt")
    embedder.delay = SLOW
    client.vector_stores.files.create(vector_store_id=store.id, file_id=file_id)
    wait_for(lambda: _being_ingested(faults, store.id), 60, "ingestion under way")
    first = _holder(faults, store.id, file_id)
    left = 'agentic_retrieval_ingest_jobs_total{outcome="held_elsewhere"}'
    left_before = faults.metric("retrieval", left)
    second = faults.stack.add_retrieval().name
    faults.stall("retrieval")
    try:
        wait_for(lambda: _holder(faults, store.id, file_id) not in (first, None), 60, "the second worker's claim")
        wait_for(lambda: _chunks(faults, store.id, file_id) > 0, 60, "the second worker's first chunks")
    finally:
        faults.unstall("retrieval")
    wait_for(lambda: faults.metric("retrieval", left) > left_before, 30, "worker one to give the file up")
    faults.kill(second)
    embedder.delay = 0.0
    _assert_ingested_once(faults, client, store.id, [file_id], undisturbed)
