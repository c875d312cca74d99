"""NATS JetStream: one connection per process, and the streams the design names."""

from __future__ import annotations

import logging

import nats
from nats.aio.client import Client
from nats.js.api import KeyValueConfig, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BadRequestError, BucketNotFoundError
from nats.js.kv import KeyValue

# The tool protocol names its stream; it is created here with the others (and still importable from here).
from agentic_runtime.tool_protocol import TOOLS_STREAM

log = logging.getLogger(__name__)

# Each background response's public events, `responses.<id>.events`, kept for resuming streams.
RESPONSES_STREAM = StreamConfig(
    name="RESPONSES",
    subjects=["responses.*.events"],
    retention=RetentionPolicy.LIMITS,
    max_age=24 * 3600.0,
)
# Background turns waiting for an executor: each message is one turn, taken once (work queue).
BACKGROUND_STREAM = StreamConfig(
    name="BACKGROUND",
    subjects=["background.turns"],
    retention=RetentionPolicy.WORK_QUEUE,
)


# Operator tools the runners offer (name → function definition), written by every runner at start-up.
TOOL_DEFINITIONS_BUCKET = "TOOL_DEFINITIONS"


async def connect(url: str, name: str) -> Client:
    """Connect, retrying in the background after a drop; a bad URL fails at start-up."""
    return await nats.connect(
        url,
        name=name,
        connect_timeout=5,
        max_reconnect_attempts=-1,
        reconnect_time_wait=1,
        allow_reconnect=True,
    )


async def ensure_streams(client: Client, responses_retention_seconds: float | None = None) -> None:
    """Create (or update to our config) the JetStream streams. Safe to run from every replica. The RESPONSES
    stream's retention is the executor's setting: only a caller that names it updates an existing stream."""
    jetstream = client.jetstream()
    responses = RESPONSES_STREAM
    if responses_retention_seconds is not None:
        responses = StreamConfig(name=responses.name, subjects=responses.subjects, retention=responses.retention,
                                 max_age=responses_retention_seconds)
    for config, update in ((TOOLS_STREAM, True), (BACKGROUND_STREAM, True), (responses, responses_retention_seconds is not None)):
        try:
            await jetstream.add_stream(config)
        except BadRequestError:
            if update:
                await jetstream.update_stream(config)


async def ensure_key_value(client: Client, bucket: str, ttl_seconds: float | None = None, in_memory: bool = False) -> KeyValue:
    """The KV bucket, created on first use (idempotent across replicas)."""
    jetstream = client.jetstream()
    try:
        return await jetstream.key_value(bucket)
    except BucketNotFoundError:
        storage = StorageType.MEMORY if in_memory else StorageType.FILE
        return await jetstream.create_key_value(KeyValueConfig(bucket=bucket, ttl=ttl_seconds, storage=storage))
