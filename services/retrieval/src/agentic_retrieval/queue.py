"""The ingestion queue on JetStream: stream `FILES` (work-queue retention) on `files.ingest`, one message per store
file to ingest, taken by one retrieval worker at a time (durable consumer `retrieval-ingest`)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import orjson
from agentic_runtime.nats.broker import retrying
from nats.aio.client import Client
from nats.js.api import RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BadRequestError

INGEST_SUBJECT = "files.ingest"
FILES_STREAM_NAME = "FILES"
FILES_STREAM = StreamConfig(
    name=FILES_STREAM_NAME, subjects=[INGEST_SUBJECT], retention=RetentionPolicy.WORK_QUEUE, storage=StorageType.FILE,
    max_age=7 * 24 * 3600.0,
)
DURABLE = "retrieval-ingest"
PUBLISH_SECONDS = 15.0


@dataclass(frozen=True)
class IngestJob:
    tenant: str
    vector_store_id: str
    file_id: str
    attempt: int

    def to_json(self) -> bytes:
        return orjson.dumps({"tenant": self.tenant, "vector_store_id": self.vector_store_id, "file_id": self.file_id,
                             "attempt": self.attempt})

    @classmethod
    def from_json(cls, data: bytes) -> IngestJob:
        body = orjson.loads(data)
        return cls(str(body["tenant"]), str(body["vector_store_id"]), str(body["file_id"]), int(body.get("attempt", 1)))


async def ensure_files_stream(client: Client) -> None:
    jetstream = client.jetstream()
    try:
        await jetstream.add_stream(FILES_STREAM)
    except BadRequestError:
        await jetstream.update_stream(FILES_STREAM)


class JetStreamIngestQueue:
    """Publishes jobs; JetStream dedupes a repeated publish of the same job (the message id)."""

    def __init__(self, client: Client) -> None:
        self.jetstream = client.jetstream()

    async def publish(self, tenant: str, vector_store_id: str, file_id: str, attempt: int) -> None:
        job = IngestJob(tenant, vector_store_id, file_id, attempt)
        message_id = f"{tenant}/{vector_store_id}/{file_id}/{attempt}/{time.time_ns()}"
        await retrying(lambda left: self.jetstream.publish(INGEST_SUBJECT, job.to_json(), timeout=left,
                                                           headers={"Nats-Msg-Id": message_id}),
                       time.monotonic() + PUBLISH_SECONDS, "queueing a file's ingestion")
