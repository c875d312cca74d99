"""NATS JetStream: one connection per process, and the streams the design names."""

from __future__ import annotations

import logging

import nats
from nats.aio.client import Client
from nats.js.api import KeyValueConfig, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BadRequestError, BucketNotFoundError

log = logging.getLogger(__name__)

TOOLS_STREAM = StreamConfig(
    name="TOOLS",
    subjects=["tools.exec.>"],
    retention=RetentionPolicy.WORK_QUEUE,
    max_age=3600.0,
)
RESPONSES_STREAM = StreamConfig(
    name="RESPONSES",
    subjects=["responses.*.events"],
    retention=RetentionPolicy.LIMITS,
    max_age=24 * 3600.0,
)


# Operator tools the runners offer (name → function definition), written by every runner at start-up.
TOOL_DEFINITIONS_BUCKET = "TOOL_DEFINITIONS"
# Finished results by dispatch id, so that a redelivered call is answered without running it again.
TOOL_RESULTS_BUCKET = "TOOL_RESULTS"
TOOL_RESULTS_TTL_SECONDS = 3600.0


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


async def ensure_streams(client: Client) -> None:
    """Create (or update to our config) the JetStream streams. Safe to run from every replica."""
    jetstream = client.jetstream()
    for config in (TOOLS_STREAM, RESPONSES_STREAM):
        try:
            await jetstream.add_stream(config)
        except BadRequestError:
            await jetstream.update_stream(config)


async def ensure_key_value(client: Client, bucket: str, ttl_seconds: float | None = None, in_memory: bool = False):
    """The KV bucket, created on first use (idempotent across replicas)."""
    jetstream = client.jetstream()
    try:
        return await jetstream.key_value(bucket)
    except BucketNotFoundError:
        storage = StorageType.MEMORY if in_memory else StorageType.FILE
        return await jetstream.create_key_value(KeyValueConfig(bucket=bucket, ttl=ttl_seconds, storage=storage))
